// SPDX-License-Identifier: MIT
/*
 * libsisci: connections to segments (SCIConnectSegment, SCIDisconnectSegment).
 * The model is described in sisci_segment.c, what happens when a
 * connection's path fails in sisci_link.c.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sisci_seg.h"
#include "util/smio_time.h"

#define CONNECT_WAIT_MIN 1                /* ms between connect attempts... */
#define CONNECT_WAIT_MAX 32               /* ...doubling up to this */

/* ---------- connections ---------- */

void sisci_rseg_init(struct sci_remote_segment *r)
{
	pthread_mutex_init(&r->watch_mu, NULL);
	r->efd = r->cancel_fd = -1;
	r->state = SMIO_SEG_CONNECTED;
}

void SCIConnectSegment(sci_desc_t sd, sci_remote_segment_t *segment, unsigned int nodeId,
		       unsigned int segmentId, unsigned int localAdapterNo,
		       sci_cb_remote_segment_t callback, void *callbackArg,
		       unsigned int timeout, unsigned int flags, sci_error_t *error)
{
	struct smio_seg_connect req = { .segid = segmentId, .adapter = localAdapterNo };
	struct smio_seg_conn sc;
	struct sci_remote_segment *r;
	uint64_t deadline = 0;
	unsigned int wait = CONNECT_WAIT_MIN;
	uint32_t rlen = 0;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	*error = sisci_check_init();
	if (*error)
		return;
	if (!sd || !segment) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags & ~(SCI_FLAG_USE_CALLBACK | SCI_FLAG_ASYNCHRONOUS_CONNECT |
		      SCI_FLAG_BROADCAST)) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	/* A multicast group: the segment id is the group (sisci_mcast.c). */
	if ((flags & SCI_FLAG_BROADCAST) || nodeId == DIS_BROADCAST_NODEID_GROUP_ALL) {
		if (!(flags & SCI_FLAG_BROADCAST) || nodeId != DIS_BROADCAST_NODEID_GROUP_ALL ||
		    (flags & ~SCI_FLAG_BROADCAST)) {
			*error = (flags & ~SCI_FLAG_BROADCAST) ? SCI_ERR_FLAG_NOT_IMPLEMENTED
							       : SCI_ERR_ILLEGAL_PARAMETER;
			return;
		}
		*error = sisci_check_adapter(localAdapterNo);
		if (!*error)
			*error = sisci_mc_connect(sd, segmentId, localAdapterNo, &r);
		if (*error)
			return;
		sisci_lock();
		sisci_obj_add(&r->obj, SISCI_OBJ_RSEG);
		sisci_desc_get(sd);
		sisci_unlock();
		*segment = r;
		return;
	}
	/* Its outcome would be reported by a callback: not implemented. */
	if (flags & SCI_FLAG_ASYNCHRONOUS_CONNECT) {
		*error = SCI_ERR_FLAG_NOT_IMPLEMENTED;
		return;
	}
	if ((flags & SCI_FLAG_USE_CALLBACK) && !callback) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	*error = sisci_check_adapter(localAdapterNo);
	if (*error)
		return;
	if (nodeId == SCI_LOCAL_HOST)
		nodeId = sisci.node_id;
	if (sisci_node_host(nodeId) < 0) {
		*error = SCI_ERR_NO_SUCH_NODEID;
		return;
	}
	if (segmentId == SMIO_SEGID_AUTO) {
		*error = SCI_ERR_NO_SUCH_SEGMENT;  /* no segment can have the "pick one" id */
		return;
	}
	req.node_id = nodeId;
	if (timeout != SCI_INFINITE_TIMEOUT)
		deadline = smio_now_ms() + timeout;

	/*
	 * The segment may not exist or be available yet: try again until the
	 * timeout, with short bounded waits (the daemon does not announce it).
	 */
	for (;;) {
		uint64_t now;
		unsigned int left;

		rc = sisci_call(sd, SMIO_SEG_CONNECT, &req, sizeof(req), &sc, sizeof(sc), &rlen,
				NULL);
		if (!rc && rlen != sizeof(sc))
			rc = -EPROTO;
		if (rc != -ENOENT && rc != -ECONNREFUSED)
			break;
		if (!timeout)
			break;              /* one attempt: say why it failed */
		now = smio_now_ms();
		if (timeout != SCI_INFINITE_TIMEOUT && now >= deadline) {
			*error = SCI_ERR_TIMEOUT;
			return;
		}
		left = timeout == SCI_INFINITE_TIMEOUT ? wait : (unsigned int)(deadline - now);
		poll(NULL, 0, (int)(left < wait ? left : wait));
		if (wait < CONNECT_WAIT_MAX)
			wait *= 2;
	}
	if (rc) {
		/* -EHOSTUNREACH (SCI_ERR_NO_SUCH_NODEID) also means "not over this adapter". */
		*error = sisci_seg_errno(rc);
		return;
	}

	r = calloc(1, sizeof(*r));
	if (!r) {
		struct smio_seg_conn_ref ref = { .conn = sc.conn };

		sisci_call(sd, SMIO_SEG_DISCONNECT, &ref, sizeof(ref), NULL, 0, NULL, NULL);
		*error = SCI_ERR_NOSPC;
		return;
	}
	sisci_rseg_init(r);
	r->sd = sd;
	r->conn = sc.conn;
	r->host = sc.host;
	r->node_id = nodeId;
	r->segid = segmentId;
	r->adapter = localAdapterNo;
	r->size = sc.size;
	r->ioaddr = sc.win_addr + sc.offset;
	sisci_lock();
	sisci_obj_add(&r->obj, SISCI_OBJ_RSEG);
	sisci_desc_get(sd);
	sisci_unlock();
	/* Registered first: the callback may run at once and use the handle. */
	if (flags & SCI_FLAG_USE_CALLBACK) {
		struct smio_seg_conn_ref ref = { .conn = sc.conn };

		r->cb = callback;
		r->cb_arg = callbackArg;
		*error = sisci_rseg_watch(r);
		if (*error) {
			sisci_lock();
			sisci_obj_del(&r->obj);
			sisci_desc_put(sd);
			sisci_unlock();
			sisci_call(sd, SMIO_SEG_DISCONNECT, &ref, sizeof(ref), NULL, 0, NULL, NULL);
			free(r);
			return;
		}
	}
	*segment = r;
	*error = SCI_ERR_OK;
}

