// SPDX-License-Identifier: MIT
/*
 * Resolution across hosts: the step-by-step walk of a request from host to
 * host (route.c runs one step on one host), and the per-origin route cache.
 *
 * The walk is a small state machine (struct fab_resolve) so that a caller
 * may run a remote step however it likes: fab_route_resolve() drives it with
 * the world's step op and waits; a daemon's event loop sends the step to the
 * peer daemon, returns to its loop, and feeds the answer back when it comes
 * (docs/architecture.md, "How a request flows"). Steps on the origin host run
 * inside the walk itself.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route.h"

static inline uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ---------- cache ---------- */

struct cache_entry {
	bool valid;
	bool write;
	uint16_t rid;
	uint64_t page;
	uint64_t lo, hi;       /* addresses of the page this translation covers */
	uint64_t epoch;
	struct fab_route route; /* resolved at address lo */
};

struct fab_route_cache {
	unsigned n;            /* power of two */
	uint64_t hits, misses;
	struct cache_entry *e;
};

struct fab_route_cache *fab_route_cache_create(unsigned entries)
{
	struct fab_route_cache *c = calloc(1, sizeof(*c));
	unsigned n = 1;

	if (!c)
		return NULL;
	while (n < entries && n < (1u << 20))
		n <<= 1;
	c->n = n;
	c->e = calloc(n, sizeof(*c->e));
	if (!c->e) {
		free(c);
		return NULL;
	}
	return c;
}

void fab_route_cache_destroy(struct fab_route_cache *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

void fab_route_cache_stats(const struct fab_route_cache *c, uint64_t *hits, uint64_t *misses)
{
	*hits = c->hits;
	*misses = c->misses;
}

static unsigned cache_slot(const struct fab_route_cache *c, uint16_t rid, uint64_t page,
			   bool write)
{
	uint64_t k = (page * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)rid << 1) ^ write;

	return (unsigned)((k ^ (k >> 29)) & (c->n - 1));
}

/* The part of a route that is in use: a whole one is ~2 KiB, mostly empty hops. */
static size_t route_used(const struct fab_route *r)
{
	return offsetof(struct fab_route, hops) + r->nhops * sizeof(r->hops[0]);
}

static bool cache_lookup(struct fab_resolve *x)
{
	struct fab_route_cache *c = x->h->cache;
	uint64_t page = x->addr & ~(FAB_PAGE_SIZE - 1);
	struct cache_entry *e = &c->e[cache_slot(c, x->rid, page, x->write)];
	struct fab_route *r = x->r;
	uint64_t delta;

	if (!e->valid || e->epoch != x->epoch || e->rid != x->rid || e->page != page ||
	    e->write != x->write || x->addr < e->lo || x->addr >= e->hi) {
		c->misses++;
		return false;
	}
	c->hits++;
	delta = x->addr - e->lo;
	memcpy(r, &e->route, route_used(&e->route));
	r->cached = true;
	r->tgt.addr += delta;
	r->tgt.offset += delta;
	r->tgt.len = min64(x->len, r->tgt.len - delta);
	return true;
}

/*
 * Keep a successful translation, tagged with the epoch the walk began in: if
 * any table changed meanwhile, the entry is already stale and never hits.
 * Failures are not cached (IOMMU faults are counted per access).
 */
static void cache_fill(struct fab_resolve *x)
{
	struct fab_route_cache *c = x->h->cache;
	uint64_t page = x->addr & ~(FAB_PAGE_SIZE - 1);
	struct cache_entry *e = &c->e[cache_slot(c, x->rid, page, x->write)];
	const struct fab_route *r = x->r;

	if (r->status != FAB_OK)
		return;
	e->valid = true;
	e->write = x->write;
	e->rid = x->rid;
	e->page = page;
	e->lo = x->addr;
	e->hi = min64(page + FAB_PAGE_SIZE, x->addr + r->tgt.len);
	e->epoch = x->epoch;
	memcpy(&e->route, r, route_used(r));
}

/* ---------- the walk ---------- */

static int finish(struct fab_resolve *x)
{
	if (x->use_cache) {
		cache_fill(x);
		x->r->tgt.len = min64(x->len, x->r->tgt.len);
	}
	return FAB_RESOLVE_DONE;
}

