/* SPDX-License-Identifier: MIT */
/* The NTB driver's per-host state, shared by ntb_drv.c and ntb_iommu.c. */
#ifndef SMARTIO_HOST_NTB_DRV_PRIV_H
#define SMARTIO_HOST_NTB_DRV_PRIV_H

#include "ntb_drv.h"

/* A range exposed through the NTBs (identity-mapped in their domain). */
struct ntb_expo {
	uint64_t addr, size;
	uint32_t dom;              /* the domain it was mapped in */
	uint32_t refs;
};

/* fab_host.ntb_os: the drivers of one host's adapters. */
struct ntb_host {
	struct fab_host *h;
	struct ntb_drv **drv;      /* by adapter index (h->ntbs) */
	uint32_t n;
	struct ntb_expo *expo;
	unsigned nexpo, capexpo;
};

/* Frees the exposure table (the host and its IOMMU are going). */
void ntb_iommu_release(struct ntb_host *nh);

#endif
