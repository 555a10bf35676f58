// SPDX-License-Identifier: MIT
/* The NTB adapters' DMA engines: see ntbdma.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric/ntb.h"
#include "fabric/route.h"
#include "ntb_drv.h"
#include "ntbdma.h"

struct dmaq {
	uint32_t id, owner, adapter, max_entries;
	int efd;
	uint32_t state;              /* enum ntbdma_state */
	int32_t error;
	uint32_t submissions;
	uint64_t bytes, total;
	bool read;
	uint32_t n;
	struct ntbdma_xfer *x;       /* max_entries */
	bool queued;                 /* in its engine's run list, or running */
	bool orphan;                 /* owner gone: the engine frees it when it stops */
	bool cancel;                 /* atomic: stop at the next chunk */
	struct dmaq *next_run;
};

struct engine {
	struct ntbdma *e;
	uint32_t adapter;
	uint32_t channels;
	uint16_t rid;
	struct ntb_drv *drv;         /* the adapter's driver: our requester ID, its events */
	bool rid_held, client;
	bool link_down;              /* atomic; recorded only (failover builds on it) */
	pthread_t thread;
	bool started;
	pthread_cond_t work;
	struct dmaq *head, *tail;
	uint8_t *buf;                /* NTBDMA_CHUNK: the engine's FIFO */
};

struct ntbdma {
	struct fab_host *h;
	struct ntbdma_ops ops;
	pthread_mutex_t lock;
	bool stop;
	struct engine *eng;          /* by adapter (host->nntbs) */
	uint32_t neng;
	struct dmaq *q[NTBDMA_MAX_QUEUES];
	uint32_t next_id;
};

bool ntbdma_in_engine(void)
{
	return fab_thread_is_worker();
}

static int fab_errno(int status)
{
	switch (status) {
	case FAB_OK:          return 0;
	case FAB_LINK_DOWN:   return -ENOLINK;
	case FAB_HOST_DOWN:   return -EHOSTDOWN;
	case FAB_IOMMU_FAULT: return -EFAULT;
	case FAB_NTB_REJECT:  return -EACCES;
	default:              return status < 0 ? status : -EIO;
	}
}

static void qfree(struct dmaq *q)
{
	if (q->efd >= 0)
		close(q->efd);
	free(q->x);
	free(q);
}

/* The slot of a live queue, or -1. Engine lock held. */
static int qslot(struct ntbdma *e, uint32_t id)
{
	for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES; i++)
		if (e->q[i] && e->q[i]->id == id && !e->q[i]->orphan)
			return (int)i;
	return -1;
}

static int qget(struct ntbdma *e, uint32_t owner, uint32_t id, struct dmaq **out)
{
	int i = qslot(e, id);

	if (i < 0)
		return -ENOENT;
	if (e->q[i]->owner != owner)
		return -EPERM;
	*out = e->q[i];
	return 0;
}

/* One access of the engine; with the host lock, after a last look at cancel. */
static int access_once(struct engine *g, struct dmaq *q, uint64_t addr, uint64_t n, bool write)
{
	struct fab_host *h = g->e->h;
	int rc;

	fab_host_lock(h);
	/* Whoever cancels does so under the host lock before freeing memory. */
	if (__atomic_load_n(&q->cancel, __ATOMIC_ACQUIRE))
		rc = -ECANCELED;
	else
		rc = fab_access(h, g->rid, addr, g->buf, n, write);
	fab_host_unlock(h);
	return rc;
}

/* The access to the other segment: may need the daemon's help first. */
static int access_remote(struct engine *g, struct dmaq *q, uint64_t addr, uint64_t n,
			 bool write)
{
	struct ntbdma *e = g->e;
	int rc = access_once(g, q, addr, n, write);

	for (int t = 0; rc && rc != -ECANCELED && t < NTBDMA_RETRIES; t++) {
		int prc = e->ops.prepare ? e->ops.prepare(e->ops.arg, g->rid, addr, n, write)
					 : rc;

		if (prc)
			return prc;         /* the access fails, and that is the answer */
		rc = access_once(g, q, addr, n, write);
	}
	return rc;
}

