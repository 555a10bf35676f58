// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme: SQs in the controller memory buffer (SNV_PLACE_CMB)
 * against real daemons, on tests/topologies/nvme-cmb.yaml (nvme0: a 16 KiB
 * CMB, 4 pages, behind the lender's IOMMU; nvme1: none). The test process is
 * the manager; clients are forked programs of other hosts driven by one-byte
 * commands (nvme_dist_harness.h).
 *
 * Two clients on two hosts get distinct CMB regions and run verified I/O at
 * once; the CMB fills up (a clear -ENOBUFS); a region comes back when its
 * client is killed (reclaim) or deletes its queue, and a third client gets it
 * and runs I/O there; a CQ in the CMB and a controller without one are
 * refused, and so are malformed CMB requests sent past the library.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nvme_dist_harness.h"
#include "nvme/snv_mgr.h"

static unsigned fdid_cmb, fdid_plain;
static struct snv_manager *live_mgr;

/*
 * A client taking commands: 'c' / 'C' create a queue pair with the SQ in the
 * CMB, depth 64 / 128 (one / two pages): REP_QID (rc, qid, CMB page); 'i' runs
 * verified I/O on the newest queue pair: REP_DONE (rc); 'd' deletes it:
 * REP_COUNT (rc); 'h' sends malformed CREATE_QP requests and then a
 * well-formed one for a two-page CMB SQ: REP_RUNNING (all refused with
 * -EINVAL, rc of the last); 'q' closes and exits. At start it reports what a CQ in the
 * CMB gives: REP_INFO (rc).
 */
struct cmb_arg {
	unsigned fdid, idx;
};

#define MANAGER_NODE 4            /* the test process: host 0 */

static int cmb_client(struct kidio *io, void *varg)
{
	struct cmb_arg *a = varg;
	struct snv_client_opts o = { .fdid = a->fdid, .manager_node = MANAGER_NODE,
				     .timeout_ms = 10000 };
	struct snv_qpair_opts cq_cmb = { .depth = 64, .cq_place = SNV_PLACE_CMB };
	struct snv_qpair *q[8] = { 0 }, *bad = NULL;
	unsigned nq = 0;
	struct snv_client *c;
	struct snv_buf *b;
	char err[256];
	int rc, cmd;

	rc = snv_client_open(&o, &c, err, sizeof(err));
	if (rc)
		fprintf(stderr, "client %u: %s\n", a->idx, err);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_buf_alloc(c, IO_BUF, &b);
	KID_CHECK(io, rc == 0, rc);
	kid_report(io, REP_INFO, snv_qpair_create(c, &cq_cmb, &bad), 0, 0);
	KID_CHECK(io, bad == NULL, 0);
	while ((cmd = kid_command(io, 30000)) != 'q') {
		KID_CHECK(io, cmd > 0, cmd);
		if (cmd == 'c' || cmd == 'C') {
			struct snv_qpair_opts qo = { .depth = cmd == 'c' ? 64 : 128,
						     .sq_place = SNV_PLACE_CMB };

			KID_CHECK(io, nq < 8, nq);
			rc = snv_qpair_create(c, &qo, &q[nq]);
			kid_report(io, REP_QID, rc, rc ? 0 : snv_qpair_id(q[nq]),
				   rc ? -1 : (int)(q[nq]->hw[0].sq_cmb_off / SNV_PAGE));
			if (!rc) {
				KID_CHECK(io, q[nq]->hw[0].sqs == NULL, 0);
				nq++;
			}
		} else if (cmd == 'i') {
			KID_CHECK(io, nq > 0, 0);
			rc = 0;
			for (unsigned r = 0; r < 8 && !rc; r++)
				rc = verified_round(q[nq - 1], b, 1 + (uint64_t)a->idx * 4096,
						    0xc3b + a->idx, r);
			kid_report(io, REP_DONE, rc, 0, 0);
		} else if (cmd == 'h') {
			/* Raw CREATE_QP requests the library would never send. */
			struct snv_create_qp cr = { .depth = 16, .cq_segid = c->segid_base,
						    .flags = SNV_QP_SQ_CMB | SNV_QP_PRIO_POLICY };
			struct snv_qp_reply qr;
			int r1, r2, r3, r4;

			pthread_mutex_lock(&c->lock);
			cr.sq_segid = c->segid_base + 1;      /* a CMB SQ naming a segment */
			r1 = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), &qr, sizeof(qr), NULL, 0,
				     NULL);
			cr.sq_segid = 0;
			cr.flags = SNV_QP_SQ_CMB | SNV_QP_PRIO_POLICY | 0x80; /* an unknown flag */
			r2 = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), &qr, sizeof(qr), NULL, 0,
				     NULL);
			cr.flags = SNV_QP_SQ_CMB | SNV_QP_PRIO_POLICY;
			cr.sq_fdid = 1;                      /* an accelerator without SQ_ACCEL */
			r3 = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), &qr, sizeof(qr), NULL, 0,
				     NULL);
			cr.sq_fdid = 0;                      /* well-formed: CMB or not is the question */
			cr.depth = 65;                        /* 2 pages: never fits a full CMB */
			r4 = snv_rpc(c, SNV_MSG_CREATE_QP, &cr, sizeof(cr), &qr, sizeof(qr), NULL, 0,
				     NULL);
			pthread_mutex_unlock(&c->lock);
			kid_report(io, REP_RUNNING, r1 == -EINVAL && r2 == -EINVAL && r3 == -EINVAL,
				   r4, 0);
		} else if (cmd == 'd') {
			KID_CHECK(io, nq > 0, 0);
			kid_report(io, REP_COUNT, snv_qpair_delete(q[--nq], false), 0, 0);
		} else {
			KID_CHECK(io, false, cmd);
		}
	}
	snv_client_close(c);
	return 0;
}

