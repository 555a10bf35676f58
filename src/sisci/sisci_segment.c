// SPDX-License-Identifier: MIT
/*
 * libsisci: local segments (create, prepare, available, remove) and
 * connections to segments (connect, disconnect), through the daemon's
 * segment service (SEG_* messages, docs/protocol.md).
 *
 * A local segment is host RAM the daemon allocated; a connection programs
 * look-up-table windows in this host's NTB that lead to the owner's RAM (for
 * a segment of this host no window is needed). Mapping either is in
 * sisci_map.c.
 *
 * Locking: the registry lock is held to look handles up and to change the
 * objects' counters, never across a daemon call or a wait. An object being
 * destroyed is taken out of the registry first, and put back if the daemon
 * refuses.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sisci_seg.h"

#define SEG_MAX_SIZE     (1ull << 40)     /* what SEG_CREATE accepts */
#define CONNECT_WAIT_MIN 1                /* ms between connect attempts... */
#define CONNECT_WAIT_MAX 32               /* ...doubling up to this */
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
		      SCI_FLAG_AUTO_ID)

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

	req = (struct smio_seg_id){ .segid = segment->id };
	rc = sisci_call(segment->sd, SMIO_SEG_REMOVE, &req, sizeof(req), NULL, 0, NULL, NULL);
	if (rc) {
		/* -EBUSY: connections exist (also with SCI_FLAG_FORCE_REMOVE). */
		sisci_lock();
		sisci_obj_add(&segment->obj, SISCI_OBJ_LSEG);
		sisci_unlock();
		*error = sisci_seg_errno(rc);
		return;
	}
	sisci_desc_put(segment->sd);
	free(segment);
	*error = SCI_ERR_OK;
}

/* Look an adapter number up: SCI_ERR_OK or why it is no adapter of ours. */
static sci_error_t check_adapter(unsigned int adapter)
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
	if (flags & ~SCI_FLAG_DMA_SOURCE_ONLY) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(segment, SISCI_OBJ_LSEG)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	} else {
		*error = check_adapter(localAdapterNo);
		if (!*error)
			segment->prepared |= 1ull << localAdapterNo;
	}
	sisci_unlock();
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
	*error = check_adapter(adapter);
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

/* ---------- connections ---------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void SCIConnectSegment(sci_desc_t sd, sci_remote_segment_t *segment, unsigned int nodeId,
		       unsigned int segmentId, unsigned int localAdapterNo,
		       sci_cb_remote_segment_t callback, void *callbackArg,
		       unsigned int timeout, unsigned int flags, sci_error_t *error)
{
	struct smio_seg_connect req = { .segid = segmentId, .adapter = localAdapterNo };
	struct smio_seg_conn sc;
	struct sci_remote_segment *r;
	uint64_t deadline = 0;
	unsigned int wait = CONNECT_WAIT_MIN;
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
	if (flags & ~(SCI_FLAG_USE_CALLBACK | SCI_FLAG_ASYNCHRONOUS_CONNECT)) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	/* Its outcome would be reported by a callback, and events are not delivered yet. */
	if (flags & SCI_FLAG_ASYNCHRONOUS_CONNECT) {
		*error = SCI_ERR_FLAG_NOT_IMPLEMENTED;
		return;
	}
	if ((flags & SCI_FLAG_USE_CALLBACK) && !callback) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	*error = check_adapter(localAdapterNo);
	if (*error)
		return;
	if (nodeId == SCI_LOCAL_HOST)
		nodeId = sisci.node_id;
	if (sisci_node_host(nodeId) < 0) {
		*error = SCI_ERR_NO_SUCH_NODEID;
		return;
	}
	if (segmentId == SMIO_SEGID_AUTO) {
		*error = SCI_ERR_NO_SUCH_SEGMENT;  /* no segment can have the "pick one" id */
		return;
	}
	req.node_id = nodeId;
	if (timeout != SCI_INFINITE_TIMEOUT)
		deadline = now_ms() + timeout;

	/*
	 * The segment may not exist or be available yet: try again until the
	 * timeout, with short bounded waits (the daemon does not announce it).
	 */
	for (;;) {
		uint64_t now;
		unsigned int left;

		rc = sisci_call(sd, SMIO_SEG_CONNECT, &req, sizeof(req), &sc, sizeof(sc), &rlen,
				NULL);
		if (!rc && rlen != sizeof(sc))
			rc = -EPROTO;
		if (rc != -ENOENT && rc != -ECONNREFUSED)
			break;
		if (!timeout)
			break;              /* one attempt: say why it failed */
		now = now_ms();
		if (timeout != SCI_INFINITE_TIMEOUT && now >= deadline) {
			*error = SCI_ERR_TIMEOUT;
			return;
		}
		left = timeout == SCI_INFINITE_TIMEOUT ? wait : (unsigned int)(deadline - now);
		poll(NULL, 0, (int)(left < wait ? left : wait));
		if (wait < CONNECT_WAIT_MAX)
			wait *= 2;
	}
	if (rc) {
		/* -EHOSTUNREACH (SCI_ERR_NO_SUCH_NODEID) also means "not over this adapter". */
		*error = sisci_seg_errno(rc);
		return;
	}

	r = calloc(1, sizeof(*r));
	if (!r) {
		struct smio_seg_conn_ref ref = { .conn = sc.conn };

		sisci_call(sd, SMIO_SEG_DISCONNECT, &ref, sizeof(ref), NULL, 0, NULL, NULL);
		*error = SCI_ERR_NOSPC;
		return;
	}
	r->sd = sd;
	r->conn = sc.conn;
	r->host = sc.host;
	r->node_id = nodeId;
	r->segid = segmentId;
	r->adapter = localAdapterNo;
	r->size = sc.size;
	r->ioaddr = sc.win_addr + sc.offset;
	if (flags & SCI_FLAG_USE_CALLBACK) {
		r->cb = callback;
		r->cb_arg = callbackArg;
	}
	sisci_lock();
	sisci_obj_add(&r->obj, SISCI_OBJ_RSEG);
	sisci_desc_get(sd);
	sisci_unlock();
	*segment = r;
	*error = SCI_ERR_OK;
}

