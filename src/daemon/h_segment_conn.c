// SPDX-License-Identifier: MIT
/*
 * The segment service's importer requests that need the owner's daemon:
 * SEG_CONNECT (the owner counts a reference, then our windows open),
 * SEG_DISCONNECT (windows closed, then the owner forgets the reference),
 * SEG_MAP_REMOTE (the route the CPU will take, then the memory object it
 * ends in) and SEG_MAP_LOCAL of a segment on a borrowed device's memory
 * (the same, the object being at the lender). They run on the loop and
 * answer through continuations: the owner's replies, or the route walk's
 * steps, drive them on; nothing waits.
 * The tables they build on are in h_segment_imp.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "seg_priv.h"
#include "util/log.h"

/* ---------- SEG_CONNECT ---------- */

struct connect {
	struct smio_seg_connect m;
	struct imp im;
};

static void looked_up(struct smd_req *r, int rc, const void *payload, uint32_t len, int fd)
{
	struct connect *x = r->priv;
	struct smio_peer_seg ps;

	if (fd >= 0)
		close(fd);
	if (rc == -EHOSTDOWN || rc == -EPROTO)
		rc = -EHOSTUNREACH;        /* as SISCI reports a node it cannot reach */
	if (!rc && len != sizeof(ps))
		rc = -EPROTO;
	if (!rc) {
		memcpy(&ps, payload, sizeof(ps));
		rc = smd_seg_connect_end(r->d, &x->m, &x->im, &ps, false);
	}
	if (!rc)
		smd_seg_connect_add(r->d, &x->im, r->out, &r->outlen);
	free(x);
	smd_req_done(r, rc);
}

static int seg_connect(struct smd_req *r)
{
	struct connect *x = calloc(1, sizeof(*x));
	struct smio_seg_id q;
	int rc;

	if (!x)
		return -ENOMEM;
	memcpy(&x->m, r->p, sizeof(x->m));
	rc = smd_seg_connect_begin(r->d, r->c, &x->m, &x->im);
	if (rc == 1) {
		smd_seg_connect_add(r->d, &x->im, r->out, &r->outlen);
		rc = 0;
	} else if (!rc) {
		q = (struct smio_seg_id){ .segid = x->m.segid };
		r->priv = x;
		rc = smd_req_call(r, x->im.host, SMIO_PEER_SEG_LOOKUP, &q, sizeof(q), looked_up);
		if (rc == SMD_ASYNC)
			return rc;
		if (rc == -EHOSTDOWN)
			rc = -EHOSTUNREACH;
	}
	free(x);
	return rc;
}

/* ---------- SEG_DISCONNECT ---------- */

static void released(struct smd_req *r, int rc, const void *payload, uint32_t len, int fd)
{
	struct imp *im = r->priv;

	if (fd >= 0)
		close(fd);
	/* Not reaching the owner is fine: losing the peer connection made it drop
	 * every reference we held through it. Anything else is worth a note. */
	if (rc && rc != -EHOSTDOWN && rc != -ESHUTDOWN)
		smio_warn("releasing segment %#x on host %u: %s", im->segid, im->host,
			  strerror(-rc));
	free(im);
	smd_req_done(r, 0);
}

static int seg_disconnect(struct smd_req *r)
{
	const struct smio_seg_conn_ref *m = r->p;
	struct smd *d = r->d;
	struct smio_peer_seg_ref q;
	struct imp *p, *im;
	int rc = m->flags ? -EINVAL : smd_imp_get(d->segs, r->c, m->conn, &p);

	if (rc)
		return rc;
	if (p->devmaps)
		return -EBUSY;      /* mapped for a device: unmap that first */
	im = malloc(sizeof(*im));
	if (!im)
		return -ENOMEM;
	*im = *p;
	smd_imp_unlink(d->segs, p);
	/* Close the windows before the owner may free the memory behind them. */
	if (!smd_imp_dead(im))
		smd_imp_lut_clear(d, im);
	/* Answered once the owner has let go: the process may remove at once. */
	if (im->lost || im->borrow || im->host == d->host_id) {
		smd_imp_release(d, im, false);
		free(im);
		return 0;
	}
	q = (struct smio_peer_seg_ref){ .segid = im->segid, .ref = im->ref };
	r->priv = im;
	rc = smd_req_call(r, im->host, SMIO_PEER_SEG_RELEASE, &q, sizeof(q), released);
	if (rc == SMD_ASYNC)
		return rc;
	free(im);          /* not sent: the owner dropped it with our connection */
	return 0;
}

/* ---------- SEG_MAP_REMOTE ---------- */

struct map {
	uint64_t size;             /* of the mapping asked for */
	uint32_t host, mem;        /* the object the route ends in */
	uint64_t off;
};

/* The object's fd, size checked: the answer. */
static int map_answer(struct smd_req *r, const struct map *x, int fd, uint64_t fd_size)
{
	if (x->off > fd_size || x->size > fd_size - x->off)
		return -EPROTO;     /* the owner's object is smaller than its route says */
	*(struct smio_map_reply *)r->out = (struct smio_map_reply){ .host = x->host,
		.mem = x->mem, .offset = x->off, .len = x->size, .fd_size = fd_size,
		.status = FAB_OK };
	r->outlen = sizeof(struct smio_map_reply);
	r->out_fd = fd;
	return 0;
}

