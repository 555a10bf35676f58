// SPDX-License-Identifier: MIT
/*
 * Acceptance: malformed protocol messages are rejected and the daemon stays
 * alive; a peer that dies turns routes through it into FAB_HOST_DOWN.
 *
 * The group setup starts a real 3-host cluster (the built-in default
 * topology, tests/cluster_harness.c: daemons with ready pipes, so nothing
 * here sleeps or polls for start-up). Every test is followed by a check
 * that every daemon still answers HELLO + STATUS and that its open fd count
 * (/proc/PID/fd) is what it was before the test; sync_host() is the barrier
 * for the asynchronous effects of a close (cluster_harness.c says why it
 * takes two connections).
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cluster_harness.h"
#include "daemon/daemon.h"
#include "peer_impostor.h"
#include "smartio/proto.h"
#include "util/smio_time.h"

#define NEXTRA		64        /* connections beyond SMD_MAX_UNAUTH */

/* Host 0's NTB window onto host 1's RAM, programmed by test_peer_failure. */
static uint64_t peer_win;

/* ---------- small helpers ---------- */

/* xorshift64*: deterministic garbage per seed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static int send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t done = 0;

	/* Bounded: every pass sends at least one byte or fails. */
	while (done < len) {
		ssize_t n = send(fd, p + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		done += (size_t)n;
	}
	return 0;
}

static int send_hdr(int fd, uint32_t magic, uint16_t version, uint16_t type, uint32_t len,
		    int32_t st, uint32_t flags, const void *payload, size_t plen)
{
	struct smio_hdr h = { .magic = magic, .version = version, .type = type, .len = len,
			      .seq = 77, .status = st, .flags = flags };
	int rc = send_all(fd, &h, sizeof(h));

	if (!rc && plen)
		rc = send_all(fd, payload, plen);
	return rc;
}

/* The daemon closes fd: EOF (or a reset if it left our bytes unread), no reply. */
static void expect_closed(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;
	ssize_t n;

	assert_int_equal(poll(&p, 1, IO_MS), 1);
	n = recv(fd, &c, 1, MSG_DONTWAIT);
	if (n < 0)
		assert_int_equal(errno, ECONNRESET);
	else
		assert_int_equal(n, 0);
	close(fd);
}

/* The far end of a pipe gets EOF once every copy of the write end is closed. */
static void expect_eof(int rfd)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char c;

	assert_int_equal(poll(&p, 1, IO_MS), 1);
	assert_int_equal(read(rfd, &c, 1), 0);
	close(rfd);
}

/* ---------- cluster ---------- */

static int group_setup(void **state)
{
	/* The connection-limit test holds more than SMD_MAX_UNAUTH sockets. */
	return cluster_setup("test_daemon", SMD_MAX_UNAUTH + NEXTRA + 256);
}

/* ---------- 1. garbage ---------- */

static void garbage_once(uint64_t seed, size_t len, bool after_hello)
{
	uint8_t *buf = malloc(len);
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + len;
	int fd, rc;

	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)rnd(&s);
	fd = after_hello ? open_conn(0, SMIO_ROLE_CLIENT, 0) : raw_conn(0);
	/* The daemon may close after the first 24 bytes: EPIPE/ECONNRESET are fine. */
	rc = send_all(fd, buf, len);
	assert_true(rc == 0 || rc == -EPIPE || rc == -ECONNRESET);
	/* A short prefix would wait for the rest of its header: say there is none. */
	shutdown(fd, SHUT_WR);
	expect_closed(fd);
	free(buf);
}

static void test_garbage(void **state)
{
	static const size_t lens[] = { 1, 7, 23, 24, 25, 100, 4096, 65536 + 24, 100 * 1024 };
	static const uint64_t seeds[] = { 1, 2, 3, 0xdeadbeef };

	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			garbage_once(seeds[s], lens[l], false);
			garbage_once(seeds[s], lens[l], true);
		}
	assert_alive(0);
}

/* ---------- 2. valid header, bad payload ---------- */

static void expect_einval(int fd, uint16_t type, const void *p, uint32_t len)
{
	assert_int_equal(call(fd, type, p, len, NULL), -EINVAL);
	/* The framing held: the same connection still works. */
	assert_int_equal(status(fd), 0);
}

