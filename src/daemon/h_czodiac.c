// SPDX-License-Identifier: MIT
/*
 * cZodiac sharing through running daemons (docs/czodiac.md, "In a running
 * cluster"; issue 16 item 3).
 *
 *  - The IOPort tables of the cluster's czodiac switches are switch
 *    registers: one file, DIR/czodiac.iop (struct fab_cz_state), that every
 *    daemon maps as the world's cZodiac state (as DIR/mcast.regs for
 *    multicast), so every daemon's route walk sees them. Only the OWNER's
 *    daemon writes its IOPort's entries, under the file's lock; a daemon
 *    that starts clears what an earlier run of its host left there.
 *  - CZ_SHARE (the USER's daemon): picks the UID and the free part of its
 *    port window, asks the OWNER's daemon to bind the function
 *    (PEER_CZ_BIND: RID and MMIO tables, an MSI channel for the device's
 *    interrupts), then the switch inserts the function into the USER's
 *    virtual hot-plug slot (presence detected, MSI) and the USER's hot-plug
 *    driver adds the logic full-function device, which drivers are offered.
 *    Its config cycles go to the OWNER (PEER_CZ_CFG).
 *  - CZ_UNSHARE: the attention button (MSI); the hot-plug driver unbinds the
 *    driver, removes the device and powers the slot off, upon which the
 *    function is withdrawn at the OWNER (PEER_CZ_UNBIND).
 *  - PEER_STEP carries the remap (smio_step.cz, .rid), so the requests of
 *    either side cross daemons as they cross hosts in-process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "core_priv.h"
#include "daemon.h"
#include "diag.h"
#include "fabric/czodiac_route.h"
#include "fabric/ntb.h"
#include "handlers.h"
#include "host/czodiac_hp.h"
#include "lend_priv.h"
#include "util/log.h"

#define SMD_CZ_MAX 8

/* USER: a function shared with this host, in one of our virtual slots. */
struct cz_use {
	bool used;
	struct smd *d;
	uint32_t fdid, owner, cswitch;
	uint16_t obdf;                 /* at the OWNER */
	int msi_slot;                  /* the OWNER's MSI channel, read here */
	bool lost;                     /* no OWNER to ask: config cycles fail at once */
	struct czhp_slot slot;
};

/* OWNER: a function of ours bound for a USER. */
struct cz_bound {
	bool used;
	uint32_t cid;                  /* the USER daemon's connection (the lease) */
	uint32_t user, cswitch, ref;   /* ref: the exclusive borrow in the pool */
	uint16_t bdf;
	int msi_slot;                  /* our MSI channel's write end */
	int msi_rd;                    /* the read end we handed over (ours to close) */
};

struct smd_cz {
	int fd;                        /* DIR/czodiac.iop: locked while a table changes */
	struct fab_cz_state *regs;
	struct cz_use use[SMD_CZ_MAX];
	struct cz_bound bound[SMD_CZ_MAX];
};

/* ---------- the shared tables ---------- */

static void regs_lock(struct smd_cz *z)
{
	while (flock(z->fd, LOCK_EX) && errno == EINTR)
		;
}

static void regs_unlock(struct smd_cz *z)
{
	flock(z->fd, LOCK_UN);
}

