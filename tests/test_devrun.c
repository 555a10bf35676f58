// SPDX-License-Identifier: MIT
/*
 * Device models running on their own threads inside the fabric: the test
 * plays the driver, storing into BAR memory and host RAM; the accelerator
 * fetches descriptors and moves data by DMA through the real routes (switch
 * peer-to-peer, IOMMU) and interrupts through the host's MSI window.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"
#include "devices/dev.h"
#include "host/devrun.h"
#include "smartio/accel_regs.h"

struct drv {
	struct fab_host *h;
	struct fab_func *fn;
	uint8_t *regs, *mem, *ram;
	int efd;
	uint64_t ring;           /* where the ring is in RAM (physical) */
	uint32_t tail;
};

static void reg32(struct drv *d, uint32_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(d->regs + off), v, __ATOMIC_RELEASE);
}

static void reg64(struct drv *d, uint32_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(d->regs + off), v, __ATOMIC_RELEASE);
}

static uint32_t rd32(struct drv *d, uint32_t off)
{
	return __atomic_load_n((uint32_t *)(d->regs + off), __ATOMIC_ACQUIRE);
}

/* Bring up the accelerator like its driver would: master, MSI-X vector 0, ring. */
static void drv_init(struct drv *d, struct fab_host *h, const char *name, uint64_t ring_bus,
		     uint64_t ring)
{
	uint16_t bdf, msix;
	uint64_t addr;
	uint32_t data, ctl;
	uint8_t *e;

	memset(d, 0, sizeof(*d));
	d->h = h;
	d->fn = fab_func_by_name(h, name);
	assert_non_null(d->fn);
	bdf = fab_func_bdf(d->fn);
	d->regs = fab_mem_map(h, (uint32_t)d->fn->bars[0].mem);
	d->mem = fab_mem_map(h, (uint32_t)d->fn->bars[2].mem);
	d->ram = fab_mem_map(h, 0);
	assert_non_null(d->regs);
	assert_non_null(d->mem);
	assert_non_null(d->ram);
	assert_int_equal(rd32(d, ACCEL_REG_MAGIC), ACCEL_MAGIC);
	d->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(d->efd >= 0);

	fab_host_lock(h);
	assert_true(fab_intc_alloc(&h->intc, d->efd, &addr, &data) > 0);
	e = d->regs + 0x8000 + 16 * ACCEL_VEC_RING;
	__atomic_store_n((uint32_t *)(e + 0), (uint32_t)addr, __ATOMIC_RELEASE);
	__atomic_store_n((uint32_t *)(e + 4), (uint32_t)(addr >> 32), __ATOMIC_RELEASE);
	__atomic_store_n((uint32_t *)(e + 8), data, __ATOMIC_RELEASE);
	__atomic_store_n((uint32_t *)(e + 12), 0, __ATOMIC_RELEASE);
	msix = fab_cfg_find_cap(&d->fn->cfg, PCI_CAP_ID_MSIX);
	assert_int_equal(fab_cfg_access_read(h, bdf, msix + PCI_MSIX_FLAGS, 2, &ctl), 0);
	assert_int_equal(fab_cfg_access_write(h, bdf, msix + PCI_MSIX_FLAGS, 2,
					      ctl | PCI_MSIX_FLAGS_ENABLE), 0);
	assert_int_equal(fab_cfg_access_read(h, bdf, PCI_COMMAND, 2, &ctl), 0);
	assert_int_equal(fab_cfg_access_write(h, bdf, PCI_COMMAND, 2, ctl | PCI_COMMAND_MASTER), 0);
	fab_host_unlock(h);

	d->ring = ring;
	memset(d->ram + ring, 0, 16 * ACCEL_DESC_SIZE);
	reg64(d, ACCEL_REG_RING_BASE, ring_bus);
	reg32(d, ACCEL_REG_RING_SIZE, 16);
	reg32(d, ACCEL_REG_RING_TAIL, 0);
	reg32(d, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
}

static void drv_fini(struct drv *d)
{
	close(d->efd);
}

/* Queue one COPY with an interrupt and wait for it; returns its status. */
static uint32_t drv_copy(struct drv *d, uint64_t src, uint64_t dst, uint64_t len)
{
	struct accel_desc *desc = (struct accel_desc *)(d->ram + d->ring) + d->tail;
	struct pollfd p = { .fd = d->efd, .events = POLLIN };
	uint64_t cnt;

	memset(desc, 0, sizeof(*desc));
	desc->op = ACCEL_OP_COPY;
	desc->flags = ACCEL_DF_IRQ;
	desc->src = src;
	desc->dst = dst;
	desc->len = len;
	d->tail = ACCEL_RING_NEXT(d->tail, 16);
	reg32(d, ACCEL_REG_RING_TAIL, d->tail);
	/* The completion interrupt, as an eventfd signal; bounded wait. */
	if (poll(&p, 1, 10000) != 1)
		return 0;
	assert_int_equal(read(d->efd, &cnt, sizeof(cnt)), sizeof(cnt));
	return __atomic_load_n(&desc->status, __ATOMIC_ACQUIRE);
}

static void fill_random(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static void test_copy_and_p2p(void **state)
{
	struct tcluster tc;
	struct devrun_set *s = NULL;
	struct fab_host *h;
	struct drv d;
	char err[256];
	uint64_t g0, g1;
	struct fab_func *gpu1;
	uint8_t *m1;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 1);           /* lender A: IOMMU off, gpu0+gpu1 under a switch */
	assert_int_equal(devrun_start(h, NULL, &s, err, sizeof(err)), 0);
	drv_init(&d, h, "gpu0", 0x100000, 0x100000);
	fill_random(d.ram + 0x400000, 1 << 20, 7);
	g0 = fab_func_bar_addr(d.fn, 2);
	gpu1 = fab_func_by_name(h, "gpu1");
	g1 = fab_func_bar_addr(gpu1, 2);
	m1 = fab_mem_map(h, (uint32_t)gpu1->bars[2].mem);

	/* RAM -> own device memory. */
	assert_int_equal(drv_copy(&d, 0x400000, g0 + 0x1000, 1 << 20), ACCEL_ST_MAKE(0, 0));
	assert_memory_equal(d.mem + 0x1000, d.ram + 0x400000, 1 << 20);
	/* Own memory -> the other accelerator, peer-to-peer under the switch. */
	assert_int_equal(drv_copy(&d, g0 + 0x1000, g1 + 0x2000, 1 << 20), ACCEL_ST_MAKE(0, 0));
	assert_memory_equal(m1 + 0x2000, d.ram + 0x400000, 1 << 20);
	/* Back to RAM elsewhere. */
	assert_int_equal(drv_copy(&d, g1 + 0x2000, 0x800000, 1 << 20), ACCEL_ST_MAKE(0, 0));
	assert_memory_equal(d.ram + 0x800000, d.ram + 0x400000, 1 << 20);
	/* An address nobody decodes: the descriptor fails with the fabric's status. */
	{
		uint32_t st = drv_copy(&d, 0xfed00000, 0x800000, 4096);

		assert_int_equal(ACCEL_ST_CODE(st), ACCEL_SC_READ_FAULT);
		assert_int_equal(ACCEL_ST_FAB(st), FAB_UR);
	}
	drv_fini(&d);
	devrun_stop(s);
	tc_down(&tc);
}

static void test_dma_through_iommu(void **state)
{
	struct tcluster tc;
	struct devrun_set *s = NULL;
	struct fab_host *h;
	struct drv d;
	char err[256];
	uint16_t bdf;
	int dom;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 2);           /* lender B: IOMMU on */
	assert_int_equal(devrun_start(h, NULL, &s, err, sizeof(err)), 0);
	bdf = fab_func_bdf(fab_func_by_name(h, "gpu0"));
	/* Map IOVA 0x40000000.. onto RAM 0x100000.. before the device looks. */
	fab_host_lock(h);
	dom = iommu_domain_alloc(h->iommu);
	assert_true(dom > 0);
	assert_int_equal(iommu_attach(h->iommu, bdf, (uint32_t)dom), 0);
	assert_int_equal(iommu_map(h->iommu, (uint32_t)dom, 0x40000000, 0x100000, 8 << 20,
				   IOMMU_READ | IOMMU_WRITE), 0);
	fab_host_unlock(h);
	/* The device sees its ring at IOVA 0x40000000; it lives at 0x100000. */
	drv_init(&d, h, "gpu0", 0x40000000, 0x100000);
	fill_random(d.ram + 0x200000, 65536, 3);
	assert_int_equal(drv_copy(&d, 0x40100000, fab_func_bar_addr(d.fn, 2), 65536),
			 ACCEL_ST_MAKE(0, 0));
	assert_memory_equal(d.mem, d.ram + 0x200000, 65536);
	/* Outside the mapping: an IOMMU fault, recorded. */
	{
		uint64_t before = iommu_fault_count(h->iommu);
		uint32_t st = drv_copy(&d, 0x7000000, fab_func_bar_addr(d.fn, 2), 4096);

		assert_int_equal(ACCEL_ST_CODE(st), ACCEL_SC_READ_FAULT);
		assert_int_equal(ACCEL_ST_FAB(st), FAB_IOMMU_FAULT);
		assert_true(iommu_fault_count(h->iommu) > before);
	}
	drv_fini(&d);
	devrun_stop(s);
	tc_down(&tc);
}

