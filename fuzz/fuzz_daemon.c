// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: framed messages of every type through the real
 * dispatcher of an in-process smartiod, peers and devices included.
 *
 * Once (LLVMFuzzerInitialize): a cluster directory with the built-in default
 * topology, real smartiod processes for hosts 1 and 2 (the normal build's:
 * $SMARTIOD, else build/src/daemon/smartiod beside the fuzz build, else the
 * fuzz build's own), and host 0 in this process, brought up by smd_up()
 * exactly as smartiod does (socket and pid file included, so the peers
 * accept it). The harness thread is host 0's loop thread: it runs the
 * sd-event loop itself (sd_event_run), between its own sends and receives.
 *
 * Per input (format: fuzz_daemon.h): each record goes over one of a few
 * connections, socketpairs handed to smd_conn_accept() and greeted with
 * HELLO as client, admin or another host's daemon (the harness's pid stands
 * in DIR/host-N.pid for the moment of that HELLO, as in
 * tests/peer_impostor.h); the loop runs until the reply is in, the
 * connection is closed or the daemon has nothing left to do for it. So
 * validation, roles, the inline, asynchronous and worker-run handlers and
 * the calls to the real peers all run. Then what admin requests changed in
 * the host's tables is put back (LUT entries, requester IDs, link, IOMMU,
 * borrowed devices, config space), the connections are closed and the loop
 * runs until the daemon has forgotten them (its connection-closed hooks), so
 * no state carries over from one input to the next. SHUTDOWN from an admin
 * becomes STATUS: the host must outlive the input.
 *
 * A connection the daemon never forgets (a request that never ends) aborts
 * the run, as does a malformed frame from the daemon.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "daemon/bringup.h"
#include "daemon/core_priv.h"
#include "daemon/daemon.h"
#include "fuzz_cluster.h"
#include "fuzz_daemon.h"
#include "peer_impostor.h"
#include "smartio/proto.h"
#include "smartio/topology.h"
#include "util/smio_time.h"

#define HOST          0u        /* the host in this process */
#define NPEERS        2u        /* hosts 1 and 2: real daemons */
#define HDR           sizeof(struct smio_hdr)
#define READY_MS      30000     /* the daemons' connections made */
#define WAIT_MS       (SMD_PEER_TIMEOUT + 1000)   /* one reply, a peer call included */
#define FORGET_MS     (2 * SMD_PEER_TIMEOUT + 4000) /* closed connections forgotten */
#define MAX_CIDS      (FD_MAX_RECORDS + 2 * FD_NCONN)
#define MAX_SNAP      32
#define UNDO_BYTES    48
#define FD_SLACK      32        /* descriptors the daemon may cache (peers' memory) */
/* Accelerator work per request: the models copy at memory speed, so 2 GiB
 * times 91 is a 90-second benchmark, not a protocol case. */
#define ACCEL_MAX_LEN   (1u << 20)
#define ACCEL_MAX_ITERS 64u

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One of the harness's connections to host 0. */
struct hconn {
	int fd;                   /* our end; -1 when closed */
	uint32_t cid;             /* the daemon's id for it */
	uint32_t have;            /* bytes of the frame being received */
	unsigned replies;
	bool gone;                /* the daemon closed it */
	_Alignas(8) uint8_t in[HDR + SMIO_MAX_PAYLOAD];
};

/* An admin request whose effect on the host's tables is undone after the input. */
struct logged {
	uint32_t seq;
	uint16_t type;
	uint8_t p[UNDO_BYTES];
};

