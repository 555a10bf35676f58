// SPDX-License-Identifier: MIT
/*
 * What a snapshot cannot say by itself (observe.h): how long a lease has
 * lasted, which driver our own borrow bound (when the borrower's daemon did
 * not say), and the event log: the daemons' own events (read after a
 * per-host cursor) merged with what changed since the previous snapshot.
 * The daemons keep no lease start time, so a lease's age counts from when
 * this observer first saw it (lease_age_known false for leases older than
 * the observer).
 *
 * De-duplication: a daemon's log is the better record (exact time, seen by
 * the host itself), so an event derived from a snapshot diff is not logged
 * when a daemon that would log the same thing was read in this pass (link
 * and IOMMU-fault changes of that host; a borrow or return when its lender
 * or borrower was read). Lender and borrower both log a borrow and a
 * return: the second of such a pair (same kind and BDF, the two hosts
 * swapped, within DUP_MS) is dropped.
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
#define DUP_MS   5000    /* a lender's and its borrower's record of one borrow */
#define DUP_LOOK 32      /* recent events searched for the pair's first half */

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
	struct cursor { uint32_t host, pid; uint64_t since; } *cur;   /* per daemon read */
	size_t ncur;
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
	free(t->cur);
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

static void ring_add(struct obs_tracker *t, struct json_object *e);

static void event_v(struct obs_tracker *t, const char *kind, const char *fmt, va_list ap)
{
	struct json_object *e = json_object_new_object();
	char text[256];

	vsnprintf(text, sizeof(text), fmt, ap);
	if (!e || smio_json_add_uint(e, "seq", t->next_seq) ||
	    smio_json_add_int(e, "time_ms", obs_now_ms()) || smio_json_add_str(e, "kind", kind) ||
	    smio_json_add_str(e, "source", "observer") || smio_json_add_str(e, "text", text)) {
		json_object_put(e);
		return;          /* out of memory: the log misses one line */
	}
	ring_add(t, e);
}

