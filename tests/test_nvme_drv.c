// SPDX-License-Identifier: MIT
/*
 * The in-kernel NVMe driver against the controller model running on its
 * device thread, in an in-process cluster: probe (reset, admin queues,
 * Identify, Number of Queues, I/O queues), admin pass-through, block I/O
 * through two queues with MDTS splitting and PRP lists, data across a driver
 * remove + re-probe (controller reset), MSI-X counted per vector, a polled
 * configuration, a host with its IOMMU on, and a command timeout followed by
 * the reset on the next use.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric_util.h"
#include "host/devrun.h"
#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "host/lend.h"
#include "host/pci.h"

#ifndef DL_BORROWED
/* Host 0: IOMMU off. Host 1: IOMMU on. Both keep their NVMe (lendable: false). */
static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    ports:\n"
	"      - device: {name: nvme0, model: nvme, lendable: false,\n"
	"                 params: {serial: DRVTEST0042, namespaces: 2, ns_size: 64M, lba: 4096,\n"
	"                          queues: 4}}\n"
	"  - id: 1\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - device: {name: nvme0, model: nvme, lendable: false,\n"
	"                 params: {serial: DRVTEST-MMU, ns_size: 16M}}\n";

#else
/*
 * The same suite on borrowed NVMe controllers (Device Lending): hosts 0
 * (IOMMU off) and 1 (IOMMU on) borrow over an NTB cable from lenders 2 (IOMMU
 * off) and 3 (IOMMU on); the driver binds to the shadow devices.
 */
static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: 2.ntb0}\n"
	"  - id: 1\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: 3.ntb0}\n"
	"  - id: 2\n"
	"    ram: 1G\n"
	"    ports:\n"
	"      - ntb: {name: ntb0}\n"
	"      - device: {name: nvme0, model: nvme,\n"
	"                 params: {serial: DRVTEST0042, namespaces: 2, ns_size: 64M, lba: 4096,\n"
	"                          queues: 4}}\n"
	"  - id: 3\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0}\n"
	"      - device: {name: nvme0, model: nvme,\n"
	"                 params: {serial: DRVTEST-MMU, ns_size: 16M}}\n";
#endif

struct env {
	struct tcluster tc;
	struct fab_host *h;
	struct devrun_set *devs;
	struct pci_host *ph;
	struct pci_dev *pdev;
#ifdef DL_BORROWED
	struct fab_host *lh;          /* the lender */
	struct lend_local *lent;
#endif
};