/* Two hosts on a cluster switch, no IOMMU: host 0's accelerator DMAs into host 1. */
static const char two_hosts_yaml[] =
	"version: 1\n"
	"name: flap\n"
	"cluster_switches:\n"
	"  - {name: mxs0}\n"
	"hosts:\n"
	"  - id: 0\n"
	"    name: a\n"
	"    ram: 64M\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}\n"
	"      - link: {gen: 3, width: 16}\n"
	"        device: {name: gpu0, model: accel}\n"
	"  - {id: 1, name: b, ram: 64M, iommu: false, ports: [{ntb: {name: ntb0, connect: mxs0}}]}\n";

static void set_link(struct fab_ntb *n, bool up)
{
	fab_host_lock(n->fn->host);
	ntb_set_link(n, up);
	fab_host_unlock(n->fn->host);
}

/*
 * The device thread's translation cache must not outlive a link change: a
 * DMA through an NTB that worked (and is cached) fails once either end's
 * link is down — the write dropped, the descriptor failing with the fabric's
 * status — and works again once it is up. A link change advances the world
 * epoch, which every cached translation is checked against.
 */
static void test_link_change_stops_cached_dma(void **state)
{
	struct tcluster tc;
	struct devrun_set *s = NULL;
	struct fab_host *a, *b;
	struct fab_ntb *na, *nb;
	struct drv d;
	char err[256];
	uint64_t win, epoch;
	uint8_t *bram;
	uint32_t st;

	tc_up(&tc, two_hosts_yaml);
	a = tc_host(&tc, 0);
	b = tc_host(&tc, 1);
	na = a->ntbs[0];
	nb = b->ntbs[0];
	assert_int_equal(devrun_start(a, NULL, &s, err, sizeof(err)), 0);
	drv_init(&d, a, "gpu0", 0x100000, 0x100000);
	fab_host_lock(a);
	assert_int_equal(ntb_lut_set(na, 0, 1, 0), 0);   /* window 0 -> host 1's RAM from 0 */
	assert_int_equal(ntb_rid_add(na, fab_func_bdf(d.fn)), 0);
	fab_host_unlock(a);
	win = fab_func_bar_addr(na->fn, NTB_BAR_LUT) + 0x200000;
	bram = fab_mem_map(b, 0);
	assert_non_null(bram);

	/* Twice, so the second is served from the cached translation. */
	for (unsigned seed = 1; seed <= 2; seed++) {
		fill_random(d.ram + 0x400000, 65536, seed);
		assert_int_equal(drv_copy(&d, 0x400000, win, 65536), ACCEL_ST_MAKE(0, 0));
		assert_memory_equal(bram + 0x200000, d.ram + 0x400000, 65536);
	}
	/* Either end's link down: dropped, and the descriptor says so. */
	for (unsigned end = 0; end < 2; end++) {
		struct fab_ntb *n = end ? nb : na;

		epoch = __atomic_load_n(&a->world->epoch, __ATOMIC_ACQUIRE);
		set_link(n, false);
		assert_true(__atomic_load_n(&a->world->epoch, __ATOMIC_ACQUIRE) > epoch);
		fill_random(d.ram + 0x400000, 65536, 10 + end);
		st = drv_copy(&d, 0x400000, win, 65536);
		assert_int_equal(ACCEL_ST_CODE(st), ACCEL_SC_WRITE_FAULT);
		assert_int_equal(ACCEL_ST_FAB(st), FAB_LINK_DOWN);
		assert_memory_not_equal(bram + 0x200000, d.ram + 0x400000, 65536);
		/* Counted (smartio diag): a link error; the device's DMA fault; and
		 * where the access died at this host's own adapter, a drop there. */
		assert_int_equal(n->link_downs, 1);
		assert_true(devrun_instance(s, d.fn)->stats.v[DEV_ST_DMA_FAULTS] >= end + 1);
		if (!end)
			assert_true(__atomic_load_n(&na->link_drops, __ATOMIC_RELAXED) >= 1);
		set_link(n, true);
		assert_int_equal(drv_copy(&d, 0x400000, win, 65536), ACCEL_ST_MAKE(0, 0));
		assert_memory_equal(bram + 0x200000, d.ram + 0x400000, 65536);
	}
	drv_fini(&d);
	devrun_stop(s);
	tc_down(&tc);
}

