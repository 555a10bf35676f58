// SPDX-License-Identifier: MIT
/*
 * smartiod's calls to other daemons (the model of the NTB's control
 * channel). One connection of ours per peer host, opened on first use and
 * authenticated both ways (the kernel names the process behind the socket;
 * it must be the daemon the cluster directory lists for that host, and we
 * say HELLO as ours). Every call we make is an entry {sequence, deadline,
 * continuation} on that connection: the loop sends and returns; the peer's
 * reply, the deadline or the loss of the connection runs the continuation
 * exactly once. Nothing here waits, except smd_peer_request on a worker,
 * which sleeps without the host lock until its continuation wakes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "util/log.h"

uint32_t smd_next_seq(struct smd *d)
{
	return __atomic_add_fetch(&d->core->next_seq, 1, __ATOMIC_RELAXED);
}

/* ---------- our connections to peers ---------- */

static void hello_done(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
		       const void *payload, int fd)
{
	struct smd_conn *c = arg;
	struct smio_hello_reply hr;
	const char *why = NULL;

	if (fd >= 0)
		close(fd);
	if (rc == -ESHUTDOWN || rc == -EHOSTDOWN)
		return;                      /* the connection is going anyway */
	if (rc)
		why = "no answer to HELLO";
	else if (h->status < 0)
		why = "HELLO refused";
	else if (h->len != sizeof(hr))
		why = "malformed HELLO answer";
	if (!why) {
		memcpy(&hr, payload, sizeof(hr));
		if (hr.host != c->host)
			why = "answered for another host";
	}
	if (why) {
		smd_conn_close(c, why);
		return;
	}
	c->hello_ok = true;
}

static int call_on(struct smd_conn *c, uint16_t type, const void *req, uint32_t len,
		   int timeout_ms, smd_call_fn fn, void *arg);

/*
 * Connect c's socket to its host. 0: connected and it is that host's daemon;
 * -EAGAIN: its backlog is full (a storm of connections), try again later;
 * -EHOSTDOWN: nobody listens, or not the daemon the cluster lists.
 */
int smd_conn_dial(struct smd_conn *c)
{
	struct smd *d = c->d;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cr;
	socklen_t crlen = sizeof(cr);

	if (smio_sock_path(d->dir, c->host, sa.sun_path, sizeof(sa.sun_path)) < 0)
		return -EHOSTDOWN;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return errno == EAGAIN ? -EAGAIN : -EHOSTDOWN;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0)
		return -EHOSTDOWN;
	/* Whoever listens there must be that host's daemon. */
	if (smd_auth_server(d, (uint32_t)cr.pid, (uint32_t)cr.uid, c->host)) {
		smio_warn("the process on host %u's socket (pid %d) is not its daemon: not "
			  "talking to it", c->host, (int)cr.pid);
		return -EHOSTDOWN;
	}
	c->pid = (uint32_t)cr.pid;
	c->uid = (uint32_t)cr.uid;
	return 0;
}

/* Our connection to host, opened now if there is none. */
static struct smd_conn *peer_out(struct smd *d, uint32_t host, int *err)
{
	struct smd_core *k = d->core;
	struct smio_hello hello = { .role = SMIO_ROLE_PEER, .host = d->host_id,
				    .pid = (uint32_t)getpid(), .version = SMIO_VERSION };
	struct smd_conn *c;
	int hi = topo_host_index(d->topo, host), fd, rc;

