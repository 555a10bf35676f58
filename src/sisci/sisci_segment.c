// SPDX-License-Identifier: MIT
/*
 * libsisci: local segments (create, prepare, available, remove) and
 * connections to segments (connect, disconnect), through the daemon's
 * segment service (SEG_* messages, docs/protocol.md).
 *
 * A local segment is host RAM the daemon allocated (or, for one created
 * empty, memory attached later: the program's own buffer, which becomes a
 * shared mapping of fresh host RAM, or a device BAR); a connection programs
 * look-up-table windows in this host's NTB that lead to the owner's RAM (for
 * a segment of this host no window is needed). Mapping either is in
 * sisci_map.c.
 *
 * A connection made with SCI_FLAG_USE_CALLBACK has a watcher thread: it
 * waits on the connection's eventfd from the daemon (SEG_EVENTS), which
 * counts when the segment goes away (its owner process died, or the owner's
 * host became unreachable), and then calls the callback once with
 * SCI_CB_DISCONNECT. Without a callback, the program finds out when an
 * operation fails with SCI_ERR_NO_LINK_ACCESS; either way SCIDisconnectSegment
 * is what is left to do.
 *
 * Locking: the registry lock is held to look handles up and to change the
 * objects' counters, never across a daemon call or a wait. An object being
 * destroyed is taken out of the registry first, and put back if the daemon
 * refuses.
 *
 * This file: the handle registry and local segments (create, remove,
 * prepare, available). Memory for empty segments is in sisci_seg_mem.c,
 * connections in sisci_connect.c.
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
#include "util/log.h"

#define MAX_ADAPTERS     64               /* bits of prepared/available */

/* ---------- handle registry ---------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sisci_obj reg = { .next = &reg, .prev = &reg };

void sisci_lock(void)
{
	pthread_mutex_lock(&reg_lock);
}

void sisci_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

void sisci_obj_add(struct sisci_obj *o, enum sisci_kind kind)
{
	o->kind = kind;
	o->next = &reg;
	o->prev = reg.prev;
	reg.prev->next = o;
	reg.prev = o;
}

void sisci_obj_del(struct sisci_obj *o)
{
	o->prev->next = o->next;
	o->next->prev = o->prev;
	o->next = o->prev = NULL;
}

struct sisci_obj *sisci_obj_next(struct sisci_obj *o, enum sisci_kind kind)
{
	for (o = o->next; o != &reg; o = o->next)
		if (o->kind == kind)
			return o;
	return NULL;
}

struct sisci_obj *sisci_obj_first(enum sisci_kind kind)
{
	return sisci_obj_next(&reg, kind);
}

bool sisci_obj_valid(const void *p, enum sisci_kind kind)
{
	const struct sisci_obj *o;

	if (!p)
		return false;
	for (o = reg.next; o != &reg; o = o->next)
		if ((const void *)o == p)
			return o->kind == kind;
	return false;
}

void sisci_desc_get(struct sci_desc *sd)
{
	__atomic_add_fetch(&sd->objects, 1, __ATOMIC_RELAXED);
}

void sisci_desc_put(struct sci_desc *sd)
{
	__atomic_sub_fetch(&sd->objects, 1, __ATOMIC_RELAXED);
}

sci_error_t sisci_seg_errno(int rc)
{
	switch (rc) {
	case -ENODEV: return SCI_ERR_NO_SUCH_ADAPTERNO;
	case -ENOSPC: return SCI_ERR_HW_NOSPC;          /* LUT entries, automatic ids */
	case -ENXIO: return SCI_ERR_ILLEGAL_OPERATION;  /* an empty segment */
	case -EHOSTDOWN: return SCI_ERR_NODE_NOT_RESPONDING;
	case -EFAULT:
	case -EIO: return SCI_ERR_TRANSFER_FAILED;      /* the route to the memory fails */
	default: return sisci_errno(rc);
	}
}

/* ---------- local segments ---------- */


#define CREATE_FLAGS (SCI_FLAG_USE_CALLBACK | SCI_FLAG_EMPTY | SCI_FLAG_PRIVATE | \
		      SCI_FLAG_AUTO_ID | SCI_FLAG_BROADCAST)

