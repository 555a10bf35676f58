// SPDX-License-Identifier: MIT
/*
 * Memory for empty segments against real daemons (default cluster, started
 * with the smartio CLI): SCIRegisterSegmentMemory makes a program's own
 * buffer on host 1 (node 8) the segment's memory, SCIAttachPhysicalMemory
 * backs a segment with host 1's accelerator BAR. Forked children are
 * programs of host 0 (node 4) that connect to them through the NTB.
 *
 * A child must not return into cmocka: it checks with CHK() and reports
 * through its exit status; the parent waits for it with a bounded wait.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "sisci_harness.h"

#define PAGE		4096u
#define OWNER_NODE	8         /* host 1 */
#define USER_HOST	"0"       /* node 4 */
#define WAIT_MS		30000     /* bound on every wait (sanitizer builds are slow) */
#define REG_ID		0x300
#define BAR_ID		0x310

/* ---------- plumbing ---------- */

static int group_setup(void **state)
{
	return sh_up("sisci-reg", "1", true);
}

static int group_teardown(void **state)
{
	return sh_down();
}

/* Fork a child that runs fn as a program of host 0 (a fresh SCIInitialize). */
static struct kid spawn_user(int (*fn)(struct kid *k, void *arg), void *arg)
{
	return spawn_on(USER_HOST, fn, arg);
}

/* Fill/check a word pattern. */
static void fill(volatile uint32_t *p, size_t words, uint32_t seed)
{
	for (size_t i = 0; i < words; i++)
		p[i] = seed ^ (uint32_t)(i * 2654435761u);
}

static bool check(const volatile uint32_t *p, size_t words, uint32_t seed)
{
	for (size_t i = 0; i < words; i++)
		if (p[i] != (seed ^ (uint32_t)(i * 2654435761u)))
			return false;
	return true;
}

/* Bus address of host 1's gpu0 BAR2, as enumeration programmed it (smartio route). */
static uint64_t gpu0_bar2(void)
{
	char cmd[PATH_MAX + 64], line[256];
	unsigned long long addr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s route --host 1 --addr gpu0:bar2", sh_cli);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "route on host %*u: write to %llx", &addr) == 1)
			break;
	while (fgets(line, sizeof(line), f))
		;
	pclose(f);
	return addr;
}

struct peer_arg {
	unsigned int segid;
	size_t size;
	uint32_t seed;            /* what the child expects to find, 0: do not check */
	uint32_t seed2, seed3;    /* what it writes at steps 1 and 3 */
};

/*
 * Connect to the segment on host 1, check its contents, write seed2 (step 1),
 * and when told (step 2), write seed3 (step 3); then wait for step 4.
 */
