/* SPDX-License-Identifier: MIT */
/*
 * A host's counters and event log as JSON (stats.c), for `smartio diag`,
 * `smartio events`, `cluster status` and the live views. fd is a connected
 * daemon socket that has said HELLO (cli_connect, cli_open_host). The
 * objects' schema is docs/protocol.md's "Diagnostics".
 */
#ifndef SMARTIO_CLI_STATS_H
#define SMARTIO_CLI_STATS_H

#include <stdint.h>

#include "util/json_out.h"

/* STATS: the host's counters, a new object to *out. 0 or -errno (-EPROTO: not JSON). */
int cli_stats_fetch(int fd, struct json_object **out);

/*
 * EVENTS: the events with seq > since, oldest first, as a new array to *out
 * (at most SMIO_EVENTS_MAX of them: call again with *next until it comes
 * back empty). *next is the since of the next call; when it comes back
 * smaller than since (0), the daemon's newest event is older than since: it
 * restarted and numbers from 1 again, so a poller starts over from 0.
 * 0 or -errno.
 */
int cli_events_fetch(int fd, uint64_t since, struct json_object **out, uint64_t *next);

/* "start", "borrow", ... for an enum smio_event_kind; "?" for others. */
const char *cli_event_kind_name(uint32_t kind);

#endif
