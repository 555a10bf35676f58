// SPDX-License-Identifier: MIT
/*
 * SR-IOV and multi-function endpoints in the fabric and the PCI core: the
 * SR-IOV capability's registers as the PCIe spec gives them, VFs that appear
 * only while VF Enable is set, with all-ones IDs and no BARs in their headers,
 * VF BARs sized and assigned for TotalVFs by enumeration and decoded per VF
 * under VF MSE, routing IDs from First VF Offset and VF Stride, the PCI
 * core's sriov_numvfs, functions 1..7 behind the Multi-Function bit, and
 * pciutils' lspci decoding our config space dumps.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"
#include "fabric/sriov.h"
#include "host/pci.h"

static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - device: {name: nvme0, model: nvme, sriov: {vfs: 4}}\n"
	"      - device:\n"
	"          name: mf0\n"
	"          model: test\n"
	"          lendable: false\n"
	"          functions:\n"
	"            - {name: mf1, model: test, lendable: false}\n"
	"            - {name: mf2, model: test, sriov: {vfs: 2, device_id: 0x1234}}\n";

struct env {
	struct tcluster tc;
	struct fab_host *h;
	struct fab_func *pf;
	uint16_t cap, bdf;
};

static void env_up(struct env *e)
{
	tc_up(&e->tc, yaml);
	e->h = tc_host(&e->tc, 0);
	e->pf = tc_fn(&e->tc, 0, "nvme0");
	e->bdf = fab_func_bdf(e->pf);
	e->cap = fab_cfg_find_ecap(&e->pf->cfg, PCI_EXT_CAP_ID_SRIOV);
	assert_int_not_equal(e->cap, 0);
}

static uint32_t rd(struct env *e, uint16_t bdf, uint32_t off, uint32_t size)
{
	uint32_t v = 0;

	fab_cfg_access_read(e->h, bdf, off, size, &v);
	return v;
}

static void wr(struct env *e, uint16_t bdf, uint32_t off, uint32_t size, uint32_t v)
{
	assert_int_equal(fab_cfg_access_write(e->h, bdf, off, size, v), 0);
}

static void test_capability_registers(void **state)
{
	struct env e;

	env_up(&e);
	assert_int_equal(rd(&e, e.bdf, e.cap, 4) & 0xfffff, 0x10010);   /* ID 0010h, v1 */
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_TOTAL_VF, 2), 4);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_INITIAL_VF, 2), 4);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2), 0);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_VF_OFFSET, 2), 1);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_VF_STRIDE, 2), 1);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_VF_DID, 2), 0x0011);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_SUP_PGSIZE, 4), FAB_SRIOV_PGSIZES);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_SYS_PGSIZE, 4), 1);
	/* Offset and Stride are read-only. */
	wr(&e, e.bdf, e.cap + PCI_SRIOV_VF_OFFSET, 4, 0x00050007);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_VF_OFFSET, 4), 0x00010001);
	/* VF BAR0 (64-bit, 16 KiB per VF) sizes like a BAR. */
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4) & 0xf,
			 PCI_BASE_ADDRESS_MEM_TYPE_64);
	{
		uint32_t orig = rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4);

		wr(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4, 0xffffffffu);
		assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4), 0xffffc004u);
		wr(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4, orig);
	}
	/* Enumeration assigned room for TotalVFs, naturally aligned. */
	{
		uint64_t b = rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4) & ~0xfull;

		b |= (uint64_t)rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR + 4, 4) << 32;
		assert_int_not_equal(b, 0);
		assert_int_equal(b & 0x3fff, 0);
		for (unsigned i = 0; i < 6; i++) {
			uint64_t pb = fab_func_bar_addr(e.pf, i);

			if (pb)   /* no overlap with the PF's own BARs */
				assert_true(pb + e.pf->bars[i].size <= b || pb >= b + 4 * 16384);
		}
	}
	tc_down(&e.tc);
}

