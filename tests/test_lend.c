// SPDX-License-Identifier: MIT
/*
 * Device Lending in an in-process cluster (src/host/lend.c, shadow.c, p2p.c):
 * the shadow device's forwarded and intercepted config space, its DMA window
 * with per-map IOMMU entries on the borrower, MSI-X counted per vector on the
 * borrower, the three peer-to-peer cases (same lender, borrower-local,
 * another lender) with their routes, the P2P orchestrator, and returning.
 *
 * Cluster: borrower 0 (IOMMU on, a local accelerator accb), lender-a 1
 * (IOMMU off: gpu0 and gpu1 under a switch, nvme0), lender-b 2 (IOMMU on:
 * gpu0), all on one cluster switch.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"
#include "host/devrun.h"
#include "host/drivers/accel_drv.h"
#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "host/lend.h"
#include "host/pci.h"
#include "util/smio_time.h"

static const char yaml[] =
	"version: 1\n"
	"cluster_switches:\n"
	"  - name: mxs0\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}\n"
	"      - device: {name: accb, model: accel, lendable: false, params: {memory: 4M}}\n"
	"  - id: 1\n"
	"    ram: 1G\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}\n"
	"      - switch:\n"
	"          name: chassis\n"
	"          ports:\n"
	"            - device: {name: gpu0, model: accel, params: {memory: 4M}}\n"
	"            - device: {name: gpu1, model: accel, params: {memory: 4M}}\n"
	"            - device: {name: nvme0, model: nvme, params: {ns_size: 16M, queues: 4}}\n"
	"  - id: 2\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}\n"
	"      - device: {name: gpu0, model: accel, params: {memory: 4M}}\n";

#define ST_OK ACCEL_ST_MAKE(ACCEL_SC_OK, 0)

struct env {
	struct tcluster tc;
	struct fab_host *h[3];
	struct devrun_set *devs[3];
	struct pci_host *ph;
	struct lend_local *lent[8];
	unsigned nlent;
};

static void env_up(struct env *e)
{
	char err[256];

	tc_up(&e->tc, yaml);
	e->nlent = 0;
	for (uint32_t i = 0; i < 3; i++) {
		e->h[i] = tc_host(&e->tc, i);
		assert_int_equal(devrun_start(e->h[i], NULL, &e->devs[i], err, sizeof(err)), 0);
	}
	fab_host_lock(e->h[0]);
	assert_int_equal(pci_host_create(e->h[0], &e->ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(e->ph, &accel_pci_driver), 0);
	assert_int_equal(pci_register_driver(e->ph, &nvme_pci_driver), 0);
}

static void env_down(struct env *e)
{
	pci_host_destroy(e->ph);
	for (unsigned i = 0; i < e->nlent; i++)
		if (e->lent[i])
			assert_int_equal(lend_local_return(e->lent[i], false), 0);
	fab_host_unlock(e->h[0]);
	for (uint32_t i = 0; i < 3; i++)
		devrun_stop(e->devs[i]);
	tc_down(&e->tc);
}

static struct lend_local *borrow(struct env *e, uint32_t lender, const char *name,
				 struct pci_dev **pdev)
{
	struct lend_local *l;

	assert_int_equal(lend_local_borrow(e->h[lender],
					   fab_func_bdf(tc_fn(&e->tc, lender, name)), e->ph, &l,
					   pdev), 0);
	assert_true(e->nlent < 8);
	e->lent[e->nlent++] = l;
	return l;
}

static uint32_t copy(struct pci_dev *p, uint64_t src, uint64_t dst, uint64_t len)
{
	struct accel_desc d = { .op = ACCEL_OP_COPY, .src = src, .dst = dst, .len = len };

	assert_int_equal(accel_drv_submit(p, &d), 0);
	return d.status;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static struct accel_drv_info info_of(struct pci_dev *p)
{
	struct accel_drv_info in;

	assert_int_equal(accel_drv_get_info(p, &in), 0);
	return in;
}

/* ---------- the shadow device ---------- */

