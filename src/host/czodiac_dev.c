// SPDX-License-Identifier: MIT
/*
 * cZodiac sharing (czodiac_dev.h): the OWNER's IOPort programming and the
 * USER's logic full-function device, whose emulated header follows the
 * paper's fig. 7 as the shadow device's does for Device Lending
 * (docs/czodiac.md compares them); unlike a shadow device it needs no NTB
 * window and no DMA window: the IOPort remaps both directions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "cfg_emul.h"
#include "czodiac_dev.h"
#include "czodiac_hp.h"
#include "fabric/czodiac_route.h"
#include "fabric/ntb.h"
#include "pci_priv.h"

#define CZDEV_BUS 0xe0    /* first bus of logic full-function devices (shadows: 0xf0) */

static uint16_t oid_base_of(const struct fab_func *fn, uint16_t bdf)
{
	/* The IOPort numbers the device's functions from its function 0 (or PF). */
	return fn->pf ? fab_func_bdf(fn->pf) : (uint16_t)(bdf & ~7u);
}

/* czdev_share's table changes, inside the tables' write section. */
static int share_tables(struct fab_host *owner, uint32_t cswitch, struct fab_func *fn,
			uint16_t bdf, uint32_t user, uint16_t uid, uint64_t ubar,
			uint64_t ubar_size, struct lend_grant *g)
{
	uint64_t off = 0;
	struct cz_iop *t;
	int rc = 0;

	t = fab_cz_ioport(owner->world, cswitch, owner->id, oid_base_of(fn, bdf), &rc);
	if (!t)
		return rc;
	rc = cz_iop_bind(t, bdf, uid, (uint16_t)user);
	if (rc)
		return rc == -ERANGE ? -ENOSPC : rc;
	for (unsigned b = 0; b < 6 && !rc; b++) {
		uint64_t size = g->bar_size[b];

		if (!size)
			continue;
		off = (off + size - 1) & ~(size - 1);
		if (off + size > ubar_size) {
			rc = -ENOSPC;
			break;
		}
		rc = cz_iop_set_bar(t, bdf, b, g->bar_addr[b], ubar + off, size);
		g->bar_addr[b] = ubar + off;
		off += size;
	}
	if (rc) {
		cz_iop_unbind(t, bdf);
		return rc == -EEXIST ? -ENOSPC : rc;
	}
	return 0;
}

int czdev_share(struct fab_host *owner, uint32_t cswitch, uint16_t bdf, uint32_t user,
		uint16_t uid, uint64_t ubar, uint64_t ubar_size, struct lend_grant *g)
{
	struct fab_func *fn = fab_func_by_bdf(owner, bdf);
	int rc;

	if (!fn || fn->kind != FAB_FN_ENDPOINT)
		return -ENODEV;
	if (!owner->world || !fab_cz_host_on_switch(owner->topo, cswitch, user) ||
	    user == owner->id)
		return -EINVAL;
	if (!owner->world->cz)
		return -ENODEV;
	memset(g, 0, sizeof(*g));
	g->bdf = bdf;
	g->lender = owner->id;
	g->borrower = user;
	lend_read_identity(owner, fn, g);
	/* Walks in every process see the tables before or after, never half-made. */
	fab_cz_write_begin(owner->world->cz);
	rc = share_tables(owner, cswitch, fn, bdf, user, uid, ubar, ubar_size, g);
	fab_cz_write_end(owner->world->cz);
	if (!rc)
		fab_cz_changed(owner->world);
	return rc;
}

int czdev_unshare(struct fab_host *owner, uint32_t cswitch, uint16_t bdf)
{
	struct fab_func *fn = fab_func_by_bdf(owner, bdf);
	struct cz_iop *t;
	int rc = 0;

	if (!fn)
		return -ENODEV;
	if (!owner->world || !owner->world->cz)
		return -ENODEV;
	fab_cz_write_begin(owner->world->cz);
	t = fab_cz_ioport(owner->world, cswitch, owner->id, oid_base_of(fn, bdf), &rc);
	if (t)
		rc = cz_iop_unbind(t, bdf);
	fab_cz_write_end(owner->world->cz);
	if (!rc)
		fab_cz_changed(owner->world);
	return rc;
}

int czdev_port_window(struct fab_host *user, uint32_t cswitch, uint64_t *base, uint64_t *size)
{
	int i = fab_cz_host_port(user, cswitch);
	struct fab_func *fn;

	if (i < 0)
		return -ENODEV;
	fn = user->ntbs[i]->fn;
	*base = fab_func_bar_addr(fn, NTB_BAR_LUT);
	*size = fn->bars[NTB_BAR_LUT].size;
	return *base ? 0 : -ENODEV;
}

