// SPDX-License-Identifier: MIT
/*
 * The daemons' SISCI segment service, end to end: real smartiod processes
 * (the built-in default topology: host 0 "borrower", hosts 1 and 2 behind a
 * cluster switch), real clients speaking the protocol, real mmaps.
 *
 * A segment lives in host 1's RAM; a process on host 0 connects to it (host
 * 0's NTB LUT is programmed), maps it (the route from host 0's CPU through
 * its NTB ends in host 1's RAM memfd, passed daemon to daemon to process),
 * and then both processes share memory with no daemon in between.
 *
 * The cluster is tests/cluster_harness.c's, as in test_daemon.c: daemons
 * start with ready pipes (no sleeping), every test ends with a check that
 * every daemon answers and has as many open fds as before it, and
 * sync_host() is the barrier for asynchronous effects (closes, one-way
 * messages between daemons): STATUS round trips on two connections.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cluster_harness.h"
#include "fabric/route.h"
#include "peer_impostor.h"
#include "smartio/proto.h"

#define PAGE		4096ull
#define OWNER		1         /* the host whose RAM holds the segments */
#define USER		0         /* the host that connects to them */

static int self_fds;              /* this process's open fds at the start of a test */

/* ---------- plumbing ---------- */

static int client(uint32_t host)
{
	return open_conn(host, SMIO_ROLE_CLIENT, host);
}

static uint32_t lut_used(uint32_t host)
{
	struct smio_ntb_ref r = { .ntb = 0 };

	assert_int_equal(call(g.d[host].ctl, SMIO_NTB_INFO, &r, sizeof(r), NULL), 0);
	return rbuf.ni.lut_used;
}

/* ---------- the segment calls (what libsisci will do) ---------- */

static int seg_create(int fd, uint32_t id, uint64_t size, uint32_t flags,
		      struct smio_seg_info *out)
{
	struct smio_seg_create m = { .segid = id, .flags = flags, .size = size };
	int rc = call(fd, SMIO_SEG_CREATE, &m, sizeof(m), NULL);

	if (!rc && out)
		*out = rbuf.si;
	return rc;
}

static int seg_avail(int fd, uint32_t id, uint32_t on)
{
	struct smio_seg_avail m = { .segid = id, .available = on };

	return call(fd, SMIO_SEG_AVAILABLE, &m, sizeof(m), NULL);
}

static int seg_remove(int fd, uint32_t id)
{
	struct smio_seg_id m = { .segid = id };

	return call(fd, SMIO_SEG_REMOVE, &m, sizeof(m), NULL);
}

/* An available segment of size bytes on the owner, created by fd. */
static uint32_t seg_new(int fd, uint32_t id, uint64_t size)
{
	struct smio_seg_info si = { 0 };

	assert_int_equal(seg_create(fd, id, size, 0, &si), 0);
	assert_int_equal(seg_avail(fd, si.segid, 1), 0);
	return si.segid;
}

static int seg_connect(int fd, uint32_t host, uint32_t id, struct smio_seg_conn *out)
{
	struct smio_seg_connect m = { .node_id = g.d[host].node_id, .segid = id,
				      .adapter = 0 };
	int rc = call(fd, SMIO_SEG_CONNECT, &m, sizeof(m), NULL);

	if (!rc && out)
		*out = rbuf.sc;
	return rc;
}

static int seg_disconnect(int fd, uint32_t conn)
{
	struct smio_seg_conn_ref m = { .conn = conn };

	return call(fd, SMIO_SEG_DISCONNECT, &m, sizeof(m), NULL);
}

/* mmap what a map reply names; the fd is closed: the mapping keeps it alive. */
static volatile uint32_t *map_reply(int memfd, uint64_t len)
{
	uint64_t off = rbuf.mr.offset & ~(PAGE - 1), delta = rbuf.mr.offset - off;
	uint8_t *p;

	assert_true(memfd >= 0);
	assert_true(rbuf.mr.len >= len);
	p = mmap(NULL, len + delta, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, (off_t)off);
	close(memfd);
	assert_true(p != MAP_FAILED);
	return (volatile uint32_t *)(p + delta);
}

static void unmap(volatile uint32_t *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p, base = a & ~(uintptr_t)(PAGE - 1);

	assert_int_equal(munmap((void *)base, len + (a - base)), 0);
}

