/* SPDX-License-Identifier: MIT */
/*
 * Device Lending (SmartIO sec. 4): the lender's half (lend.c) and the
 * borrower's shadow device (shadow.c).
 *
 * Lender: lend_setup prepares one lent device for one borrower, once:
 *  - the device's requester ID admitted to the lender NTB that reaches the
 *    borrower;
 *  - a DMA window: a LUT run of that NTB towards the borrower's
 *    [dma_target, dma_target + dma_size) (IOVA space of the borrower's NTB
 *    domain when its IOMMU is on, else its RAM);
 *  - an MSI window: LUT entries towards the borrower's MSI window, so that
 *    the device's MSI/MSI-X writes land on the borrower's interrupt controller;
 *  - with the lender's IOMMU on, an isolation domain for the device mapping
 *    just those windows (and the BARs exposed to requests arriving through the
 *    lender's NTBs).
 * The grant says where all of that is as the device sees it. Windows,
 * requester IDs (each lend holds its own references) and exposures in the
 * NTBs' IOMMU domain go through the host's NTB driver (ntb_drv.h), whose
 * link events a lend (and a shadow) registers for.
 *
 * Borrower: shadow_create hot-adds a pci_dev whose config cycles go to the
 * lender (shadow_transport) with interception (BARs are the borrower's NTB
 * windows, MSI addresses rewritten, INTx masked, bus mastering tracked), and
 * whose DMA API maps into the lender's window through the borrower's IOMMU:
 * no message to the lender per mapping. Drivers bind to it unchanged.
 *
 * All calls with the respective host's lock held.
 */
#ifndef SMARTIO_HOST_LEND_H
#define SMARTIO_HOST_LEND_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "pci.h"

/* What the lender prepared, as the device and the borrower must use it. */
struct lend_grant {
	uint32_t lender, borrower;         /* topology host ids */
	uint16_t bdf;                      /* the device at the lender */
	uint16_t vendor, device;
	uint32_t class;
	uint64_t bar_addr[6], bar_size[6]; /* lender bus addresses (0: no BAR) */
	uint32_t bar_flags[6];             /* the BAR registers' low type bits */
	uint64_t dma_bus, dma_target, dma_size;  /* device address of the borrower's dma_target */
	uint64_t msi_bus;                  /* device address reaching the borrower's FAB_MSI_BASE */
	char name[TOPO_NAME_MAX];
	char model[TOPO_MODEL_MAX];
	bool mdev;                         /* borrower: a VM's MDEV parent holds the shadow:
					    * no host driver binds to it */
};

struct lend_setup;

/* The function's IDs, class, BARs (addresses, sizes, types) and names as a
 * borrower must see them (a VF's per Linux's PCI core), into g; g->bdf set. */
void lend_read_identity(struct fab_host *h, struct fab_func *fn, struct lend_grant *g);
/*
 * Lender: -ENODEV (no endpoint there), -EHOSTUNREACH, -ENOSPC (LUT/RID table full).
 * flags LEND_SETUP_VM: the device will DMA with a VM's guest-physical addresses
 * (lend_vm_mirror), so the windows are remapped above any guest RAM.
 */
#define LEND_SETUP_VM 0x1
int lend_setup(struct fab_host *lender, uint16_t bdf, uint32_t borrower, unsigned flags,
	       uint64_t dma_target, uint64_t dma_size, struct lend_grant *g,
	       struct lend_setup **out);
/* Undo it all; reset: turn the device quiet (bus master, decoding, MSI-X off). */
void lend_teardown(struct fab_host *lender, struct lend_setup *s, bool reset);
/*
 * The first len bytes (a multiple of 4) of bdf's config space as a borrower
 * must see them without a lend (a VM's reservation): a VF's IDs and BAR
 * types patched in as lend_read_identity gives them.
 */
int lend_cfg_snapshot(struct fab_host *lender, uint16_t bdf, uint8_t *cfg, uint32_t len);
/* Forwarded config cycles, checked: BAR and ROM writes are dropped (the lender's map). */
int lend_cfg_read(struct fab_host *lender, uint16_t bdf, uint32_t off, uint32_t size,
		  uint32_t *val);