int czdev_pick_uid(struct pci_host *ph, uint16_t *uid)
{
	struct fab_host *h = pci_host_fab(ph);

	/* Function 0 of a device of its own, none of whose functions is taken. */
	for (unsigned s = 0; s < 16 * 32; s++) {
		uint16_t bdf = FAB_BDF(CZDEV_BUS + s / 32, s % 32, 0);
		bool free = true;

		for (unsigned f = 0; f < 8 && free; f++)
			free = !pci_get_dev(ph, bdf | f) && !fab_func_by_bdf(h, bdf | f);
		if (free) {
			*uid = bdf;
			return 0;
		}
	}
	return -ENOSPC;
}

int czdev_pick_uid_near(struct pci_host *ph, uint16_t near, uint16_t *uid)
{
	struct fab_host *h = pci_host_fab(ph);

	for (unsigned f = 0; f < 8; f++) {
		uint16_t bdf = (uint16_t)((near & ~7u) | f);

		if (!pci_get_dev(ph, bdf) && !fab_func_by_bdf(h, bdf)) {
			*uid = bdf;
			return 0;
		}
	}
	return czdev_pick_uid(ph, uid);
}

/* ---------- the logic full-function device (fig. 7) ---------- */

struct czdev {
	struct lend_grant g;
	struct shadow_transport t;
	struct fab_host *h;
	struct pci_host *ph;             /* the USER's: its other functions (header type) */
	bool virtfn;                     /* the real function reads all-ones IDs */
	uint32_t mem;                    /* a VF's memory enable (its PF's VF MSE holds it) */
	uint8_t irq_line;
	struct cfg_bars bars;            /* the UBARs; no ROM */
};

static int cz_read(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t *val)
{
	struct czdev *cz = pdev->ops_arg;
	uint32_t dw = off & ~3u, v;
	int rc;

	if (!val || !cfg_args_ok(off, size))
		return -EINVAL;
	if (cfg_bars_read(&cz->bars, off, size, val))
		return 0;                  /* BARs emulated; the ROM forbidden: absent */
	if (dw == PCI_VENDOR_ID && cz->virtfn) {
		*val = cfg_extract((uint32_t)cz->g.device << 16 | cz->g.vendor, off, size);
		return 0;
	}
	rc = cz->t.cfg_read(cz->t.arg, dw, 4, &v);
	if (rc)
		return rc;
	if (dw == PCI_COMMAND && cz->virtfn)
		v |= cz->mem;
	/* Header type: multi-function while another logic function shares its device. */
	if (dw == PCI_CACHE_LINE_SIZE) {
		v &= ~((uint32_t)0x80 << 16);
		for (unsigned f = 0; f < 8; f++) {
			struct pci_dev *o = pci_get_dev(cz->ph, (uint16_t)((pdev->bdf & ~7u) | f));

			if (o && o != pdev && czdev_is(o))
				v |= (uint32_t)0x80 << 16;
		}
	}
	if (dw == PCI_INTERRUPT_LINE)      /* pin 0: no INTx across the switch */
		v = (v & 0xffff0000u) | cz->irq_line;
	*val = cfg_extract(v, off, size);
	return 0;
}

static int cz_write(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t val)
{
	struct czdev *cz = pdev->ops_arg;
	uint32_t dw = off & ~3u;

	if (!cfg_args_ok(off, size))
		return -EINVAL;
	if (cfg_bars_write(&cz->bars, off, size, val))
		return 0;                  /* the OWNER's BARs stay */
	if (dw == PCI_INTERRUPT_LINE) {
		if (off == PCI_INTERRUPT_LINE)
			cz->irq_line = (uint8_t)val;
		return 0;
	}
	if (dw == PCI_COMMAND) {
		if (off == PCI_COMMAND)
			cz->mem = cfg_merge(0, off, size, val) & PCI_COMMAND_MEMORY;
		if (off + size > PCI_COMMAND + 1 && off <= PCI_COMMAND + 1)
			val |= PCI_COMMAND_INTX_DISABLE >> ((off & 3) * 8);
	}
	return cz->t.cfg_write(cz->t.arg, off, size, val);
}

static void cz_release(struct pci_dev *pdev)
{
	struct czdev *cz = pdev->ops_arg;

	if (cz->t.release)
		cz->t.release(cz->t.arg);
	free(cz);
	pdev->ops = NULL;
	pdev->ops_arg = NULL;
}

