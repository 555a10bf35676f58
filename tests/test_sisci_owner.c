// SPDX-License-Identifier: MIT
/*
 * SISCI owner callbacks, called as a program written for Dolphin's SISCI
 * calls them: the test process is host 0 (node 4) and creates a segment with
 * SCI_FLAG_USE_CALLBACK; a host-1 program (node 8) connects and disconnects,
 * and so does another descriptor of this process. The owner's callback hears
 * SCI_CB_CONNECT and SCI_CB_DISCONNECT with the other end's node id, in
 * order; SCI_CALLBACK_CANCEL stops the calls; SCIRemoveSegment ends them.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sisci_harness.h"

#define OWNER_NODE  4          /* host 0 */
#define USER_NODE   8          /* host 1 */
#define SEGID       0x0c0b
#define WAIT_MS     10000

static int group_setup(void **state)
{
	return sh_up("sowner", "0", false);
}

static int group_teardown(void **state)
{
	return sh_down();
}

/* What the callback heard, in order. */
static struct heard {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned int n;
	sci_segment_cb_reason_t reason[16];
	unsigned int node[16];
	sci_local_segment_t seg;
	unsigned int cancel_at;     /* return CANCEL at this event (1-based; 0: never) */
} heard = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static sci_callback_action_t on_event(void *arg, sci_local_segment_t segment,
				      sci_segment_cb_reason_t reason, unsigned int nodeId,
				      unsigned int localAdapterNo, sci_error_t error)
{
	struct heard *h = arg;
	sci_callback_action_t act = SCI_CALLBACK_CONTINUE;

	pthread_mutex_lock(&h->mu);
	if (h->n < 16 && segment == h->seg && error == SCI_ERR_OK && localAdapterNo == 0) {
		h->reason[h->n] = reason;
		h->node[h->n] = nodeId;
	}
	h->n++;
	if (h->n == h->cancel_at)
		act = SCI_CALLBACK_CANCEL;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return act;
}

/* Wait (bounded) until the callback has heard n events; how many it has. */
static unsigned int wait_heard(unsigned int n)
{
	uint64_t end = smio_now_ms() + WAIT_MS;
	unsigned int got;

	pthread_mutex_lock(&heard.mu);
	while (heard.n < n && smio_now_ms() < end) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&heard.cv, &heard.mu, &ts);
	}
	got = heard.n;
	pthread_mutex_unlock(&heard.mu);
	return got;
}

/* Host 1: connect, wait for the go, disconnect. */
static int user(struct kid *k, void *arg)
{
	sci_remote_segment_t rs;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIConnectSegment(sd, &rs, OWNER_NODE, SEGID, 0, NULL, NULL, WAIT_MS, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	send_step(k->to, 1);
	CHK(recv_step(k->from, WAIT_MS) == 2);
	SCIDisconnectSegment(rs, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	CHK_ERR(err, SCI_ERR_OK);
	return 0;
}

static void test_owner_callbacks(void **state)
{
	sci_local_segment_t seg;
	sci_remote_segment_t rs;
	sci_desc_t sd, sd2;
	sci_error_t err;
	struct kid k;

	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIOpen(&sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	pthread_mutex_lock(&heard.mu);
	SCICreateSegment(sd, &seg, SEGID, 8192, on_event, &heard, SCI_FLAG_USE_CALLBACK, &err);
	heard.seg = seg;
	pthread_mutex_unlock(&heard.mu);
	assert_int_equal(err, SCI_ERR_OK);
	SCIPrepareSegment(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCISetSegmentAvailable(seg, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* A remote program: its node, connect then disconnect. */
	k = spawn_on("1", user, NULL);
	assert_int_equal(recv_step(k.from, WAIT_MS), 1);
	assert_int_equal(wait_heard(1), 1);
	assert_int_equal(heard.reason[0], SCI_CB_CONNECT);
	assert_int_equal(heard.node[0], USER_NODE);
	send_step(k.to, 2);
	join(&k, WAIT_MS);
	assert_int_equal(wait_heard(2), 2);
	assert_int_equal(heard.reason[1], SCI_CB_DISCONNECT);
	assert_int_equal(heard.node[1], USER_NODE);

	/* This host's own program (another descriptor): our node. */
	SCIConnectSegment(sd2, &rs, OWNER_NODE, SEGID, 0, NULL, NULL, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(wait_heard(3), 3);
	assert_int_equal(heard.reason[2], SCI_CB_CONNECT);
	assert_int_equal(heard.node[2], OWNER_NODE);
	/* Cancelled at the next event: the disconnect is the last one heard. */
	pthread_mutex_lock(&heard.mu);
	heard.cancel_at = 4;
	pthread_mutex_unlock(&heard.mu);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(wait_heard(4), 4);
	assert_int_equal(heard.reason[3], SCI_CB_DISCONNECT);
	SCIConnectSegment(sd2, &rs, OWNER_NODE, SEGID, 0, NULL, NULL, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIDisconnectSegment(rs, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	poll(NULL, 0, 100);         /* a call that should not come would come by now */
	assert_int_equal(wait_heard(4), 4);

	SCIRemoveSegment(seg, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd2, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_callbacks),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
