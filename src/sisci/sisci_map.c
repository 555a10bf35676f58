// SPDX-License-Identifier: MIT
/*
 * libsisci: mapping segments into the process, sequences, barriers and
 * SCIMemCpy.
 *
 * The daemon answers SEG_MAP_LOCAL / SEG_MAP_REMOTE with the memory object
 * the segment lives in (for a connection: where the route from this host's
 * CPU through the NTB window ends, i.e. the owner's RAM) and the offset in
 * it; the library mmaps that fd and closes it. Loads and stores then go
 * straight to the memory, with no software in the data path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fabric/route.h"
#include "sisci_seg.h"

#define LOCAL_MAP_FLAGS  (SCI_FLAG_FIXED_MAP_ADDR | SCI_FLAG_READONLY_MAP)
#define REMOTE_MAP_FLAGS (SCI_FLAG_FIXED_MAP_ADDR | SCI_FLAG_READONLY_MAP | \
			  SCI_FLAG_IO_MAP_IOSPACE | SCI_FLAG_LOCK_OPERATION | \
			  SCI_FLAG_WRITE_BACK_CACHE_MAP | SCI_FLAG_NO_MEMORY_LOOPBACK | \
			  SCI_FLAG_BROADCAST)

void sisci_store_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_sfence();          /* also drains write-combining buffers */
#endif
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * mmap size bytes at fd_off of fd for map m (the address the program gets is
 * page offset fd_off % page into the mapping). addr: wanted address, a hint
 * unless SCI_FLAG_FIXED_MAP_ADDR.
 */
static sci_error_t map_fd(struct sci_map *m, int fd, uint64_t fd_off, size_t size, void *addr,
			  unsigned int flags)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = fd_off & ~(page - 1), delta = fd_off - start;
	int prot = PROT_READ | ((flags & SCI_FLAG_READONLY_MAP) ? 0 : PROT_WRITE);
	int mflags = MAP_SHARED;
	void *hint = NULL, *p;

	if (addr && (uintptr_t)addr % page == delta)
		hint = (char *)addr - delta;
	if (flags & SCI_FLAG_FIXED_MAP_ADDR) {
		if (!addr)
			return SCI_ERR_ILLEGAL_ADDRESS;
		if (!hint)
			return SCI_ERR_OFFSET_ALIGNMENT;  /* addr and offset differ within a page */
		mflags |= MAP_FIXED;
	}
	if (start > (uint64_t)INT64_MAX || size > SIZE_MAX - delta)
		return SCI_ERR_OUT_OF_RANGE;
	p = mmap(hint, size + delta, prot, mflags, fd, (off_t)start);
	if (p == MAP_FAILED)
		return errno == ENOMEM ? SCI_ERR_NOSPC :
		       (flags & SCI_FLAG_FIXED_MAP_ADDR) ? SCI_ERR_ILLEGAL_ADDRESS : SCI_ERR_SYSTEM;
	m->base = p;
	m->maplen = size + delta;
	m->addr = (char *)p + delta;
	return SCI_ERR_OK;
}

/* Check a map reply and map what it names; the fd is always closed. */
static sci_error_t map_reply(struct sci_map *m, const struct smio_map_reply *mr, uint32_t rlen,
			     int fd, uint64_t skip, size_t size, void *addr, unsigned int flags)
{
	sci_error_t err;

	if (fd < 0 || rlen != sizeof(*mr) || mr->offset > mr->fd_size ||
	    skip > mr->fd_size - mr->offset || size > mr->fd_size - mr->offset - skip)
		err = SCI_ERR_SYSTEM;
	else
		err = map_fd(m, fd, mr->offset + skip, size, addr, flags);
	if (fd >= 0)
		close(fd);
	m->host = mr->host;
	return err;
}

/*
 * Map [offset, offset + size) of a local (lseg) or remote (rseg) segment:
 * the daemon hands over the memfd behind it (this host's RAM, or the
 * owner's, reached through the NTB window) and the map is an mmap of it.
 */