static const struct pci_dev_ops czdev_ops = {
	.read_config = cz_read,
	.write_config = cz_write,
	.release = cz_release,
};

bool czdev_is(const struct pci_dev *pdev)
{
	return pdev && pdev->ops == &czdev_ops;
}

int czdev_create(struct pci_host *ph, uint16_t uid, const struct lend_grant *g,
		 const struct shadow_transport *t, struct pci_dev **out)
{
	struct fab_host *h = pci_host_fab(ph);
	struct pci_dev_priv *p;
	struct pci_dev *pdev;
	struct czdev *cz;
	uint32_t id = 0;
	int rc;

	if (!h || !g || !t || !t->cfg_read || !t->cfg_write)
		return -EINVAL;
	/*
	 * A 32-bit BAR cannot hold a UBAR above 4 GiB (the USER's port window is
	 * a 64-bit BAR): the emulated header presents it as 64-bit when the next
	 * register is free, as fig. 7's BARs are the emulation's anyway.
	 */
	for (unsigned b = 0; b < 6; b++)
		if (g->bar_size[b] && g->bar_addr[b] >> 32 &&
		    (g->bar_flags[b] & PCI_BASE_ADDRESS_MEM_TYPE_MASK) != PCI_BASE_ADDRESS_MEM_TYPE_64 &&
		    (b == 5 || g->bar_size[b + 1]))
			return -ERANGE;
	if (pci_get_dev(ph, uid) || fab_func_by_bdf(h, uid))
		return -EEXIST;
	cz = calloc(1, sizeof(*cz));
	p = pci_dev_alloc(ph);
	if (!cz || !p) {
		free(cz);
		free(p);
		return -ENOMEM;
	}
	pdev = &p->pub;
	cz->g = *g;
	for (unsigned b = 0; b < 6; b++)
		if (g->bar_size[b] && g->bar_addr[b] >> 32)
			cz->g.bar_flags[b] = (g->bar_flags[b] & ~(uint32_t)PCI_BASE_ADDRESS_MEM_TYPE_MASK) |
					     PCI_BASE_ADDRESS_MEM_TYPE_64;
	cz->t = *t;
	cz->h = h;
	cz->ph = ph;
	pdev->bdf = uid;
	pdev->vendor = g->vendor;
	pdev->device = g->device;
	pdev->class = g->class;
	snprintf(pdev->name, sizeof(pdev->name), "%s", g->name);
	for (unsigned b = 0; b < 6; b++) {
		pdev->bar_addr[b] = g->bar_addr[b];
		pdev->bar_size[b] = g->bar_size[b];
	}
	cfg_bars_init(&cz->bars, cz->g.bar_addr, cz->g.bar_size, cz->g.bar_flags);
	cz->virtfn = !t->cfg_read(t->arg, PCI_VENDOR_ID, 2, &id) && id == 0xffff &&
		     g->vendor != 0xffff;
	pdev->ops = &czdev_ops;
	pdev->ops_arg = cz;
	fab_host_lock(h);
	rc = pci_hot_add_dev(ph, pdev);
	fab_host_unlock(h);
	if (rc) {
		pdev->ops = NULL;
		pdev->ops_arg = NULL;
		pci_dev_free(pdev);
		free(cz);
		return rc;
	}
	if (out)
		*out = pdev;
	return 0;
}

int czdev_destroy(struct pci_host *ph, struct pci_dev *pdev, bool force)
{
	if (!czdev_is(pdev) || !pci_host_fab(ph))
		return -EINVAL;
	if (pdev->driver && !force)
		return -EBUSY;
	/* Unbinds any driver, then frees the device: cz_release does the rest. */
	return pci_hot_remove(ph, pdev);
}

/* ---------- in-process sharing (tests) ---------- */

struct czdev_local {
	struct fab_host *owner, *uh;
	uint32_t cswitch;
	uint16_t bdf;
	struct pci_host *ph;
	struct pci_dev *pdev;
};

/*
 * A call on the OWNER: the USER's lock is let go meanwhile (the OWNER's
 * device threads take the OWNER's lock, then the USER's to deliver an
 * interrupt: holding both here would deadlock), the OWNER's taken.
 */
#define TO_OWNER(l, call) ({ \
	unsigned depth_ = fab_host_unlock_all((l)->uh); \
	int rc_; \
	fab_host_lock((l)->owner); \
	rc_ = (call); \
	fab_host_unlock((l)->owner); \
	fab_host_relock((l)->uh, depth_); \
	rc_; })

