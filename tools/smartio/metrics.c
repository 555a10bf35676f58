// SPDX-License-Identifier: MIT
/*
 * A snapshot (observe.h) in the Prometheus text exposition format 0.0.4:
 * "# HELP" and "# TYPE" once per metric, then its samples, every metric's
 * samples together. Metrics are smartio_*; labels host="ID", adapter="NAME",
 * fdid="0x...". Every number in a "counters" object of a host, an adapter
 * or a device becomes smartio_host_KEY, smartio_adapter_KEY or
 * smartio_device_KEY (a counter when KEY ends in _total, else a gauge), so
 * counters that the daemons add later are exported with no change here; a
 * counter object of numbers gives one sample per member with a label named
 * by the object (interrupts_total: vector="N", others key="MEMBER").
 * docs/web.md lists the metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe.h"

struct sample {
	char name[96];
	const char *help;        /* static text, or NULL: a generic one */
	bool counter;
	char labels[192];        /* rendered, without braces */
	double v;
	size_t order;            /* insertion order: samples of a metric keep it */
};

struct out {
	struct sample *s;
	size_t n, cap;
	bool oom;
};

static const struct { const char *name, *help; } helps[] = {
	{ "smartio_hosts_up", "Hosts whose daemon answered the last poll." },
	{ "smartio_hosts", "Hosts in the cluster's topology." },
	{ "smartio_host_up", "1 if the host's daemon answered the last poll, else 0." },
	{ "smartio_host_uptime_seconds", "Time since the host's daemon started." },
	{ "smartio_host_functions", "PCI functions of the host." },
	{ "smartio_host_clients", "Client connections the host's daemon serves." },
	{ "smartio_host_peers", "Peer daemon connections of the host." },
	{ "smartio_host_route_hits_total", "Route cache hits of the host's daemon." },
	{ "smartio_host_route_misses_total", "Route cache misses of the host's daemon." },
	{ "smartio_host_iommu_faults_total", "IOMMU translation faults on the host." },
	{ "smartio_adapter_link_up", "1 if the NTB adapter's external link is up, else 0." },
	{ "smartio_adapter_lut_used", "NTB look-up-table windows in use." },
	{ "smartio_adapter_lut_entries", "NTB look-up-table windows of the adapter." },
	{ "smartio_adapter_rid_used", "NTB requester-ID table entries in use." },
	{ "smartio_adapter_rid_entries", "NTB requester-ID table entries of the adapter." },
	{ "smartio_adapter_doorbells_pending", "Doorbell bits set and not yet cleared." },
	{ "smartio_adapter_dma_channels", "DMA channels of the adapter." },
	{ "smartio_adapter_link_errors_total", "Link-down transitions of the NTB adapter." },
	{ "smartio_adapter_link_drops_total",
	  "The host's accesses dropped (or read as all-ones) at the adapter's down link." },
	{ "smartio_adapter_doorbells_total", "Doorbells rung through, or arrived at, the adapter." },
	{ "smartio_host_dma_faults_total", "DMAs of the host's devices that ended in a fabric error." },
	{ "smartio_device_io_total",
	  "I/O commands (NVMe Read, Write, other I/O) or descriptors (accelerator) completed." },
	{ "smartio_device_bytes_total", "Bytes read and written (NVMe) or processed (accelerator)." },
	{ "smartio_device_reads_total", "NVMe Read commands completed." },
	{ "smartio_device_writes_total", "NVMe Write commands completed." },
	{ "smartio_device_admin_commands_total", "NVMe admin commands completed." },
	{ "smartio_device_read_bytes_total", "Bytes read from the NVMe's media." },
	{ "smartio_device_written_bytes_total", "Bytes written to the NVMe's media." },
	{ "smartio_device_errors_total", "Completions with an error status." },
	{ "smartio_device_dma_faults_total", "The device's DMAs that ended in a fabric error." },
	{ "smartio_device_flrs_total", "Function level resets of the device." },
	{ "smartio_device_interrupts_total", "MSI-X messages the device sent, per vector." },
	{ "smartio_cable_up", "1 if every end of the cable reports its link up, else 0." },
	{ "smartio_device_info", "A device of the lending pool (always 1)." },
	{ "smartio_device_state", "1 for the device's current state, 0 for the others." },
	{ "smartio_device_lease_age_seconds", "Age of the device's lease as seen by this observer." },
	{ "smartio_events_total", "Events this observer has logged." },
};

