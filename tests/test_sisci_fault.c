// SPDX-License-Identifier: MIT
/*
 * PCIe failure semantics on live SISCI maps, and the link events a program
 * hears, against real daemons (the default cluster, started with the CLI).
 *
 * The test process is a program of host 1 (node 8) and owns a segment whose
 * words hold a pattern. A forked child is a program of host 0 (node 4): it
 * connects through host 0's NTB, maps the segment, and takes an NTB link down
 * and up again with the CLI (as the admin), checking at each step what its
 * map reads, whether its stores land, which callbacks it heard and what
 * SCICheckSequence says. The link taken down is host 0's own adapter (the
 * importer's side) in one case and host 1's (the owner's side: heard through
 * the owner's daemon) in the other; in the latter the connection has no
 * callback, so only the map's behaviour shows the event. A last case maps a
 * borrowed NVMe's BAR0 (SCIConnectDeviceSegment) and reads its registers.
 *
 * A child must not return into cmocka: it checks with CHK() and reports
 * through its exit status; the parent waits for it with a bounded wait.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sisci_harness.h"

#define PAGE		4096u
#define OWNER_NODE	8         /* host 1 */
#define SEG_ID		0x5150
#define WORDS		(2 * PAGE / 4)
#define WAIT_MS		30000     /* bound on every wait (sanitizer builds are slow) */

static sci_desc_t owner_sd;
static sci_local_segment_t owner_seg;
static volatile uint32_t *owner_mem;
static sci_map_t owner_map;

static uint32_t pattern(unsigned i)
{
	return 0x51000000u + i;
}

/* ---------- plumbing ---------- */

static int group_setup(void **state)
{
	sci_error_t err;

	if (sh_up("sisci-fault", "1", true))
		return -1;
	SCIOpen(&owner_sd, 0, &err);
	if (!err)
		SCICreateSegment(owner_sd, &owner_seg, SEG_ID, 2 * PAGE, NULL, NULL, 0, &err);
	if (!err)
		SCIPrepareSegment(owner_seg, 0, 0, &err);
	if (!err)
		owner_mem = SCIMapLocalSegment(owner_seg, &owner_map, 0, 2 * PAGE, NULL, 0, &err);
	if (!err)
		SCISetSegmentAvailable(owner_seg, 0, 0, &err);
	return err == SCI_ERR_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
	sci_error_t err;

	SCIUnmapSegment(owner_map, 0, &err);
	SCIRemoveSegment(owner_seg, 0, &err);
	SCIClose(owner_sd, 0, &err);
	return sh_down();
}

static int test_setup(void **state)
{
	for (unsigned i = 0; i < WORDS; i++)
		owner_mem[i] = pattern(i);
	return 0;
}

/* Fork a child that runs fn as a program of host 0; wait for it (bounded). */
static void in_child(int (*fn)(void))
{
	pid_t pid = fork_as("0");
	int ws;

	if (pid == 0)
		_exit(fn());
	ws = reap(pid, 2 * WAIT_MS);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws))
		fail_msg("child failed: status %#x", ws);
}

/* ---------- what the callback heard ---------- */

static pthread_mutex_t heard_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t heard_cv = PTHREAD_COND_INITIALIZER;
static sci_segment_cb_reason_t heard[16];
static unsigned nheard;

static sci_callback_action_t on_event(void *arg, sci_remote_segment_t segment,
				      sci_segment_cb_reason_t reason, sci_error_t status)
{
	pthread_mutex_lock(&heard_mu);
	if (nheard < 16)
		heard[nheard++] = reason;
	pthread_cond_broadcast(&heard_cv);
	pthread_mutex_unlock(&heard_mu);
	return SCI_CALLBACK_CONTINUE;
}

/* Wait (bounded) until the callback has heard n events; the nth is returned. */
static sci_segment_cb_reason_t wait_heard(unsigned n)
{
	uint64_t end = smio_now_ms() + WAIT_MS;
	sci_segment_cb_reason_t r = 0;

	pthread_mutex_lock(&heard_mu);
	while (nheard < n && smio_now_ms() < end) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&heard_cv, &heard_mu, &ts);
	}
	if (nheard >= n)
		r = heard[n - 1];
	pthread_mutex_unlock(&heard_mu);
	return r;
}