static int local_cfg_read(void *arg, uint32_t off, uint32_t size, uint32_t *val)
{
	struct czdev_local *l = arg;

	return TO_OWNER(l, lend_cfg_read(l->owner, l->bdf, off, size, val));
}

static int local_cfg_write(void *arg, uint32_t off, uint32_t size, uint32_t val)
{
	struct czdev_local *l = arg;

	return TO_OWNER(l, lend_cfg_write(l->owner, l->bdf, off, size, val));
}

static void local_release(void *arg)
{
	struct czdev_local *l = arg;

	l->pdev = NULL;
}

/* Withdrawn: the function stops decoding and mastering, as after a lend. */
static int local_withdraw(struct czdev_local *l)
{
	int rc = czdev_unshare(l->owner, l->cswitch, l->bdf);

	fab_cfg_access_write(l->owner, l->bdf, PCI_COMMAND, 2, PCI_COMMAND_INTX_DISABLE);
	return rc;
}

/* Both sides' programming, up to the logic device: *l, g, uid. */
static int local_prepare(struct fab_host *owner, uint32_t cswitch, uint16_t bdf,
			 struct pci_host *user, struct czdev_local **out, struct lend_grant *g,
			 uint16_t *uid)
{
	struct czdev_local *l = calloc(1, sizeof(*l));
	uint64_t base = 0, size = 0, top;
	int rc;

	if (!l)
		return -ENOMEM;
	*l = (struct czdev_local){ .owner = owner, .uh = pci_host_fab(user), .cswitch = cswitch,
				   .bdf = bdf, .ph = user };
	fab_host_lock(l->uh);
	rc = czdev_port_window(l->uh, cswitch, &base, &size);
	if (!rc)
		rc = czdev_pick_uid(user, uid);
	fab_host_unlock(l->uh);
	/* After every UBAR this USER already has on the switch. */
	top = fab_cz_user_top(owner->world, cswitch, l->uh->id);
	if (!rc && top > base) {
		if (top >= base + size)
			rc = -ENOSPC;
		size -= top - base;
		base = top;
	}
	if (!rc)
		rc = TO_OWNER(l, czdev_share(owner, cswitch, bdf, l->uh->id, *uid, base, size, g));
	if (rc) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

static struct shadow_transport local_transport(struct czdev_local *l)
{
	return (struct shadow_transport){ .cfg_read = local_cfg_read,
					  .cfg_write = local_cfg_write,
					  .release = local_release, .arg = l };
}

int czdev_local_share(struct fab_host *owner, uint32_t cswitch, uint16_t bdf,
		      struct pci_host *user, struct czdev_local **out, struct pci_dev **pdev)
{
	struct czdev_local *l;
	struct shadow_transport t;
	struct lend_grant g;
	uint16_t uid = 0;
	int rc = local_prepare(owner, cswitch, bdf, user, &l, &g, &uid);

	if (rc)
		return rc;
	t = local_transport(l);
	rc = czdev_create(user, uid, &g, &t, &l->pdev);
	if (rc) {
		TO_OWNER(l, local_withdraw(l));
		free(l);
		return rc;
	}
	*out = l;
	if (pdev)
		*pdev = l->pdev;
	return 0;
}

/* The USER powered the slot off: withdraw the function; the share ends here. */
static void local_slot_off(void *arg)
{
	struct czdev_local *l = arg;

	TO_OWNER(l, local_withdraw(l));
	free(l);
}

int czdev_local_offer(struct fab_host *owner, uint32_t cswitch, uint16_t bdf,
		      struct pci_host *user, struct czhp_slot *slot)
{
	struct czdev_local *l;
	struct shadow_transport t;
	struct lend_grant g;
	uint16_t uid = 0;
	int rc = local_prepare(owner, cswitch, bdf, user, &l, &g, &uid);

	if (rc)
		return rc;
	t = local_transport(l);
	fab_host_lock(l->uh);
	rc = czhp_insert(slot, &g, uid, &t, local_slot_off, l);
	fab_host_unlock(l->uh);
	if (rc) {
		TO_OWNER(l, local_withdraw(l));
		free(l);
	}
	return rc;
}

int czdev_local_unshare(struct czdev_local *l, bool force)
{
	int rc;

	if (!l)
		return -EINVAL;
	if (l->pdev) {
		fab_host_lock(l->uh);
		rc = czdev_destroy(l->ph, l->pdev, force);
		fab_host_unlock(l->uh);
		if (rc)
			return rc;
	}
	rc = TO_OWNER(l, local_withdraw(l));
	free(l);
	return rc;
}