static void test_bad_payload(void **state)
{
	int fd = open_conn(0, SMIO_ROLE_ADMIN, 0);
	uint8_t big[SMIO_MAX_PAYLOAD];
	struct smio_cfg cfg = { .bdf = 0, .off = 4095, .size = 3 };
	struct smio_route_req rt = { .addr = 0x1000, .len = 0 };
	struct smio_iommu_map im = { .domain = 1, .prot = 3, .iova = 0x1001, .paddr = 0x2000,
				     .size = 0x1000 };
	struct smio_ntb_ref nr = { .ntb = 0, .pad = 1 };
	struct smio_bdf bdf = { .bdf = 0, .pad = 1 };
	struct smio_ntb_lut lut = { .ntb = 0, .entry = UINT32_MAX };
	struct smio_iommu dom = { .op = 9 };
	struct smio_hello hl = { .role = SMIO_ROLE_CLIENT, .version = SMIO_VERSION };
	uint32_t four = 0;

	expect_einval(fd, SMIO_CFG_READ, &cfg, sizeof(cfg));          /* size 3 */
	cfg.size = 4;
	expect_einval(fd, SMIO_CFG_READ, &cfg, sizeof(cfg));          /* unaligned */
	cfg = (struct smio_cfg){ .off = 4096, .size = 1 };
	expect_einval(fd, SMIO_CFG_READ, &cfg, sizeof(cfg));          /* out of space */
	cfg = (struct smio_cfg){ .size = 1, .value = 0x100 };
	expect_einval(fd, SMIO_CFG_WRITE, &cfg, sizeof(cfg));         /* value too wide */
	cfg = (struct smio_cfg){ .size = 2, .pad = { 0, 1, 0 } };
	expect_einval(fd, SMIO_CFG_READ, &cfg, sizeof(cfg));          /* pad */
	expect_einval(fd, SMIO_CFG_READ, &cfg, sizeof(cfg) - 1);      /* short */

	expect_einval(fd, SMIO_ROUTE, &rt, sizeof(rt));               /* len 0 */
	rt.len = SMIO_MAX_LEN + 1;
	expect_einval(fd, SMIO_ROUTE, &rt, sizeof(rt));
	rt = (struct smio_route_req){ .addr = UINT64_MAX, .len = 2 };
	expect_einval(fd, SMIO_ROUTE, &rt, sizeof(rt));               /* wraps */
	rt = (struct smio_route_req){ .addr = 0x1000, .len = 8, .write = 2 };
	expect_einval(fd, SMIO_MAP, &rt, sizeof(rt));
	rt = (struct smio_route_req){ .addr = 0x1000, .len = 8, .pad = 1 };
	expect_einval(fd, SMIO_ROUTE, &rt, sizeof(rt));

	expect_einval(fd, SMIO_IOMMU_MAP, &im, sizeof(im));           /* unaligned iova */
	im.iova = 0x1000;
	im.size = 0;
	expect_einval(fd, SMIO_IOMMU_UNMAP, &im, sizeof(im));
	expect_einval(fd, SMIO_IOMMU_DOMAIN, &dom, sizeof(dom));
	expect_einval(fd, SMIO_NTB_INFO, &nr, sizeof(nr));            /* pad */
	expect_einval(fd, SMIO_CFG_DUMP, &bdf, sizeof(bdf));
	expect_einval(fd, SMIO_NTB_LUT_CLEAR, &lut, sizeof(lut));
	expect_einval(fd, SMIO_STATUS, &four, sizeof(four));          /* must be empty */
	expect_einval(fd, SMIO_HELLO, &hl, sizeof(hl) - 1);
	/* The largest legal frame, drained in full and rejected. */
	memset(big, 0xa5, sizeof(big));
	expect_einval(fd, SMIO_CFG_READ, big, sizeof(big));

	/* A bogus reply from a client is consumed without an answer. */
	assert_int_equal(send_hdr(fd, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, 0, -EIO,
				  SMIO_F_REPLY, NULL, 0), 0);
	assert_int_equal(send_hdr(fd, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, 0, 0,
				  SMIO_F_REPLY, NULL, 0), 0);
	assert_int_equal(status(fd), 0);

	/* And a good request on the same connection: the host bridge's vendor ID. */
	cfg = (struct smio_cfg){ .bdf = 0, .off = 0, .size = 2 };
	assert_int_equal(call(fd, SMIO_CFG_READ, &cfg, sizeof(cfg), NULL), 0);
	assert_int_equal(rbuf.cfg.value, 0x8086);
	close(fd);
}

/* ---------- 3. handshake ---------- */

