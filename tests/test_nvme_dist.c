// SPDX-License-Identifier: MIT
/*
 * The distributed NVMe driver (libsmartio-nvme) against real daemons. The
 * test process is the manager (on the lender's host); clients are forked
 * programs of other hosts that report over pipes (nvme_dist_harness.h).
 *
 * eight-hosts (tests/topologies/eight-hosts.yaml): 8 clients on 8 hosts run
 * verified I/O at once with distinct queue IDs; a client killed with SIGKILL
 * mid-I/O disturbs nobody and its queues come back.
 * default cluster: hostile clients (foreign queue IDs, forged and malformed
 * messages, commands outside the whitelist, PRPs outside their windows at
 * lender-a (NTB) and lender-b (IOMMU)) are refused and nothing else suffers.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nvme_dist_harness.h"
#include "nvme/snv_priv.h"

static unsigned fdid;

/* ---- A well-behaved client ---- */

struct good_arg {
	unsigned fdid, manager_node, idx;
	unsigned qpairs;          /* queue pairs to create (I/O on the first) */
	bool wait_go;             /* wait for 'g' before I/O */
	enum snv_place cq_place;
	unsigned rounds;          /* rounds to run; 0: until 's' (stop) */
};

static int good_client(struct kidio *io, void *varg)
{
	struct good_arg *a = varg;
	struct snv_client_opts o = { .fdid = a->fdid, .manager_node = a->manager_node,
				     .timeout_ms = 10000 };
	struct snv_qpair *q[4] = { 0 };
	struct snv_qpair_opts qo = { .depth = 16, .cq_place = a->cq_place };
	struct snv_client *c;
	struct snv_buf *b;
	uint64_t end = smio_now_ms() + 40000;
	char err[256];
	int rc;

	rc = snv_client_open(&o, &c, err, sizeof(err));
	if (rc)
		fprintf(stderr, "client %u: %s\n", a->idx, err);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_buf_alloc(c, IO_BUF, &b);
	KID_CHECK(io, rc == 0, rc);
	for (unsigned i = 0; i < a->qpairs; i++) {
		rc = snv_qpair_create(c, &qo, &q[i]);
		KID_CHECK(io, rc == 0, rc);
		kid_report(io, REP_QID, snv_qpair_id(q[i]), (int)c->segid_base, 0);
	}
	if (a->wait_go)
		KID_CHECK(io, kid_command(io, 30000) == 'g', 0);
	for (unsigned r = 0; a->rounds ? r < a->rounds : smio_now_ms() < end; r++) {
		rc = verified_round(q[0], b, 1 + (uint64_t)a->idx * 4096, 0x5eed + a->idx, r);
		if (rc)
			fprintf(stderr, "client %u: round %u failed (%d) at %lu ms\n", a->idx, r, rc,
				(unsigned long)(smio_now_ms() % 100000));
		KID_CHECK(io, rc == 0, rc);
		if (r == 0)
			kid_report(io, REP_RUNNING, 0, 0, 0);
		if (!a->rounds && kid_command(io, 0) == 's')
			break;
	}
	kid_report(io, REP_DONE, 0, 0, 0);
	/* With a start barrier there is an end barrier too: nobody unmaps while others run. */
	if (a->wait_go)
		KID_CHECK(io, kid_command(io, 30000) == 'q', 0);
	snv_client_close(c);
	return 0;
}

static int group_eight_setup(void **state)
{
	if (h_cluster_up("tests/topologies/eight-hosts.yaml", "0"))
		return -1;
	fdid = h_find_nvme(4);
	return fdid ? 0 : -1;
}

/* Managers a failed test could not destroy. */
static struct snv_manager *live_mgr[4];

/* After each test: what a failed one left behind goes, so the next starts clean. */
static int test_teardown(void **state)
{
	h_kill_all();
	for (unsigned i = 0; i < 4; i++) {
		snv_manager_destroy(live_mgr[i]);
		live_mgr[i] = NULL;
	}
	return 0;
}

