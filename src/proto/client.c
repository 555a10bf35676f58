// SPDX-License-Identifier: MIT
/*
 * smartio wire protocol: framing over a connected SOCK_STREAM Unix socket,
 * the request/reply helper and the cluster directory conventions.
 *
 * Framing: a message is sent with one sendmsg() where possible; the receiver
 * reads exactly 24 header bytes, then exactly hdr.len payload bytes, never
 * more, so a read never crosses into the next message and an fd attached to
 * a message's first byte always arrives with that message.
 *
 * All waits are bounded by an absolute CLOCK_MONOTONIC deadline so that EINTR,
 * short reads and short writes cannot stretch a timeout.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "smartio/proto.h"
#include "util/smio_time.h"

/*
 * smio_send has no timeout parameter. A peer whose socket buffer stays full
 * this long is not reading at all; give up rather than hang the sender.
 */
#define SEND_TIMEOUT_MS		5000
/* Control buffer room: a hostile peer may attach several fds to one write. */
#define MAX_RX_FDS		8
/* smio_call: stale replies (of earlier, timed-out calls) it will skip. */
#define MAX_STALE_REPLIES	64
#define CONNECT_WAIT_MIN_MS	1
#define CONNECT_WAIT_MAX_MS	50

/* Wait for events on sock; 0 when ready, -ETIMEDOUT, or -errno. */
static int wait_fd(int sock, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = sock, .events = events };
	int ret;

	for (;;) {
		ret = poll(&pfd, 1, smio_ms_left(deadline));
		if (ret > 0)
			return 0;	/* readable, or HUP/ERR: the I/O call reports it */
		if (ret == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
		/* EINTR: the deadline is absolute, so retrying cannot stretch it. */
		if (smio_expired(deadline))
			return -ETIMEDOUT;
	}
}

/* ---- sending ---- */

static void put_fd(struct msghdr *mh, char *cbuf, size_t clen, int fd)
{
	struct cmsghdr *c;

	memset(cbuf, 0, clen);
	mh->msg_control = cbuf;
	mh->msg_controllen = CMSG_SPACE(sizeof(int));
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

/* Drop n sent bytes from the front of an iovec array. */
static void iov_advance(struct iovec **iov, size_t *cnt, size_t n)
{
	while (*cnt && n >= (*iov)->iov_len) {
		n -= (*iov)->iov_len;
		(*iov)++;
		(*cnt)--;
	}
	if (*cnt && n) {
		(*iov)->iov_base = (char *)(*iov)->iov_base + n;
		(*iov)->iov_len -= n;
	}
}

int smio_send(int sock, uint16_t type, uint32_t seq, int32_t status, uint32_t flags,
	      const void *payload, uint32_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct smio_hdr h = {
		.magic = SMIO_MAGIC, .version = SMIO_VERSION, .type = type,
		.len = len, .seq = seq, .status = status, .flags = flags,
	};
	struct iovec vec[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)payload, .iov_len = len },
	};
	struct iovec *iov = vec;
	size_t cnt = len ? 2 : 1;
	size_t left = sizeof(h) + len;
	int64_t deadline = smio_deadline(SEND_TIMEOUT_MS);
	bool fd_pending;
	ssize_t n;
	int ret;

	if (sock < 0 || (len && !payload))
		return -EINVAL;
	if (fd >= 0)
		h.flags |= SMIO_F_FD;
	else if (flags & SMIO_F_FD)
		return -EINVAL;
	/* Never put a frame on the wire that the receiver would have to drop. */
	ret = smio_hdr_check(&h);
	if (ret)
		return -EINVAL;

	fd_pending = fd >= 0;
	while (left) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = cnt };

		/* The fd rides on the first byte; only the first sendmsg carries it. */
		if (fd_pending)
			put_fd(&mh, cbuf.buf, sizeof(cbuf.buf), fd);
		/* Never block inside sendmsg: poll() below enforces the deadline. */
		n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
				ret = wait_fd(sock, POLLOUT, deadline);
				if (ret)
					return ret;
				continue;
			}
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		fd_pending = false;
		left -= (size_t)n;
		iov_advance(&iov, &cnt, (size_t)n);
	}
	return 0;
}

/* ---- receiving ---- */

struct rx {
	int sock;
	int64_t deadline;
	size_t got;		/* bytes of this message consumed so far */
	int fd;			/* first fd received, or -1 */
	bool extra_fd;		/* more than one fd, or a truncated control message */
};

static void close_fds(const struct cmsghdr *c, size_t from, struct rx *rx)
{
	size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	size_t i;
	int fd;

	for (i = from; i < nfds; i++) {
		memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		close(fd);
		rx->extra_fd = true;
	}
}

