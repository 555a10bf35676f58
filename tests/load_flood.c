// SPDX-License-Identifier: MIT
/*
 * daemon_load cases 3 and 4: 10,000 half-open connections (held, and while
 * they arrive), and a flood of clients on one host measured from another
 * (test_daemon_load.c has the suite's overview).
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "load_cases.h"
#include "load_cluster.h"
#include "util/smio_time.h"

/* ---------- 3. ten thousand half-open connections ---------- */

/* Open n connections to host 0 that each send 10 bytes of a header. */
static void half_open(int *fds, unsigned from, unsigned to)
{
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION,
			      .type = SMIO_STATUS, .seq = 1 };

	for (unsigned i = from; i < to; i++) {
		ssize_t n;

		fds[i] = raw_conn(0);
		n = send(fds[i], &h, 10, MSG_DONTWAIT | MSG_NOSIGNAL);
		/* Evicted already (the daemon closed it): fine, it stays held. */
		assert_true(n == 10 || (n < 0 && (errno == EPIPE || errno == ECONNRESET)));
	}
}

/* How many of fds the daemon has closed. */
static unsigned count_hung_up(const int *fds, unsigned n)
{
	struct pollfd *p = calloc(n, sizeof(*p));
	unsigned hup = 0;

	assert_non_null(p);
	for (unsigned i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = fds[i], .events = POLLRDHUP };
	assert_true(poll(p, n, 0) >= 0);
	for (unsigned i = 0; i < n; i++)
		hup += !!(p[i].revents & (POLLRDHUP | POLLHUP | POLLERR));
	free(p);
	return hup;
}

/*
 * 10,000 connections to host 0 that send 10 bytes of a header and stall.
 * Connections that have not said HELLO share SMD_MAX_UNAUTH slots, the
 * oldest evicted as new ones come, so while all of them are held a new
 * application is served, and so is a peer: host 1 (restarted, so that it
 * must open its connection to host 0 now) connects a segment of host 0 and
 * routes through the window that programs.
 */
void test_half_open(void **state)
{
	struct lat l_new;
	struct rlimit rl;
	uint64_t t0, t_open, t_first, t_seg, t_route;
	unsigned base, evicted;
	uint32_t segid, conn;
	int *fds, own0, u1, fd;
	uint64_t win;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)NHALF + 256) {
		print_message("[   INFO   ] RLIMIT_NOFILE %llu (hard %llu) < %d: cannot hold %d "
			      "connections: skipped\n", (unsigned long long)rl.rlim_cur,
			      (unsigned long long)rl.rlim_max, NHALF + 256, NHALF);
		skip();
	}
	/* A fresh host 1: no connection to host 0 yet. */
	restart_daemon(1);
	snapshot();
	assert_int_equal(status(g.d[1].ctl), 0);
	assert_int_equal(rbuf.st.npeers, 0);
	own0 = open_conn(0, SMIO_ROLE_CLIENT, 0);
	segid = seg_new(own0, 64 * 1024);
	u1 = open_conn(1, SMIO_ROLE_CLIENT, 1);
	assert_int_equal(status(g.d[0].ctl), 0);
	base = rbuf.st.nclients;

	fds = malloc(NHALF * sizeof(*fds));
	assert_non_null(fds);
	t0 = smio_now_ns();
	half_open(fds, 0, NHALF);
	t_open = smio_now_ns() - t0;
	/*
	 * The backlog is accepted in order: once a newcomer's HELLO is answered,
	 * all of ours were taken, and the newcomer evicted one more of them.
	 */
	t0 = smio_now_ns();
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(status(fd), 0);
	t_first = smio_now_ns() - t0;
	close(fd);
	evicted = count_hung_up(fds, NHALF);
	print_message("[   INFO   ] %d half-open connections opened in %.0f ms; then a new client "
		      "took %.2f ms for connect+HELLO+STATUS behind them\n", NHALF, MS(t_open),
		      MS(t_first));
	print_message("[   INFO   ] the daemon evicted %u of the %d, holds %u (SMD_MAX_UNAUTH %d)\n",
		      evicted, NHALF, NHALF - evicted, SMD_MAX_UNAUTH);
	assert_int_equal(evicted, NHALF - SMD_MAX_UNAUTH + 1);
	wait_clients(0, base + SMD_MAX_UNAUTH - 1, IO_MS);
	assert_true(MS(t_first) < STALL_MS);

	/* New applications are served (each evicts one more of the held). */
	lat_init(&l_new, "new client connect+HELLO+STATUS", 64);
	for (int i = 0; i < 20; i++) {
		t0 = smio_now_ns();
		fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
		assert_int_equal(status(fd), 0);
		lat_add(&l_new, smio_now_ns() - t0);
		close(fd);
	}
	lat_print(&l_new);
	lat_check(&l_new, FAST_MS, STALL_MS);

	/* A peer gets in: host 1 connects to host 0 now, for a segment. */
	t0 = smio_now_ns();
	assert_int_equal(seg_connect(u1, 0, segid), 0);
	t_seg = smio_now_ns() - t0;
	conn = rbuf.sc.conn;
	win = rbuf.sc.win_addr + rbuf.sc.offset;
	/* And steps through host 0 for a route through that window. */
	t0 = smio_now_ns();
	assert_int_equal(route(u1, win, true), FAB_OK);
	t_route = smio_now_ns() - t0;
	assert_int_equal(rbuf.rr.tgt.host, 0);
	assert_int_equal(rbuf.rr.ntb_hops, 1);
	assert_int_equal(status(g.d[1].ctl), 0);
	print_message("[   INFO   ] host 1 -> host 0 under the flood: SEG_CONNECT %.2f ms (new peer "
		      "connection), ROUTE %.2f ms; host 1 peers %u\n", MS(t_seg), MS(t_route),
		      rbuf.st.npeers);
	/* That peer connection is the cluster's from now on, at both ends. */
	assert_int_equal(rbuf.st.npeers, 1);
	g.d[0].fds++;
	g.d[1].fds++;
	assert_true(MS(t_seg) < STALL_MS);
	assert_true(MS(t_route) < STALL_MS);
	assert_int_equal(seg_disconnect(u1, conn), 0);

	for (unsigned i = 0; i < NHALF; i++)
		close(fds[i]);
	free(fds);
	wait_clients(0, base, IO_MS * LOAD_SCALE);
	close(u1);
	close(own0);
	lat_free(&l_new);
}

