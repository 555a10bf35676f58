/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics (CORE family): a host's counters as JSON (STATS), clearing them
 * (STATS_CLEAR) and its daemon's event log (EVENTS). docs/protocol.md.
 */
#ifndef SMARTIO_PROTO_DIAG_H
#define SMARTIO_PROTO_DIAG_H

#include <stdint.h>

/* STATS request: flags must be 0 (room for selectors later). */
struct smio_stats_req {
	uint32_t flags;
	uint32_t pad;
};

/*
 * STATS reply: len bytes of JSON text follow (one object; no NUL byte, not
 * NUL-terminated), the whole reply at most SMIO_MAX_PAYLOAD. The schema is
 * in docs/protocol.md ("Diagnostics").
 */
struct smio_stats {
	uint32_t len;
	uint32_t pad;
};

/* What an event records (struct smio_event.kind). */
enum smio_event_kind {
	SMIO_EV_START = 1,       /* the daemon started */
	SMIO_EV_BORROW,          /* lent / borrowed (a: BDF on the lender, b: the other host) */
	SMIO_EV_RETURN,          /* returned (a, b: as BORROW) */
	SMIO_EV_RECLAIM,         /* a lend ended without a return: the other host went (a, b) */
	SMIO_EV_LINK_UP,         /* an NTB adapter's link came up (a: adapter index) */
	SMIO_EV_LINK_DOWN,       /* an NTB adapter's link went down (a: adapter index) */
	SMIO_EV_IOMMU_FAULT,     /* IOMMU faults were recorded (a: requester ID, b: address) */
	SMIO_EV_DEV_FAULT,       /* a function level reset by a config write (a: BDF) */
	SMIO_EV_KIND_END         /* one past the last kind */
};

#define SMIO_EVENT_TEXT  96
struct smio_event {
	uint64_t seq;            /* 1, 2, ... over the daemon's life */
	uint64_t time_ns;        /* CLOCK_REALTIME */
	uint32_t kind;           /* enum smio_event_kind */
	uint32_t host;           /* the host whose daemon logged it */
	uint64_t a, b;           /* per kind, above */
	char text[SMIO_EVENT_TEXT];  /* human-readable, NUL-terminated */
};

/* EVENTS request: events with seq > since, at most max (1..SMIO_EVENTS_MAX). */
#define SMIO_EVENTS_MAX  256
struct smio_events_req {
	uint64_t since;
	uint32_t max;
	uint32_t pad;
};

/*
 * EVENTS reply, followed by n events in increasing seq. next: the since of
 * the next request (the last seq returned, or since when none was); first,
 * last: the oldest and newest seq the log still holds (0, 0: empty). A
 * since beyond last means the daemon restarted (its seqs began anew).
 */
struct smio_events {
	uint64_t next;
	uint64_t first, last;
	uint32_t n;
	uint32_t pad;
	/* struct smio_event ev[n]; */
};

#endif
