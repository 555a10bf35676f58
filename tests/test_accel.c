// SPDX-License-Identifier: MIT
/*
 * The accelerator model driven through its registers on the device harness:
 * descriptor ring DMA, limits and faults, MSI-X, device programs, and
 * ping-pong between two instances whose buses reach each other's BAR2.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dev_harness.h"
#include "smartio/accel_regs.h"

#define MEM_SIZE   (8ull << 20)
#define RAM_SIZE   (8ull << 20)
#define BAR2_A     0x4000000000ull      /* 2^38: below the 40-bit limit */
#define BAR2_B     0x4010000000ull
#define RING_RAM   0x10000ull           /* ring in harness RAM */
#define MAX_POLLS  100000

/* ---- harness helpers ---- */

static uint32_t rd32(struct harness *h, uint32_t off)
{
	return dev_reg32(&h->d, ACCEL_BAR_REGS, off);
}

static uint64_t rd64(struct harness *h, uint32_t off)
{
	return dev_reg64(&h->d, ACCEL_BAR_REGS, off);
}

static void wr32(struct harness *h, uint32_t off, uint32_t v)
{
	dev_set_reg32(&h->d, ACCEL_BAR_REGS, off, v);
}

static void wr64(struct harness *h, uint32_t off, uint64_t v)
{
	dev_set_reg64(&h->d, ACCEL_BAR_REGS, off, v);
}

static uint8_t *devmem(struct harness *h)
{
	return h->d.fn.bar[ACCEL_BAR_MEM];
}

/* Software assigns BAR2 (64-bit prefetchable) at bus address base. */
static void set_bar2(struct harness *h, uint64_t base)
{
	uint32_t lo = (uint32_t)base | PCI_BASE_ADDRESS_MEM_TYPE_64 |
		      PCI_BASE_ADDRESS_MEM_PREFETCH;
	uint32_t hi = (uint32_t)(base >> 32);

	memcpy(h->cfg + PCI_BASE_ADDRESS_2, &lo, 4);
	memcpy(h->cfg + PCI_BASE_ADDRESS_3, &hi, 4);
}

static void set_master(struct harness *h, bool on)
{
	if (on)
		h->cfg[PCI_COMMAND] |= PCI_COMMAND_MASTER;
	else
		h->cfg[PCI_COMMAND] &= (uint8_t)~PCI_COMMAND_MASTER;
}

static struct harness *acc_new_p(const char *dma_bits, int *rc_out)
{
	static const uint64_t bars[6] = { 65536, 0, MEM_SIZE, 0, 0, 0 };
	struct harness *h = calloc(1, sizeof(*h));
	char err[256] = "";
	int rc;

	assert_non_null(h);
	h_param(h, "memory", "8M");
	if (dma_bits)
		h_param(h, "dma_bits", dma_bits);
	rc = h_setup(h, "accel", bars, 4, 0, 0x8000, 0x9000, RAM_SIZE, err, sizeof(err));
	if (rc_out)
		*rc_out = rc;
	else
		assert_int_equal(rc, 0);
	set_bar2(h, BAR2_A);
	return h;
}

static struct harness *acc_new(void)
{
	return acc_new_p(NULL, NULL);
}

static void acc_free(struct harness *h)
{
	h_teardown(h);
	free(h);
}

static int run(struct harness *h)
{
	int n = h_run(h, MAX_POLLS);

	assert_true(n < MAX_POLLS);
	return n;
}

static uint64_t msi_total(struct harness *h)
{
	uint64_t n = 0;

	for (int i = 0; i < 4; i++)
		n += h->msi[i];
	return n;
}

/* Bitwise CRC32C: an independent reference for the device's checksums. */
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

