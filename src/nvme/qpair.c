// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme data path: I/O queue pairs on the client's device
 * segments, and submission/completion without the manager or any daemon
 * (stores into the SQ and the doorbells, loads from the CQ). DMA buffers are
 * in buffer.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snv_priv.h"

/* A rate-limited pair's bucket: SNV_RATE_BURST_MS worth of commands, at least one. */
static double rate_burst(const struct snv_qpair *q)
{
	double b = (double)q->iops_limit * SNV_RATE_BURST_MS / 1000.0;

	return b < 1.0 ? 1.0 : b;
}

/* ---- Queue memory: device segments of the client, reused after delete ---- */

static unsigned place_hints(bool sq, enum snv_place p)
{
	/* Near the device, of the accelerator: its lender puts it in its memory BAR. */
	if (p == SNV_PLACE_ACCEL)
		return SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ;
	if (p == SNV_PLACE_DEVICE)
		return sq ? SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ :
			SCI_MEMACCESS_MULTIHOST_READ | SCI_MEMACCESS_DEVICE_WRITE;
	/* The client's RAM: no hints (a tie) for an SQ, the natural ones for a CQ. */
	return sq ? 0 : SCI_MEMACCESS_HOST_READ | SCI_MEMACCESS_DEVICE_WRITE;
}

int snv_get_seg(struct snv_client *c, bool sq, enum snv_place p, size_t size,
		   unsigned adapter, struct snv_devseg **out)
{
	/* An SQ in an accelerator is a device segment of the accelerator. */
	sci_smartio_device_t of = p == SNV_PLACE_ACCEL ? c->accel : c->dev;
	struct snv_devseg *s;
	sci_error_t se;

	for (unsigned i = 0; i < c->nsegs; i++) {
		s = &c->segs[i];
		if (!s->in_use && s->place == p && s->size >= size && s->vaddr &&
		    s->adapter == adapter) {
			s->in_use = true;
			*out = s;
			return 0;
		}
	}
	if (c->nsegs >= SNV_SEGIDS)
		return -ENOSPC;
	s = &c->segs[c->nsegs];
	memset(s, 0, sizeof(*s));
	s->id = c->segid_base + c->nsegs;
	s->size = size;
	s->place = p;
	s->adapter = adapter;
	SCICreateDeviceSegment(of, s->id, size, SCI_MEMTYPE_SHARED, place_hints(sq, p), 0, &se);
	if (se)
		return snv_errno(se);
	c->nsegs++;                                   /* the ID is used from now on */
	SCIConnectDeviceSegmentPath(of, &s->rs, s->id, SCI_MEMTYPE_SHARED, adapter, NULL, NULL,
				    0, &se);
	if (se) {
		s->rs = NULL;
		return snv_errno(se);
	}
	s->vaddr = SCIMapRemoteSegment(s->rs, &s->map, 0, size, NULL, 0, &se);
	if (se) {
		s->vaddr = NULL;
		s->map = NULL;
		return snv_errno(se);
	}
	s->in_use = true;
	*out = s;
	return 0;
}

/* Map the CMB's BAR (once per client); called with c->lock. */
static int cmb_map(struct snv_client *c)
{
	sci_error_t se;

	if (c->cmb)
		return 0;
	if (!c->cmb_rs) {
		SCIConnectDeviceSegment(c->dev, &c->cmb_rs, c->cmb_bar, SCI_MEMTYPE_BAR, NULL, NULL,
					0, &se);
		if (se) {
			c->cmb_rs = NULL;
			return snv_errno(se);
		}
	}
	c->cmb = (volatile uint8_t *)SCIMapRemoteSegment(c->cmb_rs, &c->cmb_map, c->cmb_off,
							 c->cmb_size, NULL,
							 SCI_FLAG_IO_MAP_IOSPACE, &se);
	if (se) {
		c->cmb = NULL;
		c->cmb_map = NULL;
		return snv_errno(se);
	}
	return 0;
}

/*
 * Where the controller reaches an SQ in an accelerator: the same mapping the
 * manager makes (the lender resolves it peer-to-peer, e.g. the BAR's own bus
 * address below a shared switch), kept for snv_qpair_sq_ioaddr and tools that
 * check the route. Called with c->lock.
 */
static int sq_dev_io(struct snv_client *c, struct snv_devseg *s)
{
	sci_ioaddr_t io;
	sci_error_t se;

	if (s->dev_mapped)
		return 0;
	SCIMapRemoteSegmentForDevice(s->rs, c->dev, &io, 0, s->size, 0, &se);
	if (se)
		return snv_errno(se);
	s->dev_mapped = true;
	s->dev_io = io;
	return 0;
}

