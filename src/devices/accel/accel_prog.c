// SPDX-License-Identifier: MIT
/*
 * Device programs: work the accelerator does on its own once software has
 * written the PROG_* registers and set PROG_CTRL.START. memcpy, memset and
 * checksum run over device memory in ACCEL_CHUNK slices per poll; ping-pong
 * is the papers' GPU latency benchmark: each side writes a counter to its
 * peer's memory and watches its own memory for the answer.
 *
 * Waiting never blocks: a ping-pong side whose answer has not come checks a
 * few times and returns to the runner (reporting no work, so an abandoned
 * program lets the runner back off); it stays running until the answer
 * arrives or software sets PROG_CTRL.ABORT.
 */
#include <string.h>

#include "devices/accel/accel_priv.h"
#include "util/smio_time.h"

void accel_prog_reset(struct accel *a)
{
	accel_kern_stop(a);          /* a reset ends a kernel's device context */
	memset(&a->prog, 0, sizeof(a->prog));
}

void accel_prog_finish(struct accel *a, uint32_t sc)
{
	struct accel_prog *p = &a->prog;
	uint64_t fail = a->fail_addr;

	if (p->op == ACCEL_PROG_KERNEL)
		accel_kern_stop(a);  /* abort: nothing of the kernel runs on */
	p->running = false;
	p->elapsed = smio_now_ns() - p->t0;
	p->avg = p->done_iters ? p->elapsed / p->done_iters : 0;
	p->result = p->op == ACCEL_PROG_CHECKSUM && !sc ? p->crc :
		    p->op == ACCEL_PROG_KERNEL ? (uint64_t)a->kern.value : p->off;
	p->status = ACCEL_ST_DONE | sc;
	p->seq++;
	if (sc && ACCEL_ST_CODE(sc) != ACCEL_SC_ABORTED)
		accel_error(a, ACCEL_ERR_PROG, p->status, fail);
	accel_raise(a, ACCEL_INT_PROG);
}

/* A device-memory range [off, off + len). */
static bool mem_range_ok(const struct accel *a, uint64_t off, uint64_t len)
{
	return off <= a->mem_size && len <= a->mem_size - off;
}

static void prog_start(struct accel *a)
{
	struct dev_instance *d = a->d;
	struct accel_prog *p = &a->prog;
	uint32_t sc = 0;

	p->op = dev_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_OP);
	p->role = dev_reg32(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_ROLE);
	p->src = dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_SRC);
	p->dst = dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_DST);
	p->len = dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_LEN);
	p->pattern = dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_PATTERN);
	p->watch = dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_WATCH);
	p->iters = dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_ITERS);
	p->off = p->done_iters = 0;
	p->crc = (uint32_t)p->pattern;
	p->n = 1;
	p->pp_send = p->role == ACCEL_ROLE_INITIATOR;
	p->status = 0;
	p->result = p->elapsed = p->avg = 0;
	p->t0 = smio_now_ns();
	p->running = true;
	a->fail_addr = 0;

	switch (p->op) {
	case ACCEL_PROG_MEMCPY:
		a->fail_addr = mem_range_ok(a, p->src, p->len) ? p->dst : p->src;
		if (!mem_range_ok(a, p->src, p->len) || !mem_range_ok(a, p->dst, p->len))
			sc = ACCEL_SC_RANGE;
		break;
	case ACCEL_PROG_MEMSET:
		a->fail_addr = p->dst;
		if (!mem_range_ok(a, p->dst, p->len))
			sc = ACCEL_SC_RANGE;
		break;
	case ACCEL_PROG_CHECKSUM:
		a->fail_addr = p->src;
		if (!mem_range_ok(a, p->src, p->len))
			sc = ACCEL_SC_RANGE;
		break;
	case ACCEL_PROG_KERNEL:
		sc = accel_kern_start(a);
		break;
	case ACCEL_PROG_PINGPONG:
		a->fail_addr = p->watch;
		if (p->role > ACCEL_ROLE_RESPONDER || (p->watch & 7))
			sc = ACCEL_SC_BAD_FIELD;
		else if (!mem_range_ok(a, p->watch, 8))
			sc = ACCEL_SC_RANGE;
		else
			sc = accel_resolve(a, dev_reg64(d, ACCEL_BAR_REGS, ACCEL_REG_PROG_PEER), 8,
					   &p->peer);
		break;
	default:
		sc = ACCEL_SC_BAD_OP;
		break;
	}
	accel_publish(a);
	if (sc)
		accel_prog_finish(a, sc);
	else if (p->op != ACCEL_PROG_PINGPONG && p->op != ACCEL_PROG_KERNEL && !p->len)
		accel_prog_finish(a, 0);
	else if (p->op == ACCEL_PROG_PINGPONG && !p->iters)
		accel_prog_finish(a, 0);
}

