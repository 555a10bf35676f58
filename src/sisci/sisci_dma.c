// SPDX-License-Identifier: MIT
/*
 * libsisci: DMA queues, executed by the local NTB adapter's DMA engine.
 *
 * The daemon keeps the queue (host/ntbdma.c, daemon/h_dma.c) and hands its
 * creator the queue's completion eventfd. A queue carries one submission at
 * a time (SCIStartDmaTransfer: one transfer; SCIStartDmaTransferVec: up to
 * maxEntries); the engine moves the bytes as the NTB's requester, through
 * the look-up table and the far host's IOMMU, and adds 1 to the eventfd
 * when it is done. Waiting is a poll() on the eventfd, with no daemon in the
 * wait path; the outcome (DONE or ERROR) is then fetched once (DMA_STATE)
 * and kept until the next submission ("collected").
 *
 * With SCI_FLAG_USE_CALLBACK a detached thread per submission collects the
 * completion and calls back. Removal cancels waiters and waits for callback
 * threads to leave; removing the queue from its own callback is allowed (the
 * thread frees it when the callback returns).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sisci_seg.h"
#include "util/smio_time.h"

#define SLICE_MS 1000               /* a long wait checks the daemon this often */

struct sci_dma_queue {
	struct sci_desc *sd;
	uint32_t id, adapter, max_entries;
	int efd;                    /* the daemon's completion eventfd */
	int cancel_fd;              /* ours: readable once removal has begun */
	pthread_mutex_t lock;
	pthread_cond_t idle;        /* waiters or callback threads left */
	bool posted;                /* a submission not collected yet */
	bool cb_mode;               /* ... whose completion a callback thread collects */
	sci_dma_queue_state_t state;    /* the last collected outcome */
	sci_error_t status;
	unsigned waiters;
	unsigned cb_threads;
	bool removing;
	bool free_on_exit;          /* removed from its own callback */
	sci_cb_dma_t cb;
	void *cb_arg;
};

/* The queue whose callback this thread runs (removal from the callback). */
static __thread struct sci_dma_queue *cb_queue;

static sci_error_t dma_errno(int rc)
{
	switch (rc) {
	case -ENODEV: return SCI_ERR_NO_SUCH_ADAPTERNO;
	case -EOPNOTSUPP: return SCI_ERR_DMA_NOT_AVAILABLE;
	case -E2BIG: return SCI_ERR_MAX_ENTRIES;
	case -EXDEV: return SCI_ERR_ILLEGAL_PARAMETER;  /* connected through another adapter */
	case -ENXIO: return SCI_ERR_ILLEGAL_OPERATION;  /* an empty segment */
	case -ENOSPC: return SCI_ERR_NOSPC;
	case -ENOENT: return SCI_ERR_NOT_CONNECTED;     /* the connection is gone */
	case -EHOSTDOWN: return SCI_ERR_NODE_NOT_RESPONDING;
	default: return sisci_errno(rc);
	}
}

