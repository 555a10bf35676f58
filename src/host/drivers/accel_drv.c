// SPDX-License-Identifier: MIT
/*
 * The accelerator driver. It binds like a Linux PCI driver would (by ID and
 * class), talks to the device only through its BARs, config space, the DMA
 * API and MSI-X, and so works the same on a local device and a borrowed one.
 *
 * Ring handling: the driver is synchronous (every submission waits for its
 * last descriptor), so the ring is empty whenever a submission starts and
 * tail is the only index the driver needs. Completion is the last
 * descriptor's status word (ACCEL_ST_DONE), announced by vector 0; the wait
 * rechecks the status word on every wake-up and in short slices, so a lost
 * or masked interrupt costs latency, never correctness.
 *
 * Waiting: the device model takes the host lock for every DMA, config read
 * and interrupt, and our callers hold that lock. Every wait therefore drops
 * it (wait_for) and retakes it before returning.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel_drv.h"
#include "devices/ids.h"
#include "drivers.h"
#include "util/smio_time.h"
#include "util/log.h"

#define WAIT_SLICE_MS      10     /* recheck interval while waiting for an interrupt */
#define REG_SLICE_MS       1      /* recheck interval for state changes with no interrupt */
#define CTRL_TIMEOUT_MS    2000   /* reset, enable, disable, abort */
#define SUBMIT_BASE_MS     2000
#define PP_BASE_MS         2000

struct accel_drv {
	struct pci_dev *pdev;
	uint8_t *regs;            /* BAR0 */
	uint8_t *mem;             /* BAR2, device memory */
	uint64_t mem_size, mem_bus;
	uint32_t dma_bits, caps;
	struct accel_desc *ring;
	uint64_t ring_bus;
	uint32_t ring_size, tail;
	uint8_t *buf;
	uint64_t buf_bus;
	int efd[ACCEL_NR_VECTORS];
	bool ours;                /* MAGIC/VERSION checked: safe to reset at teardown */
	bool busy;                /* a caller is waiting (with the host lock dropped) */
	bool prog_pending;        /* a program was started and not yet waited for */
	uint64_t prog_seq0;       /* PROG_SEQ before that START */
};

/* ---------- registers ---------- */

static uint32_t rd32(const struct accel_drv *a, uint32_t off)
{
	uint32_t v = __atomic_load_n((const uint32_t *)(a->regs + off), __ATOMIC_ACQUIRE);

	pci_io_acquire(a->regs + off);
	return v;
}

static uint64_t rd64(const struct accel_drv *a, uint32_t off)
{
	uint64_t v = __atomic_load_n((const uint64_t *)(a->regs + off), __ATOMIC_ACQUIRE);

	pci_io_acquire(a->regs + off);
	return v;
}

static void wr32(struct accel_drv *a, uint32_t off, uint32_t v)
{
	pci_io_release(a->regs + off);
	__atomic_store_n((uint32_t *)(a->regs + off), v, __ATOMIC_RELEASE);
}

static void wr64(struct accel_drv *a, uint32_t off, uint64_t v)
{
	pci_io_release(a->regs + off);
	__atomic_store_n((uint64_t *)(a->regs + off), v, __ATOMIC_RELEASE);
}

/* Command registers may hold bits the device has not taken yet: OR, never store. */
static void cmd32(struct accel_drv *a, uint32_t off, uint32_t bits)
{
	pci_io_release(a->regs + off);
	__atomic_fetch_or((uint32_t *)(a->regs + off), bits, __ATOMIC_ACQ_REL);
	pci_io_acquire(a->regs + off);
}

static struct accel_drv *drv_of(struct pci_dev *pdev)
{
	if (!pdev || pdev->driver != &accel_pci_driver)
		return NULL;
	return pdev->drvdata;
}

bool accel_drv_bound(const struct pci_dev *pdev)
{
	return pdev && pdev->driver == &accel_pci_driver && pdev->drvdata;
}

/* ---------- waiting ---------- */

typedef bool (*cond_fn)(struct accel_drv *a, const void *arg);