static int group_teardown(void **state)
{
	test_teardown(state);
	return h_cluster_down();
}

static void mgr_log(void *arg, const char *line)
{
	fprintf(stderr, "[manager %lu ms] %s\n", (unsigned long)(smio_now_ms() % 100000), line);
}

static struct snv_manager *mgr_start(unsigned dev)
{
	struct snv_manager_opts mo = { .fdid = dev, .heartbeat_ms = 100,
				       .log = getenv("NVD_LOG") ? mgr_log : NULL };
	struct snv_manager *m;
	char err[256] = "";
	int rc = snv_manager_start(&mo, &m, err, sizeof(err));

	if (rc)
		fprintf(stderr, "manager: %s\n", err);
	assert_int_equal(rc, 0);
	for (unsigned i = 0; i < 4; i++)
		if (!live_mgr[i]) {
			live_mgr[i] = m;
			break;
		}
	return m;
}

static void mgr_done(struct snv_manager *m)
{
	for (unsigned i = 0; i < 4; i++)
		if (live_mgr[i] == m)
			live_mgr[i] = NULL;
	snv_manager_destroy(m);
}

static bool mgr_idle(struct kid *k, unsigned n, void *arg)
{
	struct snv_manager_stats st;

	snv_manager_get_stats(arg, &st);
	return all_exited(k, n, NULL) && st.clients == 0 && st.queues == 0;
}

/*
 * n clients on hosts first_host.. hold distinct queue IDs at the same time,
 * then run verified I/O at the same time. Start and end barriers: nobody maps
 * or unmaps memory while others run I/O (see docs/nvme-driver.md, "Known
 * problems"; the kill test is the one that does that on purpose).
 */
static void run_clients(unsigned n, int first_host, enum snv_place cq_place)
{
	struct snv_manager *m = mgr_start(fdid);
	struct good_arg a[32];
	struct kid k[32];
	struct want w = { REP_QID, n };
	struct snv_manager_stats st;
	bool seen[1025] = { false };

	assert_true(n <= 32);
	for (unsigned i = 0; i < n; i++) {
		a[i] = (struct good_arg){ .fdid = fdid, .idx = i, .qpairs = 1, .wait_go = true,
					  .rounds = 12, .cq_place = cq_place };
		kid_spawn(&k[i], first_host + (int)i, good_client, &a[i]);
	}
	assert_true(serve_until(m, NULL, k, n, have_reports, &w, 40000));
	/* All n hold their queue pair now: no ID twice. */
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.clients, n);
	assert_int_equal(st.queues, n);
	for (unsigned i = 0; i < n; i++) {
		const struct rep *r = kid_rep(&k[i], REP_QID, 0);

		assert_non_null(r);
		assert_true(r->v[0] >= 1 && r->v[0] <= 32);
		assert_false(seen[r->v[0]]);
		seen[r->v[0]] = true;
		kid_send(&k[i], 'g');
	}
	w.kind = REP_DONE;
	assert_true(serve_until(m, NULL, k, n, have_reports, &w, 50000));
	for (unsigned i = 0; i < n; i++)
		kid_send(&k[i], 'q');
	assert_true(serve_until(m, NULL, k, n, mgr_idle, m, 30000));
	for (unsigned i = 0; i < n; i++)
		assert_true(kid_ok(&k[i]));
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.reclaimed, 0);
	assert_int_equal(st.refused, 0);
	kids_kill(k, n);
	mgr_done(m);
}

static void test_eight_clients(void **state)
{
	run_clients(8, 0, SNV_PLACE_DEFAULT);
}

/* The SmartIO paper's cluster: 30 clients on hosts 1..30, the lender is host 0. */
static int group_sixty_setup(void **state)
{
	if (h_cluster_up("topologies/cluster-60.yaml", "0"))
		return -1;
	fdid = h_find_nvme(4);
	return fdid ? 0 : -1;
}

