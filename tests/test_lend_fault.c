// SPDX-License-Identifier: MIT
/*
 * Device Lending when the lender dies, through real daemons (docs/lending.md,
 * "Lender dies"): host 0 borrows host 1's NVMe (the in-kernel driver binds
 * to the shadow), host 1's daemon is SIGKILLed, and host 0 must
 *  - keep answering: STATUS round trips on a client connection, back to
 *    back from the kill on, each within 50 ms;
 *  - notice and surprise-remove the shadow within 100 ms of the kill (the
 *    lease is the peer connection, whose EOF is immediate; the driver is
 *    told perm_failure and its remove does not wait for the dead controller);
 *  - leave nothing behind (its fd count back where it was, LUT entries free).
 * Bounds are generous for a shared 2-CPU machine (measured: a few ms) and
 * multiplied by LOAD_SCALE in sanitizer builds.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>

#include "cluster_harness.h"
#include "load_cluster.h"
#include "smartio/proto.h"

#define BORROWER	0
#define LENDER		1
#define NVME_BDF	0x0400    /* lender-a's nvme0, 04:00.0 (default topology) */
#define STATUS_MS	(50 * LOAD_SCALE)
#define GONE_MS		(100 * LOAD_SCALE)

static bool has_func(uint16_t bdf)
{
	assert_int_equal(call(g.d[BORROWER].ctl, SMIO_FUNC_LIST, NULL, 0, NULL), 0);
	for (uint32_t i = 0; i < rbuf.fl.n; i++)
		if (rbuf.fl.f[i].bdf == bdf)
			return true;
	return false;
}

static uint32_t lut_used(uint32_t host)
{
	struct smio_ntb_ref r = { .ntb = 0 };

	assert_int_equal(call(g.d[host].ctl, SMIO_NTB_INFO, &r, sizeof(r), NULL), 0);
	return rbuf.ni.lut_used;
}

static void test_lender_killed(void **state)
{
	struct smio_lend_req m = { .fdid = g.d[LENDER].node_id << 16 | NVME_BDF };
	uint64_t t0, t, gone_ms = 0, max_ms = 0, n = 0;
	bool gone = false;
	uint32_t lut0 = lut_used(BORROWER);
	uint16_t bdf;

	int cli;

	(void)state;
	assert_int_equal(call(g.d[BORROWER].ctl, SMIO_LEND_BORROW, &m, sizeof(m), NULL), 0);
	bdf = ((struct smio_lend_info *)rbuf.b)->bdf;
	assert_true(((struct smio_lend_info *)rbuf.b)->bound);
	assert_string_equal(((struct smio_lend_info *)rbuf.b)->driver, "nvme");
	assert_true(has_func(bdf));
	assert_true(lut_used(BORROWER) > lut0);
	cli = open_conn(BORROWER, SMIO_ROLE_CLIENT, BORROWER);

	t0 = smio_now_ms();
	assert_int_equal(kill(g.d[LENDER].pid, SIGKILL), 0);
	/* Until the shadow is gone, and as long again, STATUS back to back. */
	for (t = t0; t - t0 < 10000 && (!gone || t - t0 < 2 * gone_ms + 50);) {
		uint64_t s = smio_now_ms();

		assert_int_equal(status(cli), 0);
		t = smio_now_ms();
		max_ms = t - s > max_ms ? t - s : max_ms;
		n++;
		/* Gone: out of lspci, and its BAR windows freed (the removal done). */
		if (!gone && !has_func(bdf) && lut_used(BORROWER) == lut0) {
			gone = true;
			gone_ms = smio_now_ms() - t0;
		}
	}
	print_message("lender killed: shadow gone after %llu ms; %llu STATUS meanwhile, "
		      "slowest %llu ms\n", (unsigned long long)gone_ms, (unsigned long long)n,
		      (unsigned long long)max_ms);
	assert_true(gone && gone_ms < GONE_MS);
	assert_true(max_ms < STATUS_MS);
	/* Released: the borrow itself too. */
	m.flags = SMIO_LEND_F_UNBIND;
	assert_int_equal(call(g.d[BORROWER].ctl, SMIO_LEND_RETURN, &m, sizeof(m), NULL), -ENOENT);
	close(cli);
	/* The lender comes back (reaped first) for the fd check and the teardown. */
	stop_daemon(LENDER, SIGKILL);
	start_daemon(LENDER);
	sync_host(LENDER);
	wait_clients(LENDER, 2, IO_MS);
	g.d[LENDER].fds = count_fds(g.d[LENDER].pid);
}

static int group_setup(void **state)
{
	(void)state;
	return cluster_setup("lend_fault", 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lender_killed, cluster_test_setup,
						cluster_test_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, cluster_teardown);
}