static void test_handshake(void **state)
{
	struct smio_cfg cfg = { .size = 2 };
	struct smio_route_req rt = { .addr = 0x1000, .len = 8 };
	int fd = raw_conn(0);

	assert_int_equal(status(fd), -EACCES);
	assert_int_equal(call(fd, SMIO_CFG_READ, &cfg, sizeof(cfg), NULL), -EACCES);
	assert_int_equal(call(fd, SMIO_ROUTE, &rt, sizeof(rt), NULL), -EACCES);
	assert_int_equal(hello(fd, SMIO_ROLE_CLIENT, 0), 0);
	assert_int_equal(rbuf.hr.host, 0);
	assert_int_equal(rbuf.hr.version, SMIO_VERSION);
	assert_int_equal(status(fd), 0);
	assert_int_equal(hello(fd, SMIO_ROLE_CLIENT, 0), -EALREADY);
	assert_int_equal(hello(fd, SMIO_ROLE_ADMIN, 0), -EALREADY);
	assert_int_equal(status(fd), 0);
	close(fd);

	/* A refused HELLO leaves the connection usable and without a role. */
	fd = raw_conn(0);
	assert_int_equal(hello_version(fd, SMIO_ROLE_CLIENT, 0, SMIO_VERSION + 1),
			 -EPROTONOSUPPORT);
	assert_int_equal(hello_version(fd, SMIO_ROLE_CLIENT, 0, 0), -EPROTONOSUPPORT);
	assert_int_equal(status(fd), -EACCES);
	assert_int_equal(hello(fd, SMIO_ROLE_CLIENT, 1), -EXDEV);
	assert_int_equal(hello(fd, SMIO_ROLE_ADMIN, 2), -EXDEV);
	assert_int_equal(hello(fd, SMIO_ROLE_PEER, 99), -EINVAL);
	assert_int_equal(hello(fd, SMIO_ROLE_PEER, 0), -EINVAL); /* itself */
	assert_int_equal(hello(fd, 0, 0), -EINVAL);
	assert_int_equal(hello(fd, SMIO_ROLE_ADMIN + 1, 0), -EINVAL);
	assert_int_equal(status(fd), -EACCES);
	assert_int_equal(hello(fd, SMIO_ROLE_CLIENT, 0), 0);
	assert_int_equal(status(fd), 0);
	close(fd);
}

/* ---------- 4. roles ---------- */