/* Run steps on the origin host until one must run elsewhere, or the walk ends. */
static int advance(struct fab_resolve *x, const struct fab_forward *fwd)
{
	struct fab_forward next = *fwd;

	for (;;) {
		if (!next.forward || x->r->status != FAB_OK)
			return finish(x);
		if (++x->steps > FAB_MAX_NTB_HOPS + 1) {
			x->r->status = FAB_HOP_LIMIT;
			snprintf(x->r->reason, sizeof(x->r->reason), "more than %d NTB hops",
				 FAB_MAX_NTB_HOPS);
			return finish(x);
		}
		x->step = next.next;
		if (x->step.host != x->h->id)
			return FAB_RESOLVE_REMOTE;
		/* Back at the origin through an NTB: still ours to run. */
		memset(&next, 0, sizeof(next));
		fab_route_step_local(x->h, &x->step, x->r, &next);
	}
}

int fab_resolve_begin(struct fab_resolve *x, struct fab_host *h, uint16_t rid, uint64_t addr,
		      uint64_t len, bool write, bool use_cache, struct fab_route *r)
{
	struct fab_forward fwd = { 0 };

	*x = (struct fab_resolve){ .h = h, .r = r, .rid = rid, .write = write,
				   .addr = addr, .len = len };
	/* A zero or wrapping length is resolved (and refused) without the cache. */
	x->use_cache = use_cache && len && addr + len >= addr;
	x->epoch = h->world ? __atomic_load_n(&h->world->epoch, __ATOMIC_ACQUIRE) : 0;
	r->status = FAB_OK;
	r->reason[0] = '\0';
	r->nhops = 0;
	r->ntb_hops = 0;
	r->cached = false;
	memset(&r->tgt, 0, sizeof(r->tgt));
	if (x->use_cache && cache_lookup(x))
		return FAB_RESOLVE_DONE;
	/* Resolve as far as the translation stays contiguous, so that the rest of
	 * the page can be answered from the cache entry. */
	x->step = (struct fab_step){ .host = h->id, .rid = rid, .write = write, .addr = addr,
				     .len = x->use_cache ? UINT64_MAX - addr : len };
	fab_route_step_local(h, &x->step, r, &fwd);
	return advance(x, &fwd);
}

int fab_resolve_feed(struct fab_resolve *x, int rc, const struct fab_forward *fwd)
{
	if (rc < 0) {
		x->r->status = FAB_HOST_DOWN;
		x->r->tgt.kind = FAB_TGT_NONE;
		if (rc == -ETIMEDOUT)
			snprintf(x->r->reason, sizeof(x->r->reason),
				 "host %u does not answer: timed out", x->step.host);
		else
			snprintf(x->r->reason, sizeof(x->r->reason),
				 "host %u does not answer: %s", x->step.host, strerror(-rc));
		return finish(x);
	}
	return advance(x, fwd);
}

/* Drive a walk to its end with the world's step op (which may wait). */
static int resolve(struct fab_host *h, uint16_t rid, uint64_t addr, uint64_t len, bool write,
		   bool use_cache, struct fab_route *r)
{
	struct fab_world *w = h->world;
	struct fab_resolve x;
	int state = fab_resolve_begin(&x, h, rid, addr, len, write, use_cache, r);

	/* Bounded: every remote step counts against FAB_MAX_NTB_HOPS. */
	while (state == FAB_RESOLVE_REMOTE) {
		struct fab_forward fwd = { 0 };
		int rc = w && w->ops && w->ops->step ? w->ops->step(w, &x.step, r, &fwd)
						      : -EHOSTUNREACH;

		state = fab_resolve_feed(&x, rc, &fwd);
	}
	return 0;
}

int fab_route_resolve_uncached(struct fab_host *h, uint16_t rid, uint64_t addr,
			       uint64_t len, bool write, struct fab_route *r)
{
	return resolve(h, rid, addr, len, write, false, r);
}

int fab_route_resolve(struct fab_host *h, uint16_t rid, uint64_t addr, uint64_t len,
		      bool write, struct fab_route *r)
{
	return resolve(h, rid, addr, len, write, true, r);
}

/* ---------- which threads may wait for other hosts ---------- */

static __thread bool worker_thread;

void fab_thread_set_worker(void)
{
	worker_thread = true;
}

bool fab_thread_is_worker(void)
{
	return worker_thread;
}