static volatile uint32_t *map_local(int fd, uint32_t id, uint64_t len)
{
	struct smio_seg_id m = { .segid = id };
	int memfd = -1;

	assert_int_equal(call_fd(fd, SMIO_SEG_MAP_LOCAL, &m, sizeof(m), &memfd), 0);
	assert_int_equal(rbuf.mr.host, OWNER);
	return map_reply(memfd, len);
}

static int map_remote_rc(int fd, uint32_t conn, uint64_t off, uint64_t len, int *memfd)
{
	struct smio_seg_map m = { .conn = conn, .offset = off, .size = len };

	return call_fd(fd, SMIO_SEG_MAP_REMOTE, &m, sizeof(m), memfd);
}

static volatile uint32_t *map_remote(int fd, uint32_t conn, uint64_t off, uint64_t len)
{
	int memfd = -1;

	assert_int_equal(map_remote_rc(fd, conn, off, len, &memfd), 0);
	return map_reply(memfd, len);
}

/* ---------- cluster ---------- */

/*
 * The first remote map opens host 0's peer connection to host 1 and caches
 * host 1's RAM memfd in host 0's daemon (a connect to host 2 opens one there):
 * they are meant to stay. Make them
 * exist before any test counts fds, so that the counts measure leaks only.
 */
static void warm_up(void)
{
	int own = client(OWNER), use = client(USER);
	uint32_t id = seg_new(own, SMIO_SEGID_AUTO, PAGE);
	struct smio_seg_conn sc;

	assert_int_equal(seg_connect(use, OWNER, id, &sc), 0);
	unmap(map_remote(use, sc.conn, 0, PAGE), PAGE);
	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(seg_remove(own, id), 0);
	close(own);
	/* Host 0's peer connection to host 2 as well. */
	own = client(2);
	id = seg_new(own, SMIO_SEGID_AUTO, PAGE);
	assert_int_equal(seg_connect(use, 2, id, &sc), 0);
	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(seg_remove(own, id), 0);
	close(own);
	close(use);
}

static int group_setup(void **state)
{
	if (cluster_setup("test_segment", 0))
		return -1;
	warm_up();
	return 0;
}

static int test_setup(void **state)
{
	snapshot();
	self_fds = count_fds(getpid());
	return 0;
}

/* Every daemon alive, nothing leaked there or here, no LUT entry left over. */
static int test_teardown(void **state)
{
	check_daemons();
	for (uint32_t i = 0; i < NHOSTS; i++)
		assert_int_equal(lut_used(i), 0);
	assert_int_equal(count_fds(getpid()), self_fds);
	return 0;
}

/* ---------- 1. share memory across hosts ---------- */