static void fill_random(uint8_t *p, size_t n, uint32_t seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

/* ---- a ring as the driver would keep it ---- */

struct ring {
	struct harness *h;
	uint64_t base;          /* bus address */
	struct accel_desc *slot;
	uint32_t size, tail;
};

static void ring_init(struct ring *r, struct harness *h, uint64_t base, uint32_t size)
{
	r->h = h;
	r->base = base;
	r->size = size;
	r->tail = 0;
	if (base >= BAR2_A && base < BAR2_A + MEM_SIZE)
		r->slot = (struct accel_desc *)(devmem(h) + (base - BAR2_A));
	else
		r->slot = (struct accel_desc *)(h->ram + base);
	memset(r->slot, 0, (size_t)size * ACCEL_DESC_SIZE);
	wr64(h, ACCEL_REG_RING_BASE, base);
	wr32(h, ACCEL_REG_RING_SIZE, size);
	wr32(h, ACCEL_REG_RING_TAIL, 0);
	wr32(h, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_READY, ACCEL_STS_READY);
}

/* Queue one descriptor and ring the doorbell; returns its slot. */
static struct accel_desc *submit(struct ring *r, uint32_t op, uint32_t flags, uint64_t src,
				 uint64_t dst, uint64_t len, uint64_t pattern)
{
	struct accel_desc *d = &r->slot[r->tail];

	*d = (struct accel_desc){ .op = op, .flags = flags, .src = src, .dst = dst,
				  .len = len, .pattern = pattern, .user = 0xabcd };
	r->tail = ACCEL_RING_NEXT(r->tail, r->size);
	wr32(r->h, ACCEL_REG_RING_TAIL, r->tail);
	return d;
}

/* Submit, run to idle, return the completion status. */
static uint32_t exec1(struct ring *r, uint32_t op, uint64_t src, uint64_t dst, uint64_t len,
		      uint64_t pattern, uint64_t *result)
{
	struct accel_desc *d = submit(r, op, 0, src, dst, len, pattern);

	run(r->h);
	if (result)
		*result = d->result;
	assert_int_equal(d->user, 0xabcd);
	return d->status;
}

#define ST_OK ACCEL_ST_MAKE(ACCEL_SC_OK, 0)

/* ---- tests ---- */

static void test_ident(void **state)
{
	struct harness *h = acc_new();
	uint32_t caps = rd32(h, ACCEL_REG_CAPS);
	int rc;

	assert_int_equal(rd32(h, ACCEL_REG_MAGIC), ACCEL_MAGIC);
	assert_memory_equal(h->d.fn.bar[0], "ACEL", 4);
	assert_int_equal(ACCEL_VERSION_MAJOR(rd32(h, ACCEL_REG_VERSION)), 1);
	assert_int_equal(rd64(h, ACCEL_REG_MEM_SIZE), MEM_SIZE);
	assert_int_equal(rd32(h, ACCEL_REG_DMA_BITS), 40);
	for (unsigned op = ACCEL_OP_COPY; op <= ACCEL_OP_FENCE; op++)
		assert_true(caps & ACCEL_CAPS_OP(op));
	for (unsigned p = ACCEL_PROG_MEMCPY; p <= ACCEL_PROG_KERNEL; p++)
		assert_true(caps & ACCEL_CAPS_PROG(p));
	assert_int_equal(rd32(h, ACCEL_REG_RING_MAX), ACCEL_RING_MAX);
	assert_int_equal(rd32(h, ACCEL_REG_CHUNK), ACCEL_CHUNK);
	assert_int_equal(rd32(h, ACCEL_REG_STATUS), 0);
	assert_int_equal(rd32(h, ACCEL_REG_ERROR), 0);
	/* Idle: poll does nothing and says so. */
	assert_int_equal(h->d.ops->poll(&h->d), 0);
	acc_free(h);

	h = acc_new_p("36", NULL);
	assert_int_equal(rd32(h, ACCEL_REG_DMA_BITS), 36);
	acc_free(h);
	h = acc_new_p("20", &rc);
	assert_int_equal(rc, -EINVAL);
	acc_free(h);
	h = acc_new_p("lots", &rc);
	assert_int_equal(rc, -EINVAL);
	acc_free(h);
}

/* 1 MiB of random data RAM -> device memory -> RAM, checksummed on both sides. */
static void test_copy_roundtrip(void **state)
{
	const size_t n = 1u << 20;
	struct harness *h = acc_new();
	uint8_t *src = h->ram + 0x100000, *back = h->ram + 0x300000;
	struct accel_desc *d;
	struct ring r;
	uint64_t crc_ram, crc_dev;
	uint32_t ref;
	int polls;

	fill_random(src, n, 1);
	ref = ref_crc32c(0, src, n);
	ring_init(&r, h, RING_RAM, 8);

	d = submit(&r, ACCEL_OP_COPY, 0, 0x100000, BAR2_A + 0x1000, n, 0);
	/* Bounded work per poll: 1 MiB takes several 256 KiB passes. */
	assert_int_equal(h->d.ops->poll(&h->d), 1);
	assert_int_equal(d->status, 0);
	assert_true(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_RING_BUSY);
	polls = run(h);
	assert_true(polls >= 3);
	assert_int_equal(d->status, ST_OK);
	assert_int_equal(d->result, n);
	assert_memory_equal(devmem(h) + 0x1000, src, n);

	assert_int_equal(exec1(&r, ACCEL_OP_COPY, BAR2_A + 0x1000, 0x300000, n, 0, NULL), ST_OK);
	assert_memory_equal(back, src, n);
	assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, 0x300000, 0, n, 0, &crc_ram), ST_OK);
	assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, BAR2_A + 0x1000, 0, n, 0, &crc_dev), ST_OK);
	assert_int_equal(crc_ram, ref);
	assert_int_equal(crc_dev, ref);
	/* RAM -> RAM goes through the engine's bounce buffer. */
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, 0x100000, 0x500000, n, 0, NULL), ST_OK);
	assert_memory_equal(h->ram + 0x500000, src, n);
	/* Device -> device never touches the bus. */
	h->dma_reads = h->dma_writes = 0;
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, BAR2_A + 0x1000, BAR2_A + 0x400000, n, 0, NULL),
			 ST_OK);
	assert_memory_equal(devmem(h) + 0x400000, src, n);
	assert_int_equal(h->dma_reads, 1);   /* the descriptor fetch */
	assert_int_equal(h->dma_writes, 2);  /* result and status */
	assert_int_equal(rd32(h, ACCEL_REG_RING_DONE), 6);
	assert_int_equal(rd32(h, ACCEL_REG_RING_FAILED), 0);
	assert_int_equal(rd32(h, ACCEL_REG_ERROR), 0);
	assert_int_equal(msi_total(h), 0);
	acc_free(h);
}

static void test_fill(void **state)
{
	struct harness *h = acc_new();
	const uint64_t pat = 0x0807060504030201ull;
	struct ring r;

	ring_init(&r, h, RING_RAM, 8);
	memset(h->ram + 0x100000, 0xee, 0x100000);
	/* Odd start and length in RAM; bytes follow the pattern from the start. */
	assert_int_equal(exec1(&r, ACCEL_OP_FILL, 0, 0x100003, 300001, pat, NULL), ST_OK);
	assert_int_equal(h->ram[0x100002], 0xee);
	for (size_t i = 0; i < 300001; i++)
		assert_int_equal(h->ram[0x100003 + i], (uint8_t)(i % 8 + 1));
	assert_int_equal(h->ram[0x100003 + 300001], 0xee);
	/* Device memory, larger than one pass. */
	assert_int_equal(exec1(&r, ACCEL_OP_FILL, 0, BAR2_A + 8, 600000, pat, NULL), ST_OK);
	for (size_t i = 0; i < 600000; i++)
		assert_int_equal(devmem(h)[8 + i], (uint8_t)(i % 8 + 1));
	assert_int_equal(devmem(h)[8 + 600000], 0);
	/* Zero length completes without touching anything. */
	assert_int_equal(exec1(&r, ACCEL_OP_FILL, 0, 0x100000, 0, pat, NULL), ST_OK);
	assert_int_equal(h->ram[0x100000], 0xee);
	acc_free(h);
}

