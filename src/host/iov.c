// SPDX-License-Identifier: MIT
/*
 * SR-IOV in the PCI core (pci.h, pci_sriov_configure), after Linux's
 * drivers/pci/iov.c: what writing sriov_numvfs does. Everything goes
 * through configuration cycles: the VFs' routing IDs come from the PF's
 * First VF Offset and VF Stride, their BARs from the VF BARs enumeration
 * assigned (room for TotalVFs), their identity from the PF and VF Device ID.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <linux/pci_regs.h>

#include "pci_priv.h"
#include "util/smio_time.h"

#define VF_READY_MS  100   /* after VF Enable, software waits 100 ms (PCIe; Linux too) */

/*
 * VFs come up through a reset their models do on their own threads: wait
 * until every enabled VF's model has done it (or the spec's 100 ms are
 * over, for functions without a model), with the host lock let go so those
 * threads and everyone else go on meanwhile.
 */
static void wait_vfs_ready(struct pci_dev *pf, unsigned numvfs, uint16_t off, uint16_t stride)
{
	struct fab_host *h = pf->host->h;
	uint64_t deadline = smio_now_ms() + VF_READY_MS;
	unsigned depth = fab_host_unlock_all(h);

	for (;;) {
		bool ready = true;

		fab_host_lock(h);
		for (unsigned n = 1; n <= numvfs && ready; n++) {
			struct fab_func *vf = fab_func_by_bdf(h, (uint16_t)(pf->bdf + off +
							      (n - 1) * stride));

			ready = !vf || __atomic_load_n(&vf->flr_done, __ATOMIC_ACQUIRE) ==
				       __atomic_load_n(&vf->flr_seq, __ATOMIC_ACQUIRE);
		}
		fab_host_unlock(h);
		if (ready || smio_now_ms() >= deadline)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	}
	fab_host_relock(h, depth);
}

static uint32_t rd(struct pci_dev *pdev, uint32_t off, uint32_t size)
{
	uint32_t v = 0;

	if (pci_read_config(pdev, off, size, &v))
		v = 0xffffffffu;
	return v;
}

static uint16_t sriov_pos(struct pci_dev *pdev)
{
	uint32_t off = PCI_CFG_SPACE_SIZE;

	for (int n = 0; off >= PCI_CFG_SPACE_SIZE && n < 960; n++) {
		uint32_t h = rd(pdev, off, 4);

		if (h == 0 || h == 0xffffffffu)
			return 0;
		if ((h & 0xffff) == PCI_EXT_CAP_ID_SRIOV)
			return (uint16_t)off;
		off = h >> 20;
	}
	return 0;
}

int pci_sriov_get_totalvfs(struct pci_dev *pf)
{
	uint16_t pos = pf && !pf->physfn ? sriov_pos(pf) : 0;

	return pos ? (int)rd(pf, pos + PCI_SRIOV_TOTAL_VF, 2) : 0;
}

struct pci_dev *pci_sriov_vf(struct pci_dev *pf, unsigned n)
{
	struct pci_host *ph = pf->host;

	for (unsigned i = 0; i < pci_host_ndevs(ph); i++) {
		struct pci_dev *d = pci_host_dev(ph, i);

		if (d->physfn == pf && d->vf_index == n)
			return d;
	}
	return NULL;
}

