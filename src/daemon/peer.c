// SPDX-License-Identifier: MIT
/*
 * How one daemon's routes continue on other hosts: a PEER_STEP request to
 * the next host's daemon (the model of the NTB control channel), and the
 * fan-out of invalidations so that cached routes through a changed table are
 * dropped everywhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "host/ntbdma.h"

void smd_route_to_wire(const struct fab_route *r, const struct fab_forward *fwd,
		       struct smio_route_reply *out, uint32_t *len)
{
	memset(out, 0, sizeof(*out));
	out->status = r->status;
	out->cached = r->cached;
	snprintf(out->reason, sizeof(out->reason), "%s", r->reason);
	out->tgt = (struct smio_target){ .kind = r->tgt.kind, .bar = r->tgt.bar,
		.bdf = r->tgt.bdf, .host = r->tgt.host, .mem = r->tgt.mem,
		.addr = r->tgt.addr, .offset = r->tgt.offset, .len = r->tgt.len };
	if (fwd && fwd->forward) {
		out->forward = 1;
		out->next_host = fwd->next.host;
		out->next_ntb = fwd->next.ntb_index;
		out->next_addr = fwd->next.addr;
		out->next_len = fwd->next.len;
		/* Through a cZodiac IOPort: the remap goes back with the forward. */
		out->next_cz = fwd->next.cz;
		out->next_rid = fwd->next.cz == FAB_CZ_TO_USER ? fwd->next.rid : 0;
	}
	out->ntb_hops = r->ntb_hops;
	out->nhops = r->nhops > SMIO_MAX_HOPS ? SMIO_MAX_HOPS : r->nhops;
	for (uint32_t i = 0; i < out->nhops; i++) {
		const struct fab_hop *s = &r->hops[i];
		struct smio_hop *t = &out->hops[i];

		memset(t, 0, sizeof(*t));   /* pads must be zero on the wire */
		t->kind = s->kind;
		t->gen = s->gen;
		t->width = s->width;
		t->host = s->host;
		t->bdf = s->bdf;
		t->latency_ns = s->latency_ns;
		memcpy(t->name, s->name, sizeof(t->name));
		t->name[sizeof(t->name) - 1] = '\0';
	}
	*len = (uint32_t)(sizeof(*out) + out->nhops * sizeof(struct smio_hop));
}

static void append_hops(struct fab_route *r, const struct smio_route_reply *rep)
{
	for (uint32_t i = 0; i < rep->nhops; i++) {
		struct fab_hop hp = { .kind = rep->hops[i].kind, .gen = rep->hops[i].gen,
			.width = rep->hops[i].width, .host = rep->hops[i].host,
			.bdf = rep->hops[i].bdf, .latency_ns = rep->hops[i].latency_ns };

		memcpy(hp.name, rep->hops[i].name, sizeof(hp.name));
		if (!fab_route_push(r, &hp))
			return;
	}
}

/*
 * Take a peer's answer to a step into the route. A step ends on the host
 * that ran it: a target elsewhere is a lie that would make us trust its
 * memory index as one of ours (h_map indexes host->mems with it), so the
 * peer is dropped as broken (-EPROTO).
 */
static int apply_step(struct smd *d, const struct fab_step *in, const struct smio_route_reply *rep,
		      uint32_t rlen, struct fab_route *r, struct fab_forward *fwd)
{
	if (rlen < sizeof(*rep) || rlen != sizeof(*rep) + rep->nhops * sizeof(rep->hops[0]))
		return -EPROTO;
	if (!rep->forward && rep->status == FAB_OK && rep->tgt.host != in->host) {
		int hi = topo_host_index(d->topo, in->host);
		struct smd_conn *c = hi >= 0 ? d->core->peer_out[hi] : NULL;

		if (c)
			smd_conn_drop(d, c->cid);
		return -EPROTO;
	}
	append_hops(r, rep);
	r->status = rep->status;
	memcpy(r->reason, rep->reason, sizeof(r->reason));
	r->reason[sizeof(r->reason) - 1] = '\0';
	r->tgt = (struct fab_target){ .kind = rep->tgt.kind, .bar = rep->tgt.bar,
		.bdf = rep->tgt.bdf, .host = rep->tgt.host, .mem = rep->tgt.mem,
		.addr = rep->tgt.addr, .offset = rep->tgt.offset, .len = rep->tgt.len };
	if (rep->forward) {
		r->ntb_hops++;
		fwd->forward = true;
		fwd->next = (struct fab_step){ .host = rep->next_host, .from_ntb = true,
			.ntb_index = rep->next_ntb, .write = in->write,
			.cz = rep->next_cz, .rid = rep->next_rid,
			.addr = rep->next_addr, .len = rep->next_len };
	}
	return 0;
}