int lend_cfg_write(struct fab_host *lender, uint16_t bdf, uint32_t off, uint32_t size,
		   uint32_t val);
/*
 * A virtual machine's view (docs/vm.md): map the device's I/O virtual
 * [iova, iova + size) in its isolation domain onto what device address bus
 * reaches through the DMA window (a guest's RAM there), so that the guest's
 * driver can DMA with guest-physical addresses. -EOPNOTSUPP without the
 * lender's IOMMU, -EADDRINUSE if that range is routed before the IOMMU,
 * -ERANGE if bus..+size is not inside one window, -EALREADY: two per lend (a
 * VM's RAM below and above 4 GiB).
 * lend_teardown undoes it.
 */
int lend_vm_mirror(struct fab_host *lender, struct lend_setup *s, uint64_t iova, uint64_t bus,
		   uint64_t size);
/* A window of the lent device towards a host's address (P2P): the device-side address. */
int lend_p2p_map(struct lend_setup *s, uint32_t host, uint64_t addr, uint64_t size,
		 uint64_t *bus);

/* Borrower: how config cycles reach the lender. */
struct shadow_transport {
	int (*cfg_read)(void *arg, uint32_t off, uint32_t size, uint32_t *val);
	int (*cfg_write)(void *arg, uint32_t off, uint32_t size, uint32_t val);
	/* A window of the lent device towards host's [addr, addr + size) (P2P). */
	int (*p2p_map)(void *arg, uint32_t host, uint64_t addr, uint64_t size, uint64_t *bus);
	/* Hops of the route the device's write to bus takes at the lender. */
	int (*route_hops)(void *arg, uint64_t bus, unsigned *hops);
	/* The shadow is gone (arg may be freed now); may be NULL. */
	void (*release)(void *arg);
	void *arg;
};

/* The DMA window a new shadow device of ph needs: where at ph, how large. */
int shadow_dma_target(struct pci_host *ph, uint64_t *target, uint64_t *size);
/*
 * Hot-add the shadow device of grant g at ph (programs the local NTB's LUT
 * for the BARs; drivers are offered the device). *out: the new device.
 */
int shadow_create(struct pci_host *ph, const struct lend_grant *g,
		  const struct shadow_transport *t, struct pci_dev **out);
/* Is pdev a shadow device; its grant. */
const struct lend_grant *shadow_grant(const struct pci_dev *pdev);
/* Where shadow pdev's device reaches [addr, +size) of host `host` (Device
 * Lending's P2P rules, mapped by its lender; of the borrowing host itself
 * only a device BAR, which the caller checks); -EINVAL not a shadow. */
int shadow_p2p_at(struct pci_dev *pdev, uint32_t host, uint64_t addr, uint64_t size,
		  uint64_t *bus);
/* Is bus mastering on as the driver set it (tracked, not forwarded reads). */
bool shadow_master(const struct pci_dev *pdev);
/*
 * The lender is gone: the channel fails for good (iomaps read all-ones, the
 * bound driver gets error_detected(perm_failure)); the caller removes the
 * shadow next (shadow_destroy with force). Never waits.
 */
void shadow_lost(struct pci_dev *pdev);
/*
 * Tables changed somewhere on the path (a peer's invalidation): resolve the
 * BAR windows again and freeze or resume the channel accordingly. May wait
 * for peers. 0 all routes good, -ENOLINK one failed (frozen), -errno.
 */
int shadow_revalidate(struct pci_dev *pdev);
/*
 * Remove it: -EBUSY while a driver is bound unless force (the driver is
 * then unbound first: the lender is gone or reclaimed it).
 */
int shadow_destroy(struct pci_host *ph, struct pci_dev *pdev, bool force);

/* In-process lending (tests, benchmarks): both hosts in this process. */
struct lend_local;
/* Hops of the route of a write by the lent device to bus. */
int lend_route_hops(struct fab_host *lender, uint16_t bdf, uint64_t bus, unsigned *hops);
int lend_local_borrow(struct fab_host *lender, uint16_t bdf, struct pci_host *borrower,
		      struct lend_local **out, struct pci_dev **shadow);
int lend_local_return(struct lend_local *l, bool force);

#endif
