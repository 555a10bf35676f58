/* SPDX-License-Identifier: MIT */
/*
 * Host physical memory: the kernel's page allocator for one emulated host.
 *
 * Hands out contiguous, page-aligned ranges of host RAM (4 KiB granularity,
 * any power-of-two alignment) by first fit over a sorted list of free
 * extents that coalesce on free. The first 16 MiB are never handed out (as a
 * kernel keeps low memory for firmware, the kernel image and legacy DMA), and
 * neither is the hole between RAM below 4 GiB and RAM above it.
 * Users: dma_alloc_coherent, and the SISCI segments of the daemon.
 *
 * The extent set (struct pm_ranges) is generic and also backs the per-domain
 * IOVA allocators of the DMA API.
 *
 * Locking: physmem_* take the host lock (fab_host_lock) themselves; it is
 * recursive, so callers that already hold it (everything in the PCI core and
 * the daemon's handlers) may call in freely. pm_ranges_* do no locking: the
 * owner serialises them (the DMA API under the host lock).
 */
#ifndef SMARTIO_HOST_PHYSMEM_H
#define SMARTIO_HOST_PHYSMEM_H

#include <stdint.h>

#include "fabric/fabric.h"

#define PHYSMEM_PAGE      4096ull
#define PHYSMEM_RESERVED  (16ull << 20)   /* low memory never handed out */

/* A set of free [start, end) extents, sorted, disjoint, never adjacent. */
struct pm_extent { uint64_t start, end; };
struct pm_ranges {
	struct pm_extent *v;
	unsigned n, cap;
	uint64_t free_bytes;
};

void pm_ranges_init(struct pm_ranges *r);
void pm_ranges_fini(struct pm_ranges *r);
/*
 * Give [start, end) to the set (initial population and frees). -EINVAL if
 * empty or overlapping what is already free (a double free): nothing changes.
 */
int pm_ranges_add(struct pm_ranges *r, uint64_t start, uint64_t end);
/* Remove [start, end) from the set wherever it is free (holes). */
int pm_ranges_carve(struct pm_ranges *r, uint64_t start, uint64_t end);
/*
 * First fit: size bytes aligned to align (power of two), wholly at or below
 * limit (inclusive). -ENOMEM if no extent fits; nothing changes then.
 */
int pm_ranges_alloc(struct pm_ranges *r, uint64_t size, uint64_t align, uint64_t limit,
		    uint64_t *out);

struct physmem;

int physmem_create(struct fab_host *h, struct physmem **out);
void physmem_destroy(struct physmem *pm);
/*
 * Allocate size bytes (rounded up to pages) aligned to align (rounded up to
 * a page; power of two) with the whole range at or below limit (inclusive;
 * UINT64_MAX for anywhere). Returns 0 and the physical address, -EINVAL on
 * bad arguments, -ENOMEM when no such range is free. The memory reads as
 * zeros: free pages are holes in the RAM file (physmem_free punches them).
 */
int physmem_alloc(struct physmem *pm, uint64_t size, uint64_t align, uint64_t limit,
		  uint64_t *phys);
/* Free what physmem_alloc returned (same size); the pages go back to the
 * system. -EINVAL if not allocated (nothing changes). */
int physmem_free(struct physmem *pm, uint64_t phys, uint64_t size);
uint64_t physmem_avail(struct physmem *pm);     /* bytes free now */
uint64_t physmem_total(const struct physmem *pm);     /* bytes managed */
/* CPU pointer (the "direct map") of RAM at phys, valid for len bytes, or NULL. */
void *physmem_virt(struct fab_host *h, uint64_t phys, uint64_t len);

#endif
