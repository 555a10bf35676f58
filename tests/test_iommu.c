// SPDX-License-Identifier: MIT
/* Unit tests for the emulated host IOMMU (src/fabric/iommu.c). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/iommu.h"

#define K4	IOMMU_PAGE_4K
#define M2	IOMMU_PAGE_2M
#define RW	(IOMMU_READ | IOMMU_WRITE)

struct fixture {
	struct fab_iommu *mmu;
	unsigned changes;
	uint32_t dom;
};

static void on_change(void *arg)
{
	struct fixture *f = arg;

	f->changes++;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int d;

	assert_non_null(f);
	f->mmu = iommu_create(true, on_change, f);
	assert_non_null(f->mmu);
	d = iommu_domain_alloc(f->mmu);
	assert_int_equal(d, 1);
	f->dom = (uint32_t)d;
	assert_int_equal(iommu_attach(f->mmu, 0x100, f->dom), 0);
	f->changes = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	iommu_destroy(f->mmu);
	free(f);
	return 0;
}

static void expect_stats(struct fixture *f, uint64_t n4k, uint64_t n2m)
{
	uint64_t a = 99, b = 99;

	assert_int_equal(iommu_domain_stats(f->mmu, f->dom, &a, &b), 0);
	assert_int_equal(a, n4k);
	assert_int_equal(b, n2m);
}

static void expect_xlate(struct fixture *f, uint64_t iova, bool write, uint64_t pa,
			 uint64_t contig)
{
	uint64_t p = 0, c = 0;

	assert_int_equal(iommu_translate(f->mmu, 0x100, iova, write, &p, &c, NULL), 0);
	assert_int_equal(p, pa);
	assert_int_equal(c, contig);
}

static void expect_fault(struct fixture *f, uint16_t rid, uint64_t iova, bool write,
			 enum iommu_fault_reason why)
{
	enum iommu_fault_reason r = 0;
	uint64_t p, c;

	assert_int_equal(iommu_translate(f->mmu, rid, iova, write, &p, &c, &r), -EFAULT);
	assert_int_equal(r, why);
}

static void test_disabled_identity(void **state)
{
	struct fab_iommu *mmu = iommu_create(false, NULL, NULL);
	uint64_t p, c;

	(void)state;
	assert_non_null(mmu);
	assert_false(iommu_enabled(mmu));
	assert_int_equal(iommu_translate(mmu, 7, 0x1234, true, &p, &c, NULL), 0);
	assert_int_equal(p, 0x1234);
	assert_int_equal(c, UINT64_MAX - 0x1234);
	/* Beyond the IOVA width is still identity when remapping is off. */
	assert_int_equal(iommu_translate(mmu, 7, 1ull << 60, false, &p, &c, NULL), 0);
	assert_int_equal(p, 1ull << 60);
	assert_int_equal(c, UINT64_MAX - (1ull << 60));
	assert_int_equal(iommu_fault_count(mmu), 0);
	iommu_destroy(mmu);
	iommu_destroy(NULL);
}

static void test_no_domain(void **state)
{
	struct fixture *f = *state;
	struct iommu_fault fl[4];

	assert_true(iommu_enabled(f->mmu));
	expect_fault(f, 0x200, 0xabc000, true, IOMMU_FAULT_NO_DOMAIN);
	assert_int_equal(iommu_fault_count(f->mmu), 1);
	assert_int_equal(iommu_faults(f->mmu, fl, 4), 1);
	assert_int_equal(fl[0].rid, 0x200);
	assert_int_equal(fl[0].write, 1);
	assert_int_equal(fl[0].reason, IOMMU_FAULT_NO_DOMAIN);
	assert_int_equal(fl[0].domain, 0);
	assert_int_equal(fl[0].iova, 0xabc000);
	assert_int_equal(fl[0].seq, 1);
	assert_string_equal(iommu_fault_reason_str(IOMMU_FAULT_NO_DOMAIN), "no domain");
	assert_string_equal(iommu_fault_reason_str(0), "unknown");
}