static void test_shadow_config(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct lend_local *l;
	struct fab_func *fn;
	uint32_t v, orig, cmd;
	uint16_t bdf;

	env_up(&e);
	l = borrow(&e, 1, "gpu0", &p);
	fn = tc_fn(&e.tc, 1, "gpu0");
	/* Hot-added behind the NTB, on a bus of its own, and bound. */
	assert_true(FAB_BDF_BUS(p->bdf) >= 0xf0);
	assert_ptr_equal(pci_get_dev(e.ph, p->bdf), p);
	assert_true(accel_drv_bound(p));
	assert_string_equal(p->name, "gpu0");
	assert_int_equal(shadow_grant(p)->lender, 1);
	/* Identity is the real device's (forwarded). */
	assert_int_equal(pci_read_config(p, PCI_VENDOR_ID, 2, &v), 0);
	assert_int_equal(v, p->vendor);
	/* BARs read as our NTB window; sizing works on the emulated register. */
	assert_int_equal(pci_read_config(p, PCI_BASE_ADDRESS_2, 4, &orig), 0);
	assert_int_equal(orig & PCI_BASE_ADDRESS_MEM_MASK, (uint32_t)p->bar_addr[2]);
	assert_int_equal(pci_write_config(p, PCI_BASE_ADDRESS_2, 4, 0xffffffffu), 0);
	assert_int_equal(pci_read_config(p, PCI_BASE_ADDRESS_2, 4, &v), 0);
	assert_int_equal(v & PCI_BASE_ADDRESS_MEM_MASK, (uint32_t)~(p->bar_size[2] - 1));
	assert_int_equal(pci_write_config(p, PCI_BASE_ADDRESS_2, 4, orig), 0);
	/* ... and the lender's BAR never moved. */
	assert_int_equal(fab_func_bar_addr(fn, 2), shadow_grant(p)->bar_addr[2]);
	assert_true(p->bar_addr[2] != shadow_grant(p)->bar_addr[2]);
	/* Legacy INTx: no pin, and INTx Disable forced on at the device. */
	assert_int_equal(pci_read_config(p, PCI_INTERRUPT_PIN, 1, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(pci_read_config(p, PCI_ROM_ADDRESS, 4, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(fab_cfg_access_read(e.h[1], fab_func_bdf(fn), PCI_COMMAND, 2, &cmd), 0);
	assert_true(cmd & PCI_COMMAND_INTX_DISABLE);
	/* Bus mastering tracked on the borrower and forwarded. */
	assert_true(shadow_master(p));
	assert_true(cmd & PCI_COMMAND_MASTER);
	pci_clear_master(p);
	assert_false(shadow_master(p));
	assert_int_equal(fab_cfg_access_read(e.h[1], fab_func_bdf(fn), PCI_COMMAND, 2, &cmd), 0);
	assert_false(cmd & PCI_COMMAND_MASTER);
	pci_set_master(p);
	/* A device in use is not returned; unbound, it is (and the lender resets it). */
	assert_int_equal(lend_local_return(l, false), -EBUSY);
	pci_unregister_driver(e.ph, &accel_pci_driver);
	bdf = p->bdf;
	assert_int_equal(lend_local_return(l, false), 0);
	e.lent[0] = NULL;
	assert_null(pci_get_dev(e.ph, bdf));
	assert_int_equal(fab_cfg_access_read(e.h[1], fab_func_bdf(fn), PCI_COMMAND, 2, &cmd), 0);
	assert_false(cmd & (PCI_COMMAND_MASTER | PCI_COMMAND_MEMORY));
	env_down(&e);
}

/* DMA window: per-map IOMMU entries on the borrower, the route through both NTBs. */
static void test_dma_window(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct lend_local *l;
	struct fab_route *r = malloc(sizeof(*r));
	struct accel_drv_info in;
	uint64_t faults, phys, bus;
	uint16_t rid;
	int err;

	assert_non_null(r);
	env_up(&e);
	l = borrow(&e, 2, "gpu0", &p);
	rid = fab_func_bdf(tc_fn(&e.tc, 2, "gpu0"));
	in = info_of(p);
	/* The driver's ring buffer: the device's write crosses lender-b's IOMMU, its NTB,
	 * the cluster switch, our NTB and our IOMMU, and ends in our RAM. */
	assert_int_equal(fab_route_resolve_uncached(e.h[2], rid, in.buf_bus, 64, true, r), 0);
	assert_int_equal(r->status, FAB_OK);
	assert_int_equal(r->tgt.host, 0);
	assert_int_equal(r->tgt.kind, FAB_TGT_RAM);
	assert_true(route_has(r, FAB_HOP_NTB, NULL));
	assert_true(route_has(r, FAB_HOP_CSWITCH, NULL));
	assert_true(route_has(r, FAB_HOP_IOMMU, NULL));
	/* Lender-b isolates the device: its windows remapped low (below any DMA
	 * limit), far from the NTB's 64-bit window addresses. */
	assert_true(shadow_grant(p)->dma_bus >= (4ull << 30) &&
		    shadow_grant(p)->dma_bus < (8ull << 30));
	assert_true(shadow_grant(p)->msi_bus < (8ull << 30));
	assert_true(r->hops[0].host == 2 && r->nhops > 4);
	/* A streaming mapping: an IOMMU entry here, nothing at the lender. */
	phys = 512ull << 20;
	bus = dma_map_single(p, phys, 8192, &err);
	assert_int_equal(err, 0);
	assert_true(bus >= shadow_grant(p)->dma_bus &&
		    bus < shadow_grant(p)->dma_bus + shadow_grant(p)->dma_size);
	assert_int_equal(fab_route_resolve_uncached(e.h[2], rid, bus + 100, 4, true, r), 0);
	assert_int_equal(r->status, FAB_OK);
	assert_int_equal(r->tgt.addr, phys + 100);
	dma_unmap_single(p, bus, 8192);
	faults = iommu_fault_count(e.h[0]->iommu);
	assert_int_equal(fab_route_resolve_uncached(e.h[2], rid, bus + 100, 4, true, r), 0);
	assert_int_equal(r->status, FAB_IOMMU_FAULT);
	assert_true(iommu_fault_count(e.h[0]->iommu) > faults);
	/* The engine moves data both ways through the window. */
	fill(in.buf, 65536, 4);
	assert_int_equal(copy(p, in.buf_bus, in.mem_bus + 4096, 65536), ST_OK);
	assert_memory_equal(in.mem + 4096, in.buf, 65536);
	(void)l;
	free(r);
	env_down(&e);
}

/* MSI-X of a borrowed NVMe: rewritten into the lender's MSI window, counted here. */
static void test_nvme_msix(void **state)
{
	struct env e;
	struct pci_dev *p;
	uint8_t buf[4096];
	uint64_t a1, a2;

	env_up(&e);
	borrow(&e, 1, "nvme0", &p);
	assert_true(nvme_drv_bound(p));
	assert_true(p->nvec >= 3);
	assert_true(pci_irq_count(p, 0) > 0);      /* the probe's admin commands */
	a1 = pci_irq_count(p, 1);
	a2 = pci_irq_count(p, 2);
	for (int i = 0; i < 7; i++) {
		struct nvme_drv_cpl cpl;

		assert_int_equal(nvme_drv_io_queue(p, 0, 1, NVME_DRV_READ, (uint64_t)i, 1, buf,
						   &cpl), 0);
		assert_int_equal(cpl.status, 0);
	}
	for (int i = 0; i < 3; i++) {
		struct nvme_drv_cpl cpl;

		assert_int_equal(nvme_drv_io_queue(p, 1, 1, NVME_DRV_READ, (uint64_t)i, 1, buf,
						   &cpl), 0);
	}
	assert_int_equal(pci_irq_count(p, 1) - a1, 7);
	assert_int_equal(pci_irq_count(p, 2) - a2, 3);
	/* Nothing was delivered at the lender. */
	for (unsigned v = 0; v < FAB_INTC_VECTORS; v++)
		assert_int_equal(e.h[1]->intc.count[v], 0);
	env_down(&e);
}

/* ---------- peer-to-peer ---------- */

static bool route_visits_host(const struct fab_route *r, uint32_t host)
{
	for (uint32_t i = 0; i < r->nhops; i++)
		if (r->hops[i].host == host && r->hops[i].kind != FAB_HOP_CABLE &&
		    r->hops[i].kind != FAB_HOP_CSWITCH)
			return true;
	return false;
}

static void p2p_case(struct env *e, struct pci_dev *src, uint32_t src_host, const char *src_name,
		     struct pci_dev *dst, uint32_t dst_host, int ntb_hops)
{
	struct accel_drv_info is = info_of(src), id = info_of(dst);
	struct fab_route *r = malloc(sizeof(*r));
	uint16_t rid = fab_func_bdf(tc_fn(&e->tc, src_host, src_name));
	uint64_t bus;
	const uint64_t n = 256 << 10;

	assert_non_null(r);
	assert_int_equal(pci_p2pdma_bus(src, dst, 2, &bus), 0);
	assert_int_equal(fab_route_resolve_uncached(e->h[src_host], rid, bus + 0x1000, 64, true,
						    r), 0);
	assert_int_equal(r->status, FAB_OK);
	assert_int_equal(r->tgt.host, dst_host);
	assert_int_equal(r->tgt.kind, FAB_TGT_BAR);
	assert_int_equal(r->ntb_hops, ntb_hops);
	if (dst_host != 0)
		assert_false(route_visits_host(r, 0));   /* never through the borrower */
	fill(is.mem + 0x8000, n, 7 + ntb_hops);
	memset(id.mem + 0x1000, 0, n);
	assert_int_equal(copy(src, is.mem_bus + 0x8000, bus + 0x1000, n), ST_OK);
	assert_memory_equal(id.mem + 0x1000, is.mem + 0x8000, n);
	free(r);
}

static void test_p2p_three_cases(void **state)
{
	struct env e;
	struct pci_dev *a0, *a1, *b0, *local;
	struct pci_dev *clients[2];
	unsigned bar = 9;

	env_up(&e);
	borrow(&e, 1, "gpu0", &a0);
	borrow(&e, 1, "gpu1", &a1);
	borrow(&e, 2, "gpu0", &b0);
	local = pci_get_dev(e.ph, fab_func_bdf(tc_fn(&e.tc, 0, "accb")));
	assert_non_null(local);
	assert_true(accel_drv_bound(local));
	/* Same lender: under lender-a's switch, no NTB. */
	p2p_case(&e, a0, 1, "gpu0", a1, 1, 0);
	/* Borrower-local target: lender-a's NTB to our accelerator. */
	p2p_case(&e, a0, 1, "gpu0", local, 0, 1);
	/* Another lender: lender-a -> NTB -> lender-b, not touching the borrower. */
	p2p_case(&e, a0, 1, "gpu0", b0, 2, 1);
	p2p_case(&e, b0, 2, "gpu0", a1, 1, 1);
	/* Resolved once: the same address again, no new window. */
	{
		uint64_t x, y;

		assert_int_equal(pci_p2pdma_bus(a0, b0, 2, &x), 0);
		assert_int_equal(pci_p2pdma_bus(a0, b0, 2, &y), 0);
		assert_int_equal(x, y);
	}
	/* Orchestrator: for gpu0+gpu1 of lender-a, the provider next to both. */
	clients[0] = a0;
	clients[1] = a1;
	{
		struct pci_dev *best = pci_p2pmem_find(e.ph, clients, 2, &bar);

		assert_non_null(best);
		assert_int_equal(bar, 2);
		assert_true(best == a0 || best == a1);
		assert_true(pci_p2pdma_distance(a1, 2, a0) < pci_p2pdma_distance(b0, 2, a0));
		assert_true(pci_p2pdma_distance(b0, 2, a0) > pci_p2pdma_distance(local, 2, local));
	}
	env_down(&e);
}

/* ---------- faults: link events and a lost lender ---------- */

static uint32_t rd32(const volatile uint8_t *bar, uint32_t off)
{
	return __atomic_load_n((const uint32_t *)(bar + off), __ATOMIC_ACQUIRE);
}

static uint64_t nvme_events(struct pci_dev *p)
{
	struct nvme_drv_info in;

	assert_int_equal(nvme_drv_info(p, &in), 0);
	return in.channel_events;
}

/* Another host's lock is never taken while holding the borrower's (the
 * lender's device threads take them the other way round). */
static void set_link(struct env *e, uint32_t host, bool up)
{
	unsigned depth = host ? fab_host_unlock_all(e->h[0]) : 0;

	fab_host_lock(e->h[host]);
	ntb_set_link(e->h[host]->ntbs[0], up);
	fab_host_unlock(e->h[host]);
	if (host)
		fab_host_relock(e->h[0], depth);
}

/* A register of the borrowed device as the lender's CPU reads it. */
static uint32_t lender_rd32(struct env *e, struct pci_dev *p, uint32_t off)
{
	const struct lend_grant *g = shadow_grant(p);
	unsigned depth = fab_host_unlock_all(e->h[0]);
	uint32_t v = 0;
	int rc;

	fab_host_lock(e->h[g->lender]);
	rc = fab_access(e->h[g->lender], FAB_RID_CPU, g->bar_addr[0] + off, &v, 4, false);
	fab_host_unlock(e->h[g->lender]);
	fab_host_relock(e->h[0], depth);
	assert_int_equal(rc, 0);
	return v;
}

struct io_thread {
	struct env *e;
	struct pci_dev *p;
	int rc;
	int64_t ms;
};

/* One read on queue 0, as a daemon worker would issue it (host lock held). */
static void *io_main(void *arg)
{
	struct io_thread *t = arg;
	struct nvme_drv_cpl cpl;
	uint8_t buf[4096];
	uint64_t t0 = smio_now_ms();

	fab_host_lock(t->e->h[0]);
	t->rc = nvme_drv_io_queue(t->p, 0, 1, NVME_DRV_READ, 3, 1, buf, &cpl);
	fab_host_unlock(t->e->h[0]);
	t->ms = (int64_t)(smio_now_ms() - t0);
	return NULL;
}

/*
 * Our NTB's link goes down: the driver is told (frozen), a command in flight
 * fails at once instead of at its timeout, the driver's iomap reads all-ones
 * and a store through it does not reach the controller. Link up: resume, the
 * same pointer reads the device again, and the next I/O resets and works.
 */
static void test_link_frozen(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct io_thread t;
	pthread_t thr;
	struct nvme_drv_cpl cpl;
	uint8_t buf[4096], *bar;
	uint64_t cap;
	uint32_t aqa, db, db0;
	char err[256];

	(void)state;
	env_up(&e);
	borrow(&e, 1, "nvme0", &p);
	assert_true(nvme_drv_bound(p));
	bar = pci_iomap(p, 0);
	assert_non_null(bar);
	cap = __atomic_load_n((uint64_t *)bar, __ATOMIC_ACQUIRE);
	aqa = rd32(bar, NVME_REG_AQA);
	assert_true(cap != UINT64_MAX && aqa != UINT32_MAX);
	assert_int_equal(p->error_state, pci_channel_io_normal);
	assert_int_equal(nvme_events(p), 0);

	/* A command the controller will not complete (its thread stopped). */
	devrun_stop(e.devs[1]);
	e.devs[1] = NULL;
	t = (struct io_thread){ .e = &e, .p = p };
	/* I/O queue 1's SQ tail doorbell: it moves when the command is submitted. */
	db = (uint32_t)nvme_sq_tail_db(1, (unsigned)NVME_CAP_DSTRD(cap));
	db0 = rd32(bar, db);
	fab_host_unlock(e.h[0]);
	assert_int_equal(pthread_create(&thr, NULL, io_main, &t), 0);
	/* In flight once rung (the controller's thread is stopped: nothing else moves it). */
	for (int i = 0; i < 5000 && rd32(bar, db) == db0; i++)
		poll(NULL, 0, 1);
	assert_true(rd32(bar, db) != db0);
	set_link(&e, 0, false);
	assert_int_equal(pthread_join(thr, NULL), 0);
	fab_host_lock(e.h[0]);
	print_message("in-flight command after link down: rc %d after %lld ms\n", t.rc,
		      (long long)t.ms);
	assert_int_equal(t.rc, -EIO);
	assert_true(t.ms < NVME_DRV_TIMEOUT_MS / 2);   /* not the command timeout */
	assert_int_equal(devrun_start(e.h[1], NULL, &e.devs[1], err, sizeof(err)), 0);

	/* Frozen: told once, all-ones, stores dropped, requests refused. */
	assert_int_equal(p->error_state, pci_channel_io_frozen);
	assert_true(pci_channel_offline(p) && !pci_dev_is_disconnected(p));
	assert_int_equal(nvme_events(p), 1);
	assert_true(__atomic_load_n((uint64_t *)bar, __ATOMIC_ACQUIRE) == UINT64_MAX);
	assert_int_equal(rd32(bar, NVME_REG_CSTS), UINT32_MAX);
	aqa = lender_rd32(&e, p, NVME_REG_AQA);
	__atomic_store_n((uint32_t *)(bar + NVME_REG_AQA), 0x00030003u, __ATOMIC_RELEASE);
	assert_int_equal(lender_rd32(&e, p, NVME_REG_AQA), aqa);
	assert_int_equal(nvme_drv_io(p, 1, NVME_DRV_READ, 0, 1, buf, &cpl), -EIO);

	/* Link up: resumed, the same pointer reaches the device, the store never landed. */
	set_link(&e, 0, true);
	assert_int_equal(p->error_state, pci_channel_io_normal);
	assert_int_equal(nvme_events(p), 2);
	assert_true(__atomic_load_n((uint64_t *)bar, __ATOMIC_ACQUIRE) == cap);
	assert_int_equal(rd32(bar, NVME_REG_AQA), aqa);   /* the lender's, never 0x30003 */
	assert_ptr_equal(pci_iomap(p, 0), bar);
	assert_int_equal(nvme_drv_io(p, 1, NVME_DRV_READ, 0, 1, buf, &cpl), 0);
	assert_int_equal(cpl.status, 0);
	env_down(&e);
}

/*
 * A link down at the lender (its NTB), which reaches a borrower only as
 * changed tables: shadow_revalidate resolves the BAR windows again and
 * freezes the channel; after link up it resumes it.
 */
static void test_far_link(void **state)
{
	struct env e;
	struct pci_dev *p;
	uint8_t *regs;
	uint32_t magic;

	(void)state;
	env_up(&e);
	borrow(&e, 1, "gpu0", &p);
	assert_true(accel_drv_bound(p));
	regs = pci_iomap(p, 0);
	assert_non_null(regs);
	magic = rd32(regs, 0);
	assert_true(magic != UINT32_MAX);
	set_link(&e, 1, false);
	assert_int_equal(shadow_revalidate(p), -ENOLINK);
	assert_int_equal(p->error_state, pci_channel_io_frozen);
	assert_int_equal(rd32(regs, 0), UINT32_MAX);
	set_link(&e, 1, true);
	assert_int_equal(shadow_revalidate(p), 0);
	assert_int_equal(p->error_state, pci_channel_io_normal);
	assert_int_equal(rd32(regs, 0), magic);
	env_down(&e);
}

/*
 * The lender is gone: perm_failure reaches the drivers (iomaps all-ones),
 * and the surprise removal does not wait for a controller that cannot
 * answer (no shutdown handshake, no reset timeouts).
 */
static void test_lender_lost(void **state)
{
	struct env e;
	struct pci_dev *pn, *pa;
	struct lend_local *ln, *la;
	uint8_t *bar;
	uint64_t t0, ms;
	uint16_t bdf;

	(void)state;
	env_up(&e);
	ln = borrow(&e, 1, "nvme0", &pn);
	la = borrow(&e, 1, "gpu0", &pa);
	assert_true(nvme_drv_bound(pn) && accel_drv_bound(pa));
	bar = pci_iomap(pn, 0);
	assert_non_null(bar);
	shadow_lost(pn);
	shadow_lost(pa);
	assert_true(pci_dev_is_disconnected(pn) && pci_dev_is_disconnected(pa));
	assert_int_equal(nvme_events(pn), 1);
	assert_int_equal(rd32(bar, NVME_REG_CSTS), UINT32_MAX);
	/* Final: a link event does not bring it back. */
	set_link(&e, 0, false);
	set_link(&e, 0, true);
	assert_int_equal(pn->error_state, pci_channel_io_perm_failure);
	assert_int_equal(nvme_events(pn), 1);
	bdf = pn->bdf;
	t0 = smio_now_ms();
	assert_int_equal(lend_local_return(ln, true), 0);
	assert_int_equal(lend_local_return(la, true), 0);
	ms = smio_now_ms() - t0;
	print_message("surprise removal of two bound shadows: %llu ms\n", (unsigned long long)ms);
	assert_true(ms < 1000);
	assert_null(pci_get_dev(e.ph, bdf));
	for (unsigned i = 0; i < e.nlent; i++)
		if (e.lent[i] == ln || e.lent[i] == la)
			e.lent[i] = NULL;
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shadow_config),
		cmocka_unit_test(test_dma_window),
		cmocka_unit_test(test_nvme_msix),
		cmocka_unit_test(test_p2p_three_cases),
		cmocka_unit_test(test_link_frozen),
		cmocka_unit_test(test_far_link),
		cmocka_unit_test(test_lender_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
