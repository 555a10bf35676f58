// SPDX-License-Identifier: MIT
/*
 * The daemon's SISCI DMA service: queues executed by the NTB adapters' DMA
 * engines (host/ntbdma.c).
 *
 * A client creates a queue on an adapter (it gets the queue's completion
 * eventfd), then starts submissions: transfers between one of its own local
 * segments and one of its own segment connections (SEG_CONNECT), whose
 * address on this host's bus - the NTB window the LUT translates to the
 * owner's segment - the engine writes to or reads from as the NTB's
 * requester. Everything is checked here: the queue, the segment (the
 * caller's, not empty), the connection (the caller's, alive, through the
 * queue's adapter) and every range.
 *
 * Engine threads never talk to other daemons. When an access needs the far
 * side - a route step there, or its memory mapped here - the engine hands
 * the question to a worker (smd_work_call): it resolves the route (filling
 * the route cache, which the engine's retry then hits) and maps the memory
 * object the route ends in (peer memfds, cached until the daemon stops).
 * The engine waits for the answer without holding any lock. Device threads
 * do the same for a DMA that crosses to another host (smd_worker_access),
 * except that the worker then does the access itself, in one go.
 *
 * Queues die with the connection that created them: running ones are
 * aborted at their next chunk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon.h"
#include "host/ntbdma.h"

/*
 * Peers' memory objects mapped for the engines and device DMA. A multicast
 * write maps every receiver's RAM (59 in the 60-host cluster), so room for
 * every host's RAM and then some: only address space (the objects are sparse).
 */
#define DMA_MAPS        (TOPO_MAX_HOSTS + 64)
#define DMA_PREPARE_MS  (3 * SMD_PEER_TIMEOUT)

/* An engine's question for a worker (lives on the engine's stack). */
struct xreq {
	uint16_t rid;
	bool write;
	uint64_t addr, len;
	void *buf;                    /* non-NULL: the worker does the access too */
};

struct peer_map {
	uint32_t host, mem;
	void *p;
	uint64_t size;
	bool stale;                   /* its daemon went away: never handed out again */
};

struct smd_dma {
	struct smd *d;
	struct ntbdma *eng;
	bool stopping;                /* atomic: no new questions */
	struct peer_map maps[DMA_MAPS];   /* host lock */
	unsigned nmaps;
};

static int answer(struct smd_dma *s, const struct xreq *r);

static int answer_fn(struct smd *d, void *arg)
{
	struct smd_dma *s = __atomic_load_n(&d->dma, __ATOMIC_ACQUIRE);

	return s ? answer(s, arg) : -ESHUTDOWN;
}