#ifdef DL_BORROWED
static void env_up(struct env *e, uint32_t host)
{
	char err[256];

	tc_up(&e->tc, yaml);
	e->h = tc_host(&e->tc, host);
	e->lh = tc_host(&e->tc, host + 2);
	assert_int_equal(devrun_start(e->lh, NULL, &e->devs, err, sizeof(err)), 0);
	fab_host_lock(e->h);
	assert_int_equal(pci_host_create(e->h, &e->ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(e->ph, &nvme_pci_driver), 0);
	/* Borrowed: the shadow device is hot-added and the driver binds to it. */
	assert_int_equal(lend_local_borrow(e->lh, fab_func_bdf(tc_fn(&e->tc, e->lh->id, "nvme0")),
					   e->ph, &e->lent, &e->pdev), 0);
	fab_host_unlock(e->h);
	assert_non_null(shadow_grant(e->pdev));
	assert_true(nvme_drv_bound(e->pdev));
}

static void env_down(struct env *e)
{
	fab_host_lock(e->h);
	/* Returning a device in use is refused until its driver unbinds. */
	assert_int_equal(lend_local_return(e->lent, false), -EBUSY);
	pci_host_destroy(e->ph);
	assert_int_equal(lend_local_return(e->lent, false), 0);
	fab_host_unlock(e->h);
	devrun_stop(e->devs);
	tc_down(&e->tc);
	memset(&nvme_drv_params, 0, sizeof(nvme_drv_params));
}
#else
static void env_up(struct env *e, uint32_t host)
{
	char err[256];

	tc_up(&e->tc, yaml);
	e->h = tc_host(&e->tc, host);
	assert_int_equal(devrun_start(e->h, NULL, &e->devs, err, sizeof(err)), 0);
	/* As smartiod does: the PCI core and the driver under the host lock. */
	fab_host_lock(e->h);
	assert_int_equal(pci_host_create(e->h, &e->ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(e->ph, &nvme_pci_driver), 0);
	fab_host_unlock(e->h);
	e->pdev = pci_get_dev(e->ph, fab_func_bdf(tc_fn(&e->tc, host, "nvme0")));
	assert_non_null(e->pdev);
	assert_true(nvme_drv_bound(e->pdev));
}

static void env_down(struct env *e)
{
	fab_host_lock(e->h);
	pci_host_destroy(e->ph);
	fab_host_unlock(e->h);
	devrun_stop(e->devs);
	tc_down(&e->tc);
	memset(&nvme_drv_params, 0, sizeof(nvme_drv_params));
}

#endif

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* I/O with the lock held, as the daemon's handlers call it. */
static int io(struct env *e, int q, uint32_t nsid, enum nvme_drv_op op, uint64_t slba,
	      uint32_t nlb, void *buf)
{
	struct nvme_drv_cpl cpl;
	int rc;

	fab_host_lock(e->h);
	rc = q < 0 ? nvme_drv_io(e->pdev, nsid, op, slba, nlb, buf, &cpl)
		   : nvme_drv_io_queue(e->pdev, (unsigned)q, nsid, op, slba, nlb, buf, &cpl);
	fab_host_unlock(e->h);
	if (!rc && cpl.status)
		return 0x10000 | cpl.status;
	return rc;
}

static void test_probe_identify(void **state)
{
	struct nvme_drv_info info;
	struct nvme_drv_ns ns;
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	struct nvme_drv_cpl cpl;
	struct nvme_sqe s;
	struct env e;

	(void)state;
	env_up(&e, 0);
	assert_int_equal(nvme_drv_info(e.pdev, &info), 0);
	assert_string_equal(info.serial, "DRVTEST0042");
	assert_non_null(strstr(info.model, "smartio emulated NVMe"));
	assert_int_equal(info.nn, 2);
	assert_int_equal(info.nns, 2);
	assert_int_equal(info.nioq, 2);  /* min(2 asked, 32 the controller allocated) */
	assert_int_equal(info.nvec, 3);                 /* admin + 2 I/O */
	assert_int_equal(info.max_xfer, 128 * 1024);    /* MDTS 5, 4 KiB pages */
	assert_int_equal(nvme_drv_ns_info(e.pdev, 2, &ns), 0);
	assert_int_equal(ns.lba_shift, 12);
	assert_int_equal(ns.nsze, (64u << 20) / 4096);
	assert_int_equal(nvme_drv_ns_info(e.pdev, 3, &ns), -ENOENT);

	/* Pass-through Identify Controller: the model's fields. */
	nvme_sqe_init(&s, nvme_admin_identify, 0, 0);
	s.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	s.prp1 = 0xdead000;   /* ignored: the driver supplies the pointers */
	fab_host_lock(e.h);
	assert_int_equal(nvme_drv_admin(e.pdev, &s, id, sizeof(*id), NVME_DRV_FROM_DEV, 0, &cpl),
			 0);
	fab_host_unlock(e.h);
	assert_int_equal(cpl.status, 0);
	assert_memory_equal(id->sn, "DRVTEST0042         ", 20);
	assert_int_equal(id->nn, 2);
	assert_int_equal(id->sqes, 0x66);
	assert_int_equal(id->cqes, 0x44);
	assert_int_equal(id->mdts, 5);

	/* A bad CNS completes with the controller's status, not an errno. */
	s.cdw10 = 0x55;
	fab_host_lock(e.h);
	assert_int_equal(nvme_drv_admin(e.pdev, &s, id, 4096, NVME_DRV_FROM_DEV, 0, &cpl), 0);
	fab_host_unlock(e.h);
	assert_int_equal(NVME_ST_SC(cpl.status), NVME_SC_INVALID_FIELD);
	free(id);
	env_down(&e);
}

static void test_rw_two_queues(void **state)
{
	const uint64_t lbas[] = { 0, 1, 7, 100, 4095, 16383 };
	size_t big = 300 * 1024;      /* > MDTS: split, and PRP lists */
	uint8_t *w = malloc(big), *r = malloc(big);
	struct env e;

	(void)state;
	env_up(&e, 0);
	for (size_t i = 0; i < sizeof(lbas) / sizeof(lbas[0]); i++) {
		fill(w, 4096, (unsigned)i + 1);
		assert_int_equal(io(&e, 0, 1, NVME_DRV_WRITE, lbas[i], 1, w), 0);
	}
	for (size_t i = 0; i < sizeof(lbas) / sizeof(lbas[0]); i++) {
		fill(w, 4096, (unsigned)i + 1);
		memset(r, 0, 4096);
		assert_int_equal(io(&e, 1, 1, NVME_DRV_READ, lbas[i], 1, r), 0);
		assert_memory_equal(r, w, 4096);
	}
	/* Namespace 2 is separate: LBA 0 there is still zero. */
	assert_int_equal(io(&e, 1, 2, NVME_DRV_READ, 0, 1, r), 0);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(r[i], 0);
	/* A multi-command transfer, written on one queue and read on the other. */
	fill(w, big, 99);
	assert_int_equal(io(&e, 1, 2, NVME_DRV_WRITE, 1000, (uint32_t)(big / 4096), w), 0);
	memset(r, 0, big);
	assert_int_equal(io(&e, 0, 2, NVME_DRV_READ, 1000, (uint32_t)(big / 4096), r), 0);
	assert_memory_equal(r, w, big);
	assert_true(nvme_drv_queue_cmds(e.pdev, 0) >= 6 + 3);
	assert_true(nvme_drv_queue_cmds(e.pdev, 1) >= 6 + 3);
	/* Round robin spreads plain nvme_drv_io calls. */
	{
		uint64_t q0 = nvme_drv_queue_cmds(e.pdev, 0), q1 = nvme_drv_queue_cmds(e.pdev, 1);

		for (int i = 0; i < 4; i++)
			assert_int_equal(io(&e, -1, 1, NVME_DRV_READ, 0, 1, r), 0);
		assert_int_equal(nvme_drv_queue_cmds(e.pdev, 0) - q0, 2);
		assert_int_equal(nvme_drv_queue_cmds(e.pdev, 1) - q1, 2);
	}
	/* Flush, deallocate (reads zeroes), write zeroes. */
	assert_int_equal(io(&e, 0, 1, NVME_DRV_FLUSH, 0, 0, NULL), 0);
	assert_int_equal(io(&e, 0, 1, NVME_DRV_DEALLOCATE, 7, 1, NULL), 0);
	assert_int_equal(io(&e, 0, 1, NVME_DRV_READ, 7, 1, r), 0);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(r[i], 0);
	assert_int_equal(io(&e, 0, 2, NVME_DRV_WRITE_ZEROES, 1000, 2, NULL), 0);
	assert_int_equal(io(&e, 0, 2, NVME_DRV_READ, 1000, 3, r), 0);
	for (int i = 0; i < 8192; i++)
		assert_int_equal(r[i], 0);
	assert_memory_equal(r + 8192, w + 8192, 4096);
	/* Out of range is refused before reaching the controller. */
	assert_int_equal(io(&e, 0, 1, NVME_DRV_READ, 16383, 2, r), -ERANGE);
	assert_int_equal(io(&e, 0, 9, NVME_DRV_READ, 0, 1, r), -ENOENT);
	free(w);
	free(r);
	env_down(&e);
}

static void test_reprobe_keeps_data(void **state)
{
	uint8_t w[8192], r[8192];
	struct env e;

	(void)state;
	env_up(&e, 0);
	fill(w, sizeof(w), 5);
	assert_int_equal(io(&e, 0, 1, NVME_DRV_WRITE, 42, 2, w), 0);
	fab_host_lock(e.h);
	pci_unregister_driver(e.ph, &nvme_pci_driver);
	assert_false(nvme_drv_bound(e.pdev));
	nvme_drv_params.io_queues = 3;
	assert_int_equal(pci_register_driver(e.ph, &nvme_pci_driver), 0);
	fab_host_unlock(e.h);
	assert_true(nvme_drv_bound(e.pdev));
	{
		struct nvme_drv_info info;

		assert_int_equal(nvme_drv_info(e.pdev, &info), 0);
		assert_int_equal(info.nioq, 3);
	}
	memset(r, 0, sizeof(r));
	assert_int_equal(io(&e, 2, 1, NVME_DRV_READ, 42, 2, r), 0);
	assert_memory_equal(r, w, sizeof(r));
	env_down(&e);
}

static void test_msix_per_vector(void **state)
{
	uint8_t buf[4096] = { 0 };
	uint64_t a0, a1, a2, b1, b2;
	struct env e;

	(void)state;
	env_up(&e, 0);
	assert_int_equal(nvme_drv_queue_vector(e.pdev, 0), 1);
	assert_int_equal(nvme_drv_queue_vector(e.pdev, 1), 2);
	a0 = pci_irq_count(e.pdev, 0);
	a1 = pci_irq_count(e.pdev, 1);
	a2 = pci_irq_count(e.pdev, 2);
	assert_true(a0 > 0);             /* the probe's admin commands */
	for (int i = 0; i < 10; i++)
		assert_int_equal(io(&e, 0, 1, NVME_DRV_READ, (uint64_t)i, 1, buf), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(io(&e, 1, 1, NVME_DRV_READ, (uint64_t)i, 1, buf), 0);
	b1 = pci_irq_count(e.pdev, 1);
	b2 = pci_irq_count(e.pdev, 2);
	/* One command in flight at a time: one message per completion. */
	assert_int_equal(b1 - a1, 10);
	assert_int_equal(b2 - a2, 5);
	assert_int_equal(pci_irq_count(e.pdev, 0), a0);
	env_down(&e);
}

static void test_polled(void **state)
{
	uint8_t w[4096 * 40], r[4096 * 40];
	struct nvme_drv_info info;
	struct env e;

	(void)state;
	nvme_drv_params.use_polling = true;
	env_up(&e, 0);
	assert_int_equal(nvme_drv_info(e.pdev, &info), 0);
	assert_int_equal(info.nvec, 0);
	assert_int_equal(e.pdev->nvec, 0);
	assert_int_equal(nvme_drv_queue_vector(e.pdev, 0), -1);
	fill(w, sizeof(w), 11);
	assert_int_equal(io(&e, 0, 1, NVME_DRV_WRITE, 500, 40, w), 0);
	assert_int_equal(io(&e, 1, 1, NVME_DRV_READ, 500, 40, r), 0);
	assert_memory_equal(r, w, sizeof(r));
	env_down(&e);
}

static void test_iommu_host(void **state)
{
	uint8_t w[4096 * 33], r[4096 * 33];
	uint64_t faults;
	struct env e;

	(void)state;
	env_up(&e, 1);
	assert_true(iommu_enabled(e.h->iommu));
	/* Queues, bounce buffers and PRP lists all came from the DMA API:
	 * the controller sees IOVAs that the IOMMU translates, and nothing faults. */
	faults = iommu_fault_count(e.h->iommu);
	fill(w, sizeof(w), 21);
	assert_int_equal(io(&e, 0, 1, NVME_DRV_WRITE, 10, 33 * 8, w), 0);   /* 512-byte LBAs */
	assert_int_equal(io(&e, 1, 1, NVME_DRV_READ, 10, 33 * 8, r), 0);
	assert_memory_equal(r, w, sizeof(r));
	assert_int_equal(iommu_fault_count(e.h->iommu), faults);
	/* Admin data through the bounce buffer's IOVA as well. */
	{
		struct nvme_drv_cpl cpl;
		struct nvme_sqe s;
		uint8_t id[4096];

		nvme_sqe_init(&s, nvme_admin_identify, 0, 0);
		s.cdw10 = NVME_IDENTIFY_CNS_CTRL;
		fab_host_lock(e.h);
		assert_int_equal(nvme_drv_admin(e.pdev, &s, id, sizeof(id), NVME_DRV_FROM_DEV, 0,
						&cpl), 0);
		fab_host_unlock(e.h);
		assert_int_equal(cpl.status, 0);
		assert_memory_equal(((struct nvme_id_ctrl *)id)->sn, "DRVTEST-MMU", 11);
	}
	env_down(&e);
}

static void test_timeout_then_reset(void **state)
{
	struct nvme_drv_info info;
	struct nvme_drv_cpl cpl;
	struct nvme_sqe s;
	uint8_t w[4096], r[4096];
	struct env e;

	(void)state;
	env_up(&e, 0);
	fill(w, sizeof(w), 77);
	assert_int_equal(io(&e, 0, 1, NVME_DRV_WRITE, 3, 1, w), 0);
	/* Bus mastering off behind the driver's back: the controller fetches
	 * nothing, so the command times out. */
	fab_host_lock(e.h);
	pci_clear_master(e.pdev);
	nvme_sqe_init(&s, nvme_admin_get_features, 0, 0);
	s.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	assert_int_equal(nvme_drv_admin(e.pdev, &s, NULL, 0, NVME_DRV_NONE, 150, &cpl),
			 -ETIMEDOUT);
	assert_int_equal(nvme_drv_info(e.pdev, &info), 0);
	assert_true(info.needs_reset);
	pci_set_master(e.pdev);
	fab_host_unlock(e.h);
	/* The next use resets the controller and recreates the queues. */
	memset(r, 0, sizeof(r));
	assert_int_equal(io(&e, 1, 1, NVME_DRV_READ, 3, 1, r), 0);
	assert_memory_equal(r, w, sizeof(r));
	assert_int_equal(nvme_drv_info(e.pdev, &info), 0);
	assert_false(info.needs_reset);
	assert_int_equal(info.resets, 1);
	assert_int_equal(info.nioq, 2);
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_identify),
		cmocka_unit_test(test_rw_two_queues),
		cmocka_unit_test(test_reprobe_keeps_data),
		cmocka_unit_test(test_msix_per_vector),
		cmocka_unit_test(test_polled),
		cmocka_unit_test(test_iommu_host),
		cmocka_unit_test(test_timeout_then_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