static void qfree(struct sci_dma_queue *q)
{
	close(q->efd);
	close(q->cancel_fd);
	pthread_cond_destroy(&q->idle);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* The daemon's view of the queue. */
static int query(struct sci_dma_queue *q, struct smio_dma_state *st)
{
	struct smio_dma_queue_ref m = { .queue = q->id };
	uint32_t rlen;
	int rc;

	rc = sisci_call(q->sd, SMIO_DMA_STATE, &m, sizeof(m), st, sizeof(*st), &rlen, NULL);
	if (!rc && (rlen != sizeof(*st) || st->queue != q->id))
		rc = -EPROTO;
	return rc;
}

static sci_error_t outcome(uint32_t state)
{
	switch (state) {
	case SMIO_DMA_DONE: return SCI_ERR_OK;
	case SMIO_DMA_ABORTED: return SCI_ERR_CANCELLED;
	default: return SCI_ERR_TRANSFER_FAILED;
	}
}

/*
 * Wait (until deadline; -1: none) for the current submission to end and
 * collect its outcome into q->state/q->status. SCI_ERR_OK once collected
 * (by us or anyone), SCI_ERR_TIMEOUT, SCI_ERR_CANCELLED (removal began), or
 * an error talking to the daemon.
 */
static sci_error_t collect(struct sci_dma_queue *q, int64_t deadline)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = q->efd, .events = POLLIN },
				       { .fd = q->cancel_fd, .events = POLLIN } };
		int left = deadline < 0 ? SLICE_MS : smio_ms_left(deadline);
		int rc;

		pthread_mutex_lock(&q->lock);
		if (!q->posted) {
			pthread_mutex_unlock(&q->lock);
			return SCI_ERR_OK;
		}
		pthread_mutex_unlock(&q->lock);
		rc = poll(p, 2, left < SLICE_MS ? left : SLICE_MS);
		if (rc < 0 && errno != EINTR)
			return SCI_ERR_SYSTEM;
		if (rc > 0 && (p[0].revents & POLLIN)) {
			struct smio_dma_state st;
			uint64_t v;
			sci_error_t e = SCI_ERR_OK;

			pthread_mutex_lock(&q->lock);
			/* One reader takes the count; the others find it collected. */
			if (q->posted && read(q->efd, &v, sizeof(v)) == sizeof(v)) {
				int qrc = query(q, &st);

				if (qrc) {
					e = dma_errno(qrc);
				} else {
					q->state = (sci_dma_queue_state_t)st.state;
					q->status = outcome(st.state);
					q->posted = false;
				}
			}
			pthread_mutex_unlock(&q->lock);
			if (e)
				return e;
			continue;
		}
		if (rc > 0 && p[1].revents)
			return SCI_ERR_CANCELLED;
		if (smio_expired(deadline))
			return SCI_ERR_TIMEOUT;
		if (rc == 0) {
			struct smio_dma_state st;
			int qrc = query(q, &st);

			/* A daemon that went away never signals. */
			if (qrc)
				return dma_errno(qrc);
		}
	}
}

static void *cb_thread(void *arg)
{
	struct sci_dma_queue *q = arg;
	sci_error_t e = collect(q, -1);
	bool self_free;

	if (e != SCI_ERR_CANCELLED) {
		pthread_mutex_lock(&q->lock);
		if (!e)
			e = q->status;
		pthread_mutex_unlock(&q->lock);
		cb_queue = q;
		q->cb(q->cb_arg, q, e);
		cb_queue = NULL;
	}
	pthread_mutex_lock(&q->lock);
	q->cb_threads--;
	self_free = q->free_on_exit && !q->cb_threads;
	pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->lock);
	if (self_free)
		qfree(q);
	return NULL;
}

void SCICreateDMAQueue(sci_desc_t sd, sci_dma_queue_t *dq, unsigned int localAdapterNo,
		       unsigned int maxEntries, unsigned int flags, sci_error_t *error)
{
	struct smio_dma_queue_create m = { .adapter = localAdapterNo, .max_entries = maxEntries };
	struct smio_dma_queue info;
	struct sci_dma_queue *q;
	uint32_t rlen = 0;
	int rc, efd = -1;

	*error = sisci_check_init();
	if (*error)
		return;
	if (!sd || !dq || !maxEntries) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (localAdapterNo >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return;
	}
	if (maxEntries > DIS_DMA_MAX_VECLEN) {
		*error = SCI_ERR_MAX_ENTRIES;
		return;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	q->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->cancel_fd < 0) {
		free(q);
		*error = SCI_ERR_NOSPC;
		return;
	}
	rc = sisci_call(sd, SMIO_DMA_QUEUE_CREATE, &m, sizeof(m), &info, sizeof(info), &rlen,
			&efd);
	if (!rc && (efd < 0 || rlen != sizeof(info) || info.adapter != localAdapterNo)) {
		struct smio_dma_queue_ref rm = { .queue = info.queue };

		if (rlen == sizeof(info))
			sisci_call(sd, SMIO_DMA_QUEUE_REMOVE, &rm, sizeof(rm), NULL, 0, NULL, NULL);
		rc = -EPROTO;
	}
	if (rc) {
		if (efd >= 0)
			close(efd);
		close(q->cancel_fd);
		free(q);
		*error = dma_errno(rc);
		return;
	}
	q->sd = sd;
	q->id = info.queue;
	q->adapter = localAdapterNo;
	q->max_entries = maxEntries;
	q->efd = efd;
	q->state = SCI_DMAQUEUE_IDLE;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->idle, NULL);
	sisci_desc_get(sd);
	*dq = q;
}

#define START_FLAGS (SCI_FLAG_USE_CALLBACK | SCI_FLAG_DMA_WAIT | SCI_FLAG_DMA_READ | \
		     SCI_FLAG_DMA_GLOBAL | SCI_FLAG_DMA_SYSDMA | SCI_FLAG_DMA_ADAPTER | \
		     SCI_FLAG_DMA_CHANNEL_SHARED)
