// SPDX-License-Identifier: MIT
/*
 * SISCI device segments of a device lent with Device Lending (issue 14,
 * deliver 5): the test process is host 0, which borrows lender A's
 * accelerator with `smartio borrow`; its accelerator driver binds to the
 * shadow and uses the device. A host-2 SISCI program then borrows the same
 * device (a shared "guest" borrow), maps its memory BAR (BAR2) and writes a
 * pattern that the borrower's driver checksums on the device; the driver's
 * own fill is read back by the host-2 program. The registers (BAR0), an
 * exclusive borrow, device-side mappings and device segments are refused.
 * Also: device segments placed by hints in the device's own memory.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sisci_harness.h"

#define NODE_A     8              /* lender-a */
#define LEN        65536u         /* bytes written by host 2 at BAR2 offset 0 */
#define FILL_OFF   0x10000u       /* where the borrower's driver fills */
#define FILL_PAT   0x0123456789abcdefull

static int group_setup(void **state)
{
	return sh_up("slent", "0", false);
}

static int group_teardown(void **state)
{
	return sh_down();
}

/* The CLI's output (first line matching prefix, the rest after it) into out. */
static int cli_line(const char *args, const char *prefix, char *out, size_t cap)
{
	char cmd[PATH_MAX + 256], line[512];
	size_t pl = strlen(prefix);
	int found = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s", sh_cli, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (found && strstr(line, prefix)) {
			snprintf(out, cap, "%s", strstr(line, prefix) + pl);
			out[strcspn(out, "\n")] = 0;
			found = 0;
		}
	return pclose(f) == 0 ? found : -1;
}

/* CRC32C (Castagnoli, reflected), bitwise: the reference for the device's checksum. */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 13 + 5);
}

