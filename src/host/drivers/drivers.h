/* SPDX-License-Identifier: MIT */
/* The in-kernel drivers a host registers with its PCI core at boot. */
#ifndef SMARTIO_HOST_DRIVERS_H
#define SMARTIO_HOST_DRIVERS_H

#include "host/pci.h"

extern const struct pci_driver nvme_pci_driver;   /* drivers/nvme_drv.c */
extern const struct pci_driver accel_pci_driver;  /* drivers/accel_drv.c */

#endif
