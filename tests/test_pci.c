// SPDX-License-Identifier: MIT
/*
 * The per-host PCI core: device list, driver binding (never to lendable
 * devices), hot-plug, config accessors, BAR mappings, the DMA API with and
 * without an IOMMU, the physical-memory allocator, and MSI-X.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"
#include "host/pci.h"
#include "host/physmem.h"

/* Host 0: IOMMU on, RAM above 4 GiB too. Host 1: IOMMU off. */
static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 6G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - device: {name: nvme0, model: nvme, lendable: false}\n"
	"      - device: {name: nvme1, model: nvme}\n"
	"      - device: {name: acc0, model: accel, lendable: false, params: {memory: 1M}}\n"
	"      - device: {name: t0, model: test, lendable: false}\n"
	"  - id: 1\n"
	"    ram: 1G\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - device: {name: acc0, model: accel, lendable: false, params: {memory: 1M}}\n";

struct env {
	struct tcluster tc;
	struct fab_host *h;
	struct pci_host *ph;
};

static void env_up(struct env *e, const char *y, uint32_t host)
{
	char err[256];

	tc_up(&e->tc, y);
	e->h = tc_host(&e->tc, host);
	assert_int_equal(pci_host_create(e->h, &e->ph, err, sizeof(err)), 0);
}

static void env_down(struct env *e)
{
	pci_host_destroy(e->ph);
	tc_down(&e->tc);
}

static struct pci_dev *dev_named(struct env *e, const char *name)
{
	struct pci_dev *p = pci_get_dev(e->ph, fab_func_bdf(tc_fn(&e->tc, e->h->id, name)));

	assert_non_null(p);
	assert_string_equal(p->name, name);
	return p;
}

/* ---------- device list ---------- */

static void check_dev(struct pci_dev *p, uint16_t vendor, uint16_t device, uint32_t class)
{
	assert_int_equal(p->vendor, vendor);
	assert_int_equal(p->device, device);
	assert_int_equal(p->class, class);
}

static void test_device_list_default(void **state)
{
	struct env e;
	struct pci_dev *p;
	uint16_t cmd_before;

	tc_up(&e.tc, NULL);
	e.h = tc_host(&e.tc, 1);   /* lender-a: NTB, and a switch with nvme0, gpu0, gpu1 */
	cmd_before = fab_cfg_get16(&tc_fn(&e.tc, 1, "gpu0")->cfg, PCI_COMMAND);
	{
		char err[256];

		assert_int_equal(pci_host_create(e.h, &e.ph, err, sizeof(err)), 0);
	}
	/* Every function answering config cycles, in lspci (BDF) order. */
	assert_int_equal(pci_host_ndevs(e.ph), e.h->nfuncs);
	assert_int_equal(pci_host_ndevs(e.ph), 11);
	assert_ptr_equal(pci_host_fab(e.ph), e.h);
	for (unsigned i = 0; i < pci_host_ndevs(e.ph); i++) {
		p = pci_host_dev(e.ph, i);
		assert_ptr_equal(p->hw, fab_func_by_bdf(e.h, p->bdf));
		assert_ptr_equal(p->host, e.ph);
		assert_null(p->driver);
		assert_true(p->dma_mask == UINT64_MAX);
		if (i)
			assert_true(pci_host_dev(e.ph, i - 1)->bdf < p->bdf);
		for (unsigned b = 0; b < 6; b++)
			if (p->bar_size[b])
				assert_true(p->bar_addr[b] == fab_func_bar_addr(p->hw, b));
		assert_int_equal(p->is_lendable, p->hw->kind == FAB_FN_ENDPOINT);
	}
	assert_null(pci_host_dev(e.ph, 11));
	p = pci_get_dev(e.ph, FAB_BDF(0, 0, 0));
	check_dev(p, 0x8086, 0x2020, 0x060000);
	check_dev(pci_get_dev(e.ph, FAB_BDF(0, 1, 0)), 0x8086, 0x2030, 0x060400);
	check_dev(pci_get_dev(e.ph, FAB_BDF(0, 2, 0)), 0x8086, 0x2030, 0x060400);
	check_dev(dev_named(&e, "ntb0"), 0x11c8, 0x0830, 0x068000);
	check_dev(dev_named(&e, "chassis"), 0x10b5, 0x8796, 0x060400);
	check_dev(dev_named(&e, "chassis.p2"), 0x10b5, 0x8796, 0x060400);
	p = dev_named(&e, "nvme0");
	check_dev(p, 0x534d, 0x0001, 0x010802);
	assert_true(p->bar_size[0] == 16384 && p->bar_size[1] == 0 && p->bar_size[4] == 65536);
	p = dev_named(&e, "gpu1");
	check_dev(p, 0x534d, 0x0002, 0x120000);
	assert_true(p->bar_size[0] == 65536 && p->bar_size[2] == (256ull << 20));
	assert_true(p->bar_addr[2] >= (1ull << 32));   /* 64-bit prefetchable window */
	/* Sizing left the registers as enumeration programmed them. */
	p = dev_named(&e, "gpu0");
	assert_int_equal(fab_cfg_get16(&p->hw->cfg, PCI_COMMAND), cmd_before);
	assert_true(p->bar_addr[0] == fab_func_bar_addr(p->hw, 0) && p->bar_addr[0]);
	assert_null(pci_get_dev(e.ph, FAB_BDF(9, 0, 0)));
	env_down(&e);
}

