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
 *  - smartio-mdev: the PCI device standing for a borrowed function. At
 *    realize it asks the MDEV parent (host N's daemon, VM_ATTACH) to borrow
 *    the device for this VM with the guest's RAM as its DMA window; it
 *    presents the real function's identity, maps each BAR from the memfd
 *    behind it (VM_BAR: where the shadow's NTB window leads) as a RAM-device region, so
 *    the guest's loads and stores reach the device model's memory with no
 *    message, overlays QEMU's MSI-X emulation on the real table, and raises
 *    the guest's vectors from the eventfds of the real ones (VM_IRQ). The
 *    attachment is the connection: closing it returns the device. It tells
 *    the parent where q35 split the guest's RAM (below 4 GiB / from 4 GiB),
 *    so that the lender's IOMMU mirrors both parts.
 *      -device smartio-mdev,socket=DIR/host-N.sock,host=N,fdid=0x000c0200
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
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/boards.h"
#include "hw/i386/x86.h"
#include "qemu/error-report.h"
#include "qemu/range.h"
#include "qapi/visitor.h"
#include <sys/mman.h>

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
#define SMIO_VM_BAR       209
#define SMIO_VM_ATTACH    206
#define SMIO_VM_IRQ       207
#define SMIO_VM_CMD       200
#define SMIO_VM_CFG       256
#define SMIO_VM_BORROWED  1
#define SMIO_VM_CMD_RESET 0x1
#define SMIO_BARS         6

struct smio_vm_bar { uint32_t fdid, bar; };
struct smio_vm_bar_reply { uint64_t offset, len; };
struct smio_lend_info {
	uint32_t fdid, lender;
	uint16_t bdf, pad;
	uint32_t bound;
	uint64_t bar_addr[SMIO_BARS], bar_size[SMIO_BARS];
	char name[32], driver[32];
};
struct smio_vm_attach { uint32_t fdid, low_mib; uint64_t phys, size; };
struct smio_vm_attach_reply {
	struct smio_lend_info info;
	uint32_t nvec, pad;
	uint8_t cfg[SMIO_VM_CFG];
};
struct smio_vm_irq { uint32_t fdid, vector; };
struct smio_vm_cmd { uint32_t fdid; uint16_t cmd, flags; };
struct smio_vm_cmd_reply { uint32_t state, nvec; };

#define TYPE_SMARTIO_MDEV "smartio-mdev"
OBJECT_DECLARE_SIMPLE_TYPE(SmartioMdevState, SMARTIO_MDEV)

#define SMARTIO_MDEV_MAX_VEC 64

struct SmartioMdevVec {
	SmartioMdevState *s;
	unsigned vector;
	int fd;
};

struct SmartioMdevState {
	PCIDevice parent_obj;
	char *socket;           /* the borrower daemon's socket (DIR/host-N.sock) */
	uint32_t host;          /* its host id */
	uint32_t fdid;          /* the device, as `smartio devices` names it */
	char *memdev;           /* the memory-backend-smartio holding the guest's RAM */
	int sock;               /* the attachment: the device is the VM's while it is open */
	MemoryRegion bar[SMIO_BARS], bar_ram[SMIO_BARS], bar_absent[SMIO_BARS];
	void *bar_ptr[SMIO_BARS];
	uint64_t bar_len[SMIO_BARS];
	unsigned nvec, msix_tbar, msix_pbar;
	struct SmartioMdevVec vec[SMARTIO_MDEV_MAX_VEC];
	uint64_t irqs;          /* interrupts relayed to the guest */
	bool borrowed;          /* the parent borrowed it: BARs and vectors mapped */
	uint64_t bar_size[SMIO_BARS];   /* the real BARs (memory only), as reserved */
};

/* An interrupt of the real device (its MSI-X vector's eventfd): the guest's vector. */
static void smartio_mdev_irq(void *opaque)
{
	struct SmartioMdevVec *v = opaque;
	PCIDevice *pdev = PCI_DEVICE(v->s);
	uint64_t n;

	if (read(v->fd, &n, sizeof(n)) != sizeof(n))
		return;
	v->s->irqs += n;
	if (msix_enabled(pdev))
		msix_notify(pdev, v->vector);
}

/* The MSI-X capability of the real function's config header: 0 if none. */
static unsigned find_msix(const uint8_t *cfg)
{
	unsigned pos = cfg[PCI_CAPABILITY_LIST] & ~3u, n = 0;

	if (!(cfg[PCI_STATUS] & PCI_STATUS_CAP_LIST))
		return 0;
	while (pos >= 0x40 && pos < SMIO_VM_CFG - 12 && n++ < 48) {
		if (cfg[pos] == PCI_CAP_ID_MSIX)
			return pos;
		pos = cfg[pos + 1] & ~3u;
	}
	return 0;
}

/* A BAR of a reserved device, not borrowed: reads all-ones, writes go nowhere. */
static uint64_t smartio_absent_read(void *opaque, hwaddr addr, unsigned size)
{
	return UINT64_MAX;
}

static void smartio_absent_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
}

static const MemoryRegionOps smartio_absent_ops = {
	.read = smartio_absent_read,
	.write = smartio_absent_write,
	.endianness = DEVICE_LITTLE_ENDIAN,
	.valid = { .min_access_size = 1, .max_access_size = 8 },
	.impl = { .min_access_size = 1, .max_access_size = 8 },
};

/*
 * The device is no longer ours (returned, or QEMU's device goes): the
 * guest's BAR accesses fall to the all-ones region again, the device's
 * memory is unmapped (an anonymous page range keeps the RAM-device region's
 * pointer valid for the next borrow), its vectors are let go.
 */
static void smartio_mdev_unmap(SmartioMdevState *s)
{
	for (unsigned v = 0; v < SMARTIO_MDEV_MAX_VEC; v++) {
		if (s->vec[v].fd < 0)
			continue;
		qemu_set_fd_handler(s->vec[v].fd, NULL, NULL, NULL);
		close(s->vec[v].fd);
		s->vec[v].fd = -1;
	}
	for (unsigned b = 0; b < SMIO_BARS; b++) {
		if (!s->bar_ptr[b] || !s->bar_ram[b].enabled)
			continue;
		memory_region_set_enabled(&s->bar_ram[b], false);
		if (mmap(s->bar_ptr[b], s->bar_len[b], PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			error_report("smartio-mdev: cannot unmap BAR%u: %s", b, strerror(errno));
	}
	s->borrowed = false;
}

/*
 * Borrowed: each BAR's memory (VM_BAR: the memfd the shadow's NTB window
 * leads to) as a RAM-device region over the all-ones one, so the guest's
 * loads and stores reach the device's memory with no message per access;
 * each vector's eventfd (VM_IRQ) raises the guest's vector.
 */
static int smartio_mdev_map(SmartioMdevState *s)
{
	int rc = 0;

	for (unsigned b = 0; b < SMIO_BARS && !rc; b++) {
		struct smio_vm_bar q = { .fdid = s->fdid, .bar = b };
		struct smio_vm_bar_reply mr;
		char name[64];
		void *p;
		int fd = -1;

		if (!s->bar_size[b])
			continue;
		rc = smio_call(s->sock, SMIO_VM_BAR, &q, sizeof(q), &mr, sizeof(mr), &fd);
		if (!rc && (fd < 0 || mr.len != s->bar_size[b] || mr.offset % 4096))
			rc = -EFAULT;
		if (rc) {
			error_report("smartio-mdev: BAR%u of 0x%08x: %s", b, s->fdid, strerror(-rc));
			if (fd >= 0)
				close(fd);
			break;
		}
		/* Again over the same pages after a return: the region keeps its pointer. */
		p = mmap(s->bar_ptr[b], mr.len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | (s->bar_ptr[b] ? MAP_FIXED : 0), fd, mr.offset);
		close(fd);
		if (p == MAP_FAILED) {
			rc = -errno;
			error_report("smartio-mdev: mmap of BAR%u: %s", b, strerror(errno));
			break;
		}
		if (s->bar_ptr[b]) {
			memory_region_set_enabled(&s->bar_ram[b], true);
			continue;
		}
		s->bar_ptr[b] = p;
		s->bar_len[b] = mr.len;
		snprintf(name, sizeof(name), "smartio-mdev-bar%u-ram", b);
		memory_region_init_ram_device_ptr(&s->bar_ram[b], OBJECT(s), name, mr.len, p);
		memory_region_add_subregion_overlap(&s->bar[b], 0, &s->bar_ram[b], -1);
	}
	for (unsigned v = 0; v < s->nvec && !rc; v++) {
		struct smio_vm_irq q = { .fdid = s->fdid, .vector = v };
		int fd = -1;

		rc = smio_call(s->sock, SMIO_VM_IRQ, &q, sizeof(q), NULL, 0, &fd);
		if (!rc && fd < 0)
			rc = -EPROTO;
		if (rc) {
			error_report("smartio-mdev: vector %u: %s", v, strerror(-rc));
			break;
		}
		s->vec[v] = (struct SmartioMdevVec){ .s = s, .vector = v, .fd = fd };
		qemu_set_fd_handler(fd, smartio_mdev_irq, NULL, &s->vec[v]);
	}
	s->borrowed = true;
	if (rc)
		smartio_mdev_unmap(s);
	return rc;
}

/*
 * The guest enabled or released the device (Bus Master set or cleared) or
 * reset it: the parent borrows or returns it (VM_CMD, docs/vm.md "Borrowed
 * when enabled"). A returned device is unmapped here first, so the guest
 * never reaches it after the parent gave it back.
 */
static void smartio_mdev_command(SmartioMdevState *s, uint16_t cmd, uint16_t flags)
{
	struct smio_vm_cmd q = { .fdid = s->fdid, .cmd = cmd, .flags = flags };
	struct smio_vm_cmd_reply r;
	int rc;

	if (s->sock < 0)
		return;
	if (s->borrowed && (!(cmd & PCI_COMMAND_MASTER) || flags))
		smartio_mdev_unmap(s);
	rc = smio_call(s->sock, SMIO_VM_CMD, &q, sizeof(q), &r, sizeof(r), NULL);
	if (rc) {
		error_report("smartio-mdev: device 0x%08x: the MDEV parent could not %s it: %s",
			     s->fdid, cmd & PCI_COMMAND_MASTER ? "borrow" : "return",
			     strerror(-rc));
		return;
	}
	if (r.state == SMIO_VM_BORROWED && !s->borrowed)
		smartio_mdev_map(s);
}

static void smartio_mdev_config_write(PCIDevice *pdev, uint32_t addr, uint32_t val, int len)
{
	SmartioMdevState *s = SMARTIO_MDEV(pdev);
	uint16_t old = pci_get_word(pdev->config + PCI_COMMAND), cmd;

	pci_default_write_config(pdev, addr, val, len);
	pcie_cap_flr_write_config(pdev, addr, val, len);    /* FLR: smartio_mdev_reset */
	cmd = pci_get_word(pdev->config + PCI_COMMAND);
	if (ranges_overlap(addr, len, PCI_COMMAND, 2) && ((old ^ cmd) & PCI_COMMAND_MASTER))
		smartio_mdev_command(s, cmd, 0);
}

/* FLR, a secondary bus reset above us, the VM's reset: the device goes back. */
static void smartio_mdev_reset(DeviceState *dev)
{
	SmartioMdevState *s = SMARTIO_MDEV(dev);

	if (s->borrowed)
		smartio_mdev_command(s, 0, SMIO_VM_CMD_RESET);
}

static void smartio_mdev_exit(PCIDevice *pdev);

static void smartio_mdev_realize(PCIDevice *pdev, Error **errp)
{
	SmartioMdevState *s = SMARTIO_MDEV(pdev);
	struct smio_vm_attach_reply r;
	struct smio_vm_attach a = { .fdid = s->fdid };
	SmartioBackend *mem;
	X86MachineState *x86ms;
	Object *o;
	uint32_t dw;
	unsigned cap;
	int rc;

	s->sock = -1;
	for (unsigned i = 0; i < SMARTIO_MDEV_MAX_VEC; i++)
		s->vec[i].fd = -1;
	if (!s->socket || !*s->socket || !s->fdid) {
		error_setg(errp, "smartio-mdev: socket= (the borrower daemon's socket) and fdid= "
			   "(the device) are required");
		return;
	}
	o = object_resolve_path_component(object_get_objects_root(),
					  s->memdev ? s->memdev : "mem");
	mem = o ? (SmartioBackend *)object_dynamic_cast(o, TYPE_MEMORY_BACKEND_SMARTIO) : NULL;
	if (!mem || mem->sock < 0) {
		error_setg(errp, "smartio-mdev: the guest's RAM must be a memory-backend-smartio "
			   "(memdev=%s): the device's DMA reaches only the host's RAM",
			   s->memdev ? s->memdev : "mem");
		return;
	}
	a.phys = mem->where.phys;
	a.size = mem->where.size;
	/*
	 * q35 puts the RAM past its low part at 4 GiB (above the PCI hole): the
	 * parent maps guest-physical [0, low) and [4G, 4G + high) of the backend.
	 * The machine's RAM must be this backend for the offsets to hold.
	 */
	x86ms = (X86MachineState *)object_dynamic_cast(qdev_get_machine(), TYPE_X86_MACHINE);
	if (x86ms && x86ms->above_4g_mem_size) {
		if (x86ms->below_4g_mem_size + x86ms->above_4g_mem_size != a.size ||
		    x86ms->below_4g_mem_size % (2 << 20)) {
			error_setg(errp, "smartio-mdev: the guest's RAM (%" PRIu64 " MiB below 4 GiB, "
				   "%" PRIu64 " MiB above) must be all of %s, split on 2 MiB",
				   (uint64_t)x86ms->below_4g_mem_size >> 20,
				   (uint64_t)x86ms->above_4g_mem_size >> 20,
				   s->memdev ? s->memdev : "mem");
			return;
		}
		a.low_mib = x86ms->below_4g_mem_size >> 20;
	}
	s->sock = smio_open(s->socket, s->host, errp);
	if (s->sock < 0)
		return;
	rc = smio_call(s->sock, SMIO_VM_ATTACH, &a, sizeof(a), &r, sizeof(r), NULL);
	if (rc) {
		error_setg(errp, "smartio-mdev: device 0x%08x: the MDEV parent of host %u refused: "
			   "%s%s", s->fdid, s->host, strerror(-rc), rc == -EOPNOTSUPP ?
			   " (its lender has no IOMMU, so the device cannot DMA with the guest's "
			   "addresses)" : "");
		goto fail;
	}
	/* Identity as the real function has it; no INTx (it cannot cross the NTB). */
	memcpy(pdev->config + PCI_VENDOR_ID, r.cfg + PCI_VENDOR_ID, 4);
	memcpy(pdev->config + PCI_CLASS_REVISION, r.cfg + PCI_CLASS_REVISION, 4);
	memcpy(pdev->config + PCI_SUBSYSTEM_VENDOR_ID, r.cfg + PCI_SUBSYSTEM_VENDOR_ID, 4);
	pdev->config[PCI_INTERRUPT_PIN] = 0;
	/*
	 * BARs of the real function's sizes. Reserved, not borrowed: until the
	 * guest enables the device (Bus Master, smartio_mdev_command) they hold
	 * only an all-ones region, as a slot with nothing behind it reads.
	 */
	for (unsigned b = 0; b < SMIO_BARS; b++) {
		uint8_t type;
		char name[64];

		if (!r.info.bar_size[b])
			continue;
		memcpy(&dw, r.cfg + PCI_BASE_ADDRESS_0 + 4 * b, 4);
		if (dw & PCI_BASE_ADDRESS_SPACE_IO)
			continue;
		s->bar_size[b] = r.info.bar_size[b];
		snprintf(name, sizeof(name), "smartio-mdev-bar%u", b);
		memory_region_init(&s->bar[b], OBJECT(s), name, s->bar_size[b]);
		snprintf(name, sizeof(name), "smartio-mdev-bar%u-absent", b);
		memory_region_init_io(&s->bar_absent[b], OBJECT(s), &smartio_absent_ops, s, name,
				      s->bar_size[b]);
		memory_region_add_subregion_overlap(&s->bar[b], 0, &s->bar_absent[b], -2);
		type = (dw & PCI_BASE_ADDRESS_MEM_TYPE_64) ? PCI_BASE_ADDRESS_MEM_TYPE_64 : 0;
		type |= dw & PCI_BASE_ADDRESS_MEM_PREFETCH;
		pci_register_bar(pdev, b, type, &s->bar[b]);
		if (type & PCI_BASE_ADDRESS_MEM_TYPE_64)
			b++;
	}
	if (pcie_endpoint_cap_init(pdev, 0) < 0) {
		error_setg(errp, "smartio-mdev: no room for the PCI Express capability");
		goto fail;
	}
	/* FLR: the guest's reset returns the device (smartio_mdev_reset). */
	pcie_cap_flr_init(pdev);
	/* MSI-X: QEMU's emulated table over the real one; vectors raised from eventfds. */
	cap = find_msix(r.cfg);
	s->nvec = MIN(r.nvec, SMARTIO_MDEV_MAX_VEC);
	if (cap && s->nvec) {
		uint32_t tbl, pba;

		memcpy(&tbl, r.cfg + cap + PCI_MSIX_TABLE, 4);
		memcpy(&pba, r.cfg + cap + PCI_MSIX_PBA, 4);
		if (!s->bar_size[tbl & PCI_MSIX_FLAGS_BIRMASK] ||
		    !s->bar_size[pba & PCI_MSIX_FLAGS_BIRMASK]) {
			error_setg(errp, "smartio-mdev: MSI-X table or PBA in a BAR we do not have");
			goto fail;
		}
		if (msix_init(pdev, s->nvec, &s->bar[tbl & PCI_MSIX_FLAGS_BIRMASK],
			      tbl & PCI_MSIX_FLAGS_BIRMASK, tbl & ~PCI_MSIX_FLAGS_BIRMASK,
			      &s->bar[pba & PCI_MSIX_FLAGS_BIRMASK], pba & PCI_MSIX_FLAGS_BIRMASK,
			      pba & ~PCI_MSIX_FLAGS_BIRMASK, 0, errp) < 0)
			goto fail;
		s->msix_tbar = tbl & PCI_MSIX_FLAGS_BIRMASK;
		s->msix_pbar = pba & PCI_MSIX_FLAGS_BIRMASK;
		for (unsigned v = 0; v < s->nvec; v++)
			msix_vector_use(pdev, v);
	}
	return;
fail:
	smartio_mdev_exit(pdev);
}

static void smartio_mdev_exit(PCIDevice *pdev)
{
	SmartioMdevState *s = SMARTIO_MDEV(pdev);

	smartio_mdev_unmap(s);
	if (msix_present(pdev))
		msix_uninit(pdev, &s->bar[s->msix_tbar], &s->bar[s->msix_pbar]);
	s->nvec = 0;
	/* The BAR mappings stay until the process ends: regions may still refer to them. */
	if (s->sock >= 0)
		close(s->sock);         /* the parent returns the device */
	s->sock = -1;
}

static Property smartio_mdev_props[] = {
	DEFINE_PROP_STRING("socket", SmartioMdevState, socket),
	DEFINE_PROP_UINT32("host", SmartioMdevState, host, 0),
	DEFINE_PROP_UINT32("fdid", SmartioMdevState, fdid, 0),
	DEFINE_PROP_STRING("memdev", SmartioMdevState, memdev),
	DEFINE_PROP_END_OF_LIST(),
};

static void smartio_mdev_class_init(ObjectClass *klass, void *data)
{
	DeviceClass *dc = DEVICE_CLASS(klass);
	PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

	k->realize = smartio_mdev_realize;
	k->exit = smartio_mdev_exit;
	k->config_write = smartio_mdev_config_write;
	dc->reset = smartio_mdev_reset;
	/* Overwritten at realize with the real function's identity. */
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
