// SPDX-License-Identifier: MIT
/*
 * What a snapshot cannot say by itself (observe.h): how long a lease has
 * lasted, which driver our own borrow bound, and what changed since the
 * previous snapshot, as a timestamped event log. The daemons keep no lease
 * start time, so a lease's age counts from when this observer first saw it
 * (lease_age_known false for leases older than the observer).
 */
#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "observe.h"

#define EV_MAX   256     /* events kept */
#define EV_SHOW  100     /* events put in each snapshot */
#define NDRV     64

struct lease {
	char fdid[16];
	int64_t borrower;
	int64_t since_ms;
	bool known;              /* began while we watched */
};

struct obs_tracker {
	struct json_object *prev;
	struct json_object *ev[EV_MAX];    /* ring, oldest at head */
	unsigned head, n;
	uint64_t next_seq;
	struct lease *lease;
	size_t nlease, cap;
	struct { char fdid[16]; char driver[SMIO_NAME_MAX]; int64_t noted_ms; } drv[NDRV];
	unsigned ndrv;
};

int obs_tracker_new(struct obs_tracker **t)
{
	*t = calloc(1, sizeof(**t));
	return *t ? 0 : -ENOMEM;
}

void obs_tracker_free(struct obs_tracker *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->n; i++)
		json_object_put(t->ev[(t->head + i) % EV_MAX]);
	json_object_put(t->prev);
	free(t->lease);
	free(t);
}

/* ---------- small readers ---------- */

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v) : NULL;
}

static int64_t jint(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int)
		       ? json_object_get_int64(v) : dflt;
}

static struct json_object *jarr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array)
		       ? v : NULL;
}

/* The element of array arr whose key equals (string s, or integer i). */
static struct json_object *find_by(struct json_object *arr, const char *key, const char *s,
				   int64_t i)
{
	size_t n = arr ? json_object_array_length(arr) : 0;

	for (size_t k = 0; k < n; k++) {
		struct json_object *e = json_object_array_get_idx(arr, k);
		const char *v = s ? jstr(e, key) : NULL;

		if (s ? (v && !strcmp(v, s)) : jint(e, key, -1) == i)
			return e;
	}
	return NULL;
}

/* ---------- events ---------- */

static void event_v(struct obs_tracker *t, const char *kind, const char *fmt, va_list ap)
{
	struct json_object *e = json_object_new_object();
	char text[256];

	vsnprintf(text, sizeof(text), fmt, ap);
	if (!e || smio_json_add_uint(e, "seq", t->next_seq) ||
	    smio_json_add_int(e, "time_ms", obs_now_ms()) || smio_json_add_str(e, "kind", kind) ||
	    smio_json_add_str(e, "text", text)) {
		json_object_put(e);
		return;          /* out of memory: the log misses one line */
	}
	t->next_seq++;
	if (t->n == EV_MAX) {
		json_object_put(t->ev[t->head]);
		t->head = (t->head + 1) % EV_MAX;
		t->n--;
	}
	t->ev[(t->head + t->n++) % EV_MAX] = e;
}

void obs_track_event(struct obs_tracker *t, const char *kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	event_v(t, kind, fmt, ap);
	va_end(ap);
}

/* ---------- drivers and leases ---------- */

static const char *driver_of(struct obs_tracker *t, const char *fdid)
{
	for (unsigned i = 0; i < t->ndrv; i++)
		if (!strcmp(t->drv[i].fdid, fdid))
			return t->drv[i].driver;
	return NULL;
}

/* Forget fdid's driver if noted before the time `before` (ms; INT64_MAX: anyway). */
static void driver_forget(struct obs_tracker *t, const char *fdid, int64_t before)
{
	for (unsigned i = 0; i < t->ndrv; i++)
		if (!strcmp(t->drv[i].fdid, fdid) && t->drv[i].noted_ms < before) {
			t->drv[i] = t->drv[--t->ndrv];
			return;
		}
}

void obs_track_driver(struct obs_tracker *t, uint32_t fdid, const char *driver)
{
	char id[16];

	snprintf(id, sizeof(id), "0x%08x", fdid);
	driver_forget(t, id, INT64_MAX);
	if (driver && t->ndrv < NDRV) {
		t->drv[t->ndrv].noted_ms = obs_now_ms();
		snprintf(t->drv[t->ndrv].fdid, sizeof(t->drv[0].fdid), "%s", id);
		snprintf(t->drv[t->ndrv].driver, sizeof(t->drv[0].driver), "%s", driver);
		t->ndrv++;
	}
}

