// SPDX-License-Identifier: MIT
/*
 * libsisci: memory for segments created empty (SCIRegisterSegmentMemory,
 * SCIAttachPhysicalMemory) and the buffer aliasing behind registration. The
 * segments themselves are in sisci_segment.c.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sisci_seg.h"

/* ---------- memory for empty segments ---------- */

/*
 * The host RAM memory object behind a segment of ours and the page-aligned
 * offset of the segment in it (SEG_MAP_LOCAL). *fd is the caller's to close.
 */
static sci_error_t segment_memfd(struct sci_local_segment *s, int *fd, uint64_t *off)
{
	struct smio_seg_id req = { .segid = s->id };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct smio_map_reply mr;
	uint32_t rlen = 0;
	int rc;

	*fd = -1;
	rc = sisci_call(s->sd, SMIO_SEG_MAP_LOCAL, &req, sizeof(req), &mr, sizeof(mr), &rlen, fd);
	if (!rc && (*fd < 0 || rlen != sizeof(mr) || mr.offset > mr.fd_size ||
		    s->user_len > mr.fd_size - mr.offset || mr.offset % page ||
		    mr.offset > (uint64_t)INT64_MAX))
		rc = -EPROTO;
	if (rc) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return sisci_seg_errno(rc);
	}
	*off = mr.offset;
	return SCI_ERR_OK;
}

/*
 * Make the registered buffer a shared mapping of the segment's RAM, at the
 * same address; copy: first put the buffer's contents into that RAM.
 */
sci_error_t sisci_seg_alias_buffer(struct sci_local_segment *s, bool copy)
{
	sci_error_t err;
	uint64_t off = 0;
	void *p;
	int fd;

	err = segment_memfd(s, &fd, &off);
	if (err)
		return err;
	if (copy) {
		p = mmap(NULL, s->user_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
		if (p == MAP_FAILED) {
			close(fd);
			return errno == ENOMEM ? SCI_ERR_NOSPC : SCI_ERR_SYSTEM;
		}
		memcpy(p, s->user, s->user_len);
		munmap(p, s->user_len);
	}
	p = mmap(s->user, s->user_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 (off_t)off);
	close(fd);
	if (p == MAP_FAILED)
		return errno == ENOMEM ? SCI_ERR_NOSPC : SCI_ERR_SYSTEM;
	return SCI_ERR_OK;
}

/* Give the registered buffer private memory again, with its current contents. */
sci_error_t sisci_seg_unregister_buffer(struct sci_local_segment *s)
{
	void *tmp = malloc(s->user_len), *p;

	if (!tmp)
		return SCI_ERR_NOSPC;
	memcpy(tmp, s->user, s->user_len);
	p = mmap(s->user, s->user_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p == MAP_FAILED) {
		free(tmp);
		return errno == ENOMEM ? SCI_ERR_NOSPC : SCI_ERR_SYSTEM;
	}
	memcpy(s->user, tmp, s->user_len);
	free(tmp);
	return SCI_ERR_OK;
}

/*
 * Take an empty segment of ours for an attach: pinned (maps, so that it
 * cannot be removed meanwhile) and marked busy for other attaches.
 */
static sci_error_t attach_begin(struct sci_local_segment *s)
{
	sci_error_t err = SCI_ERR_OK;

	sisci_lock();
	if (!sisci_obj_valid(s, SISCI_OBJ_LSEG))
		err = SCI_ERR_ILLEGAL_PARAMETER;
	else if (!(s->flags & SCI_FLAG_EMPTY) || s->phys)
		err = SCI_ERR_ILLEGAL_OPERATION;      /* it has memory already */
	else
		s->maps++;
	sisci_unlock();
	return err;
}

static void attach_end(struct sci_local_segment *s)
{
	sisci_lock();
	s->maps--;
	sisci_unlock();
}

/* SEG_ATTACH; on success the segment has memory (no longer SCI_FLAG_EMPTY). */
static sci_error_t attach(struct sci_local_segment *s, uint32_t kind, uint64_t addr,
			  uint64_t size)
{
	struct smio_seg_attach req = { .segid = s->id, .kind = kind, .addr = addr, .size = size };
	struct smio_seg_info si;
	uint32_t rlen = 0;
	int rc;

	rc = sisci_call(s->sd, SMIO_SEG_ATTACH, &req, sizeof(req), &si, sizeof(si), &rlen, NULL);
	if (!rc && (rlen != sizeof(si) || si.segid != s->id || !si.addr || si.size != size))
		rc = -EPROTO;
	switch (rc) {
	case 0:
		break;
	case -EACCES:
		return SCI_ERR_ILLEGAL_ADDRESS;   /* not device memory nor RAM of ours */
	case -EEXIST:
		return SCI_ERR_ILLEGAL_OPERATION; /* not empty */
	default:
		return sisci_seg_errno(rc);
	}
	sisci_lock();
	s->phys = si.addr;
	s->alloc = si.size;
	s->size = size;
	s->flags &= ~SCI_FLAG_EMPTY;
	sisci_unlock();
	return SCI_ERR_OK;
}

#define REGISTER_FLAGS (SCI_FLAG_LOCK_USER_MEM | SCI_FLAG_CUDA_BUFFER | SCI_FLAG_SCIF_BUFFER)

/*
 * The emulation's way of pinning the program's pages for DMA: the segment
 * gets fresh host RAM (the daemon's RAM object), the buffer's contents are
 * copied into it, and the buffer is replaced, at the same address, by a
 * shared mapping of that RAM. From then on what the program stores there is
 * what devices and remote hosts see, with no copy in the data path.
 * SCIRemoveSegment gives the buffer private memory back (docs/sisci.md).
 */
void SCIRegisterSegmentMemory(void *address, size_t size, sci_local_segment_t segment,
			      unsigned int flags, sci_error_t *error)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	*error = sisci_check_init();
	if (*error)
		return;
	if (flags & ~REGISTER_FLAGS) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	/* Memory of a GPU or of SCIF: there is none here. */
	if (flags & (SCI_FLAG_CUDA_BUFFER | SCI_FLAG_SCIF_BUFFER)) {
		*error = SCI_ERR_FLAG_NOT_IMPLEMENTED;
		return;
	}
	if (!address || (uintptr_t)address % page) {
		*error = SCI_ERR_ILLEGAL_ADDRESS;
		return;
	}
	if (!size || size % page || page % SMIO_SEG_PAGE) {
		*error = SCI_ERR_SIZE_ALIGNMENT;
		return;
	}
	if (size > SEG_MAX_SIZE || (uintptr_t)address + size < (uintptr_t)address) {
		*error = SCI_ERR_OUT_OF_RANGE;
		return;
	}
	*error = attach_begin(segment);
	if (*error)
		return;
	*error = attach(segment, SMIO_SEG_ATTACH_RAM, 0, size);
	if (!*error) {
		/* Only this thread changes user while the segment is pinned. */
		segment->user = address;
		segment->user_len = size;
		*error = sisci_seg_alias_buffer(segment, true);
		/* The segment keeps its RAM; the buffer stays the program's own. */
		if (*error)
			segment->user = NULL;
	}
	attach_end(segment);
}

