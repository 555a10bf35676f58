// SPDX-License-Identifier: MIT
/*
 * P2PDMA roles used by the in-kernel drivers (after Linux's p2pdma): the
 * accelerator driver and the NVMe driver (a CMB with data support) publish
 * p2pmem at probe; the orchestrator picks the provider closest to all of a
 * transfer's clients by hop count; the NVMe driver reads into and writes
 * from p2pmem with no byte of data through host RAM (the host's device-DMA
 * RAM counter and the route prove it), the accelerator checksums it there;
 * allocation, free, and a provider unbinding with allocations outstanding.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric_util.h"
#include "fabric/route.h"
#include "host/devrun.h"
#include "host/drivers/accel_drv.h"
#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "host/pci.h"

/*
 * Host 0 (IOMMU off): nvme0 (no CMB) and acc0 under switch sw0; acc1, nvme1
 * (a 1 MiB CMB that takes data) and nvme2 (a CMB for SQs only) on root
 * ports. Host 1: one NVMe and nothing that provides p2pmem.
 */
static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 512M\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - switch:\n"
	"          name: sw0\n"
	"          ports:\n"
	"            - device: {name: nvme0, model: nvme, lendable: false,\n"
	"                       params: {ns_size: 16M, queues: 2}}\n"
	"            - device: {name: acc0, model: accel, lendable: false, params: {memory: 4M}}\n"
	"      - device: {name: acc1, model: accel, lendable: false, params: {memory: 4M}}\n"
	"      - device: {name: nvme1, model: nvme, lendable: false,\n"
	"                 params: {ns_size: 16M, queues: 2, cmb: 1M, cmb_data: 1}}\n"
	"      - device: {name: nvme2, model: nvme, lendable: false,\n"
	"                 params: {ns_size: 16M, queues: 2, cmb: 1M}}\n"
	"  - id: 1\n"
	"    ram: 256M\n"
	"    ports:\n"
	"      - device: {name: nvme0, model: nvme, lendable: false,\n"
	"                 params: {ns_size: 16M, queues: 2}}\n";

#define MIB (1u << 20)
#define ST_OK ACCEL_ST_MAKE(ACCEL_SC_OK, 0)

struct env {
	struct tcluster tc;
	struct fab_host *h;
	struct devrun_set *devs;
	struct pci_host *ph;
};

