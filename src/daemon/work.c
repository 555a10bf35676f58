// SPDX-License-Identifier: MIT
/*
 * smartiod's workers: threads that run the requests whose handlers may wait
 * (for a peer's answer, for a device), so that the loop never does.
 *
 * Items run in queue order, except that an item whose key matches one that
 * is running waits for it: the key names a device (or another thing whose
 * driver is not re-entrant), so a device's requests are serialised while
 * different devices' run side by side. Ordering per client comes from the
 * connection itself (it is not read while one of its requests is served).
 *
 * The pool grows when an item is queued and no thread is idle, up to
 * SMD_WORKERS_MAX; idle threads sleep on a condition variable (no CPU). A
 * worker runs an item with the host lock held and drops it only to wait;
 * the item's completion goes back to the loop through the inbox.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core_priv.h"
#include "daemon.h"

static void work_finished(struct smd *d, struct smd_defer *x)
{
	struct smd_work *w = (struct smd_work *)((char *)x - offsetof(struct smd_work, fin));
	struct smd_core *k = d->core;

	if (w->done)
		w->done(w);            /* may free w */
	pthread_mutex_lock(&k->wq_mu);
	k->npending--;
	pthread_cond_broadcast(&k->wq_idle_cv);
	pthread_mutex_unlock(&k->wq_mu);
}

static bool key_running(const struct smd_core *k, uint64_t key)
{
	for (unsigned i = 0; key && i < k->nthreads; i++)
		if (k->running_key[i][0] == key || k->running_key[i][1] == key)
			return true;
	return false;
}

/* The first queued item none of whose keys is running (wq_mu held), unlinked. */
static struct smd_work *take(struct smd_core *k, unsigned self)
{
	for (struct smd_work **pp = &k->wq; *pp; pp = &(*pp)->next) {
		struct smd_work *w = *pp;

		if (key_running(k, w->key) || key_running(k, w->key2))
			continue;
		*pp = w->next;
		if (!*pp)
			k->wq_tail = pp;
		w->next = NULL;
		k->nqueued--;
		k->running_key[self][0] = w->key;
		k->running_key[self][1] = w->key2;
		return w;
	}
	return NULL;
}

struct worker_arg {
	struct smd *d;
	unsigned self;
};

static void *worker_main(void *arg)
{
	struct worker_arg wa = *(struct worker_arg *)arg;
	struct smd *d = wa.d;
	struct smd_core *k = d->core;

	free(arg);
	smd_loop_set_ctx(SMD_CTX_WORKER);
	pthread_mutex_lock(&k->wq_mu);
	for (;;) {
		struct smd_work *w = take(k, wa.self);
		bool tell_loop;

		if (!w) {
			if (k->wq_exit)
				break;
			k->nidle++;
			pthread_cond_wait(&k->wq_cv, &k->wq_mu);
			k->nidle--;
			continue;
		}
		pthread_mutex_unlock(&k->wq_mu);
		/* Without a completion for the loop, run() may end w's life. */
		tell_loop = w->done != NULL;
		fab_host_lock(d->host);
		w->run(w);
		fab_host_unlock(d->host);
		if (tell_loop) {
			w->fin.fn = work_finished;
			smd_defer(d, &w->fin);
		}
		pthread_mutex_lock(&k->wq_mu);
		k->running_key[wa.self][0] = k->running_key[wa.self][1] = 0;
		if (!tell_loop) {
			k->npending--;
			pthread_cond_broadcast(&k->wq_idle_cv);
			smd_loop_wake(d);      /* a stopping loop checks for idle */
		}
		/* An item waiting for this key may run now. */
		pthread_cond_broadcast(&k->wq_cv);
	}
	pthread_mutex_unlock(&k->wq_mu);
	return NULL;
}

/*
 * Another thread, if more items wait than threads are idle (a thread already
 * woken for an item still counts as idle until it takes one) and the pool may
 * grow (wq_mu held).
 */
static void grow(struct smd *d)
{
	struct smd_core *k = d->core;
	struct worker_arg *wa;

	if (k->nqueued <= k->nidle || k->nthreads >= SMD_WORKERS_MAX || k->wq_exit)
		return;
	wa = malloc(sizeof(*wa));
	if (!wa)
		return;
	*wa = (struct worker_arg){ .d = d, .self = k->nthreads };
	k->running_key[k->nthreads][0] = k->running_key[k->nthreads][1] = 0;
	if (pthread_create(&k->threads[k->nthreads], NULL, worker_main, wa)) {
		free(wa);
		return;        /* the existing threads take it, later */
	}
	k->nthreads++;
	pthread_setname_np(k->threads[k->nthreads - 1], "smd-worker");
}

