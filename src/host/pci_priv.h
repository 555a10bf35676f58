/* SPDX-License-Identifier: MIT */
/* Internals shared by the PCI core's files (pci.c, dma.c, irq.c). Not for drivers. */
#ifndef SMARTIO_HOST_PCI_PRIV_H
#define SMARTIO_HOST_PCI_PRIV_H

#include <stddef.h>

#include "pci.h"
#include "physmem.h"

#define PCI_MAX_DRIVERS  32

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* One live DMA mapping of a device, so that frees can be checked and a
 * device that goes away with mappings left can be cleaned up. */
struct dma_rec {
	uint64_t bus;        /* page-aligned bus address (IOVA, or physical) */
	uint64_t phys;       /* page-aligned physical address */
	uint64_t size;       /* page multiple */
	bool coherent;       /* dma_alloc_coherent: physmem owns phys */
};

struct pci_dev_priv {
	struct pci_dev pub;
	struct pm_ranges iova;    /* free IOVA space of pub.domain */
	struct dma_rec *recs;
	unsigned nrecs, caprecs;
};

struct pci_host {
	struct fab_host *h;
	struct physmem *pm;
	struct pci_dev **devs;    /* sorted by BDF */
	unsigned ndevs, capdevs;
	const struct pci_driver *drivers[PCI_MAX_DRIVERS];
	unsigned ndrivers;
};

static inline struct pci_dev_priv *to_priv(struct pci_dev *pdev)
{
	return container_of(pdev, struct pci_dev_priv, pub);
}

/* dma.c: release every DMA mapping and the IOMMU domain of a departing device. */
void pci_dma_release(struct pci_dev *pdev);

#endif
