// SPDX-License-Identifier: MIT
/*
 * libsisci's SmartIO device extension against real daemons: the default
 * cluster is started with the smartio CLI and the test process belongs to
 * host 0 (the borrower). It lists the pool, borrows lender A's NVMe and reads
 * its registers through the NTB, and borrows lender A's accelerator and makes
 * it DMA into a host-0 segment mapped for it (Device Lending's data path,
 * without the shadow device). A forked host-1 process checks exclusivity.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sisci_harness.h"
#include "smartio/accel_regs.h"

#define NODE_A      8          /* lender-a */
#define CLASS_NVME  0x010802u

/* This process is the borrower, host 0. */
static int group_setup(void **state)
{
	return sh_up("sdev", "0", false);
}

static int group_teardown(void **state)
{
	return sh_down();
}

static void test_pool(void **state)
{
	sci_smartio_device_info_t f, info;
	sci_smartio_query_device_t q;
	unsigned int ids[64], n, nvme;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* Lender A: nvme0, gpu0, gpu1; lender B: nvme0, gpu0. */
	n = SCIGetDeviceList(sd, ids, 64, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(n, 5);
	for (unsigned int i = 0; i < n; i++)
		assert_true(ids[i] >> 16 == 8 || ids[i] >> 16 == 12);
	/* Filters: zero fields match anything. */
	memset(&f, 0, sizeof(f));
	f.pci_class = CLASS_NVME;
	assert_int_equal(SCIGetDeviceList(sd, ids, 64, &f, 0, &err), 2);
	f.nodeid = NODE_A;
	assert_int_equal(SCIGetDeviceList(sd, ids, 64, &f, 0, &err), 1);
	nvme = ids[0];
	assert_int_equal(nvme >> 16, NODE_A);
	assert_int_equal(SCIGetDeviceList(sd, ids, 1, NULL, 0, &err), 1);
	assert_int_equal(SCIGetDeviceList(sd, ids, 64, NULL, 1, &err), 0);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);

	q = (sci_smartio_query_device_t){ .fdid = nvme, .subcommand = SCI_Q_DEVICE_INFO,
					  .data = &info };
	SCIQuery(SCI_Q_DEVICE, &q, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(info.fdid, nvme);
	assert_int_equal(info.pci_class, CLASS_NVME);
	assert_int_equal(info.nodeid, NODE_A);
	assert_int_equal(info.remote_bdf, nvme & 0xffff);
	assert_string_equal(info.user_name, "nvme0");
	q.fdid = (NODE_A << 16) | 0xffff;
	SCIQuery(SCI_Q_DEVICE, &q, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_FDID);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* A host-1 process tries to borrow fdid; returns its SISCI error (exit code index). */
static sci_error_t borrow_elsewhere(unsigned int fdid, unsigned int flags)
{
	static const sci_error_t codes[] = { SCI_ERR_OK, SCI_ERR_NOT_AVAILABLE, SCI_ERR_NO_SUCH_FDID };
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (!pid) {
		sci_smartio_device_t dv;
		sci_error_t err;
		sci_desc_t sd;

		setenv("SMARTIO_HOST", "1", 1);
		SCITerminate();
		SCIInitialize(0, &err);
		if (err)
			_exit(10);
		SCIOpen(&sd, 0, &err);
		if (err)
			_exit(11);
		SCIBorrowDevice(sd, &dv, fdid, flags, &err);
		for (unsigned int i = 0; i < 3; i++)
			if (codes[i] == err)
				_exit((int)i);
		_exit(12);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) < 3);
	return codes[WEXITSTATUS(st)];
}

static void test_borrow(void **state)
{
	sci_smartio_device_t a, b;
	unsigned int gpu1;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	gpu1 = sh_find_device(sd, NODE_A, "gpu1");
	SCIBorrowDevice(sd, &a, (NODE_A << 16) | 0xffff, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_FDID);
	SCIBorrowDevice(sd, &a, (99u << 16) | 1, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_FDID);
	SCIBorrowDevice(sd, &a, gpu1, 0x4, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);

	/* Exclusive: nobody else, here or on another host (a local borrow on the lender). */
	SCIBorrowDevice(sd, &a, gpu1, SCI_FLAG_EXCLUSIVE, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetFabricDeviceId(a), gpu1);
	/* Dolphin's answer to "someone holds it exclusively" is NOT_AVAILABLE. */
	SCIBorrowDevice(sd, &b, gpu1, 0, &err);
	assert_int_equal(err, SCI_ERR_NOT_AVAILABLE);
	assert_int_equal(borrow_elsewhere(gpu1, 0), SCI_ERR_NOT_AVAILABLE);
	/* Downgraded: shared borrows are fine, exclusive ones are not. */
	SCIReleaseExclusiveBorrow(a, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(borrow_elsewhere(gpu1, 0), SCI_ERR_OK);
	SCIBorrowDevice(sd, &b, gpu1, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(borrow_elsewhere(gpu1, SCI_FLAG_EXCLUSIVE), SCI_ERR_NOT_AVAILABLE);
	SCIReturnDevice(b, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(b, 0, &err);            /* a stale handle */
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIReturnDevice(a, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* All returned (the child's went with its process: a lease). */
	assert_int_equal(borrow_elsewhere(gpu1, SCI_FLAG_EXCLUSIVE), SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/*
 * A device another host has borrowed with Device Lending (`smartio borrow`) is
 * not available to an exclusive SISCI borrow (SCI_ERR_NOT_AVAILABLE, as
 * Dolphin's SmartIO answers); a shared one is a guest that may only use its
 * memory BARs (tests/test_sisci_lent.c). Once returned it can be borrowed.
 */
static void test_borrow_lent(void **state)
{
	sci_remote_segment_t seg;
	sci_smartio_device_t dv;
	unsigned int gpu0;
	char fdid[16];
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	gpu0 = sh_find_device(sd, NODE_A, "gpu0");
	snprintf(fdid, sizeof(fdid), "%#x", gpu0);
	assert_int_equal(sh_run((char *const[]){ sh_cli, "borrow", fdid, "--host", "2", NULL }), 0);
	SCIBorrowDevice(sd, &dv, gpu0, SCI_FLAG_EXCLUSIVE, &err);
	assert_int_equal(err, SCI_ERR_NOT_AVAILABLE);
	assert_int_equal(borrow_elsewhere(gpu0, SCI_FLAG_EXCLUSIVE), SCI_ERR_NOT_AVAILABLE);
	/* A guest: its registers (BAR0) stay the lend's borrower's. */
	SCIBorrowDevice(sd, &dv, gpu0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &seg, 0, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ACCESS);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(sh_run((char *const[]){ sh_cli, "return", fdid, "--host", "2",
						 "--unbind", NULL }), 0);
	SCIBorrowDevice(sd, &dv, gpu0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

static void test_nvme_bar(void **state)
{
	sci_smartio_device_t dv;
	sci_remote_segment_t seg;
	sci_map_t map;
	volatile uint32_t *regs;
	sci_error_t err;
	sci_desc_t sd;
	unsigned int nvme;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	nvme = sh_find_device(sd, NODE_A, "nvme0");
	SCIBorrowDevice(sd, &dv, nvme, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &seg, 0, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(SCIGetRemoteSegmentSize(seg) >= 0x1000);
	SCIConnectDeviceSegment(dv, &seg, 5, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_SEGMENT);
	/* Not returned while its BAR is connected. */
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);

	regs = (volatile uint32_t *)SCIMapRemoteSegment(seg, &map, 0, 0x1000, NULL,
							SCI_FLAG_IO_MAP_IOSPACE, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* A real device register read across the NTB: VS = 1.4.0, CAP.MQES nonzero. */
	assert_int_equal(regs[2], 0x00010400);
	assert_true((regs[0] & 0xffff) != 0);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* Wait (bounded) for a descriptor's DONE bit. */
static uint32_t wait_done(volatile struct accel_desc *d)
{
	uint64_t end = smio_now_ms() + 10000;
	uint32_t st;

	while (!((st = __atomic_load_n(&d->status, __ATOMIC_ACQUIRE)) & ACCEL_ST_DONE) &&
	       smio_now_ms() < end)
		poll(NULL, 0, 1);
	return st;
}

static void test_accel_dma(void **state)
{
	const size_t len = 8192;
	sci_smartio_device_t dv;
	sci_local_segment_t lseg, other;
	sci_remote_segment_t bar;
	sci_map_t lmap, rmap;
	volatile struct accel_desc *ring;
	volatile uint8_t *regs;
	uint8_t *mem;
	sci_ioaddr_t io, io2;
	sci_error_t err;
	sci_desc_t sd;
	unsigned int gpu0;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	gpu0 = sh_find_device(sd, NODE_A, "gpu0");
	SCIBorrowDevice(sd, &dv, gpu0, SCI_FLAG_EXCLUSIVE, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* The host-0 segment: ring at 0, source at 0x1000, destination at 0x4000. */
	SCICreateSegment(sd, &lseg, 0x5e90, 0x10000, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	mem = SCIMapLocalSegment(lseg, &lmap, 0, 0x10000, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	memset(mem, 0, 0x10000);
	for (size_t i = 0; i < len; i++)
		mem[0x1000 + i] = (uint8_t)(i * 7 + 3);

	SCIMapLocalSegmentForDevice(lseg, 0, dv, &io, 0, 0x20000, 0, &err);
	assert_int_equal(err, SCI_ERR_OUT_OF_RANGE);
	SCIMapLocalSegmentForDevice(lseg, 0, dv, &io, 0, 0x10000, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_not_equal(io, 0);
	/* Not removed while the device may use it. */
	SCIRemoveSegment(lseg, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);

	/* The registers, through the NTB. */
	SCIConnectDeviceSegment(dv, &bar, ACCEL_BAR_REGS, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	regs = SCIMapRemoteSegment(bar, &rmap, 0, 0x1000, NULL, SCI_FLAG_IO_MAP_IOSPACE, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(*(volatile uint32_t *)(regs + ACCEL_REG_MAGIC), ACCEL_MAGIC);

	/*
	 * The device at lender A copies within host 0's segment, through the
	 * address the mapping returned: it fetches its descriptor ring from host
	 * 0 and moves the data across the NTB both ways. Device Lending's data
	 * path, driven from the borrower.
	 */
	ring = (volatile struct accel_desc *)mem;
	ring[0] = (struct accel_desc){ .op = ACCEL_OP_COPY, .src = io + 0x1000,
				       .dst = io + 0x4000, .len = len };
	__atomic_store_n((volatile uint64_t *)(regs + ACCEL_REG_RING_BASE), io, __ATOMIC_RELEASE);
	__atomic_store_n((volatile uint32_t *)(regs + ACCEL_REG_RING_SIZE), 4, __ATOMIC_RELEASE);
	__atomic_store_n((volatile uint32_t *)(regs + ACCEL_REG_RING_TAIL), 0, __ATOMIC_RELEASE);
	__atomic_store_n((volatile uint32_t *)(regs + ACCEL_REG_CTRL), ACCEL_CTRL_ENABLE,
			 __ATOMIC_RELEASE);
	__atomic_store_n((volatile uint32_t *)(regs + ACCEL_REG_RING_TAIL), 1, __ATOMIC_RELEASE);
	assert_int_equal(wait_done(&ring[0]), ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	assert_memory_equal(mem + 0x4000, mem + 0x1000, len);

	/* Only segments registered with SISCI: another process's id is not ours. */
	SCICreateSegment(sd, &other, 0x5e91, 0x1000, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapLocalSegmentForDevice(other, 0, dv, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_SEGMENT);
	SCIMapLocalSegmentForDevice(other, 0, dv, &io2, 0, 0x1000, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_not_equal(io2, io);
	SCIUnmapLocalSegmentForDevice(other, 0, dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(other, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* Return: refused while mapped; then everything goes. */
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	__atomic_store_n((volatile uint32_t *)(regs + ACCEL_REG_CTRL), 0, __ATOMIC_RELEASE);
	SCIUnmapSegment(rmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(bar, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapLocalSegmentForDevice(lseg, 0, dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(lmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(lseg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/*
 * A borrowed accelerator driven from host 0: its descriptor ring lives in a
 * host-0 segment mapped for it (64 KiB: ring at 0, source at 0x1000, spare
 * from 0x8000), its registers through the NTB.
 */
struct rig {
	sci_desc_t sd;
	sci_smartio_device_t dv;
	sci_local_segment_t lseg;
	sci_remote_segment_t bar;
	sci_map_t lmap, rmap;
	uint8_t *mem;
	volatile uint8_t *regs;
	sci_ioaddr_t io;
	uint32_t next;
};

#define RIG_SIZE   0x10000u
#define RIG_RING   16u
#define RIG_SRC    0x1000u
#define RIG_SPARE  0x8000u
#define RIG_LEN    8192u

static void reg32(struct rig *r, unsigned int off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(r->regs + off), v, __ATOMIC_RELEASE);
}

static void rig_up(struct rig *r, unsigned int node, const char *name, unsigned int segid)
{
	sci_error_t err;

	memset(r, 0, sizeof(*r));
	SCIOpen(&r->sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIBorrowDevice(r->sd, &r->dv, sh_find_device(r->sd, node, name), 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(r->sd, &r->lseg, segid, RIG_SIZE, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	r->mem = SCIMapLocalSegment(r->lseg, &r->lmap, 0, RIG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	memset(r->mem, 0, RIG_SIZE);
	for (size_t i = 0; i < RIG_LEN; i++)
		r->mem[RIG_SRC + i] = (uint8_t)(i * 13 + segid);
	SCIMapLocalSegmentForDevice(r->lseg, 0, r->dv, &r->io, 0, RIG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(r->dv, &r->bar, ACCEL_BAR_REGS, SCI_MEMTYPE_BAR, NULL, NULL, 0,
				&err);
	assert_int_equal(err, SCI_ERR_OK);
	r->regs = SCIMapRemoteSegment(r->bar, &r->rmap, 0, 0x1000, NULL,
				      SCI_FLAG_IO_MAP_IOSPACE, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(*(volatile uint32_t *)(r->regs + ACCEL_REG_MAGIC), ACCEL_MAGIC);
	reg32(r, ACCEL_REG_CTRL, 0);
	__atomic_store_n((volatile uint64_t *)(r->regs + ACCEL_REG_RING_BASE), r->io,
			 __ATOMIC_RELEASE);
	reg32(r, ACCEL_REG_RING_SIZE, RIG_RING);
	reg32(r, ACCEL_REG_RING_TAIL, 0);
	reg32(r, ACCEL_REG_CTRL, ACCEL_CTRL_ENABLE);
}

/* Run one COPY through the ring; returns the descriptor's status. */
static uint32_t rig_copy(struct rig *r, uint64_t src, uint64_t dst, uint64_t len)
{
	volatile struct accel_desc *d = (volatile struct accel_desc *)r->mem + r->next;

	assert_true(r->next + 1 < RIG_RING);
	*d = (struct accel_desc){ .op = ACCEL_OP_COPY, .src = src, .dst = dst, .len = len };
	r->next++;
	reg32(r, ACCEL_REG_RING_TAIL, r->next);
	return wait_done(d);
}

static void rig_down(struct rig *r)
{
	sci_error_t err;

	reg32(r, ACCEL_REG_CTRL, 0);
	SCIUnmapSegment(r->rmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(r->bar, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapLocalSegmentForDevice(r->lseg, 0, r->dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(r->dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(r->lmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(r->lseg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(r->sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* Bounded read of one byte (-1 on timeout or EOF). */
static int pipe_get(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char c;

	if (poll(&p, 1, ms) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c;
}

#define LENDER_SEG  0x5ea0u

/*
 * Host 1 (lender A) owns a segment: a child process creates it and makes it
 * available, reports 0 (or an error step) on up, and keeps it until down
 * closes.
 */
static pid_t lender_owner(int *to, int *from)
{
	int down[2], up[2];
	pid_t pid;

	assert_int_equal(pipe(down), 0);
	assert_int_equal(pipe(up), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		sci_local_segment_t s;
		sci_error_t err;
		sci_desc_t sd;
		unsigned char c = 0;

		close(down[1]);
		close(up[0]);
		SCITerminate();
		setenv("SMARTIO_HOST", "1", 1);
		SCIInitialize(0, &err);
		if (err == SCI_ERR_OK)
			SCIOpen(&sd, 0, &err);
		c = err ? 1 : 0;
		if (!c) {
			SCICreateSegment(sd, &s, LENDER_SEG, RIG_SIZE, NULL, NULL, 0, &err);
			c = err ? 2 : 0;
		}
		if (!c) {
			SCIPrepareSegment(s, 0, 0, &err);
			c = err ? 3 : 0;
		}
		if (!c) {
			SCISetSegmentAvailable(s, 0, 0, &err);
			c = err ? 4 : 0;
		}
		if (write(up[1], &c, 1) != 1 || c)
			_exit(1);
		(void)pipe_get(down[0], 20000);
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	*to = down[1];
	*from = up[0];
	return pid;
}

/* The accelerator writes into the lender's RAM (and reads it back). */
static void test_accel_dma_lender_ram(void **state)
{
	sci_remote_segment_t rs;
	sci_map_t map;
	volatile uint8_t *rmem;
	uint8_t buf[RIG_LEN];
	sci_ioaddr_t rio;
	sci_error_t err;
	struct rig r;
	int to, from, st;
	pid_t pid;

	pid = lender_owner(&to, &from);
	assert_int_equal(pipe_get(from, 10000), 0);
	rig_up(&r, NODE_A, "gpu0", 0x5ea1);

	SCIConnectSegment(r.sd, &rs, NODE_A, LENDER_SEG, 0, NULL, NULL, 5000, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	rmem = SCIMapRemoteSegment(rs, &map, 0, RIG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIMapRemoteSegmentForDevice(rs, r.dv, &rio, 0, 2 * RIG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OUT_OF_RANGE);
	SCIMapRemoteSegmentForDevice(rs, r.dv, &rio, 0, RIG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_not_equal(rio, 0);
	/* Pinned while the device may use it. */
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	rmem = SCIMapRemoteSegment(rs, &map, 0, RIG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < RIG_SIZE; i++)
		rmem[i] = 0;

	/* Host 0 -> lender RAM, through the address the mapping gave. */
	assert_int_equal(rig_copy(&r, r.io + RIG_SRC, rio + 0x2000, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	for (size_t i = 0; i < RIG_LEN; i++)
		buf[i] = rmem[0x2000 + i];
	assert_memory_equal(buf, r.mem + RIG_SRC, RIG_LEN);
	assert_int_equal(rmem[0x1fff], 0);
	assert_int_equal(rmem[0x2000 + RIG_LEN], 0);
	/* And back: lender RAM -> host 0. */
	assert_int_equal(rig_copy(&r, rio + 0x2000, r.io + RIG_SPARE, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	assert_memory_equal(r.mem + RIG_SPARE, r.mem + RIG_SRC, RIG_LEN);

	SCIUnmapRemoteSegmentForDevice(rs, r.dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	rig_down(&r);
	close(to);
	close(from);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Peer-to-peer: gpu0 writes into gpu1's BAR2 (both at lender A). */
static void test_accel_dma_p2p(void **state)
{
	sci_smartio_device_t g1;
	sci_remote_segment_t b2;
	sci_map_t map;
	volatile uint8_t *g1mem;
	uint8_t buf[RIG_LEN];
	sci_ioaddr_t pio;
	sci_error_t err;
	struct rig r;

	rig_up(&r, NODE_A, "gpu0", 0x5ea2);
	SCIBorrowDevice(r.sd, &g1, sh_find_device(r.sd, NODE_A, "gpu1"), 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(g1, &b2, ACCEL_BAR_MEM, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(SCIGetRemoteSegmentSize(b2) >= RIG_SIZE);
	g1mem = SCIMapRemoteSegment(b2, &map, 0, RIG_SIZE, NULL, SCI_FLAG_IO_MAP_IOSPACE, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < RIG_SIZE; i++)
		g1mem[i] = 0;
	SCIMapRemoteSegmentForDevice(b2, r.dv, &pio, 0, RIG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_not_equal(pio, 0);

	assert_int_equal(rig_copy(&r, r.io + RIG_SRC, pio + 0x100, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	for (size_t i = 0; i < RIG_LEN; i++)
		buf[i] = g1mem[0x100 + i];
	assert_memory_equal(buf, r.mem + RIG_SRC, RIG_LEN);
	assert_int_equal(g1mem[0xff], 0);
	assert_int_equal(g1mem[0x100 + RIG_LEN], 0);
	/* A peer-to-peer read back into host 0. */
	assert_int_equal(rig_copy(&r, pio + 0x100, r.io + RIG_SPARE, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	assert_memory_equal(r.mem + RIG_SPARE, r.mem + RIG_SRC, RIG_LEN);

	/* gpu1 is not returned while mapped for gpu0 (its BAR is connected). */
	SCIReturnDevice(g1, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIUnmapRemoteSegmentForDevice(b2, r.dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(b2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(g1, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	rig_down(&r);
}

/* `smartio iommu --host H faults`: the total count (-1 on failure). */
static long long iommu_faults(const char *host)
{
	char *argv[] = { sh_cli, (char *)"iommu", (char *)"--host", (char *)host,
			 (char *)"faults", NULL };
	posix_spawn_file_actions_t fa;
	char out[4096];
	size_t n = 0;
	long long total = -1;
	ssize_t k;
	pid_t pid;
	int p[2], st;

	if (pipe(p))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	if (posix_spawn(&pid, sh_cli, &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	while (n < sizeof(out) - 1) {
		struct pollfd q = { .fd = p[0], .events = POLLIN };

		if (poll(&q, 1, 10000) != 1)
			break;
		k = read(p[0], out + n, sizeof(out) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	out[n] = '\0';
	close(p[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	if (sscanf(out, "%lld faults in total", &total) != 1)
		return -1;
	return total;
}

/*
 * DMA outside every mapped window is blocked: at lender A (no IOMMU) by the
 * NTB's look-up table (an unprogrammed entry: Unsupported Request), at
 * lender B by its IOMMU (a fault, recorded), even within the LUT entry.
 */
static void test_accel_dma_blocked(void **state)
{
	const uint64_t ntb_bar = 8ull << 30;    /* default topology: 64 x 128 MiB */
	long long before, after;
	uint32_t st;
	struct rig r;

	/* Lender A: the BAR's last LUT entry is not programmed. */
	rig_up(&r, NODE_A, "gpu0", 0x5ea3);
	st = rig_copy(&r, r.io + RIG_SRC, (r.io | (ntb_bar - 1)) - 0xfff, 0x1000);
	assert_int_equal(ACCEL_ST_CODE(st), ACCEL_SC_WRITE_FAULT);
	assert_int_equal(ACCEL_ST_FAB(st), 1);
	/* The engine goes on with the next descriptor. */
	st = rig_copy(&r, r.io + RIG_SRC, r.io + RIG_SPARE, RIG_LEN);
	assert_int_equal(st, ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	assert_memory_equal(r.mem + RIG_SPARE, r.mem + RIG_SRC, RIG_LEN);
	rig_down(&r);

	/* Lender B (IOMMU on): just past the mapped window. */
	before = iommu_faults("2");
	assert_true(before >= 0);
	rig_up(&r, 12, "gpu0", 0x5ea4);
	st = rig_copy(&r, r.io + RIG_SRC, r.io + RIG_SPARE, RIG_LEN);
	assert_int_equal(st, ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	assert_memory_equal(r.mem + RIG_SPARE, r.mem + RIG_SRC, RIG_LEN);
	assert_int_equal(iommu_faults("2"), before);
	st = rig_copy(&r, r.io + RIG_SRC, r.io + RIG_SIZE, 0x1000);
	assert_int_equal(ACCEL_ST_CODE(st), ACCEL_SC_WRITE_FAULT);
	assert_int_equal(ACCEL_ST_FAB(st), 2);
	after = iommu_faults("2");
	assert_true(after > before);
	rig_down(&r);
}

static void test_requester(void **state)
{
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterPCIeRequester(sd, 0, 0x05, 0x00, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterPCIeRequester(sd, 0, 0x05, 0x00, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIRegisterPCIeRequester(sd, 7, 0x05, 0x00, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_ADAPTERNO);
	/* Fill the table: SCI_ERR_NOSPC, never silently dropped. */
	for (unsigned int i = 1; i < 256; i++) {
		SCIRegisterPCIeRequester(sd, 0, 0x06, i, 0, &err);
		if (err != SCI_ERR_OK)
			break;
	}
	assert_int_equal(err, SCI_ERR_NOSPC);
	SCIUnregisterPCIeRequester(sd, 0, 0x05, 0x00, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnregisterPCIeRequester(sd, 0, 0x05, 0x00, 0, &err);
	assert_int_not_equal(err, SCI_ERR_OK);
	/* Closing the descriptor drops the rest. */
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

#define DSEG_SHARED   0x10u
#define DSEG_PRIVATE  0x11u
#define DSEG_NEAR_CPU 0x12u
#define DSEG_SIZE     0x4000u

/* A host-2 borrower of the same NVMe: the exit code says how far it got. */
static void dseg_child(unsigned int fdid)
{
	sci_smartio_device_t dv;
	sci_remote_segment_t rs;
	volatile uint8_t *p;
	sci_error_t err;
	sci_map_t map;
	sci_desc_t sd;

	setenv("SMARTIO_HOST", "2", 1);
	SCITerminate();
	SCIInitialize(0, &err);
	if (err)
		_exit(1);
	SCIOpen(&sd, 0, &err);
	if (err)
		_exit(1);
	SCIBorrowDevice(sd, &dv, fdid, 0, &err);
	if (err)
		_exit(2);
	/* Private: only its creator finds it; a shared one is not private. */
	SCIConnectDeviceSegment(dv, &rs, DSEG_PRIVATE, SCI_MEMTYPE_PRIVATE, NULL, NULL, 0, &err);
	if (err != SCI_ERR_NO_SUCH_SEGMENT)
		_exit(3);
	SCIConnectDeviceSegment(dv, &rs, DSEG_SHARED, SCI_MEMTYPE_PRIVATE, NULL, NULL, 0, &err);
	if (err != SCI_ERR_NO_SUCH_SEGMENT)
		_exit(4);
	SCIConnectDeviceSegment(dv, &rs, DSEG_SHARED, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	if (err)
		_exit(5);
	if (SCIGetRemoteSegmentNodeId(rs) != NODE_A)
		_exit(6);
	p = SCIMapRemoteSegment(rs, &map, 0, DSEG_SIZE, NULL, 0, &err);
	if (err)
		_exit(7);
	for (size_t i = 0; i < DSEG_SIZE; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	SCIUnmapSegment(map, 0, &err);
	if (!err)
		SCIDisconnectSegment(rs, 0, &err);
	if (!err)
		SCIReturnDevice(dv, 0, &err);
	if (err)
		_exit(8);
	SCIClose(sd, 0, &err);
	_exit(0);
}

/*
 * Device segments: placed by access hints (HOST_WRITE|DEVICE_READ in lender
 * A's RAM, HOST_READ|DEVICE_WRITE in ours), shared with another borrower on
 * host 2, private to their creator, ids per device, DMA by a borrowed
 * accelerator into one near it, and gone when the creating borrow ends.
 */
static void test_device_segments(void **state)
{
	sci_remote_segment_t sh, pv, nc, ds;
	sci_smartio_device_t dv;
	volatile uint8_t *p, *dmem;
	unsigned int nvme, node;
	uint8_t buf[RIG_LEN];
	sci_map_t map, dmap;
	sci_ioaddr_t dio;
	sci_error_t err;
	sci_desc_t sd;
	struct rig r;
	pid_t pid;
	int st;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	nvme = sh_find_device(sd, NODE_A, "nvme0");
	SCIBorrowDevice(sd, &dv, nvme, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIGetLocalNodeId(0, &node, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	SCICreateDeviceSegment(dv, DSEG_SHARED, DSEG_SIZE, SCI_MEMTYPE_BAR,
			       SCI_MEMACCESS_HOST_WRITE, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCICreateDeviceSegment(dv, DSEG_SHARED, DSEG_SIZE, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_WRITE, 1, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCIConnectDeviceSegment(dv, &sh, DSEG_SHARED, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_SEGMENT);
	SCICreateDeviceSegment(dv, DSEG_SHARED, DSEG_SIZE, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateDeviceSegment(dv, DSEG_SHARED, DSEG_SIZE, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ, 0, &err);
	assert_int_equal(err, SCI_ERR_SEGMENTID_USED);
	SCICreateDeviceSegment(dv, DSEG_PRIVATE, DSEG_SIZE, SCI_MEMTYPE_PRIVATE,
			       SCI_MEMACCESS_DEVICE_READ, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateDeviceSegment(dv, DSEG_NEAR_CPU, DSEG_SIZE, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_READ | SCI_MEMACCESS_DEVICE_WRITE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* Where they landed: lender A's RAM, lender A's RAM, ours. */
	SCIConnectDeviceSegment(dv, &sh, DSEG_SHARED, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(sh), NODE_A);
	assert_true(SCIGetRemoteSegmentSize(sh) >= DSEG_SIZE);
	SCIConnectDeviceSegment(dv, &pv, DSEG_PRIVATE, SCI_MEMTYPE_PRIVATE, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(pv), NODE_A);
	SCIConnectDeviceSegment(dv, &nc, DSEG_NEAR_CPU, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(nc), node);

	p = SCIMapRemoteSegment(sh, &map, 0, DSEG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < DSEG_SIZE; i++)
		p[i] = 0;

	/* Another borrower of the device, on host 2, writes into the shared one. */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		dseg_child(nvme);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	for (size_t i = 0; i < DSEG_SIZE; i++)
		if (p[i] != (uint8_t)(i * 7 + 3))
			fail_msg("byte %zu: %#x", i, p[i]);

	/* Not returned while connected; returning drops the segments. */
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(sh, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(pv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(nc, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIBorrowDevice(sd, &dv, nvme, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &sh, DSEG_SHARED, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_SEGMENT);
	SCIConnectDeviceSegment(dv, &nc, DSEG_NEAR_CPU, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_SEGMENT);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* The accelerator DMAs into a device segment near it (same id, its namespace). */
	rig_up(&r, NODE_A, "gpu0", 0x5ea3);
	SCICreateDeviceSegment(r.dv, DSEG_SHARED, RIG_SIZE, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(r.dv, &ds, DSEG_SHARED, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(ds), NODE_A);
	dmem = SCIMapRemoteSegment(ds, &dmap, 0, RIG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < RIG_SIZE; i++)
		dmem[i] = 0;
	SCIMapRemoteSegmentForDevice(ds, r.dv, &dio, 0, RIG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_not_equal(dio, 0);
	assert_int_equal(rig_copy(&r, r.io + RIG_SRC, dio + 0x1000, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	for (size_t i = 0; i < RIG_LEN; i++)
		buf[i] = dmem[0x1000 + i];
	assert_memory_equal(buf, r.mem + RIG_SRC, RIG_LEN);
	assert_int_equal(dmem[0xfff], 0);
	assert_int_equal(dmem[0x1000 + RIG_LEN], 0);
	assert_int_equal(rig_copy(&r, dio + 0x1000, r.io + RIG_SPARE, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	assert_memory_equal(r.mem + RIG_SPARE, r.mem + RIG_SRC, RIG_LEN);
	SCIUnmapRemoteSegmentForDevice(ds, r.dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(dmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(ds, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	rig_down(&r);
}

/*
 * Dolphin's descriptors are channels of one process: a segment created, and
 * a connection made, through one descriptor can be mapped for a device
 * borrowed through another (a program that keeps a descriptor per purpose).
 */
static void test_other_descriptor(void **state)
{
	sci_local_segment_t seg;
	sci_remote_segment_t rs;
	sci_map_t map, rmap;
	volatile uint8_t *rmem;
	uint8_t buf[RIG_LEN];
	uint8_t *mem;
	sci_ioaddr_t io, rio;
	sci_error_t err;
	sci_desc_t sd2;
	struct rig r;
	int to, from, st;
	pid_t pid;

	pid = lender_owner(&to, &from);
	assert_int_equal(pipe_get(from, 10000), 0);
	rig_up(&r, NODE_A, "gpu0", 0x5eb1);
	SCIOpen(&sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* A local segment of the second descriptor, device borrowed by the first. */
	SCICreateSegment(sd2, &seg, 0x5eb2, RIG_SIZE, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	mem = SCIMapLocalSegment(seg, &map, 0, RIG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	memset(mem, 0, RIG_SIZE);
	SCIMapLocalSegmentForDevice(seg, 0, r.dv, &io, 0, RIG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_not_equal(io, 0);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	assert_int_equal(rig_copy(&r, r.io + RIG_SRC, io + 0x3000, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	assert_memory_equal(mem + 0x3000, r.mem + RIG_SRC, RIG_LEN);
	assert_int_equal(mem[0x2fff], 0);

	/* A connection of the second descriptor, to lender A's RAM. */
	SCIConnectSegment(sd2, &rs, NODE_A, LENDER_SEG, 0, NULL, NULL, 5000, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	rmem = SCIMapRemoteSegment(rs, &rmap, 0, RIG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < RIG_SIZE; i++)
		rmem[i] = 0;
	SCIMapRemoteSegmentForDevice(rs, r.dv, &rio, 0, RIG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(rig_copy(&r, r.io + RIG_SRC, rio + 0x1000, RIG_LEN),
			 ACCEL_ST_MAKE(ACCEL_SC_OK, 0));
	for (size_t i = 0; i < RIG_LEN; i++)
		buf[i] = rmem[0x1000 + i];
	assert_memory_equal(buf, r.mem + RIG_SRC, RIG_LEN);
	SCIUnmapSegment(rmap, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	/* The descriptor keeps its objects: not closed under the device. */
	SCIClose(sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);

	SCIUnmapRemoteSegmentForDevice(rs, r.dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapLocalSegmentForDevice(seg, 0, r.dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	rig_down(&r);
	close(to);
	close(from);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/*
 * A SHARED device segment that no device accesses (the hints name host
 * writes and reads by many hosts only) is where its creator is, as in
 * Dolphin's SISCI: SCIGetRemoteSegmentNodeId names the borrower's node, and
 * the memory works for the hosts.
 */
static void test_device_segment_host_only(void **state)
{
	static const unsigned int hints[] = {
		SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_MULTIHOST_READ,
		SCI_MEMACCESS_MULTIHOST_WRITE,
		SCI_MEMACCESS_HOST_WRITE,
	};
	sci_remote_segment_t sh, sh2;
	sci_smartio_device_t dv;
	volatile uint8_t *p, *q;
	unsigned int nvme, node;
	sci_map_t map, map2;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	nvme = sh_find_device(sd, NODE_A, "nvme0");
	SCIBorrowDevice(sd, &dv, nvme, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIGetLocalNodeId(0, &node, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_not_equal(node, NODE_A);

	for (unsigned int k = 0; k < sizeof(hints) / sizeof(hints[0]); k++) {
		SCICreateDeviceSegment(dv, 0x70 + k, DSEG_SIZE, SCI_MEMTYPE_SHARED, hints[k], 0,
				       &err);
		assert_int_equal(err, SCI_ERR_OK);
		SCIConnectDeviceSegment(dv, &sh, 0x70 + k, SCI_MEMTYPE_SHARED, NULL, NULL, 0,
					&err);
		assert_int_equal(err, SCI_ERR_OK);
		assert_int_equal(SCIGetRemoteSegmentNodeId(sh), node);
		assert_true(SCIGetRemoteSegmentSize(sh) >= DSEG_SIZE);
		/* Host access: what one connection stores, another loads. */
		SCIConnectDeviceSegment(dv, &sh2, 0x70 + k, SCI_MEMTYPE_SHARED, NULL, NULL, 0,
					&err);
		assert_int_equal(err, SCI_ERR_OK);
		p = SCIMapRemoteSegment(sh, &map, 0, DSEG_SIZE, NULL, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		q = SCIMapRemoteSegment(sh2, &map2, 0, DSEG_SIZE, NULL, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		for (size_t i = 0; i < DSEG_SIZE; i++)
			p[i] = (uint8_t)(i * 5 + k);
		SCIStoreBarrier(NULL, 0);
		for (size_t i = 0; i < DSEG_SIZE; i++)
			if (q[i] != (uint8_t)(i * 5 + k))
				fail_msg("hints %#x, byte %zu: %#x", hints[k], i, q[i]);
		SCIUnmapSegment(map2, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		SCIUnmapSegment(map, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		SCIDisconnectSegment(sh2, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		SCIDisconnectSegment(sh, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
	}
	/* A device access named: still next to the device (unchanged). */
	SCICreateDeviceSegment(dv, 0x7f, DSEG_SIZE, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_MULTIHOST_WRITE | SCI_MEMACCESS_DEVICE_READ, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &sh, 0x7f, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(sh), NODE_A);
	SCIDisconnectSegment(sh, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_borrow),
		cmocka_unit_test(test_borrow_lent),
		cmocka_unit_test(test_nvme_bar),
		cmocka_unit_test(test_accel_dma),
		cmocka_unit_test(test_accel_dma_lender_ram),
		cmocka_unit_test(test_accel_dma_p2p),
		cmocka_unit_test(test_accel_dma_blocked),
		cmocka_unit_test(test_requester),
		cmocka_unit_test(test_device_segments),
		cmocka_unit_test(test_other_descriptor),
		cmocka_unit_test(test_device_segment_host_only),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
