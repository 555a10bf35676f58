// SPDX-License-Identifier: MIT
/*
 * SISCI multicast (broadcast) segments against real daemons, on
 * tests/topologies/mcast.yaml: the test process is a program of host 0 and
 * writes to group GROUP; forked programs of hosts 1, 2 (on mxs0) and 3 (on
 * the cascaded mxs1) subscribe a segment each; host 4 (mxs1) has a plain
 * segment of the same id and must never see a byte. Writes: SCIMemCpy,
 * stores through the map pushed by SCIFlush, and SCIStartDmaTransfer. Then
 * host 2 removes its segment (unsubscribes) and gets nothing more.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sisci_harness.h"

#define GROUP     5
#define SEG_SIZE  (64u << 10)
#define PIPE_MS   20000
#define NSUB      4            /* hosts 1..4: three subscribers and one plain segment */

enum { STEP_CHECK = 1, STEP_LEAVE, STEP_EXIT };

struct sub_arg {
	bool member;
	uint32_t host;
};

static struct kid kids[NSUB];

/* The bytes of write number n. */
static void pattern(uint8_t *p, size_t len, uint32_t n)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + n * 7 + 1);
}

/*
 * A subscriber (or, member false, a plain segment with the group's id).
 * Each STEP_CHECK carries the write number to expect (0: expect no change
 * from the 0xee it started with); replies 1 when the segment holds it.
 */
