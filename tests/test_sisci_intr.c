// SPDX-License-Identifier: MIT
/*
 * libsisci interrupts and data interrupts against real daemons: the default
 * cluster is started with the smartio CLI. The test process belongs to host
 * 1 (node 8, SMARTIO_HOST=1); forked children belong to host 0 (node 4) or
 * host 1 and talk to the parent through pipes. Every wait is bounded: pipes
 * are read with poll() timeouts and SISCI waits have timeouts.
 *
 * A child reports failure through its exit status: the line of the first
 * check that failed (mod 256, never 0).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sisci_harness.h"

#define NODE_HOST0  4           /* the borrower */
#define NODE_HOST1  8           /* lender A: this process */
#define PIPE_MS     10000       /* one message between the processes */
#define WAIT_MS     5000        /* one SISCI wait that must succeed */
#define MAX_DATA    4096        /* the data-interrupt message limit (docs/sisci.md) */
#define QUEUE       16          /* messages a data interrupt queues */

static sci_desc_t sd;

/* ---------- plumbing ---------- */

/* In a child's body (a child_fn): fail by returning the line. */
#define CHECK(c) do { if (!(c)) return __LINE__ % 255 + 1; } while (0)

static int group_setup(void **state)
{
	sci_error_t err;

	if (sh_up("intr", "1", false))
		return -1;
	SCIOpen(&sd, 0, &err);
	return err ? -1 : 0;
}

static int group_teardown(void **state)
{
	sci_error_t err;
	int rc;

	/* Everything the tests made is gone again: the descriptor closes. */
	SCIClose(sd, 0, &err);
	rc = sh_down();
	return rc == 0 && err == SCI_ERR_OK ? 0 : -1;
}

/* ---------- plain interrupts ---------- */

/* Host 0: connect to intno on node 8, trigger on request, report each result. */
static int child_trigger(int in, int out, void *arg)
{
	sci_remote_interrupt_t ri;
	sci_desc_t csd;
	sci_error_t err;
	uint32_t intno, n;

	SCIOpen(&csd, 0, &err);
	CHECK(!err);
	CHECK(!get(in, &intno, PIPE_MS));
	SCIConnectInterrupt(csd, &ri, NODE_HOST1, 0, intno, 1000, 0, &err);
	CHECK(!put(out, err));
	if (err)
		return 0;
	/* n > 0: trigger n times and report the last result; 0: done. */
	while (!get(in, &n, PIPE_MS) && n) {
		for (uint32_t i = 0; i < n; i++)
			SCITriggerInterrupt(ri, 0, &err);
		CHECK(!put(out, err));
	}
	SCIDisconnectInterrupt(ri, 0, &err);
	CHECK(!err);
	SCIClose(csd, 0, &err);
	CHECK(!err);
	return 0;
}

