// SPDX-License-Identifier: MIT
/*
 * Host physical memory allocator and the extent set behind it. First fit
 * keeps the code small and, with coalescing on free, fragments no worse than
 * a buddy allocator for the few large, long-lived ranges the users here make
 * (DMA buffers, SISCI segments).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "physmem.h"

struct physmem {
	struct fab_host *h;
	struct pm_ranges free;
	uint64_t total;
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* ---------- extent set ---------- */

void pm_ranges_init(struct pm_ranges *r)
{
	memset(r, 0, sizeof(*r));
}

void pm_ranges_fini(struct pm_ranges *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* Room for one more extent, so that no operation fails half-way. */
static int reserve_one(struct pm_ranges *r)
{
	struct pm_extent *v;
	unsigned cap;

	if (r->n < r->cap)
		return 0;
	cap = r->cap ? r->cap * 2 : 16;
	if (cap < r->cap)
		return -ENOMEM;
	v = realloc(r->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->v = v;
	r->cap = cap;
	return 0;
}

static void insert_at(struct pm_ranges *r, unsigned i, uint64_t start, uint64_t end)
{
	memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(r->v[0]));
	r->v[i] = (struct pm_extent){ start, end };
	r->n++;
}

static void remove_at(struct pm_ranges *r, unsigned i)
{
	memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(r->v[0]));
	r->n--;
}

