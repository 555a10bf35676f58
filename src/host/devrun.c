// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/pci_regs.h>

#include "devices/dev.h"
#include "devrun.h"
#include "fabric/route.h"
#include "smartio/timing.h"
#include "util/smio_time.h"

/*
 * The device's own translation cache (an ATC, as PCIe ATS devices have): a
 * resolved route that ends in memory, mapped into this process, per (page,
 * direction). It caches exactly what the host's route cache holds, under the
 * same world epoch, so any table change anywhere invalidates it; it spares a
 * DMA to known memory the host lock, the route lookup and the mapping. Only
 * this device's thread touches it.
 */
#define ATC_SLOTS 64u

struct atc_entry {
	uint64_t epoch;
	uint64_t lo, hi;         /* bus addresses [lo, hi) of one page, translated */
	uint8_t *ptr;            /* where lo is mapped */
	bool valid, write;
	bool ram;                /* host RAM: counted in dma_ram_bytes */
};

struct runner {
	struct dev_instance inst;
	struct fab_func *fn;
	struct devrun_ops ops;
	pthread_t thread;
	bool started;
	bool stop;               /* atomic */
	uint64_t polls;          /* atomic */
	struct atc_entry atc[ATC_SLOTS];
	uint64_t cmd_epoch;      /* epoch at which cmd (the command register) was read */
	uint32_t cmd;
	bool cmd_valid;
	uint32_t flr_seen;       /* fn->flr_seq this thread has acted on */
};

struct devrun_set {
	struct timing_params timing;   /* faithful mode's calibration */
	bool faithful;
	struct fab_host *h;
	unsigned n;
	struct runner *r;
};

static uint64_t world_epoch(const struct fab_host *h)
{
	return h->world ? __atomic_load_n(&h->world->epoch, __ATOMIC_ACQUIRE) : 0;
}

static struct atc_entry *atc_slot(struct runner *r, uint64_t page, bool write)
{
	uint64_t k = (page >> 12) * 0x9e3779b97f4a7c15ull;

	return &r->atc[((k >> 40) ^ write) & (ATC_SLOTS - 1)];
}

/* Translate and remember [addr, end of its page) under the host lock; 0 on success. */
static int atc_fill(struct runner *r, uint64_t addr, bool write, struct atc_entry **out)
{
	struct fab_host *h = r->fn->host;
	uint64_t page = addr & ~(FAB_PAGE_SIZE - 1), n = 0;
	struct atc_entry *e = atc_slot(r, page, write);
	uint8_t *p = NULL, kind = 0;
	uint64_t epoch;
	int rc;

	fab_host_lock(h);
	epoch = world_epoch(h);         /* before resolving: a change meanwhile is seen */
	rc = fab_access_map(h, fab_func_bdf(r->fn), addr, page + FAB_PAGE_SIZE - addr, write,
			    &p, &n, &kind);
	fab_host_unlock(h);
	if (rc)
		return rc;
	*e = (struct atc_entry){ .epoch = epoch, .lo = addr, .hi = addr + n, .ptr = p,
				 .valid = true, .write = write, .ram = kind == FAB_TGT_RAM };
	*out = e;
	return 0;
}

/*
 * Move what the ATC can translate, from the start; returns the bytes moved
 * (all of len, or up to where a translation is missing that cannot be made
 * here: an MSI, a failed route, memory a daemon worker must map first).
 */
