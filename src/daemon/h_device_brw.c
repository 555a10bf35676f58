// SPDX-License-Identifier: MIT
/*
 * The daemon's SmartIO device service, borrower side: a process's borrows and
 * device mappings, the DEV_* requests, and what a closing connection leaves
 * behind. The pool, the lender side and the model are in h_device.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "util/log.h"
#include "dev_priv.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"

struct brw *smd_devs_brw_get(struct smd_devs *s, const struct smd_conn *c, uint32_t handle,
			     int *rc)
{
	for (unsigned i = 0; i < s->nbrws; i++)
		if (s->brws[i].handle == handle) {
			if (s->brws[i].cid != c->cid) {
				*rc = -EPERM;
				return NULL;
			}
			return &s->brws[i];
		}
	*rc = -ENOENT;
	return NULL;
}

/*
 * Ask the lender (type one of the PEER_DEV_*): ourselves for our own devices,
 * with the process's connection as holder, else the lender's daemon over our
 * peer connection. The reply goes back into req (same layout) if rcap.
 */
static int lender_call(struct smd *d, struct smd_conn *c, uint32_t host, uint16_t type,
		       void *req, uint32_t len, uint32_t rcap)
{
	uint8_t rep[64];
	uint32_t rlen = 0;
	int rc;

	if (host == d->host_id) {
		switch (type) {
		case SMIO_PEER_DEV_BORROW: {
			struct smio_peer_dev_borrow *m = req;
			struct smio_peer_dev_ref r = { .bdf = m->bdf };

			rc = smd_devs_lend_borrow(d, c->cid, m->bdf, m->flags, &r.ref);
			if (!rc)
				memcpy(req, &r, sizeof(r));
			return rc;
		}
		case SMIO_PEER_DEV_RETURN:
			return smd_devs_lend_return(d, c->cid, req);
		case SMIO_PEER_DEV_RELEASE_EXCL:
			return smd_devs_lend_release_excl(d, c->cid, req);
		case SMIO_PEER_DEV_BAR:
			return smd_devs_lend_bar(d, c->cid, req);
		case SMIO_PEER_DEV_MAP:
			return smd_devs_lend_map(d, c->cid, d->host_id, req);
		case SMIO_PEER_DEV_UNMAP:
			return smd_devs_lend_unmap(d, c->cid, req);
		case SMIO_PEER_DEV_SEG_CREATE:
			return smd_devs_lend_seg_create(d, c->cid, d->host_id, req);
		case SMIO_PEER_DEV_SEG_LOOKUP:
			return smd_devs_lend_seg_lookup(d, c->cid, d->host_id, req);
		default:
			return -EOPNOTSUPP;
		}
	}
	if (rcap > sizeof(rep))
		return -EINVAL;
	rc = smd_peer_request(d, host, type, req, len, rcap ? rep : NULL, rcap, &rlen, NULL);
	if (rc == -EPROTO)
		rc = -EHOSTDOWN;
	if (rc)
		return rc;
	if (rlen != rcap)
		return -EPROTO;
	if (rcap)
		memcpy(req, rep, rcap);
	return 0;
}

static int h_dev_release_excl(struct smd *d, struct smd_conn *c, const struct smio_dev_ref *m)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_ref r;
	struct brw *b;
	uint32_t handle = m->handle, host;
	int rc;

	b = smd_devs_brw_get(s, c, handle, &rc);
	if (!b)
		return rc;
	if (!b->exclusive)
		return 0;
	r = (struct smio_peer_dev_ref){ .bdf = b->bdf, .ref = b->ref };
	host = b->host;
	rc = lender_call(d, c, host, SMIO_PEER_DEV_RELEASE_EXCL, &r, sizeof(r), 0);
	if (rc)
		return rc;
	b = smd_devs_brw_get(s, c, handle, &rc);
	if (b)
		b->exclusive = false;
	return 0;
}