void SCIDisconnectSegment(sci_remote_segment_t segment, unsigned int flags, sci_error_t *error)
{
	struct smio_seg_conn_ref req;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(segment, SISCI_OBJ_RSEG)) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (segment->maps) {
		sisci_unlock();
		*error = SCI_ERR_BUSY;
		return;
	}
	sisci_obj_del(&segment->obj);
	sisci_unlock();

	req = (struct smio_seg_conn_ref){ .conn = segment->conn };
	if (segment->mcast)
		rc = sisci_mc_disconnect(segment);
	else
		rc = sisci_call(segment->sd, SMIO_SEG_DISCONNECT, &req, sizeof(req), NULL, 0,
				NULL, NULL);
	/*
	 * -ENOENT cannot happen for a handle of ours; anything else (the daemon
	 * unreachable) leaves the handle as it was, so the program may retry.
	 */
	if (rc && rc != -ENOENT) {
		sisci_lock();
		sisci_obj_add(&segment->obj, SISCI_OBJ_RSEG);
		sisci_unlock();
		*error = sisci_seg_errno(rc);
		return;
	}
	if (segment->dev) {
		sisci_lock();
		segment->dev->segs--;
		sisci_unlock();
	}
	sisci_rseg_unwatch(segment);
	pthread_mutex_destroy(&segment->watch_mu);
	sisci_desc_put(segment->sd);
	free(segment);
	*error = SCI_ERR_OK;
}

