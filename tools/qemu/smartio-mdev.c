// SPDX-License-Identifier: MIT
/*
 * smartio-mdev: a PCI device of QEMU's that stands for a device borrowed
 * from a smartio cluster (docs/vm.md). Compiled into QEMU from Debian's qemu
 * source package by tools/qemu/build-qemu.sh; nothing of QEMU's is kept in
 * the smartio repository.
 *
 * Two QOM types:
 *  - memory-backend-smartio: the guest's RAM, taken from the cluster host's
 *    physical memory by its daemon (VM_MEM) and mapped from the host's RAM
 *    memfd at the offset the daemon names, so that a borrowed device's DMA
 *    (which ends in host RAM) can reach guest memory. The range is the
 *    backend's connection's: the daemon frees it when QEMU exits.
 *      -object memory-backend-smartio,id=mem,size=512M,socket=DIR/host-N.sock,host=N
 *  - smartio-mdev: the PCI device standing for a borrowed function. Its
 *    MDEV parent in smartiod (config cycles, BAR memfds, guest-RAM DMA
 *    windows, MSI-X eventfds: docs/vm.md "Design") is not written yet, so
 *    realize refuses with an error saying so rather than presenting a
 *    device that does not work.
 *      -device smartio-mdev,socket=DIR/host-N.sock,fdid=0x00010200
 *
 * The daemon's wire format (include/smartio/proto/wire.h, core.h, lend.h)
 * is restated below: this file is compiled inside QEMU's tree, where
 * smartio's headers are not.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/qdev-properties.h"
#include "qemu/module.h"
#include "qemu/sockets.h"
#include "qom/object.h"
#include "qom/object_interfaces.h"
#include "sysemu/hostmem.h"

/* ---- smartio's wire format (include/smartio/proto/wire.h and friends) ---- */
#define SMIO_MAGIC        0x4f494d53u
#define SMIO_VERSION      1
#define SMIO_F_REPLY      0x1
#define SMIO_F_FD         0x2
#define SMIO_ROLE_CLIENT  1
#define SMIO_HELLO        1
#define SMIO_VM_MEM       205

struct smio_hdr {
	uint32_t magic;
	uint16_t version, type;
	uint32_t len, seq;
	int32_t status;
	uint32_t flags;
};
struct smio_hello { uint32_t role, host, pid, version; };
struct smio_hello_reply { uint32_t host, node_id, version, pad; };
struct smio_vm_mem { uint64_t size; };
struct smio_vm_mem_reply { uint64_t phys, offset, size; };