/* Take every fd out of a control buffer: keep the first, close the rest. */
static void take_fds(struct msghdr *mh, struct rx *rx)
{
	struct cmsghdr *c;

	if (mh->msg_flags & MSG_CTRUNC)
		rx->extra_fd = true;	/* the kernel dropped (and closed) the overflow */
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t from = 0;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		if (rx->fd < 0 && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			memcpy(&rx->fd, CMSG_DATA(c), sizeof(int));
			from = 1;
		}
		close_fds(c, from, rx);
	}
}

/*
 * Read exactly n bytes (into buf, or discarded when buf is NULL and scratch
 * is given). Every read goes through recvmsg so that an fd is never lost.
 * -ETIMEDOUT if nothing of the message was read yet, -EPROTO if the deadline
 * struck mid-message (framing is lost), -ECONNRESET on EOF.
 */
static int rx_read(struct rx *rx, void *buf, size_t n)
{
	union {
		char buf[CMSG_SPACE(MAX_RX_FDS * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	size_t done = 0;
	ssize_t r;
	int ret;

	while (done < n) {
		struct iovec iov = { .iov_base = (char *)buf + done, .iov_len = n - done };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf.buf, .msg_controllen = sizeof(cbuf.buf),
		};

		ret = wait_fd(rx->sock, POLLIN, rx->deadline);
		if (ret == -ETIMEDOUT && rx->got)
			return -EPROTO;
		if (ret)
			return ret;
		r = recvmsg(rx->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;	/* poll again; the deadline bounds this */
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		take_fds(&mh, rx);
		if (r == 0)
			return -ECONNRESET;
		done += (size_t)r;
		rx->got += (size_t)r;
	}
	return 0;
}

/* Consume and discard n payload bytes so the stream stays in sync. */
static int rx_drain(struct rx *rx, void *buf, uint32_t cap, size_t n)
{
	char scratch[512];
	void *dst = cap ? buf : scratch;
	size_t chunk = cap ? cap : sizeof(scratch);
	int ret;

	while (n) {
		size_t k = n < chunk ? n : chunk;

		ret = rx_read(rx, dst, k);
		if (ret)
			return ret;
		n -= k;
	}
	return 0;
}

/* Validate what arrived once the whole message has been consumed. */
static int rx_validate(const struct smio_hdr *h, const struct rx *rx, const void *buf)
{
	bool reply = h->flags & SMIO_F_REPLY;

	if (rx->extra_fd)
		return -EPROTO;
	if (!!(h->flags & SMIO_F_FD) != (rx->fd >= 0))
		return -EPROTO;
	/* An error reply may carry no payload: the status is the whole answer. */
	if (reply && h->status && !h->len)
		return 0;
	return smio_payload_check(h->type, reply, buf, h->len);
}

int smio_recv(int sock, struct smio_hdr *h, void *buf, uint32_t cap, int *fd, int timeout_ms)
{
	struct rx rx = { .sock = sock, .deadline = smio_deadline(timeout_ms), .fd = -1 };
	int ret;

	if (fd)
		*fd = -1;
	if (sock < 0 || !h || (cap && !buf))
		return -EINVAL;

	ret = rx_read(&rx, h, sizeof(*h));
	if (!ret)
		ret = smio_hdr_check(h);	/* -EPROTO: framing is lost */
	if (!ret && h->len > cap) {
		ret = rx_drain(&rx, buf, cap, h->len);
		if (!ret)
			ret = -EMSGSIZE;
	} else if (!ret) {
		ret = rx_read(&rx, buf, h->len);
	}
	if (!ret)
		ret = rx_validate(h, &rx, buf);

	if (ret || !fd) {
		if (rx.fd >= 0)
			close(rx.fd);
	} else {
		*fd = rx.fd;
	}
	return ret;
}

/* ---- connecting ---- */

static int try_connect(const struct sockaddr_un *sa)
{
	int s, ret;

	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	do {
		ret = connect(s, (const struct sockaddr *)sa, sizeof(*sa));
	} while (ret < 0 && errno == EINTR);
	/*
	 * EINTR on a Unix socket connect leaves it in progress in theory; on
	 * Linux AF_UNIX connects complete synchronously, and a retry of a
	 * connected socket reports EISCONN, which is success here.
	 */
	if (ret < 0 && errno != EISCONN) {
		ret = -errno;
		close(s);
		return ret;
	}
	return s;
}

/* Errors of a daemon that is still starting: no socket yet, or no listen(). */
static bool connect_retryable(int err)
{
	return err == -ENOENT || err == -ECONNREFUSED || err == -EAGAIN;
}

int smio_connect(const char *cluster_dir, uint32_t host, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t deadline;
	int wait = CONNECT_WAIT_MIN_MS;
	int ret, left;

	if (!cluster_dir)
		return -EINVAL;
	ret = smio_sock_path(cluster_dir, host, sa.sun_path, sizeof(sa.sun_path));
	if (ret)
		return ret;

	/* timeout_ms <= 0: a single attempt. */
	deadline = smio_deadline(timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		ret = try_connect(&sa);
		if (ret >= 0 || !connect_retryable(ret))
			return ret;
		left = smio_ms_left(deadline);
		if (left == 0)
			return ret;
		/* poll() with no fds is an interruptible, bounded wait. */
		poll(NULL, 0, wait < left ? wait : left);
		wait = wait * 2 > CONNECT_WAIT_MAX_MS ? CONNECT_WAIT_MAX_MS : wait * 2;
	}
}

/* ---- request/reply ---- */

static _Atomic uint32_t next_seq;

/*
 * Receive the reply to (type, seq). Replies to other sequence numbers are
 * late answers to calls that timed out; they are consumed and dropped. A
 * request on a client connection is a protocol error.
 */
static int call_wait(int sock, uint16_t type, uint32_t seq, void *rbuf, uint32_t rcap,
		     uint32_t *rlen, int *fd, int64_t deadline)
{
	struct smio_hdr h = { 0 };
	int stale, ret, rfd;

	for (stale = 0; stale <= MAX_STALE_REPLIES; stale++) {
		int left = smio_ms_left(deadline);

		ret = smio_recv(sock, &h, rbuf, rcap, &rfd, left);
		/*
		 * Only these leave a valid header with the message consumed; the
		 * arguments were checked by smio_call, so -EINVAL is the payload.
		 */
		if (ret && ret != -EINVAL && ret != -EMSGSIZE)
			return ret;
		if (!(h.flags & SMIO_F_REPLY)) {
			if (rfd >= 0)
				close(rfd);
			return -EPROTO;
		}
		if (h.seq != seq) {
			if (rfd >= 0)
				close(rfd);
			continue;
		}
		if (h.type != type)
			ret = -EPROTO;
		else if (ret == -EINVAL)
			ret = -EPROTO;	/* keep -EINVAL for "the daemon said EINVAL" */
		else if (!ret && h.status)
			ret = h.status;
		if (ret) {
			if (rfd >= 0)
				close(rfd);
			return ret;
		}
		if (rlen)
			*rlen = h.len;
		if (fd)
			*fd = rfd;
		else if (rfd >= 0)
			close(rfd);
		return 0;
	}
	return -EPROTO;
}

int smio_call(int sock, uint16_t type, const void *req, uint32_t reqlen,
	      void *rbuf, uint32_t rcap, uint32_t *rlen, int *fd, int timeout_ms)
{
	uint32_t seq = atomic_fetch_add(&next_seq, 1) + 1;
	int ret;

	if (fd)
		*fd = -1;
	if (rlen)
		*rlen = 0;
	if (sock < 0 || (rcap && !rbuf))
		return -EINVAL;
	ret = smio_send(sock, type, seq, 0, 0, req, reqlen, -1);
	if (ret)
		return ret;
	return call_wait(sock, type, seq, rbuf, rcap, rlen, fd, smio_deadline(timeout_ms));
}

/* ---- cluster directory conventions ---- */

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* snprintf's result as 0, or -ENAMETOOLONG when it did not fit. */
static int fit(int n, size_t len)
{
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int smio_cluster_dir(char *buf, size_t len)
{
	const char *env = getenv("SMARTIO_CLUSTER");

	if (!buf || !len)
		return -ENAMETOOLONG;
	if (env && *env)
		return fit(snprintf(buf, len, "%s", env), len);
	env = getenv("XDG_RUNTIME_DIR");
	if (env && *env && is_dir(env))
		return fit(snprintf(buf, len, "%s/smartio", env), len);
	return fit(snprintf(buf, len, "/tmp/smartio-%lu", (unsigned long)getuid()), len);
}

int smio_sock_path(const char *cluster_dir, uint32_t host, char *buf, size_t len)
{
	struct sockaddr_un sa;
	int n;

	if (!cluster_dir || !*cluster_dir || !buf || !len)
		return -EINVAL;
	n = snprintf(buf, len, "%s/host-%u.sock", cluster_dir, host);
	if (n < 0)
		return -EINVAL;
	/* Both the caller's buffer and a sockaddr_un must hold it, NUL included. */
	if ((size_t)n >= len || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	return 0;
}

int smio_env_host(uint32_t *host)
{
	const char *s = getenv("SMARTIO_HOST");
	uint32_t v = 0;
	size_t i;

	if (!s)
		return -ENOENT;
	if (!*s)
		return -EINVAL;
	/* Digits only: no sign, no blanks, no hex; stop as soon as it is too big. */
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint32_t)(s[i] - '0');
		if (v > 65535)
			return -EINVAL;
	}
	if (host)
		*host = v;
	return 0;
}
