// SPDX-License-Identifier: MIT
/*
 * NVMe virtual functions: enabling VFs through the PF's SR-IOV capability
 * (the PCI core's sriov_numvfs) brings up one controller per VF, each with
 * its own BAR0, queues, MSI-X and a namespace that is a slice of the PF's
 * media; the in-kernel driver binds each VF like any controller; two VFs do
 * independent I/O and never see each other's (or the PF's) data; the data
 * stays with the PF's media when VFs are disabled and enabled again.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric_util.h"
#include "fabric/sriov.h"
#include "host/devrun.h"
#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "host/pci.h"

/* IOMMU on: each function's DMA goes through its own domain, by requester ID. */
static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - device: {name: nvme0, model: nvme, lendable: false, sriov: {vfs: 3},\n"
	"                 params: {ns_size: 64M, queues: 4}}\n";

struct env {
	struct tcluster tc;
	struct fab_host *h;
	struct devrun_set *devs;
	struct pci_host *ph;
	struct pci_dev *pf;
};

static void env_up(struct env *e, unsigned numvfs)
{
	char err[256];

	tc_up(&e->tc, yaml);
	e->h = tc_host(&e->tc, 0);
	assert_int_equal(devrun_start(e->h, NULL, &e->devs, err, sizeof(err)), 0);
	fab_host_lock(e->h);
	assert_int_equal(pci_host_create(e->h, &e->ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(e->ph, &nvme_pci_driver), 0);
	e->pf = pci_get_dev(e->ph, fab_func_bdf(tc_fn(&e->tc, 0, "nvme0")));
	assert_non_null(e->pf);
	assert_true(nvme_drv_bound(e->pf));
	/* As `echo N > sriov_numvfs`: the VFs appear and the driver probes each. */
	assert_int_equal(pci_sriov_configure(e->pf, numvfs), 0);
	fab_host_unlock(e->h);
}

static void env_down(struct env *e)
{
	fab_host_lock(e->h);
	pci_host_destroy(e->ph);
	fab_host_unlock(e->h);
	devrun_stop(e->devs);
	tc_down(&e->tc);
}

static int io(struct env *e, struct pci_dev *p, enum nvme_drv_op op, uint64_t slba,
	      uint32_t nlb, void *buf)
{
	struct nvme_drv_cpl cpl;
	int rc;

	fab_host_lock(e->h);
	rc = nvme_drv_io(p, 1, op, slba, nlb, buf, &cpl);
	fab_host_unlock(e->h);
	if (!rc && cpl.status)
		return 0x10000 | cpl.status;
	return rc;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static void test_vfs_are_controllers(void **state)
{
	struct nvme_drv_info info;
	struct nvme_drv_ns ns;
	struct env e;

	(void)state;
	env_up(&e, 2);
	for (unsigned n = 1; n <= 2; n++) {
		struct pci_dev *vf = pci_sriov_vf(e.pf, n);
		char sn[24];

		assert_non_null(vf);
		assert_true(nvme_drv_bound(vf));
		assert_int_equal(nvme_drv_info(vf, &info), 0);
		snprintf(sn, sizeof(sn), "SMARTIO-nvme0-VF%u", n);
		assert_string_equal(info.serial, sn);
		assert_true(info.nvec > 1);          /* its own MSI-X */
		assert_int_equal(nvme_drv_ns_info(vf, 1, &ns), 0);
		/* A quarter of the PF's 64 MiB (PF + 3 VFs). */
		assert_int_equal(ns.nsze << ns.lba_shift, 16u << 20);
		/* Its own BAR0 is a VF BAR0 slice. */
		assert_int_equal(vf->bar_addr[0],
				 pci_sriov_vf(e.pf, 1)->bar_addr[0] + (n - 1) * 16384ull);
	}
	assert_int_equal(nvme_drv_ns_info(e.pf, 1, &ns), 0);
	assert_int_equal(ns.nsze << ns.lba_shift, 16u << 20);
	assert_null(pci_sriov_vf(e.pf, 3));
	env_down(&e);
}

static void test_independent_io_and_isolation(void **state)
{
	size_t len = 64 * 1024;
	uint8_t *w[3], *r = malloc(len);
	struct pci_dev *fn[3];
	struct env e;

	(void)state;
	env_up(&e, 2);
	fn[0] = e.pf;
	fn[1] = pci_sriov_vf(e.pf, 1);
	fn[2] = pci_sriov_vf(e.pf, 2);
	/* The same LBAs on PF, VF1 and VF2, interleaved. */
	for (int i = 0; i < 3; i++) {
		w[i] = malloc(len);
		fill(w[i], len, 100 + i);
		assert_int_equal(io(&e, fn[i], NVME_DRV_WRITE, 8, len / 512, w[i]), 0);
	}
	for (int round = 0; round < 4; round++)
		for (int i = 2; i >= 0; i--) {
			memset(r, 0, len);
			assert_int_equal(io(&e, fn[i], NVME_DRV_READ, 8, len / 512, r), 0);
			assert_memory_equal(r, w[i], len);
		}
	/* LBA 0 was written by nobody: zeroes everywhere, nothing leaks across slices. */
	for (int i = 0; i < 3; i++) {
		memset(r, 0xee, 4096);
		assert_int_equal(io(&e, fn[i], NVME_DRV_READ, 0, 8, r), 0);
		for (int k = 0; k < 4096; k++)
			assert_int_equal(r[k], 0);
	}
	/* Past the slice is past the namespace (the driver knows it from Identify). */
	assert_int_equal(io(&e, fn[1], NVME_DRV_READ, (16u << 20) / 512, 8, r), -ERANGE);
	/* VFs go, come back in their reset state, and their data is still on the PF's media. */
	fab_host_lock(e.h);
	assert_int_equal(pci_sriov_configure(e.pf, 0), 0);
	assert_null(pci_sriov_vf(e.pf, 1));
	assert_int_equal(pci_sriov_configure(e.pf, 2), 0);
	fab_host_unlock(e.h);
	fn[2] = pci_sriov_vf(e.pf, 2);
	assert_true(nvme_drv_bound(fn[2]));
	assert_int_equal(io(&e, fn[2], NVME_DRV_READ, 8, len / 512, r), 0);
	assert_memory_equal(r, w[2], len);
	for (int i = 0; i < 3; i++)
		free(w[i]);
	free(r);
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vfs_are_controllers),
		cmocka_unit_test(test_independent_io_and_isolation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
