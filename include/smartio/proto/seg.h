/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, SISCI segments: SEG_* for libsisci and PEER_SEG_*,
 * PEER_MEMFD between daemons.
 */
#ifndef SMARTIO_PROTO_SEG_H
#define SMARTIO_PROTO_SEG_H

#include <stdint.h>

#include "wire.h"

#define SMIO_SEGID_AUTO     0xffffffffu   /* SEG_CREATE: the daemon picks a free id */
#define SMIO_SEG_F_EMPTY    0x1u          /* SEG_CREATE: no memory yet (attached later) */
#define SMIO_SEG_FLAGS      SMIO_SEG_F_EMPTY
#define SMIO_SEG_PAGE       4096ull       /* sizes and addresses are multiples of this */

struct smio_seg_create {
	uint32_t segid;            /* SMIO_SEGID_AUTO: pick one */
	uint32_t flags;            /* SMIO_SEG_F_* */
	uint64_t size;             /* 1 .. 2^40 bytes, rounded up to SMIO_SEG_PAGE */
};

struct smio_seg_info {
	uint32_t segid;
	uint32_t flags;
	uint64_t addr;             /* bus (physical) address in the owner's RAM; 0 if EMPTY */
	uint64_t size;             /* page-rounded */
};

struct smio_seg_id {
	uint32_t segid;            /* never SMIO_SEGID_AUTO */
	uint32_t pad;
};

struct smio_seg_avail {
	uint32_t segid;
	uint32_t available;        /* 0/1 */
};

struct smio_seg_connect {
	uint32_t node_id;          /* SISCI node id of the owning host (topology node_id) */
	uint32_t segid;
	uint32_t adapter;          /* local adapter: NTB index on this host */
	uint32_t pad;
};

/* A connection: the segment as seen from this host, through the local NTB. */
struct smio_seg_conn {
	uint32_t conn;             /* handle for MAP_REMOTE / DISCONNECT */
	uint32_t host;             /* owning host id */
	uint64_t win_addr;         /* local bus address of the first LUT window used */
	uint64_t offset;           /* the segment starts at win_addr + offset */
	uint64_t size;
	uint32_t lut_first;        /* LUT entries [lut_first, lut_first + lut_count) */
	uint32_t lut_count;        /* 0: a local segment, reached without the NTB */
};

struct smio_seg_map {
	uint32_t conn;
	uint32_t pad;
	uint64_t offset;           /* in the segment */
	uint64_t size;             /* 1 .. 2^40; offset + size <= segment size */
};

/*
 * SEG_CONN_P2P: where function bdf of this host reaches the segment of a
 * connection of the caller's process (its first byte), e.g. a device that
 * rings a remote NVMe's doorbells. A function of this host: the connection's
 * window (win_addr + offset, as SCI_Q_REMOTE_SEGMENT_IOADDR); a device
 * borrowed with Device Lending: the segment where it is, by the P2P rules its
 * lender applies (the lender's own bus address if the segment is there,
 * else a window of the lender's NTB onto the segment's host), never through
 * this host. Request: bus 0; reply: bus.
 */
struct smio_seg_conn_p2p {
	uint32_t conn;
	uint16_t bdf;
	uint16_t pad;
	uint64_t bus;
};

struct smio_seg_conn_ref {
	uint32_t conn;
	uint32_t flags;            /* SEG_EVENTS only: SMIO_SEG_REF_OWNER; else 0 */
};

/*
 * SEG_EVENTS with SMIO_SEG_REF_OWNER: conn is the id of a local segment of
 * the caller's, and the eventfd counts 1 for each connection made to it or
 * dropped (SISCI's owner callbacks, SCI_CB_CONNECT / SCI_CB_DISCONNECT);
 * SEG_OWNER_EVENT (request smio_seg_id) takes the oldest such event, reason
 * SMIO_SEG_OWNER_NONE when there is none. host: the connecting host. The
 * daemon keeps at most SMIO_SEG_OWNER_QUEUE events; older ones are dropped
 * and counted in `lost`.
 */
#define SMIO_SEG_REF_OWNER         1u
#define SMIO_SEG_OWNER_NONE        0u
#define SMIO_SEG_OWNER_CONNECT     1u
#define SMIO_SEG_OWNER_DISCONNECT  2u
#define SMIO_SEG_OWNER_QUEUE       64u

struct smio_seg_owner_ev {
	uint32_t segid;
	uint32_t reason;           /* SMIO_SEG_OWNER_* */
	uint32_t host;             /* the other end's host id */
	uint32_t lost;             /* events dropped so far (queue full) */
};

/*
 * SEG_ATTACH: give an EMPTY segment of the caller's its memory (once).
 * RAM: fresh host RAM of size bytes (addr 0). PHYS: the existing bus range
 * [addr, addr + size) of this host, which must lie inside a memory BAR of one
 * of its functions or inside RAM of a segment the caller owns (-EACCES
 * otherwise).
 */
#define SMIO_SEG_ATTACH_RAM  1u
#define SMIO_SEG_ATTACH_PHYS 2u

struct smio_seg_attach {
	uint32_t segid;
	uint32_t kind;             /* SMIO_SEG_ATTACH_* */
	uint64_t addr;             /* PHYS: page aligned bus address; RAM: 0 */
	uint64_t size;             /* page multiple, 1 page .. 2^40 */
};

/* Owner -> importer: what the importer programs its NTB with. */
struct smio_peer_seg {
	uint32_t segid;
	uint32_t ref;              /* the owner's reference id, for PEER_SEG_RELEASE */
	uint64_t addr;             /* bus address in the owner's RAM (page aligned) */
	uint64_t size;             /* page multiple, > 0 */
};