static void test_share(void **state)
{
	const uint64_t size = 1 << 20;
	const unsigned nw = (unsigned)(size / 4);
	int own = client(OWNER), use = client(USER);
	volatile uint32_t *lp, *rp;
	struct smio_seg_info si = { 0 };
	struct smio_seg_conn sc;
	struct smio_route_req rq;
	uint32_t base = lut_used(USER);
	bool ntb_hop = false;

	/* Automatic id, size rounded up to a page, address in the owner's RAM. */
	assert_int_equal(seg_create(own, SMIO_SEGID_AUTO, size - 100, 0, &si), 0);
	assert_true(si.segid >= 0x80000000u && si.segid != SMIO_SEGID_AUTO);
	assert_int_equal(si.size, size);
	assert_true(si.addr >= (16u << 20) && !(si.addr & (PAGE - 1)));
	lp = map_local(own, si.segid, size);
	for (unsigned i = 0; i < nw; i++)
		lp[i] = i * 2654435761u;
	assert_int_equal(seg_avail(own, si.segid, 1), 0);

	/* Connect from host 0 by node id: LUT windows on host 0's NTB. */
	assert_int_equal(seg_connect(use, OWNER, si.segid, &sc), 0);
	assert_int_equal(sc.host, OWNER);
	assert_int_equal(sc.size, size);
	assert_true(sc.lut_count >= 1);
	assert_int_equal(lut_used(USER), base + sc.lut_count);
	assert_int_equal(lut_used(OWNER), 0);      /* the owner's NTB is not involved */

	/* The window address really goes through the NTB to host 1's RAM. */
	rq = (struct smio_route_req){ .addr = sc.win_addr + sc.offset, .len = size };
	assert_int_equal(call(use, SMIO_ROUTE, &rq, sizeof(rq), NULL), 0);
	assert_int_equal(rbuf.rr.status, FAB_OK);
	assert_int_equal(rbuf.rr.tgt.host, OWNER);
	assert_int_equal(rbuf.rr.tgt.kind, FAB_TGT_RAM);
	assert_int_equal(rbuf.rr.tgt.addr, si.addr);
	for (uint32_t i = 0; i < rbuf.rr.nhops; i++)
		ntb_hop |= rbuf.rr.hops[i].kind == FAB_HOP_NTB;
	assert_true(ntb_hop);

	rp = map_remote(use, sc.conn, 0, size);
	assert_int_equal(rbuf.mr.host, OWNER);
	for (unsigned i = 0; i < nw; i++)
		if (rp[i] != i * 2654435761u)
			fail_msg("word %u: %#x through the NTB, %#x written", i, rp[i],
				 i * 2654435761u);
	/* Stores from host 0 land in host 1's memory, and back: no messages. */
	for (unsigned i = 0; i < nw; i++)
		rp[i] = ~i;
	for (unsigned i = 0; i < nw; i++)
		assert_int_equal(lp[i], ~i);
	lp[17] = 0xfeedface;
	assert_int_equal(rp[17], 0xfeedface);

	/* A map at an offset sees the same bytes; out of range is refused. */
	{
		volatile uint32_t *mid = map_remote(use, sc.conn, 8 * PAGE, PAGE);

		assert_int_equal(mid[0], ~(unsigned)(8 * PAGE / 4));
		unmap(mid, PAGE);
	}
	assert_int_equal(map_remote_rc(use, sc.conn, size - PAGE, 2 * PAGE, NULL), -ERANGE);

	/* SISCI: no removal while someone is connected. */
	assert_int_equal(seg_remove(own, si.segid), -EBUSY);
	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(lut_used(USER), base);
	assert_int_equal(seg_disconnect(use, sc.conn), -ENOENT);
	assert_int_equal(map_remote_rc(use, sc.conn, 0, PAGE, NULL), -ENOENT);
	assert_int_equal(seg_remove(own, si.segid), 0);
	assert_int_equal(seg_remove(own, si.segid), -ENOENT);
	unmap(lp, size);
	unmap(rp, size);
	close(own);
	close(use);
}

/* ---------- 2. a connection to a segment of one's own host ---------- */

static void test_local_connect(void **state)
{
	int own = client(OWNER), other = client(OWNER);
	uint32_t id = seg_new(own, 0x1234, 4 * PAGE);
	volatile uint32_t *lp = map_local(own, id, 4 * PAGE), *rp;
	struct smio_seg_conn sc;

	lp[5] = 0xabcd;
	/* No NTB in the way: no LUT entry, the address is the segment's own. */
	assert_int_equal(seg_connect(other, OWNER, id, &sc), 0);
	assert_int_equal(sc.lut_count, 0);
	assert_int_equal(lut_used(OWNER), 0);
	rp = map_remote(other, sc.conn, 0, 4 * PAGE);
	assert_int_equal(rp[5], 0xabcd);
	rp[6] = 0x5678;
	assert_int_equal(lp[6], 0x5678);
	assert_int_equal(seg_remove(own, id), -EBUSY);
	assert_int_equal(seg_disconnect(other, sc.conn), 0);
	assert_int_equal(seg_remove(own, id), 0);
	unmap(lp, 4 * PAGE);
	unmap(rp, 4 * PAGE);
	close(own);
	close(other);
}

/* ---------- 3. availability ---------- */

static void test_unavailable(void **state)
{
	int own = client(OWNER), use = client(USER);
	struct smio_seg_info si;
	struct smio_seg_conn sc, sc2;
	volatile uint32_t *rp;
	uint32_t base = lut_used(USER);

	assert_int_equal(seg_create(own, 77, 2 * PAGE, 0, &si), 0);
	/* Not available yet: refused, and nothing programmed. */
	assert_int_equal(seg_connect(use, OWNER, 77, NULL), -ECONNREFUSED);
	assert_int_equal(lut_used(USER), base);
	assert_int_equal(seg_avail(own, 77, 1), 0);
	assert_int_equal(seg_connect(use, OWNER, 77, &sc), 0);
	/* Unavailable again: existing connections keep working, new ones are refused. */
	assert_int_equal(seg_avail(own, 77, 0), 0);
	assert_int_equal(seg_connect(use, OWNER, 77, NULL), -ECONNREFUSED);
	assert_int_equal(lut_used(USER), base + sc.lut_count);
	rp = map_remote(use, sc.conn, 0, 2 * PAGE);
	rp[0] = 42;
	assert_int_equal(seg_avail(own, 77, 1), 0);
	/* A second connection to the same segment is a separate one. */
	assert_int_equal(seg_connect(use, OWNER, 77, &sc2), 0);
	assert_int_not_equal(sc2.conn, sc.conn);
	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(seg_remove(own, 77), -EBUSY);
	assert_int_equal(seg_disconnect(use, sc2.conn), 0);
	assert_int_equal(seg_remove(own, 77), 0);
	unmap(rp, 2 * PAGE);
	close(own);
	close(use);
}

