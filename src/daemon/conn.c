// SPDX-License-Identifier: MIT
/*
 * smartiod's connections, on the loop: each has an input assembler (whatever
 * has arrived is kept until a whole message is there; a sender that stops
 * half-way holds only its own slot) and an output queue of frames with their
 * descriptors, flushed when the socket is writable.
 *
 * What a connection may cost is bounded, and only it pays for going beyond:
 *  - a message half-received for SMD_CLIENT_TIMEOUT, a reply half-sent (the
 *    reader stopped reading) for SMD_SEND_TIMEOUT, more than SMD_OUTQ_MAX
 *    queued, or no HELLO within SMD_HELLO_TIMEOUT: the connection is closed;
 *  - while its output queue holds more than SMD_OUTQ_PAUSE, or a request of
 *    a client is being served (ordering), it is not read;
 *  - slots are bounded per role; connections still to say HELLO are evicted
 *    oldest first when a new one arrives and their pool is full, so a flood of
 *    half-open connections cannot lock out peers or well-behaved clients.
 *
 * A connection is forgotten by the services (smd_conn_closed_hooks) once it
 * is closed and none of its requests is still being served, and freed once
 * nothing refers to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "util/log.h"
#include "util/smio_time.h"

#define HDR sizeof(struct smio_hdr)
_Static_assert(sizeof(((struct smd_conn *)0)->hdr) == sizeof(struct smio_hdr), "header room");

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *arg);
static int on_timer(sd_event_source *s, uint64_t usec, void *arg);
static void flush(struct smd_conn *c);
static void arm_timer(struct smd_conn *c);

/* ---------- lifetime ---------- */

struct smd_conn *smd_conn_new(struct smd *d, int fd, bool outgoing, uint32_t role, uint32_t host)
{
	struct smd_core *k = d->core;
	struct smd_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (++k->next_cid == 0)
		k->next_cid = 1;
	*c = (struct smd_conn){ .cid = k->next_cid, .role = role, .host = host,
				.outgoing = outgoing, .d = d, .fd = fd, .in_fd = -1,
				.refs = 1, .since_ns = smio_now_ns() };
	c->out_tail = &c->out;
	if (sd_event_add_io(k->ev, &c->io, fd, EPOLLIN, on_io, c) < 0 ||
	    sd_event_add_time(k->ev, &c->timer, CLOCK_MONOTONIC, UINT64_MAX, 1000, on_timer,
			      c) < 0 ||
	    sd_event_source_set_enabled(c->timer, SD_EVENT_OFF) < 0) {
		sd_event_source_disable_unref(c->io);
		sd_event_source_disable_unref(c->timer);
		free(c);
		return NULL;
	}
	c->next = k->conns;
	if (k->conns)
		k->conns->prev = c;
	k->conns = c;
	return c;
}

void smd_conn_put(struct smd_conn *c)
{
	struct smd_core *k = c->d->core;

	if (--c->refs > 0)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		k->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c);
}

static void role_count(struct smd_conn *c, int delta)
{
	struct smd *d = c->d;
	struct smd_core *k = d->core;
	int hi;

	switch (c->role) {
	case 0:
		k->n_unauth += delta;
		break;
	case SMIO_ROLE_CLIENT:
		k->n_clients += delta;
		break;
	case SMIO_ROLE_ADMIN:
		k->n_admins += delta;
		break;
	case SMIO_ROLE_PEER:
		hi = topo_host_index(d->topo, c->host);
		if (!c->outgoing && hi >= 0)
			k->n_peers_in[hi] += delta;
		break;
	}
}

/* HELLO succeeded: the connection counts in its role's pool from now on. */
void smd_conn_set_role(struct smd_conn *c, uint32_t role, uint32_t host)
{
	role_count(c, -1);
	c->role = role;
	c->host = host;
	role_count(c, +1);
	arm_timer(c);
}

/* Forget it everywhere once none of its requests is being served. */
static void maybe_cleanup(struct smd_conn *c)
{
	if (!c->dead || c->busy || c->cleaned)
		return;
	c->cleaned = true;
	smd_conn_closed_hooks(c->d, c);
	smd_conn_put(c);              /* the connection's own reference */
}

