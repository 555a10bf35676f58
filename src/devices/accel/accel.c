// SPDX-License-Identifier: MIT
/*
 * GPU-like accelerator: BAR0 registers, BAR2 device memory, a DMA copy
 * engine fed by a descriptor ring, and device programs (accel_prog.c).
 * Register layout and descriptor format: accel_regs.h; behaviour described
 * for software in docs/devices.md.
 *
 * The model owns its RO registers: it keeps their values here and writes
 * them out (accel_publish), never reading them back, so a stray store by
 * software cannot change what the device does.
 */
#include <errno.h>
#include <linux/pci_regs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/accel/accel_priv.h"
#include "util/smio_time.h"

static inline uint32_t *reg32p(struct accel *a, uint32_t off)
{
	return (uint32_t *)(a->d->fn.bar[ACCEL_BAR_REGS] + off);
}

/* Take a command register's bits: software's stores race with ours, so swap. */
static uint32_t take_cmd(struct accel *a, uint32_t off)
{
	if (!dev_reg32(a->d, ACCEL_BAR_REGS, off))
		return 0;
	return __atomic_exchange_n(reg32p(a, off), 0, __ATOMIC_ACQ_REL);
}

/* BAR2's bus address as software programmed it; 0 while unassigned. */
uint64_t accel_bar2_base(struct accel *a)
{
	const struct dev_func *f = &a->d->fn;
	uint32_t lo = f->bus->cfg_read(f->bus_ctx, PCI_BASE_ADDRESS_2, 4);
	uint64_t base = lo & PCI_BASE_ADDRESS_MEM_MASK;

	if ((lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64)
		base |= (uint64_t)f->bus->cfg_read(f->bus_ctx, PCI_BASE_ADDRESS_3, 4) << 32;
	return base;
}

/*
 * Classify [addr, addr + len). Our own BAR2 range is served from device
 * memory (like a GPU's local aperture: no bus transaction, no DMA limit);
 * anything else must lie below 2^dma_bits. Returns 0 or an ACCEL_SC_* code
 * before any access is made.
 */
uint32_t accel_resolve(struct accel *a, uint64_t addr, uint64_t len, struct accel_span *sp)
{
	uint64_t bar = accel_bar2_base(a);

	a->fail_addr = addr;
	if (bar && addr >= bar && addr - bar < a->mem_size) {
		if (len > a->mem_size - (addr - bar))
			return ACCEL_SC_RANGE;
		sp->local = a->mem + (addr - bar);
		sp->addr = addr;
		return 0;
	}
	if (addr + len < addr)
		return ACCEL_SC_DMA_LIMIT;
	if (a->dma_limit && (addr >= a->dma_limit || addr + len > a->dma_limit)) {
		if (addr < a->dma_limit)
			a->fail_addr = a->dma_limit;   /* the first byte beyond reach */
		return ACCEL_SC_DMA_LIMIT;
	}
	sp->local = NULL;
	sp->addr = addr;
	return 0;
}

static uint32_t dma_status(uint32_t code, int rc)
{
	return code | (uint32_t)(rc > 0 ? (rc & 0xff) : 0xff) << 8;
}

/* Move bytes at span + off. Returns 0, or ACCEL_SC_* | fabric status << 8. */
uint32_t accel_rd(struct accel *a, const struct accel_span *sp, uint64_t off, void *buf,
		  size_t len)
{
	int rc;

	if (sp->local) {
		memcpy(buf, sp->local + off, len);
		return 0;
	}
	a->fail_addr = sp->addr + off;
	if (!dev_bus_master(a->d))
		return ACCEL_SC_NO_MASTER;
	rc = dev_dma_read(a->d, sp->addr + off, buf, len);
	return rc ? dma_status(ACCEL_SC_READ_FAULT, rc) : 0;
}

uint32_t accel_wr(struct accel *a, const struct accel_span *sp, uint64_t off, const void *buf,
		  size_t len)
{
	int rc;

	if (sp->local) {
		uint8_t *p = sp->local + off;

		/* A single aligned word is one store: someone may be watching it. */
		if (len == 8 && !((uintptr_t)p & 7)) {
			uint64_t v;

			memcpy(&v, buf, 8);
			__atomic_store_n((uint64_t *)p, v, __ATOMIC_RELEASE);
		} else if (len == 4 && !((uintptr_t)p & 3)) {
			uint32_t v;

			memcpy(&v, buf, 4);
			__atomic_store_n((uint32_t *)p, v, __ATOMIC_RELEASE);
		} else {
			memcpy(p, buf, len);
		}
		return 0;
	}
	a->fail_addr = sp->addr + off;
	if (!dev_bus_master(a->d))
		return ACCEL_SC_NO_MASTER;
	rc = dev_dma_write(a->d, sp->addr + off, buf, len);
	return rc ? dma_status(ACCEL_SC_WRITE_FAULT, rc) : 0;
}

/* Byte i of a fill at absolute offset off + i is byte (off + i) % 8 of the pattern. */
void accel_fill(uint8_t *p, size_t n, uint64_t pattern, uint64_t off)
{
	uint8_t b[8];
	size_t i = 0;

	memcpy(b, &pattern, 8);
	for (; i < n && ((off + i) & 7); i++)
		p[i] = b[(off + i) & 7];
	for (; i + 8 <= n; i += 8)
		memcpy(p + i, &pattern, 8);
	for (; i < n; i++)
		p[i] = b[(off + i) & 7];
}

void accel_publish(struct accel *a)
{
	struct dev_instance *d = a->d;
	struct accel_prog *p = &a->prog;
	uint32_t sts = 0;

	if (a->ring_on && !a->halted)
		sts |= ACCEL_STS_READY;
	if (a->ring_on && !a->halted &&
	    (a->cur_valid || dev_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_RING_TAIL) != a->head))
		sts |= ACCEL_STS_RING_BUSY;
	if (p->running)
		sts |= ACCEL_STS_PROG_BUSY;
	if (a->halted)
		sts |= ACCEL_STS_HALTED;
	if (a->stalled)
		sts |= ACCEL_STS_NO_MASTER;

	/* Values first, the words software waits on (status, head) last. */
	dev_set_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_ERR_ADDR, a->err_addr);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_ERR_CODE, a->err_code);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_ERROR, a->error);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_RING_FAILED, a->failed);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_RING_DONE, a->done);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_RING_HEAD, a->head);
	dev_set_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_RESULT, p->result);
	dev_set_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_DONE_ITERS, p->done_iters);
	dev_set_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_ELAPSED, p->elapsed);
	dev_set_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_AVG_NS, p->avg);
	dev_set_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_SEQ, p->seq);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_STATUS,
		      p->status | (p->running ? ACCEL_PST_RUNNING : 0));
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_STATUS, sts);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_INT_STATUS, a->int_status);
}

