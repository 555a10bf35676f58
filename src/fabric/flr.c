// SPDX-License-Identifier: MIT
/*
 * Function Level Reset (PCIe Base spec 6.6.2): a config write of Device
 * Control bit 15 "Initiate Function Level Reset" to a function whose Device
 * Capabilities say "FLR capable" (bit 28) resets that function alone.
 *
 * The fabric does the config-space half at once, under the host lock of the
 * write: the command register (no more memory decoding, no bus mastering, so
 * the function's DMA stops), MSI and MSI-X enables, the MSI-X table entries
 * back to masked, Device Status errors. The model's half (its registers and
 * queues) is its reset hook, which the device's own thread runs before its
 * next poll (src/host/devrun.c sees flr_seq move): a model is only ever
 * called from that thread. The spec gives the function 100 ms to complete an
 * FLR; the model thread takes at most one idle back-off (8 ms).
 *
 * Deviation: the BARs keep their addresses. Real hardware clears them and
 * Linux restores them from saved state after the FLR (pci_reset_function);
 * keeping them is what software sees once that restore is done.
 */
#include <linux/pci_regs.h>

#include "pcidev.h"

void fab_func_set_flr_capable(struct fab_func *fn)
{
	uint16_t exp = fab_cfg_find_cap(&fn->cfg, PCI_CAP_ID_EXP);

	if (exp)
		fab_cfg_set32(&fn->cfg, exp + PCI_EXP_DEVCAP,
			      fab_cfg_get32(&fn->cfg, exp + PCI_EXP_DEVCAP) | PCI_EXP_DEVCAP_FLR);
}

bool fab_func_flr_capable(const struct fab_func *fn)
{
	uint16_t exp = fab_cfg_find_cap(&fn->cfg, PCI_CAP_ID_EXP);

	return exp && (fab_cfg_get32(&fn->cfg, exp + PCI_EXP_DEVCAP) & PCI_EXP_DEVCAP_FLR);
}

bool fab_cfg_write_is_flr(const struct fab_func *fn, uint32_t off, uint32_t size, uint32_t val)
{
	uint16_t exp = fab_cfg_find_cap(&fn->cfg, PCI_CAP_ID_EXP);
	uint32_t bit = exp + PCI_EXP_DEVCTL + 1;    /* the byte holding bit 15 */

	if (fn->kind != FAB_FN_ENDPOINT || !exp || !fab_func_flr_capable(fn) ||
	    bit < off || bit >= off + size)
		return false;
	return (val >> (8 * (bit - off))) & (PCI_EXP_DEVCTL_BCR_FLR >> 8);
}

void fab_func_flr(struct fab_func *fn)
{
	struct fab_cfg *c = &fn->cfg;
	uint16_t exp = fab_cfg_find_cap(c, PCI_CAP_ID_EXP);
	uint16_t msi = fab_cfg_find_cap(c, PCI_CAP_ID_MSI);
	uint16_t msix = fab_cfg_find_cap(c, PCI_CAP_ID_MSIX);

	fab_cfg_set16(c, PCI_COMMAND, 0);
	fab_cfg_set16(c, PCI_STATUS, fab_cfg_get16(c, PCI_STATUS) & PCI_STATUS_CAP_LIST);
	if (msi)
		fab_cfg_set16(c, msi + PCI_MSI_FLAGS, fab_cfg_get16(c, msi + PCI_MSI_FLAGS) &
			      (uint16_t)~(PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_QSIZE));
	if (msix) {
		fab_cfg_set16(c, msix + PCI_MSIX_FLAGS, fab_cfg_get16(c, msix + PCI_MSIX_FLAGS) &
			      (uint16_t)~(PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL));
		fab_msix_reset_table(fn);
	}
	if (exp) {
		/* Device Control back to what firmware left (fab_cap_pcie); errors cleared. */
		fab_cfg_set16(c, exp + PCI_EXP_DEVCTL, (2 << 12) | PCI_EXP_DEVCTL_EXT_TAG);
		fab_cfg_set16(c, exp + PCI_EXP_DEVSTA, 0);
	}
	/* The model thread resets the device before it polls again. */
	__atomic_add_fetch(&fn->flr_seq, 1, __ATOMIC_RELEASE);
	fab_host_tables_changed(fn->host);
}