/* Execute q's submission; returns 0 or the first failure's negative errno. */
static int run(struct engine *g, struct dmaq *q)
{
	for (uint32_t i = 0; i < q->n; i++) {
		const struct ntbdma_xfer *x = &q->x[i];

		for (uint64_t off = 0; off < x->size;) {
			uint64_t n = x->size - off < NTBDMA_CHUNK ? x->size - off : NTBDMA_CHUNK;
			int rc;

			if (q->read) {
				rc = access_remote(g, q, x->remote + off, n, false);
				if (!rc)
					rc = access_once(g, q, x->local + off, n, true);
			} else {
				rc = access_once(g, q, x->local + off, n, false);
				if (!rc)
					rc = access_remote(g, q, x->remote + off, n, true);
			}
			if (rc)
				return fab_errno(rc);
			off += n;
			pthread_mutex_lock(&g->e->lock);
			q->bytes += n;
			pthread_mutex_unlock(&g->e->lock);
		}
	}
	return 0;
}

/* The adapter's link changed: noted for the engine (acting on it comes later). */
static void engine_link_event(void *ctx, struct ntb_drv *ntb, bool up)
{
	struct engine *g = ctx;

	(void)ntb;
	__atomic_store_n(&g->link_down, !up, __ATOMIC_RELEASE);
}

static const struct ntb_client_ops engine_ntb_client = { .link_event = engine_link_event };

static void *engine_thread(void *arg)
{
	struct engine *g = arg;
	struct ntbdma *e = g->e;

	fab_thread_set_worker();
	pthread_mutex_lock(&e->lock);
	while (!e->stop) {
		struct dmaq *q = g->head;
		uint64_t one = 1;
		int rc;

		if (!q) {
			pthread_cond_wait(&g->work, &e->lock);
			continue;
		}
		g->head = q->next_run;
		if (!g->head)
			g->tail = NULL;
		pthread_mutex_unlock(&e->lock);

		rc = run(g, q);

		pthread_mutex_lock(&e->lock);
		q->queued = false;
		if (rc == -ECANCELED) {
			q->state = NTBDMA_ABORTED;
			q->error = rc;
		} else {
			q->state = rc ? NTBDMA_ERROR : NTBDMA_DONE;
			q->error = rc;
		}
		if (q->orphan) {
			for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES; i++)
				if (e->q[i] == q)
					e->q[i] = NULL;
			qfree(q);
		} else if (write(q->efd, &one, sizeof(one)) != sizeof(one)) {
			/* Cannot happen below the counter's limit; waiters time out. */
		}
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

int ntbdma_create(struct fab_host *h, const struct ntbdma_ops *ops, struct ntbdma **out)
{
	struct ntbdma *e = calloc(1, sizeof(*e));
	int rc = 0;

	if (!e)
		return -ENOMEM;
	e->h = h;
	if (ops)
		e->ops = *ops;
	pthread_mutex_init(&e->lock, NULL);
	e->neng = h->nntbs;
	e->eng = calloc(e->neng ? e->neng : 1, sizeof(*e->eng));
	if (!e->eng) {
		pthread_mutex_destroy(&e->lock);
		free(e);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < e->neng; i++) {
		struct engine *g = &e->eng[i];
		struct fab_ntb *n = h->ntbs[i];

		g->e = e;
		g->adapter = i;
		g->channels = n->t ? n->t->dma_channels : 0;
		g->rid = fab_func_bdf(n->fn);
		pthread_cond_init(&g->work, NULL);
		if (!g->channels)
			continue;
		g->drv = ntb_drv_of(h, i);
		if (!g->drv) {
			rc = -ENODEV;       /* the NTB driver is not bound */
			break;
		}
		/*
		 * The engine issues its reads and writes as the NTB function. Its
		 * requests to the adapter's own window enter the NTB from this side,
		 * so the driver lists the NTB in its own requester-ID table.
		 */
		fab_host_lock(h);
		rc = ntb_rid_get(g->drv, g->rid);
		g->rid_held = !rc;
		if (!rc)
			rc = ntb_drv_register_client(g->drv, &engine_ntb_client, g);
		g->client = !rc;
		fab_host_unlock(h);
		if (rc)
			break;
		g->buf = malloc(NTBDMA_CHUNK);
		if (!g->buf) {
			rc = -ENOMEM;
			break;
		}
		if (pthread_create(&g->thread, NULL, engine_thread, g)) {
			rc = -EAGAIN;
			break;
		}
		g->started = true;
		pthread_setname_np(g->thread, "dev:ntb-dma");   /* an adapter's engine: hardware */
	}
	if (rc) {
		ntbdma_destroy(e);
		return rc;
	}
	*out = e;
	return 0;
}

void ntbdma_destroy(struct ntbdma *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->stop = true;
	for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES; i++)
		if (e->q[i])
			__atomic_store_n(&e->q[i]->cancel, true, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < e->neng; i++)
		pthread_cond_broadcast(&e->eng[i].work);
	pthread_mutex_unlock(&e->lock);
	for (uint32_t i = 0; i < e->neng; i++) {
		struct engine *g = &e->eng[i];

		if (g->started)
			pthread_join(g->thread, NULL);
		/* Stopped: our reference and our ear go (with the host lock, not ours). */
		fab_host_lock(e->h);
		if (g->client)
			ntb_drv_unregister_client(g->drv, &engine_ntb_client, g);
		if (g->rid_held)
			ntb_rid_put(g->drv, g->rid);
		fab_host_unlock(e->h);
		free(g->buf);
		pthread_cond_destroy(&g->work);
	}
	for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES; i++)
		if (e->q[i])
			qfree(e->q[i]);
	free(e->eng);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