static void test_not_present_and_width(void **state)
{
	struct fixture *f = *state;
	struct iommu_fault fl[4];
	uint64_t p, c;

	expect_fault(f, 0x100, 0x5000, false, IOMMU_FAULT_NOT_PRESENT);
	assert_int_equal(iommu_map(f->mmu, f->dom, 0x4000, 0x9000, K4, RW), 0);
	expect_fault(f, 0x100, 0x5000, false, IOMMU_FAULT_NOT_PRESENT);
	expect_fault(f, 0x100, 0x3fff, false, IOMMU_FAULT_NOT_PRESENT);
	expect_fault(f, 0x100, 1ull << 48, false, IOMMU_FAULT_ADDR_WIDTH);
	/* reason pointer is optional */
	assert_int_equal(iommu_translate(f->mmu, 0x100, 0, false, &p, &c, NULL), -EFAULT);
	assert_int_equal(iommu_fault_count(f->mmu), 5);
	assert_int_equal(iommu_faults(f->mmu, fl, 4), 4);
	assert_int_equal(fl[0].domain, f->dom);
	assert_int_equal(fl[0].seq, 2);
	assert_int_equal(fl[2].reason, IOMMU_FAULT_ADDR_WIDTH);
	assert_int_equal(fl[3].seq, 5);
}

static void test_permissions(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(iommu_map(f->mmu, f->dom, 0x10000, 0x80000, K4, IOMMU_READ), 0);
	assert_int_equal(iommu_map(f->mmu, f->dom, 0x11000, 0x90000, K4, IOMMU_WRITE), 0);
	expect_xlate(f, 0x10010, false, 0x80010, K4 - 0x10);
	expect_fault(f, 0x100, 0x10010, true, IOMMU_FAULT_WRITE_DENIED);
	expect_xlate(f, 0x11ff0, true, 0x90ff0, 0x10);
	expect_fault(f, 0x100, 0x11000, false, IOMMU_FAULT_READ_DENIED);
	assert_int_equal(iommu_fault_count(f->mmu), 2);
}

static void test_page_size_selection(void **state)
{
	struct fixture *f = *state;

	/* Both aligned, full 2M: one large page. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 0, 0x40000000, M2, RW), 0);
	expect_stats(f, 0, 1);
	expect_xlate(f, 0x1234, false, 0x40001234, M2 - 0x1234);
	/* 4M + 4K: two large pages and one 4K tail. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 4 * M2, 0x80000000, 2 * M2 + K4, RW), 0);
	expect_stats(f, 1, 3);
	/* iova aligned but paddr not: all 4K. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 8 * M2, 0x1000, M2, RW), 0);
	expect_stats(f, 513, 3);
	/* Unaligned range straddling 2M boundaries: 4K head, 2M middle, 4K tail. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 12 * M2 - K4, 12 * M2 - K4,
				   M2 + 2 * K4, RW), 0);
	expect_stats(f, 515, 4);
	expect_xlate(f, 12 * M2 + 5, false, 12 * M2 + 5, M2 + K4 - 5);
	/* Range crossing 1G and 512G table boundaries. */
	assert_int_equal(iommu_map(f->mmu, f->dom, (1ull << 39) - M2, (1ull << 39) - M2,
				   2 * M2, IOMMU_READ), 0);
	expect_stats(f, 515, 6);
	expect_xlate(f, (1ull << 39) - 8, false, (1ull << 39) - 8, M2 + 8);
	assert_int_equal(f->changes, 5);
}

static void test_contig(void **state)
{
	struct fixture *f = *state;
	uint64_t base = 0x200000000ull;

	/* Three pages physically contiguous, mapped by separate calls. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(iommu_map(f->mmu, f->dom, base + i * K4,
					   0x7000000 + i * K4, K4, RW), 0);
	/* Then an adjacent IOVA page that is physically discontiguous. */
	assert_int_equal(iommu_map(f->mmu, f->dom, base + 3 * K4, 0x9000000, K4, RW), 0);
	/* And one that is contiguous again but with other permissions. */
	assert_int_equal(iommu_map(f->mmu, f->dom, base + 4 * K4, 0x9001000, K4, IOMMU_READ), 0);
	expect_xlate(f, base + 0x100, false, 0x7000100, 3 * K4 - 0x100);
	expect_xlate(f, base + 2 * K4, true, 0x7002000, K4);
	expect_xlate(f, base + 3 * K4, false, 0x9000000, K4);
	expect_xlate(f, base + 4 * K4, false, 0x9001000, K4);

	/* 2M leaf followed by contiguous 4K pages extends across page sizes. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 0, 0x40000000, M2 + 2 * K4, RW), 0);
	expect_stats(f, 7, 1);
	expect_xlate(f, 0x10, false, 0x40000010, M2 + 2 * K4 - 0x10);
	/* Hole after the run stops it. */
	expect_xlate(f, M2 + K4, false, 0x40000000 + M2 + K4, K4);
}