/*
 * CQs in the lender's RAM: a CQ in a client's RAM costs two of the lender
 * NTB's 64 LUT entries (the manager's connection and the device's window),
 * its buffer one more: 30 x 3 would not fit (docs/nvme-driver.md).
 */
static void test_thirty_clients(void **state)
{
	run_clients(30, 1, SNV_PLACE_DEVICE);
}

/* Creates queue pairs until refused; reports how many and the refusal. */
static int fill_client(struct kidio *io, void *varg)
{
	struct snv_client_opts o = { .fdid = *(unsigned *)varg, .timeout_ms = 10000 };
	struct snv_qpair_opts qo = { .depth = 2 };
	struct snv_client *c;
	struct snv_qpair *q;
	int n = 0, rc;

	rc = snv_client_open(&o, &c, NULL, 0);
	KID_CHECK(io, rc == 0, rc);
	while ((rc = snv_qpair_create(c, &qo, &q)) == 0 && n < 2000)
		n++;
	kid_report(io, REP_COUNT, n, rc, 0);
	snv_client_close(c);
	return 0;
}

static bool reclaimed(struct kid *k, unsigned n, void *arg)
{
	struct snv_manager_stats st;

	snv_manager_get_stats(arg, &st);
	return st.reclaimed == 2 && st.queues == 3 && st.clients == 3;
}

/* SIGKILL one client mid-I/O: the others go on, its queues are reclaimed. */
static void test_kill_client(void **state)
{
	struct snv_manager *m = mgr_start(fdid);
	struct good_arg a[4];
	struct kid k[4], filler;
	struct want w = { REP_RUNNING, 4 };
	struct snv_manager_stats st;
	const struct rep *r;
	unsigned dev = fdid;

	for (unsigned i = 0; i < 4; i++) {
		/* k[3] is the victim: two queue pairs, I/O until killed. */
		a[i] = (struct good_arg){ .fdid = fdid, .idx = i, .qpairs = i == 3 ? 2 : 1,
					  .rounds = 0 };
		kid_spawn(&k[i], 2 + (int)i, good_client, &a[i]);
	}
	assert_true(serve_until(m, NULL, k, 4, have_reports, &w, 30000));
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.queues, 5);
	kill(k[3].pid, SIGKILL);
	assert_true(serve_until(m, NULL, k, 4, reclaimed, m, 10000));
	/* The survivors were doing I/O all along; let them finish a round after the reclaim. */
	for (unsigned i = 0; i < 3; i++)
		kid_send(&k[i], 's');
	assert_true(serve_until(m, NULL, k, 4, mgr_idle, m, 30000));
	for (unsigned i = 0; i < 3; i++)
		assert_true(kid_ok(&k[i]));
	assert_true(WIFSIGNALED(k[3].status));
	/* Nothing leaked: a new client gets every queue pair of the controller. */
	kid_spawn(&filler, 7, fill_client, &dev);
	assert_true(serve_until(m, NULL, &filler, 1, mgr_idle, m, 30000));
	assert_true(kid_ok(&filler));
	r = kid_rep(&filler, REP_COUNT, 0);
	assert_non_null(r);
	assert_int_equal(r->v[0], 32);
	assert_int_equal(r->v[1], -ENOSPC);
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.reclaimed, 2);
	kids_kill(k, 4);
	kids_kill(&filler, 1);
	mgr_done(m);
}

/* ---- One client, several threads: a queue pair and a buffer each ---- */

struct thr {
	struct snv_client *c;
	unsigned idx;
	int rc;
	pthread_barrier_t *bar;   /* set-up and tear-down apart from the I/O */
};

