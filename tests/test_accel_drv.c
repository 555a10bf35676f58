// SPDX-License-Identifier: MIT
/*
 * The accelerator driver on running device models (devrun threads) through
 * the host's PCI core: probe, copies RAM <-> device memory and between two
 * accelerators (peer-to-peer under a switch and through the root complex),
 * checksums against a reference CRC32C, device programs, ping-pong, ring
 * recovery after a stall, remove and re-probe, and a host with its IOMMU on.
 *
 * Driver calls are made with the host lock held, as the daemon makes them;
 * the driver drops it while waiting (the models take it for every DMA).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric_util.h"
#include "host/devrun.h"
#include "host/drivers/accel_drv.h"
#include "host/lend.h"
#include "host/pci.h"

#ifndef DL_BORROWED
/*
 * Host 0 (IOMMU off): acc0 and acc1 under switch sw0, acc2 on a root port,
 * all kept by the host (lendable: false); acc3 registered for lending.
 * Host 1 (IOMMU on): acc0 on a root port.
 */
static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - switch:\n"
	"          name: sw0\n"
	"          ports:\n"
	"            - device: {name: acc0, model: accel, lendable: false, params: {memory: 16M}}\n"
	"            - device: {name: acc1, model: accel, lendable: false, params: {memory: 16M}}\n"
	"      - device: {name: acc2, model: accel, lendable: false, params: {memory: 16M}}\n"
	"      - device: {name: acc3, model: accel, params: {memory: 1M}}\n"
	"  - id: 1\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - device: {name: acc0, model: accel, lendable: false, params: {memory: 4M}}\n";

#else
/*
 * The same suite on borrowed devices (Device Lending): hosts 0 and 1 keep no
 * devices and borrow them over an NTB cable from lenders 2 (IOMMU off, the
 * same tree as host 0 above) and 3 (IOMMU on). Each test's "host 0/1"
 * is the borrower; the driver binds to shadow devices.
 */
static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 1G\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: 2.ntb0}\n"
	"  - id: 1\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: 3.ntb0}\n"
	"  - id: 2\n"
	"    ram: 1G\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - ntb: {name: ntb0}\n"
	"      - switch:\n"
	"          name: sw0\n"
	"          ports:\n"
	"            - device: {name: acc0, model: accel, params: {memory: 16M}}\n"
	"            - device: {name: acc1, model: accel, params: {memory: 16M}}\n"
	"      - device: {name: acc2, model: accel, params: {memory: 16M}}\n"
	"      - device: {name: acc3, model: accel, params: {memory: 1M}}\n"
	"  - id: 3\n"
	"    ram: 1G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0}\n"
	"      - device: {name: acc0, model: accel, params: {memory: 4M}}\n";
#endif

#define ST_OK ACCEL_ST_MAKE(ACCEL_SC_OK, 0)

struct env {
	struct tcluster tc;
	struct fab_host *h;
	struct devrun_set *devs;
	struct pci_host *ph;
#ifdef DL_BORROWED
	struct fab_host *lh;          /* the lender */
	struct pci_host *lph;         /* its PCI core (the lent devices: no driver) */
	struct lend_local *lent[4];
	unsigned nlent;
#endif
};

