// SPDX-License-Identifier: MIT
/*
 * Device Lending, the lender's half: what one lent device needs on the
 * lender so that a borrower can drive it (see lend.h). Prepared once per
 * borrow; nothing here runs per DMA mapping.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "fabric/intc.h"
#include "fabric/iommu.h"
#include "fabric/route.h"
#include "fabric/ntb.h"
#include "fabric/sriov.h"
#include "lend.h"
#include "ntb_drv.h"

#define LEND_MAX_RUNS 16   /* LUT runs of one lent device: DMA, MSI, P2P windows */

struct lut_run {
	struct ntb_drv *ntb;    /* NULL: a target on the lender itself, no window */
	struct ntb_mw mw;
	uint64_t bus, size;     /* the LUT windows' bus range */
	uint64_t iova;          /* what the device uses: bus, or remapped (IOMMU on) */
};

/*
 * With the lender's IOMMU on, windows are remapped into the device's own
 * domain from 4 GiB up: NTB windows sit high in the 64-bit MMIO space, often
 * beyond what a device can address (its DMA limit).
 */
#define LEND_IOVA_BASE  (4ull << 30)
#define LEND_IOVA_ALIGN (2ull << 20)
/*
 * A VM's device DMAs with guest-physical addresses, and q35 puts guest RAM
 * at 4 GiB too (past the PCI hole): its windows go above any guest RAM
 * (below 4 GiB + SMIO_VM_MEM_MAX), so the mirror of high memory is free.
 */
#define LEND_VM_IOVA_BASE (128ull << 30)
#define LEND_VM_MIRRORS 2   /* guest RAM below and above 4 GiB */

#define LEND_MAX_RID_NTBS 8

struct lend_setup {
	uint16_t bdf;
	uint32_t borrower;
	struct ntb_drv *ntb;    /* ours, towards the borrower */
	struct lut_run runs[LEND_MAX_RUNS];
	unsigned nruns;
	bool rid_held;          /* a reference to the device's requester ID there */
	/* Other NTBs of the lender (towards peer-to-peer targets on other hosts)
	 * whose requester-ID tables we admitted the device to. */
	struct ntb_drv *rid_ntbs[LEND_MAX_RID_NTBS];
	unsigned nrid_ntbs;
	uint32_t domain;        /* the device's IOMMU domain (0: IOMMU off) */
	bool domain_owned;
	uint64_t next_iova;     /* where the next remapped window goes */
	/* A VM's guest-physical mirror (lend_vm_mirror): low and high memory. */
	uint64_t mirror_iova[LEND_VM_MIRRORS], mirror_size[LEND_VM_MIRRORS];
	uint64_t bar_addr[6], bar_size[6];   /* exposed through the NTBs (IOMMU on) */
	bool client;            /* registered for ntb's events */
	bool link_down;         /* ntb's link went down while lent (failover: later) */
	uint32_t link_events;
};

/*
 * Events of the NTB towards the borrower. Recorded only: acting on a lost
 * link (failing over to another path) builds on this.
 */
static void lend_link_event(void *ctx, struct ntb_drv *ntb, bool up)
{
	struct lend_setup *s = ctx;

	(void)ntb;
	s->link_down = !up;
	s->link_events++;
}

static const struct ntb_client_ops lend_ntb_client = { .link_event = lend_link_event };

static bool overlaps(uint64_t a, uint64_t n, uint64_t b, uint64_t m)
{
	return n && m && a < b + m && b < a + n;
}

/* IOVA [a, a + n) reaches the IOMMU from any device of h (no window claims it). */
static bool iova_free(const struct fab_host *h, uint64_t a, uint64_t n)
{
	const struct topo_host *t = h->t;

	return a + n > a && a + n <= (1ull << 48) &&
	       !overlaps(a, n, t->mmio32_base, t->mmio32_size) &&
	       !overlaps(a, n, t->mmio64_base, t->mmio64_size) &&
	       !overlaps(a, n, FAB_MSI_BASE, FAB_MSI_SIZE);
}