static void test_roles(void **state)
{
	struct smio_ntb_lut lut = { .ntb = 0, .entry = UINT32_MAX, .dest_host = 1 };
	struct smio_cfg cfg = { .bdf = 0, .off = 4, .size = 2, .value = 0 };
	struct smio_step st = { .host = 0, .ntb_index = 0, .addr = 0x1000, .len = 8 };
	struct smio_ntb_link link = { .ntb = 0, .up = 0 };
	struct smio_iommu dom = { .op = SMIO_IOMMU_ALLOC };
	struct smio_ntb_ref nr = { .ntb = 0 };
	struct smio_ntb_spad sp = { .ntb = 0 };
	struct smio_ntb_db db = { .ntb = 0, .bits = 1 };
	struct smio_route_req rt = { .addr = 0x1000, .len = 8 };
	uint32_t lut_used, cmd;
	int cl = open_conn(0, SMIO_ROLE_CLIENT, 0);
	int ad = open_conn(0, SMIO_ROLE_ADMIN, 0);
	struct impostor im;
	int pe = raw_conn(0);

	/* A process that is not a daemon of the cluster is no peer... */
	assert_int_equal(hello(pe, SMIO_ROLE_PEER, 1), -EACCES);
	assert_int_equal(status(pe), -EACCES);
	/* ...unless the cluster directory says it is host 1's (the owner's word). */
	impostor_begin(&im, g.dir, 1);
	assert_int_equal(hello(pe, SMIO_ROLE_PEER, 1), 0);
	impostor_end(&im);

	assert_int_equal(call(cl, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	lut_used = rbuf.ni.lut_used;
	assert_int_equal(call(cl, SMIO_CFG_READ, &cfg, sizeof(cfg), NULL), 0);
	cmd = rbuf.cfg.value;

	/* An application may not program hardware nor stop the host. */
	assert_int_equal(call(cl, SMIO_NTB_LUT_SET, &lut, sizeof(lut), NULL), -EPERM);
	assert_int_equal(call(cl, SMIO_CFG_WRITE, &cfg, sizeof(cfg), NULL), -EPERM);
	assert_int_equal(call(cl, SMIO_SHUTDOWN, NULL, 0, NULL), -EPERM);
	assert_int_equal(call(cl, SMIO_NTB_LINK, &link, sizeof(link), NULL), -EPERM);
	assert_int_equal(call(cl, SMIO_IOMMU_DOMAIN, &dom, sizeof(dom), NULL), -EPERM);
	assert_int_equal(call(cl, SMIO_PEER_STEP, &st, sizeof(st), NULL), -EPERM);
	assert_int_equal(call(cl, SMIO_PEER_DB, &db, sizeof(db), NULL), -EPERM);
	assert_int_equal(call(ad, SMIO_PEER_STEP, &st, sizeof(st), NULL), -EPERM);
	/* Nothing changed. */
	assert_int_equal(call(cl, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	assert_int_equal(rbuf.ni.lut_used, lut_used);
	assert_int_equal(rbuf.ni.link_up, 1);
	assert_int_equal(call(cl, SMIO_CFG_READ, &cfg, sizeof(cfg), NULL), 0);
	assert_int_equal(rbuf.cfg.value, cmd);

	/* Another daemon steps, it does not read or program. */
	assert_int_equal(call(pe, SMIO_ROUTE, &rt, sizeof(rt), NULL), -EPERM);
	assert_int_equal(call(pe, SMIO_CFG_READ, &cfg, sizeof(cfg), NULL), -EPERM);
	assert_int_equal(call(pe, SMIO_NTB_LUT_SET, &lut, sizeof(lut), NULL), -EPERM);
	assert_int_equal(call(pe, SMIO_SHUTDOWN, NULL, 0, NULL), -EPERM);
	assert_int_equal(status(pe), 0);
	st.host = 2;
	assert_int_equal(call(pe, SMIO_PEER_STEP, &st, sizeof(st), NULL), -EXDEV);
	st.host = 0;
	st.ntb_index = 99;
	assert_int_equal(call(pe, SMIO_PEER_STEP, &st, sizeof(st), NULL), 0);
	assert_int_equal(rbuf.rr.status, FAB_BAD_REQUEST);
	/* Known to the codec, served by no daemon handler. */
	assert_int_equal(call(pe, SMIO_PEER_SPAD, &sp, sizeof(sp), NULL), -EOPNOTSUPP);
	assert_int_equal(call(ad, SMIO_PEER_SPAD, &sp, sizeof(sp), NULL), -EOPNOTSUPP);
	close(cl);
	close(ad);
	close(pe);
}

/* ---------- 5. bad headers ---------- */

static void bad_hdr(bool after_hello, uint32_t magic, uint16_t version, uint16_t type,
		    uint32_t len, int32_t st, uint32_t flags)
{
	int fd = after_hello ? open_conn(0, SMIO_ROLE_ADMIN, 0) : raw_conn(0);
	int rc = send_hdr(fd, magic, version, type, len, st, flags, NULL, 0);

	assert_true(rc == 0 || rc == -EPIPE || rc == -ECONNRESET);
	/* A header that cannot be trusted loses the framing: no reply, closed. */
	expect_closed(fd);
}

static void test_bad_headers(void **state)
{
	for (int a = 0; a < 2; a++) {
		bool h = a;

		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, 0xffffffffu, 0, 0);
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, SMIO_MAX_PAYLOAD + 1, 0, 0);
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, 0, 0, 0, 0);
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, 5, 0, 0, 0);          /* table hole */
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, SMIO_TYPE_MAX, 0, 0, 0);
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, 0xffff, 0, 0, 0);
		bad_hdr(h, SMIO_MAGIC ^ 1, SMIO_VERSION, SMIO_STATUS, 0, 0, 0);
		bad_hdr(h, 0, 0, 0, 0, 0, 0);
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION + 1, SMIO_STATUS, 0, 0, 0);
		bad_hdr(h, SMIO_MAGIC, 0, SMIO_STATUS, 0, 0, 0);
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, 0, 0, 0x4);  /* flag */
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, 0, -1, 0);   /* req status */
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, 0, 1, SMIO_F_REPLY);
		/* SMIO_F_FD without a descriptor. */
		bad_hdr(h, SMIO_MAGIC, SMIO_VERSION, SMIO_STATUS, 0, 0, SMIO_F_FD);
	}
	assert_alive(0);
}

/* ---------- 6. truncated messages, slowloris ---------- */

