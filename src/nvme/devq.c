// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme: queue pairs a device drives (TOCS'21 fig. 18/19 with the
 * NVMe shared through the manager). The SQ and the CQ lie in device memory of
 * the client's host (an accelerator's BAR2), backed by ordinary segments of the
 * client (SCIAttachPhysicalMemory) that the manager connects and maps for the
 * NVMe; the client's CPU never touches the queues after zeroing them. The
 * device learns the doorbells as it reaches them: the NVMe's BAR0 through the
 * client's connection (SCI_Q_REMOTE_SEGMENT_IOADDR, the NTB window), or for a
 * requester borrowed with Device Lending where its lender reaches that BAR
 * (SCI_Q_REMOTE_SEGMENT_IOADDR_FOR_FUNC). The queues themselves, on such a
 * device's memory, the NVMe's lender maps where they are (PEER_SEG_WHERE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snv_priv.h"

struct snv_devq {
	struct snv_client *c;
	uint16_t qid;
	sci_local_segment_t seg[2];      /* SQ, CQ */
	bool avail[2];
	int requester;                   /* registered with the NTB; -1: none */
};

static void requester_drop(struct snv_devq *q)
{
	sci_error_t se;

	if (q->requester >= 0)
		SCIUnregisterPCIeRequester(q->c->sd, q->c->adapter, (unsigned)q->requester >> 8,
					   (unsigned)q->requester & 0xff, 0, &se);
	q->requester = -1;
}

static void seg_drop(struct snv_devq *q, unsigned i)
{
	sci_error_t se;

	if (q->avail[i])
		SCISetSegmentUnavailable(q->seg[i], q->c->adapter, 0, &se);
	if (q->seg[i])
		SCIRemoveSegment(q->seg[i], 0, &se);
	q->seg[i] = NULL;
	q->avail[i] = false;
}

/* An ordinary segment on [bus, bus + size), with an ID in the client's range that
 * no other segment of this node has (tried from the top of the range down). */
static int seg_make(struct snv_devq *q, unsigned i, uint64_t bus, size_t size, uint32_t *id)
{
	struct snv_client *c = q->c;
	sci_error_t se = SCI_ERR_SEGMENTID_USED;
	volatile uint8_t *v;
	sci_map_t map;

	for (uint32_t n = SNV_SEGIDS; n-- > 0 && se == SCI_ERR_SEGMENTID_USED;) {
		*id = c->segid_base + n;
		SCICreateSegment(c->sd, &q->seg[i], *id, size, NULL, NULL, SCI_FLAG_EMPTY, &se);
	}
	if (se) {
		q->seg[i] = NULL;
		return snv_errno(se);
	}
	SCIAttachPhysicalMemory(bus, NULL, 0, size, q->seg[i], 0, &se);
	if (!se)
		SCIPrepareSegment(q->seg[i], c->adapter, 0, &se);
	/* Zero it once (MMIO): a CQ must start with phase 0 everywhere. */
	if (!se) {
		v = SCIMapLocalSegment(q->seg[i], &map, 0, size, NULL, 0, &se);
		if (!se) {
			memset((void *)v, 0, size);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			SCIUnmapSegment(map, 0, &se);
		}
	}
	if (!se)
		SCISetSegmentAvailable(q->seg[i], c->adapter, 0, &se);
	q->avail[i] = !se;
	return se == SCI_ERR_ILLEGAL_ADDRESS ? -EFAULT : snv_errno(se);
}

int snv_devq_create(struct snv_client *c, unsigned depth, uint64_t sq_bus, uint64_t cq_bus,
		    int requester, struct snv_devq **out, struct snv_devq_info *info)
{
	size_t sqb = ((size_t)depth * 64 + SNV_PAGE - 1) & ~(size_t)(SNV_PAGE - 1);
	size_t cqb = ((size_t)depth * 16 + SNV_PAGE - 1) & ~(size_t)(SNV_PAGE - 1);
	struct snv_create_qp r = { .depth = depth, .flags = SNV_QP_EXT_SEGS | SNV_QP_PRIO_POLICY };
	sci_query_remote_segment_t qr = { .segment = c->bar_rs,
					  .subcommand = SCI_Q_REMOTE_SEGMENT_IOADDR };
	struct snv_qp_reply rep;
	struct snv_devq *q;
	sci_error_t se;
	int rc;

	*out = NULL;
	if (depth < 2 || depth > c->max_depth || requester > 0xffff || sq_bus % SNV_PAGE || cq_bus % SNV_PAGE ||
	    (sq_bus < cq_bus + cqb && cq_bus < sq_bus + sqb))
		return -EINVAL;
	/* The doorbells as the requester reaches them: a device borrowed with
	 * Device Lending is not on this host's bus, and reaches the NVMe by its
	 * lender's P2P rules rather than through our window. */
	if (requester >= 0) {
		qr.subcommand = SCI_Q_REMOTE_SEGMENT_IOADDR_FOR_FUNC;
		qr.data.ioaddr = (sci_ioaddr_t)requester;
	}
	SCIQuery(SCI_Q_REMOTE_SEGMENT, &qr, 0, &se);
	if (se == SCI_ERR_NOT_SUPPORTED && requester >= 0) {
		/* A daemon that predates the query: our window, right for our own
		 * devices (a borrowed one then cannot ring the doorbells). */
		qr.subcommand = SCI_Q_REMOTE_SEGMENT_IOADDR;
		SCIQuery(SCI_Q_REMOTE_SEGMENT, &qr, 0, &se);
	}
	if (se)
		return snv_errno(se);
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->c = c;
	q->requester = -1;
	/* The device's doorbell stores leave through the NTB: it must accept them. */
	if (requester >= 0) {
		SCIRegisterPCIeRequester(c->sd, c->adapter, (unsigned)requester >> 8,
					 (unsigned)requester & 0xff, 0, &se);
		if (se && se != SCI_ERR_BUSY) {         /* BUSY: registered already */
			free(q);
			return snv_errno(se);
		}
		q->requester = se ? -1 : requester;
	}
	pthread_mutex_lock(&c->lock);
	rc = seg_make(q, 0, sq_bus, sqb, &r.sq_segid);
	if (!rc)
		rc = seg_make(q, 1, cq_bus, cqb, &r.cq_segid);
	if (!rc)
		rc = snv_rpc(c, SNV_MSG_CREATE_QP, &r, sizeof(r), &rep, sizeof(rep), NULL, 0, NULL);
	if (rc > 0)
		rc = -EIO;                    /* the controller refused the queue */
	if (!rc && (rep.qid < 1 || rep.qid > c->nqueues || rep.sq_cmb_off || rep.rsvd))
		rc = -EPROTO;
	pthread_mutex_unlock(&c->lock);
	if (rc) {
		seg_drop(q, 1);
		seg_drop(q, 0);
		requester_drop(q);
		free(q);
		return rc;
	}
	q->qid = (uint16_t)rep.qid;
	*info = (struct snv_devq_info){ .qid = q->qid, .depth = depth,
		.sq_db_bus = qr.data.ioaddr + nvme_sq_tail_db(q->qid, c->dstrd),
		.cq_db_bus = qr.data.ioaddr + nvme_cq_head_db(q->qid, c->dstrd) };
	*out = q;
	return 0;
}

int snv_devq_delete(struct snv_devq *q)
{
	struct snv_delete_qp r;
	int rc;

	if (!q)
		return -EINVAL;
	r = (struct snv_delete_qp){ .qid = q->qid };
	pthread_mutex_lock(&q->c->lock);
	rc = snv_rpc(q->c, SNV_MSG_DELETE_QP, &r, sizeof(r), NULL, 0, NULL, 0, NULL);
	pthread_mutex_unlock(&q->c->lock);
	/* The memory goes only once the controller no longer owns it; after a failed
	 * delete the manager's reclaim deletes the pair when this client goes. */
	if (!rc) {
		seg_drop(q, 1);
		seg_drop(q, 0);
	}
	requester_drop(q);
	free(q);
	return rc < 0 ? rc : rc ? -EIO : 0;
}
