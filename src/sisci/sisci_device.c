// SPDX-License-Identifier: MIT
/*
 * libsisci: the SmartIO device extension, through the daemon's device
 * service (DEV_* messages, docs/protocol.md): the device pool (fabric device
 * IDs, lists with filters, queries), borrowing and returning devices, device
 * BARs as remote segments, device segments (placed by access hints), and
 * device-side mappings of segments (the address the device must use for its
 * DMA).
 *
 * Locking as in sisci_segment.c: the registry lock guards the handles and
 * their counters, never held across a daemon call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sisci_seg.h"
#include "util/log.h"

#define FDID_NODE(f)   ((unsigned int)(f) >> 16)

sci_error_t sisci_dev_errno(int rc);

sci_error_t sisci_dev_errno(int rc)
{
	switch (rc) {
	case -ENODEV: return SCI_ERR_NO_SUCH_FDID;
	case -EBUSY: return SCI_ERR_BUSY;
	default: return sisci_seg_errno(rc);
	}
}

static void to_info(const struct smio_dev_info *d, sci_smartio_device_info_t *o)
{
	memset(o, 0, sizeof(*o));
	o->fdid = d->fdid;
	o->pci_vendor_id = d->vendor;
	o->pci_device_id = d->device;
	o->pci_class = d->class;
	o->pci_subsystem_vendor_id = d->ss_vendor;
	o->pci_subsystem_device_id = d->ss_device;
	o->remote_bdf = d->bdf;
	o->nodeid = d->node_id;
	o->physical_slot = -1;
	memcpy(o->user_name, d->name, sizeof(d->name));
	o->user_name[sizeof(o->user_name) - 1] = '\0';
}

/* Zero fields of the filter match anything. */
static bool matches(const sci_smartio_device_info_t *i, const sci_smartio_device_info_t *f)
{
	if (!f)
		return true;
	return (!f->fdid || f->fdid == i->fdid) &&
	       (!f->pci_vendor_id || f->pci_vendor_id == i->pci_vendor_id) &&
	       (!f->pci_device_id || f->pci_device_id == i->pci_device_id) &&
	       (!f->pci_class || f->pci_class == i->pci_class) &&
	       (!f->pci_subsystem_vendor_id ||
		f->pci_subsystem_vendor_id == i->pci_subsystem_vendor_id) &&
	       (!f->pci_subsystem_device_id ||
		f->pci_subsystem_device_id == i->pci_subsystem_device_id) &&
	       (!f->pci_serial_number || f->pci_serial_number == i->pci_serial_number) &&
	       (!f->remote_bdf || f->remote_bdf == i->remote_bdf) &&
	       (!f->nodeid || f->nodeid == i->nodeid) &&
	       (!f->user_name[0] || !strncmp(f->user_name, i->user_name, sizeof(f->user_name)));
}