/* Host 2: a SISCI program that shares the lent accelerator's memory. */
static int guest(struct kid *k, void *arg)
{
	unsigned int fdid = *(unsigned int *)arg;
	sci_smartio_device_t dv, x;
	sci_remote_segment_t regs, mem;
	sci_local_segment_t ls;
	volatile uint8_t *p;
	sci_ioaddr_t io;
	sci_error_t err;
	sci_map_t map;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	/* Exclusive: the lend holds it. Shared: a guest borrow. */
	SCIBorrowDevice(sd, &x, fdid, SCI_FLAG_EXCLUSIVE, &err);
	CHK_ERR(err, SCI_ERR_NOT_AVAILABLE);
	SCIBorrowDevice(sd, &dv, fdid, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	/* The registers stay the borrower's. */
	SCIConnectDeviceSegment(dv, &regs, 0, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_ACCESS);
	/* So does the device's DMA, and memory made for it. */
	SCICreateSegment(sd, &ls, 0x1e47, 4096, NULL, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIMapLocalSegmentForDevice(ls, 0, dv, &io, 0, 4096, 0, &err);
	CHK_ERR(err, SCI_ERR_ACCESS);
	SCICreateDeviceSegment(dv, 7, 4096, SCI_MEMTYPE_SHARED, SCI_MEMACCESS_HOST_WRITE, 0, &err);
	CHK_ERR(err, SCI_ERR_ACCESS);
	/* The memory BAR: mapped across the fabric while the driver uses the device. */
	SCIConnectDeviceSegment(dv, &mem, 2, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(SCIGetRemoteSegmentNodeId(mem) == NODE_A);
	p = SCIMapRemoteSegment(mem, &map, 0, FILL_OFF + LEN, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	/* What the borrower's driver filled. */
	for (size_t i = 0; i < LEN; i += 8)
		CHK(*(volatile uint64_t *)(p + FILL_OFF + i) == FILL_PAT);
	for (size_t i = 0; i < LEN; i++)
		p[i] = pat(i);
	send_step(k->to, 1);
	CHK(recv_step(k->from, 20000) == 2);
	SCIUnmapSegment(map, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(mem, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIRemoveSegment(ls, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

static void test_lent_memory_bar(void **state)
{
	static uint8_t want[LEN];
	char args[256], bdf[64], crc[64], fdids[16];
	unsigned int fdid;
	sci_error_t err;
	struct kid k;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	fdid = sh_find_device(sd, NODE_A, "gpu0");
	SCIClose(sd, 0, &err);
	snprintf(fdids, sizeof(fdids), "%#x", fdid);

	/* Host 0 borrows it with Device Lending; its accelerator driver binds. */
	snprintf(args, sizeof(args), "borrow %s --host 0", fdids);
	assert_int_equal(cli_line(args, " is ", bdf, sizeof(bdf)), 0);
	bdf[strcspn(bdf, ",")] = 0;
	snprintf(args, sizeof(args),
		 "accel fill --host 0 --dev %s --dst dev:%#x --len %u --pattern %#llx", bdf,
		 FILL_OFF, LEN, FILL_PAT);
	assert_int_equal(cli_line(args, "", crc, sizeof(crc)), 0);

	k = spawn_on("2", guest, &fdid);
	assert_int_equal(recv_step(k.from, 20000), 1);
	/* The borrower's driver has the device checksum what host 2 wrote. */
	for (size_t i = 0; i < LEN; i++)
		want[i] = pat(i);
	snprintf(args, sizeof(args), "accel checksum --host 0 --dev %s --src dev:0 --len %u",
		 bdf, LEN);
	assert_int_equal(cli_line(args, "crc32c ", crc, sizeof(crc)), 0);
	assert_int_equal(strtoul(crc, NULL, 0), crc32c(want, LEN));
	send_step(k.to, 2);
	join(&k, 20000);

	/* The lend returns as before (the guest's borrow is gone with it). */
	assert_int_equal(sh_run((char *const[]){ sh_cli, "return", fdids, "--host", "0",
						 "--unbind", NULL }), 0);
}

/*
 * Deliver 4: a device segment whose hints put it near the device
 * (HOST_WRITE | DEVICE_READ) is placed in the accelerator's own memory (BAR2,
 * from the top down), seen through the BAR at the same bytes; one near the
 * CPU stays in the borrower's RAM; a device without a memory BAR (the NVMe
 * without a CMB) gets the lender's RAM as before.
 */
static void test_place_in_device_memory(void **state)
{
	const size_t len = 65536;
	sci_remote_segment_t ds, ds2, bar;
	sci_smartio_device_t dv;
	volatile uint8_t *p, *p2, *b;
	sci_map_t m, m2, mb;
	unsigned int gpu1;
	sci_error_t err;
	sci_desc_t sd;
	size_t barsz;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	gpu1 = sh_find_device(sd, NODE_A, "gpu1");
	SCIBorrowDevice(sd, &dv, gpu1, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateDeviceSegment(dv, 1, len, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateDeviceSegment(dv, 2, len, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &ds, 1, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &ds2, 2, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(ds), NODE_A);
	assert_int_equal(SCIGetRemoteSegmentSize(ds), len);
	SCIConnectDeviceSegment(dv, &bar, 2, SCI_MEMTYPE_BAR, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	barsz = SCIGetRemoteSegmentSize(bar);
	p = SCIMapRemoteSegment(ds, &m, 0, len, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	p2 = SCIMapRemoteSegment(ds2, &m2, 0, len, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	b = SCIMapRemoteSegment(bar, &mb, barsz - 2 * len, 2 * len, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < len; i++) {
		p[i] = pat(i);
		p2[i] = (uint8_t)~pat(i);
	}
	/* The first at the top of the device's memory, the second just below. */
	for (size_t i = 0; i < len; i++) {
		assert_int_equal(b[len + i], pat(i));
		assert_int_equal(b[i], (uint8_t)~pat(i));
	}
	SCIUnmapSegment(mb, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(m2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(m, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(bar, 0, &err);
	SCIDisconnectSegment(ds2, 0, &err);
	SCIDisconnectSegment(ds, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* Near the CPU: the borrower's RAM (this host, node 4). */
	SCICreateDeviceSegment(dv, 3, len, SCI_MEMTYPE_SHARED,
			       SCI_MEMACCESS_HOST_READ | SCI_MEMACCESS_DEVICE_WRITE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &ds, 3, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentNodeId(ds), 4);
	SCIDisconnectSegment(ds, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lent_memory_bar),
		cmocka_unit_test(test_place_in_device_memory),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
