// SPDX-License-Identifier: MIT
/*
 * Lending per function: the VFs of one SR-IOV NVMe controller lent to two
 * hosts at once (Device Lending's shadow devices), each bound by the
 * in-kernel NVMe driver there as a whole function (IDs and BAR types from the
 * PF, as vfio-pci presents a VF), each doing verified I/O; the lender's IOMMU
 * isolates them by requester ID: a VF's DMA outside its own mappings (into
 * the other VF's window) is a fault recorded against it alone, and both go
 * on working.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"
#include "host/devrun.h"
#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "host/lend.h"
#include "host/pci.h"

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
	"  - id: 1\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}\n"
	"      - device: {name: nvme0, model: nvme, sriov: {vfs: 2},\n"
	"                 params: {ns_size: 48M, queues: 4}}\n"
	"  - id: 2\n"
	"    ram: 1G\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}\n";

struct env {
	struct tcluster tc;
	struct fab_host *h[3];
	struct devrun_set *devs;
	struct pci_host *ph[3];
	struct pci_dev *pf;
	struct lend_local *lent[2];
	struct pci_dev *sh[2];        /* VF1 at host 0, VF2 at host 2 */
};

static const uint32_t at[2] = { 0, 2 };

static void env_up(struct env *e)
{
	char err[256];

	tc_up(&e->tc, yaml);
	for (uint32_t i = 0; i < 3; i++) {
		e->h[i] = tc_host(&e->tc, i);
		fab_host_lock(e->h[i]);
		assert_int_equal(pci_host_create(e->h[i], &e->ph[i], err, sizeof(err)), 0);
		if (i != 1)
			assert_int_equal(pci_register_driver(e->ph[i], &nvme_pci_driver), 0);
		fab_host_unlock(e->h[i]);
	}
	assert_int_equal(devrun_start(e->h[1], NULL, &e->devs, err, sizeof(err)), 0);
	/* The lender enables two VFs; being lendable, they get no local driver. */
	fab_host_lock(e->h[1]);
	e->pf = pci_get_dev(e->ph[1], fab_func_bdf(tc_fn(&e->tc, 1, "nvme0")));
	assert_int_equal(pci_sriov_configure(e->pf, 2), 0);
	fab_host_unlock(e->h[1]);
	for (unsigned v = 0; v < 2; v++) {
		struct pci_dev *vf = pci_sriov_vf(e->pf, v + 1);

		assert_non_null(vf);
		assert_true(vf->is_lendable);
		assert_null(vf->driver);
		fab_host_lock(e->h[at[v]]);
		assert_int_equal(lend_local_borrow(e->h[1], vf->bdf, e->ph[at[v]], &e->lent[v],
						   &e->sh[v]), 0);
		fab_host_unlock(e->h[at[v]]);
	}
}

static void env_down(struct env *e)
{
	for (unsigned v = 0; v < 2; v++) {
		fab_host_lock(e->h[at[v]]);
		assert_int_equal(shadow_destroy(e->ph[at[v]], e->sh[v], true), 0);
		assert_int_equal(lend_local_return(e->lent[v], false), 0);
		fab_host_unlock(e->h[at[v]]);
	}
	for (uint32_t i = 0; i < 3; i++) {
		fab_host_lock(e->h[i]);
		pci_host_destroy(e->ph[i]);
		fab_host_unlock(e->h[i]);
	}
	devrun_stop(e->devs);
	tc_down(&e->tc);
}

