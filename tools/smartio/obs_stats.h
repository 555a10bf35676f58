/* SPDX-License-Identifier: MIT */
/* The daemons' STATS objects in a snapshot (obs_stats.c), for observe.c. */
#ifndef SMARTIO_CLI_OBS_STATS_H
#define SMARTIO_CLI_OBS_STATS_H

#include <stdint.h>

#include <json-c/json.h>

/* The element of stats[arr] whose key is the string s (or the integer i when s is NULL). */
struct json_object *obs_stats_find(struct json_object *stats, const char *arr, const char *key,
				   const char *s, int64_t i);
/* o[key] as an unsigned integer; 0 when absent. */
uint64_t obs_stat_u(struct json_object *o, const char *key);
/* c[to] = from_obj[from] when the daemon reported it; 0 or -ENOMEM. */
int obs_copy_counter(struct json_object *c, const char *to, struct json_object *from_obj,
		     const char *from);
/* A device's "counters" from its lender's STATS st (NULL: {}), matched by BDF; NULL: no memory. */
struct json_object *obs_device_counters(struct json_object *st, const char *bdf);
/* "driver" and "holders" on o from the borrower's STATS st ("borrowed"), if it lists fdid. */
int obs_borrow_json(struct json_object *o, struct json_object *st, const char *fdid);

#endif