int smd_cz_init(struct smd *d)
{
	bool any = false;
	void *p;
	int fd, rc;

	for (uint32_t i = 0; i < d->topo->ncswitches; i++)
		any |= d->topo->cswitches[i].czodiac;
	d->cz = calloc(1, sizeof(*d->cz));
	if (!d->cz)
		return -ENOMEM;
	d->cz->fd = -1;
	if (!any)
		return 0;             /* no czodiac switch: nothing to share */
	rc = smd_map_shared_file(d, "czodiac.iop", sizeof(*d->cz->regs), &p, &fd);
	if (rc)
		return rc;
	d->cz->fd = fd;
	d->cz->regs = p;
	/* What an earlier run of this host left in its IOPorts goes. */
	regs_lock(d->cz);
	/* A file of another layout (an older build's): nothing in it is ours to trust. */
	if (d->cz->regs->magic != FAB_CZ_MAGIC) {
		memset(d->cz->regs, 0, sizeof(*d->cz->regs));
		d->cz->regs->magic = FAB_CZ_MAGIC;
	}
	fab_cz_write_begin(d->cz->regs);
	for (unsigned i = 0; i < FAB_CZ_MAX_IOPORTS; i++)
		if (d->cz->regs->port[i].used && d->cz->regs->port[i].owner == d->host_id)
			memset(&d->cz->regs->port[i], 0, sizeof(d->cz->regs->port[i]));
	fab_cz_write_end(d->cz->regs);
	regs_unlock(d->cz);
	d->world.cz = p;
	return 0;
}

/* ---------- OWNER ---------- */

static struct cz_bound *bound_find(struct smd_cz *z, uint32_t cid, uint16_t bdf)
{
	for (unsigned i = 0; i < SMD_CZ_MAX; i++)
		if (z->bound[i].used && z->bound[i].bdf == bdf && (!cid || z->bound[i].cid == cid))
			return &z->bound[i];
	return NULL;
}

/* Out of the IOPort; the function stops decoding and mastering, as after a lend. */
static void bound_drop(struct smd *d, struct smd_conn *c, struct cz_bound *e)
{
	struct cz_bound x = *e;

	memset(e, 0, sizeof(*e));
	regs_lock(d->cz);
	czdev_unshare(d->host, x.cswitch, x.bdf);
	regs_unlock(d->cz);
	fab_cfg_access_write(d->host, x.bdf, PCI_COMMAND, 2, PCI_COMMAND_INTX_DISABLE);
	fab_host_tables_changed(d->host);
	smd_lend_msi_channel_close(d, x.msi_slot);
	if (x.msi_rd >= 0)
		close(x.msi_rd);
	if (c) {
		struct smio_peer_dev_ref r = { .bdf = x.bdf, .ref = x.ref };
		uint32_t olen = 0;
		uint8_t none[8];
		int ofd = -1;

		smd_h_device(d, c, SMIO_PEER_DEV_RETURN, &r, none, &olen, &ofd);
	}
	smio_info("host %u let %02x:%02x.%x go (cZodiac)", x.user, FAB_BDF_BUS(x.bdf),
		  FAB_BDF_DEV(x.bdf), FAB_BDF_FN(x.bdf));
	smd_event(d, SMIO_EV_RETURN, x.bdf, x.user, "cZodiac: host %u let %02x:%02x.%x go",
		  x.user, FAB_BDF_BUS(x.bdf), FAB_BDF_DEV(x.bdf), FAB_BDF_FN(x.bdf));
}

static int owner_bind(struct smd *d, struct smd_conn *c, const struct smio_peer_cz_bind *m,
		      struct smio_cz_grant *o, int *out_fd)
{
	struct smd_cz *z = d->cz;
	struct smio_peer_dev_borrow b = { .bdf = m->bdf, .flags = SMIO_DEV_F_EXCLUSIVE };
	struct smio_peer_dev_ref ref;
	struct cz_bound *e = NULL;
	struct lend_grant g;
	uint32_t olen = 0;
	int ofd = -1, rc;

