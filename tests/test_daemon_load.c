// SPDX-License-Identifier: MIT
/*
 * Acceptance: smartiod under load and misbehaviour keeps serving everyone
 * else, measured. Every case times what well-behaved clients and peers get
 * while something misbehaves, prints the numbers, and asserts a generous
 * bound (multiplied by LOAD_SCALE in sanitizer builds):
 *
 *  1. a stopped peer (SIGSTOP) delays only what needs it, and that fails
 *     with a timeout instead of hanging;
 *  2. a client that never reads its replies is closed and delays nobody;
 *  3. 10,000 half-open connections lock out neither newcomers nor peers;
 *  4. a flood of clients on one host leaves the other hosts' latency alone;
 *  5. roles are the kernel's word: a process of host 0 (smartio exec) is
 *     refused by host 1, a non-daemon cannot be a peer, nobody is no admin.
 *
 * The cluster (cluster_harness.c) is 3 real daemons of the default topology:
 * every host's NTB on one cluster switch, so host 0 reaches host 2 without
 * host 1. Each case ends with every daemon alive and its fd count back where
 * it was. Cases 1 and 2 are here, 3 and 4 in load_flood.c, 5 in
 * load_roles.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "load_cases.h"
#include "load_cluster.h"
#include "util/smio_time.h"

/* ---------- per test ---------- */

static int group_setup(void **state)
{
	if (build_exe(smartio_cli, sizeof(smartio_cli), "tools/smartio/smartio")) {
		fprintf(stderr, "daemon_load: no executable %s\n", smartio_cli);
		return -1;
	}
	if (cluster_setup("daemon_load", NOFILE_WANT))
		return -1;
	/* Searchable by every user: the role test connects as nobody (sockets are 0666). */
	return chmod(g.dir, 0755) ? -1 : 0;
}

static int test_teardown(void **state)
{
	/* A case that failed half-way may have left a daemon stopped. */
	for (uint32_t i = 0; i < NHOSTS; i++)
		if (g.d[i].pid > 0)
			kill(g.d[i].pid, SIGCONT);
	check_daemons();
	return 0;
}

/* ---------- 1. a stopped peer ---------- */

/* Bounded wait until the kernel says pid is stopped (state T). */
static void wait_stopped(pid_t pid)
{
	int64_t deadline = smio_deadline(IO_MS);
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (;;) {
		FILE *f = fopen(path, "r");
		size_t n;

		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'T')
			return;
		if (smio_ms_left(deadline) == 0)
			fail_msg("pid %d did not stop", (int)pid);
		poll(NULL, 0, 1);
	}
}

/* A request sent and not yet answered. */
struct slow {
	int fd;
	uint16_t type;
	uint32_t seq;
	uint64_t t0;
	int64_t ms;               /* -1 while unanswered */
	int32_t status;           /* the reply's header status */
	uint32_t route_status;    /* ROUTE: the route's status */
	char reason[120];
};

/* Its own connection to host 0, opened ahead so that requests go out together. */
static void slow_open(struct slow *s)
{
	s->fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	s->ms = -1;
}

static void slow_send(struct slow *s, uint16_t type, const void *req, uint32_t len)
{
	static uint32_t seq = 1000;

	s->type = type;
	s->seq = ++seq;
	s->t0 = smio_now_ns();
	assert_int_equal(smio_send(s->fd, type, s->seq, 0, 0, req, len, -1), 0);
}

/* Collect the answers that have come; true once every one has. */
static bool slow_poll(struct slow *v, unsigned n)
{
	bool all = true;

	for (unsigned i = 0; i < n; i++) {
		struct pollfd p = { .fd = v[i].fd, .events = POLLIN };
		struct smio_hdr h;
		int rfd = -1;

		if (v[i].ms >= 0)
			continue;
		if (poll(&p, 1, 0) != 1) {
			all = false;
			continue;
		}
		v[i].ms = (int64_t)((smio_now_ns() - v[i].t0) / 1000000);
		assert_int_equal(smio_recv(v[i].fd, &h, rbuf.b, sizeof(rbuf.b), &rfd, IO_MS), 0);
		assert_int_equal(rfd, -1);
		assert_int_equal(h.seq, v[i].seq);
		assert_int_equal(h.type, v[i].type);
		v[i].status = h.status;
		if (v[i].type == SMIO_ROUTE && h.status == 0) {
			assert_true(h.len >= sizeof(struct smio_route_reply));
			v[i].route_status = rbuf.rr.status;
			snprintf(v[i].reason, sizeof(v[i].reason), "%s", rbuf.rr.reason);
		}
	}
	return all;
}

