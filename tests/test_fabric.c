// SPDX-License-Identifier: MIT
/* Config space, enumeration and BAR assignment of the emulated hosts. */
#include <errno.h>
#include <inttypes.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"
#include "fabric/pcidev.h"

static void test_cfg_masks(void **state)
{
	struct tcluster tc;
	struct fab_host *h;
	struct fab_func *nvme;
	uint16_t bdf;
	uint32_t v;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 1);
	nvme = tc_fn(&tc, 1, "nvme0");
	bdf = fab_func_bdf(nvme);
	/* Read-only identity. */
	assert_int_equal(fab_cfg_access_write(h, bdf, PCI_VENDOR_ID, 2, 0x1234), 0);
	assert_int_equal(fab_cfg_access_read(h, bdf, PCI_VENDOR_ID, 2, &v), 0);
	assert_int_equal(v, 0x534d);
	assert_int_equal(fab_cfg_access_read(h, bdf, PCI_CLASS_REVISION, 4, &v), 0);
	assert_int_equal(v >> 8, 0x010802);
	/* BAR sizing: all-ones reads back the size mask (16 KiB, 64-bit). */
	assert_int_equal(fab_cfg_access_write(h, bdf, PCI_BASE_ADDRESS_0, 4, 0xffffffff), 0);
	assert_int_equal(fab_cfg_access_read(h, bdf, PCI_BASE_ADDRESS_0, 4, &v), 0);
	assert_int_equal(v, 0xffffc004);
	/* Misaligned and out-of-range accesses are refused. */
	assert_int_equal(fab_cfg_access_read(h, bdf, 0x3, 2, &v), -EINVAL);
	assert_int_equal(fab_cfg_access_read(h, bdf, 4096, 1, &v), -EINVAL);
	assert_int_equal(fab_cfg_access_read(h, bdf, 0x10, 3, &v), -EINVAL);
	/* Nobody at this BDF: master abort reads all-ones. */
	assert_int_equal(fab_cfg_access_read(h, FAB_BDF(0x7f, 0, 0), 0, 4, &v), -ENODEV);
	assert_int_equal(v, 0xffffffff);
	/* RW1C: status error bits clear on writing one. */
	nvme->cfg.data[PCI_STATUS + 1] |= PCI_STATUS_REC_MASTER_ABORT >> 8;
	assert_int_equal(fab_cfg_access_write(h, bdf, PCI_STATUS, 2, PCI_STATUS_REC_MASTER_ABORT), 0);
	assert_int_equal(fab_cfg_access_read(h, bdf, PCI_STATUS, 2, &v), 0);
	assert_int_equal(v & PCI_STATUS_REC_MASTER_ABORT, 0);
	assert_true(v & PCI_STATUS_CAP_LIST);
	tc_down(&tc);
}

static void test_capabilities(void **state)
{
	struct tcluster tc;
	struct fab_func *f;

	tc_up(&tc, NULL);
	f = tc_fn(&tc, 1, "nvme0");
	assert_true(fab_cfg_find_cap(&f->cfg, PCI_CAP_ID_EXP));
	assert_true(fab_cfg_find_cap(&f->cfg, PCI_CAP_ID_MSIX));
	assert_true(fab_cfg_find_cap(&f->cfg, PCI_CAP_ID_MSI));
	assert_true(fab_cfg_find_cap(&f->cfg, PCI_CAP_ID_PM));
	/* 33 MSI-X vectors for 32 I/O queues + admin, table in BAR4. */
	{
		uint16_t o = fab_cfg_find_cap(&f->cfg, PCI_CAP_ID_MSIX);

		assert_int_equal((fab_cfg_get16(&f->cfg, o + PCI_MSIX_FLAGS) & 0x7ff) + 1, 33);
		assert_int_equal(fab_cfg_get32(&f->cfg, o + PCI_MSIX_TABLE) & 7, 4);
	}
	/* ACS on the switch's downstream ports, not on endpoints. */
	f = tc_fn(&tc, 1, "chassis.p0");
	assert_true(fab_cfg_find_ecap(&f->cfg, PCI_EXT_CAP_ID_ACS));
	assert_int_equal((fab_cfg_get16(&f->cfg, fab_cfg_find_cap(&f->cfg, PCI_CAP_ID_EXP) +
					PCI_EXP_FLAGS) >> 4) & 0xf, FAB_PCIE_DOWNSTREAM);
	assert_false(fab_cfg_find_ecap(&tc_fn(&tc, 1, "gpu0")->cfg, PCI_EXT_CAP_ID_ACS));
	tc_down(&tc);
}

/* Every assigned BAR: aligned to its size, inside the right host window,
 * inside every bridge window above it, and overlapping no other BAR. */
static void check_bars(struct fab_host *h)
{
	uint64_t base[FAB_MAX_FUNCS * 6], size[FAB_MAX_FUNCS * 6];
	unsigned n = 0;

	for (uint32_t i = 0; i < h->nfuncs; i++) {
		struct fab_func *f = h->funcs[i];

		for (unsigned b = 0; b < 6; b++) {
			uint64_t a = fab_func_bar_addr(f, b), s = f->bars[b].size;

			if (!f->bars[b].present)
				continue;
			assert_true(fab_func_mem_enabled(f));
			assert_int_not_equal(a, 0);
			assert_int_equal(a & (s - 1), 0);
			if (f->bars[b].is64 && f->bars[b].prefetch) {
				assert_true(a >= h->t->mmio64_base);
				assert_true(a + s <= h->t->mmio64_base + h->t->mmio64_size);
			} else {
				assert_true(a >= h->t->mmio32_base);
				assert_true(a + s <= h->t->mmio32_base + h->t->mmio32_size);
			}
			for (struct fab_func *p = f->parent; p; p = p->parent) {
				struct fab_window m, pf;

				fab_bridge_windows(p, &m, &pf);
				assert_true((a >= m.base && a + s - 1 <= m.limit) ||
					    (a >= pf.base && a + s - 1 <= pf.limit));
			}
			for (unsigned k = 0; k < n; k++)
				assert_true(a + s <= base[k] || base[k] + size[k] <= a);
			base[n] = a;
			size[n++] = s;
		}
	}
	assert_true(n > 0);
}