	if (!d->world.cz)
		return -EOPNOTSUPP;
	if (c->outgoing || c->host == d->host_id)
		return -EINVAL;
	if (bound_find(z, 0, m->bdf))
		return -EBUSY;
	for (unsigned i = 0; i < SMD_CZ_MAX && !e; i++)
		if (!z->bound[i].used)
			e = &z->bound[i];
	if (!e)
		return -ENOSPC;
	/* The lease: an exclusive borrow in the pool (no lend meanwhile), held by c. */
	rc = smd_h_device(d, c, SMIO_PEER_DEV_BORROW, &b, &ref, &olen, &ofd);
	if (rc)
		return rc;
	*e = (struct cz_bound){ .used = true, .cid = c->cid, .user = c->host,
				.cswitch = m->cswitch, .ref = ref.ref, .bdf = m->bdf,
				.msi_slot = -1, .msi_rd = -1 };
	regs_lock(z);
	rc = czdev_share(d->host, m->cswitch, m->bdf, c->host, m->uid, m->ubar, m->ubar_size, &g);
	regs_unlock(z);
	if (rc) {
		uint8_t none[8];

		smd_h_device(d, c, SMIO_PEER_DEV_RETURN, &ref, none, &olen, &ofd);
		memset(e, 0, sizeof(*e));
		return rc;
	}
	/* The device's interrupts end on the USER: they travel on this channel. */
	rc = smd_lend_msi_channel(d, c->host, &e->msi_rd, &e->msi_slot);
	if (rc) {
		bound_drop(d, c, e);
		return rc;
	}
	fab_host_tables_changed(d->host);    /* cached routes of the function: forget */
	memset(o, 0, sizeof(*o));
	o->bdf = g.bdf;
	o->vendor = g.vendor;
	o->device = g.device;
	o->class = g.class;
	for (unsigned i = 0; i < 6; i++) {
		o->bar_addr[i] = g.bar_addr[i];
		o->bar_size[i] = g.bar_size[i];
		o->bar_flags[i] = g.bar_flags[i];
	}
	snprintf(o->name, sizeof(o->name), "%s", g.name);
	snprintf(o->model, sizeof(o->model), "%s", g.model);
	*out_fd = e->msi_rd;
	smd_peer_connect(d, c->host);        /* the device's first DMA finds it open */
	smio_info("cZodiac: %s (%02x:%02x.%x) shared with host %u as %02x:%02x.%x", g.name,
		  FAB_BDF_BUS(m->bdf), FAB_BDF_DEV(m->bdf), FAB_BDF_FN(m->bdf), c->host,
		  FAB_BDF_BUS(m->uid), FAB_BDF_DEV(m->uid), FAB_BDF_FN(m->uid));
	smd_event(d, SMIO_EV_BORROW, m->bdf, c->host, "cZodiac: shared %s (%02x:%02x.%x) with host %u",
		  g.name, FAB_BDF_BUS(m->bdf), FAB_BDF_DEV(m->bdf), FAB_BDF_FN(m->bdf), c->host);
	return 0;
}

/* ---------- USER: the transport of the logic device's config cycles ---------- */


static int t_cfg_read(void *arg, uint32_t off, uint32_t size, uint32_t *val)
{
	struct cz_use *u = arg;

	return smd_peer_cfg(u->d, u->owner, SMIO_PEER_CZ_CFG, u->obdf, u->lost, false, off,
			    size, val);
}

static int t_cfg_write(void *arg, uint32_t off, uint32_t size, uint32_t val)
{
	struct cz_use *u = arg;

	return smd_peer_cfg(u->d, u->owner, SMIO_PEER_CZ_CFG, u->obdf, u->lost, true, off,
			    size, &val);
}

static struct cz_use *use_find(struct smd_cz *z, uint32_t fdid)
{
	for (unsigned i = 0; i < SMD_CZ_MAX; i++)
		if (z->use[i].used && z->use[i].fdid == fdid)
			return &z->use[i];
	return NULL;
}

static void unbind_at_owner(struct cz_use *u)
{
	struct smio_peer_lend_ref r = { .bdf = u->obdf };

	smd_peer_request(u->d, u->owner, SMIO_PEER_CZ_UNBIND, &r, sizeof(r), NULL, 0, NULL, NULL);
}

/* The hot-plug driver powered the slot off: the switch withdraws the function. */
static void slot_off(void *arg)
{
	unbind_at_owner(arg);
}