/*
 * Make host `from` hold its peer connections to the other hosts (a segment
 * connect is a peer call), then take the fd baseline: from here on those
 * connections are part of the cluster's steady state.
 */
static void peers_up(uint32_t from)
{
	int cl = open_conn(from, SMIO_ROLE_CLIENT, from);

	for (uint32_t h = 0; h < NHOSTS; h++) {
		int own;

		if (h == from)
			continue;
		own = open_conn(h, SMIO_ROLE_CLIENT, h);
		assert_int_equal(seg_connect(cl, h, seg_new(own, 4096)), 0);
		assert_int_equal(seg_disconnect(cl, rbuf.sc.conn), 0);
		close(own);
	}
	close(cl);
	snapshot();
}

/*
 * Host 1 stopped: its socket still accepts (the kernel queues), nobody
 * answers. Host 0 must keep answering everything that does not need host 1,
 * at once, while the requests that do need it wait SMD_PEER_TIMEOUT each and
 * then fail with a timeout; then host 1 resumes and serves again.
 */
static void test_stopped_peer(void **state)
{
	enum { NROUTE = 3, NSEG = 1, MIN_ROUNDS = 20 };
	struct slow slow[NROUTE + NSEG];
	struct lat l_status, l_ntb, l_local, l_remote, l_lspci;
	struct smio_ntb_ref nr = { .ntb = 0 };
	struct smio_seg_connect sc;
	uint32_t e1, segid, conn2, lut_used, rounds = 0;
	uint64_t win1, win2, t_cont;
	int64_t deadline, max_route = 0, max_seg = 0, min_slow = INT64_MAX;
	int own1, own2, cl;

	peers_up(0);
	/* Host 0's NTB: a window onto host 1's RAM (host 1 has no IOMMU). */
	win1 = lut_window(0, 1, 0, &e1);
	/* A segment on host 1, owned by one of its applications. */
	own1 = open_conn(1, SMIO_ROLE_CLIENT, 1);
	segid = seg_new(own1, 64 * 1024);
	/*
	 * And one on host 2, connected from host 0: a window to host 2 that its
	 * IOMMU lets through (segments are exposed to the NTB's domain). The
	 * default topology puts every NTB on one switch: no step through host 1.
	 */
	own2 = open_conn(2, SMIO_ROLE_CLIENT, 2);
	cl = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(seg_connect(cl, 2, seg_new(own2, 64 * 1024)), 0);
	conn2 = rbuf.sc.conn;
	win2 = rbuf.sc.win_addr + rbuf.sc.offset;
	/* Both work while host 1 runs. */
	assert_int_equal(route(cl, win1, true), FAB_OK);
	assert_int_equal(rbuf.rr.tgt.host, 1);
	assert_int_equal(route(cl, win2, true), FAB_OK);
	assert_int_equal(rbuf.rr.tgt.host, 2);
	assert_int_equal(call(g.d[0].ctl, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	lut_used = rbuf.ni.lut_used;

	for (unsigned i = 0; i < NROUTE + NSEG; i++)
		slow_open(&slow[i]);
	assert_int_equal(kill(g.d[1].pid, SIGSTOP), 0);
	wait_stopped(g.d[1].pid);

	/*
	 * What needs host 1, all waiting at once: routes (resolved on the loop,
	 * with a continuation) and a segment connect (on a worker).
	 */
	for (unsigned i = 0; i < NROUTE; i++) {
		struct smio_route_req rt = { .addr = win1, .len = 64, .nocache = 1 };

		slow_send(&slow[i], SMIO_ROUTE, &rt, sizeof(rt));
	}
	sc = (struct smio_seg_connect){ .node_id = g.d[1].node_id, .segid = segid };
	for (unsigned i = NROUTE; i < NROUTE + NSEG; i++)
		slow_send(&slow[i], SMIO_SEG_CONNECT, &sc, sizeof(sc));

	/* Meanwhile, what does not need host 1, over and over. */
	lat_init(&l_status, "host 0 STATUS", 1 << 14);
	lat_init(&l_lspci, "host 0 lspci requests", 1 << 16);
	lat_init(&l_ntb, "host 0 NTB_INFO", 1 << 14);
	lat_init(&l_local, "host 0 ROUTE to own RAM", 1 << 14);
	lat_init(&l_remote, "host 0 ROUTE to host 2", 1 << 14);
	deadline = smio_deadline(SMD_PEER_TIMEOUT + TIMEOUT_MARGIN_MS + 2000);
	for (;;) {
		struct smio_route_req rt = { .addr = 0x200000, .len = 64, .nocache = 1 };
		uint32_t rlen;

		TIMED(&l_status, assert_int_equal(status(cl), 0));
		lspci(cl, &l_lspci);
		TIMED(&l_ntb, assert_int_equal(call(cl, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0));
		TIMED(&l_local, assert_int_equal(call(cl, SMIO_ROUTE, &rt, sizeof(rt), &rlen), 0));
		assert_int_equal(rbuf.rr.status, FAB_OK);
		assert_int_equal(rbuf.rr.tgt.host, 0);
		rt.addr = win2;
		TIMED(&l_remote, assert_int_equal(call(cl, SMIO_ROUTE, &rt, sizeof(rt), &rlen), 0));
		assert_int_equal(rbuf.rr.status, FAB_OK);
		assert_int_equal(rbuf.rr.tgt.host, 2);
		rounds++;
		if (slow_poll(slow, NROUTE + NSEG) && rounds >= MIN_ROUNDS)
			break;
		if (smio_ms_left(deadline) == 0)
			fail_msg("requests through stopped host 1 still unanswered after %d ms",
				 SMD_PEER_TIMEOUT + TIMEOUT_MARGIN_MS + 2000);
		poll(NULL, 0, 5);        /* pace: a round every few ms */
	}
	print_message("[   INFO   ] host 1 stopped: %u rounds of requests on host 0\n", rounds);
	lat_print(&l_status);
	lat_print(&l_lspci);
	lat_print(&l_ntb);
	lat_print(&l_local);
	lat_print(&l_remote);
	for (unsigned i = 0; i < NROUTE + NSEG; i++) {
		struct slow *s = &slow[i];

		if (s->type == SMIO_ROUTE) {
			print_message("[   INFO   ] ROUTE via host 1: %lld ms, status %u (%s)\n",
				      (long long)s->ms, s->route_status, s->reason);
			assert_int_equal(s->status, 0);
			assert_int_equal(s->route_status, FAB_HOST_DOWN);
			assert_non_null(strstr(s->reason, "timed out"));
			max_route = s->ms > max_route ? s->ms : max_route;
		} else {
			print_message("[   INFO   ] SEG_CONNECT to host 1: %lld ms, %d (%s)\n",
				      (long long)s->ms, s->status, strerror(-s->status));
			assert_int_equal(s->status, -ETIMEDOUT);
			max_seg = s->ms > max_seg ? s->ms : max_seg;
		}
		min_slow = s->ms < min_slow ? s->ms : min_slow;
	}
	/* A timeout, not an early failure and not a hang. */
	assert_true(min_slow >= SMD_PEER_TIMEOUT - 100);
	assert_true(max_route < SMD_PEER_TIMEOUT + TIMEOUT_MARGIN_MS);
	assert_true(max_seg < SMD_PEER_TIMEOUT + TIMEOUT_MARGIN_MS);
	lat_check(&l_status, FAST_MS, STALL_MS);
	lat_check(&l_lspci, FAST_MS, STALL_MS);
	lat_check(&l_ntb, FAST_MS, STALL_MS);
	lat_check(&l_local, FAST_MS, STALL_MS);
	lat_check(&l_remote, FAST_MS, STALL_MS);
	/* Nothing half-done on host 0: no window left behind by a failed connect. */
	assert_int_equal(call(cl, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	assert_int_equal(rbuf.ni.lut_used, lut_used);

	/* Host 1 resumes (it now answers the stale calls too) and serves again. */
	assert_int_equal(kill(g.d[1].pid, SIGCONT), 0);
	t_cont = smio_now_ns();
	assert_alive(1);
	assert_int_equal(route(cl, win1, true), FAB_OK);
	assert_int_equal(rbuf.rr.tgt.host, 1);
	assert_int_equal(seg_connect(cl, 1, segid), 0);
	print_message("[   INFO   ] host 1 resumed: HELLO+STATUS, ROUTE, SEG_CONNECT in %.1f ms\n",
		      MS(smio_now_ns() - t_cont));
	assert_int_equal(seg_disconnect(cl, rbuf.sc.conn), 0);
	assert_int_equal(seg_disconnect(cl, conn2), 0);
	for (unsigned i = 0; i < NROUTE + NSEG; i++)
		close(slow[i].fd);
	close(cl);
	close(own1);
	close(own2);
	lut_clear(0, e1);
	lat_free(&l_status);
	lat_free(&l_lspci);
	lat_free(&l_ntb);
	lat_free(&l_local);
	lat_free(&l_remote);
}

/*
 * Several applications of host 0 connect to a segment of stopped host 1 at
 * the same moment. Each connect is a peer call with its own deadline, so
 * each must fail with -ETIMEDOUT after SMD_PEER_TIMEOUT: all at once, not
 * one after another. Then host 1 resumes and answers the stale lookups with
 * references it counted; host 0 undoes what those late answers did
 * (PEER_SEG_RELEASE), so nothing stays behind: the owner can still remove
 * its segment.
 */
static void test_stopped_owner(void **state)
{
	enum { NSEG = 3 };
	struct slow slow[NSEG];
	struct smio_seg_connect sc;
	struct smio_seg_id id;
	int64_t deadline, max_ms = 0, min_ms = INT64_MAX;
	int own1, cl, rc;

	peers_up(0);
	own1 = open_conn(1, SMIO_ROLE_CLIENT, 1);
	id = (struct smio_seg_id){ .segid = seg_new(own1, 64 * 1024) };
	sc = (struct smio_seg_connect){ .node_id = g.d[1].node_id, .segid = id.segid };
	for (unsigned i = 0; i < NSEG; i++)
		slow_open(&slow[i]);
	assert_int_equal(kill(g.d[1].pid, SIGSTOP), 0);
	wait_stopped(g.d[1].pid);
	for (unsigned i = 0; i < NSEG; i++)
		slow_send(&slow[i], SMIO_SEG_CONNECT, &sc, sizeof(sc));
	deadline = smio_deadline(NSEG * SMD_PEER_TIMEOUT + TIMEOUT_MARGIN_MS);
	while (!slow_poll(slow, NSEG)) {
		if (smio_ms_left(deadline) == 0)
			fail_msg("SEG_CONNECTs to stopped host 1 unanswered after %d ms",
				 NSEG * SMD_PEER_TIMEOUT + TIMEOUT_MARGIN_MS);
		poll(NULL, 0, 5);
	}
	for (unsigned i = 0; i < NSEG; i++) {
		print_message("[   INFO   ] SEG_CONNECT %u to stopped host 1: %lld ms, %d (%s)\n", i,
			      (long long)slow[i].ms, slow[i].status, strerror(-slow[i].status));
		assert_int_equal(slow[i].status, -ETIMEDOUT);
		max_ms = slow[i].ms > max_ms ? slow[i].ms : max_ms;
		min_ms = slow[i].ms < min_ms ? slow[i].ms : min_ms;
	}
	assert_true(min_ms >= SMD_PEER_TIMEOUT - 100);

	assert_int_equal(kill(g.d[1].pid, SIGCONT), 0);
	assert_alive(1);
	/*
	 * Host 1 serves host 0's peer connection in order: the stale lookups
	 * first, so host 0 has undone them before this disconnect is answered.
	 */
	cl = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(seg_connect(cl, 1, id.segid), 0);
	assert_int_equal(seg_disconnect(cl, rbuf.sc.conn), 0);
	close(cl);
	for (unsigned i = 0; i < NSEG; i++)
		close(slow[i].fd);
	sync_host(0);
	sync_host(1);
	rc = call(own1, SMIO_SEG_REMOVE, &id, sizeof(id), NULL);
	print_message("[   INFO   ] then SEG_REMOVE by the owner: %d (%s)\n", rc,
		      rc ? strerror(-rc) : "ok");
	close(own1);

	assert_true(max_ms < SMD_PEER_TIMEOUT + TIMEOUT_MARGIN_MS);
	assert_int_equal(rc, 0);
}

/* ---------- 2. a client that never reads ---------- */

/*
 * One client pipelines STATUS requests and never reads a reply. Its replies
 * pile up: first in its socket, then in the daemon's output queue, which
 * stops the daemon reading it (SMD_OUTQ_PAUSE); its own socket then fills
 * and blocks. The daemon closes it once nothing has left its queue for
 * SMD_SEND_TIMEOUT (or the queue passed SMD_OUTQ_MAX). All that time other
 * applications are served as if it were not there.
 */
static void test_non_reader(void **state)
{
	enum { NREQ = 20000 };
	struct smio_hdr *req = calloc(NREQ, sizeof(*req));
	size_t total = NREQ * sizeof(*req), sent = 0;
	uint64_t t_start, t_progress, t_closed = 0;
	bool blocked = false;
	struct probe p;
	int64_t deadline;
	unsigned base, rounds = 0;
	int nr;

	assert_non_null(req);
	for (unsigned i = 0; i < NREQ; i++)
		req[i] = (struct smio_hdr){ .magic = SMIO_MAGIC, .version = SMIO_VERSION,
					    .type = SMIO_STATUS, .seq = i + 1 };
	assert_int_equal(status(g.d[0].ctl), 0);
	base = rbuf.st.nclients;
	nr = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(fcntl(nr, F_SETFL, O_NONBLOCK), 0);
	probe_init(&p, "host 0 (non-reader)");

	t_start = t_progress = smio_now_ns();
	deadline = smio_deadline(SMD_SEND_TIMEOUT + 5000 * LOAD_SCALE);
	while (!t_closed) {
		struct pollfd pf = { .fd = nr, .events = POLLRDHUP };

		if (sent < total) {
			ssize_t n = send(nr, (uint8_t *)req + sent, total - sent,
					 MSG_DONTWAIT | MSG_NOSIGNAL);

			if (n > 0) {
				sent += (size_t)n;
				t_progress = smio_now_ns();
			} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				blocked = true;
			} else if (n < 0 && errno != EINTR) {
				assert_true(errno == EPIPE || errno == ECONNRESET);
				t_closed = smio_now_ns();
				break;
			}
		}
		/* The daemon's close shows as a hang-up: we never read, never drain. */
		if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
			t_closed = smio_now_ns();
			break;
		}
		probe_round(0, &p);
		rounds++;
		if (smio_ms_left(deadline) == 0)
			fail_msg("a client that does not read was not closed in %d ms "
				 "(%zu requests sent)", SMD_SEND_TIMEOUT + 5000 * LOAD_SCALE,
				 sent / sizeof(*req));
		/* Pace the probes; wake at once if the daemon hangs up. */
		pf.revents = 0;
		poll(&pf, 1, 2);
	}
	print_message("[   INFO   ] non-reader: %zu of %d requests sent, socket %s, closed %.0f ms "
		      "after its last progress (%.0f ms after the start)\n", sent / sizeof(*req),
		      NREQ, blocked ? "blocked" : "never blocked", MS(t_closed - t_progress),
		      MS(t_closed - t_start));
	print_message("[   INFO   ] %u probe rounds meanwhile\n", rounds);
	probe_print(&p);
	/* Closed by its deadline (or the queue cap), not much later. */
	assert_true(MS(t_closed - t_progress) < SMD_SEND_TIMEOUT + 2000 * LOAD_SCALE);
	probe_check(&p);
	close(nr);
	wait_clients(0, base, IO_MS);
	probe_free(&p);
	free(req);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, cluster_test_setup, test_teardown)
		T(test_stopped_peer),
		T(test_stopped_owner),
		T(test_non_reader),
		T(test_half_open),
		T(test_half_open_storm),
		T(test_flood_isolation),
		T(test_role_claims),
#undef T
	};

	if (argc == 3 && !strcmp(argv[1], "--claim-helper"))
		return claim_helper(argv[2]);
	return cmocka_run_group_tests(tests, group_setup, cluster_teardown);
}