#define UNSUPPORTED_FLAGS (SCI_FLAG_DMA_PHDMA | SCI_FLAG_DMA_USER_MEM)

static bool in_range(size_t off, size_t size, uint64_t limit)
{
	return off <= limit && size <= limit - off;
}

/*
 * To a multicast group: the daemon's engine moves the bytes before the call
 * returns (MC_DMA), so the queue is DONE (or ERROR) at once, and a callback
 * runs on the caller's thread (docs/sisci.md, "Multicast").
 */
static sci_error_t mc_start(struct sci_dma_queue *q, uint32_t segid, uint32_t conn,
			    const dis_dma_vec_t *v, size_t n, sci_cb_dma_t cb, void *cb_arg,
			    unsigned int flags)
{
	sci_error_t e = SCI_ERR_OK, st;

	pthread_mutex_lock(&q->lock);
	if (q->removing)
		e = SCI_ERR_CANCELLED;
	else if (q->posted || q->cb_threads)
		e = SCI_ERR_BUSY;
	if (e) {
		pthread_mutex_unlock(&q->lock);
		return e;
	}
	st = sisci_mc_dma(q->sd, conn, segid, v, n);
	q->state = st ? SCI_DMAQUEUE_ERROR : SCI_DMAQUEUE_DONE;
	q->status = st ? SCI_ERR_TRANSFER_FAILED : SCI_ERR_OK;
	pthread_mutex_unlock(&q->lock);
	if (flags & SCI_FLAG_USE_CALLBACK)
		cb(cb_arg, q, q->status);
	/* Without SCI_FLAG_DMA_WAIT the outcome is the queue's, as for any transfer. */
	return (flags & SCI_FLAG_DMA_WAIT) ? q->status : SCI_ERR_OK;
}

