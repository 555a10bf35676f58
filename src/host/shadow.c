// SPDX-License-Identifier: MIT
/*
 * Device Lending, the borrower's half: the shadow device (SmartIO sec. 4.1).
 *
 * A pci_dev hot-added into the borrower's device list on a bus of its own
 * behind the NTB. Its config cycles go to the real function at the lender
 * (shadow_transport) with interception:
 *  - BARs read as the borrower's NTB windows onto the real BARs (programmed
 *    here, in the local NTB's LUT); sizing works on emulated registers, and
 *    writes never reach the lender's BARs;
 *  - the expansion ROM is absent; Interrupt Pin reads 0 and INTx Disable is
 *    always set (legacy interrupts cannot cross the NTB);
 *  - bus-master enable is tracked here and forwarded;
 *  - MSI address writes are rewritten into the lender's MSI window, and so
 *    are MSI-X table entries (the PCI core asks msi_address), so interrupts
 *    land on this host's interrupt controller, counted per vector.
 * DMA: the lender prepared one window through its NTB onto this host (the
 * grant); each map/unmap is an IOMMU mapping into it here (dma.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "fabric/intc.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "fabric/route.h"
#include "cfg_emul.h"
#include "lend.h"
#include "ntb_drv.h"
#include "pci_priv.h"

#define SHADOW_BUS        0xf0              /* first bus of shadow devices */
#define SHADOW_IOVA_BASE  (1ull << 46)      /* DMA windows in the NTBs' IOVA space */
#define SHADOW_WIN        (256ull << 20)    /* IOVA window per shadow device */
#define SHADOW_SLOTS      256
#define SHADOW_P2P_MAX    16

struct shadow {
	struct lend_grant g;
	struct shadow_transport t;
	struct ntb_drv *ntb;             /* ours, towards the lender */
	struct ntb_mw bar_mw[6];         /* our windows onto the lender's BARs */
	bool client;                     /* registered for ntb's events */
	bool link_down;                  /* our NTB's link is down */
	bool far_down;                   /* a BAR's route failed further on (revalidated) */
	uint32_t link_events;
	struct pci_dev *pdev;            /* the shadow itself */
	struct cfg_bars bars;            /* our windows; no ROM */
	uint16_t msi_cap;
	bool msi64;
	uint32_t msi_lo, msi_hi;
	struct {                         /* P2P windows resolved so far */
		uint32_t host;
		uint64_t addr, bus;
		bool local_map;          /* exposed through our NTBs */
		uint64_t size;
	} p2p[SHADOW_P2P_MAX];
	unsigned np2p;
	struct fab_host *h;
	uint8_t irq_line;
	bool master;
	/*
	 * A lent SR-IOV VF (its own header says vendor FFFFh): as vfio-pci
	 * does, the IDs come from the grant and the Memory Space bit, read-only
	 * 0 in a VF, is kept here (the lender's VF MSE decides its decoding).
	 */
	bool virtfn;
	uint16_t mem;
};

static const struct pci_dev_ops shadow_ops;

static struct shadow *sh_of(const struct pci_dev *pdev)
{
	return pdev && pdev->ops == &shadow_ops ? pdev->ops_arg : NULL;
}

const struct lend_grant *shadow_grant(const struct pci_dev *pdev)
{
	struct shadow *sh = sh_of(pdev);

	return sh ? &sh->g : NULL;
}

bool shadow_master(const struct pci_dev *pdev)
{
	struct shadow *sh = sh_of(pdev);

	return sh && sh->master;
}

static uint64_t msi_translate(const struct shadow *sh, uint64_t addr)
{
	return fab_msi_addr(addr, 4) ? sh->g.msi_bus + (addr - FAB_MSI_BASE) : addr;
}

static int msi_forward(struct shadow *sh)
{
	uint64_t a = msi_translate(sh, (uint64_t)sh->msi_hi << 32 | sh->msi_lo);
	int rc = sh->t.cfg_write(sh->t.arg, sh->msi_cap + PCI_MSI_ADDRESS_LO, 4, (uint32_t)a);

	if (!rc && sh->msi64)
		rc = sh->t.cfg_write(sh->t.arg, sh->msi_cap + PCI_MSI_ADDRESS_HI, 4,
				     (uint32_t)(a >> 32));
	return rc;
}

