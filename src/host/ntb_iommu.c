// SPDX-License-Identifier: MIT
/*
 * The IOMMU domain of a host's NTBs (see ntb_drv.h). With the IOMMU on,
 * requests arriving through an NTB carry the NTB's requester ID and are
 * translated like DMA: whatever the host exposes through its NTBs (SISCI
 * segments, the BARs of lent devices, a local device a borrowed one reaches
 * peer-to-peer) is identity-mapped in one domain the NTBs share - what
 * Dolphin's driver does when a segment is prepared on an adapter - so the
 * address a remote LUT points at is the physical address either way. The
 * borrower's shadow devices map their DMA there too (shadow.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "ntb_drv_priv.h"

int ntb_iommu_domain(struct fab_host *h)
{
	struct fab_iommu *mmu = h->iommu;
	struct ntb_host *nh = h->ntb_os;
	int dom = 0;

	if (!iommu_enabled(mmu))
		return 0;
	if (!nh)
		return -ENODEV;
	/* Looked up each time: the admin may have attached an NTB by hand. */
	for (uint32_t i = 0; i < h->nntbs && !dom; i++)
		dom = (int)iommu_domain_of(mmu, fab_func_bdf(h->ntbs[i]->fn));
	if (!dom) {
		dom = iommu_domain_alloc(mmu);
		if (dom < 0)
			return dom;
	}
	for (uint32_t i = 0; i < h->nntbs; i++) {
		uint16_t rid = fab_func_bdf(h->ntbs[i]->fn);
		int rc;

		if (iommu_domain_of(mmu, rid))
			continue;   /* attached (here, or by hand elsewhere) */
		rc = iommu_attach(mmu, rid, (uint32_t)dom);
		if (rc)
			return rc;
	}
	return dom;
}

static struct ntb_expo *expo_find(struct ntb_host *nh, uint64_t addr, uint64_t size)
{
	for (unsigned i = 0; i < nh->nexpo; i++)
		if (nh->expo[i].addr == addr && nh->expo[i].size == size)
			return &nh->expo[i];
	return NULL;
}

int ntb_iommu_expose(struct fab_host *h, uint64_t addr, uint64_t size)
{
	struct ntb_host *nh = h->ntb_os;
	struct ntb_expo *e;
	int dom, rc;

	if (!iommu_enabled(h->iommu))
		return 0;
	if (!nh)
		return -ENODEV;
	if (!size)
		return -EINVAL;
	e = expo_find(nh, addr, size);
	if (e) {
		if (e->refs == UINT32_MAX)
			return -EOVERFLOW;
		e->refs++;
		return 0;
	}
	if (nh->nexpo == nh->capexpo) {
		unsigned cap = nh->capexpo ? 2 * nh->capexpo : 16;
		struct ntb_expo *v = realloc(nh->expo, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		nh->expo = v;
		nh->capexpo = cap;
	}
	dom = ntb_iommu_domain(h);
	if (dom < 0)
		return dom;
	rc = iommu_map(h->iommu, (uint32_t)dom, addr, addr, size, IOMMU_READ | IOMMU_WRITE);
	if (rc)
		return rc;
	nh->expo[nh->nexpo++] = (struct ntb_expo){ .addr = addr, .size = size,
						   .dom = (uint32_t)dom, .refs = 1 };
	return 0;
}

int ntb_iommu_unexpose(struct fab_host *h, uint64_t addr, uint64_t size)
{
	struct ntb_host *nh = h->ntb_os;
	struct ntb_expo *e;

	if (!iommu_enabled(h->iommu))
		return 0;
	e = nh ? expo_find(nh, addr, size) : NULL;
	if (!e)
		return -ENOENT;
	if (--e->refs)
		return 0;
	/* -ENOENT: unmapped by hand meanwhile; nothing left to undo. */
	iommu_unmap(h->iommu, e->dom, addr, size);
	*e = nh->expo[--nh->nexpo];
	return 0;
}

void ntb_iommu_release(struct ntb_host *nh)
{
	free(nh->expo);
	nh->expo = NULL;
	nh->nexpo = nh->capexpo = 0;
}