static struct {
	struct smd d;
	struct smd_up up;
	char dir[64];
	pid_t peer[NPEERS + 1];   /* by host id */
	bool ready;
	int base_fds;             /* open descriptors once the cluster is up */
	int wait_ms, forget_ms;   /* WAIT_MS, FORGET_MS, or $FUZZ_DAEMON_WAIT_MS/_FORGET_MS */
	uint32_t seq;
	struct hconn c[FD_NCONN];
	uint32_t cids[MAX_CIDS];  /* every connection of this input */
	unsigned ncids;
	struct logged sent[FD_MAX_RECORDS], undo[FD_MAX_RECORDS];
	unsigned nsent, nundo;
	bool undoing;
	struct { uint16_t bdf; uint8_t cfg[SMIO_CFG_SPACE]; } snap[MAX_SNAP];
	unsigned nsnap;
	uint8_t out[HDR + SMIO_MAX_PAYLOAD];
	int errfd;                /* our stderr, kept when libFuzzer closes fd 2 (-close_fd_mask=2) */
	bool trace;               /* $FUZZ_DAEMON_TRACE: every reply on errfd */
	bool internal;            /* waiting for a reply to the harness's own request */
	uint32_t ring[FD_REF_BACK][FD_REF_WORDS];   /* latest replies' words, for FD_REF */
	uint32_t ring_words[FD_REF_BACK];
	unsigned nring;
	bool capture;             /* keep the last reply (set-up only) */
	struct smio_hdr rep_h;
	uint8_t rep[SMIO_MAX_PAYLOAD];
} g;

/* Our messages survive -close_fd_mask=2, which silences the daemons' logging. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && write(g.errfd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1))
		return;
}

static void die(const char *what)
{
	say("fuzz_daemon: %s\n", what);
	abort();
}

/* ---------- the loop ---------- */

static void drain(unsigned i);

/* One turn of host 0's loop (waiting at most usec), then read what came to us. */
static void turn(uint64_t usec)
{
	int rc = sd_event_run(g.d.core->ev, usec);

	if (rc < 0) {
		say("fuzz_daemon: sd_event_run: %s\n", strerror(-rc));
		abort();
	}
	for (unsigned i = 0; i < FD_NCONN; i++)
		drain(i);
}

/* The daemon's side of connection cid, closed or not; NULL once freed. */
static struct smd_conn *daemon_conn(uint32_t cid)
{
	for (struct smd_conn *x = g.d.core->conns; x; x = x->next)
		if (x->cid == cid)
			return x;
	return NULL;
}

/* Has the daemon read, served and answered everything we sent on i? */
static bool idle(unsigned i)
{
	struct hconn *c = &g.c[i];
	struct smd_conn *x;
	int outq = 0;

	if (c->fd < 0 || c->gone)
		return true;
	x = daemon_conn(c->cid);
	if (!x || x->dead)
		return true;
	if (ioctl(c->fd, SIOCOUTQ, &outq) < 0)
		outq = 0;
	/* Unread bytes of ours are unread by the daemon (a partial message
	 * stays in its assembler: that is idle too). */
	return outq == 0 && !x->busy && !x->out;
}

/* ---------- what admin requests changed ---------- */

static void log_sent(uint32_t seq, uint16_t type, const uint8_t *p, uint32_t len)
{
	struct logged *l;

	if (g.undoing || g.nsent == FD_MAX_RECORDS)
		return;
	l = &g.sent[g.nsent++];
	*l = (struct logged){ .seq = seq, .type = type };
	memcpy(l->p, p, len < UNDO_BYTES ? len : UNDO_BYTES);
}

static void push_undo(uint16_t type, const void *p, size_t len)
{
	struct logged *u;

	if (g.nundo == FD_MAX_RECORDS)
		return;
	u = &g.undo[g.nundo++];
	*u = (struct logged){ .type = type };
	memcpy(u->p, p, len);
}

static const uint8_t *snapshot_of(uint16_t bdf)
{
	for (unsigned i = 0; i < g.nsnap; i++)
		if (g.snap[i].bdf == bdf)
			return g.snap[i].cfg;
	return NULL;
}