static size_t atc_dma(struct runner *r, uint64_t addr, uint8_t *buf, size_t len, bool write)
{
	struct fab_host *h = r->fn->host;
	size_t done = 0;

	if (!h->world)
		return 0;               /* no epoch to validate against */
	while (done < len) {
		uint64_t a = addr + done, page = a & ~(FAB_PAGE_SIZE - 1), n;
		struct atc_entry *e = atc_slot(r, page, write);

		if (!e->valid || e->epoch != world_epoch(h) || e->write != write ||
		    a < e->lo || a >= e->hi) {
			if (atc_fill(r, a, write, &e))
				break;
		}
		n = e->hi - a < len - done ? e->hi - a : len - done;
		if (e->ram)
			__atomic_fetch_add(&h->dma_ram_bytes, n, __ATOMIC_RELAXED);
		if (write)
			fab_copy_to_mem(e->ptr + (a - e->lo), buf + done, n);
		else
			fab_copy_from_mem(buf + done, e->ptr + (a - e->lo), n);
		done += n;
	}
	return done;
}

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
	size_t fast = atc_dma(r, addr, buf, len, write);
	uint16_t rid;
	int rc;

	if (fast == len)
		return 0;
	/* The rest the way the fabric does it, failures and interrupts included. */
	addr += fast;
	buf = (uint8_t *)buf + fast;
	len -= fast;
	rc = dma_once(r, addr, buf, len, write, &rid);

	/* Another host's memory (a borrower's, through an NTB) is resolved and
	 * mapped by a daemon worker, which then does the access. Only what a
	 * worker can mend goes there: a step it must take on another host
	 * (refused here as host-down) or a mapping it must fetch. Anything else
	 * (nothing decodes, an IOMMU fault) is the answer. */
	if ((rc == FAB_HOST_DOWN || rc == -EREMOTE) && r->ops.access)
		rc = r->ops.access(r->ops.arg, rid, addr, buf, len, write);
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
	struct fab_host *h = r->fn->host;
	bool command = off == PCI_COMMAND && size == 2 && h->world;
	uint32_t v = 0xffffffffu;

	/* The command register (bus mastering) is read on every poll pass; a
	 * write to it advances the epoch (it changes routing), so the value read
	 * at an epoch holds while the epoch does. */
	if (command && r->cmd_valid && r->cmd_epoch == world_epoch(h))
		return r->cmd;
	fab_host_lock(h);
	if (command)
		r->cmd_epoch = world_epoch(h);
	fab_cfg_read(&r->fn->cfg, off, size, &v);
	fab_host_unlock(h);
	if (command) {
		r->cmd = v;
		r->cmd_valid = true;
	}
	return v;
}

/*
 * Timing-faithful mode asks where an access goes. On the device's thread a
 * route through another host resolves only from the host's route cache
 * (which the access itself, made by a daemon worker, has just filled);
 * otherwise -EAGAIN and the model tries again later.
 */
static int bus_path(void *ctx, uint64_t addr, bool write, struct timing_hop *hops,
		    unsigned cap)
{
	struct runner *r = ctx;
	struct fab_host *h = r->fn->host;
	struct fab_route rt;
	int rc;

	fab_host_lock(h);
	rc = fab_route_resolve(h, fab_func_bdf(r->fn), addr, 4, write, &rt);
	fab_host_unlock(h);
	if (rc)
		return rc;
	if (rt.status == FAB_HOST_DOWN)
		return -EAGAIN;
	if (rt.status != FAB_OK)
		return -EIO;
	return timing_hops_from_fab(rt.hops, rt.nhops, hops, cap);
}

static uint64_t bus_route_epoch(void *ctx)
{
	struct runner *r = ctx;

	return world_epoch(r->fn->host);
}

static const struct dev_bus_ops fabric_bus = {
	.dma_read = bus_dma_read, .dma_write = bus_dma_write, .cfg_read = bus_cfg_read,
	.path = bus_path, .route_epoch = bus_route_epoch,
};

/* Sleep until the absolute CLOCK_MONOTONIC time t (ns). */
static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void pause_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	/* Idle back-off of a polling device, not a wait for some other party. */
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}