/*
 * Latch an interrupt cause and signal its vector unless INT_MASK masks it.
 * Registers are published first so a handler sees the state that caused the
 * message. An MSI-X message is a memory write: without bus mastering, or
 * with MSI-X disabled (-EPERM), only INT_STATUS records the event.
 */
void accel_raise(struct accel *a, uint32_t cause)
{
	uint32_t mask = dev_reg32(a->d, ACCEL_BAR_REGS, ACCEL_REG_INT_MASK);
	unsigned vec = cause == ACCEL_INT_RING ? ACCEL_VEC_RING :
		       cause == ACCEL_INT_PROG ? ACCEL_VEC_PROG : ACCEL_VEC_ERROR;

	a->int_status |= cause;
	accel_publish(a);
	if ((mask & cause) || !dev_bus_master(a->d))
		return;
	/* A failed message write has no one to report to: the status stays latched. */
	(void)dev_msix_notify(a->d, vec);
}

void accel_error(struct accel *a, uint32_t bit, uint32_t status, uint64_t addr)
{
	a->error |= bit;
	a->err_code = status;
	a->err_addr = addr;
	accel_raise(a, ACCEL_INT_ERROR);
}

/* ---- Descriptor ring ---- */

static uint64_t slot_off(const struct accel *a)
{
	return (uint64_t)a->head * ACCEL_DESC_SIZE;
}

