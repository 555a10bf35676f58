// SPDX-License-Identifier: MIT
/*
 * The DMA API. Buffers live in host RAM (physmem); what the device is told is
 * a bus address:
 *
 *  - IOMMU off: the physical address itself. A device whose DMA mask does not
 *    reach a buffer cannot use it; there are no bounce buffers (nothing here
 *    needs them), so such a mapping fails with -EIO. Coherent allocations are
 *    placed below the mask instead.
 *  - IOMMU on: an IOVA in the device's own domain (allocated on first use,
 *    the device's requester ID attached to it), from a per-domain allocator
 *    that honours the DMA mask and leaves out the addresses a request would
 *    never reach the IOMMU with: the MSI window and the host's MMIO windows
 *    (a switch would route those peer-to-peer before translation).
 *
 * Every mapping is recorded so that frees are checked and whatever a driver
 * leaves behind is undone when it lets go of the device.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/iommu.h"
#include "pci_priv.h"
#include "util/log.h"

#define IOVA_BASE   (1ull << 20)   /* bus address 0 stays invalid */
#define IOVA_END    (1ull << IOMMU_IOVA_BITS)

static uint64_t page_up(uint64_t v)
{
	return (v + PHYSMEM_PAGE - 1) & ~(PHYSMEM_PAGE - 1);
}

static struct fab_host *host_of(const struct pci_dev *pdev)
{
	return pdev->host->h;
}

static bool mmu_on(const struct pci_dev *pdev)
{
	return iommu_enabled(host_of(pdev)->iommu);
}

/* ---------- records ---------- */

