/* SPDX-License-Identifier: MIT */
/*
 * Boot-time PCI enumeration of one host, as firmware and the kernel's PCI
 * core do it: bus numbers by depth-first scan, BAR sizing by writing
 * all-ones, resource assignment with natural alignment into the host's
 * 32-bit and 64-bit windows, bridge windows, and command registers. It uses
 * nothing but configuration cycles.
 */
#ifndef SMARTIO_HOST_ENUM_H
#define SMARTIO_HOST_ENUM_H

#include <stddef.h>

#include "fabric/fabric.h"

int host_enumerate(struct fab_host *h, char *err, size_t errlen);
/*
 * NTB bring-up: bind the NTB driver to every adapter (ntb_drv.h; released
 * with the host) and let the CPU (00:00.0) through each requester-ID table.
 */
int host_ntb_init(struct fab_host *h, char *err, size_t errlen);

#endif