static void test_vfs_appear_with_vf_enable(void **state)
{
	struct env e;
	uint32_t v;

	env_up(&e);
	/* Nothing answers at the VFs' routing IDs yet. */
	assert_int_equal(fab_cfg_access_read(e.h, e.bdf + 1, 0, 4, &v), -ENODEV);
	assert_int_equal(v, 0xffffffffu);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2, 2);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_CTRL, 2, PCI_SRIOV_CTRL_VFE);
	/* VF1 and VF2 answer, with all-ones IDs; VF3 does not (NumVFs = 2). */
	assert_int_equal(fab_cfg_access_read(e.h, e.bdf + 1, 0, 4, &v), 0);
	assert_int_equal(v, 0xffffffffu);
	assert_int_equal(fab_cfg_access_read(e.h, e.bdf + 2, 0, 4, &v), 0);
	assert_int_equal(fab_cfg_access_read(e.h, e.bdf + 3, 0, 4, &v), -ENODEV);
	assert_ptr_equal(fab_func_by_bdf(e.h, e.bdf + 2), fab_sriov_vf(e.pf, 2));
	assert_int_equal(fab_func_bdf(fab_sriov_vf(e.pf, 2)), e.bdf + 2);
	/* The class is the PF's. */
	assert_int_equal(rd(&e, e.bdf + 1, PCI_CLASS_REVISION, 4) >> 8, 0x010802);
	/* NumVFs is locked while VF Enable is set. */
	wr(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2, 3);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2), 2);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_CTRL, 2, 0);
	assert_int_equal(fab_cfg_access_read(e.h, e.bdf + 1, 0, 4, &v), -ENODEV);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2, 3);
	assert_int_equal(rd(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2), 3);
	tc_down(&e.tc);
}

static void test_vf_header_and_decode(void **state)
{
	struct env e;
	struct fab_route r;
	struct fab_func *vf2;
	uint64_t base, a2;

	env_up(&e);
	vf2 = fab_sriov_vf(e.pf, 2);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2, 4);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_CTRL, 2, PCI_SRIOV_CTRL_VFE);
	/* No BARs in a VF's header: writes of all-ones read back 0. */
	for (unsigned i = 0; i < 6; i++) {
		wr(&e, e.bdf + 2, PCI_BASE_ADDRESS_0 + 4 * i, 4, 0xffffffffu);
		assert_int_equal(rd(&e, e.bdf + 2, PCI_BASE_ADDRESS_0 + 4 * i, 4), 0);
	}
	/* Memory Space Enable is read-only 0; Bus Master is the VF's own. */
	wr(&e, e.bdf + 2, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	assert_int_equal(rd(&e, e.bdf + 2, PCI_COMMAND, 2), PCI_COMMAND_MASTER);
	assert_true(fab_func_bus_master(vf2));
	/* VF2's BAR0 = VF BAR0 + 1 * 16 KiB, decoded only under VF MSE. */
	base = rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4) & ~0xfull;
	base |= (uint64_t)rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR + 4, 4) << 32;
	a2 = base + 16384;
	assert_int_equal(fab_func_bar_addr(vf2, 0), a2);
	assert_int_equal(fab_route_resolve_uncached(e.h, FAB_RID_CPU, a2 + 8, 4, false, &r), 0);
	assert_int_equal(r.status, FAB_UR);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_CTRL, 2, PCI_SRIOV_CTRL_VFE | PCI_SRIOV_CTRL_MSE);
	assert_int_equal(fab_route_resolve_uncached(e.h, FAB_RID_CPU, a2 + 8, 4, false, &r), 0);
	assert_int_equal(r.status, FAB_OK);
	assert_int_equal(r.tgt.mem, (uint32_t)vf2->bars[0].mem);
	assert_int_equal(r.tgt.offset, 8);
	assert_int_equal(r.tgt.bdf, e.bdf + 2);
	/* The VF issues requests under its own routing ID. */
	{
		uint32_t x = 0;

		assert_int_equal(fab_access(e.h, e.bdf + 2, 0x1000, &x, 4, false), FAB_IOMMU_FAULT);
	}
	tc_down(&e.tc);
}

static void test_vf_enable_resets_vfs(void **state)
{
	struct env e;
	struct fab_func *vf1;
	uint32_t seq;

	env_up(&e);
	vf1 = fab_sriov_vf(e.pf, 1);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2, 1);
	seq = vf1->flr_seq;
	wr(&e, e.bdf, e.cap + PCI_SRIOV_CTRL, 2, PCI_SRIOV_CTRL_VFE);
	assert_int_equal(vf1->flr_seq, seq + 1);
	wr(&e, e.bdf + 1, PCI_COMMAND, 2, PCI_COMMAND_MASTER);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_CTRL, 2, 0);
	assert_int_equal(vf1->flr_seq, seq + 2);
	assert_false(fab_func_bus_master(vf1));
	tc_down(&e.tc);
}