static void test_plain_across_hosts(void **state)
{
	sci_local_interrupt_t li;
	sci_error_t err;
	struct child c;
	unsigned int intno = 0;
	uint32_t v;

	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	start_child(&c, "0", child_trigger, NULL);
	assert_int_equal(put(c.to, intno), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);            /* connected from node 4 */

	/* One trigger from host 0: the wait returns. */
	assert_int_equal(put(c.to, 1), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);
	SCIWaitForInterrupt(li, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIWaitForInterrupt(li, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_TIMEOUT);

	/* Plain interrupts coalesce: three triggers, one wake-up. */
	assert_int_equal(put(c.to, 3), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);
	SCIWaitForInterrupt(li, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIWaitForInterrupt(li, 20, 0, &err);
	assert_int_equal(err, SCI_ERR_TIMEOUT);

	assert_int_equal(put(c.to, 0), 0);
	assert_int_equal(end_child(&c), 0);
	/* Objects exist: the descriptor cannot close. */
	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_BUSY);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

static void test_counting_local(void **state)
{
	sci_local_interrupt_t li;
	sci_remote_interrupt_t ri;
	sci_error_t err;
	unsigned int intno = 0;

	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, SCI_FLAG_COUNTING_INT, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* This node, by its ID and by SCI_LOCAL_HOST: no NTB crossed. */
	SCIConnectInterrupt(sd, &ri, SCI_LOCAL_HOST, 0, intno, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (int i = 0; i < 3; i++) {
		SCITriggerInterrupt(ri, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
	}
	for (int i = 0; i < 3; i++) {
		SCIWaitForInterrupt(li, WAIT_MS, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
	}
	SCIWaitForInterrupt(li, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_TIMEOUT);
	SCIDisconnectInterrupt(ri, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

static void test_timeout(void **state)
{
	sci_local_interrupt_t li;
	sci_error_t err;
	unsigned int intno = 0;
	int64_t t0, dt;

	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	t0 = smio_now_ms();
	SCIWaitForInterrupt(li, 150, 0, &err);
	dt = smio_now_ms() - t0;
	assert_int_equal(err, SCI_ERR_TIMEOUT);
	assert_true(dt >= 150 && dt < 3000);
	SCIWaitForInterrupt(li, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_TIMEOUT);
	SCIWaitForInterrupt(li, 0, 1, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCIWaitForInterrupt(NULL, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* A remote connection outlives the interrupt: triggers then fail. */
static void test_remove_while_connected(void **state)
{
	sci_local_interrupt_t li;
	sci_error_t err;
	struct child c;
	unsigned int intno = 0x1234;
	uint32_t v;

	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(intno, 0x1234);
	start_child(&c, "0", child_trigger, NULL);
	assert_int_equal(put(c.to, intno), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);
	assert_int_equal(put(c.to, 1), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);

	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(put(c.to, 1), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_NO_SUCH_INTNO);

	/* The same number again is another interrupt: the old connection
	 * still leads nowhere. */
	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(put(c.to, 1), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_NO_SUCH_INTNO);
	assert_int_equal(put(c.to, 0), 0);
	assert_int_equal(end_child(&c), 0);
	SCIWaitForInterrupt(li, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_TIMEOUT);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

static void test_bad_intno_and_args(void **state)
{
	sci_local_interrupt_t li;
	sci_remote_interrupt_t ri;
	sci_remote_data_interrupt_t rdi;
	sci_error_t err;
	unsigned int intno = 0;
	int64_t t0;

	/* Nothing with that number, on another node and on this one. */
	SCIConnectInterrupt(sd, &ri, NODE_HOST0, 0, 0x7777, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_INTNO);
	SCIConnectInterrupt(sd, &ri, NODE_HOST1, 0, 0x7777, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_INTNO);
	/* The timeout is how long it may take to appear. */
	t0 = smio_now_ms();
	SCIConnectInterrupt(sd, &ri, NODE_HOST0, 0, 0x7777, 100, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_INTNO);
	assert_true(smio_now_ms() - t0 >= 100);

	/* Plain and data interrupts are numbered apart. */
	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDataInterrupt(sd, &rdi, NODE_HOST1, 0, intno, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_INTNO);

	SCIConnectInterrupt(sd, &ri, 40, 0, intno, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_NODEID);
	SCIConnectInterrupt(sd, &ri, NODE_HOST0, 3, intno, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_ADAPTERNO);
	SCIConnectInterrupt(sd, &ri, NODE_HOST0, 0, intno, 0, 1, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, SCI_FLAG_SHARED_INT, &err);
	assert_int_equal(err, SCI_ERR_FLAG_NOT_IMPLEMENTED);
	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, 0x80000000u, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, SCI_FLAG_USE_CALLBACK, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);   /* no callback given */
	SCICreateInterrupt(sd, &li, 5, &intno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_ADAPTERNO);
	SCICreateInterrupt(NULL, &li, 0, &intno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);
}

/* Host 1, another process: create a fixed number, report the result. */
static int child_create_fixed(int in, int out, void *arg)
{
	sci_local_interrupt_t li;
	sci_desc_t csd;
	sci_error_t err;
	unsigned int intno = *(unsigned int *)arg;
	uint32_t v;

	SCIOpen(&csd, 0, &err);
	CHECK(!err);
	SCICreateInterrupt(csd, &li, 0, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	CHECK(!put(out, err));
	CHECK(!put(out, intno));
	/* Hold it until told: the parent may connect and trigger meanwhile. */
	if (!err) {
		CHECK(!get(in, &v, PIPE_MS));
		SCIRemoveInterrupt(li, 0, &err);
		CHECK(!err);
	}
	SCIClose(csd, 0, &err);
	CHECK(!err);
	return 0;
}

static void test_fixed_intno_in_use(void **state)
{
	sci_local_interrupt_t li, lj;
	sci_local_data_interrupt_t ldi;
	sci_error_t err;
	unsigned int intno = 42, other = 42;
	struct child c;
	uint32_t v;

	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCICreateInterrupt(sd, &lj, 0, &other, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	assert_int_equal(err, SCI_ERR_INTNO_USED);
	/* A data interrupt may have the same number. */
	SCICreateDataInterrupt(sd, &ldi, 0, &other, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	assert_int_equal(err, SCI_ERR_OK);
	/* Numbers are per host: another process of host 1 is refused... */
	start_child(&c, "1", child_create_fixed, &intno);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_INTNO_USED);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(end_child(&c), 0);
	/* ...one of host 0 is not. */
	start_child(&c, "0", child_create_fixed, &intno);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, 42);
	assert_int_equal(put(c.to, 0), 0);
	assert_int_equal(end_child(&c), 0);

	SCIRemoveDataInterrupt(ldi, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* The owner is killed: its interrupts go, connected peers learn it. */
static void test_owner_dies(void **state)
{
	sci_remote_interrupt_t ri;
	sci_local_interrupt_t li;
	sci_error_t err;
	unsigned int intno = 77;
	struct child c;
	int64_t t0;
	uint32_t v;

	start_child(&c, "0", child_create_fixed, &intno);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	SCIConnectInterrupt(sd, &ri, NODE_HOST0, 0, intno, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCITriggerInterrupt(ri, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	kill(c.pid, SIGKILL);
	assert_int_equal(end_child(&c), 1000 + SIGKILL);
	/* Host 0's daemon sees the connection close in its own time: bounded. */
	t0 = smio_now_ms();
	do {
		SCITriggerInterrupt(ri, 0, &err);
		if (err == SCI_ERR_OK)
			poll(NULL, 0, 10);
	} while (err == SCI_ERR_OK && smio_now_ms() - t0 < WAIT_MS);
	assert_int_equal(err, SCI_ERR_NO_SUCH_INTNO);
	SCIDisconnectInterrupt(ri, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* The number is free again on host 0 (and ours on host 1 never clashed). */
	start_child(&c, "0", child_create_fixed, &intno);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(put(c.to, 0), 0);
	assert_int_equal(end_child(&c), 0);
	SCICreateInterrupt(sd, &li, 0, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- data interrupts ---------- */

static void fill(uint8_t *b, unsigned int len, unsigned int seed)
{
	for (unsigned int i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7);
}

/* The server's answer to a request: every byte plus one, reversed. */
static void answer(const uint8_t *req, unsigned int len, uint8_t *rep)
{
	for (unsigned int i = 0; i < len; i++)
		rep[len - 1 - i] = (uint8_t)(req[i] + 1);
}

static const unsigned int rpc_sizes[] = { 0, 1, 7, 100, 1000, 4095, MAX_DATA };
#define NRPC (sizeof(rpc_sizes) / sizeof(rpc_sizes[0]))

/* Host 0, the client: its reply interrupt, requests to the server. */
static int child_rpc_client(int in, int out, void *arg)
{
	static uint8_t req[MAX_DATA], rep[MAX_DATA], want[MAX_DATA];
	sci_local_data_interrupt_t reply;
	sci_remote_data_interrupt_t server;
	sci_desc_t csd;
	sci_error_t err;
	unsigned int rintno = 0, len;
	uint32_t sintno;

	SCIOpen(&csd, 0, &err);
	CHECK(!err);
	SCICreateDataInterrupt(csd, &reply, 0, &rintno, NULL, NULL, 0, &err);
	CHECK(!err);
	CHECK(!put(out, rintno));
	CHECK(!get(in, &sintno, PIPE_MS));
	SCIConnectDataInterrupt(csd, &server, NODE_HOST1, 0, sintno, WAIT_MS, 0, &err);
	CHECK(!err);
	for (unsigned int k = 0; k < NRPC; k++) {
		fill(req, rpc_sizes[k], k);
		SCITriggerDataInterrupt(server, req, rpc_sizes[k], 0, &err);
		CHECK(!err);
		len = sizeof(rep);
		SCIWaitForDataInterrupt(reply, rep, &len, WAIT_MS, 0, &err);
		CHECK(!err);
		CHECK(len == rpc_sizes[k]);
		answer(req, len, want);
		CHECK(!memcmp(rep, want, len));
	}
	/* Too long for a data interrupt. */
	SCITriggerDataInterrupt(server, req, MAX_DATA + 1, 0, &err);
	CHECK(err == SCI_ERR_OUT_OF_RANGE);
	SCIDisconnectDataInterrupt(server, 0, &err);
	CHECK(!err);
	SCIRemoveDataInterrupt(reply, 0, &err);
	CHECK(!err);
	SCIClose(csd, 0, &err);
	CHECK(!err);
	return 0;
}

static void test_data_rpc(void **state)
{
	static uint8_t req[MAX_DATA], rep[MAX_DATA];
	sci_local_data_interrupt_t server;
	sci_remote_data_interrupt_t client;
	sci_error_t err;
	unsigned int sintno = 0, len;
	struct child c;
	uint32_t rintno;

	SCICreateDataInterrupt(sd, &server, 0, &sintno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	start_child(&c, "0", child_rpc_client, NULL);
	assert_int_equal(get(c.from, &rintno, PIPE_MS), 0);
	SCIConnectDataInterrupt(sd, &client, NODE_HOST0, 0, rintno, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(put(c.to, sintno), 0);
	for (unsigned int k = 0; k < NRPC; k++) {
		len = sizeof(req);
		SCIWaitForDataInterrupt(server, req, &len, WAIT_MS, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		assert_int_equal(len, rpc_sizes[k]);
		fill(rep, len, k);
		assert_memory_equal(req, rep, len);     /* the request arrived intact */
		answer(req, len, rep);
		SCITriggerDataInterrupt(client, rep, len, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
	}
	assert_int_equal(end_child(&c), 0);
	SCIDisconnectDataInterrupt(client, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveDataInterrupt(server, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* Host 0: fill the queue of data interrupt intno on node 8. */
static int child_flood(int in, int out, void *arg)
{
	sci_remote_data_interrupt_t ri;
	sci_desc_t csd;
	sci_error_t err;
	uint32_t intno, i, v;

	SCIOpen(&csd, 0, &err);
	CHECK(!err);
	CHECK(!get(in, &intno, PIPE_MS));
	SCIConnectDataInterrupt(csd, &ri, NODE_HOST1, 0, intno, WAIT_MS, 0, &err);
	CHECK(!err);
	for (i = 0; i < QUEUE; i++) {
		SCITriggerDataInterrupt(ri, &i, sizeof(i), 0, &err);
		CHECK(!err);
	}
	SCITriggerDataInterrupt(ri, &i, sizeof(i), 0, &err);
	CHECK(!put(out, err));      /* full */
	CHECK(!get(in, &v, PIPE_MS));        /* the owner took one: room for message QUEUE */
	SCITriggerDataInterrupt(ri, &i, sizeof(i), 0, &err);
	CHECK(!put(out, err));
	SCIDisconnectDataInterrupt(ri, 0, &err);
	CHECK(!err);
	SCIClose(csd, 0, &err);
	CHECK(!err);
	return 0;
}

static void test_queue_full(void **state)
{
	sci_local_data_interrupt_t li;
	sci_error_t err;
	unsigned int intno = 0, len;
	struct child c;
	uint32_t v, msg[2];

	SCICreateDataInterrupt(sd, &li, 0, &intno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	start_child(&c, "0", child_flood, NULL);
	assert_int_equal(put(c.to, intno), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_BUSY);

	/* A buffer too small: the length needed, and the message kept. */
	len = 2;
	SCIWaitForDataInterrupt(li, msg, &len, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OUT_OF_RANGE);
	assert_int_equal(len, sizeof(uint32_t));
	len = sizeof(msg);
	SCIWaitForDataInterrupt(li, msg, &len, WAIT_MS, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(len, sizeof(uint32_t));
	assert_int_equal(msg[0], 0);

	assert_int_equal(put(c.to, 1), 0);
	assert_int_equal(get(c.from, &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);
	assert_int_equal(end_child(&c), 0);
	/* In order, nothing lost: 1 .. QUEUE. */
	for (uint32_t i = 1; i <= QUEUE; i++) {
		len = sizeof(msg);
		SCIWaitForDataInterrupt(li, msg, &len, WAIT_MS, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		assert_int_equal(msg[0], i);
	}
	len = sizeof(msg);
	SCIWaitForDataInterrupt(li, msg, &len, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_TIMEOUT);
	SCIRemoveDataInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
}

/* ---------- callbacks and cancellation ---------- */

struct cb_state {
	int pipe[2];                /* the callback reports here */
	unsigned int calls, cancel_after;
	bool remove_self;
};

static sci_callback_action_t on_intr(void *arg, sci_local_interrupt_t intr, sci_error_t status)
{
	struct cb_state *s = arg;

	s->calls++;
	if (put(s->pipe[1], status))
		return SCI_CALLBACK_CANCEL;
	return s->calls == s->cancel_after ? SCI_CALLBACK_CANCEL : SCI_CALLBACK_CONTINUE;
}

static sci_callback_action_t on_data(void *arg, sci_local_data_interrupt_t intr, void *data,
				     unsigned int length, sci_error_t status)
{
	struct cb_state *s = arg;
	uint32_t v = 0;
	sci_error_t err;

	if (length == sizeof(v))
		memcpy(&v, data, sizeof(v));
	s->calls++;
	if (s->remove_self) {
		/* From inside its own callback: allowed, freed on return. */
		SCIRemoveDataInterrupt(intr, 0, &err);
		put(s->pipe[1], err);
	}
	put(s->pipe[1], status ? status : v);
	return SCI_CALLBACK_CONTINUE;
}

static void test_callbacks(void **state)
{
	struct cb_state s = { .cancel_after = 2 };
	sci_local_interrupt_t li;
	sci_remote_interrupt_t ri;
	sci_local_data_interrupt_t ldi;
	sci_remote_data_interrupt_t rdi;
	sci_error_t err;
	unsigned int intno = 0;
	uint32_t v, msg = 0xabcd;
	int64_t t0;

	assert_int_equal(pipe(s.pipe), 0);
	SCICreateInterrupt(sd, &li, 0, &intno, on_intr, &s, SCI_FLAG_USE_CALLBACK, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIWaitForInterrupt(li, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_OPERATION);   /* the callback waits */
	SCIConnectInterrupt(sd, &ri, NODE_HOST1, 0, intno, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	for (int i = 0; i < 2; i++) {
		SCITriggerInterrupt(ri, 0, &err);
		assert_int_equal(err, SCI_ERR_OK);
		assert_int_equal(get(s.pipe[0], &v, PIPE_MS), 0);
		assert_int_equal(v, SCI_ERR_OK);
	}
	/* The second callback cancelled: triggers are waited for again. */
	SCITriggerInterrupt(ri, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	t0 = smio_now_ms();
	do                                              /* the thread is finishing */
		SCIWaitForInterrupt(li, WAIT_MS, 0, &err);
	while (err == SCI_ERR_ILLEGAL_OPERATION && smio_now_ms() - t0 < WAIT_MS);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(s.calls, 2);
	SCIDisconnectInterrupt(ri, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIRemoveInterrupt(li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);

	/* Data: the callback gets the message; then it removes its interrupt. */
	s.calls = 0;
	intno = 0;
	SCICreateDataInterrupt(sd, &ldi, 0, &intno, on_data, &s, SCI_FLAG_USE_CALLBACK, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIConnectDataInterrupt(sd, &rdi, NODE_HOST1, 0, intno, 0, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCITriggerDataInterrupt(rdi, &msg, sizeof(msg), 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(get(s.pipe[0], &v, PIPE_MS), 0);
	assert_int_equal(v, 0xabcd);
	s.remove_self = true;
	msg = 0x1234;
	SCITriggerDataInterrupt(rdi, &msg, sizeof(msg), 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(get(s.pipe[0], &v, PIPE_MS), 0);
	assert_int_equal(v, SCI_ERR_OK);                /* the removal */
	assert_int_equal(get(s.pipe[0], &v, PIPE_MS), 0);
	assert_int_equal(v, 0x1234);
	SCITriggerDataInterrupt(rdi, &msg, sizeof(msg), 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_INTNO);
	SCIDisconnectDataInterrupt(rdi, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	close(s.pipe[0]);
	close(s.pipe[1]);
}

struct waiter {
	sci_local_interrupt_t li;
	int pipe[2];
	sci_error_t err;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	put(w->pipe[1], (uint32_t)syscall(SYS_gettid));
	SCIWaitForInterrupt(w->li, SCI_INFINITE_TIMEOUT, 0, &w->err);
	return NULL;
}

/* Is thread tid asleep (here: in the wait's poll)? */
static bool sleeping(uint32_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* SCIRemoveInterrupt wakes a waiter with SCI_ERR_CANCELLED. */
static void test_remove_cancels_waiter(void **state)
{
	struct waiter w;
	unsigned int intno = 0;
	pthread_t t;
	sci_error_t err;
	uint32_t tid;
	int64_t t0;

	assert_int_equal(pipe(w.pipe), 0);
	SCICreateInterrupt(sd, &w.li, 0, &intno, NULL, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
	assert_int_equal(get(w.pipe[0], &tid, PIPE_MS), 0);
	t0 = smio_now_ms();
	while (!sleeping(tid) && smio_now_ms() - t0 < WAIT_MS)
		poll(NULL, 0, 1);
	SCIRemoveInterrupt(w.li, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.err, SCI_ERR_CANCELLED);
	close(w.pipe[0]);
	close(w.pipe[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_across_hosts),
		cmocka_unit_test(test_counting_local),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_remove_while_connected),
		cmocka_unit_test(test_bad_intno_and_args),
		cmocka_unit_test(test_fixed_intno_in_use),
		cmocka_unit_test(test_owner_dies),
		cmocka_unit_test(test_data_rpc),
		cmocka_unit_test(test_queue_full),
		cmocka_unit_test(test_callbacks),
		cmocka_unit_test(test_remove_cancels_waiter),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