void smd_conn_close(struct smd_conn *c, const char *why)
{
	struct smd *d = c->d;
	struct smd_core *k = d->core;
	int hi;

	if (c->dead)
		return;
	if (why && (c->role == SMIO_ROLE_PEER || c->outgoing))
		smio_info("%s connection %s host %u closed: %s", c->outgoing ? "our" : "peer",
				c->outgoing ? "to" : "from", c->host, why);
	c->dead = true;
	role_count(c, -1);
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	c->io = c->timer = NULL;
	close(c->fd);
	c->fd = -1;
	while (c->out) {
		struct smd_frame *f = c->out;

		c->out = f->next;
		if (f->fd >= 0)
			close(f->fd);
		free(f);
	}
	c->out_tail = &c->out;
	c->out_bytes = 0;
	free(c->in);
	c->in = NULL;
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
	if (c->outgoing) {
		hi = topo_host_index(d->topo, c->host);
		if (hi >= 0 && k->peer_out[hi] == c)
			k->peer_out[hi] = NULL;
		c->refs++;
		smd_calls_fail(c, -EHOSTDOWN);
		c->refs--;
		/* Routes through a peer we lost contact with can no longer be trusted. */
		__atomic_fetch_add(&d->world.epoch, 1, __ATOMIC_ACQ_REL);
	}
	maybe_cleanup(c);
}

void smd_conns_close_all(struct smd *d)
{
	struct smd_conn *c = d->core->conns;

	/* Last words first: a reply that fits the socket buffer still goes out. */
	for (struct smd_conn *x = c; x; x = x->next)
		if (!x->dead)
			flush(x);
	while (c) {
		struct smd_conn *next;

		c->refs++;                /* stays while we walk past it */
		smd_conn_close(c, NULL);
		next = c->next;
		smd_conn_put(c);
		c = next;
	}
}

struct smd_conn *smd_conn_find(struct smd *d, uint32_t cid)
{
	for (struct smd_conn *c = d->core->conns; c; c = c->next)
		if (c->cid == cid && !c->dead)
			return c;
	return NULL;
}

void smd_conn_count(struct smd *d, unsigned *clients, unsigned *peers)
{
	unsigned cl = 0, pe = 0;

	for (struct smd_conn *c = d->core->conns; c; c = c->next) {
		if (c->dead)
			continue;
		if (c->role == SMIO_ROLE_PEER)
			pe++;
		else
			cl++;
	}
	*clients = cl;
	*peers = pe;
}

/* ---------- accepting ---------- */

/* The connection that has waited longest without saying HELLO. */
static struct smd_conn *oldest_unauth(struct smd *d)
{
	struct smd_conn *best = NULL;

	for (struct smd_conn *c = d->core->conns; c; c = c->next)
		if (!c->dead && !c->role && !c->outgoing && !c->busy &&
		    (!best || c->since_ns < best->since_ns))
			best = c;
	return best;
}