/* How many events the callback has heard, and the ith (from 1). */
static unsigned heard_count(void)
{
	unsigned n;

	pthread_mutex_lock(&heard_mu);
	n = nheard;
	pthread_mutex_unlock(&heard_mu);
	return n;
}

static sci_segment_cb_reason_t heard_at(unsigned i)
{
	sci_segment_cb_reason_t r;

	pthread_mutex_lock(&heard_mu);
	r = i && i <= nheard ? heard[i - 1] : 0;
	pthread_mutex_unlock(&heard_mu);
	return r;
}

/* ---------- the cases ---------- */

struct conn {
	sci_desc_t sd;
	sci_remote_segment_t seg;
	sci_map_t map;
	sci_sequence_t seq;
	volatile uint32_t *p;
};

static void child_connect(struct conn *c, bool callback)
{
	sci_error_t err;

	SCIOpen(&c->sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(c->sd, &c->seg, OWNER_NODE, SEG_ID, 0, callback ? on_event : NULL,
			  NULL, WAIT_MS, callback ? SCI_FLAG_USE_CALLBACK : 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	c->p = SCIMapRemoteSegment(c->seg, &c->map, 0, 2 * PAGE, NULL, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCICreateMapSequence(c->map, &c->seq, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	for (unsigned i = 0; i < WORDS; i += 97)
		CHK(c->p[i] == pattern(i));
}

static void child_disconnect(struct conn *c)
{
	sci_error_t err;

	SCIRemoveSequence(c->seq, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIUnmapSegment(c->map, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(c->seg, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(c->sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
}

/* Importer's link: callbacks, all-ones, dropped stores, sequences, recovery. */
static int child_local_link(void)
{
	struct conn c;
	sci_error_t err;

	child_connect(&c, true);
	CHK(SCIStartSequence(c.seq, 0, &err) == SCI_SEQ_OK);
	CHK_ERR(err, SCI_ERR_OK);

	CHK(sh_ntb_link("0", "down") == 0);
	CHK(wait_heard(1) == SCI_CB_NOT_OPERATIONAL);
	/* PCIe: loads complete with all-ones, stores go nowhere. */
	CHK(c.p[0] == 0xffffffffu);
	CHK(c.p[WORDS - 1] == 0xffffffffu);
	c.p[1] = 0xdead0001u;
	CHK(SCICheckSequence(c.seq, 0, &err) == SCI_SEQ_NOT_RETRIABLE);
	CHK_ERR(err, SCI_ERR_NO_LINK_ACCESS);
	CHK(SCIStartSequence(c.seq, 0, &err) == SCI_SEQ_NOT_RETRIABLE);

	CHK(sh_ntb_link("0", "up") == 0);
	CHK(wait_heard(2) == SCI_CB_OPERATIONAL);
	/* The same map, the same address: the owner's memory again, untouched. */
	CHK(c.p[0] == pattern(0));
	CHK(c.p[1] == pattern(1));
	CHK(c.p[WORDS - 1] == pattern(WORDS - 1));
	/* A sequence started before the fault says: repeat what you did. */
	CHK(SCICheckSequence(c.seq, 0, &err) == SCI_SEQ_RETRIABLE);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(SCIStartSequence(c.seq, 0, &err) == SCI_SEQ_OK);
	c.p[2] = 0xbeef0002u;
	CHK(SCICheckSequence(c.seq, 0, &err) == SCI_SEQ_OK);
	CHK_ERR(err, SCI_ERR_OK);
	CHK(heard_count() == 2);
	child_disconnect(&c);
	return 0;
}

static void test_local_link(void **state)
{
	in_child(child_local_link);
	/* The store made while the link was down never arrived; the one after did. */
	assert_int_equal(owner_mem[1], pattern(1));
	assert_int_equal(owner_mem[2], 0xbeef0002u);
	assert_int_equal(owner_mem[3], pattern(3));
}

/* The owner's link, a map without a callback: the map alone shows it. */
static int child_remote_link(void)
{
	struct conn c;
	sci_error_t err;

	child_connect(&c, false);
	CHK(sh_ntb_link("1", "down") == 0);
	CHK(wait_word(&c.p[7], 0xffffffffu, WAIT_MS));
	c.p[8] = 0xdead0008u;
	CHK(SCICheckSequence(c.seq, 0, &err) == SCI_SEQ_NOT_RETRIABLE);
	/* A new map of a connection whose path fails is refused. */
	{
		sci_map_t m2;

		CHK(SCIMapRemoteSegment(c.seg, &m2, 0, PAGE, NULL, 0, &err) == NULL);
		CHK(err != SCI_ERR_OK);
	}
	CHK(sh_ntb_link("1", "up") == 0);
	CHK(wait_word(&c.p[7], pattern(7), WAIT_MS));
	CHK(c.p[8] == pattern(8));
	c.p[9] = 0xbeef0009u;
	child_disconnect(&c);
	return 0;
}

static void test_remote_link(void **state)
{
	in_child(child_remote_link);
	assert_int_equal(owner_mem[8], pattern(8));
	assert_int_equal(owner_mem[9], 0xbeef0009u);
}

/* Flaps faster than anybody looks still end where the link ends: up. */
static int child_flaps(void)
{
	struct conn c;
	sci_error_t err;

	child_connect(&c, true);
	CHK(SCIStartSequence(c.seq, 0, &err) == SCI_SEQ_OK);
	for (int i = 0; i < 5; i++) {
		CHK(sh_ntb_link("0", "down") == 0);
		CHK(sh_ntb_link("0", "up") == 0);
	}
	/* Each down is told before its up; the last word is OPERATIONAL. */
	for (unsigned n = 2;; n += 2) {
		CHK(wait_heard(n) == SCI_CB_OPERATIONAL);
		CHK(heard_at(n - 1) == SCI_CB_NOT_OPERATIONAL);
		if (SCICheckSequence(c.seq, 0, &err) == SCI_SEQ_RETRIABLE && c.p[4] == pattern(4))
			break;
		CHK(n < 10);
	}
	child_disconnect(&c);
	return 0;
}

static void test_flaps(void **state)
{
	in_child(child_flaps);
}

/* A borrowed NVMe's BAR0, mapped through the NTB: registers read all-ones while down. */
static int child_device_bar(void)
{
	sci_smartio_device_info_t f;
	sci_smartio_device_t dv;
	sci_remote_segment_t bar;
	sci_map_t map;
	volatile uint32_t *regs;
	unsigned int ids[4];
	uint32_t vs;
	sci_desc_t sd;
	sci_error_t err;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	memset(&f, 0, sizeof(f));
	f.nodeid = OWNER_NODE;
	snprintf(f.user_name, sizeof(f.user_name), "nvme0");
	CHK(SCIGetDeviceList(sd, ids, 4, &f, 0, &err) == 1);
	SCIBorrowDevice(sd, &dv, ids[0], 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectDeviceSegment(dv, &bar, 0, SCI_MEMTYPE_BAR, on_event, NULL,
				SCI_FLAG_USE_CALLBACK, &err);
	CHK_ERR(err, SCI_ERR_OK);
	regs = SCIMapRemoteSegment(bar, &map, 0, 0x1000, NULL, SCI_FLAG_IO_MAP_IOSPACE, &err);
	CHK_ERR(err, SCI_ERR_OK);
	vs = regs[2];
	CHK(vs == 0x00010400);                  /* NVMe 1.4.0 */

	CHK(sh_ntb_link("0", "down") == 0);
	CHK(wait_heard(1) == SCI_CB_NOT_OPERATIONAL);
	CHK(regs[2] == 0xffffffffu);            /* as a read that completes with UR */
	CHK(regs[0] == 0xffffffffu);
	CHK(sh_ntb_link("0", "up") == 0);
	CHK(wait_heard(2) == SCI_CB_OPERATIONAL);
	CHK(regs[2] == vs);

	SCIUnmapSegment(map, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIDisconnectSegment(bar, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIReturnDevice(dv, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

static void test_device_bar(void **state)
{
	in_child(child_device_bar);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_local_link, test_setup),
		cmocka_unit_test_setup(test_remote_link, test_setup),
		cmocka_unit_test_setup(test_flaps, test_setup),
		cmocka_unit_test(test_device_bar),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