/* The accelerator fdid, borrowed shared for SQs (one per client); c->lock held. */
static int accel_open(struct snv_client *c, uint32_t fdid)
{
	sci_error_t se;

	if (c->accel_fdid)
		return c->accel_fdid == fdid ? 0 : -EBUSY;
	SCIBorrowDevice(c->sd, &c->accel, fdid, 0, &se);
	if (se)
		return snv_errno(se);
	c->accel_fdid = fdid;
	return 0;
}

static void hwq_release(struct snv_hwq *w)
{
	if (w->sqs)
		w->sqs->in_use = false;
	if (w->cqs)
		w->cqs->in_use = false;
	w->sqs = w->cqs = NULL;
}

static void qpair_free_local(struct snv_qpair *q)
{
	struct snv_client *c = q->c;

	pthread_mutex_lock(&c->lock);
	snv_list_del((void **)c->qps, &c->nqps, q);
	pthread_mutex_unlock(&c->lock);
	free(q->free_cids);
	free(q->cookies);
	free(q->busy);
	free(q->cmds);
	free(q);
}

/*
 * Queue memory for hw queue h of q (h 1: through the backup adapter) and the
 * controller's queues on it, through the manager; called with c->lock. The
 * memory of an earlier pair of h is reused (zeroed): its maps stay valid.
 */
int snv_hwq_create(struct snv_qpair *q, unsigned h, enum snv_place sp, enum snv_place cp)
{
	struct snv_client *c = q->c;
	struct snv_hwq *w = &q->hw[h];
	unsigned adapter = h ? c->bk_adapter : c->adapter;
	volatile uint8_t *bar = h ? c->bk_bar : c->bar;
	struct snv_create_qp r = { .depth = q->depth };
	struct snv_qp_reply qr;
	int rc = 0;

	if (!w->cqs) {
		rc = sp == SNV_PLACE_CMB ? cmb_map(c) :
		     snv_get_seg(c, true, sp, ((size_t)q->depth * 64 + SNV_PAGE - 1) &
			     ~(size_t)(SNV_PAGE - 1), adapter, &w->sqs);
		if (!rc && sp == SNV_PLACE_ACCEL)
			rc = sq_dev_io(c, w->sqs);
		if (!rc)
			rc = snv_get_seg(c, false, cp, ((size_t)q->depth * 16 + SNV_PAGE - 1) &
				     ~(size_t)(SNV_PAGE - 1), adapter, &w->cqs);
		if (rc) {
			hwq_release(w);
			return rc;
		}
	}
	w->cq = (struct nvme_cqe *)w->cqs->vaddr;
	if (w->sqs)
		memset((void *)w->sqs->vaddr, 0, w->sqs->size);
	memset(w->cq, 0, w->cqs->size);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r.sq_segid = w->sqs ? w->sqs->id : 0;
	r.cq_segid = w->cqs->id;
	/* every hw queue of the pair (backup, resumed primary) asks for the same class */
	if (q->want == SNV_PRIO_DEFAULT)
		r.flags |= SNV_QP_PRIO_POLICY;
	else
		r.prio = (uint32_t)q->want - SNV_PRIO_URGENT;   /* enum nvme_qprio */
	r.flags |= w->sqs ? 0 : SNV_QP_SQ_CMB;
	if (w->sqs && w->sqs->place == SNV_PLACE_ACCEL) {
		r.flags |= SNV_QP_SQ_ACCEL;
		r.sq_fdid = c->accel_fdid;
	}
	w->sq_io = w->sqs && w->sqs->dev_mapped ? w->sqs->dev_io : 0;
	rc = snv_rpc(c, SNV_MSG_CREATE_QP, &r, sizeof(r), &qr, sizeof(qr), NULL, 0, NULL);
	if (rc > 0)
		rc = -EIO;                    /* the controller refused the queue */
	/* Every reply field checked: a CMB region lies within the CMB, on a page. */
	if (!rc && (qr.qid < 1 || qr.qid > c->nqueues ||
		    (qr.prio > NVME_QPRIO_LOW && qr.prio != SNV_QP_PRIO_NONE) ||
		    (q->want != SNV_PRIO_DEFAULT && qr.prio != r.prio) || qr.rsvd ||
		    qr.iops_limit > 10000000 ||
		    (w->sqs ? qr.sq_cmb_off != 0 :
		     (qr.sq_cmb_off % SNV_PAGE || qr.sq_cmb_off > c->cmb_size ||
		      (uint64_t)q->depth * 64 > c->cmb_size - qr.sq_cmb_off))))
		rc = -EPROTO;
	if (rc)
		return rc;
	w->sq_cmb_off = qr.sq_cmb_off;
	w->sq = w->sqs ? (struct nvme_sqe *)w->sqs->vaddr :
		(struct nvme_sqe *)(c->cmb + qr.sq_cmb_off);
	if (!w->sqs)                      /* posted stores to device memory */
		memset(w->sq, 0, (size_t)q->depth * 64);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	w->qid = (uint16_t)qr.qid;
	q->got = qr.prio == SNV_QP_PRIO_NONE ? SNV_PRIO_NONE :
		 (enum snv_prio)(qr.prio + SNV_PRIO_URGENT);
	if (qr.iops_limit != q->iops_limit) {   /* a new limit starts with a full bucket */
		q->iops_limit = qr.iops_limit;
		q->tokens = rate_burst(q);
		q->tokens_ns = snv_now_ns();
	}
	w->sq_db = (volatile uint32_t *)(bar + nvme_sq_tail_db(w->qid, c->dstrd));
	w->cq_db = (volatile uint32_t *)(bar + nvme_cq_head_db(w->qid, c->dstrd));
	w->sq_tail = w->cq_head = 0;
	w->cq_phase = 1;
	w->inflight = 0;
	return 0;
}