/* ---------- drivers ---------- */

static int nprobe, nremove, probe_rc;
static struct pci_dev *last_probed;

static int fake_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	nprobe++;
	last_probed = pdev;
	if (probe_rc)
		return probe_rc;
	pdev->drvdata = &nprobe;
	return 0;
}

static void fake_remove(struct pci_dev *pdev)
{
	assert_ptr_equal(pdev->drvdata, &nprobe);
	nremove++;
}

static const struct pci_device_id nvme_ids[] = {
	{ PCI_ANY_ID, PCI_ANY_ID, 0x010802, 0xffffff },
	{ 0 },
};
static const struct pci_driver nvme_drv = {
	.name = "fake-nvme", .id_table = nvme_ids, .probe = fake_probe, .remove = fake_remove,
};
static const struct pci_device_id accel_ids[] = {
	{ 0x534d, 0x0002, 0, 0 },
	{ 0 },
};
static const struct pci_driver accel_drv = {
	.name = "fake-accel", .id_table = accel_ids, .probe = fake_probe, .remove = fake_remove,
};

static void reset_counts(void)
{
	nprobe = nremove = probe_rc = 0;
	last_probed = NULL;
}

static void test_lendable_devices_get_no_driver(void **state)
{
	struct env e;

	reset_counts();
	tc_up(&e.tc, NULL);
	for (uint32_t host = 1; host <= 2; host++) {
		char err[256];

		e.h = tc_host(&e.tc, host);
		assert_int_equal(pci_host_create(e.h, &e.ph, err, sizeof(err)), 0);
		assert_int_equal(pci_register_driver(e.ph, &nvme_drv), 0);
		assert_int_equal(pci_register_driver(e.ph, &accel_drv), 0);
		assert_int_equal(nprobe, 0);   /* every endpoint is lendable */
		assert_true(dev_named(&e, "nvme0")->is_lendable);
		pci_host_destroy(e.ph);
		assert_int_equal(nremove, 0);
		/* Bridges nobody drove keep forwarding DMA. */
		assert_true(fab_func_bus_master(e.h->funcs[1]));
	}
	tc_down(&e.tc);
}

static void test_match_id(void **state)
{
	struct pci_dev d = { .vendor = 0x534d, .device = 0x0001, .class = 0x010802 };
	const struct pci_device_id ids[] = {
		{ 0x534d, 0x1111, 0, 0 },
		{ PCI_ANY_ID, PCI_ANY_ID, 0x010800, 0xffff00 },
		{ 0 },
	};

	assert_ptr_equal(pci_match_id(ids, &d), &ids[1]);
	d.class = 0x010600;
	assert_null(pci_match_id(ids, &d));
	d.device = 0x1111;
	assert_ptr_equal(pci_match_id(ids, &d), &ids[0]);
	assert_null(pci_match_id(nvme_ids + 1, &d));
	assert_null(pci_match_id(NULL, &d));
}

