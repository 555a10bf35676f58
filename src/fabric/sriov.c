// SPDX-License-Identifier: MIT
/* The SR-IOV extended capability and the virtual functions behind it (sriov.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/pci_regs.h>

#include "pcidev.h"
#include "sriov.h"

uint16_t fab_sriov_ctrl(const struct fab_func *pf)
{
	return pf->sriov_cap ? fab_cfg_get16(&pf->cfg, pf->sriov_cap + PCI_SRIOV_CTRL) : 0;
}

uint16_t fab_sriov_num_vfs(const struct fab_func *pf)
{
	return pf->sriov_cap ? fab_cfg_get16(&pf->cfg, pf->sriov_cap + PCI_SRIOV_NUM_VF) : 0;
}

bool fab_sriov_vf_enabled(const struct fab_func *pf)
{
	return fab_sriov_ctrl(pf) & PCI_SRIOV_CTRL_VFE;
}

uint16_t fab_sriov_vf_rid(const struct fab_func *pf, unsigned n)
{
	uint16_t off = fab_cfg_get16(&pf->cfg, pf->sriov_cap + PCI_SRIOV_VF_OFFSET);
	uint16_t stride = fab_cfg_get16(&pf->cfg, pf->sriov_cap + PCI_SRIOV_VF_STRIDE);

	return (uint16_t)(fab_func_bdf(pf) + off + (n - 1) * stride);
}

struct fab_func *fab_sriov_vf(const struct fab_func *pf, unsigned n)
{
	return n >= 1 && n <= pf->total_vfs ? pf->vfs[n - 1] : NULL;
}

bool fab_vf_present(const struct fab_func *vf)
{
	const struct fab_func *pf = vf->pf;

	return fab_sriov_vf_enabled(pf) && vf->vf_index <= fab_sriov_num_vfs(pf);
}

bool fab_vf_mem_enabled(const struct fab_func *vf)
{
	return fab_vf_present(vf) && (fab_sriov_ctrl(vf->pf) & PCI_SRIOV_CTRL_MSE);
}

uint64_t fab_vf_bar_addr(const struct fab_func *vf, unsigned bar)
{
	const struct fab_func *pf = vf->pf;
	uint32_t off;
	uint64_t a;

	if (bar > 5 || !vf->bars[bar].present)
		return 0;
	off = pf->sriov_cap + PCI_SRIOV_BAR + 4 * bar;
	a = fab_cfg_get32(&pf->cfg, off) & ~0xfull;
	if (vf->bars[bar].is64)
		a |= (uint64_t)fab_cfg_get32(&pf->cfg, off + 4) << 32;
	if (!a)
		return 0;   /* unassigned */
	return a + (uint64_t)(vf->vf_index - 1) * vf->bars[bar].size;
}

bool fab_sriov_write_hits(const struct fab_func *pf, uint32_t off, uint32_t size)
{
	return pf->sriov_cap && off < pf->sriov_cap + (uint32_t)FAB_SRIOV_SIZEOF &&
	       off + size > pf->sriov_cap;
}

void fab_sriov_written(struct fab_func *pf, uint16_t old_ctrl)
{
	uint16_t ctrl = fab_sriov_ctrl(pf);

	/* NumVFs may be written only while VF Enable is clear. */
	fab_cfg_wmask16(&pf->cfg, pf->sriov_cap + PCI_SRIOV_NUM_VF,
			(ctrl & PCI_SRIOV_CTRL_VFE) ? 0 : 0xffff);
	if ((ctrl ^ old_ctrl) & PCI_SRIOV_CTRL_VFE)
		/* VFs come into being, or cease to be, in their reset state. */
		for (unsigned i = 0; i < pf->total_vfs; i++)
			fab_func_flr(pf->vfs[i]);
}

/* A VF's BAR: backed memory like any BAR, but nothing in its header. */
static int add_vf_bar(struct fab_func *vf, unsigned i, const struct fab_vf_bar *b)
{
	uint32_t off = PCI_BASE_ADDRESS_0 + 4 * i;
	int rc = fab_func_add_bar(vf, i, b->size, b->is64, b->prefetch, true);

	if (rc)
		return rc;
	for (unsigned k = 0; k < (b->is64 ? 2u : 1u); k++) {
		fab_cfg_set32(&vf->cfg, off + 4 * k, 0);
		fab_cfg_wmask32(&vf->cfg, off + 4 * k, 0);
	}
	return 0;
}

