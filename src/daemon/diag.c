// SPDX-License-Identifier: MIT
/*
 * The daemon's event log (diag.h): a bounded ring of what happened on this
 * host — start, borrows and returns, reclaims, link changes, faults — for
 * `smartio events` and the live view. The places where these happen call
 * smd_event(); link changes and IOMMU faults are heard here, from the NTB
 * driver and the IOMMU, so their owners need not know about the log.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "diag.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "host/ntb_drv.h"
#include "util/smio_time.h"

struct smd_diag {
	pthread_mutex_t lock;         /* the ring only; never held while calling out */
	uint64_t seq;                 /* of the newest event (0: none yet) */
	struct smio_event ring[SMD_EVENTS];
	uint64_t fault_ev_ns;         /* when the last IOMMU-fault event was logged */
	uint64_t faults_quiet;        /* faults since, not logged one by one */
	struct smd_diag_base base;
};

void smd_event(struct smd *d, enum smio_event_kind kind, uint64_t a, uint64_t b,
	       const char *fmt, ...)
{
	struct smd_diag *g = d ? d->diag : NULL;
	struct smio_event e = { .kind = kind, .host = d ? d->host_id : 0, .a = a, .b = b,
				.time_ns = smio_clock_ns(CLOCK_REALTIME) };
	va_list ap;

	if (!g)
		return;
	va_start(ap, fmt);
	vsnprintf(e.text, sizeof(e.text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&g->lock);
	e.seq = ++g->seq;
	g->ring[(e.seq - 1) % SMD_EVENTS] = e;
	pthread_mutex_unlock(&g->lock);
}

uint32_t smd_events_copy(struct smd *d, uint64_t since, uint32_t max, struct smio_event *ev,
			 uint64_t *first, uint64_t *last)
{
	struct smd_diag *g = d->diag;
	uint64_t from;
	uint32_t n = 0;

	*first = *last = 0;
	if (!g)
		return 0;
	pthread_mutex_lock(&g->lock);
	if (g->seq) {
		*last = g->seq;
		*first = g->seq > SMD_EVENTS ? g->seq - SMD_EVENTS + 1 : 1;
		/* since + 1 cannot wrap: since < last here, or nothing is copied */
		from = since >= *last ? *last + 1 : since >= *first ? since + 1 : *first;
		for (uint64_t s = from; s <= *last && n < max; s++)
			ev[n++] = g->ring[(s - 1) % SMD_EVENTS];
	}
	pthread_mutex_unlock(&g->lock);
	return n;
}

struct smd_diag_base *smd_diag_base(struct smd *d)
{
	return d->diag ? &d->diag->base : NULL;
}

/* The NTB driver's link events: the adapter itself counts the transitions. */
static void link_event(void *ctx, struct ntb_drv *ntb, bool up)
{
	struct smd *d = ctx;
	struct fab_ntb *hw = ntb_drv_hw(ntb);
	struct smd_diag_base *b = smd_diag_base(d);
	uint32_t i = ntb_drv_index(ntb);
	uint64_t downs = hw->link_downs - (b && b->ntb ? b->ntb[3 * i + 1] : 0);

	if (up)
		smd_event(d, SMIO_EV_LINK_UP, i, 0, "%s link up", hw->fn->name);
	else
		smd_event(d, SMIO_EV_LINK_DOWN, i, downs, "%s link down (%llu link errors)",
			  hw->fn->name, (unsigned long long)downs);
}

static const struct ntb_client_ops diag_ntb_client = { .link_event = link_event };

/*
 * IOMMU faults come from device threads and may come by the thousand (a
 * device DMAing into an unmapped buffer): one event per SMD_FAULT_EV_NS, the
 * ones in between told as a count. The IOMMU's own log has them all.
 */
static void iommu_fault(void *arg, const struct iommu_fault *f)
{
	struct smd *d = arg;
	struct smd_diag *g = d->diag;
	uint64_t now = smio_now_ns(), quiet;

	pthread_mutex_lock(&g->lock);
	if (g->fault_ev_ns && now - g->fault_ev_ns < SMD_FAULT_EV_NS) {
		g->faults_quiet++;
		pthread_mutex_unlock(&g->lock);
		return;
	}
	g->fault_ev_ns = now;
	quiet = g->faults_quiet;
	g->faults_quiet = 0;
	pthread_mutex_unlock(&g->lock);
	smd_event(d, SMIO_EV_IOMMU_FAULT, f->rid, f->iova,
		  "IOMMU fault #%llu: %02x:%02x.%x %s %#llx: %s (%llu more before it unlogged)",
		  (unsigned long long)f->seq, FAB_BDF_BUS(f->rid), FAB_BDF_DEV(f->rid),
		  FAB_BDF_FN(f->rid), f->write ? "write" : "read", (unsigned long long)f->iova,
		  iommu_fault_reason_str(f->reason), (unsigned long long)quiet);
}

static void clients(struct smd *d, bool add)
{
	for (uint32_t i = 0; i < d->host->nntbs; i++) {
		struct ntb_drv *ntb = ntb_drv_of(d->host, i);

		if (!ntb)
			continue;
		if (add)
			ntb_drv_register_client(ntb, &diag_ntb_client, d);
		else
			ntb_drv_unregister_client(ntb, &diag_ntb_client, d);
	}
}

int smd_diag_init(struct smd *d)
{
	struct smd_diag *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	g->base.ntb = calloc(d->host->nntbs ? d->host->nntbs : 1, 3 * sizeof(uint64_t));
	if (!g->base.ntb) {
		free(g);
		return -ENOMEM;
	}
	pthread_mutex_init(&g->lock, NULL);
	d->diag = g;
	clients(d, true);
	if (d->host->iommu)
		iommu_set_fault_hook(d->host->iommu, iommu_fault, d);
	smd_event(d, SMIO_EV_START, (uint64_t)getpid(), 0, "%s daemon started (pid %d)",
		  d->host->t->name, (int)getpid());
	return 0;
}

void smd_diag_fini(struct smd *d)
{
	struct smd_diag *g = d->diag;

	if (!g)
		return;
	if (d->host->iommu)
		iommu_set_fault_hook(d->host->iommu, NULL, NULL);
	clients(d, false);
	d->diag = NULL;
	pthread_mutex_destroy(&g->lock);
	free(g->base.ntb);
	free(g);
}