int smd_conn_accept(struct smd *d, int fd)
{
	struct smd_core *k = d->core;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	struct smd_conn *c;

	if (k->n_unauth >= SMD_MAX_UNAUTH) {
		struct smd_conn *old = oldest_unauth(d);

		if (!old) {
			close(fd);
			return -EMFILE;
		}
		smd_conn_close(old, NULL);   /* fair: the one that waited longest goes */
	}
	/* Who is calling, in the kernel's words: HELLO is checked against it. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0) {
		close(fd);
		return -errno;
	}
	c = smd_conn_new(d, fd, false, 0, d->host_id);
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->pid = (uint32_t)cr.pid;
	c->uid = (uint32_t)cr.uid;
	role_count(c, +1);
	arm_timer(c);
	return 0;
}

/* ---------- deadlines ---------- */

static void arm_timer(struct smd_conn *c)
{
	uint64_t when = UINT64_MAX;

	if (c->dead)
		return;
	if (!c->role && !c->outgoing)
		when = c->since_ns / 1000 + SMD_HELLO_TIMEOUT * 1000ull;
	if (c->in_started_ns && c->in_started_ns / 1000 + SMD_CLIENT_TIMEOUT * 1000ull < when)
		when = c->in_started_ns / 1000 + SMD_CLIENT_TIMEOUT * 1000ull;
	if (c->out_stuck_ns && c->out_stuck_ns / 1000 + SMD_SEND_TIMEOUT * 1000ull < when)
		when = c->out_stuck_ns / 1000 + SMD_SEND_TIMEOUT * 1000ull;
	if (c->connecting && c->retry_ns / 1000 < when)
		when = c->retry_ns / 1000;
	if (when == UINT64_MAX) {
		sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(c->timer, when);
	sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
}

/* The next attempt to connect: soon at first, then less often (1 ms to 50 ms). */
void smd_conn_retry_later(struct smd_conn *c)
{
	c->retry_ms = c->retry_ms ? (c->retry_ms * 2 > 50 ? 50 : c->retry_ms * 2) : 1;
	c->retry_ns = smio_now_ns() + c->retry_ms * 1000000ull;
	arm_timer(c);
}

/* Connecting to a peer whose backlog was full: try again, while calls wait. */
static void redial(struct smd_conn *c)
{
	int rc;

	if (!smd_calls_live(c)) {
		smd_conn_close(c, "could not connect before the calls' deadlines");
		return;
	}
	rc = smd_conn_dial(c);
	if (rc == -EAGAIN) {
		smd_conn_retry_later(c);
		return;
	}
	if (rc) {
		smd_conn_close(c, "connect failed");
		return;
	}
	c->connecting = false;
	sd_event_source_set_enabled(c->io, SD_EVENT_ON);
	flush(c);                     /* HELLO and what waited behind it */
}

static int on_timer(sd_event_source *s, uint64_t usec, void *arg)
{
	struct smd_conn *c = arg;
	struct smd *d = c->d;
	uint64_t now = smio_now_ns();
	const char *why = NULL;

	fab_host_lock(d->host);
	c->refs++;
	if (c->connecting && now >= c->retry_ns)
		redial(c);
	if (c->dead)
		;
	else if (!c->role && !c->outgoing && now >= c->since_ns + SMD_HELLO_TIMEOUT * 1000000ull)
		why = "no HELLO in time";
	else if (c->in_started_ns && now >= c->in_started_ns + SMD_CLIENT_TIMEOUT * 1000000ull)
		why = "message not finished in time";
	else if (c->out_stuck_ns && now >= c->out_stuck_ns + SMD_SEND_TIMEOUT * 1000000ull)
		why = "reader stopped reading";
	if (c->dead)
		;
	else if (why)
		smd_conn_close(c, why);
	else
		arm_timer(c);
	smd_conn_put(c);
	fab_host_unlock(d->host);
	return 0;
}

/* ---------- output ---------- */

static bool want_read(const struct smd_conn *c)
{
	if (c->dead || c->failing || c->out_bytes > SMD_OUTQ_PAUSE)
		return false;
	/* A client's requests one at a time; a peer's in parallel, up to a bound. */
	if (c->role == SMIO_ROLE_PEER || c->outgoing)
		return c->busy < SMD_PEER_INFLIGHT;
	return !c->busy;
}

static void update_events(struct smd_conn *c)
{
	uint32_t ev = 0;

	if (c->dead)
		return;
	if (c->connecting) {
		/* Off, not just quiet: an unconnected socket reports a hang-up. */
		sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
		return;
	}
	if (want_read(c))
		ev |= EPOLLIN;
	if (c->out && !c->failing)
		ev |= EPOLLOUT;
	sd_event_source_set_io_events(c->io, ev);
}

struct failx {
	struct smd_defer x;
	struct smd_conn *c;
	char why[64];
};

static void fail_now(struct smd *d, struct smd_defer *x)
{
	struct failx *f = (struct failx *)x;

	smd_conn_close(f->c, f->why);
	smd_conn_put(f->c);
	free(f);
}

/*
 * A send failed: close c on the loop's next turn, not inside the send. A
 * sender may be walking the connections, or be in another connection's
 * clean-up: closing here would run c's hooks and free c under its feet.
 */
static void conn_fail(struct smd_conn *c, const char *why)
{
	struct failx *f;

	if (c->failing || c->dead)
		return;
	c->failing = true;
	f = calloc(1, sizeof(*f));
	if (!f) {
		smd_conn_close(c, why);   /* no memory to wait: now, as before */
		return;
	}
	f->x.fn = fail_now;
	f->c = c;
	snprintf(f->why, sizeof(f->why), "%s", why);
	c->refs++;
	smd_defer(c->d, &f->x);
}

/* Send what the socket takes now. */
static void flush(struct smd_conn *c)
{
	bool progress = false;

	if (c->connecting || c->failing)
		return;

	while (c->out) {
		struct smd_frame *f = c->out;
		union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
		struct iovec iov = { f->buf + f->off, f->len - f->off };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (f->off == 0 && f->fd >= 0) {
			struct cmsghdr *cm;

			memset(&ctl, 0, sizeof(ctl));
			mh.msg_control = ctl.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int));
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &f->fd, sizeof(int));
		}
		n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			conn_fail(c, errno == EPIPE ? "reader went away" : strerror(errno));
			return;
		}
		progress = true;
		if (f->off == 0 && f->fd >= 0) {
			close(f->fd);     /* it travelled with the first byte */
			f->fd = -1;
		}
		f->off += (uint32_t)n;
		c->out_bytes -= (uint64_t)n;
		if (f->off < f->len)
			break;
		c->out = f->next;
		if (!c->out)
			c->out_tail = &c->out;
		free(f);
	}
	/* The deadline runs while the reader takes nothing at all. */
	if (!c->out)
		c->out_stuck_ns = 0;
	else if (progress || !c->out_stuck_ns)
		c->out_stuck_ns = smio_now_ns();
	arm_timer(c);
	update_events(c);
}