static int group_setup(void **state)
{
	if (h_cluster_up("tests/topologies/nvme-cmb.yaml", "0"))
		return -1;
	fdid_cmb = h_find_nvme(4);
	fdid_plain = h_find_nvme(8);
	return fdid_cmb && fdid_plain ? 0 : -1;
}

static int test_teardown(void **state)
{
	h_kill_all();
	snv_manager_destroy(live_mgr);
	live_mgr = NULL;
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
	struct snv_manager *m = NULL;
	char err[256] = "";
	int rc = snv_manager_start(&mo, &m, err, sizeof(err));

	if (rc)
		fprintf(stderr, "manager: %s\n", err);
	assert_int_equal(rc, 0);
	live_mgr = m;
	return m;
}

static void mgr_done(struct snv_manager *m)
{
	live_mgr = NULL;
	snv_manager_destroy(m);
}

/* Child i has its nth report of `kind` (0-based). */
struct want_one {
	unsigned i, nth;
	int kind;
};

static bool has_rep(struct kid *k, unsigned n, void *arg)
{
	const struct want_one *w = arg;

	return kid_rep(&k[w->i], w->kind, w->nth) != NULL;
}

/* Serve the manager until child i's nth report `kind` arrives (20 s at most). */
static const struct rep *await(struct snv_manager *m, struct kid *k, unsigned n, unsigned i,
			       int kind, unsigned nth)
{
	struct want_one w = { i, nth, kind };

	serve_until(m, NULL, k, n, has_rep, &w, 20000);
	return kid_rep(&k[i], kind, nth);
}

/* Ask child i for `cmd` and return its answer (its nth report `kind`). */
static const struct rep *ask(struct snv_manager *m, struct kid *k, unsigned n, unsigned i,
			     char cmd, int kind, unsigned nth)
{
	const struct rep *r;

	kid_send(&k[i], cmd);
	r = await(m, k, n, i, kind, nth);
	assert_non_null(r);
	return r;
}

static bool queues_at_most(struct kid *k, unsigned n, void *arg)
{
	struct snv_manager_stats st;

	snv_manager_get_stats(live_mgr, &st);
	return st.queues <= *(unsigned *)arg;
}

