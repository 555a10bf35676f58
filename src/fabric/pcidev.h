/* SPDX-License-Identifier: MIT */
/*
 * Helpers that give a function its hardware identity: type 0/1 headers,
 * BARs (with their sizing masks and backing memory) and the standard
 * capabilities (PCI Express, MSI, MSI-X, power management, ACS). Used by the
 * fabric for bridges and NTBs and by device models for their endpoints.
 */
#ifndef SMARTIO_FABRIC_PCIDEV_H
#define SMARTIO_FABRIC_PCIDEV_H

#include "fabric.h"

/* PCIe device/port types (PCI Express Capabilities register bits 7:4). */
#define FAB_PCIE_ENDPOINT     0x0
#define FAB_PCIE_ROOT_PORT    0x4
#define FAB_PCIE_UPSTREAM     0x5
#define FAB_PCIE_DOWNSTREAM   0x6
#define FAB_PCIE_RC_INTEGRATED 0x9

void fab_func_type0(struct fab_func *fn, uint16_t vendor, uint16_t device, uint32_t class24,
		    uint8_t rev, uint16_t ss_vendor, uint16_t ss_device);
void fab_func_type1(struct fab_func *fn, uint16_t vendor, uint16_t device, uint8_t rev);
/*
 * Declare BAR idx of size bytes (power of two >= 16). backed: create a memfd
 * holding its contents (registers or device memory). Returns 0 or -errno.
 */
int fab_func_add_bar(struct fab_func *fn, unsigned idx, uint64_t size, bool is64,
		     bool prefetch, bool backed);
uint16_t fab_cap_pcie(struct fab_func *fn, unsigned type, struct topo_link link,
		      unsigned port_no);
uint16_t fab_cap_msix(struct fab_func *fn, unsigned vectors, unsigned bir,
		      uint32_t table_off, uint32_t pba_off);
uint16_t fab_cap_msi(struct fab_func *fn, unsigned log2_vectors);
/* Put every MSI-X table entry in its reset state (masked); after fab_cap_msix. */
int fab_msix_reset_table(struct fab_func *fn);
uint16_t fab_cap_pm(struct fab_func *fn);
uint16_t fab_ecap_acs(struct fab_func *fn, uint16_t caps, uint16_t ctrl);
/* flr.c: Function Level Reset (Device Capabilities bit 28, Device Control bit 15). */
void fab_func_set_flr_capable(struct fab_func *fn);
bool fab_func_flr_capable(const struct fab_func *fn);
/* Does this config write initiate an FLR of fn? (Checked before the write.) */
bool fab_cfg_write_is_flr(const struct fab_func *fn, uint32_t off, uint32_t size, uint32_t val);
/* Reset fn's config state as an FLR does and ask its model to reset (host lock held). */
void fab_func_flr(struct fab_func *fn);
struct fab_func *fab_func_alloc(struct fab_host *h, enum fab_func_kind kind,
				const char *name, struct fab_func *parent,
				uint8_t dev, uint8_t fn);

#endif