static int h_dev_seg_connect(struct smd *d, struct smd_conn *c,
			     const struct smio_dev_seg_connect *m, struct smio_seg_conn *o,
			     uint32_t *outlen)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_bar q;
	struct brw *b;
	uint32_t host;
	int rc;

	b = smd_devs_brw_get(s, c, m->handle, &rc);
	if (!b)
		return rc;
	if (m->adapter >= d->host->nntbs)
		return -ENODEV;
	host = b->host;
	if (m->memtype != SMIO_DEV_MEMTYPE_BAR) {
		/* A device segment: the lender knows where it is. */
		struct smio_peer_dev_seg ds = { .bdf = b->bdf, .ref = b->ref,
						.devsegid = m->segid, .memtype = m->memtype,
						.cid = c->cid };

		rc = lender_call(d, c, host, SMIO_PEER_DEV_SEG_LOOKUP, &ds, sizeof(ds),
				 sizeof(ds));
		if (rc)
			return rc == -EHOSTDOWN ? -EHOSTUNREACH : rc;
		if (!smd_devs_brw_get(s, c, m->handle, &rc))
			return rc;
		return smd_seg_dev_connect(d, c, ds.host, ds.segid, m->adapter, o, outlen);
	}
	q = (struct smio_peer_dev_bar){ .bdf = b->bdf, .bar = (uint16_t)m->segid, .ref = b->ref };
	rc = lender_call(d, c, host, SMIO_PEER_DEV_BAR, &q, sizeof(q), sizeof(q));
	if (rc)
		return rc;
	/* The borrow may have been returned while we waited. */
	if (!smd_devs_brw_get(s, c, m->handle, &rc))
		return rc;
	rc = smd_seg_import_bar(d, c, m->handle, host, m->adapter, q.addr, q.size, o);
	if (!rc)
		*outlen = sizeof(*o);
	return rc;
}

/*
 * A device segment for a process's borrow: in our RAM (owned by the process,
 * registered with the lender), or in the lender's RAM (the lender creates it
 * for the borrow). Either way the lender keeps the device's namespace.
 */
static int h_dev_seg_create(struct smd *d, struct smd_conn *c,
			    const struct smio_dev_seg_create *m, struct smio_dev_seg *o,
			    uint32_t *outlen)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_seg q;
	uint32_t host, handle = m->handle, lseg = 0;
	struct brw *b;
	int rc;

	b = smd_devs_brw_get(s, c, handle, &rc);
	if (!b)
		return rc;
	host = b->host;
	q = (struct smio_peer_dev_seg){ .bdf = b->bdf, .place = (uint16_t)m->place,
		.ref = b->ref, .devsegid = m->segid, .memtype = m->memtype, .cid = c->cid,
		.size = m->size };
	if (m->place == SMIO_DEV_PLACE_BORROWER) {
		rc = smd_seg_dev_create(d, c->cid, 0, m->size, &lseg, &q.size);
		if (rc)
			return rc;
		q.host = d->host_id;
		q.segid = lseg;
	}
	rc = lender_call(d, c, host, SMIO_PEER_DEV_SEG_CREATE, &q, sizeof(q), sizeof(q));
	if (rc)
		rc = rc == -EHOSTDOWN ? -EHOSTUNREACH : rc;
	/* The borrow may have been returned while we waited (the lender forgot it). */
	else if (!smd_devs_brw_get(s, c, handle, &rc))
		;
	else if (lseg)
		rc = RESERVE(s, bsegs);
	if (rc) {
		if (lseg)
			smd_seg_dev_remove(d, c->cid, lseg);
		return rc;
	}
	if (lseg)
		s->bsegs[s->nbsegs++] = (struct bseg){ .borrow = handle, .cid = c->cid,
						       .segid = lseg };
	*o = (struct smio_dev_seg){ .host = q.host, .segid = q.segid, .place = q.place,
				    .size = q.size };
	*outlen = sizeof(*o);
	return 0;
}

/*
 * A connection's segment on the memory BAR of a device its owner borrowed
 * with Device Lending (e.g. a queue of a distributed driver's client in a
 * borrowed accelerator): map it for our device where the memory is, by the
 * P2P rules of Device Lending, as for a local segment on a shadow's BAR. The
 * owner says where (PEER_SEG_WHERE); an owner that does not know the message,
 * or any other answer than a lent device's BAR of the segment's size, leaves
 * the owner's address (the window through it), which is correct, only longer.
 * q->dest_addr is base + the page offset of the range mapped.
 */
static void conn_where(struct smd *d, uint32_t conn, uint64_t base, uint64_t msize,
		       struct smio_peer_dev_map *q)
{
	struct smio_peer_seg_where w;
	struct smio_peer_seg_ref r;
	uint32_t host, rlen = 0;
	uint64_t addr;

	if (q->dest_host == d->host_id) {
		/* Our own process's segment on one of our shadows' BARs. */
		if (smd_lend_shadow_mem(d, q->dest_addr, q->size, &host, &addr)) {
			q->dest_host = host;
			q->dest_addr = addr;
			q->via = 0;
		}
		return;
	}
	if (smd_seg_conn_ref(d, conn, &r.segid, &r.ref))
		return;
	if (smd_peer_request(d, q->dest_host, SMIO_PEER_SEG_WHERE, &r, sizeof(r), &w, sizeof(w),
			     &rlen, NULL) || rlen != sizeof(w))
		return;
	if (!(w.flags & SMIO_SEG_WHERE_LENT) || w.size != msize || w.host == q->dest_host)
		return;
	/* Onto our own bus only device memory, never our RAM (the daemon at the
	 * other end vouches for its lender's address; ours we check). */
	if (w.host == d->host_id && !smd_in_local_bar(d, w.addr, w.size))
		return;
	q->dest_addr = w.addr + (q->dest_addr - base);
	q->dest_host = w.host;
	q->via = 0;
}