static const char *help_of(const char *name)
{
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (!strcmp(helps[i].name, name))
			return helps[i].help;
	return NULL;
}

/* ---------- building samples ---------- */

/* One label pair appended to buf: key="value" with \\, \" and \n escaped. */
static void label(char *buf, size_t len, const char *key, const char *val)
{
	size_t o = strlen(buf);

	if (o + strlen(key) + 4 >= len)
		return;
	o += (size_t)snprintf(buf + o, len - o, "%s%s=\"", o ? "," : "", key);
	for (const char *p = val ? val : ""; *p && o + 3 < len; p++) {
		if (*p == '\\' || *p == '"' || *p == '\n') {
			buf[o++] = '\\';
			buf[o++] = *p == '\n' ? 'n' : *p;
		} else {
			buf[o++] = *p;
		}
	}
	if (o + 2 <= len) {
		buf[o++] = '"';
		buf[o] = 0;
	}
}

static void sample(struct out *o, const char *prefix, const char *key, const char *labels,
		   double v)
{
	struct sample *s;
	size_t k;

	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		struct sample *n = realloc(o->s, cap * sizeof(*n));

		if (!n) {
			o->oom = true;
			return;
		}
		o->s = n;
		o->cap = cap;
	}
	s = &o->s[o->n];
	snprintf(s->name, sizeof(s->name), "%s%s", prefix, key);
	/* metric names are [a-zA-Z_:][a-zA-Z0-9_:]* */
	for (k = 0; s->name[k]; k++)
		if (!((s->name[k] >= 'a' && s->name[k] <= 'z') ||
		      (s->name[k] >= 'A' && s->name[k] <= 'Z') ||
		      (s->name[k] >= '0' && s->name[k] <= '9') || s->name[k] == '_' ||
		      s->name[k] == ':'))
			s->name[k] = '_';
	k = strlen(s->name);
	s->counter = k > 6 && !strcmp(s->name + k - 6, "_total");
	s->help = help_of(s->name);
	snprintf(s->labels, sizeof(s->labels), "%s", labels);
	s->v = v;
	s->order = o->n++;
}

static bool num(struct json_object *v, double *d)
{
	if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
		*d = json_object_get_double(v);
		return true;
	}
	if (json_object_is_type(v, json_type_boolean)) {
		*d = json_object_get_boolean(v);
		return true;
	}
	return false;
}

/* Every number of o's "counters" (and one level of objects of numbers below it). */
static void counters(struct out *o, struct json_object *obj, const char *prefix,
		     const char *labels)
{
	struct json_object *c;
	double d;

	if (!json_object_object_get_ex(obj, "counters", &c) ||
	    !json_object_is_type(c, json_type_object))
		return;
	json_object_object_foreach(c, key, val) {
		if (num(val, &d)) {
			sample(o, prefix, key, labels, d);
		} else if (json_object_is_type(val, json_type_object)) {
			json_object_object_foreach(val, sub, sv) {
				char l[192];

				snprintf(l, sizeof(l), "%s", labels);
				label(l, sizeof(l), strncmp(key, "interrupts", 10) ? "key" : "vector",
				      sub);
				if (num(sv, &d))
					sample(o, prefix, key, l, d);
			}
		}
	}
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v) : NULL;
}

static void host_samples(struct out *o, struct json_object *h)
{
	struct json_object *ads, *v;
	char l[192] = "", id[24];
	const char *st = str(h, "state");
	double d;

	snprintf(id, sizeof(id), "%" PRId64, json_object_get_int64(json_object_object_get(h, "id")));
	label(l, sizeof(l), "host", id);
	label(l, sizeof(l), "name", str(h, "name"));
	sample(o, "smartio_host_", "up", l, st && !strcmp(st, "up"));
	l[0] = 0;
	label(l, sizeof(l), "host", id);
	if (json_object_object_get_ex(h, "uptime_s", &v) && num(v, &d))
		sample(o, "smartio_host_", "uptime_seconds", l, d);
	counters(o, h, "smartio_host_", l);
	if (!json_object_object_get_ex(h, "adapters", &ads))
		return;
	for (size_t i = 0; i < json_object_array_length(ads); i++) {
		struct json_object *a = json_object_array_get_idx(ads, i);
		const char *link = str(a, "link");
		char al[192];

		snprintf(al, sizeof(al), "%s", l);
		label(al, sizeof(al), "adapter", str(a, "name"));
		if (link && strcmp(link, "unknown"))
			sample(o, "smartio_adapter_", "link_up", al, !strcmp(link, "up"));
		counters(o, a, "smartio_adapter_", al);
	}
}