static int ask(struct smd_dma *s, uint16_t rid, uint64_t addr, void *buf, uint64_t len, bool wr)
{
	struct xreq r = { .rid = rid, .write = wr, .addr = addr, .len = len, .buf = buf };

	if (__atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	return smd_work_call(s->d, answer_fn, &r, DMA_PREPARE_MS);
}

static int prepare(void *arg, uint16_t rid, uint64_t addr, uint64_t len, bool wr)
{
	return ask(arg, rid, addr, NULL, len, wr);
}

static void *peer_mem(struct smd_dma *s, uint32_t host, uint32_t mem, uint64_t *size)
{
	for (unsigned i = 0; i < s->nmaps; i++)
		if (!s->maps[i].stale && s->maps[i].host == host && s->maps[i].mem == mem) {
			*size = s->maps[i].size;
			return s->maps[i].p;
		}
	return NULL;
}

/*
 * A slot for one more mapping. When every slot is taken, the oldest stale
 * mapping goes: it belonged to a daemon that stopped (DMA_MAPS - hosts
 * restarts ago), so no route leads to it any more. Host lock held.
 */
static int free_slot(struct smd_dma *s)
{
	if (s->nmaps < DMA_MAPS)
		return 0;
	for (unsigned i = 0; i < s->nmaps; i++)
		if (s->maps[i].stale) {
			munmap(s->maps[i].p, s->maps[i].size);
			memmove(&s->maps[i], &s->maps[i + 1], (s->nmaps - i - 1) * sizeof(s->maps[0]));
			s->nmaps--;
			return 0;
		}
	return -ENOSPC;
}

/* Map another host's memory object for the engines. Host lock held. */
static int map_peer(struct smd_dma *s, uint32_t host, uint32_t mem)
{
	uint64_t size;
	void *p;
	int fd, rc;

	if (peer_mem(s, host, mem, &size))
		return 0;
	rc = smd_seg_peer_memfd(s->d, host, mem, &fd, &size);
	if (rc)
		return rc;
	/* Asked again while we waited for the peer? (fd is the cache's.) */
	if (peer_mem(s, host, mem, &size))
		return 0;
	rc = free_slot(s);
	if (rc)
		return rc;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	s->maps[s->nmaps++] = (struct peer_map){ .host = host, .mem = mem, .p = p, .size = size };
	return 0;
}

/* Resolve (and cache) every piece of the access; map what it ends in. */
static int answer(struct smd_dma *s, const struct xreq *r)
{
	struct smd *d = s->d;
	struct fab_route *rt = malloc(sizeof(*rt));
	uint64_t a = r->addr, end = r->addr + r->len;
	int rc = 0;

	if (!rt)
		return -ENOMEM;
	while (!rc && a < end) {
		rc = fab_route_resolve(d->host, r->rid, a, end - a, r->write, rt);
		if (rc)
			break;
		if (rt->status != FAB_OK) {
			rc = rt->status;
			break;
		}
		if (rt->tgt.kind != FAB_TGT_RAM && rt->tgt.kind != FAB_TGT_BAR) {
			/* An interrupt: nothing to map; fab_access below raises it. */
			if (!r->buf)
				rc = FAB_UR;
			break;
		}
		if (rt->tgt.host != d->host_id)
			rc = map_peer(s, rt->tgt.host, rt->tgt.mem);
		if (!rt->tgt.len)
			rc = -EIO;
		a += rt->tgt.len;
	}
	free(rt);
	/* Still under the host lock: the routes just cached are current. */
	if (!rc && r->buf)
		rc = fab_access(d->host, r->rid, r->addr, r->buf, r->len, r->write);
	return rc;
}

void smd_dma_peer_lost(struct smd *d, uint32_t host)
{
	struct smd_dma *s = d->dma;

	if (!s)
		return;
	/*
	 * A restarted daemon has new memory objects: the next access maps those.
	 * The old mappings stay until their slots are needed (free_slot), since
	 * an access that looked one up before now may still be copying.
	 */
	for (unsigned i = 0; i < s->nmaps; i++)
		if (s->maps[i].host == host)
			s->maps[i].stale = true;
}

void *smd_dma_mem_map(struct smd *d, uint32_t host, uint32_t mem, uint64_t *size)
{
	return d->dma ? peer_mem(d->dma, host, mem, size) : NULL;
}

void *smd_dma_mem_fetch(struct smd *d, uint32_t host, uint32_t mem, uint64_t *size)
{
	if (!d->dma || map_peer(d->dma, host, mem))
		return NULL;
	return peer_mem(d->dma, host, mem, size);
}

/* ---------- set-up ---------- */

int smd_dma_init(struct smd *d)
{
	struct smd_dma *s = calloc(1, sizeof(*s));
	struct ntbdma_ops ops = { .prepare = prepare, .arg = s };
	int rc;

	if (!s)
		return -ENOMEM;
	s->d = d;
	rc = ntbdma_create(d->host, &ops, &s->eng);
	if (rc) {
		free(s);
		return rc;
	}
	__atomic_store_n(&d->dma, s, __ATOMIC_RELEASE);
	return 0;
}

void smd_dma_fini(struct smd *d)
{
	struct smd_dma *s = d->dma;

	if (!s)
		return;
	/* Engines and device threads asking from now on are refused at once. */
	__atomic_store_n(&s->stopping, true, __ATOMIC_RELEASE);
	ntbdma_destroy(s->eng);
	s->eng = NULL;
}

void smd_dma_release(struct smd *d)
{
	struct smd_dma *s = d->dma;

	/* After the device threads have stopped: nobody can be in prepare(). */
	if (!s)
		return;
	__atomic_store_n(&d->dma, NULL, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < s->nmaps; i++)
		munmap(s->maps[i].p, s->maps[i].size);
	free(s);
}

int smd_worker_access(void *arg, uint16_t rid, uint64_t addr, void *buf, uint64_t len,
		      bool write)
{
	struct smd *d = arg;
	struct smd_dma *s = __atomic_load_n(&d->dma, __ATOMIC_ACQUIRE);

	/* Before the service exists the access simply fails, as it would. */
	return s ? ask(s, rid, addr, buf, len, write) : -EAGAIN;
}

/* ---------- requests ---------- */

static void to_wire(uint32_t queue, const struct ntbdma_status *st, struct smio_dma_state *o)
{
	*o = (struct smio_dma_state){ .queue = queue, .state = st->state, .error = st->error,
		.submissions = st->submissions, .bytes = st->bytes, .total = st->total };
}

static int h_queue_create(struct smd *d, struct smd_conn *c,
			  const struct smio_dma_queue_create *m, struct smio_dma_queue *o,
			  uint32_t *outlen, int *out_fd)
{
	uint32_t id;
	int efd, rc;

	if (m->adapter >= d->host->nntbs)
		return -ENODEV;
	rc = ntbdma_queue_create(d->dma->eng, c->cid, m->adapter, m->max_entries, &id, &efd);
	if (rc)
		return rc;
	*o = (struct smio_dma_queue){ .queue = id, .adapter = m->adapter,
		.max_entries = m->max_entries,
		.channels = ntbdma_channels(d->dma->eng, m->adapter) };
	*outlen = sizeof(*o);
	*out_fd = efd;
	return 0;
}

static bool in_range(uint64_t off, uint64_t size, uint64_t limit)
{
	return off <= limit && size <= limit - off;
}

static int h_start(struct smd *d, struct smd_conn *c, const struct smio_dma_start *m,
		   struct smio_dma_state *o, uint32_t *outlen)
{
	struct ntbdma_xfer x[SMIO_DMA_MAX_VEC];
	struct ntbdma_status st;
	uint64_t lphys, lsize, raddr, rsize;
	uint32_t adapter, via;
	int rc;

	rc = ntbdma_queue_adapter(d->dma->eng, c->cid, m->queue, &adapter);
	if (rc)
		return rc;
	rc = smd_seg_local_range(d, c->cid, m->segid, &lphys, &lsize);
	if (rc)
		return rc;
	rc = smd_seg_conn_range(d, c->cid, m->conn, &raddr, &rsize, &via);
	if (rc)
		return rc;
	/* A connection through another adapter is not reachable by this engine. */
	if (via != adapter)
		return -EXDEV;
	for (uint32_t i = 0; i < m->n; i++) {
		const struct smio_dma_entry *e = &m->e[i];

		if (!in_range(e->local_offset, e->size, lsize) ||
		    !in_range(e->remote_offset, e->size, rsize))
			return -ERANGE;
		x[i] = (struct ntbdma_xfer){ .local = lphys + e->local_offset,
			.remote = raddr + e->remote_offset, .size = e->size };
	}
	rc = ntbdma_post(d->dma->eng, c->cid, m->queue, m->flags & SMIO_DMA_F_READ, x, m->n,
			 &st);
	if (rc)
		return rc;
	to_wire(m->queue, &st, o);
	*outlen = sizeof(*o);
	return 0;
}

int smd_h_dma(struct smd *d, struct smd_conn *c, uint16_t type, const void *p, void *out,
	      uint32_t *outlen, int *out_fd)
{
	const struct smio_dma_queue_ref *ref = p;
	struct ntbdma_status st;
	int rc;

	if (!d->dma)
		return -ENODEV;
	switch (type) {
	case SMIO_DMA_QUEUE_CREATE:
		return h_queue_create(d, c, p, out, outlen, out_fd);
	case SMIO_DMA_QUEUE_REMOVE:
		return ntbdma_queue_remove(d->dma->eng, c->cid, ref->queue);
	case SMIO_DMA_START:
		return h_start(d, c, p, out, outlen);
	case SMIO_DMA_ABORT:
		rc = ntbdma_abort(d->dma->eng, c->cid, ref->queue, &st);
		if (rc)
			return rc;
		to_wire(ref->queue, &st, out);
		*outlen = sizeof(struct smio_dma_state);
		return 0;
	case SMIO_DMA_STATE:
		rc = ntbdma_status(d->dma->eng, c->cid, ref->queue, &st);
		if (rc)
			return rc;
		to_wire(ref->queue, &st, out);
		*outlen = sizeof(struct smio_dma_state);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

bool smd_dma_busy(struct smd *d, uint64_t phys, uint64_t size)
{
	return d->dma && d->dma->eng && ntbdma_busy_range(d->dma->eng, phys, size);
}

void smd_dma_conn_closed(struct smd *d, struct smd_conn *c)
{
	uint32_t cid = c->cid;

	if (!d->dma || !d->dma->eng || !cid)
		return;
	/* Under the host lock: an engine looks at cancel under it before each chunk,
	 * so nothing of the connection's is touched once its segments go. */
	fab_host_lock(d->host);
	ntbdma_owner_gone(d->dma->eng, cid);
	fab_host_unlock(d->host);
}
