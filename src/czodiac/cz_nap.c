// SPDX-License-Identifier: MIT
/*
 * libczodiac: queue pairs and NAP (docs/czodiac.md).
 *
 * A QP's receive ring is a segment in the receiver's memory: a header page
 * (the ring's magic number, its size, the receiver's consumed count) and
 * ring_entries entries of CZ_NAP_ENTRY bytes. The sender writes entry
 * (seq % entries): the payload (by CPU stores for NAP immediate, by the DMA
 * engine for NAP indirect), the header, then seq last with release order, so
 * a receiver that sees seq sees the whole message. The sender never runs
 * more than `entries` ahead of the consumed count it reads back (a DAP load).
 *
 * The receiver consumes in order per kind: control messages of the RDMA
 * handshake may be taken ahead of user messages, which keep their order and
 * their slot until taken (the consumed count advances over the taken prefix).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cz_priv.h"
#include "util/smio_time.h"

#define SPIN_POLLS 2000u     /* polls before yielding the CPU between polls */

static size_t ring_bytes(unsigned int entries)
{
	return CZ_RING_HDR + (size_t)entries * CZ_NAP_ENTRY;
}

static unsigned int ring_sub(unsigned int node, unsigned int qpn)
{
	return CZ_SUB_RING + node * CZ_MAX_QPS + qpn;
}

static uint32_t load32(const volatile uint8_t *base, size_t off)
{
	return __atomic_load_n((const uint32_t *)(const void *)(base + off), __ATOMIC_ACQUIRE);
}

static void store32(volatile uint8_t *base, size_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(void *)(base + off), v, __ATOMIC_RELEASE);
}

static uint32_t new_magic(const struct cz_ep *ep, unsigned int peer, unsigned int qpn)
{
	uint64_t x = smio_now_ns() ^ ((uint64_t)getpid() << 32) ^ (peer << 8) ^ qpn ^ ep->node;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x ? (uint32_t)x : 1;
}

/* My receive ring for this QP, available to the peer. */
static int rx_create(struct cz_qp *qp)
{
	struct cz_ep *ep = qp->ep;
	unsigned int n = ep->cfg.ring_entries;
	size_t size = ring_bytes(n);
	sci_error_t e;

	qp->rx_done = calloc(n, sizeof(*qp->rx_done));
	if (!qp->rx_done)
		return -ENOMEM;
	SCICreateSegment(ep->sd, &qp->rx_seg, cz_seg_id(ep, ring_sub(qp->peer, qp->qpn)), size,
			 NULL, NULL, 0, &e);
	if (e)
		return cz_err(e);
	SCIPrepareSegment(qp->rx_seg, ep->cfg.adapter, 0, &e);
	if (!e)
		qp->rx = SCIMapLocalSegment(qp->rx_seg, &qp->rx_map, 0, size, NULL, 0, &e);
	if (e) {
		int rc = cz_err(e);

		SCIRemoveSegment(qp->rx_seg, 0, &e);
		qp->rx_seg = NULL;
		return rc;
	}
	memset((void *)qp->rx, 0, size);
	qp->rx_magic = new_magic(ep, qp->peer, qp->qpn);
	store32(qp->rx, CZ_RING_ENTRIES_OFF, n);
	store32(qp->rx, CZ_RING_MAGIC_OFF, qp->rx_magic);
	SCISetSegmentAvailable(qp->rx_seg, ep->cfg.adapter, 0, &e);
	return cz_err(e);
}

/* The send staging buffer: the DMA engine's source for NAP indirect. */
static int stage_create(struct cz_qp *qp)
{
	struct cz_ep *ep = qp->ep;
	sci_error_t e;

	SCICreateSegment(ep->sd, &qp->stage_seg,
			 cz_seg_id(ep, CZ_SUB_STAGE + qp->peer * CZ_MAX_QPS + qp->qpn), CZ_NAP_ENTRY,
			 NULL, NULL, 0, &e);
	if (e)
		return cz_err(e);
	SCIPrepareSegment(qp->stage_seg, ep->cfg.adapter, 0, &e);
	if (!e)
		qp->stage = SCIMapLocalSegment(qp->stage_seg, &qp->stage_map, 0, CZ_NAP_ENTRY, NULL,
					       0, &e);
	if (e) {
		int rc = cz_err(e);

		SCIRemoveSegment(qp->stage_seg, 0, &e);
		qp->stage_seg = NULL;
		return rc;
	}
	return 0;
}