static void test_probe_remove_hotplug(void **state)
{
	struct env e;
	struct pci_dev *nvme0, *nvme1, *acc, *t0;
	struct fab_func *acc_fn;
	unsigned n;

	reset_counts();
	env_up(&e, yaml, 0);
	nvme0 = dev_named(&e, "nvme0");
	nvme1 = dev_named(&e, "nvme1");
	acc = dev_named(&e, "acc0");
	t0 = dev_named(&e, "t0");
	assert_false(nvme0->is_lendable);
	assert_true(nvme1->is_lendable);

	assert_int_equal(pci_register_driver(e.ph, &nvme_drv), 0);
	assert_int_equal(pci_register_driver(e.ph, &nvme_drv), -EEXIST);
	assert_int_equal(nprobe, 1);                 /* nvme0 only: nvme1 is lendable */
	assert_ptr_equal(last_probed, nvme0);
	assert_ptr_equal(nvme0->driver, &nvme_drv);
	assert_null(nvme1->driver);
	assert_null(acc->driver);

	/* A failing probe leaves the device unbound. */
	probe_rc = -ENODEV;
	{
		static const struct pci_device_id tids[] = { { 0x1b36, PCI_ANY_ID, 0, 0 }, { 0 } };
		static const struct pci_driver tdrv = { .name = "t", .id_table = tids,
							.probe = fake_probe };

		assert_int_equal(pci_register_driver(e.ph, &tdrv), 0);
		assert_int_equal(nprobe, 2);
		assert_null(t0->driver);
		assert_null(t0->drvdata);
		pci_unregister_driver(e.ph, &tdrv);
	}
	probe_rc = 0;

	assert_int_equal(pci_register_driver(e.ph, &accel_drv), 0);
	assert_int_equal(nprobe, 3);
	assert_ptr_equal(acc->driver, &accel_drv);

	pci_unregister_driver(e.ph, &nvme_drv);
	assert_int_equal(nremove, 1);
	assert_null(nvme0->driver);
	assert_null(nvme0->drvdata);

	/* Hot-remove: the driver's remove runs, the device leaves the list. */
	n = pci_host_ndevs(e.ph);
	acc_fn = acc->hw;
	assert_int_equal(pci_hot_remove(e.ph, acc), 0);
	assert_int_equal(nremove, 2);
	assert_int_equal(pci_host_ndevs(e.ph), n - 1);
	assert_null(pci_get_dev(e.ph, fab_func_bdf(acc_fn)));
	/* Hot-add: probed by the registered driver at once. */
	assert_int_equal(pci_hot_add(e.ph, acc_fn, &acc), 0);
	assert_int_equal(nprobe, 4);
	assert_ptr_equal(last_probed, acc);
	assert_ptr_equal(acc->driver, &accel_drv);
	assert_int_equal(pci_host_ndevs(e.ph), n);
	assert_int_equal(pci_hot_add(e.ph, acc_fn, NULL), -EEXIST);
	assert_int_equal(pci_hot_add(e.ph, tc_fn(&e.tc, 1, "acc0"), NULL), -EINVAL);
	/* Destroying the host removes the remaining driver first. */
	env_down(&e);
	assert_int_equal(nremove, 3);
}

/* ---------- config space ---------- */

static void test_config_accessors(void **state)
{
	struct env e;
	struct pci_dev *p;
	uint32_t v, orig;

	env_up(&e, yaml, 0);
	p = dev_named(&e, "acc0");
	assert_int_equal(pci_read_config(p, PCI_VENDOR_ID, 4, &v), 0);
	assert_int_equal(v, 0x0002534d);
	/* Read-only: IDs and class. */
	assert_int_equal(pci_write_config(p, PCI_VENDOR_ID, 2, 0x1234), 0);
	assert_int_equal(pci_read_config(p, PCI_VENDOR_ID, 2, &v), 0);
	assert_int_equal(v, 0x534d);
	assert_int_equal(pci_write_config(p, PCI_CLASS_REVISION, 4, 0), 0);
	assert_int_equal(pci_read_config(p, PCI_CLASS_REVISION, 4, &v), 0);
	assert_int_equal(v >> 8, 0x120000);
	/* BAR type bits and the bits below the size are read-only. */
	assert_int_equal(pci_read_config(p, PCI_BASE_ADDRESS_2, 4, &orig), 0);
	assert_int_equal(orig & 0xf, PCI_BASE_ADDRESS_MEM_TYPE_64 | PCI_BASE_ADDRESS_MEM_PREFETCH);
	assert_int_equal(pci_write_config(p, PCI_BASE_ADDRESS_2, 4, 0xffffffffu), 0);
	assert_int_equal(pci_read_config(p, PCI_BASE_ADDRESS_2, 4, &v), 0);
	assert_int_equal(v, 0xfff0000cu);   /* 1 MiB, 64-bit prefetchable */
	assert_int_equal(pci_write_config(p, PCI_BASE_ADDRESS_2, 4, orig), 0);
	/* Writable: interrupt line. Invalid accesses are refused. */
	assert_int_equal(pci_write_config(p, PCI_INTERRUPT_LINE, 1, 0x5a), 0);
	assert_int_equal(pci_read_config(p, PCI_INTERRUPT_LINE, 1, &v), 0);
	assert_int_equal(v, 0x5a);
	assert_int_equal(pci_read_config(p, 0x2, 4, &v), -EINVAL);
	assert_int_equal(pci_read_config(p, 0x1000, 1, &v), -EINVAL);
	/* Command register helpers. */
	pci_set_master(p);
	assert_true(fab_func_bus_master(p->hw));
	pci_clear_master(p);
	assert_false(fab_func_bus_master(p->hw));
	assert_int_equal(pci_write_config(p, PCI_COMMAND, 2, 0), 0);
	assert_false(fab_func_mem_enabled(p->hw));
	assert_null(pci_iomap(p, 0));   /* decoding off: the CPU reaches nothing */
	assert_int_equal(pci_enable_device(p), 0);
	assert_true(fab_func_mem_enabled(p->hw));
	env_down(&e);
}