static void env_up(struct env *e, uint32_t host)
{
	char err[256];

	tc_up(&e->tc, yaml);
	e->h = tc_host(&e->tc, host);
	assert_int_equal(devrun_start(e->h, NULL, &e->devs, err, sizeof(err)), 0);
	/* As smartiod does: the PCI core and the drivers under the host lock. */
	fab_host_lock(e->h);
	assert_int_equal(pci_host_create(e->h, &e->ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(e->ph, &nvme_pci_driver), 0);
	assert_int_equal(pci_register_driver(e->ph, &accel_pci_driver), 0);
}

static void env_down(struct env *e)
{
	pci_host_destroy(e->ph);
	fab_host_unlock(e->h);
	devrun_stop(e->devs);
	tc_down(&e->tc);
}

static struct pci_dev *dev(struct env *e, const char *name)
{
	struct pci_dev *p = pci_get_dev(e->ph, fab_func_bdf(tc_fn(&e->tc, e->h->id, name)));

	assert_non_null(p);
	return p;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static uint32_t ref_crc32c(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = ~0u;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

static int io(struct pci_dev *nvme, enum nvme_drv_op op, uint64_t slba, uint32_t nlb, void *buf)
{
	struct nvme_drv_cpl cpl;
	int rc = nvme_drv_io(nvme, 1, op, slba, nlb, buf, &cpl);

	return !rc && cpl.status ? 0x10000 | cpl.status : rc;
}

/* What this host's devices' DMA moved to or from any host's RAM. */
static uint64_t ram_bytes(struct env *e)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < TOPO_MAX_HOSTS; i++)
		n += __atomic_load_n(&e->h->ram_dma[i], __ATOMIC_RELAXED);
	return n;
}

/* ---------- tests ---------- */

static void test_providers_published(void **state)
{
	struct pci_p2pmem_stat st;
	struct nvme_drv_info info;
	struct env e;

	(void)state;
	env_up(&e, 0);
	/* The accelerators: their memory, all but the mailbox page, published. */
	assert_int_equal(pci_p2pmem_stat(dev(&e, "acc0"), &st), 0);
	assert_true(st.published);
	assert_int_equal(st.bar, 2);
	assert_int_equal(st.size, 4 * MIB - 4096);
	assert_int_equal(st.allocated, 0);
	/* An NVMe CMB that takes data is p2pmem; one for SQs only is kept
	 * back (nvme-pci: published only with CMBSZ.WDS and RDS). */
	assert_int_equal(pci_p2pmem_stat(dev(&e, "nvme1"), &st), 0);
	assert_true(st.published);
	assert_int_equal(st.size, MIB);
	assert_int_equal(nvme_drv_info(dev(&e, "nvme1"), &info), 0);
	assert_int_equal(info.cmb_size, MIB);
	assert_true(info.cmb_p2pmem);
	assert_int_equal(pci_p2pmem_stat(dev(&e, "nvme2"), &st), 0);
	assert_false(st.published);
	assert_int_equal(nvme_drv_info(dev(&e, "nvme2"), &info), 0);
	assert_false(info.cmb_p2pmem);
	assert_int_equal(pci_p2pmem_stat(dev(&e, "nvme0"), &st), -ENOENT);
	env_down(&e);
}

static void test_orchestrator_closest(void **state)
{
	static const char *const provs[] = { "acc0", "acc1", "nvme1" };
	struct pci_dev *nvme0, *acc0, *acc1, *nvme1, *best;
	struct pci_dev *clients[2];
	unsigned bar = 9;
	long want = -1;
	struct env e;

	(void)state;
	env_up(&e, 0);
	nvme0 = dev(&e, "nvme0");
	acc0 = dev(&e, "acc0");
	acc1 = dev(&e, "acc1");
	nvme1 = dev(&e, "nvme1");
	/* nvme0's neighbour under sw0 beats the accelerator on a root port. */
	assert_true(pci_p2pdma_distance(acc0, 2, nvme0) < pci_p2pdma_distance(acc1, 2, nvme0));
	assert_true(pci_p2pdma_distance(acc0, 2, nvme0) > 0);
	clients[0] = nvme0;
	assert_ptr_equal(pci_p2pmem_find(e.ph, clients, 1, &bar), acc0);
	assert_int_equal(bar, 2);
	/* A device's own memory is nearest of all (distance 0): nvme1's CMB. */
	assert_int_equal(pci_p2pdma_distance(nvme1, 2, nvme1), 0);
	clients[0] = nvme1;
	assert_ptr_equal(pci_p2pmem_find(e.ph, clients, 1, &bar), nvme1);
	/* Two clients: the least sum over both, whatever the topology makes it. */
	clients[0] = nvme0;
	clients[1] = acc1;
	best = pci_p2pmem_find(e.ph, clients, 2, NULL);
	for (unsigned i = 0; i < 3; i++) {
		struct pci_dev *p = dev(&e, provs[i]);
		long s = pci_p2pdma_distance(p, 2, nvme0) + pci_p2pdma_distance(p, 2, acc1);

		if (want < 0 || s < want)
			want = s;
	}
	assert_non_null(best);
	assert_int_equal(pci_p2pdma_distance(best, 2, nvme0) + pci_p2pdma_distance(best, 2, acc1),
			 want);
	/* An unpublished resource is never chosen: nvme2's SQ-only CMB, even for itself. */
	clients[0] = dev(&e, "nvme2");
	assert_ptr_not_equal(pci_p2pmem_find(e.ph, clients, 1, NULL), clients[0]);
	env_down(&e);
}

static void test_nvme_read_into_p2pmem(void **state)
{
	const uint32_t nlb = MIB / 512, cmds = MIB / (128 * 1024);
	struct pci_dev *nvme0, *acc0, *prov = NULL;
	uint8_t *want = malloc(MIB), *got = malloc(MIB), *mem;
	struct fab_route *r = malloc(sizeof(*r));
	struct accel_drv_info ai;
	struct nvme_drv_ns ns;
	uint64_t bus, ram0, acc_bus;
	struct env e;

	(void)state;
	assert_non_null(want);
	assert_non_null(got);
	assert_non_null(r);
	env_up(&e, 0);
	nvme0 = dev(&e, "nvme0");
	acc0 = dev(&e, "acc0");
	assert_int_equal(nvme_drv_ns_info(nvme0, 1, &ns), 0);
	assert_int_equal(ns.lba_shift, 9);
	fill(want, MIB, 41);
	assert_int_equal(io(nvme0, NVME_DRV_WRITE, 64, nlb, want), 0);

	/* p2pmem for the NVMe from the provider the orchestrator finds: acc0. */
	mem = pci_p2pmem_alloc_near(e.ph, &nvme0, 1, MIB, &prov);
	assert_non_null(mem);
	assert_ptr_equal(prov, acc0);
	assert_true(pci_is_p2pmem(e.ph, mem, MIB));
	assert_int_equal(pci_p2pmem_map(nvme0, mem, MIB, &bus), 0);
	/* The route of the NVMe's writes to it: acc0's BAR2, no hop in RAM. */
	assert_int_equal(fab_route_resolve_uncached(e.h, nvme0->bdf, bus, 4096, true, r), 0);
	assert_int_equal(r->status, FAB_OK);
	assert_int_equal(r->tgt.kind, FAB_TGT_BAR);
	assert_int_equal(r->tgt.bdf, acc0->bdf);
	assert_int_equal(r->tgt.bar, 2);

	memset(mem, 0, MIB);
	ram0 = ram_bytes(&e);
	assert_int_equal(io(nvme0, NVME_DRV_READ, 64, nlb, mem), 0);
	/* RAM saw the queue entries and PRP lists only (< one page per
	 * command), never the 1 MiB of data. */
	assert_true(ram_bytes(&e) - ram0 < (uint64_t)cmds * 4096);
	memcpy(got, mem, MIB);     /* MMIO reads through acc0's BAR */
	assert_memory_equal(got, want, MIB);
	/* The accelerator sees the same bytes in its memory. */
	assert_int_equal(accel_drv_get_info(acc0, &ai), 0);
	assert_int_equal(pci_p2pmem_map(acc0, mem, MIB, &acc_bus), 0);
	assert_int_equal(acc_bus, ai.mem_bus + (uint64_t)(mem - ai.mem));
	{
		struct accel_desc d = { .op = ACCEL_OP_CHECKSUM, .src = acc_bus, .len = MIB };

		assert_int_equal(accel_drv_submit(acc0, &d), 0);
		assert_int_equal(d.status, ST_OK);
		assert_int_equal((uint32_t)d.result, ref_crc32c(want, MIB));
	}

	/* The other way: a write from p2pmem, read back through the bounce buffer. */
	fill(got, MIB, 42);
	memcpy(mem, got, MIB);
	ram0 = ram_bytes(&e);
	assert_int_equal(io(nvme0, NVME_DRV_WRITE, 4096, nlb, mem), 0);
	assert_true(ram_bytes(&e) - ram0 < (uint64_t)cmds * 4096);
	memset(want, 0, MIB);
	ram0 = ram_bytes(&e);
	assert_int_equal(io(nvme0, NVME_DRV_READ, 4096, nlb, want), 0);
	/* The control: a read into host memory moves all of it through RAM. */
	assert_true(ram_bytes(&e) - ram0 >= MIB);
	assert_memory_equal(want, got, MIB);

	assert_int_equal(pci_free_p2pmem(e.ph, mem, MIB), 0);
	env_down(&e);
	free(r);
	free(want);
	free(got);
}

static void test_cmb_and_accel_clients(void **state)
{
	struct pci_dev *nvme1, *acc1, *prov = NULL;
	uint8_t *want = malloc(256 * 1024), *mem;
	uint64_t bus, cmb_bus, ram0;
	struct env e;

	(void)state;
	assert_non_null(want);
	env_up(&e, 0);
	nvme1 = dev(&e, "nvme1");
	acc1 = dev(&e, "acc1");
	fill(want, 256 * 1024, 7);
	assert_int_equal(io(nvme1, NVME_DRV_WRITE, 0, 512, want), 0);
	/* nvme1's own CMB is its closest provider: the data never leaves it. */
	mem = pci_p2pmem_alloc_near(e.ph, &nvme1, 1, 256 * 1024, &prov);
	assert_non_null(mem);
	assert_ptr_equal(prov, nvme1);
	assert_int_equal(pci_p2pmem_map(nvme1, mem, 256 * 1024, &cmb_bus), 0);
	assert_int_equal(cmb_bus, nvme1->bar_addr[2]);
	ram0 = ram_bytes(&e);
	assert_int_equal(io(nvme1, NVME_DRV_READ, 0, 512, mem), 0);
	assert_true(ram_bytes(&e) - ram0 < 2 * 4096);
	assert_memory_equal(mem, want, 256 * 1024);
	assert_int_equal(pci_free_p2pmem(e.ph, mem, 256 * 1024), 0);

	/* The accelerator driver's allocation for itself and a peer (nvme1). */
	mem = accel_drv_alloc_p2pmem(acc1, &nvme1, 1, 64 * 1024, &bus, &prov);
	assert_non_null(mem);
	assert_non_null(prov);
	{
		struct accel_desc d = { .op = ACCEL_OP_FILL, .dst = bus, .len = 64 * 1024,
					.pattern = 0x0123456789abcdefull };
		uint64_t w;

		assert_int_equal(accel_drv_submit(acc1, &d), 0);
		assert_int_equal(d.status, ST_OK);
		memcpy(&w, mem + 4096, sizeof(w));
		assert_true(w == 0x0123456789abcdefull);
	}
	assert_int_equal(pci_free_p2pmem(e.ph, mem, 64 * 1024), 0);
	env_down(&e);
	free(want);
}

static void test_alloc_free_lifetime(void **state)
{
	struct pci_dev *acc1, *clients[1];
	struct pci_p2pmem_stat st;
	uint8_t *a, *b, *c;
	uint64_t bus;
	struct env e;

	(void)state;
	env_up(&e, 0);
	acc1 = dev(&e, "acc1");
	a = pci_alloc_p2pmem(acc1, 1);                  /* rounded to a page */
	b = pci_alloc_p2pmem(acc1, 8192);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal((uintptr_t)a % 4096, 0);
	assert_true(b >= a + 4096 || b + 8192 <= a);
	assert_int_equal(pci_p2pmem_stat(acc1, &st), 0);
	assert_int_equal(st.nallocs, 2);
	assert_int_equal(st.allocated, 3 * 4096);
	/* Full: nothing left for more than the rest. */
	assert_null(pci_alloc_p2pmem(acc1, 4 * MIB));
	assert_int_equal(pci_free_p2pmem(e.ph, a, 1), 0);
	assert_int_equal(pci_free_p2pmem(e.ph, a, 1), -EINVAL);      /* double free */
	assert_int_equal(pci_free_p2pmem(e.ph, (uint8_t *)&st, 4096), -EINVAL);
	assert_false(pci_is_p2pmem(e.ph, &st, sizeof(st)));
	c = pci_alloc_p2pmem(acc1, 4096);
	assert_ptr_equal(c, a);                         /* first fit reuses it */

	/*
	 * acc1 goes away with b and c outstanding: unpublished, no new
	 * allocations, nobody is told its address any more, but b stays
	 * mapped for whoever still writes it until the last free.
	 */
	assert_int_equal(pci_hot_remove(e.ph, acc1), 0);
	clients[0] = dev(&e, "acc0");
	assert_ptr_equal(pci_p2pmem_find(e.ph, clients, 1, NULL), clients[0]);
	assert_true(pci_is_p2pmem(e.ph, b, 8192));
	assert_int_equal(pci_p2pmem_map(clients[0], b, 8192, &bus), -ENODEV);
	assert_null(pci_p2pmem_provider(e.ph, b, NULL));
	memset(b, 0x5a, 8192);
	assert_int_equal(pci_free_p2pmem(e.ph, b, 8192), 0);
	assert_true(pci_is_p2pmem(e.ph, c, 4096));
	assert_int_equal(pci_free_p2pmem(e.ph, c, 4096), 0);
	/* The last free let the pool go. */
	assert_false(pci_is_p2pmem(e.ph, c, 4096));
	env_down(&e);
}

static void test_no_provider(void **state)
{
	struct pci_dev *nvme0, *prov = (struct pci_dev *)1;
	struct env e;

	(void)state;
	env_up(&e, 1);
	nvme0 = pci_get_dev(e.ph, fab_func_bdf(tc_fn(&e.tc, 1, "nvme0")));
	assert_non_null(nvme0);
	/* Nothing publishes here: no p2pmem, and the caller is told so. */
	assert_null(pci_p2pmem_find(e.ph, &nvme0, 1, NULL));
	assert_null(pci_p2pmem_alloc_near(e.ph, &nvme0, 1, 4096, &prov));
	assert_null(prov);
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_providers_published),
		cmocka_unit_test(test_orchestrator_closest),
		cmocka_unit_test(test_nvme_read_into_p2pmem),
		cmocka_unit_test(test_cmb_and_accel_clients),
		cmocka_unit_test(test_alloc_free_lifetime),
		cmocka_unit_test(test_no_provider),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