/* Write result then status into the ring slot, advance head, interrupt. */
static void desc_complete(struct accel *a, uint32_t code)
{
	struct accel_desc *c = &a->cur;
	uint32_t st = ACCEL_ST_DONE | code;
	uint64_t result = c->op == ACCEL_OP_CHECKSUM && !code ? a->cur_crc : a->cur_off;
	uint64_t fail = a->fail_addr;
	uint32_t wst;

	a->cur_valid = false;
	wst = accel_wr(a, &a->ring, slot_off(a) + ACCEL_DESC_RESULT, &result, sizeof(result));
	if (!wst)
		wst = accel_wr(a, &a->ring, slot_off(a) + ACCEL_DESC_STATUS, &st, sizeof(st));
	if (wst) {
		a->halted = true;
		accel_error(a, ACCEL_ERR_WRITEBACK, ACCEL_ST_DONE | wst,
			    a->ring_base + slot_off(a));
		return;
	}
	a->head = ACCEL_RING_NEXT(a->head, a->ring_size);
	a->done++;
	if (code)
		a->failed++;
	/* smartio diag's counters (dev.h): an abort is no device error either. */
	dev_stat_add(a->d, DEV_ST_OPS, 1);
	if (!code && c->op != ACCEL_OP_NOP && c->op != ACCEL_OP_FENCE)
		dev_stat_add(a->d, DEV_ST_BYTES_READ, c->len);
	else if (code && code != ACCEL_SC_ABORTED)
		dev_stat_add(a->d, DEV_ST_ERRORS, 1);
	/* An abort is software's own doing, not a device error. */
	if (code && code != ACCEL_SC_ABORTED)
		accel_error(a, ACCEL_ERR_DESC, st, fail);
	if (c->flags & ACCEL_DF_IRQ)
		accel_raise(a, ACCEL_INT_RING);
	else
		accel_publish(a);
}

/* Validate a fetched descriptor; completes it at once when there is nothing to move. */
static void desc_start(struct accel *a)
{
	struct accel_desc *c = &a->cur;
	uint32_t sc = 0;

	a->cur_off = 0;
	a->cur_crc = (uint32_t)c->pattern;
	if (c->op == 0 || c->op > ACCEL_OP_MAX) {
		desc_complete(a, ACCEL_SC_BAD_OP);
		return;
	}
	if (c->flags & ~ACCEL_DF_VALID_MASK) {
		desc_complete(a, ACCEL_SC_BAD_FIELD);
		return;
	}
	/* Every range is checked before the first byte moves. */
	switch (c->op) {
	case ACCEL_OP_COPY:
		sc = accel_resolve(a, c->src, c->len, &a->cur_src);
		if (!sc)
			sc = accel_resolve(a, c->dst, c->len, &a->cur_dst);
		break;
	case ACCEL_OP_FILL:
		sc = accel_resolve(a, c->dst, c->len, &a->cur_dst);
		break;
	case ACCEL_OP_CHECKSUM:
		sc = accel_resolve(a, c->src, c->len, &a->cur_src);
		break;
	case ACCEL_OP_NOP:
		break;
	case ACCEL_OP_FENCE:
		/* The engine is serial, so everything before has completed. */
		if (c->dst) {
			sc = accel_resolve(a, c->dst, 8, &a->cur_dst);
			if (!sc)
				sc = accel_wr(a, &a->cur_dst, 0, &c->pattern, 8);
		}
		break;
	}
	if (sc || c->op == ACCEL_OP_NOP || c->op == ACCEL_OP_FENCE || !c->len)
		desc_complete(a, sc);
}