/* Everything of u goes: the logic device (its driver unbound first), the share, the slot. */
static void use_drop(struct smd *d, struct cz_use *u, bool tell_owner)
{
	if (u->slot.pdev)
		czdev_destroy(d->pci, u->slot.pdev, true);
	u->slot.pdev = NULL;
	if (u->slot.loaded && tell_owner)
		unbind_at_owner(u);
	u->slot.loaded = false;
	czhp_driver_detach(&u->slot);
	smd_lend_msi_del(d, u->msi_slot);
	memset(u, 0, sizeof(*u));
}

static void info_of(const struct cz_use *u, struct smio_cz_info *o)
{
	const struct pci_dev *p = u->slot.pdev;

	memset(o, 0, sizeof(*o));
	o->fdid = u->fdid;
	o->owner = u->owner;
	o->cswitch = u->cswitch;
	o->uid = u->slot.uid;
	o->oid = u->obdf;
	o->present = p != NULL;
	o->bound = p && p->driver;
	o->msis = u->slot.msis;
	for (unsigned i = 0; i < 6; i++) {
		o->bar_addr[i] = u->slot.g.bar_addr[i];
		o->bar_size[i] = u->slot.g.bar_size[i];
	}
	snprintf(o->name, sizeof(o->name), "%s", u->slot.g.name);
	if (p && p->driver && p->driver->name)
		snprintf(o->driver, sizeof(o->driver), "%s", p->driver->name);
}

static int host_of_node(struct smd *d, uint32_t node, uint32_t *host)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == node) {
			*host = d->topo->hosts[i].id;
			return 0;
		}
	return -ENODEV;
}

/* The czodiac switch both hosts are cabled to: -EHOSTUNREACH if none. */
static int shared_switch(struct smd *d, uint32_t owner, uint32_t *cs)
{
	for (uint32_t i = 0; i < d->topo->ncswitches; i++)
		if (d->topo->cswitches[i].czodiac && fab_cz_host_on_switch(d->topo, i, owner) &&
		    fab_cz_host_port(d->host, i) >= 0) {
			*cs = i;
			return 0;
		}
	return -EHOSTUNREACH;
}

/*
 * The UID of a function we hold of the same OWNER device as obdf (its bus
 * at the OWNER: a PF and its VFs, a multi-function device), or -1.
 */
static int sibling_uid(struct smd_cz *z, uint32_t owner, uint32_t cswitch, uint16_t obdf)
{
	for (unsigned i = 0; i < SMD_CZ_MAX; i++) {
		const struct cz_use *u = &z->use[i];

		if (u->used && !u->lost && u->slot.pdev && u->owner == owner &&
		    u->cswitch == cswitch && FAB_BDF_BUS(u->obdf) == FAB_BDF_BUS(obdf))
			return u->slot.pdev->bdf;
	}
	return -1;
}