/* VF BAR i of the PF: per-VF size (sized like a BAR) and base. */
static void vf_bar(struct pci_dev *pf, uint16_t pos, unsigned i, uint64_t *base,
		   uint64_t *size, bool *is64)
{
	uint32_t off = pos + PCI_SRIOV_BAR + 4 * i, orig = rd(pf, off, 4), lo, hi = 0, ohi = 0;
	uint64_t mask;

	*base = *size = 0;
	pci_write_config(pf, off, 4, 0xffffffffu);
	lo = rd(pf, off, 4);
	pci_write_config(pf, off, 4, orig);
	*is64 = (lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64 && i < 5;
	if (*is64) {
		ohi = rd(pf, off + 4, 4);
		pci_write_config(pf, off + 4, 4, 0xffffffffu);
		hi = rd(pf, off + 4, 4);
		pci_write_config(pf, off + 4, 4, ohi);
	}
	mask = ((uint64_t)hi << 32) | (lo & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK);
	if (!*is64)
		mask |= 0xffffffff00000000ull;
	if (!(lo & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK) && !hi)
		return;
	*size = ~mask + 1;
	*base = ((uint64_t)ohi << 32) | (orig & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK);
}

static void remove_vfs(struct pci_dev *pf)
{
	for (unsigned n = pf->num_vfs; n >= 1; n--) {
		struct pci_dev *vf = pci_sriov_vf(pf, n);

		if (vf)
			pci_hot_remove(pf->host, vf);
	}
}

static int add_vf(struct pci_dev *pf, uint16_t pos, unsigned n, uint16_t rid)
{
	struct pci_dev_priv *p = pci_dev_alloc(pf->host);
	struct fab_host *h = pf->host->h;
	struct pci_dev *vf;
	int rc;

	if (!p)
		return -ENOMEM;
	vf = &p->pub;
	vf->bdf = rid;
	vf->hw = fab_func_by_bdf(h, rid);
	if (!vf->hw || rd(pf, pos + PCI_SRIOV_CTRL, 2) == 0xffff) {
		pci_dev_free(vf);
		return -ENODEV;
	}
	vf->physfn = pf;
	vf->vf_index = (uint16_t)n;
	vf->vendor = pf->vendor;       /* the VF's own header says FFFFh */
	vf->device = (uint16_t)rd(pf, pos + PCI_SRIOV_VF_DID, 2);
	fab_cfg_access_read(h, rid, PCI_CLASS_REVISION, 4, &vf->class);
	vf->class >>= 8;
	vf->is_lendable = pf->is_lendable;
	snprintf(vf->name, sizeof(vf->name), "%s", vf->hw->name);
	for (unsigned i = 0; i < PCI_SRIOV_NUM_BARS; i++) {
		uint64_t base, size;
		bool is64;

		vf_bar(pf, pos, i, &base, &size, &is64);
		if (size) {
			vf->bar_addr[i] = base + (uint64_t)(n - 1) * size;
			vf->bar_size[i] = size;
		}
		if (is64)
			i++;
	}
	rc = pci_hot_add_dev(pf->host, vf);
	if (rc)
		pci_dev_free(vf);
	return rc;
}

int pci_sriov_configure(struct pci_dev *pf, unsigned numvfs)
{
	uint16_t pos, ctrl, off, stride;
	unsigned total;
	int rc = 0;

	if (!pf || pf->physfn || pf->ops)
		return -ENODEV;   /* VFs and shadow devices have none to enable */
	pos = sriov_pos(pf);
	if (!pos)
		return -ENODEV;
	total = rd(pf, pos + PCI_SRIOV_TOTAL_VF, 2);
	if (numvfs > total)
		return -ERANGE;
	if (numvfs == pf->num_vfs)
		return 0;
	if (numvfs && pf->num_vfs)
		return -EBUSY;
	ctrl = (uint16_t)rd(pf, pos + PCI_SRIOV_CTRL, 2);
	if (!numvfs) {
		remove_vfs(pf);
		pci_write_config(pf, pos + PCI_SRIOV_CTRL, 2,
				 ctrl & ~(PCI_SRIOV_CTRL_VFE | PCI_SRIOV_CTRL_MSE));
		pci_write_config(pf, pos + PCI_SRIOV_NUM_VF, 2, 0);
		pf->num_vfs = 0;
		return 0;
	}
	/* The VF BARs must have their room (enumeration reserved TotalVFs). */
	for (unsigned i = 0; i < PCI_SRIOV_NUM_BARS; i++) {
		uint64_t base, size;
		bool is64;

		vf_bar(pf, pos, i, &base, &size, &is64);
		if (size && !base)
			return -ENOSPC;
		if (is64)
			i++;
	}
	/* NumVFs first (writable only while VF Enable is clear); Offset and
	 * Stride are valid for it from then on. */
	pci_write_config(pf, pos + PCI_SRIOV_NUM_VF, 2, numvfs);
	off = (uint16_t)rd(pf, pos + PCI_SRIOV_VF_OFFSET, 2);
	stride = (uint16_t)rd(pf, pos + PCI_SRIOV_VF_STRIDE, 2);
	pci_write_config(pf, pos + PCI_SRIOV_CTRL, 2,
			 ctrl | PCI_SRIOV_CTRL_VFE | PCI_SRIOV_CTRL_MSE);
	pf->num_vfs = (uint16_t)numvfs;
	wait_vfs_ready(pf, numvfs, off, stride);
	for (unsigned n = 1; n <= numvfs && !rc; n++)
		rc = add_vf(pf, pos, n, (uint16_t)(pf->bdf + off + (n - 1) * stride));
	if (rc) {
		remove_vfs(pf);
		pci_write_config(pf, pos + PCI_SRIOV_CTRL, 2, ctrl);
		pci_write_config(pf, pos + PCI_SRIOV_NUM_VF, 2, 0);
		pf->num_vfs = 0;
	}
	return rc;
}