int snv_hwq_delete(struct snv_client *c, struct snv_hwq *w)
{
	struct snv_delete_qp r = { .qid = w->qid };
	int rc;

	if (!w->qid)
		return 0;
	rc = snv_rpc(c, SNV_MSG_DELETE_QP, &r, sizeof(r), NULL, 0, NULL, 0, NULL);
	/* The memory is reused only once the controller no longer owns it. */
	if (!rc)
		hwq_release(w);
	w->qid = 0;
	return rc;
}

int snv_qpair_create(struct snv_client *c, const struct snv_qpair_opts *o, struct snv_qpair **out)
{
	struct snv_qpair_opts d = { 0 };
	struct snv_qpair *q;
	enum snv_place sp, cp;
	unsigned depth;
	int rc;

	*out = NULL;
	if (!o)
		o = &d;
	sp = o->sq_place == SNV_PLACE_DEFAULT ? SNV_PLACE_DEVICE : o->sq_place;
	cp = o->cq_place == SNV_PLACE_DEFAULT ? SNV_PLACE_HOST : o->cq_place;
	if (sp > SNV_PLACE_ACCEL || cp > SNV_PLACE_ACCEL || (sp == SNV_PLACE_ACCEL) != !!o->sq_accel)
		return -EINVAL;
	/* CQs in the CMB: not implemented (the model's CMBSZ.CQS is 0); SQs need one.
	 * CQs in an accelerator: the CPU polls them, they belong near it. */
	if (cp == SNV_PLACE_CMB || cp == SNV_PLACE_ACCEL ||
	    (sp == SNV_PLACE_CMB && !(c->cmb_flags & SNV_CMB_SQ)))
		return -ENOTSUP;
	depth = o->depth ? o->depth : 64;
	if (depth < 2 || depth > c->max_depth || depth > (1u << SNV_CID_SLOT_BITS) ||
	    o->prio > SNV_PRIO_LOW)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->c = c;
	q->depth = depth;
	q->want = o->prio;
	q->mp = c->mp;
	q->sp = sp;
	q->cp = cp;
	q->free_cids = calloc(depth, sizeof(*q->free_cids));
	q->cookies = calloc(depth, sizeof(*q->cookies));
	q->busy = calloc(depth, 1);
	q->cmds = calloc(depth, sizeof(*q->cmds));
	if (!q->free_cids || !q->cookies || !q->busy || !q->cmds) {
		rc = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < depth; i++)
		q->free_cids[i] = (uint16_t)(depth - 1 - i);
	q->nfree = depth - 1;                /* at most depth - 1 in flight: the SQ never fills */
	q->seen_events = __atomic_load_n(&c->pevents, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&c->lock);
	rc = sp == SNV_PLACE_ACCEL ? accel_open(c, o->sq_accel) : 0;
	if (!rc)
		rc = snv_hwq_create(q, 0, sp, cp);
	/*
	 * The backup: everything it needs reached through the backup adapter
	 * only. Its CQ is in the lender's RAM (the client polls it through the
	 * backup path): the device's completions then never cross a fabric.
	 */
	if (!rc && q->mp) {
		rc = snv_hwq_create(q, 1, sp == SNV_PLACE_CMB || sp == SNV_PLACE_ACCEL ?
				    SNV_PLACE_DEVICE : sp, SNV_PLACE_DEVICE);
		if (rc) {
			snv_hwq_delete(c, &q->hw[0]);
			hwq_release(&q->hw[1]);
		}
	}
	if (!rc)
		rc = snv_list_add((void ***)&c->qps, &c->nqps, &c->cap_qps, q);
	if (rc) {
		hwq_release(&q->hw[0]);
		hwq_release(&q->hw[1]);
	}
	pthread_mutex_unlock(&c->lock);
	if (rc)
		goto fail;
	*out = q;
	return 0;
fail:
	free(q->free_cids);
	free(q->cookies);
	free(q->busy);
	free(q->cmds);
	free(q);
	return rc;
}