static void test_contig_bound(void **state)
{
	struct fixture *f = *state;
	uint64_t pages = 1024;

	/* paddr not 2M aligned: 1024 4K leaves, all contiguous. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 0, K4, pages * K4, RW), 0);
	expect_stats(f, pages, 0);
	/* The scan looks at 512 leaves after the first; a lower bound, not a cut. */
	expect_xlate(f, 0x20, false, K4 + 0x20, 513 * K4 - 0x20);
	expect_xlate(f, 600 * K4, false, 601 * K4, 424 * K4);
}

static void test_unmap_split(void **state)
{
	struct fixture *f = *state;
	uint64_t a = 6 * M2;

	assert_int_equal(iommu_map(f->mmu, f->dom, a, 0x40000000, 2 * M2, RW), 0);
	expect_stats(f, 0, 2);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, a + 16 * K4, K4), 0);
	expect_stats(f, 511, 1);
	expect_fault(f, 0x100, a + 16 * K4, false, IOMMU_FAULT_NOT_PRESENT);
	expect_xlate(f, a, false, 0x40000000, 16 * K4);
	expect_xlate(f, a + 17 * K4, false, 0x40000000 + 17 * K4, 2 * M2 - 17 * K4);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, a + 16 * K4, K4), -ENOENT);
	/* Span the boundary: tail of the first 2M, head of the second. */
	assert_int_equal(iommu_unmap(f->mmu, f->dom, a + M2 - 4 * K4, 8 * K4), 0);
	expect_stats(f, 511 - 4 + 508, 0);
	expect_xlate(f, a + M2 + 4 * K4, true, 0x40000000 + M2 + 4 * K4, M2 - 4 * K4);
	/* Unmapping a range with holes removes the rest, tables are released. */
	assert_int_equal(iommu_unmap(f->mmu, f->dom, a, 2 * M2), 0);
	expect_stats(f, 0, 0);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, 0, 1ull << 48), -ENOENT);
	assert_int_equal(f->changes, 4);
}

static void test_eexist(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(iommu_map(f->mmu, f->dom, M2, 0x40000000, M2, RW), 0);
	assert_int_equal(iommu_map(f->mmu, f->dom, 4 * M2, 0x1000, K4, RW), 0);
	assert_int_equal(f->changes, 2);
	/* Overlaps only the last 4K page of a 2M leaf. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 2 * M2 - K4, 0x5000000, 3 * M2, RW), -EEXIST);
	/* Overlaps the lone 4K page at the far end. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 2 * M2, 0x5000000, 2 * M2 + K4, RW), -EEXIST);
	assert_int_equal(iommu_map(f->mmu, f->dom, 4 * M2, 0x5000000, K4, RW), -EEXIST);
	assert_int_equal(f->changes, 2);
	expect_stats(f, 1, 1);
	expect_fault(f, 0x100, 2 * M2, false, IOMMU_FAULT_NOT_PRESENT);
	expect_fault(f, 0x100, 3 * M2, false, IOMMU_FAULT_NOT_PRESENT);
	expect_xlate(f, 2 * M2 - K4, false, 0x40000000 + M2 - K4, K4);
	/* Exactly adjacent ranges are fine. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 2 * M2, 0x5000000, 2 * M2, RW), 0);
}

static void test_arg_errors(void **state)
{
	struct fixture *f = *state;
	struct fab_iommu *m = f->mmu;
	uint32_t d = f->dom;
	uint64_t top = 1ull << 48;

	assert_int_equal(iommu_map(m, d, 0x800, 0, K4, RW), -EINVAL);
	assert_int_equal(iommu_map(m, d, 0, 0x800, K4, RW), -EINVAL);
	assert_int_equal(iommu_map(m, d, 0, 0, 0x800, RW), -EINVAL);
	assert_int_equal(iommu_map(m, d, 0, 0, 0, RW), -EINVAL);
	assert_int_equal(iommu_map(m, d, 0, 0, K4, 0), -EINVAL);
	assert_int_equal(iommu_map(m, d, 0, 0, K4, 0x4), -EINVAL);
	assert_int_equal(iommu_map(m, d, top, 0, K4, RW), -ERANGE);
	assert_int_equal(iommu_map(m, d, top - K4, 0, 2 * K4, RW), -ERANGE);
	assert_int_equal(iommu_map(m, d, K4, 0, UINT64_MAX & ~(K4 - 1), RW), -ERANGE);
	assert_int_equal(iommu_map(m, d, 0, UINT64_MAX & ~(K4 - 1), 2 * K4, RW), -ERANGE);
	assert_int_equal(iommu_map(m, 0, 0, 0, K4, RW), -ENOENT);
	assert_int_equal(iommu_map(m, 7, 0, 0, K4, RW), -ENOENT);
	assert_int_equal(iommu_map(m, IOMMU_MAX_DOMAINS + 1, 0, 0, K4, RW), -ENOENT);
	assert_int_equal(iommu_unmap(m, d, 0x800, K4), -EINVAL);
	assert_int_equal(iommu_unmap(m, d, 0, 0), -EINVAL);
	assert_int_equal(iommu_unmap(m, d, top, K4), -ERANGE);
	assert_int_equal(iommu_unmap(m, 9, 0, K4), -ENOENT);
	assert_int_equal(iommu_unmap(m, d, 0, K4), -ENOENT);
	assert_int_equal(iommu_domain_free(m, 0), -ENOENT);
	assert_int_equal(iommu_domain_free(m, 5), -ENOENT);
	assert_int_equal(iommu_attach(m, 1, 5), -ENOENT);
	assert_int_equal(iommu_attach(m, 1, 0), -ENOENT);
	assert_int_equal(iommu_detach(m, 1), -ENOENT);
	assert_int_equal(iommu_domain_stats(m, 5, NULL, NULL), -ENOENT);
	assert_int_equal(iommu_domain_stats(m, d, NULL, NULL), 0);
	/* The highest page and a paddr ending at 2^64 are both legal. */
	assert_int_equal(iommu_map(m, d, top - K4, UINT64_MAX - K4 + 1, K4, RW), 0);
	expect_xlate(f, top - 1, true, UINT64_MAX, 1);
	assert_int_equal(f->changes, 1);
	assert_int_equal(iommu_domain_of(m, 1), 0);
}