/* The emulated MSI address dword at dw, if it is one (BARs and ROM: cfg_emul.h). */
static uint32_t *emulated(struct shadow *sh, uint32_t dw)
{
	if (sh->msi_cap && dw == sh->msi_cap + (uint32_t)PCI_MSI_ADDRESS_LO)
		return &sh->msi_lo;
	if (sh->msi_cap && sh->msi64 && dw == sh->msi_cap + (uint32_t)PCI_MSI_ADDRESS_HI)
		return &sh->msi_hi;
	return NULL;
}

static int sh_read(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t *val)
{
	struct shadow *sh = pdev->ops_arg;
	uint32_t dw = off & ~3u, *e, v;
	int rc;

	if (!val || !cfg_args_ok(off, size))
		return -EINVAL;
	if (cfg_bars_read(&sh->bars, off, size, val))
		return 0;
	e = emulated(sh, dw);
	if (e) {
		*val = cfg_extract(*e, off, size);
		return 0;
	}
	if (sh->virtfn && dw == PCI_VENDOR_ID) {
		*val = cfg_extract((uint32_t)sh->g.device << 16 | sh->g.vendor, off, size);
		return 0;
	}
	if (sh->virtfn && dw == PCI_COMMAND) {
		rc = sh->t.cfg_read(sh->t.arg, dw, 4, &v);
		if (rc)
			return rc;
		*val = cfg_extract(v | sh->mem, off, size);
		return 0;
	}
	if (dw == PCI_INTERRUPT_LINE) {
		rc = sh->t.cfg_read(sh->t.arg, dw, 4, &v);
		if (rc)
			return rc;
		v = (v & 0xffff0000u) | sh->irq_line;   /* pin 0: no INTx */
		*val = cfg_extract(v, off, size);
		return 0;
	}
	return sh->t.cfg_read(sh->t.arg, off, size, val);
}

static int sh_write(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t val)
{
	struct shadow *sh = pdev->ops_arg;
	uint32_t dw = off & ~3u, *e;

	if (!cfg_args_ok(off, size))
		return -EINVAL;
	if (cfg_bars_write(&sh->bars, off, size, val))
		return 0;                  /* the lender's BARs stay */
	e = emulated(sh, dw);
	if (e) {
		*e = cfg_merge(*e, off, size, val);
		return msi_forward(sh);
	}
	if (dw == PCI_INTERRUPT_LINE) {
		if (off == PCI_INTERRUPT_LINE)
			sh->irq_line = (uint8_t)val;
		return 0;
	}
	if (dw == PCI_COMMAND) {
		uint32_t cmd = cfg_merge(0, off, size, val);

		if (off == PCI_COMMAND) {
			sh->master = cmd & PCI_COMMAND_MASTER;
			sh->mem = cmd & PCI_COMMAND_MEMORY;
		}
		if (off + size > PCI_COMMAND + 1 && off <= PCI_COMMAND + 1)
			val |= PCI_COMMAND_INTX_DISABLE >> ((off & 3) * 8);
	}
	return sh->t.cfg_write(sh->t.arg, off, size, val);
}

static uint64_t sh_msi_address(struct pci_dev *pdev, uint64_t addr)
{
	return msi_translate(pdev->ops_arg, addr);
}

/*
 * Where a borrowed device reaches [addr, +size) of host `host` (Device
 * Lending's P2P rules, applied by its lender: its own bus address when the
 * target is at the lender, else a window of the lender's NTB onto it). One
 * mapping per target, kept until the borrow ends. `local`: a BAR of this
 * (the borrowing) host, which the IOMMU must let the NTB's requests reach.
 */
