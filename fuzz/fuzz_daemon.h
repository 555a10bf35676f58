/* SPDX-License-Identifier: MIT */
/*
 * The input format of fuzz_daemon (fuzz/fuzz_daemon.c), shared with the seed
 * generator (fuzz/gen_seeds.c). An input is a sequence of records, each
 *
 *   sel (1 byte) | struct smio_hdr (24 bytes) | payload (hdr.len bytes)
 *
 * The payload is what remains of the input if shorter, and at most
 * SMIO_MAX_PAYLOAD. sel picks the connection and how the message is sent:
 */
#ifndef SMARTIO_FUZZ_DAEMON_H
#define SMARTIO_FUZZ_DAEMON_H

#define FD_SEL_CONN(sel)   ((unsigned)((sel) & 7u) % FD_NCONN)
enum fd_conn {
	FD_CLIENT_A = 0,     /* a process of the fuzzed host, HELLO'd as client */
	FD_CLIENT_B,         /* another one (what A owns, B must not touch) */
	FD_ADMIN,            /* the smartio CLI (admin) */
	FD_PEER_1,           /* host 1's daemon (the harness's pid in DIR/host-1.pid for HELLO) */
	FD_PEER_2,           /* host 2's daemon, likewise */
	FD_UNAUTH,           /* no HELLO from the harness: the input's own, or none */
	FD_NCONN
};
/* Sent as given: no magic, version, length, sequence or flag repair. */
#define FD_SEL_RAW         0x08u
/* Do not wait for the reply before the next record (requests in flight together). */
#define FD_SEL_NOWAIT      0x10u
/* Close the connection after this message (the next record on it reconnects). */
#define FD_SEL_CLOSE       0x20u
/* A descriptor rides on the message (SMIO_F_FD set unless raw). */
#define FD_SEL_FD          0x40u

#define FD_MAX_RECORDS     64

/*
 * Ids the daemon hands out (connections, borrows, queues, automatic segment
 * ids) differ from run to run. So that an input means the same thing every
 * time, a 4-byte-aligned word of a repaired (not raw) payload equal to
 * FD_REF(back, word) is replaced by word `word` (< FD_REF_WORDS) of the
 * payload of the back-th latest reply (< FD_REF_BACK) to this input's
 * records: "the handle the last SEG_CONNECT returned" is FD_REF(0, 0).
 */
#define FD_REF_MAGIC       0xfe5e0000u
#define FD_REF(back, word) (FD_REF_MAGIC | (uint32_t)(back) << 8 | (uint32_t)(word))
#define FD_REF_BACK        8u
#define FD_REF_WORDS       64u

#endif