static int user_share(struct smd *d, const struct smio_cz_share *m, struct smio_cz_info *o)
{
	struct smd_cz *z = d->cz;
	struct smio_peer_cz_bind req = { .bdf = SMIO_FDID_BDF(m->fdid) };
	struct shadow_transport t = { .cfg_read = t_cfg_read, .cfg_write = t_cfg_write };
	struct smio_cz_grant gr;
	struct lend_grant g;
	struct cz_use *u = NULL;
	uint64_t base = 0, size = 0, top;
	uint32_t owner, rlen;
	int rc, fd = -1;

	if (!d->world.cz)
		return -EOPNOTSUPP;
	rc = host_of_node(d, SMIO_FDID_NODE(m->fdid), &owner);
	if (rc)
		return rc;
	if (owner == d->host_id)
		return -EINVAL;       /* a host's own functions are its own already */
	if (use_find(z, m->fdid))
		return -EALREADY;
	for (unsigned i = 0; i < SMD_CZ_MAX && !u; i++)
		if (!z->use[i].used)
			u = &z->use[i];
	if (!u)
		return -ENOSPC;
	rc = shared_switch(d, owner, &req.cswitch);
	if (!rc)
		rc = czdev_port_window(d->host, req.cswitch, &base, &size);
	if (!rc) {
		int near = sibling_uid(z, owner, req.cswitch, req.bdf);

		/* Functions of one OWNER device: one multi-function logic device (fig. 7). */
		rc = near >= 0 ? czdev_pick_uid_near(d->pci, (uint16_t)near, &req.uid)
			       : czdev_pick_uid(d->pci, &req.uid);
	}
	if (rc)
		return rc;
	/* After every UBAR this USER already has on the switch. */
	top = fab_cz_user_top(&d->world, req.cswitch, d->host_id);
	if (top > base) {
		if (top >= base + size)
			return -ENOSPC;
		size -= top - base;
		base = top;
	}
	req.ubar = base;
	req.ubar_size = size;
	rc = smd_peer_request(d, owner, SMIO_PEER_CZ_BIND, &req, sizeof(req), &gr, sizeof(gr),
			      &rlen, &fd);
	if (rc)
		return rc;
	*u = (struct cz_use){ .used = true, .d = d, .fdid = m->fdid, .owner = owner,
			      .cswitch = req.cswitch, .obdf = req.bdf, .msi_slot = -1 };
	czhp_slot_init(&u->slot, d->host, (uint32_t)(u - z->use) + 1);
	u->slot.loaded = true;        /* until the slot holds it: use_drop unbinds */
	if (rlen != sizeof(gr) || fd < 0 || gr.bdf != req.bdf) {
		if (fd >= 0)
			close(fd);
		use_drop(d, u, true);
		return -EPROTO;
	}
	u->msi_slot = smd_lend_msi_add(d, fd);
	if (u->msi_slot < 0) {
		close(fd);
		use_drop(d, u, true);
		return -ENOSPC;
	}
	SMD_GRANT_IDENTITY(&g, &gr, owner, d->host_id);
	t.arg = u;
	/* Our hot-plug driver on the virtual slot, then the switch inserts the function. */
	rc = czhp_driver_attach(&u->slot, d->pci);
	u->slot.loaded = false;
	if (!rc)
		rc = czhp_insert(&u->slot, &g, req.uid, &t, slot_off, u);
	else
		u->slot.loaded = true;
	/* Presence detected, MSI raised: the driver adds the logic device now. */
	if (!rc)
		rc = czhp_driver_service(&u->slot);
	if (!rc && !u->slot.pdev)
		rc = -EIO;            /* no MSI reached the driver (events off?) */
	if (rc) {
		use_drop(d, u, true);
		return rc;
	}
	info_of(u, o);
	smio_info("cZodiac: %s of host %u hot-added as %02x:%02x.%x (%s)", g.name, owner,
		  FAB_BDF_BUS(o->uid), FAB_BDF_DEV(o->uid), FAB_BDF_FN(o->uid),
		  o->bound ? o->driver : "no driver");
	smd_event(d, SMIO_EV_BORROW, req.bdf, owner, "cZodiac: %s of host %u hot-added as %02x:%02x.%x",
		  g.name, owner, FAB_BDF_BUS(o->uid), FAB_BDF_DEV(o->uid), FAB_BDF_FN(o->uid));
	return 0;
}

static int user_unshare(struct smd *d, const struct smio_cz_share *m, struct smio_cz_info *o)
{
	struct cz_use *u = use_find(d->cz, m->fdid);
	int rc;

	if (!u)
		return -ENOENT;
	/* The attention button: the hot-plug driver lets the function go. */
	rc = czhp_attention(&u->slot);
	if (!rc)
		rc = czhp_driver_service(&u->slot);
	/* The presence change of the withdrawal is the second MSI: serviced too. */
	if (!rc && !u->slot.loaded)
		rc = czhp_driver_service(&u->slot);
	if (rc)
		return rc;
	info_of(u, o);
	smd_event(d, SMIO_EV_RETURN, u->obdf, u->owner, "cZodiac: %s withdrawn from its slot",
		  u->slot.g.name);
	use_drop(d, u, false);
	return 0;
}