static int p2p_at(struct shadow *sh, uint32_t host, uint64_t addr, uint64_t size, bool local,
		  uint64_t *bus)
{
	struct fab_host *h = sh->h;
	int rc;

	for (unsigned i = 0; i < sh->np2p; i++)
		if (sh->p2p[i].host == host && sh->p2p[i].addr == addr && size <= sh->p2p[i].size) {
			*bus = sh->p2p[i].bus;
			return 0;
		}
	if (sh->np2p >= SHADOW_P2P_MAX || !sh->t.p2p_map)
		return -ENOSPC;
	sh->p2p[sh->np2p] = (typeof(sh->p2p[0])){ .host = host, .addr = addr, .size = size };
	if (local && iommu_enabled(h->iommu)) {
		/* Our device's BAR, reached through our NTB: translated like any arrival.
		 * -EEXIST: a range around it is exposed already. */
		rc = ntb_iommu_expose(h, addr, size);
		if (rc && rc != -EEXIST)
			return rc;
		sh->p2p[sh->np2p].local_map = !rc;
	}
	rc = sh->t.p2p_map(sh->t.arg, host, addr, size, bus);
	if (rc) {
		if (sh->p2p[sh->np2p].local_map)
			ntb_iommu_unexpose(h, addr, size);
		return rc;
	}
	sh->p2p[sh->np2p++].bus = *bus;
	return 0;
}

static int sh_p2p_bus(struct pci_dev *client, struct pci_dev *provider, unsigned bar,
		      uint64_t *bus)
{
	struct shadow *sh = client->ops_arg, *ps = sh_of(provider);

	if (ps)
		return p2p_at(sh, ps->g.lender, ps->g.bar_addr[bar], provider->bar_size[bar], false,
			      bus);
	return p2p_at(sh, sh->h->id, provider->bar_addr[bar], provider->bar_size[bar], true, bus);
}

int shadow_p2p_at(struct pci_dev *pdev, uint32_t host, uint64_t addr, uint64_t size,
		  uint64_t *bus)
{
	struct shadow *sh = sh_of(pdev);

	if (!sh || !size || !bus)
		return -EINVAL;
	/* This host's memory: the caller vouches that it is a BAR of ours. */
	return p2p_at(sh, host, addr, size, host == sh->h->id, bus);
}

static int sh_route_hops(struct pci_dev *client, uint64_t bus, unsigned *hops)
{
	struct shadow *sh = client->ops_arg;

	return sh->t.route_hops ? sh->t.route_hops(sh->t.arg, bus, hops) : -EOPNOTSUPP;
}

static void luts_clear(struct shadow *sh);

static void sh_release(struct pci_dev *pdev)
{
	struct shadow *sh = pdev->ops_arg;

	for (unsigned i = 0; i < sh->np2p; i++)
		if (sh->p2p[i].local_map)
			ntb_iommu_unexpose(sh->h, sh->p2p[i].addr, sh->p2p[i].size);
	luts_clear(sh);
	fab_host_tables_changed(sh->h);
	if (sh->t.release)
		sh->t.release(sh->t.arg);
	free(sh);
	pdev->ops = NULL;
	pdev->ops_arg = NULL;
}

static const struct pci_dev_ops shadow_ops = {
	.read_config = sh_read,
	.write_config = sh_write,
	.msi_address = sh_msi_address,
	.p2p_bus = sh_p2p_bus,
	.route_hops = sh_route_hops,
	.release = sh_release,
};

int shadow_dma_target(struct pci_host *ph, uint64_t *target, uint64_t *size)
{
	struct fab_host *h = pci_host_fab(ph);
	bool used[SHADOW_SLOTS] = { false };

	if (!h || !target || !size)
		return -EINVAL;
	if (!iommu_enabled(h->iommu)) {
		/* No IOMMU: the window is all of RAM, identity. */
		*target = 0;
		*size = h->high_ram ? (4ull << 30) + h->high_ram : h->low_ram;
		return 0;
	}
	for (unsigned i = 0; i < pci_host_ndevs(ph); i++) {
		const struct shadow *sh = sh_of(pci_host_dev(ph, i));
		uint64_t slot;

		if (!sh || sh->g.dma_target < SHADOW_IOVA_BASE)
			continue;
		slot = (sh->g.dma_target - SHADOW_IOVA_BASE) / SHADOW_WIN;
		if (slot < SHADOW_SLOTS)
			used[slot] = true;
	}
	for (unsigned s = 0; s < SHADOW_SLOTS; s++)
		if (!used[s]) {
			*target = SHADOW_IOVA_BASE + s * SHADOW_WIN;
			*size = SHADOW_WIN;
			return 0;
		}
	return -ENOSPC;
}