/* A successful admin reply: how to take its effect back. */
static void on_admin_reply(const struct smio_hdr *h, const uint8_t *payload)
{
	const struct logged *s = NULL;

	for (unsigned i = 0; i < g.nsent; i++)
		if (g.sent[i].seq == h->seq && g.sent[i].type == h->type)
			s = &g.sent[i];
	if (!s || h->status < 0)
		return;
	switch (h->type) {
	case SMIO_NTB_LUT_SET: {
		struct smio_ntb_lut m;

		if (h->len != sizeof(m))
			break;
		memcpy(&m, payload, sizeof(m));      /* the entry it took */
		push_undo(SMIO_NTB_LUT_CLEAR, &m, sizeof(m));
		break;
	}
	case SMIO_NTB_RID_ADD:
		push_undo(SMIO_NTB_RID_DEL, s->p, sizeof(struct smio_ntb_rid));
		break;
	case SMIO_NTB_LINK: {
		struct smio_ntb_link m;

		memcpy(&m, s->p, sizeof(m));
		if (!m.up) {
			m.up = 1;
			push_undo(SMIO_NTB_LINK, &m, sizeof(m));
		}
		break;
	}
	case SMIO_IOMMU_DOMAIN: {
		struct smio_iommu m;

		memcpy(&m, s->p, sizeof(m));
		if (m.op == SMIO_IOMMU_ALLOC && h->len == sizeof(m)) {
			memcpy(&m, payload, sizeof(m));
			m.op = SMIO_IOMMU_FREE;
			push_undo(SMIO_IOMMU_DOMAIN, &m, sizeof(m));
		} else if (m.op == SMIO_IOMMU_ATTACH) {
			m.op = SMIO_IOMMU_DETACH;
			push_undo(SMIO_IOMMU_DOMAIN, &m, sizeof(m));
		}
		break;
	}
	case SMIO_IOMMU_MAP:
		push_undo(SMIO_IOMMU_UNMAP, s->p, sizeof(struct smio_iommu_map));
		break;
	case SMIO_LEND_BORROW: {
		struct smio_lend_req m;

		memcpy(&m, s->p, sizeof(m));
		m.flags = SMIO_LEND_F_UNBIND;
		push_undo(SMIO_LEND_RETURN, &m, sizeof(m));
		break;
	}
	case SMIO_CFG_WRITE: {
		struct smio_cfg m;
		const uint8_t *cfg;

		memcpy(&m, s->p, sizeof(m));
		cfg = snapshot_of(m.bdf);
		if (!cfg || m.off >= SMIO_CFG_SPACE || m.size > SMIO_CFG_SPACE - m.off)
			break;
		m.value = 0;
		memcpy(&m.value, cfg + m.off, m.size);
		push_undo(SMIO_CFG_WRITE, &m, sizeof(m));
		break;
	}
	default:
		break;
	}
}

/* ---------- our connections ---------- */

static void on_frame(unsigned i, const struct smio_hdr *h, const uint8_t *payload)
{
	if (!(h->flags & SMIO_F_REPLY))
		return;                   /* a request to a peer (PEER_INVALIDATE): dropped */
	g.c[i].replies++;
	if (g.trace)
		say("  conn %u: %s -> %d (%u bytes)\n", i, smio_type_name(h->type), h->status, h->len);
	if (!g.internal) {
		/* The input's replies, newest first, for FD_REF. */
		memmove(g.ring[1], g.ring[0], sizeof(g.ring[0]) * (FD_REF_BACK - 1));
		memmove(g.ring_words + 1, g.ring_words, sizeof(g.ring_words[0]) * (FD_REF_BACK - 1));
		g.ring_words[0] = h->len / 4 < FD_REF_WORDS ? h->len / 4 : FD_REF_WORDS;
		memcpy(g.ring[0], payload, g.ring_words[0] * 4);
		if (g.nring < FD_REF_BACK)
			g.nring++;
	}
	if (g.capture) {
		g.rep_h = *h;
		memcpy(g.rep, payload, h->len);
	}
	if (i == FD_ADMIN)
		on_admin_reply(h, payload);
}

/* Read whatever the daemon sent on i, without waiting. */
static void drain(unsigned i)
{
	struct hconn *c = &g.c[i];

	while (c->fd >= 0 && !c->gone) {
		union { char buf[CMSG_SPACE(4 * sizeof(int))]; struct cmsghdr align; } ctl;
		uint32_t need = HDR;
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf) };
		struct smio_hdr h;
		ssize_t n;

		if (c->have >= HDR)
			need += ((const struct smio_hdr *)c->in)->len;
		iov = (struct iovec){ c->in + c->have, need - c->have };
		n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			c->gone = true;       /* closed by the daemon */
			return;
		}
		/* Descriptors that came with a reply (memfds, eventfds) are dropped. */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++)
					close(((int *)CMSG_DATA(cm))[k]);
		c->have += (uint32_t)n;
		if (c->have < HDR)
			continue;
		memcpy(&h, c->in, HDR);
		if (c->have == HDR && smio_hdr_check(&h))
			die("the daemon sent a frame with a bad header");
		if (c->have < HDR + h.len)
			continue;
		if (smio_payload_check(h.type, h.flags & SMIO_F_REPLY, c->in + HDR, h.len) &&
		    !((h.flags & SMIO_F_REPLY) && h.status < 0 && !h.len)) {
			say("fuzz_daemon: the daemon sent a malformed %s %s\n",
				smio_type_name(h.type), h.flags & SMIO_F_REPLY ? "reply" : "request");
			abort();
		}
		on_frame(i, &h, c->in + HDR);
		c->have = 0;
	}
}

