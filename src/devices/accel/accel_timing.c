// SPDX-License-Identifier: MIT
/*
 * The accelerator in timing-faithful mode (docs/timing-model.md): a
 * descriptor completes no sooner than its fetch, its transfers over the bus
 * and its status write-back would take on real PCIe hardware, by the timing
 * model on the routes they really have. Device memory (BAR2 as seen by the
 * device itself) is not on the bus and costs nothing. The engine is serial
 * and moves a chunk by reading then writing it, so a bus-to-bus copy pays
 * both. Route hop lists are kept per 2 MiB region and direction while the
 * route epoch holds; only the (cheap) model query runs per descriptor.
 */
#include "devices/accel/accel_priv.h"

#define REGION_SHIFT 21
#define WRITEBACK_BYTES 16        /* result + status */

/* The hops to addr, cached; NULL when the route cannot be resolved now. */
static const struct accel_path *path(struct accel *a, uint64_t addr, bool write)
{
	const struct dev_func *f = &a->d->fn;
	uint64_t epoch = f->bus->route_epoch ? f->bus->route_epoch(f->bus_ctx) : 0;
	uint64_t key = addr >> REGION_SHIFT;
	struct accel_path *p;
	int n;

	for (unsigned i = 0; i < ACCEL_TIMING_PATHS; i++) {
		p = &a->paths[i];
		if (p->valid && p->key == key && p->write == write && p->epoch == epoch)
			return p;
	}
	if (!f->bus->path)
		return NULL;
	p = &a->paths[a->path_next++ % ACCEL_TIMING_PATHS];
	n = f->bus->path(f->bus_ctx, addr, write, p->h, TIMING_MAX_HOPS);
	if (n <= 0) {
		p->valid = false;
		return NULL;    /* counts 0 this time; resolved again next time */
	}
	p->valid = true;
	p->write = write;
	p->key = key;
	p->epoch = epoch;
	p->n = (unsigned)n;
	return p;
}

static double leg(struct accel *a, const struct accel_span *sp, uint64_t addr, uint64_t len,
		  bool write)
{
	struct timing_query q = { .size = len, .write = write };
	const struct accel_path *p;
	struct timing_result r;

	if (sp->local || !len)
		return 0;
	p = path(a, addr, write);
	if (!p || timing_path(a->d->fn.timing, p->h, p->n, &q, &r))
		return 0;
	return r.latency_ns;
}

uint64_t accel_desc_cost_ns(struct accel *a)
{
	const struct accel_desc *c = &a->cur;
	uint64_t slot = ACCEL_RING_SLOT(a->ring_base, a->head);
	double ns;

	if (!a->paths)
		return 0;
	ns = leg(a, &a->ring, slot, ACCEL_DESC_SIZE, false);
	if (c->op == ACCEL_OP_COPY || c->op == ACCEL_OP_CHECKSUM)
		ns += leg(a, &a->cur_src, c->src, c->len, false);
	if (c->op == ACCEL_OP_COPY || c->op == ACCEL_OP_FILL)
		ns += leg(a, &a->cur_dst, c->dst, c->len, true);
	ns += leg(a, &a->ring, slot + ACCEL_DESC_RESULT, WRITEBACK_BYTES, true);
	return (uint64_t)(ns + 0.5);
}
