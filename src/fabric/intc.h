/* SPDX-License-Identifier: MIT */
/*
 * A host's interrupt controller for message-signalled interrupts: a memory
 * write of DATA to the MSI window (0xfee00000..0xfeefffff) raises vector
 * DATA, which the kernel side of the host turns into an eventfd signal.
 * Routing recognises the window at the root complex for writes (it is not
 * subject to DMA remapping), so an MSI arriving through an NTB from a device
 * in another host lands here exactly like a local one.
 */
#ifndef SMARTIO_FABRIC_INTC_H
#define SMARTIO_FABRIC_INTC_H

#include <stdbool.h>
#include <stdint.h>

#define FAB_MSI_BASE     0xfee00000ull
#define FAB_MSI_SIZE     0x00100000ull
#define FAB_INTC_VECTORS 1024

struct fab_intc {
	int efd[FAB_INTC_VECTORS];       /* -1: free */
	uint64_t count[FAB_INTC_VECTORS];
	uint64_t spurious;               /* messages to unallocated vectors */
};

static inline bool fab_msi_addr(uint64_t a, uint64_t len)
{
	return a >= FAB_MSI_BASE && a - FAB_MSI_BASE < FAB_MSI_SIZE && len <= FAB_MSI_SIZE;
}

void fab_intc_init(struct fab_intc *c);
/* Allocate a vector signalling efd; the message to program is (*addr, *data). -ENOSPC. */
int fab_intc_alloc(struct fab_intc *c, int efd, uint64_t *addr, uint32_t *data);
int fab_intc_free(struct fab_intc *c, uint32_t data);            /* -ENOENT */
/* A message arrived: signal its vector. -ENOENT for an unallocated one (counted). */
int fab_intc_deliver(struct fab_intc *c, uint64_t addr, uint32_t data);

#endif