static void *thr_main(void *varg)
{
	struct thr *t = varg;
	struct snv_qpair_opts qo = { .depth = 8 + t->idx };
	struct snv_qpair *q;
	struct snv_buf *b;

	void *mem = NULL;

	t->rc = snv_qpair_create(t->c, &qo, &q);
	/* Thread 2 brings its own memory (SCIRegisterSegmentMemory). */
	if (!t->rc && t->idx == 2) {
		mem = aligned_alloc(4096, IO_BUF);
		t->rc = mem ? snv_buf_register(t->c, mem, IO_BUF, &b) : -ENOMEM;
		if (!t->rc && snv_buf_vaddr(b) != mem)
			t->rc = -78;
	} else if (!t->rc) {
		t->rc = snv_buf_alloc(t->c, IO_BUF, &b);
	}
	pthread_barrier_wait(t->bar);
	for (unsigned r = 0; !t->rc && r < 8; r++) {
		uint32_t nq = 0;

		t->rc = verified_round(q, b, 1 + (uint64_t)(5 + t->idx) * 4096, 0x7777 + t->idx, r);
		/* Admin calls from several threads at once are serialised by the library. */
		if (!t->rc && snv_get_features(t->c, NVME_FEAT_FID_NUM_QUEUES, 0, &nq))
			t->rc = -77;
	}
	pthread_barrier_wait(t->bar);
	if (!t->rc) {
		snv_buf_free(b);
		t->rc = snv_qpair_delete(q, false);
	}
	free(mem);
	return NULL;
}

static int threaded_client(struct kidio *io, void *varg)
{
	struct snv_client_opts o = { .fdid = *(unsigned *)varg, .timeout_ms = 10000 };
	pthread_barrier_t bar;
	struct thr t[3];
	pthread_t th[3];
	struct snv_client *c;
	int rc;

	rc = snv_client_open(&o, &c, NULL, 0);
	KID_CHECK(io, rc == 0, rc);
	KID_CHECK(io, pthread_barrier_init(&bar, NULL, 3) == 0, 0);
	for (unsigned i = 0; i < 3; i++) {
		t[i] = (struct thr){ .c = c, .idx = i, .bar = &bar };
		KID_CHECK(io, pthread_create(&th[i], NULL, thr_main, &t[i]) == 0, i);
	}
	for (unsigned i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		KID_CHECK(io, t[i].rc == 0, t[i].rc);
	}
	kid_report(io, REP_DONE, 0, 0, 0);
	snv_client_close(c);
	return 0;
}

/* Three threads of one client, each with its own queue pair, at the same time. */
static void test_threads(void **state)
{
	struct snv_manager *m = mgr_start(fdid);
	struct snv_manager_stats st;
	unsigned dev = fdid;
	struct kid k;

	kid_spawn(&k, 3, threaded_client, &dev);
	assert_true(serve_until(m, NULL, &k, 1, mgr_idle, m, 30000));
	assert_true(kid_ok(&k));
	assert_non_null(kid_rep(&k, REP_DONE, 0));
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.refused, 0);
	kids_kill(&k, 1);
	mgr_done(m);
}

/* ---- Hostile clients (default cluster) ---- */

#define NODE_A 8
#define NODE_B 12

static unsigned fdid_b;

static int group_default_setup(void **state)
{
	/* The test process is a program of lender-a (host 1), and runs both managers. */
	if (h_cluster_up(NULL, "1"))
		return -1;
	fdid = h_find_nvme(NODE_A);
	fdid_b = h_find_nvme(NODE_B);
	return fdid && fdid_b ? 0 : -1;
}

struct hostile_arg {
	unsigned fdid, victim_qid, victim_segbase;
};

static int admin_raw(struct snv_client *c, uint8_t opcode, uint32_t cdw10, uint8_t flags,
		     uint32_t len)
{
	struct snv_admin a = { .data_len = len };
	struct nvme_sqe s;
	uint8_t data[4096];

	nvme_sqe_init(&s, opcode, 0, 0);
	s.cdw10 = cdw10;
	s.flags = flags;
	memcpy(a.sqe, &s, sizeof(s));
	return snv_rpc(c, SNV_MSG_ADMIN, &a, sizeof(a), NULL, 0, data, sizeof(data), NULL);
}

