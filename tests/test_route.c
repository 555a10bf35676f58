// SPDX-License-Identifier: MIT
/* Routing: IOMMU on/off, P2P via switch vs root, NTB hops, failures, cache, data. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"

static struct fab_route R;

static void resolve(struct fab_host *h, uint16_t rid, uint64_t addr, uint64_t len, bool write)
{
	assert_int_equal(fab_route_resolve(h, rid, addr, len, write, &R), 0);
}

static void test_cpu_to_local_ram(void **state)
{
	struct tcluster tc;
	struct fab_host *h;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 0);
	resolve(h, FAB_RID_CPU, 0x1000, 64, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_RAM);
	assert_int_equal(R.tgt.host, 0);
	assert_int_equal(R.tgt.offset, 0x1000);
	assert_int_equal(R.tgt.len, 64);
	assert_true(route_has(&R, FAB_HOP_MEMORY, NULL));
	assert_false(route_has(&R, FAB_HOP_IOMMU, NULL));  /* CPU requests bypass it */
	/* A hole in the map: unsupported request. */
	resolve(h, FAB_RID_CPU, 0xFED00000, 4, false);
	assert_int_equal(R.status, FAB_UR);
	tc_down(&tc);
}

static void test_dma_iommu_off_and_on(void **state)
{
	struct tcluster tc;
	struct fab_host *a, *b;
	uint16_t gpu_a, gpu_b;
	int dom;

	tc_up(&tc, NULL);
	a = tc_host(&tc, 1);    /* IOMMU off */
	b = tc_host(&tc, 2);    /* IOMMU on */
	gpu_a = fab_func_bdf(tc_fn(&tc, 1, "gpu0"));
	gpu_b = fab_func_bdf(tc_fn(&tc, 2, "gpu0"));

	resolve(a, gpu_a, 0x200000, 4096, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_RAM);
	assert_int_equal(R.tgt.offset, 0x200000);
	assert_true(route_has(&R, FAB_HOP_ROOT, NULL));

	/* IOMMU on, no domain: a recorded fault. */
	assert_int_equal(iommu_fault_count(b->iommu), 0);
	resolve(b, gpu_b, 0x200000, 4096, true);
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	assert_int_equal(iommu_fault_count(b->iommu), 1);
	/* Map IOVA 0x10000000 -> physical 0x200000 for reads only. */
	dom = iommu_domain_alloc(b->iommu);
	assert_true(dom > 0);
	assert_int_equal(iommu_attach(b->iommu, gpu_b, (uint32_t)dom), 0);
	assert_int_equal(iommu_map(b->iommu, (uint32_t)dom, 0x10000000, 0x200000, 0x4000,
				   IOMMU_READ), 0);
	resolve(b, gpu_b, 0x10001010, 16, false);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.offset, 0x201010);
	assert_true(route_has(&R, FAB_HOP_IOMMU, NULL));
	resolve(b, gpu_b, 0x10001010, 16, true);   /* no write permission */
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	assert_int_equal(iommu_fault_count(b->iommu), 2);
	/* Contiguity stops at the end of the mapping. */
	resolve(b, gpu_b, 0x10000000, 1 << 20, false);
	assert_int_equal(R.tgt.len, 0x4000);
	tc_down(&tc);
}

static void test_p2p_under_switch(void **state)
{
	struct tcluster tc;
	struct fab_host *h;
	struct fab_func *g0, *g1;
	uint64_t bar;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 1);
	g0 = tc_fn(&tc, 1, "gpu0");
	g1 = tc_fn(&tc, 1, "gpu1");
	bar = fab_func_bar_addr(g1, 2);
	resolve(h, fab_func_bdf(g0), bar + 0x3000, 256, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_BAR);
	assert_int_equal(R.tgt.bdf, fab_func_bdf(g1));
	assert_int_equal(R.tgt.bar, 2);
	assert_int_equal(R.tgt.offset, 0x3000);
	assert_true(route_has(&R, FAB_HOP_SWITCH, "peer-to-peer"));
	assert_false(route_has(&R, FAB_HOP_ROOT, NULL));   /* shortest path */
	/* ACS P2P Request Redirect on the ingress port forces the root. */
	{
		struct fab_func *dp = g0->parent;
		uint16_t acs = fab_cfg_find_ecap(&dp->cfg, PCI_EXT_CAP_ID_ACS);

		assert_int_equal(fab_cfg_access_write(h, fab_func_bdf(dp), acs + PCI_ACS_CTRL, 2,
						      PCI_ACS_RR | PCI_ACS_CR), 0);
	}
	resolve(h, fab_func_bdf(g0), bar + 0x3000, 256, true);
	assert_int_equal(R.status, FAB_OK);
	assert_false(R.cached);   /* the config write invalidated the cache */
	assert_true(route_has(&R, FAB_HOP_ROOT, NULL));
	assert_true(route_has(&R, FAB_HOP_SWITCH, "ACS redirect"));
	assert_int_equal(R.tgt.bdf, fab_func_bdf(g1));
	tc_down(&tc);
}