static sci_error_t start(struct sci_dma_queue *q, struct sci_local_segment *ls,
			 struct sci_remote_segment *rs, size_t n, const dis_dma_vec_t *v,
			 sci_cb_dma_t cb, void *cb_arg, unsigned int flags)
{
	struct smio_dma_start *m;
	struct smio_dma_state st;
	uint32_t segid, conn, rlen;
	uint64_t lsize, rsize;
	bool mcast;
	pthread_t th;
	pthread_attr_t attr;
	sci_error_t e = SCI_ERR_OK;
	int rc;

	if (!q || (n && !v))
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (flags & UNSUPPORTED_FLAGS)
		return SCI_ERR_FLAG_NOT_IMPLEMENTED;
	if (flags & ~(START_FLAGS | SCI_FLAG_BROADCAST))
		return SCI_ERR_ILLEGAL_FLAG;
	if ((flags & SCI_FLAG_USE_CALLBACK) && (!cb || (flags & SCI_FLAG_DMA_WAIT)))
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (!n || n > DIS_DMA_MAX_VECLEN)
		return SCI_ERR_ILLEGAL_PARAMETER;
	if (n > q->max_entries)
		return SCI_ERR_MAX_ENTRIES;

	sisci_lock();
	if (!sisci_obj_valid(ls, SISCI_OBJ_LSEG) || !sisci_obj_valid(rs, SISCI_OBJ_RSEG) ||
	    ls->sd != q->sd || rs->sd != q->sd) {
		sisci_unlock();
		return SCI_ERR_ILLEGAL_PARAMETER;
	}
	segid = ls->id;
	lsize = ls->size;
	if (!ls->phys)
		e = SCI_ERR_ILLEGAL_OPERATION;          /* empty: nothing to move */
	else if (q->adapter >= 64 || !(ls->prepared & (1ull << q->adapter)))
		e = SCI_ERR_SEGMENT_NOT_PREPARED;
	else if (rs->adapter != q->adapter)
		e = SCI_ERR_ILLEGAL_PARAMETER;
	conn = rs->conn;
	rsize = rs->size;
	mcast = rs->mcast;
	/* SCI_FLAG_BROADCAST names what the segment is; a group is only written. */
	if (!e && ((flags & SCI_FLAG_BROADCAST) && !mcast))
		e = SCI_ERR_ILLEGAL_PARAMETER;
	if (!e && mcast && (flags & SCI_FLAG_DMA_READ))
		e = SCI_ERR_ILLEGAL_OPERATION;
	sisci_unlock();
	if (e)
		return e;
	for (size_t i = 0; i < n; i++) {
		if (v[i].flags)
			return SCI_ERR_ILLEGAL_FLAG;
		if (!v[i].size)
			return SCI_ERR_ILLEGAL_PARAMETER;
		if (!in_range(v[i].local_offset, v[i].size, lsize) ||
		    !in_range(v[i].remote_offset, v[i].size, rsize))
			return SCI_ERR_OUT_OF_RANGE;
	}

	if (mcast)
		return mc_start(q, segid, conn, v, n, cb, cb_arg, flags);
	m = malloc(sizeof(*m) + n * sizeof(m->e[0]));
	if (!m)
		return SCI_ERR_NOSPC;
	*m = (struct smio_dma_start){ .queue = q->id, .segid = segid, .conn = conn,
		.flags = (flags & SCI_FLAG_DMA_READ) ? SMIO_DMA_F_READ : 0, .n = (uint32_t)n };
	for (size_t i = 0; i < n; i++)
		m->e[i] = (struct smio_dma_entry){ .local_offset = v[i].local_offset,
			.remote_offset = v[i].remote_offset, .size = v[i].size };

	pthread_mutex_lock(&q->lock);
	if (q->removing)
		e = SCI_ERR_CANCELLED;
	else if (q->posted)
		e = SCI_ERR_BUSY;
	else if (q->cb_threads && cb_queue != q)
		e = SCI_ERR_BUSY;       /* the last callback still runs */
	if (e) {
		pthread_mutex_unlock(&q->lock);
		free(m);
		return e;
	}
	/* Ours until the daemon answers: concurrent starts see it busy. */
	q->posted = true;
	q->cb_mode = flags & SCI_FLAG_USE_CALLBACK;
	rc = sisci_call(q->sd, SMIO_DMA_START, m, (uint32_t)(sizeof(*m) + n * sizeof(m->e[0])),
			&st, sizeof(st), &rlen, NULL);
	free(m);
	if (!rc && rlen != sizeof(st))
		rc = -EPROTO;
	if (rc) {
		q->posted = false;
		q->cb_mode = false;
		pthread_mutex_unlock(&q->lock);
		return dma_errno(rc);
	}
	q->state = SCI_DMAQUEUE_POSTED;
	q->status = SCI_ERR_OK;
	if (q->cb_mode) {
		q->cb = cb;
		q->cb_arg = cb_arg;
		q->cb_threads++;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &attr, cb_thread, q)) {
			/* Submitted, but nobody will call back: let the program wait. */
			q->cb_threads--;
			q->cb_mode = false;
			e = SCI_ERR_NOSPC;
		}
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&q->lock);
	if (e)
		return e;
	if (flags & SCI_FLAG_DMA_WAIT) {
		e = collect(q, -1);
		if (!e) {
			pthread_mutex_lock(&q->lock);
			e = q->status;
			pthread_mutex_unlock(&q->lock);
		}
	}
	return e;
}

void SCIStartDmaTransfer(sci_dma_queue_t dq, sci_local_segment_t localSegment,
			 sci_remote_segment_t remoteSegment, size_t localOffset, size_t size,
			 size_t remoteOffset, sci_cb_dma_t callback, void *callbackArg,
			 unsigned int flags, sci_error_t *error)
{
	dis_dma_vec_t v = { .size = size, .local_offset = localOffset,
			    .remote_offset = remoteOffset };

	*error = start(dq, localSegment, remoteSegment, 1, &v, callback, callbackArg, flags);
}

void SCIStartDmaTransferVec(sci_dma_queue_t dq, sci_local_segment_t localSegment,
			    sci_remote_segment_t remoteSegment, size_t vecLength,
			    dis_dma_vec_t *disDmaVec, sci_cb_dma_t callback, void *callbackArg,
			    unsigned int flags, sci_error_t *error)
{
	*error = start(dq, localSegment, remoteSegment, vecLength, disDmaVec, callback,
		       callbackArg, flags);
}