static int io(struct env *e, unsigned v, enum nvme_drv_op op, uint64_t slba, uint32_t nlb,
	      void *buf)
{
	struct nvme_drv_cpl cpl;
	int rc;

	fab_host_lock(e->h[at[v]]);
	rc = nvme_drv_io(e->sh[v], 1, op, slba, nlb, buf, &cpl);
	fab_host_unlock(e->h[at[v]]);
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

static void rw_check(struct env *e, unsigned v, uint64_t lba, unsigned seed)
{
	size_t len = 32 * 1024;
	uint8_t *w = malloc(len), *r = malloc(len);

	fill(w, len, seed);
	assert_int_equal(io(e, v, NVME_DRV_WRITE, lba, len / 512, w), 0);
	memset(r, 0, len);
	assert_int_equal(io(e, v, NVME_DRV_READ, lba, len / 512, r), 0);
	assert_memory_equal(r, w, len);
	free(w);
	free(r);
}

static void test_vfs_lent_to_two_hosts(void **state)
{
	struct nvme_drv_info info;
	struct env e;
	uint32_t id, cmd;

	(void)state;
	env_up(&e);
	for (unsigned v = 0; v < 2; v++) {
		struct pci_dev *s = e.sh[v];
		char sn[24];

		/* A whole function at the borrower: IDs, 64-bit BAR0, Memory Space. */
		assert_int_equal(s->vendor, 0x534d);
		assert_int_equal(s->device, 0x0011);
		fab_host_lock(e.h[at[v]]);
		assert_int_equal(pci_read_config(s, PCI_VENDOR_ID, 4, &id), 0);
		assert_int_equal(pci_read_config(s, PCI_COMMAND, 2, &cmd), 0);
		fab_host_unlock(e.h[at[v]]);
		assert_int_equal(id, 0x0011534d);
		assert_true(cmd & PCI_COMMAND_MEMORY);
		assert_true(nvme_drv_bound(s));
		assert_int_equal(nvme_drv_info(s, &info), 0);
		snprintf(sn, sizeof(sn), "SMARTIO-nvme0-VF%u", v + 1);
		assert_string_equal(info.serial, sn);
	}
	/* Both at once, the same LBAs, each its own data. */
	for (int round = 0; round < 3; round++) {
		rw_check(&e, 0, 16, 1000 + round);
		rw_check(&e, 1, 16, 2000 + round);
	}
	env_down(&e);
}

static void test_iommu_isolates_vfs(void **state)
{
	struct env e;
	struct iommu_fault f[IOMMU_FAULT_LOG];
	uint16_t rid1, rid2;
	uint64_t before, other;
	uint32_t x = 0;
	unsigned n;

	(void)state;
	env_up(&e);
	rid1 = shadow_grant(e.sh[0])->bdf;
	rid2 = shadow_grant(e.sh[1])->bdf;
	assert_int_equal(rid1, e.pf->bdf + 1);
	assert_int_equal(rid2, e.pf->bdf + 2);
	rw_check(&e, 0, 0, 7);
	rw_check(&e, 1, 0, 8);
	/*
	 * Each VF has a domain of its own: the same IOVA (both lends start
	 * their windows at the same place) is VF1's window to host 0 and VF2's
	 * to host 2. Where VF2's translates to (its NTB window) is nowhere in
	 * VF1's domain.
	 */
	assert_int_equal(shadow_grant(e.sh[0])->dma_bus, shadow_grant(e.sh[1])->dma_bus);
	{
		uint64_t p1, p2, c;

		fab_host_lock(e.h[1]);
		assert_int_equal(iommu_translate(e.h[1]->iommu, rid1, shadow_grant(e.sh[0])->dma_bus,
						 true, &p1, &c, NULL), 0);
		assert_int_equal(iommu_translate(e.h[1]->iommu, rid2, shadow_grant(e.sh[1])->dma_bus,
						 true, &p2, &c, NULL), 0);
		fab_host_unlock(e.h[1]);
		assert_int_not_equal(p1, p2);
		other = p2;
	}
	before = iommu_fault_count(e.h[1]->iommu);
	fab_host_lock(e.h[1]);
	assert_int_equal(fab_access(e.h[1], rid1, other, &x, sizeof(x), true), FAB_IOMMU_FAULT);
	fab_host_unlock(e.h[1]);
	assert_int_equal(iommu_fault_count(e.h[1]->iommu), before + 1);
	n = iommu_faults(e.h[1]->iommu, f, IOMMU_FAULT_LOG);
	assert_true(n >= 1);
	assert_int_equal(f[n - 1].rid, rid1);
	assert_int_equal(f[n - 1].iova, other);
	assert_int_equal(f[n - 1].reason, IOMMU_FAULT_NOT_PRESENT);
	/* VF2 never sees it: its I/O goes on, and VF1's too. */
	rw_check(&e, 1, 64, 9);
	rw_check(&e, 0, 64, 10);
	assert_int_equal(iommu_fault_count(e.h[1]->iommu), before + 1);
	env_down(&e);
}

/* The PF may be lent too, but its VFs stay the lender's: SR-IOV writes are dropped. */
static void test_pf_borrower_cannot_touch_vfs(void **state)
{
	struct lend_local *l;
	struct pci_dev *s;
	struct env e;
	uint32_t cap = 0x100, v, ctrl;

	(void)state;
	env_up(&e);
	fab_host_lock(e.h[2]);
	assert_int_equal(lend_local_borrow(e.h[1], e.pf->bdf, e.ph[2], &l, &s), 0);
	assert_true(nvme_drv_bound(s));
	/* The borrower finds the capability and sees the VFs enabled ... */
	assert_int_equal(pci_read_config(s, cap, 4, &v), 0);
	assert_int_equal(v & 0xffff, PCI_EXT_CAP_ID_SRIOV);
	assert_int_equal(pci_read_config(s, cap + PCI_SRIOV_CTRL, 2, &ctrl), 0);
	assert_true(ctrl & PCI_SRIOV_CTRL_VFE);
	/* ... but cannot take them away from their borrowers. */
	assert_int_equal(pci_write_config(s, cap + PCI_SRIOV_CTRL, 2, 0), 0);
	assert_int_equal(pci_read_config(s, cap + PCI_SRIOV_CTRL, 2, &v), 0);
	assert_int_equal(v, ctrl);
	assert_int_equal(pci_sriov_configure(s, 0), -ENODEV);
	assert_int_equal(shadow_destroy(e.ph[2], s, true), 0);
	assert_int_equal(lend_local_return(l, false), 0);
	fab_host_unlock(e.h[2]);
	rw_check(&e, 0, 0, 11);
	rw_check(&e, 1, 0, 12);
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vfs_lent_to_two_hosts),
		cmocka_unit_test(test_iommu_isolates_vfs),
		cmocka_unit_test(test_pf_borrower_cannot_touch_vfs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
