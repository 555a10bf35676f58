// SPDX-License-Identifier: MIT
/*
 * smartio diag: each host's error and activity counters (adapters: link
 * state, link errors, dropped accesses, doorbells, LUT and requester-ID use;
 * devices: commands, bytes, errors, DMA faults, interrupts per vector; the
 * host: IOMMU and DMA faults), --clear to zero them.
 * smartio events: each daemon's event log (borrow, return, reclaim, link
 * changes, faults, starts). Both read the daemons through stats.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "stats.h"

struct diag_opts {
	const char *host_opt, *dir_opt;
	bool all, clear, json;
	uint64_t since;
	char dir[PATH_MAX];
	struct topo *t;
	uint32_t hosts[256];
	unsigned nhosts;
};

static void diag_usage(FILE *f)
{
	fprintf(f, "usage: smartio diag [--host N | --all] [--clear] [--json] [--dir DIR]\n\n"
		   "Each host's counters, read from its daemon: per NTB adapter its link state,\n"
		   "link errors (link-down transitions), accesses dropped while the link was\n"
		   "down, doorbells, LUT and requester-ID entries in use; per device function its\n"
		   "commands (NVMe: admin/read/write/other; accelerator: operations), bytes,\n"
		   "error completions, DMA faults and interrupts per vector; per host its IOMMU\n"
		   "and DMA faults. Default: every host ($SMARTIO_HOST's alone if set).\n"
		   "  --host N   only host N\n"
		   "  --all      every host of the cluster\n"
		   "  --clear    set the counters to zero (the cluster owner only)\n"
		   "  --json     one JSON object: {\"hosts\": [STATS objects]} (docs/protocol.md)\n"
		   "  --dir DIR  the cluster directory\n"
		   "Exit status: 0, 1 if a host could not be read or cleared, 2 usage.\n");
}

static void events_usage(FILE *f)
{
	fprintf(f, "usage: smartio events [--host N | --all] [--since SEQ] [--json] [--dir DIR]\n\n"
		   "Each daemon's event log (the last 1024 events): starts, borrows and returns,\n"
		   "reclaims, link up/down, IOMMU faults, device faults. Default: every host\n"
		   "($SMARTIO_HOST's alone if set), merged in time order.\n"
		   "  --host N     only host N\n"
		   "  --all        every host of the cluster\n"
		   "  --since SEQ  only events numbered above SEQ (numbers are per daemon)\n"
		   "  --json       {\"hosts\": [{\"host\", \"next\", \"events\": [...]}]}\n"
		   "  --dir DIR    the cluster directory\n"
		   "Exit status: 0, 1 if a host could not be read, 2 usage.\n");
}

static int parse(int argc, char **argv, struct diag_opts *o, bool events)
{
	static const struct option lo[] = {
		{ "host", required_argument, NULL, 'H' }, { "all", no_argument, NULL, 'a' },
		{ "dir", required_argument, NULL, 'D' }, { "json", no_argument, NULL, 'j' },
		{ "clear", no_argument, NULL, 'c' }, { "since", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	void (*usage)(FILE *) = events ? events_usage : diag_usage;
	uint32_t host;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'H': o->host_opt = optarg; break;
		case 'a': o->all = true; break;
		case 'D': o->dir_opt = optarg; break;
		case 'j': o->json = true; break;
		case 'c':
			if (events)
				goto bad;
			o->clear = true;
			break;
		case 's':
			if (!events || cli_parse_u64(optarg, &o->since)) {
				cli_err("--since wants an event number, not '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || (o->all && o->host_opt)) {
		if (o->all && o->host_opt)
			cli_err("--host and --all exclude each other");
		goto bad;
	}
	if (cli_cluster_dir(o->dir_opt, o->dir, sizeof(o->dir))) {
		cli_err("cluster directory name too long");
		return 2;
	}
	if (cli_cluster_topo(o->dir, &o->t))
		return 1;
	if (o->host_opt || (!o->all && getenv("SMARTIO_HOST"))) {
		if (cli_host_arg(o->host_opt, &host))
			return 2;
		if (topo_host_index(o->t, host) < 0) {
			cli_err("the cluster in %s has no host %u", o->dir, host);
			return 2;
		}
		o->hosts[o->nhosts++] = host;
		return -1;
	}
	for (uint32_t i = 0; i < o->t->nhosts && o->nhosts < 256; i++)
		o->hosts[o->nhosts++] = o->t->hosts[i].id;
	return -1;
bad:
	usage(stderr);
	return 2;
}

static uint64_t u(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_uint64(v) : 0;
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : "?";
}

static struct json_object *arr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ?
	       v : NULL;
}

static void print_host(struct json_object *s)
{
	struct json_object *ads = arr(s, "adapters"), *devs = arr(s, "devices");
	size_t na = ads ? json_object_array_length(ads) : 0;
	size_t nd = devs ? json_object_array_length(devs) : 0;

	printf("host %" PRIu64 " (%s): IOMMU faults %" PRIu64 ", DMA faults %" PRIu64 "\n",
	       u(s, "host"), str(s, "name"), u(s, "iommu_faults"), u(s, "dma_faults"));
	if (na)
		printf("  %-8s %-8s %-5s %-7s %9s %7s %9s %7s %7s\n", "ADAPTER", "BDF", "LINK",
		       "PEER", "LINK-ERRS", "DROPPED", "DOORBELLS", "LUT", "RIDS");
	for (size_t i = 0; i < na; i++) {
		struct json_object *a = json_object_array_get_idx(ads, i), *p;
		char peer[16] = "switch", lut[24], rid[24];

		if (json_object_object_get_ex(a, "peer_host", &p) && p)
			snprintf(peer, sizeof(peer), "host %" PRIu64, u(a, "peer_host"));
		else if (!strcmp(str(a, "cable"), "none"))
			snprintf(peer, sizeof(peer), "-");
		snprintf(lut, sizeof(lut), "%" PRIu64 "/%" PRIu64, u(a, "lut_used"),
			 u(a, "lut_total"));
		snprintf(rid, sizeof(rid), "%" PRIu64 "/%" PRIu64, u(a, "rid_used"),
			 u(a, "rid_total"));
		printf("  %-8s %-8s %-5s %-7s %9" PRIu64 " %7" PRIu64 " %9" PRIu64 " %7s %7s\n",
		       str(a, "name"), str(a, "bdf"), str(a, "link"), peer, u(a, "link_errors"),
		       u(a, "link_drops"), u(a, "doorbells"), lut, rid);
	}
	if (nd)
		printf("  %-8s %-8s %-6s %-22s %-21s %6s %10s %s\n", "DEVICE", "BDF", "MODEL",
		       "COMMANDS", "BYTES", "ERRORS", "DMA-FAULTS", "INTERRUPTS (per vector)");
	for (size_t i = 0; i < nd; i++) {
		struct json_object *dv = json_object_array_get_idx(devs, i), *irqs = arr(dv, "irqs");
		char cmds[48], bytes[48], per[96] = "";
		size_t nv = irqs ? json_object_array_length(irqs) : 0, off = 0;

		if (!strcmp(str(dv, "model"), "nvme")) {
			snprintf(cmds, sizeof(cmds), "a%" PRIu64 " r%" PRIu64 " w%" PRIu64 " o%" PRIu64,
				 u(dv, "admin"), u(dv, "read"), u(dv, "write"), u(dv, "other"));
			snprintf(bytes, sizeof(bytes), "r%" PRIu64 " w%" PRIu64, u(dv, "bytes_read"),
				 u(dv, "bytes_written"));
		} else {
			snprintf(cmds, sizeof(cmds), "ops %" PRIu64, u(dv, "ops"));
			snprintf(bytes, sizeof(bytes), "%" PRIu64, u(dv, "bytes"));
		}
		for (size_t v = 0; v < nv && off + 24 < sizeof(per); v++)
			off += (size_t)snprintf(per + off, sizeof(per) - off, "%s%" PRIu64,
						v ? "," : " [", (uint64_t)json_object_get_uint64(
						json_object_array_get_idx(irqs, v)));
		if (nv)
			snprintf(per + off, sizeof(per) - off, "]");
		printf("  %-8s %-8s %-6s %-22s %-21s %6" PRIu64 " %10" PRIu64 " %" PRIu64 "%s\n",
		       str(dv, "name"), str(dv, "bdf"), str(dv, "model"), cmds, bytes,
		       u(dv, "errors"), u(dv, "dma_faults"), u(dv, "interrupts"), per);
	}
}

/* Stands in for a host that did not answer, in --json. */
static struct json_object *error_json(uint32_t host, int rc)
{
	struct json_object *o = json_object_new_object();

