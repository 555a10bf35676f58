/* SPDX-License-Identifier: MIT */
/* smartio-nvme's --buffer p2pmem (p2pmem.c). */
#ifndef SNVTOOL_P2PMEM_H
#define SNVTOOL_P2PMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "smartio/proto/wire.h"
#include "smartio/proto/driver.h"

struct tool_p2pmem {
	int fd;                        /* holds the buffer; -1: none */
	struct smio_p2pmem_grant g;    /* g.bus 0: none (fallback to host memory) */
};

/*
 * size bytes of p2pmem for controller client (FDID) from the daemon of
 * $SMARTIO_HOST. Returns 0 (p->g.bus 0 when nothing is reachable and
 * fallback was asked), -ENODEV (nothing reachable), -ENOMEM (no room),
 * -EINVAL (no SMARTIO_HOST), or a transport error.
 */
int tool_p2pmem_alloc(uint32_t client, uint64_t size, bool fallback, struct tool_p2pmem *p);
void tool_p2pmem_close(struct tool_p2pmem *p);

#endif