static int h_dev_map(struct smd *d, struct smd_conn *c, uint16_t type, const void *p,
		     struct smio_dev_mapping *o, uint32_t *outlen)
{
	struct smd_devs *s = d->devs_pool;
	struct bmap bm = { .cid = c->cid };
	struct smio_peer_dev_map q = { 0 };
	uint64_t off, size, base, len, msize;
	uint32_t via = 0;
	struct brw *b;
	int rc;

	if (type == SMIO_DEV_MAP_LOCAL) {
		const struct smio_dev_map_local *m = p;

		bm.borrow = m->handle;
		bm.local = true;
		bm.segid = m->segid;
		off = m->offset;
		size = m->size;
		if (m->adapter >= d->host->nntbs)
			return -ENODEV;
		q.via = (uint16_t)(m->adapter + 1);
	} else {
		const struct smio_dev_map_remote *m = p;

		bm.borrow = m->handle;
		bm.conn = m->conn;
		off = m->offset;
		size = m->size;
	}
	b = smd_devs_brw_get(s, c, bm.borrow, &rc);
	if (!b)
		return rc;
	bm.host = b->host;
	bm.lref = b->ref;
	bm.bdf = b->bdf;
	rc = RESERVE(s, bmaps);
	if (rc)
		return rc;
	/* A multicast group's window (h_mcast.c): the lender's NTB points into it. */
	if (!bm.local && !smd_mc_conn_info(d, c, bm.conn, &base, &msize)) {
		bm.mcast = true;
		q.dest_host = NTB_DEST_MCAST;
		q.via = 0;
		rc = 0;
	} else if (bm.local) {
		/* Pin the memory: a registered segment of the process, or its connection. */
		rc = smd_seg_local_get(d, c, bm.segid, &bm.segref, &base, &msize);
	} else {
		rc = smd_seg_conn_hold(d, c, bm.conn, 1, &bm.owner, &q.dest_host, &base, &msize,
				       &via);
	}
	if (rc)
		return rc;
	if (bm.local)
		q.dest_host = d->host_id;
	else if (!bm.mcast)
		q.via = (uint16_t)(via + 1);    /* the connection's own path */
	if (off > msize || size > msize - off) {
		rc = -ERANGE;
		goto unpin;
	}
	len = ((off & (PAGE - 1)) + size + PAGE - 1) & ~(PAGE - 1);
	q.bdf = bm.bdf;
	q.ref = bm.lref;
	q.dest_addr = base + (off & ~(PAGE - 1));
	q.size = len;
	/* A segment on a borrowed device's memory (its shadow's BAR here): the
	 * device reaches it where it is, by Device Lending's P2P rules: at its
	 * own bus address if both are at one lender, else through the device's
	 * lender's NTB to the other lender. Never through our window onto it,
	 * which would take the data across this host and back. */
	if (bm.local && smd_lend_shadow_mem(d, q.dest_addr, len, &q.dest_host, &q.dest_addr))
		q.via = 0;
	else if (!bm.local && !bm.mcast)
		conn_where(d, bm.conn, base, msize, &q);
	rc = lender_call(d, c, bm.host, SMIO_PEER_DEV_MAP, &q, sizeof(q), sizeof(q));
	if (rc)
		goto unpin;
	bm.lmap = q.map;
	rc = RESERVE(s, bmaps);
	if (rc) {
		lender_call(d, c, bm.host, SMIO_PEER_DEV_UNMAP, &q, sizeof(q), 0);
		goto unpin;
	}
	bm.handle = smd_devs_new_id(s);
	s->bmaps[s->nbmaps++] = bm;
	*o = (struct smio_dev_mapping){ .map = bm.handle, .ioaddr = q.ioaddr + (off & (PAGE - 1)) };
	*outlen = sizeof(*o);
	return 0;
unpin:
	if (bm.local)
		smd_seg_local_put(d, bm.segid, bm.segref, c->cid);
	else if (!bm.mcast)
		smd_seg_conn_hold(d, c, bm.conn, -1, NULL, NULL, NULL, NULL, NULL);
	return rc;
}