static int build_vf(struct fab_func *pf, unsigned n, const struct fab_vf_bar bars[6])
{
	char name[TOPO_NAME_MAX];
	struct fab_func *vf;
	struct fab_cfg *c;
	int rc;

	snprintf(name, sizeof(name), "%.20s-vf%u", pf->name, n);
	vf = fab_func_alloc(pf->host, FAB_FN_ENDPOINT, name, pf->parent, 0, 0);
	if (!vf)
		return pf->host->nfuncs >= FAB_MAX_FUNCS ? -ENOSPC : -ENOMEM;
	pf->vfs[n - 1] = vf;
	vf->pf = pf;
	vf->vf_index = (uint16_t)n;
	vf->link = pf->link;
	vf->tdev = pf->tdev;
	vf->lendable = pf->lendable;
	snprintf(vf->model, sizeof(vf->model), "%s", pf->model);
	/* The PF's identity; then what a VF's header says instead. */
	fab_func_type0(vf, 0xffff, 0xffff, fab_cfg_get32(&pf->cfg, PCI_CLASS_REVISION) >> 8,
		       fab_cfg_get8(&pf->cfg, PCI_REVISION_ID),
		       fab_cfg_get16(&pf->cfg, PCI_SUBSYSTEM_VENDOR_ID),
		       fab_cfg_get16(&pf->cfg, PCI_SUBSYSTEM_ID));
	c = &vf->cfg;
	/* Memory Space Enable does not apply to VFs (VF MSE does): RO 0. */
	fab_cfg_wmask16(c, PCI_COMMAND, PCI_COMMAND_MASTER | PCI_COMMAND_PARITY |
			PCI_COMMAND_SERR | PCI_COMMAND_INTX_DISABLE);
	fab_cfg_set8(c, PCI_INTERRUPT_PIN, 0);   /* VFs have no INTx */
	for (unsigned i = 0; i < 6; i++) {
		if (!bars[i].size)
			continue;
		rc = add_vf_bar(vf, i, &bars[i]);
		if (rc)
			return rc;
		if (bars[i].is64)
			i++;
	}
	return 0;
}

int fab_sriov_init(struct fab_func *pf, uint16_t total_vfs, uint16_t first_off,
		   uint16_t vf_device_id, const struct fab_vf_bar bars[6])
{
	struct fab_cfg *c = &pf->cfg;
	uint16_t cap;

	if (!total_vfs || pf->sriov_cap)
		return -EINVAL;
	cap = fab_cfg_add_ecap(c, PCI_EXT_CAP_ID_SRIOV, 1, FAB_SRIOV_SIZEOF);
	if (!cap)
		return -ENOSPC;
	pf->vfs = calloc(total_vfs, sizeof(*pf->vfs));
	if (!pf->vfs)
		return -ENOMEM;
	pf->sriov_cap = cap;
	pf->total_vfs = total_vfs;
	fab_cfg_set32(c, cap + PCI_SRIOV_CAP, 0);       /* no VF migration */
	/* VF Enable, VF MSE; ARI Capable Hierarchy lives in function 0's. */
	fab_cfg_wmask16(c, cap + PCI_SRIOV_CTRL, PCI_SRIOV_CTRL_VFE | PCI_SRIOV_CTRL_MSE |
			(pf->fn == 0 ? PCI_SRIOV_CTRL_ARI : 0));
	fab_cfg_set16(c, cap + PCI_SRIOV_INITIAL_VF, total_vfs);   /* = TotalVFs */
	fab_cfg_set16(c, cap + PCI_SRIOV_TOTAL_VF, total_vfs);
	fab_cfg_wmask16(c, cap + PCI_SRIOV_NUM_VF, 0xffff);
	fab_cfg_set8(c, cap + PCI_SRIOV_FUNC_LINK, pf->fn);
	fab_cfg_set16(c, cap + PCI_SRIOV_VF_OFFSET, first_off);
	fab_cfg_set16(c, cap + PCI_SRIOV_VF_STRIDE, 1);
	fab_cfg_set16(c, cap + PCI_SRIOV_VF_DID, vf_device_id);
	fab_cfg_set32(c, cap + PCI_SRIOV_SUP_PGSIZE, FAB_SRIOV_PGSIZES);
	fab_cfg_set32(c, cap + PCI_SRIOV_SYS_PGSIZE, 1);           /* 4 KiB */
	fab_cfg_wmask32(c, cap + PCI_SRIOV_SYS_PGSIZE, FAB_SRIOV_PGSIZES);
	for (unsigned i = 0; i < PCI_SRIOV_NUM_BARS; i++) {
		uint32_t off = cap + PCI_SRIOV_BAR + 4 * i;
		uint64_t mask;

		if (!bars[i].size)
			continue;
		/* Sized like a BAR: per-VF size, power of two, a page at least. */
		if (bars[i].size < FAB_PAGE_SIZE || (bars[i].size & (bars[i].size - 1)) ||
		    (bars[i].is64 && i == 5))
			return -EINVAL;
		mask = ~(bars[i].size - 1);
		fab_cfg_set32(c, off, (bars[i].is64 ? PCI_BASE_ADDRESS_MEM_TYPE_64 : 0) |
			      (bars[i].prefetch ? PCI_BASE_ADDRESS_MEM_PREFETCH : 0));
		fab_cfg_wmask32(c, off, (uint32_t)mask & ~0xfu);
		if (bars[i].is64) {
			fab_cfg_wmask32(c, off + 4, (uint32_t)(mask >> 32));
			i++;
		}
	}
	for (unsigned n = 1; n <= total_vfs; n++) {
		int rc = build_vf(pf, n, bars);

		if (rc)
			return rc;
	}
	return 0;
}