/* Send all of buf on i (with fd on its first byte), turning the loop while the socket is full. */
static void send_all(unsigned i, const uint8_t *buf, size_t len, int fd)
{
	struct hconn *c = &g.c[i];
	uint64_t end = smio_now_ms() + (uint64_t)g.wait_ms;
	size_t off = 0;

	while (off < len && c->fd >= 0 && !c->gone && smio_now_ms() < end) {
		union { char b[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
		struct iovec iov = { (void *)(buf + off), len - off };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (fd >= 0 && off == 0) {
			struct cmsghdr *cm;

			memset(&ctl, 0, sizeof(ctl));
			mh.msg_control = ctl.b;
			mh.msg_controllen = sizeof(ctl.b);
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		}
		n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			c->gone = true;       /* the daemon closed it */
			return;
		}
		turn(1000);               /* it reads when its turn comes */
	}
}

/* Run the loop until i has a reply beyond `before`, is closed, or is idle. */
static void wait_reply(unsigned i, unsigned before, uint16_t type)
{
	uint64_t t0 = smio_now_ms(), end = t0 + (uint64_t)g.wait_ms;

	while (g.c[i].replies == before && !g.c[i].gone && smio_now_ms() < end) {
		if (idle(i)) {
			drain(i);             /* the answer, if any, is in our socket */
			break;
		}
		turn(1000);
	}
	/* Slow answers make slow fuzzing: say which (a peer call timing out?). */
	if (g.trace && smio_now_ms() - t0 >= 500)
		say("  conn %u: %s took %llu ms\n", i, smio_type_name(type),
		    (unsigned long long)(smio_now_ms() - t0));
}

static void request(unsigned i, uint16_t type, const void *p, uint32_t len)
{
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION, .type = type,
			      .len = len, .seq = ++g.seq };
	unsigned before = g.c[i].replies;
	bool was = g.internal;

	g.internal = true;
	memcpy(g.out, &h, HDR);
	if (len)
		memcpy(g.out + HDR, p, len);
	if (i == FD_ADMIN)
		log_sent(h.seq, type, p, len);
	send_all(i, g.out, HDR + len, -1);
	wait_reply(i, before, type);
	g.internal = was;
}

static void close_conn(unsigned i)
{
	if (g.c[i].fd >= 0)
		close(g.c[i].fd);
	g.c[i].fd = -1;
}

/* Connect i to host 0 and say HELLO in its role (FD_UNAUTH: nothing). */
static int open_conn(unsigned i)
{
	static const uint32_t roles[FD_NCONN] = { SMIO_ROLE_CLIENT, SMIO_ROLE_CLIENT,
		SMIO_ROLE_ADMIN, SMIO_ROLE_PEER, SMIO_ROLE_PEER, 0 };
	struct hconn *c = &g.c[i];
	struct smio_hello hello = { .role = roles[i], .host = HOST, .pid = (uint32_t)getpid(),
				    .version = SMIO_VERSION };
	struct impostor im;
	int sv[2], rc;

	if (g.ncids == MAX_CIDS ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv))
		return -1;
	fab_host_lock(g.d.host);
	rc = smd_conn_accept(&g.d, sv[1]);        /* takes sv[1] */
	c->cid = rc ? 0 : g.d.core->conns->cid;   /* the newest is first */
	fab_host_unlock(g.d.host);
	if (rc) {
		close(sv[0]);
		return -1;
	}
	c->fd = sv[0];
	c->have = 0;
	c->replies = 0;
	c->gone = false;
	g.cids[g.ncids++] = c->cid;
	if (!roles[i])
		return 0;
	if (roles[i] == SMIO_ROLE_PEER) {
		hello.host = i == FD_PEER_1 ? 1 : 2;
		impostor_begin(&im, g.dir, hello.host);
	}
	request(i, SMIO_HELLO, &hello, sizeof(hello));
	if (roles[i] == SMIO_ROLE_PEER)
		impostor_end(&im);
	return 0;
}