void SCIDisconnectSegment(sci_remote_segment_t segment, unsigned int flags, sci_error_t *error)
{
	struct smio_seg_conn_ref req;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(segment, SISCI_OBJ_RSEG)) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (segment->maps) {
		sisci_unlock();
		*error = SCI_ERR_BUSY;
		return;
	}
	sisci_obj_del(&segment->obj);
	sisci_unlock();

	req = (struct smio_seg_conn_ref){ .conn = segment->conn };
	rc = sisci_call(segment->sd, SMIO_SEG_DISCONNECT, &req, sizeof(req), NULL, 0, NULL, NULL);
	/*
	 * -ENOENT cannot happen for a handle of ours; anything else (the daemon
	 * unreachable) leaves the handle as it was, so the program may retry.
	 */
	if (rc && rc != -ENOENT) {
		sisci_lock();
		sisci_obj_add(&segment->obj, SISCI_OBJ_RSEG);
		sisci_unlock();
		*error = sisci_seg_errno(rc);
		return;
	}
	if (segment->dev) {
		sisci_lock();
		segment->dev->segs--;
		sisci_unlock();
	}
	sisci_desc_put(segment->sd);
	free(segment);
	*error = SCI_ERR_OK;
}

size_t SCIGetRemoteSegmentSize(sci_remote_segment_t segment)
{
	size_t size = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_RSEG))
		size = segment->size;
	sisci_unlock();
	return size;
}

unsigned int SCIGetRemoteSegmentId(sci_remote_segment_t segment)
{
	unsigned int id = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_RSEG))
		id = segment->segid;
	sisci_unlock();
	return id;
}

unsigned int SCIGetRemoteSegmentNodeId(sci_remote_segment_t segment)
{
	unsigned int node = 0;

	sisci_lock();
	if (sisci_obj_valid(segment, SISCI_OBJ_RSEG))
		node = segment->node_id;
	sisci_unlock();
	return node;
}

/* ---------- queries ---------- */

void sisci_query_local_segment(sci_query_local_segment_t *q, sci_error_t *error)
{
	sisci_lock();
	if (!sisci_obj_valid(q->segment, SISCI_OBJ_LSEG)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		goto out;
	}
	switch (q->subcommand) {
	case SCI_Q_LOCAL_SEGMENT_PHYS_ADDR:
	case SCI_Q_LOCAL_SEGMENT_IOADDR:
		/*
		 * Importers' LUT windows translate to the bus address itself (the
		 * owner's NTB does not translate), so both are the RAM address.
		 */
		if (q->segment->flags & SCI_FLAG_EMPTY) {
			*error = SCI_ERR_ILLEGAL_OPERATION;   /* no memory behind it */
			goto out;
		}
		q->data.ioaddr = q->segment->phys;
		*error = SCI_ERR_OK;
		break;
	case SCI_Q_LOCAL_SEGMENT_VIRTUAL_KERNEL_ADDR:
		*error = SCI_ERR_NOT_SUPPORTED;           /* no kernel here */
		break;
	default:
		*error = SCI_ERR_ILLEGAL_QUERY;
	}
out:
	sisci_unlock();
}

void sisci_query_remote_segment(sci_query_remote_segment_t *q, sci_error_t *error)
{
	sisci_lock();
	if (!sisci_obj_valid(q->segment, SISCI_OBJ_RSEG)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	} else if (q->subcommand == SCI_Q_REMOTE_SEGMENT_IOADDR) {
		/* Where this host's CPU and devices reach it: the NTB window. */
		q->data.ioaddr = q->segment->ioaddr;
		*error = SCI_ERR_OK;
	} else {
		*error = SCI_ERR_ILLEGAL_QUERY;
	}
	sisci_unlock();
}