static void test_bar_assignment_default(void **state)
{
	struct tcluster tc;

	tc_up(&tc, NULL);
	for (uint32_t i = 0; i < tc.c->nhosts; i++)
		check_bars(tc.c->hosts[i]);
	/* 64-bit prefetchable accelerator memory lands above 4 GiB; the
	 * NVMe's 64-bit non-prefetchable registers stay below. */
	assert_true(fab_func_bar_addr(tc_fn(&tc, 1, "gpu0"), 2) >= (1ull << 32));
	assert_true(fab_func_bar_addr(tc_fn(&tc, 1, "nvme0"), 0) < (1ull << 32));
	tc_down(&tc);
}

static const char *mixed_yaml =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    ports:\n"
	"      - switch:\n"
	"          name: sw\n"
	"          ports:\n"
	"            - device: {name: a, model: test, bars: [{index: 0, size: 16}, {index: 1, size: 1M}, {index: 2, size: 64K, bits: 64}, {index: 4, size: 1G, bits: 64, prefetchable: true}]}\n"
	"            - device: {name: b, model: test, bars: [{index: 0, size: 4K, prefetchable: true}, {index: 2, size: 8G, bits: 64, prefetchable: true}]}\n"
	"            - switch:\n"
	"                name: inner\n"
	"                ports:\n"
	"                  - device: {name: c, model: accel, params: {memory: 2G}}\n"
	"                  - {}\n"
	"      - device: {name: d, model: nvme}\n";

static void test_bar_assignment_edge_cases(void **state)
{
	struct tcluster tc;
	struct fab_func *a, *b;

	tc_up(&tc, mixed_yaml);
	check_bars(tc_host(&tc, 0));
	a = tc_fn(&tc, 0, "a");
	b = tc_fn(&tc, 0, "b");
	/* A 16-byte BAR is still naturally aligned, 32-bit prefetchable BARs stay
	 * below 4 GiB, 64-bit non-prefetchable too, 8 GiB lands above. */
	assert_int_equal(a->bars[0].size, 16);
	assert_true(fab_func_bar_addr(b, 0) < (1ull << 32));
	assert_true(fab_func_bar_addr(a, 2) < (1ull << 32));
	assert_true(fab_func_bar_addr(b, 2) >= (1ull << 32));
	assert_int_equal(fab_func_bar_addr(b, 2) & ((8ull << 30) - 1), 0);
	/* The empty slot has no presence; bus numbers are dense and nested. */
	{
		uint8_t sec, sub;
		struct fab_func *inner = tc_fn(&tc, 0, "inner");

		assert_true(fab_bridge_bus_range(inner, &sec, &sub));
		assert_int_equal(sub, sec + 2);
	}
	tc_down(&tc);
}

static void expect_enum_error(const char *yaml, const char *needle)
{
	char err[512] = "";
	struct topo *t;
	struct fab_cluster *c;
	int rc;

	assert_int_equal(topo_load_string(yaml, strlen(yaml), "t.yaml", &t, err, sizeof(err)), 0);
	assert_int_equal(fab_cluster_create(t, dev_endpoint_init, &c, err, sizeof(err)), 0);
	rc = host_enumerate(c->hosts[0], err, sizeof(err));
	assert_int_equal(rc, -ENOSPC);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
	fab_cluster_destroy(c);
	topo_free(t);
}

static void test_window_exhaustion(void **state)
{
	/* 2 x 16 GiB of accelerator memory in a 16 GiB 64-bit window. */
	expect_enum_error(
		"version: 1\nhosts:\n  - ram: 1G\n    mmio64: {base: 0x8000000000, size: 16G}\n"
		"    ports:\n      - device: {name: g0, model: accel, params: {memory: 16G}}\n"
		"      - device: {name: g1, model: accel, params: {memory: 16G}}\n",
		"BAR2 of g1, 16 GiB");
	/* 32-bit window too small for three 1 GiB 32-bit BARs. */
	expect_enum_error(
		"version: 1\nhosts:\n  - ram: 1G\n    mmio32: {base: 0xC0000000, size: 0x30000000}\n"
		"    ports:\n      - device: {name: t0, model: test, bars: [{index: 0, size: 512M}]}\n"
		"      - device: {name: t1, model: test, bars: [{index: 0, size: 512M}]}\n",
		"32-bit memory window");
}

static void test_bus_master_and_enable(void **state)
{
	struct tcluster tc;
	struct fab_func *rp;

	tc_up(&tc, NULL);
	rp = tc_fn(&tc, 1, "root-port1");
	/* Bridges forward both ways once enumerated; endpoints only decode. */
	assert_true(fab_func_mem_enabled(rp));
	assert_true(fab_func_bus_master(rp));
	assert_false(fab_func_bus_master(tc_fn(&tc, 1, "gpu0")));
	tc_down(&tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfg_masks),
		cmocka_unit_test(test_capabilities),
		cmocka_unit_test(test_bar_assignment_default),
		cmocka_unit_test(test_bar_assignment_edge_cases),
		cmocka_unit_test(test_window_exhaustion),
		cmocka_unit_test(test_bus_master_and_enable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