/* ---------- one input ---------- */

/* FD_REF words of a payload become the ids earlier replies gave. */
static void resolve_refs(uint8_t *p, uint32_t len)
{
	for (uint32_t off = 0; off + 4 <= len; off += 4) {
		uint32_t v, back, word;

		memcpy(&v, p + off, 4);
		if ((v & 0xffff0000u) != FD_REF_MAGIC)
			continue;
		back = (v >> 8) & 0xff;
		word = v & 0xff;
		if (back < g.nring && word < g.ring_words[back])
			memcpy(p + off, &g.ring[back][word], 4);
	}
}

/* Keep device work small enough to fuzz (ACCEL_MAX_LEN, ACCEL_MAX_ITERS). */
static void bound_work(uint16_t type, uint8_t *p, uint32_t len)
{
	struct smio_accel_op m;

	if (type != SMIO_ACCEL_OP || len != sizeof(m))
		return;
	memcpy(&m, p, sizeof(m));
	if (m.len > ACCEL_MAX_LEN)
		m.len = ACCEL_MAX_LEN;
	if (m.iters > ACCEL_MAX_ITERS)
		m.iters = ACCEL_MAX_ITERS;
	memcpy(p, &m, sizeof(m));
}

/* Send one record on its connection; returns the bytes it took, 0 at the end. */
static size_t one_record(const uint8_t *data, size_t size)
{
	uint8_t sel;
	unsigned i, before;
	struct smio_hdr h;
	uint32_t plen;
	int fd = -1;

	if (size < 1 + HDR)
		return 0;
	sel = data[0];
	i = FD_SEL_CONN(sel);
	memcpy(&h, data + 1, HDR);
	plen = h.len;
	if (plen > size - 1 - HDR)
		plen = (uint32_t)(size - 1 - HDR);
	if (plen > SMIO_MAX_PAYLOAD)
		plen = SMIO_MAX_PAYLOAD;
	if (!(sel & FD_SEL_RAW)) {
		h.magic = SMIO_MAGIC;
		h.version = SMIO_VERSION;
		h.len = plen;
		h.seq = ++g.seq;
		h.flags = (h.flags & SMIO_F_REPLY) | (sel & FD_SEL_FD ? SMIO_F_FD : 0);
	}
	/* The host must outlive the input. */
	if (h.type == SMIO_SHUTDOWN && (i == FD_ADMIN || i == FD_UNAUTH))
		h.type = SMIO_STATUS;
	if ((g.c[i].fd < 0 || g.c[i].gone) && (close_conn(i), open_conn(i)))
		return 1 + HDR + plen;
	memcpy(g.out, &h, HDR);
	memcpy(g.out + HDR, data + 1 + HDR, plen);
	if (!(sel & FD_SEL_RAW))
		resolve_refs(g.out + HDR, plen);
	bound_work(h.type, g.out + HDR, plen);
	if (i == FD_ADMIN && !(h.flags & SMIO_F_REPLY))
		log_sent(h.seq, h.type, g.out + HDR, plen);
	if (sel & FD_SEL_FD)
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	before = g.c[i].replies;
	send_all(i, g.out, HDR + plen, fd);
	if (fd >= 0)
		close(fd);
	if (!(sel & FD_SEL_NOWAIT))
		wait_reply(i, before, h.type);
	if (sel & FD_SEL_CLOSE)
		close_conn(i);
	return 1 + HDR + plen;
}

/* Put back what the input's admin requests changed, newest first. */
static void undo_all(void)
{
	if (!g.nundo)
		return;
	g.undoing = true;
	if (g.c[FD_ADMIN].fd < 0 || g.c[FD_ADMIN].gone) {
		close_conn(FD_ADMIN);
		open_conn(FD_ADMIN);
	}
	while (g.nundo) {
		const struct logged *u = &g.undo[--g.nundo];
		const struct smio_msg_desc *m = smio_msg_desc(u->type);

		request(FD_ADMIN, u->type, u->p, m ? m->req.size : 0);
	}
	g.undoing = false;
}