int snv_qpair_delete(struct snv_qpair *q, bool force)
{
	struct snv_client *c;
	int rc, rc2;

	if (!q)
		return -EINVAL;
	c = q->c;
	if (q->inflight && !force)
		return -EBUSY;
	pthread_mutex_lock(&c->lock);
	rc = snv_hwq_delete(c, &q->hw[0]);
	rc2 = snv_hwq_delete(c, &q->hw[1]);
	pthread_mutex_unlock(&c->lock);
	qpair_free_local(q);
	if (!rc)
		rc = rc2;
	return rc < 0 ? rc : rc ? -EIO : 0;
}

enum snv_prio snv_qpair_prio(const struct snv_qpair *q)
{
	return q->got;
}

unsigned snv_qpair_iops_limit(const struct snv_qpair *q)
{
	return q->iops_limit;
}

uint16_t snv_qpair_id(const struct snv_qpair *q)
{
	return q->hw[q->act].qid;
}

uint64_t snv_qpair_sq_ioaddr(const struct snv_qpair *q)
{
	return q->hw[0].sq_io;
}

unsigned snv_qpair_inflight(const struct snv_qpair *q)
{
	return q->inflight;
}

void snv_qpair_get_stats(const struct snv_qpair *q, struct snv_qpair_stats *s)
{
	*s = q->st;
	s->path = q->act;
}

/* ---- Data path ---- */

/* A token for one more command of a rate-limited pair (0), or -EAGAIN. */
static inline int rate_take(struct snv_qpair *q)
{
	uint64_t now;
	double burst;

	if (__builtin_expect(!q->iops_limit, 1))
		return 0;
	now = snv_now_ns();
	burst = rate_burst(q);
	q->tokens += (double)(now - q->tokens_ns) * q->iops_limit / 1e9;
	q->tokens_ns = now;
	if (q->tokens > burst)
		q->tokens = burst;
	if (q->tokens < 1.0)
		return -EAGAIN;
	q->tokens -= 1.0;
	return 0;
}

static inline int take_cid(struct snv_qpair *q, void *cookie)
{
	uint16_t cid;

	if (__builtin_expect(!q->nfree, 0))
		return -EAGAIN;
	cid = q->free_cids[--q->nfree];
	q->cookies[cid] = cookie;
	q->busy[cid] = 1;
	q->inflight++;
	return cid;
}

/* Submit slot's command on hw queue h: its CID carries a fresh epoch. */
void snv_hwq_ring(struct snv_qpair *q, unsigned h, uint16_t slot)
{
	struct snv_hwq *w = &q->hw[h];
	struct snv_cmd *cmd = &q->cmds[slot];

	cmd->on = (uint8_t)h;
	cmd->epoch = (uint8_t)((cmd->epoch + 1) & 0xf);
	cmd->sqe.cid = (uint16_t)(slot | (unsigned)cmd->epoch << SNV_CID_SLOT_BITS);
	w->inflight++;
	memcpy(&w->sq[w->sq_tail], &cmd->sqe, sizeof(cmd->sqe));
	w->sq_tail = nvme_q_next(w->sq_tail, q->depth);
	/* Release: the SQE (and any PRP list) is visible before the doorbell. */
	__atomic_store_n(w->sq_db, w->sq_tail, __ATOMIC_RELEASE);
}