static void test_p2p_via_root(void **state)
{
	struct tcluster tc;
	struct fab_host *h;
	struct fab_func *nvme, *gpu;
	uint64_t bar;
	int dom;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 2);     /* nvme0 and gpu0 on different root ports, IOMMU on */
	nvme = tc_fn(&tc, 2, "nvme0");
	gpu = tc_fn(&tc, 2, "gpu0");
	bar = fab_func_bar_addr(gpu, 2);
	resolve(h, fab_func_bdf(nvme), bar, 4096, true);
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	/* Identity-map the BAR for the NVMe, as a P2PDMA-aware DMA API does. */
	dom = iommu_domain_alloc(h->iommu);
	assert_int_equal(iommu_attach(h->iommu, fab_func_bdf(nvme), (uint32_t)dom), 0);
	assert_int_equal(iommu_map(h->iommu, (uint32_t)dom, bar, bar, 1 << 20,
				   IOMMU_READ | IOMMU_WRITE), 0);
	resolve(h, fab_func_bdf(nvme), bar + 8, 4096, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_BAR);
	assert_int_equal(R.tgt.offset, 8);
	assert_true(route_has(&R, FAB_HOP_ROOT, NULL));
	assert_true(route_has(&R, FAB_HOP_IOMMU, NULL));
	tc_down(&tc);
}

static void test_root_without_p2p(void **state)
{
	struct tcluster tc;
	struct fab_host *h;

	tc_up(&tc, "version: 1\nhosts:\n  - ram: 1G\n    root_complex: {p2p: false}\n"
		   "    ports:\n      - device: {name: n, model: nvme}\n"
		   "      - device: {name: g, model: accel}\n");
	h = tc_host(&tc, 0);
	resolve(h, fab_func_bdf(tc_fn(&tc, 0, "n")), fab_func_bar_addr(tc_fn(&tc, 0, "g"), 2),
		64, true);
	assert_int_equal(R.status, FAB_UR);
	assert_non_null(strstr(R.reason, "peer-to-peer"));
	/* The CPU still reaches the BAR. */
	resolve(h, FAB_RID_CPU, fab_func_bar_addr(tc_fn(&tc, 0, "g"), 2), 64, true);
	assert_int_equal(R.status, FAB_OK);
	tc_down(&tc);
}

static uint64_t ntb_window(struct tcluster *tc, uint32_t host, uint32_t ntb, uint32_t entry)
{
	struct fab_ntb *n = tc_host(tc, host)->ntbs[ntb];

	return fab_func_bar_addr(n->fn, NTB_BAR_LUT) + (uint64_t)entry * n->win_size;
}

static void test_ntb_window_to_lender(void **state)
{
	struct tcluster tc;
	struct fab_host *b;
	struct fab_ntb *n;
	uint64_t win;

	tc_up(&tc, NULL);
	b = tc_host(&tc, 0);
	n = b->ntbs[0];
	win = ntb_window(&tc, 0, 0, 3);
	/* Unprogrammed: unsupported request. */
	resolve(b, FAB_RID_CPU, win, 64, true);
	assert_int_equal(R.status, FAB_UR);
	assert_non_null(strstr(R.reason, "not programmed"));
	/* The register: any value (the driver checks, test_ntb_drv); an entry
	 * holds only the address bits above the window size. */
	assert_int_equal(ntb_lut_set(n, 9999, 1, 0), -ERANGE);
	assert_int_equal(ntb_lut_set(n, 3, 1, 0x100000), 0);
	resolve(b, FAB_RID_CPU, win + 0x1234, 64, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.kind, FAB_TGT_RAM);
	assert_int_equal(R.tgt.host, 1);
	assert_int_equal(R.tgt.offset, 0x1234);
	assert_int_equal(R.ntb_hops, 1);
	assert_true(route_has(&R, FAB_HOP_NTB, "LUT[3]"));
	assert_true(route_has(&R, FAB_HOP_CABLE, NULL));
	assert_true(route_has(&R, FAB_HOP_CSWITCH, "mxs0"));
	assert_true(route_has(&R, FAB_HOP_MEMORY, "host 1"));
	/* A device of the borrower is not in the NTB's requester-ID table. */
	tc_down(&tc);
}

