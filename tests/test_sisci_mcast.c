// SPDX-License-Identifier: MIT
/*
 * SISCI multicast (broadcast) segments against real daemons, on
 * tests/topologies/mcast.yaml: the test process is a program of host 0 and
 * writes to group GROUP; forked programs of hosts 1, 2 (on mxs0) and 3 (on
 * the cascaded mxs1) subscribe a segment each; host 4 (mxs1) has a plain
 * segment of the same id and must never see a byte. Writes: SCIMemCpy,
 * stores through the map pushed by SCIFlush, and SCIStartDmaTransfer. Then
 * host 2 removes its segment (unsubscribes) and gets nothing more.
 *
 * The multicast Identify: the test process runs the NVMe manager for host
 * 0's controller; a client on host 4 asks for a unicast Identify Controller,
 * then for one written to group ID_GROUP, which hosts 1-3 subscribe: each
 * subscriber's 4 KiB must equal the unicast copy, host 4's segment of the
 * same ID (not subscribed) must be untouched.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <pthread.h>

#include "sisci_harness.h"
#include "smartio/nvme.h"

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

/* ---------- the multicast Identify ---------- */

#define ID_GROUP 7
#define ID_SIZE  4096

/* A subscriber of ID_GROUP (member) or a plain segment of that ID: the bytes it must hold come down the pipe. */
static int id_sub_body(struct kid *k, void *argp)
{
	const struct sub_arg *a = argp;
	sci_local_segment_t s;
	sci_map_t m;
	sci_desc_t sd;
	sci_error_t err;
	volatile uint8_t *mem;
	uint8_t want[ID_SIZE];
	struct pollfd p = { .fd = k->from, .events = POLLIN };
	size_t got = 0;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICreateSegment(sd, &s, ID_GROUP, ID_SIZE, NULL, NULL,
			 a->member ? SCI_FLAG_BROADCAST : 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIPrepareSegment(s, 0, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	mem = SCIMapLocalSegment(s, &m, 0, ID_SIZE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	memset((void *)mem, 0xee, ID_SIZE);
	send_step(k->to, 1);
	while (got < ID_SIZE && poll(&p, 1, PIPE_MS) == 1) {
		ssize_t n = read(k->from, want + got, ID_SIZE - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	CHK(got == ID_SIZE);
	if (!a->member)
		memset(want, 0xee, ID_SIZE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (memcmp((const void *)mem, want, ID_SIZE))
		fprintf(stderr, "host %u: its Identify copy differs (byte 4: %#x, want %#x)\n",
			a->host, mem[4], want[4]);
	send_step(k->to, memcmp((const void *)mem, want, ID_SIZE) ? 2 : 1);
	(void)recv_step(k->from, PIPE_MS);
	SCIUnmapSegment(m, 0, &err);
	SCIRemoveSegment(s, 0, &err);
	SCIClose(sd, 0, &err);
	return 0;
}

struct id_client_arg {
	unsigned fdid;
};

/* Host 4: a unicast Identify (its bytes up the pipe), then the multicast one (its status). */
static int id_client_body(struct kid *k, void *argp)
{
	const struct id_client_arg *a = argp;
	struct snv_client_opts o = { .fdid = a->fdid, .timeout_ms = 10000 };
	struct snv_client *c;
	uint8_t id[ID_SIZE];
	char err[256] = "";
	int rc = snv_client_open(&o, &c, err, sizeof(err));

	if (rc)
		fprintf(stderr, "client: %s\n", err);
	CHK(rc == 0);
	CHK(snv_identify_ctrl(c, id) == 0);
	CHK(write(k->to, id, sizeof(id)) == (ssize_t)sizeof(id));
	CHK(recv_step(k->from, PIPE_MS) == 1);
	rc = snv_identify_ctrl_mcast(c, ID_GROUP);
	send_step(k->to, rc == 0 ? 1 : 2);
	(void)recv_step(k->from, PIPE_MS);
	snv_client_close(c);
	return 0;
}

static void *mgr_thread(void *arg)
{
	snv_manager_run(arg, -1);
	return NULL;
}

static unsigned find_nvme(unsigned node)
{
	sci_smartio_device_info_t f;
	unsigned int ids[8], n;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	if (err)
		return 0;
	memset(&f, 0, sizeof(f));
	f.pci_class = 0x010802;
	f.nodeid = node;
	n = SCIGetDeviceList(sd, ids, 8, &f, 0, &err);
	SCIClose(sd, 0, &err);
	return n == 1 ? ids[0] : 0;
}

static void test_multicast_identify(void **state)
{
	static struct sub_arg args[NSUB] = {
		{ .member = true, .host = 1 }, { .member = true, .host = 2 },
		{ .member = true, .host = 3 }, { .member = false, .host = 4 },
	};
	static const char *hosts[NSUB] = { "1", "2", "3", "4" };
	struct id_client_arg ca = { .fdid = find_nvme(4) };
	struct snv_manager_opts mo = { .fdid = ca.fdid, .heartbeat_ms = 100 };
	struct snv_manager *m;
	struct kid client;
	pthread_t th;
	uint8_t uni[ID_SIZE];
	size_t got = 0;
	char err[256] = "";

	(void)state;
	assert_true(ca.fdid != 0);
	if (snv_manager_start(&mo, &m, err, sizeof(err)))
		fail_msg("manager: %s", err);
	assert_int_equal(pthread_create(&th, NULL, mgr_thread, m), 0);
	for (int i = 0; i < NSUB; i++) {
		kids[i] = spawn_on(hosts[i], id_sub_body, &args[i]);
		assert_int_equal(recv_step(kids[i].from, PIPE_MS), 1);
	}
	client = spawn_on("4", id_client_body, &ca);
	while (got < ID_SIZE) {
		struct pollfd p = { .fd = client.from, .events = POLLIN };
		ssize_t n;

		assert_int_equal(poll(&p, 1, PIPE_MS), 1);
		n = read(client.from, uni + got, ID_SIZE - got);
		assert_true(n > 0);
		got += (size_t)n;
	}
	/* A real Identify: a model name and a nonzero vendor. */
	assert_true(uni[0] || uni[1]);
	send_step(client.to, 1);
	assert_int_equal(recv_step(client.from, PIPE_MS), 1);
	/* Every subscriber holds the unicast copy; the non-member its 0xee. */
	for (int i = 0; i < NSUB; i++)
		assert_int_equal(write(kids[i].to, uni, ID_SIZE), ID_SIZE);
	for (int i = 0; i < NSUB; i++)
		assert_int_equal(recv_step(kids[i].from, PIPE_MS), 1);
	send_step(client.to, STEP_EXIT);
	join(&client, PIPE_MS);
	for (int i = 0; i < NSUB; i++) {
		send_step(kids[i].to, STEP_EXIT);
		join(&kids[i], PIPE_MS);
	}
	snv_manager_stop(m);
	pthread_join(th, NULL);
	snv_manager_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_broadcast_segment),
		cmocka_unit_test(test_multicast_identify),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