void SCICreateSegment(sci_desc_t sd, sci_local_segment_t *segment, unsigned int segmentId,
		      size_t size, sci_cb_local_segment_t callback, void *callbackArg,
		      unsigned int flags, sci_error_t *error)
{
	struct smio_seg_create req = { .segid = segmentId, .size = size };
	struct smio_seg_info si;
	struct sci_local_segment *s;
	uint32_t rlen = 0;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	*error = sisci_check_init();
	if (*error)
		return;
	if (!sd || !segment) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags & ~CREATE_FLAGS) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if ((flags & SCI_FLAG_USE_CALLBACK) && !callback) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (!size) {
		*error = SCI_ERR_SIZE_ALIGNMENT;
		return;
	}
	if (size > SEG_MAX_SIZE) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	/* A broadcast segment's id is its multicast group: chosen, and with memory. */
	if ((flags & SCI_FLAG_BROADCAST) && (flags & (SCI_FLAG_AUTO_ID | SCI_FLAG_EMPTY))) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (flags & SCI_FLAG_AUTO_ID)
		req.segid = SMIO_SEGID_AUTO;
	else if (segmentId == SMIO_SEGID_AUTO) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;   /* the daemon's "pick one" */
		return;
	}
	if (flags & SCI_FLAG_EMPTY)
		req.flags = SMIO_SEG_F_EMPTY;

	s = calloc(1, sizeof(*s));
	if (!s) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	rc = sisci_call(sd, SMIO_SEG_CREATE, &req, sizeof(req), &si, sizeof(si), &rlen, NULL);
	if (!rc && rlen != sizeof(si))
		rc = -EPROTO;
	if (rc) {
		free(s);
		*error = sisci_seg_errno(rc);
		return;
	}
	s->sd = sd;
	s->id = si.segid;
	s->flags = flags;
	s->size = size;
	s->alloc = si.size;
	s->phys = si.addr;
	if (flags & SCI_FLAG_USE_CALLBACK) {
		s->cb = callback;
		s->cb_arg = callbackArg;
		/* Before anyone can connect: available comes later. */
		if (sisci_lseg_watch(s))
			smio_warn("SISCI: segment %#x: its callback will not be called", s->id);
	}
	sisci_lock();
	sisci_obj_add(&s->obj, SISCI_OBJ_LSEG);
	sisci_desc_get(sd);
	sisci_unlock();
	*segment = s;
	*error = SCI_ERR_OK;
}

void SCIRemoveSegment(sci_local_segment_t segment, unsigned int flags, sci_error_t *error)
{
	struct smio_seg_id req;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	if (flags & ~SCI_FLAG_FORCE_REMOVE) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(segment, SISCI_OBJ_LSEG)) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (segment->maps) {
		sisci_unlock();
		*error = SCI_ERR_BUSY;
		return;
	}
	sisci_obj_del(&segment->obj);          /* ours alone while the daemon decides */
	sisci_unlock();

	/*
	 * A registered buffer gets private memory back first, with what it holds
	 * now, so that it never aliases host RAM the daemon has freed.
	 */
	if (segment->user) {
		*error = sisci_seg_unregister_buffer(segment);
		if (*error) {
			sisci_lock();
			sisci_obj_add(&segment->obj, SISCI_OBJ_LSEG);
			sisci_unlock();
			return;
		}
	}
	/* Its memory leaves the multicast groups before it can be freed. */
	sisci_mc_leave_all(segment);
	req = (struct smio_seg_id){ .segid = segment->id };
	rc = sisci_call(segment->sd, SMIO_SEG_REMOVE, &req, sizeof(req), NULL, 0, NULL, NULL);
	if (rc) {
		/* -EBUSY: connections exist (also with SCI_FLAG_FORCE_REMOVE). */
		if (segment->user && sisci_seg_alias_buffer(segment, false))
			segment->user = NULL;      /* stays private: no longer registered */
		sisci_lock();
		sisci_obj_add(&segment->obj, SISCI_OBJ_LSEG);
		sisci_unlock();
		*error = sisci_seg_errno(rc);
		return;
	}
	sisci_lseg_unwatch(segment);
	sisci_desc_put(segment->sd);
	free(segment);
	*error = SCI_ERR_OK;
}