/* A - B - C, back-to-back cables: two NTB hops from A into C's RAM. */
static const char *chain_yaml =
	"version: 1\n"
	"hosts:\n"
	"  - {id: 0, name: a, ram: 1G, ports: [{ntb: {name: n0, connect: b.n0, bar_size: 1G, lut_entries: 8}}, {device: {name: acc, model: accel}}]}\n"
	"  - {id: 1, name: b, ram: 1G, ports: [{ntb: {name: n0, bar_size: 1G, lut_entries: 8}}, {ntb: {name: n1, connect: c.n0, bar_size: 1G, lut_entries: 8}}]}\n"
	"  - {id: 2, name: c, ram: 2G, iommu: true, ports: [{ntb: {name: n0, bar_size: 1G, lut_entries: 8}}]}\n";

static void test_two_ntb_hops_and_rid(void **state)
{
	struct tcluster tc;
	struct fab_host *a, *b, *c;
	uint64_t bwin;
	uint16_t acc;
	int dom;

	tc_up(&tc, chain_yaml);
	a = tc_host(&tc, 0);
	b = tc_host(&tc, 1);
	c = tc_host(&tc, 2);
	/* b.n1 window 0 -> c 0x40000000; a.n0 window 1 -> b.n1 window 0. */
	assert_int_equal(ntb_lut_set(b->ntbs[1], 0, 2, 0x40000000), 0);
	bwin = ntb_window(&tc, 1, 1, 0);
	assert_int_equal(ntb_lut_set(a->ntbs[0], 1, 1, bwin), 0);
	/* The request arrives at b from b.n0; b.n1 has not admitted that requester. */
	resolve(a, FAB_RID_CPU, ntb_window(&tc, 0, 0, 1) + 0x80, 64, true);
	assert_int_equal(R.status, FAB_NTB_REJECT);
	assert_int_equal(ntb_rid_add(b->ntbs[1], fab_func_bdf(b->ntbs[0]->fn)), 0);
	/* c has its IOMMU on: the arriving NTB needs a mapping. */
	resolve(a, FAB_RID_CPU, ntb_window(&tc, 0, 0, 1) + 0x80, 64, true);
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	dom = iommu_domain_alloc(c->iommu);
	assert_int_equal(iommu_attach(c->iommu, fab_func_bdf(c->ntbs[0]->fn), (uint32_t)dom), 0);
	assert_int_equal(iommu_map(c->iommu, (uint32_t)dom, 0x40000000, 0x8000000, 1 << 21,
				   IOMMU_READ | IOMMU_WRITE), 0);
	resolve(a, FAB_RID_CPU, ntb_window(&tc, 0, 0, 1) + 0x80, 64, true);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.ntb_hops, 2);
	assert_int_equal(R.tgt.host, 2);
	assert_int_equal(R.tgt.offset, 0x8000080);
	/* a's accelerator is not in a.n0's requester-ID table until admitted. */
	acc = fab_func_bdf(tc_fn(&tc, 0, "acc"));
	resolve(a, acc, ntb_window(&tc, 0, 0, 1), 64, false);
	assert_int_equal(R.status, FAB_NTB_REJECT);
	assert_int_equal(ntb_rid_add(a->ntbs[0], acc), 0);
	resolve(a, acc, ntb_window(&tc, 0, 0, 1), 64, false);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.host, 2);
	tc_down(&tc);
}

