// SPDX-License-Identifier: MIT
/*
 * Cost of a timing-model query (issue 7 asks for "well under a millisecond
 * per query"): a bare link, a 12-hop back-to-back NTB path and the 30-hop
 * lender-IOMMU path, writes and reads; plus loading the calibration file,
 * which `smartio predict --params` does once per command; and computing every
 * figure of `smartio predict figure all` (bench/figures) once.
 *
 * usage: bench_predict [--json] [--iters N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smartio/timing.h"
#include "util/json_out.h"
#include "util/smio_time.h"

#define DEFAULT_ITERS 200000u

static volatile double sink;

struct kase {
	const char *name;
	unsigned nhops;          /* 0: a bare link query */
	bool write;
};

/* A long path: requester, 28 chip/link hops, root, IOMMU, DRAM. */
static unsigned long_path(const struct timing_params *p, struct timing_hop *h, unsigned n)
{
	unsigned i = 0;

	h[i++] = timing_hop_make(TIMING_HOP_DEVICE, 1, "gpu0");
	while (i + 4 < n) {
		h[i++] = timing_hop_link(TIMING_HOP_LINK, 3, 16, 1);
		timing_hop_chip(p, TIMING_HOP_SWITCH, "PEX8796", 1, &h[i++]);
	}
	timing_hop_chip(p, TIMING_HOP_ROOT, NULL, 0, &h[i++]);
	h[i++] = timing_hop_make(TIMING_HOP_IOMMU, 0, "IOMMU");
	h[i++] = timing_hop_make(TIMING_HOP_MEMORY, 0, "RAM");
	return i;
}

static double measure(const struct timing_params *p, const struct kase *k, unsigned iters)
{
	struct timing_hop h[TIMING_MAX_HOPS];
	struct timing_result r;
	unsigned n = k->nhops ? long_path(p, h, k->nhops) : 0;
	double t0 = smio_now_ns();

	for (unsigned i = 0; i < iters; i++) {
		struct timing_query q = { .size = 64u << (i & 15), .write = k->write };
		int rc = n ? timing_path(p, h, n, &q, &r) : timing_link(p, 3, 8, &q, &r);

		if (rc) {
			fprintf(stderr, "bench_predict: query failed (%d)\n", rc);
			exit(1);
		}
		sink += r.bw_gbs;
	}
	return (smio_now_ns() - t0) / iters;
}

static int print_json(unsigned iters, const struct kase *kases, const double *ns, unsigned nk,
		      double load_ns, double fig_ns)
{
	struct json_object *root = json_object_new_object(), *q = json_object_new_object();
	int rc = -ENOMEM;

	if (!root || !q || smio_json_add_uint(root, "iters", iters))
		goto out;
	for (unsigned k = 0; k < nk; k++) {
		struct json_object *o = json_object_new_object();

		if (!o || smio_json_add_double(o, "ns_per_query", ns[k], "%.1f") ||
		    smio_json_add_double(o, "queries_per_s", 1e9 / ns[k], "%.0f")) {
			json_object_put(o);
			goto out;
		}
		if (smio_json_add(q, kases[k].name, o))     /* it released o */
			goto out;
	}
	rc = smio_json_add(root, "queries", q);
	q = NULL;                               /* root holds it, or it was released */
	if (rc || smio_json_add_double(root, "params_load_ns", load_ns, "%.0f") ||
	    smio_json_add_double(root, "all_figures_ns", fig_ns, "%.0f") ||
	    smio_json_add_uint(root, "figures", timing_figure_count()))
		rc = -ENOMEM;
	else
		rc = smio_json_print(stdout, root);
out:
	if (rc)
		fprintf(stderr, "bench_predict: JSON output: %s\n", strerror(-rc));
	json_object_put(q);
	json_object_put(root);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct kase kases[] = {
		{ "link-write", 0, true }, { "link-read", 0, false },
		{ "path12-write", 12, true }, { "path12-read", 12, false },
		{ "path30-read", 30, false },
	};
	unsigned iters = DEFAULT_ITERS, nk = sizeof(kases) / sizeof(kases[0]);
	struct timing_params p;
	double ns[8], load_ns = 0, fig_ns;
	bool json = false;
	char err[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = (unsigned)strtoul(argv[++i], NULL, 0);
			if (!iters)
				iters = 1;
		} else {
			fprintf(stderr, "usage: bench_predict [--json] [--iters N]\n");
			return 2;
		}
	}
	timing_params_default(&p);
	for (unsigned k = 0; k < nk; k++)
		ns[k] = measure(&p, &kases[k], iters);
	{
		const char *src = getenv("SMARTIO_SOURCE_DIR");
		char path[4096];
		unsigned loads = 200;
		double t0;

		snprintf(path, sizeof(path), "%s/topologies/timing.yaml", src ? src : ".");
		t0 = smio_now_ns();
		for (unsigned i = 0; i < loads; i++)
			if (timing_params_load_file(path, &p, err, sizeof(err))) {
				loads = 0;
				break;
			}
		load_ns = loads ? (smio_now_ns() - t0) / loads : -1;
	}
	{
		static struct timing_figure f;    /* large: not on the stack */
		unsigned reps = iters / 1000 ? iters / 1000 : 1;
		double t0;

		timing_params_default(&p);
		t0 = smio_now_ns();
		for (unsigned i = 0; i < reps; i++)
			for (unsigned k = 0; k < timing_figure_count(); k++) {
				if (timing_figure(&p, k, &f)) {
					fprintf(stderr, "bench_predict: figure %u failed\n", k);
					return 1;
				}
				sink += f.s[0].y[0];
			}
		fig_ns = (smio_now_ns() - t0) / reps;
	}
	if (json)
		return print_json(iters, kases, ns, nk, load_ns, fig_ns);
	for (unsigned k = 0; k < nk; k++)
		printf("%-14s %8.1f ns/query  %12.0f queries/s\n", kases[k].name, ns[k],
		       1e9 / ns[k]);
	if (load_ns >= 0)
		printf("%-14s %8.0f ns (loading topologies/timing.yaml)\n", "params-load", load_ns);
	else
		printf("params-load    skipped (topologies/timing.yaml not found; set "
		       "SMARTIO_SOURCE_DIR): %s\n", err);
	printf("%-14s %8.0f ns (all %u figures of `smartio predict figure`)\n", "figures-all",
	       fig_ns, timing_figure_count());
	return 0;
}