struct smio_peer_seg_ref {
	uint32_t segid;
	uint32_t ref;
};

/*
 * PEER_SEG_WHERE (request smio_peer_seg_ref: a reference the asking daemon
 * holds): where the segment's memory is as *devices* reach it. Usually the
 * owner itself at smio_peer_seg's addr; for a segment on the memory BAR of a
 * device the owner borrowed with Device Lending, the device's lender and the
 * BAR's bus address there, so that an importer maps it for a device by the
 * P2P rules of Device Lending instead of through the owner's NTB window onto
 * it (which would carry the data across the owner and back). CPUs still go
 * through the owner (SEG_MAP_REMOTE). An owner that predates the message
 * answers with an error, and the importer keeps the owner's address.
 */
#define SMIO_SEG_WHERE_LENT  0x1u     /* host is the lender of a borrowed device */

struct smio_peer_seg_where {
	uint32_t host;             /* where the memory is */
	uint32_t flags;            /* SMIO_SEG_WHERE_* */
	uint64_t addr;             /* its bus address there (page aligned) */
	uint64_t size;             /* the segment's size, page multiple, > 0 */
};

/*
 * SEG_STATE: is a connection usable? CONNECTED: yes. NOT_OPERATIONAL: the
 * route from the CPU through its window fails (a link on the path is down);
 * the windows stay, and it becomes CONNECTED again when the route works.
 * LOST (the owner's host became unreachable) and DISCONNECTED (the owner
 * process died): the windows are closed and only SEG_DISCONNECT is left to
 * do. The SEG_EVENTS eventfd counts 1 at every change of state.
 */
#define SMIO_SEG_CONNECTED        1u
#define SMIO_SEG_LOST             2u   /* the owner's host is gone: lost for good */
#define SMIO_SEG_NOT_OPERATIONAL  3u   /* the path through the window fails (a link) */
#define SMIO_SEG_DISCONNECTED     4u   /* the owner process died or removed it */

struct smio_seg_state {
	uint32_t conn;
	uint32_t state;            /* SMIO_SEG_* */
	uint32_t changes;          /* CONNECTED <-> NOT_OPERATIONAL transitions so far */
	uint32_t pad;
};

/* Request: mem (pad 0, size 0); reply: mem, its size, and the memfd. */
struct smio_peer_memfd {
	uint32_t mem;              /* memory object index on the receiving host */
	uint32_t pad;
	uint64_t size;
};

/*
 * Multicast (190..195; docs/sisci.md, "Multicast"): SISCI broadcast segments
 * on the cluster switches' multicast groups (fabric/mcast.h).
 *
 * MC_JOIN / MC_LEAVE: subscribe a local segment of the caller's (with
 * memory) to group `group` through adapter `adapter`: the NTB's overlay maps
 * the group onto the segment and the switch port joins the group; leave
 * undoes it. One segment per group and adapter on a host.
 */
struct smio_mc_join {
	uint32_t segid;
	uint32_t group;
	uint32_t adapter;
	uint32_t pad;
};

/* MC_CONNECT: a window of the caller's onto group `group` (to write to it). */
struct smio_mc_connect {
	uint32_t group;
	uint32_t adapter;
};

struct smio_mc_conn {
	uint32_t conn;             /* handle for MC_WRITE / MC_DMA / MC_DISCONNECT (SEG conn ref) */
	uint32_t group;
	uint64_t bus;              /* local bus address of the window onto the group */
	uint64_t size;             /* the group's size */
	uint64_t mc_addr;          /* the group's address in the switches' multicast range */
};

/*
 * MC_WRITE: len bytes follow, written to the group at offset, as the CPU's
 * posted writes through the window. MC_DMA: the same from a local segment of
 * the caller's (the adapter's DMA engine: segment memory to the group).
 * Reply: how many receivers got the bytes.
 */
struct smio_mc_write {
	uint32_t conn;
	uint32_t segid;            /* MC_DMA: the source segment; MC_WRITE: 0 */
	uint64_t offset;           /* in the group */
	uint64_t len;
	uint64_t seg_offset;       /* MC_DMA: in the source segment; MC_WRITE: 0 */
};

struct smio_mc_written {
	uint32_t receivers;
	uint32_t pad;
	uint64_t len;
};

/*
 * MC_TREE: the fan-out of a multicast write entering the fabric at this
 * host's adapter `ntb` at multicast address `addr` (smartio route shows it).
 * Reply: the head, then nrecv receivers and nlinks links.
 */
struct smio_mc_tree_req {
	uint32_t ntb;
	uint32_t pad;
	uint64_t addr;
};

struct smio_mc_recv {
	uint32_t host;             /* host id */
	uint32_t ntb;              /* its adapter */
	uint32_t csw;              /* switch (topology index) whose port delivers */
	uint32_t depth;            /* switches crossed */
};

struct smio_mc_link {
	uint32_t from_csw;         /* 0xffffffff: the ingress cable */
	uint32_t to_csw;           /* a cascade: the next switch; else 0xffffffff */
	uint32_t host;             /* cables: the host at the end; else 0xffffffff */
	uint8_t gen, width;
	uint8_t pad[2];
};

struct smio_mc_tree {
	uint32_t group;
	uint32_t ingress_csw;
	uint32_t nrecv, nlinks;
	uint64_t offset;           /* in the group */
	/* struct smio_mc_recv[nrecv], then struct smio_mc_link[nlinks] */
};

#endif