static void test_idle_threads_stop(void **state)
{
	struct tcluster tc;
	struct devrun_set *s = NULL;
	char err[256];

	tc_up(&tc, NULL);
	/* Lender A: nvme0, gpu0, gpu1 each get a thread; stopping joins them all. */
	assert_int_equal(devrun_start(tc_host(&tc, 1), NULL, &s, err, sizeof(err)), 0);
	assert_non_null(devrun_instance(s, fab_func_by_name(tc_host(&tc, 1), "gpu1")));
	assert_null(devrun_instance(s, fab_func_by_name(tc_host(&tc, 1), "chassis")));
	devrun_stop(s);
	tc_down(&tc);
}

/* Wait (bounded: what a driver allows, CAP.TO / the 100 ms of an FLR) for a register. */
static bool wait_reg(struct drv *d, uint32_t off, uint32_t mask, uint32_t want, int ms)
{
	struct timespec tick = { 0, 1000000 };

	for (int i = 0; i < ms; i++) {
		if ((rd32(d, off) & mask) == want)
			return true;
		nanosleep(&tick, NULL);
	}
	return (rd32(d, off) & mask) == want;
}

static uint32_t cfg16(struct fab_host *h, uint16_t bdf, uint32_t off)
{
	uint32_t v = 0;

	fab_host_lock(h);
	assert_int_equal(fab_cfg_access_read(h, bdf, off, 2, &v), 0);
	fab_host_unlock(h);
	return v;
}

