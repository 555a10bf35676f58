// SPDX-License-Identifier: MIT
/*
 * Virtual machines' RAM (VM_MEM, docs/vm.md): the first piece of the MDEV
 * parent. A guest's RAM must be this host's RAM — as a VFIO guest's pages
 * are host pages, pinned — so that a borrowed device's DMA, which ends in
 * this host's RAM after its IOMMU, can reach it. The parent takes a
 * contiguous range from the host's physical memory (physmem, 2 MiB aligned)
 * and hands QEMU the RAM memfd with the range's offset; QEMU maps it as the
 * guest's RAM (smartio-mdev.c's memory backend). The range is the
 * connection's: it goes back to the allocator when the connection closes
 * (QEMU exits or is killed). Host lock held by physmem itself.
 *
 * VM_ATTACH (QEMU's smartio-mdev device, on its own connection): the parent
 * borrows the device with Device Lending (h_lend.c) for no driver of this
 * host, with the guest's RAM as its DMA window: our IOMMU maps the window
 * onto the RAM, the lender's IOMMU maps guest-physical addresses onto the
 * window (PEER_VM_DMA: twice when q35 put part of the RAM at 4 GiB, the
 * low and high windows), so the guest's own driver DMAs with guest-physical
 * addresses. MSI-X vectors are allocated on the shadow (the real table
 * points at our interrupt controller) and their eventfds handed to QEMU
 * (VM_IRQ), which raises the guest's vectors from them. VM_BAR hands QEMU
 * the memfd behind each BAR (where the shadow's NTB window leads: the
 * lender's BAR memory). The connection's end returns
 * the device (on a worker: the lender is asked).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "daemon.h"
#include "fabric/iommu.h"
#include "host/lend.h"
#include "host/physmem.h"
#include "lend_priv.h"
#include "util/log.h"

/* VMs' DMA windows in the NTBs' IOVA space, past the shadows' 256 x 256 MiB. */
#define VM_IOVA_BASE ((1ull << 46) + (64ull << 30))

static struct smd_vm_mem *vm_slot(struct smd *d, uint32_t cid)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_mem[i].used == (cid != 0) && (!cid || d->vm_mem[i].cid == cid))
			return &d->vm_mem[i];
	return NULL;
}

static struct smd_vm_dev *dev_slot(struct smd *d, uint32_t cid, uint32_t fdid)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++) {
		struct smd_vm_dev *v = &d->vm_dev[i];

		if (cid ? v->used && v->cid == cid && (!fdid || v->fdid == fdid) : !v->used)
			return v;
	}
	return NULL;
}

/* The MSI-X table size of a config header, 0 without MSI-X. */
static unsigned msix_vectors(const uint8_t *cfg)
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

/* Give a VM's RAM back to the host, unless a device still DMAs into it. */
static void mem_release(struct smd *d, struct smd_vm_mem *v)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_dev[i].used && d->vm_dev[i].phys == v->phys) {
			v->cid = 0;       /* orphaned: the last device's return frees it */
			return;
		}
	physmem_free(pci_host_physmem(d->pci), v->phys, v->size);
	smio_info("VM RAM at 0x%llx freed (pid %u gone)", (unsigned long long)v->phys, v->pid);
	memset(v, 0, sizeof(*v));
}

static void detach(struct smd *d, struct smd_vm_dev v)
{
	if (v.pdev) {
		pci_free_irq_vectors(v.pdev);
		if (v.bus)
			dma_unmap_single(v.pdev, v.bus, v.size);
	}
	smd_lend_vm_return(d, v.fdid);
	smio_info("VM device 0x%08x returned", v.fdid);
	/* Its RAM, if QEMU's other connection closed first. */
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_mem[i].used && !d->vm_mem[i].cid && d->vm_mem[i].phys == v.phys)
			mem_release(d, &d->vm_mem[i]);
}

static int vm_attach(struct smd *d, struct smd_conn *c, const struct smio_vm_attach *m,
		     struct smio_vm_attach_reply *o)
{
	struct fab_host *h = d->host;
	struct smd_vm_mem *mem = NULL;
	struct smd_vm_dev *v = dev_slot(d, 0, 0);
	uint64_t target, size, low;
	unsigned slot, nvec;
	int rc, err = 0;