/* One slice of memcpy / memset / checksum. */
static int prog_step_mem(struct accel *a)
{
	struct accel_prog *p = &a->prog;
	uint64_t n = p->len - p->off < ACCEL_CHUNK ? p->len - p->off : ACCEL_CHUNK;

	switch (p->op) {
	case ACCEL_PROG_MEMCPY:
		memmove(a->mem + p->dst + p->off, a->mem + p->src + p->off, n);
		break;
	case ACCEL_PROG_MEMSET:
		accel_fill(a->mem + p->dst + p->off, n, p->pattern, p->off);
		break;
	case ACCEL_PROG_CHECKSUM:
		p->crc = accel_crc32c(p->crc, a->mem + p->src + p->off, n);
		break;
	}
	p->off += n;
	if (p->off == p->len)
		accel_prog_finish(a, 0);
	return 1;
}

/*
 * Ping-pong. Initiator, for n = 1..iters: write n to the peer, wait until the
 * watched word is n. Responder: wait until the watched word is n, write n to
 * the peer. Returns 1 if anything moved this pass.
 */
static int prog_step_pingpong(struct accel *a)
{
	struct accel_prog *p = &a->prog;
	const uint64_t *watch = (const uint64_t *)(a->mem + p->watch);
	int steps = 0, spins = 0, work = 0;

	/* Bounded: ACCEL_PP_STEPS moves and ACCEL_PP_SPIN misses per pass. */
	while (p->running && steps < ACCEL_PP_STEPS && spins < ACCEL_PP_SPIN) {
		if (p->pp_send) {
			uint32_t sc = accel_wr(a, &p->peer, 0, &p->n, sizeof(p->n));

			work = 1;
			steps++;
			if (sc) {
				accel_prog_finish(a, sc);
				break;
			}
			p->pp_send = false;
			if (p->role == ACCEL_ROLE_RESPONDER) {
				p->done_iters = p->n;
				if (p->n++ == p->iters)
					accel_prog_finish(a, 0);
			}
			continue;
		}
		if (__atomic_load_n(watch, __ATOMIC_ACQUIRE) != p->n) {
			spins++;
			continue;
		}
		work = 1;
		steps++;
		if (p->role == ACCEL_ROLE_INITIATOR) {
			p->done_iters = p->n;
			if (p->n++ == p->iters) {
				accel_prog_finish(a, 0);
				break;
			}
		}
		p->pp_send = true;
	}
	return work;
}

int accel_prog_poll(struct accel *a)
{
	struct accel_prog *p = &a->prog;
	uint32_t *ctl = (uint32_t *)(a->d->fn.bar[ACCEL_BAR_REGS] + ACCEL_REG_PROG_CTRL);
	uint32_t cmd = __atomic_load_n(ctl, __ATOMIC_ACQUIRE);
	int work = 0;

	if (cmd & ACCEL_PCTL_ABORT) {
		__atomic_fetch_and(ctl, ~ACCEL_PCTL_ABORT, __ATOMIC_ACQ_REL);
		if (p->running)
			accel_prog_finish(a, ACCEL_SC_ABORTED);
		work = 1;
	}
	/* A START while a program runs waits for it to end. */
	if (!p->running && (cmd & ACCEL_PCTL_START)) {
		__atomic_fetch_and(ctl, ~ACCEL_PCTL_START, __ATOMIC_ACQ_REL);
		prog_start(a);
		work = 1;
	}
	if (!p->running) {
		if (a->kern.reap_pid)
			accel_kern_poll(a);  /* wait for a finished kernel's context */
		return work;
	}
	if (p->op == ACCEL_PROG_KERNEL) {
		if (accel_kern_poll(a))
			work = 1;
		if (work)
			accel_publish(a);
		return work;
	}
	if (p->op == ACCEL_PROG_PINGPONG) {
		if (prog_step_pingpong(a))
			work = 1;
		if (work)
			accel_publish(a);
		return work;
	}
	return prog_step_mem(a);
}