/* Take a mapping out and undo it (wait: ask the lender and wait for it). */
static void bmap_drop(struct smd *d, struct smd_conn *c, unsigned idx, bool wait)
{
	struct smd_devs *s = d->devs_pool;
	struct bmap bm = s->bmaps[idx];
	struct smio_peer_dev_map q = { .bdf = bm.bdf, .ref = bm.lref, .map = bm.lmap };

	s->bmaps[idx] = s->bmaps[--s->nbmaps];
	/* The lender closes its windows first: then the memory may go. */
	if (!bm.lmap)
		;                   /* the lender dropped it with our peer connection */
	else if (bm.host == d->host_id)
		smd_devs_lend_unmap(d, bm.cid, &q);
	else if (wait)
		lender_call(d, c, bm.host, SMIO_PEER_DEV_UNMAP, &q, sizeof(q), 0);
	else
		smd_peer_post(d, bm.host, SMIO_PEER_DEV_UNMAP, &q, sizeof(q));
	if (bm.local)
		smd_seg_local_put(d, bm.segid, bm.segref, bm.cid);
	else if (!bm.mcast)
		smd_seg_conn_hold(d, c, bm.conn, -1, NULL, NULL, NULL, NULL, NULL);
}

static int h_dev_unmap(struct smd *d, struct smd_conn *c, const struct smio_dev_unmap *m)
{
	struct smd_devs *s = d->devs_pool;

	for (unsigned i = 0; i < s->nbmaps; i++) {
		if (s->bmaps[i].handle != m->map)
			continue;
		if (s->bmaps[i].cid != c->cid)
			return -EPERM;
		if (s->bmaps[i].borrow != m->handle)
			return -EINVAL;
		bmap_drop(d, c, i, true);
		return 0;
	}
	return -ENOENT;
}

static int h_dev_rid(struct smd *d, struct smd_conn *c, const struct smio_dev_rid *m)
{
	struct smd_devs *s = d->devs_pool;
	struct ntb_drv *n = ntb_drv_of(d->host, m->adapter);
	int rc;

	if (!n)
		return -ENODEV;
	/* Only what this process registered: each registration is a reference. */
	for (unsigned i = 0; i < s->nrids; i++)
		if (s->rids[i].cid == c->cid && s->rids[i].ntb == m->adapter && s->rids[i].rid == m->rid) {
			if (m->add)
				return -EEXIST;
			s->rids[i] = s->rids[--s->nrids];
			return ntb_rid_put(n, m->rid);
		}
	if (!m->add)
		return -ENOENT;
	if (s->nrids == sizeof(s->rids) / sizeof(s->rids[0]))
		return -ENOSPC;
	rc = ntb_rid_get(n, m->rid);
	if (rc)
		return rc;
	s->rids[s->nrids++] = (struct rid_reg){ .cid = c->cid, .ntb = m->adapter, .rid = m->rid };
	return 0;
}

int smd_h_device(struct smd *d, struct smd_conn *c, uint16_t type, const void *p,
		 void *out, uint32_t *outlen, int *out_fd)
{
	(void)out_fd;
	if (!d->devs_pool)
		return -ENODEV;
	switch (type) {
	case SMIO_DEV_RELEASE_EXCL:
		return h_dev_release_excl(d, c, p);
	case SMIO_DEV_SEG_CONNECT:
		return h_dev_seg_connect(d, c, p, out, outlen);
	case SMIO_DEV_MAP_LOCAL:
	case SMIO_DEV_MAP_REMOTE:
		return h_dev_map(d, c, type, p, out, outlen);
	case SMIO_DEV_UNMAP:
		return h_dev_unmap(d, c, p);
	case SMIO_DEV_RID:
		return h_dev_rid(d, c, p);
	case SMIO_DEV_SEG_CREATE:
		return h_dev_seg_create(d, c, p, out, outlen);
	case SMIO_PEER_DEV_SEG_CREATE:
	case SMIO_PEER_DEV_SEG_LOOKUP: {
		struct smio_peer_dev_seg m;
		int rc;

		memcpy(&m, p, sizeof(m));
		rc = type == SMIO_PEER_DEV_SEG_CREATE ? smd_devs_lend_seg_create(d, c->cid, c->host, &m) :
			smd_devs_lend_seg_lookup(d, c->cid, c->host, &m);
		if (rc)
			return rc;
		memcpy(out, &m, sizeof(m));
		*outlen = sizeof(m);
		return 0;
	}
	case SMIO_PEER_DEV_LIST:
		return smd_devs_local_list(d, out, SMIO_MAX_PAYLOAD, outlen);
	case SMIO_PEER_DEV_BORROW: {
		const struct smio_peer_dev_borrow *m = p;
		struct smio_peer_dev_ref *o = out;
		uint32_t ref;
		int rc = smd_devs_lend_borrow(d, c->cid, m->bdf, m->flags, &ref);

		if (rc)
			return rc;
		*o = (struct smio_peer_dev_ref){ .bdf = m->bdf, .ref = ref };
		*outlen = sizeof(*o);
		return 0;
	}
	case SMIO_PEER_DEV_RETURN:
		return smd_devs_lend_return(d, c->cid, p);
	case SMIO_PEER_DEV_RELEASE_EXCL:
		return smd_devs_lend_release_excl(d, c->cid, p);
	case SMIO_PEER_DEV_BAR: {
		struct smio_peer_dev_bar m;
		int rc;

		memcpy(&m, p, sizeof(m));
		rc = smd_devs_lend_bar(d, c->cid, &m);
		if (rc)
			return rc;
		memcpy(out, &m, sizeof(m));
		*outlen = sizeof(m);
		return 0;
	}
	case SMIO_PEER_DEV_MAP: {
		struct smio_peer_dev_map m;
		int rc;

		memcpy(&m, p, sizeof(m));
		rc = smd_devs_lend_map(d, c->cid, c->host, &m);
		if (rc)
			return rc;
		memcpy(out, &m, sizeof(m));
		*outlen = sizeof(m);
		return 0;
	}
	case SMIO_PEER_DEV_UNMAP:
		return smd_devs_lend_unmap(d, c->cid, p);
	default:
		return -EOPNOTSUPP;
	}
}

