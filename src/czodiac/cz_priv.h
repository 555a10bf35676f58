/* SPDX-License-Identifier: MIT */
/*
 * libczodiac internals: the endpoint, its global address table and its queue
 * pairs (docs/czodiac.md, "The primitives on the fabric").
 *
 * Segment ids of a job J: (J << 12) | sub, where sub 0 is the exposed region,
 * 0x100 + peer * CZ_MAX_QPS + qpn the receive ring for a peer's QP, and
 * 0x800 + ... that QP's send staging buffer (local only, the DMA source of
 * NAP indirect).
 */
#ifndef SMARTIO_CZ_PRIV_H
#define SMARTIO_CZ_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "sisci_api.h"
#include "smartio/czodiac.h"

#define CZ_SUB_MEM     0x000u
#define CZ_SUB_RING    0x100u
#define CZ_SUB_STAGE   0x800u
#define CZ_RING_HDR    4096u   /* ring segment: header page, then the entries */
#define CZ_RING_MAGIC_OFF 0
#define CZ_RING_ENTRIES_OFF 4
#define CZ_RING_HEAD_OFF 64    /* consumed count, own cache line (receiver writes it) */

enum cz_kind {
	CZ_K_NAP = 1,     /* user message */
	CZ_K_RTS,         /* PUT: tag, a = length */
	CZ_K_CTS,         /* PUT: tag, a = accepted length (0: refused), b = destination */
	CZ_K_FIN,         /* PUT done: tag, a = length, b = destination */
	CZ_K_GET,         /* tag, a = peer's source, b = my destination, c = length */
	CZ_K_GETDONE,     /* tag, a = 0 or the server's -errno */
};

#define CZ_F_IMM 1        /* payload written with the header by CPU stores */

/* The first CZ_NAP_HDR bytes of an entry; seq is written last. */
struct cz_msg {
	uint32_t seq;     /* absolute message number + 1: valid when it matches */
	uint32_t magic;   /* the receiving ring's magic number */
	uint8_t kind, flags;
	uint16_t len;     /* payload bytes */
	uint32_t tag;
	uint64_t a, b, c;
	uint64_t pad;
};
_Static_assert(sizeof(struct cz_msg) == CZ_NAP_HDR, "NAP header size");

struct cz_gat_entry {
	bool used;
	sci_remote_segment_t seg;
	sci_map_t map;
	volatile uint8_t *base;
	size_t size;
};

struct cz_qp {
	struct cz_ep *ep;
	unsigned int peer, qpn;
	/* receive side: my ring, written by the peer */
	sci_local_segment_t rx_seg;
	sci_map_t rx_map;
	volatile uint8_t *rx;
	uint32_t rx_magic;
	uint32_t rx_head;        /* oldest unconsumed (absolute) */
	bool *rx_done;           /* consumed out of order, by slot */
	/* send side: the peer's ring */
	sci_remote_segment_t tx_seg;
	sci_map_t tx_map;
	volatile uint8_t *tx;
	uint32_t tx_magic;       /* the peer ring's magic, read at open */
	uint32_t tx_entries;     /* the peer ring's size, read at open */
	uint32_t tx_seq;         /* messages sent */
	uint32_t tx_credit;      /* the peer's consumed count, as last read */
	sci_local_segment_t stage_seg;  /* NAP indirect source */
	sci_map_t stage_map;
	uint8_t *stage;
	uint32_t next_tag;       /* GET tags */
};

struct cz_ep {
	struct cz_config cfg;
	sci_desc_t sd;
	unsigned int node;
	sci_local_segment_t mem_seg;
	sci_map_t mem_map;
	uint8_t *mem;
	sci_dma_queue_t dq;
	struct cz_gat_entry gat[CZ_MAX_NODE + 1];
	struct cz_qp *qps[CZ_MAX_NODE + 1][CZ_MAX_QPS];
	struct cz_stats st;
};

static inline unsigned int cz_seg_id(const struct cz_ep *ep, unsigned int sub)
{
	return (ep->cfg.job << 12) | sub;
}

int cz_err(sci_error_t e);
/* Remove a local segment, waiting (bounded) while a peer is still connected. */
void cz_remove_segment(sci_local_segment_t seg);
/* The peer's region attached (for DMA); NULL if not. */
struct cz_gat_entry *cz_gat(struct cz_ep *ep, unsigned int node);

/* cz_nap.c: raw messages and the scan of the receive ring. */
int cz_send_msg(struct cz_qp *qp, uint8_t kind, uint32_t tag, uint64_t a, uint64_t b, uint64_t c,
		const void *payload, size_t len);
/*
 * Wait for the first unconsumed message of kind (and tag, unless any_tag),
 * serving GETs met on the way; copy its header to *m and its payload to buf
 * (cap bytes) and consume it. -ETIMEDOUT after timeout_ms.
 */
int cz_wait_msg(struct cz_qp *qp, uint8_t kind, uint32_t tag, bool any_tag, struct cz_msg *m,
		void *buf, size_t cap, unsigned int timeout_ms);
/* cz_rdma.c: serve one GET request (already consumed from the ring). */
void cz_serve_get(struct cz_qp *qp, const struct cz_msg *m);
/* DMA len bytes of my region at off to the peer's region at roff. */
int cz_dma_put(struct cz_qp *qp, size_t off, size_t len, size_t roff);

#endif