size_t SCIGetRemoteSegmentSize(sci_remote_segment_t segment)
{
	size_t size = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_RSEG))
		size = segment->size;
	sisci_unlock();
	return size;
}

unsigned int SCIGetRemoteSegmentId(sci_remote_segment_t segment)
{
	unsigned int id = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_RSEG))
		id = segment->segid;
	sisci_unlock();
	return id;
}

unsigned int SCIGetRemoteSegmentNodeId(sci_remote_segment_t segment)
{
	unsigned int node = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_RSEG))
		node = segment->node_id;
	sisci_unlock();
	return node;
}

/* ---------- queries ---------- */

void sisci_query_local_segment(sci_query_local_segment_t *q, sci_error_t *error)
{
	sisci_lock();
	if (!sisci_obj_valid(q->segment, SISCI_OBJ_LSEG)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		goto out;
	}
	switch (q->subcommand) {
	case SCI_Q_LOCAL_SEGMENT_PHYS_ADDR:
	case SCI_Q_LOCAL_SEGMENT_IOADDR:
		/*
		 * Importers' LUT windows translate to the bus address itself (the
		 * owner's NTB does not translate), so both are the RAM address.
		 */
		if (q->segment->flags & SCI_FLAG_EMPTY) {
			*error = SCI_ERR_ILLEGAL_OPERATION;   /* no memory behind it */
			goto out;
		}
		q->data.ioaddr = q->segment->phys;
		*error = SCI_ERR_OK;
		break;
	case SCI_Q_LOCAL_SEGMENT_VIRTUAL_KERNEL_ADDR:
		*error = SCI_ERR_NOT_SUPPORTED;           /* no kernel here */
		break;
	default:
		*error = SCI_ERR_ILLEGAL_QUERY;
	}
out:
	sisci_unlock();
}

/*
 * SCI_Q_REMOTE_SEGMENT_IOADDR_FOR_FUNC (smartio): the daemon knows where a
 * function of this host reaches the segment; for a device borrowed with
 * Device Lending that is not this host's window (SEG_CONN_P2P).
 */
static void ioaddr_for_func(sci_query_remote_segment_t *q, sci_error_t *error)
{
	struct smio_seg_conn_p2p req = { 0 }, rep;
	struct sci_desc *sd;
	uint32_t rlen;
	int rc;

	if (!sisci_obj_valid(q->segment, SISCI_OBJ_RSEG) || q->segment->mcast ||
	    q->data.ioaddr > 0xffff) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	req.conn = q->segment->conn;
	req.bdf = (uint16_t)q->data.ioaddr;
	sd = q->segment->sd;
	sisci_unlock();
	rc = sisci_call(sd, SMIO_SEG_CONN_P2P, &req, sizeof(req), &rep, sizeof(rep), &rlen, NULL);
	if (!rc && (rlen != sizeof(rep) || rep.conn != req.conn))
		rc = -EPROTO;
	if (!rc)
		q->data.ioaddr = rep.bus;
	/* A daemon without the message (-EPROTO: a type it does not know) or
	 * without an answer for this function, as the caller can tell apart. */
	*error = rc == -EOPNOTSUPP || rc == -EPROTO ? SCI_ERR_NOT_SUPPORTED : sisci_errno(rc);
}

void sisci_query_remote_segment(sci_query_remote_segment_t *q, sci_error_t *error)
{
	sisci_lock();
	if (q->subcommand == SCI_Q_REMOTE_SEGMENT_IOADDR_FOR_FUNC) {
		ioaddr_for_func(q, error);          /* unlocks */
		return;
	}
	if (!sisci_obj_valid(q->segment, SISCI_OBJ_RSEG)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	} else if (q->subcommand == SCI_Q_REMOTE_SEGMENT_IOADDR) {
		/* Where this host's CPU and devices reach it: the NTB window. */
		q->data.ioaddr = q->segment->ioaddr;
		*error = SCI_ERR_OK;
	} else {
		*error = SCI_ERR_ILLEGAL_QUERY;
	}
	sisci_unlock();
}