static void test_checksum(void **state)
{
	struct harness *h = acc_new();
	static const size_t lens[] = { 1, 7, 8, 9, 4095, 262144, 262145, 700001 };
	struct ring r;
	uint64_t res, part;

	ring_init(&r, h, RING_RAM, 4);
	assert_int_equal(ref_crc32c(0, "123456789", 9), 0xe3069283u);   /* the check value */
	memcpy(h->ram + 0x1000, "123456789", 9);
	assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, 0x1000, 0, 9, 0, &res), ST_OK);
	assert_int_equal(res, 0xe3069283u);

	fill_random(h->ram + 0x100000, 0x200000, 7);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, 0x100000 + i, 0, lens[i], 0, &res),
				 ST_OK);
		assert_int_equal(res, ref_crc32c(0, h->ram + 0x100000 + i, lens[i]));
	}
	/* The seed chains: crc(seed = crc(a), b) == crc(a || b). */
	assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, 0x100000, 0, 1000, 0, &part), ST_OK);
	assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, 0x100000 + 1000, 0, 5000, part, &res),
			 ST_OK);
	assert_int_equal(res, ref_crc32c(0, h->ram + 0x100000, 6000));
	acc_free(h);
}

/* NOP and FENCE complete in order; FENCE writes its value once all before it is done. */
static void test_nop_fence(void **state)
{
	struct harness *h = acc_new();
	struct accel_desc *c, *n, *f;
	struct ring r;
	uint64_t v;

	ring_init(&r, h, RING_RAM, 8);
	fill_random(h->ram + 0x100000, 0x80000, 3);
	c = submit(&r, ACCEL_OP_COPY, 0, 0x100000, BAR2_A, 0x80000, 0);
	n = submit(&r, ACCEL_OP_NOP, 0, 0, 0, 0, 0);
	f = submit(&r, ACCEL_OP_FENCE, 0, 0, 0x2000, 0, 0x1122334455667788ull);
	run(h);
	assert_int_equal(c->status, ST_OK);
	assert_int_equal(n->status, ST_OK);
	assert_int_equal(f->status, ST_OK);
	memcpy(&v, h->ram + 0x2000, 8);
	assert_int_equal(v, 0x1122334455667788ull);
	assert_memory_equal(devmem(h), h->ram + 0x100000, 0x80000);
	acc_free(h);
}

/* Addresses at or beyond 2^dma_bits fail before any bus transaction. */
static void test_dma_limit(void **state)
{
	struct harness *h = acc_new();
	struct ring r;

	/* Ring in device memory: fetch and write-back need no DMA either. */
	ring_init(&r, h, BAR2_A + 0x10000, 8);
	h->dma_reads = h->dma_writes = 0;
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, BAR2_A, 1ull << 40, 4096, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	assert_int_equal(rd32(h, ACCEL_REG_ERR_CODE), ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	assert_int_equal(rd64(h, ACCEL_REG_ERR_ADDR), 1ull << 40);
	/* A range crossing the limit fails as a whole. */
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, (1ull << 40) - 16, BAR2_A, 32, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	assert_int_equal(exec1(&r, ACCEL_OP_FILL, 0, ~0ull - 8, 64, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, 1ull << 50, 0, 1, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	assert_int_equal(h->dma_reads, 0);
	/* The only bus writes were error interrupts. */
	assert_int_equal(h->dma_writes, msi_total(h));
	assert_int_equal(h->msi[ACCEL_VEC_ERROR], 4);
	assert_int_equal(h->dma_faults, 0);
	assert_true(rd32(h, ACCEL_REG_ERROR) & ACCEL_ERR_DESC);
	assert_int_equal(rd32(h, ACCEL_REG_RING_FAILED), 4);
	/* A range running off the end of device memory is a range error, not a DMA. */
	assert_int_equal(exec1(&r, ACCEL_OP_FILL, 0, BAR2_A + MEM_SIZE - 8, 16, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_RANGE, 0));
	/* Errors are acknowledged by ERR_ACK. */
	wr32(h, ACCEL_REG_ERR_ACK, ACCEL_ERR_DESC);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_ERROR), 0);
	assert_int_equal(rd32(h, ACCEL_REG_ERR_ACK), 0);
	acc_free(h);

	/* dma_bits 36: 2^36 is out of reach, just below it is a bus access. */
	h = acc_new_p("36", NULL);
	ring_init(&r, h, RING_RAM, 4);
	h->dma_faults = 0;
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, 1ull << 36, 0x1000, 8, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	assert_int_equal(h->dma_faults, 0);
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, (1ull << 36) - 8, 0x1000, 8, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_READ_FAULT, 1));
	assert_int_equal(h->dma_faults, 1);
	acc_free(h);
}

/* A DMA the fabric fails (unsupported request) completes with the fabric status. */
static void test_dma_fault(void **state)
{
	struct harness *h = acc_new();
	struct accel_desc *d;
	struct ring r;

	ring_init(&r, h, RING_RAM, 8);
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, 0x100000000ull, BAR2_A, 4096, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_READ_FAULT, 1));
	assert_int_equal(h->fault_addr, 0x100000000ull);
	assert_int_equal(rd64(h, ACCEL_REG_ERR_ADDR), 0x100000000ull);
	assert_int_equal(h->msi[ACCEL_VEC_ERROR], 1);
	/* A write fault part-way: result says how far it got (one pass). */
	memset(devmem(h), 0x5a, 0x80000);
	d = submit(&r, ACCEL_OP_COPY, 0, BAR2_A, RAM_SIZE - ACCEL_CHUNK, 0x80000, 0);
	run(h);
	assert_int_equal(d->status, ACCEL_ST_MAKE(ACCEL_SC_WRITE_FAULT, 1));
	assert_int_equal(d->result, ACCEL_CHUNK);
	assert_int_equal(h->ram[RAM_SIZE - 1], 0x5a);
	assert_int_equal(rd64(h, ACCEL_REG_ERR_ADDR), RAM_SIZE);
	/* The engine carries on with the next descriptor. */
	assert_int_equal(exec1(&r, ACCEL_OP_NOP, 0, 0, 0, 0, NULL), ST_OK);
	assert_int_equal(rd32(h, ACCEL_REG_RING_FAILED), 2);
	assert_int_equal(rd32(h, ACCEL_REG_RING_DONE), 3);

	/* A ring the device cannot fetch from halts the engine. */
	wr32(h, ACCEL_REG_CTRL, 0);
	run(h);
	wr64(h, ACCEL_REG_RING_BASE, RAM_SIZE - 2 * ACCEL_DESC_SIZE);
	wr32(h, ACCEL_REG_RING_SIZE, 4);
	wr32(h, ACCEL_REG_RING_TAIL, 3);
	wr32(h, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
	run(h);
	assert_true(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_HALTED);
	assert_true(rd32(h, ACCEL_REG_ERROR) & ACCEL_ERR_FETCH);
	assert_int_equal(rd32(h, ACCEL_REG_RING_HEAD), 2);
	acc_free(h);
}

