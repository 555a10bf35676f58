/* SPDX-License-Identifier: MIT */
/*
 * Single Root I/O Virtualization (PCIe base spec, SR-IOV extended capability,
 * ID 0010h): a physical function (PF) carries the capability and its
 * virtual functions (VFs) are functions of their own, built with it.
 *
 * What the spec gives and this models: TotalVFs = InitialVFs (no VF
 * migration); NumVFs, writable only while VF Enable is clear; First VF
 * Offset and VF Stride (read-only, latched when NumVFs is written), from
 * which VF n's routing ID is PF RID + First VF Offset + (n - 1) * VF Stride;
 * VF Device ID; supported / system page sizes; VF BAR0..5, sized like BARs,
 * VF n's BAR at VF BARn + (n - 1) * size; VF Enable and VF MSE. VFs read
 * vendor and device ID as FFFFh, have no BARs in their own headers, ignore
 * their Command register's Memory Space bit (VF MSE decides), and answer
 * config cycles only while VF Enable is set. Setting or clearing VF Enable
 * resets every VF (as an FLR does, so their models start afresh).
 */
#ifndef SMARTIO_FABRIC_SRIOV_H
#define SMARTIO_FABRIC_SRIOV_H

#include "fabric.h"

#define FAB_SRIOV_SIZEOF   0x40
#define FAB_SRIOV_PGSIZES  0x553u  /* 4K 8K 64K 256K 1M 4M, as common devices list */

struct fab_vf_bar {
	uint64_t size;               /* 0: not implemented */
	bool is64, prefetch;
};

/*
 * Give pf the SR-IOV capability and build its total_vfs VFs, each with the
 * VF BARs (backed memory per VF) and the identity of pf (class, revision,
 * subsystem). first_off is First VF Offset (VF Stride is 1). The caller adds
 * the VFs' capabilities (PCI Express, MSI-X) afterwards. 0 or -errno.
 */
int fab_sriov_init(struct fab_func *pf, uint16_t total_vfs, uint16_t first_off,
		   uint16_t vf_device_id, const struct fab_vf_bar bars[6]);

uint16_t fab_sriov_num_vfs(const struct fab_func *pf);    /* NumVFs as programmed */
bool fab_sriov_vf_enabled(const struct fab_func *pf);     /* VF Enable */
uint16_t fab_sriov_vf_rid(const struct fab_func *pf, unsigned n);
/* VF n's function (1-based), NULL if none. */
struct fab_func *fab_sriov_vf(const struct fab_func *pf, unsigned n);

/* For decode.c: a VF's presence, memory decoding and BAR addresses. */
bool fab_vf_present(const struct fab_func *vf);
bool fab_vf_mem_enabled(const struct fab_func *vf);
uint64_t fab_vf_bar_addr(const struct fab_func *vf, unsigned bar);

/* Does a config write at [off, off+size) touch pf's SR-IOV capability? */
bool fab_sriov_write_hits(const struct fab_func *pf, uint32_t off, uint32_t size);
/* After such a write: NumVFs' write mask follows VF Enable, and a change of
 * VF Enable resets the VFs. old_ctrl is SR-IOV Control before the write. */
void fab_sriov_written(struct fab_func *pf, uint16_t old_ctrl);
uint16_t fab_sriov_ctrl(const struct fab_func *pf);

#endif