static void ring_add(struct obs_tracker *t, struct json_object *e)
{
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

/* ---------- the daemons' events ---------- */

static struct cursor *cursor_of(const struct obs_tracker *t, uint32_t host)
{
	for (size_t i = 0; t && i < t->ncur; i++)
		if (t->cur[i].host == host)
			return &t->cur[i];
	return NULL;
}

uint64_t obs_track_since(const struct obs_tracker *t, uint32_t host, uint32_t pid, uint64_t last)
{
	const struct cursor *c = cursor_of(t, host);

	if (!c || c->pid != pid)      /* first sight, or a restarted daemon */
		return last > OBS_BACKLOG ? last - OBS_BACKLOG : 0;
	return c->since > last ? 0 : c->since;   /* beyond last: it restarted */
}

static void cursor_set(struct obs_tracker *t, uint32_t host, uint32_t pid, uint64_t since)
{
	struct cursor *c = cursor_of(t, host), *n;

	if (!c) {
		n = realloc(t->cur, (t->ncur + 1) * sizeof(*n));
		if (!n)
			return;  /* out of memory: the next pass reads the backlog again */
		t->cur = n;
		c = &t->cur[t->ncur++];
		c->host = host;
	}
	c->pid = pid;
	c->since = since;
}

/* The pool device at lender's BDF bdf, from devs (or the previous pool). */
static const char *fdid_at(struct json_object *devs, int64_t lender, const char *bdf)
{
	size_t n = devs ? json_object_array_length(devs) : 0;

	for (size_t i = 0; bdf && i < n; i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		const char *b = jstr(d, "bdf");

		if (jint(d, "lender", -1) == lender && b && !strcmp(b, bdf))
			return jstr(d, "fdid");
	}
	return NULL;
}

static bool lease_kind(const char *k)
{
	return !strcmp(k, "borrow") || !strcmp(k, "return") || !strcmp(k, "reclaim");
}

/* The other half of a lender/borrower pair is among the recent events. */
static bool dup_pair(struct obs_tracker *t, struct json_object *e)
{
	const char *k = jstr(e, "kind"), *bdf = jstr(e, "bdf");
	int64_t h = jint(e, "host", -1), peer = jint(e, "peer_host", -2), ms = jint(e, "time_ms", 0);

	if (!k || !bdf || !lease_kind(k))
		return false;
	for (unsigned i = 0; i < t->n && i < DUP_LOOK; i++) {
		struct json_object *x = t->ev[(t->head + t->n - 1 - i) % EV_MAX];
		const char *xk = jstr(x, "kind"), *xb = jstr(x, "bdf");
		int64_t d = jint(x, "time_ms", 0) - ms;

		if (xk && xb && !strcmp(xk, k) && !strcmp(xb, bdf) && jint(x, "host", -1) == peer &&
		    jint(x, "peer_host", -2) == h && d < DUP_MS && d > -DUP_MS)
			return true;
	}
	return false;
}

/* One daemon event e (stats.c's form) into the log as "host N: text". */
static void daemon_event(struct obs_tracker *t, struct json_object *e, struct json_object *devs,
			 struct json_object *pdevs)
{
	struct json_object *o = json_object_new_object(), *v;
	const char *kind = jstr(e, "kind"), *bdf = jstr(e, "bdf"), *fdid = NULL;
	int64_t host = jint(e, "host", -1), peer = jint(e, "peer_host", -1);
	char text[256];

	if (!o || !kind)
		goto out;
	/* the lender is the logging host, or (a borrower's record) its peer */
	if (bdf && !(fdid = fdid_at(devs, host, bdf)) && !(fdid = fdid_at(pdevs, host, bdf)) &&
	    lease_kind(kind) && !(fdid = fdid_at(devs, peer, bdf)))
		fdid = fdid_at(pdevs, peer, bdf);
	snprintf(text, sizeof(text), "host %lld: %s%s%s%s", (long long)host, jstr(e, "text"),
		 fdid ? " (" : "", fdid ? fdid : "", fdid ? ")" : "");
	if (smio_json_add_uint(o, "seq", t->next_seq) ||
	    smio_json_add_int(o, "time_ms", jint(e, "time_ns", 0) / 1000000) ||
	    smio_json_add_str(o, "kind", kind) || smio_json_add_str(o, "source", "daemon") ||
	    smio_json_add_int(o, "host", host) || smio_json_add_int(o, "daemon_seq",
								 jint(e, "seq", 0)) ||
	    smio_json_add_str(o, "text", text) || (fdid && smio_json_add_str(o, "fdid", fdid)))
		goto out;
	/* the kind's own fields (bdf, peer_host, adapter, rid, ...) as the daemon gave them */
	json_object_object_foreach(e, key, val) {
		if (json_object_object_get_ex(o, key, &v) || !strcmp(key, "time_ns") ||
		    !strcmp(key, "time") || !strcmp(key, "seq"))
			continue;
		if (smio_json_add(o, key, json_object_get(val)))
			goto out;
	}
	if (dup_pair(t, o))
		goto out;
	ring_add(t, o);
	return;
out:
	json_object_put(o);
}

static int by_time(const void *a, const void *b)
{
	int64_t x = jint(*(struct json_object *const *)a, "time_ns", 0),
		y = jint(*(struct json_object *const *)b, "time_ns", 0);

	return (x > y) - (x < y);
}

/*
 * Take each host's "daemon_events" out of snap into the log (oldest first
 * over all hosts) and move its cursor on. logged[i]: host i's log was read.
 */
static void daemon_events(struct obs_tracker *t, struct json_object *snap, bool *logged)
{
	struct json_object *hosts = jarr(snap, "hosts"), **all = NULL;
	size_t n = hosts ? json_object_array_length(hosts) : 0, m = 0, cap = 0;

	for (size_t i = 0; i < n; i++) {
		struct json_object *h = json_object_array_get_idx(hosts, i), *ev = jarr(h, "daemon_events");
		size_t k = ev ? json_object_array_length(ev) : 0;

		if (!ev)
			continue;
		logged[i] = true;
		cursor_set(t, (uint32_t)jint(h, "id", 0), (uint32_t)jint(h, "pid", 0),
			   (uint64_t)jint(h, "daemon_events_next", 0));
		if (m + k > cap) {
			struct json_object **a = realloc(all, (m + k) * sizeof(*a));

			if (!a)
				continue;     /* out of memory: these events are missed */
			all = a;
			cap = m + k;
		}
		for (size_t j = 0; j < k; j++)
			all[m++] = json_object_get(json_object_array_get_idx(ev, j));
	}
	if (m)
		qsort(all, m, sizeof(*all), by_time);
	for (size_t i = 0; i < m; i++) {
		daemon_event(t, all[i], jarr(snap, "devices"), t->prev ? jarr(t->prev, "devices")
									: NULL);
		json_object_put(all[i]);
	}
	free(all);
	for (size_t i = 0; i < n; i++) {
		json_object_object_del(json_object_array_get_idx(hosts, i), "daemon_events");
		json_object_object_del(json_object_array_get_idx(hosts, i), "daemon_events_next");
	}
}

/* Host id's log was read in this pass. */
static bool host_logged(struct json_object *snap, const bool *logged, int64_t id)
{
	struct json_object *hosts = jarr(snap, "hosts");

	for (size_t i = 0; hosts && i < json_object_array_length(hosts); i++)
		if (jint(json_object_array_get_idx(hosts, i), "id", -1) == id)
			return logged[i];
	return false;
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

static void diff_hosts(struct obs_tracker *t, struct json_object *hosts, struct json_object *ph,
		       const bool *logged)
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

			/* unknown (host down) is no link event: the host event says it;
			 * a host whose log was read says it itself */
			if (!logged[i] && l && pl && strcmp(l, pl) && strcmp(l, "unknown") &&
			    strcmp(pl, "unknown"))
				obs_track_event(t, !strcmp(l, "up") ? "link-up" : "link-down",
						"host %lld %s: link %s", (long long)id,
						jstr(a, "name"), l);
		}
		{
			struct json_object *f, *pf;
			int64_t tot, ptot;

			if (!logged[i] && json_object_object_get_ex(h, "iommu_faults", &f) &&
			    json_object_object_get_ex(o, "iommu_faults", &pf) &&
			    (tot = jint(f, "total", 0)) > (ptot = jint(pf, "total", 0)))
				obs_track_event(t, "iommu-fault", "host %lld: %lld new IOMMU fault%s",
						(long long)id, (long long)(tot - ptot),
						tot - ptot == 1 ? "" : "s");
		}
	}
}