static int rec_reserve(struct pci_dev_priv *p)
{
	struct dma_rec *r;
	unsigned cap;

	if (p->nrecs < p->caprecs)
		return 0;
	cap = p->caprecs ? p->caprecs * 2 : 16;
	r = realloc(p->recs, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	p->recs = r;
	p->caprecs = cap;
	return 0;
}

static int rec_find(const struct pci_dev_priv *p, uint64_t bus, bool coherent)
{
	for (unsigned i = 0; i < p->nrecs; i++)
		if (p->recs[i].bus == bus && p->recs[i].coherent == coherent)
			return (int)i;
	return -1;
}

/* Undo one mapping: IOMMU entries, IOVA space, and RAM for coherent buffers. */
static void rec_undo(struct pci_dev *pdev, unsigned i)
{
	struct pci_dev_priv *p = to_priv(pdev);
	struct dma_rec r = p->recs[i];

	if (pdev->domain) {
		/* Cannot fail for a recorded mapping; if the IOVA set cannot grow
		 * (-ENOMEM) the range is merely lost to this domain until release. */
		iommu_unmap(host_of(pdev)->iommu, pdev->domain, r.iova, r.size);
		pm_ranges_add(&p->iova, r.iova, r.iova + r.size);
	}
	if (r.coherent)
		physmem_free(pdev->host->pm, r.phys, r.size);
	p->recs[i] = p->recs[--p->nrecs];
}

/* ---------- IOMMU domain and IOVA space ---------- */

static int carve_hole(struct pm_ranges *iova, uint64_t base, uint64_t size)
{
	uint64_t end = base + size;

	if (!size || base >= IOVA_END)
		return 0;
	if (end < base || end > IOVA_END)
		end = IOVA_END;
	return pm_ranges_carve(iova, base, end);
}

static int domain_get(struct pci_dev *pdev)
{
	struct pci_dev_priv *p = to_priv(pdev);
	struct fab_host *h = host_of(pdev);
	int dom, rc;

	if (pdev->domain)
		return 0;
	if (p->win.on)
		return -EIO;   /* a shadow device's window has no IOVA space left to give */
	dom = iommu_domain_alloc(h->iommu);
	if (dom < 0)
		return dom;
	pm_ranges_init(&p->iova);
	rc = pm_ranges_add(&p->iova, IOVA_BASE, IOVA_END);
	if (!rc)
		rc = carve_hole(&p->iova, FAB_MSI_BASE, FAB_MSI_SIZE);
	if (!rc)
		rc = carve_hole(&p->iova, h->t->mmio32_base, h->t->mmio32_size);
	if (!rc)
		rc = carve_hole(&p->iova, h->t->mmio64_base, h->t->mmio64_size);
	if (!rc)
		rc = iommu_attach(h->iommu, pdev->bdf, (uint32_t)dom);
	if (rc) {
		pm_ranges_fini(&p->iova);
		iommu_domain_free(h->iommu, (uint32_t)dom);
		return rc;
	}
	pdev->domain = (uint32_t)dom;
	return 0;
}

void pci_dma_release(struct pci_dev *pdev)
{
	struct pci_dev_priv *p = to_priv(pdev);
	struct fab_host *h = host_of(pdev);

	fab_host_lock(h);
	while (p->nrecs)
		rec_undo(pdev, p->nrecs - 1);
	if (p->win.on) {
		/* The window and the NTBs' domain outlive drivers: they go with the shadow. */
		fab_host_unlock(h);
		return;
	}
	if (pdev->domain) {
		iommu_detach(h->iommu, pdev->bdf);
		iommu_domain_free(h->iommu, pdev->domain);
		pdev->domain = 0;
	}
	pm_ranges_fini(&p->iova);
	fab_host_unlock(h);
}

/*
 * Map [phys, phys + size) (page-aligned) for the device: returns the bus
 * address of phys. The record slot must have been reserved.
 */
static int map_pages(struct pci_dev *pdev, uint64_t phys, uint64_t size, bool coherent,
		     uint64_t *bus)
{
	struct pci_dev_priv *p = to_priv(pdev);
	struct fab_host *h = host_of(pdev);
	uint64_t iova, limit = pdev->dma_mask < IOVA_END - 1 ? pdev->dma_mask : IOVA_END - 1;
	int rc;

	if (p->win.on) {
		/* A shadow device: the lender's window leads to [target, target + size). */
		if (pdev->dma_mask < p->win.bus)
			return -EIO;
		limit = p->win.target + p->win.size - 1;
		if (pdev->dma_mask - p->win.bus < p->win.size - 1)
			limit = p->win.target + (pdev->dma_mask - p->win.bus);
	}
	if (!mmu_on(pdev)) {
		iova = phys;
		if (phys + size - 1 > limit)
			return -EIO;   /* beyond the mask or window, and no bounce buffers */
		*bus = phys;
	} else {
		rc = domain_get(pdev);
		if (rc)
			return rc;
		rc = pm_ranges_alloc(&p->iova, size, PHYSMEM_PAGE, limit, &iova);
		if (rc)
			return rc;
		rc = iommu_map(h->iommu, pdev->domain, iova, phys, size, IOMMU_READ | IOMMU_WRITE);
		if (rc) {
			pm_ranges_add(&p->iova, iova, iova + size);
			return rc;
		}
		*bus = iova;
	}
	if (p->win.on)
		*bus = *bus - p->win.target + p->win.bus;
	p->recs[p->nrecs++] = (struct dma_rec){ .bus = *bus, .iova = iova, .phys = phys,
						.size = size, .coherent = coherent };
	return 0;
}

/* Without an IOMMU the device sees physical addresses: the highest it reaches. */
static uint64_t phys_limit(struct pci_dev *pdev)
{
	const struct pci_dma_window *w = &to_priv(pdev)->win;

	if (mmu_on(pdev))
		return UINT64_MAX;
	if (!w->on)
		return pdev->dma_mask;
	if (pdev->dma_mask < w->bus)
		return 0;
	return pdev->dma_mask - w->bus < w->size - 1 ? pdev->dma_mask - w->bus : w->size - 1;
}

int pci_dma_window_set(struct pci_dev *pdev, const struct pci_dma_window *w)
{
	struct pci_dev_priv *p = to_priv(pdev);
	int rc = 0;

	if (!w->on || !w->size || w->bus + w->size < w->bus || p->nrecs)
		return -EINVAL;
	if (mmu_on(pdev)) {
		if (!w->domain || w->target + w->size < w->target)
			return -EINVAL;
		pm_ranges_fini(&p->iova);
		pm_ranges_init(&p->iova);
		rc = pm_ranges_add(&p->iova, w->target, w->target + w->size);
		if (rc)
			return rc;
		pdev->domain = w->domain;
	}
	p->win = *w;
	return 0;
}

/* ---------- the API ---------- */

int dma_set_mask(struct pci_dev *pdev, uint64_t mask)
{
	uint64_t need;

	if (!pdev)
		return -EINVAL;
	/* The lowest address a device must reach for the API to serve it. */
	need = mmu_on(pdev) ? IOVA_BASE + PHYSMEM_PAGE - 1 : PHYSMEM_RESERVED + PHYSMEM_PAGE - 1;
	if (to_priv(pdev)->win.on)
		need = to_priv(pdev)->win.bus + (mmu_on(pdev) ? 0 : PHYSMEM_RESERVED) +
		       PHYSMEM_PAGE - 1;
	if ((mask & (mask + 1)) || mask < need)
		return -EIO;   /* not a run of low bits, or reaches no usable address */
	pdev->dma_mask = mask;
	return 0;
}

void *dma_alloc_coherent(struct pci_dev *pdev, size_t size, uint64_t *bus)
{
	struct fab_host *h;
	uint64_t phys, len = page_up(size);
	void *cpu = NULL;
	int rc;

	if (!pdev || !bus || !size || len < size)
		return NULL;
	h = host_of(pdev);
	fab_host_lock(h);
	rc = rec_reserve(to_priv(pdev));
	if (rc)
		goto out;
	/* Without an IOMMU the device sees physical addresses: stay under its mask. */
	rc = physmem_alloc(pdev->host->pm, len, PHYSMEM_PAGE, phys_limit(pdev), &phys);
	if (rc)
		goto out;
	cpu = physmem_virt(h, phys, len);
	rc = cpu ? map_pages(pdev, phys, len, true, bus) : -EFAULT;
	if (rc) {
		physmem_free(pdev->host->pm, phys, len);
		cpu = NULL;
		goto out;
	}
	/* Zeroed, as on Linux: physmem hands out untouched (hole) pages. */
out:
	fab_host_unlock(h);
	return cpu;
}

void dma_free_coherent(struct pci_dev *pdev, size_t size, void *cpu, uint64_t bus)
{
	struct pci_dev_priv *p;
	int i;

	if (!pdev || !cpu)
		return;
	p = to_priv(pdev);
	fab_host_lock(host_of(pdev));
	i = rec_find(p, bus, true);
	if (i < 0 || p->recs[i].size != page_up(size) ||
	    physmem_virt(host_of(pdev), p->recs[i].phys, p->recs[i].size) != cpu)
		smio_warn("%s: dma_free_coherent of a buffer it does not own "
			"(bus 0x%llx, %zu bytes): ignored", pdev->name,
			(unsigned long long)bus, size);
	else
		rec_undo(pdev, (unsigned)i);
	fab_host_unlock(host_of(pdev));
}

uint64_t dma_map_single(struct pci_dev *pdev, uint64_t phys, size_t size, int *err)
{
	uint64_t start = phys & ~(PHYSMEM_PAGE - 1), end, off, contig, bus = 0;
	int rc;

	if (!pdev || !size || phys + size < phys) {
		rc = -EINVAL;
		goto out;
	}
	end = page_up(phys + size);
	/* Only host RAM is mapped; the range must not run off its region. */
	if (!fab_ram_offset(host_of(pdev), phys, &off, &contig) || contig < size) {
		rc = -EINVAL;
		goto out;
	}
	if (!mmu_on(pdev)) {
		/* Identity: nothing to set up or undo, only the mask (and window) to respect. */
		rc = phys + size - 1 > phys_limit(pdev) ? -EIO : 0;
		bus = rc ? 0 : phys + to_priv(pdev)->win.bus;
		goto out;
	}
	fab_host_lock(host_of(pdev));
	rc = rec_reserve(to_priv(pdev));
	if (!rc)
		rc = map_pages(pdev, start, end - start, false, &bus);
	fab_host_unlock(host_of(pdev));
	bus = rc ? 0 : bus + (phys - start);
out:
	if (err)
		*err = rc;
	return bus;
}

void dma_unmap_single(struct pci_dev *pdev, uint64_t bus, size_t size)
{
	struct pci_dev_priv *p;
	uint64_t page = bus & ~(PHYSMEM_PAGE - 1);
	int i;

	if (!pdev || !size || !mmu_on(pdev))
		return;
	p = to_priv(pdev);
	fab_host_lock(host_of(pdev));
	i = rec_find(p, page, false);
	if (i < 0 || p->recs[i].size != page_up(bus + size) - page)
		smio_warn("%s: dma_unmap_single of an unknown mapping (bus 0x%llx, "
			"%zu bytes): ignored", pdev->name, (unsigned long long)bus, size);
	else
		rec_undo(pdev, (unsigned)i);
	fab_host_unlock(host_of(pdev));
}

int dma_map_sg(struct pci_dev *pdev, struct dma_sg *sg, unsigned n)
{
	if (!pdev || !sg || !n || n > INT_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		int err = 0;

		sg[i].bus = dma_map_single(pdev, sg[i].phys, sg[i].len, &err);
		if (err) {
			/* All or nothing: a partly mapped list is of no use to a driver. */
			dma_unmap_sg(pdev, sg, i);
			sg[i].bus = 0;
			return err;
		}
	}
	return (int)n;
}

void dma_unmap_sg(struct pci_dev *pdev, struct dma_sg *sg, unsigned n)
{
	if (!pdev || !sg)
		return;
	for (unsigned i = 0; i < n; i++) {
		dma_unmap_single(pdev, sg[i].bus, sg[i].len);
		sg[i].bus = 0;
	}
}

void *pci_phys_to_virt(struct pci_host *ph, uint64_t phys, size_t len)
{
	return ph ? physmem_virt(ph->h, phys, len) : NULL;
}