/* The pool as the daemon sees it; *out is malloc()ed. */
static int dev_list(struct sci_desc *sd, struct smio_dev_list **out)
{
	struct smio_dev_list *l = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen = 0;
	int rc;

	if (!l)
		return -ENOMEM;
	rc = sisci_call(sd, SMIO_DEV_LIST, NULL, 0, l, SMIO_MAX_PAYLOAD, &rlen, NULL);
	if (rc) {
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

unsigned int SCIGetDeviceList(sci_desc_t sd, unsigned int *fdids, unsigned int length,
			      const sci_smartio_device_info_t *filter, unsigned int flags,
			      sci_error_t *error)
{
	struct smio_dev_list *l;
	unsigned int n = 0;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	*error = sisci_check_init();
	if (*error)
		return 0;
	if (!sd || (length && !fdids)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return 0;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return 0;
	}
	rc = dev_list(sd, &l);
	if (rc) {
		*error = sisci_dev_errno(rc);
		return 0;
	}
	for (uint32_t i = 0; i < l->n && n < length; i++) {
		sci_smartio_device_info_t info;

		to_info(&l->d[i], &info);
		if (matches(&info, filter))
			fdids[n++] = l->d[i].fdid;
	}
	free(l);
	*error = SCI_ERR_OK;
	return n;
}

void sisci_query_device(sci_smartio_query_device_t *q, sci_error_t *error)
{
	struct sci_desc tmp = { .fd = -1 };
	struct smio_dev_list *l;
	int rc, fd;

	if (q->subcommand != SCI_Q_DEVICE_INFO || !q->data) {
		*error = q->subcommand != SCI_Q_DEVICE_INFO ? SCI_ERR_ILLEGAL_QUERY :
			 SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	/* A query has no descriptor: a short-lived connection of its own. */
	fd = smio_connect(sisci.dir, sisci.host, SISCI_TIMEOUT_MS);
	if (fd < 0) {
		*error = SCI_ERR_NOT_INITIALIZED;
		return;
	}
	{
		struct smio_hello h = { .role = SMIO_ROLE_CLIENT, .host = sisci.host,
					.pid = (uint32_t)getpid(), .version = SMIO_VERSION };
		struct smio_hello_reply hr;
		uint32_t rlen;

		rc = smio_call(fd, SMIO_HELLO, &h, sizeof(h), &hr, sizeof(hr), &rlen, NULL,
			       SISCI_TIMEOUT_MS);
	}
	if (rc) {
		close(fd);
		*error = sisci_errno(rc);
		return;
	}
	tmp.fd = fd;
	pthread_mutex_init(&tmp.lock, NULL);
	rc = dev_list(&tmp, &l);
	pthread_mutex_destroy(&tmp.lock);
	close(fd);
	if (rc) {
		*error = sisci_dev_errno(rc);
		return;
	}
	*error = SCI_ERR_NO_SUCH_FDID;
	for (uint32_t i = 0; i < l->n; i++)
		if (l->d[i].fdid == q->fdid) {
			to_info(&l->d[i], q->data);
			*error = SCI_ERR_OK;
			break;
		}
	free(l);
}

void SCIBorrowDevice(sci_desc_t sd, sci_smartio_device_t *device, unsigned int fdid,
		     unsigned int flags, sci_error_t *error)
{
	struct smio_dev_borrow req = { .fdid = fdid };
	struct smio_dev_borrowed rep;
	struct sci_smartio_device *dv;
	uint32_t rlen = 0;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	*error = sisci_check_init();
	if (*error)
		return;
	if (!sd || !device) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags & ~SCI_FLAG_EXCLUSIVE) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (sisci_node_host(FDID_NODE(fdid)) < 0) {
		*error = SCI_ERR_NO_SUCH_FDID;
		return;
	}
	req.flags = flags & SCI_FLAG_EXCLUSIVE ? SMIO_DEV_F_EXCLUSIVE : 0;
	dv = calloc(1, sizeof(*dv));
	if (!dv) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	rc = sisci_call(sd, SMIO_DEV_BORROW, &req, sizeof(req), &rep, sizeof(rep), &rlen, NULL);
	if (!rc && (rlen != sizeof(rep) || rep.info.fdid != fdid))
		rc = -EPROTO;
	if (rc) {
		free(dv);
		/* The lender refuses a borrow only when another holder's exclusive borrow
		 * (or Device Lending) conflicts: Dolphin's SmartIO answers that with
		 * SCI_ERR_NOT_AVAILABLE, and programs test for it (docs/sisci.md). */
		*error = rc == -EBUSY ? SCI_ERR_NOT_AVAILABLE : sisci_dev_errno(rc);
		return;
	}
	dv->sd = sd;
	dv->handle = rep.handle;
	dv->fdid = fdid;
	to_info(&rep.info, &dv->info);
	sisci_lock();
	sisci_obj_add(&dv->obj, SISCI_OBJ_DEV);
	sisci_desc_get(sd);
	sisci_unlock();
	*device = dv;
	*error = SCI_ERR_OK;
}

void SCIReturnDevice(sci_smartio_device_t device, unsigned int flags, sci_error_t *error)
{
	struct smio_dev_ref req;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(device, SISCI_OBJ_DEV)) {
		sisci_unlock();
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (device->segs || device->nmaps) {
		sisci_unlock();
		*error = SCI_ERR_BUSY;
		return;
	}
	sisci_obj_del(&device->obj);
	sisci_unlock();
	req = (struct smio_dev_ref){ .handle = device->handle };
	rc = sisci_call(device->sd, SMIO_DEV_RETURN, &req, sizeof(req), NULL, 0, NULL, NULL);
	if (rc && rc != -ENOENT) {
		sisci_lock();
		sisci_obj_add(&device->obj, SISCI_OBJ_DEV);
		sisci_unlock();
		*error = sisci_dev_errno(rc);
		return;
	}
	sisci_desc_put(device->sd);
	free(device->maps);
	free(device);
	*error = SCI_ERR_OK;
}

/* Look a device up and keep it from being returned (maps++) for a call. */
static sci_error_t dev_hold(struct sci_smartio_device *dv)
{
	sci_error_t e = SCI_ERR_OK;

	sisci_lock();
	if (!sisci_obj_valid(dv, SISCI_OBJ_DEV))
		e = SCI_ERR_ILLEGAL_PARAMETER;
	else
		dv->segs++;
	sisci_unlock();
	return e;
}

static void dev_unhold(struct sci_smartio_device *dv)
{
	sisci_lock();
	dv->segs--;
	sisci_unlock();
}

void SCIReleaseExclusiveBorrow(sci_smartio_device_t device, unsigned int flags,
			       sci_error_t *error)
{
	struct smio_dev_ref req;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	*error = dev_hold(device);
	if (*error)
		return;
	req = (struct smio_dev_ref){ .handle = device->handle };
	rc = sisci_call(device->sd, SMIO_DEV_RELEASE_EXCL, &req, sizeof(req), NULL, 0, NULL,
			NULL);
	dev_unhold(device);
	*error = sisci_dev_errno(rc);
}

unsigned int SCIGetFabricDeviceId(sci_smartio_device_t device)
{
	unsigned int fdid = 0;

	sisci_lock();
	if (sisci_obj_valid(device, SISCI_OBJ_DEV))
		fdid = device->fdid;
	sisci_unlock();
	return fdid;
}

void SCIConnectDeviceSegment(sci_smartio_device_t device, sci_remote_segment_t *segment,
			     unsigned int segmentId, unsigned int memtype,
			     sci_cb_remote_segment_t callback, void *callbackArg,
			     unsigned int flags, sci_error_t *error)
{
	SCIConnectDeviceSegmentPath(device, segment, segmentId, memtype, 0, callback,
				    callbackArg, flags, error);
}

void SCIConnectDeviceSegmentPath(sci_smartio_device_t device, sci_remote_segment_t *segment,
				 unsigned int segmentId, unsigned int memtype,
				 unsigned int localAdapterNo, sci_cb_remote_segment_t callback,
				 void *callbackArg, unsigned int flags, sci_error_t *error)
{
	struct smio_dev_seg_connect req = { .segid = segmentId, .adapter = localAdapterNo };
	struct smio_seg_conn sc;
	struct sci_remote_segment *r;
	uint32_t rlen = 0;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	if (!segment) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags & ~SCI_FLAG_USE_CALLBACK) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (localAdapterNo >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return;
	}
	if (memtype == SCI_MEMTYPE_PRIVATE || memtype == SCI_MEMTYPE_SHARED) {
		req.memtype = memtype == SCI_MEMTYPE_PRIVATE ? SMIO_DEV_MEMTYPE_PRIVATE :
			      SMIO_DEV_MEMTYPE_SHARED;
	} else if (memtype != SCI_MEMTYPE_BAR || segmentId >= SMIO_DEV_BARS) {
		*error = memtype != SCI_MEMTYPE_BAR ? SCI_ERR_ILLEGAL_PARAMETER :
			 SCI_ERR_NO_SUCH_SEGMENT;
		return;
	} else {
		req.memtype = SMIO_DEV_MEMTYPE_BAR;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		*error = SCI_ERR_NOSPC;
		return;
	}
	*error = dev_hold(device);          /* counts as the segment from here on */
	if (*error) {
		free(r);
		return;
	}
	req.handle = device->handle;
	rc = sisci_call(device->sd, SMIO_DEV_SEG_CONNECT, &req, sizeof(req), &sc, sizeof(sc),
			&rlen, NULL);
	if (!rc && rlen != sizeof(sc))
		rc = -EPROTO;
	if (rc) {
		dev_unhold(device);
		free(r);
		*error = sisci_dev_errno(rc);
		return;
	}
	sisci_rseg_init(r);
	r->sd = device->sd;
	r->conn = sc.conn;
	r->host = sc.host;
	/* A BAR is at the lender; a device segment where it was placed. */
	r->node_id = req.memtype == SMIO_DEV_MEMTYPE_BAR ? FDID_NODE(device->fdid) :
		     sisci_host_node(sc.host);
	r->segid = segmentId;
	r->adapter = localAdapterNo;
	r->size = sc.size;
	r->ioaddr = sc.win_addr + sc.offset;
	r->dev = device;
	if (flags & SCI_FLAG_USE_CALLBACK) {
		r->cb = callback;
		r->cb_arg = callbackArg;
	}
	sisci_lock();
	sisci_obj_add(&r->obj, SISCI_OBJ_RSEG);
	sisci_desc_get(r->sd);
	sisci_unlock();
	*segment = r;
	*error = SCI_ERR_OK;
	/* A callback hears of the path from now on (else the first map starts it). */
	if (r->cb && sisci_rseg_watch(r))
		smio_warn("SISCI: device segment %u: its callback will not be called", segmentId);
}

#define HINTS_ALL (SCI_MEMACCESS_DEVICE_READ | SCI_MEMACCESS_DEVICE_WRITE | \
		   SCI_MEMACCESS_HOST_READ | SCI_MEMACCESS_HOST_WRITE | \
		   SCI_MEMACCESS_MULTIHOST_READ | SCI_MEMACCESS_MULTIHOST_WRITE | \
		   SCI_MEMACCESS_P2P_READ | SCI_MEMACCESS_P2P_WRITE)