	for (unsigned i = 0; i < SMD_VM_MAX && !mem; i++)
		if (d->vm_mem[i].used && d->vm_mem[i].phys == m->phys &&
		    d->vm_mem[i].size == m->size && smd_conn_same_process(d, c, d->vm_mem[i].cid))
			mem = &d->vm_mem[i];
	if (!mem)
		return -ENOENT;     /* not this process's VM RAM */
	if (!v)
		return -ENOSPC;
	if (dev_slot(d, c->cid, m->fdid))
		return -EALREADY;
	slot = (unsigned)(v - d->vm_dev);
	if (iommu_enabled(h->iommu)) {
		target = VM_IOVA_BASE + slot * SMIO_VM_MEM_MAX;
		size = mem->size;
	} else {
		rc = shadow_dma_target(d->pci, &target, &size);   /* all of RAM, identity */
		if (rc)
			return rc;
	}
	memset(o, 0, sizeof(*o));
	rc = smd_lend_borrow(d, m->fdid, target, size, true, &o->info, &v->pdev);
	if (rc)
		return rc;
	*v = (struct smd_vm_dev){ .used = true, .cid = c->cid, .fdid = m->fdid, .pdev = v->pdev,
				  .phys = mem->phys, .size = mem->size, .pid = c->pid, .msgs = 1 };
	v->bus = dma_map_single(v->pdev, mem->phys, mem->size, &err);
	rc = v->bus ? 0 : (err ? err : -ENOMEM);
	/*
	 * The lender's IOMMU mirrors guest-physical addresses: RAM [0, low) at
	 * GPA 0, the rest at 4 GiB (q35, above the PCI hole): two DMA windows
	 * into one contiguous range of our RAM.
	 */
	low = m->low_mib ? (uint64_t)m->low_mib << 20 : mem->size;
	if (!rc)
		rc = smd_lend_vm_mirror(d, m->fdid, 0, v->bus, low);
	if (!rc && low < mem->size)
		rc = smd_lend_vm_mirror(d, m->fdid, 4ull << 30, v->bus + low, mem->size - low);
	if (rc == -EOPNOTSUPP)
		smio_warn("VM device 0x%08x refused: its lender has no IOMMU, so the device could "
			  "not DMA with the guest's addresses", m->fdid);
	for (unsigned off = 0; !rc && off < SMIO_VM_CFG; off += 4) {
		uint32_t dw = 0;

		rc = pci_read_config(v->pdev, off, 4, &dw);
		memcpy(o->cfg + off, &dw, 4);
	}
	nvec = rc ? 0 : msix_vectors(o->cfg);
	if (nvec) {
		rc = pci_alloc_irq_vectors(v->pdev, (int)nvec);
		rc = rc < 0 ? rc : 0;
	}
	if (!rc) {
		uint32_t cmd = 0;

		rc = pci_read_config(v->pdev, PCI_COMMAND, 2, &cmd);
		if (!rc)
			rc = pci_write_config(v->pdev, PCI_COMMAND, 2,
					      cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	}
	if (rc) {
		struct smd_vm_dev x = *v;

		memset(v, 0, sizeof(*v));
		detach(d, x);
		return rc;
	}
	o->nvec = nvec;
	smio_info("VM device 0x%08x attached for pid %u: DMA window 0x%llx -> RAM 0x%llx, "
		  "device address 0x%llx, %u vectors; guest RAM %llu MiB at 0, %llu MiB at 4 GiB",
		  m->fdid, c->pid, (unsigned long long)target, (unsigned long long)mem->phys,
		  (unsigned long long)v->bus, nvec, (unsigned long long)(low >> 20),
		  (unsigned long long)((mem->size - low) >> 20));
	return 0;
}

/* The memfd behind an attached device's BAR: where the shadow's window leads. */
static int vm_bar(struct smd *d, struct smd_conn *c, const struct smio_vm_bar *m,
		  struct smio_vm_bar_reply *o, int *out_fd)
{
	struct smd_vm_dev *dv = dev_slot(d, c->cid, m->fdid);
	struct fab_route *rt;
	uint64_t addr, size, fsize;
	int rc, fd = -1;