uint64_t snv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int submit(struct snv_qpair *q, int cid, const struct nvme_sqe *s, struct snv_buf *buf,
		  size_t off, uint64_t len)
{
	struct snv_cmd *cmd = &q->cmds[cid];

	memcpy(&cmd->sqe, s, sizeof(*s));
	cmd->buf = buf;
	cmd->off = off;
	cmd->len = len;
	cmd->t_ns = q->c->io_timeout_ms ? snv_now_ns() : 0;
	if (buf)
		snv_prp_set(&cmd->sqe, buf, off, len, q->act == 1);
	snv_hwq_ring(q, q->act, (uint16_t)cid);
	return 0;
}

void snv_prp_set(struct nvme_sqe *s, const struct snv_buf *buf, size_t off, uint64_t len,
		 bool backup)
{
	uint64_t io = (backup ? buf->io2 : buf->io) + off, first;

	s->prp1 = io;
	s->prp2 = 0;
	first = nvme_prp_first_len(io, len, SNV_PAGE);
	if (len > first) {
		if (len - first <= SNV_PAGE)
			s->prp2 = io + first;         /* page-aligned: buffers start on a page */
		else                                  /* the precomputed list of page off/4K */
			s->prp2 = (backup ? buf->tbl_io2 : buf->tbl_io) +
				  (off / SNV_PAGE) * SNV_PRP_ENTRIES * 8;
	}
}

static inline bool path_check_due(struct snv_qpair *q)
{
	return q->mp && (q->act ||
			 __atomic_load_n(&q->c->pevents, __ATOMIC_ACQUIRE) != q->seen_events);
}

int snv_submit_rw(struct snv_qpair *q, bool write, uint32_t nsid, uint64_t slba, uint32_t nlb,
		  struct snv_buf *buf, size_t off, void *cookie)
{
	struct snv_client *c = q->c;
	struct nvme_sqe s;
	uint64_t len;
	int cid;

	if (__builtin_expect(nsid < 1 || nsid > SNV_NS_CACHE || !c->lba_shift[nsid] || !nlb ||
			     nlb > 65536 || !buf, 0))
		return -EINVAL;
	len = (uint64_t)nlb << c->lba_shift[nsid];
	if (__builtin_expect(len > c->max_xfer || off > buf->size || len > buf->size - off, 0))
		return -EINVAL;
	if (__builtin_expect(q->dead, 0))
		return -EIO;
	if (__builtin_expect(path_check_due(q), 0))
		snv_mp_check(q);
	if (!q->nfree)
		return -EAGAIN;
	if (rate_take(q))
		return -EAGAIN;
	cid = take_cid(q, cookie);
	if (cid < 0)
		return cid;
	nvme_sqe_init(&s, write ? nvme_cmd_write : nvme_cmd_read, (uint16_t)cid, nsid);
	nvme_rw_set(&s, slba, nlb);
	return submit(q, cid, &s, buf, off, len);
}

int snv_submit_flush(struct snv_qpair *q, uint32_t nsid, void *cookie)
{
	struct nvme_sqe s;
	int cid;

	if (q->dead)
		return -EIO;
	if (!q->nfree || rate_take(q))
		return -EAGAIN;
	cid = take_cid(q, cookie);
	if (cid < 0)
		return cid;
	nvme_sqe_init(&s, nvme_cmd_flush, (uint16_t)cid, nsid);
	return submit(q, cid, &s, NULL, 0, 0);
}

int snv_submit_raw(struct snv_qpair *q, const void *sqe64, void *cookie)
{
	struct nvme_sqe s;
	int cid;

	if (!sqe64)
		return -EINVAL;
	if (q->dead)
		return -EIO;
	if (!q->nfree || rate_take(q))
		return -EAGAIN;
	cid = take_cid(q, cookie);
	if (cid < 0)
		return cid;
	memcpy(&s, sqe64, sizeof(s));
	return submit(q, cid, &s, NULL, 0, 0);
}

static inline void complete(struct snv_qpair *q, uint16_t slot, struct snv_cpl *out,
			    uint16_t status, uint32_t dw0)
{
	out->cookie = q->cookies[slot];
	out->status = status;
	out->dw0 = dw0;
	q->busy[slot] = 0;
	q->free_cids[q->nfree++] = slot;
	q->inflight--;
}

