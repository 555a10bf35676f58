/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics of one daemon (diag.c, h_diag.c): its event log and the
 * STATS, STATS_CLEAR and EVENTS requests (docs/reliability.md, "Counters
 * and events").
 *
 * The event log is a ring of SMD_EVENTS entries: a new event overwrites the
 * oldest, so logging never allocates and never waits for anything but the
 * ring's own short lock. Any thread may log (the loop, workers, a device
 * thread recording an IOMMU fault).
 */
#ifndef SMARTIO_DAEMON_DIAG_H
#define SMARTIO_DAEMON_DIAG_H

#include <stdint.h>

#include "core.h"
#include "smartio/proto.h"

#define SMD_EVENTS         1024   /* events kept */
#define SMD_FAULT_EV_NS    100000000ull  /* at most one IOMMU-fault event per 100 ms */

struct smd;

/* Allocate the log, log the start, hear of link changes and IOMMU faults (host lock held). */
int smd_diag_init(struct smd *d);
/* Stop hearing of them and free the log (host lock held). NULL-safe. */
void smd_diag_fini(struct smd *d);

/* Log an event (any thread; a no-op before init). a, b: per kind (smartio/proto/diag.h). */
void smd_event(struct smd *d, enum smio_event_kind kind, uint64_t a, uint64_t b,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Up to max events with seq > since into ev, oldest first; *first, *last: the
 * oldest and newest seq held (0, 0: none). Returns how many were copied.
 */
uint32_t smd_events_copy(struct smd *d, uint64_t since, uint32_t max, struct smio_event *ev,
			 uint64_t *first, uint64_t *last);

/* The counters' zero points (h_diag.c: STATS reports the difference). */
struct smd_diag_base {
	uint64_t iommu_faults;
	uint64_t dma_ram_bytes;
	uint64_t *ntb;            /* per adapter: doorbells, link downs, link drops */
};
struct smd_diag_base *smd_diag_base(struct smd *d);

/* The handlers (dispatch.c): on the loop, never waiting. */
int h_stats(struct smd_req *r);
int h_stats_clear(struct smd_req *r);
int h_events(struct smd_req *r);

#endif