/*
 * Placement by access hints (docs/sisci.md, "Device segments"). Reads across
 * the fabric are non-posted round trips while writes are posted, so the
 * memory goes next to its reader: HOST_READ and DEVICE_WRITE count for the
 * borrower's RAM (near the CPU), HOST_WRITE and DEVICE_READ for the lender's
 * RAM (near the device); the larger count wins, a tie (also no hints) is the
 * borrower's RAM. MULTIHOST_* and P2P_* always mean the lender's RAM: one
 * hop from every borrower and from the device's peers. Except: a SHARED
 * segment whose hints name no device access (no DEVICE_* bit; P2P_* include
 * them) is only the hosts' memory, and goes where its creator is, the
 * borrower's RAM, as in Dolphin's SISCI (SCIGetRemoteSegmentNodeId names the
 * creator's node). Near the device (HOST_WRITE/DEVICE_READ winning) means
 * the device's own memory when it has a memory BAR with room (an
 * accelerator's BAR2; not an NVMe's CMB, its driver's), else the lender's
 * RAM: the lender chooses and says which.
 */
static uint32_t placement(unsigned int hints, unsigned int memtype)
{
	unsigned int cpu = !!(hints & SCI_MEMACCESS_HOST_READ) +
			   !!(hints & SCI_MEMACCESS_DEVICE_WRITE);
	unsigned int dev = !!(hints & SCI_MEMACCESS_HOST_WRITE) +
			   !!(hints & SCI_MEMACCESS_DEVICE_READ);

	if (memtype == SCI_MEMTYPE_SHARED &&
	    !(hints & (SCI_MEMACCESS_DEVICE_READ | SCI_MEMACCESS_DEVICE_WRITE)))
		return SMIO_DEV_PLACE_BORROWER;
	if (hints & (0x10u | 0x20u))   /* the MULTIHOST and P2P bits */
		return SMIO_DEV_PLACE_LENDER;
	/* Near the device: its own memory where it has a memory BAR (the lender decides). */
	return dev > cpu ? SMIO_DEV_PLACE_DEVICE : SMIO_DEV_PLACE_BORROWER;
}