/* Up to budget bytes of the current descriptor. Returns bytes consumed. */
static uint64_t desc_step(struct accel *a, uint64_t budget)
{
	struct accel_desc *c = &a->cur;
	uint64_t off = a->cur_off;
	size_t n = (size_t)(c->len - off < budget ? c->len - off : budget);
	uint32_t sc = 0;
	uint8_t *data;

	switch (c->op) {
	case ACCEL_OP_COPY:
		if (a->cur_src.local && a->cur_dst.local) {
			memmove(a->cur_dst.local + off, a->cur_src.local + off, n);
			break;
		}
		if (a->cur_src.local) {
			data = a->cur_src.local + off;
		} else {
			data = a->cur_dst.local ? a->cur_dst.local + off : a->bounce;
			sc = accel_rd(a, &a->cur_src, off, data, n);
		}
		if (!sc && !a->cur_dst.local)
			sc = accel_wr(a, &a->cur_dst, off, data, n);
		break;
	case ACCEL_OP_FILL:
		if (a->cur_dst.local) {
			accel_fill(a->cur_dst.local + off, n, c->pattern, off);
		} else {
			accel_fill(a->bounce, n, c->pattern, off);
			sc = accel_wr(a, &a->cur_dst, off, a->bounce, n);
		}
		break;
	case ACCEL_OP_CHECKSUM:
		data = a->cur_src.local ? a->cur_src.local + off : a->bounce;
		if (!a->cur_src.local)
			sc = accel_rd(a, &a->cur_src, off, data, n);
		if (!sc)
			a->cur_crc = accel_crc32c(a->cur_crc, data, n);
		break;
	}
	if (sc) {
		desc_complete(a, sc);
		return n;
	}
	a->cur_off += n;
	if (a->cur_off == c->len) {
		/* Faithful mode: done no sooner than real hardware (ring_poll
		 * completes it when the time comes). */
		if (a->d->fn.timing)
			a->hold_until = a->desc_t0 + accel_desc_cost_ns(a);
		if (!a->hold_until || smio_now_ns() >= a->hold_until) {
			a->hold_until = 0;
			desc_complete(a, 0);
		}
	}
	return n;
}

/* Fetch the descriptor at head. Returns 1 fetched, 0 stalled, -1 halted. */
static int desc_fetch(struct accel *a)
{
	uint32_t sc;

	if (!a->ring.local && !dev_bus_master(a->d)) {
		/* Hardware would just wait: resume when bus mastering returns. */
		if (!a->stalled) {
			a->stalled = true;
			accel_error(a, ACCEL_ERR_NO_MASTER, ACCEL_ST_DONE | ACCEL_SC_NO_MASTER,
				    a->ring_base + slot_off(a));
		}
		return 0;
	}
	if (a->stalled) {
		a->stalled = false;
		accel_publish(a);
	}
	sc = accel_rd(a, &a->ring, slot_off(a), &a->cur, sizeof(a->cur));
	if (sc) {
		a->halted = true;
		accel_error(a, ACCEL_ERR_FETCH, ACCEL_ST_DONE | sc, a->ring_base + slot_off(a));
		return -1;
	}
	a->cur_valid = true;
	a->desc_t0 = a->d->fn.timing ? smio_now_ns() : 0;
	return 1;
}

/* A finished descriptor held for faithful timing: complete it when due.
 * Returns true when nothing is held (any more). */
static bool hold_done(struct accel *a)
{
	if (!a->hold_until)
		return true;
	if (smio_now_ns() < a->hold_until) {
		a->d->wake_ns = a->hold_until;  /* the runner sleeps until about then */
		return false;
	}
	a->hold_until = 0;
	desc_complete(a, 0);
	return true;
}

