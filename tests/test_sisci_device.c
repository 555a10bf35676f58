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
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sisci_api.h"
#include "devices/accel/accel_regs.h"

extern char **environ;

#define NODE_A      8          /* lender-a */
#define CLASS_NVME  0x010802u

static char dir[PATH_MAX], cli[PATH_MAX];

static int run_cli(const char *a1)
{
	char *argv[] = { cli, (char *)"cluster", (char *)a1, NULL };
	pid_t pid;
	int st;

	if (posix_spawn(&pid, cli, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int group_setup(void **state)
{
	const char *b = getenv("SMARTIO_BUILD_DIR");
	char tmpl[] = "/tmp/smartio-sdev-XXXXXX";
	sci_error_t err;

	snprintf(cli, sizeof(cli), "%s/tools/smartio/smartio", b ? b : "./build");
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(dir, sizeof(dir), "%s/c", tmpl);
	setenv("SMARTIO_CLUSTER", dir, 1);
	setenv("SMARTIO_HOST", "0", 1);
	if (run_cli("up"))
		return -1;
	SCIInitialize(0, &err);
	return err == SCI_ERR_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
	char parent[PATH_MAX];
	int rc;

	SCITerminate();
	rc = run_cli("down");
	snprintf(parent, sizeof(parent), "%s", dir);
	*strrchr(parent, '/') = '\0';
	rmdir(parent);
	return rc == 0 ? 0 : -1;
}

static unsigned int find(sci_desc_t sd, unsigned int node, const char *name)
{
	sci_smartio_device_info_t f;
	unsigned int ids[8];
	sci_error_t err;
	unsigned int n;

	memset(&f, 0, sizeof(f));
	f.nodeid = node;
	snprintf(f.user_name, sizeof(f.user_name), "%s", name);
	n = SCIGetDeviceList(sd, ids, 8, &f, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(n, 1);
	return ids[0];
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
	static const sci_error_t codes[] = { SCI_ERR_OK, SCI_ERR_BUSY, SCI_ERR_NO_SUCH_FDID };
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
	gpu1 = find(sd, NODE_A, "gpu1");
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
	SCIBorrowDevice(sd, &b, gpu1, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	assert_int_equal(borrow_elsewhere(gpu1, 0), SCI_ERR_BUSY);
	/* Downgraded: shared borrows are fine, exclusive ones are not. */
	SCIReleaseExclusiveBorrow(a, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(borrow_elsewhere(gpu1, 0), SCI_ERR_OK);
	SCIBorrowDevice(sd, &b, gpu1, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(borrow_elsewhere(gpu1, SCI_FLAG_EXCLUSIVE), SCI_ERR_BUSY);
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
	nvme = find(sd, NODE_A, "nvme0");
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait (bounded) for a descriptor's DONE bit. */
static uint32_t wait_done(volatile struct accel_desc *d)
{
	uint64_t end = now_ms() + 10000;
	uint32_t st;

	while (!((st = __atomic_load_n(&d->status, __ATOMIC_ACQUIRE)) & ACCEL_ST_DONE) &&
	       now_ms() < end)
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
	gpu0 = find(sd, NODE_A, "gpu0");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_borrow),
		cmocka_unit_test(test_nvme_bar),
		cmocka_unit_test(test_accel_dma),
		cmocka_unit_test(test_requester),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