	if (o && (smio_json_add_uint(o, "host", host) ||
		  smio_json_add_str(o, "error", cli_strerror(rc)))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int run_diag(struct diag_opts *o)
{
	struct json_object *root = o->json ? json_object_new_object() : NULL;
	struct json_object *hosts = o->json ? json_object_new_array() : NULL;
	int status = 0, rc = 0;

	if (o->json && (!root || !hosts)) {
		json_object_put(root);
		json_object_put(hosts);
		cli_err("diag: %s", strerror(ENOMEM));
		return 1;
	}
	for (unsigned i = 0; i < o->nhosts && !rc; i++) {
		uint32_t h = o->hosts[i];
		int fd = cli_connect(o->dir, h, o->clear ? SMIO_ROLE_ADMIN : SMIO_ROLE_CLIENT);
		struct json_object *s = NULL;
		int r = fd < 0 ? fd : 0;

		if (!r && o->clear)
			r = smio_call(fd, SMIO_STATS_CLEAR, NULL, 0, NULL, 0, NULL, NULL,
				      CLI_TIMEOUT_MS);
		if (!r && !o->clear)
			r = cli_stats_fetch(fd, &s);
		if (fd >= 0)
			close(fd);
		if (r) {
			cli_err("host %u: %s%s", h, cli_strerror(r), o->clear && (r == -EACCES ||
				r == -EPERM) ? " (clearing is the cluster owner's)" : "");
			status = 1;
			if (o->json)
				rc = smio_json_push(hosts, error_json(h, r));
			continue;
		}
		if (o->clear) {
			if (!o->json)
				printf("host %u: counters cleared\n", h);
		} else if (o->json) {
			rc = smio_json_push(hosts, s);
		} else {
			print_host(s);
			json_object_put(s);
		}
	}
	if (o->json) {
		if (!rc) {
			rc = smio_json_add(root, "hosts", hosts);
			hosts = NULL;
		}
		if (!rc)
			rc = cli_json_print(root);
		json_object_put(hosts);
		json_object_put(root);
	}
	if (rc) {
		cli_err("diag: %s", strerror(-rc));
		return 1;
	}
	return status;
}

int cmd_diag(int argc, char **argv)
{
	struct diag_opts o = { 0 };
	int rc = parse(argc, argv, &o, false);

	if (rc < 0)
		rc = run_diag(&o);
	topo_free(o.t);
	return rc;
}

/* Events of every host in one array, by time (each host's come in seq order). */
static int by_time(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	uint64_t tx = u(x, "time_ns"), ty = u(y, "time_ns");

	return tx < ty ? -1 : tx > ty ? 1 : (int)u(x, "host") - (int)u(y, "host");
}

static int host_events(struct diag_opts *o, uint32_t h, struct json_object **evs,
		       uint64_t *next)
{
	int fd = cli_connect(o->dir, h, SMIO_ROLE_CLIENT), rc = fd < 0 ? fd : 0;
	uint64_t since = o->since;

	*evs = json_object_new_array();
	if (!*evs)
		rc = -ENOMEM;
	/* Page through: each reply holds at most SMIO_EVENTS_MAX. */
	while (!rc) {
		struct json_object *page;
		size_t n;

		rc = cli_events_fetch(fd, since, &page, next);
		if (rc)
			break;
		n = json_object_array_length(page);
		for (size_t i = 0; i < n && !rc; i++)
			rc = smio_json_push(*evs, json_object_get(json_object_array_get_idx(page, i)));
		json_object_put(page);
		if (n < SMIO_EVENTS_MAX || *next <= since)
			break;
		since = *next;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static int run_events(struct diag_opts *o)
{
	struct json_object *root = json_object_new_object(), *hosts = json_object_new_array();
	struct json_object *all = json_object_new_array();
	int status = 0, rc = !root || !hosts || !all ? -ENOMEM : 0;

	for (unsigned i = 0; i < o->nhosts && !rc; i++) {
		struct json_object *evs = NULL, *ho;
		uint64_t next = 0;
		int r = host_events(o, o->hosts[i], &evs, &next);

		if (r) {
			cli_err("host %u: %s", o->hosts[i], cli_strerror(r));
			json_object_put(evs);
			status = 1;
			rc = o->json ? smio_json_push(hosts, error_json(o->hosts[i], r)) : 0;
			continue;
		}
		for (size_t k = 0; k < json_object_array_length(evs) && !rc; k++)
			rc = smio_json_push(all, json_object_get(json_object_array_get_idx(evs, k)));
		ho = json_object_new_object();
		if (!ho || smio_json_add_uint(ho, "host", o->hosts[i]) ||
		    smio_json_add_uint(ho, "next", next)) {
			json_object_put(ho);
			json_object_put(evs);
			rc = -ENOMEM;
			break;
		}
		rc = smio_json_add(ho, "events", evs);
		if (!rc)
			rc = smio_json_push(hosts, ho);
		else
			json_object_put(ho);
	}
	if (!rc && o->json) {
		rc = smio_json_add(root, "hosts", hosts);
		hosts = NULL;
		if (!rc)
			rc = cli_json_print(root);
	} else if (!rc) {
		json_object_array_sort(all, by_time);
		printf("%-27s %-4s %-5s %-12s %s\n", "TIME (UTC)", "HOST", "SEQ", "KIND", "TEXT");
		for (size_t k = 0; k < json_object_array_length(all); k++) {
			struct json_object *e = json_object_array_get_idx(all, k);

			printf("%-27s %-4" PRIu64 " %-5" PRIu64 " %-12s %s\n", str(e, "time"),
			       u(e, "host"), u(e, "seq"), str(e, "kind"), str(e, "text"));
		}
	}
	json_object_put(all);
	json_object_put(hosts);
	json_object_put(root);
	if (rc) {
		cli_err("events: %s", strerror(-rc));
		return 1;
	}
	return status;
}

int cmd_events(int argc, char **argv)
{
	struct diag_opts o = { 0 };
	int rc = parse(argc, argv, &o, true);

	if (rc < 0)
		rc = run_events(&o);
	topo_free(o.t);
	return rc;
}