static int ring_poll(struct accel *a)
{
	uint64_t budget = ACCEL_CHUNK;
	int work = 0;

	if (!a->ring_on || a->halted)
		return 0;
	for (int i = 0; i < ACCEL_DESC_PER_POLL && budget; i++) {
		if (a->hold_until) {
			if (!hold_done(a))
				return work;
			work = 1;
			continue;
		}
		if (!a->cur_valid) {
			uint32_t tail = dev_reg32(a->d, ACCEL_BAR_REGS, ACCEL_REG_RING_TAIL);

			if (tail >= a->ring_size) {
				a->halted = true;
				accel_error(a, ACCEL_ERR_RING_CFG, ACCEL_ST_DONE | ACCEL_SC_BAD_FIELD,
					    tail);
				return 1;
			}
			if (tail == a->head)
				break;
			if (desc_fetch(a) <= 0)
				return work;
			work = 1;
			desc_start(a);
			if (a->halted)
				break;
		}
		if (a->cur_valid) {
			budget -= desc_step(a, budget);
			work = 1;
			if (a->halted)
				break;
		}
	}
	return work;
}

static void ring_enable(struct accel *a)
{
	struct dev_instance *d = a->d;
	uint64_t base = dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_RING_BASE);
	uint32_t size = dev_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_RING_SIZE);
	uint32_t sc = 0;

	a->ring_on = true;
	a->halted = a->stalled = a->cur_valid = false;
	a->head = a->done = a->failed = 0;
	a->ring_base = base;
	a->ring_size = size;
	a->fail_addr = base;
	if (size < 2 || size > ACCEL_RING_MAX || (base & (ACCEL_RING_ALIGN - 1)))
		sc = ACCEL_SC_BAD_FIELD;
	else
		sc = accel_resolve(a, base, (uint64_t)size * ACCEL_DESC_SIZE, &a->ring);
	if (sc) {
		a->halted = true;
		accel_error(a, ACCEL_ERR_RING_CFG, ACCEL_ST_DONE | sc, a->fail_addr);
	}
}

static void ring_disable(struct accel *a)
{
	/* Software waiting on the descriptor in flight learns it was cut short. */
	if (a->cur_valid && !a->halted)
		desc_complete(a, ACCEL_SC_ABORTED);
	a->hold_until = 0;
	a->ring_on = a->halted = a->stalled = a->cur_valid = false;
}

/* ---- Reset, life cycle, poll ---- */

static void accel_do_reset(struct accel *a)
{
	struct dev_instance *d = a->d;
	uint32_t caps = 0;

	a->en_seen = a->ring_on = a->halted = a->stalled = a->cur_valid = false;
	a->hold_until = 0;
	a->error = a->int_status = a->err_code = 0;
	a->err_addr = a->fail_addr = 0;
	a->ring_base = 0;
	a->ring_size = a->head = a->done = a->failed = 0;
	accel_prog_reset(a);

	/* Everything below the MSI-X table: the table belongs to the function.
	 * Register by register, as atomic stores: a driver may be reading. */
	for (uint32_t off = 0; off < ACCEL_REGS_SIZE; off += 4)
		dev_set_reg32(d, ACCEL_BAR_REGS, off, 0);
	for (unsigned op = 1; op <= ACCEL_OP_MAX; op++)
		caps |= ACCEL_CAPS_OP(op);
	for (unsigned p = ACCEL_PROG_MEMCPY; p <= ACCEL_PROG_KERNEL; p++)
		caps |= ACCEL_CAPS_PROG(p);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_MAGIC, ACCEL_MAGIC);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_VERSION, ACCEL_VERSION);
	dev_set_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_MEM_SIZE, a->mem_size);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_DMA_BITS, a->dma_bits);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_CAPS, caps);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_RING_MAX, ACCEL_RING_MAX);
	dev_set_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_CHUNK, ACCEL_CHUNK);
	accel_publish(a);
}