/* ---------- BAR mapping ---------- */

static void test_iomap_aliases_bar(void **state)
{
	struct env e;
	struct pci_dev *p;
	volatile uint32_t *regs;
	uint8_t *mem;
	uint32_t v = 0;
	uint64_t q = 0x1122334455667788ull, r = 0;

	env_up(&e, yaml, 0);
	p = dev_named(&e, "acc0");
	regs = pci_iomap(p, 0);
	assert_non_null(regs);
	regs[0x100 / 4] = 0xdeadbeef;
	assert_int_equal(fab_access(e.h, FAB_RID_CPU, p->bar_addr[0] + 0x100, &v, 4, false), 0);
	assert_int_equal(v, 0xdeadbeef);
	v = 0xcafef00d;
	assert_int_equal(fab_access(e.h, FAB_RID_CPU, p->bar_addr[0] + 0xfffc, &v, 4, true), 0);
	assert_int_equal(regs[0xfffc / 4], 0xcafef00d);
	/* The 64-bit BAR2 (device memory), above 4 GiB. */
	mem = pci_iomap(p, 2);
	assert_non_null(mem);
	assert_int_equal(fab_access(e.h, FAB_RID_CPU, p->bar_addr[2] + (1 << 20) - 8, &q, 8,
				    true), 0);
	memcpy(&r, mem + (1 << 20) - 8, 8);
	assert_true(r == q);
	/* No BAR there, or not a BAR index. */
	assert_null(pci_iomap(p, 1));
	assert_null(pci_iomap(p, 3));
	assert_null(pci_iomap(p, 6));
	env_down(&e);

	/* An NTB's LUT BAR has no memory of its own: unprogrammed, nothing maps. */
	tc_up(&e.tc, NULL);
	e.h = tc_host(&e.tc, 0);
	{
		char err[256];

		assert_int_equal(pci_host_create(e.h, &e.ph, err, sizeof(err)), 0);
	}
	p = dev_named(&e, "ntb0");
	assert_non_null(pci_iomap(p, 0));
	assert_null(pci_iomap(p, 2));
	env_down(&e);
}

/* ---------- DMA ---------- */

static void test_dma_coherent_iommu_on(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct physmem *pm;
	uint64_t bus, avail, faults;
	uint8_t *cpu;
	char msg[] = "written by the device";

	env_up(&e, yaml, 0);
	pm = pci_host_physmem(e.ph);
	avail = physmem_avail(pm);
	p = dev_named(&e, "acc0");
	pci_set_master(p);
	cpu = dma_alloc_coherent(p, 10000, &bus);
	assert_non_null(cpu);
	assert_int_equal(physmem_avail(pm), avail - 12288);
	assert_true(bus != 0 && (bus & 4095) == 0);
	assert_int_not_equal(p->domain, 0);
	assert_int_equal(iommu_domain_of(e.h->iommu, p->bdf), p->domain);
	assert_int_equal(cpu[0], 0);   /* zeroed */
	/* The device reaches the buffer at its bus address, through its domain. */
	assert_int_equal(fab_access(e.h, p->bdf, bus + 9000, msg, sizeof(msg), true), 0);
	assert_memory_equal(cpu + 9000, msg, sizeof(msg));
	/* Another device is not in that domain. */
	faults = iommu_fault_count(e.h->iommu);
	assert_int_equal(fab_access(e.h, dev_named(&e, "nvme0")->bdf, bus, msg, 4, true),
			 FAB_IOMMU_FAULT);
	assert_true(iommu_fault_count(e.h->iommu) == faults + 1);

	dma_free_coherent(p, 10000, cpu, bus);
	assert_true(physmem_avail(pm) == avail);
	faults = iommu_fault_count(e.h->iommu);
	assert_int_equal(fab_access(e.h, p->bdf, bus + 9000, msg, sizeof(msg), true),
			 FAB_IOMMU_FAULT);
	assert_true(iommu_fault_count(e.h->iommu) == faults + 1);
	/* The same RAM comes back zeroed. */
	cpu = dma_alloc_coherent(p, 10000, &bus);
	assert_non_null(cpu);
	assert_int_equal(cpu[9000], 0);
	dma_free_coherent(p, 10000, cpu, bus);
	env_down(&e);
}