	if (hi < 0 || host == d->host_id) {
		*err = -EHOSTUNREACH;
		return NULL;
	}
	if (k->peer_out[hi])
		return k->peer_out[hi];
	if (k->stopping) {
		*err = -ESHUTDOWN;
		return NULL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	c = smd_conn_new(d, fd, true, SMIO_ROLE_PEER, host);
	if (!c) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	/*
	 * A Unix socket connects at once, or not at all when the peer's backlog is
	 * full (EAGAIN): then the connection keeps retrying, with our requests
	 * queued, until they are sent or their deadlines pass.
	 */
	rc = smd_conn_dial(c);
	if (rc == -EAGAIN) {
		c->connecting = true;
		sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
		smd_conn_retry_later(c);
	} else if (rc) {
		c->refs++;
		smd_conn_close(c, NULL);
		smd_conn_put(c);
		*err = rc;
		return NULL;
	}
	k->peer_out[hi] = c;
	/* Requests may follow HELLO at once: the peer reads them in order. */
	c->refs++;
	rc = call_on(c, SMIO_HELLO, &hello, sizeof(hello), SMD_PEER_TIMEOUT, hello_done, c);
	if (rc)
		smd_conn_close(c, "cannot send HELLO");
	smd_conn_put(c);
	if (rc) {
		*err = -EHOSTDOWN;
		return NULL;
	}
	return c;
}

/* ---------- calls ---------- */

static void pending_unlink(struct smd_pending *p)
{
	for (struct smd_pending **pp = &p->c->calls; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	sd_event_source_disable_unref(p->timer);
	p->timer = NULL;
}

/*
 * The answer to a call that had already timed out. The peer did what we
 * asked; where that left state there on our behalf, undo it (the request is
 * sent on, its answer dropped): a reference it counted, a borrow, a device
 * mapping, a lend. What the connection holds is dropped with it anyway.
 */
static void late_reply(struct smd_conn *c, uint16_t type, const struct smio_hdr *h,
		       const void *payload)
{
	struct smd *d = c->d;
	union {
		struct smio_peer_seg ps;
		struct smio_peer_dev_ref dr;
		struct smio_peer_dev_map dm;
		struct smio_lend_grant lg;
	} a;
	union {
		struct smio_peer_seg_ref sr;
		struct smio_peer_dev_ref dr;
		struct smio_peer_dev_map dm;
		struct smio_peer_lend_ref lr;
	} u;
	uint16_t undo = 0;
	uint32_t len = 0;

	if (h->status < 0 || h->type != type || h->len > sizeof(a))
		return;
	memcpy(&a, payload, h->len);
	memset(&u, 0, sizeof(u));
	switch (type) {
	case SMIO_PEER_SEG_LOOKUP:
		u.sr = (struct smio_peer_seg_ref){ .segid = a.ps.segid, .ref = a.ps.ref };
		undo = SMIO_PEER_SEG_RELEASE;
		len = sizeof(u.sr);
		break;
	case SMIO_PEER_DEV_BORROW:
		u.dr = a.dr;
		undo = SMIO_PEER_DEV_RETURN;
		len = sizeof(u.dr);
		break;
	case SMIO_PEER_DEV_MAP:
		u.dm = a.dm;
		undo = SMIO_PEER_DEV_UNMAP;
		len = sizeof(u.dm);
		break;
	case SMIO_PEER_LEND_SETUP:
		u.lr = (struct smio_peer_lend_ref){ .bdf = a.lg.bdf };
		undo = SMIO_PEER_LEND_RELEASE;
		len = sizeof(u.lr);
		break;
	default:
		return;               /* nothing was left behind (a lookup, a step, a memfd) */
	}
	smio_info("host %u answered a %s after its deadline: undoing it (%s)", c->host,
		  smio_type_name(type), smio_type_name(undo));
	smd_conn_queue(c, undo, smd_next_seq(d), 0, 0, &u, len, -1);
}

static void pending_end(struct smd *d, struct smd_pending *p, int rc, const struct smio_hdr *h,
			const void *payload, int fd)
{
	struct smd_conn *c = p->c;

	pending_unlink(p);
	c->refs++;
	if (p->fn)
		p->fn(d, p->arg, rc, h, payload, fd);
	else {
		if (fd >= 0)
			close(fd);
		if (p->late && h)
			late_reply(c, p->type, h, payload);
	}
	free(p);
	smd_conn_put(c);
}

static int on_call_timeout(sd_event_source *s, uint64_t usec, void *arg)
{
	struct smd_pending *p = arg;
	struct smd_conn *c = p->c;
	struct smd *d = c->d;
	smd_call_fn fn = p->fn;
	void *a = p->arg;

	fab_host_lock(d->host);
	if (p->late || !fn) {
		pending_end(d, p, -ETIMEDOUT, NULL, NULL, -1);    /* nothing came: forget it */
	} else {
		/*
		 * The caller hears of the timeout now; the entry stays a while, so
		 * that an answer still coming can be undone (late_reply).
		 */
		p->fn = NULL;
		p->late = true;
		sd_event_source_set_time_relative(p->timer, SMD_LATE_KEEP * 1000ull);
		sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT);
		c->refs++;
		fn(d, a, -ETIMEDOUT, NULL, NULL, -1);
		smd_conn_put(c);
	}
	fab_host_unlock(d->host);
	return 0;
}

static int call_on(struct smd_conn *c, uint16_t type, const void *req, uint32_t len,
		   int timeout_ms, smd_call_fn fn, void *arg)
{
	struct smd *d = c->d;
	struct smd_pending *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return -ENOMEM;
	*p = (struct smd_pending){ .c = c, .seq = smd_next_seq(d), .type = type, .fn = fn,
				   .arg = arg };
	rc = sd_event_add_time_relative(d->core->ev, &p->timer, CLOCK_MONOTONIC,
					(uint64_t)timeout_ms * 1000, 1000, on_call_timeout, p);
	if (rc < 0) {
		free(p);
		return rc;
	}
	/*
	 * Queued before it is listed: if sending fails, or closes the connection
	 * on the spot, the call was never made and fn is not called (a caller
	 * never sees its continuation run before smd_call_start returns).
	 */
	c->refs++;
	rc = smd_conn_queue(c, type, p->seq, 0, 0, req, len, -1);
	if (!rc && c->dead)
		rc = -EHOSTDOWN;
	if (rc) {
		sd_event_source_disable_unref(p->timer);
		free(p);
	} else {
		p->next = c->calls;
		c->calls = p;
	}
	smd_conn_put(c);
	return rc;
}

int smd_call_start(struct smd *d, uint32_t host, uint16_t type, const void *req, uint32_t len,
		   int timeout_ms, smd_call_fn fn, void *arg)
{
	int err = 0;
	struct smd_conn *c;

	if (smd_ctx() != SMD_CTX_LOOP)
		return -EWOULDBLOCK;
	c = peer_out(d, host, &err);
	if (!c)
		return err;
	return call_on(c, type, req, len, timeout_ms, fn, arg);
}

bool smd_call_reply(struct smd_conn *c, const struct smio_hdr *h, const void *payload, int fd)
{
	for (struct smd_pending *p = c->calls; p; p = p->next)
		if (p->seq == h->seq) {
			pending_end(c->d, p, 0, h, payload, fd);
			return true;
		}
	return false;
}

/* Does c carry a call somebody still waits for (not only late ones)? */
bool smd_calls_live(const struct smd_conn *c)
{
	for (const struct smd_pending *p = c->calls; p; p = p->next)
		if (!p->late)
			return true;
	return false;
}

void smd_calls_fail(struct smd_conn *c, int rc)
{
	while (c->calls)
		pending_end(c->d, c->calls, rc, NULL, NULL, -1);
}

/* ---------- waiting on a worker ---------- */

struct wpeer {
	struct smd_defer x;
	uint32_t host;
	uint16_t type;
	const void *req;          /* the worker's, valid until done */
	uint32_t len;
	pthread_mutex_t *mu;      /* shared by a fan-out */
	pthread_cond_t *cv;
	bool done;
	int rc;
	struct smio_hdr h;
	uint8_t *payload;
	int fd;
};

static void wpeer_complete(struct wpeer *w, int rc, const struct smio_hdr *h,
			   const void *payload, int fd)
{
	uint8_t *copy = NULL;

	if (!rc && h->len) {
		copy = malloc(h->len);
		if (copy)
			memcpy(copy, payload, h->len);
		else
			rc = -ENOMEM;
	}
	if (rc && fd >= 0) {
		close(fd);
		fd = -1;
	}
	pthread_mutex_lock(w->mu);
	w->rc = rc;
	if (!rc)
		w->h = *h;
	w->payload = copy;
	w->fd = fd;
	w->done = true;
	pthread_cond_broadcast(w->cv);
	pthread_mutex_unlock(w->mu);
}

static void wpeer_reply(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
			const void *payload, int fd)
{
	wpeer_complete(arg, rc, h, payload, fd);
}

static void wpeer_start(struct smd *d, struct smd_defer *x)
{
	struct wpeer *w = (struct wpeer *)x;
	int rc = smd_call_start(d, w->host, w->type, w->req, w->len, SMD_PEER_TIMEOUT,
				wpeer_reply, w);

	if (rc)
		wpeer_complete(w, rc, NULL, NULL, -1);
}

/* Turn the reply into smd_peer_request's answer (host lock held again). */
static int wpeer_result(struct wpeer *w, void *rbuf, uint32_t cap, uint32_t *rlen, int *fd)
{
	int rc = w->rc;

	if (fd)
		*fd = -1;
	if (rc == -ETIMEDOUT || rc == -ESHUTDOWN || rc == -EHOSTUNREACH)
		;
	else if (rc)
		rc = -EHOSTDOWN;
	else if (w->h.type != w->type)
		rc = -EPROTO;
	else if (w->h.status < 0)
		rc = w->h.status;
	else if (w->h.len > cap)
		rc = -EPROTO;
	if (!rc) {
		if (w->h.len)
			memcpy(rbuf, w->payload, w->h.len);
		if (rlen)
			*rlen = w->h.len;
		if (fd) {
			*fd = w->fd;
			w->fd = -1;
		}
	}
	if (w->fd >= 0)
		close(w->fd);
	free(w->payload);
	return rc;
}

int smd_peer_request(struct smd *d, uint32_t host, uint16_t type, const void *req,
		     uint32_t len, void *rbuf, uint32_t cap, uint32_t *rlen, int *fd)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct wpeer w = { .x.fn = wpeer_start, .host = host, .type = type, .req = req,
			   .len = len, .mu = &mu, .cv = &cv, .fd = -1 };
	unsigned depth;
	uint8_t none;

