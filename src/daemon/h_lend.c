// SPDX-License-Identifier: MIT
/*
 * Device Lending in the daemon (docs/lending.md): the LEND_* and
 * PEER_LEND_* messages over src/host/lend.c (lender) and shadow.c (borrower).
 * The lender's own tables and lend set-up are in lend_lender.c.
 *
 * Lender: a device is lent to one borrowing host at a time. The lend is an
 * exclusive borrow in the SmartIO pool (h_device.c, through its own
 * PEER_DEV_BORROW/RETURN), held by the borrower daemon's peer connection:
 * that is the lease. SISCI borrowers then get only shared "guest" borrows
 * (its memory BARs, not its registers, no device DMA), a device SISCI has
 * borrowed cannot be lent, and when the borrower's connection goes (it died,
 * even by SIGKILL) the pool drops the borrow and we reclaim the device: its
 * windows are torn down and it is quiesced (bus mastering, decoding, MSI-X
 * off) before anyone else may have it.
 *
 * Borrower: LEND_BORROW (admin) asks the lender for a grant, hot-adds the
 * shadow device (drivers bind unmodified), LEND_RETURN refuses while a
 * driver is bound. Config cycles and P2P windows go to the lender as
 * PEER_LEND_* requests from a worker; DMA maps never do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "diag.h"
#include "util/log.h"
#include "fabric/ntb.h"
#include "host/ntb_drv.h"
#include "dev_priv.h"
#include "lend_priv.h"

/* ---------- borrower: the transport to the lender ---------- */


static int t_cfg_read(void *arg, uint32_t off, uint32_t size, uint32_t *val)
{
	struct smd_borrowed *b = arg;

	return smd_peer_cfg(b->d, b->lender, SMIO_PEER_LEND_CFG, b->lbdf, b->lost, false, off,
			    size, val);
}

static int t_cfg_write(void *arg, uint32_t off, uint32_t size, uint32_t val)
{
	struct smd_borrowed *b = arg;

	return smd_peer_cfg(b->d, b->lender, SMIO_PEER_LEND_CFG, b->lbdf, b->lost, true, off,
			    size, &val);
}

static int t_p2p(struct smd_borrowed *b, uint16_t type, uint32_t host, uint64_t addr,
		 uint64_t size, struct smio_peer_lend_p2p *r)
{
	struct smio_peer_lend_p2p m = { .bdf = b->lbdf, .host = host, .addr = addr,
					.size = size };
	uint32_t rlen;
	int rc = b->lost ? -ENODEV : smd_peer_request(b->d, b->lender, type, &m, sizeof(m), r, sizeof(*r), &rlen,
				  NULL);

	return rc ? rc : rlen != sizeof(*r) ? -EPROTO : 0;
}

static int t_p2p_map(void *arg, uint32_t host, uint64_t addr, uint64_t size, uint64_t *bus)
{
	struct smio_peer_lend_p2p r;
	int rc = t_p2p(arg, SMIO_PEER_LEND_P2P, host, addr, size, &r);

	if (!rc)
		*bus = r.bus;
	return rc;
}

static int t_route_hops(void *arg, uint64_t bus, unsigned *hops)
{
	struct smio_peer_lend_p2p r;
	int rc = t_p2p(arg, SMIO_PEER_LEND_HOPS, 0, bus, 4, &r);

	if (!rc)
		*hops = r.hops;
	return rc;
}

static void t_release(void *arg)
{
	struct smd_borrowed *b = arg;

	b->pdev = NULL;
}

static struct smd_borrowed *brw_find(struct smd_lend *l, uint32_t fdid)
{
	for (unsigned i = 0; i < SMD_LEND_MAX; i++)
		if (l->brw[i].used && l->brw[i].fdid == fdid)
			return &l->brw[i];
	return NULL;
}

static uint32_t own_node(struct smd *d)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].id == d->host_id)
			return d->topo->hosts[i].node_id;
	return 0;
}

static int lender_of(struct smd *d, uint32_t fdid, uint32_t *host)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == SMIO_FDID_NODE(fdid)) {
			*host = d->topo->hosts[i].id;
			return 0;
		}
	return -ENODEV;
}

