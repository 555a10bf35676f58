// SPDX-License-Identifier: MIT
/*
 * Emulated host IOMMU: VT-d second-level-like DMA remapping.
 *
 * Each domain owns a 4-level radix table (level 4 = root, 9 index bits per
 * level, 48-bit IOVA). Leaves are 4 KiB entries at level 1 or 2 MiB "large"
 * entries at level 2 (the VT-d PS bit). Tables live in host heap memory, not
 * in emulated RAM: the emulation never lets devices DMA into them, so there
 * is no reason to spend guest-visible memory on them.
 *
 * A page-table entry is a uint64_t:
 *   0                         empty
 *   paddr | prot [| LARGE]    leaf (prot is never empty, so a leaf is != 0)
 *   child pointer | TABLE     next-level table (calloc gives >= 16-byte
 *                             alignment, so the low 4 bits are free for tags)
 *
 * Thread-safety: none. Every entry point mutates or reads shared tables and
 * the fault ring; the caller (the fabric model) serialises all calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iommu.h"

#define PT_LEVELS	4
#define PT_BITS		9
#define PT_ENTRIES	(1u << PT_BITS)

#define PTE_R		((uint64_t)IOMMU_READ)
#define PTE_W		((uint64_t)IOMMU_WRITE)
#define PTE_PROT	(PTE_R | PTE_W)
#define PTE_TABLE	0x4ull
#define PTE_LARGE	0x80ull
#define PTE_ADDR	(~(IOMMU_PAGE_4K - 1))
#define PTE_PTR		(~0xfull)

#define IOVA_LIMIT	(1ull << IOMMU_IOVA_BITS)

/*
 * How many leaves after the first one translate looks at to extend *contig.
 * Keeps a translation O(1) (at most 1 + 512 four-level walks) while still
 * letting a caller batch a physically contiguous 2 MiB run of 4 KiB pages,
 * or 1 GiB of 2 MiB pages, into one access.
 */
#define CONTIG_SCAN_MAX	512

_Static_assert(sizeof(void *) <= sizeof(uint64_t), "tagged table pointers need 64-bit entries");
_Static_assert(IOMMU_MAX_DOMAINS <= UINT16_MAX, "domain ids are stored as uint16_t");
_Static_assert(12 + PT_LEVELS * PT_BITS == IOMMU_IOVA_BITS, "table geometry vs IOVA width");

struct pt {
	uint64_t e[PT_ENTRIES];
	unsigned nr;			/* non-empty entries, for pruning */
};

struct iommu_dom {
	bool used;
	uint32_t nr_rids;		/* attached requesters, for -EBUSY */
	struct pt *root;		/* allocated lazily by the first map */
	uint64_t n4k, n2m;		/* leaf counts */
};

struct fab_iommu {
	bool enabled;
	iommu_changed_fn changed;
	void *changed_arg;
	unsigned alloc_fail;		/* test hook: countdown to a failed alloc */
	unsigned nr_tables;		/* page tables allocated, <= IOMMU_MAX_TABLES */
	uint64_t nr_faults;
	struct iommu_fault faults[IOMMU_FAULT_LOG];
	iommu_fault_fn fault_fn;	/* iommu_set_fault_hook */
	void *fault_arg;
	struct iommu_dom doms[IOMMU_MAX_DOMAINS + 1];	/* [0] unused */
	uint16_t rid_dom[1u << 16];	/* requester id -> domain, 0 = none */
};

static unsigned lvl_shift(int level)
{
	return 12 + PT_BITS * (unsigned)(level - 1);
}

static uint64_t lvl_span(int level)
{
	return 1ull << lvl_shift(level);
}

static unsigned lvl_index(uint64_t iova, int level)
{
	return (unsigned)(iova >> lvl_shift(level)) & (PT_ENTRIES - 1);
}

static bool pte_is_table(uint64_t e)
{
	return e & PTE_TABLE;
}

static bool pte_is_leaf(uint64_t e)
{
	return e && !(e & PTE_TABLE);
}

static struct pt *pte_table(uint64_t e)
{
	return (struct pt *)(uintptr_t)(e & PTE_PTR);
}

static uint64_t pte_mk_table(struct pt *t)
{
	return (uint64_t)(uintptr_t)t | PTE_TABLE;
}