/* ---------- 4. LUT exhaustion: all or nothing ---------- */

static void test_lut_exhaustion(void **state)
{
	enum { NSEG = 3, MAXC = 64 };
	const uint64_t size = 512ull << 20;        /* 4-5 windows of 128 MiB each */
	int own = client(OWNER), use = client(USER);
	uint32_t ids[NSEG], conns[MAXC], before, base = lut_used(USER);
	struct smio_seg_conn sc;
	unsigned n = 0;
	int rc = 0;

	for (unsigned i = 0; i < NSEG; i++)
		ids[i] = seg_new(own, SMIO_SEGID_AUTO, size);
	for (;;) {
		before = lut_used(USER);
		rc = seg_connect(use, OWNER, ids[n % NSEG], &sc);
		if (rc)
			break;
		assert_true(n < MAXC);
		assert_int_equal(lut_used(USER), before + sc.lut_count);
		conns[n++] = sc.conn;
	}
	assert_int_equal(rc, -ENOSPC);
	assert_true(n >= 10);
	/* Nothing half programmed, and the owner's reference was given back. */
	assert_int_equal(lut_used(USER), before);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(seg_disconnect(use, conns[i]), 0);
	assert_int_equal(lut_used(USER), base);
	for (unsigned i = 0; i < NSEG; i++)
		assert_int_equal(seg_remove(own, ids[i]), 0);
	close(own);
	close(use);
}

/* ---------- 5. processes that die ---------- */

struct kid {
	pid_t pid;
	int hold;                 /* write end of a pipe the child blocks on */
};