static void test_pci_core_numvfs(void **state)
{
	struct env e;
	struct pci_host *ph;
	struct pci_dev *pf, *vf;
	char err[256];
	unsigned n0;
	uint64_t base;

	env_up(&e);
	assert_int_equal(pci_host_create(e.h, &ph, err, sizeof(err)), 0);
	n0 = pci_host_ndevs(ph);
	pf = pci_get_dev(ph, e.bdf);
	assert_non_null(pf);
	assert_int_equal(pci_sriov_get_totalvfs(pf), 4);
	assert_int_equal(pci_sriov_configure(pf, 5), -ERANGE);
	assert_int_equal(pci_sriov_configure(pf, 3), 0);
	assert_int_equal(pci_host_ndevs(ph), n0 + 3);
	assert_int_equal(pci_sriov_configure(pf, 2), -EBUSY);
	base = rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR, 4) & ~0xfull;
	base |= (uint64_t)rd(&e, e.bdf, e.cap + PCI_SRIOV_BAR + 4, 4) << 32;
	for (unsigned n = 1; n <= 3; n++) {
		vf = pci_sriov_vf(pf, n);
		assert_non_null(vf);
		assert_int_equal(vf->bdf, e.bdf + n);
		assert_ptr_equal(vf->physfn, pf);
		assert_int_equal(vf->vendor, pf->vendor);
		assert_int_equal(vf->device, 0x0011);
		assert_int_equal(vf->class, 0x010802);
		assert_int_equal(vf->bar_addr[0], base + (n - 1) * 16384ull);
		assert_int_equal(vf->bar_size[0], 16384);
		assert_true(vf->is_lendable);
		assert_int_equal(pci_enable_device(vf), 0);
		assert_non_null(pci_iomap(vf, 0));
	}
	/* The iomap reaches VF2's own registers. */
	{
		uint32_t *regs = pci_iomap(pci_sriov_vf(pf, 2), 0);
		uint32_t *mem = fab_mem_map(e.h, (uint32_t)fab_sriov_vf(e.pf, 2)->bars[0].mem);

		regs[0x100 / 4] = 0x5a5aa5a5;
		assert_int_equal(mem[0x100 / 4], 0x5a5aa5a5);
	}
	assert_int_equal(pci_sriov_configure(pf, 0), 0);
	assert_int_equal(pci_host_ndevs(ph), n0);
	assert_null(fab_func_by_bdf(e.h, e.bdf + 1));
	pci_host_destroy(ph);
	tc_down(&e.tc);
}

static void test_multi_function(void **state)
{
	struct env e;
	struct fab_func *f0, *f1, *f2;
	struct pci_host *ph;
	char err[256];

	env_up(&e);
	f0 = tc_fn(&e.tc, 0, "mf0");
	f1 = tc_fn(&e.tc, 0, "mf1");
	f2 = tc_fn(&e.tc, 0, "mf2");
	assert_int_equal(rd(&e, fab_func_bdf(f0), PCI_HEADER_TYPE, 1), 0x80);
	assert_int_equal(fab_func_bdf(f1), fab_func_bdf(f0) + 1);
	assert_int_equal(fab_func_bdf(f2), fab_func_bdf(f0) + 2);
	assert_int_equal(rd(&e, fab_func_bdf(f1), PCI_HEADER_TYPE, 1), 0);
	assert_int_not_equal(fab_func_bar_addr(f1, 0), 0);
	assert_int_not_equal(fab_func_bar_addr(f2, 2), 0);
	/* mf2's VFs come after the three physical functions: offset 1 from function 2. */
	{
		uint16_t cap = fab_cfg_find_ecap(&f2->cfg, PCI_EXT_CAP_ID_SRIOV);

		assert_int_equal(fab_cfg_get16(&f2->cfg, cap + PCI_SRIOV_VF_OFFSET), 1);
		assert_int_equal(fab_cfg_get16(&f2->cfg, cap + PCI_SRIOV_VF_DID), 0x1234);
	}
	assert_int_equal(pci_host_create(e.h, &ph, err, sizeof(err)), 0);
	assert_non_null(pci_get_dev(ph, fab_func_bdf(f1)));
	assert_non_null(pci_get_dev(ph, fab_func_bdf(f2)));
	assert_int_equal(pci_sriov_configure(pci_get_dev(ph, fab_func_bdf(f2)), 2), 0);
	assert_non_null(pci_get_dev(ph, fab_func_bdf(f0) + 4));
	assert_int_equal(pci_get_dev(ph, fab_func_bdf(f0) + 4)->device, 0x1234);
	pci_host_destroy(ph);
	tc_down(&e.tc);
}

