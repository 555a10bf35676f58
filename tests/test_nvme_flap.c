// SPDX-License-Identifier: MIT
/*
 * A link flap under the distributed NVMe driver (issue 12): on the
 * eight-hosts cluster, three clients on three hosts verify data continuously
 * on one controller while a fourth client's host loses its NTB link for
 * about a second. The controller must stay healthy (CSTS.CFS clear, the
 * same manager, no reset), the three must never see an error, the fourth
 * sees errors or timeouts (never wrong data) and, once the link is back,
 * works again on a new queue pair, and a new client on its host works too.
 *
 * The test process is the manager (host 0, the lender); clients are forked
 * programs of other hosts (nvme_dist_harness.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nvme_dist_harness.h"
#include "nvme/snv_mgr.h"

#define FLAP_HOST   2
#define FLAP_MS     1000
#define CORRUPT     (-5)          /* verified_round: data read back differs */

static unsigned fdid;
static struct snv_manager *mgr;

/* `smartio ntb --host H link up|down`: 0 on success. */
static int h_ntb_link(int host, bool up)
{
	char hs[16];
	char *argv[] = { h_cli, (char *)"ntb", (char *)"--host", hs, (char *)"link",
			 (char *)(up ? "up" : "down"), NULL };
	pid_t pid;
	int st;

	snprintf(hs, sizeof(hs), "%d", host);
	if (posix_spawn(&pid, h_cli, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

struct cl_arg {
	unsigned idx;
	unsigned rounds;          /* 0: until 's' */
};

static int open_client(struct kidio *io, struct snv_client **c, struct snv_buf **b,
		       struct snv_qpair **q)
{
	struct snv_client_opts o = { .fdid = fdid, .timeout_ms = 10000 };
	struct snv_qpair_opts qo = { .depth = 16 };
	char err[256] = "";
	int rc = snv_client_open(&o, c, err, sizeof(err));

	if (rc)
		fprintf(stderr, "client: %s\n", err);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_buf_alloc(*c, IO_BUF, b);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_qpair_create(*c, &qo, q);
	KID_CHECK(io, rc == 0, rc);
	return 0;
}

/* Verified I/O with no error tolerated: until 's', or `rounds` rounds. */
static int steady_client(struct kidio *io, void *varg)
{
	struct cl_arg *a = varg;
	uint64_t end = smio_now_ms() + 60000;
	struct snv_client *c;
	struct snv_qpair *q;
	struct snv_buf *b;
	int rc;

	if (open_client(io, &c, &b, &q))
		return 1;
	for (unsigned r = 0; a->rounds ? r < a->rounds : smio_now_ms() < end; r++) {
		rc = verified_round(q, b, 1 + (uint64_t)a->idx * 4096, 0xf1a9 + a->idx, r);
		if (rc)
			fprintf(stderr, "steady client %u: round %u failed (%d)\n", a->idx, r, rc);
		KID_CHECK(io, rc == 0, rc);
		if (r == 0)
			kid_report(io, REP_RUNNING, 0, 0, 0);
		if (!a->rounds && kid_command(io, 0) == 's')
			break;
	}
	kid_report(io, REP_DONE, 0, 0, 0);
	snv_client_close(c);
	return 0;
}

/*
 * The client whose host loses its link: verified I/O until a round fails
 * (an error status or a timeout, never wrong data), then, once told the
 * link is back ('u'), the broken queue pair goes (its lost completions
 * leave it unusable: the CQ head can never pass them) and a new one on the
 * same session verifies again.
 */
static int flapped_client(struct kidio *io, void *varg)
{
	struct cl_arg *a = varg;
	struct snv_qpair_opts qo = { .depth = 16 };
	uint64_t end = smio_now_ms() + 60000;
	struct snv_client *c;
	struct snv_qpair *q;
	struct snv_buf *b;
	int rc = 0;

	if (open_client(io, &c, &b, &q))
		return 1;
	for (unsigned r = 0; !rc && smio_now_ms() < end; r++) {
		rc = verified_round(q, b, 1 + (uint64_t)a->idx * 4096, 0xf1a9 + a->idx, r);
		KID_CHECK(io, rc != CORRUPT, r);
		if (r == 0 && !rc)
			kid_report(io, REP_RUNNING, 0, 0, 0);
	}
	KID_CHECK(io, rc != 0, 0);                    /* the flap was noticed */
	fprintf(stderr, "flapped client: I/O failed (%d) at %llu ms\n", rc,
		(unsigned long long)(smio_now_ms() % 100000));
	kid_report(io, REP_INFO, rc, 0, 0);
	KID_CHECK(io, kid_command(io, 30000) == 'u', 0);
	rc = snv_qpair_delete(q, true);
	KID_CHECK(io, rc == 0, rc);
	rc = snv_qpair_create(c, &qo, &q);
	KID_CHECK(io, rc == 0, rc);
	for (unsigned r = 0; r < 4; r++) {
		rc = verified_round(q, b, 1 + (uint64_t)a->idx * 4096, 0xbac + a->idx, r);
		KID_CHECK(io, rc == 0, rc);
	}
	kid_report(io, REP_DONE, 0, 0, 0);
	snv_client_close(c);
	return 0;
}

static bool has_rep(struct kid *k, unsigned n, void *arg)
{
	return kid_rep(k, *(int *)arg, 0) != NULL || k->exited;
}

static bool never(struct kid *k, unsigned n, void *arg)
{
	for (unsigned i = 0; i < n; i++)
		if (k[i].exited)
			return true;  /* a steady client failed: stop waiting at once */
	return false;
}

static void assert_healthy(void)
{
	uint32_t csts = snv_rd32(mgr->bar, NVME_REG_CSTS);

	assert_int_equal(NVME_CSTS_CFS(csts), 0);
	assert_int_equal(NVME_CSTS_RDY(csts), 1);
}

static void test_link_flap(void **state)
{
	struct snv_manager_opts mo = { .fdid = fdid, .heartbeat_ms = 100 };
	static const int hosts[4] = { 1, 3, 4, FLAP_HOST };
	struct cl_arg a[5];
	struct kid k[5];
	struct want w = { REP_RUNNING, 4 };
	int kind;

	assert_int_equal(snv_manager_start(&mo, &mgr, NULL, 0), 0);
	for (unsigned i = 0; i < 4; i++) {
		a[i] = (struct cl_arg){ .idx = i };
		kid_spawn(&k[i], hosts[i], i == 3 ? flapped_client : steady_client, &a[i]);
	}
	assert_true(serve_until(mgr, NULL, k, 4, have_reports, &w, 30000));

	/* The flap: about a second without the link, the steady three verifying on. */
	fprintf(stderr, "link down at %llu ms\n", (unsigned long long)(smio_now_ms() % 100000));
	assert_int_equal(h_ntb_link(FLAP_HOST, false), 0);
	assert_false(serve_until(mgr, NULL, k, 3, never, NULL, FLAP_MS));
	assert_int_equal(h_ntb_link(FLAP_HOST, true), 0);
	assert_healthy();

	/* The flapped client noticed (it may take its command timeout to). */
	kind = REP_INFO;
	assert_true(serve_until(mgr, NULL, &k[3], 1, has_rep, &kind, 20000));
	assert_non_null(kid_rep(&k[3], REP_INFO, 0));
	assert_healthy();

	/* It recovers on a new queue pair; a new client on its host works too. */
	kid_send(&k[3], 'u');
	kind = REP_DONE;
	assert_true(serve_until(mgr, NULL, &k[3], 1, has_rep, &kind, 30000));
	a[4] = (struct cl_arg){ .idx = 4, .rounds = 6 };
	kid_spawn(&k[4], FLAP_HOST, steady_client, &a[4]);
	assert_true(serve_until(mgr, NULL, &k[4], 1, all_exited, NULL, 30000));
	assert_true(kid_ok(&k[4]));

	/* The steady three never failed, and stop cleanly. */
	for (unsigned i = 0; i < 3; i++) {
		assert_false(k[i].exited);
		kid_send(&k[i], 's');
	}
	assert_true(serve_until(mgr, NULL, k, 4, all_exited, NULL, 30000));
	for (unsigned i = 0; i < 4; i++)
		assert_true(kid_ok(&k[i]));
	assert_healthy();
	kids_kill(k, 5);
	snv_manager_destroy(mgr);
	mgr = NULL;
}

static int group_setup(void **state)
{
	if (h_cluster_up("tests/topologies/eight-hosts.yaml", "0"))
		return -1;
	fdid = h_find_nvme(4);
	return fdid ? 0 : -1;
}

static int group_teardown(void **state)
{
	h_kill_all();
	/* a failed test may have left the link down: the next run starts clean anyway */
	snv_manager_destroy(mgr);
	mgr = NULL;
	return h_cluster_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_flap),
	};

	return cmocka_run_group_tests_name("nvme_flap", tests, group_setup, group_teardown);
}