static void send_raw(struct snv_client *c, const void *msg, unsigned len)
{
	sci_error_t se;

	for (unsigned i = 0; i < 200; i++) {
		SCITriggerDataInterrupt(c->chan, (void *)msg, len, 0, &se);
		if (se != SCI_ERR_BUSY)
			return;
		poll(NULL, 0, 2);
	}
}

static int hostile_rpc(struct kidio *io, void *varg)
{
	struct hostile_arg *a = varg;
	struct snv_client_opts o = { .fdid = a->fdid, .timeout_ms = 10000 };
	struct snv_delete_qp del = { .qid = a->victim_qid };
	struct snv_create_qp cr = { .depth = 16, .flags = SNV_QP_PRIO_POLICY };
	struct snv_qpair *q;
	struct snv_client *c;
	struct snv_buf *b;
	struct snv_hdr h;
	uint8_t msg[SNV_MSG_MAX];
	uint64_t tok, rng = 0x1234567;
	uint32_t id;
	int rc;

	rc = snv_client_open(&o, &c, NULL, 0);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_qpair_create(c, NULL, &q);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_buf_alloc(c, IO_BUF, &b);
	KID_CHECK(io, rc == 0, rc);
	kid_report(io, REP_RUNNING, 0, 0, 0);           /* set up: attack on 'g' */
	KID_CHECK(io, kid_command(io, 30000) == 'g', 0);
	/* Another client's queue pair: not ours to delete, through the RPC or raw. */
	rc = snv_rpc(c, SNV_MSG_DELETE_QP, &del, sizeof(del), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -EPERM, rc);
	del.qid = 0;
	rc = snv_rpc(c, SNV_MSG_DELETE_QP, &del, sizeof(del), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -EPERM, rc);
	KID_CHECK(io, admin_raw(c, nvme_admin_delete_sq, a->victim_qid, 0, 0) == -EPERM, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_delete_cq, a->victim_qid, 0, 0) == -EPERM, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_create_sq, 5, 0, 0) == -EPERM, 0);
	/* Outside the whitelist: Set Features, Format NVM, Abort, AER. */
	KID_CHECK(io, admin_raw(c, nvme_admin_set_features, 7, 0, 0) == -EPERM, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_format_nvm, 0, 0, 0) == -EPERM, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_abort_cmd, a->victim_qid, 0, 0) == -EPERM, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_async_event, 0, 0, 0) == -EPERM, 0);
	/* Whitelisted opcodes with bad fields: CNS, SGL flag, length. */
	KID_CHECK(io, admin_raw(c, nvme_admin_identify, 0x10, 0, 4096) == -EINVAL, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_identify, 1, 0x40, 4096) == -EINVAL, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_identify, 1, 0, 64) == -EINVAL, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_get_features, 0x80, 0, 0) == -EINVAL, 0);
	KID_CHECK(io, admin_raw(c, nvme_admin_identify, 1, 0, 4096) == 0, 0);
	/* Queues on memory that is not ours: another client's segment, a missing one. */
	cr.sq_segid = a->victim_segbase;
	cr.cq_segid = a->victim_segbase + 1;
	rc = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -EINVAL, rc);
	cr.sq_segid = c->segid_base + 200;
	cr.cq_segid = c->segid_base + 201;
	rc = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -ENOENT, rc);
	cr.depth = 1 << 20;
	rc = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -EINVAL, rc);
	/* Classes: urgent is beyond the default policy (medium); a class with the policy flag */
	cr.depth = 16;
	cr.flags = 0;
	cr.prio = NVME_QPRIO_URGENT;
	rc = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -EACCES, rc);
	cr.flags = SNV_QP_PRIO_POLICY;
	cr.prio = NVME_QPRIO_LOW;
	rc = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -EINVAL, rc);
	/* Forged session: wrong token, another session's ID: no answer at all. */
	c->timeout_ms = 300;
	tok = c->token;
	id = c->client_id;
	c->token ^= 1;
	del.qid = snv_qpair_id(q);
	rc = snv_rpc(c, SNV_MSG_DELETE_QP, &del, sizeof(del), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -ETIMEDOUT, rc);
	c->token = tok;
	c->client_id = id ^ 0x10000;
	rc = snv_rpc(c, SNV_MSG_DELETE_QP, &del, sizeof(del), NULL, 0, NULL, 0, NULL);
	KID_CHECK(io, rc == -ETIMEDOUT, rc);
	c->client_id = id;
	c->timeout_ms = 10000;
	/* Malformed messages: empty, short, bad magic, version, length, then noise. */
	send_raw(c, msg, 0);
	memset(msg, 0x5a, sizeof(msg));
	send_raw(c, msg, 10);
	send_raw(c, msg, sizeof(h));
	snv_msg_init(&h, SNV_MSG_ADMIN, sizeof(h) + 4);
	h.version = 7;
	memcpy(msg, &h, sizeof(h));
	send_raw(c, msg, sizeof(h) + 4);
	h.version = SNV_MSG_VERSION;
	h.len = 9999;
	memcpy(msg, &h, sizeof(h));
	send_raw(c, msg, sizeof(h) + 4);
	/* A valid frame with our own session but a short body. */
	snv_msg_init(&h, SNV_MSG_CREATE_QP, sizeof(h) + 4);
	h.client = c->client_id;
	h.token = c->token;
	memcpy(msg, &h, sizeof(h));
	send_raw(c, msg, sizeof(h) + 4);
	for (unsigned i = 0; i < 100; i++) {
		unsigned len;

		for (unsigned j = 0; j < sizeof(msg) / 8; j++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			memcpy(msg + j * 8, &rng, 8);
		}
		len = (unsigned)(rng % sizeof(msg));
		if (i % 2) {                          /* a plausible header, random rest */
			snv_msg_init(&h, (unsigned)(rng >> 40) % 8, len < sizeof(h) ? sizeof(h) : len);
			memcpy(msg, &h, sizeof(h));
			len = h.len;
		}
		send_raw(c, msg, len);
	}
	/* Everything still works for us too. */
	for (unsigned r = 0; r < 3; r++) {
		rc = verified_round(q, b, 1 + 7 * 4096, 0xbad, r);
		KID_CHECK(io, rc == 0, rc);
	}
	kid_report(io, REP_DONE, 0, 0, 0);
	KID_CHECK(io, kid_command(io, 30000) == 'q', 0);
	snv_client_close(c);
	return 0;
}