/* ---------- the messages ---------- */

int h_czodiac(struct smd_req *r)
{
	struct smd *d = r->d;
	struct cz_bound *e;
	int rc;

	r->outlen = 0;
	if (!d->cz)
		return -EOPNOTSUPP;
	switch (r->type) {
	case SMIO_CZ_SHARE:
	case SMIO_CZ_UNSHARE:
		rc = r->type == SMIO_CZ_SHARE ? user_share(d, r->p, r->out)
					      : user_unshare(d, r->p, r->out);
		if (!rc)
			r->outlen = sizeof(struct smio_cz_info);
		return rc;
	case SMIO_PEER_CZ_BIND:
		rc = owner_bind(d, r->c, r->p, r->out, &r->out_fd);
		if (!rc)
			r->outlen = sizeof(struct smio_cz_grant);
		return rc;
	default:
		break;
	}
	/* The rest act on a function bound for this connection's host. */
	e = bound_find(d->cz, r->c->cid, *(const uint16_t *)r->p);
	if (!e)
		return -ENOENT;
	if (r->type == SMIO_PEER_CZ_UNBIND) {
		bound_drop(d, r->c, e);
		return 0;
	}
	if (r->type == SMIO_PEER_CZ_CFG) {
		struct smio_peer_lend_cfg *o = r->out;

		*o = *(const struct smio_peer_lend_cfg *)r->p;
		rc = o->write ? lend_cfg_write(d->host, e->bdf, o->off, o->size, o->value)
			      : lend_cfg_read(d->host, e->bdf, o->off, o->size, &o->value);
		if (!o->write && o->size < 4)
			o->value &= (1u << (8 * o->size)) - 1;
		r->outlen = sizeof(*o);
		return rc;
	}
	return -EOPNOTSUPP;
}

/* ---------- lifetimes, and the logic devices in lspci ---------- */

/* The surprise removal of a lost OWNER's function, on a worker (its driver unbinds). */
struct drop_work {
	struct smd_work w;
	uint32_t fdid;
};

static void drop_run(struct smd_work *w)
{
	struct drop_work *x = (struct drop_work *)w;
	struct cz_use *u = w->d->cz ? use_find(w->d->cz, x->fdid) : NULL;

	if (u && u->lost)
		use_drop(w->d, u, false);
}

static void drop_done(struct smd_work *w)
{
	free(w);
}

static void owner_lost(struct smd *d, struct cz_use *u)
{
	struct drop_work *x;

	/* Right away: config cycles fail, the iomaps read all-ones, in-flight I/O fails. */
	u->lost = true;
	if (u->slot.pdev)
		pci_channel_set(u->slot.pdev, pci_channel_io_perm_failure);
	smio_warn("cZodiac: OWNER host %u lost: surprise-removing its %s", u->owner,
		  u->slot.g.name);
	smd_event(d, SMIO_EV_RECLAIM, u->obdf, u->owner,
		  "cZodiac: OWNER host %u lost: surprise-removing its %s", u->owner,
		  u->slot.g.name);
	x = calloc(1, sizeof(*x));
	if (!x)
		return;         /* it stays lost: CZ_UNSHARE removes it */
	x->fdid = u->fdid;
	x->w.run = drop_run;
	x->w.done = drop_done;
	/* As CZ_SHARE/CZ_UNSHARE's keys (dispatch.c): the slots, the device's driver. */
	x->w.key = 0x300000000ull;
	if (u->slot.pdev)
		x->w.key2 = 0x100000000ull | u->slot.pdev->bdf;
	smd_work_queue(d, &x->w);
}