static void step_msg(const struct fab_step *in, const struct fab_route *r, struct smio_step *st)
{
	/* A step through a cZodiac IOPort carries the remap: which way, and the UID. */
	*st = (struct smio_step){ .host = in->host, .ntb_index = in->ntb_index,
				  .write = in->write, .mcast = in->mcast, .cz = in->cz,
				  .ntb_hops = r->ntb_hops,
				  .addr = in->addr, .len = in->len,
				  .rid = in->cz == FAB_CZ_TO_USER ? in->rid : 0 };
}

/* The world's step op: on a worker, a peer call it waits for. */
static int remote_step(struct fab_world *w, const struct fab_step *in, struct fab_route *r,
		       struct fab_forward *fwd)
{
	struct smd *d = w->priv;
	struct smio_route_reply *rep;
	struct smio_step st;
	uint32_t rlen;
	int rc;

	if (in->host == d->host_id)
		return fab_route_step_local(d->host, in, r, fwd);
	/* Device and engine threads never talk to peers: they ask a worker. */
	if (fab_thread_is_worker())
		return -EWOULDBLOCK;
	rep = malloc(SMIO_MAX_PAYLOAD);
	if (!rep)
		return -ENOMEM;
	step_msg(in, r, &st);
	rc = smd_peer_request(d, in->host, SMIO_PEER_STEP, &st, sizeof(st), rep,
			      SMIO_MAX_PAYLOAD, &rlen, NULL);
	if (!rc)
		rc = apply_step(d, in, rep, rlen, r, fwd);
	free(rep);
	return rc;
}

/* ---------- the same, on the loop, with continuations ---------- */

struct aroute {
	struct fab_resolve x;
	void (*fn)(struct smd *d, void *arg, struct fab_route *rt);
	void *arg;
	struct fab_route rt;
};

/*
 * Start the walk's remote steps until one is on its way (true: its
 * continuation goes on) or the walk has ended (false).
 */
static bool aroute_next(struct smd *d, struct aroute *a, int state);

static void aroute_reply(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
			 const void *payload, int fd)
{
	struct aroute *a = arg;
	struct fab_forward fwd = { 0 };

	if (fd >= 0)
		close(fd);
	if (!rc)
		rc = h->status < 0 ? h->status : apply_step(d, &a->x.step, payload, h->len,
							    &a->rt, &fwd);
	if (aroute_next(d, a, fab_resolve_feed(&a->x, rc, &fwd)))
		return;
	a->fn(d, a->arg, &a->rt);
	free(a);
}

static bool aroute_next(struct smd *d, struct aroute *a, int state)
{
	/* Bounded: every remote step counts against the walk's hop limit. */
	while (state == FAB_RESOLVE_REMOTE) {
		struct smio_step st;
		int rc;

		step_msg(&a->x.step, &a->rt, &st);
		rc = smd_call_start(d, a->x.step.host, SMIO_PEER_STEP, &st, sizeof(st),
				    SMD_PEER_TIMEOUT, aroute_reply, a);
		if (!rc)
			return true;
		state = fab_resolve_feed(&a->x, rc, NULL);
	}
	return false;
}

int smd_route_walk(struct smd *d, uint16_t rid, uint64_t addr, uint64_t len, bool write,
		   bool use_cache, void (*fn)(struct smd *d, void *arg, struct fab_route *rt),
		   void *arg)
{
	struct aroute *a = malloc(sizeof(*a));
	int state;

	if (!a)
		return -ENOMEM;
	a->fn = fn;
	a->arg = arg;
	state = fab_resolve_begin(&a->x, d->host, rid, addr, len, write, use_cache, &a->rt);
	if (aroute_next(d, a, state))
		return 0;
	/* Answered here (the cache, or this host alone). */
	fn(d, arg, &a->rt);
	free(a);
	return 0;
}

/* A request's walk: done() answers it, at once or from the walk's continuation. */
struct req_route {
	struct smd_req *r;
	int (*done)(struct smd_req *r, struct fab_route *rt);
	int rc;                  /* done's status when the walk ended at once */
	bool ended;              /* ... which it did */
	bool async;              /* smd_route_walk has returned */
};