/* ---------- connection close ---------- */

/* Our peer connection to host is gone: the lender dropped our borrows. */
static void lender_lost(struct smd *d, uint32_t host)
{
	struct smd_devs *s = d->devs_pool;

	for (unsigned i = 0; i < s->nbmaps; i++)
		if (s->bmaps[i].host == host && host != d->host_id)
			s->bmaps[i].lmap = 0;
}

void smd_dev_conn_closed(struct smd *d, struct smd_conn *c)
{
	struct smd_devs *s = d->devs_pool;
	uint32_t cid = c->cid;

	if (!s || !cid)
		return;
	fab_host_lock(d->host);
	if (c->outgoing)
		lender_lost(d, c->host);
	/* The process's device mappings, then its borrows: do not wait. A
	 * mapping made through another descriptor of the process of a
	 * connection made through this one goes too: the connection is about to
	 * be disconnected, and its memory must not stay reachable by the device.
	 * (A local segment lingers while the reference of the mapping holds it.) */
	for (unsigned i = 0; i < s->nbmaps;) {
		if (s->bmaps[i].cid != cid && (s->bmaps[i].local || s->bmaps[i].owner != cid)) {
			i++;
			continue;
		}
		if (!s->bmaps[i].lmap) {
			struct bmap bm = s->bmaps[i];

			s->bmaps[i] = s->bmaps[--s->nbmaps];
			if (bm.local)
				smd_seg_local_put(d, bm.segid, bm.segref, bm.cid);
			else
				smd_seg_conn_hold(d, c, bm.conn, -1, NULL, NULL, NULL, NULL, NULL);
			continue;
		}
		bmap_drop(d, c, i, false);
	}
	for (unsigned i = 0; i < s->nbrws;) {
		struct brw b = s->brws[i];
		struct smio_peer_dev_ref r = { .bdf = b.bdf, .ref = b.ref };

		if (b.cid != cid) {
			i++;
			continue;
		}
		s->brws[i] = s->brws[--s->nbrws];
		/* Its device segments in our RAM are the process's: the segment
		 * service frees them with the connection. */
		for (unsigned k = 0; k < s->nbsegs;) {
			if (s->bsegs[k].borrow == b.handle)
				s->bsegs[k] = s->bsegs[--s->nbsegs];
			else
				k++;
		}
		if (b.host != d->host_id)
			smd_peer_post(d, b.host, SMIO_PEER_DEV_RETURN, &r, sizeof(r));
	}
	/* Borrows held through this connection (a borrower daemon, or a local process). */
	for (unsigned i = 0; i < s->nlends;) {
		if (s->lends[i].holder == cid)
			smd_devs_lend_drop(d, &s->lends[i]);
		else
			i++;
	}
	for (unsigned i = 0; i < s->nrids;) {
		if (s->rids[i].cid == cid) {
			ntb_rid_put(ntb_drv_of(d->host, s->rids[i].ntb), s->rids[i].rid);
			s->rids[i] = s->rids[--s->nrids];
		} else {
			i++;
		}
	}
	fab_host_unlock(d->host);
}