static void test_truncated(void **state)
{
	uint8_t junk[10] = { 0 };
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION,
			      .type = SMIO_CFG_READ, .len = 100 };
	int fd;

	/* Header says 100 bytes, 10 arrive, then EOF. */
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(send_hdr(fd, h.magic, h.version, h.type, h.len, 0, 0, junk,
				  sizeof(junk)), 0);
	close(fd);
	/* 10 bytes of a header, then EOF, before and after HELLO. */
	fd = raw_conn(0);
	assert_int_equal(send_all(fd, &h, 10), 0);
	close(fd);
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(send_all(fd, &h, 10), 0);
	close(fd);
	/* Same, but we keep reading: the daemon closes, it does not answer. */
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(send_hdr(fd, h.magic, h.version, h.type, h.len, 0, 0, junk,
				  sizeof(junk)), 0);
	shutdown(fd, SHUT_WR);
	expect_closed(fd);
	assert_alive(0);
}

static void test_slowloris(void **state)
{
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION,
			      .type = SMIO_STATUS, .seq = 77 }, rh;
	int64_t t0, dt;
	int slow, fd, rfd = -1;

	slow = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(send_all(slow, &h, sizeof(h) / 2), 0);
	/* Half a header stays open; another application is served at once:
	 * the daemon assembles messages without waiting for any one sender. */
	t0 = smio_now_ms();
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	assert_int_equal(status(fd), 0);
	dt = smio_now_ms() - t0;
	print_message("[   INFO   ] STATUS next to a half-sent header took %lld ms\n",
		      (long long)dt);
	assert_true(dt < 500);
	close(fd);
	/* The slow sender finishes its message much later and is answered. */
	assert_int_equal(send_all(slow, (const uint8_t *)&h + sizeof(h) / 2,
				  sizeof(h) - sizeof(h) / 2), 0);
	assert_int_equal(smio_recv(slow, &rh, rbuf.b, sizeof(rbuf.b), &rfd, 3000), 0);
	assert_int_equal(rh.seq, 77);
	assert_int_equal(rh.status, 0);
	assert_int_equal(rfd, -1);
	close(slow);
}

/* ---------- 7. descriptors sent to the daemon ---------- */