static void memfd_got(struct smd_req *r, int rc, const void *payload, uint32_t len, int fd)
{
	struct map *x = r->priv;
	struct smio_peer_memfd rep;
	int kept = -1;

	if (rc == -EPROTO)
		rc = -EHOSTDOWN;
	if (!rc && (fd < 0 || len != sizeof(rep)))
		rc = -EPROTO;
	if (!rc) {
		memcpy(&rep, payload, sizeof(rep));
		if (rep.mem != x->mem)
			rc = -EPROTO;
	}
	if (rc) {
		if (fd >= 0)
			close(fd);
	} else {
		smd_seg_memfd_keep(r->d, x->host, x->mem, fd, rep.size, &kept);
		rc = map_answer(r, x, kept, rep.size);
	}
	free(x);
	smd_req_done(r, rc);
}

/* The route's end as one mapping of size bytes: our object, or the owner's. */
static int mapped_object(struct smd_req *r, struct fab_route *rt, uint64_t size)
{
	struct smd *d = r->d;
	struct smio_peer_memfd q;
	struct map *x;
	uint64_t fd_size;
	int rc = smd_seg_fab_status_errno(rt->status), fd;

	if (!rc && rt->tgt.kind != FAB_TGT_RAM && rt->tgt.kind != FAB_TGT_BAR)
		rc = -EIO;
	if (!rc && rt->tgt.len < size)
		rc = -EIO;          /* not one contiguous object: cannot be one mmap */
	if (rc)
		return rc;
	x = malloc(sizeof(*x));
	if (!x)
		return -ENOMEM;
	*x = (struct map){ .size = size, .host = rt->tgt.host, .mem = rt->tgt.mem,
			   .off = rt->tgt.offset };
	if (x->host == d->host_id) {
		rc = x->mem < d->host->nmems ? map_answer(r, x, d->host->mems[x->mem].fd,
							  d->host->mems[x->mem].size) : -EIO;
	} else if (!smd_seg_memfd_cached(d, x->host, x->mem, &fd, &fd_size)) {
		rc = map_answer(r, x, fd, fd_size);
	} else {
		/* The owner hands its memory object over once; we keep it. */
		q = (struct smio_peer_memfd){ .mem = x->mem };
		r->priv = x;
		rc = smd_req_call(r, x->host, SMIO_PEER_MEMFD, &q, sizeof(q), memfd_got);
		if (rc == SMD_ASYNC)
			return rc;
	}
	free(x);
	return rc;
}

static int mapped(struct smd_req *r, struct fab_route *rt)
{
	return mapped_object(r, rt, ((const struct smio_seg_map *)r->p)->size);
}

/* ---------- SEG_MAP_LOCAL of a borrowed device's memory ---------- */

/* The segment of SEG_MAP_LOCAL if it lies on a borrowed device's memory BAR. */
static const struct seg *on_shadow(struct smd_req *r)
{
	const struct seg *sg = seg_lookup(r->d->segs->tab,
					  ((const struct smio_seg_id *)r->p)->segid);
	uint32_t lender;
	uint64_t laddr;

	if (!sg || sg->owner != r->c->cid || (sg->flags & SEG_F_EMPTY) || sg->mem != SEG_MEM_IO ||
	    !smd_lend_shadow_mem(r->d, sg->phys, sg->size, &lender, &laddr))
		return NULL;
	return sg;
}

static int mapped_local(struct smd_req *r, struct fab_route *rt)
{
	const struct seg *sg = on_shadow(r);

	return sg ? mapped_object(r, rt, sg->size) : -ENOENT;   /* gone meanwhile */
}

/*
 * The CPU's loads and stores on a segment attached to a borrowed device's BAR
 * go through our NTB window to the lender's device memory: the route says
 * which of the lender's objects, fetched as for an import. Every other
 * segment is mapped from this host's objects (h_segment.c).
 */
static int seg_map_local(struct smd_req *r)
{
	const struct seg *sg = on_shadow(r);

	if (!sg)
		return smd_h_segment(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
	return smd_route_async(r, FAB_RID_CPU, sg->phys, sg->size, true, true, mapped_local);
}

static int seg_map_remote(struct smd_req *r)
{
	const struct smio_seg_map *m = r->p;
	struct imp *p;
	int rc = smd_imp_get(r->d->segs, r->c, m->conn, &p);

	if (rc)
		return rc;
	if (smd_imp_dead(p))
		return -ENOLINK;
	if (m->offset > p->size || m->size > p->size - m->offset)
		return -ERANGE;
	/* The route the CPU's loads and stores will take: through the LUT. */
	return smd_route_async(r, FAB_RID_CPU, p->win_addr + p->offset + m->offset, m->size,
			       true, true, mapped);
}

int smd_seg_request(struct smd_req *r)
{
	if (!r->d->segs)
		return -ENODEV;
	switch (r->type) {
	case SMIO_SEG_CONNECT:
		return seg_connect(r);
	case SMIO_SEG_DISCONNECT:
		return seg_disconnect(r);
	case SMIO_SEG_MAP_REMOTE:
		return seg_map_remote(r);
	case SMIO_SEG_MAP_LOCAL:
		return seg_map_local(r);
	default:
		return -EOPNOTSUPP;
	}
}