static bool reported_or_exited(struct kid *k, unsigned n, void *arg)
{
	return have_reports(k, n, arg) || all_exited(k, n, NULL);
}

/*
 * A victim runs verified I/O while a hostile client attacks. Both set up
 * before and tear down after the other's I/O (barriers: see "Known problems"
 * in docs/nvme-driver.md); `prime` gives the hostile client the victim's
 * queue ID and segment ID base.
 */
static void duel(struct snv_manager *m, struct kid *k, int vhost, struct good_arg *ga, int hhost,
		 kid_fn hfn, void *harg, void (*prime)(void *harg, const struct rep *qid))
{
	struct want w = { REP_QID, 1 };

	ga->wait_go = true;
	ga->rounds = 0;
	kid_spawn(&k[0], vhost, good_client, ga);
	assert_true(serve_until(m, NULL, k, 1, reported_or_exited, &w, 30000));
	assert_false(k[0].exited);
	if (prime)
		prime(harg, kid_rep(&k[0], REP_QID, 0));
	kid_spawn(&k[1], hhost, hfn, harg);
	w.kind = REP_RUNNING;
	assert_true(serve_until(m, NULL, &k[1], 1, reported_or_exited, &w, 30000));
	assert_false(k[1].exited);
	kid_send(&k[0], 'g');
	assert_true(serve_until(m, NULL, k, 1, reported_or_exited, &w, 30000));
	kid_send(&k[1], 'g');                           /* attack while the victim runs */
	w.kind = REP_DONE;
	assert_true(serve_until(m, NULL, &k[1], 1, reported_or_exited, &w, 40000));
	assert_false(k[1].exited);
	assert_false(k[0].exited);                      /* the victim is still at it */
	kid_send(&k[0], 's');
	assert_true(serve_until(m, NULL, k, 1, reported_or_exited, &w, 30000));
	kid_send(&k[0], 'q');
	kid_send(&k[1], 'q');
	assert_true(serve_until(m, NULL, k, 2, mgr_idle, m, 30000));
	assert_true(kid_ok(&k[0]));
	assert_true(kid_ok(&k[1]));
}