static int accel_create(struct dev_instance *d, char *err, size_t errlen)
{
	const struct dev_func *f = &d->fn;
	struct accel *a;
	uint64_t bits;
	int rc;

	if (!f->bar[ACCEL_BAR_REGS] || f->bar_size[ACCEL_BAR_REGS] < ACCEL_REGS_SIZE ||
	    !f->bar[ACCEL_BAR_MEM] || !f->bar_size[ACCEL_BAR_MEM]) {
		snprintf(err, errlen, "device %s: accel needs BAR0 (>= 32 KiB) and BAR2 memory",
			 f->td ? f->td->name : "?");
		return -EINVAL;
	}
	rc = dev_param_u64(d, "dma_bits", ACCEL_DMA_BITS_DEFAULT, &bits, err, errlen);
	if (rc)
		return rc;
	if (bits < ACCEL_DMA_BITS_MIN || bits > ACCEL_DMA_BITS_MAX) {
		snprintf(err, errlen, "device %s: dma_bits must be %d..%d, not %llu",
			 f->td ? f->td->name : "?", ACCEL_DMA_BITS_MIN, ACCEL_DMA_BITS_MAX,
			 (unsigned long long)bits);
		return -EINVAL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->bounce = malloc(ACCEL_CHUNK);
	if (!a->bounce) {
		free(a);
		return -ENOMEM;
	}
	a->d = d;
	if (accel_kern_init(a)) {
		free(a->bounce);
		free(a);
		return -ENOMEM;
	}
	if (f->timing) {
		a->paths = calloc(ACCEL_TIMING_PATHS, sizeof(*a->paths));
		if (!a->paths) {
			accel_kern_fini(a);
			free(a->bounce);
			free(a);
			return -ENOMEM;
		}
	}
	a->mem = f->bar[ACCEL_BAR_MEM];
	a->mem_size = f->bar_size[ACCEL_BAR_MEM];
	a->dma_bits = (unsigned)bits;
	a->dma_limit = bits == 64 ? 0 : 1ull << bits;
	d->state = a;
	accel_do_reset(a);
	return 0;
}

static void accel_destroy(struct dev_instance *d)
{
	struct accel *a = d->state;

	if (!a)
		return;
	accel_kern_fini(a);
	free(a->paths);
	free(a->bounce);
	free(a);
	d->state = NULL;
}

static void accel_reset(struct dev_instance *d)
{
	accel_do_reset(d->state);
}

static int accel_poll(struct dev_instance *d)
{
	struct accel *a = d->state;
	uint32_t ctrl = dev_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_CTRL), eack, iack;
	bool en = ctrl & ACCEL_CTRL_ENABLE;
	int work = 0;

	d->wake_ns = 0;
	if (ctrl & ACCEL_CTRL_RESET) {
		accel_do_reset(a);
		return 1;
	}
	eack = take_cmd(a, ACCEL_REG_ERR_ACK);
	iack = take_cmd(a, ACCEL_REG_INT_ACK);
	if (eack | iack) {
		a->error &= ~eack;
		a->int_status &= ~iack;
		accel_publish(a);
		work = 1;
	}
	if (en != a->en_seen) {
		a->en_seen = en;
		if (en)
			ring_enable(a);
		else
			ring_disable(a);
		accel_publish(a);
		work = 1;
	}
	if (ring_poll(a))
		work = 1;
	if (accel_prog_poll(a))
		work = 1;
	/* Vectors left pending while masked go out once unmasked. */
	if (dev_bus_master(d) && dev_msix_poll_pending(d) > 0)
		work = 1;
	/* Progress in flight (RING_BUSY, PROG_DONE_ITERS) shows between completions. */
	if (work)
		accel_publish(a);
	return work;
}

const struct dev_model_ops accel_model_ops = {
	.name = "accel",
	.create = accel_create,
	.destroy = accel_destroy,
	.poll = accel_poll,
	.reset = accel_reset,
};