sci_dma_queue_state_t SCIWaitForDMAQueue(sci_dma_queue_t dq, unsigned int timeout,
					 unsigned int flags, sci_error_t *error)
{
	sci_dma_queue_state_t s;
	sci_error_t e;

	if (!dq) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return SCI_DMAQUEUE_ERROR;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return SCI_DMAQUEUE_ERROR;
	}
	pthread_mutex_lock(&dq->lock);
	if (dq->removing) {
		e = SCI_ERR_CANCELLED;
	} else if (dq->posted && dq->cb_mode) {
		e = SCI_ERR_ILLEGAL_OPERATION;  /* the callback gets this completion */
	} else {
		e = SCI_ERR_OK;
		dq->waiters++;
	}
	pthread_mutex_unlock(&dq->lock);
	if (e) {
		*error = e;
		return e == SCI_ERR_CANCELLED ? SCI_DMAQUEUE_ABORTED : SCI_DMAQUEUE_POSTED;
	}
	e = collect(dq, smio_deadline(timeout == SCI_INFINITE_TIMEOUT ? -1 : (int64_t)timeout));
	pthread_mutex_lock(&dq->lock);
	s = e ? (dq->posted ? SCI_DMAQUEUE_POSTED : dq->state) : dq->state;
	if (!e)
		e = dq->status;
	if (--dq->waiters == 0 && dq->removing)
		pthread_cond_broadcast(&dq->idle);
	pthread_mutex_unlock(&dq->lock);
	*error = e;
	return s;
}

sci_dma_queue_state_t SCIDMAQueueState(sci_dma_queue_t dq)
{
	struct smio_dma_state st;

	if (!dq)
		return SCI_DMAQUEUE_ERROR;
	/* The daemon knows before the completion is collected. */
	if (query(dq, &st))
		return SCI_DMAQUEUE_ERROR;
	return (sci_dma_queue_state_t)st.state;
}

/*
 * The daemon stops the engine at its next chunk and signals the eventfd; we
 * collect that completion here (unless a callback thread does), so the call
 * returns with the queue ABORTED and waiters woken with that state.
 */
void SCIAbortDMAQueue(sci_dma_queue_t dq, unsigned int flags, sci_error_t *error)
{
	struct smio_dma_queue_ref m;
	struct smio_dma_state st;
	uint32_t rlen = 0;
	sci_error_t dummy, e = SCI_ERR_OK;
	bool wait;
	int rc;

	if (!error)
		error = &dummy;
	if (!dq) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	pthread_mutex_lock(&dq->lock);
	if (dq->removing) {
		pthread_mutex_unlock(&dq->lock);
		*error = SCI_ERR_ILLEGAL_OPERATION;
		return;
	}
	/* Counted as a waiter: removal waits for us. */
	dq->waiters++;
	wait = dq->posted && !dq->cb_mode;
	pthread_mutex_unlock(&dq->lock);
	m = (struct smio_dma_queue_ref){ .queue = dq->id };
	rc = sisci_call(dq->sd, SMIO_DMA_ABORT, &m, sizeof(m), &st, sizeof(st), &rlen, NULL);
	if (!rc && (rlen != sizeof(st) || st.queue != dq->id))
		rc = -EPROTO;
	if (rc)
		e = dma_errno(rc);
	else if (wait)
		e = collect(dq, smio_deadline(10000));
	pthread_mutex_lock(&dq->lock);
	if (--dq->waiters == 0 && dq->removing)
		pthread_cond_broadcast(&dq->idle);
	pthread_mutex_unlock(&dq->lock);
	*error = e;
}

void SCIRemoveDMAQueue(sci_dma_queue_t dq, unsigned int flags, sci_error_t *error)
{
	struct smio_dma_queue_ref m;
	struct sci_desc *sd;
	uint64_t one = 1;
	bool self;
	int rc;

	if (!dq) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	m = (struct smio_dma_queue_ref){ .queue = dq->id };
	sd = dq->sd;
	rc = sisci_call(sd, SMIO_DMA_QUEUE_REMOVE, &m, sizeof(m), NULL, 0, NULL, NULL);
	/* Busy (a transfer runs) or no answer: the queue stays, and so does the handle. */
	if (rc == -EBUSY || rc == -ETIMEDOUT) {
		*error = dma_errno(rc);
		return;
	}
	/* Anything else: the daemon has no such queue now (a lost connection took it). */
	self = cb_queue == dq;
	pthread_mutex_lock(&dq->lock);
	dq->removing = true;
	if (write(dq->cancel_fd, &one, sizeof(one)) != sizeof(one)) {
		/* Cannot happen for a counter at 0; waiters then time out. */
	}
	while (dq->waiters || dq->cb_threads > (self ? 1u : 0u))
		pthread_cond_wait(&dq->idle, &dq->lock);
	if (self)
		dq->free_on_exit = true;
	pthread_mutex_unlock(&dq->lock);
	sisci_desc_put(sd);
	*error = SCI_ERR_OK;
	if (!self)
		qfree(dq);
}
