// SPDX-License-Identifier: MIT
/*
 * The cluster's device pool as a process sees it: DEV_LIST, DEV_BORROW and
 * DEV_RETURN, answered on the loop through continuations (no worker, no
 * waiting): the lenders are asked with smd_req_call / smd_req_fanout, and
 * the borrower's tables change only when their answers are in. The rest of
 * the borrower side (device-side mappings, device segments) is in
 * h_device_brw.c; the lender side in h_device.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "dev_priv.h"
#include "util/log.h"

static int lender_of(struct smd *d, uint32_t fdid, uint32_t *host)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == SMIO_FDID_NODE(fdid)) {
			*host = d->topo->hosts[i].id;
			return 0;
		}
	return -ENODEV;
}

/* A lender that cannot be reached or answered nonsense: as SISCI reports it. */
static int unreachable(int rc)
{
	return rc == -EHOSTDOWN || rc == -EPROTO ? -EHOSTUNREACH : rc;
}

/* ---------- DEV_LIST: every host's lendable devices at once ---------- */

static void list_done(struct smd_req *r, struct smd_reply *v, unsigned n)
{
	struct smd *d = r->d;
	struct smio_dev_list *o = r->out;
	struct smio_dev_list *mine = malloc(SMIO_MAX_PAYLOAD);
	uint32_t count = 0, rlen;
	int rc = -ENOMEM;

	if (!mine)
		goto out;
	rc = smd_devs_local_list(d, mine, SMIO_MAX_PAYLOAD, &rlen);
	if (rc)
		goto out;
	/* Host order: every daemon gives the same list. */
	for (uint32_t i = 0, k = 0; i < d->topo->nhosts; i++) {
		uint32_t host = d->topo->hosts[i].id;
		const struct smio_dev_list *part = mine;

		if (host != d->host_id) {
			const struct smd_reply *x = &v[k++];

			/* A host that does not answer lends nothing now. */
			if (x->rc || x->len < sizeof(*part))
				continue;
			part = (const struct smio_dev_list *)x->payload;
		}
		for (uint32_t j = 0; j < part->n && count < SMIO_MAX_DEVS; j++)
			/* A peer may only speak for its own devices. */
			if (part->d[j].host == host)
				o->d[count++] = part->d[j];
	}
	o->n = count;
	o->pad = 0;
	r->outlen = (uint32_t)(sizeof(*o) + count * sizeof(o->d[0]));
out:
	free(mine);
	smd_req_done(r, rc);
}

static int dev_list(struct smd_req *r)
{
	struct smd *d = r->d;
	uint32_t *hosts = malloc(d->topo->nhosts * sizeof(*hosts));
	unsigned n = 0;
	int rc;

	if (!hosts)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].id != d->host_id)
			hosts[n++] = d->topo->hosts[i].id;
	/* A host that does not answer costs one timeout, whatever their number. */
	rc = smd_req_fanout(r, hosts, n, SMIO_PEER_DEV_LIST, NULL, 0, list_done);
	free(hosts);
	return rc;
}

/* ---------- DEV_BORROW ---------- */

struct borrow {
	struct smio_dev_borrow m;
	uint32_t host;
	struct smio_dev_info info;
};

/* The lender counted our borrow (ref): keep it, and answer. */
static int borrow_keep(struct smd_req *r, const struct borrow *x, uint32_t ref)
{
	struct smd_devs *s = r->d->devs_pool;
	struct smio_dev_info info = x->info;
	struct brw b = { .cid = r->c->cid, .fdid = x->m.fdid, .bdf = SMIO_FDID_BDF(x->m.fdid),
			 .exclusive = x->m.flags & SMIO_DEV_F_EXCLUSIVE, .host = x->host,
			 .ref = ref };
	int rc = RESERVE(s, brws);

	if (rc)
		return rc;
	b.handle = smd_devs_new_id(s);
	s->brws[s->nbrws++] = b;
	/* The borrow counts itself now. */
	info.borrowers++;
	info.exclusive = b.exclusive;
	if (b.exclusive)
		info.borrowers = 1;
	*(struct smio_dev_borrowed *)r->out = (struct smio_dev_borrowed){ .handle = b.handle,
		.flags = x->m.flags, .info = info };
	r->outlen = sizeof(struct smio_dev_borrowed);
	return 0;
}

static void borrowed(struct smd_req *r, int rc, const void *payload, uint32_t len, int fd)
{
	struct borrow *x = r->priv;
	struct smio_peer_dev_ref ref = { 0 };

	if (!rc && len == sizeof(ref))
		memcpy(&ref, payload, sizeof(ref));
	else if (!rc)
		rc = -EPROTO;
	if (!rc && ref.bdf != SMIO_FDID_BDF(x->m.fdid))
		rc = -EPROTO;
	if (!rc) {
		rc = borrow_keep(r, x, ref.ref);
		if (rc)    /* not kept: the lender forgets it */
			smd_peer_post(r->d, x->host, SMIO_PEER_DEV_RETURN, &ref, sizeof(ref));
	}
	free(x);
	smd_req_done(r, unreachable(rc));
}