static void info_of(struct smd_borrowed *b, struct smio_lend_info *o)
{
	struct pci_dev *p = b->pdev;

	memset(o, 0, sizeof(*o));
	o->fdid = b->fdid;
	o->lender = b->lender;
	if (!p)
		return;
	o->bdf = p->bdf;
	o->bound = p->driver != NULL;
	for (unsigned i = 0; i < 6; i++) {
		o->bar_addr[i] = p->bar_addr[i];
		o->bar_size[i] = p->bar_size[i];
	}
	snprintf(o->name, sizeof(o->name), "%s", p->name);
	if (p->driver && p->driver->name)
		snprintf(o->driver, sizeof(o->driver), "%s", p->driver->name);
}

/* Drop a borrowed device: the shadow (force: driver unbound first), then the lender's part. */
static void brw_drop(struct smd *d, struct smd_borrowed *b, bool tell_lender)
{
	struct smio_peer_lend_ref r = { .bdf = b->lbdf };

	if (b->pdev)
		shadow_destroy(d->pci, b->pdev, true);   /* the transport (b) is still valid */
	b->used = false;   /* from here on, a connection closing does not find it */
	if (tell_lender)
		smd_peer_request(d, b->lender, SMIO_PEER_LEND_RELEASE, &r, sizeof(r), NULL, 0,
				 NULL, NULL);
	smd_lend_msi_del(d, b->msi_slot);
	memset(b, 0, sizeof(*b));
}

/*
 * Remove the shadow of a lender that went away: a surprise removal, on a
 * worker (its driver unbinds), keyed by the shadow so that no request of its
 * driver runs meanwhile.
 */
struct drop_work {
	struct smd_work w;
	uint32_t fdid;
};

static void drop_run(struct smd_work *w)
{
	struct drop_work *x = (struct drop_work *)w;
	struct smd_borrowed *b = w->d->lend ? brw_find(w->d->lend, x->fdid) : NULL;

	if (b && b->lost)
		brw_drop(w->d, b, false);
}

static void drop_done(struct smd_work *w)
{
	free(w);
}

static void drop_later(struct smd *d, struct smd_borrowed *b)
{
	struct drop_work *x = calloc(1, sizeof(*x));

	if (!x)
		return;         /* it stays lost: config cycles fail, LEND_RETURN removes it */
	x->fdid = b->fdid;
	x->w.run = drop_run;
	x->w.done = drop_done;
	x->w.key = 0x200000000ull | b->fdid;
	if (b->pdev)
		x->w.key2 = 0x100000000ull | b->pdev->bdf;
	smd_work_queue(d, &x->w);
}

static int h_borrow(struct smd *d, const struct smio_lend_req *m, struct smio_lend_info *o)
{
	uint64_t target, size;
	int rc = shadow_dma_target(d->pci, &target, &size);

	return rc ? rc : smd_lend_borrow(d, m->fdid, target, size, false, o, NULL);
}