static void test_ntb_loop_is_bounded(void **state)
{
	struct tcluster tc;
	struct fab_host *a, *b;

	tc_up(&tc, chain_yaml);
	a = tc_host(&tc, 0);
	b = tc_host(&tc, 1);
	/* a -> b window that points back into a's window: a loop. */
	assert_int_equal(ntb_lut_set(a->ntbs[0], 0, 1, ntb_window(&tc, 1, 0, 0)), 0);
	assert_int_equal(ntb_lut_set(b->ntbs[0], 0, 0, ntb_window(&tc, 0, 0, 0)), 0);
	assert_int_equal(ntb_rid_add(a->ntbs[0], fab_func_bdf(a->ntbs[0]->fn)), 0);
	assert_int_equal(ntb_rid_add(b->ntbs[0], fab_func_bdf(b->ntbs[0]->fn)), 0);
	resolve(a, FAB_RID_CPU, ntb_window(&tc, 0, 0, 0), 64, true);
	assert_int_equal(R.status, FAB_HOP_LIMIT);
	tc_down(&tc);
}

static void test_lut_and_rid_exhaustion(void **state)
{
	struct tcluster tc;
	struct fab_ntb *n;

	tc_up(&tc, NULL);
	n = tc_host(&tc, 0)->ntbs[0];
	/* The LUT registers (allocation is the driver's: test_ntb_drv). */
	for (uint32_t i = 0; i < n->nlut; i++)
		assert_int_equal(ntb_lut_set(n, i, 1, 0), 0);
	assert_int_equal(ntb_lut_used(n), 64);
	assert_int_equal(ntb_lut_set(n, 64, 1, 0), -ERANGE);
	assert_int_equal(ntb_lut_clear(n, 5), 0);
	assert_int_equal(ntb_lut_clear(n, 5), -ENOENT);
	assert_int_equal(ntb_lut_clear(n, 64), -ERANGE);
	assert_int_equal(ntb_lut_used(n), 63);

	/* Requester IDs: the CPU holds one of 32 slots. */
	assert_int_equal(ntb_rid_used(n), 1);
	assert_int_equal(ntb_rid_add(n, FAB_RID_CPU), -EEXIST);
	for (uint16_t r = 1; r < 32; r++)
		assert_int_equal(ntb_rid_add(n, (uint16_t)(0x100 + r)), 0);
	assert_int_equal(ntb_rid_add(n, 0x200), -ENOSPC);
	assert_int_equal(ntb_rid_used(n), 32);
	assert_int_equal(ntb_rid_del(n, 0x105), 0);
	assert_int_equal(ntb_rid_del(n, 0x105), -ENOENT);
	assert_int_equal(ntb_rid_add(n, 0x200), 0);
	tc_down(&tc);
}

static void test_link_down_semantics(void **state)
{
	struct tcluster tc;
	struct fab_host *b, *l;
	uint64_t win;
	char buf[64], back[64];

	tc_up(&tc, NULL);
	b = tc_host(&tc, 0);
	l = tc_host(&tc, 1);
	assert_int_equal(ntb_lut_set(b->ntbs[0], 0, 1, 0), 0);
	win = ntb_window(&tc, 0, 0, 0);
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(fab_access(b, FAB_RID_CPU, win + 0x2000, buf, sizeof(buf), true), 0);
	/* The lender sees the data at the translated address in its RAM. */
	assert_int_equal(fab_access(l, FAB_RID_CPU, 0x2000, back, sizeof(back), false), 0);
	assert_memory_equal(buf, back, sizeof(buf));

	ntb_set_link(b->ntbs[0], false);
	resolve(b, FAB_RID_CPU, win + 0x2000, 64, false);
	assert_int_equal(R.status, FAB_LINK_DOWN);
	memset(buf, 0x11, sizeof(buf));
	assert_int_equal(fab_access(b, FAB_RID_CPU, win + 0x2000, buf, sizeof(buf), true),
			 FAB_LINK_DOWN);                       /* write dropped */
	assert_int_equal(fab_access(b, FAB_RID_CPU, win + 0x2000, back, sizeof(back), false),
			 FAB_LINK_DOWN);
	for (size_t i = 0; i < sizeof(back); i++)
		assert_int_equal((uint8_t)back[i], 0xff);     /* reads all-ones */
	ntb_set_link(b->ntbs[0], true);
	assert_int_equal(fab_access(b, FAB_RID_CPU, win + 0x2000, back, sizeof(back), false), 0);
	for (size_t i = 0; i < sizeof(back); i++)
		assert_int_equal((uint8_t)back[i], 0x5a);     /* the dropped write never landed */
	/* The lender's side of the cable down: arrivals fail too. */
	ntb_set_link(l->ntbs[0], false);
	resolve(b, FAB_RID_CPU, win, 64, false);
	assert_int_equal(R.status, FAB_LINK_DOWN);
	tc_down(&tc);
}