/* End of the level-sized chunk holding addr, clipped to end. */
static uint64_t chunk_end(uint64_t addr, uint64_t end, int level)
{
	uint64_t next = (addr & ~(lvl_span(level) - 1)) + lvl_span(level);

	return next < end ? next : end;
}

static void notify(struct fab_iommu *mmu)
{
	if (mmu->changed)
		mmu->changed(mmu->changed_arg);
}

/*
 * Tables come out of a budget: a map of a huge range in 4 KiB pages (one
 * table per 2 MiB) must fail with -ENOMEM, not take the daemon's memory.
 */
static struct pt *pt_alloc(struct fab_iommu *mmu)
{
	struct pt *t;

	if (mmu->alloc_fail && --mmu->alloc_fail == 0)
		return NULL;
	if (mmu->nr_tables >= IOMMU_MAX_TABLES)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t)
		mmu->nr_tables++;
	return t;
}

static void pt_free(struct fab_iommu *mmu, struct pt *t, int level)
{
	if (!t)
		return;
	if (level > 1) {
		for (unsigned i = 0; i < PT_ENTRIES; i++)
			if (pte_is_table(t->e[i]))
				pt_free(mmu, pte_table(t->e[i]), level - 1);
	}
	free(t);
	mmu->nr_tables--;
}

static struct iommu_dom *dom_get(const struct fab_iommu *mmu, uint32_t dom)
{
	if (dom == 0 || dom > IOMMU_MAX_DOMAINS || !mmu->doms[dom].used)
		return NULL;
	return (struct iommu_dom *)&mmu->doms[dom];
}

/* Leaf entry covering iova, or 0; *level gets the leaf's level. */
static uint64_t pt_lookup(const struct pt *t, uint64_t iova, int *level)
{
	for (int l = PT_LEVELS; t && l >= 1; l--) {
		uint64_t e = t->e[lvl_index(iova, l)];

		if (!pte_is_table(e)) {
			*level = l;
			return e;
		}
		t = pte_table(e);
	}
	return 0;
}

/* Is any page in [start, end) mapped? The range lies inside t's coverage. */
static bool pt_busy(const struct pt *t, int level, uint64_t start, uint64_t end)
{
	uint64_t addr = start, next;

	for (unsigned i = 0; i < PT_ENTRIES && addr < end; i++, addr = next) {
		uint64_t e = t->e[lvl_index(addr, level)];

		next = chunk_end(addr, end, level);
		if (pte_is_leaf(e))
			return true;
		if (pte_is_table(e) && pt_busy(pte_table(e), level - 1, addr, next))
			return true;
	}
	return false;
}

static void leaf_set(struct iommu_dom *d, struct pt *t, unsigned idx, uint64_t e)
{
	t->e[idx] = e;
	t->nr++;
	if (e & PTE_LARGE)
		d->n2m++;
	else
		d->n4k++;
}

static void leaf_clear(struct iommu_dom *d, struct pt *t, unsigned idx)
{
	if (t->e[idx] & PTE_LARGE)
		d->n2m--;
	else
		d->n4k--;
	t->e[idx] = 0;
	t->nr--;
}

/*
 * Fill [start, end) -> pa.. under t, which the caller checked to be empty.
 * On -ENOMEM the partial work is left for the caller's rollback.
 */