static int sub_body(struct kid *k, void *argp)
{
	const struct sub_arg *a = argp;
	sci_local_segment_t s;
	sci_map_t m;
	sci_desc_t sd;
	sci_error_t err;
	volatile uint8_t *mem;
	uint8_t want[SEG_SIZE];
	bool left = false;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICreateSegment(sd, &s, GROUP, SEG_SIZE, NULL, NULL, a->member ? SCI_FLAG_BROADCAST : 0,
			 &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIPrepareSegment(s, 0, a->member ? SCI_FLAG_BROADCAST : 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCISetSegmentAvailable(s, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	mem = SCIMapLocalSegment(s, &m, 0, SEG_SIZE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	memset((void *)mem, 0xee, SEG_SIZE);
	send_step(k->to, 1);
	for (;;) {
		uint32_t step = recv_step(k->from, PIPE_MS), n;
		bool ok;

		if (step == STEP_EXIT || !step)
			break;
		if (step == STEP_LEAVE) {
			/* Unsubscribe: the segment goes; a plain one takes its place. */
			SCIUnmapSegment(m, 0, &err);
			CHK_ERR(err, SCI_ERR_OK);
			SCIRemoveSegment(s, 0, &err);
			CHK_ERR(err, SCI_ERR_OK);
			SCICreateSegment(sd, &s, GROUP, SEG_SIZE, NULL, NULL, 0, &err);
			CHK_ERR(err, SCI_ERR_OK);
			mem = SCIMapLocalSegment(s, &m, 0, SEG_SIZE, NULL, 0, &err);
			CHK_ERR(err, SCI_ERR_OK);
			memset((void *)mem, 0xee, SEG_SIZE);
			left = true;
			send_step(k->to, 1);
			continue;
		}
		n = recv_step(k->from, PIPE_MS);
		if (n && a->member && !left)
			pattern(want, SEG_SIZE, n);
		else
			memset(want, 0xee, SEG_SIZE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		ok = !memcmp((const void *)mem, want, SEG_SIZE);
		if (!ok)
			fprintf(stderr, "host %u: write %u: byte 0 is %#x, want %#x\n", a->host, n,
				mem[0], want[0]);
		send_step(k->to, ok ? 1 : 2);
	}
	SCIUnmapSegment(m, 0, &err);
	SCIRemoveSegment(s, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	return 0;
}

/* Every subscriber checks write n (hosts that should not have it check for none). */
static void check_all(uint32_t n)
{
	for (int i = 0; i < NSUB; i++) {
		send_step(kids[i].to, STEP_CHECK);
		send_step(kids[i].to, n);
	}
	for (int i = 0; i < NSUB; i++)
		assert_int_equal(recv_step(kids[i].from, PIPE_MS), 1);
}

static int setup(void **state)
{
	const char *b = getenv("SMARTIO_BUILD_DIR"), *src = getenv("SMARTIO_SOURCE_DIR");
	char tmpl[96], topo[PATH_MAX];
	sci_error_t err;

	(void)state;
	snprintf(sh_cli, sizeof(sh_cli), "%s/tools/smartio/smartio", b ? b : "./build");
	snprintf(topo, sizeof(topo), "%s/tests/topologies/mcast.yaml", src ? src : ".");
	snprintf(tmpl, sizeof(tmpl), "/tmp/smartio-mcast-XXXXXX");
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(sh_dir, sizeof(sh_dir), "%s/c", tmpl);
	setenv("SMARTIO_CLUSTER", sh_dir, 1);
	setenv("SMARTIO_HOST", "0", 1);
	if (sh_cluster("up", topo))
		return -1;
	SCIInitialize(0, &err);
	return err == SCI_ERR_OK ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return sh_down();
}

static void test_broadcast_segment(void **state)
{
	static struct sub_arg args[NSUB] = {
		{ .member = true, .host = 1 }, { .member = true, .host = 2 },
		{ .member = true, .host = 3 }, { .member = false, .host = 4 },
	};
	static const char *hosts[NSUB] = { "1", "2", "3", "4" };
	static uint8_t buf[SEG_SIZE];
	sci_remote_segment_t r;
	sci_local_segment_t ls;
	sci_sequence_t seq;
	sci_dma_queue_t dq;
	sci_map_t rm, lm;
	sci_desc_t sd;
	sci_error_t err;
	volatile uint8_t *w;
	uint8_t *lmem;

	(void)state;
	for (int i = 0; i < NSUB; i++) {
		kids[i] = spawn_on(hosts[i], sub_body, &args[i]);
		assert_int_equal(recv_step(kids[i].from, PIPE_MS), 1);
	}
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* A group beyond the switch's 16: refused. */
	SCIConnectSegment(sd, &r, DIS_BROADCAST_NODEID_GROUP_ALL, 16, 0, NULL, NULL, 0,
			  SCI_FLAG_BROADCAST, &err);
	assert_int_equal(err, SCI_ERR_OUT_OF_RANGE);
	SCIConnectSegment(sd, &r, DIS_BROADCAST_NODEID_GROUP_ALL, GROUP, 0, NULL, NULL, 0,
			  SCI_FLAG_BROADCAST, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIGetRemoteSegmentSize(r), 1u << 20);
	w = SCIMapRemoteSegment(r, &rm, 0, SEG_SIZE, NULL, SCI_FLAG_BROADCAST, &err);
	assert_int_equal(err, SCI_ERR_OK);
	check_all(0);

	/* 1: SCIMemCpy lands in every subscriber, across the cascade too. */
	pattern(buf, SEG_SIZE, 1);
	SCIMemCpy(NULL, buf, rm, 0, SEG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	check_all(1);
	/* A group is never read. */
	SCIMemCpy(NULL, buf, rm, 0, 64, SCI_FLAG_BLOCK_READ, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);

	/* 2: stores through the map, pushed at the sequence's flush. */
	SCICreateMapSequence(rm, &seq, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	pattern(buf, SEG_SIZE, 2);
	memcpy((void *)w, buf, SEG_SIZE);
	SCIFlush(seq, 0);
	check_all(2);
	SCIRemoveSequence(seq, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* 3: the adapter's DMA engine from a local segment. */
	SCICreateSegment(sd, &ls, 0x3c3, SEG_SIZE, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIPrepareSegment(ls, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	lmem = (uint8_t *)SCIMapLocalSegment(ls, &lm, 0, SEG_SIZE, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	pattern(lmem, SEG_SIZE, 3);
	SCICreateDMAQueue(sd, &dq, 0, 4, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIStartDmaTransfer(dq, ls, r, 0, SEG_SIZE, 0, NULL, NULL, SCI_FLAG_DMA_WAIT, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIWaitForDMAQueue(dq, 1000, 0, &err), SCI_DMAQUEUE_DONE);
	check_all(3);
	SCIStartDmaTransfer(dq, ls, r, 0, 64, 0, NULL, NULL,
			    SCI_FLAG_DMA_WAIT | SCI_FLAG_DMA_READ, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);

	/* 4: host 2 unsubscribes (removes its segment): it gets nothing more. */
	send_step(kids[1].to, STEP_LEAVE);
	assert_int_equal(recv_step(kids[1].from, PIPE_MS), 1);
	pattern(buf, SEG_SIZE, 4);
	SCIMemCpy(NULL, buf, rm, 0, SEG_SIZE, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	check_all(4);

	SCIRemoveDMAQueue(dq, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(lm, 0, &err);
	SCIRemoveSegment(ls, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIUnmapSegment(rm, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(r, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (int i = 0; i < NSUB; i++) {
		send_step(kids[i].to, STEP_EXIT);
		join(&kids[i], PIPE_MS);
	}
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_broadcast_segment),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