/* A LUT run of ntb towards [addr, addr + size) at host: the device-side address of addr. */
static int run_add(struct fab_host *h, struct lend_setup *s, struct ntb_drv *ntb,
		   uint32_t host, uint64_t addr, uint64_t size, uint64_t *bus)
{
	struct lut_run *r;
	int rc;

	if (s->nruns >= LEND_MAX_RUNS)
		return -ENOSPC;
	r = &s->runs[s->nruns];
	*r = (struct lut_run){ .ntb = ntb };
	rc = ntb_mw_map(ntb, host, addr, size, &r->mw);
	if (rc)
		return rc;
	r->bus = r->mw.run_bus;
	r->size = r->mw.run_size;
	r->iova = r->bus;
	if (s->domain) {
		/* The device's own domain: the window remapped low, unless that would
		 * collide with addresses routed before the IOMMU (then identity). */
		if (iova_free(h, s->next_iova, r->size)) {
			r->iova = s->next_iova;
			s->next_iova += (r->size + LEND_IOVA_ALIGN - 1) & ~(LEND_IOVA_ALIGN - 1);
		}
		rc = iommu_map(h->iommu, s->domain, r->iova, r->bus, r->size,
			       IOMMU_READ | IOMMU_WRITE);
		if (rc) {
			ntb_mw_unmap(ntb, &r->mw);
			return rc;
		}
	}
	s->nruns++;
	*bus = r->iova + r->mw.offset;
	return 0;
}

static void run_del(struct fab_host *h, struct lend_setup *s, unsigned i)
{
	struct lut_run *r = &s->runs[i];

	if (s->domain)
		iommu_unmap(h->iommu, s->domain, r->iova, r->size);
	if (r->ntb)
		ntb_mw_unmap(r->ntb, &r->mw);
}

static void quiesce(struct fab_host *h, uint16_t bdf)
{
	uint32_t v, pos = 0;

	/* MSI-X and MSI off, then no decoding and no bus mastering. */
	if (!fab_cfg_access_read(h, bdf, PCI_CAPABILITY_LIST, 1, &pos))
		for (unsigned i = 0; i < 48 && pos >= 0x40; i++) {
			pos &= 0xfc;
			if (fab_cfg_access_read(h, bdf, pos, 1, &v))
				break;
			if (v == PCI_CAP_ID_MSIX)
				fab_cfg_access_write(h, bdf, pos + PCI_MSIX_FLAGS, 2, 0);
			else if (v == PCI_CAP_ID_MSI)
				fab_cfg_access_write(h, bdf, pos + PCI_MSI_FLAGS, 2, 0);
			if (fab_cfg_access_read(h, bdf, pos + 1, 1, &pos))
				break;
		}
	fab_cfg_access_write(h, bdf, PCI_COMMAND, 2, PCI_COMMAND_INTX_DISABLE);
}

void lend_teardown(struct fab_host *h, struct lend_setup *s, bool reset)
{
	if (!s)
		return;
	fab_host_lock(h);
	if (reset)
		quiesce(h, s->bdf);
	for (unsigned i = 0; i < LEND_VM_MIRRORS; i++)
		if (s->mirror_size[i])
			iommu_unmap(h->iommu, s->domain, s->mirror_iova[i], s->mirror_size[i]);
	while (s->nruns)
		run_del(h, s, --s->nruns);
	for (unsigned b = 0; b < 6; b++)
		if (s->bar_size[b])
			ntb_iommu_unexpose(h, s->bar_addr[b], s->bar_size[b]);
	if (s->rid_held)
		ntb_rid_put(s->ntb, s->bdf);
	while (s->nrid_ntbs)
		ntb_rid_put(s->rid_ntbs[--s->nrid_ntbs], s->bdf);
	if (s->client)
		ntb_drv_unregister_client(s->ntb, &lend_ntb_client, s);
	if (s->domain_owned) {
		iommu_detach(h->iommu, s->bdf);
		iommu_domain_free(h->iommu, s->domain);
	}
	fab_host_tables_changed(h);
	fab_host_unlock(h);
	free(s);
}

