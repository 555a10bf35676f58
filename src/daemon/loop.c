// SPDX-License-Identifier: MIT
/*
 * smartiod's event loop, on sd-event (libsystemd): one thread owns the
 * listening socket, every connection, the signals, the timers of calls and
 * connections, and the inbox through which workers and device threads hand
 * it what only it may do (send, call a peer, finish a request).
 *
 * Why sd-event: it carries fds, monotonic timers, signals and child pidfds
 * in one well-kept Debian library, with priorities and one-shot sources, and
 * the daemon needs nothing beyond it.
 *
 * Stopping (SHUTDOWN, SIGTERM): no new connections, calls or work; pending
 * calls fail with -ESHUTDOWN, so workers waiting on peers wake up; once the
 * work is drained, every connection is closed (what it held is released) and
 * the loop ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "util/log.h"

static __thread enum smd_ctx thread_ctx;

enum smd_ctx smd_ctx(void)
{
	return thread_ctx;
}

void smd_loop_set_ctx(enum smd_ctx ctx)
{
	thread_ctx = ctx;
}

/* ---------- the inbox: deferred calls from other threads ---------- */

void smd_loop_wake(struct smd *d)
{
	uint64_t one = 1;

	/* The counter saturates long after anyone could care: EAGAIN is harmless. */
	if (write(d->core->inbox_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		smio_error("loop wake-up: %s", strerror(errno));
}

void smd_defer(struct smd *d, struct smd_defer *x)
{
	struct smd_core *k = d->core;

	x->next = NULL;
	pthread_mutex_lock(&k->inbox_mu);
	*k->inbox_tail = x;
	k->inbox_tail = &x->next;
	pthread_mutex_unlock(&k->inbox_mu);
	smd_loop_wake(d);
}

static int on_inbox(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct smd *d = arg;
	struct smd_core *k = d->core;
	struct smd_defer *list;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		smio_error("inbox: %s", strerror(errno));
	pthread_mutex_lock(&k->inbox_mu);
	list = k->inbox;
	k->inbox = NULL;
	k->inbox_tail = &k->inbox;
	pthread_mutex_unlock(&k->inbox_mu);
	fab_host_lock(d->host);
	while (list) {
		struct smd_defer *x = list;

		list = x->next;
		x->fn(d, x);       /* may free x */
	}
	fab_host_unlock(d->host);
	return 0;
}

/* ---------- accepting ---------- */

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *arg)
{
	struct smd *d = arg;

	if (!d->core->stopping)
		sd_event_source_set_enabled(d->core->listen_src, SD_EVENT_ON);
	return 0;
}

static int on_listen(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct smd *d = arg;
	struct smd_core *k = d->core;

	/* A bounded batch per turn: the rest waits for the next wake-up. */
	for (int i = 0; i < 64 && !k->stopping; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (cfd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				return 0;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/*
				 * Out of descriptors: the connection stays in the backlog.
				 * Stop listening for a moment rather than spin on a socket
				 * that stays readable.
				 */
				smio_error("accept: %s; pausing 50 ms", strerror(errno));
				sd_event_source_set_enabled(k->listen_src, SD_EVENT_OFF);
				sd_event_source_set_time_relative(k->accept_retry, 50000);
				sd_event_source_set_enabled(k->accept_retry, SD_EVENT_ONESHOT);
				return 0;
			}
			smio_error("accept: %s", strerror(errno));
			return 0;
		}
		fab_host_lock(d->host);
		smd_conn_accept(d, cfd);
		fab_host_unlock(d->host);
	}
	return 0;
}

/* ---------- stopping ---------- */

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *arg)
{
	struct smd *d = arg;

	fab_host_lock(d->host);
	smd_loop_stop(d);
	fab_host_unlock(d->host);
	return 0;
}

/* Is everything drained? Then close what is left and end the loop. */
static int on_post(sd_event_source *s, void *arg)
{
	struct smd *d = arg;
	struct smd_core *k = d->core;

	if (!k->stopping || !smd_work_idle(d))
		return 0;
	fab_host_lock(d->host);
	smd_conns_close_all(d);
	fab_host_unlock(d->host);
	sd_event_exit(k->ev, 0);
	return 0;
}