static struct lease *lease_of(struct obs_tracker *t, const char *fdid)
{
	for (size_t i = 0; i < t->nlease; i++)
		if (!strcmp(t->lease[i].fdid, fdid))
			return &t->lease[i];
	return NULL;
}

/* The lease of a lent device, started now if it is new (or has a new borrower). */
static struct lease *lease_note(struct obs_tracker *t, const char *fdid, int64_t borrower,
				int64_t now)
{
	struct lease *l = lease_of(t, fdid);

	if (l && l->borrower == borrower)
		return l;
	if (!l) {
		if (t->nlease == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;
			struct lease *n = realloc(t->lease, cap * sizeof(*n));

			if (!n)
				return NULL;
			t->lease = n;
			t->cap = cap;
		}
		l = &t->lease[t->nlease++];
	}
	snprintf(l->fdid, sizeof(l->fdid), "%s", fdid);
	l->borrower = borrower;
	l->since_ms = now;
	l->known = t->prev != NULL;
	return l;
}

/*
 * A snapshot taken at snap_ms shows fdid not lent. A driver noted after that
 * came from a borrow that the snapshot's pool query may have missed: kept.
 */
static void lease_end(struct obs_tracker *t, const char *fdid, int64_t snap_ms)
{
	struct lease *l = lease_of(t, fdid);

	if (l)
		*l = t->lease[--t->nlease];
	driver_forget(t, fdid, snap_ms);
}

/* ---------- the diff ---------- */

static void diff_hosts(struct obs_tracker *t, struct json_object *hosts, struct json_object *ph)
{
	size_t n = json_object_array_length(hosts);

	for (size_t i = 0; i < n; i++) {
		struct json_object *h = json_object_array_get_idx(hosts, i), *o, *ads, *pads;
		int64_t id = jint(h, "id", -1);
		const char *st = jstr(h, "state"), *ps;

		o = find_by(ph, "id", NULL, id);
		ps = o ? jstr(o, "state") : NULL;
		if (st && ps && strcmp(st, ps)) {
			if (!strcmp(st, "up"))
				obs_track_event(t, "host-up", "host %lld (%s) is up",
						(long long)id, jstr(h, "name"));
			else
				obs_track_event(t, "host-down", "host %lld (%s) is down: %s",
						(long long)id, jstr(h, "name"),
						jstr(h, "reason") ? jstr(h, "reason") : "?");
		}
		if (!o)
			continue;
		ads = jarr(h, "adapters");
		pads = jarr(o, "adapters");
		for (size_t k = 0; ads && k < json_object_array_length(ads); k++) {
			struct json_object *a = json_object_array_get_idx(ads, k);
			struct json_object *pa = find_by(pads, "ntb", NULL, jint(a, "ntb", -1));
			const char *l = jstr(a, "link"), *pl = pa ? jstr(pa, "link") : NULL;

			/* unknown (host down) is no link event: the host event says it */
			if (l && pl && strcmp(l, pl) && strcmp(l, "unknown") && strcmp(pl, "unknown"))
				obs_track_event(t, !strcmp(l, "up") ? "link-up" : "link-down",
						"host %lld %s: link %s", (long long)id,
						jstr(a, "name"), l);
		}
		{
			struct json_object *f, *pf;
			int64_t tot, ptot;

			if (json_object_object_get_ex(h, "iommu_faults", &f) &&
			    json_object_object_get_ex(o, "iommu_faults", &pf) &&
			    (tot = jint(f, "total", 0)) > (ptot = jint(pf, "total", 0)))
				obs_track_event(t, "iommu-fault", "host %lld: %lld new IOMMU fault%s",
						(long long)id, (long long)(tot - ptot),
						tot - ptot == 1 ? "" : "s");
		}
	}
}

static void diff_devices(struct obs_tracker *t, struct json_object *devs, struct json_object *pd)
{
	size_t n = json_object_array_length(devs);

	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		const char *id = jstr(d, "fdid"), *st = jstr(d, "state"), *name = jstr(d, "name");
		struct json_object *o = id ? find_by(pd, "fdid", id, 0) : NULL;
		const char *ps = o ? jstr(o, "state") : NULL;
		int64_t b = jint(d, "borrower", -1), pb = o ? jint(o, "borrower", -1) : -1;
		int64_t lender = jint(d, "lender", -1);

		if (!id || !st || !ps || (!strcmp(st, ps) && b == pb))
			continue;
		if (!strcmp(ps, "lent"))
			obs_track_event(t, "return", "host %lld returned %s (%s) to host %lld",
					(long long)pb, name, id, (long long)lender);
		else if (!strcmp(ps, "sisci"))
			obs_track_event(t, "sisci", "%s (%s) no longer borrowed through SISCI",
					name, id);
		if (!strcmp(st, "lent"))
			obs_track_event(t, "borrow", "host %lld borrowed %s (%s) from host %lld",
					(long long)b, name, id, (long long)lender);
		else if (!strcmp(st, "sisci"))
			obs_track_event(t, "sisci", "%s (%s) borrowed through SISCI", name, id);
	}
}