static void test_dma_coherent_iommu_off(void **state)
{
	struct env e;
	struct pci_dev *p;
	uint64_t bus;
	uint8_t *cpu;
	uint32_t v = 0x600dcafe;

	env_up(&e, yaml, 1);
	p = dev_named(&e, "acc0");
	cpu = dma_alloc_coherent(p, 4096, &bus);
	assert_non_null(cpu);
	assert_true(bus >= PHYSMEM_RESERVED);                /* bus == physical */
	assert_ptr_equal(pci_phys_to_virt(e.ph, bus, 4096), cpu);
	assert_int_equal(p->domain, 0);
	assert_int_equal(fab_access(e.h, p->bdf, bus + 64, &v, 4, true), 0);
	assert_memory_equal(cpu + 64, &v, 4);
	dma_free_coherent(p, 4096, cpu, bus);
	assert_true(physmem_avail(pci_host_physmem(e.ph)) ==
		    physmem_total(pci_host_physmem(e.ph)));
	/* Above the mask: no bounce buffers, so streaming mappings fail. */
	assert_int_equal(dma_set_mask(p, 0xffffff), -EIO);       /* only reserved RAM */
	assert_int_equal(dma_set_mask(p, 0x3ffffff), 0);         /* 64 MiB */
	{
		int err = 0;

		assert_true(dma_map_single(p, 0x8000000, 64, &err) == 0);
		assert_int_equal(err, -EIO);
		assert_true(dma_map_single(p, 0x1000010, 64, &err) == 0x1000010);
		assert_int_equal(err, 0);
		dma_unmap_single(p, 0x1000010, 64);
	}
	/* Coherent memory is placed under the mask instead. */
	cpu = dma_alloc_coherent(p, 1 << 20, &bus);
	assert_non_null(cpu);
	assert_true(bus + (1 << 20) - 1 <= 0x3ffffff);
	dma_free_coherent(p, 1 << 20, cpu, bus);
	env_down(&e);
}

static void test_dma_mask_32(void **state)
{
	struct env e;
	struct pci_dev *p;
	uint64_t bus[8], high = (4ull << 30) + (1ull << 30) + 0x10;
	void *cpu[8];
	uint8_t *hv;
	uint32_t v = 0xa5a5a5a5;
	int err;

	env_up(&e, yaml, 0);
	p = dev_named(&e, "t0");
	assert_int_equal(dma_set_mask(p, 0x00ff00ffu), -EIO);   /* not a run of low bits */
	assert_int_equal(dma_set_mask(p, 0xffffffffu), 0);
	for (int i = 0; i < 8; i++) {
		cpu[i] = dma_alloc_coherent(p, 32u << 20, &bus[i]);
		assert_non_null(cpu[i]);
		assert_true(bus[i] + (32u << 20) <= (1ull << 32));
		/* Never the MSI window nor the MMIO windows. */
		assert_false(bus[i] < FAB_MSI_BASE + FAB_MSI_SIZE &&
			     bus[i] + (32u << 20) > FAB_MSI_BASE);
		assert_false(bus[i] + (32u << 20) > e.h->t->mmio32_base &&
			     bus[i] < e.h->t->mmio32_base + e.h->t->mmio32_size);
	}
	/* RAM above 4 GiB gets an IOVA below it. */
	hv = pci_phys_to_virt(e.ph, high, 64);
	assert_non_null(hv);
	bus[0] = dma_map_single(p, high, 64, &err);
	assert_int_equal(err, 0);
	assert_true(bus[0] && bus[0] < (1ull << 32));
	assert_int_equal(bus[0] & 0xfff, 0x10);
	assert_int_equal(fab_access(e.h, p->bdf, bus[0] + 4, &v, 4, true), 0);
	assert_memory_equal(hv + 4, &v, 4);
	dma_unmap_single(p, bus[0], 64);
	assert_int_equal(fab_access(e.h, p->bdf, bus[0] + 4, &v, 4, true), FAB_IOMMU_FAULT);
	/* Not RAM: refused. */
	assert_true(dma_map_single(p, 0xF0000000, 64, &err) == 0);
	assert_int_equal(err, -EINVAL);
	/* A free that does not match an allocation is refused. */
	bus[0] = physmem_avail(pci_host_physmem(e.ph));
	dma_free_coherent(p, 32u << 20, cpu[0], bus[1]);
	dma_free_coherent(p, 16u << 20, cpu[1], bus[1]);
	assert_true(physmem_avail(pci_host_physmem(e.ph)) == bus[0]);
	env_down(&e);   /* the device's leftovers are released with it */
}