/* Reap hw queue h. */
static unsigned poll_hwq(struct snv_qpair *q, unsigned h, struct snv_cpl *out, unsigned max)
{
	struct snv_hwq *w = &q->hw[h];
	unsigned n = 0;
	bool moved = false;

	while (n < max && w->qid) {
		struct nvme_cqe *e = &w->cq[w->cq_head];
		uint16_t cid, slot;

		if (!nvme_cqe_is_new(e, w->cq_phase))
			break;
		cid = e->cid;
		slot = cid & ((1u << SNV_CID_SLOT_BITS) - 1);
		nvme_q_advance(&w->cq_head, &w->cq_phase, q->depth);
		moved = true;
		if (__builtin_expect(slot >= q->depth || !q->busy[slot], 0))
			continue;                     /* not a command of ours: ignore */
		if (__builtin_expect(q->cmds[slot].on != h ||
				     cid >> SNV_CID_SLOT_BITS != q->cmds[slot].epoch, 0)) {
			q->st.late_ignored++;         /* submitted again elsewhere */
			continue;
		}
		w->inflight--;
		complete(q, slot, &out[n++], nvme_cqe_st(e) & 0x7fff, e->dw0);
	}
	if (moved)
		__atomic_store_n(w->cq_db, w->cq_head, __ATOMIC_RELEASE);
	return n;
}

/* Complete every command in flight with SNV_STATUS_PATH_ERROR; the pair is dead. */
static unsigned fail_all(struct snv_qpair *q, struct snv_cpl *out, unsigned max)
{
	unsigned n = 0;

	q->dead = true;
	for (uint16_t s = 0; s < q->depth && n < max; s++)
		if (q->busy[s]) {
			q->hw[q->cmds[s].on].inflight--;
			q->st.path_errors++;
			complete(q, s, &out[n++], SNV_STATUS_PATH_ERROR, 0);
		}
	return n;
}

/* The oldest command in flight is older than ms. */
static bool timed_out(struct snv_qpair *q, unsigned ms)
{
	uint64_t now = snv_now_ns(), lim = (uint64_t)ms * 1000000ull;

	for (uint16_t s = 0; s < q->depth; s++)
		if (q->busy[s] && q->cmds[s].t_ns && now - q->cmds[s].t_ns > lim)
			return true;
	return false;
}

int snv_poll(struct snv_qpair *q, struct snv_cpl *out, unsigned max)
{
	struct snv_client *c = q->c;
	unsigned n;

	if (__builtin_expect(q->dead, 0))
		return (int)fail_all(q, out, max);
	if (__builtin_expect(path_check_due(q), 0))
		snv_mp_check(q);
	n = poll_hwq(q, q->act, out, max);
	if (__builtin_expect(q->mp && q->hw[!q->act].inflight && n < max, 0))
		n += poll_hwq(q, !q->act, out + n, max - n);  /* the rest after a move */
	if (n || !q->inflight || !c->io_timeout_ms)
		return (int)n;
	/* Nothing came: a path that stopped answering? */
	if (q->mp && q->act == 0 && timed_out(q, c->failover_ms)) {
		snv_mp_check(q);
		if (q->act == 1)
			return (int)poll_hwq(q, 1, out, max);
	}
	if (timed_out(q, c->io_timeout_ms))
		return (int)fail_all(q, out, max);
	return 0;
}

int snv_qpair_predict(struct snv_qpair *q, struct snv_prediction *out)
{
	uint16_t qid = snv_qpair_id(q);
	size_t len = ((size_t)qid + 1) * sizeof(struct smartio_timing_log_entry);
	struct smartio_timing_log_entry *log, *e;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!qid || len > SNV_DATA_MAX)
		return -ERANGE;
	log = malloc(len);
	if (!log)
		return -ENOMEM;
	rc = snv_get_log_page(q->c, SMARTIO_LOG_LID_TIMING, 0, log, len);
	e = &log[qid];
	if (rc > 0)
		rc = -ENOTSUP;          /* not a smartio controller (Invalid Log Page) */
	else if (!rc && !(e->flags & SMARTIO_TIMING_RAN))
		rc = -ENODATA;
	if (!rc) {
		*out = (struct snv_prediction){ .size = e->size, .write = e->write,
			.complete = e->flags & SMARTIO_TIMING_COMPLETE,
			.doorbell_us = e->doorbell_ns / 1e3, .fetch_us = e->fetch_ns / 1e3,
			.media_us = e->media_ns / 1e3, .data_us = e->data_ns / 1e3,
			.cqe_us = e->cqe_ns / 1e3, .total_us = e->total_ns / 1e3 };
	}
	free(log);
	return rc;
}