static void *map_segment(struct sci_local_segment *lseg, struct sci_remote_segment *rseg,
			 sci_map_t *map, size_t offset, size_t size, void *addr,
			 unsigned int flags, unsigned int allowed, sci_error_t *error)
{
	struct smio_map_reply mr;
	struct sci_map *m;
	unsigned int *maps = NULL;
	uint32_t rlen = 0;
	int rc, fd = -1;

	if (!map) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return NULL;
	}
	if (flags & ~allowed) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return NULL;
	}
	if (!size) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		*error = SCI_ERR_NOSPC;
		return NULL;
	}
	sisci_lock();
	if (lseg ? !sisci_obj_valid(lseg, SISCI_OBJ_LSEG) : !sisci_obj_valid(rseg, SISCI_OBJ_RSEG)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	} else {
		uint64_t total = lseg ? lseg->size : rseg->size;

		if (offset > total || size > total - offset) {
			*error = SCI_ERR_OUT_OF_RANGE;
		} else {
			/* No removal or disconnect from here on. */
			maps = lseg ? &lseg->maps : &rseg->maps;
			(*maps)++;
			*error = SCI_ERR_OK;
		}
	}
	sisci_unlock();
	if (*error) {
		free(m);
		return NULL;
	}
	m->sd = lseg ? lseg->sd : rseg->sd;
	m->lseg = lseg;
	m->rseg = rseg;
	m->offset = offset;
	m->size = size;
	m->flags = flags;

	/* SCI_FLAG_BROADCAST says what the segment is; it must be so. */
	if ((flags & SCI_FLAG_BROADCAST) && !(rseg && rseg->mcast))
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	else if (rseg && rseg->mcast)
		/* Nothing to map: a buffer pushed to the group (sisci_mcast.c). */
		*error = sisci_mc_map(m, (flags & SCI_FLAG_FIXED_MAP_ADDR) ? addr : NULL);
	if (rseg && (rseg->mcast || (flags & SCI_FLAG_BROADCAST))) {
		if (!*error) {
			sisci_lock();
			sisci_obj_add(&m->obj, SISCI_OBJ_MAP);
			sisci_desc_get(m->sd);
			sisci_unlock();
			*map = m;
			return (void *)m->addr;
		}
		sisci_lock();
		(*maps)--;
		sisci_unlock();
		free(m);
		return NULL;
	}
	if (lseg) {
		struct smio_seg_id req = { .segid = lseg->id };

		rc = sisci_call(m->sd, SMIO_SEG_MAP_LOCAL, &req, sizeof(req), &mr, sizeof(mr),
				&rlen, &fd);
	} else {
		struct smio_seg_map req = { .conn = rseg->conn, .offset = offset, .size = size };

		rc = sisci_call(m->sd, SMIO_SEG_MAP_REMOTE, &req, sizeof(req), &mr, sizeof(mr),
				&rlen, &fd);
	}
	if (rc) {
		if (fd >= 0)
			close(fd);
		*error = sisci_seg_errno(rc);
	} else {
		/* A local map's fd covers the whole segment; a remote one starts at offset. */
		*error = map_reply(m, &mr, rlen, fd, lseg ? offset : 0, size, addr, flags);
	}
	/* A remote map follows its path: the watcher fails and restores it. */
	if (!*error && rseg)
		*error = sisci_rseg_watch(rseg);
	if (!*error) {
		sisci_lock();
		/*
		 * Registered in the same breath as the state is checked: the
		 * watcher either acted already (refused here) or will see it.
		 */
		if (rseg && rseg->state != SMIO_SEG_CONNECTED) {
			*error = SCI_ERR_NO_LINK_ACCESS;
		} else {
			sisci_obj_add(&m->obj, SISCI_OBJ_MAP);
			sisci_desc_get(m->sd);
		}
		sisci_unlock();
		if (*error)
			munmap(m->base, m->maplen);
	}
	if (*error) {
		sisci_lock();
		(*maps)--;
		sisci_unlock();
		free(m);
		return NULL;
	}
	*map = m;
	return (void *)m->addr;
}

void *SCIMapLocalSegment(sci_local_segment_t segment, sci_map_t *map, size_t offset,
			 size_t size, void *addr, unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	return map_segment(segment, NULL, map, offset, size, addr, flags, LOCAL_MAP_FLAGS,
			   error ? error : &dummy);
}

