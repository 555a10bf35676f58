/* SPDX-License-Identifier: MIT */
/*
 * SISCI segments of one host: the kernel's table of exported host RAM.
 *
 * A segment is a page-granular range of host RAM from the host's physical
 * memory allocator (physmem.h), named by a 32-bit id unique on the host. One
 * created empty gets its memory later (seg_attach): fresh RAM, part of another
 * segment's RAM, or a device BAR. It
 * has an owner (the process connection that created it) and counts the
 * references other parties hold on it (connections, local or through an
 * NTB). The owner decides whether new references may be taken (available);
 * existing ones are never revoked by that.
 *
 * Lifetime, following SISCI: a segment with references cannot be removed
 * (-EBUSY). If its owner goes away while references remain, the segment is
 * orphaned: it stays (memory and all) but accepts no new references, and it
 * is freed when the last reference is dropped.
 *
 * Owners and holders are opaque non-zero tokens chosen by the caller (the
 * daemon uses connection ids), so that everything a dead party held can be
 * dropped in one call.
 *
 * Locking: none of its own; the daemon calls with the host lock held.
 */
#ifndef SMARTIO_HOST_SEGMENT_H
#define SMARTIO_HOST_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "physmem.h"

#define SEG_ID_AUTO        0xffffffffu
#define SEG_AUTO_FIRST     0x80000000u   /* automatic ids come from the upper half */
#define SEG_F_EMPTY        0x1u           /* no memory (attached later) */

/* Where an attached segment's memory comes from (SEG_MEM_NONE: empty). */
enum seg_mem {
	SEG_MEM_RAM = 0,           /* host RAM the table allocated (and frees) */
	SEG_MEM_NONE,              /* empty, no memory yet */
	SEG_MEM_ALIAS,             /* inside another segment of the same owner's RAM */
	SEG_MEM_IO,                /* a device BAR the caller vouched for; never freed */
};

struct seg {
	uint32_t id;
	uint32_t flags;            /* SEG_F_* */
	uint64_t phys;             /* 0 when empty */
	uint64_t size;             /* page-rounded */
	uint32_t owner;            /* 0: orphaned, lingering until its references go */
	uint32_t nrefs;
	uint32_t aliases;          /* SEG_MEM_ALIAS segments inside this one */
	uint32_t backing;          /* SEG_MEM_ALIAS: the segment it lies in */
	uint8_t mem;               /* enum seg_mem */
	bool available;
};

struct seg_table;

/*
 * What must happen for a segment's memory to be reachable from outside the
 * host: with the IOMMU on, the NTBs' requests are translated, so exported
 * memory is mapped for them (SISCI's "prepared on the adapter"). expose runs
 * when a segment gets memory and may fail (the creation fails, nothing kept);
 * unexpose runs before the memory is freed.
 */
struct seg_hooks {
	int (*expose)(void *arg, uint64_t phys, uint64_t size);
	void (*unexpose)(void *arg, uint64_t phys, uint64_t size);
	/*
	 * A connection (a seg_ref_get reference, not the owner's own) to
	 * segment segid was taken (connected) or dropped, by holder; for the
	 * owner's SISCI callbacks. Runs after the table changed.
	 */
	void (*conn)(void *arg, uint32_t segid, uint32_t holder, bool connected);
	void *arg;
};

int seg_table_create(struct physmem *pm, struct seg_table **out);
void seg_table_set_hooks(struct seg_table *t, const struct seg_hooks *h);
/* Frees every segment's memory, referenced or not (the host is going away). */
void seg_table_destroy(struct seg_table *t);

/*
 * Create a segment of size bytes (rounded up to a page) for owner; id
 * SEG_ID_AUTO picks a free id. -EINVAL bad size/owner, -EEXIST id in use,
 * -ENOSPC no free automatic id, -ENOMEM no RAM. Nothing changes on failure.
 * *out stays valid until the next call that changes the table.
 */