static void test_dma_map_sg(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct physmem *pm;
	struct dma_sg sg[3];
	uint64_t base, p4k = 0, p2m = 0, before;
	char buf[] = "sg";

	env_up(&e, yaml, 0);
	pm = pci_host_physmem(e.ph);
	p = dev_named(&e, "nvme0");
	assert_int_equal(physmem_alloc(pm, 1 << 20, 0, UINT64_MAX, &base), 0);
	sg[0] = (struct dma_sg){ base + 0x100, 0x2000, 0 };      /* straddles 3 pages */
	sg[1] = (struct dma_sg){ base + 0x40000, 16, 0 };
	sg[2] = (struct dma_sg){ base + 0x80ff0, 0x20, 0 };     /* crosses a page */
	assert_int_equal(dma_map_sg(p, sg, 3), 3);
	for (int i = 0; i < 3; i++) {
		char *v = pci_phys_to_virt(e.ph, sg[i].phys, sg[i].len);

		assert_true(sg[i].bus && (sg[i].bus & 0xfff) == (sg[i].phys & 0xfff));
		assert_int_equal(fab_access(e.h, p->bdf, sg[i].bus + sg[i].len - sizeof(buf),
					    buf, sizeof(buf), true), 0);
		assert_memory_equal(v + sg[i].len - sizeof(buf), buf, sizeof(buf));
	}
	assert_int_equal(iommu_domain_stats(e.h->iommu, p->domain, &p4k, &p2m), 0);
	assert_true(p4k == 3 + 1 + 2);
	dma_unmap_sg(p, sg, 3);
	assert_int_equal(iommu_domain_stats(e.h->iommu, p->domain, &p4k, &p2m), 0);
	assert_true(p4k == 0);
	/* One bad entry: nothing stays mapped. */
	sg[1].phys = 0xF0000000;
	assert_int_equal(dma_map_sg(p, sg, 3), -EINVAL);
	assert_int_equal(iommu_domain_stats(e.h->iommu, p->domain, &p4k, &p2m), 0);
	assert_true(p4k == 0);
	before = physmem_avail(pm);
	assert_int_equal(physmem_free(pm, base, 1 << 20), 0);
	assert_true(physmem_avail(pm) == before + (1 << 20));
	env_down(&e);
}

/* ---------- physical memory ---------- */

static void test_physmem_allocator(void **state)
{
	struct env e;
	struct physmem *pm;
	uint64_t a, b, c, total;

	env_up(&e, yaml, 1);   /* 1 GiB */
	pm = pci_host_physmem(e.ph);
	total = physmem_total(pm);
	assert_true(total == (1ull << 30) - PHYSMEM_RESERVED);
	assert_int_equal(physmem_alloc(pm, 1, 0, UINT64_MAX, &a), 0);
	assert_true(a == PHYSMEM_RESERVED);     /* first fit, after the reserved 16 MiB */
	assert_int_equal(physmem_alloc(pm, 4096, 2 << 20, UINT64_MAX, &b), 0);
	assert_true((b & ((2 << 20) - 1)) == 0 && b > a);
	assert_int_equal(physmem_alloc(pm, 4096, 0, UINT64_MAX, &c), 0);
	assert_true(c == a + 4096);             /* the hole left by the alignment */
	assert_int_equal(physmem_alloc(pm, 4096, 3, UINT64_MAX, &c), -EINVAL);
	assert_int_equal(physmem_alloc(pm, 1 << 20, 0, PHYSMEM_RESERVED, &c), -ENOMEM);
	assert_int_equal(physmem_free(pm, a, 4096), 0);
	assert_int_equal(physmem_free(pm, a, 4096), -EINVAL);          /* double free */
	assert_int_equal(physmem_free(pm, 0x1000, 4096), -EINVAL);     /* reserved */
	assert_int_equal(physmem_free(pm, a + 1, 4096), -EINVAL);
	assert_int_equal(physmem_free(pm, b, 4096), 0);
	assert_int_equal(physmem_free(pm, a + 4096, 4096), 0);
	assert_true(physmem_avail(pm) == total);
	assert_null(physmem_virt(e.h, 1ull << 30, 1));                 /* beyond RAM */
	env_down(&e);
}