/* The channel as the two halves of the path say: frozen while either is down. */
static void channel_update(struct shadow *sh)
{
	if (!sh->pdev || pci_dev_is_disconnected(sh->pdev))
		return;
	pci_channel_set(sh->pdev, sh->link_down || sh->far_down ? pci_channel_io_frozen
								 : pci_channel_io_normal);
}

/*
 * Events of our NTB towards the lender: the link going down freezes the
 * channel (iomaps read all-ones, the driver is told), coming back resumes it
 * unless the path is still broken further on (far_down).
 */
static void sh_link_event(void *ctx, struct ntb_drv *ntb, bool up)
{
	struct shadow *sh = ctx;

	(void)ntb;
	sh->link_down = !up;
	sh->link_events++;
	channel_update(sh);
}

static const struct ntb_client_ops shadow_ntb_client = { .link_event = sh_link_event };

static void luts_clear(struct shadow *sh)
{
	for (unsigned b = 0; b < 6; b++)
		ntb_mw_unmap(sh->ntb, &sh->bar_mw[b]);
	if (sh->client)
		ntb_drv_unregister_client(sh->ntb, &shadow_ntb_client, sh);
	sh->client = false;
}

/* Our LUT windows onto the lender's BARs: the shadow's BAR addresses. */
static int map_bars(struct shadow *sh, struct pci_dev *pdev)
{
	for (unsigned b = 0; b < 6; b++) {
		int rc;

		if (!sh->g.bar_size[b])
			continue;
		rc = ntb_mw_map(sh->ntb, sh->g.lender, sh->g.bar_addr[b], sh->g.bar_size[b],
				&sh->bar_mw[b]);
		if (rc)
			return rc;
		pdev->bar_addr[b] = sh->bar_mw[b].bus;
		pdev->bar_size[b] = sh->g.bar_size[b];
	}
	return 0;
}

static void find_msi(struct shadow *sh)
{
	uint32_t v, pos;

	if (sh->t.cfg_read(sh->t.arg, PCI_CAPABILITY_LIST, 1, &pos))
		return;
	for (unsigned i = 0; i < 48 && pos >= 0x40 && pos < 0x100; i++) {
		pos &= 0xfc;
		if (sh->t.cfg_read(sh->t.arg, pos, 1, &v))
			return;
		if (v == PCI_CAP_ID_MSI) {
			sh->msi_cap = (uint16_t)pos;
			if (!sh->t.cfg_read(sh->t.arg, pos + PCI_MSI_FLAGS, 2, &v))
				sh->msi64 = v & PCI_MSI_FLAGS_64BIT;
			sh->t.cfg_read(sh->t.arg, pos + PCI_MSI_ADDRESS_LO, 4, &sh->msi_lo);
			if (sh->msi64)
				sh->t.cfg_read(sh->t.arg, pos + PCI_MSI_ADDRESS_HI, 4, &sh->msi_hi);
			return;
		}
		if (sh->t.cfg_read(sh->t.arg, pos + 1, 1, &pos))
			return;
	}
}

