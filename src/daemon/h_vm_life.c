// SPDX-License-Identifier: MIT
/*
 * A VM's device's life in the MDEV parent (TOCS'21 sec. 5.1-5.4, docs/vm.md
 * "Borrowed when enabled"):
 *
 *  - VM_ATTACH only *reserves* the function: the lender holds it for this
 *    host's VM (PEER_VM_RESERVE: the pool shows it reserved, other hosts'
 *    lends are refused) and answers with its config space, from which the
 *    VM's device answers the guest's config reads. Nothing is borrowed: no
 *    windows, no IOMMU domain, no vectors.
 *  - The guest *enables* it by setting Bus Master in Command (Linux's
 *    pci_set_master, before its driver's first register access): VM_CMD
 *    borrows it with Device Lending and maps the guest's memory layout (the
 *    DMA window onto the guest's RAM, the lender's guest-physical mirror);
 *    QEMU then maps the BARs and the vectors (VM_BAR, VM_IRQ).
 *  - The guest *releases* it by clearing Bus Master (driver unbind:
 *    pci_disable_device; a reset through sysfs saves and disables first) or
 *    *resets* it (FLR, a secondary bus reset, the VM's reset; QEMU sends
 *    VM_CMD with SMIO_VM_CMD_RESET): the device is returned to its lender,
 *    which resets it, and stays reserved for the VM. Enabling it again
 *    borrows it again. QEMU's end (the connection) returns it and lets the
 *    reservation go.
 *
 * Why Bus Master and not Memory Space: the guest's firmware (SeaBIOS) sets
 * Memory Space on every function at boot; the guest's driver sets Bus
 * Master. Until then the guest's BAR reads see all-ones (no device there).
 */
#include <errno.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "daemon.h"
#include "fabric/iommu.h"
#include "host/lend.h"
#include "lend_priv.h"
#include "util/log.h"
#include "vm_priv.h"

/* VMs' DMA windows in the NTBs' IOVA space, past the shadows' 256 x 256 MiB. */
#define VM_IOVA_BASE ((1ull << 46) + (64ull << 30))

unsigned smd_vm_msix_vectors(const uint8_t *cfg)
{
	unsigned pos = cfg[PCI_CAPABILITY_LIST] & ~3u, n = 0;

	if (!(cfg[PCI_STATUS] & PCI_STATUS_CAP_LIST))
		return 0;
	while (pos >= 0x40 && pos < SMIO_VM_CFG - 4 && n++ < 48) {
		if (cfg[pos] == PCI_CAP_ID_MSIX)
			return ((cfg[pos + 2] | cfg[pos + 3] << 8) & PCI_MSIX_FLAGS_QSIZE) + 1;
		pos = cfg[pos + 1] & ~3u;
	}
	return 0;
}

/* ---------- borrower: reserve, borrow, return ---------- */

static int lender_host(struct smd *d, uint32_t fdid, uint32_t *host)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == SMIO_FDID_NODE(fdid)) {
			*host = d->topo->hosts[i].id;
			return *host == d->host_id ? -EINVAL : 0;   /* not lent to itself */
		}
	return -ENODEV;
}

int smd_vm_reserve(struct smd *d, uint32_t fdid, bool hold, struct smio_peer_vm_resv_reply *r)
{
	struct smio_peer_vm_resv q = { .bdf = SMIO_FDID_BDF(fdid),
				       .flags = hold ? SMIO_VM_RESV_HOLD : 0 };
	struct smio_peer_vm_resv_reply none;
	uint32_t lender, rlen = 0;
	int rc = lender_host(d, fdid, &lender);

	if (rc)
		return rc;
	rc = smd_peer_request(d, lender, SMIO_PEER_VM_RESERVE, &q, sizeof(q), r ? r : &none,
			      sizeof(none), &rlen, NULL);
	if (!rc && rlen != sizeof(none))
		rc = -EPROTO;
	if (!rc)
		smio_info("VM device 0x%08x %s at host %u", fdid,
			  hold ? "reserved (not borrowed)" : "no longer reserved", lender);
	return rc;
}

bool smd_vm_holds(struct smd *d, uint32_t fdid)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_dev[i].used && d->vm_dev[i].fdid == fdid)
			return true;
	return false;
}