static void test_physmem_exhaustion(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct physmem *pm;
	void *cpu[64];
	uint64_t bus[64], avail, tmp;
	unsigned n = 0;

	env_up(&e, yaml, 0);
	pm = pci_host_physmem(e.ph);
	p = dev_named(&e, "acc0");
	avail = physmem_avail(pm);
	/* Larger than RAM: refused, nothing taken. */
	assert_null(dma_alloc_coherent(p, 8ull << 30, &tmp));
	assert_true(physmem_avail(pm) == avail);
	/* Fill RAM in 256 MiB pieces until it runs out. */
	while (n < 64 && (cpu[n] = dma_alloc_coherent(p, 256u << 20, &bus[n])))
		n++;
	assert_true(n > 0 && n < 64);
	assert_true(physmem_avail(pm) < (256u << 20));
	while (n--)
		dma_free_coherent(p, 256u << 20, cpu[n], bus[n]);
	assert_true(physmem_avail(pm) == avail);

	/* RAM is there but the IOVA space under a 256 MiB mask is not: RAM goes back. */
	assert_int_equal(dma_set_mask(p, (256u << 20) - 1), 0);
	assert_null(dma_alloc_coherent(p, 512u << 20, &tmp));
	assert_true(physmem_avail(pm) == avail);
	/* The IOMMU cannot allocate a page table: RAM and IOVA go back. */
	p = dev_named(&e, "t0");
	iommu_fail_alloc_after(e.h->iommu, 1);
	assert_null(dma_alloc_coherent(p, 4096, &tmp));
	assert_true(physmem_avail(pm) == avail);
	iommu_fail_alloc_after(e.h->iommu, 0);
	cpu[0] = dma_alloc_coherent(p, 4096, &bus[0]);
	assert_non_null(cpu[0]);
	assert_true(bus[0] == (1u << 20));   /* the failed attempt's IOVA was returned */
	dma_free_coherent(p, 4096, cpu[0], bus[0]);
	assert_true(physmem_avail(pm) == avail);
	env_down(&e);
}

/* ---------- MSI-X ---------- */