/* The lender's list: is fdid there (and lendable)? Then borrow it. */
static void listed(struct smd_req *r, int rc, const void *payload, uint32_t len, int fd)
{
	struct borrow *x = r->priv;
	const struct smio_dev_list *l = payload;
	struct smio_peer_dev_borrow q = { .bdf = SMIO_FDID_BDF(x->m.fdid), .flags = x->m.flags };

	if (!rc && len < sizeof(*l))
		rc = -EPROTO;
	if (!rc) {
		rc = -ENODEV;
		for (uint32_t k = 0; k < l->n; k++)
			if (l->d[k].fdid == x->m.fdid && l->d[k].host == x->host) {
				x->info = l->d[k];
				rc = 0;
				break;
			}
	}
	if (!rc) {
		rc = smd_req_call(r, x->host, SMIO_PEER_DEV_BORROW, &q, sizeof(q), borrowed);
		if (rc == SMD_ASYNC)
			return;
	}
	free(x);
	smd_req_done(r, unreachable(rc));
}

/* Our own device: the pool is here, nothing to wait for. */
static int borrow_local(struct smd_req *r, struct borrow *x)
{
	struct smio_dev_list *l = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen, ref;
	int rc;

	if (!l)
		return -ENOMEM;
	rc = smd_devs_local_list(r->d, l, SMIO_MAX_PAYLOAD, &rlen);
	if (!rc) {
		rc = -ENODEV;
		for (uint32_t k = 0; k < l->n; k++)
			if (l->d[k].fdid == x->m.fdid) {
				x->info = l->d[k];
				rc = 0;
				break;
			}
	}
	free(l);
	if (!rc)
		rc = smd_devs_lend_borrow(r->d, r->c->cid, SMIO_FDID_BDF(x->m.fdid), x->m.flags,
					  &ref);
	if (!rc) {
		rc = borrow_keep(r, x, ref);
		if (rc) {
			struct smio_peer_dev_ref back = { .bdf = SMIO_FDID_BDF(x->m.fdid),
							  .ref = ref };

			smd_devs_lend_return(r->d, r->c->cid, &back);
		}
	}
	return rc;
}

static int dev_borrow(struct smd_req *r)
{
	struct borrow *x = calloc(1, sizeof(*x));
	int rc;

	if (!x)
		return -ENOMEM;
	memcpy(&x->m, r->p, sizeof(x->m));
	rc = lender_of(r->d, x->m.fdid, &x->host);
	if (!rc && x->host == r->d->host_id)
		rc = borrow_local(r, x);
	else if (!rc) {
		r->priv = x;
		rc = smd_req_call(r, x->host, SMIO_PEER_DEV_LIST, NULL, 0, listed);
		if (rc == SMD_ASYNC)
			return rc;
		rc = unreachable(rc);
	}
	free(x);
	return rc;
}

/* ---------- DEV_RETURN ---------- */

static void returned(struct smd_req *r, int rc, const void *payload, uint32_t len, int fd)
{
	uint32_t fdid = (uint32_t)(uintptr_t)r->priv;

	/* A lender we cannot reach has dropped the borrow with our connection. */
	if (rc && rc != -EHOSTDOWN && rc != -ENOENT)
		smio_warn("returning device %#x: %s", fdid, strerror(-rc));
	smd_req_done(r, 0);
}

static int dev_return(struct smd_req *r)
{
	const struct smio_dev_ref *m = r->p;
	struct smd *d = r->d;
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_ref ref;
	struct brw *b, cp;
	int rc;

	b = smd_devs_brw_get(s, r->c, m->handle, &rc);
	if (!b)
		return rc;
	for (unsigned i = 0; i < s->nbmaps; i++)
		if (s->bmaps[i].borrow == b->handle)
			return -EBUSY;
	if (smd_seg_borrow_conns(d, b->handle))
		return -EBUSY;
	/* Device segments placed in our RAM for it (connected ones linger). */
	for (unsigned i = 0; i < s->nbsegs;) {
		struct bseg bs = s->bsegs[i];

		if (bs.borrow != b->handle) {
			i++;
			continue;
		}
		s->bsegs[i] = s->bsegs[--s->nbsegs];
		smd_seg_dev_remove(d, bs.cid, bs.segid);
	}
	cp = *b;
	*b = s->brws[--s->nbrws];
	ref = (struct smio_peer_dev_ref){ .bdf = cp.bdf, .ref = cp.ref };
	if (cp.host == d->host_id) {
		rc = smd_devs_lend_return(d, r->c->cid, &ref);
		if (rc && rc != -ENOENT)
			smio_warn("returning device %#x: %s", cp.fdid, strerror(-rc));
		return 0;
	}
	r->priv = (void *)(uintptr_t)cp.fdid;
	rc = smd_req_call(r, cp.host, SMIO_PEER_DEV_RETURN, &ref, sizeof(ref), returned);
	return rc == SMD_ASYNC ? rc : 0;   /* not sent: the lender lost us anyway */
}

int smd_dev_pool_request(struct smd_req *r)
{
	if (!r->d->devs_pool)
		return -ENODEV;
	switch (r->type) {
	case SMIO_DEV_LIST:
		return dev_list(r);
	case SMIO_DEV_BORROW:
		return dev_borrow(r);
	case SMIO_DEV_RETURN:
		return dev_return(r);
	default:
		return -EOPNOTSUPP;
	}
}