static void test_bus_master(void **state)
{
	struct harness *h = acc_new();
	struct accel_desc *d;
	struct ring r;

	/* Ring in RAM: the engine cannot even fetch; it stalls and says why. */
	ring_init(&r, h, RING_RAM, 8);
	set_master(h, false);
	h->dma_reads = h->dma_writes = 0;
	memset(h->ram + 0x1000, 0x33, 4096);
	d = submit(&r, ACCEL_OP_COPY, 0, 0x1000, BAR2_A, 4096, 0);
	run(h);
	assert_int_equal(h->dma_reads + h->dma_writes, 0);
	assert_int_equal(d->status, 0);
	assert_true(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_NO_MASTER);
	assert_true(rd32(h, ACCEL_REG_ERROR) & ACCEL_ERR_NO_MASTER);
	assert_int_equal(rd32(h, ACCEL_REG_ERR_CODE), ACCEL_ST_MAKE(ACCEL_SC_NO_MASTER, 0));
	assert_int_equal(msi_total(h), 0);   /* an MSI is a DMA write too */
	assert_int_equal(h->d.ops->poll(&h->d), 0);
	/* Bus mastering back: the stalled descriptor runs. */
	set_master(h, true);
	run(h);
	assert_int_equal(d->status, ST_OK);
	assert_false(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_NO_MASTER);
	assert_memory_equal(devmem(h), h->ram + 0x1000, 4096);
	acc_free(h);

	/* Ring in device memory: local work runs, anything needing DMA fails. */
	h = acc_new();
	ring_init(&r, h, BAR2_A + 0x100000, 8);
	set_master(h, false);
	h->dma_reads = h->dma_writes = 0;
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, 0x1000, BAR2_A, 4096, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_NO_MASTER, 0));
	assert_int_equal(exec1(&r, ACCEL_OP_FILL, 0, 0x1000, 4096, 0, NULL),
			 ACCEL_ST_MAKE(ACCEL_SC_NO_MASTER, 0));
	assert_int_equal(exec1(&r, ACCEL_OP_FILL, 0, BAR2_A, 4096, 0x77, NULL), ST_OK);
	assert_int_equal(devmem(h)[0], 0x77);
	assert_int_equal(h->dma_reads + h->dma_writes, 0);
	assert_true(rd32(h, ACCEL_REG_INT_STATUS) & ACCEL_INT_ERROR);
	acc_free(h);
}

static void set_vector_mask(struct harness *h, unsigned v, bool masked)
{
	uint32_t *vctl = (uint32_t *)(h->d.fn.bar[0] + 0x8000 + 16 * v + PCI_MSIX_ENTRY_VECTOR_CTRL);

	__atomic_store_n(vctl, masked ? PCI_MSIX_ENTRY_CTRL_MASKBIT : 0, __ATOMIC_RELEASE);
}

static uint64_t pba(struct harness *h)
{
	return dev_reg64(&h->d, 0, 0x9000);
}

static void test_msix(void **state)
{
	struct harness *h = acc_new();
	struct ring r;

	ring_init(&r, h, RING_RAM, 16);
	/* One message per completed descriptor with ACCEL_DF_IRQ, none without. */
	submit(&r, ACCEL_OP_NOP, ACCEL_DF_IRQ, 0, 0, 0, 0);
	submit(&r, ACCEL_OP_NOP, 0, 0, 0, 0, 0);
	submit(&r, ACCEL_OP_FILL, ACCEL_DF_IRQ, 0, 0x1000, 100, 0);
	submit(&r, ACCEL_OP_NOP, ACCEL_DF_IRQ, 0, 0, 0, 0);
	run(h);
	assert_int_equal(h->msi[ACCEL_VEC_RING], 3);
	assert_int_equal(msi_total(h), 3);
	assert_int_equal(rd32(h, ACCEL_REG_INT_STATUS), ACCEL_INT_RING);
	wr32(h, ACCEL_REG_INT_ACK, ACCEL_INT_RING);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_INT_STATUS), 0);

	/* Masked in the MSI-X table: pending bit, delivered once unmasked. */
	set_vector_mask(h, ACCEL_VEC_RING, true);
	submit(&r, ACCEL_OP_NOP, ACCEL_DF_IRQ, 0, 0, 0, 0);
	run(h);
	assert_int_equal(h->msi[ACCEL_VEC_RING], 3);
	assert_int_equal(pba(h), 1u << ACCEL_VEC_RING);
	set_vector_mask(h, ACCEL_VEC_RING, false);
	run(h);
	assert_int_equal(h->msi[ACCEL_VEC_RING], 4);
	assert_int_equal(pba(h), 0);

	/* Masked by INT_MASK: recorded in INT_STATUS only. */
	wr32(h, ACCEL_REG_INT_MASK, ACCEL_INT_RING);
	submit(&r, ACCEL_OP_NOP, ACCEL_DF_IRQ, 0, 0, 0, 0);
	run(h);
	assert_int_equal(h->msi[ACCEL_VEC_RING], 4);
	assert_int_equal(pba(h), 0);
	assert_int_equal(rd32(h, ACCEL_REG_INT_STATUS), ACCEL_INT_RING);
	wr32(h, ACCEL_REG_INT_MASK, 0);

	/* A failing descriptor signals the error vector (and its own, if asked). */
	submit(&r, 99, ACCEL_DF_IRQ, 0, 0, 0, 0);
	run(h);
	assert_int_equal(h->msi[ACCEL_VEC_RING], 5);
	assert_int_equal(h->msi[ACCEL_VEC_ERROR], 1);
	assert_int_equal(rd32(h, ACCEL_REG_INT_STATUS), ACCEL_INT_RING | ACCEL_INT_ERROR);

	/* MSI-X disabled: nothing sent, status still latched. */
	h->cfg[0x70 + PCI_MSIX_FLAGS + 1] &= (uint8_t)~(PCI_MSIX_FLAGS_ENABLE >> 8);
	wr32(h, ACCEL_REG_INT_ACK, ACCEL_INT_ALL);
	submit(&r, ACCEL_OP_NOP, ACCEL_DF_IRQ, 0, 0, 0, 0);
	run(h);
	assert_int_equal(h->msi[ACCEL_VEC_RING], 5);
	assert_int_equal(rd32(h, ACCEL_REG_INT_STATUS), ACCEL_INT_RING);
	acc_free(h);
}