void smd_cz_conn_closed(struct smd *d, struct smd_conn *c)
{
	struct smd_cz *z = d->cz;

	if (!z || !c->cid)
		return;
	/* OWNER: the USER's daemon is gone (the pool dropped the lease already). */
	fab_host_lock(d->host);
	for (unsigned i = 0; i < SMD_CZ_MAX; i++)
		if (z->bound[i].used && z->bound[i].cid == c->cid)
			bound_drop(d, NULL, &z->bound[i]);
	/* USER: our connection to an OWNER closed: its EOF is immediate when it dies. */
	for (unsigned i = 0; c->outgoing && i < SMD_CZ_MAX; i++)
		if (z->use[i].used && z->use[i].owner == c->host && !z->use[i].lost)
			owner_lost(d, &z->use[i]);
	fab_host_unlock(d->host);
}

void smd_cz_fini(struct smd *d)
{
	struct smd_cz *z = d->cz;

	if (!z)
		return;
	/* No peer answers any more: each side undoes its own part. */
	for (unsigned i = 0; d->pci && i < SMD_CZ_MAX; i++)
		if (z->use[i].used) {
			/* A surprise removal: the driver touches the device no more. */
			z->use[i].lost = true;
			if (z->use[i].slot.pdev)
				pci_channel_set(z->use[i].slot.pdev, pci_channel_io_perm_failure);
			use_drop(d, &z->use[i], false);
		}
	for (unsigned i = 0; d->host && i < SMD_CZ_MAX; i++)
		if (z->bound[i].used)
			bound_drop(d, NULL, &z->bound[i]);
	if (z->regs)
		munmap(z->regs, sizeof(*z->regs));
	if (z->fd >= 0)
		close(z->fd);
	d->world.cz = NULL;
	free(z);
	d->cz = NULL;
}

struct pci_dev *smd_cz_logic_dev(struct smd *d, uint16_t bdf)
{
	for (unsigned i = 0; d->cz && i < SMD_CZ_MAX; i++)
		if (d->cz->use[i].used && d->cz->use[i].slot.pdev &&
		    d->cz->use[i].slot.pdev->bdf == bdf)
			return d->cz->use[i].slot.pdev;
	return NULL;
}

int smd_cz_uid(struct smd *d, uint32_t fdid)
{
	struct cz_use *u = d->cz ? use_find(d->cz, fdid) : NULL;

	return u && u->slot.pdev ? u->slot.pdev->bdf : -1;
}

void smd_cz_func_list(struct smd *d, struct smio_func_list *o)
{
	for (unsigned i = 0; d->cz && i < SMD_CZ_MAX && o->n < SMIO_MAX_FUNCS; i++) {
		const struct cz_use *u = &d->cz->use[i];
		struct smio_func_info *fi;
		int port;

		if (!u->used || !u->slot.pdev)
			continue;
		port = fab_cz_host_port(d->host, u->cswitch);
		fi = &o->f[o->n++];
		memset(fi, 0, sizeof(*fi));
		fi->bdf = u->slot.pdev->bdf;
		fi->kind = FAB_FN_ENDPOINT;
		/* Behind the USER's port on the switch (its virtual downstream port). */
		fi->parent_bdf = port >= 0 ? fab_func_bdf(d->host->ntbs[port]->fn) : 0xffff;
		snprintf(fi->name, sizeof(fi->name), "%s", u->slot.pdev->name);
		snprintf(fi->model, sizeof(fi->model), "%s", u->slot.g.model);
	}
}

int smd_cz_shared_with(struct smd *d, uint16_t bdf, uint32_t *user, uint32_t *cswitch)
{
	struct cz_bound *e = d->cz ? bound_find(d->cz, 0, bdf) : NULL;

	if (!e)
		return -ENOENT;
	*user = e->user;
	*cswitch = e->cswitch;
	return 0;
}
