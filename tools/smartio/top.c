// SPDX-License-Identifier: MIT
/*
 * smartio top: the essentials of `smartio web` in a terminal (docs/cli.md):
 * hosts, adapters and their links, the device pool with lender -> borrower
 * and lease age, IOMMU faults and the recent events, redrawn with plain ANSI
 * escapes every --interval seconds; --once prints once (for scripts and
 * tests), --json prints the snapshot (docs/web.md, "Snapshot") instead.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "observe.h"

#define TOP_EVENTS 10

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio top [--dir DIR] [--interval S] [--once] [--json]\n\n"
		"The cluster at a glance, refreshed every S seconds (default 1) until ^C:\n"
		"hosts and their adapters' links, the device pool (lender -> borrower, lease\n"
		"age, path, bound driver, I/O and bytes), IOMMU faults and recent events (the\n"
		"daemons' own and what changed). Lease ages count from when top first saw\n"
		"the lease ('>=' before an age it cannot know).\n"
		"  --once   print once and exit (exit 3 if a host is down, like cluster status)\n"
		"  --json   print the snapshot as JSON (one line per refresh; docs/web.md)\n");
}

static const char *s_(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v) : "-";
}

static int64_t i_(struct json_object *o, const char *k, int64_t d)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) &&
			       (json_object_is_type(v, json_type_int) ||
				json_object_is_type(v, json_type_double))
		       ? json_object_get_int64(v) : d;
}

static struct json_object *a_(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_array)
		       ? v : NULL;
}

#define EACH(arr, i, e)                                                              \
	for (size_t i = 0; (arr) && i < json_object_array_length(arr); i++)          \
		for (struct json_object *e = json_object_array_get_idx(arr, i); e; e = NULL)

static void age_str(char *b, size_t n, struct json_object *d)
{
	struct json_object *v;
	double s;

	if (!json_object_object_get_ex(d, "lease_age_s", &v) || !json_object_is_type(v, json_type_double)) {
		snprintf(b, n, "-");
		return;
	}
	s = json_object_get_double(v);
	snprintf(b, n, "%s%.0fm%02.0fs", json_object_get_boolean(json_object_object_get(
						  d, "lease_age_known")) ? "" : ">=",
		 (double)(int64_t)(s / 60), s - 60 * (double)(int64_t)(s / 60));
}

static void human_bytes(char *b, size_t n, int64_t v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	unsigned u = 0;

	while (x >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		x /= 1024;
		u++;
	}
	snprintf(b, n, u ? "%.1f %s" : "%.0f %s", x, unit[u]);
}

static void print_counters(FILE *f, struct json_object *o)
{
	struct json_object *c;

	if (!json_object_object_get_ex(o, "counters", &c) || !json_object_is_type(c, json_type_object))
		return;
	json_object_object_foreach(c, key, val)
		if (json_object_is_type(val, json_type_int))
			fprintf(f, " %s=%" PRId64, key, json_object_get_int64(val));
}

static void render(FILE *f, struct json_object *s, bool ansi)
{
	struct json_object *hosts = a_(s, "hosts"), *devs = a_(s, "devices"), *ev = a_(s, "events");
	time_t now = time(NULL);
	char when[32];
	size_t nev;

	strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
	if (ansi)
		fputs("\033[H\033[2J", f);
	fprintf(f, "smartio top - cluster '%s' - %" PRId64 " of %" PRId64 " hosts up - %s\n\n",
		s_(s, "cluster"), i_(s, "hosts_up", 0), i_(s, "hosts_total", 0), when);
	fprintf(f, "%-5s %-12s %-5s %-9s %s\n", "HOST", "NAME", "STATE", "UPTIME", "ADAPTERS");
	EACH(hosts, i, h) {
		const char *st = s_(h, "state");

		char up[24] = "-";

		if (i_(h, "uptime_s", -1) >= 0)
			snprintf(up, sizeof(up), "%" PRId64 "s", i_(h, "uptime_s", 0));
		fprintf(f, "%-5" PRId64 " %-12s %s%-5s%s %9s ", i_(h, "id", -1), s_(h, "name"),
			ansi ? (!strcmp(st, "up") ? "\033[32m" : "\033[31m") : "", st,
			ansi ? "\033[0m" : "", up);
		EACH(a_(h, "adapters"), k, a) {
			const char *l = s_(a, "link");
			struct json_object *c = json_object_object_get(a, "counters");

			fprintf(f, "%s%s %s%s%s", k ? ", " : "", s_(a, "name"),
				ansi && !strcmp(l, "down") ? "\033[31m" : "", l,
				ansi && !strcmp(l, "down") ? "\033[0m" : "");
			if (c && json_object_object_get(c, "lut_used"))
				fprintf(f, " (LUT %" PRId64 "/%" PRId64 ", RID %" PRId64 "/%" PRId64 ")",
					i_(c, "lut_used", 0), i_(c, "lut_entries", 0),
					i_(c, "rid_used", 0), i_(c, "rid_entries", 0));
		}
		fputc('\n', f);
	}
	fprintf(f, "\n%-10s %-8s %-6s %-9s %-9s %-12s %-9s %-8s %-8s %8s %9s\n", "FDID", "NAME",
		"MODEL", "LENDER", "STATE", "BORROWER", "AGE", "PATH", "DRIVER", "IO", "BYTES");
	EACH(devs, i, d) {
		const char *st = s_(d, "state"), *ps = s_(d, "path_state");
		struct json_object *c = json_object_object_get(d, "counters");
		char who[24] = "-", age[24], io[24] = "-", bytes[24] = "-";

		if (!strcmp(st, "lent"))
			snprintf(who, sizeof(who), "-> host %" PRId64, i_(d, "borrower", -1));
		else if (!strcmp(st, "shared"))   /* cZodiac: the USER, through the IOPort */
			snprintf(who, sizeof(who), "=> host %" PRId64, i_(d, "borrower", -1));
		else if (!strcmp(st, "sisci"))
			snprintf(who, sizeof(who), "%" PRId64 " sisci", i_(d, "sisci_borrows", 0));
		age_str(age, sizeof(age), d);
		/* the lender daemon's counters of the device (absent: it did not answer) */
		if (c && json_object_object_get(c, "io_total")) {
			snprintf(io, sizeof(io), "%" PRId64, i_(c, "io_total", 0));
			human_bytes(bytes, sizeof(bytes), i_(c, "bytes_total", 0));
		}
		fprintf(f, "%-10s %-8s %-6s host %-4" PRId64 " %-9s %-12s %-9s %s%-8s%s %-8s %8s %9s\n",
			s_(d, "fdid"), s_(d, "name"), s_(d, "model"), i_(d, "lender", -1), st, who, age,
			ansi && !strcmp(ps, "down") ? "\033[31m" : "", ps,
			ansi && !strcmp(ps, "down") ? "\033[0m" : "", s_(d, "driver"), io, bytes);
	}
	if (!devs)
		fprintf(f, "(no daemon answered for the pool)\n");
	else if (json_object_get_boolean(json_object_object_get(s, "pool_stale")))
		fprintf(f, "(pool from an earlier poll: no daemon answered this time)\n");
	fprintf(f, "\nIOMMU faults:");
	EACH(hosts, i, h) {
		struct json_object *fl = json_object_object_get(h, "iommu_faults");

		if (fl)
			fprintf(f, "  host %" PRId64 ": %" PRId64, i_(h, "id", -1), i_(fl, "total", 0));
	}
	fputc('\n', f);
	EACH(hosts, i, h) {
		struct json_object *c = json_object_object_get(h, "counters");

		if (c && json_object_object_length(c)) {
			fprintf(f, "host %" PRId64 ":", i_(h, "id", -1));
			print_counters(f, h);
			fputc('\n', f);
		}
	}
	nev = ev ? json_object_array_length(ev) : 0;
	fprintf(f, "\nRecent events:\n");
	for (size_t i = nev > TOP_EVENTS ? nev - TOP_EVENTS : 0; i < nev; i++) {
		struct json_object *e = json_object_array_get_idx(ev, i);
		time_t t = (time_t)(i_(e, "time_ms", 0) / 1000);
		char ts[32];

		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&t));
		fprintf(f, "  %s.%03" PRId64 " %-11s %s\n", ts, i_(e, "time_ms", 0) % 1000,
			s_(e, "kind"), s_(e, "text"));
	}
	fflush(f);
}

