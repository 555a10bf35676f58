// SPDX-License-Identifier: MIT
/*
 * Route resolution cost, cached and uncached, for the three kinds of path a
 * composition uses: local RAM, peer-to-peer under a switch, and a borrower's
 * NTB window into a lender's RAM. In-process (all hosts in one world), so it
 * measures the resolver itself, not the daemons' messages.
 *
 * usage: bench_route [--json] [--iters N]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/models.h"
#include "fabric/ntb.h"
#include "fabric/route.h"
#include "host/enum.h"
#include "util/json_out.h"
#include "util/smio_time.h"

struct path {
	const char *name;
	struct fab_host *h;
	uint16_t rid;
	uint64_t addr;
};

static double measure(const struct path *p, bool cached, unsigned iters)
{
	static struct fab_route r;
	uint64_t sink = 0;
	double t0;

	/* Spread over 64 pages so the cached case exercises lookups, not one line. */
	fab_route_resolve(p->h, p->rid, p->addr, 64, true, &r);
	t0 = smio_now_ns();
	for (unsigned i = 0; i < iters; i++) {
		uint64_t a = p->addr + ((uint64_t)(i & 63) << 12) + (i & 0x3c0);

		if (cached)
			fab_route_resolve(p->h, p->rid, a, 64, true, &r);
		else
			fab_route_resolve_uncached(p->h, p->rid, a, 64, true, &r);
		sink += r.tgt.offset + (uint64_t)r.status;
	}
	if (r.status != FAB_OK) {
		fprintf(stderr, "bench_route: %s does not resolve: %s\n", p->name, r.reason);
		exit(1);
	}
	if (sink == 42)
		fputc(' ', stderr);
	return (smio_now_ns() - t0) / iters;
}

static int path_json(struct json_object *arr, const char *name, double u, double k)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_str(o, "path", name) ||
	    smio_json_add_double(o, "uncached_ns", u, "%.1f") ||
	    smio_json_add_double(o, "cached_ns", k, "%.1f") ||
	    smio_json_add_double(o, "speedup", u / k, "%.2f")) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

int main(int argc, char **argv)
{
	struct topo *t;
	struct fab_cluster *c;
	char err[512];
	bool json = false;
	unsigned iters = 200000;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = (unsigned)strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: bench_route [--json] [--iters N]\n");
			return 2;
		}
	}
	if (topo_load_default(&t, err, sizeof(err)) ||
	    fab_cluster_create(t, dev_endpoint_init, &c, err, sizeof(err))) {
		fprintf(stderr, "bench_route: %s\n", err);
		return 1;
	}
	for (uint32_t i = 0; i < c->nhosts; i++)
		if (host_enumerate(c->hosts[i], err, sizeof(err)) ||
		    host_ntb_init(c->hosts[i], err, sizeof(err))) {
			fprintf(stderr, "bench_route: %s\n", err);
			return 1;
		}
	struct fab_host *b = fab_cluster_host(c, 0), *la = fab_cluster_host(c, 1);
	struct fab_func *g0 = fab_func_by_name(la, "gpu0"), *g1 = fab_func_by_name(la, "gpu1");
	struct fab_ntb *n = b->ntbs[0];

	if (ntb_lut_set(n, 0, 1, 0)) {
		fprintf(stderr, "bench_route: cannot program the LUT\n");
		return 1;
	}
	const struct path paths[] = {
		{ "cpu-local-ram", b, FAB_RID_CPU, 0x100000 },
		{ "p2p-under-switch", la, fab_func_bdf(g0), fab_func_bar_addr(g1, 2) },
		{ "ntb-to-lender-ram", b, FAB_RID_CPU, fab_func_bar_addr(n->fn, NTB_BAR_LUT) },
	};
	struct json_object *root = NULL, *arr = NULL;
	int rc = 0;

	if (json) {
		root = json_object_new_object();
		arr = json_object_new_array();
		if (!root || !arr || smio_json_add_str(root, "benchmark", "route") ||
		    smio_json_add_uint(root, "iters", iters))
			rc = -ENOMEM;
	} else {
		printf("%-20s %12s %12s %8s\n", "path", "uncached ns", "cached ns", "ratio");
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && !rc; i++) {
		double u = measure(&paths[i], false, iters / 4);
		double k = measure(&paths[i], true, iters);

		if (json)
			rc = path_json(arr, paths[i].name, u, k);
		else
			printf("%-20s %12.1f %12.1f %7.1fx\n", paths[i].name, u, k, u / k);
	}
	if (json) {
		if (!rc) {
			rc = smio_json_add(root, "paths", arr);
			arr = NULL;                   /* root holds it, or it was released */
		}
		if (!rc)
			rc = smio_json_print(stdout, root);
		if (rc)
			fprintf(stderr, "bench_route: JSON output: %s\n", strerror(-rc));
		json_object_put(arr);
		json_object_put(root);
	}
	fab_cluster_destroy(c);
	topo_free(t);
	return rc ? 1 : 0;
}