/* Many more descriptors than ring entries, in uneven batches. */
static void test_ring_wrap(void **state)
{
	struct harness *h = acc_new();
	struct accel_desc *d[3];
	struct ring r;
	unsigned i = 0, batch = 0;

	ring_init(&r, h, RING_RAM, 4);
	fill_random(h->ram + 0x100000, 50 * 4096, 9);
	while (i < 50) {
		unsigned k = batch++ % 3 + 1;

		for (unsigned j = 0; j < k && i + j < 50; j++)
			d[j] = submit(&r, ACCEL_OP_COPY, ACCEL_DF_IRQ, 0x100000 + (i + j) * 4096ull,
				      BAR2_A + (i + j) * 8192ull, 4096, 0);
		run(h);
		for (unsigned j = 0; j < k && i + j < 50; j++) {
			assert_int_equal(d[j]->status, ST_OK);
			assert_memory_equal(devmem(h) + (i + j) * 8192ull,
					    h->ram + 0x100000 + (i + j) * 4096ull, 4096);
		}
		i += k;
		assert_int_equal(rd32(h, ACCEL_REG_RING_HEAD), r.tail);
	}
	assert_int_equal(rd32(h, ACCEL_REG_RING_DONE), 50);
	assert_int_equal(h->msi[ACCEL_VEC_RING], 50);
	assert_false(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_RING_BUSY);
	acc_free(h);
}

static void test_bad_desc_and_ring(void **state)
{
	struct harness *h = acc_new();
	struct ring r;

	ring_init(&r, h, RING_RAM, 4);
	assert_int_equal(exec1(&r, 0, 0, 0, 0, 0, NULL), ACCEL_ST_MAKE(ACCEL_SC_BAD_OP, 0));
	assert_int_equal(exec1(&r, 6, 0, 0, 0, 0, NULL), ACCEL_ST_MAKE(ACCEL_SC_BAD_OP, 0));
	submit(&r, ACCEL_OP_NOP, 0x80, 0, 0, 0, 0);
	run(h);
	assert_int_equal(r.slot[2].status, ACCEL_ST_MAKE(ACCEL_SC_BAD_FIELD, 0));

	/* A doorbell beyond the ring halts the engine until re-enabled. */
	wr32(h, ACCEL_REG_RING_TAIL, 4);
	run(h);
	assert_true(rd32(h, ACCEL_REG_ERROR) & ACCEL_ERR_RING_CFG);
	assert_int_equal(rd32(h, ACCEL_REG_STATUS) & (ACCEL_STS_READY | ACCEL_STS_HALTED),
			 ACCEL_STS_HALTED);
	wr32(h, ACCEL_REG_CTRL, 0);
	run(h);
	wr32(h, ACCEL_REG_ERR_ACK, ~0u);
	ring_init(&r, h, RING_RAM, 4);
	assert_int_equal(exec1(&r, ACCEL_OP_NOP, 0, 0, 0, 0, NULL), ST_OK);
	assert_int_equal(rd32(h, ACCEL_REG_ERROR), 0);

	/* Bad ring configurations are refused at enable. */
	wr32(h, ACCEL_REG_CTRL, 0);
	run(h);
	wr64(h, ACCEL_REG_RING_BASE, RING_RAM + 8);
	wr32(h, ACCEL_REG_RING_SIZE, 4);
	wr32(h, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
	run(h);
	assert_true(rd32(h, ACCEL_REG_ERROR) & ACCEL_ERR_RING_CFG);
	assert_false(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_READY);
	assert_int_equal(rd32(h, ACCEL_REG_ERR_CODE), ACCEL_ST_MAKE(ACCEL_SC_BAD_FIELD, 0));
	wr32(h, ACCEL_REG_CTRL, 0);
	run(h);
	wr64(h, ACCEL_REG_RING_BASE, RING_RAM);
	wr32(h, ACCEL_REG_RING_SIZE, 1);
	wr32(h, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
	run(h);
	assert_false(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_READY);
	wr32(h, ACCEL_REG_CTRL, 0);
	run(h);
	wr64(h, ACCEL_REG_RING_BASE, 1ull << 40);
	wr32(h, ACCEL_REG_RING_SIZE, 8);
	wr32(h, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
	run(h);
	assert_false(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_READY);
	assert_int_equal(rd32(h, ACCEL_REG_ERR_CODE), ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	acc_free(h);
}

/* Disabling the engine mid-descriptor completes it as aborted. */
static void test_disable_aborts(void **state)
{
	struct harness *h = acc_new();
	struct accel_desc *d;
	struct ring r;

	ring_init(&r, h, RING_RAM, 4);
	d = submit(&r, ACCEL_OP_FILL, 0, 0, BAR2_A, 4u << 20, 0);
	assert_int_equal(h->d.ops->poll(&h->d), 1);
	assert_int_equal(d->status, 0);
	wr32(h, ACCEL_REG_CTRL, 0);
	run(h);
	assert_int_equal(d->status, ACCEL_ST_MAKE(ACCEL_SC_ABORTED, 0));
	assert_int_equal(d->result, ACCEL_CHUNK);
	assert_int_equal(rd32(h, ACCEL_REG_STATUS), 0);
	assert_int_equal(rd32(h, ACCEL_REG_ERROR), 0);
	assert_int_equal(msi_total(h), 0);
	acc_free(h);
}

/* ---- device programs ---- */

static uint32_t prog_run(struct harness *h, uint32_t op, uint64_t src, uint64_t dst,
			 uint64_t len, uint64_t pattern)
{
	wr32(h, ACCEL_REG_PROG_OP, op);
	wr64(h, ACCEL_REG_PROG_SRC, src);
	wr64(h, ACCEL_REG_PROG_DST, dst);
	wr64(h, ACCEL_REG_PROG_LEN, len);
	wr64(h, ACCEL_REG_PROG_PATTERN, pattern);
	wr32(h, ACCEL_REG_PROG_CTRL, ACCEL_PCTL_START);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_CTRL), 0);
	return rd32(h, ACCEL_REG_PROG_STATUS);
}

static void test_prog_mem(void **state)
{
	struct harness *h = acc_new();
	uint8_t *m = devmem(h);
	const size_t n = 1000003;

	/* Programs need no bus mastering: device memory only. */
	set_master(h, false);
	fill_random(m, n, 5);
	assert_int_equal(prog_run(h, ACCEL_PROG_CHECKSUM, 0, 0, n, 0), ST_OK);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_RESULT), ref_crc32c(0, m, n));
	assert_int_equal(prog_run(h, ACCEL_PROG_MEMCPY, 0, 0x200000, n, 0), ST_OK);
	assert_memory_equal(m + 0x200000, m, n);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_RESULT), n);
	assert_int_equal(prog_run(h, ACCEL_PROG_MEMSET, 0, 0x400001, n, 0xa5a5a5a5a5a5a5a5ull),
			 ST_OK);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(m[0x400001 + i], 0xa5);
	assert_int_equal(m[0x400000], 0);
	assert_int_equal(m[0x400001 + n], 0);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_SEQ), 3);
	assert_true(rd64(h, ACCEL_REG_PROG_ELAPSED) > 0);
	set_master(h, true);

	/* Completion interrupts on vector 1. */
	assert_int_equal(prog_run(h, ACCEL_PROG_CHECKSUM, 0x200000, 0, n, 0), ST_OK);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_RESULT), ref_crc32c(0, m, n));
	assert_int_equal(h->msi[ACCEL_VEC_PROG], 1);
	assert_true(rd32(h, ACCEL_REG_INT_STATUS) & ACCEL_INT_PROG);

	/* Ranges outside device memory and unknown programs fail. */
	assert_int_equal(prog_run(h, ACCEL_PROG_MEMCPY, 0, MEM_SIZE - 10, 11, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_RANGE, 0));
	assert_int_equal(rd64(h, ACCEL_REG_ERR_ADDR), MEM_SIZE - 10);
	assert_int_equal(prog_run(h, ACCEL_PROG_CHECKSUM, ~0ull - 4, 0, 16, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_RANGE, 0));
	assert_int_equal(prog_run(h, 77, 0, 0, 16, 0), ACCEL_ST_MAKE(ACCEL_SC_BAD_OP, 0));
	assert_true(rd32(h, ACCEL_REG_ERROR) & ACCEL_ERR_PROG);
	assert_int_equal(h->msi[ACCEL_VEC_ERROR], 3);
	assert_int_equal(h->msi[ACCEL_VEC_PROG], 4);
	assert_int_equal(m[MEM_SIZE - 1], 0);
	acc_free(h);
}