uint32_t ntbdma_channels(const struct ntbdma *e, uint32_t adapter)
{
	return e && adapter < e->neng && e->eng[adapter].started ? e->eng[adapter].channels : 0;
}

int ntbdma_queue_create(struct ntbdma *e, uint32_t owner, uint32_t adapter,
			uint32_t max_entries, uint32_t *id, int *efd)
{
	struct dmaq *q;
	int slot = -1;

	if (!owner || !max_entries || max_entries > NTBDMA_MAX_ENTRIES)
		return -EINVAL;
	if (adapter >= e->neng)
		return -ENODEV;
	if (!ntbdma_channels(e, adapter))
		return -EOPNOTSUPP;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->x = calloc(max_entries, sizeof(*q->x));
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!q->x || q->efd < 0) {
		int rc = q->efd < 0 ? -errno : -ENOMEM;

		qfree(q);
		return rc;
	}
	q->owner = owner;
	q->adapter = adapter;
	q->max_entries = max_entries;
	pthread_mutex_lock(&e->lock);
	for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES && slot < 0; i++)
		if (!e->q[i])
			slot = (int)i;
	if (slot < 0) {
		pthread_mutex_unlock(&e->lock);
		qfree(q);
		return -ENOSPC;
	}
	do {
		if (++e->next_id == 0)
			e->next_id = 1;
	} while (qslot(e, e->next_id) >= 0);
	q->id = e->next_id;
	e->q[slot] = q;
	*id = q->id;
	*efd = q->efd;
	pthread_mutex_unlock(&e->lock);
	return 0;
}

int ntbdma_queue_remove(struct ntbdma *e, uint32_t owner, uint32_t id)
{
	struct dmaq *q;
	int rc;

	pthread_mutex_lock(&e->lock);
	rc = qget(e, owner, id, &q);
	if (!rc && q->queued)
		rc = -EBUSY;
	if (!rc) {
		e->q[qslot(e, id)] = NULL;
		qfree(q);
	}
	pthread_mutex_unlock(&e->lock);
	return rc;
}

int ntbdma_queue_adapter(struct ntbdma *e, uint32_t owner, uint32_t id, uint32_t *adapter)
{
	struct dmaq *q;
	int rc;

	pthread_mutex_lock(&e->lock);
	rc = qget(e, owner, id, &q);
	if (!rc)
		*adapter = q->adapter;
	pthread_mutex_unlock(&e->lock);
	return rc;
}

static void fill_status(const struct dmaq *q, struct ntbdma_status *st)
{
	*st = (struct ntbdma_status){ .state = q->state, .error = q->error,
		.submissions = q->submissions, .bytes = q->bytes, .total = q->total };
}