void smd_loop_stop(struct smd *d)
{
	struct smd_core *k = d->core;

	if (k->stopping)
		return;
	k->stopping = true;
	if (k->listen_src)
		sd_event_source_set_enabled(k->listen_src, SD_EVENT_OFF);
	/* Workers waiting on peers wake up now; their requests end quickly. */
	for (struct smd_conn *c = k->conns; c; c = c->next)
		if (c->outgoing)
			smd_calls_fail(c, -ESHUTDOWN);
	smd_work_stop(d);
	smd_loop_wake(d);
}

/* ---------- set-up ---------- */

/*
 * The core's state, the workers and the inbox: before the device threads
 * start, since what they cannot do alone goes to a worker.
 */
int smd_core_init(struct smd *d)
{
	struct smd_core *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	d->core = k;
	k->inbox_fd = -1;
	k->inbox_tail = &k->inbox;
	k->wq_tail = &k->wq;
	k->next_seq = 0x40000000u;
	pthread_mutex_init(&k->inbox_mu, NULL);
	k->peer_out = calloc(d->topo->nhosts, sizeof(*k->peer_out));
	k->n_peers_in = calloc(d->topo->nhosts, sizeof(*k->n_peers_in));
	if (!k->peer_out || !k->n_peers_in)
		return -ENOMEM;
	k->inbox_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->inbox_fd < 0)
		return -errno;
	rc = smd_auth_init(d);
	if (rc)
		return rc;
	return smd_work_init(d);
}

/* The loop itself, once the socket listens. */
int smd_loop_init(struct smd *d)
{
	struct smd_core *k = d->core;
	int rc;

	rc = sd_event_new(&k->ev);
	if (rc < 0)
		return rc;
	rc = sd_event_add_io(k->ev, &k->inbox_src, k->inbox_fd, EPOLLIN, on_inbox, d);
	if (rc >= 0)
		rc = sd_event_add_io(k->ev, &k->listen_src, d->listen_fd, EPOLLIN, on_listen, d);
	if (rc >= 0)
		rc = sd_event_add_time(k->ev, &k->accept_retry, CLOCK_MONOTONIC, UINT64_MAX, 0,
				       on_accept_retry, d);
	if (rc >= 0)
		rc = sd_event_source_set_enabled(k->accept_retry, SD_EVENT_OFF);
	/* The signals were blocked in every thread before any was started. */
	if (rc >= 0)
		rc = sd_event_add_signal(k->ev, NULL, SIGTERM, on_signal, d);
	if (rc >= 0)
		rc = sd_event_add_signal(k->ev, NULL, SIGINT, on_signal, d);
	if (rc >= 0)
		rc = sd_event_add_signal(k->ev, NULL, SIGHUP, on_signal, d);
	if (rc >= 0)
		rc = sd_event_add_post(k->ev, NULL, on_post, d);
	/* Replies and peers' answers before new work: the inbox first. */
	if (rc >= 0)
		rc = sd_event_source_set_priority(k->inbox_src, SD_EVENT_PRIORITY_IMPORTANT);
	return rc < 0 ? rc : 0;
}

int smd_loop_run(struct smd *d)
{
	int rc;

	smd_loop_set_ctx(SMD_CTX_LOOP);
	rc = sd_event_loop(d->core->ev);
	return rc < 0 ? rc : 0;
}

void smd_loop_fini(struct smd *d)
{
	struct smd_core *k = d->core;

	if (!k)
		return;
	smd_work_stop(d);
	sd_event_source_unref(k->inbox_src);
	sd_event_source_unref(k->listen_src);
	sd_event_source_unref(k->accept_retry);
	sd_event_unref(k->ev);
	if (k->inbox_fd >= 0)
		close(k->inbox_fd);
	pthread_mutex_destroy(&k->inbox_mu);
	free(k->peer_out);
	free(k->n_peers_in);
	free(k);
	d->core = NULL;
}