static void *run(void *arg)
{
	struct runner *r = arg;
	uint64_t last_work = smio_now_ns(), idle = DEVRUN_IDLE_MIN_NS;
	unsigned quiet = 0;
	bool sleeping = false, slack = false;

	fab_thread_set_worker();
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint32_t flr = __atomic_load_n(&r->fn->flr_seq, __ATOMIC_ACQUIRE);
		int busy;

		if (flr != r->flr_seen) {
			/* A Function Level Reset (src/fabric/flr.c): the model's
			 * half, here where nothing else calls into the model. */
			dev_stat_add(&r->inst, DEV_ST_FLRS, flr - r->flr_seen);
			r->flr_seen = flr;
			memset(r->atc, 0, sizeof(r->atc));
			r->cmd_valid = false;
			if (r->inst.ops->reset)
				r->inst.ops->reset(&r->inst);
			/* Whoever waits for the reset (VF Enable) may go on. */
			__atomic_store_n(&r->fn->flr_done, flr, __ATOMIC_RELEASE);
		}
		busy = r->inst.ops->poll(&r->inst);

		/* only this thread writes it: no locked read-modify-write needed */
		__atomic_store_n(&r->polls, __atomic_load_n(&r->polls, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
		if (busy > 0) {
			quiet = 0;
			sleeping = false;
			continue;
		}
		if (r->inst.wake_ns) {
			/* Work falls due at wake_ns (faithful mode): sleep towards it
			 * in slices, spin only for its last few microseconds. */
			uint64_t now = smio_now_ns(), until = r->inst.wake_ns - DEVRUN_WAKE_SPIN_NS;

			/* A timed device wakes for its deadlines, not up to 50 us
			 * after them (set once, when it first has one). */
			if (!slack) {
				(void)prctl(PR_SET_TIMERSLACK, DEVRUN_TIMER_SLACK_NS, 0, 0, 0);
				slack = true;
			}
			last_work = now;
			sleeping = false;
			quiet = 0;
			if (r->inst.wake_ns > now + DEVRUN_WAKE_SPIN_NS)
				sleep_until(until < now + DEVRUN_WAKE_SLICE_NS ? until
					    : now + DEVRUN_WAKE_SLICE_NS);
			continue;
		}
		if (!sleeping) {
			/* Just went quiet: more work is likely, keep polling for
			 * DEVRUN_SPIN_NS. The clock is read once per
			 * DEVRUN_SPIN_CHECK quiet passes, not on every one. */
			if (++quiet % DEVRUN_SPIN_CHECK)
				continue;
			/* On a busy machine the driver we wait for may need this CPU. */
			if (!(quiet % DEVRUN_SPIN_YIELD))
				sched_yield();
			if (quiet == DEVRUN_SPIN_CHECK) {
				last_work = smio_now_ns();
				continue;
			}
			if (smio_now_ns() - last_work < DEVRUN_SPIN_NS)
				continue;
			sleeping = true;
			idle = DEVRUN_IDLE_MIN_NS;
		}
		pause_ns(idle);
		idle = idle * 2 > DEVRUN_IDLE_MAX_NS ? DEVRUN_IDLE_MAX_NS : idle * 2;
	}
	return NULL;
}

static int setup(struct runner *r, struct fab_func *fn, const struct dev_model_ops *ops,
		 const struct timing_params *timing, char *err, size_t errlen)
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
		f->bar_fd[b] = h->mems[fn->bars[b].mem].fd;
		if (!f->bar[b]) {
			snprintf(err, errlen, "%s: cannot map BAR%d", fn->name, b);
			return -ENOMEM;
		}
	}
	r->flr_seen = __atomic_load_n(&fn->flr_seq, __ATOMIC_ACQUIRE);
	f->bdf = fab_func_bdf(fn);
	f->msix_cap = fab_cfg_find_cap(&fn->cfg, PCI_CAP_ID_MSIX);
	f->td = fn->tdev;
	f->vf_index = fn->vf_index;
	f->total_vfs = fn->pf ? fn->pf->total_vfs : fn->total_vfs;
	f->bus = &fabric_bus;
	f->bus_ctx = r;
	f->timing = timing;
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
	if (dops && dops->timing) {
		s->timing = *dops->timing;
		s->faithful = true;
	}
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
		rc = setup(r, fn, ops, s->faithful ? &s->timing : NULL, err, errlen);
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
