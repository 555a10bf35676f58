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

/* Our connection to host, opened now if there is none. */
static struct smd_conn *peer_out(struct smd *d, uint32_t host, int *err)
{
	struct smd_core *k = d->core;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct smio_hello hello = { .role = SMIO_ROLE_PEER, .host = d->host_id,
				    .pid = (uint32_t)getpid(), .version = SMIO_VERSION };
	struct smd_conn *c;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
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
	if (smio_sock_path(d->dir, host, sa.sun_path, sizeof(sa.sun_path)) < 0) {
		*err = -ENAMETOOLONG;
		return NULL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	/* A Unix socket connects at once or not at all (a full backlog: EAGAIN). */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0) {
		close(fd);
		*err = -EHOSTDOWN;
		return NULL;
	}
	/* Whoever listens there must be that host's daemon. */
	rc = smd_auth_server(d, (uint32_t)cr.pid, (uint32_t)cr.uid, host);
	if (rc) {
		smio_warn("the process on host %u's socket (pid %d) is not its daemon: not "
			"talking to it", host, (int)cr.pid);
		close(fd);
		*err = -EHOSTDOWN;
		return NULL;
	}
	c = smd_conn_new(d, fd, true, SMIO_ROLE_PEER, host);
	if (!c) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	c->pid = (uint32_t)cr.pid;
	c->uid = (uint32_t)cr.uid;
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

static void pending_end(struct smd *d, struct smd_pending *p, int rc, const struct smio_hdr *h,
			const void *payload, int fd)
{
	struct smd_conn *c = p->c;

	pending_unlink(p);
	c->refs++;
	if (p->fn)
		p->fn(d, p->arg, rc, h, payload, fd);
	else if (fd >= 0)
		close(fd);
	free(p);
	smd_conn_put(c);
}

static int on_call_timeout(sd_event_source *s, uint64_t usec, void *arg)
{
	struct smd_pending *p = arg;
	struct smd *d = p->c->d;

	fab_host_lock(d->host);
	/* A late answer finds no entry and is dropped; the connection stays. */
	pending_end(d, p, -ETIMEDOUT, NULL, NULL, -1);
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