void SCICreateDeviceSegment(sci_smartio_device_t device, unsigned int segmentId, size_t size,
			    unsigned int memtype, unsigned int accessHints, unsigned int flags,
			    sci_error_t *error)
{
	struct smio_dev_seg_create req = { .segid = segmentId, .size = size };
	struct smio_dev_seg rep;
	uint32_t rlen = 0;
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if ((memtype != SCI_MEMTYPE_PRIVATE && memtype != SCI_MEMTYPE_SHARED) || !size ||
	    (uint64_t)size > (1ull << 40) || (accessHints & ~HINTS_ALL)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	req.memtype = memtype == SCI_MEMTYPE_PRIVATE ? SMIO_DEV_MEMTYPE_PRIVATE :
		      SMIO_DEV_MEMTYPE_SHARED;
	req.place = placement(accessHints, memtype);
	*error = dev_hold(device);          /* not returned meanwhile */
	if (*error)
		return;
	req.handle = device->handle;
	rc = sisci_call(device->sd, SMIO_DEV_SEG_CREATE, &req, sizeof(req), &rep, sizeof(rep),
			&rlen, NULL);
	if (!rc && rlen != sizeof(rep))
		rc = -EPROTO;
	dev_unhold(device);
	*error = rc == -ENOMEM || rc == -ENOSPC ? SCI_ERR_NOSPC : sisci_dev_errno(rc);
}

/* Record a device-side mapping of seg (lock held); false when out of memory. */
static bool devmap_add(struct sci_smartio_device *dv, const void *seg, uint32_t map)
{
	if (dv->nmaps == dv->capmaps) {
		unsigned int cap = dv->capmaps ? 2 * dv->capmaps : 4;
		struct sisci_devmap *v = realloc(dv->maps, cap * sizeof(*v));

		if (!v)
			return false;
		dv->maps = v;
		dv->capmaps = cap;
	}
	dv->maps[dv->nmaps++] = (struct sisci_devmap){ .seg = seg, .map = map };
	return true;
}

/* Common part of the two map calls: req is DEV_MAP_LOCAL or DEV_MAP_REMOTE. */
static void map_for_device(struct sci_smartio_device *dv, const void *seg, uint16_t type,
			   void *req, uint32_t len, sci_ioaddr_t *addr, sci_error_t *error)
{
	struct smio_dev_mapping mp;
	struct smio_dev_unmap um;
	uint32_t rlen = 0;
	bool ok;
	int rc;

	rc = sisci_call(dv->sd, type, req, len, &mp, sizeof(mp), &rlen, NULL);
	if (!rc && rlen != sizeof(mp))
		rc = -EPROTO;
	if (rc) {
		*error = sisci_dev_errno(rc);
		return;
	}
	sisci_lock();
	ok = sisci_obj_valid(dv, SISCI_OBJ_DEV) && devmap_add(dv, seg, mp.map);
	sisci_unlock();
	if (!ok) {
		um = (struct smio_dev_unmap){ .handle = dv->handle, .map = mp.map };
		sisci_call(dv->sd, SMIO_DEV_UNMAP, &um, sizeof(um), NULL, 0, NULL, NULL);
		*error = SCI_ERR_NOSPC;
		return;
	}
	*addr = mp.ioaddr;
	*error = SCI_ERR_OK;
}

void SCIMapLocalSegmentForDevice(sci_local_segment_t segment, unsigned int localAdapterNo,
				 sci_smartio_device_t device, sci_ioaddr_t *remoteAddr,
				 size_t offset, size_t size, unsigned int flags,
				 sci_error_t *error)
{
	struct smio_dev_map_local req = { .offset = offset, .size = size,
					  .adapter = localAdapterNo };
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (!remoteAddr || !size) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (localAdapterNo >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return;
	}
	sisci_lock();
	/* The segment may come from any descriptor of the process: Dolphin's
	 * descriptors are channels of one process, and the daemon checks the same. */
	if (!sisci_obj_valid(segment, SISCI_OBJ_LSEG) || !sisci_obj_valid(device, SISCI_OBJ_DEV))
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	else if (offset > segment->alloc || size > segment->alloc - offset)
		*error = SCI_ERR_OUT_OF_RANGE;
	else
		*error = SCI_ERR_OK;
	if (!*error) {
		req.handle = device->handle;
		req.segid = segment->id;
		segment->maps++;            /* not removed while the device may use it */
	}
	sisci_unlock();
	if (*error)
		return;
	map_for_device(device, segment, SMIO_DEV_MAP_LOCAL, &req, sizeof(req), remoteAddr,
		       error);
	if (*error) {
		sisci_lock();
		segment->maps--;
		sisci_unlock();
	}
}

void SCIMapRemoteSegmentForDevice(sci_remote_segment_t segment, sci_smartio_device_t device,
				  sci_ioaddr_t *remoteAddr, size_t offset, size_t size,
				  unsigned int flags, sci_error_t *error)
{
	struct smio_dev_map_remote req = { .offset = offset, .size = size };
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (!remoteAddr || !size) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;
		return;
	}
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	sisci_lock();
	if (!sisci_obj_valid(segment, SISCI_OBJ_RSEG) || !sisci_obj_valid(device, SISCI_OBJ_DEV))
		*error = SCI_ERR_ILLEGAL_PARAMETER;
	else if (offset > segment->size || size > segment->size - offset)
		*error = SCI_ERR_OUT_OF_RANGE;
	else
		*error = SCI_ERR_OK;
	if (!*error) {
		req.handle = device->handle;
		req.conn = segment->conn;
		segment->maps++;            /* no disconnect while the device may use it */
	}
	sisci_unlock();
	if (*error)
		return;
	map_for_device(device, segment, SMIO_DEV_MAP_REMOTE, &req, sizeof(req), remoteAddr,
		       error);
	if (*error) {
		sisci_lock();
		segment->maps--;
		sisci_unlock();
	}
}