/*
 * Wait until cond holds or timeout_ms passes, with the host lock dropped
 * (the device needs it to make progress). Sleeps in poll() on the vector's
 * eventfd, at most slice_ms at a time, so a state change that sends no
 * interrupt is still seen. Returns 0, -ETIMEDOUT, or a poll error.
 */
static int wait_for(struct accel_drv *a, int vec, int slice_ms, int timeout_ms, cond_fn cond,
		    const void *arg)
{
	struct fab_host *h = pci_host_fab(a->pdev->host);
	int64_t deadline = smio_deadline(timeout_ms > 0 ? timeout_ms : 0);
	int efd = a->efd[vec], rc = -ETIMEDOUT;
	unsigned depth = fab_host_unlock_all(h);
	/* Bounded by the deadline: every pass either returns or polls until then. */
	for (;;) {
		struct pollfd p = { .fd = efd, .events = POLLIN };
		int left, n;

		if (cond(a, arg)) {
			rc = 0;
			break;
		}
		/* Link down or device gone: registers read all-ones, nothing completes. */
		if (pci_channel_offline(a->pdev)) {
			rc = -EIO;
			break;
		}
		left = smio_ms_left(deadline);
		if (!left)
			break;
		n = poll(&p, 1, left < slice_ms ? left : slice_ms);
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (n > 0) {
			uint64_t cnt;

			/* Only clears the wake-up; the condition is the truth. */
			if (read(efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN) {
				rc = -errno;
				break;
			}
		}
	}
	fab_host_relock(h, depth);
	return rc;
}

static bool ctrl_idle(struct accel_drv *a, const void *arg)
{
	return !(rd32(a, ACCEL_REG_CTRL) & ACCEL_CTRL_RESET);
}

static bool ring_ready(struct accel_drv *a, const void *arg)
{
	return rd32(a, ACCEL_REG_STATUS) & (ACCEL_STS_READY | ACCEL_STS_HALTED);
}

static bool ring_stopped(struct accel_drv *a, const void *arg)
{
	return !(rd32(a, ACCEL_REG_STATUS) & (ACCEL_STS_READY | ACCEL_STS_HALTED));
}

/* Reset the device and wait until it has taken the command. */
static int dev_reset(struct accel_drv *a)
{
	wr32(a, ACCEL_REG_CTRL, ACCEL_CTRL_RESET);
	return wait_for(a, ACCEL_VEC_ERROR, REG_SLICE_MS, CTRL_TIMEOUT_MS, ctrl_idle, NULL);
}

/* ---------- ring ---------- */

/* Program an empty ring and turn the engine on (the 0->1 edge latches it). */
static int ring_start(struct accel_drv *a)
{
	uint32_t sts;
	int rc;

	memset(a->ring, 0, (size_t)a->ring_size * ACCEL_DESC_SIZE);
	a->tail = 0;
	wr64(a, ACCEL_REG_RING_BASE, a->ring_bus);
	wr32(a, ACCEL_REG_RING_SIZE, a->ring_size);
	wr32(a, ACCEL_REG_RING_TAIL, 0);
	wr32(a, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
	rc = wait_for(a, ACCEL_VEC_ERROR, REG_SLICE_MS, CTRL_TIMEOUT_MS, ring_ready, NULL);
	if (rc)
		return rc;
	sts = rd32(a, ACCEL_REG_STATUS);
	if (sts & ACCEL_STS_HALTED) {
		smio_error("accel %s: ring rejected (error 0x%x, code 0x%x)", a->pdev->name,
			rd32(a, ACCEL_REG_ERROR), rd32(a, ACCEL_REG_ERR_CODE));
		return -EIO;
	}
	return 0;
}

/*
 * Stop the engine (a descriptor in flight completes ABORTED) and start it
 * again on an empty ring: recovery from a timeout or a halted engine.
 */
static int ring_restart(struct accel_drv *a)
{
	int rc;

	wr32(a, ACCEL_REG_CTRL, 0);
	rc = wait_for(a, ACCEL_VEC_ERROR, REG_SLICE_MS, CTRL_TIMEOUT_MS, ring_stopped, NULL);
	if (rc)
		return rc;
	cmd32(a, ACCEL_REG_ERR_ACK, rd32(a, ACCEL_REG_ERROR));
	return ring_start(a);
}

static bool slot_done(struct accel_drv *a, const void *arg)
{
	const struct accel_desc *d = arg;

	return (__atomic_load_n(&d->status, __ATOMIC_ACQUIRE) & ACCEL_ST_DONE) ||
	       (rd32(a, ACCEL_REG_STATUS) & ACCEL_STS_HALTED);
}

int accel_drv_timeout_ms(uint64_t len)
{
	/* 50 MB/s is far below what the engine does; only a stuck device is slower. */
	uint64_t ms = SUBMIT_BASE_MS + len / 50000;

	return ms > INT_MAX / 2 ? INT_MAX / 2 : (int)ms;
}

int accel_drv_submit_batch(struct pci_dev *pdev, struct accel_desc *descs, unsigned n,
			   int timeout_ms)
{
	struct accel_drv *a = drv_of(pdev);
	struct accel_desc *last;
	uint32_t first, err, ints;
	int rc = 0;

	if (!a)
		return -ENODEV;
	if (!descs || !n || n >= a->ring_size || timeout_ms <= 0)
		return -EINVAL;
	if (a->busy)
		return -EBUSY;
	a->busy = true;
	/* A halted engine (fetch or write-back failure earlier) needs a new edge. */
	if (!(rd32(a, ACCEL_REG_STATUS) & ACCEL_STS_READY)) {
		rc = ring_restart(a);
		if (rc)
			goto out;
	}
	first = a->tail;
	for (unsigned i = 0; i < n; i++) {
		struct accel_desc *s = &a->ring[(first + i) % a->ring_size];

		*s = descs[i];
		/* One interrupt per batch: the engine is serial, the last one ends it. */
		if (i == n - 1)
			s->flags |= ACCEL_DF_IRQ;
		s->result = 0;
		s->status = 0;
		s->rsvd = 0;
	}
	last = &a->ring[(first + n - 1) % a->ring_size];
	a->tail = (first + n) % a->ring_size;
	/* The doorbell store is a release: the slots are visible before it. */
	wr32(a, ACCEL_REG_RING_TAIL, a->tail);
	rc = wait_for(a, ACCEL_VEC_RING, WAIT_SLICE_MS, timeout_ms, slot_done, last);
	if (!rc && !(__atomic_load_n(&last->status, __ATOMIC_ACQUIRE) & ACCEL_ST_DONE))
		rc = -EIO;   /* halted before reaching the last slot */
	for (unsigned i = 0; i < n; i++) {
		struct accel_desc *s = &a->ring[(first + i) % a->ring_size];

		descs[i].status = __atomic_load_n(&s->status, __ATOMIC_ACQUIRE);
		descs[i].result = s->result;
	}
	if (rc) {
		smio_warn("accel %s: %s (status 0x%x, error 0x%x, code 0x%x); "
			"restarting the ring", pdev->name,
			rc == -ETIMEDOUT ? "submission timed out" : "engine halted",
			rd32(a, ACCEL_REG_STATUS), rd32(a, ACCEL_REG_ERROR),
			rd32(a, ACCEL_REG_ERR_CODE));
		/* Nothing of this batch may still be running when the caller reuses it. */
		if (ring_restart(a))
			smio_error("accel %s: ring restart failed", pdev->name);
	}
	/* Sticky state we have now seen; descriptor errors are in their status words. */
	err = rd32(a, ACCEL_REG_ERROR) & ACCEL_ERR_DESC;
	if (err)
		cmd32(a, ACCEL_REG_ERR_ACK, err);
	ints = rd32(a, ACCEL_REG_INT_STATUS) & (ACCEL_INT_RING | ACCEL_INT_ERROR);
	if (ints)
		cmd32(a, ACCEL_REG_INT_ACK, ints);
out:
	a->busy = false;
	return rc;
}

int accel_drv_submit(struct pci_dev *pdev, struct accel_desc *desc)
{
	if (!desc)
		return -EINVAL;
	return accel_drv_submit_batch(pdev, desc, 1, accel_drv_timeout_ms(desc->len));
}

/* ---------- device programs ---------- */

int accel_drv_prog_start(struct pci_dev *pdev, const struct accel_prog_args *p)
{
	struct accel_drv *a = drv_of(pdev);

	if (!a)
		return -ENODEV;
	if (!p)
		return -EINVAL;
	/* One program at a time: a START behind a running one would wait silently. */
	if (a->busy || a->prog_pending || (rd32(a, ACCEL_REG_STATUS) & ACCEL_STS_PROG_BUSY) ||
	    (rd32(a, ACCEL_REG_PROG_CTRL) & ACCEL_PCTL_START))
		return -EBUSY;
	wr32(a, ACCEL_REG_PROG_OP, p->op);
	wr32(a, ACCEL_REG_PROG_ROLE, p->role);
	wr64(a, ACCEL_REG_PROG_SRC, p->src);
	wr64(a, ACCEL_REG_PROG_DST, p->dst);
	wr64(a, ACCEL_REG_PROG_LEN, p->len);
	wr64(a, ACCEL_REG_PROG_PATTERN, p->pattern);
	wr64(a, ACCEL_REG_PROG_PEER, p->peer);
	wr64(a, ACCEL_REG_PROG_WATCH, p->watch);
	wr64(a, ACCEL_REG_PROG_ITERS, p->iters);
	/* The end is PROG_SEQ moving past this value (the status word may be an old one). */
	a->prog_seq0 = rd64(a, ACCEL_REG_PROG_SEQ);
	a->prog_pending = true;
	cmd32(a, ACCEL_REG_PROG_CTRL, ACCEL_PCTL_START);
	return 0;
}

static bool prog_done(struct accel_drv *a, const void *arg)
{
	uint32_t st;

	if (rd64(a, ACCEL_REG_PROG_SEQ) == a->prog_seq0)
		return false;
	/* SEQ is published before the status word: wait for both. */
	st = rd32(a, ACCEL_REG_PROG_STATUS);
	return (st & ACCEL_ST_DONE) && !(st & ACCEL_PST_RUNNING);
}

void accel_drv_prog_abort(struct pci_dev *pdev)
{
	struct accel_drv *a = drv_of(pdev);

	if (a && a->prog_pending)
		cmd32(a, ACCEL_REG_PROG_CTRL, ACCEL_PCTL_ABORT);
}

int accel_drv_prog_wait(struct pci_dev *pdev, int timeout_ms, struct accel_prog_res *res)
{
	struct accel_drv *a = drv_of(pdev);
	uint32_t ints;
	int rc;

	if (!a)
		return -ENODEV;
	if (!a->prog_pending)
		return -EINVAL;
	if (a->busy)
		return -EBUSY;
	a->busy = true;
	rc = wait_for(a, ACCEL_VEC_PROG, WAIT_SLICE_MS, timeout_ms, prog_done, NULL);
	if (rc) {
		/* Stop it, and make sure it has stopped before anyone reuses the device. */
		cmd32(a, ACCEL_REG_PROG_CTRL, ACCEL_PCTL_ABORT);
		if (wait_for(a, ACCEL_VEC_PROG, REG_SLICE_MS, CTRL_TIMEOUT_MS, prog_done, NULL))
			smio_warn("accel %s: program does not stop", pdev->name);
		/* A START never taken must not fire later. */
		__atomic_fetch_and((uint32_t *)(a->regs + ACCEL_REG_PROG_CTRL), ~ACCEL_PCTL_START,
				   __ATOMIC_ACQ_REL);
	}
	if (res) {
		res->status = rd32(a, ACCEL_REG_PROG_STATUS) & ~ACCEL_PST_RUNNING;
		res->result = rd64(a, ACCEL_REG_PROG_RESULT);
		res->iters_done = rd64(a, ACCEL_REG_PROG_DONE_ITERS);
		res->elapsed_ns = rd64(a, ACCEL_REG_PROG_ELAPSED);
		res->avg_ns = rd64(a, ACCEL_REG_PROG_AVG_NS);
	}
	if (rd32(a, ACCEL_REG_ERROR) & ACCEL_ERR_PROG)
		cmd32(a, ACCEL_REG_ERR_ACK, ACCEL_ERR_PROG);
	ints = rd32(a, ACCEL_REG_INT_STATUS) & (ACCEL_INT_PROG | ACCEL_INT_ERROR);
	if (ints)
		cmd32(a, ACCEL_REG_INT_ACK, ints);
	a->prog_pending = false;
	a->busy = false;
	return rc;
}

int accel_drv_program(struct pci_dev *pdev, const struct accel_prog_args *args, int timeout_ms,
		      struct accel_prog_res *res)
{
	int rc = accel_drv_prog_start(pdev, args);

	return rc ? rc : accel_drv_prog_wait(pdev, timeout_ms, res);
}

/*
 * A kernel: the image goes into device memory at code_off (ACCEL_DRV_KERNEL_TOP:
 * as high as it fits, 4 KiB aligned, below the ping-pong mailbox), its
 * argument block (NUL-ended strings) right after it; then program KERNEL
 * runs it. Device memory outside [code_off, args end) is the kernel's.
 */
int accel_drv_kernel(struct pci_dev *pdev, const void *image, size_t image_len,
		     const void *args, size_t args_len, uint64_t code_off, int timeout_ms,
		     struct accel_prog_res *res, uint64_t *placed)
{
	struct accel_drv *a = drv_of(pdev);
	struct accel_prog_args p = { .op = ACCEL_PROG_KERNEL };
	uint64_t need, args_off;

	if (!a)
		return -ENODEV;
	if (!image_len || image_len > ACCEL_KERN_IMAGE_MAX || args_len > ACCEL_KERN_ARGS_MAX ||
	    (args_len && ((const char *)args)[args_len - 1]) || timeout_ms <= 0)
		return -EINVAL;
	need = ((image_len + 7) & ~7ull) + args_len;
	if (need + ACCEL_DRV_PP_MAILBOX > a->mem_size)
		return -ERANGE;
	if (code_off == ACCEL_DRV_KERNEL_TOP) {
		if (!image)
			return -EINVAL;
		code_off = accel_drv_kernel_top(a->mem_size, image_len, args_len);
	}
	if (code_off > a->mem_size || need > a->mem_size - code_off)
		return -ERANGE;
	if (a->busy || a->prog_pending)
		return -EBUSY;
	args_off = code_off + ((image_len + 7) & ~7ull);
	if (image)           /* NULL: the caller put it there already */
		memcpy(a->mem + code_off, image, image_len);
	if (args_len)
		memcpy(a->mem + args_off, args, args_len);
	p.src = code_off;
	p.len = image_len;
	p.dst = args_off;
	p.iters = args_len;
	if (placed)
		*placed = code_off;
	return accel_drv_program(pdev, &p, timeout_ms, res);
}

int accel_drv_pingpong_timeout_ms(uint64_t iters)
{
	/* A round trip takes microseconds; allow a millisecond (idle wake-ups). */
	uint64_t ms = PP_BASE_MS + iters;

	return ms > INT_MAX / 2 ? INT_MAX / 2 : (int)ms;
}

static uint64_t *mailbox(struct accel_drv *a)
{
	return (uint64_t *)(a->mem + a->mem_size - ACCEL_DRV_PP_MAILBOX);
}

int accel_drv_pingpong(struct pci_dev *init, struct pci_dev *resp, uint64_t iters,
		       int timeout_ms, struct accel_prog_res *res)
{
	struct accel_drv *ai = drv_of(init), *ar = drv_of(resp);
	struct accel_prog_args pi = { .op = ACCEL_PROG_PINGPONG, .role = ACCEL_ROLE_INITIATOR,
				      .iters = iters };
	struct accel_prog_args pr = { .op = ACCEL_PROG_PINGPONG, .role = ACCEL_ROLE_RESPONDER,
				      .iters = iters };
	struct accel_prog_res rr = { 0 }, ri = { 0 };
	uint64_t save_i, save_r;
	int rc, rc2;

	if (!ai || !ar)
		return -ENODEV;
	if (ai == ar || !iters || timeout_ms <= 0)
		return -EINVAL;
	/* Each side watches its own mailbox and writes the other's, by bus address. */
	pi.watch = ai->mem_size - ACCEL_DRV_PP_MAILBOX;
	pr.watch = ar->mem_size - ACCEL_DRV_PP_MAILBOX;
	{
		/* Where each engine reaches the other's memory (P2PDMA, resolved in advance). */
		uint64_t r_from_i, i_from_r;

		rc = pci_p2pdma_bus(init, resp, ACCEL_BAR_MEM, &r_from_i);
		if (!rc)
			rc = pci_p2pdma_bus(resp, init, ACCEL_BAR_MEM, &i_from_r);
		if (rc)
			return rc;
		pi.peer = r_from_i + pr.watch;
		pr.peer = i_from_r + pi.watch;
	}
	save_i = __atomic_load_n(mailbox(ai), __ATOMIC_ACQUIRE);
	save_r = __atomic_load_n(mailbox(ar), __ATOMIC_ACQUIRE);
	/* Counters start at 1: a stale word from an earlier run must not match. */
	__atomic_store_n(mailbox(ai), 0, __ATOMIC_RELEASE);
	__atomic_store_n(mailbox(ar), 0, __ATOMIC_RELEASE);
	/* The responder must be waiting before the first counter arrives. */
	rc = accel_drv_prog_start(resp, &pr);
	if (rc)
		goto restore;
	rc = accel_drv_prog_start(init, &pi);
	if (rc) {
		accel_drv_prog_abort(resp);
		accel_drv_prog_wait(resp, CTRL_TIMEOUT_MS, NULL);
		goto restore;
	}
	rc = accel_drv_prog_wait(init, timeout_ms, &ri);
	/* The responder ends with its last write; if the initiator did not finish,
	 * it waits for a counter that never comes. */
	if (rc || ACCEL_ST_CODE(ri.status) != ACCEL_SC_OK || ri.iters_done != iters)
		accel_drv_prog_abort(resp);
	rc2 = accel_drv_prog_wait(resp, CTRL_TIMEOUT_MS, &rr);
	if (!rc && rc2 && rc2 != -ETIMEDOUT)
		rc = rc2;
	/* A responder failure (its write faulted) is the run's failure too. */
	if (!rc && ACCEL_ST_CODE(ri.status) == ACCEL_SC_OK &&
	    ACCEL_ST_CODE(rr.status) != ACCEL_SC_OK)
		ri.status = rr.status;
	if (res)
		*res = ri;
restore:
	__atomic_store_n(mailbox(ai), save_i, __ATOMIC_RELEASE);
	__atomic_store_n(mailbox(ar), save_r, __ATOMIC_RELEASE);
	return rc;
}

/* ---------- info, probe, remove ---------- */

int accel_drv_get_info(struct pci_dev *pdev, struct accel_drv_info *info)
{
	struct accel_drv *a = drv_of(pdev);

	if (!a)
		return -ENODEV;
	if (!info)
		return -EINVAL;
	*info = (struct accel_drv_info){
		.mem_size = a->mem_size, .mem_bus = a->mem_bus,
		.buf_size = ACCEL_DRV_BUF_SIZE, .buf_bus = a->buf_bus,
		.dma_bits = a->dma_bits, .caps = a->caps, .mem = a->mem, .buf = a->buf,
	};
	return 0;
}

void *accel_drv_alloc_p2pmem(struct pci_dev *pdev, struct pci_dev *const *peers, unsigned n,
			     size_t size, uint64_t *bus, struct pci_dev **provider)
{
	struct pci_dev *clients[ACCEL_DRV_P2P_PEERS + 1];
	struct pci_dev *prov = NULL;
	void *mem;

	if (!drv_of(pdev) || !bus || n > ACCEL_DRV_P2P_PEERS || (n && !peers))
		return NULL;
	clients[0] = pdev;
	for (unsigned i = 0; i < n; i++)
		clients[i + 1] = peers[i];
	mem = pci_p2pmem_alloc_near(pdev->host, clients, n + 1, size, &prov);
	if (!mem)
		return NULL;
	/* The engine names it by the address its requests reach it at. */
	if (pci_p2pmem_map(pdev, mem, size, bus)) {
		pci_free_p2pmem(pdev->host, mem, size);
		return NULL;
	}
	if (provider)
		*provider = prov;
	return mem;
}

static void teardown(struct accel_drv *a)
{
	struct pci_dev *pdev = a->pdev;

	/* Reset stops the engine and any program without further DMA; only then
	 * may the memory the device was told about go back. */
	if (a->ours && !pci_dev_is_disconnected(pdev) && dev_reset(a))
		smio_warn("accel %s: reset not taken; bus mastering off", pdev->name);
	if (!pci_dev_is_disconnected(pdev))
		pci_clear_master(pdev);
	if (a->buf)
		dma_free_coherent(pdev, ACCEL_DRV_BUF_SIZE, a->buf, a->buf_bus);
	if (a->ring)
		dma_free_coherent(pdev, (size_t)a->ring_size * ACCEL_DESC_SIZE, a->ring,
				  a->ring_bus);
	pci_free_irq_vectors(pdev);
	free(a);
}

/*
 * Bring-up, in the order a real driver must: decoding and mastering, the
 * registers (is this our device, which interface version), the DMA mask the
 * device reports, vectors, a clean device (reset), then the ring.
 */
static int accel_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct accel_drv *a;
	uint32_t magic, ver, need;
	uint64_t mask;
	int rc;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->pdev = pdev;
	for (int v = 0; v < ACCEL_NR_VECTORS; v++)
		a->efd[v] = -1;
	rc = pci_enable_device(pdev);
	if (rc)
		goto fail;
	pci_set_master(pdev);
	a->regs = pci_iomap(pdev, ACCEL_BAR_REGS);
	a->mem = pci_iomap(pdev, ACCEL_BAR_MEM);
	if (!a->regs || !a->mem || pdev->bar_size[ACCEL_BAR_REGS] < ACCEL_REGS_SIZE) {
		smio_error("accel %s: BAR0/BAR2 not mapped", pdev->name);
		rc = -ENODEV;
		goto fail;
	}
	magic = rd32(a, ACCEL_REG_MAGIC);
	ver = rd32(a, ACCEL_REG_VERSION);
	if (magic != ACCEL_MAGIC || ACCEL_VERSION_MAJOR(ver) != ACCEL_VERSION_MAJOR(ACCEL_VERSION)) {
		smio_error("accel %s: not our device (magic 0x%x, version 0x%x)",
			pdev->name, magic, ver);
		rc = -ENODEV;
		goto fail;
	}
	a->ours = true;
	a->mem_size = rd64(a, ACCEL_REG_MEM_SIZE);
	/* The engine's own view of its memory (its bus address, wherever it sits). */
	rc = pci_p2pdma_bus(pdev, pdev, ACCEL_BAR_MEM, &a->mem_bus);
	if (rc)
		goto fail;
	/* The mailbox and every offset check rely on the memory fitting its BAR. */
	if (a->mem_size < ACCEL_DRV_PP_MAILBOX || a->mem_size > pdev->bar_size[ACCEL_BAR_MEM]) {
		smio_error("accel %s: memory size 0x%llx does not fit BAR2 (0x%llx)",
			pdev->name, (unsigned long long)a->mem_size,
			(unsigned long long)pdev->bar_size[ACCEL_BAR_MEM]);
		rc = -EIO;
		goto fail;
	}
	/*
	 * Device memory is peer-to-peer memory for others (a GPU's BAR as
	 * p2pmem): all of it but the mailbox page, published for the
	 * orchestrator. Offsets that programs name by hand share it, as they
	 * always did; allocations come from the bottom.
	 */
	if (a->mem_size >= 2 * 4096) {
		rc = pci_p2pdma_add_resource(pdev, ACCEL_BAR_MEM,
					     (a->mem_size - ACCEL_DRV_PP_MAILBOX) & ~4095ull, 0);
		if (rc && rc != -EEXIST)
			smio_warn("accel %s: no p2pmem: %s", pdev->name, strerror(-rc));
		else
			pci_p2pmem_publish(pdev, true);
	}
	a->caps = rd32(a, ACCEL_REG_CAPS);
	need = ACCEL_CAPS_OP(ACCEL_OP_COPY) | ACCEL_CAPS_OP(ACCEL_OP_FILL) |
	       ACCEL_CAPS_OP(ACCEL_OP_CHECKSUM);
	if ((a->caps & need) != need) {
		smio_error("accel %s: lacks copy/fill/checksum (caps 0x%x)", pdev->name,
			a->caps);
		rc = -ENODEV;
		goto fail;
	}
	/* Everything the device is told (ring, buffer) must be below its limit. */
	a->dma_bits = rd32(a, ACCEL_REG_DMA_BITS);
	if (a->dma_bits < ACCEL_DMA_BITS_MIN || a->dma_bits > ACCEL_DMA_BITS_MAX) {
		rc = -EIO;
		goto fail;
	}
	mask = a->dma_bits == 64 ? UINT64_MAX : (1ull << a->dma_bits) - 1;
	rc = dma_set_mask(pdev, mask);
	if (rc) {
		smio_error("accel %s: no usable DMA mask for %u bits", pdev->name,
			a->dma_bits);
		goto fail;
	}
	rc = pci_alloc_irq_vectors(pdev, ACCEL_NR_VECTORS);
	if (rc < 0)
		goto fail;
	for (int v = 0; v < ACCEL_NR_VECTORS; v++)
		a->efd[v] = pci_irq_eventfd(pdev, v);
	/* Whatever an earlier owner left running stops here. */
	rc = dev_reset(a);
	if (rc) {
		smio_error("accel %s: device does not answer reset", pdev->name);
		goto fail;
	}
	wr32(a, ACCEL_REG_INT_MASK, 0);
	a->ring_size = ACCEL_DRV_RING_SIZE;
	a->ring = dma_alloc_coherent(pdev, (size_t)a->ring_size * ACCEL_DESC_SIZE, &a->ring_bus);
	a->buf = dma_alloc_coherent(pdev, ACCEL_DRV_BUF_SIZE, &a->buf_bus);
	if (!a->ring || !a->buf) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = ring_start(a);
	if (rc)
		goto fail;
	pdev->drvdata = a;
	return 0;
fail:
	teardown(a);
	return rc;
}

static void accel_remove(struct pci_dev *pdev)
{
	struct accel_drv *a = pdev->drvdata;

	if (!a)
		return;
	pdev->drvdata = NULL;
	teardown(a);
}

/*
 * Link down (frozen) or device gone (perm_failure): a waiter sees the
 * channel offline within a slice (woken now through the ring's vector) and
 * fails with -EIO. Only a flag and a wake-up: the host lock is held.
 */
static void accel_error_detected(struct pci_dev *pdev, enum pci_channel_state state)
{
	struct accel_drv *a = pdev->drvdata;
	uint64_t one = 1;

	if (!a)
		return;
	for (int v = 0; v < ACCEL_NR_VECTORS; v++)
		if (a->efd[v] >= 0 && write(a->efd[v], &one, sizeof(one)) < 0)
			smio_warn("accel %s: waking vector %d: %s", pdev->name, v, strerror(errno));
	smio_warn("accel %s: %s", pdev->name,
		  state == pci_channel_io_perm_failure ? "permanent failure (device gone)"
						       : "link down (frozen)");
}

static void accel_resume(struct pci_dev *pdev)
{
	smio_info("accel %s: link back", pdev->name);
}

static const struct pci_error_handlers accel_err_handler = {
	.error_detected = accel_error_detected,
	.resume = accel_resume,
};

/* The model's identity; probe still checks MAGIC and VERSION before use. */
static const struct pci_device_id accel_ids[] = {
	{ .vendor = SMARTIO_PCI_VENDOR, .device = SMARTIO_PCI_DEV_ACCEL,
	  .class = SMARTIO_PCI_CLASS_ACCEL, .class_mask = 0xffffff },
	{ 0 }
};

const struct pci_driver accel_pci_driver = {
	.name = "smartio-accel",
	.id_table = accel_ids,
	.probe = accel_probe,
	.remove = accel_remove,
	.err_handler = &accel_err_handler,
};