int shadow_create(struct pci_host *ph, const struct lend_grant *g,
		  const struct shadow_transport *t, struct pci_dev **out)
{
	struct fab_host *h = pci_host_fab(ph);
	struct pci_dma_window w = { .on = true };
	struct pci_dev_priv *p;
	struct pci_dev *pdev;
	struct shadow *sh;
	int rc, dom = 0;

	if (!h || !g || !t || !t->cfg_read || !t->cfg_write || !g->dma_size)
		return -EINVAL;
	sh = calloc(1, sizeof(*sh));
	p = pci_dev_alloc(ph);
	if (!sh || !p) {
		free(sh);
		free(p);
		return -ENOMEM;
	}
	pdev = &p->pub;
	sh->g = *g;
	sh->t = *t;
	sh->h = h;
	fab_host_lock(h);
	rc = -EHOSTUNREACH;
	sh->ntb = ntb_drv_to(h, g->lender);
	if (!sh->ntb)
		goto fail;
	rc = ntb_drv_register_client(sh->ntb, &shadow_ntb_client, sh);
	if (rc)
		goto fail;
	sh->client = true;
	rc = -ENOSPC;
	for (unsigned s = 0; s < 32 * 8 * 15; s++) {
		uint16_t bdf = FAB_BDF(SHADOW_BUS + s / 256, (s / 8) % 32, s % 8);

		if (!pci_get_dev(ph, bdf) && !fab_func_by_bdf(h, bdf)) {
			pdev->bdf = bdf;
			rc = 0;
			break;
		}
	}
	if (rc)
		goto fail;
	pdev->vendor = g->vendor;
	pdev->device = g->device;
	pdev->class = g->class;
	snprintf(pdev->name, sizeof(pdev->name), "%s", g->name);
	rc = map_bars(sh, pdev);
	if (rc)
		goto fail;
	cfg_bars_init(&sh->bars, pdev->bar_addr, sh->g.bar_size, sh->g.bar_flags);
	{
		uint32_t id = 0;

		sh->virtfn = !t->cfg_read(t->arg, PCI_VENDOR_ID, 2, &id) && id == 0xffff &&
			     g->vendor != 0xffff;
	}
	find_msi(sh);
	if (iommu_enabled(h->iommu)) {
		dom = ntb_iommu_domain(h);
		rc = dom;
		if (dom <= 0)
			goto fail;
	}
	w.bus = g->dma_bus;
	w.target = g->dma_target;
	w.size = g->dma_size;
	w.domain = (uint32_t)dom;
	rc = pci_dma_window_set(pdev, &w);
	if (rc)
		goto fail;
	pdev->ops = &shadow_ops;
	pdev->ops_arg = sh;
	pdev->is_lendable = g->mdev;   /* a VM's device: no driver of this host binds */
	sh->pdev = pdev;
	fab_host_tables_changed(h);
	rc = pci_hot_add_dev(ph, pdev);
	if (rc) {
		pdev->ops = NULL;
		pdev->ops_arg = NULL;
		goto fail;
	}
	fab_host_unlock(h);
	if (out)
		*out = pdev;
	return 0;
fail:
	luts_clear(sh);
	fab_host_unlock(h);
	pci_dev_free(pdev);
	free(sh);
	return rc;
}

int shadow_destroy(struct pci_host *ph, struct pci_dev *pdev, bool force)
{
	struct shadow *sh = sh_of(pdev);

	if (!sh || !pci_host_fab(ph))
		return -EINVAL;
	if (pdev->driver && !force)
		return -EBUSY;
	/* Unbinds any driver, then frees the device: sh_release undoes the rest. */
	return pci_hot_remove(ph, pdev);
}

void shadow_lost(struct pci_dev *pdev)
{
	struct shadow *sh = sh_of(pdev);

	if (sh)
		pci_channel_set(pdev, pci_channel_io_perm_failure);
}

/*
 * Resolve every BAR's window from the CPU again, as pci_iomap did: a route
 * that now fails (a link down at the lender or on the way, reported to us
 * only as changed tables) freezes the channel; all of them back with the
 * same translations resumes it. May wait for peers (a worker's call, with
 * the host lock held as usual): the device's work key must be held.
 */
int shadow_revalidate(struct pci_dev *pdev)
{
	struct shadow *sh = sh_of(pdev);
	struct fab_route *r;
	bool down = false;

	if (!sh)
		return -EINVAL;
	if (pci_dev_is_disconnected(pdev))
		return 0;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (unsigned b = 0; b < 6 && !down; b++) {
		uint64_t addr = pdev->bar_addr[b], size = pdev->bar_size[b], done = 0;

		if (!size)
			continue;
		for (unsigned i = 0; i < 65536 && done < size && !down; i++) {
			if (fab_route_resolve(sh->h, FAB_RID_CPU, addr + done, size - done, false, r) ||
			    r->status != FAB_OK || !r->tgt.len || r->tgt.host != sh->g.lender)
				down = true;
			else
				done += r->tgt.len;
		}
	}
	free(r);
	/* With our own link down every route fails here: what lies beyond is
	 * unknown, so the last word on it stands. */
	if (!sh->link_down)
		sh->far_down = down;
	channel_update(sh);
	return down ? -ENOLINK : 0;
}