int smd_vm_enable(struct smd *d, struct smd_vm_dev *v)
{
	unsigned slot = (unsigned)(v - d->vm_dev);
	struct smio_lend_info info;
	uint64_t target, size;
	uint32_t cmd = 0;
	int rc, err = 0;

	if (iommu_enabled(d->host->iommu)) {
		target = VM_IOVA_BASE + slot * SMIO_VM_MEM_MAX;
		size = v->size;
	} else {
		rc = shadow_dma_target(d->pci, &target, &size);   /* all of RAM, identity */
		if (rc)
			return rc;
	}
	rc = smd_lend_borrow(d, v->fdid, target, size, true, &info, &v->pdev);
	if (rc)
		return rc;
	/* The guest's memory layout: our IOMMU maps the window onto its RAM ... */
	v->bus = dma_map_single(v->pdev, v->phys, v->size, &err);
	rc = v->bus ? 0 : (err ? err : -ENOMEM);
	/*
	 * ... and the lender's mirrors guest-physical addresses onto the window:
	 * RAM [0, low) at GPA 0, the rest at 4 GiB (q35, above the PCI hole) -
	 * two DMA windows into one contiguous range of our RAM.
	 */
	if (!rc)
		rc = smd_lend_vm_mirror(d, v->fdid, 0, v->bus, v->low);
	if (!rc && v->low < v->size)
		rc = smd_lend_vm_mirror(d, v->fdid, 4ull << 30, v->bus + v->low, v->size - v->low);
	if (rc == -EOPNOTSUPP)
		smio_warn("VM device 0x%08x refused: its lender has no IOMMU, so the device could "
			  "not DMA with the guest's addresses", v->fdid);
	if (!rc && v->nvec) {
		rc = pci_alloc_irq_vectors(v->pdev, (int)v->nvec);
		rc = rc < 0 ? rc : 0;
	}
	if (!rc)
		rc = pci_read_config(v->pdev, PCI_COMMAND, 2, &cmd);
	if (!rc)
		rc = pci_write_config(v->pdev, PCI_COMMAND, 2,
				      cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	if (rc) {
		smd_vm_disable(d, v, "its enable failed");
		return rc;
	}
	v->borrows++;
	smio_info("VM device 0x%08x borrowed for pid %u (the guest enabled it, #%u): DMA window "
		  "0x%llx -> RAM 0x%llx, device address 0x%llx, %u vectors; guest RAM %llu MiB at 0, "
		  "%llu MiB at 4 GiB", v->fdid, v->pid,
		  v->borrows, (unsigned long long)target, (unsigned long long)v->phys,
		  (unsigned long long)v->bus, v->nvec, (unsigned long long)(v->low >> 20),
		  (unsigned long long)((v->size - v->low) >> 20));
	return 0;
}

void smd_vm_disable(struct smd *d, struct smd_vm_dev *v, const char *why)
{
	if (v->pdev) {
		for (int vec = 0; vec < v->pdev->nvec; vec++)
			v->irqs += pci_irq_count(v->pdev, vec);
		pci_free_irq_vectors(v->pdev);
		if (v->bus)
			dma_unmap_single(v->pdev, v->bus, v->size);
	}
	smd_lend_vm_return(d, v->fdid);
	v->pdev = NULL;
	v->bus = 0;
	smio_info("VM device 0x%08x returned (%s)", v->fdid, why);
}

int smd_vm_cmd(struct smd *d, struct smd_conn *c, const struct smio_vm_cmd *m,
	       struct smio_vm_cmd_reply *o)
{
	struct smd_vm_dev *v = smd_vm_dev_slot(d, c->cid, m->fdid);
	int rc = 0;

	if (!v)
		return -ENOENT;
	v->msgs++;
	if (v->pdev && (m->flags & SMIO_VM_CMD_RESET))
		smd_vm_disable(d, v, "the guest reset it");
	else if (v->pdev && !(m->cmd & PCI_COMMAND_MASTER))
		smd_vm_disable(d, v, "the guest cleared Bus Master");
	else if (!v->pdev && (m->cmd & PCI_COMMAND_MASTER) && !(m->flags & SMIO_VM_CMD_RESET))
		rc = smd_vm_enable(d, v);
	memset(o, 0, sizeof(*o));
	o->state = v->pdev ? SMIO_VM_BORROWED : SMIO_VM_RESERVED;
	o->nvec = v->pdev ? v->nvec : 0;
	return rc;
}

/* ---------- lender: reservations ---------- */

uint32_t smd_vm_resv_holder(struct smd *d, uint16_t bdf)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_resv[i].used && d->vm_resv[i].bdf == bdf)
			return d->vm_resv[i].host;
	return SMIO_LEND_NOBODY;
}

int smd_vm_resv_req(struct smd *d, struct smd_conn *c, const struct smio_peer_vm_resv *m,
		    struct smio_peer_vm_resv_reply *o)
{
	struct smd_vm_resv *r = NULL;
	struct pci_dev *p;
	int rc = 0;

	memset(o, 0, sizeof(*o));
	if (c->outgoing || c->host == d->host_id)
		return -EINVAL;
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_resv[i].used && d->vm_resv[i].bdf == m->bdf) {
			if (d->vm_resv[i].cid != c->cid)
				return -EBUSY;    /* another host's VM holds it */
			r = &d->vm_resv[i];
		}
	if (!(m->flags & SMIO_VM_RESV_HOLD)) {
		if (r)
			memset(r, 0, sizeof(*r));
		return 0;
	}
	if (r)
		return -EBUSY;                    /* one VM per function */
	p = pci_get_dev(d->pci, m->bdf);
	if (!p)
		return -ENODEV;
	/* Without our IOMMU the device cannot DMA with the guest's addresses: say so now. */
	if (!iommu_enabled(d->host->iommu))
		return -EOPNOTSUPP;
	if (smd_lend_lent_to(d, m->bdf) >= 0 && (uint32_t)smd_lend_lent_to(d, m->bdf) != c->host)
		return -EBUSY;                    /* lent to another host now */
	for (unsigned i = 0; i < SMD_VM_MAX && !r; i++)
		if (!d->vm_resv[i].used)
			r = &d->vm_resv[i];
	if (!r)
		return -ENOSPC;
	/* Its config space as it is now (a VF's IDs as Linux gives them): the VM
	 * answers the guest's reads from it. */
	rc = lend_cfg_snapshot(d->host, m->bdf, o->cfg, SMIO_VM_CFG);
	if (rc)
		return rc;
	for (unsigned b = 0; b < SMIO_DEV_BARS; b++)
		o->bar_size[b] = p->bar_size[b];
	*r = (struct smd_vm_resv){ .used = true, .cid = c->cid, .host = c->host, .bdf = m->bdf };
	smio_info("%02x:%02x.%x reserved for a VM on host %u", FAB_BDF_BUS(m->bdf),
		  FAB_BDF_DEV(m->bdf), FAB_BDF_FN(m->bdf), c->host);
	return 0;
}

void smd_vm_resv_conn_closed(struct smd *d, struct smd_conn *c)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_resv[i].used && d->vm_resv[i].cid == c->cid)
			memset(&d->vm_resv[i], 0, sizeof(d->vm_resv[i]));
}