/* Undo every device-side mapping of seg for device; kind: its registry kind. */
static void unmap_for_device(void *seg, enum sisci_kind kind,
			     struct sci_smartio_device *dv, sci_error_t *error)
{
	uint32_t map = 0;
	int rc;

	for (;;) {
		struct smio_dev_unmap um;

		sisci_lock();
		if (!sisci_obj_valid(seg, kind) || !sisci_obj_valid(dv, SISCI_OBJ_DEV)) {
			sisci_unlock();
			*error = SCI_ERR_ILLEGAL_PARAMETER;
			return;
		}
		map = 0;
		for (unsigned int i = 0; i < dv->nmaps; i++)
			if (dv->maps[i].seg == seg) {
				map = dv->maps[i].map;
				dv->maps[i] = dv->maps[--dv->nmaps];
				break;
			}
		sisci_unlock();
		if (!map)
			break;
		um = (struct smio_dev_unmap){ .handle = dv->handle, .map = map };
		rc = sisci_call(dv->sd, SMIO_DEV_UNMAP, &um, sizeof(um), NULL, 0, NULL, NULL);
		sisci_lock();
		if (rc && rc != -ENOENT) {
			devmap_add(dv, seg, map);   /* room: it was just taken out */
			sisci_unlock();
			*error = sisci_dev_errno(rc);
			return;
		}
		/* Still registered: the segment cannot go while it is mapped. */
		if (kind == SISCI_OBJ_LSEG)
			((struct sci_local_segment *)seg)->maps--;
		else
			((struct sci_remote_segment *)seg)->maps--;
		sisci_unlock();
		*error = SCI_ERR_OK;
	}
	if (*error == SCI_ERR_ILLEGAL_PARAMETER)
		return;
	if (*error != SCI_ERR_OK)
		*error = SCI_ERR_NO_SUCH_SEGMENT;   /* nothing was mapped */
}