/* Lease age and driver on each device; leases that ended are forgotten. */
static int annotate(struct obs_tracker *t, struct json_object *devs, int64_t now, int64_t snap_ms)
{
	size_t n = json_object_array_length(devs);

	for (size_t i = 0; i < n; i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		const char *id = jstr(d, "fdid"), *st = jstr(d, "state"), *drv;
		struct lease *l = NULL;
		int rc;

		if (!id || !st)
			continue;
		if (!strcmp(st, "lent"))
			l = lease_note(t, id, jint(d, "borrower", -1), now);
		else
			lease_end(t, id, snap_ms);
		drv = l ? driver_of(t, id) : NULL;
		json_object_object_del(d, "lease_since_ms");
		json_object_object_del(d, "lease_age_s");
		json_object_object_del(d, "lease_age_known");
		json_object_object_del(d, "driver");
		if (l)
			rc = smio_json_add_int(d, "lease_since_ms", l->since_ms) ||
			     smio_json_add_double(d, "lease_age_s",
						  (double)(now - l->since_ms) / 1e3, "%.1f") ||
			     smio_json_add_bool(d, "lease_age_known", l->known);
		else
			rc = smio_json_add_null(d, "lease_since_ms") ||
			     smio_json_add_null(d, "lease_age_s") ||
			     smio_json_add_null(d, "lease_age_known");
		if (rc || smio_json_add_str(d, "driver", drv))
			return -ENOMEM;
	}
	return 0;
}

static int add_events(struct obs_tracker *t, struct json_object *snap)
{
	struct json_object *arr = json_object_new_array();
	unsigned from = t->n > EV_SHOW ? t->n - EV_SHOW : 0;

	for (unsigned i = from; arr && i < t->n; i++)
		if (smio_json_push(arr, json_object_get(t->ev[(t->head + i) % EV_MAX])))
			return -ENOMEM;
	json_object_object_del(snap, "events");
	json_object_object_del(snap, "events_next");
	if (smio_json_add(snap, "events", arr) || smio_json_add_uint(snap, "events_next",
								     t->next_seq))
		return -ENOMEM;
	return 0;
}

int obs_track(struct obs_tracker *t, struct json_object *snap)
{
	struct json_object *devs = jarr(snap, "devices"), *pdevs = t->prev ? jarr(t->prev, "devices")
									 : NULL;
	int64_t now = obs_now_ms();
	bool stale = false;

	if (!devs && pdevs) {
		/* No daemon gave the pool this time: show the last one, marked stale. */
		struct json_object *copy = NULL;

		if (json_object_deep_copy(pdevs, &copy, NULL) ||
		    smio_json_add(snap, "devices", copy))
			return -ENOMEM;
		devs = copy;
		stale = true;
		if (!json_object_get_boolean(json_object_object_get(t->prev, "pool_stale")))
			obs_track_event(t, "pool", "no daemon answered for the device pool; "
				       "showing the last one");
	}
	if (smio_json_add_bool(snap, "pool_stale", stale))
		return -ENOMEM;
	if (!t->prev) {
		size_t lent = 0, nd = devs ? json_object_array_length(devs) : 0;

		for (size_t i = 0; i < nd; i++)
			lent += jstr(json_object_array_get_idx(devs, i), "state") &&
				!strcmp(jstr(json_object_array_get_idx(devs, i), "state"), "lent");
		obs_track_event(t, "start", "watching cluster '%s' in %s: %lld of %lld hosts up, "
				"%zu devices, %zu lent", jstr(snap, "cluster"), jstr(snap, "dir"),
				(long long)jint(snap, "hosts_up", 0),
				(long long)jint(snap, "hosts_total", 0), nd, lent);
	} else {
		diff_hosts(t, jarr(snap, "hosts"), jarr(t->prev, "hosts"));
		if (devs && pdevs && !stale)
			diff_devices(t, devs, pdevs);
	}
	if (devs && annotate(t, devs, now, jint(snap, "time_ms", now)))
		return -ENOMEM;
	if (add_events(t, snap))
		return -ENOMEM;
	json_object_put(t->prev);
	t->prev = json_object_get(snap);
	return 0;
}