volatile void *SCIMapRemoteSegment(sci_remote_segment_t segment, sci_map_t *map, size_t offset,
				   size_t size, void *addr, unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	return map_segment(NULL, segment, map, offset, size, addr, flags, REMOTE_MAP_FLAGS,
			   error ? error : &dummy);
}

void SCIUnmapSegment(sci_map_t map, unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(map, SISCI_OBJ_MAP)) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (map->sequences) {
		sisci_unlock();
		*error = SCI_ERR_BUSY;
		return;
	}
	sisci_obj_del(&map->obj);
	if (map->lseg)
		map->lseg->maps--;
	else
		map->rseg->maps--;
	sisci_unlock();

	munmap(map->base, map->maplen);
	sisci_desc_put(map->sd);
	free(map);
	*error = SCI_ERR_OK;
}

volatile void *SCIGetMapPointer(sci_map_t map)
{
	volatile void *p = NULL;

	sisci_lock();
	if (sisci_obj_valid(map, SISCI_OBJ_MAP))
		p = map->addr;
	sisci_unlock();
	return p;
}

void sisci_query_map(sci_query_map_t *q, sci_error_t *error)
{
	sisci_lock();
	if (!sisci_obj_valid(q->map, SISCI_OBJ_MAP)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	} else if (q->subcommand == SCI_Q_MAP_MAPPED_TO_LOCAL_TARGET ||
		   q->subcommand == SCI_Q_MAP_QUERY_REMOTE_MAPPED_TO_LOCAL_TARGET) {
		q->data = q->map->host == sisci.host;
		*error = SCI_ERR_OK;
	} else {
		*error = SCI_ERR_ILLEGAL_QUERY;
	}
	sisci_unlock();
}

/* ---------- sequences and ordering ---------- */

void SCICreateMapSequence(sci_map_t map, sci_sequence_t *sequence, unsigned int flags,
			  sci_error_t *error)
{
	struct sci_sequence *s;
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (!sequence) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags & ~SCI_FLAG_FAST_BARRIER) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(map, SISCI_OBJ_MAP)) {
		sisci_unlock();
		free(s);
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	s->map = map;
	s->flags = flags;
	map->sequences++;
	sisci_obj_add(&s->obj, SISCI_OBJ_SEQ);
	sisci_desc_get(map->sd);
	sisci_unlock();
	*sequence = s;
	*error = SCI_ERR_OK;
}

void SCIRemoveSequence(sci_sequence_t sequence, unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(sequence, SISCI_OBJ_SEQ)) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	sisci_obj_del(&sequence->obj);
	sequence->map->sequences--;
	sisci_desc_put(sequence->map->sd);
	sisci_unlock();
	free(sequence);
	*error = SCI_ERR_OK;
}

/* A sequence on a multicast map: its stores are pushed at flush and barrier. */
static bool sequence_is_mcast(sci_sequence_t sequence)
{
	bool yes;

	if (!sequence)
		return false;
	sisci_lock();
	yes = sisci_obj_valid(sequence, SISCI_OBJ_SEQ) && sequence->map->mcast;
	sisci_unlock();
	return yes;
}

/*
 * Stores through a map are CPU stores into shared memory: once the CPU has
 * made them globally visible they are in the owner's RAM. A store fence
 * (which also drains write-combining buffers) is all a barrier needs.
 */
void SCIStoreBarrier(sci_sequence_t sequence, unsigned int flags)
{
	sisci_store_fence();
	if (sequence_is_mcast(sequence))
		sisci_mc_flush(sequence->map);
}

void SCIFlush(sci_sequence_t sequence, unsigned int flags)
{
	sisci_store_fence();
	if (sequence_is_mcast(sequence))
		sisci_mc_flush(sequence->map);
}