/* Close every connection and run the loop until the daemon has forgotten them. */
static void forget_all(void)
{
	uint64_t t0 = smio_now_ms(), end = t0 + (uint64_t)g.forget_ms;
	bool left = true;

	for (unsigned i = 0; i < FD_NCONN; i++)
		close_conn(i);
	while (left) {
		left = false;
		fab_host_lock(g.d.host);
		for (unsigned k = 0; k < g.ncids; k++)
			if (daemon_conn(g.cids[k]))
				left = true;
		fab_host_unlock(g.d.host);
		if (!left)
			break;
		if (smio_now_ms() >= end) {
			say("fuzz_daemon: a connection was not forgotten in %d ms "
				"(a request that never ends, or a lost reference)\n", g.forget_ms);
			abort();
		}
		turn(1000);
	}
	if (g.trace && smio_now_ms() - t0 >= 500)
		say("  closing took %llu ms\n", (unsigned long long)(smio_now_ms() - t0));
	g.ncids = 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, n;
	unsigned records = 0;

	if (!g.ready)
		die("not initialised");
	g.seq = 0;
	g.nsent = g.nundo = 0;
	g.nring = 0;
	while (records++ < FD_MAX_RECORDS && (n = one_record(data + off, size - off)))
		off += n;
	/* Requests still in flight (FD_SEL_NOWAIT) are answered before anything closes. */
	for (unsigned i = 0; i < FD_NCONN; i++) {
		uint64_t end = smio_now_ms() + (uint64_t)g.wait_ms;

		while (!idle(i) && smio_now_ms() < end)
			turn(1000);
	}
	undo_all();
	forget_all();
	if (g.d.core->stopping)
		die("host 0 is stopping (a signal?)");
	/* Everything of the input is gone: so are its descriptors. */
	if (count_fds() > g.base_fds + FD_SLACK) {
		say("fuzz_daemon: %d descriptors open, %d after set-up\n", count_fds(), g.base_fds);
		die("descriptors leak");
	}
	return 0;
}

/* ---------- the cluster, once ---------- */

static void cluster_down(void)
{
	for (uint32_t h = 1; h <= NPEERS; h++) {
		fzc_stop_peer(g.peer[h]);
		g.peer[h] = 0;
	}
	/* Host 0's threads go with the process; its files go now. */
	unlink(g.up.sock);
	unlink(g.up.pidfile);
	if (!getenv("FUZZ_DAEMON_KEEP"))
		fzc_remove_dir(g.dir);
}

/* Run our loop until a reply to what we sent on fd (a connection to a peer) is in. */
static int peer_call(int fd, uint16_t type, const void *p, uint32_t len)
{
	uint64_t end = smio_now_ms() + (uint64_t)g.wait_ms;
	struct smio_hdr h;
	int rfd, rc;

	rc = smio_send(fd, type, ++g.seq, 0, 0, p, len, -1);
	while (!rc && smio_now_ms() < end) {
		struct pollfd q = { .fd = fd, .events = POLLIN };

		turn(1000);
		if (poll(&q, 1, 0) != 1)
			continue;
		rc = smio_recv(fd, &h, g.rep, sizeof(g.rep), &rfd, WAIT_MS);
		if (rfd >= 0)
			close(rfd);
		return rc ? rc : h.status;
	}
	return rc ? rc : -ETIMEDOUT;
}

/*
 * Every daemon-to-daemon connection made now, outside the inputs: a peer
 * HELLO'd while the harness stands in a pid file would be refused.
 */