/* A child that runs fn(arg) on its own connections, reports, then waits to be killed. */
static struct kid child(void (*fn)(int wfd, uint32_t arg), uint32_t arg, uint32_t *report)
{
	int p[2], go[2];
	struct pollfd pf;
	struct kid k;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	k.pid = fork();
	assert_true(k.pid >= 0);
	if (k.pid == 0) {
		char c;

		close(p[0]);
		close(go[1]);
		fn(p[1], arg);
		/* Blocks until killed: the parent never writes. */
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	close(go[0]);
	k.hold = go[1];
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	assert_int_equal(poll(&pf, 1, IO_MS), 1);
	assert_int_equal(read(p[0], report, sizeof(*report)), (ssize_t)sizeof(*report));
	close(p[0]);
	return k;
}

/* SIGKILL: no chance to clean up; the daemons see the sockets close. */
static void reap(struct kid k)
{
	int ws;

	assert_int_equal(kill(k.pid, SIGKILL), 0);
	assert_int_equal(waitpid(k.pid, &ws, 0), k.pid);
	assert_true(WIFSIGNALED(ws));
	close(k.hold);
}

/* Child: own an available segment with a pattern in it. */
static void child_owner(int wfd, uint32_t id)
{
	int fd = client(OWNER);
	volatile uint32_t *p;

	seg_new(fd, id, 2 * PAGE);
	p = map_local(fd, id, 2 * PAGE);
	p[0] = 0xc0ffee;
	if (write(wfd, &id, sizeof(id)) != sizeof(id))
		_exit(1);
}

/* Child: a connection (LUT entries) to segment id on the owner. */
static void child_user(int wfd, uint32_t id)
{
	int fd = client(USER);
	struct smio_seg_conn sc;

	if (seg_connect(fd, OWNER, id, &sc))
		_exit(1);
	if (write(wfd, &sc.lut_count, sizeof(sc.lut_count)) != sizeof(sc.lut_count))
		_exit(1);
}

static void test_kill_owner(void **state)
{
	int use = client(USER), own2;
	uint32_t id = 0x4242, got = 0, lut;
	struct smio_seg_conn sc;
	volatile uint32_t *rp;
	struct kid pid = child(child_owner, id, &got);
	struct smio_seg_conn_ref cr = { 0 };
	uint64_t count = 0;
	int efd = -1;

	assert_int_equal(got, id);
	assert_int_equal(seg_connect(use, OWNER, id, &sc), 0);
	cr.conn = sc.conn;

	rp = map_remote(use, sc.conn, 0, 2 * PAGE);
	assert_int_equal(rp[0], 0xc0ffee);
	lut = lut_used(USER);
	assert_int_equal(call_fd(use, SMIO_SEG_EVENTS, &cr, sizeof(cr), &efd), 0);
	assert_true(efd >= 0);
	assert_int_equal(call(use, SMIO_SEG_STATE, &cr, sizeof(cr), NULL), 0);
	assert_int_equal(rbuf.ss.state, SMIO_SEG_CONNECTED);
	assert_int_equal(read(efd, &count, sizeof(count)), -1);    /* nothing yet */

	reap(pid);
	sync_host(OWNER);
	sync_host(USER);
	/* The importer was told (PEER_SEG_GONE): its windows are closed, the
	 * connection is lost, and its eventfd says so. */
	assert_int_equal(lut_used(USER), lut - sc.lut_count);
	assert_int_equal(call(use, SMIO_SEG_STATE, &cr, sizeof(cr), NULL), 0);
	assert_int_equal(rbuf.ss.state, SMIO_SEG_DISCONNECTED);
	assert_int_equal(read(efd, &count, sizeof(count)), sizeof(count));
	assert_int_equal(count, 1);
	close(efd);
	/* The segment lingers for its connection, but takes no new ones... */
	assert_int_equal(seg_connect(use, OWNER, id, NULL), -ENOENT);
	rp[1] = 7;
	assert_int_equal(rp[1], 7);
	own2 = client(OWNER);
	assert_int_equal(seg_create(own2, id, PAGE, 0, NULL), -EEXIST);
	assert_int_equal(seg_remove(own2, id), -ENOENT);
	/* ...and goes with the last one: its id is free again. */
	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(lut_used(USER), lut - sc.lut_count);
	assert_int_equal(seg_create(own2, id, PAGE, 0, NULL), 0);
	assert_int_equal(seg_remove(own2, id), 0);
	unmap(rp, 2 * PAGE);
	close(own2);
	close(use);
}

static void test_kill_user(void **state)
{
	int own = client(OWNER);
	uint32_t id = seg_new(own, SMIO_SEGID_AUTO, 3 * PAGE), nlut = 0;
	uint32_t base = lut_used(USER);
	struct kid pid = child(child_user, id, &nlut);

	assert_true(nlut >= 1);
	assert_int_equal(lut_used(USER), base + nlut);
	assert_int_equal(seg_remove(own, id), -EBUSY);
	reap(pid);
	/* Host 0 clears its LUT and tells host 1, which drops the reference. */
	sync_host(USER);
	sync_host(OWNER);
	assert_int_equal(lut_used(USER), base);
	assert_int_equal(seg_remove(own, id), 0);

	/* The owner process dies with unconnected segments: freed at once. */
	pid = child(child_owner, 0x5151, &nlut);
	reap(pid);
	sync_host(OWNER);
	assert_int_equal(seg_create(own, 0x5151, PAGE, 0, NULL), 0);
	assert_int_equal(seg_remove(own, 0x5151), 0);
	close(own);
}

/* ---------- 6. malformed and foreign requests ---------- */

static void test_rejected(void **state)
{
	int own = client(OWNER), other = client(OWNER), use = client(USER), use2 = client(USER);
	struct impostor im;
	int peer;
	struct smio_seg_create cr = { .segid = 1, .size = 0 };
	struct smio_seg_id sid = { .segid = 1, .pad = 1 };
	struct smio_seg_avail av = { .segid = 1, .available = 2 };
	struct smio_seg_connect cn = { .node_id = g.d[OWNER].node_id, .segid = 1, .pad = 3 };
	struct smio_seg_map mp = { .conn = 1, .size = 0 };
	struct smio_peer_seg_ref pr = { .segid = 0x99, .ref = 12345 };
	struct smio_peer_memfd pm = { .mem = 100000 };
	struct smio_seg_info si;
	struct smio_seg_conn sc;
	uint32_t id;

	/* A fake peer: host 2's daemon, as far as the cluster directory says. */
	impostor_begin(&im, g.dir, 2);
	peer = open_conn(OWNER, SMIO_ROLE_PEER, 2);
	impostor_end(&im);

	/* Malformed: the codec refuses them, the connection stays. */
	assert_int_equal(call(own, SMIO_SEG_CREATE, &cr, sizeof(cr), NULL), -EINVAL);
	cr = (struct smio_seg_create){ .segid = 1, .size = PAGE, .flags = 0x80 };
	assert_int_equal(call(own, SMIO_SEG_CREATE, &cr, sizeof(cr), NULL), -EINVAL);
	cr = (struct smio_seg_create){ .segid = 1, .size = (1ull << 40) + 1 };
	assert_int_equal(call(own, SMIO_SEG_CREATE, &cr, sizeof(cr), NULL), -EINVAL);
	assert_int_equal(call(own, SMIO_SEG_CREATE, &cr, sizeof(cr) - 1, NULL), -EINVAL);
	assert_int_equal(call(own, SMIO_SEG_REMOVE, &sid, sizeof(sid), NULL), -EINVAL);
	sid = (struct smio_seg_id){ .segid = SMIO_SEGID_AUTO };
	assert_int_equal(call(own, SMIO_SEG_REMOVE, &sid, sizeof(sid), NULL), -EINVAL);
	assert_int_equal(call(own, SMIO_SEG_MAP_LOCAL, &sid, sizeof(sid), NULL), -EINVAL);
	assert_int_equal(call(own, SMIO_SEG_AVAILABLE, &av, sizeof(av), NULL), -EINVAL);
	assert_int_equal(call(use, SMIO_SEG_CONNECT, &cn, sizeof(cn), NULL), -EINVAL);
	assert_int_equal(call(use, SMIO_SEG_MAP_REMOTE, &mp, sizeof(mp), NULL), -EINVAL);
	mp = (struct smio_seg_map){ .conn = 1, .offset = UINT64_MAX, .size = 2 };
	assert_int_equal(call(use, SMIO_SEG_MAP_REMOTE, &mp, sizeof(mp), NULL), -EINVAL);
	assert_int_equal(call(own, SMIO_STATUS, NULL, 0, NULL), 0);

	/* Well-formed but wrong. */
	assert_int_equal(seg_connect(use, OWNER, 0x777, NULL), -ENOENT);
	cn = (struct smio_seg_connect){ .node_id = 999, .segid = 1 };
	assert_int_equal(call(use, SMIO_SEG_CONNECT, &cn, sizeof(cn), NULL), -EHOSTUNREACH);
	cn = (struct smio_seg_connect){ .node_id = g.d[OWNER].node_id, .segid = 1,
					.adapter = 7 };
	assert_int_equal(call(use, SMIO_SEG_CONNECT, &cn, sizeof(cn), NULL), -ENODEV);
	assert_int_equal(seg_disconnect(use, 4242), -ENOENT);
	assert_int_equal(seg_remove(own, 0x777), -ENOENT);
	assert_int_equal(seg_avail(own, 0x777, 1), -ENOENT);

	/* Ids are unique per host; an empty segment has nothing to offer yet. */
	assert_int_equal(seg_create(own, 0x10, PAGE, 0, NULL), 0);
	assert_int_equal(seg_create(other, 0x10, PAGE, 0, NULL), -EEXIST);
	assert_int_equal(seg_create(own, 0x11, 3 * PAGE, SMIO_SEG_F_EMPTY, &si), 0);
	assert_int_equal(si.addr, 0);
	assert_int_equal(si.size, 3 * PAGE);
	assert_int_equal(seg_avail(own, 0x11, 1), -ENXIO);
	sid = (struct smio_seg_id){ .segid = 0x11 };
	assert_int_equal(call(own, SMIO_SEG_MAP_LOCAL, &sid, sizeof(sid), NULL), -ENXIO);
	assert_int_equal(seg_connect(use, OWNER, 0x11, NULL), -ECONNREFUSED);

	/* Someone else's segment or connection. */
	id = seg_new(own, SMIO_SEGID_AUTO, PAGE);
	assert_int_equal(seg_remove(other, id), -EPERM);
	assert_int_equal(seg_avail(other, id, 0), -EPERM);
	sid = (struct smio_seg_id){ .segid = id };
	assert_int_equal(call(other, SMIO_SEG_MAP_LOCAL, &sid, sizeof(sid), NULL), -EPERM);
	assert_int_equal(seg_connect(use, OWNER, id, &sc), 0);
	assert_int_equal(seg_disconnect(use2, sc.conn), -EPERM);
	assert_int_equal(map_remote_rc(use2, sc.conn, 0, PAGE, NULL), -EPERM);

	/* Peer messages are for daemons, and a fake peer gets nothing it did not take. */
	assert_int_equal(call(own, SMIO_PEER_SEG_LOOKUP, &sid, sizeof(sid), NULL), -EPERM);
	assert_int_equal(call(own, SMIO_PEER_MEMFD, &pm, sizeof(pm), NULL), -EPERM);
	assert_int_equal(call(peer, SMIO_PEER_SEG_RELEASE, &pr, sizeof(pr), NULL), -ENOENT);
	assert_int_equal(call(peer, SMIO_PEER_MEMFD, &pm, sizeof(pm), NULL), -ENOENT);
	cr = (struct smio_seg_create){ .segid = 0x12, .size = PAGE };
	assert_int_equal(call(peer, SMIO_SEG_CREATE, &cr, sizeof(cr), NULL), -EPERM);
	/* The reference host 0 holds is not the fake peer's to drop. */
	pr = (struct smio_peer_seg_ref){ .segid = id, .ref = 1 };
	for (uint32_t r = 1; r < 64; r++) {
		pr.ref = r;
		assert_int_equal(call(peer, SMIO_PEER_SEG_RELEASE, &pr, sizeof(pr), NULL), -ENOENT);
	}
	assert_int_equal(seg_remove(own, id), -EBUSY);
	/* Nor is where its memory is for devices (PEER_SEG_WHERE): only a reference's holder asks. */
	assert_int_equal(call(own, SMIO_PEER_SEG_WHERE, &pr, sizeof(pr), NULL), -EPERM);
	for (uint32_t r = 1; r < 64; r++) {
		pr.ref = r;
		assert_int_equal(call(peer, SMIO_PEER_SEG_WHERE, &pr, sizeof(pr), NULL), -ENOENT);
	}
	/* A lookup it makes is its own; closing its connection gives it back. */
	assert_int_equal(call(peer, SMIO_PEER_SEG_LOOKUP, &sid, sizeof(sid), NULL), 0);
	assert_int_equal(rbuf.ps.segid, id);
	{
		struct smio_peer_seg ps = rbuf.ps;
		struct smio_peer_seg_where w;

		/* RAM of the owner: the owner itself, at the address the lookup gave. */
		pr = (struct smio_peer_seg_ref){ .segid = id, .ref = ps.ref };
		assert_int_equal(call(peer, SMIO_PEER_SEG_WHERE, &pr, sizeof(pr), NULL), 0);
		memcpy(&w, rbuf.b, sizeof(w));
		assert_int_equal(w.host, OWNER);
		assert_int_equal(w.flags, 0);
		assert_int_equal(w.addr, ps.addr);
		assert_int_equal(w.size, ps.size);
		pr.segid = id + 1;           /* its reference, another segment */
		assert_int_equal(call(peer, SMIO_PEER_SEG_WHERE, &pr, sizeof(pr), NULL), -ENOENT);
	}
	/* SEG_CONN_P2P: only the connection's process; a function of this host
	 * (no shadow) reaches the segment through the connection's window. */
	{
		struct smio_seg_conn_p2p cp = { .conn = sc.conn, .bdf = 0xffff }, got;
		uint16_t bdf;

		assert_int_equal(call(use2, SMIO_SEG_CONN_P2P, &cp, sizeof(cp), NULL), -EPERM);
		assert_int_equal(call(use, SMIO_SEG_CONN_P2P, &cp, sizeof(cp), NULL), -ENODEV);
		cp.bus = 1;
		assert_int_equal(call(use, SMIO_SEG_CONN_P2P, &cp, sizeof(cp), NULL), -EINVAL);
		assert_int_equal(call(use, SMIO_FUNC_LIST, NULL, 0, NULL), 0);
		assert_true(rbuf.fl.n > 0);
		bdf = rbuf.fl.f[0].bdf;
		cp = (struct smio_seg_conn_p2p){ .conn = sc.conn, .bdf = bdf };
		assert_int_equal(call(use, SMIO_SEG_CONN_P2P, &cp, sizeof(cp), NULL), 0);
		memcpy(&got, rbuf.b, sizeof(got));
		assert_int_equal(got.bus, sc.win_addr + sc.offset);
		assert_int_equal(got.bdf, bdf);
	}
	close(peer);
	sync_host(OWNER);

	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(seg_remove(own, id), 0);
	assert_int_equal(seg_remove(own, 0x10), 0);
	assert_int_equal(seg_remove(own, 0x11), 0);
	close(own);
	close(other);
	close(use);
	close(use2);
}

/* ---------- 7. an owner behind an IOMMU ---------- */

/*
 * Host 2 has its IOMMU on: what comes in through its NTB is translated, so
 * the daemon maps each segment for its NTBs when the segment gets memory.
 * Sharing then works as with host 1; a freed segment is unmapped again.
 */
/*
 * A host keeps the memfds it fetched from its peers (one per host and memory
 * object, see docs/protocol.md): map host 2's RAM once before the fd counts
 * are taken, so the test counts leaks and not that cache.
 */
static int iommu_setup(void **state)
{
	int own = client(2), use = client(USER);
	uint32_t id = seg_new(own, SMIO_SEGID_AUTO, PAGE);
	struct smio_seg_conn sc;

	assert_int_equal(seg_connect(use, 2, id, &sc), 0);
	unmap(map_remote(use, sc.conn, 0, PAGE), PAGE);
	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(seg_remove(own, id), 0);
	close(own);
	close(use);
	return test_setup(state);
}

static void test_iommu_owner(void **state)
{
	int own = client(2), use = client(USER), memfd = -1;
	uint32_t id = seg_new(own, SMIO_SEGID_AUTO, 4 * PAGE);
	struct smio_seg_connect m = { .node_id = g.d[2].node_id, .segid = id };
	struct smio_seg_id lm = { .segid = id };
	volatile uint32_t *lp, *rp;
	struct smio_seg_conn sc;

	assert_int_equal(call_fd(own, SMIO_SEG_MAP_LOCAL, &lm, sizeof(lm), &memfd), 0);
	lp = map_reply(memfd, 4 * PAGE);
	lp[100] = 0xfeedface;
	assert_int_equal(call(use, SMIO_SEG_CONNECT, &m, sizeof(m), NULL), 0);
	sc = rbuf.sc;
	assert_int_equal(sc.host, 2);
	rp = map_remote(use, sc.conn, 0, 4 * PAGE);
	assert_int_equal(rp[100], 0xfeedface);
	rp[101] = 0x600dcafe;
	assert_int_equal(lp[101], 0x600dcafe);
	unmap(rp, 4 * PAGE);
	unmap(lp, 4 * PAGE);
	assert_int_equal(seg_disconnect(use, sc.conn), 0);
	assert_int_equal(seg_remove(own, id), 0);
	close(own);
	close(use);
}

/* ---------- 8. no leaks over many rounds ---------- */

static void test_fd_stable(void **state)
{
	int own = client(OWNER), use = client(USER);
	int fds0 = count_fds(g.d[USER].pid), fds1 = count_fds(g.d[OWNER].pid);

	for (int round = 0; round < 20; round++) {
		uint32_t id = seg_new(own, SMIO_SEGID_AUTO, 16 * PAGE);
		volatile uint32_t *lp = map_local(own, id, 16 * PAGE), *rp;
		struct smio_seg_conn sc;

		lp[3] = (uint32_t)round;
		assert_int_equal(seg_connect(use, OWNER, id, &sc), 0);
		rp = map_remote(use, sc.conn, 0, 16 * PAGE);
		assert_int_equal(rp[3], (uint32_t)round);
		unmap(rp, 16 * PAGE);
		unmap(lp, 16 * PAGE);
		/* Every other round the processes leave it to the close path. */
		if (round & 1) {
			close(use);
			close(own);
			sync_host(USER);
			sync_host(OWNER);
			use = client(USER);
			own = client(OWNER);
		} else {
			assert_int_equal(seg_disconnect(use, sc.conn), 0);
			assert_int_equal(seg_remove(own, id), 0);
		}
	}
	close(own);
	close(use);
	sync_host(USER);
	sync_host(OWNER);
	assert_int_equal(count_fds(g.d[USER].pid), fds0 - 1);
	assert_int_equal(count_fds(g.d[OWNER].pid), fds1 - 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, test_setup, test_teardown)
	const struct CMUnitTest tests[] = {
		T(test_share),
		T(test_local_connect),
		T(test_unavailable),
		T(test_lut_exhaustion),
		T(test_kill_owner),
		T(test_kill_user),
		T(test_rejected),
		cmocka_unit_test_setup_teardown(test_iommu_owner, iommu_setup, test_teardown),
		T(test_fd_stable),
	};

	return cmocka_run_group_tests(tests, group_setup, cluster_teardown);
}