static void test_msix(void **state)
{
	struct env e;
	struct pci_dev *p;
	uint16_t cap;
	uint32_t ctrl, ent[4];
	uint64_t cnt, spurious;

	env_up(&e, yaml, 0);
	p = dev_named(&e, "acc0");
	cap = fab_cfg_find_cap(&p->hw->cfg, PCI_CAP_ID_MSIX);
	assert_int_not_equal(cap, 0);
	assert_int_equal(pci_alloc_irq_vectors(p, 5), -ENOSPC);   /* the model has 4 */
	assert_int_equal(pci_read_config(p, cap + PCI_MSIX_FLAGS, 2, &ctrl), 0);
	assert_false(ctrl & PCI_MSIX_FLAGS_ENABLE);
	assert_int_equal(pci_alloc_irq_vectors(p, 0), -EINVAL);
	assert_int_equal(pci_alloc_irq_vectors(p, 4), 4);
	assert_int_equal(pci_alloc_irq_vectors(p, 1), -EBUSY);
	assert_int_equal(pci_read_config(p, cap + PCI_MSIX_FLAGS, 2, &ctrl), 0);
	assert_true(ctrl & PCI_MSIX_FLAGS_ENABLE);
	assert_false(ctrl & PCI_MSIX_FLAGS_MASKALL);
	pci_set_master(p);

	for (int v = 0; v < 4; v++) {
		uint64_t addr, one;
		int efd = pci_irq_eventfd(p, v);

		assert_true(efd >= 0);
		/* What the device would read from its table (BAR0 + 0x8000). */
		assert_int_equal(fab_access(e.h, FAB_RID_CPU, p->bar_addr[0] + 0x8000 + 16 * v,
					    ent, 16, false), 0);
		assert_int_equal(ent[3] & PCI_MSIX_ENTRY_CTRL_MASKBIT, 0);
		addr = ((uint64_t)ent[1] << 32) | ent[0];
		assert_true(fab_msi_addr(addr, 4));
		assert_int_equal(pci_irq_count(p, v), 0);
		assert_int_equal(read(efd, &cnt, 8), -1);   /* nothing yet */
		assert_int_equal(errno, EAGAIN);
		/* The device's interrupt: a DMA write of data to address. */
		assert_int_equal(fab_access(e.h, p->bdf, addr, &ent[2], 4, true), 0);
		assert_int_equal(read(efd, &cnt, 8), 8);
		assert_true(cnt == 1);
		assert_true(pci_irq_count(p, v) == 1);
		/* Other vectors stay quiet. */
		for (int o = 0; o < 4; o++)
			if (o != v)
				assert_int_equal(read(pci_irq_eventfd(p, o), &one, 8), -1);
	}
	assert_int_equal(pci_irq_eventfd(p, 4), -EINVAL);

	pci_free_irq_vectors(p);
	assert_int_equal(p->nvec, 0);
	assert_int_equal(pci_irq_eventfd(p, 0), -EINVAL);
	assert_int_equal(pci_read_config(p, cap + PCI_MSIX_FLAGS, 2, &ctrl), 0);
	assert_false(ctrl & PCI_MSIX_FLAGS_ENABLE);
	/* The entries are masked and the old message is no one's any more. */
	assert_int_equal(fab_access(e.h, FAB_RID_CPU, p->bar_addr[0] + 0x8000, ent, 16, false),
			 0);
	assert_true(ent[3] & PCI_MSIX_ENTRY_CTRL_MASKBIT);
	spurious = e.h->intc.spurious;
	assert_int_equal(fab_access(e.h, p->bdf, ((uint64_t)ent[1] << 32) | ent[0], &ent[2], 4,
				    true), FAB_UR);
	assert_true(e.h->intc.spurious == spurious + 1);
	/* No MSI-X capability: the host bridge. */
	assert_int_equal(pci_alloc_irq_vectors(pci_get_dev(e.ph, 0), 1), -ENOTSUP);
	env_down(&e);
}

/* A driver that leaves vectors and DMA buffers behind: hot-remove cleans up. */
static uint64_t leak_bus;

static int leaky_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	pci_set_master(pdev);
	if (pci_alloc_irq_vectors(pdev, 2) != 2)
		return -EIO;
	return dma_alloc_coherent(pdev, 1 << 20, &leak_bus) ? 0 : -ENOMEM;
}

static void test_hot_remove_releases(void **state)
{
	static const struct pci_driver leaky = { .name = "leaky", .id_table = accel_ids,
						 .probe = leaky_probe };
	struct env e;
	struct pci_dev *p;
	uint64_t avail;
	uint32_t data;
	uint16_t bdf;

	env_up(&e, yaml, 0);
	avail = physmem_avail(pci_host_physmem(e.ph));
	assert_int_equal(pci_register_driver(e.ph, &leaky), 0);
	p = dev_named(&e, "acc0");
	bdf = p->bdf;
	assert_ptr_equal(p->driver, &leaky);
	assert_int_equal(p->nvec, 2);
	data = p->vec_data[1];
	assert_true(e.h->intc.efd[data] >= 0);
	assert_true(physmem_avail(pci_host_physmem(e.ph)) < avail);
	assert_int_equal(pci_hot_remove(e.ph, p), 0);
	assert_int_equal(pci_hot_remove(e.ph, p), -ENOENT);
	assert_true(e.h->intc.efd[data] < 0);
	assert_true(physmem_avail(pci_host_physmem(e.ph)) == avail);
	assert_int_equal(iommu_domain_of(e.h->iommu, bdf), 0);
	assert_false(fab_func_bus_master(fab_func_by_bdf(e.h, bdf)));
	pci_unregister_driver(e.ph, &leaky);
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_list_default),
		cmocka_unit_test(test_lendable_devices_get_no_driver),
		cmocka_unit_test(test_match_id),
		cmocka_unit_test(test_probe_remove_hotplug),
		cmocka_unit_test(test_config_accessors),
		cmocka_unit_test(test_iomap_aliases_bar),
		cmocka_unit_test(test_dma_coherent_iommu_on),
		cmocka_unit_test(test_dma_coherent_iommu_off),
		cmocka_unit_test(test_dma_mask_32),
		cmocka_unit_test(test_dma_map_sg),
		cmocka_unit_test(test_physmem_allocator),
		cmocka_unit_test(test_physmem_exhaustion),
		cmocka_unit_test(test_msix),
		cmocka_unit_test(test_hot_remove_releases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