static void req_route_end(struct smd *d, void *arg, struct fab_route *rt)
{
	struct req_route *q = arg;
	int rc = q->done(q->r, rt);

	(void)d;
	if (!q->async) {
		q->rc = rc;      /* ended inside smd_route_walk: the caller answers */
		q->ended = true;
		return;
	}
	if (rc != SMD_ASYNC)     /* else done() made the next call */
		smd_req_done(q->r, rc);
	free(q);
}

int smd_route_async(struct smd_req *r, uint16_t rid, uint64_t addr, uint64_t len, bool write,
		    bool use_cache, int (*done)(struct smd_req *r, struct fab_route *rt))
{
	struct req_route *q = malloc(sizeof(*q));
	int rc = smd_req_keep(r);

	if (!q || rc) {
		free(q);
		return rc ? rc : -ENOMEM;
	}
	*q = (struct req_route){ .r = r, .done = done, .rc = SMD_ASYNC };
	rc = smd_route_walk(r->d, rid, addr, len, write, use_cache, req_route_end, q);
	if (rc) {
		free(q);
		return rc;
	}
	if (q->ended) {
		rc = q->rc;      /* answered here (or done() made the next call) */
		free(q);
		return rc;
	}
	q->async = true;
	return SMD_ASYNC;
}

static void fan_out_invalidate(struct fab_world *w, uint32_t origin)
{
	struct smd *d = w->priv;
	struct smio_invalidate inv = { .origin_host = origin, .epoch = w->epoch,
				       .link_gen = d->host->link_gen };

	if (!d->core)
		return;               /* before the loop exists: nobody has stepped through us */
	/*
	 * Every daemon that stepped through us may cache a route through us. A
	 * peer that does not take it loses its connection (its queue overflows),
	 * which tells it to distrust its cache all the same.
	 */
	for (struct smd_conn *c = d->core->conns, *next; c; c = next) {
		if (c->dead || c->role != SMIO_ROLE_PEER || c->outgoing) {
			next = c->next;
			continue;
		}
		/*
		 * On the loop the send is a write: a peer that went away is closed
		 * and forgotten (freed) right there. Hold c until its successor is
		 * known.
		 */
		c->refs++;
		smd_conn_send(d, c->cid, SMIO_PEER_INVALIDATE, 0, 0, 0, &inv, sizeof(inv), -1);
		next = c->next;
		smd_conn_put(c);
	}
}

/* Memory of this host, and other hosts' memory objects the DMA engines had
 * mapped (h_dma.c); another host's memory reaches a process through that
 * host's daemon (SMIO_MAP there), not through ours. */
static void *own_mem_map(struct fab_world *w, uint32_t host, uint32_t mem, uint64_t *size)
{
	struct smd *d = w->priv;

	if (host != d->host_id) {
		void *p = smd_dma_mem_map(d, host, mem, size);   /* mapped for the DMA engines */

		/* A worker may fetch it (a borrowed device's BAR, pci_iomap). */
		if (!p && smd_ctx() == SMD_CTX_WORKER)
			p = smd_dma_mem_fetch(d, host, mem, size);
		return p;
	}
	if (mem >= d->host->nmems)
		return NULL;
	*size = d->host->mems[mem].size;
	return fab_mem_map(d->host, mem);
}

const struct fab_world_ops smd_world_ops = {
	.step = remote_step,
	.invalidate = fan_out_invalidate,
	.mem_map = own_mem_map,
	.msi = smd_lend_world_msi,   /* a lent device's interrupt for its borrower */
};

int smd_peer_cfg(struct smd *d, uint32_t host, uint16_t type, uint16_t bdf, bool lost,
		 bool write, uint32_t off, uint32_t size, uint32_t *val)
{
	struct smio_peer_lend_cfg m = { .bdf = bdf, .write = write, .size = (uint8_t)size,
					.off = off, .value = write ? *val : 0 }, r;
	uint32_t rlen;
	int rc;

	if (size < 4 && m.value >> (8 * size))
		return -EINVAL;
	if (lost)
		return -ENODEV;   /* surprise removal: the driver sees a dead device */
	rc = smd_peer_request(d, host, type, &m, sizeof(m), &r, sizeof(r), &rlen, NULL);
	if (rc)
		return rc;
	if (rlen != sizeof(r))
		return -EPROTO;
	if (!write)
		*val = r.value;
	return 0;
}
