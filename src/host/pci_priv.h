/* SPDX-License-Identifier: MIT */
/* Internals shared by the PCI core's files (pci.c, dma.c, irq.c). Not for drivers. */
#ifndef SMARTIO_HOST_PCI_PRIV_H
#define SMARTIO_HOST_PCI_PRIV_H

#include <stddef.h>

#include "pci.h"
#include "physmem.h"

#define PCI_MAX_DRIVERS  32
#define PCI_P2P_MAX      32

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* One live DMA mapping of a device, so that frees can be checked and a
 * device that goes away with mappings left can be cleaned up. */
struct dma_rec {
	uint64_t bus;        /* page-aligned bus address (IOVA, or physical) */
	uint64_t iova;       /* what the IOMMU maps (= bus, except through a DMA window) */
	uint64_t phys;       /* page-aligned physical address */
	uint64_t size;       /* page multiple */
	bool coherent;       /* dma_alloc_coherent: physmem owns phys */
};

/*
 * A shadow device's path to its real function (shadow.c): config cycles
 * forwarded with interception, and the MSI address rewritten into the
 * address the device must write for the message to reach this host.
 */
struct pci_dev_ops {
	int (*read_config)(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t *val);
	int (*write_config)(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t val);
	uint64_t (*msi_address)(struct pci_dev *pdev, uint64_t addr);
	/* p2p.c: the address at which this (client) device reaches provider's BAR. */
	int (*p2p_bus)(struct pci_dev *client, struct pci_dev *provider, unsigned bar,
		       uint64_t *bus);
	/* Hops of the route from the real device to bus address bus (a write). */
	int (*route_hops)(struct pci_dev *client, uint64_t bus, unsigned *hops);
	/* The device is being freed (hot-remove, host teardown). */
	void (*release)(struct pci_dev *pdev);
};

/*
 * A shadow device's DMA window (dma.c): the device reaches this host's
 * [target, target + size) at bus addresses [bus, bus + size). With the IOMMU
 * on, target is IOVA space of domain (the NTBs' domain, shared, not owned) and
 * every mapping is an IOMMU mapping there; with it off, target is 0 and the
 * window covers RAM.
 */
struct pci_dma_window {
	bool on;
	uint64_t bus, target, size;
	uint32_t domain;
};

/*
 * A driver's mapping of a BAR (iomap.c): its own VMA over the device's
 * pages, replaced in place by all-ones while the channel is down.
 */
struct pci_iomap {
	uint8_t *pub;        /* what the driver got (minus pgoff) */
	uint8_t *keep;       /* a hidden duplicate to restore from */
	const uint8_t *src;  /* the shared mapping's page it duplicates (TSan's name) */
	size_t len, pgoff;
	bool fenced;
};

/*
 * One provider's p2pmem resource (p2pmem.c; Linux's p2pdma gen_pool): a
 * page-aligned range of a memory BAR, handed out by first fit in pages.
 * Lifetime: the provider's driver binding holds it; each allocation holds
 * it too. When the provider unbinds (or goes away) with allocations
 * outstanding, the pool is unpublished and no longer allocates, but it keeps
 * the BAR mapping its users write through until the last free (Linux's
 * unbind waits for them in memunmap_pages; we cannot wait under the host lock).
 */
struct pci_p2p_pool {
	struct pci_dev *provider;     /* NULL once released */
	unsigned bar;
	uint64_t off, size;           /* [off, off + size) of the BAR */
	uint8_t *cpu;                 /* CPU address of BAR offset off */
	bool published;               /* pci_p2pmem_find may choose it */
	unsigned nallocs;             /* live allocations (each holds the pool) */
	uint64_t allocated;           /* their bytes */
	struct pm_ranges free;        /* free BAR offsets */
	struct pci_iomap map;         /* the provider's mapping, kept after release */
	bool own_map;
};

struct pci_dev_priv {
	struct pci_dev pub;
	struct pci_iomap iomap[6];
	struct pci_dma_window win;
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
	/* p2pmem.c: peer-to-peer memory resources (providers' BAR ranges), live
	 * and released-with-allocations-outstanding */
	struct pci_p2p_pool *p2p[PCI_P2P_MAX];
	unsigned np2p;
};

static inline struct pci_dev_priv *to_priv(struct pci_dev *pdev)
{
	return container_of(pdev, struct pci_dev_priv, pub);
}

/* pci.c: a new, empty device of ph; insert it (sorted) and offer it to the drivers. */
struct pci_dev_priv *pci_dev_alloc(struct pci_host *ph);
void pci_dev_free(struct pci_dev *pdev);
int pci_hot_add_dev(struct pci_host *ph, struct pci_dev *pdev);
/* dma.c: a shadow device's window (IOVA space set up when the IOMMU is on). */
int pci_dma_window_set(struct pci_dev *pdev, const struct pci_dma_window *w);

/* iomap.c: map size bytes at src (in a shared mapping) as pdev's own; fence it. */
void pci_iomap_init(void);
int pci_iomap_make(struct pci_iomap *m, uint8_t *src, uint64_t size, bool fenced);
void pci_iomap_fence(struct pci_iomap *m, bool down);
void pci_iomap_free(struct pci_iomap *m);

/* p2pmem.c: an unbinding or departing device is no longer a provider (before
 * its BAR mappings go); the host's last pools go with the host. */
void pci_p2pdma_release(struct pci_dev *pdev);
void pci_p2pdma_host_fini(struct pci_host *ph);
/* dma.c: release every DMA mapping and the IOMMU domain of a departing device. */
void pci_dma_release(struct pci_dev *pdev);

#endif