static void test_topology_errors(void **state)
{
	static const char *const bad[] = {
		"version: 1\nhosts:\n  - id: 0\n    ports:\n"
		"      - device: {model: accel, sriov: {vfs: 2}}\n",
		"version: 1\nhosts:\n  - id: 0\n    ports:\n"
		"      - device: {model: nvme, sriov: {vfs: 65}}\n",
		"version: 1\nhosts:\n  - id: 0\n    ports:\n"
		"      - device: {model: nvme, sriov: {}}\n",
		"version: 1\nhosts:\n  - id: 0\n    ports:\n"
		"      - device: {model: nvme, functions: [{model: test, functions: "
		"[{model: test}]}]}\n",
		"version: 1\nhosts:\n  - id: 0\n    ports:\n"
		"      - device: {model: nvme, functions: [{model: test}, {model: test}, "
		"{model: test}, {model: test}, {model: test}, {model: test}, {model: test}, "
		"{model: test}]}\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct topo *t = NULL;
		char err[512] = "";

		assert_int_equal(topo_load_string(bad[i], strlen(bad[i]), "t.yaml", &t, err,
						  sizeof(err)), -EINVAL);
		assert_true(err[0]);
	}
}

static void test_too_many_vfs(void **state)
{
	static const char y[] =
		"version: 1\nhosts:\n  - id: 0\n    ports:\n"
		"      - device: {model: nvme, sriov: {vfs: 64}}\n"
		"      - device: {model: nvme, sriov: {vfs: 64}}\n"
		"      - device: {model: nvme, sriov: {vfs: 64}}\n"
		"      - device: {model: nvme, sriov: {vfs: 64}}\n";
	struct fab_cluster *c = NULL;
	struct topo *t = NULL;
	char err[512] = "";

	assert_int_equal(topo_load_string(y, strlen(y), "t.yaml", &t, err, sizeof(err)), 0);
	assert_int_equal(fab_cluster_create(t, dev_endpoint_init, &c, err, sizeof(err)), -ENOSPC);
	if (!strstr(err, "do not fit: a host holds at most 256 functions"))
		fail_msg("message: %s", err);
	topo_free(t);
}

/* lspci -xxxx format: "BB:DD.F ..." then 16 bytes a line. */
static void dump_fn(FILE *f, uint16_t bdf, const uint8_t *cfg)
{
	fprintf(f, "%02x:%02x.%x Device\n", FAB_BDF_BUS(bdf), FAB_BDF_DEV(bdf), FAB_BDF_FN(bdf));
	for (unsigned off = 0; off < FAB_CFG_SIZE; off += 16) {
		fprintf(f, "%02x:", off);
		for (unsigned i = 0; i < 16; i++)
			fprintf(f, " %02x", cfg[off + i]);
		fputc('\n', f);
	}
	fputc('\n', f);
}

static void test_lspci_decodes(void **state)
{
	struct env e;
	char path[] = "/tmp/smartio-sriov-XXXXXX", cmd[256], out[16384];
	FILE *f, *p;
	size_t n;
	int fd;

	if (access("/usr/bin/lspci", X_OK)) {
		skip();
		return;
	}
	env_up(&e);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_NUM_VF, 2, 3);
	wr(&e, e.bdf, e.cap + PCI_SRIOV_CTRL, 2, PCI_SRIOV_CTRL_VFE | PCI_SRIOV_CTRL_MSE);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	dump_fn(f, e.bdf, e.pf->cfg.data);
	dump_fn(f, e.bdf + 1, fab_sriov_vf(e.pf, 1)->cfg.data);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/lspci -vvv -F %s 2>&1", path);
	p = popen(cmd, "r");
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	unlink(path);
	if (!strstr(out, "Single Root I/O Virtualization (SR-IOV)") ||
	    !strstr(out, "IOVCtl:\tEnable+ Migration- Interrupt- MSE+ ARIHierarchy-") ||
	    !strstr(out, "Initial VFs: 4, Total VFs: 4, Number of VFs: 3") ||
	    !strstr(out, "VF offset: 1, stride: 1, Device ID: 0011") ||
	    !strstr(out, "Supported Page Size: 00000553, System Page Size: 00000001") ||
	    !strstr(out, "Region 0: Memory at") ||
	    !strstr(out, "01:00.1 Non-Volatile memory controller: Illegal Vendor ID Device ffff")) {
		char *sr = strstr(out, "Capabilities: [100");

		fail_msg("lspci output:\n%s", sr ? sr : out);
	}
	tc_down(&e.tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capability_registers),
		cmocka_unit_test(test_vfs_appear_with_vf_enable),
		cmocka_unit_test(test_vf_header_and_decode),
		cmocka_unit_test(test_vf_enable_resets_vfs),
		cmocka_unit_test(test_pci_core_numvfs),
		cmocka_unit_test(test_multi_function),
		cmocka_unit_test(test_topology_errors),
		cmocka_unit_test(test_too_many_vfs),
		cmocka_unit_test(test_lspci_decodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
