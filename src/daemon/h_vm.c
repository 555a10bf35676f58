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
#include "vm_priv.h"

static struct smd_vm_mem *vm_slot(struct smd *d, uint32_t cid)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_mem[i].used == (cid != 0) && (!cid || d->vm_mem[i].cid == cid))
			return &d->vm_mem[i];
	return NULL;
}

struct smd_vm_dev *smd_vm_dev_slot(struct smd *d, uint32_t cid, uint32_t fdid)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++) {
		struct smd_vm_dev *v = &d->vm_dev[i];

		if (cid ? v->used && v->cid == cid && (!fdid || v->fdid == fdid) : !v->used)
			return v;
	}
	return NULL;
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

/* QEMU's device is gone: return the device if borrowed, let the reservation go. */
static void detach(struct smd *d, struct smd_vm_dev v)
{
	if (v.pdev)
		smd_vm_disable(d, &v, "its VM's device is gone");
	smd_vm_reserve(d, v.fdid, false, NULL);
	/* Its RAM, if QEMU's other connection closed first. */
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_mem[i].used && !d->vm_mem[i].cid && d->vm_mem[i].phys == v.phys)
			mem_release(d, &d->vm_mem[i]);
}

/*
 * VM_ATTACH: the function reserved for the VM, not borrowed (h_vm_life.c):
 * its config space and BAR sizes from the lender; the borrow waits for the
 * guest to enable it (VM_CMD).
 */
static int vm_attach(struct smd *d, struct smd_conn *c, const struct smio_vm_attach *m,
		     struct smio_vm_attach_reply *o)
{
	struct smd_vm_mem *mem = NULL;
	struct smd_vm_dev *v = smd_vm_dev_slot(d, 0, 0);
	struct smio_peer_vm_resv_reply *r;
	unsigned nbars;
	int rc;

	for (unsigned i = 0; i < SMD_VM_MAX && !mem; i++)
		if (d->vm_mem[i].used && d->vm_mem[i].phys == m->phys &&
		    d->vm_mem[i].size == m->size && smd_conn_same_process(d, c, d->vm_mem[i].cid))
			mem = &d->vm_mem[i];
	if (!mem)
		return -ENOENT;     /* not this process's VM RAM */
	if (!v)
		return -ENOSPC;
	if (smd_vm_holds(d, m->fdid))
		return -EBUSY;      /* attached to a VM of ours already */
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* The slot is ours from now: another attach on another worker takes another. */
	*v = (struct smd_vm_dev){ .used = true, .cid = c->cid, .fdid = m->fdid };
	rc = smd_vm_reserve(d, m->fdid, true, r);
	if (rc == -EOPNOTSUPP)
		smio_warn("VM device 0x%08x refused: its lender has no IOMMU, so the device could "
			  "not DMA with the guest's addresses", m->fdid);
	if (rc) {
		memset(v, 0, sizeof(*v));
		free(r);
		return rc;
	}
	memset(o, 0, sizeof(*o));
	memcpy(o->cfg, r->cfg, sizeof(o->cfg));
	o->info.fdid = m->fdid;
	o->info.lender = SMIO_FDID_NODE(m->fdid);
	for (unsigned b = 0; b < SMIO_DEV_BARS; b++)
		o->info.bar_size[b] = r->bar_size[b];
	free(r);
	nbars = 0;
	for (unsigned b = 0; b < SMIO_DEV_BARS; b++)
		nbars += o->info.bar_size[b] != 0;
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == SMIO_FDID_NODE(m->fdid))
			o->info.lender = d->topo->hosts[i].id;
	o->nvec = smd_vm_msix_vectors(o->cfg);
	*v = (struct smd_vm_dev){ .used = true, .cid = c->cid, .fdid = m->fdid,
				  .phys = mem->phys, .size = mem->size, .pid = c->pid, .msgs = 1,
				  .nvec = o->nvec, .nbars = nbars,
				  .low = m->low_mib ? (uint64_t)m->low_mib << 20 : mem->size };
	smio_info("VM device 0x%08x attached for pid %u: reserved, borrowed when the guest "
		  "enables it", m->fdid, c->pid);
	return 0;
}

/* The memfd behind an attached device's BAR: where the shadow's window leads. */
static int vm_bar(struct smd *d, struct smd_conn *c, const struct smio_vm_bar *m,
		  struct smio_vm_bar_reply *o, int *out_fd)
{
	struct smd_vm_dev *dv = smd_vm_dev_slot(d, c->cid, m->fdid);
	struct fab_route *rt;
	uint64_t addr, size, fsize;
	int rc, fd = -1;

	if (!dv)
		return -ENOENT;
	dv->msgs++;
	if (!dv->pdev)
		return -ENODEV;    /* reserved, not borrowed: the guest has not enabled it */
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
		struct smd_vm_dev *dv = smd_vm_dev_slot(d, c->cid, q->fdid);

		if (!dv)
			return -ENOENT;
		dv->msgs++;
		if (!dv->pdev)
			return -ENODEV;
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
			e->nvec = dv->nvec;
			e->msgs = dv->msgs;
			e->state = dv->pdev ? SMIO_VM_BORROWED : SMIO_VM_RESERVED;
			e->borrows = dv->borrows;
			e->irqs = dv->irqs;
			e->nbars = dv->nbars;
			for (int vec = 0; dv->pdev && vec < dv->pdev->nvec; vec++)
				e->irqs += pci_irq_count(dv->pdev, vec);
			st->n++;
			e++;
		}
		*outlen = (uint32_t)(sizeof(*st) + st->n * sizeof(*e));
		return 0;
	}
	if (type == SMIO_VM_CMD) {
		rc = smd_vm_cmd(d, c, p, out);
		if (!rc)
			*outlen = sizeof(struct smio_vm_cmd_reply);
		return rc;
	}
	if (type == SMIO_PEER_VM_RESERVE) {
		rc = smd_vm_resv_req(d, c, p, out);
		if (!rc)
			*outlen = sizeof(struct smio_peer_vm_resv_reply);
		return rc;
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
	smd_vm_resv_conn_closed(d, c);     /* lender: a VM's host gone */
	while ((dv = smd_vm_dev_slot(d, c->cid, 0))) {
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