static void test_domain_exhaustion(void **state)
{
	struct fixture *f = *state;
	int d;

	for (uint32_t i = 2; i <= IOMMU_MAX_DOMAINS; i++)
		assert_int_equal(iommu_domain_alloc(f->mmu), (int)i);
	assert_int_equal(iommu_domain_alloc(f->mmu), -ENOSPC);
	assert_int_equal(iommu_map(f->mmu, 500, 0, 0, M2, RW), 0);
	assert_int_equal(iommu_domain_free(f->mmu, 500), 0);
	assert_int_equal(iommu_domain_free(f->mmu, 500), -ENOENT);
	d = iommu_domain_alloc(f->mmu);
	assert_int_equal(d, 500);
	/* A reused id starts empty. */
	assert_int_equal(iommu_unmap(f->mmu, 500, 0, M2), -ENOENT);
	assert_int_equal(iommu_domain_alloc(f->mmu), -ENOSPC);
	assert_int_equal(iommu_domain_alloc(f->mmu), -ENOSPC);
}

static void test_domain_busy_and_attach(void **state)
{
	struct fixture *f = *state;
	int d2 = iommu_domain_alloc(f->mmu);

	assert_int_equal(d2, 2);
	assert_int_equal(iommu_map(f->mmu, f->dom, 0, 0x1000000, M2, RW), 0);
	assert_int_equal(iommu_map(f->mmu, (uint32_t)d2, 0, 0x3000000, K4, RW), 0);
	assert_int_equal(iommu_domain_free(f->mmu, f->dom), -EBUSY);
	assert_int_equal(iommu_attach(f->mmu, 0x101, f->dom), 0);
	/* Replace: 0x100 moves to d2; dom 1 stays busy because of 0x101. */
	assert_int_equal(iommu_attach(f->mmu, 0x100, (uint32_t)d2), 0);
	assert_int_equal(iommu_domain_of(f->mmu, 0x100), (uint32_t)d2);
	expect_xlate(f, 0x10, false, 0x3000010, K4 - 0x10);
	assert_int_equal(iommu_domain_free(f->mmu, f->dom), -EBUSY);
	assert_int_equal(iommu_detach(f->mmu, 0x101), 0);
	assert_int_equal(iommu_detach(f->mmu, 0x101), -ENOENT);
	assert_int_equal(iommu_domain_of(f->mmu, 0x101), 0);
	/* Re-attaching to the same domain does not double-count. */
	assert_int_equal(iommu_attach(f->mmu, 0x100, (uint32_t)d2), 0);
	assert_int_equal(iommu_detach(f->mmu, 0x100), 0);
	assert_int_equal(iommu_domain_free(f->mmu, (uint32_t)d2), 0);
	assert_int_equal(iommu_domain_free(f->mmu, f->dom), 0);
	expect_fault(f, 0x100, 0, false, IOMMU_FAULT_NO_DOMAIN);
	/* map x2, attach x3, detach x2, free x2 */
	assert_int_equal(f->changes, 9);
}