/* Send a bare header with nfds copies of fd attached to its first byte. */
static int send_with_fds(int sock, const struct smio_hdr *h, int fd, int nfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = (void *)h, .iov_len = sizeof(*h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	int fds[4];

	assert_true(h->len == 0 && nfds >= 0 && nfds <= 4);
	if (nfds) {
		memset(&cbuf, 0, sizeof(cbuf));
		for (int i = 0; i < nfds; i++)
			fds[i] = fd;
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -errno;
}

/* A pipe whose write end we hand over; returns the read end. */
static int pipe_for(int *wfd)
{
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	*wfd = p[1];
	return p[0];
}

static void test_fd_passing(void **state)
{
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION,
			      .type = SMIO_STATUS, .seq = 5 };
	struct smio_cfg cfg = { .off = 4095, .size = 3 };
	struct smio_hdr rh;
	int fd, w, r, rfd;

	/* A well-formed request with an fd: normal reply, the fd closed. */
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	r = pipe_for(&w);
	assert_int_equal(smio_send(fd, SMIO_STATUS, 1, 0, 0, NULL, 0, w), 0);
	close(w);
	assert_int_equal(smio_recv(fd, &rh, rbuf.b, sizeof(rbuf.b), &rfd, IO_MS), 0);
	assert_int_equal(rh.status, 0);
	assert_int_equal(rh.seq, 1);
	assert_int_equal(rh.len, sizeof(struct smio_status));
	assert_int_equal(rfd, -1);
	expect_eof(r);
	/* With a malformed payload: -EINVAL, fd closed, connection kept. */
	r = pipe_for(&w);
	assert_int_equal(smio_send(fd, SMIO_CFG_READ, 2, 0, 0, &cfg, sizeof(cfg), w), 0);
	close(w);
	assert_int_equal(smio_recv(fd, &rh, rbuf.b, sizeof(rbuf.b), NULL, IO_MS), 0);
	assert_int_equal(rh.status, -EINVAL);
	expect_eof(r);
	assert_int_equal(status(fd), 0);
	close(fd);

	/* Before HELLO: -EACCES, fd closed. */
	fd = raw_conn(0);
	r = pipe_for(&w);
	assert_int_equal(smio_send(fd, SMIO_STATUS, 3, 0, 0, NULL, 0, w), 0);
	close(w);
	assert_int_equal(smio_recv(fd, &rh, rbuf.b, sizeof(rbuf.b), NULL, IO_MS), 0);
	assert_int_equal(rh.status, -EACCES);
	expect_eof(r);
	close(fd);

	/* An fd without SMIO_F_FD: framing cannot be trusted, closed. */
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	r = pipe_for(&w);
	assert_int_equal(send_with_fds(fd, &h, w, 1), 0);
	close(w);
	expect_closed(fd);
	expect_eof(r);

	/* Several fds on one message. */
	fd = open_conn(0, SMIO_ROLE_CLIENT, 0);
	r = pipe_for(&w);
	h.flags = SMIO_F_FD;
	assert_int_equal(send_with_fds(fd, &h, w, 3), 0);
	close(w);
	expect_closed(fd);
	expect_eof(r);
	assert_alive(0);
}

/* ---------- 8. connection limit ---------- */

/*
 * Connections that have not said HELLO share SMD_MAX_UNAUTH slots; a newcomer
 * beyond that evicts the one that waited longest, so a pile of idle sockets
 * cannot lock anyone out. Those that said HELLO are clients (a pool of their
 * own) and stay.
 */
static void test_conn_limit(void **state)
{
	enum { N = SMD_MAX_UNAUTH + NEXTRA };
	static int fds[N];
	struct rlimit rl;
	unsigned base, ok = 0, refused = 0;
	int fd;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < (rlim_t)N + 64) {
		print_message("[   INFO   ] RLIMIT_NOFILE %llu < %d: skipped\n",
			      (unsigned long long)rl.rlim_cur, N + 64);
		skip();
	}
	assert_int_equal(status(g.d[0].ctl), 0);
	base = rbuf.st.nclients + rbuf.st.npeers;
	for (int i = 0; i < N; i++)
		fds[i] = raw_conn(0);
	/*
	 * The daemon accepts new connections after serving those it has (the
	 * backlog waits); once it has taken all of them, the oldest NEXTRA were
	 * evicted and the newest SMD_MAX_UNAUTH are there: HELLO tells which.
	 */
	for (int64_t t0 = smio_now_ms(); smio_now_ms() - t0 < IO_MS;) {
		assert_int_equal(status(g.d[0].ctl), 0);
		if (rbuf.st.nclients + rbuf.st.npeers == base + SMD_MAX_UNAUTH)
			break;
	}
	for (int i = 0; i < N; i++) {
		int rc = hello(fds[i], SMIO_ROLE_CLIENT, 0);

		if (!rc) {
			ok++;
		} else {
			assert_true(rc == -ECONNRESET || rc == -EPIPE);
			assert_true(i < NEXTRA);      /* only the oldest went */
			refused++;
			close(fds[i]);
			fds[i] = -1;
		}
	}
	print_message("[   INFO   ] %u connections kept, %u evicted\n", ok, refused);
	assert_int_equal(ok, SMD_MAX_UNAUTH);
	assert_int_equal(refused, NEXTRA);
	/* Still serving, and a newcomer is welcome: clients have their own pool. */
	assert_int_equal(status(g.d[0].ctl), 0);
	assert_int_equal(rbuf.st.nclients + rbuf.st.npeers, base + SMD_MAX_UNAUTH);
	fd = raw_conn(0);
	assert_int_equal(hello(fd, SMIO_ROLE_CLIENT, 0), 0);
	assert_int_equal(status(fd), 0);
	close(fd);
	for (int i = 0; i < N; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	sync_host(0);
	assert_int_equal(status(g.d[0].ctl), 0);
	assert_int_equal(rbuf.st.nclients + rbuf.st.npeers, base);
	assert_alive(0);
}

/* ---------- 10. MAP: the zero-software data path ---------- */

static void *map_ram(int conn, uint64_t addr, int *mfd, void **base, size_t *maplen)
{
	struct smio_route_req rt = { .write = 1, .addr = addr, .len = 256 };
	long pg = sysconf(_SC_PAGESIZE);
	uint32_t rlen;
	uint64_t off;
	void *p;

	assert_int_equal(smio_call(conn, SMIO_MAP, &rt, sizeof(rt), rbuf.b, sizeof(rbuf.b),
				   &rlen, mfd, IO_MS), 0);
	assert_int_equal(rlen, sizeof(struct smio_map_reply));
	assert_int_equal(rbuf.mr.status, 0);
	assert_int_equal(rbuf.mr.host, 0);
	assert_true(*mfd >= 0);
	assert_true(rbuf.mr.len >= 256);
	assert_true(rbuf.mr.offset + rbuf.mr.len <= rbuf.mr.fd_size);
	off = rbuf.mr.offset & ~(uint64_t)(pg - 1);
	*maplen = (size_t)(rbuf.mr.offset - off) + 256;
	p = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_SHARED, *mfd, (off_t)off);
	assert_true(p != MAP_FAILED);
	*base = p;
	return (uint8_t *)p + (rbuf.mr.offset - off);
}