int seg_create(struct seg_table *t, uint32_t owner, uint32_t id, uint64_t size,
	       uint32_t flags, const struct seg **out);
/*
 * Give owner's empty segment id its memory, size bytes (a page multiple; the
 * segment's size becomes size). SEG_MEM_RAM: fresh host RAM (addr ignored);
 * SEG_MEM_IO: [addr, addr + size), which the caller checked is a device BAR
 * range of this host and must not overlap another segment's; SEG_MEM_ALIAS:
 * [addr, addr + size) must lie inside RAM of another segment owner owns
 * (-EACCES otherwise), which then cannot be removed before this one. The
 * expose hook runs as for creation, except for aliases (their memory is
 * exposed already). -ENOENT, -EPERM, -EEXIST not empty, -EINVAL, -EBUSY
 * overlapping I/O range, -ENOMEM; nothing changes on failure.
 */
int seg_attach(struct seg_table *t, uint32_t owner, uint32_t id, enum seg_mem mem,
	       uint64_t addr, uint64_t size, const struct seg **out);
/* The segment with this id (orphans included), or NULL. */
const struct seg *seg_lookup(const struct seg_table *t, uint32_t id);
/* -ENOENT unknown (or orphaned), -EPERM not the owner, -EBUSY referenced
 * (or an alias lies inside it). */
int seg_remove(struct seg_table *t, uint32_t owner, uint32_t id);
/* -ENOENT, -EPERM, -ENXIO: an empty segment has nothing to offer. */
int seg_set_available(struct seg_table *t, uint32_t owner, uint32_t id, bool available);

/*
 * Take a reference for holder: -ENOENT unknown or orphaned, -ECONNREFUSED not
 * available, -ENOMEM. Returns the reference id in *ref.
 */
int seg_ref_get(struct seg_table *t, uint32_t id, uint32_t holder, uint32_t *ref,
		const struct seg **out);
/* Drop reference ref on segment id; -ENOENT unless holder holds exactly it. */
/*
 * The owner's own reference (e.g. while its device may DMA into the segment):
 * as seg_ref_get, but only for the owner (-EPERM) and whether available or not.
 */
int seg_ref_get_own(struct seg_table *t, uint32_t id, uint32_t owner, uint32_t *ref,
		    const struct seg **out);
/* As seg_ref_get_own, with the reference held by holder (another of owner's channels). */
int seg_ref_get_for(struct seg_table *t, uint32_t id, uint32_t owner, uint32_t holder,
		    uint32_t *ref, const struct seg **out);
int seg_ref_put(struct seg_table *t, uint32_t id, uint32_t ref, uint32_t holder);
/* Does holder hold exactly reference ref on segment id? */
bool seg_ref_held(const struct seg_table *t, uint32_t id, uint32_t ref, uint32_t holder);
/* Drop every reference holder holds (it is gone). Returns how many. */
unsigned seg_holder_gone(struct seg_table *t, uint32_t holder);
/*
 * The references others hold on owner's segments (what seg_owner_gone will
 * orphan): a malloc()ed array in *out (NULL if none; the caller frees it).
 * Returns how many; 0 also when out of memory.
 */
struct seg_ref_info {
	uint32_t segid, ref, holder;
};
unsigned seg_owner_refs(const struct seg_table *t, uint32_t owner, struct seg_ref_info **out);
/* The owner is gone: free its unreferenced segments, orphan the others. */
unsigned seg_owner_gone(struct seg_table *t, uint32_t owner);

/* Statistics: segments (including orphans), references. */
/*
 * Remove owner's segment id like seg_remove, except that a connected one is
 * not refused: it loses its owner and lingers until its last reference goes.
 * -ENOENT, -EPERM.
 */
int seg_disown(struct seg_table *t, uint32_t owner, uint32_t id);
unsigned seg_count(const struct seg_table *t);
unsigned seg_ref_count(const struct seg_table *t);

#endif