/*
 * KERNEL's checks, all before a device context starts (the integration test
 * runs real kernels): ranges, the argument block, and memory no other
 * process can map (this harness's BARs are plain memory) is NO_KERNEL.
 */
static void test_prog_kernel_checks(void **state)
{
	struct harness *h = acc_new();
	uint8_t *m = devmem(h);

	memcpy(m + 0x1000, "x\0y", 4);
	wr64(h, ACCEL_REG_KERN_ARGS_LEN, 0);
	assert_int_equal(prog_run(h, ACCEL_PROG_KERNEL, 0, 0, 0, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_RANGE, 0));
	assert_int_equal(prog_run(h, ACCEL_PROG_KERNEL, MEM_SIZE - 8, 0, 16, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_RANGE, 0));
	assert_int_equal(rd64(h, ACCEL_REG_ERR_ADDR), MEM_SIZE - 8);
	wr64(h, ACCEL_REG_KERN_ARGS_LEN, ACCEL_KERN_ARGS_MAX + 1);
	assert_int_equal(prog_run(h, ACCEL_PROG_KERNEL, 0, 0x1000, 64, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_BAD_FIELD, 0));
	wr64(h, ACCEL_REG_KERN_ARGS_LEN, 3);     /* "x\0y": the last string has no NUL */
	assert_int_equal(prog_run(h, ACCEL_PROG_KERNEL, 0, 0x1000, 64, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_BAD_FIELD, 0));
	wr64(h, ACCEL_REG_KERN_ARGS_LEN, 4);
	assert_int_equal(prog_run(h, ACCEL_PROG_KERNEL, 0, MEM_SIZE - 2, 64, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_RANGE, 0));
	assert_int_equal(prog_run(h, ACCEL_PROG_KERNEL, 0, 0x1000, 64, 0),
			 ACCEL_ST_MAKE(ACCEL_SC_NO_KERNEL, 0));
	assert_true(rd32(h, ACCEL_REG_ERROR) & ACCEL_ERR_PROG);
	acc_free(h);
}

/* ---- two accelerators whose buses reach each other's BAR2 ---- */

struct pair_ctx {
	struct harness *self, *peer;
	uint64_t peer_base;
};

static uint8_t *pair_peer(struct pair_ctx *p, uint64_t a, size_t len)
{
	uint64_t size = p->peer->d.fn.bar_size[ACCEL_BAR_MEM];

	if (a < p->peer_base || a - p->peer_base >= size || len > size - (a - p->peer_base))
		return NULL;
	return p->peer->d.fn.bar[ACCEL_BAR_MEM] + (a - p->peer_base);
}

static int pair_dma_read(void *ctx, uint64_t a, void *buf, size_t len)
{
	struct pair_ctx *p = ctx;
	uint8_t *m = pair_peer(p, a, len);

	if (!m)
		return h_dma_read(p->self, a, buf, len);
	p->self->dma_reads++;
	memcpy(buf, m, len);
	return 0;
}

static int pair_dma_write(void *ctx, uint64_t a, const void *buf, size_t len)
{
	struct pair_ctx *p = ctx;
	uint8_t *m = pair_peer(p, a, len);

	if (!m)
		return h_dma_write(p->self, a, buf, len);
	p->self->dma_writes++;
	memcpy(m, buf, len);
	return 0;
}

static uint32_t pair_cfg_read(void *ctx, uint32_t off, uint32_t size)
{
	struct pair_ctx *p = ctx;

	return h_cfg_read(p->self, off, size);
}

static const struct dev_bus_ops pair_ops = {
	.dma_read = pair_dma_read, .dma_write = pair_dma_write, .cfg_read = pair_cfg_read,
};

