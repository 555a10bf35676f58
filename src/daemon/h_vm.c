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
 */
#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "host/physmem.h"
#include "util/log.h"

static struct smd_vm_mem *vm_slot(struct smd *d, uint32_t cid)
{
	for (unsigned i = 0; i < SMD_VM_MAX; i++)
		if (d->vm_mem[i].used == (cid != 0) && (!cid || d->vm_mem[i].cid == cid))
			return &d->vm_mem[i];
	return NULL;
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

void smd_vm_conn_closed(struct smd *d, struct smd_conn *c)
{
	struct smd_vm_mem *v = vm_slot(d, c->cid);

	if (!v)
		return;
	physmem_free(pci_host_physmem(d->pci), v->phys, v->size);
	smio_info("VM RAM at 0x%llx freed (pid %u gone)", (unsigned long long)v->phys, v->pid);
	memset(v, 0, sizeof(*v));
}