static void prime_rpc(void *harg, const struct rep *r)
{
	struct hostile_arg *ha = harg;

	assert_non_null(r);
	ha->victim_qid = (unsigned)r->v[0];
	ha->victim_segbase = (unsigned)r->v[1];
}

static void test_hostile_rpc(void **state)
{
	struct snv_manager *m = mgr_start(fdid);
	struct good_arg ga = { .fdid = fdid, .idx = 0, .qpairs = 1 };
	struct hostile_arg ha = { .fdid = fdid };
	struct snv_manager_stats st;
	struct kid k[2];

	duel(m, k, 0, &ga, 2, hostile_rpc, &ha, prime_rpc);
	snv_manager_get_stats(m, &st);
	assert_true(st.refused >= 118);
	assert_int_equal(st.reclaimed, 0);
	kids_kill(k, 2);
	mgr_done(m);
}

/* PRPs outside the client's windows: an error completion, and the queue goes on. */
struct prp_arg {
	unsigned fdid, manager_node;
	uint64_t (*bad)(uint64_t io, size_t size);
};

static uint64_t bad_lut(uint64_t io, size_t size)
{
	/* lender-a: the NTB BAR's last LUT entry (default topology: 64 x 128 MiB) is unprogrammed. */
	return (io | ((8ull << 30) - 1)) - 0xfff;
}

static uint64_t bad_iommu(uint64_t io, size_t size)
{
	return io + size;                               /* just past the mapped window */
}

static int hostile_prp(struct kidio *io, void *varg)
{
	struct prp_arg *a = varg;
	struct snv_client_opts o = { .fdid = a->fdid, .manager_node = a->manager_node,
				     .timeout_ms = 10000 };
	struct snv_qpair *q;
	struct snv_client *c;
	struct snv_buf *b;
	struct snv_cpl cpl;
	struct nvme_sqe s;
	uint64_t bad;
	int rc;

	rc = snv_client_open(&o, &c, NULL, 0);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_qpair_create(c, NULL, &q);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_buf_alloc(c, IO_BUF, &b);
	KID_CHECK(io, rc == 0, rc);
	kid_report(io, REP_RUNNING, 0, 0, 0);           /* set up: attack on 'g' */
	KID_CHECK(io, kid_command(io, 30000) == 'g', 0);
	bad = a->bad(snv_buf_ioaddr(b, 0), snv_buf_size(b));
	for (unsigned op = 0; op < 3; op++) {
		/* read into, write from, and a PRP list pointer outside the windows */
		nvme_sqe_init(&s, op == 1 ? nvme_cmd_write : nvme_cmd_read, 0, 1);
		nvme_rw_set(&s, 1 + 6 * 4096, op == 2 ? 24 : 8);
		s.prp1 = op == 2 ? snv_buf_ioaddr(b, 0) : bad;
		s.prp2 = op == 2 ? bad : 0;
		rc = snv_submit_raw(q, &s, NULL);
		KID_CHECK(io, rc == 0, rc);
		rc = h_reap(q, &cpl);
		KID_CHECK(io, rc == 0, rc);
		if (getenv("NVD_LOG"))
			fprintf(stderr, "hostile PRP op %u: buffer %#llx+%#zx, bad %#llx: status %#x\n",
				op, (unsigned long long)snv_buf_ioaddr(b, 0), snv_buf_size(b),
				(unsigned long long)bad, cpl.status);
		KID_CHECK(io, cpl.status != 0, op);
	}
	for (unsigned r = 0; r < 3; r++) {
		rc = verified_round(q, b, 1 + 6 * 4096, 0xfee, r);
		KID_CHECK(io, rc == 0, rc);
	}
	kid_report(io, REP_DONE, 0, 0, 0);
	KID_CHECK(io, kid_command(io, 30000) == 'q', 0);
	snv_client_close(c);
	return 0;
}