int smd_conn_queue(struct smd_conn *c, uint16_t type, uint32_t seq, int32_t status,
		   uint32_t flags, const void *payload, uint32_t len, int fd)
{
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION, .type = type,
			      .len = len, .seq = seq, .status = status,
			      .flags = flags | (fd >= 0 ? SMIO_F_FD : 0) };
	struct smd_frame *f;

	if (c->dead || c->failing)
		return -ENOTCONN;
	/* Never put a frame on the wire that the receiver would have to drop. */
	if (smio_hdr_check(&h) || (len && !payload))
		return -EINVAL;
	if (c->out_bytes + HDR + len > SMD_OUTQ_MAX) {
		conn_fail(c, "output queue overflow");
		return -ENOBUFS;
	}
	f = malloc(sizeof(*f) + HDR + len);
	if (!f)
		return -ENOMEM;
	f->next = NULL;
	f->len = (uint32_t)(HDR + len);
	f->off = 0;
	f->fd = -1;
	if (fd >= 0) {
		/* The service keeps its descriptor; the frame sends a copy. */
		f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (f->fd < 0) {
			int e = -errno;

			free(f);
			return e;
		}
	}
	memcpy(f->buf, &h, HDR);
	if (len)
		memcpy(f->buf + HDR, payload, len);
	*c->out_tail = f;
	c->out_tail = &f->next;
	c->out_bytes += f->len;
	if (c->out == f)
		flush(c);                 /* most replies go out at once */
	else
		update_events(c);
	return 0;
}

/* ---------- input ---------- */

/*
 * Collect the descriptors that arrived with these bytes. A message carries at
 * most one: more is a protocol violation (false), and all of them are closed.
 */
static bool take_fds(struct smd_conn *c, struct msghdr *mh)
{
	bool ok = !(mh->msg_flags & MSG_CTRUNC);

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t n;
		int *fds;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		fds = (int *)CMSG_DATA(cm);
		for (size_t i = 0; i < n; i++) {
			if (c->in_fd < 0 && ok) {
				c->in_fd = fds[i];
				continue;
			}
			close(fds[i]);
			ok = false;
		}
	}
	return ok;
}

/*
 * Read once without blocking. Returns 1 when a whole message is in c->in,
 * 2 when bytes came but the message is not whole yet, 0 when nothing more is
 * there now, -1 when the connection was closed. The header is assembled in
 * the connection itself; the message's buffer, of exactly its size, is
 * allocated once the header is known and good, so a connection that sent a
 * few bytes and then nothing costs no buffer.
 */
static int read_some(struct smd_conn *c)
{
	union { char buf[CMSG_SPACE(4 * sizeof(int))]; struct cmsghdr align; } ctl;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	const struct smio_hdr *h = (const void *)c->hdr;
	ssize_t n;

	if (!c->in)
		iov = (struct iovec){ c->hdr + c->have, HDR - c->have };
	else
		iov = (struct iovec){ c->in + c->have, HDR + h->len - c->have };
	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		smd_conn_close(c, n == 0 ? "end of stream" : strerror(errno));
		return -1;
	}
	if (!take_fds(c, &mh)) {
		c->d->rejected++;
		smd_conn_close(c, "more than one descriptor");
		return -1;
	}
	if (!c->have)
		c->in_started_ns = smio_now_ns();
	c->have += (uint32_t)n;
	if (c->have < HDR)
		return 2;
	if (!c->in) {
		if (smio_hdr_check(h)) {
			c->d->rejected++;         /* framing is lost */
			smd_conn_close(c, "bad header");
			return -1;
		}
		c->in = malloc(HDR + h->len);
		if (!c->in) {
			smd_conn_close(c, "out of memory");
			return -1;
		}
		memcpy(c->in, c->hdr, HDR);
	}
	return c->have == HDR + h->len ? 1 : 2;
}