struct pair {
	struct harness *a, *b;
	struct pair_ctx ca, cb;
};

static void pair_new(struct pair *p)
{
	p->a = acc_new();
	p->b = acc_new();
	set_bar2(p->b, BAR2_B);
	p->ca = (struct pair_ctx){ .self = p->a, .peer = p->b, .peer_base = BAR2_B };
	p->cb = (struct pair_ctx){ .self = p->b, .peer = p->a, .peer_base = BAR2_A };
	p->a->d.fn.bus = &pair_ops;
	p->a->d.fn.bus_ctx = &p->ca;
	p->b->d.fn.bus = &pair_ops;
	p->b->d.fn.bus_ctx = &p->cb;
}

static void pair_free(struct pair *p)
{
	acc_free(p->a);
	acc_free(p->b);
}

/* Peer-to-peer: A's engine copies into and out of B's memory. */
static void test_p2p_copy(void **state)
{
	const size_t n = 1u << 20;
	struct pair p;
	struct ring r;
	uint64_t crc;

	pair_new(&p);
	ring_init(&r, p.a, RING_RAM, 8);
	fill_random(p.a->ram + 0x100000, n, 11);
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, 0x100000, BAR2_B + 0x10000, n, 0, NULL), ST_OK);
	assert_int_equal(exec1(&r, ACCEL_OP_COPY, BAR2_B + 0x10000, BAR2_A + 0x20000, n, 0, NULL),
			 ST_OK);
	assert_int_equal(exec1(&r, ACCEL_OP_CHECKSUM, BAR2_B + 0x10000, 0, n, 0, &crc), ST_OK);
	assert_int_equal(crc, ref_crc32c(0, p.a->ram + 0x100000, n));
	assert_memory_equal(devmem(p.b) + 0x10000, p.a->ram + 0x100000, n);
	assert_memory_equal(devmem(p.a) + 0x20000, p.a->ram + 0x100000, n);
	pair_free(&p);
}

static void pp_setup(struct harness *h, uint32_t role, uint64_t peer, uint64_t watch,
		     uint64_t iters)
{
	wr32(h, ACCEL_REG_PROG_OP, ACCEL_PROG_PINGPONG);
	wr32(h, ACCEL_REG_PROG_ROLE, role);
	wr64(h, ACCEL_REG_PROG_PEER, peer);
	wr64(h, ACCEL_REG_PROG_WATCH, watch);
	wr64(h, ACCEL_REG_PROG_ITERS, iters);
	wr32(h, ACCEL_REG_PROG_CTRL, ACCEL_PCTL_START);
}

static void test_pingpong(void **state)
{
	const uint64_t iters = 1000;
	struct pair p;
	uint64_t v, elapsed;
	int rounds = 0;

	pair_new(&p);
	/* Responder first, as software would start it, then the initiator. */
	pp_setup(p.b, ACCEL_ROLE_RESPONDER, BAR2_A + 0x200, 0x100, iters);
	p.b->d.ops->poll(&p.b->d);
	assert_true(rd32(p.b, ACCEL_REG_PROG_STATUS) & ACCEL_PST_RUNNING);
	assert_true(rd32(p.b, ACCEL_REG_STATUS) & ACCEL_STS_PROG_BUSY);
	pp_setup(p.a, ACCEL_ROLE_INITIATOR, BAR2_B + 0x100, 0x200, iters);
	for (; rounds < MAX_POLLS; rounds++) {
		p.a->d.ops->poll(&p.a->d);
		p.b->d.ops->poll(&p.b->d);
		if (!(rd32(p.a, ACCEL_REG_PROG_STATUS) & ACCEL_PST_RUNNING) &&
		    !(rd32(p.b, ACCEL_REG_PROG_STATUS) & ACCEL_PST_RUNNING))
			break;
	}
	assert_true(rounds < MAX_POLLS);
	/* One exchange per round at best: each side waits for the other. */
	assert_true(rounds >= (int)iters - 1);
	assert_int_equal(rd32(p.a, ACCEL_REG_PROG_STATUS), ST_OK);
	assert_int_equal(rd32(p.b, ACCEL_REG_PROG_STATUS), ST_OK);
	assert_int_equal(rd64(p.a, ACCEL_REG_PROG_DONE_ITERS), iters);
	assert_int_equal(rd64(p.b, ACCEL_REG_PROG_DONE_ITERS), iters);
	memcpy(&v, devmem(p.a) + 0x200, 8);
	assert_int_equal(v, iters);
	memcpy(&v, devmem(p.b) + 0x100, 8);
	assert_int_equal(v, iters);
	elapsed = rd64(p.a, ACCEL_REG_PROG_ELAPSED);
	assert_true(elapsed > 0);
	assert_int_equal(rd64(p.a, ACCEL_REG_PROG_AVG_NS), elapsed / iters);
	assert_int_equal(p.a->msi[ACCEL_VEC_PROG], 1);
	assert_int_equal(p.b->msi[ACCEL_VEC_PROG], 1);
	assert_int_equal(p.a->msi[ACCEL_VEC_ERROR] + p.b->msi[ACCEL_VEC_ERROR], 0);
	/* Each side's writes were peer DMA: iters counter writes + the MSI. */
	assert_int_equal(p.a->dma_writes, iters + 1);
	assert_int_equal(p.b->dma_writes, iters + 1);
	print_message("ping-pong: %llu iterations, %llu ns/iteration (harness, polled)\n",
		      (unsigned long long)iters, (unsigned long long)(elapsed / iters));
	pair_free(&p);
}