#define ATTACH_FLAGS SCI_FLAG_PHYSICAL

/*
 * ioaddress is a bus address of this host (flags 0 or SCI_FLAG_PHYSICAL
 * alike: without an IOMMU in front of the CPU they are the same): inside a
 * BAR of one of its devices, or inside RAM of a segment this process owns.
 * busNo: the host's PCIe segment (domain); each host has one, 0. address
 * (the program's own mapping, if any) is not needed: SCIMapLocalSegment maps
 * the memory.
 */
void SCIAttachPhysicalMemory(sci_ioaddr_t ioaddress, void *address, unsigned int busNo,
			     size_t size, sci_local_segment_t segment, unsigned int flags,
			     sci_error_t *error)
{
	sci_error_t dummy;

	(void)address;
	if (!error)
		error = &dummy;
	*error = sisci_check_init();
	if (*error)
		return;
	if (flags & ~ATTACH_FLAGS) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (busNo) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (!ioaddress || ioaddress % SMIO_SEG_PAGE) {
		*error = SCI_ERR_ILLEGAL_ADDRESS;
		return;
	}
	if (!size || size % SMIO_SEG_PAGE) {
		*error = SCI_ERR_SIZE_ALIGNMENT;
		return;
	}
	if (size > SEG_MAX_SIZE || ioaddress + size < ioaddress) {
		*error = SCI_ERR_OUT_OF_RANGE;
		return;
	}
	*error = attach_begin(segment);
	if (*error)
		return;
	*error = attach(segment, SMIO_SEG_ATTACH_PHYS, ioaddress, size);
	attach_end(segment);
}