	if (!dv)
		return -ENOENT;
	dv->msgs++;
	addr = dv->pdev->bar_addr[m->bar];
	size = dv->pdev->bar_size[m->bar];
	if (!addr || !size)
		return -ENXIO;
	rt = malloc(sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	rc = fab_route_resolve(d->host, 0, addr, size, true, rt);
	if (!rc && (rt->status != FAB_OK || rt->tgt.kind != FAB_TGT_BAR || rt->tgt.len < size))
		rc = -EHOSTUNREACH;
	if (!rc) {
		o->offset = rt->tgt.offset;
		o->len = size;
		if (rt->tgt.host == d->host_id)
			fd = d->host->mems[rt->tgt.mem].fd;
		else
			rc = smd_seg_peer_memfd(d, rt->tgt.host, rt->tgt.mem, &fd, &fsize);
	}
	free(rt);
	if (!rc)
		*out_fd = fd;     /* the segment service's cache keeps it; the reply sends a copy */
	return rc;
}

int smd_h_vm(struct smd *d, struct smd_conn *c, uint16_t type, const void *p, void *out,
	     uint32_t *outlen, int *out_fd)
{
	const struct smio_vm_mem *m = p;
	struct smio_vm_mem_reply *r = out;
	struct physmem *pm = pci_host_physmem(d->pci);
	struct smd_vm_mem *v;
	uint64_t phys, off, contig;
	int rc;

	if (type == SMIO_VM_ATTACH) {
		rc = vm_attach(d, c, p, out);
		if (!rc)
			*outlen = sizeof(struct smio_vm_attach_reply);
		return rc;
	}
	if (type == SMIO_VM_IRQ) {
		const struct smio_vm_irq *q = p;
		struct smd_vm_dev *dv = dev_slot(d, c->cid, q->fdid);

		if (!dv)
			return -ENOENT;
		dv->msgs++;
		if ((int)q->vector >= dv->pdev->nvec)
			return -ERANGE;
		*out_fd = pci_irq_eventfd(dv->pdev, (int)q->vector);
		return *out_fd < 0 ? -EIO : 0;
	}
	if (type == SMIO_VM_STATS) {
		struct smio_vm_stats *st = out;
		struct smio_vm_stat *e = st->s;

		memset(st, 0, sizeof(*st));
		for (unsigned i = 0; i < SMD_VM_MAX && st->n < SMIO_VM_STATS_MAX; i++) {
			const struct smd_vm_dev *dv = &d->vm_dev[i];

			if (!dv->used)
				continue;
			memset(e, 0, sizeof(*e));
			e->fdid = dv->fdid;
			e->pid = dv->pid;
			e->nvec = (uint32_t)dv->pdev->nvec;
			for (unsigned b = 0; b < 6; b++)
				e->nbars += dv->pdev->bar_size[b] != 0;
			e->msgs = dv->msgs;
			for (int vec = 0; vec < dv->pdev->nvec; vec++)
				e->irqs += pci_irq_count(dv->pdev, vec);
			st->n++;
			e++;
		}
		*outlen = (uint32_t)(sizeof(*st) + st->n * sizeof(*e));
		return 0;
	}
	if (type == SMIO_VM_BAR) {
		rc = vm_bar(d, c, p, out, out_fd);
		if (!rc)
			*outlen = sizeof(struct smio_vm_bar_reply);
		return rc;
	}
	if (type != SMIO_VM_MEM)
		return -EPROTO;
	if (!pm || !d->host->nmems || !d->host->mems[0].is_ram)
		return -ENODEV;
	if (vm_slot(d, c->cid))
		return -EALREADY;       /* one guest's RAM per connection */
	v = vm_slot(d, 0);
	if (!v)
		return -ENOSPC;
	rc = physmem_alloc(pm, m->size, SMIO_VM_MEM_ALIGN, UINT64_MAX, &phys);
	if (rc)
		return rc;
	if (!fab_ram_offset(d->host, phys, &off, &contig) || contig < m->size) {
		physmem_free(pm, phys, m->size);
		return -EFAULT;
	}
	*v = (struct smd_vm_mem){ .used = true, .cid = c->cid, .pid = c->pid, .phys = phys,
				  .size = m->size };
	*r = (struct smio_vm_mem_reply){ .phys = phys, .offset = off, .size = m->size };
	*outlen = sizeof(*r);
	*out_fd = d->host->mems[0].fd;
	smio_info("VM RAM: %llu MiB at 0x%llx for pid %u", (unsigned long long)(m->size >> 20),
		  (unsigned long long)phys, c->pid);
	return 0;
}

struct detach_work {
	struct smd_work w;
	struct smd_vm_dev v;
};

static void detach_run(struct smd_work *w)
{
	detach(w->d, ((struct detach_work *)w)->v);
}

static void detach_done(struct smd_work *w)
{
	free(w);
}

void smd_vm_conn_closed(struct smd *d, struct smd_conn *c)
{
	struct smd_vm_dev *dv;
	struct smd_vm_mem *v;

	/* Devices first (their DMA window is the RAM), on a worker: the lender is asked. */
	while ((dv = dev_slot(d, c->cid, 0))) {
		struct detach_work *x = calloc(1, sizeof(*x));

		if (!x) {
			smio_error("VM device 0x%08x: no memory to return it", dv->fdid);
			memset(dv, 0, sizeof(*dv));
			continue;
		}
		x->v = *dv;
		x->w.run = detach_run;
		x->w.done = detach_done;
		x->w.key = 0x200000000ull | dv->fdid;
		memset(dv, 0, sizeof(*dv));
		smd_work_queue(d, &x->w);
	}
	v = vm_slot(d, c->cid);
	if (v)
		mem_release(d, v);
}