static void diff_devices(struct obs_tracker *t, struct json_object *devs, struct json_object *pd,
			 struct json_object *snap, const bool *logged)
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
		/* the lender's (or a borrower's) own log tells lends and returns */
		if (host_logged(snap, logged, lender) ||
		    (!strcmp(ps, "lent") && host_logged(snap, logged, pb)) ||
		    (!strcmp(st, "lent") && host_logged(snap, logged, b)))
			ps = !strcmp(ps, "lent") ? "" : ps, st = !strcmp(st, "lent") ? "" : st;
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
		/* the borrower's daemon said (observe.c), else what our own borrow saw */
		drv = l && !json_object_object_get_ex(d, "driver", NULL) ? driver_of(t, id) : NULL;
		json_object_object_del(d, "lease_since_ms");
		json_object_object_del(d, "lease_age_s");
		json_object_object_del(d, "lease_age_known");
		if (!l || !json_object_object_get_ex(d, "driver", NULL))
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
		if (rc || (!json_object_object_get_ex(d, "driver", NULL) &&
			   smio_json_add_str(d, "driver", drv)))
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

static int track_rest(struct obs_tracker *t, struct json_object *snap, struct json_object *devs,
		      struct json_object *pdevs, int64_t now, const bool *logged)
{
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
		diff_hosts(t, jarr(snap, "hosts"), jarr(t->prev, "hosts"), logged);
		if (devs && pdevs && !stale)
			diff_devices(t, devs, pdevs, snap, logged);
	}
	if (devs && annotate(t, devs, now, jint(snap, "time_ms", now)))
		return -ENOMEM;
	if (add_events(t, snap))
		return -ENOMEM;
	json_object_put(t->prev);
	t->prev = json_object_get(snap);
	return 0;
}

int obs_track(struct obs_tracker *t, struct json_object *snap)
{
	struct json_object *devs = jarr(snap, "devices"), *pdevs = t->prev ? jarr(t->prev, "devices")
									 : NULL;
	struct json_object *hosts = jarr(snap, "hosts");
	size_t nh = hosts ? json_object_array_length(hosts) : 0;
	bool *logged = calloc(nh + 1, sizeof(*logged));
	int64_t now = obs_now_ms();
	int rc;

	if (!logged)
		return -ENOMEM;
	daemon_events(t, snap, logged);
	rc = track_rest(t, snap, devs, pdevs, now, logged);
	free(logged);
	return rc;
}