static void test_fault_ring(void **state)
{
	struct fixture *f = *state;
	struct iommu_fault fl[IOMMU_FAULT_LOG + 8];
	unsigned n;

	for (uint64_t i = 1; i <= 100; i++)
		expect_fault(f, (uint16_t)(0x2000 + i), i * K4, i & 1, IOMMU_FAULT_NO_DOMAIN);
	assert_int_equal(iommu_fault_count(f->mmu), 100);
	n = iommu_faults(f->mmu, fl, IOMMU_FAULT_LOG + 8);
	assert_int_equal(n, IOMMU_FAULT_LOG);
	for (unsigned i = 0; i < n; i++) {
		uint64_t seq = 100 - IOMMU_FAULT_LOG + 1 + i;

		assert_int_equal(fl[i].seq, seq);
		assert_int_equal(fl[i].iova, seq * K4);
		assert_int_equal(fl[i].rid, 0x2000 + seq);
		assert_int_equal(fl[i].write, seq & 1);
	}
	n = iommu_faults(f->mmu, fl, 10);
	assert_int_equal(n, 10);
	assert_int_equal(fl[0].seq, 91);
	assert_int_equal(fl[9].seq, 100);
	assert_int_equal(iommu_faults(f->mmu, fl, 0), 0);
	assert_int_equal(f->changes, 0);
}

static void test_changed_callback(void **state)
{
	struct fixture *f = *state;
	struct fab_iommu *quiet = iommu_create(true, NULL, NULL);
	int d;

	assert_int_equal(iommu_map(f->mmu, f->dom, 0, 0, 4 * M2 + 3 * K4, RW), 0);
	assert_int_equal(f->changes, 1);
	assert_int_equal(iommu_map(f->mmu, f->dom, 0, 0, K4, RW), -EEXIST);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, M2, 3 * M2), 0);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, M2, M2), -ENOENT);
	assert_int_equal(f->changes, 2);
	d = iommu_domain_alloc(f->mmu);
	assert_int_equal(f->changes, 2);	/* an empty domain changes nothing */
	assert_int_equal(iommu_attach(f->mmu, 3, (uint32_t)d), 0);
	assert_int_equal(iommu_detach(f->mmu, 3), 0);
	assert_int_equal(iommu_domain_free(f->mmu, (uint32_t)d), 0);
	assert_int_equal(f->changes, 5);

	/* A NULL callback is allowed everywhere. */
	assert_non_null(quiet);
	d = iommu_domain_alloc(quiet);
	assert_int_equal(iommu_map(quiet, (uint32_t)d, 0, 0, K4, RW), 0);
	assert_int_equal(iommu_attach(quiet, 1, (uint32_t)d), 0);
	assert_int_equal(iommu_unmap(quiet, (uint32_t)d, 0, K4), 0);
	assert_int_equal(iommu_detach(quiet, 1), 0);
	assert_int_equal(iommu_domain_free(quiet, (uint32_t)d), 0);
	iommu_destroy(quiet);
}