/* The peer's receive ring for this QP (it creates it in its cz_qp_open). */
static int tx_connect(struct cz_qp *qp)
{
	struct cz_ep *ep = qp->ep;
	sci_error_t e;
	size_t size;

	SCIConnectSegment(ep->sd, &qp->tx_seg, qp->peer,
			  cz_seg_id(ep, ring_sub(ep->node, qp->qpn)), ep->cfg.adapter, NULL, NULL,
			  ep->cfg.timeout_ms, 0, &e);
	if (e)
		return cz_err(e);
	size = SCIGetRemoteSegmentSize(qp->tx_seg);
	qp->tx = SCIMapRemoteSegment(qp->tx_seg, &qp->tx_map, 0, size, NULL, 0, &e);
	if (!e) {
		qp->tx_magic = load32(qp->tx, CZ_RING_MAGIC_OFF);
		qp->tx_entries = load32(qp->tx, CZ_RING_ENTRIES_OFF);
		if (!qp->tx_magic || qp->tx_entries < 2 || size < ring_bytes(qp->tx_entries))
			e = SCI_ERR_ILLEGAL_PARAMETER;
		else
			return 0;
		SCIUnmapSegment(qp->tx_map, 0, &e);
		e = SCI_ERR_ILLEGAL_PARAMETER;
	}
	{
		int rc = cz_err(e);

		SCIDisconnectSegment(qp->tx_seg, 0, &e);
		qp->tx_seg = NULL;
		qp->tx = NULL;
		return rc;
	}
}

int cz_qp_open(struct cz_ep *ep, unsigned int peer, unsigned int qpn, struct cz_qp **out)
{
	struct cz_qp *qp;
	int rc;

	if (!ep || !out || peer > CZ_MAX_NODE || peer == ep->node || qpn >= CZ_MAX_QPS)
		return -EINVAL;
	if (ep->qps[peer][qpn])
		return -EEXIST;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->ep = ep;
	qp->peer = peer;
	qp->qpn = qpn;
	qp->next_tag = 1;
	rc = rx_create(qp);
	if (!rc)
		rc = stage_create(qp);
	if (!rc)
		rc = tx_connect(qp);
	if (!rc)
		rc = cz_gat_attach(ep, peer);   /* RDMA's remote segment */
	ep->qps[peer][qpn] = qp;
	if (rc) {
		cz_qp_close(qp);
		return rc;
	}
	*out = qp;
	return 0;
}

void cz_qp_close(struct cz_qp *qp)
{
	sci_error_t e;

	if (!qp)
		return;
	if (qp->tx_seg) {
		SCIUnmapSegment(qp->tx_map, 0, &e);
		SCIDisconnectSegment(qp->tx_seg, 0, &e);
	}
	if (qp->stage_seg) {
		SCIUnmapSegment(qp->stage_map, 0, &e);
		SCIRemoveSegment(qp->stage_seg, 0, &e);
	}
	if (qp->rx_seg) {
		SCISetSegmentUnavailable(qp->rx_seg, qp->ep->cfg.adapter, 0, &e);
		if (qp->rx)
			SCIUnmapSegment(qp->rx_map, 0, &e);
		cz_remove_segment(qp->rx_seg);
	}
	qp->ep->qps[qp->peer][qp->qpn] = NULL;
	free(qp->rx_done);
	free(qp);
}

/* ---------- sending ---------- */

/* Room in the peer's ring: reread its consumed count (a load across the fabric). */
static int wait_credit(struct cz_qp *qp)
{
	int64_t dl;
	unsigned int polls = 0;

	if (qp->tx_seq - qp->tx_credit < qp->tx_entries)
		return 0;
	qp->ep->st.credit_waits++;
	dl = smio_deadline(qp->ep->cfg.timeout_ms);
	for (;;) {
		qp->tx_credit = load32(qp->tx, CZ_RING_HEAD_OFF);
		if (qp->tx_seq - qp->tx_credit < qp->tx_entries)
			return 0;
		if (smio_ms_left(dl) == 0)
			return -ETIMEDOUT;
		if (++polls > SPIN_POLLS)
			sched_yield();
	}
}

int cz_send_msg(struct cz_qp *qp, uint8_t kind, uint32_t tag, uint64_t a, uint64_t b, uint64_t c,
		const void *payload, size_t len)
{
	struct cz_ep *ep = qp->ep;
	struct cz_msg h = { .magic = qp->tx_magic, .kind = kind, .len = (uint16_t)len,
			    .tag = tag, .a = a, .b = b, .c = c };
	size_t off;
	volatile uint8_t *ent;
	sci_error_t e;
	int rc;

	if (len > CZ_NAP_MAX)
		return -EMSGSIZE;
	rc = wait_credit(qp);
	if (rc)
		return rc;
	off = CZ_RING_HDR + (size_t)(qp->tx_seq % qp->tx_entries) * CZ_NAP_ENTRY;
	ent = qp->tx + off;
	if (len <= CZ_NAP_IMM_MAX) {
		/* NAP immediate: the data rides with the descriptor, no DMA read. */
		h.flags = CZ_F_IMM;
		if (len)
			memcpy((void *)(ent + CZ_NAP_HDR), payload, len);
		ep->st.nap_imm++;
	} else {
		/* NAP indirect: the engine reads the payload from the send buffer. */
		memcpy(qp->stage, payload, len);
		SCIStartDmaTransfer(ep->dq, qp->stage_seg, qp->tx_seg, 0, len, off + CZ_NAP_HDR,
				    NULL, NULL, SCI_FLAG_DMA_WAIT, &e);
		if (e)
			return cz_err(e);
		ep->st.nap_indirect++;
	}
	memcpy((void *)(ent + sizeof(h.seq)), (const uint8_t *)&h + sizeof(h.seq),
	       sizeof(h) - sizeof(h.seq));
	store32(ent, 0, qp->tx_seq + 1);
	SCIFlush(NULL, 0);
	qp->tx_seq++;
	return 0;
}