/*
 * What the borrower is told the device is. A VF's own header has all-ones
 * IDs and no BARs: as Linux's PCI core (and vfio-pci) do, its vendor is the
 * PF's, its device ID the PF's VF Device ID, and its BARs' types those of
 * the PF's VF BARs, so the borrower sees a whole function.
 */
void lend_read_identity(struct fab_host *h, struct fab_func *fn, struct lend_grant *g)
{
	uint16_t pf_bdf = fn->pf ? fab_func_bdf(fn->pf) : 0;
	uint32_t v = 0;

	fab_cfg_access_read(h, fn->pf ? pf_bdf : g->bdf, PCI_VENDOR_ID, 4, &v);
	g->vendor = (uint16_t)v;
	g->device = (uint16_t)(v >> 16);
	if (fn->pf) {
		fab_cfg_access_read(h, pf_bdf, fn->pf->sriov_cap + PCI_SRIOV_VF_DID, 2, &v);
		g->device = (uint16_t)v;
	}
	fab_cfg_access_read(h, g->bdf, PCI_CLASS_REVISION, 4, &v);
	g->class = v >> 8;
	for (unsigned b = 0; b < 6; b++) {
		if (!fn->bars[b].size)
			continue;
		g->bar_addr[b] = fab_func_bar_addr(fn, b);
		g->bar_size[b] = fn->bars[b].size;
		if (fn->pf)
			fab_cfg_access_read(h, pf_bdf, fn->pf->sriov_cap + PCI_SRIOV_BAR + 4 * b, 4,
					    &v);
		else
			fab_cfg_access_read(h, g->bdf, PCI_BASE_ADDRESS_0 + 4 * b, 4, &v);
		g->bar_flags[b] = v & ~(uint32_t)PCI_BASE_ADDRESS_MEM_MASK;
	}
	memcpy(g->name, fn->name, sizeof(g->name));
	memcpy(g->model, fn->model, sizeof(g->model));
}

int lend_setup(struct fab_host *h, uint16_t bdf, uint32_t borrower, unsigned flags,
	       uint64_t dma_target, uint64_t dma_size, struct lend_grant *g,
	       struct lend_setup **out)
{
	struct fab_func *fn;
	struct lend_setup *s;
	int rc;

	if (!h || !g || !out || !dma_size || dma_target + dma_size < dma_target)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	fab_host_lock(h);
	fn = fab_func_by_bdf(h, bdf);
	rc = -ENODEV;
	if (!fn || fn->kind != FAB_FN_ENDPOINT)
		goto fail;
	s->bdf = bdf;
	s->borrower = borrower;
	s->next_iova = flags & LEND_SETUP_VM ? LEND_VM_IOVA_BASE : LEND_IOVA_BASE;
	s->ntb = ntb_drv_to(h, borrower);
	rc = -EHOSTUNREACH;
	if (!s->ntb)
		goto fail;
	g->lender = h->id;
	g->borrower = borrower;
	g->bdf = bdf;
	lend_read_identity(h, fn, g);
	rc = ntb_rid_get(s->ntb, bdf);
	if (rc)
		goto fail;
	s->rid_held = true;
	if (iommu_enabled(h->iommu)) {
		int dom = (int)iommu_domain_of(h->iommu, bdf);

		if (!dom) {
			dom = iommu_domain_alloc(h->iommu);
			rc = dom;
			if (dom < 0)
				goto fail;
			rc = iommu_attach(h->iommu, bdf, (uint32_t)dom);
			if (rc) {
				iommu_domain_free(h->iommu, (uint32_t)dom);
				goto fail;
			}
			s->domain_owned = true;
		}
		s->domain = (uint32_t)dom;
		/* The borrower's CPU reaches the BARs through our NTB. */
		for (unsigned b = 0; b < 6; b++) {
			if (!g->bar_size[b])
				continue;
			rc = ntb_iommu_expose(h, g->bar_addr[b], g->bar_size[b]);
			if (rc)
				goto fail;
			s->bar_addr[b] = g->bar_addr[b];
			s->bar_size[b] = g->bar_size[b];
		}
	}
	rc = run_add(h, s, s->ntb, borrower, dma_target, dma_size, &g->dma_bus);
	if (!rc)
		rc = run_add(h, s, s->ntb, borrower, FAB_MSI_BASE, FAB_MSI_SIZE, &g->msi_bus);
	if (!rc)
		rc = ntb_drv_register_client(s->ntb, &lend_ntb_client, s);
	if (rc)
		goto fail;
	s->client = true;
	g->dma_target = dma_target;
	g->dma_size = dma_size;
	fab_host_tables_changed(h);
	fab_host_unlock(h);
	*out = s;
	return 0;
fail:
	fab_host_unlock(h);
	lend_teardown(h, s, false);
	return rc;
}