/* Every allocation of a map may fail; each failure must leave nothing behind. */
static void test_map_rollback(void **state)
{
	struct fixture *f = *state;
	/* Crosses a 512G boundary, mixes 4K and 2M leaves: several tables. */
	uint64_t iova = (1ull << 39) - M2 - 3 * K4, size = 2 * M2 + 8 * K4;
	unsigned nth;
	int rc = -ENOMEM;

	assert_int_equal(iommu_map(f->mmu, f->dom, 0, 0, K4, RW), 0);
	f->changes = 0;
	for (nth = 1; nth < 32 && rc == -ENOMEM; nth++) {
		iommu_fail_alloc_after(f->mmu, nth);
		rc = iommu_map(f->mmu, f->dom, iova, iova, size, RW);
		if (rc == -ENOMEM) {
			expect_stats(f, 1, 0);
			assert_int_equal(f->changes, 0);
			expect_fault(f, 0x100, iova + size - K4, false, IOMMU_FAULT_NOT_PRESENT);
			expect_fault(f, 0x100, iova, false, IOMMU_FAULT_NOT_PRESENT);
		}
	}
	assert_int_equal(rc, 0);
	assert_true(nth > 4);
	assert_int_equal(f->changes, 1);
	expect_stats(f, 1 + 3 + 5, 2);
	iommu_fail_alloc_after(f->mmu, 0);

	/* A split that cannot allocate fails without visible change. */
	iommu_fail_alloc_after(f->mmu, 1);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, (1ull << 39) - M2 + K4, K4), -ENOMEM);
	expect_stats(f, 9, 2);
	expect_xlate(f, (1ull << 39) - M2 + K4, false, (1ull << 39) - M2 + K4,
		     2 * M2 + 4 * K4);
	assert_int_equal(f->changes, 1);
	/* Second edge fails after the first split: translations still intact. */
	iommu_fail_alloc_after(f->mmu, 2);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, (1ull << 39) - K4, 2 * K4), -ENOMEM);
	expect_stats(f, 9 + 512, 1);
	expect_xlate(f, (1ull << 39) - K4, false, (1ull << 39) - K4, M2 + 6 * K4);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, (1ull << 39) - K4, 2 * K4), 0);
	expect_stats(f, 9 + 512 + 512 - 2, 0);
}

/*
 * Randomised comparison with a flat per-page reference model in a 32 MiB
 * window that straddles a 512G (root-level) boundary.
 */
#define RND_PAGES	(16 * M2 / K4)
#define RND_BASE	((1ull << 39) - 8 * M2)

struct ref_page {
	uint64_t pa;		/* 0 = unmapped (pa of mapped pages is never 0) */
	unsigned prot;
};

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

static void rnd_range(uint64_t *first, uint64_t *n)
{
	if (rnd(2)) {
		*first = rnd(RND_PAGES / 512) * 512;
		*n = (1 + rnd(3)) * 512;
	} else {
		*first = rnd(RND_PAGES);
		*n = 1 + rnd(rnd(4) ? 8 : 1100);
	}
	if (*first + *n > RND_PAGES)
		*n = RND_PAGES - *first;
}

static uint64_t ref_contig(const struct ref_page *ref, uint64_t pg, uint64_t off)
{
	uint64_t n = 1;

	while (pg + n < RND_PAGES && ref[pg + n].pa == ref[pg].pa + n * K4 &&
	       ref[pg + n].prot == ref[pg].prot)
		n++;
	return n * K4 - off;
}

