// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/pci_regs.h>

#include "devices/dev.h"
#include "devrun.h"
#include "fabric/route.h"

struct runner {
	struct dev_instance inst;
	struct fab_func *fn;
	struct devrun_ops ops;
	pthread_t thread;
	bool started;
	bool stop;               /* atomic */
	uint64_t polls;          /* atomic */
};

struct devrun_set {
	struct fab_host *h;
	unsigned n;
	struct runner *r;
};

static int dma_once(struct runner *r, uint64_t addr, void *buf, size_t len, bool write,
		    uint16_t *rid)
{
	struct fab_host *h = r->fn->host;
	int rc;

	fab_host_lock(h);
	*rid = fab_func_bdf(r->fn);
	rc = fab_access(h, *rid, addr, buf, len, write);
	fab_host_unlock(h);
	return rc;
}

static int bus_dma(struct runner *r, uint64_t addr, void *buf, size_t len, bool write)
{
	uint16_t rid;
	int rc = dma_once(r, addr, buf, len, write, &rid);

	/* Another host's memory (a borrower's, through an NTB) is resolved and
	 * mapped by the daemon's main thread; then the DMA goes through. Only
	 * what the main thread can mend goes there: a step it must take on
	 * another host (refused here as host-down) or a mapping it must fetch.
	 * Anything else (nothing decodes, an IOMMU fault) is the answer, and the
	 * main thread may well be waiting for this very device. */
	for (int t = 0; (rc == FAB_HOST_DOWN || rc == -EREMOTE) && r->ops.prepare &&
	     t < DEVRUN_PREPARE_TRIES; t++) {
		int prc = r->ops.prepare(r->ops.arg, rid, addr, len, write);

		if (prc)
			return prc;
		rc = dma_once(r, addr, buf, len, write, &rid);
	}
	return rc;
}

static int bus_dma_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return bus_dma(ctx, addr, buf, len, false);
}

static int bus_dma_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	return bus_dma(ctx, addr, (void *)buf, len, true);
}

static uint32_t bus_cfg_read(void *ctx, uint32_t off, uint32_t size)
{
	struct runner *r = ctx;
	uint32_t v = 0xffffffffu;

	fab_host_lock(r->fn->host);
	fab_cfg_read(&r->fn->cfg, off, size, &v);
	fab_host_unlock(r->fn->host);
	return v;
}

static const struct dev_bus_ops fabric_bus = {
	.dma_read = bus_dma_read, .dma_write = bus_dma_write, .cfg_read = bus_cfg_read,
};

static void pause_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	/* Idle back-off of a polling device, not a wait for some other party. */
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *run(void *arg)
{
	struct runner *r = arg;
	uint64_t last_work = mono_ns(), idle = DEVRUN_IDLE_MIN_NS;

	fab_thread_set_worker();
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int busy = r->inst.ops->poll(&r->inst);

		__atomic_fetch_add(&r->polls, 1, __ATOMIC_RELAXED);
		if (busy > 0) {
			last_work = mono_ns();
			idle = DEVRUN_IDLE_MIN_NS;
			continue;
		}
		if (mono_ns() - last_work < DEVRUN_SPIN_NS)
			continue;          /* just went quiet: more work is likely */
		pause_ns(idle);
		idle = idle * 2 > DEVRUN_IDLE_MAX_NS ? DEVRUN_IDLE_MAX_NS : idle * 2;
	}
	return NULL;
}

static int setup(struct runner *r, struct fab_func *fn, const struct dev_model_ops *ops,
		 char *err, size_t errlen)
{
	struct fab_host *h = fn->host;
	struct dev_func *f = &r->inst.fn;

	r->fn = fn;
	r->inst.ops = ops;
	for (int b = 0; b < 6; b++) {
		if (!fn->bars[b].present || fn->bars[b].mem < 0)
			continue;
		f->bar[b] = fab_mem_map(h, (uint32_t)fn->bars[b].mem);
		f->bar_size[b] = fn->bars[b].size;
		if (!f->bar[b]) {
			snprintf(err, errlen, "%s: cannot map BAR%d", fn->name, b);
			return -ENOMEM;
		}
	}
	f->bdf = fab_func_bdf(fn);
	f->msix_cap = fab_cfg_find_cap(&fn->cfg, PCI_CAP_ID_MSIX);
	f->td = fn->tdev;
	f->bus = &fabric_bus;
	f->bus_ctx = r;
	return ops->create(&r->inst, err, errlen);
}

int devrun_start(struct fab_host *h, const struct devrun_ops *dops, struct devrun_set **out,
		 char *err, size_t errlen)
{
	struct devrun_set *s = calloc(1, sizeof(*s));
	int rc = 0;

	if (!s)
		return -ENOMEM;
	s->h = h;
	s->r = calloc(h->nfuncs ? h->nfuncs : 1, sizeof(*s->r));
	if (!s->r) {
		free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < h->nfuncs && !rc; i++) {
		struct fab_func *fn = h->funcs[i];
		const struct dev_model_ops *ops;
		struct runner *r;

		if (fn->kind != FAB_FN_ENDPOINT || !fn->tdev)
			continue;
		ops = dev_model_ops_find(fn->tdev->model);
		if (!ops)
			continue;
		r = &s->r[s->n];
		if (dops)
			r->ops = *dops;
		rc = setup(r, fn, ops, err, errlen);
		if (rc)
			break;
		s->n++;
		rc = -pthread_create(&r->thread, NULL, run, r);
		if (rc) {
			snprintf(err, errlen, "%s: cannot start its thread: %s", fn->name,
				 strerror(-rc));
			break;
		}
		r->started = true;
	}
	if (rc) {
		devrun_stop(s);
		return rc;
	}
	*out = s;
	return 0;
}

void devrun_stop(struct devrun_set *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->n; i++)
		__atomic_store_n(&s->r[i].stop, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < s->n; i++) {
		struct runner *r = &s->r[i];

		if (r->started)
			pthread_join(r->thread, NULL);
		if (r->inst.ops && r->inst.ops->destroy)
			r->inst.ops->destroy(&r->inst);
	}
	free(s->r);
	free(s);
}

struct dev_instance *devrun_instance(struct devrun_set *s, const struct fab_func *fn)
{
	for (unsigned i = 0; s && i < s->n; i++)
		if (s->r[i].fn == fn)
			return &s->r[i].inst;
	return NULL;
}

uint64_t devrun_polls(const struct devrun_set *s)
{
	uint64_t n = 0;

	for (unsigned i = 0; s && i < s->n; i++)
		n += __atomic_load_n(&s->r[i].polls, __ATOMIC_RELAXED);
	return n;
}