static void test_map_zero_copy(void **state)
{
	static const char pat[] = "smartio: stored without a message";
	int cl = open_conn(0, SMIO_ROLE_CLIENT, 0);
	size_t len;
	void *base;
	char *p;
	int mfd;

	p = map_ram(cl, 0x123440, &mfd, &base, &len);
	memcpy(p, pat, sizeof(pat));
	munmap(base, len);
	close(mfd);

	/* A second mapping, on another connection, sees the stores. */
	close(cl);
	cl = open_conn(0, SMIO_ROLE_CLIENT, 0);
	p = map_ram(cl, 0x123440, &mfd, &base, &len);
	assert_memory_equal(p, pat, sizeof(pat));
	munmap(base, len);
	close(mfd);
	close(cl);
}

/* ---------- 9. peer failure ---------- */

static int route(int conn, uint64_t addr, bool nocache, int64_t *ms)
{
	struct smio_route_req rt = { .addr = addr, .len = 64, .nocache = nocache };
	int64_t t0 = smio_now_ms();
	uint32_t rlen;

	assert_int_equal(smio_call(conn, SMIO_ROUTE, &rt, sizeof(rt), rbuf.b, sizeof(rbuf.b),
				   &rlen, NULL, 4 * SMD_PEER_TIMEOUT), 0);
	if (ms)
		*ms = smio_now_ms() - t0;
	assert_true(rlen >= sizeof(struct smio_route_reply));
	return rbuf.rr.status;
}

static void test_peer_failure(void **state)
{
	struct smio_route_req mreq = { .len = 64 };
	int ad = g.d[0].ctl;
	int ws, mfd, cl;
	uint32_t entry;
	int64_t ms;
	uint64_t win;

	/* Host 0's NTB: a window onto host 1's RAM at 0 (kept for test_lying_peer). */
	win = lut_window(0, 1, 0, &entry);

	assert_int_equal(route(ad, win, false, NULL), 0);
	assert_int_equal(rbuf.rr.tgt.host, 1);
	assert_int_equal(rbuf.rr.ntb_hops, 1);
	assert_int_equal(route(ad, win, false, NULL), 0);
	assert_int_equal(rbuf.rr.cached, 1);
	/* Remote memory is not handed out by this daemon. */
	mreq.addr = win;
	assert_int_equal(smio_call(ad, SMIO_MAP, &mreq, sizeof(mreq), rbuf.b, sizeof(rbuf.b),
				   NULL, &mfd, IO_MS), -EREMOTE);
	assert_int_equal(mfd, -1);
	/* From here host 0 holds a peer connection to host 1: the new baseline. */
	snapshot();

	cl = open_conn(0, SMIO_ROLE_CLIENT, 0);
	ws = stop_daemon(1, SIGKILL);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	/*
	 * Let host 0 see its peer connection drop: it then distrusts its cache.
	 * Without this barrier a route served in the same loop iteration, before
	 * the hang-up, may still come from the cache.
	 */
	sync_host(0);
	assert_int_equal(route(cl, win, false, &ms), FAB_HOST_DOWN);
	print_message("[   INFO   ] route through a dead host: FAB_HOST_DOWN after %lld ms\n",
		      (long long)ms);
	assert_true(ms < SMD_PEER_TIMEOUT + 2000);
	assert_int_equal(route(cl, win, true, &ms), FAB_HOST_DOWN);
	assert_true(ms < SMD_PEER_TIMEOUT + 2000);
	assert_alive(0);
	assert_alive(2);

	/* Host 1 comes back: the same route works again, nothing leaked on host 0. */
	start_daemon(1);
	assert_int_equal(route(cl, win, false, NULL), 0);
	assert_int_equal(rbuf.rr.tgt.host, 1);
	assert_int_equal(rbuf.rr.cached, 0);
	close(cl);
	peer_win = win;
}