static void rnd_check(struct fixture *f, const struct ref_page *ref, uint64_t pg)
{
	uint64_t off = rnd(K4), iova = RND_BASE + pg * K4 + off, p = 0, c = 0, rc_contig;
	enum iommu_fault_reason r = 0;
	bool write = !(ref[pg].prot & IOMMU_READ);
	int rc = iommu_translate(f->mmu, 0x100, iova, write, &p, &c, &r);

	if (!ref[pg].pa) {
		assert_int_equal(rc, -EFAULT);
		assert_int_equal(r, IOMMU_FAULT_NOT_PRESENT);
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(p, ref[pg].pa + off);
	/*
	 * Never beyond what really is contiguous; and the scan only stops at a
	 * discontinuity or after 512 further leaves of at least 4K each.
	 */
	rc_contig = ref_contig(ref, pg, off);
	assert_true(c <= rc_contig);
	assert_true(c >= (rc_contig < 513 * K4 - off ? rc_contig : 513 * K4 - off));
	/* The other direction is allowed exactly when prot is RW. */
	rc = iommu_translate(f->mmu, 0x100, iova, !write, &p, &c, &r);
	if (ref[pg].prot == RW)
		assert_int_equal(rc, 0);
	else
		assert_int_equal(r, write ? IOMMU_FAULT_READ_DENIED : IOMMU_FAULT_WRITE_DENIED);
}

static void rnd_op(struct fixture *f, struct ref_page *ref, uint64_t *mapped)
{
	uint64_t first, n, busy = 0, pa;
	unsigned prot = 1 + (unsigned)rnd(3);
	int rc;

	rnd_range(&first, &n);
	for (uint64_t i = 0; i < n; i++)
		busy += ref[first + i].pa != 0;
	if (rnd(5) < 3) {
		/* Physical side: often 2M aligned to get large pages, sometimes not. */
		pa = (1 + rnd(1000)) * (rnd(3) ? M2 : K4);
		if (!rnd(4))
			pa = RND_BASE + first * K4;
		rc = iommu_map(f->mmu, f->dom, RND_BASE + first * K4, pa, n * K4, prot);
		assert_int_equal(rc, busy ? -EEXIST : 0);
		for (uint64_t i = 0; !busy && i < n; i++) {
			ref[first + i].pa = pa + i * K4;
			ref[first + i].prot = prot;
		}
		*mapped += busy ? 0 : n;
	} else {
		rc = iommu_unmap(f->mmu, f->dom, RND_BASE + first * K4, n * K4);
		assert_int_equal(rc, busy ? 0 : -ENOENT);
		memset(&ref[first], 0, n * sizeof(*ref));
		*mapped -= busy;
	}
}

static void test_randomized(void **state)
{
	struct fixture *f = *state;
	static struct ref_page ref[RND_PAGES];	/* static: no leak when an assert longjmps */
	uint64_t mapped = 0, n4k, n2m;

	memset(ref, 0, sizeof(ref));
	for (int op = 0; op < 4000; op++) {
		rnd_op(f, ref, &mapped);
		assert_int_equal(iommu_domain_stats(f->mmu, f->dom, &n4k, &n2m), 0);
		assert_int_equal(n4k + 512 * n2m, mapped);
		for (int k = 0; k < 16; k++)
			rnd_check(f, ref, rnd(RND_PAGES));
		if (op % 500 == 0)
			for (uint64_t pg = 0; pg < RND_PAGES; pg++)
				rnd_check(f, ref, pg);
	}
	/* Nothing outside the window was ever touched. */
	expect_fault(f, 0x100, RND_BASE - 1, false, IOMMU_FAULT_NOT_PRESENT);
	expect_fault(f, 0x100, RND_BASE + RND_PAGES * K4, false, IOMMU_FAULT_NOT_PRESENT);
	/* Clear everything; tables must be released (ASan/valgrind would tell). */
	if (mapped)
		assert_int_equal(iommu_unmap(f->mmu, f->dom, RND_BASE, RND_PAGES * K4), 0);
	assert_int_equal(iommu_domain_stats(f->mmu, f->dom, &n4k, &n2m), 0);
	assert_int_equal(n4k + n2m, 0);
}

/*
 * A map that would need more than IOMMU_MAX_TABLES page tables (a huge range
 * in 4 KiB pages: iova and paddr not 2 MiB co-aligned) fails with -ENOMEM and
 * leaves nothing behind; the budget is whole again afterwards.
 */
static void test_table_budget(void **state)
{
	struct fixture *f = *state;
	uint64_t huge = (uint64_t)(IOMMU_MAX_TABLES + 16) * M2;

	assert_int_equal(iommu_map(f->mmu, f->dom, 0, K4, huge, RW), -ENOMEM);
	expect_stats(f, 0, 0);
	assert_int_equal(f->changes, 0);
	expect_fault(f, 0x100, 0, false, IOMMU_FAULT_NOT_PRESENT);
	/* The same size in 2 MiB pages needs few tables. */
	assert_int_equal(iommu_map(f->mmu, f->dom, 0, 0, huge, RW), 0);
	expect_stats(f, 0, IOMMU_MAX_TABLES + 16);
	assert_int_equal(iommu_unmap(f->mmu, f->dom, 0, huge), 0);
	assert_int_equal(iommu_map(f->mmu, f->dom, 0, K4, 64 * M2, RW), 0);
	expect_stats(f, 64 * 512, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disabled_identity),
		T(test_no_domain),
		T(test_not_present_and_width),
		T(test_permissions),
		T(test_page_size_selection),
		T(test_contig),
		T(test_contig_bound),
		T(test_unmap_split),
		T(test_eexist),
		T(test_arg_errors),
		T(test_domain_exhaustion),
		T(test_domain_busy_and_attach),
		T(test_fault_ring),
		T(test_changed_callback),
		T(test_map_rollback),
		T(test_table_budget),
		T(test_randomized),
	};

	return cmocka_run_group_tests_name("iommu", tests, NULL, NULL);
}