/* Bounded: SMD_MSGS_PER_WAKE messages, then the other connections' turn (the
 * socket stays readable: level-triggered, the loop comes back to it). */
static void read_messages(struct smd_conn *c)
{
	unsigned msgs = 0;

	for (int i = 0; i < 4 * SMD_MSGS_PER_WAKE && msgs < SMD_MSGS_PER_WAKE && want_read(c);
	     i++) {
		int rc = read_some(c);
		uint8_t *msg;
		int fd;

		if (rc < 0)
			return;
		if (rc == 0)
			break;
		if (rc == 2)
			continue;
		msg = c->in;
		fd = c->in_fd;
		c->in = NULL;
		c->in_fd = -1;
		c->have = 0;
		c->in_started_ns = 0;
		msgs++;
		smd_dispatch(c, msg, fd);   /* takes msg and fd */
		if (c->dead)
			return;
	}
	arm_timer(c);
	update_events(c);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct smd_conn *c = arg;
	struct smd *d = c->d;

	fab_host_lock(d->host);
	c->refs++;
	if (revents & EPOLLOUT)
		flush(c);
	if (!c->dead && (revents & EPOLLIN))
		read_messages(c);
	/* Hung up while we were not reading: nobody is left to answer. */
	if (!c->dead && (revents & (EPOLLHUP | EPOLLERR)) && !(revents & EPOLLIN))
		smd_conn_close(c, "hung up");
	smd_conn_put(c);
	fab_host_unlock(d->host);
	return 0;
}

/* A request of c ended: read on, and forget c if it closed meanwhile. */
void smd_conn_resume(struct smd_conn *c)
{
	if (c->dead) {
		maybe_cleanup(c);
		return;
	}
	c->refs++;
	/* Messages that arrived while it was paused are read now. */
	if (want_read(c))
		read_messages(c);
	else
		update_events(c);
	smd_conn_put(c);
}

/* ---------- from other threads ---------- */

struct sendx {
	struct smd_defer x;
	uint32_t cid;
	uint16_t type;
	uint32_t seq, flags, len;
	int32_t status;
	int fd;
	bool drop;
	uint8_t payload[];
};

static void sendx_fn(struct smd *d, struct smd_defer *x)
{
	struct sendx *m = (struct sendx *)x;
	struct smd_conn *c = smd_conn_find(d, m->cid);

	if (c && m->drop)
		smd_conn_close(c, "dropped by the daemon");
	else if (c)
		smd_conn_queue(c, m->type, m->seq, m->status, m->flags, m->len ? m->payload : NULL,
			       m->len, m->fd);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

int smd_conn_send(struct smd *d, uint32_t cid, uint16_t type, uint32_t seq, int32_t status,
		  uint32_t flags, const void *payload, uint32_t len, int fd)
{
	struct sendx *m;

	if (smd_ctx() == SMD_CTX_LOOP) {
		struct smd_conn *c = smd_conn_find(d, cid);

		return c ? smd_conn_queue(c, type, seq, status, flags, payload, len, fd)
			 : -ENOTCONN;
	}
	if (!smd_conn_find(d, cid))     /* the caller holds the host lock */
		return -ENOTCONN;
	m = malloc(sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	*m = (struct sendx){ .x.fn = sendx_fn, .cid = cid, .type = type, .seq = seq,
			     .flags = flags, .len = len, .status = status, .fd = -1 };
	if (len)
		memcpy(m->payload, payload, len);
	if (fd >= 0 && (m->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		free(m);
		return -errno;
	}
	smd_defer(d, &m->x);
	return 0;
}

void smd_conn_drop(struct smd *d, uint32_t cid)
{
	struct sendx *m;
	struct smd_conn *c;

	if (smd_ctx() == SMD_CTX_LOOP) {
		c = smd_conn_find(d, cid);
		if (c)
			smd_conn_close(c, "dropped by the daemon");
		return;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->x.fn = sendx_fn;
	m->cid = cid;
	m->fd = -1;
	m->drop = true;
	smd_defer(d, &m->x);
}