int smd_lend_borrow(struct smd *d, uint32_t fdid, uint64_t dma_target, uint64_t dma_size,
		    bool mdev, struct smio_lend_info *o, struct pci_dev **shadow)
{
	struct smd_lend *l = d->lend;
	struct smio_lend_req mm = { .fdid = fdid }, *m = &mm;
	struct smio_peer_lend_setup req = { .bdf = SMIO_FDID_BDF(fdid), .dma_target = dma_target,
					    .dma_size = dma_size,
					    .flags = mdev ? SMIO_LEND_SETUP_VM : 0 };
	struct smio_lend_grant gr;
	struct shadow_transport t = { t_cfg_read, t_cfg_write, t_p2p_map, t_route_hops,
				      t_release, NULL };
	struct smd_borrowed *b = NULL;
	struct lend_grant g;
	uint32_t lender, rlen;
	int rc, fd = -1;

	rc = lender_of(d, m->fdid, &lender);
	if (rc)
		return rc;
	if (lender == d->host_id)
		return -EINVAL;   /* a host's own devices are not lent to itself */
	if (brw_find(l, m->fdid))
		return -EALREADY;
	if (!mdev && smd_vm_holds(d, m->fdid))
		return -EBUSY;    /* reserved for a VM of ours (h_vm_life.c) */
	for (unsigned i = 0; i < SMD_LEND_MAX && !b; i++)
		if (!l->brw[i].used)
			b = &l->brw[i];
	if (!b)
		return -ENOSPC;
	rc = smd_peer_request(d, lender, SMIO_PEER_LEND_SETUP, &req, sizeof(req), &gr,
			      sizeof(gr), &rlen, &fd);
	if (rc)
		return rc;
	*b = (struct smd_borrowed){ .used = true, .d = d, .fdid = m->fdid, .lender = lender,
				    .lbdf = req.bdf, .msi_slot = -1 };
	if (rlen != sizeof(gr) || fd < 0 || gr.bdf != req.bdf || gr.borrower != d->host_id ||
	    gr.lender != lender || gr.dma_target != req.dma_target ||
	    gr.dma_size != req.dma_size) {
		if (fd >= 0)
			close(fd);
		brw_drop(d, b, true);
		return -EPROTO;
	}
	b->msi_slot = smd_lend_msi_add(d, fd);
	if (b->msi_slot < 0) {
		close(fd);
		brw_drop(d, b, true);
		return -ENOSPC;
	}
	SMD_GRANT_IDENTITY(&g, &gr, lender, d->host_id);
	g.dma_bus = gr.dma_bus;
	g.dma_target = gr.dma_target;
	g.dma_size = gr.dma_size;
	g.msi_bus = gr.msi_bus;
	g.mdev = mdev;
	t.arg = b;
	/* Hot-add: drivers are offered the device now (config cycles to the lender). */
	rc = shadow_create(d->pci, &g, &t, &b->pdev);
	if (rc) {
		brw_drop(d, b, true);
		return rc;
	}
	info_of(b, o);
	if (shadow)
		*shadow = b->pdev;
	smio_info("borrowed %s from host %u as %02x:%02x.%x (%s)", g.name, lender,
			FAB_BDF_BUS(o->bdf), FAB_BDF_DEV(o->bdf), FAB_BDF_FN(o->bdf),
			o->bound ? o->driver : "no driver");
	smd_event(d, SMIO_EV_BORROW, req.bdf, lender, "borrowed %s from host %u as %02x:%02x.%x",
		  g.name, lender, FAB_BDF_BUS(o->bdf), FAB_BDF_DEV(o->bdf), FAB_BDF_FN(o->bdf));
	return 0;
}

void smd_lend_vm_return(struct smd *d, uint32_t fdid)
{
	struct smd_borrowed *b = brw_find(d->lend, fdid);

	if (!b)
		return;
	smd_event(d, SMIO_EV_RETURN, b->lbdf, b->lender, "the VM returned %s to host %u",
		  b->pdev ? b->pdev->name : "device", b->lender);
	brw_drop(d, b, true);
}

int smd_lend_lent_to(struct smd *d, uint16_t bdf)
{
	struct smd_lent *e = d->lend ? smd_lent_find(d->lend, 0, bdf) : NULL;

	return e ? (int)e->borrower : -1;
}

int smd_lend_vm_mirror(struct smd *d, uint32_t fdid, uint64_t iova, uint64_t bus, uint64_t size)
{
	struct smd_borrowed *b = brw_find(d->lend, fdid);
	struct smio_peer_vm_dma r = { .iova = iova, .bus = bus, .size = size };

	if (!b)
		return -ENOENT;
	r.bdf = b->lbdf;
	return smd_peer_request(d, b->lender, SMIO_PEER_VM_DMA, &r, sizeof(r), NULL, 0, NULL,
				NULL);
}

static int h_return(struct smd *d, const struct smio_lend_req *m)
{
	struct smd_borrowed *b = brw_find(d->lend, m->fdid);
	bool force = m->flags & SMIO_LEND_F_FORCE;
	uint32_t held;

	if (!b)
		return -ENOENT;
	/* A holder (a mount serving it) first: unbinding would pull it from under them. */
	held = b->pdev ? smd_lend_holders(d, b->pdev->bdf, NULL) : 0;
	if (held && !force)
		return -ETXTBSY;
	if (b->pdev && b->pdev->driver && !(m->flags & SMIO_LEND_F_UNBIND) && !force)
		return -EBUSY;    /* in use: its driver must unbind first */
	if (held)
		smio_warn("return of 0x%08x forced: %u holder(s) see it gone", b->fdid, held);
	if (b->pdev)
		smd_lend_hold_drop(d, b->pdev->bdf);
	smd_event(d, SMIO_EV_RETURN, b->lbdf, b->lender, "returned %s to host %u",
		  b->pdev ? b->pdev->name : "device", b->lender);
	brw_drop(d, b, true);
	return 0;
}

