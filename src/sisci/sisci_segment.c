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

static sci_error_t alias_buffer(struct sci_local_segment *s, bool copy);
static sci_error_t unregister_buffer(struct sci_local_segment *s);

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

	/*
	 * A registered buffer gets private memory back first, with what it holds
	 * now, so that it never aliases host RAM the daemon has freed.
	 */
	if (segment->user) {
		*error = unregister_buffer(segment);
		if (*error) {
			sisci_lock();
			sisci_obj_add(&segment->obj, SISCI_OBJ_LSEG);
			sisci_unlock();
			return;
		}
	}
	req = (struct smio_seg_id){ .segid = segment->id };
	rc = sisci_call(segment->sd, SMIO_SEG_REMOVE, &req, sizeof(req), NULL, 0, NULL, NULL);
	if (rc) {
		/* -EBUSY: connections exist (also with SCI_FLAG_FORCE_REMOVE). */
		if (segment->user && alias_buffer(segment, false))
			segment->user = NULL;      /* stays private: no longer registered */
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
static sci_error_t alias_buffer(struct sci_local_segment *s, bool copy)
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
static sci_error_t unregister_buffer(struct sci_local_segment *s)
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
		*error = alias_buffer(segment, true);
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

/*
 * The watcher of a connection with a callback. The callback may disconnect
 * the segment (which frees r): nothing of r is touched after it returns.
 */
static __thread const struct sci_remote_segment *watcher_of;   /* in a watcher: its r */

static void *rseg_watch(void *arg)
{
	struct sci_remote_segment *r = arg;
	struct pollfd p[2] = { { .fd = r->efd, .events = POLLIN },
			       { .fd = r->cancel_fd, .events = POLLIN } };
	struct smio_seg_conn_ref q = { .conn = r->conn };
	struct smio_seg_state st;
	uint64_t count;
	uint32_t rlen = 0;
	int rc;

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[1].revents)
			return NULL;        /* SCIDisconnectSegment */
		if (!(p[0].revents & POLLIN))
			return NULL;        /* not an eventfd any more: nothing will come */
		if (read(r->efd, &count, sizeof(count)) != sizeof(count))
			continue;
		/* The daemon's word on it (a daemon that cannot answer: gone too). */
		rc = sisci_call(r->sd, SMIO_SEG_STATE, &q, sizeof(q), &st, sizeof(st), &rlen, NULL);
		if (!rc && rlen == sizeof(st) && st.state == SMIO_SEG_CONNECTED)
			continue;
		break;
	}
	watcher_of = r;
	r->cb(r->cb_arg, r, SCI_CB_DISCONNECT, SCI_ERR_OK);
	return NULL;
}

/* Start r's watcher: SCI_ERR_OK, or an error with nothing left behind. */
static sci_error_t rseg_watch_start(struct sci_remote_segment *r)
{
	struct smio_seg_conn_ref q = { .conn = r->conn };
	int rc;

	r->efd = -1;
	r->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->cancel_fd < 0)
		return SCI_ERR_NOSPC;
	rc = sisci_call(r->sd, SMIO_SEG_EVENTS, &q, sizeof(q), NULL, 0, NULL, &r->efd);
	if (!rc && r->efd < 0)
		rc = -EPROTO;
	if (!rc && pthread_create(&r->watcher, NULL, rseg_watch, r))
		rc = -ENOMEM;
	if (rc) {
		if (r->efd >= 0)
			close(r->efd);
		close(r->cancel_fd);
		r->efd = r->cancel_fd = -1;
		return rc == -ENOMEM ? SCI_ERR_NOSPC : sisci_seg_errno(rc);
	}
	r->watching = true;
	return SCI_ERR_OK;
}

/* Stop r's watcher (unless it is the caller: then it ends by itself). */
static void rseg_watch_stop(struct sci_remote_segment *r)
{
	uint64_t one = 1;

	if (!r->watching)
		return;
	if (watcher_of == r) {
		watcher_of = NULL;
		pthread_detach(r->watcher);
	} else {
		if (write(r->cancel_fd, &one, sizeof(one)) != sizeof(one))
			abort();        /* an eventfd of ours with a count of 0 or 1 */
		pthread_join(r->watcher, NULL);
	}
	close(r->efd);
	close(r->cancel_fd);
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
	/* Its outcome would be reported by a callback: not implemented. */
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
	sisci_lock();
	sisci_obj_add(&r->obj, SISCI_OBJ_RSEG);
	sisci_desc_get(sd);
	sisci_unlock();
	/* Registered first: the callback may run at once and use the handle. */
	if (flags & SCI_FLAG_USE_CALLBACK) {
		struct smio_seg_conn_ref ref = { .conn = sc.conn };

		r->cb = callback;
		r->cb_arg = callbackArg;
		*error = rseg_watch_start(r);
		if (*error) {
			sisci_lock();
			sisci_obj_del(&r->obj);
			sisci_desc_put(sd);
			sisci_unlock();
			sisci_call(sd, SMIO_SEG_DISCONNECT, &ref, sizeof(ref), NULL, 0, NULL, NULL);
			free(r);
			return;
		}
	}
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
	rseg_watch_stop(segment);
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