/* Is [addr, addr + size) inside one BAR of an endpoint of h? */
static bool in_endpoint_bar(struct fab_host *h, uint64_t addr, uint64_t size)
{
	for (uint32_t i = 0; i < h->nfuncs; i++) {
		const struct fab_func *fn = h->funcs[i];

		if (fn->kind != FAB_FN_ENDPOINT)
			continue;
		for (unsigned b = 0; b < 6; b++) {
			uint64_t base = fab_func_bar_addr(fn, b), bs = fn->bars[b].size;

			if (bs && base && addr >= base && size <= bs && addr - base <= bs - size)
				return true;
		}
	}
	return false;
}

/*
 * Requests entering an NTB must come from an admitted requester: a target
 * reached through another NTB than the borrower's needs the device in that
 * NTB's requester-ID table too (until the lend ends).
 */
static int admit(struct lend_setup *s, struct ntb_drv *ntb)
{
	int rc;

	if (ntb == s->ntb)
		return 0;
	for (unsigned i = 0; i < s->nrid_ntbs; i++)
		if (s->rid_ntbs[i] == ntb)
			return 0;
	if (s->nrid_ntbs == LEND_MAX_RID_NTBS)
		return -ENOSPC;
	rc = ntb_rid_get(ntb, s->bdf);
	if (!rc)
		s->rid_ntbs[s->nrid_ntbs++] = ntb;
	return rc;
}

int lend_p2p_map(struct lend_setup *s, uint32_t host, uint64_t addr, uint64_t size,
		 uint64_t *bus)
{
	struct fab_host *h;
	struct ntb_drv *ntb;
	int rc;

	if (!s || !bus)
		return -EINVAL;
	h = ntb_drv_hw(s->ntb)->fn->host;
	fab_host_lock(h);
	if (host == h->id && !in_endpoint_bar(h, addr, size)) {
		rc = -EPERM;   /* only device memory: never the lender's RAM or bridges */
	} else if (host == h->id) {
		/* Same lender: the target's own bus address (mapped when isolated). */
		uint64_t lo = addr & ~(IOMMU_PAGE_4K - 1);
		uint64_t hi = (addr + size + IOMMU_PAGE_4K - 1) & ~(IOMMU_PAGE_4K - 1);

		rc = s->nruns >= LEND_MAX_RUNS ? -ENOSPC : 0;
		if (!rc && s->domain)
			rc = iommu_map(h->iommu, s->domain, lo, lo, hi - lo,
				       IOMMU_READ | IOMMU_WRITE);
		if (!rc)
			s->runs[s->nruns++] = (struct lut_run){ .bus = lo, .size = hi - lo,
								.iova = lo };
		*bus = addr;
	} else {
		ntb = ntb_drv_to(h, host);
		rc = ntb ? admit(s, ntb) : -EHOSTUNREACH;
		if (!rc)
			rc = run_add(h, s, ntb, host, addr, size, bus);
	}
	if (!rc)
		fab_host_tables_changed(h);
	fab_host_unlock(h);
	return rc;
}

