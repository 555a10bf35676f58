// SPDX-License-Identifier: MIT
/*
 * The daemons' STATS objects (stats.h) in a snapshot (obs_stats.h): the
 * counters of an adapter, a host and a device in the snapshot's names
 * (Prometheus conventions: counters end in _total), and what a borrower
 * says of its borrow.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "obs_stats.h"
#include "util/json_out.h"

/* The element of a STATS array whose key is the string s (or the integer i when s is NULL). */
struct json_object *obs_stats_find(struct json_object *stats, const char *arr, const char *key,
				   const char *s, int64_t i)
{
	struct json_object *a, *e, *v;

	if (!stats || !json_object_object_get_ex(stats, arr, &a) ||
	    !json_object_is_type(a, json_type_array))
		return NULL;
	for (size_t k = 0; k < json_object_array_length(a); k++) {
		e = json_object_array_get_idx(a, k);
		if (!json_object_object_get_ex(e, key, &v))
			continue;
		if (s ? json_object_is_type(v, json_type_string) &&
			!strcmp(json_object_get_string(v), s)
		      : json_object_is_type(v, json_type_int) && json_object_get_int64(v) == i)
			return e;
	}
	return NULL;
}

uint64_t obs_stat_u(struct json_object *o, const char *key)
{
	struct json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
		       ? (uint64_t)json_object_get_int64(v) : 0;
}

/* Counter c[to] = the STATS member from, when the daemon reported it. */
int obs_copy_counter(struct json_object *c, const char *to, struct json_object *from_obj,
		     const char *from)
{
	struct json_object *v;

	if (!from_obj || !json_object_object_get_ex(from_obj, from, &v) ||
	    !json_object_is_type(v, json_type_int))
		return 0;
	return smio_json_add_uint(c, to, (uint64_t)json_object_get_int64(v));
}

/* Interrupts per vector, as an object {"0": n, ...} (metrics: label vector="N"). */
static int irq_counters(struct json_object *c, struct json_object *sd)
{
	struct json_object *irqs, *o = json_object_new_object();
	uint64_t other = obs_stat_u(sd, "irqs_other");
	char k[16];
	int rc = o ? 0 : -ENOMEM;

	if (json_object_object_get_ex(sd, "irqs", &irqs) && json_object_is_type(irqs, json_type_array))
		for (size_t v = 0; !rc && v < json_object_array_length(irqs); v++) {
			snprintf(k, sizeof(k), "%zu", v);
			rc = smio_json_add_uint(o, k, (uint64_t)json_object_get_int64(
							json_object_array_get_idx(irqs, v)));
		}
	if (!rc && other)
		rc = smio_json_add_uint(o, "other", other);
	if (rc) {
		json_object_put(o);
		return rc;
	}
	return smio_json_add(c, "interrupts_total", o);
}

/*
 * A device's counters from its lender's STATS (matched by BDF): I/O and
 * bytes in one form for every model (io_total, bytes_total), the NVMe split
 * by kind, errors, DMA faults, FLRs, interrupts per vector. {} when the
 * lender did not answer STATS.
 */
struct json_object *obs_device_counters(struct json_object *st, const char *bdf)
{
	struct json_object *c = json_object_new_object(),
			   *sd = obs_stats_find(st, "devices", "bdf", bdf, 0), *m;
	bool nvme = sd && json_object_object_get_ex(sd, "model", &m) &&
		    !strcmp(json_object_get_string(m), "nvme");
	int rc = c ? 0 : -ENOMEM;

	if (!rc && sd && nvme)
		rc = smio_json_add_uint(c, "io_total", obs_stat_u(sd, "read") + obs_stat_u(sd, "write") +
							 obs_stat_u(sd, "other")) ||
		     smio_json_add_uint(c, "bytes_total", obs_stat_u(sd, "bytes_read") +
							    obs_stat_u(sd, "bytes_written")) ||
		     obs_copy_counter(c, "reads_total", sd, "read") ||
		     obs_copy_counter(c, "writes_total", sd, "write") ||
		     obs_copy_counter(c, "admin_commands_total", sd, "admin") ||
		     obs_copy_counter(c, "read_bytes_total", sd, "bytes_read") ||
		     obs_copy_counter(c, "written_bytes_total", sd, "bytes_written");
	else if (!rc && sd)
		rc = obs_copy_counter(c, "io_total", sd, "ops") || obs_copy_counter(c, "bytes_total", sd, "bytes");
	if (!rc && sd)
		rc = obs_copy_counter(c, "errors_total", sd, "errors") ||
		     obs_copy_counter(c, "dma_faults_total", sd, "dma_faults") ||
		     obs_copy_counter(c, "flrs_total", sd, "flrs") || irq_counters(c, sd);
	if (rc) {
		json_object_put(c);
		return NULL;
	}
	return c;
}

/*
 * What the borrower's daemon says of its borrow (STATS "borrowed"): the
 * bound driver and the holders. Absent when the borrower did not answer
 * (obs_track then falls back on what it noted itself).
 */
int obs_borrow_json(struct json_object *o, struct json_object *st, const char *fdid)
{
	struct json_object *b = obs_stats_find(st, "borrowed", "fdid", fdid, 0), *v;

	if (!b)
		return 0;
	json_object_object_get_ex(b, "driver", &v);
	return smio_json_add_str(o, "driver", v && json_object_is_type(v, json_type_string) ?
					      json_object_get_string(v) : NULL) ||
	       smio_json_add_uint(o, "holders", obs_stat_u(b, "holders")) ? -ENOMEM : 0;
}