static void cfg16_write(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t v)
{
	fab_host_lock(h);
	assert_int_equal(fab_cfg_access_write(h, bdf, off, 2, v), 0);
	fab_host_unlock(h);
}

/*
 * Function Level Reset (src/fabric/flr.c): a model's function says "FLR
 * capable"; Initiate FLR clears the command register and MSI-X enable at
 * once, and the model's reset follows within the spec's 100 ms: an enabled
 * NVMe controller drops CSTS.RDY and CC. Other Device Control writes do not.
 */
static void test_flr(void **state)
{
	struct tcluster tc;
	struct devrun_set *s = NULL;
	struct fab_host *h;
	struct drv d = { 0 };
	char err[256];
	uint16_t bdf, exp, msix;
	uint32_t v = 0;

	tc_up(&tc, NULL);
	h = tc_host(&tc, 1);
	assert_int_equal(devrun_start(h, NULL, &s, err, sizeof(err)), 0);
	d.h = h;
	d.fn = fab_func_by_name(h, "nvme0");
	assert_non_null(d.fn);
	bdf = fab_func_bdf(d.fn);
	d.regs = fab_mem_map(h, (uint32_t)d.fn->bars[0].mem);
	assert_non_null(d.regs);
	exp = fab_cfg_find_cap(&d.fn->cfg, PCI_CAP_ID_EXP);
	msix = fab_cfg_find_cap(&d.fn->cfg, PCI_CAP_ID_MSIX);
	assert_true(exp && msix);
	fab_host_lock(h);
	assert_int_equal(fab_cfg_access_read(h, bdf, exp + PCI_EXP_DEVCAP, 4, &v), 0);
	fab_host_unlock(h);
	assert_true(v & PCI_EXP_DEVCAP_FLR);

	/* As the driver leaves it: decoding, mastering, MSI-X, controller ready. */
	cfg16_write(h, bdf, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	cfg16_write(h, bdf, msix + PCI_MSIX_FLAGS,
		    cfg16(h, bdf, msix + PCI_MSIX_FLAGS) | PCI_MSIX_FLAGS_ENABLE);
	reg32(&d, 0x24, (31u << 16) | 31u);            /* AQA: 32-entry admin queues */
	reg64(&d, 0x28, 0x100000);                     /* ASQ */
	reg64(&d, 0x30, 0x200000);                     /* ACQ */
	reg32(&d, 0x14, (4u << 20) | (6u << 16) | 1u); /* CC: IOCQES, IOSQES, EN */
	assert_true(wait_reg(&d, 0x1c, 1, 1, 2000));   /* CSTS.RDY */

	/* A Device Control write without bit 15 changes nothing of that. */
	cfg16_write(h, bdf, exp + PCI_EXP_DEVCTL, cfg16(h, bdf, exp + PCI_EXP_DEVCTL));
	assert_true(wait_reg(&d, 0x1c, 1, 1, 20));
	assert_int_equal(cfg16(h, bdf, PCI_COMMAND) & PCI_COMMAND_MASTER, PCI_COMMAND_MASTER);

	cfg16_write(h, bdf, exp + PCI_EXP_DEVCTL,
		    cfg16(h, bdf, exp + PCI_EXP_DEVCTL) | PCI_EXP_DEVCTL_BCR_FLR);
	/* Config space at once; bit 15 always reads 0. */
	assert_int_equal(cfg16(h, bdf, PCI_COMMAND), 0);
	assert_int_equal(cfg16(h, bdf, msix + PCI_MSIX_FLAGS) & PCI_MSIX_FLAGS_ENABLE, 0);
	assert_int_equal(cfg16(h, bdf, exp + PCI_EXP_DEVCTL) & PCI_EXP_DEVCTL_BCR_FLR, 0);
	/* The controller within the spec's 100 ms. */
	assert_true(wait_reg(&d, 0x1c, 1, 0, 100));
	assert_int_equal(rd32(&d, 0x14), 0);
	/* The BARs keep their addresses (what pci_reset_function restores). */
	assert_true(fab_func_bar_addr(d.fn, 0) != 0);
	devrun_stop(s);
	tc_down(&tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_and_p2p),
		cmocka_unit_test(test_dma_through_iommu),
		cmocka_unit_test(test_link_change_stops_cached_dma),
		cmocka_unit_test(test_idle_threads_stop),
		cmocka_unit_test(test_flr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
