/* SPDX-License-Identifier: MIT */
/*
 * A snapshot of a running cluster for `smartio web` and `smartio top`
 * (docs/web.md, "Snapshot" has the JSON schema).
 *
 * observe.c  obs_collect: one pass over the daemons with the existing
 *            messages (STATUS, STATS, EVENTS, NTB_INFO, IOMMU_FAULTS,
 *            LEND_POOL) and the topology file; short timeouts, never waits
 *            for long; its only state is the tracker's event cursors.
 * obs_track.c  what needs history: lease ages, bound drivers seen by our own
 *            borrows (when the borrower's daemon does not say), and the event
 *            log: the daemons' events merged with what changed between
 *            snapshots.
 * metrics.c  the Prometheus text rendering of a snapshot.
 *
 * Counters are generic: every number in a "counters" object of a host, an
 * adapter or a device is drawn by the page, printed by top and exported by
 * /metrics, so new daemon counters need no change here beyond collecting them.
 */
#ifndef SMARTIO_OBSERVE_H
#define SMARTIO_OBSERVE_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#define OBS_TIMEOUT_MS      1000   /* one daemon call while polling */
#define OBS_POOL_TIMEOUT_MS 2000   /* LEND_POOL: the daemon asks its peers */

/* A fresh snapshot of the cluster in dir; 0 or -errno (no cluster there: -ENOENT). */
int obs_collect(const char *dir, struct json_object **out);
int obs_collect_timeout(const char *dir, int timeout_ms, struct json_object **out);
struct obs_tracker;
/*
 * The same, and with a tracker also each live host's daemon events after the
 * tracker's cursor (host "daemon_events", "daemon_events_next"), which
 * obs_track then merges into its log. Reads trk only: call it from the
 * thread that calls obs_track.
 */
int obs_collect_with(const char *dir, int timeout_ms, const struct obs_tracker *trk,
		     struct json_object **out);

/* Wall clock in ms since the epoch (the snapshot's and the events' time base). */
int64_t obs_now_ms(void);

struct obs_tracker;

int obs_tracker_new(struct obs_tracker **t);
void obs_tracker_free(struct obs_tracker *t);
/*
 * Take snap (fresh from obs_collect) as the current state: annotate its leases
 * (lease_since_ms, lease_age_s, driver), carry the pool over when this pass
 * could not read it, take in the daemons' events (obs_collect_with) and
 * derive events from the change since the previous one, and add "events"
 * (the most recent) and "events_next". 0 or -ENOMEM. Not
 * thread-safe: one caller at a time.
 */
int obs_track(struct obs_tracker *t, struct json_object *snap);
/*
 * Where host's daemon event log is to be read from (EVENTS' since): the
 * cursor obs_track left, or, on first sight of the daemon (a new pid: it
 * restarted), its last OBS_BACKLOG events. last: the daemon's newest seq.
 */
#define OBS_BACKLOG 32
uint64_t obs_track_since(const struct obs_tracker *t, uint32_t host, uint32_t pid, uint64_t last);
/* An event of our own (an action's result); kind is a short word. */
void obs_track_event(struct obs_tracker *t, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The driver bound to a device we borrowed (LEND_BORROW's reply); NULL: none. */
void obs_track_driver(struct obs_tracker *t, uint32_t fdid, const char *driver);

/* The snapshot in Prometheus text exposition format 0.0.4; malloc'd, or NULL. */
char *obs_metrics(struct json_object *snap);

#endif