static void test_cmb_sqs(void **state)
{
	struct snv_manager *m = mgr_start(fdid_cmb);
	struct cmb_arg args[3] = { { fdid_cmb, 0 }, { fdid_cmb, 1 }, { fdid_cmb, 2 } };
	struct snv_manager_stats st;
	const struct rep *r, *r0, *r1;
	struct kid k[3];
	unsigned want;

	assert_true(m->cmb_flags & SNV_CMB_SQ);
	assert_int_equal(m->cmb_size, 16384);
	kid_spawn(&k[0], 1, cmb_client, &args[0]);
	kid_spawn(&k[1], 2, cmb_client, &args[1]);
	/* A CQ in the CMB: refused by the library (CMBSZ.CQS = 0), nothing created. */
	for (unsigned i = 0; i < 2; i++) {
		r = await(m, k, 2, i, REP_INFO, 0);
		assert_non_null(r);
		assert_int_equal(r->v[0], -ENOTSUP);
	}
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.queues, 0);

	/* Two clients, two hosts: distinct pages of the CMB, verified I/O at once. */
	r0 = ask(m, k, 2, 0, 'c', REP_QID, 0);
	r1 = ask(m, k, 2, 1, 'c', REP_QID, 0);
	assert_int_equal(r0->v[0], 0);
	assert_int_equal(r1->v[0], 0);
	assert_int_not_equal(r0->v[1], r1->v[1]);
	assert_true(r0->v[2] >= 0 && r0->v[2] < 4 && r1->v[2] >= 0 && r1->v[2] < 4);
	assert_int_not_equal(r0->v[2], r1->v[2]);
	kid_send(&k[0], 'i');
	kid_send(&k[1], 'i');
	assert_non_null(await(m, k, 2, 0, REP_DONE, 0));
	assert_non_null(await(m, k, 2, 1, REP_DONE, 0));
	assert_int_equal(kid_rep(&k[0], REP_DONE, 0)->v[0], 0);
	assert_int_equal(kid_rep(&k[1], REP_DONE, 0)->v[0], 0);

	/* A third client fills the CMB (two pages), then finds it full. */
	kid_spawn(&k[2], 2, cmb_client, &args[2]);
	r = ask(m, k, 3, 2, 'C', REP_QID, 0);
	assert_int_equal(r->v[0], 0);
	assert_true(r->v[2] != r0->v[2] && r->v[2] != r1->v[2] && r->v[2] + 1 != r0->v[2] &&
		    r->v[2] + 1 != r1->v[2] && r->v[2] + 2 <= 4);
	r = ask(m, k, 3, 2, 'c', REP_QID, 1);
	assert_int_equal(r->v[0], -ENOBUFS);

	/* Killed mid-life: its page is reclaimed and the third client gets it. */
	kill(k[0].pid, SIGKILL);
	want = 2;
	assert_true(serve_until(m, NULL, k, 3, queues_at_most, &want, 10000));
	r = ask(m, k, 3, 2, 'c', REP_QID, 2);
	assert_int_equal(r->v[0], 0);
	assert_int_equal(r->v[2], r0->v[2]);
	r = ask(m, k, 3, 2, 'i', REP_DONE, 0);
	assert_int_equal(r->v[0], 0);

	/* Deleted: the second client's page goes to the third. */
	r = ask(m, k, 3, 1, 'd', REP_COUNT, 0);
	assert_int_equal(r->v[0], 0);
	r = ask(m, k, 3, 2, 'c', REP_QID, 3);
	assert_int_equal(r->v[0], 0);
	assert_int_equal(r->v[2], r1->v[2]);
	r = ask(m, k, 3, 2, 'i', REP_DONE, 1);
	assert_int_equal(r->v[0], 0);
	r = ask(m, k, 3, 2, 'c', REP_QID, 4);
	assert_int_equal(r->v[0], -ENOBUFS);
	/* Raw requests: a CMB SQ naming a segment, unknown flags, rsvd; full. */
	snv_manager_get_stats(m, &st);
	r = ask(m, k, 3, 1, 'h', REP_RUNNING, 0);
	assert_int_equal(r->v[0], 1);
	assert_int_equal(r->v[1], -ENOBUFS);
	want = st.refused;
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.refused, want + 4);

	kid_send(&k[1], 'q');
	kid_send(&k[2], 'q');
	assert_true(serve_until(m, NULL, k, 3, all_exited, NULL, 20000));
	assert_true(kid_ok(&k[1]) && kid_ok(&k[2]));
	kids_kill(k, 3);
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.queues, 0);
	assert_int_equal(st.clients, 0);
	assert_int_equal(st.reclaimed, 1);
	mgr_done(m);
	/* The lender's IOMMU is on: the CMB's device mapping caused no fault. */
	assert_int_equal(h_iommu_faults(0), 0);
}

/* A controller without a CMB: an SQ there is refused, nothing is created. */
static void test_no_cmb(void **state)
{
	struct snv_manager *m = mgr_start(fdid_plain);
	struct cmb_arg arg = { fdid_plain, 0 };
	struct snv_manager_stats st;
	const struct rep *r;
	struct kid k;

	assert_int_equal(m->cmb_flags, 0);
	kid_spawn(&k, 2, cmb_client, &arg);
	r = ask(m, &k, 1, 0, 'c', REP_QID, 0);
	assert_int_equal(r->v[0], -ENOTSUP);
	/* The manager refuses on its own too (a client that skips the library's check). */
	r = ask(m, &k, 1, 0, 'h', REP_RUNNING, 0);
	assert_int_equal(r->v[0], 1);
	assert_int_equal(r->v[1], -ENOTSUP);
	kid_send(&k, 'q');
	assert_true(serve_until(m, NULL, &k, 1, all_exited, NULL, 20000));
	assert_true(kid_ok(&k));
	kids_kill(&k, 1);
	snv_manager_get_stats(m, &st);
	assert_int_equal(st.queues, 0);
	mgr_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cmb_sqs, test_teardown),
		cmocka_unit_test_teardown(test_no_cmb, test_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