/* Queue w (wq_mu held). */
static void enqueue(struct smd *d, struct smd_work *w)
{
	struct smd_core *k = d->core;

	w->d = d;
	w->next = NULL;
	*k->wq_tail = w;
	k->wq_tail = &w->next;
	k->npending++;
	k->nqueued++;
	grow(d);
	pthread_cond_signal(&k->wq_cv);
}

void smd_work_queue(struct smd *d, struct smd_work *w)
{
	struct smd_core *k = d->core;

	pthread_mutex_lock(&k->wq_mu);
	enqueue(d, w);
	pthread_mutex_unlock(&k->wq_mu);
}

bool smd_work_idle(struct smd *d)
{
	struct smd_core *k = d->core;
	bool idle;

	pthread_mutex_lock(&k->wq_mu);
	idle = !k->npending;
	pthread_mutex_unlock(&k->wq_mu);
	return idle;
}

int smd_work_init(struct smd *d)
{
	struct smd_core *k = d->core;
	pthread_condattr_t ca;

	pthread_mutex_init(&k->wq_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wq_cv, &ca);
	pthread_cond_init(&k->wq_idle_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&k->wq_mu);
	k->nqueued = 1;          /* one thread up front: the first request waits for none */
	grow(d);
	k->nqueued = 0;
	pthread_mutex_unlock(&k->wq_mu);
	return k->nthreads ? 0 : -EAGAIN;
}

/*
 * From the loop, when the daemon stops: no new calls from device threads.
 * From the main thread once the loop has ended: the threads finish what is
 * queued, end, and are joined.
 */
void smd_work_stop(struct smd *d)
{
	struct smd_core *k = d->core;
	unsigned n;

	pthread_mutex_lock(&k->wq_mu);
	k->wq_stop = true;
	if (smd_ctx() == SMD_CTX_LOOP) {
		pthread_mutex_unlock(&k->wq_mu);
		return;
	}
	k->wq_exit = true;
	pthread_cond_broadcast(&k->wq_cv);
	n = k->nthreads;
	pthread_mutex_unlock(&k->wq_mu);
	for (unsigned i = 0; i < n; i++)
		pthread_join(k->threads[i], NULL);
	pthread_mutex_lock(&k->wq_mu);
	k->nthreads = 0;
	pthread_mutex_unlock(&k->wq_mu);
}

/* ---------- for device and DMA-engine threads ---------- */

struct wcall {
	struct smd_work w;
	int (*fn)(struct smd *d, void *arg);
	void *arg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool taken, done, abandoned;
	int rc;
};

static void wcall_free(struct wcall *x)
{
	pthread_cond_destroy(&x->cv);
	pthread_mutex_destroy(&x->mu);
	free(x);
}

/* The worker's part: it never touches x after telling the caller. */
static void wcall_run(struct smd_work *w)
{
	struct wcall *x = (struct wcall *)w;
	int rc;

	pthread_mutex_lock(&x->mu);
	if (x->abandoned) {
		pthread_mutex_unlock(&x->mu);
		wcall_free(x);           /* its caller gave up before we came */
		return;
	}
	x->taken = true;
	pthread_mutex_unlock(&x->mu);
	rc = x->fn(w->d, x->arg);
	pthread_mutex_lock(&x->mu);
	x->rc = rc;
	x->done = true;
	pthread_cond_signal(&x->cv);
	pthread_mutex_unlock(&x->mu);
}

int smd_work_call(struct smd *d, int (*fn)(struct smd *d, void *arg), void *arg,
		  int timeout_ms)
{
	struct smd_core *k = d ? d->core : NULL;
	struct wcall *x;
	struct timespec dl;
	pthread_condattr_t ca;
	bool stopped;
	int rc = 0;

	if (!k)
		return -EAGAIN;          /* before the daemon serves: the access fails */
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->fn = fn;
	x->arg = arg;
	x->w.run = wcall_run;
	pthread_mutex_init(&x->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&x->cv, &ca);
	pthread_condattr_destroy(&ca);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	/* Checked and queued at once: once stopping, nothing new is taken. */
	pthread_mutex_lock(&k->wq_mu);
	stopped = k->wq_stop;
	if (!stopped)
		enqueue(d, &x->w);
	pthread_mutex_unlock(&k->wq_mu);
	if (stopped) {
		wcall_free(x);
		return -ESHUTDOWN;
	}
	pthread_mutex_lock(&x->mu);
	while (!x->done) {
		/* Once taken, fn runs to its end: wait for it (its waits are bounded). */
		if (x->taken) {
			pthread_cond_wait(&x->cv, &x->mu);
			continue;
		}
		if (rc == ETIMEDOUT) {
			x->abandoned = true;     /* the worker frees it when it comes */
			pthread_mutex_unlock(&x->mu);
			return -ETIMEDOUT;
		}
		rc = pthread_cond_timedwait(&x->cv, &x->mu, &dl);
	}
	pthread_mutex_unlock(&x->mu);
	rc = x->rc;
	wcall_free(x);
	return rc;
}