/* A ping-pong whose peer never answers stays running, idle, until aborted. */
static void test_prog_abort(void **state)
{
	struct harness *h = acc_new();
	uint64_t v;

	pp_setup(h, ACCEL_ROLE_INITIATOR, 0x3000, 0x100, 10);
	assert_int_equal(h->d.ops->poll(&h->d), 1);   /* started and sent 1 */
	for (int i = 0; i < 100; i++)
		assert_int_equal(h->d.ops->poll(&h->d), 0);
	memcpy(&v, h->ram + 0x3000, 8);
	assert_int_equal(v, 1);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_PST_RUNNING);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_DONE_ITERS), 0);
	/* A second START waits for the running program... */
	wr32(h, ACCEL_REG_PROG_CTRL, ACCEL_PCTL_START);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_CTRL), ACCEL_PCTL_START);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_SEQ), 0);
	/* ...and is taken once ABORT (set with an atomic OR) has ended it. */
	__atomic_fetch_or((uint32_t *)(h->d.fn.bar[0] + ACCEL_REG_PROG_CTRL), ACCEL_PCTL_ABORT,
			  __ATOMIC_ACQ_REL);
	assert_int_equal(h->d.ops->poll(&h->d), 1);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_CTRL), 0);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_SEQ), 1);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_PST_RUNNING);
	assert_int_equal(h->msi[ACCEL_VEC_PROG], 1);
	wr32(h, ACCEL_REG_PROG_CTRL, ACCEL_PCTL_ABORT);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_ST_MAKE(ACCEL_SC_ABORTED, 0));
	assert_int_equal(rd32(h, ACCEL_REG_PROG_CTRL), 0);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_SEQ), 2);
	assert_int_equal(h->msi[ACCEL_VEC_PROG], 2);
	assert_int_equal(h->msi[ACCEL_VEC_ERROR], 0);   /* an abort is not an error */
	assert_false(rd32(h, ACCEL_REG_STATUS) & ACCEL_STS_PROG_BUSY);
	assert_true(rd64(h, ACCEL_REG_PROG_ELAPSED) > 0);

	/* Ping-pong parameter checks. */
	pp_setup(h, ACCEL_ROLE_INITIATOR, 0x3000, 0x101, 10);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_ST_MAKE(ACCEL_SC_BAD_FIELD, 0));
	pp_setup(h, 2, 0x3000, 0x100, 10);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_ST_MAKE(ACCEL_SC_BAD_FIELD, 0));
	pp_setup(h, ACCEL_ROLE_INITIATOR, 1ull << 40, 0x100, 10);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_ST_MAKE(ACCEL_SC_DMA_LIMIT, 0));
	pp_setup(h, ACCEL_ROLE_INITIATOR, 0x3000, MEM_SIZE, 10);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_ST_MAKE(ACCEL_SC_RANGE, 0));
	/* Peer write that faults ends the program. */
	pp_setup(h, ACCEL_ROLE_INITIATOR, RAM_SIZE, 0x100, 10);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ACCEL_ST_MAKE(ACCEL_SC_WRITE_FAULT, 1));
	/* Loopback: the peer address is our own watched word. */
	pp_setup(h, ACCEL_ROLE_INITIATOR, BAR2_A + 0x100, 0x100, 50);
	run(h);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), ST_OK);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_DONE_ITERS), 50);
	acc_free(h);
}

static void check_reset_state(struct harness *h)
{
	assert_int_equal(rd32(h, ACCEL_REG_MAGIC), ACCEL_MAGIC);
	assert_int_equal(rd64(h, ACCEL_REG_MEM_SIZE), MEM_SIZE);
	assert_int_equal(rd32(h, ACCEL_REG_CTRL), 0);
	assert_int_equal(rd32(h, ACCEL_REG_STATUS), 0);
	assert_int_equal(rd32(h, ACCEL_REG_ERROR), 0);
	assert_int_equal(rd32(h, ACCEL_REG_INT_STATUS), 0);
	assert_int_equal(rd64(h, ACCEL_REG_RING_BASE), 0);
	assert_int_equal(rd32(h, ACCEL_REG_RING_HEAD), 0);
	assert_int_equal(rd32(h, ACCEL_REG_PROG_STATUS), 0);
	assert_int_equal(rd64(h, ACCEL_REG_PROG_SEQ), 0);
	/* The MSI-X table belongs to the function, not to the device's reset. */
	assert_int_equal(dev_reg32(&h->d, 0, 0x8000 + 16 * 2 + PCI_MSIX_ENTRY_DATA), 2);
	assert_int_equal(dev_reg32(&h->d, 0, 0x8000), (uint32_t)H_MSI_BASE);
}

static void busy_device(struct harness *h, struct ring *r)
{
	ring_init(r, h, RING_RAM, 4);
	submit(r, ACCEL_OP_FILL, 0, 0, BAR2_A, 4u << 20, 0x11);
	submit(r, 99, 0, 0, 0, 0, 0);
	pp_setup(h, ACCEL_ROLE_RESPONDER, 0x3000, 0x100, 10);
	h->d.ops->poll(&h->d);
	assert_true(rd32(h, ACCEL_REG_STATUS) & (ACCEL_STS_RING_BUSY | ACCEL_STS_PROG_BUSY));
}

static void test_reset(void **state)
{
	struct harness *h = acc_new();
	uint64_t writes;
	struct ring r;

	/* Register-triggered reset. */
	busy_device(h, &r);
	wr32(h, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE | ACCEL_CTRL_RESET);
	assert_int_equal(h->d.ops->poll(&h->d), 1);
	check_reset_state(h);
	writes = h->dma_writes;
	assert_int_equal(run(h), 0);
	assert_int_equal(h->dma_writes, writes);   /* nothing left running */
	assert_int_equal(r.slot[0].status, 0);     /* cut off, not completed */
	/* Usable again. */
	ring_init(&r, h, RING_RAM, 4);
	assert_int_equal(exec1(&r, ACCEL_OP_NOP, 0, 0, 0, 0, NULL), ST_OK);

	/* The model's reset op (function-level reset) does the same. */
	busy_device(h, &r);
	h->d.ops->reset(&h->d);
	check_reset_state(h);
	assert_int_equal(run(h), 0);
	acc_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ident),
		cmocka_unit_test(test_copy_roundtrip),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_nop_fence),
		cmocka_unit_test(test_dma_limit),
		cmocka_unit_test(test_dma_fault),
		cmocka_unit_test(test_bus_master),
		cmocka_unit_test(test_msix),
		cmocka_unit_test(test_ring_wrap),
		cmocka_unit_test(test_bad_desc_and_ring),
		cmocka_unit_test(test_disable_aborts),
		cmocka_unit_test(test_prog_mem),
		cmocka_unit_test(test_prog_kernel_checks),
		cmocka_unit_test(test_p2p_copy),
		cmocka_unit_test(test_pingpong),
		cmocka_unit_test(test_prog_abort),
		cmocka_unit_test(test_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