static int peer_user(struct kid *k, void *arg)
{
	const struct peer_arg *a = arg;
	sci_remote_segment_t rs;
	volatile uint32_t *rp;
	size_t words = a->size / 4;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &rs, OWNER_NODE, a->segid, 0, NULL, NULL, WAIT_MS, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(SCIGetRemoteSegmentSize(rs) == a->size);
	rp = SCIMapRemoteSegment(rs, &map, 0, a->size, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	if (a->seed)
		CHK(check(rp, words, a->seed));
	fill(rp, words, a->seed2);
	send_step(k->to, 1);
	CHK(recv_step(k->from, WAIT_MS) == 2);
	fill(rp, words, a->seed3);
	send_step(k->to, 3);
	CHK(recv_step(k->from, WAIT_MS) == 4);
	SCIUnmapSegment(map, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

/* ---------- 1. a registered buffer, seen and written from another host ---------- */

static void test_register(void **state)
{
	const size_t size = 4 * PAGE, words = size / 4;
	struct peer_arg a = { .segid = REG_ID, .size = size, .seed = 0x1234abcd,
			      .seed2 = 0x5a5a0001, .seed3 = 0xc3c30002 };
	sci_query_local_segment_t ql = { 0 };
	sci_local_segment_t seg;
	volatile uint32_t *lp;
	uint32_t *buf;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	char perms[5];
	struct kid k;

	buf = aligned_alloc(PAGE, size);
	assert_non_null(buf);
	fill(buf, words, a.seed);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &seg, REG_ID, size, NULL, NULL, SCI_FLAG_EMPTY, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterSegmentMemory(buf, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* Same address, same contents, now shared with the segment's RAM. */
	assert_true(check(buf, words, a.seed));
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-s");
	assert_int_equal(SCIGetLocalSegmentSize(seg), size);
	ql.segment = seg;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_IOADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(ql.data.ioaddr != 0);
	/* It has memory now: a second registration is refused. */
	SCIRegisterSegmentMemory(buf, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	/* A map of the segment is the same memory as the buffer. */
	lp = SCIMapLocalSegment(seg, &map, 0, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	buf[7] = 0xfeedf00d;
	assert_int_equal(lp[7], 0xfeedf00d);
	buf[7] = a.seed ^ (uint32_t)(7 * 2654435761u);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	k = spawn_user(peer_user, &a);
	assert_int_equal(recv_step(k.from, WAIT_MS), 1);
	assert_true(check(buf, words, a.seed2));       /* host 0's stores, in our buffer */
	/* Connected: removal refused, and the buffer stays the segment's memory. */
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-s");
	send_step(k.to, 2);
	assert_int_equal(recv_step(k.from, WAIT_MS), 3);
	assert_true(check(buf, words, a.seed3));
	send_step(k.to, 4);
	join(&k, WAIT_MS);

	/* Removed: the buffer keeps what it held, in private memory again. */
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_true(check(buf, words, a.seed3));
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-p");
	buf[0] = 1;
	assert_int_equal(buf[0], 1);
	free(buf);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 2. misuse ---------- */

static void test_register_errors(void **state)
{
	const size_t size = 2 * PAGE;
	sci_local_segment_t seg, full;
	char *buf = aligned_alloc(PAGE, 2 * size);
	sci_error_t err;
	sci_desc_t sd;
	char perms[5];

	assert_non_null(buf);
	memset(buf, 0x77, 2 * size);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &seg, 0, size, NULL, NULL, SCI_FLAG_EMPTY | SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterSegmentMemory(buf + 8, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIRegisterSegmentMemory(NULL, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIRegisterSegmentMemory(buf, size - 100, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_SIZE_ALIGNMENT);
	SCIRegisterSegmentMemory(buf, 0, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_SIZE_ALIGNMENT);
	SCIRegisterSegmentMemory(buf, size, seg, 0x40000000u, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCIRegisterSegmentMemory(buf, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	/* A segment with memory of its own takes no more. */
	SCICreateSegment(sd, &full, 0, size, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRegisterSegmentMemory(buf, size, full, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	SCIAttachPhysicalMemory(0x100000, NULL, 0, size, full, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);
	/* Nothing happened to the buffer. */
	assert_true(map_perms(buf, perms));
	assert_string_equal(perms, "rw-p");
	for (size_t i = 0; i < 2 * size; i++)
		if (buf[i] != 0x77)
			fail_msg("byte %zu changed", i);
	/* The empty one still is: registering works, removing unregisters. */
	SCIRegisterSegmentMemory(buf + size, size, seg, SCI_FLAG_LOCK_USER_MEM, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(full, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (size_t i = 0; i < 2 * size; i++)
		if (buf[i] != 0x77)
			fail_msg("byte %zu changed", i);
	free(buf);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- 3. an accelerator's BAR as a segment ---------- */

static void test_attach_bar(void **state)
{
	const size_t size = 2 * PAGE, words = size / 4;
	struct peer_arg a = { .segid = BAR_ID, .size = size, .seed2 = 0x0badcafe,
			      .seed3 = 0x600dd00d };
	sci_query_local_segment_t ql = { 0 };
	sci_local_segment_t seg, other, ram, alias;
	uint64_t bar = gpu0_bar2();
	volatile uint32_t *lp;
	sci_map_t map;
	sci_error_t err;
	sci_desc_t sd;
	struct kid k;

	assert_true(bar != 0);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &seg, BAR_ID, size, NULL, NULL, SCI_FLAG_EMPTY, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIAttachPhysicalMemory(bar, NULL, 1, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);        /* one bus: 0 */
	SCIAttachPhysicalMemory(bar + 8, NULL, 0, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIAttachPhysicalMemory(bar, NULL, 0, size + 1, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_SIZE_ALIGNMENT);
	/* Host RAM no segment of ours holds: refused. */
	SCIAttachPhysicalMemory(0x100000, NULL, 0, size, seg, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);
	SCIAttachPhysicalMemory(bar, NULL, 0, size, seg, SCI_FLAG_PHYSICAL, &err);
	assert_int_equal(err, SCI_ERR_OK);
	ql.segment = seg;
	ql.subcommand = SCI_Q_LOCAL_SEGMENT_IOADDR;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(ql.data.ioaddr, bar);
	/* The same device memory cannot be two segments. */
	SCICreateSegment(sd, &other, 0, size, NULL, NULL, SCI_FLAG_EMPTY | SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIAttachPhysicalMemory(bar + PAGE, NULL, 0, PAGE, other, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);

	/* RAM of a segment of ours may be attached (an alias of part of it). */
	SCICreateSegment(sd, &ram, 0, 4 * PAGE, NULL, NULL, SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	ql.segment = ram;
	SCIQuery(SCI_Q_LOCAL_SEGMENT, &ql, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateSegment(sd, &alias, 0, PAGE, NULL, NULL, SCI_FLAG_EMPTY | SCI_FLAG_AUTO_ID, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIAttachPhysicalMemory(ql.data.ioaddr + 3 * PAGE, NULL, 0, 2 * PAGE, alias, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_ADDRESS);          /* runs past its end */
	SCIAttachPhysicalMemory(ql.data.ioaddr + PAGE, NULL, 0, PAGE, alias, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(ram, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);                     /* the alias lies in it */
	SCIRemoveSegment(alias, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(ram, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* The BAR, mapped here, and written from host 0 through the NTB. */
	lp = SCIMapLocalSegment(seg, &map, 0, size, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	fill(lp, words, 0);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	k = spawn_user(peer_user, &a);
	assert_int_equal(recv_step(k.from, WAIT_MS), 1);
	assert_true(check(lp, words, a.seed2));
	send_step(k.to, 2);
	assert_int_equal(recv_step(k.from, WAIT_MS), 3);
	assert_true(check(lp, words, a.seed3));
	send_step(k.to, 4);
	join(&k, WAIT_MS);
	SCIUnmapSegment(map, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* Removed: the device memory may be attached again. */
	SCIAttachPhysicalMemory(bar + PAGE, NULL, 0, PAGE, other, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveSegment(other, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_register_errors),
		cmocka_unit_test(test_attach_bar),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