int cmd_top(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", required_argument, NULL, 'D' }, { "interval", required_argument, NULL, 'i' },
		{ "once", no_argument, NULL, 'o' }, { "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	const char *dir_opt = NULL;
	char dir[PATH_MAX];
	struct obs_tracker *trk;
	bool once = false, json = false, ansi = isatty(STDOUT_FILENO);
	uint64_t interval_ns = 1000000000ull;
	struct topo *t;
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'D': dir_opt = optarg; break;
		case 'i':
			if (cli_parse_duration(optarg, &interval_ns) || interval_ns < 100000000ull) {
				cli_err("top: --interval wants seconds (at least 0.1), not '%s'", optarg);
				return 2;
			}
			break;
		case 'o': once = true; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		cli_err("top: unexpected argument '%s' (see 'smartio top --help')", argv[optind]);
		return 2;
	}
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)) || cli_cluster_topo(dir, &t))
		return 1;
	topo_free(t);
	if (obs_tracker_new(&trk))
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop) {
		struct json_object *snap;
		struct timespec ts = { (time_t)(interval_ns / 1000000000ull),
				       (long)(interval_ns % 1000000000ull) };

		rc = obs_collect_with(dir, OBS_TIMEOUT_MS, trk, &snap);
		if (!rc && (rc = obs_track(trk, snap)) == 0) {
			if (json)
				rc = cli_json_print(snap);
			else
				render(stdout, snap, ansi && !once);
			if (once && !rc && i_(snap, "hosts_up", 0) != i_(snap, "hosts_total", 0))
				rc = 3;
		}
		json_object_put(snap);
		if (rc < 0)
			cli_err("top: %s", rc == -ENOENT ? "the cluster is gone" : strerror(-rc));
		if (once || rc < 0)
			break;
		nanosleep(&ts, NULL);
	}
	obs_tracker_free(trk);
	return rc < 0 ? 1 : rc;
}
