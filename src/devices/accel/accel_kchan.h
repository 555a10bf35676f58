/* SPDX-License-Identifier: MIT */
/*
 * The request channel between the accelerator model (its device thread) and
 * a device context running a kernel (smartio-accel-ctx): a SOCK_SEQPACKET
 * socket pair, one message per request and per reply. The context sends
 * READ/WRITE requests; the device thread does the access as the device's
 * DMA (fabric routing, IOMMU, DMA limit) and answers with a status word.
 * DONE and NO_KERNEL are last words: no reply.
 */
#ifndef SMARTIO_DEVICES_ACCEL_KCHAN_H
#define SMARTIO_DEVICES_ACCEL_KCHAN_H

#include <stdint.h>

#include "smartio/accel_kernel.h"

enum accel_kchan_op {
	ACCEL_KCH_READ = 1,      /* addr, len -> reply with len bytes */
	ACCEL_KCH_WRITE,         /* addr, len + len bytes -> reply */
	ACCEL_KCH_DONE,          /* the kernel returned: value */
	ACCEL_KCH_NO_KERNEL,     /* the image did not load */
};

struct accel_kchan_req {
	uint32_t op;
	uint32_t len;
	uint64_t addr;           /* READ/WRITE: bus address; DONE: the return value */
};

struct accel_kchan_rep {
	uint32_t status;         /* 0 or ACCEL_ST_* code | fabric status << 8 */
	uint32_t len;            /* READ: bytes that follow */
};

/* File descriptors the context starts with. */
#define ACCEL_KCH_FD_MEM        3        /* BAR2's memfd */
#define ACCEL_KCH_FD_IMAGE      4        /* the kernel's ELF image */
#define ACCEL_KCH_FD_CHAN       5        /* the channel */

#endif