int lend_route_hops(struct fab_host *h, uint16_t bdf, uint64_t bus, unsigned *hops)
{
	struct fab_route *r = malloc(sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	fab_host_lock(h);
	rc = fab_route_resolve_uncached(h, bdf, bus, 4, true, r);
	if (!rc && r->status != FAB_OK)
		rc = -EHOSTUNREACH;
	*hops = r->nhops;
	fab_host_unlock(h);
	free(r);
	return rc;
}

static int cfg_check(uint32_t off, uint32_t size)
{
	if ((size != 1 && size != 2 && size != 4) || off >= 4096 || off % size)
		return -EINVAL;
	return 0;
}

int lend_cfg_read(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t size,
		  uint32_t *val)
{
	int rc = cfg_check(off, size);

	if (rc)
		return rc;
	fab_host_lock(h);
	rc = fab_cfg_access_read(h, bdf, off, size, val);
	fab_host_unlock(h);
	return rc;
}

int lend_cfg_snapshot(struct fab_host *h, uint16_t bdf, uint8_t *cfg, uint32_t len)
{
	struct lend_grant g = { .bdf = bdf };
	struct fab_func *fn;
	int rc = 0;

	fab_host_lock(h);
	fn = fab_func_by_bdf(h, bdf);
	for (uint32_t off = 0; fn && !rc && off + 4 <= len; off += 4) {
		uint32_t dw = 0;

		rc = fab_cfg_access_read(h, bdf, off, 4, &dw);
		memcpy(cfg + off, &dw, 4);
	}
	if (fn && !rc && fn->pf) {
		uint32_t id;

		lend_read_identity(h, fn, &g);
		id = (uint32_t)g.vendor | (uint32_t)g.device << 16;
		memcpy(cfg + PCI_VENDOR_ID, &id, 4);
		for (unsigned b = 0; b < 6; b++)
			if (PCI_BASE_ADDRESS_0 + 4 * b + 4 <= len)
				memcpy(cfg + PCI_BASE_ADDRESS_0 + 4 * b, &g.bar_flags[b], 4);
	}
	fab_host_unlock(h);
	return fn ? rc : -ENODEV;
}

int lend_cfg_write(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t size,
		   uint32_t val)
{
	struct fab_func *fn;
	int rc = cfg_check(off, size);

	if (rc)
		return rc;
	/* The lender's address map is not the borrower's to change. */
	if ((off >= PCI_BASE_ADDRESS_0 && off < PCI_CARDBUS_CIS) || (off >= PCI_ROM_ADDRESS &&
								    off < PCI_ROM_ADDRESS + 4))
		return 0;
	fab_host_lock(h);
	fn = fab_func_by_bdf(h, bdf);
	/*
	 * Nor are the PF's VFs: they are functions of the lender, in its pool,
	 * maybe lent to others (docs/lending.md, "Lending per function"). The
	 * SR-IOV capability (VF Enable, NumVFs, VF BARs) reads as it is.
	 */
	if (fn && fn->sriov_cap && off < fn->sriov_cap + (uint32_t)FAB_SRIOV_SIZEOF &&
	    off + size > fn->sriov_cap)
		rc = 0;
	else
		rc = fab_cfg_access_write(h, bdf, off, size, val);
	fab_host_unlock(h);
	return rc;
}

/* ---------- in-process lending (tests, benchmarks) ---------- */

struct lend_local {
	struct fab_host *lender;
	uint16_t bdf;
	struct pci_host *ph;
	struct fab_host *bh;     /* the borrower (outlives ph in tests' teardown) */
	struct lend_setup *s;
	struct pci_dev *shadow;
};

/*
 * A message to another host: the borrower's lock is not held while the
 * lender works (its device threads take the lender's lock, then ours to
 * deliver an interrupt: holding both here would deadlock).
 */
#define TO_LENDER(l, call) ({ \
	unsigned depth_ = fab_host_unlock_all((l)->bh); \
	int rc_ = (call); \
	fab_host_relock((l)->bh, depth_); \
	rc_; })