static int h_pool(struct smd *d, struct smd_conn *c, struct smio_lend_pool *out,
		  uint32_t *outlen)
{
	const uint32_t nh = d->topo->nhosts;
	struct smio_lend_pool *mine = malloc(SMIO_MAX_PAYLOAD), *o = malloc(SMIO_MAX_PAYLOAD);
	struct smd_multi *v = calloc(nh, sizeof(*v));
	uint32_t n = 0;
	unsigned nv = 0;
	int rc = -ENOMEM;

	if (!mine || !o || !v)
		goto out;
	/* Every other host at once: a host that does not answer costs one timeout. */
	for (uint32_t i = 0; i < nh; i++) {
		if (d->topo->hosts[i].id == d->host_id)
			continue;
		v[nv].host = d->topo->hosts[i].id;
		v[nv].cap = SMIO_MAX_PAYLOAD;
		v[nv].rbuf = malloc(SMIO_MAX_PAYLOAD);
		if (!v[nv].rbuf)
			goto out;
		nv++;
	}
	smd_peer_request_all(d, SMIO_PEER_LEND_POOL, NULL, 0, v, nv);
	rc = smd_lend_pool_local(d, c, mine, SMIO_MAX_DEVS);
	for (uint32_t i = 0, k = 0; !rc && i < nh; i++) {
		const struct smio_lend_pool *part = mine;

		if (d->topo->hosts[i].id != d->host_id) {
			if (v[k].rc) {
				k++;
				continue;     /* a host that is down lends nothing */
			}
			part = v[k++].rbuf;
		}
		for (uint32_t j = 0; j < part->n && n < SMIO_MAX_DEVS; j++)
			o->e[n++] = part->e[j];
	}
	o->n = n;
	o->pad = 0;
	*outlen = (uint32_t)(sizeof(*o) + n * sizeof(o->e[0]));
	memcpy(out, o, *outlen);
out:
	for (unsigned k = 0; v && k < nv; k++)
		free(v[k].rbuf);
	free(v);
	free(mine);
	free(o);
	return rc;
}

