/* SPDX-License-Identifier: MIT */
/*
 * libczodiac: cZodiac's four communication primitives (JCST 2014, sec. 3.1)
 * over the smartio fabric, built on libsisci (docs/czodiac.md).
 *
 *  - DAP: load/store through a global address table. Every endpoint exposes
 *    one region (a SISCI segment); a global address is (node << 40) | offset,
 *    and the table maps each node's region through its NTB window.
 *  - NAP: messages of up to CZ_NAP_MAX bytes on a queue pair. Each QP has a
 *    receive ring of CZ_NAP_ENTRY-byte entries in the receiver's memory that
 *    the sender writes; small payloads travel with the header (NAP
 *    immediate, CPU stores), larger ones by the NTB's DMA engine (NAP
 *    indirect). The receiver's ring carries a magic number that every
 *    message must match.
 *  - RDMA PUT: a NAP handshake (RTS, CTS with the destination) and a DMA
 *    write from the sender's region into the receiver's, then FIN.
 *  - RDMA GET: a NAP that asks the remote side to PUT back; the remote
 *    library serves it whenever it waits or polls (cz_progress).
 *
 * Every call returns 0 (or a length) or a negative errno; every wait is
 * bounded by the endpoint's timeout. One thread per endpoint. cz_open
 * initialises libsisci if needed; the program calls SCITerminate at its end.
 */
#ifndef SMARTIO_CZODIAC_H
#define SMARTIO_CZODIAC_H

#include <stddef.h>
#include <stdint.h>

#define CZ_NAP_ENTRY   2048u   /* one receive-ring entry (the paper's 2 KB) */
#define CZ_NAP_HDR     48u     /* header at the start of an entry */
#define CZ_NAP_MAX     (CZ_NAP_ENTRY - CZ_NAP_HDR)   /* largest NAP payload */
#define CZ_NAP_IMM_MAX 64u     /* payloads up to this go as NAP immediate */
#define CZ_MAX_QPS     4u      /* per peer (the paper: four QPs per VF) */
#define CZ_MAX_NODE    255u
#define CZ_GADDR_SHIFT 40

/* A global address: node's exposed region at offset off. */
#define CZ_GADDR(node, off) (((uint64_t)(node) << CZ_GADDR_SHIFT) | (uint64_t)(off))

struct cz_config {
	unsigned int adapter;      /* local NTB adapter (0) */
	unsigned int job;          /* 1..0xffff: segment-id namespace shared by a job's endpoints */
	size_t mem_size;           /* the exposed region, bytes (> 0, page multiple) */
	unsigned int ring_entries; /* per-QP receive ring: power of two 2..1024; 0 = 64 */
	unsigned int timeout_ms;   /* bound on every wait; 0 = 10000 */
};

struct cz_stats {
	uint64_t dap_stores, dap_loads;
	uint64_t nap_imm, nap_indirect, nap_received;
	uint64_t puts, puts_accepted, gets, gets_served;
	uint64_t bad_magic;        /* messages dropped: wrong QP magic number */
	uint64_t credit_waits;     /* sends that found the peer's ring full */
};

struct cz_ep;
struct cz_qp;

int cz_open(const struct cz_config *cfg, struct cz_ep **out);
/* Closes the endpoint's QPs too. */
void cz_close(struct cz_ep *ep);
unsigned int cz_node(const struct cz_ep *ep);
/* The endpoint's own exposed region (DAP target, RDMA source/destination). */
void *cz_mem(struct cz_ep *ep, size_t *size);
void cz_stats(const struct cz_ep *ep, struct cz_stats *out);

/* ---------- DAP ---------- */

/* Map node's region into the global address table (idempotent). */
int cz_gat_attach(struct cz_ep *ep, unsigned int node);
/* A pointer for loads/stores of len bytes at gaddr; NULL if not attached or out of range. */
volatile void *cz_dap_ptr(struct cz_ep *ep, uint64_t gaddr, size_t len);
/* Stores then a store barrier; loads. -ENOENT unattached, -ERANGE outside the region. */
int cz_dap_store(struct cz_ep *ep, uint64_t gaddr, const void *src, size_t len);
int cz_dap_load(struct cz_ep *ep, uint64_t gaddr, void *dst, size_t len);

/* ---------- NAP ---------- */

/*
 * Queue pair qpn (< CZ_MAX_QPS) with peer_node: creates this side's receive
 * ring and connects to the peer's (waits up to the timeout for it). Both
 * sides open the same qpn. -EEXIST if already open.
 */
int cz_qp_open(struct cz_ep *ep, unsigned int peer_node, unsigned int qpn, struct cz_qp **out);
void cz_qp_close(struct cz_qp *qp);
/*
 * Send len (0..CZ_NAP_MAX) bytes; -EMSGSIZE if larger, -ETIMEDOUT if the
 * peer's ring stays full. A full ring waits for the peer to consume: two
 * sides that both send a full ring's worth without receiving time out.
 */
int cz_nap_send(struct cz_qp *qp, const void *buf, size_t len);
/*
 * The next message, in order: its length (copied up to cap; -EMSGSIZE and the
 * message dropped if it does not fit), or -ETIMEDOUT after timeout_ms.
 */
int cz_nap_recv(struct cz_qp *qp, void *buf, size_t cap, unsigned int timeout_ms);

/* ---------- RDMA ---------- */

/* PUT len bytes from src_off of my region into the peer's, where its cz_put_accept says. */
int cz_put(struct cz_qp *qp, size_t src_off, size_t len, uint32_t tag);
/*
 * Accept the PUT with tag into dst_off of my region (up to cap bytes): the
 * length received; -EMSGSIZE (the sender gets -ECONNREFUSED) if it is larger.
 */
long cz_put_accept(struct cz_qp *qp, size_t dst_off, size_t cap, uint32_t tag,
		   unsigned int timeout_ms);
/* GET len bytes at the peer's src_off into dst_off of my region (the peer PUTs them). */
int cz_get(struct cz_qp *qp, size_t dst_off, size_t src_off, size_t len);
/* Serve the peer's GETs for up to timeout_ms (0: what is there now); GETs served. */
int cz_progress(struct cz_qp *qp, unsigned int timeout_ms);

#endif