/* The adapter's state shows in its BAR0 registers, as a driver reads them. */
static void test_ntb_registers(void **state)
{
	struct tcluster tc;
	struct fab_host *b;
	struct fab_ntb *n;
	uint64_t regs;
	uint32_t v = 0;

	tc_up(&tc, NULL);
	b = tc_host(&tc, 0);
	n = b->ntbs[0];
	regs = fab_func_bar_addr(n->fn, NTB_BAR_REGS);
	assert_int_equal(fab_access(b, FAB_RID_CPU, regs + NTB_REG_ID, &v, 4, false), 0);
	assert_int_equal(v, 0x3142544e);
	assert_int_equal(fab_access(b, FAB_RID_CPU, regs + NTB_REG_LINK, &v, 4, false), 0);
	assert_int_equal(v & 1, 1);
	assert_int_equal((v >> 4) & 0xf, 3);
	assert_int_equal((v >> 8) & 0x3f, 8);
	ntb_set_link(n, false);
	assert_int_equal(fab_access(b, FAB_RID_CPU, regs + NTB_REG_LINK, &v, 4, false), 0);
	assert_int_equal(v & 1, 0);
	assert_int_equal(ntb_spad_write(n, 3, 0xdeadbeef), 0);
	assert_int_equal(ntb_spad_write(n, 8, 1), -ERANGE);
	assert_int_equal(fab_access(b, FAB_RID_CPU, regs + NTB_REG_SPAD + 12, &v, 4, false), 0);
	assert_int_equal(v, 0xdeadbeef);
	assert_int_equal(ntb_db_ring(n, 0x5), 0);
	assert_int_equal(ntb_db_ring(n, 1u << 16), -EINVAL);   /* 16 doorbells */
	assert_int_equal(fab_access(b, FAB_RID_CPU, regs + NTB_REG_DB, &v, 4, false), 0);
	assert_int_equal(v, 0x5);
	tc_down(&tc);
}

/* A device's MSI write becomes an eventfd signal, IOMMU or not. */
static void test_msi_delivery(void **state)
{
	struct tcluster tc;
	struct fab_host *h;
	uint16_t nvme;
	uint64_t addr, cnt = 0;
	uint32_t data, bogus = 999;
	int efd, v;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 2);           /* IOMMU on, no domain for the NVMe */
	nvme = fab_func_bdf(tc_fn(&tc, 2, "nvme0"));
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(efd >= 0);
	v = fab_intc_alloc(&h->intc, efd, &addr, &data);
	assert_true(v > 0);
	assert_int_equal(fab_access(h, nvme, addr, &data, 4, true), 0);
	assert_int_equal(read(efd, &cnt, sizeof(cnt)), sizeof(cnt));
	assert_int_equal(cnt, 1);
	assert_int_equal(h->intc.count[data], 1);
	/* An unallocated vector is counted as spurious, not delivered. */
	assert_int_equal(fab_access(h, nvme, addr, &bogus, 4, true), FAB_UR);
	assert_int_equal(h->intc.spurious, 1);
	/* Reading the window, or writing something other than a dword, is refused. */
	resolve(h, nvme, FAB_MSI_BASE, 4, false);
	assert_int_equal(R.status, FAB_UR);
	assert_int_equal(fab_access(h, nvme, addr, &data, 2, true), FAB_UR);
	assert_int_equal(fab_intc_free(&h->intc, data), 0);
	assert_int_equal(fab_intc_free(&h->intc, data), -ENOENT);
	close(efd);
	tc_down(&tc);
}