int smd_h_lend(struct smd *d, struct smd_conn *c, uint16_t type, const void *p, void *out,
	       uint32_t *outlen, int *out_fd)
{
	struct smd_lend *l = d->lend;
	struct smd_lent *e;
	int rc;

	*outlen = 0;
	if (!l)
		return -EOPNOTSUPP;
	switch (type) {
	case SMIO_LEND_POOL:
		return h_pool(d, c, out, outlen);
	case SMIO_LEND_BORROW:
		rc = h_borrow(d, p, out);
		if (!rc)
			*outlen = sizeof(struct smio_lend_info);
		return rc;
	case SMIO_LEND_RETURN:
		return h_return(d, p);
	case SMIO_LEND_HOLD:
		return smd_lend_hold(d, c, p);
	case SMIO_LEND_HOLDERS: {
		struct smd_borrowed *b = brw_find(l, ((const struct smio_lend_req *)p)->fdid);

		return b && b->pdev ? smd_lend_holders_reply(d, b->pdev->bdf, out, outlen) : -ENOENT;
	}
	case SMIO_PEER_LEND_POOL: {
		struct smio_lend_pool *o = out;

		rc = smd_lend_pool_local(d, c, o, SMIO_MAX_DEVS);
		*outlen = (uint32_t)(sizeof(*o) + o->n * sizeof(o->e[0]));
		return rc;
	}
	case SMIO_LEND_P2P: {
		/* Filled in a local: peers served while we ask the lender reuse `out`. */
		struct smio_lend_p2p m = *(const struct smio_lend_p2p *)p;
		struct smd_borrowed *cl, *pr;
		struct pci_dev *prov = NULL;

		cl = brw_find(l, m.client);
		pr = brw_find(l, m.provider);
		if (pr)
			prov = pr->pdev;
		else if (SMIO_FDID_NODE(m.provider) == own_node(d))
			prov = pci_get_dev(d->pci, SMIO_FDID_BDF(m.provider));  /* ours */
		if (!cl || !cl->pdev || !prov)
			return -ENOENT;
		if (!prov->bar_size[m.bar])
			return -EINVAL;
		rc = pci_p2pdma_bus(cl->pdev, prov, m.bar, &m.bus);
		if (!rc) {
			rc = pci_p2pdma_distance(prov, m.bar, cl->pdev);
			m.hops = rc < 0 ? 0 : (uint32_t)rc;
			rc = rc < 0 ? rc : 0;
		}
		*(struct smio_lend_p2p *)out = m;
		*outlen = sizeof(m);
		return rc;
	}
	case SMIO_PEER_LEND_SETUP:
		rc = smd_lend_setup_req(d, c, p, out, out_fd);
		if (!rc)
			*outlen = sizeof(struct smio_lend_grant);
		return rc;
	default:
		break;
	}
	/* The rest act on a lend this connection holds. */
	e = smd_lent_find(l, c->cid, ((const struct smio_peer_lend_ref *)p)->bdf);
	if (!e)
		return -ENOENT;
	switch (type) {
	case SMIO_PEER_LEND_RELEASE:
		smio_info("host %u returned %02x:%02x.%x", e->borrower, FAB_BDF_BUS(e->bdf),
				FAB_BDF_DEV(e->bdf), FAB_BDF_FN(e->bdf));
		smd_event(d, SMIO_EV_RETURN, e->bdf, e->borrower, "host %u returned %02x:%02x.%x",
			  e->borrower, FAB_BDF_BUS(e->bdf), FAB_BDF_DEV(e->bdf), FAB_BDF_FN(e->bdf));
		smd_lent_drop(d, c, e, true);
		return 0;
	case SMIO_PEER_VM_DMA: {
		const struct smio_peer_vm_dma *v = p;

		rc = lend_vm_mirror(d->host, e->s, v->iova, v->bus, v->size);
		if (!rc)
			smio_info("host %u's VM: %02x:%02x.%x DMAs at guest-physical [0x%llx, +%llu MiB)",
				  e->borrower, FAB_BDF_BUS(e->bdf), FAB_BDF_DEV(e->bdf),
				  FAB_BDF_FN(e->bdf), (unsigned long long)v->iova,
				  (unsigned long long)(v->size >> 20));
		return rc;
	}
	case SMIO_PEER_LEND_CFG: {
		struct smio_peer_lend_cfg *o = out;

		*o = *(const struct smio_peer_lend_cfg *)p;
		rc = o->write ? lend_cfg_write(d->host, e->bdf, o->off, o->size, o->value)
			      : lend_cfg_read(d->host, e->bdf, o->off, o->size, &o->value);
		if (!o->write && o->size < 4)
			o->value &= (1u << (8 * o->size)) - 1;
		*outlen = sizeof(*o);
		return rc;
	}
	case SMIO_PEER_LEND_P2P:
	case SMIO_PEER_LEND_HOPS: {
		struct smio_peer_lend_p2p m = *(const struct smio_peer_lend_p2p *)p;

		/* A route may step through peers (served meanwhile): `out` is written last. */
		if (type == SMIO_PEER_LEND_P2P) {
			rc = m.size ? lend_p2p_map(e->s, m.host, m.addr, m.size, &m.bus) : -EINVAL;
		} else {
			unsigned hops = 0;

			rc = lend_route_hops(d->host, e->bdf, m.addr, &hops);
			m.hops = hops;
		}
		*(struct smio_peer_lend_p2p *)out = m;
		*outlen = sizeof(m);
		return rc;
	}
	default:
		return -EOPNOTSUPP;
	}
}

/* ---------- lifetimes ---------- */