/*
 * The same flood, but a peer needs host 0 while new connections are still
 * arriving: a freshly restarted host 1 connects a segment of host 0 halfway
 * through the 10,000 connects, so its peer connection competes with them
 * for host 0's listen backlog.
 */
void test_half_open_storm(void **state)
{
	struct smio_seg_connect m = { .segid = 0 };
	struct rlimit rl;
	struct smio_hdr h;
	uint64_t t0;
	unsigned base;
	int *fds, own0, u1, rfd = -1;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)NHALF + 256) {
		print_message("[   INFO   ] RLIMIT_NOFILE %llu < %d: skipped\n",
			      (unsigned long long)rl.rlim_cur, NHALF + 256);
		skip();
	}
	restart_daemon(1);
	snapshot();
	own0 = open_conn(0, SMIO_ROLE_CLIENT, 0);
	m.node_id = g.d[0].node_id;
	m.segid = seg_new(own0, 64 * 1024);
	u1 = open_conn(1, SMIO_ROLE_CLIENT, 1);
	assert_int_equal(status(g.d[0].ctl), 0);
	base = rbuf.st.nclients;

	fds = malloc(NHALF * sizeof(*fds));
	assert_non_null(fds);
	half_open(fds, 0, NHALF / 2);
	t0 = smio_now_ns();
	assert_int_equal(smio_send(u1, SMIO_SEG_CONNECT, 77, 0, 0, &m, sizeof(m), -1), 0);
	half_open(fds, NHALF / 2, NHALF);
	assert_int_equal(smio_recv(u1, &h, rbuf.b, sizeof(rbuf.b), &rfd, IO_MS * LOAD_SCALE), 0);
	assert_int_equal(rfd, -1);
	assert_int_equal(h.seq, 77);
	print_message("[   INFO   ] SEG_CONNECT host 1 -> host 0 amid %d arriving connections: %d "
		      "(%s), answer read after %.1f ms\n", NHALF, h.status,
		      h.status ? strerror(-h.status) : "ok", MS(smio_now_ns() - t0));
	if (!h.status) {
		assert_int_equal(seg_disconnect(u1, rbuf.sc.conn), 0);
		/* The new peer connection is the cluster's from now on, at both ends. */
		g.d[0].fds++;
		g.d[1].fds++;
	}
	for (unsigned i = 0; i < NHALF; i++)
		close(fds[i]);
	free(fds);
	wait_clients(0, base, IO_MS * LOAD_SCALE);
	close(u1);
	close(own0);
	assert_int_equal(h.status, 0);
}

/* ---------- 4. a client flood on one host ---------- */

enum { HAMMER_CLIENTS = 64, HAMMER_DEPTH = 4, HAMMER_HALF = 1000 };

/* One request of the flood's mix: STATUS, FUNC_LIST, CFG_DUMP of the host bridge. */
static int hammer_send(int fd, uint32_t n)
{
	static const struct smio_bdf bridge = { .bdf = 0 };

	switch (n % 3) {
	case 0:
		return smio_send(fd, SMIO_STATUS, n, 0, 0, NULL, 0, -1);
	case 1:
		return smio_send(fd, SMIO_FUNC_LIST, n, 0, 0, NULL, 0, -1);
	default:
		return smio_send(fd, SMIO_CFG_DUMP, n, 0, 0, &bridge, sizeof(bridge), -1);
	}
}

/*
 * The forked flood (no cmocka here): HAMMER_CLIENTS applications of host 0,
 * each with HAMMER_DEPTH requests always in flight, plus HAMMER_HALF
 * half-open connections, until stop_r reads EOF. Writes "r" to res_w once
 * flooding, then the number of replies; exits non-zero on any error.
 */