static int warm_up(void)
{
	struct smd_core *k = g.d.core;
	uint64_t end = smio_now_ms() + READY_MS;
	bool ok = false;

	fab_host_lock(g.d.host);
	for (uint32_t h = 1; h <= NPEERS; h++)
		smd_peer_connect(&g.d, h);
	fab_host_unlock(g.d.host);
	while (!ok && smio_now_ms() < end) {
		ok = true;
		for (uint32_t h = 1; h <= NPEERS; h++) {
			int hi = topo_host_index(g.d.topo, h);

			if (hi < 0 || !k->peer_out[hi] || !k->peer_out[hi]->hello_ok)
				ok = false;
		}
		turn(1000);
	}
	if (!ok)
		return -1;
	/* Each peer lists the cluster's devices: it calls every other host. */
	for (uint32_t h = 1; h <= NPEERS; h++) {
		struct smio_hello hello = { .role = SMIO_ROLE_CLIENT, .host = h,
					    .pid = (uint32_t)getpid(), .version = SMIO_VERSION };
		int fd = smio_connect(g.dir, h, WAIT_MS), rc;

		if (fd < 0)
			return -1;
		rc = peer_call(fd, SMIO_HELLO, &hello, sizeof(hello));
		if (!rc)
			rc = peer_call(fd, SMIO_DEV_LIST, NULL, 0);
		if (!rc)
			rc = peer_call(fd, SMIO_LEND_POOL, NULL, 0);
		close(fd);
		if (rc) {
			say("fuzz_daemon: host %u: %s\n", h, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* Host 0's config spaces as they start: CFG_WRITE from an input is undone with them. */
static int snapshot(void)
{
	struct smio_func_list fl;
	uint16_t bdfs[MAX_SNAP];
	unsigned n = 0;

	g.capture = true;
	g.undoing = true;
	open_conn(FD_ADMIN);
	request(FD_ADMIN, SMIO_FUNC_LIST, NULL, 0);
	if (g.rep_h.type != SMIO_FUNC_LIST || g.rep_h.status < 0)
		return -1;
	memcpy(&fl, g.rep, sizeof(fl));
	for (uint32_t i = 0; i < fl.n && n < MAX_SNAP; i++) {
		struct smio_func_info fi;

		memcpy(&fi, g.rep + sizeof(fl) + i * sizeof(fi), sizeof(fi));
		bdfs[n++] = fi.bdf;
	}
	for (unsigned i = 0; i < n; i++) {
		struct smio_bdf b = { .bdf = bdfs[i] };

		request(FD_ADMIN, SMIO_CFG_DUMP, &b, sizeof(b));
		if (g.rep_h.type != SMIO_CFG_DUMP || g.rep_h.status < 0 ||
		    g.rep_h.len != SMIO_CFG_SPACE)
			return -1;
		g.snap[g.nsnap].bdf = bdfs[i];
		memcpy(g.snap[g.nsnap++].cfg, g.rep, SMIO_CFG_SPACE);
	}
	forget_all();
	g.capture = false;
	g.undoing = false;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char exe[PATH_MAX], topo[PATH_MAX];

	g.errfd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	g.wait_ms = getenv("FUZZ_DAEMON_WAIT_MS") ? atoi(getenv("FUZZ_DAEMON_WAIT_MS")) : WAIT_MS;
	g.forget_ms = getenv("FUZZ_DAEMON_FORGET_MS") ? atoi(getenv("FUZZ_DAEMON_FORGET_MS"))
						     : FORGET_MS;
	g.trace = getenv("FUZZ_DAEMON_TRACE") != NULL;
	for (unsigned i = 0; i < FD_NCONN; i++)
		g.c[i].fd = -1;
	if (fzc_find_smartiod((*argv)[0], exe, sizeof(exe)))
		die("no smartiod: set SMARTIOD=PATH (the normal build's src/daemon/smartiod)");
	if (fzc_make_dir(g.dir, sizeof(g.dir)))
		die("cannot make the cluster directory");
	snprintf(topo, sizeof(topo), "%s/topology.yaml", g.dir);
	atexit(cluster_down);
	/* The peers first: nothing of host 0 runs yet when they fork. */
	for (uint32_t h = 1; h <= NPEERS; h++) {
		g.peer[h] = fzc_start_peer(g.dir, exe, h);
		if (g.peer[h] < 0)
			die("a peer daemon did not start");
	}
	g.d.dir = g.dir;
	g.d.host_id = HOST;
	if (smd_up(&g.d, topo, &g.up))
		die("host 0 did not come up");
	smd_loop_set_ctx(SMD_CTX_LOOP);
	if (warm_up())
		die("the peers did not answer");
	if (snapshot())
		die("cannot read host 0's config spaces");
	say("fuzz_daemon: cluster in %s: host 0 here, hosts 1-2 pids %d %d (%s)\n",
		g.dir, (int)g.peer[1], (int)g.peer[2], exe);
	g.base_fds = count_fds();
	g.ready = true;
	return 0;
}