	if (fd)
		*fd = -1;
	if (host == d->host_id)
		return -EINVAL;       /* a daemon does not talk to itself */
	if (smd_ctx() != SMD_CTX_WORKER) {
		/* The loop never waits, device threads never talk to peers. */
		smio_error("bug: a %s would wait for host %u on the %s", smio_type_name(type),
				host,
				smd_ctx() == SMD_CTX_LOOP ? "event loop" : "wrong thread");
		return -EWOULDBLOCK;
	}
	if (!rbuf) {
		rbuf = &none;
		cap = 0;
	}
	smd_defer(d, &w.x);
	depth = fab_host_unlock_all(d->host);
	pthread_mutex_lock(&mu);
	while (!w.done)
		pthread_cond_wait(&cv, &mu);   /* the loop always completes it */
	pthread_mutex_unlock(&mu);
	fab_host_relock(d->host, depth);
	return wpeer_result(&w, rbuf, cap, rlen, fd);
}

void smd_peer_request_all(struct smd *d, uint16_t type, const void *req, uint32_t len,
			  struct smd_multi *v, unsigned n)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct wpeer *w = calloc(n ? n : 1, sizeof(*w));
	unsigned depth, left;

	if (!w || smd_ctx() != SMD_CTX_WORKER) {
		for (unsigned i = 0; i < n; i++)
			v[i].rc = w ? -EWOULDBLOCK : -ENOMEM;
		free(w);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct wpeer){ .x.fn = wpeer_start, .host = v[i].host, .type = type,
				       .req = req, .len = len, .mu = &mu, .cv = &cv, .fd = -1 };
		if (v[i].host == d->host_id) {
			w[i].done = true;
			w[i].rc = -EINVAL;
			continue;
		}
		smd_defer(d, &w[i].x);
	}
	depth = fab_host_unlock_all(d->host);
	pthread_mutex_lock(&mu);
	do {
		left = 0;
		for (unsigned i = 0; i < n; i++)
			left += !w[i].done;
		if (left)
			pthread_cond_wait(&cv, &mu);
	} while (left);
	pthread_mutex_unlock(&mu);
	fab_host_relock(d->host, depth);
	for (unsigned i = 0; i < n; i++) {
		v[i].rlen = 0;
		v[i].rc = wpeer_result(&w[i], v[i].rbuf, v[i].cap, &v[i].rlen, NULL);
	}
	free(w);
}

/* ---------- fire and forget ---------- */

int smd_peer_post(struct smd *d, uint32_t host, uint16_t type, const void *req, uint32_t len)
{
	int hi = topo_host_index(d->topo, host);
	struct smd_conn *c = hi >= 0 ? d->core->peer_out[hi] : NULL;

	/* The answer comes back as a reply nobody waits for, and is dropped. */
	if (!c || c->dead)
		return -ENOTCONN;
	return smd_conn_send(d, c->cid, type, smd_next_seq(d), 0, 0, req, len, -1);
}

struct connx {
	struct smd_defer x;
	uint32_t host;
};

static void connect_fn(struct smd *d, struct smd_defer *x)
{
	struct connx *m = (struct connx *)x;
	int err;

	peer_out(d, m->host, &err);
	free(m);
}

void smd_peer_connect(struct smd *d, uint32_t host)
{
	struct connx *m;
	int err;

	if (smd_ctx() == SMD_CTX_LOOP) {
		peer_out(d, host, &err);
		return;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->x.fn = connect_fn;
	m->host = host;
	smd_defer(d, &m->x);
}