/*
 * The hostile client runs on a host other than the lender: on the lender
 * itself its buffer is lender RAM, and the address past it may well be other
 * lender RAM mapped for the device (queues, PRP tables): no PASID (see
 * docs/nvme-driver.md).
 */
static void prp_case(unsigned dev, int good_host, int bad_host, uint64_t (*bad)(uint64_t, size_t),
		     int iommu_host)
{
	long long faults = iommu_host >= 0 ? h_iommu_faults(iommu_host) : 0;
	struct snv_manager *m = mgr_start(dev);
	struct good_arg ga = { .fdid = dev, .idx = 0, .qpairs = 1, .manager_node = NODE_A };
	struct prp_arg pa = { .fdid = dev, .manager_node = NODE_A, .bad = bad };
	struct kid k[2];

	duel(m, k, good_host, &ga, bad_host, hostile_prp, &pa, NULL);
	if (iommu_host >= 0) {
		/* The lender's IOMMU stopped the hostile DMAs (3 commands) and recorded it. */
		assert_true(faults >= 0);
		assert_true(h_iommu_faults(iommu_host) >= faults + 3);
	}
	kids_kill(k, 2);
	mgr_done(m);
}

static void test_hostile_prp_ntb(void **state)
{
	prp_case(fdid, 0, 2, bad_lut, -1);
}

static void test_hostile_prp_iommu(void **state)
{
	/* lender-b's controller, managed from lender-a's host (node 8). */
	prp_case(fdid_b, 1, 0, bad_iommu, 2);
}

int main(void)
{
	const struct CMUnitTest eight[] = {
		cmocka_unit_test_teardown(test_eight_clients, test_teardown),
		cmocka_unit_test_teardown(test_kill_client, test_teardown),
		cmocka_unit_test_teardown(test_threads, test_teardown),
	};
	const struct CMUnitTest hostile[] = {
		cmocka_unit_test_teardown(test_hostile_rpc, test_teardown),
		cmocka_unit_test_teardown(test_hostile_prp_ntb, test_teardown),
		cmocka_unit_test_teardown(test_hostile_prp_iommu, test_teardown),
	};
	const struct CMUnitTest sixty[] = {
		cmocka_unit_test_teardown(test_thirty_clients, test_teardown),
	};
	const char *only = getenv("NVD_ONLY");
	int rc = 0;

	if (only && strcmp(only, "eight") && strcmp(only, "hostile") && strcmp(only, "sixty"))
		only = NULL;
	if (!only || !strcmp(only, "eight"))
		rc += cmocka_run_group_tests_name("eight_hosts", eight, group_eight_setup, group_teardown);
	if (!only || !strcmp(only, "sixty"))
		rc += cmocka_run_group_tests_name("cluster_60", sixty, group_sixty_setup,
						  group_teardown);
	if (!only || !strcmp(only, "hostile"))
		rc += cmocka_run_group_tests_name("hostile", hostile, group_default_setup, group_teardown);
	return rc;
}
