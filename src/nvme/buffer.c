// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme's DMA buffers (docs/nvme-driver.md): memory the client
 * allocates or registers, or device memory at a bus address, each with the
 * PRP table the controller reads (in the lender's RAM, one per path).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snv_priv.h"

static size_t tbl_bytes(size_t size)
{
	size_t pages = (size + SNV_PAGE - 1) / SNV_PAGE;

	return (pages * SNV_PRP_ENTRIES * 8 + SNV_PAGE - 1) & ~(size_t)(SNV_PAGE - 1);
}

/* The PRP table of b (b->io, b->size set) in the lender's RAM; called with c->lock. */
static int tbl_setup(struct snv_client *c, struct snv_buf *b)
{
	size_t pages = (b->size + SNV_PAGE - 1) / SNV_PAGE, bytes = tbl_bytes(b->size);
	uint64_t *tbl = malloc(bytes);
	sci_ioaddr_t io;
	sci_error_t se;
	int rc;

	if (!tbl)
		return -ENOMEM;
	for (size_t p = 0; p < pages; p++)
		for (unsigned j = 0; j < SNV_PRP_ENTRIES; j++)
			tbl[p * SNV_PRP_ENTRIES + j] = b->io + (p + 1 + j) * SNV_PAGE;
	rc = snv_get_seg(c, true, SNV_PLACE_DEVICE, bytes, c->adapter, &b->tseg);
	if (!rc) {
		SCIMapRemoteSegmentForDevice(b->tseg->rs, c->dev, &io, 0, bytes, 0, &se);
		rc = snv_errno(se);
	}
	if (!rc) {
		b->tseg_mapped = true;
		b->tbl_io = io;
		memcpy((void *)b->tseg->vaddr, tbl, pages * SNV_PRP_ENTRIES * 8);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	free(tbl);
	return rc;
}

/* The backup path's table: the same rows with the backup path's addresses. */
int snv_mp_buf_setup(struct snv_client *c, struct snv_buf *b)
{
	size_t pages = (b->size + SNV_PAGE - 1) / SNV_PAGE, bytes = tbl_bytes(b->size);
	uint64_t *tbl;
	sci_ioaddr_t io;
	sci_error_t se;
	int rc;

	/* The data once more, through the lender's NTB on the backup's fabric. */
	SCIMapLocalSegmentForDevice(b->mem.seg, c->bk_adapter, c->dev, &io, 0, b->mem.size, 0,
				    &se);
	if (se)
		return snv_errno(se);
	b->io2 = io;
	tbl = malloc(bytes);
	if (!tbl)
		return -ENOMEM;
	for (size_t p = 0; p < pages; p++)
		for (unsigned j = 0; j < SNV_PRP_ENTRIES; j++)
			tbl[p * SNV_PRP_ENTRIES + j] = b->io2 + (p + 1 + j) * SNV_PAGE;
	rc = snv_get_seg(c, true, SNV_PLACE_DEVICE, bytes, c->bk_adapter, &b->tseg2);
	if (!rc) {
		SCIMapRemoteSegmentForDevice(b->tseg2->rs, c->dev, &io, 0, bytes, 0, &se);
		rc = snv_errno(se);
	}
	if (!rc) {
		b->tseg2_mapped = true;
		b->tbl_io2 = io;
		memcpy((void *)b->tseg2->vaddr, tbl, pages * SNV_PRP_ENTRIES * 8);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	free(tbl);
	return rc;
}

static void tbl_free(struct snv_client *c, struct snv_buf *b)
{
	sci_error_t se;

	if (b->tseg2_mapped)
		SCIUnmapRemoteSegmentForDevice(b->tseg2->rs, c->dev, 0, &se);
	if (b->tseg2)
		b->tseg2->in_use = false;
	b->tseg2 = NULL;
	b->tseg2_mapped = false;

	if (b->tseg_mapped)
		SCIUnmapRemoteSegmentForDevice(b->tseg->rs, c->dev, 0, &se);
	if (b->tseg)
		b->tseg->in_use = false;
	b->tseg = NULL;
	b->tseg_mapped = false;
}

/* Table, then the client's list; on failure the caller frees b->mem. */
static int buf_add(struct snv_client *c, struct snv_buf *b)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = tbl_setup(c, b);
	if (!rc && c->mp)
		rc = snv_mp_buf_setup(c, b);
	if (!rc)
		rc = snv_list_add((void ***)&c->bufs, &c->nbufs, &c->cap_bufs, b);
	if (rc)
		tbl_free(c, b);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* The common end of snv_buf_alloc/register: list the buffer, or undo it all. */
static int buf_finish(struct snv_client *c, struct snv_buf *b, size_t size, int rc,
		      struct snv_buf **out)
{
	b->size = size;
	b->io = b->mem.io;
	if (!rc)
		rc = buf_add(c, b);
	if (rc) {
		snv_dmamem_free(&b->mem, c->adapter, c->dev);
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

int snv_buf_alloc(struct snv_client *c, size_t size, struct snv_buf **out)
{
	struct snv_buf *b;
	int rc;

	*out = NULL;
	if (!size || size > ((size_t)1 << 40))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->c = c;
	rc = snv_dmamem_alloc(c->sd, c->adapter, c->dev, size, &b->mem);
	return buf_finish(c, b, size, rc, out);
}

int snv_buf_register(struct snv_client *c, void *addr, size_t size, struct snv_buf **out)
{
	struct snv_buf *b;
	sci_error_t se;
	int rc;

	*out = NULL;
	if (!addr || !size || size % SNV_PAGE || (uintptr_t)addr % SNV_PAGE)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->c = c;
	b->registered = true;
	SCICreateSegment(c->sd, &b->mem.seg, 0, size, NULL, NULL, SCI_FLAG_AUTO_ID | SCI_FLAG_EMPTY,
			 &se);
	if (!se)
		SCIRegisterSegmentMemory(addr, size, b->mem.seg, 0, &se);
	if (!se)
		SCIPrepareSegment(b->mem.seg, c->adapter, 0, &se);
	if (!se) {
		SCIMapLocalSegmentForDevice(b->mem.seg, c->adapter, c->dev, &b->mem.io, 0, size, 0,
					    &se);
		b->mem.mapped_dev = !se;
	}
	rc = snv_errno(se);
	b->mem.vaddr = addr;
	b->mem.size = size;
	return buf_finish(c, b, size, rc, out);
}

int snv_buf_attach_bus(struct snv_client *c, uint64_t bus, size_t size, struct snv_buf **out)
{
	struct snv_buf *b;
	sci_error_t se;
	int rc;

	*out = NULL;
	if (!size || size % SNV_PAGE || bus % SNV_PAGE || bus + size < bus)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->c = c;
	SCICreateSegment(c->sd, &b->mem.seg, 0, size, NULL, NULL, SCI_FLAG_AUTO_ID | SCI_FLAG_EMPTY,
			 &se);
	/* The daemon accepts only a range inside a memory BAR of this host's devices. */
	if (!se)
		SCIAttachPhysicalMemory(bus, NULL, 0, size, b->mem.seg, 0, &se);
	if (!se)
		SCIPrepareSegment(b->mem.seg, c->adapter, 0, &se);
	/* The program's view: loads and stores on the BAR (MMIO), for tools that fill
	 * or check the data; the NVMe's DMA does not use it. */
	if (!se)
		b->mem.vaddr = SCIMapLocalSegment(b->mem.seg, &b->mem.map, 0, size, NULL, 0, &se);
	if (!se) {
		/* The lender's NTB window points at the BAR: the NVMe's PRPs reach the
		 * device memory through it, peer-to-peer. */
		SCIMapLocalSegmentForDevice(b->mem.seg, c->adapter, c->dev, &b->mem.io, 0, size, 0,
					    &se);
		b->mem.mapped_dev = !se;
	}
	rc = se == SCI_ERR_ILLEGAL_ADDRESS ? -EFAULT : snv_errno(se);
	b->mem.size = size;
	return buf_finish(c, b, size, rc, out);
}

void snv_buf_free(struct snv_buf *b)
{
	struct snv_client *c;

	if (!b)
		return;
	c = b->c;
	pthread_mutex_lock(&c->lock);
	snv_list_del((void **)c->bufs, &c->nbufs, b);
	tbl_free(c, b);
	pthread_mutex_unlock(&c->lock);
	if (b->registered)
		b->mem.map = NULL;            /* the program's memory: nothing to unmap */
	snv_dmamem_free(&b->mem, c->adapter, c->dev);
	free(b);
}

void *snv_buf_vaddr(const struct snv_buf *b)
{
	return b->mem.vaddr;
}

size_t snv_buf_size(const struct snv_buf *b)
{
	return b->size;
}

uint64_t snv_buf_ioaddr(const struct snv_buf *b, size_t off)
{
	return b->io + off;
}
