// SPDX-License-Identifier: MIT
/*
 * smartio-mdev: a PCI device of QEMU's that stands for a device borrowed
 * from a smartio cluster (docs/vm.md). Compiled into QEMU from Debian's qemu
 * source package by tools/qemu/build-qemu.sh; nothing of QEMU's is kept in
 * the smartio repository.
 *
 * Stage reached so far: the device type, its properties and its connection
 * to the borrower's daemon exist, so that the build pipeline, `smartio vm
 * run` and the guest image are exercised end to end. The MDEV parent in
 * smartiod (config cycles, BAR memfds, guest-RAM DMA windows, MSI-X
 * eventfds: docs/vm.md "Design") is not written yet, so realize refuses
 * with an error saying so rather than presenting a device that does not
 * work.
 *
 *   -device smartio-mdev,socket=DIR/host-N.sock,fdid=0x00010200
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/qdev-properties.h"
#include "qemu/module.h"
#include "qemu/sockets.h"
#include "qom/object.h"

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
	type_register_static(&smartio_mdev_info);
}

type_init(smartio_mdev_register_types)