#ifdef DL_BORROWED
static void env_up(struct env *e, uint32_t host)
{
	static const char *const borrow[2][4] = { { "acc0", "acc1", "acc2" }, { "acc0" } };
	char err[256];

	tc_up(&e->tc, yaml);
	e->h = tc_host(&e->tc, host);
	e->lh = tc_host(&e->tc, host + 2);
	e->nlent = 0;
	assert_int_equal(devrun_start(e->lh, NULL, &e->devs, err, sizeof(err)), 0);
	assert_int_equal(pci_host_create(e->lh, &e->lph, err, sizeof(err)), 0);
	fab_host_lock(e->h);
	assert_int_equal(pci_host_create(e->h, &e->ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(e->ph, &accel_pci_driver), 0);
	for (unsigned i = 0; i < 4 && borrow[host][i]; i++) {
		struct pci_dev *sh;

		assert_int_equal(lend_local_borrow(e->lh, fab_func_bdf(tc_fn(&e->tc, e->lh->id,
									       borrow[host][i])),
						   e->ph, &e->lent[e->nlent], &sh), 0);
		assert_non_null(shadow_grant(sh));
		e->nlent++;
	}
}

static void env_down(struct env *e)
{
	/* Drivers go while the models still run: remove resets the devices. */
	pci_host_destroy(e->ph);
	for (unsigned i = 0; i < e->nlent; i++)
		assert_int_equal(lend_local_return(e->lent[i], true), 0);
	fab_host_unlock(e->h);
	pci_host_destroy(e->lph);
	devrun_stop(e->devs);
	tc_down(&e->tc);
}

/* A borrowed device by its name (the shadow's), else the lender's own. */
static struct pci_dev *dev_named(struct env *e, const char *name)
{
	for (unsigned i = 0; i < pci_host_ndevs(e->ph); i++)
		if (!strcmp(pci_host_dev(e->ph, i)->name, name))
			return pci_host_dev(e->ph, i);
	return pci_get_dev(e->lph, fab_func_bdf(tc_fn(&e->tc, e->lh->id, name)));
}
#else

static void env_up(struct env *e, uint32_t host)
{
	char err[256];

	tc_up(&e->tc, yaml);
	e->h = tc_host(&e->tc, host);
	assert_int_equal(devrun_start(e->h, NULL, &e->devs, err, sizeof(err)), 0);
	fab_host_lock(e->h);
	assert_int_equal(pci_host_create(e->h, &e->ph, err, sizeof(err)), 0);
	assert_int_equal(pci_register_driver(e->ph, &accel_pci_driver), 0);
}

static void env_down(struct env *e)
{
	/* Drivers go while the models still run: remove resets the devices. */
	pci_host_destroy(e->ph);
	fab_host_unlock(e->h);
	devrun_stop(e->devs);
	tc_down(&e->tc);
}

static struct pci_dev *dev_named(struct env *e, const char *name)
{
	struct pci_dev *p = pci_get_dev(e->ph, fab_func_bdf(tc_fn(&e->tc, e->h->id, name)));

	assert_non_null(p);
	return p;
}

#endif

static struct accel_drv_info info_of(struct pci_dev *p)
{
	struct accel_drv_info in;

	assert_int_equal(accel_drv_get_info(p, &in), 0);
	return in;
}

static uint32_t ref_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

static void fill_random(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static uint32_t copy(struct pci_dev *p, uint64_t src, uint64_t dst, uint64_t len)
{
	struct accel_desc d = { .op = ACCEL_OP_COPY, .src = src, .dst = dst, .len = len };

	assert_int_equal(accel_drv_submit(p, &d), 0);
	if (d.status == ST_OK)
		assert_int_equal(d.result, len);
	return d.status;
}

static uint32_t checksum(struct pci_dev *p, uint64_t src, uint64_t len)
{
	struct accel_desc d = { .op = ACCEL_OP_CHECKSUM, .src = src, .len = len };

	assert_int_equal(accel_drv_submit(p, &d), 0);
	assert_int_equal(d.status, ST_OK);
	return (uint32_t)d.result;
}

/* ---------- tests ---------- */

static void test_probe(void **state)
{
	struct env e;
	struct accel_drv_info in;

	env_up(&e, 0);
	for (int i = 0; i < 3; i++) {
		char name[8];
		struct pci_dev *p;
		uint64_t own;

		snprintf(name, sizeof(name), "acc%d", i);
		p = dev_named(&e, name);
		assert_ptr_equal(p->driver, &accel_pci_driver);
		assert_true(accel_drv_bound(p));
		in = info_of(p);
		assert_int_equal(in.mem_size, 16 << 20);
		/* The engine's own view of its memory: its BAR2 (where it really sits). */
		assert_int_equal(pci_p2pdma_bus(p, p, 2, &own), 0);
		assert_int_equal(in.mem_bus, own);
		assert_int_equal(own, shadow_grant(p) ? shadow_grant(p)->bar_addr[2]
						      : p->bar_addr[2]);
		assert_int_equal(in.dma_bits, ACCEL_DMA_BITS_DEFAULT);
		assert_int_equal(p->dma_mask, (1ull << 40) - 1);
		assert_int_equal(in.buf_size, ACCEL_DRV_BUF_SIZE);
		assert_non_null(in.buf);
		assert_int_equal(p->nvec, ACCEL_NR_VECTORS);
	}
	/* Registered for lending: smartio owns it, no local driver. */
	assert_null(dev_named(&e, "acc3")->driver);
	assert_false(accel_drv_bound(dev_named(&e, "acc3")));
	assert_int_equal(accel_drv_get_info(dev_named(&e, "acc3"), &in), -ENODEV);
	env_down(&e);
}

static void test_copy_ram_device(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct accel_drv_info in;
	const uint64_t n = 3 << 20;    /* several engine passes (CHUNK is 256 KiB) */
	uint32_t ref;

	env_up(&e, 0);
	p = dev_named(&e, "acc0");
	in = info_of(p);
	fill_random(in.buf, n, 11);
	ref = ref_crc32c(0, in.buf, n);
	/* RAM -> device memory. */
	assert_int_equal(copy(p, in.buf_bus, in.mem_bus + 0x10000, n), ST_OK);
	assert_memory_equal(in.mem + 0x10000, in.buf, n);
	assert_int_equal(checksum(p, in.mem_bus + 0x10000, n), ref);
	/* Device memory -> RAM, elsewhere in the buffer (not overlapping). */
	memset(in.buf + n, 0, ACCEL_DRV_BUF_SIZE - n);
	assert_int_equal(copy(p, in.mem_bus + 0x10000, in.buf_bus + n, ACCEL_DRV_BUF_SIZE - n),
			 ST_OK);
	assert_memory_equal(in.buf + n, in.mem + 0x10000, ACCEL_DRV_BUF_SIZE - n);
	assert_int_equal(checksum(p, in.buf_bus + n, ACCEL_DRV_BUF_SIZE - n),
			 ref_crc32c(0, in.mem + 0x10000, ACCEL_DRV_BUF_SIZE - n));
	env_down(&e);
}

static void test_copy_peer_to_peer(void **state)
{
	struct env e;
	struct pci_dev *a, *b, *c;
	struct accel_drv_info ia, ib, ic;
	const uint64_t n = 1 << 20;
	uint64_t b_from_a, a_from_b, c_from_a;
	uint32_t ref;

	env_up(&e, 0);
	a = dev_named(&e, "acc0");
	b = dev_named(&e, "acc1");
	c = dev_named(&e, "acc2");
	ia = info_of(a);
	ib = info_of(b);
	ic = info_of(c);
	fill_random(ia.mem + 0x2000, n, 5);
	ref = ref_crc32c(0, ia.mem + 0x2000, n);
	/* Peer addresses come from the P2P API: as each engine reaches the other. */
	assert_int_equal(pci_p2pdma_bus(a, b, 2, &b_from_a), 0);
	assert_int_equal(pci_p2pdma_bus(b, a, 2, &a_from_b), 0);
	assert_int_equal(pci_p2pdma_bus(a, c, 2, &c_from_a), 0);
	/* Under the switch: acc0's engine writes acc1's BAR2. */
	assert_int_equal(copy(a, ia.mem_bus + 0x2000, b_from_a + 0x4000, n), ST_OK);
	assert_memory_equal(ib.mem + 0x4000, ia.mem + 0x2000, n);
	/* And acc1 reads acc0's (the other direction of the same path). */
	assert_int_equal(copy(b, a_from_b + 0x2000, ib.mem_bus + 0x200000, n), ST_OK);
	assert_int_equal(checksum(b, ib.mem_bus + 0x200000, n), ref);
	/* Through the root complex to the accelerator on the other root port. */
	assert_int_equal(copy(a, ia.mem_bus + 0x2000, c_from_a, n), ST_OK);
	assert_int_equal(checksum(c, ic.mem_bus, n), ref);
	assert_int_equal(ref_crc32c(0, ic.mem, n), ref);
	env_down(&e);
}

static void test_checksum_fill_errors(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct accel_drv_info in;
	struct accel_desc d[3];
	uint8_t expect[64];

	env_up(&e, 0);
	p = dev_named(&e, "acc2");
	in = info_of(p);
	/* The check value every CRC32C implementation agrees on. */
	memcpy(in.buf, "123456789", 9);
	assert_int_equal(checksum(p, in.buf_bus, 9), 0xe3069283u);
	assert_int_equal(ref_crc32c(0, "123456789", 9), 0xe3069283u);
	/* A batch: fill, copy, checksum, in ring order. */
	memset(d, 0, sizeof(d));
	d[0] = (struct accel_desc){ .op = ACCEL_OP_FILL, .dst = in.mem_bus + 3, .len = 64,
				    .pattern = 0x0807060504030201ull };
	d[1] = (struct accel_desc){ .op = ACCEL_OP_COPY, .src = in.mem_bus + 3,
				    .dst = in.buf_bus + 4096, .len = 64 };
	d[2] = (struct accel_desc){ .op = ACCEL_OP_CHECKSUM, .src = in.buf_bus + 4096, .len = 64 };
	assert_int_equal(accel_drv_submit_batch(p, d, 3, 5000), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(d[i].status, ST_OK);
	/* Byte i of the range is byte i % 8 of the pattern, wherever it starts. */
	for (int i = 0; i < 64; i++)
		expect[i] = (uint8_t)((i % 8) + 1);
	assert_memory_equal(in.buf + 4096, expect, 64);
	assert_int_equal(d[2].result, ref_crc32c(0, expect, 64));
	/* Failures come back in the status word and the ring keeps going. */
	assert_int_equal(ACCEL_ST_CODE(copy(p, in.mem_bus + in.mem_size - 16, in.buf_bus, 32)),
			 ACCEL_SC_RANGE);
	{
		uint32_t st = copy(p, 0xfed00000, in.buf_bus, 4096);

		assert_int_equal(ACCEL_ST_CODE(st), ACCEL_SC_READ_FAULT);
		assert_int_equal(ACCEL_ST_FAB(st), FAB_UR);
	}
	assert_int_equal(ACCEL_ST_CODE(copy(p, 1ull << 40, in.buf_bus, 8)), ACCEL_SC_DMA_LIMIT);
	assert_int_equal(copy(p, in.buf_bus, in.mem_bus, 4096), ST_OK);
	/* More than the ring holds is refused, not wrapped. */
	assert_int_equal(accel_drv_submit_batch(p, d, ACCEL_DRV_RING_SIZE, 1000), -EINVAL);
	env_down(&e);
}

static void test_programs(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct accel_drv_info in;
	struct accel_prog_args a = { .op = ACCEL_PROG_MEMSET, .dst = 0x1000, .len = 1 << 20,
				     .pattern = 0xa5a5a5a5a5a5a5a5ull };
	struct accel_prog_res r;

	env_up(&e, 0);
	p = dev_named(&e, "acc1");
	in = info_of(p);
	assert_int_equal(accel_drv_program(p, &a, 5000, &r), 0);
	assert_int_equal(r.status, ST_OK);
	for (size_t i = 0; i < (1 << 20); i += 4093)
		assert_int_equal(in.mem[0x1000 + i], 0xa5);
	a = (struct accel_prog_args){ .op = ACCEL_PROG_MEMCPY, .src = 0x1000,
				      .dst = 0x400000, .len = 1 << 20 };
	assert_int_equal(accel_drv_program(p, &a, 5000, &r), 0);
	assert_int_equal(r.status, ST_OK);
	a = (struct accel_prog_args){ .op = ACCEL_PROG_CHECKSUM, .src = 0x400000, .len = 1 << 20 };
	assert_int_equal(accel_drv_program(p, &a, 5000, &r), 0);
	assert_int_equal(r.status, ST_OK);
	assert_int_equal(r.result, ref_crc32c(0, in.mem + 0x1000, 1 << 20));
	/* Out of range: the program ends with RANGE, and the driver stays usable. */
	a.src = in.mem_size;
	assert_int_equal(accel_drv_program(p, &a, 5000, &r), 0);
	assert_int_equal(ACCEL_ST_CODE(r.status), ACCEL_SC_RANGE);
	/* A ping-pong whose peer never answers is aborted at the deadline. */
	a = (struct accel_prog_args){ .op = ACCEL_PROG_PINGPONG, .role = ACCEL_ROLE_RESPONDER,
				      .peer = in.mem_bus, .watch = 0x100, .iters = 10 };
	in.mem[0x100] = 0;
	assert_int_equal(accel_drv_program(p, &a, 50, &r), -ETIMEDOUT);
	assert_int_equal(ACCEL_ST_CODE(r.status), ACCEL_SC_ABORTED);
	a = (struct accel_prog_args){ .op = ACCEL_PROG_CHECKSUM, .src = 0x400000, .len = 4096 };
	assert_int_equal(accel_drv_program(p, &a, 5000, &r), 0);
	assert_int_equal(r.status, ST_OK);
	env_down(&e);
}

static void test_pingpong(void **state)
{
	struct env e;
	struct pci_dev *a, *b, *c;
	struct accel_prog_res r = { 0 };
	uint64_t before;

	env_up(&e, 0);
	a = dev_named(&e, "acc0");
	b = dev_named(&e, "acc1");
	c = dev_named(&e, "acc2");
	before = 0x1122334455667788ull;
	memcpy(info_of(a).mem + info_of(a).mem_size - ACCEL_DRV_PP_MAILBOX, &before, 8);
	/* Under the switch. */
	assert_int_equal(accel_drv_pingpong(a, b, 1000, accel_drv_pingpong_timeout_ms(1000), &r),
			 0);
	assert_int_equal(r.status, ST_OK);
	assert_int_equal(r.iters_done, 1000);
	assert_true(r.avg_ns > 0);
	assert_true(r.elapsed_ns >= r.avg_ns * 1000);
	print_message("ping-pong under the switch: %llu iterations, %llu ns round trip\n",
		      (unsigned long long)r.iters_done, (unsigned long long)r.avg_ns);
	/* The mailbox is given back as it was. */
	assert_memory_equal(info_of(a).mem + info_of(a).mem_size - ACCEL_DRV_PP_MAILBOX, &before,
			    8);
	/* Through the root complex, the other way round. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(accel_drv_pingpong(c, a, 1000, accel_drv_pingpong_timeout_ms(1000), &r),
			 0);
	assert_int_equal(r.status, ST_OK);
	assert_int_equal(r.iters_done, 1000);
	assert_true(r.avg_ns > 0);
	print_message("ping-pong through the root: %llu ns round trip\n",
		      (unsigned long long)r.avg_ns);
	assert_int_equal(accel_drv_pingpong(a, a, 10, 1000, &r), -EINVAL);
	assert_int_equal(accel_drv_pingpong(a, dev_named(&e, "acc3"), 10, 1000, &r), -ENODEV);
	env_down(&e);
}

static void test_stall_recovery(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct accel_drv_info in;
	struct accel_desc d = { .op = ACCEL_OP_NOP };

	env_up(&e, 0);
	p = dev_named(&e, "acc0");
	in = info_of(p);
	/* Without bus mastering the ring in host RAM cannot be fetched: the
	 * submission times out, and the driver restarts the ring. */
	pci_clear_master(p);
	assert_int_equal(accel_drv_submit_batch(p, &d, 1, 100), -ETIMEDOUT);
	pci_set_master(p);
	fill_random(in.buf, 8192, 3);
	assert_int_equal(copy(p, in.buf_bus, in.mem_bus, 8192), ST_OK);
	assert_memory_equal(in.mem, in.buf, 8192);
	env_down(&e);
}

static void test_remove_reprobe(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct accel_drv_info in;
	uint64_t ring_calls;

	env_up(&e, 0);
	p = dev_named(&e, "acc2");
	in = info_of(p);
	fill_random(in.mem, 4096, 9);
	pci_unregister_driver(e.ph, &accel_pci_driver);
	assert_null(p->driver);
	assert_false(accel_drv_bound(p));
	assert_int_equal(p->nvec, 0);
	assert_int_equal(accel_drv_get_info(p, &in), -ENODEV);
	/* Device memory survives a reset; the driver comes back to a clean device. */
	assert_int_equal(pci_register_driver(e.ph, &accel_pci_driver), 0);
	assert_true(accel_drv_bound(p));
	in = info_of(p);
	ring_calls = ref_crc32c(0, in.mem, 4096);
	assert_int_equal(copy(p, in.mem_bus, in.buf_bus, 4096), ST_OK);
	assert_int_equal(checksum(p, in.buf_bus, 4096), ring_calls);
	/* Hot-remove of a bound device removes the driver first. */
	assert_int_equal(pci_hot_remove(e.ph, p), 0);
	env_down(&e);
}

static void test_iommu_host(void **state)
{
	struct env e;
	struct pci_dev *p;
	struct accel_drv_info in;
	uint64_t faults;
	const uint64_t n = 1 << 20;

	env_up(&e, 1);
	p = dev_named(&e, "acc0");
	assert_true(accel_drv_bound(p));
	assert_true(p->domain != 0);        /* the DMA API gave it a domain */
	in = info_of(p);
	faults = iommu_fault_count(e.h->iommu);
	fill_random(in.buf, n, 21);
	assert_int_equal(copy(p, in.buf_bus, in.mem_bus + 4096, n), ST_OK);
	assert_memory_equal(in.mem + 4096, in.buf, n);
	assert_int_equal(copy(p, in.mem_bus + 4096, in.buf_bus + n, n), ST_OK);
	assert_memory_equal(in.buf + n, in.buf, n);
	assert_int_equal(checksum(p, in.buf_bus + n, n), ref_crc32c(0, in.buf, n));
	assert_int_equal(iommu_fault_count(e.h->iommu), faults);
	/* An address outside the device's mappings faults at the IOMMU. */
	{
		uint32_t st = copy(p, in.buf_bus + (64ull << 20), in.mem_bus, 4096);

		assert_int_equal(ACCEL_ST_CODE(st), ACCEL_SC_READ_FAULT);
		assert_int_equal(ACCEL_ST_FAB(st), FAB_IOMMU_FAULT);
		assert_true(iommu_fault_count(e.h->iommu) > faults);
	}
	env_down(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_copy_ram_device),
		cmocka_unit_test(test_copy_peer_to_peer),
		cmocka_unit_test(test_checksum_fill_errors),
		cmocka_unit_test(test_programs),
		cmocka_unit_test(test_pingpong),
		cmocka_unit_test(test_stall_recovery),
		cmocka_unit_test(test_remove_reprobe),
		cmocka_unit_test(test_iommu_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