/* An MSI through an NTB window lands on the host behind it. */
static void test_msi_through_ntb(void **state)
{
	struct tcluster tc;
	struct fab_host *b, *l;
	uint64_t addr, cnt = 0, win;
	uint32_t data;
	int efd;

	tc_up(&tc, NULL);
	b = tc_host(&tc, 0);
	l = tc_host(&tc, 1);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(fab_intc_alloc(&b->intc, efd, &addr, &data) > 0);
	/* Lender A's window onto the borrower's MSI page, used by gpu0. */
	assert_int_equal(ntb_lut_set(l->ntbs[0], 0, 0, FAB_MSI_BASE & ~(l->ntbs[0]->win_size - 1)), 0);
	assert_int_equal(ntb_rid_add(l->ntbs[0], fab_func_bdf(tc_fn(&tc, 1, "gpu0"))), 0);
	win = fab_func_bar_addr(l->ntbs[0]->fn, NTB_BAR_LUT) +
	      (FAB_MSI_BASE & (l->ntbs[0]->win_size - 1));
	assert_int_equal(fab_access(l, fab_func_bdf(tc_fn(&tc, 1, "gpu0")), win + (addr - FAB_MSI_BASE),
				    &data, 4, true), 0);
	assert_int_equal(read(efd, &cnt, sizeof(cnt)), sizeof(cnt));
	assert_int_equal(cnt, 1);
	close(efd);
	tc_down(&tc);
}

static void test_cache_and_invalidation(void **state)
{
	struct tcluster tc;
	struct fab_host *b;
	uint64_t hits, misses, win;

	tc_up(&tc, NULL);
	b = tc_host(&tc, 0);
	assert_int_equal(ntb_lut_set(b->ntbs[0], 0, 1, 0), 0);
	win = ntb_window(&tc, 0, 0, 0);
	resolve(b, FAB_RID_CPU, win + 0x10, 8, true);
	assert_false(R.cached);
	resolve(b, FAB_RID_CPU, win + 0x20, 8, true);
	assert_true(R.cached);
	assert_int_equal(R.tgt.offset, 0x20);
	assert_int_equal(R.tgt.len, 8);
	fab_route_cache_stats(b->cache, &hits, &misses);
	assert_int_equal(hits, 1);
	assert_int_equal(misses, 1);
	/* Re-point the window: the cached translation must not survive. */
	assert_int_equal(ntb_lut_clear(b->ntbs[0], 0), 0);
	assert_int_equal(ntb_lut_set(b->ntbs[0], 0, 1, 0x40000000), 0);
	resolve(b, FAB_RID_CPU, win + 0x20, 8, true);
	assert_false(R.cached);
	assert_int_equal(R.tgt.host, 1);
	assert_int_equal(R.tgt.offset, 0x40000020);
	/* A change on another host (the lender's NTB table) also invalidates. */
	resolve(b, FAB_RID_CPU, win + 0x20, 8, true);
	assert_true(R.cached);
	assert_int_equal(ntb_rid_add(tc_host(&tc, 1)->ntbs[0], 0x300), 0);
	resolve(b, FAB_RID_CPU, win + 0x20, 8, true);
	assert_false(R.cached);
	/* Addresses below the first cached one in the page miss, then hit. */
	resolve(b, FAB_RID_CPU, win + 0x8, 8, true);
	assert_false(R.cached);
	assert_int_equal(R.tgt.offset, 0x40000008);
	tc_down(&tc);
}

static void test_bad_requests(void **state)
{
	struct tcluster tc;
	struct fab_host *h;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 1);
	resolve(h, FAB_BDF(0x42, 0, 0), 0, 4, false);
	assert_int_equal(R.status, FAB_BAD_REQUEST);
	resolve(h, fab_func_bdf(tc_fn(&tc, 1, "root-port1")), 0, 4, false);
	assert_int_equal(R.status, FAB_BAD_REQUEST);
	resolve(h, FAB_RID_CPU, 0, 0, false);
	assert_int_equal(R.status, FAB_BAD_REQUEST);
	resolve(h, FAB_RID_CPU, UINT64_MAX - 2, 16, false);
	assert_int_equal(R.status, FAB_BAD_REQUEST);
	tc_down(&tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_to_local_ram),
		cmocka_unit_test(test_dma_iommu_off_and_on),
		cmocka_unit_test(test_p2p_under_switch),
		cmocka_unit_test(test_p2p_via_root),
		cmocka_unit_test(test_root_without_p2p),
		cmocka_unit_test(test_ntb_window_to_lender),
		cmocka_unit_test(test_two_ntb_hops_and_rid),
		cmocka_unit_test(test_ntb_loop_is_bounded),
		cmocka_unit_test(test_lut_and_rid_exhaustion),
		cmocka_unit_test(test_link_down_semantics),
		cmocka_unit_test(test_ntb_registers),
		cmocka_unit_test(test_msi_delivery),
		cmocka_unit_test(test_msi_through_ntb),
		cmocka_unit_test(test_cache_and_invalidation),
		cmocka_unit_test(test_bad_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