static void device_samples(struct out *o, struct json_object *d)
{
	static const char *const states[] = { "available", "lent", "sisci", "reserved", "shared" };
	const char *st = str(d, "state");
	struct json_object *v;
	char l[192] = "", il[192], lender[24];
	double age;

	label(l, sizeof(l), "fdid", str(d, "fdid"));
	snprintf(il, sizeof(il), "%s", l);
	snprintf(lender, sizeof(lender), "%" PRId64,
		 json_object_get_int64(json_object_object_get(d, "lender")));
	label(il, sizeof(il), "name", str(d, "name"));
	label(il, sizeof(il), "lender", lender);
	label(il, sizeof(il), "class", str(d, "class"));
	label(il, sizeof(il), "model", str(d, "model"));
	sample(o, "smartio_device_", "info", il, 1);
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		char sl[192];

		snprintf(sl, sizeof(sl), "%s", l);
		label(sl, sizeof(sl), "state", states[i]);
		sample(o, "smartio_device_", "state", sl, st && !strcmp(st, states[i]));
	}
	if (json_object_object_get_ex(d, "lease_age_s", &v) && num(v, &age)) {
		char bl[192], b[24];

		snprintf(bl, sizeof(bl), "%s", l);
		snprintf(b, sizeof(b), "%" PRId64,
			 json_object_get_int64(json_object_object_get(d, "borrower")));
		label(bl, sizeof(bl), "borrower", b);
		sample(o, "smartio_device_", "lease_age_seconds", bl, age);
	}
	counters(o, d, "smartio_device_", l);
}

/* ---------- rendering ---------- */

static int cmp(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static void value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(f, "%" PRId64, (int64_t)v);
	else
		fprintf(f, "%.15g", v);
}

char *obs_metrics(struct json_object *snap)
{
	struct out o = { 0 };
	struct json_object *arr, *v;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	double d;

	if (json_object_object_get_ex(snap, "hosts_up", &v) && num(v, &d))
		sample(&o, "smartio_", "hosts_up", "", d);
	if (json_object_object_get_ex(snap, "hosts_total", &v) && num(v, &d))
		sample(&o, "smartio_", "hosts", "", d);
	if (json_object_object_get_ex(snap, "events_next", &v) && num(v, &d))
		sample(&o, "smartio_", "events_total", "", d);
	if (json_object_object_get_ex(snap, "hosts", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++)
			host_samples(&o, json_object_array_get_idx(arr, i));
	if (json_object_object_get_ex(snap, "cables", &arr))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			struct json_object *c = json_object_array_get_idx(arr, i);
			const char *st = str(c, "state");
			char l[192] = "";

			label(l, sizeof(l), "cable", str(c, "id"));
			if (st && strcmp(st, "unknown"))
				sample(&o, "smartio_", "cable_up", l, !strcmp(st, "up"));
		}
	if (json_object_object_get_ex(snap, "devices", &arr) &&
	    json_object_is_type(arr, json_type_array))
		for (size_t i = 0; i < json_object_array_length(arr); i++)
			device_samples(&o, json_object_array_get_idx(arr, i));
	if (o.oom || !(f = open_memstream(&buf, &len))) {
		free(o.s);
		return NULL;
	}
	qsort(o.s, o.n, sizeof(*o.s), cmp);
	for (size_t i = 0; i < o.n; i++) {
		const struct sample *s = &o.s[i];

		if (!i || strcmp(s->name, o.s[i - 1].name)) {
			if (s->help)
				fprintf(f, "# HELP %s %s\n", s->name, s->help);
			else
				fprintf(f, "# HELP %s smartio counter %s (from the daemons).\n",
					s->name, s->name);
			fprintf(f, "# TYPE %s %s\n", s->name, s->counter ? "counter" : "gauge");
		}
		fprintf(f, "%s%s%s%s ", s->name, s->labels[0] ? "{" : "", s->labels,
			s->labels[0] ? "}" : "");
		value(f, s->v);
		fputc('\n', f);
	}
	free(o.s);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