int ntbdma_post(struct ntbdma *e, uint32_t owner, uint32_t id, bool read,
		const struct ntbdma_xfer *x, uint32_t n, struct ntbdma_status *st)
{
	struct engine *g;
	struct dmaq *q;
	uint64_t total = 0;
	int rc;

	if (!n)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (!x[i].size || total + x[i].size < total)
			return -EINVAL;
		total += x[i].size;
	}
	pthread_mutex_lock(&e->lock);
	rc = qget(e, owner, id, &q);
	if (!rc && n > q->max_entries)
		rc = -E2BIG;
	if (!rc && q->queued)
		rc = -EBUSY;
	if (!rc && e->stop)
		rc = -ESHUTDOWN;
	if (rc) {
		pthread_mutex_unlock(&e->lock);
		return rc;
	}
	memcpy(q->x, x, n * sizeof(*x));
	q->n = n;
	q->read = read;
	q->state = NTBDMA_POSTED;
	q->error = 0;
	q->bytes = 0;
	q->total = total;
	q->submissions++;
	q->queued = true;
	/* An abort of an earlier submission must not stop this one. */
	__atomic_store_n(&q->cancel, false, __ATOMIC_RELEASE);
	q->next_run = NULL;
	g = &e->eng[q->adapter];
	if (g->tail)
		g->tail->next_run = q;
	else
		g->head = q;
	g->tail = q;
	fill_status(q, st);
	pthread_cond_signal(&g->work);
	pthread_mutex_unlock(&e->lock);
	return 0;
}

int ntbdma_status(struct ntbdma *e, uint32_t owner, uint32_t id, struct ntbdma_status *st)
{
	struct dmaq *q;
	int rc;

	pthread_mutex_lock(&e->lock);
	rc = qget(e, owner, id, &q);
	if (!rc)
		fill_status(q, st);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

int ntbdma_abort(struct ntbdma *e, uint32_t owner, uint32_t id, struct ntbdma_status *st)
{
	struct dmaq *q;
	int rc;

	pthread_mutex_lock(&e->lock);
	rc = qget(e, owner, id, &q);
	if (!rc) {
		/* The engine looks at cancel before every access, so a submission
		 * still waiting in the run list ends before its first byte. */
		if (q->queued)
			__atomic_store_n(&q->cancel, true, __ATOMIC_RELEASE);
		fill_status(q, st);
	}
	pthread_mutex_unlock(&e->lock);
	return rc;
}

unsigned ntbdma_owner_gone(struct ntbdma *e, uint32_t owner)
{
	unsigned n = 0;

	if (!e || !owner)
		return 0;
	pthread_mutex_lock(&e->lock);
	for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES; i++) {
		struct dmaq *q = e->q[i];

		if (!q || q->owner != owner || q->orphan)
			continue;
		n++;
		if (q->queued) {
			/* Its engine aborts it at the next chunk and frees it. */
			q->orphan = true;
			__atomic_store_n(&q->cancel, true, __ATOMIC_RELEASE);
			continue;
		}
		e->q[i] = NULL;
		qfree(q);
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}

bool ntbdma_busy_range(struct ntbdma *e, uint64_t addr, uint64_t size)
{
	bool busy = false;

	if (!e)
		return false;
	pthread_mutex_lock(&e->lock);
	for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES && !busy; i++) {
		struct dmaq *q = e->q[i];

		if (!q || !q->queued)
			continue;
		for (uint32_t k = 0; k < q->n && !busy; k++)
			busy = q->x[k].local < addr + size && addr < q->x[k].local + q->x[k].size;
	}
	pthread_mutex_unlock(&e->lock);
	return busy;
}

unsigned ntbdma_queue_count(struct ntbdma *e)
{
	unsigned n = 0;

	if (!e)
		return 0;
	pthread_mutex_lock(&e->lock);
	for (uint32_t i = 0; i < NTBDMA_MAX_QUEUES; i++)
		n += e->q[i] != NULL;
	pthread_mutex_unlock(&e->lock);
	return n;
}