void SCICacheSync(sci_map_t map, void *addr, size_t length, unsigned int flags,
		  sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags & ~(SCI_FLAG_CACHE_FLUSH | SCI_FLAG_CACHE_INVALIDATE)) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (map) {
		uintptr_t a = (uintptr_t)addr, lo, hi;

		sisci_lock();
		if (!sisci_obj_valid(map, SISCI_OBJ_MAP)) {
			sisci_unlock();
			*error = SCI_ERR_ILLEGAL_PARAMETER;
			return;
		}
		lo = (uintptr_t)map->addr;
		hi = lo + map->size;
		sisci_unlock();
		if (a < lo || a > hi || length > hi - a) {
			*error = SCI_ERR_OUT_OF_RANGE;
			return;
		}
	}
	/* The emulated fabric is cache coherent: ordering is all there is to do. */
	sisci_store_fence();
	*error = SCI_ERR_OK;
}

/* Does the path from this host's CPU to [off, off + size) of the map still work? */
static sci_error_t check_route(struct sci_desc *sd, uint64_t ioaddr, uint32_t host, size_t size,
			       bool write)
{
	const uint32_t cap = sizeof(struct smio_route_reply) +
			     SMIO_MAX_HOPS * sizeof(struct smio_hop);
	struct smio_route_req req = { .write = write, .nocache = 1, .addr = ioaddr,
				      .len = size };
	struct smio_route_reply *rr = malloc(cap);
	sci_error_t err = SCI_ERR_TRANSFER_FAILED;
	uint32_t rlen = 0;

	if (!rr)
		return SCI_ERR_NOSPC;
	if (!sisci_call(sd, SMIO_ROUTE, &req, sizeof(req), rr, cap, &rlen, NULL) &&
	    rlen >= sizeof(*rr) && rr->status == FAB_OK && rr->tgt.host == host &&
	    rr->tgt.len >= size)
		err = SCI_ERR_OK;
	free(rr);
	return err;
}

void SCIMemCpy(sci_sequence_t sequence, void *memAddr, sci_map_t remoteMap, size_t remoteOffset,
	       size_t size, unsigned int flags, sci_error_t *error)
{
	bool read = flags & SCI_FLAG_BLOCK_READ;
	struct sci_desc *sd = NULL;
	uint64_t ioaddr = 0, mc_off = 0;
	uint32_t host = 0, mc_conn = 0;
	bool remote = false, mcast = false;
	char *p = NULL;
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags & ~(SCI_FLAG_BLOCK_READ | SCI_FLAG_ERROR_CHECK)) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(remoteMap, SISCI_OBJ_MAP) || (size && !memAddr) ||
	    (sequence && (!sisci_obj_valid(sequence, SISCI_OBJ_SEQ) ||
			  sequence->map != remoteMap))) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	} else if (remoteOffset > remoteMap->size || size > remoteMap->size - remoteOffset) {
		*error = SCI_ERR_OUT_OF_RANGE;
	} else if (!read && (remoteMap->flags & SCI_FLAG_READONLY_MAP)) {
		*error = SCI_ERR_ACCESS;              /* the stores would fault */
	} else {
		p = (char *)remoteMap->addr + remoteOffset;
		sd = remoteMap->sd;
		host = remoteMap->host;
		if (remoteMap->mcast) {
			mcast = true;
			mc_conn = remoteMap->rseg->conn;
			mc_off = remoteMap->offset + remoteOffset;
		}
		if (remoteMap->rseg) {
			remote = true;
			ioaddr = remoteMap->rseg->ioaddr + remoteMap->offset + remoteOffset;
		}
		*error = SCI_ERR_OK;
		/* A multicast group is written, never read (PCIe: UR). */
		if (mcast && read)
			*error = SCI_ERR_ILLEGAL_OPERATION;
	}
	sisci_unlock();
	if (*error)
		return;
	if (mcast) {
		/* The map's buffer follows, and the group gets the bytes now. */
		memcpy(p, memAddr, size);
		*error = size ? sisci_mc_write(sd, mc_conn, mc_off, memAddr, size) : SCI_ERR_OK;
		return;
	}

	if (read) {
		memcpy(memAddr, p, size);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	} else {
		memcpy(p, memAddr, size);
		sisci_store_fence();
	}
	/* The stores went through a working window to the owner's memory? */
	if ((flags & SCI_FLAG_ERROR_CHECK) && remote && size)
		*error = check_route(sd, ioaddr, host, size, !read);
}
