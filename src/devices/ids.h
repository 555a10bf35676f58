/* SPDX-License-Identifier: MIT */
/*
 * The PCI identities of smartio's device models (docs/devices.md,
 * "Identities"). They claim no real product: a real vendor's ID would make
 * that vendor's driver (and lspci's database) take the emulation for
 * hardware it does not emulate. 0x534d ("SM") is not assigned to anyone in
 * pci.ids (version 2023.04.10), so lspci prints "Device 534d:xxxx".
 */
#ifndef SMARTIO_DEVICES_IDS_H
#define SMARTIO_DEVICES_IDS_H

#define SMARTIO_PCI_VENDOR       0x534d   /* unassigned in pci.ids; emulation only */
#define SMARTIO_PCI_DEV_NVME     0x0001
#define SMARTIO_PCI_DEV_ACCEL    0x0002
#define SMARTIO_PCI_DEV_NVME_VF  0x0011   /* VF Device ID of the NVMe model's PF */
#define SMARTIO_PCI_DEV_TEST_VF  0x0006   /* VF Device ID of the test model */
#define SMARTIO_PCI_CLASS_NVME   0x010802 /* NVM Express: the model implements NVMe 1.4 */
#define SMARTIO_PCI_CLASS_ACCEL  0x120000 /* processing accelerator: no display, no 3D */

#endif