static int pt_map(struct fab_iommu *mmu, struct iommu_dom *d, struct pt *t, int level,
		  uint64_t start, uint64_t end, uint64_t pa, uint64_t prot)
{
	uint64_t addr = start, next;

	for (unsigned i = 0; i < PT_ENTRIES && addr < end; i++, addr = next) {
		unsigned idx = lvl_index(addr, level);
		uint64_t cpa = pa + (addr - start);
		struct pt *child;
		int rc;

		next = chunk_end(addr, end, level);
		if (level == 1) {
			leaf_set(d, t, idx, cpa | prot);
			continue;
		}
		if (level == 2 && next - addr == IOMMU_PAGE_2M && !(cpa & (IOMMU_PAGE_2M - 1))) {
			leaf_set(d, t, idx, cpa | prot | PTE_LARGE);
			continue;
		}
		if (!t->e[idx]) {
			child = pt_alloc(mmu);
			if (!child)
				return -ENOMEM;
			t->e[idx] = pte_mk_table(child);
			t->nr++;
		}
		rc = pt_map(mmu, d, pte_table(t->e[idx]), level - 1, addr, next, cpa, prot);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Remove every leaf in [start, end) and free tables left empty (including
 * ones a failed map allocated but never filled). Large leaves crossing the
 * range boundary must have been split beforehand; so this cannot fail.
 */
static void pt_unmap(struct fab_iommu *mmu, struct iommu_dom *d, struct pt *t, int level,
		     uint64_t start, uint64_t end)
{
	uint64_t addr = start, next;

	for (unsigned i = 0; i < PT_ENTRIES && addr < end; i++, addr = next) {
		unsigned idx = lvl_index(addr, level);
		uint64_t e = t->e[idx];
		struct pt *child;

		next = chunk_end(addr, end, level);
		if (pte_is_leaf(e)) {
			leaf_clear(d, t, idx);
			continue;
		}
		if (!e)
			continue;
		child = pte_table(e);
		pt_unmap(mmu, d, child, level - 1, addr, next);
		if (!child->nr) {
			free(child);
			mmu->nr_tables--;
			t->e[idx] = 0;
			t->nr--;
		}
	}
}

/*
 * If addr falls strictly inside a 2 MiB leaf, replace the leaf by a table of
 * 512 equivalent 4 KiB leaves. Translations are unchanged by this, so a
 * failure after an earlier successful split leaves the domain consistent.
 */
static int pt_split_at(struct fab_iommu *mmu, struct iommu_dom *d, uint64_t addr)
{
	struct pt *t = d->root, *leaves;
	uint64_t e, base;
	unsigned idx;

	if (!(addr & (IOMMU_PAGE_2M - 1)) || addr >= IOVA_LIMIT)
		return 0;
	for (int l = PT_LEVELS; l > 2; l--) {
		e = t ? t->e[lvl_index(addr, l)] : 0;
		if (!pte_is_table(e))
			return 0;
		t = pte_table(e);
	}
	idx = lvl_index(addr, 2);
	e = t->e[idx];
	if (!pte_is_leaf(e))
		return 0;
	leaves = pt_alloc(mmu);
	if (!leaves)
		return -ENOMEM;
	base = e & PTE_ADDR;
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		leaves->e[i] = (base + i * IOMMU_PAGE_4K) | (e & PTE_PROT);
	leaves->nr = PT_ENTRIES;
	t->e[idx] = pte_mk_table(leaves);
	d->n2m--;
	d->n4k += PT_ENTRIES;
	return 0;
}

/* Common argument checks for map/unmap: alignment, then address width. */
static int check_range(uint64_t iova, uint64_t size)
{
	if (!size || ((iova | size) & (IOMMU_PAGE_4K - 1)))
		return -EINVAL;
	if (iova >= IOVA_LIMIT || size > IOVA_LIMIT - iova)
		return -ERANGE;
	return 0;
}

static void record_fault(struct fab_iommu *mmu, uint16_t rid, uint64_t iova, bool write,
			 uint32_t dom, enum iommu_fault_reason reason)
{
	struct iommu_fault *f = &mmu->faults[mmu->nr_faults % IOMMU_FAULT_LOG];

	f->rid = rid;
	f->write = write;
	f->reason = (uint8_t)reason;
	f->domain = dom;
	f->iova = iova;
	f->seq = ++mmu->nr_faults;
	if (mmu->fault_fn)
		mmu->fault_fn(mmu->fault_arg, f);
}

void iommu_set_fault_hook(struct fab_iommu *mmu, iommu_fault_fn fn, void *arg)
{
	mmu->fault_fn = fn;
	mmu->fault_arg = arg;
}

struct fab_iommu *iommu_create(bool enabled, iommu_changed_fn changed, void *arg)
{
	struct fab_iommu *mmu = calloc(1, sizeof(*mmu));

	if (!mmu)
		return NULL;
	mmu->enabled = enabled;
	mmu->changed = changed;
	mmu->changed_arg = arg;
	return mmu;
}

void iommu_destroy(struct fab_iommu *mmu)
{
	if (!mmu)
		return;
	for (uint32_t i = 1; i <= IOMMU_MAX_DOMAINS; i++)
		pt_free(mmu, mmu->doms[i].root, PT_LEVELS);
	free(mmu);
}

bool iommu_enabled(const struct fab_iommu *mmu)
{
	return mmu->enabled;
}

/* Lowest free id, so ids stay small and reuse is predictable in tests. */
int iommu_domain_alloc(struct fab_iommu *mmu)
{
	for (uint32_t i = 1; i <= IOMMU_MAX_DOMAINS; i++) {
		if (!mmu->doms[i].used) {
			memset(&mmu->doms[i], 0, sizeof(mmu->doms[i]));
			mmu->doms[i].used = true;
			return (int)i;
		}
	}
	return -ENOSPC;
}

int iommu_domain_free(struct fab_iommu *mmu, uint32_t dom)
{
	struct iommu_dom *d = dom_get(mmu, dom);

	if (!d)
		return -ENOENT;
	if (d->nr_rids)
		return -EBUSY;
	pt_free(mmu, d->root, PT_LEVELS);
	memset(d, 0, sizeof(*d));
	notify(mmu);
	return 0;
}

int iommu_attach(struct fab_iommu *mmu, uint16_t rid, uint32_t dom)
{
	struct iommu_dom *d = dom_get(mmu, dom);
	uint16_t old = mmu->rid_dom[rid];

	if (!d)
		return -ENOENT;
	if (old)
		mmu->doms[old].nr_rids--;
	mmu->rid_dom[rid] = (uint16_t)dom;
	d->nr_rids++;
	notify(mmu);
	return 0;
}

int iommu_detach(struct fab_iommu *mmu, uint16_t rid)
{
	uint16_t old = mmu->rid_dom[rid];

	if (!old)
		return -ENOENT;
	mmu->doms[old].nr_rids--;
	mmu->rid_dom[rid] = 0;
	notify(mmu);
	return 0;
}

uint32_t iommu_domain_of(const struct fab_iommu *mmu, uint16_t rid)
{
	return mmu->rid_dom[rid];
}

/*
 * Argument errors take precedence over an unknown domain, so -EINVAL/-ERANGE
 * describe the call itself and -ENOENT the state it met.
 */
int iommu_map(struct fab_iommu *mmu, uint32_t dom, uint64_t iova, uint64_t paddr,
	      uint64_t size, unsigned prot)
{
	struct iommu_dom *d;
	int rc;

	if (!prot || (prot & ~(unsigned)PTE_PROT) || (paddr & (IOMMU_PAGE_4K - 1)))
		return -EINVAL;
	rc = check_range(iova, size);
	if (rc)
		return rc;
	if (size - 1 > UINT64_MAX - paddr)
		return -ERANGE;
	d = dom_get(mmu, dom);
	if (!d)
		return -ENOENT;
	if (!d->root) {
		d->root = pt_alloc(mmu);
		if (!d->root)
			return -ENOMEM;
	}
	if (pt_busy(d->root, PT_LEVELS, iova, iova + size))
		return -EEXIST;
	rc = pt_map(mmu, d, d->root, PT_LEVELS, iova, iova + size, paddr, prot);
	if (rc) {
		/* The range was empty, so unmapping it removes exactly our work. */
		pt_unmap(mmu, d, d->root, PT_LEVELS, iova, iova + size);
		return rc;
	}
	notify(mmu);
	return 0;
}

int iommu_unmap(struct fab_iommu *mmu, uint32_t dom, uint64_t iova, uint64_t size)
{
	struct iommu_dom *d;
	int rc;

	rc = check_range(iova, size);
	if (rc)
		return rc;
	d = dom_get(mmu, dom);
	if (!d)
		return -ENOENT;
	if (!d->root || !pt_busy(d->root, PT_LEVELS, iova, iova + size))
		return -ENOENT;
	/* Split both edges before removing anything so -ENOMEM changes nothing visible. */
	rc = pt_split_at(mmu, d, iova);
	if (!rc)
		rc = pt_split_at(mmu, d, iova + size);
	if (rc)
		return rc;
	pt_unmap(mmu, d, d->root, PT_LEVELS, iova, iova + size);
	notify(mmu);
	return 0;
}

/* Bytes from iova translated contiguously by the leaf e and its successors. */
static uint64_t leaf_contig(const struct pt *root, uint64_t iova, uint64_t e, int level)
{
	uint64_t span = lvl_span(level);
	uint64_t next_iova = (iova & ~(span - 1)) + span;
	uint64_t next_pa = (e & PTE_ADDR) + span;
	uint64_t contig = next_iova - iova;

	for (unsigned i = 0; i < CONTIG_SCAN_MAX && next_iova < IOVA_LIMIT; i++) {
		int nl = 0;
		uint64_t ne = pt_lookup(root, next_iova, &nl);

		if (!pte_is_leaf(ne) || (ne & PTE_PROT) != (e & PTE_PROT) ||
		    (ne & PTE_ADDR) != next_pa)
			break;
		contig += lvl_span(nl);
		next_iova += lvl_span(nl);
		next_pa += lvl_span(nl);
	}
	return contig;
}

int iommu_translate(struct fab_iommu *mmu, uint16_t rid, uint64_t iova, bool write,
		    uint64_t *paddr, uint64_t *contig, enum iommu_fault_reason *reason)
{
	enum iommu_fault_reason why;
	uint32_t dom;
	struct iommu_dom *d;
	uint64_t e = 0;
	int level = 0;

	if (!mmu->enabled) {
		*paddr = iova;
		*contig = UINT64_MAX - iova;
		return 0;
	}
	dom = mmu->rid_dom[rid];
	d = dom_get(mmu, dom);
	if (!d) {
		dom = 0;
		why = IOMMU_FAULT_NO_DOMAIN;
	} else if (iova >= IOVA_LIMIT) {
		why = IOMMU_FAULT_ADDR_WIDTH;
	} else {
		e = d->root ? pt_lookup(d->root, iova, &level) : 0;
		if (!pte_is_leaf(e))
			why = IOMMU_FAULT_NOT_PRESENT;
		else if (write && !(e & PTE_W))
			why = IOMMU_FAULT_WRITE_DENIED;
		else if (!write && !(e & PTE_R))
			why = IOMMU_FAULT_READ_DENIED;
		else
			goto ok;
	}
	record_fault(mmu, rid, iova, write, dom, why);
	if (reason)
		*reason = why;
	return -EFAULT;
ok:
	*paddr = (e & PTE_ADDR) + (iova & (lvl_span(level) - 1));
	*contig = leaf_contig(d->root, iova, e, level);
	return 0;
}

unsigned iommu_faults(const struct fab_iommu *mmu, struct iommu_fault *out, unsigned max)
{
	uint64_t n = mmu->nr_faults < IOMMU_FAULT_LOG ? mmu->nr_faults : IOMMU_FAULT_LOG;
	uint64_t first;

	if (n > max)
		n = max;
	first = mmu->nr_faults - n;	/* 0-based seq of the oldest one copied */
	for (uint64_t i = 0; i < n; i++)
		out[i] = mmu->faults[(first + i) % IOMMU_FAULT_LOG];
	return (unsigned)n;
}

uint64_t iommu_fault_count(const struct fab_iommu *mmu)
{
	return mmu->nr_faults;
}

int iommu_domain_stats(const struct fab_iommu *mmu, uint32_t dom, uint64_t *pages_4k,
		       uint64_t *pages_2m)
{
	const struct iommu_dom *d = dom_get(mmu, dom);

	if (!d)
		return -ENOENT;
	if (pages_4k)
		*pages_4k = d->n4k;
	if (pages_2m)
		*pages_2m = d->n2m;
	return 0;
}

const char *iommu_fault_reason_str(enum iommu_fault_reason r)
{
	switch (r) {
	case IOMMU_FAULT_NO_DOMAIN:
		return "no domain";
	case IOMMU_FAULT_NOT_PRESENT:
		return "not present";
	case IOMMU_FAULT_READ_DENIED:
		return "read denied";
	case IOMMU_FAULT_WRITE_DENIED:
		return "write denied";
	case IOMMU_FAULT_ADDR_WIDTH:
		return "address width";
	}
	return "unknown";
}

void iommu_fail_alloc_after(struct fab_iommu *mmu, unsigned nth)
{
	mmu->alloc_fail = nth;
}