/*
 * A peer's answer is untrusted like any message. An impostor on host 1's
 * socket answers host 0's step with a target "on host 0" and a memory index
 * host 0 does not have; MAP through the window must not hand out whatever
 * lies at that index.
 */
static void test_lying_peer(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct smio_route_req mreq = { .len = 64, .addr = peer_win };
	struct smio_hello_reply hr = { .host = 1, .node_id = 8, .version = SMIO_VERSION };
	struct smio_route_reply lie = { .status = 0 };
	struct impostor im;
	struct pollfd p;
	struct smio_hdr h;
	int lfd, pfd, cl, mfd, ws;

	assert_true(peer_win != 0);    /* test_peer_failure programmed the window */
	cl = open_conn(0, SMIO_ROLE_CLIENT, 0);
	ws = stop_daemon(1, SIGTERM);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	sync_host(0);

	assert_int_equal(smio_sock_path(g.dir, 1, sa.sun_path, sizeof(sa.sun_path)), 0);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);

	/*
	 * An impostor the cluster directory does not list is not talked to at
	 * all: host 0 checks who listens on host 1's socket before saying a word.
	 */
	assert_int_equal(smio_send(cl, SMIO_MAP, 4241, 0, 0, &mreq, sizeof(mreq), -1), 0);
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, IO_MS), 1);
	pfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(pfd >= 0);
	assert_int_equal(smio_recv(cl, &h, rbuf.b, sizeof(rbuf.b), &mfd, IO_MS), 0);
	assert_int_equal(h.seq, 4241);
	assert_int_equal(mfd, -1);
	assert_int_equal(rbuf.mr.status, FAB_HOST_DOWN);
	expect_closed(pfd);

	/* Listed as host 1's daemon (the owner's word), it is talked to... */
	impostor_begin(&im, g.dir, 1);
	/* Ask for the mapping; host 0 now steps to "host 1", i.e. to us. */
	assert_int_equal(smio_send(cl, SMIO_MAP, 4242, 0, 0, &mreq, sizeof(mreq), -1), 0);
	assert_int_equal(poll(&p, 1, IO_MS), 1);
	pfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(pfd >= 0);
	/* Its HELLO comes once it has checked who we are: the list may go back. */
	assert_int_equal(smio_recv(pfd, &h, rbuf.b, sizeof(rbuf.b), NULL, IO_MS), 0);
	impostor_end(&im);
	assert_int_equal(h.type, SMIO_HELLO);
	assert_int_equal(smio_send(pfd, SMIO_HELLO, h.seq, 0, SMIO_F_REPLY, &hr, sizeof(hr),
				   -1), 0);
	assert_int_equal(smio_recv(pfd, &h, rbuf.b, sizeof(rbuf.b), NULL, IO_MS), 0);
	assert_int_equal(h.type, SMIO_PEER_STEP);
	lie.tgt = (struct smio_target){ .kind = 1, .host = 0, .mem = 100000, .len = 64 };
	assert_int_equal(smio_send(pfd, SMIO_PEER_STEP, h.seq, 0, SMIO_F_REPLY, &lie,
				   sizeof(lie), -1), 0);

	assert_int_equal(smio_recv(cl, &h, rbuf.b, sizeof(rbuf.b), &mfd, IO_MS), 0);
	assert_int_equal(h.seq, 4242);
	assert_int_equal(h.status, 0);
	assert_int_equal(mfd, -1);
	assert_int_equal(rbuf.mr.status, FAB_HOST_DOWN);
	/* ...but still not believed: host 0 dropped the liar. */
	expect_closed(pfd);
	close(lfd);
	unlink(sa.sun_path);

	/* The real host 1 again: routes through the window are honest again. */
	start_daemon(1);
	assert_int_equal(route(cl, peer_win, false, NULL), 0);
	assert_int_equal(rbuf.rr.tgt.host, 1);
	close(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
/* Per test: remember each daemon's fd count; afterwards, alive and no leak. */
#define T(fn) cmocka_unit_test_setup_teardown(fn, cluster_test_setup, cluster_test_teardown)
		T(test_garbage),
		T(test_bad_payload),
		T(test_handshake),
		T(test_roles),
		T(test_bad_headers),
		T(test_truncated),
		T(test_slowloris),
		T(test_fd_passing),
		T(test_conn_limit),
		T(test_map_zero_copy),
		T(test_peer_failure),
		T(test_lying_peer),
#undef T
	};

	return cmocka_run_group_tests(tests, group_setup, cluster_teardown);
}