static int local_cfg_read(void *arg, uint32_t off, uint32_t size, uint32_t *val)
{
	struct lend_local *l = arg;

	return TO_LENDER(l, lend_cfg_read(l->lender, l->bdf, off, size, val));
}

static int local_cfg_write(void *arg, uint32_t off, uint32_t size, uint32_t val)
{
	struct lend_local *l = arg;

	return TO_LENDER(l, lend_cfg_write(l->lender, l->bdf, off, size, val));
}

static int local_p2p_map(void *arg, uint32_t host, uint64_t addr, uint64_t size,
			 uint64_t *bus)
{
	struct lend_local *l = arg;

	return TO_LENDER(l, lend_p2p_map(l->s, host, addr, size, bus));
}

static int local_route_hops(void *arg, uint64_t bus, unsigned *hops)
{
	struct lend_local *l = arg;

	return TO_LENDER(l, lend_route_hops(l->lender, l->bdf, bus, hops));
}

static int local_teardown(struct lend_local *l)
{
	lend_teardown(l->lender, l->s, true);
	return 0;
}

static void local_release(void *arg)
{
	struct lend_local *l = arg;

	l->shadow = NULL;
}

int lend_local_borrow(struct fab_host *lender, uint16_t bdf, struct pci_host *borrower,
		      struct lend_local **out, struct pci_dev **shadow)
{
	struct shadow_transport t = { local_cfg_read, local_cfg_write, local_p2p_map,
				      local_route_hops, local_release, NULL };
	struct lend_local *l = calloc(1, sizeof(*l));
	struct lend_grant g;
	uint64_t target, size;
	int rc;

	if (!l)
		return -ENOMEM;
	l->lender = lender;
	l->bdf = bdf;
	l->ph = borrower;
	l->bh = pci_host_fab(borrower);
	t.arg = l;
	rc = shadow_dma_target(borrower, &target, &size);
	if (!rc)
		rc = TO_LENDER(l, lend_setup(lender, bdf, pci_host_fab(borrower)->id, 0, target, size,
					     &g, &l->s));
	if (!rc) {
		rc = shadow_create(borrower, &g, &t, &l->shadow);
		if (rc)
			TO_LENDER(l, local_teardown(l));
	}
	if (rc) {
		free(l);
		return rc;
	}
	*out = l;
	if (shadow)
		*shadow = l->shadow;
	return 0;
}

int lend_local_return(struct lend_local *l, bool force)
{
	int rc;

	if (!l)
		return -EINVAL;
	if (l->shadow) {
		rc = shadow_destroy(l->ph, l->shadow, force);
		if (rc)
			return rc;
	}
	TO_LENDER(l, local_teardown(l));
	free(l);
	return 0;
}

int lend_vm_mirror(struct fab_host *h, struct lend_setup *s, uint64_t iova, uint64_t bus,
		   uint64_t size)
{
	unsigned m = 0;
	int rc = -ERANGE;

	if (!h || !s || !size || iova + size < iova)
		return -EINVAL;
	if (!s->domain)
		return -EOPNOTSUPP;   /* no IOMMU: the device would need host addresses */
	fab_host_lock(h);
	while (m < LEND_VM_MIRRORS && s->mirror_size[m])
		m++;
	if (m == LEND_VM_MIRRORS) {
		rc = -EALREADY;
	} else if (!iova_free(h, iova, size)) {
		rc = -EADDRINUSE;     /* routed before the IOMMU (MMIO, MSI windows) */
	} else {
		for (unsigned i = 0; i < s->nruns; i++) {
			const struct lut_run *r = &s->runs[i];

			if (bus < r->iova || bus - r->iova > r->size || size > r->size - (bus - r->iova))
				continue;
			rc = iommu_map(h->iommu, s->domain, iova, r->bus + (bus - r->iova), size,
				       IOMMU_READ | IOMMU_WRITE);
			break;
		}
		if (!rc) {
			s->mirror_iova[m] = iova;
			s->mirror_size[m] = size;
			fab_host_tables_changed(h);
		}
	}
	fab_host_unlock(h);
	return rc;
}