/* Index of the first extent starting at or after addr. */
static unsigned lower_bound(const struct pm_ranges *r, uint64_t addr)
{
	unsigned lo = 0, hi = r->n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (r->v[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int pm_ranges_add(struct pm_ranges *r, uint64_t start, uint64_t end)
{
	unsigned i;
	bool prev, next;

	if (start >= end)
		return -EINVAL;
	i = lower_bound(r, start);
	if ((i > 0 && r->v[i - 1].end > start) || (i < r->n && r->v[i].start < end))
		return -EINVAL;   /* already free: a double free or a bad range */
	prev = i > 0 && r->v[i - 1].end == start;
	next = i < r->n && r->v[i].start == end;
	if (prev && next) {
		r->v[i - 1].end = r->v[i].end;
		remove_at(r, i);
	} else if (prev) {
		r->v[i - 1].end = end;
	} else if (next) {
		r->v[i].start = start;
	} else {
		int rc = reserve_one(r);

		if (rc)
			return rc;
		insert_at(r, i, start, end);
	}
	r->free_bytes += end - start;
	return 0;
}

int pm_ranges_carve(struct pm_ranges *r, uint64_t start, uint64_t end)
{
	unsigned i;
	int rc;

	if (start >= end)
		return -EINVAL;
	/* At most one extent is split in two: make room before touching any. */
	rc = reserve_one(r);
	if (rc)
		return rc;
	i = lower_bound(r, start);
	if (i > 0)
		i--;
	while (i < r->n && r->v[i].start < end) {
		struct pm_extent *e = &r->v[i];
		uint64_t s = e->start > start ? e->start : start;
		uint64_t t = e->end < end ? e->end : end;

		if (s >= t) {
			i++;
			continue;
		}
		r->free_bytes -= t - s;
		if (s == e->start && t == e->end) {
			remove_at(r, i);
		} else if (s == e->start) {
			e->start = t;
			i++;
		} else if (t == e->end) {
			e->end = s;
			i++;
		} else {
			uint64_t old_end = e->end;

			e->end = s;
			insert_at(r, i + 1, t, old_end);
			break;   /* the carved range lay inside this one extent */
		}
	}
	return 0;
}

int pm_ranges_alloc(struct pm_ranges *r, uint64_t size, uint64_t align, uint64_t limit,
		    uint64_t *out)
{
	if (!size || !is_pow2(align))
		return -EINVAL;
	for (unsigned i = 0; i < r->n; i++) {
		struct pm_extent *e = &r->v[i];
		uint64_t a = align_up(e->start, align);

		if (a < e->start || a >= e->end || e->end - a < size)
			continue;
		if (a + size - 1 > limit)
			break;   /* sorted: every later extent lies higher still */
		if (a > e->start && a + size < e->end) {
			uint64_t old_end = e->end;
			int rc = reserve_one(r);

			if (rc)
				return rc;
			e = &r->v[i];   /* reserve_one may have moved the array */
			e->end = a;
			insert_at(r, i + 1, a + size, old_end);
		} else if (a > e->start) {
			e->end = a;
		} else if (a + size < e->end) {
			e->start = a + size;
		} else {
			remove_at(r, i);
		}
		r->free_bytes -= size;
		*out = a;
		return 0;
	}
	return -ENOMEM;
}

/* ---------- host RAM ---------- */

static const uint64_t four_g = 1ull << 32;

int physmem_create(struct fab_host *h, struct physmem **out)
{
	struct physmem *pm = calloc(1, sizeof(*pm));
	int rc = 0;

	if (!pm)
		return -ENOMEM;
	pm->h = h;
	pm_ranges_init(&pm->free);
	/* Pages are whole: a RAM size that is not a page multiple loses its tail. */
	if (h->low_ram > PHYSMEM_RESERVED + PHYSMEM_PAGE)
		rc = pm_ranges_add(&pm->free, PHYSMEM_RESERVED, h->low_ram & ~(PHYSMEM_PAGE - 1));
	if (!rc && h->high_ram >= PHYSMEM_PAGE)
		rc = pm_ranges_add(&pm->free, four_g,
				   four_g + (h->high_ram & ~(PHYSMEM_PAGE - 1)));
	if (rc) {
		physmem_destroy(pm);
		return rc;
	}
	pm->total = pm->free.free_bytes;
	*out = pm;
	return 0;
}

void physmem_destroy(struct physmem *pm)
{
	if (!pm)
		return;
	pm_ranges_fini(&pm->free);
	free(pm);
}

int physmem_alloc(struct physmem *pm, uint64_t size, uint64_t align, uint64_t limit,
		  uint64_t *phys)
{
	int rc;

	if (!size || size > UINT64_MAX - PHYSMEM_PAGE || (align && !is_pow2(align)))
		return -EINVAL;
	size = align_up(size, PHYSMEM_PAGE);
	if (align < PHYSMEM_PAGE)
		align = PHYSMEM_PAGE;
	fab_host_lock(pm->h);
	rc = pm_ranges_alloc(&pm->free, size, align, limit, phys);
	fab_host_unlock(pm->h);
	return rc;
}

/* Whether [phys, phys + size) lies inside one managed RAM region. */
static bool managed(const struct physmem *pm, uint64_t phys, uint64_t size)
{
	const struct fab_host *h = pm->h;
	uint64_t end = phys + size;

	if (end < phys)
		return false;
	if (phys >= PHYSMEM_RESERVED && end <= h->low_ram)
		return true;
	return phys >= four_g && end - four_g <= h->high_ram;
}

/*
 * Freed pages go back to the host's RAM file as holes: the memory is given
 * back to the system (a sparse RAM memfd stays sparse), and free pages read
 * as zeros, which is what lets physmem_alloc hand out zeroed memory without
 * touching it. Where holes cannot be punched, the pages are zeroed instead.
 */
static void scrub(struct fab_host *h, uint64_t phys, uint64_t size)
{
	uint64_t off, contig;
	void *v;

	if (!fab_ram_offset(h, phys, &off, &contig) || contig < size)
		return;
	if (!fallocate(h->mems[0].fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		       (off_t)size))
		return;
	v = physmem_virt(h, phys, size);
	if (v)
		memset(v, 0, size);
}

int physmem_free(struct physmem *pm, uint64_t phys, uint64_t size)
{
	int rc;

	if (!size || size > UINT64_MAX - PHYSMEM_PAGE || (phys & (PHYSMEM_PAGE - 1)))
		return -EINVAL;
	size = align_up(size, PHYSMEM_PAGE);
	if (!managed(pm, phys, size))
		return -EINVAL;
	fab_host_lock(pm->h);
	rc = pm_ranges_add(&pm->free, phys, phys + size);
	if (!rc)
		scrub(pm->h, phys, size);
	fab_host_unlock(pm->h);
	return rc;
}

uint64_t physmem_avail(struct physmem *pm)
{
	uint64_t v;

	fab_host_lock(pm->h);
	v = pm->free.free_bytes;
	fab_host_unlock(pm->h);
	return v;
}

uint64_t physmem_total(const struct physmem *pm)
{
	return pm->total;
}

void *physmem_virt(struct fab_host *h, uint64_t phys, uint64_t len)
{
	uint64_t off, contig;
	uint8_t *base;

	/* RAM is memory object 0, created first by fab_host_create. */
	if (!len || h->nmems == 0 || !h->mems[0].is_ram)
		return NULL;
	if (!fab_ram_offset(h, phys, &off, &contig) || len > contig)
		return NULL;
	base = fab_mem_map(h, 0);
	return base ? base + off : NULL;
}