int cz_nap_send(struct cz_qp *qp, const void *buf, size_t len)
{
	if (!qp || (len && !buf))
		return -EINVAL;
	return cz_send_msg(qp, CZ_K_NAP, 0, 0, 0, 0, buf, len);
}

/* ---------- receiving ---------- */

static void consume(struct cz_qp *qp, uint32_t abs)
{
	unsigned int n = qp->ep->cfg.ring_entries;

	qp->rx_done[abs % n] = true;
	while (qp->rx_done[qp->rx_head % n]) {
		qp->rx_done[qp->rx_head % n] = false;
		qp->rx_head++;
	}
	store32(qp->rx, CZ_RING_HEAD_OFF, qp->rx_head);
}

/*
 * One pass over the arrived, unconsumed entries: 1 and the message if one of
 * kind (and tag) is there, 0 if not; GETs met on the way are served, entries
 * with a wrong magic dropped. -EMSGSIZE: it was there but did not fit cap.
 */
static int scan(struct cz_qp *qp, uint8_t kind, uint32_t tag, bool any_tag, struct cz_msg *m,
		void *buf, size_t cap)
{
	unsigned int n = qp->ep->cfg.ring_entries;

	for (uint32_t a = qp->rx_head; a - qp->rx_head < n; a++) {
		const volatile uint8_t *ent = qp->rx + CZ_RING_HDR + (size_t)(a % n) * CZ_NAP_ENTRY;
		struct cz_msg h;

		if (qp->rx_done[a % n])
			continue;
		if (load32(ent, 0) != a + 1)
			break;           /* the sender writes in order: nothing after this yet */
		memcpy(&h, (const void *)ent, sizeof(h));
		if (h.magic != qp->rx_magic || h.len > CZ_NAP_MAX) {
			qp->ep->st.bad_magic++;
			consume(qp, a);
			continue;
		}
		if (h.kind == CZ_K_GET && kind != CZ_K_GET) {
			consume(qp, a);
			cz_serve_get(qp, &h);
			continue;
		}
		if (h.kind != kind || (!any_tag && h.tag != tag))
			continue;
		*m = h;
		if (h.len > cap) {
			consume(qp, a);
			return -EMSGSIZE;
		}
		if (h.len)
			memcpy(buf, (const void *)(ent + CZ_NAP_HDR), h.len);
		consume(qp, a);
		return 1;
	}
	return 0;
}

int cz_wait_msg(struct cz_qp *qp, uint8_t kind, uint32_t tag, bool any_tag, struct cz_msg *m,
		void *buf, size_t cap, unsigned int timeout_ms)
{
	int64_t dl = smio_deadline(timeout_ms);
	unsigned int polls = 0;

	for (;;) {
		int rc = scan(qp, kind, tag, any_tag, m, buf, cap);

		if (rc)
			return rc < 0 ? rc : 0;
		if (smio_ms_left(dl) == 0)
			return -ETIMEDOUT;
		if (++polls > SPIN_POLLS)
			sched_yield();
	}
}

int cz_nap_recv(struct cz_qp *qp, void *buf, size_t cap, unsigned int timeout_ms)
{
	struct cz_msg m;
	int rc;

	if (!qp || (cap && !buf))
		return -EINVAL;
	rc = cz_wait_msg(qp, CZ_K_NAP, 0, true, &m, buf, cap, timeout_ms);
	if (rc)
		return rc;
	qp->ep->st.nap_received++;
	return m.len;
}

int cz_progress(struct cz_qp *qp, unsigned int timeout_ms)
{
	int64_t dl = smio_deadline(timeout_ms);
	struct cz_msg m;
	int served = 0;

	if (!qp)
		return -EINVAL;
	for (;;) {
		int rc = cz_wait_msg(qp, CZ_K_GET, 0, true, &m, NULL, 0, 0);

		if (!rc) {
			cz_serve_get(qp, &m);
			served++;
			continue;
		}
		if (rc != -ETIMEDOUT || smio_ms_left(dl) == 0)
			return rc == -ETIMEDOUT ? served : rc;
		sched_yield();
	}
}