/* Write all of buf. */
static int smio_write_all(int s, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(s, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

/* Read exactly len bytes; the first recvmsg may carry an fd (*fd, else -1). */
static int smio_read_all(int s, void *buf, size_t len, int *fd)
{
	uint8_t *p = buf;

	while (len) {
		union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } cm;
		struct iovec iov = { .iov_base = p, .iov_len = len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = &cm, .msg_controllen = sizeof(cm) };
		struct cmsghdr *c;
		ssize_t n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && fd)
				memcpy(fd, CMSG_DATA(c), sizeof(int));
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * One request/reply on s: the reply payload must be rlen bytes; *fd gets a
 * passed descriptor (-1 if none). Returns 0, the daemon's -errno, or a
 * transport error.
 */
static int smio_call(int s, uint16_t type, const void *req, uint32_t len, void *rep,
		     uint32_t rlen, int *fd)
{
	static uint32_t seq;
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION, .type = type,
			      .len = len, .seq = ++seq };
	int rc, got = -1;

	rc = smio_write_all(s, &h, sizeof(h));
	if (!rc && len)
		rc = smio_write_all(s, req, len);
	if (!rc)
		rc = smio_read_all(s, &h, sizeof(h), &got);
	if (rc)
		return rc;
	if (h.magic != SMIO_MAGIC || !(h.flags & SMIO_F_REPLY) || h.type != type)
		rc = -EPROTO;
	else if (h.status)
		rc = h.status < 0 ? h.status : -EPROTO;
	else if (h.len != rlen)
		rc = -EPROTO;
	if (!rc && rlen)
		rc = smio_read_all(s, rep, rlen, got < 0 ? &got : NULL);
	if (rc || !fd) {
		if (got >= 0)
			close(got);
		got = -1;
	}
	if (fd)
		*fd = got;
	return rc;
}

/* Connect to a daemon's socket and say HELLO as a process of host. */
static int smio_open(const char *path, uint32_t host, Error **errp)
{
	struct smio_hello hello = { .role = SMIO_ROLE_CLIENT, .host = host, .pid = getpid(),
				    .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	int s = unix_connect(path, errp), rc;

	if (s < 0)
		return -1;
	rc = smio_call(s, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), NULL);
	if (rc) {
		error_setg_errno(errp, -rc, "smartio: HELLO to %s (host %u) failed", path, host);
		close(s);
		return -1;
	}
	return s;
}

/* ---- memory-backend-smartio: the guest's RAM, in the host's RAM ---- */
#define TYPE_MEMORY_BACKEND_SMARTIO "memory-backend-smartio"
OBJECT_DECLARE_SIMPLE_TYPE(SmartioBackend, MEMORY_BACKEND_SMARTIO)

struct SmartioBackend {
	HostMemoryBackend parent_obj;
	char *socket;
	uint32_t host;
	int sock;               /* the connection the range belongs to */
	struct smio_vm_mem_reply where;
};

static void smartio_backend_alloc(HostMemoryBackend *backend, Error **errp)
{
	SmartioBackend *b = MEMORY_BACKEND_SMARTIO(backend);
	struct smio_vm_mem m = { .size = backend->size };
	char *name;
	int rc, fd = -1;

	if (!b->socket || !*b->socket) {
		error_setg(errp, "memory-backend-smartio: socket= (the host's daemon) is required");
		return;
	}
	if (!backend->size || backend->size % (2 << 20)) {
		error_setg(errp, "memory-backend-smartio: size must be a multiple of 2 MiB");
		return;
	}
	b->sock = smio_open(b->socket, b->host, errp);
	if (b->sock < 0)
		return;
	rc = smio_call(b->sock, SMIO_VM_MEM, &m, sizeof(m), &b->where, sizeof(b->where), &fd);
	if (!rc && fd < 0)
		rc = -EPROTO;
	if (rc) {
		error_setg_errno(errp, -rc, "memory-backend-smartio: host %u's daemon gave no "
				 "RAM (VM_MEM, %" PRIu64 " MiB)", b->host, m.size >> 20);
		close(b->sock);
		b->sock = -1;
		return;
	}
	name = host_memory_backend_get_name(backend);
	/* Shared: the daemon's device models reach the same pages. */
	memory_region_init_ram_from_fd(&backend->mr, OBJECT(backend), name, backend->size,
				       RAM_SHARED, fd, b->where.offset, errp);
	g_free(name);
	/* The RAMBlock keeps fd open; the connection keeps the range allocated. */
}

static char *smartio_backend_get_socket(Object *o, Error **errp)
{
	return g_strdup(MEMORY_BACKEND_SMARTIO(o)->socket);
}

static void smartio_backend_set_socket(Object *o, const char *v, Error **errp)
{
	SmartioBackend *b = MEMORY_BACKEND_SMARTIO(o);

	g_free(b->socket);
	b->socket = g_strdup(v);
}

static void smartio_backend_get_host(Object *o, Visitor *v, const char *name, void *opaque,
				     Error **errp)
{
	uint32_t h = MEMORY_BACKEND_SMARTIO(o)->host;

	visit_type_uint32(v, name, &h, errp);
}

static void smartio_backend_set_host(Object *o, Visitor *v, const char *name, void *opaque,
				     Error **errp)
{
	uint32_t h;

	if (visit_type_uint32(v, name, &h, errp))
		MEMORY_BACKEND_SMARTIO(o)->host = h;
}

static void smartio_backend_init(Object *o)
{
	MEMORY_BACKEND_SMARTIO(o)->sock = -1;
}

static void smartio_backend_finalize(Object *o)
{
	SmartioBackend *b = MEMORY_BACKEND_SMARTIO(o);

	if (b->sock >= 0)
		close(b->sock);
	g_free(b->socket);
}

static void smartio_backend_class_init(ObjectClass *oc, void *data)
{
	HostMemoryBackendClass *bc = MEMORY_BACKEND_CLASS(oc);

	bc->alloc = smartio_backend_alloc;
	object_class_property_add_str(oc, "socket", smartio_backend_get_socket,
				      smartio_backend_set_socket);
	object_class_property_add(oc, "host", "uint32", smartio_backend_get_host,
				  smartio_backend_set_host, NULL, NULL);
}

static const TypeInfo smartio_backend_info = {
	.name = TYPE_MEMORY_BACKEND_SMARTIO,
	.parent = TYPE_MEMORY_BACKEND,
	.instance_size = sizeof(SmartioBackend),
	.instance_init = smartio_backend_init,
	.instance_finalize = smartio_backend_finalize,
	.class_init = smartio_backend_class_init,
};

/* ---- smartio-mdev: the borrowed function ---- */

#define TYPE_SMARTIO_MDEV "smartio-mdev"
OBJECT_DECLARE_SIMPLE_TYPE(SmartioMdevState, SMARTIO_MDEV)

struct SmartioMdevState {
	PCIDevice parent_obj;
	char *socket;           /* the borrower daemon's socket (DIR/host-N.sock) */
	uint32_t fdid;          /* the device, as `smartio devices` names it */
	int fd;                 /* connection to the daemon, -1 when none */
};

static void smartio_mdev_realize(PCIDevice *pdev, Error **errp)
{
	SmartioMdevState *s = SMARTIO_MDEV(pdev);

	s->fd = -1;
	if (!s->socket || !*s->socket) {
		error_setg(errp, "smartio-mdev: socket= (the borrower daemon's socket) is required");
		return;
	}
	if (!s->fdid) {
		error_setg(errp, "smartio-mdev: fdid= (the device's FDID) is required");
		return;
	}
	s->fd = unix_connect(s->socket, errp);
	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	error_setg(errp, "smartio-mdev: device 0x%08x: the daemon at %s has no MDEV parent "
		   "yet (docs/vm.md)", s->fdid, s->socket);
}

static void smartio_mdev_exit(PCIDevice *pdev)
{
	SmartioMdevState *s = SMARTIO_MDEV(pdev);

	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static Property smartio_mdev_props[] = {
	DEFINE_PROP_STRING("socket", SmartioMdevState, socket),
	DEFINE_PROP_UINT32("fdid", SmartioMdevState, fdid, 0),
	DEFINE_PROP_END_OF_LIST(),
};

static void smartio_mdev_class_init(ObjectClass *klass, void *data)
{
	DeviceClass *dc = DEVICE_CLASS(klass);
	PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

	k->realize = smartio_mdev_realize;
	k->exit = smartio_mdev_exit;
	/* Placeholders until the parent sends the real function's identity. */
	k->vendor_id = PCI_VENDOR_ID_QEMU;
	k->device_id = 0x5310;
	k->class_id = PCI_CLASS_OTHERS;
	dc->desc = "device borrowed from a smartio cluster (MDEV)";
	set_bit(DEVICE_CATEGORY_MISC, dc->categories);
	device_class_set_props(dc, smartio_mdev_props);
}

static const TypeInfo smartio_mdev_info = {
	.name = TYPE_SMARTIO_MDEV,
	.parent = TYPE_PCI_DEVICE,
	.instance_size = sizeof(SmartioMdevState),
	.class_init = smartio_mdev_class_init,
	.interfaces = (InterfaceInfo[]) {
		{ INTERFACE_PCIE_DEVICE },
		{ },
	},
};

static void smartio_mdev_register_types(void)
{
	type_register_static(&smartio_backend_info);
	type_register_static(&smartio_mdev_info);
}

type_init(smartio_mdev_register_types)
