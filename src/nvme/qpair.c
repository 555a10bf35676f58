// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme data path: DMA buffers, I/O queue pairs on the client's
 * device segments, and submission/completion without the manager or any
 * daemon (stores into the SQ and the doorbells, loads from the CQ).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snv_priv.h"

static int list_add(void ***arr, unsigned *n, unsigned *cap, void *p)
{
	if (*n == *cap) {
		unsigned nc = *cap ? *cap * 2 : 8;
		void **na = realloc(*arr, nc * sizeof(*na));

		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = nc;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

static void list_del(void **arr, unsigned *n, void *p)
{
	for (unsigned i = 0; i < *n; i++)
		if (arr[i] == p) {
			arr[i] = arr[--*n];
			return;
		}
}

/* ---- Buffers ---- */

static size_t tbl_bytes(size_t size)
{
	size_t pages = (size + SNV_PAGE - 1) / SNV_PAGE;

	return (pages * SNV_PRP_ENTRIES * 8 + SNV_PAGE - 1) & ~(size_t)(SNV_PAGE - 1);
}

static int get_seg(struct snv_client *c, bool sq, enum snv_place p, size_t size,
		   struct snv_devseg **out);

/* The PRP table of b (b->io, b->size set) in the lender's RAM; called with c->lock. */
static int tbl_setup(struct snv_client *c, struct snv_buf *b)
{
	size_t pages = (b->size + SNV_PAGE - 1) / SNV_PAGE, bytes = tbl_bytes(b->size);
	uint64_t *tbl = malloc(bytes);
	sci_ioaddr_t io;
	sci_error_t se;
	int rc;

	if (!tbl)
		return -ENOMEM;
	for (size_t p = 0; p < pages; p++)
		for (unsigned j = 0; j < SNV_PRP_ENTRIES; j++)
			tbl[p * SNV_PRP_ENTRIES + j] = b->io + (p + 1 + j) * SNV_PAGE;
	rc = get_seg(c, true, SNV_PLACE_DEVICE, bytes, &b->tseg);
	if (!rc) {
		SCIMapRemoteSegmentForDevice(b->tseg->rs, c->dev, &io, 0, bytes, 0, &se);
		rc = snv_errno(se);
	}
	if (!rc) {
		b->tseg_mapped = true;
		b->tbl_io = io;
		memcpy((void *)b->tseg->vaddr, tbl, pages * SNV_PRP_ENTRIES * 8);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	free(tbl);
	return rc;
}

static void tbl_free(struct snv_client *c, struct snv_buf *b)
{
	sci_error_t se;

	if (b->tseg_mapped)
		SCIUnmapRemoteSegmentForDevice(b->tseg->rs, c->dev, 0, &se);
	if (b->tseg)
		b->tseg->in_use = false;
	b->tseg = NULL;
	b->tseg_mapped = false;
}

/* Table, then the client's list; on failure the caller frees b->mem. */
static int buf_add(struct snv_client *c, struct snv_buf *b)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = tbl_setup(c, b);
	if (!rc)
		rc = list_add((void ***)&c->bufs, &c->nbufs, &c->cap_bufs, b);
	if (rc)
		tbl_free(c, b);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* The common end of snv_buf_alloc/register: list the buffer, or undo it all. */
static int buf_finish(struct snv_client *c, struct snv_buf *b, size_t size, int rc,
		      struct snv_buf **out)
{
	b->size = size;
	b->io = b->mem.io;
	if (!rc)
		rc = buf_add(c, b);
	if (rc) {
		snv_dmamem_free(&b->mem, c->adapter, c->dev);
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int snv_buf_alloc(struct snv_client *c, size_t size, struct snv_buf **out)
{
	struct snv_buf *b;
	int rc;

	*out = NULL;
	if (!size || size > ((size_t)1 << 40))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->c = c;
	rc = snv_dmamem_alloc(c->sd, c->adapter, c->dev, size, &b->mem);
	return buf_finish(c, b, size, rc, out);
}

int snv_buf_register(struct snv_client *c, void *addr, size_t size, struct snv_buf **out)
{
	struct snv_buf *b;
	sci_error_t se;
	int rc;

	*out = NULL;
	if (!addr || !size || size % SNV_PAGE || (uintptr_t)addr % SNV_PAGE)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->c = c;
	b->registered = true;
	SCICreateSegment(c->sd, &b->mem.seg, 0, size, NULL, NULL, SCI_FLAG_AUTO_ID | SCI_FLAG_EMPTY,
			 &se);
	if (!se)
		SCIRegisterSegmentMemory(addr, size, b->mem.seg, 0, &se);
	if (!se)
		SCIPrepareSegment(b->mem.seg, c->adapter, 0, &se);
	if (!se) {
		SCIMapLocalSegmentForDevice(b->mem.seg, c->adapter, c->dev, &b->mem.io, 0, size, 0,
					    &se);
		b->mem.mapped_dev = !se;
	}
	rc = snv_errno(se);
	b->mem.vaddr = addr;
	b->mem.size = size;
	return buf_finish(c, b, size, rc, out);
}

void snv_buf_free(struct snv_buf *b)
{
	struct snv_client *c;

	if (!b)
		return;
	c = b->c;
	pthread_mutex_lock(&c->lock);
	list_del((void **)c->bufs, &c->nbufs, b);
	tbl_free(c, b);
	pthread_mutex_unlock(&c->lock);
	if (b->registered)
		b->mem.map = NULL;            /* the program's memory: nothing to unmap */
	snv_dmamem_free(&b->mem, c->adapter, c->dev);
	free(b);
}

void *snv_buf_vaddr(const struct snv_buf *b)
{
	return b->mem.vaddr;
}

size_t snv_buf_size(const struct snv_buf *b)
{
	return b->size;
}

uint64_t snv_buf_ioaddr(const struct snv_buf *b, size_t off)
{
	return b->io + off;
}

/* ---- Queue memory: device segments of the client, reused after delete ---- */

static unsigned place_hints(bool sq, enum snv_place p)
{
	if (p == SNV_PLACE_DEVICE)
		return sq ? SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ :
			SCI_MEMACCESS_MULTIHOST_READ | SCI_MEMACCESS_DEVICE_WRITE;
	/* The client's RAM: no hints (a tie) for an SQ, the natural ones for a CQ. */
	return sq ? 0 : SCI_MEMACCESS_HOST_READ | SCI_MEMACCESS_DEVICE_WRITE;
}

static int get_seg(struct snv_client *c, bool sq, enum snv_place p, size_t size,
		   struct snv_devseg **out)
{
	struct snv_devseg *s;
	sci_error_t se;

	for (unsigned i = 0; i < c->nsegs; i++) {
		s = &c->segs[i];
		if (!s->in_use && s->place == p && s->size >= size && s->vaddr) {
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
	SCICreateDeviceSegment(c->dev, s->id, size, SCI_MEMTYPE_SHARED, place_hints(sq, p), 0, &se);
	if (se)
		return snv_errno(se);
	c->nsegs++;                                   /* the ID is used from now on */
	SCIConnectDeviceSegment(c->dev, &s->rs, s->id, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &se);
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

static void qpair_free_local(struct snv_qpair *q)
{
	struct snv_client *c = q->c;

	pthread_mutex_lock(&c->lock);
	list_del((void **)c->qps, &c->nqps, q);
	pthread_mutex_unlock(&c->lock);
	free(q->free_cids);
	free(q->cookies);
	free(q->busy);
	free(q);
}

int snv_qpair_create(struct snv_client *c, const struct snv_qpair_opts *o, struct snv_qpair **out)
{
	struct snv_qpair_opts d = { 0 };
	struct snv_create_qp r = { 0 };
	struct snv_qp_reply qr;
	struct snv_qpair *q;
	enum snv_place sp, cp;
	int rc;

	*out = NULL;
	if (!o)
		o = &d;
	sp = o->sq_place == SNV_PLACE_DEFAULT ? SNV_PLACE_DEVICE : o->sq_place;
	cp = o->cq_place == SNV_PLACE_DEFAULT ? SNV_PLACE_HOST : o->cq_place;
	if (sp > SNV_PLACE_CMB || cp > SNV_PLACE_CMB)
		return -EINVAL;
	/* CQs in the CMB: not implemented (the model's CMBSZ.CQS is 0); SQs need one. */
	if (cp == SNV_PLACE_CMB || (sp == SNV_PLACE_CMB && !(c->cmb_flags & SNV_CMB_SQ)))
		return -ENOTSUP;
	r.depth = o->depth ? o->depth : 64;
	if (r.depth < 2 || r.depth > c->max_depth || r.depth > 65536)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->c = c;
	q->depth = r.depth;
	q->free_cids = calloc(r.depth, sizeof(*q->free_cids));
	q->cookies = calloc(r.depth, sizeof(*q->cookies));
	q->busy = calloc(r.depth, 1);
	if (!q->free_cids || !q->cookies || !q->busy) {
		rc = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < r.depth; i++)
		q->free_cids[i] = (uint16_t)(r.depth - 1 - i);
	q->nfree = r.depth - 1;              /* at most depth - 1 in flight: the SQ never fills */
	pthread_mutex_lock(&c->lock);
	rc = sp == SNV_PLACE_CMB ? cmb_map(c) :
	     get_seg(c, true, sp, ((size_t)r.depth * 64 + SNV_PAGE - 1) & ~(size_t)(SNV_PAGE - 1),
		     &q->sqs);
	if (!rc)
		rc = get_seg(c, false, cp,
			     ((size_t)r.depth * 16 + SNV_PAGE - 1) & ~(size_t)(SNV_PAGE - 1), &q->cqs);
	if (!rc) {
		q->cq = (struct nvme_cqe *)q->cqs->vaddr;
		if (q->sqs)
			memset((void *)q->sqs->vaddr, 0, q->sqs->size);
		memset(q->cq, 0, q->cqs->size);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		r.sq_segid = q->sqs ? q->sqs->id : 0;
		r.cq_segid = q->cqs->id;
		r.prio = NVME_QPRIO_MEDIUM;
		r.flags = q->sqs ? 0 : SNV_QP_SQ_CMB;
		rc = snv_rpc(c, SNV_MSG_CREATE_QP, &r, sizeof(r), &qr, sizeof(qr), NULL, 0, NULL);
		if (rc > 0)
			rc = -EIO;                    /* the controller refused the queue */
	}
	/* Every reply field checked: a CMB region lies within the CMB, on a page. */
	if (!rc && (qr.qid < 1 || qr.qid > c->nqueues || qr.rsvd ||
		    (q->sqs ? qr.sq_cmb_off != 0 :
		     (qr.sq_cmb_off % SNV_PAGE || qr.sq_cmb_off > c->cmb_size ||
		      (uint64_t)r.depth * 64 > c->cmb_size - qr.sq_cmb_off))))
		rc = -EPROTO;
	if (!rc) {
		q->sq_cmb_off = qr.sq_cmb_off;
		q->sq = q->sqs ? (struct nvme_sqe *)q->sqs->vaddr :
			(struct nvme_sqe *)(c->cmb + qr.sq_cmb_off);
		if (!q->sqs)                      /* posted stores to device memory */
			memset(q->sq, 0, (size_t)r.depth * 64);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	if (!rc)
		rc = list_add((void ***)&c->qps, &c->nqps, &c->cap_qps, q);
	if (rc) {
		if (q->sqs)
			q->sqs->in_use = false;
		if (q->cqs)
			q->cqs->in_use = false;
	}
	pthread_mutex_unlock(&c->lock);
	if (rc)
		goto fail;
	q->qid = (uint16_t)qr.qid;
	q->sq_db = (volatile uint32_t *)(c->bar + nvme_sq_tail_db(q->qid, c->dstrd));
	q->cq_db = (volatile uint32_t *)(c->bar + nvme_cq_head_db(q->qid, c->dstrd));
	q->cq_phase = 1;
	*out = q;
	return 0;
fail:
	free(q->free_cids);
	free(q->cookies);
	free(q->busy);
	free(q);
	return rc;
}

int snv_qpair_delete(struct snv_qpair *q, bool force)
{
	struct snv_delete_qp r = { 0 };
	struct snv_client *c;
	int rc;

	if (!q)
		return -EINVAL;
	c = q->c;
	if (q->inflight && !force)
		return -EBUSY;
	r.qid = q->qid;
	pthread_mutex_lock(&c->lock);
	rc = snv_rpc(c, SNV_MSG_DELETE_QP, &r, sizeof(r), NULL, 0, NULL, 0, NULL);
	/* The memory is reused only once the controller no longer owns it. */
	if (!rc) {
		if (q->sqs)
			q->sqs->in_use = false;
		q->cqs->in_use = false;
	}
	pthread_mutex_unlock(&c->lock);
	qpair_free_local(q);
	return rc < 0 ? rc : rc ? -EIO : 0;
}

uint16_t snv_qpair_id(const struct snv_qpair *q)
{
	return q->qid;
}

unsigned snv_qpair_inflight(const struct snv_qpair *q)
{
	return q->inflight;
}

/* ---- Data path ---- */

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

static inline void ring(struct snv_qpair *q, const struct nvme_sqe *s)
{
	memcpy(&q->sq[q->sq_tail], s, sizeof(*s));
	q->sq_tail = nvme_q_next(q->sq_tail, q->depth);
	/* Release: the SQE (and any PRP list) is visible before the doorbell. */
	__atomic_store_n(q->sq_db, q->sq_tail, __ATOMIC_RELEASE);
}

int snv_submit_rw(struct snv_qpair *q, bool write, uint32_t nsid, uint64_t slba, uint32_t nlb,
		  struct snv_buf *buf, size_t off, void *cookie)
{
	struct snv_client *c = q->c;
	struct nvme_sqe s;
	uint64_t io, len, first;
	int cid;

	if (__builtin_expect(nsid < 1 || nsid > SNV_NS_CACHE || !c->lba_shift[nsid] || !nlb ||
			     nlb > 65536 || !buf, 0))
		return -EINVAL;
	len = (uint64_t)nlb << c->lba_shift[nsid];
	if (__builtin_expect(len > c->max_xfer || off > buf->size || len > buf->size - off, 0))
		return -EINVAL;
	cid = take_cid(q, cookie);
	if (cid < 0)
		return cid;
	nvme_sqe_init(&s, write ? nvme_cmd_write : nvme_cmd_read, (uint16_t)cid, nsid);
	nvme_rw_set(&s, slba, nlb);
	io = buf->io + off;
	s.prp1 = io;
	first = nvme_prp_first_len(io, len, SNV_PAGE);
	if (len > first) {
		if (len - first <= SNV_PAGE)
			s.prp2 = io + first;          /* page-aligned: buffers start on a page */
		else                                  /* the precomputed list of page off/4K */
			s.prp2 = buf->tbl_io + (off / SNV_PAGE) * SNV_PRP_ENTRIES * 8;
	}
	ring(q, &s);
	return 0;
}

int snv_submit_flush(struct snv_qpair *q, uint32_t nsid, void *cookie)
{
	struct nvme_sqe s;
	int cid = take_cid(q, cookie);

	if (cid < 0)
		return cid;
	nvme_sqe_init(&s, nvme_cmd_flush, (uint16_t)cid, nsid);
	ring(q, &s);
	return 0;
}

int snv_submit_raw(struct snv_qpair *q, const void *sqe64, void *cookie)
{
	struct nvme_sqe s;
	int cid;

	if (!sqe64)
		return -EINVAL;
	cid = take_cid(q, cookie);
	if (cid < 0)
		return cid;
	memcpy(&s, sqe64, sizeof(s));
	s.cid = (uint16_t)cid;
	ring(q, &s);
	return 0;
}

int snv_poll(struct snv_qpair *q, struct snv_cpl *out, unsigned max)
{
	unsigned n = 0;
	bool moved = false;

	while (n < max) {
		struct nvme_cqe *e = &q->cq[q->cq_head];
		uint16_t cid;

		if (!nvme_cqe_is_new(e, q->cq_phase))
			break;
		cid = e->cid;
		nvme_q_advance(&q->cq_head, &q->cq_phase, q->depth);
		moved = true;
		if (__builtin_expect(cid >= q->depth || !q->busy[cid], 0))
			continue;                     /* not a command of ours: ignore */
		out[n].cookie = q->cookies[cid];
		out[n].status = nvme_cqe_st(e) & 0x7fff;
		out[n].dw0 = e->dw0;
		q->busy[cid] = 0;
		q->free_cids[q->nfree++] = cid;
		q->inflight--;
		n++;
	}
	if (moved)
		__atomic_store_n(q->cq_db, q->cq_head, __ATOMIC_RELEASE);
	return (int)n;
}