static void hammer(int res_w, int stop_r)
{
	struct pollfd p[HAMMER_CLIENTS + 1];
	struct smio_hdr hh = { .magic = SMIO_MAGIC, .version = SMIO_VERSION,
			       .type = SMIO_STATUS };
	uint8_t *buf = malloc(SMIO_MAX_PAYLOAD);
	uint64_t replies = 0;
	uint32_t n = 0;

	if (!buf)
		_exit(2);
	for (int i = 0; i < HAMMER_CLIENTS; i++) {
		struct smio_hello m = { .role = SMIO_ROLE_CLIENT, .host = 0,
					.pid = (uint32_t)getpid(), .version = SMIO_VERSION };
		uint32_t rlen;
		int fd = smio_connect(g.dir, 0, IO_MS);

		if (fd < 0 || smio_call(fd, SMIO_HELLO, &m, sizeof(m), buf, SMIO_MAX_PAYLOAD,
					&rlen, NULL, IO_MS))
			_exit(3);
		p[i] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	for (int i = 0; i < HAMMER_HALF; i++) {
		int fd = smio_connect(g.dir, 0, IO_MS);

		if (fd < 0)
			_exit(4);
		if (send(fd, &hh, 10, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
			_exit(4);
	}
	for (int i = 0; i < HAMMER_CLIENTS; i++)
		for (int k = 0; k < HAMMER_DEPTH; k++)
			if (hammer_send(p[i].fd, ++n))
				_exit(5);
	p[HAMMER_CLIENTS] = (struct pollfd){ .fd = stop_r, .events = POLLIN };
	if (write(res_w, "r", 1) != 1)
		_exit(6);
	for (;;) {
		if (poll(p, HAMMER_CLIENTS + 1, IO_MS) <= 0)
			_exit(7);
		if (p[HAMMER_CLIENTS].revents)
			break;
		for (int i = 0; i < HAMMER_CLIENTS; i++) {
			struct smio_hdr h;

			if (!p[i].revents)
				continue;
			if (smio_recv(p[i].fd, &h, buf, SMIO_MAX_PAYLOAD, NULL, IO_MS) || h.status)
				_exit(8);
			replies++;
			if (hammer_send(p[i].fd, ++n))
				_exit(9);
		}
	}
	if (write(res_w, &replies, sizeof(replies)) != sizeof(replies))
		_exit(10);
	_exit(0);
}

/*
 * 64 clients flood host 0 (4 requests each always in flight) on top of
 * 1,000 half-open connections; host 2's latency for a new application
 * (connect, HELLO, STATUS, lspci) is measured before and during the flood.
 * The hosts share only the machine's 2 CPUs: the bound is absolute.
 */
void test_flood_isolation(void **state)
{
	enum { ROUNDS = 100, LOADED_MS = 2000 };
	struct probe before, during, flooded;
	struct pollfd pf;
	uint64_t replies = 0, t0;
	int res[2], stop[2], ws;
	unsigned base, rounds = 0;
	pid_t pid;
	char c;

	probe_init(&before, "host 2 unloaded");
	probe_init(&during, "host 2, host 0 flooded");
	probe_init(&flooded, "host 0, flooded");
	for (int i = 0; i < ROUNDS; i++) {
		probe_round(2, &before);
		poll(NULL, 0, 2);       /* pace as under load */
	}
	assert_int_equal(status(g.d[0].ctl), 0);
	base = rbuf.st.nclients;

	assert_int_equal(pipe2(res, O_CLOEXEC), 0);
	assert_int_equal(pipe2(stop, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(res[0]);
		close(stop[1]);
		hammer(res[1], stop[0]);
	}
	close(res[1]);
	close(stop[0]);
	pf = (struct pollfd){ .fd = res[0], .events = POLLIN };
	assert_int_equal(poll(&pf, 1, IO_MS * LOAD_SCALE), 1);
	assert_int_equal(read(res[0], &c, 1), 1);

	t0 = smio_now_ns();
	while (smio_now_ns() - t0 < LOADED_MS * 1000000ull) {
		probe_round(2, &during);
		if (rounds++ % 10 == 0)
			probe_round(0, &flooded);
		poll(NULL, 0, 2);
	}
	close(stop[1]);
	assert_int_equal(poll(&pf, 1, IO_MS * LOAD_SCALE), 1);
	assert_int_equal(read(res[0], &replies, sizeof(replies)), sizeof(replies));
	close(res[0]);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);

	print_message("[   INFO   ] flood: %d clients x %d in flight + %d half-open on host 0: "
		      "%llu replies in %d ms (%.0f/s)\n", HAMMER_CLIENTS, HAMMER_DEPTH, HAMMER_HALF,
		      (unsigned long long)replies, LOADED_MS, replies * 1000.0 / LOADED_MS);
	probe_print(&before);
	probe_print(&during);
	probe_print(&flooded);
	assert_true(replies > 0);
	probe_check(&during);
	wait_clients(0, base, IO_MS * LOAD_SCALE);
	probe_free(&before);
	probe_free(&during);
	probe_free(&flooded);
}