/* Look an adapter number up: SCI_ERR_OK or why it is no adapter of ours. */
sci_error_t sisci_check_adapter(unsigned int adapter)
{
	if (adapter >= MAX_ADAPTERS)
		return SCI_ERR_ILLEGAL_ADAPTERNO;
	if (adapter >= sisci_adapters())
		return SCI_ERR_NO_SUCH_ADAPTERNO;
	return SCI_ERR_OK;
}

void SCIPrepareSegment(sci_local_segment_t segment, unsigned int localAdapterNo,
		       unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags & ~(SCI_FLAG_DMA_SOURCE_ONLY | SCI_FLAG_BROADCAST)) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	bool join = false;

	sisci_lock();
	if (!sisci_obj_valid(segment, SISCI_OBJ_LSEG)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	} else {
		*error = sisci_check_adapter(localAdapterNo);
		join = !*error && ((segment->flags | flags) & SCI_FLAG_BROADCAST);
		if (!*error && !join)
			segment->prepared |= 1ull << localAdapterNo;
	}
	sisci_unlock();
	if (!join)
		return;
	/* A broadcast segment subscribes to its group on the adapter (a daemon call). */
	*error = sisci_mc_join(segment, localAdapterNo);
	if (!*error) {
		sisci_lock();
		segment->prepared |= 1ull << localAdapterNo;
		sisci_unlock();
	}
}

/* Tell the daemon when the first adapter is made available / the last one not. */
static void set_available(struct sci_local_segment *s, unsigned int adapter, bool on,
			  sci_error_t *error)
{
	struct smio_seg_avail req = { .available = on };
	struct sci_desc *sd;
	uint64_t before, after;
	int rc;

	sisci_lock();
	if (!sisci_obj_valid(s, SISCI_OBJ_LSEG)) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	*error = sisci_check_adapter(adapter);
	if (!*error && on && !(s->prepared & (1ull << adapter)))
		*error = SCI_ERR_SEGMENT_NOT_PREPARED;
	if (!*error && on && (s->flags & SCI_FLAG_PRIVATE))
		*error = SCI_ERR_ILLEGAL_OPERATION;
	if (*error) {
		sisci_unlock();
		return;
	}
	before = s->available;
	after = on ? before | (1ull << adapter) : before & ~(1ull << adapter);
	s->available = after;
	sd = s->sd;
	req.segid = s->id;
	/* Pin the segment (as a map would) so it cannot be removed meanwhile. */
	s->maps++;
	sisci_unlock();

	rc = 0;
	if (!before != !after)
		rc = sisci_call(sd, SMIO_SEG_AVAILABLE, &req, sizeof(req), NULL, 0, NULL, NULL);
	sisci_lock();
	s->maps--;
	if (rc)
		s->available = before;
	sisci_unlock();
	*error = sisci_seg_errno(rc);
}

void SCISetSegmentAvailable(sci_local_segment_t segment, unsigned int localAdapterNo,
			    unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	set_available(segment, localAdapterNo, true, error);
}

void SCISetSegmentUnavailable(sci_local_segment_t segment, unsigned int localAdapterNo,
			      unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags & ~(SCI_FLAG_FORCE_DISCONNECT | SCI_FLAG_NOTIFY)) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	/* A daemon cannot revoke connections (nor tell their owners) yet. */
	if (flags & SCI_FLAG_FORCE_DISCONNECT) {
		*error = SCI_ERR_FLAG_NOT_IMPLEMENTED;
		return;
	}
	set_available(segment, localAdapterNo, false, error);
}

unsigned int SCIGetLocalSegmentId(sci_local_segment_t segment)
{
	unsigned int id = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_LSEG))
		id = segment->id;
	sisci_unlock();
	return id;
}

size_t SCIGetLocalSegmentSize(sci_local_segment_t segment)
{
	size_t size = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_LSEG))
		size = segment->size;
	sisci_unlock();
	return size;
}