void smd_lend_conn_closed(struct smd *d, struct smd_conn *c)
{
	struct smd_lend *l = d->lend;

	if (!l || !c->cid)
		return;
	fab_host_lock(d->host);
	/* Lender: the borrower is gone (its lease with it): reclaim and reset. */
	for (unsigned i = 0; i < SMD_LEND_MAX; i++)
		if (l->lent[i].used && l->lent[i].cid == c->cid) {
			smio_info("reclaimed %02x:%02x.%x from host %u (connection lost)",
					FAB_BDF_BUS(l->lent[i].bdf),
					FAB_BDF_DEV(l->lent[i].bdf), FAB_BDF_FN(l->lent[i].bdf),
					l->lent[i].borrower);
			smd_event(d, SMIO_EV_RECLAIM, l->lent[i].bdf, l->lent[i].borrower,
				  "reclaimed %02x:%02x.%x from host %u (connection lost)",
				  FAB_BDF_BUS(l->lent[i].bdf), FAB_BDF_DEV(l->lent[i].bdf),
				  FAB_BDF_FN(l->lent[i].bdf), l->lent[i].borrower);
			smd_lent_drop(d, c, &l->lent[i], false);   /* the pool drops the borrow */
		}
	/*
	 * Borrower: the lender is gone (the lease is this connection: its EOF
	 * is immediate when the lender dies). Right here on the loop, without
	 * waiting: config cycles fail from now on, the iomaps read all-ones and
	 * the driver hears perm_failure (it fails what is in flight); then the
	 * surprise removal itself runs on a worker, after the driver's current
	 * request (which now fails fast).
	 */
	if (c->outgoing)
		for (unsigned i = 0; i < SMD_LEND_MAX; i++)
			if (l->brw[i].used && l->brw[i].lender == c->host && !l->brw[i].lost) {
				l->brw[i].lost = true;
				if (l->brw[i].pdev)
					shadow_lost(l->brw[i].pdev);
				smio_warn("lender host %u lost: surprise-removing its %s",
					  c->host, l->brw[i].pdev ? l->brw[i].pdev->name : "device");
				smd_event(d, SMIO_EV_RECLAIM, l->brw[i].lbdf, c->host,
					  "lender host %u lost: surprise-removing its %s", c->host,
					  l->brw[i].pdev ? l->brw[i].pdev->name : "device");
				drop_later(d, &l->brw[i]);
			}
	fab_host_unlock(d->host);
}

/*
 * Tables changed at a peer (PEER_INVALIDATE): a link down at the lender or on
 * the way is known to us only so. Each shadow resolves its BAR windows again
 * on a worker (keyed like its driver's requests) and freezes or resumes its
 * channel; one pass per shadow at a time, another queued by a later change.
 */
struct reval_work {
	struct smd_work w;
	uint32_t fdid;
};

static void reval_run(struct smd_work *w)
{
	struct reval_work *x = (struct reval_work *)w;
	struct smd_borrowed *b = w->d->lend ? brw_find(w->d->lend, x->fdid) : NULL;

	if (!b || b->lost || !b->pdev)
		return;
	b->reval_queued = false;   /* a change from now on needs another pass */
	shadow_revalidate(b->pdev);
}

void smd_lend_routes_changed(struct smd *d)
{
	struct smd_lend *l = d->lend;

	if (!l)
		return;
	fab_host_lock(d->host);
	for (unsigned i = 0; i < SMD_LEND_MAX; i++) {
		struct smd_borrowed *b = &l->brw[i];
		struct reval_work *x;

		if (!b->used || b->lost || !b->pdev || b->reval_queued)
			continue;
		x = calloc(1, sizeof(*x));
		if (!x)
			break;
		x->fdid = b->fdid;
		x->w.run = reval_run;
		x->w.done = drop_done;
		x->w.key = 0x200000000ull | b->fdid;
		x->w.key2 = 0x100000000ull | b->pdev->bdf;
		b->reval_queued = true;
		smd_work_queue(d, &x->w);
	}
	fab_host_unlock(d->host);
}

/* The BDF of fdid's shadow here, or -1. */
int smd_lend_shadow_bdf(struct smd *d, uint32_t fdid)
{
	struct smd_borrowed *b = d->lend ? brw_find(d->lend, fdid) : NULL;

	return b && b->pdev ? b->pdev->bdf : -1;
}

int smd_lend_init(struct smd *d)
{
	struct smd_lend *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return -ENOMEM;
	d->lend = l;
	rc = smd_lend_msi_start(d);
	if (rc) {
		smd_lend_fini(d);
		return rc;
	}
	return 0;
}

void smd_lend_fini(struct smd *d)
{
	struct smd_lend *l = d->lend;

	if (!l)
		return;
	for (unsigned i = 0; i < SMD_LEND_MAX; i++) {
		if (l->brw[i].used) {
			l->brw[i].lost = true;
			brw_drop(d, &l->brw[i], false);
		}
		if (l->lent[i].used)
			smd_lent_drop(d, NULL, &l->lent[i], false);
	}
	smd_lend_msi_stop(d);
	d->lend = NULL;
	free(l);
}