void SCIUnmapLocalSegmentForDevice(sci_local_segment_t segment, unsigned int localAdapterNo,
				   sci_smartio_device_t device, unsigned int flags,
				   sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (localAdapterNo >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return;
	}
	*error = SCI_ERR_NO_SUCH_SEGMENT;
	unmap_for_device(segment, SISCI_OBJ_LSEG, device, error);
}

void SCIUnmapRemoteSegmentForDevice(sci_remote_segment_t segment, sci_smartio_device_t device,
				    unsigned int flags, sci_error_t *error)
{
	sci_error_t dummy;

	if (!error)
		error = &dummy;
	if (flags) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	*error = SCI_ERR_NO_SUCH_SEGMENT;
	unmap_for_device(segment, SISCI_OBJ_RSEG, device, error);
}

static void rid(sci_desc_t sd, unsigned int adapter, unsigned int bus, unsigned int devfn,
		unsigned int flags, bool add, sci_error_t *error)
{
	struct smio_dev_rid req = { .adapter = adapter, .add = add };
	sci_error_t dummy;
	int rc;

	if (!error)
		error = &dummy;
	*error = sisci_check_init();
	if (*error)
		return;
	if (!sd || bus > 0xff || devfn > 0xff || (!bus && !devfn)) {
		*error = SCI_ERR_ILLEGAL_PARAMETER;   /* 00:00.0 is the CPU's own */
		return;
	}
	if (flags & ~SCI_FLAG_PCIE_REQUESTER_GLOBAL) {
		*error = SCI_ERR_ILLEGAL_FLAG;
		return;
	}
	if (adapter >= sisci_adapters()) {
		*error = SCI_ERR_NO_SUCH_ADAPTERNO;
		return;
	}
	req.rid = (uint16_t)(bus << 8 | devfn);
	rc = sisci_call(sd, SMIO_DEV_RID, &req, sizeof(req), NULL, 0, NULL, NULL);
	*error = rc == -ENOSPC ? SCI_ERR_NOSPC : rc == -EEXIST ? SCI_ERR_BUSY :
		 sisci_dev_errno(rc);
}

void SCIRegisterPCIeRequester(sci_desc_t sd, unsigned int localAdapterNo, unsigned int bus,
			      unsigned int devfn, unsigned int flags, sci_error_t *error)
{
	rid(sd, localAdapterNo, bus, devfn, flags, true, error);
}

void SCIUnregisterPCIeRequester(sci_desc_t sd, unsigned int localAdapterNo, unsigned int bus,
				unsigned int devfn, unsigned int flags, sci_error_t *error)
{
	rid(sd, localAdapterNo, bus, devfn, flags, false, error);
}
