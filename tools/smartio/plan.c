// SPDX-License-Identifier: MIT
/*
 * smartio plan: which of the pool's devices should host N use for a
 * workload? Ranks every composition (plan_price.c) and explains the choice;
 * `smartio borrow --best` takes the top one (cli_plan_best).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plan.h"

#define DEFAULT_SIZE (1ull << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio plan --need CLASSES --host N --for WORKLOAD [--top K]\n"
		"                    [--size S] [--json] [--params FILE] [--dir DIR]\n\n"
		"Ranks the compositions of the cluster's device pool that host N could use\n"
		"(devices available or already borrowed by N, and N's own), pricing the\n"
		"route each would have with the timing model (docs/timing-model.md).\n"
		"  --need CLASSES  comma list of nvme, accel (repeats allowed: accel,accel)\n"
		"  --for WORKLOAD  p2p-read   the first device reads the second's memory BAR\n"
		"                  p2p-write  the first device writes it (an NVMe read\n"
		"                             command into an accelerator's memory)\n"
		"                  nvme-qd1   4 KiB random read at QD1, queues and data in\n"
		"                             host N's RAM (nvme only)\n"
		"                  bandwidth  large sequential DMA writes to host N's RAM\n"
		"  --top K         show the K best (default 5; 0: all)\n"
		"  --size S        the large transfer of p2p and bandwidth (default 1M)\n"
		"  --params FILE   another timing calibration (default: built-in values)\n"
		"Exit status: 0 a plan, 1 nothing usable (or no cluster), 2 usage error.\n");
}

static void fdid_hex(char *buf, size_t len, uint32_t fdid)
{
	snprintf(buf, len, "0x%08x", fdid);
}

static void devs_text(const struct plan_result *res, const struct plan *pl, unsigned n,
		      char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned k = 0; k < n && o < len; k++) {
		const struct plan_cand *c = &res->cand[pl->dev[k]];

		o += (size_t)snprintf(buf + o, len - o, "%s%s:%s (0x%08x)", k ? " + " : "",
				      c->lender_name, c->name, c->fdid);
	}
}

static const char *cand_state(const struct plan_cand *c)
{
	return c->own ? "own" : c->borrowed ? "borrowed" : "available";
}

/* The one-paragraph explanation of the choice. */
static void explain(const struct plan_req *q, const struct plan_result *res, char *buf,
		    size_t len)
{
	const struct plan *b = &res->plans[0];
	char devs[320];
	size_t o;
	bool lat = q->work == PLAN_NVME_QD1;

	devs_text(res, b, q->nneed, devs, sizeof(devs));
	o = (size_t)snprintf(buf, len,
		"For %s, host %u (%s) should use %s. ", plan_work_names[q->work], q->host,
		res->host_name, devs);
	if (q->work == PLAN_P2P_READ || q->work == PLAN_P2P_WRITE)
		o += (size_t)snprintf(buf + o, len - o, "%s %s %s's memory directly%s: ",
			res->cand[b->dev[0]].name, q->work == PLAN_P2P_READ ? "reads" : "writes",
			res->cand[b->dev[1]].name,
			res->cand[b->dev[0]].own || res->cand[b->dev[1]].own ? "" :
			", the data never passing through the borrower");
	else if (lat)
		o += (size_t)snprintf(buf + o, len - o, "Its command fetch, data and completion "
				      "take ");
	else
		o += (size_t)snprintf(buf + o, len - o, "%s DMA to host %u's RAM takes ",
				      q->nneed > 1 ? "The deciding device's" : "Its", q->host);
	o += (size_t)snprintf(buf + o, len - o,
		"%s (%u hops: %u switch%s, %u NTB%s, %u IOMMU%s, %u root complex%s). "
		"Predicted %.0f ns %s and %.3f GB/s; the bottleneck is %s (%s).",
		b->path, b->nhops, b->switches, b->switches == 1 ? "" : "es", b->ntbs,
		b->ntbs == 1 ? "" : "s", b->iommus, b->iommus == 1 ? "" : "s", b->roots,
		b->roots == 1 ? "" : "es", b->latency_ns,
		lat ? "per 4 KiB read" : q->work == PLAN_P2P_READ ? "per 64-byte read" :
		"one way for 64 bytes", b->bw_gbs, b->bottleneck, b->why);
	if (res->nplans > 1 && o < len) {
		const struct plan *n = &res->plans[1];
		char cmp[96];

		devs_text(res, n, q->nneed, devs, sizeof(devs));
		if (lat)
			snprintf(cmp, sizeof(cmp), "is %.0f ns slower", n->latency_ns - b->latency_ns);
		else
			snprintf(cmp, sizeof(cmp), "reaches %.3f GB/s and %.0f ns", n->bw_gbs,
				 n->latency_ns);
		o += (size_t)snprintf(buf + o, len - o,
			" The next best, %s, %s (%u NTB%s, %u IOMMU%s; bottleneck %s).", devs, cmp,
			n->ntbs, n->ntbs == 1 ? "" : "s", n->iommus, n->iommus == 1 ? "" : "s",
			n->bottleneck);
	}
	for (unsigned i = 0; i < res->nexcl && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s of host %u (0x%08x) %s",
				      i ? "; " : " Left out: ", res->excl[i].name,
				      res->excl[i].lender, res->excl[i].fdid, res->excl[i].why);
	if (res->nexcl && o < len)
		snprintf(buf + o, len - o, ".");
}

static int plan_json(const struct plan_req *q, const struct plan_result *res, unsigned top,
		     const char *why)
{
	struct json_object *root = json_object_new_object(), *arr = json_object_new_array(),
			   *ex = json_object_new_array(), *need = json_object_new_array();
	int rc = root && arr && ex && need ? 0 : -ENOMEM;
	char hex[16];

	for (unsigned i = 0; !rc && i < q->nneed; i++)
		rc = json_object_array_add(need,
					   json_object_new_string(plan_class_names[q->need[i]]));
	for (unsigned i = 0; !rc && i < res->nplans && (!top || i < top); i++) {
		const struct plan *pl = &res->plans[i];
		struct json_object *o = json_object_new_object(), *devs = json_object_new_array();

		rc = o && devs ? 0 : -ENOMEM;
		for (unsigned k = 0; !rc && k < q->nneed; k++) {
			const struct plan_cand *c = &res->cand[pl->dev[k]];
			struct json_object *d = json_object_new_object();

			fdid_hex(hex, sizeof(hex), c->fdid);
			rc = !d || smio_json_add_str(d, "fdid", hex) ||
			     smio_json_add_str(d, "name", c->name) ||
			     smio_json_add_str(d, "class", plan_class_names[c->cls]) ||
			     smio_json_add_uint(d, "lender", c->lender) ||
			     smio_json_add_str(d, "lender_name", c->lender_name) ||
			     smio_json_add_str(d, "state", cand_state(c)) || smio_json_push(devs, d);
			if (rc && d)
				json_object_put(d);
			rc = rc ? -ENOMEM : 0;
		}
		if (!rc)
			rc = smio_json_add(o, "devices", devs) ? -ENOMEM : 0;
		else
			json_object_put(devs);
		if (!rc && (smio_json_add_uint(o, "rank", i + 1) ||
			    smio_json_add_double(o, "latency_ns", pl->latency_ns, "%.1f") ||
			    smio_json_add_double(o, "bw_gbs", pl->bw_gbs, "%.4f") ||
			    smio_json_add_str(o, "bottleneck", pl->bottleneck) ||
			    smio_json_add_str(o, "limit", pl->why) ||
			    smio_json_add_str(o, "path", pl->path) ||
			    smio_json_add_uint(o, "hops", pl->nhops) ||
			    smio_json_add_uint(o, "ntbs", pl->ntbs) ||
			    smio_json_add_uint(o, "iommus", pl->iommus) ||
			    smio_json_add_uint(o, "switches", pl->switches) ||
			    smio_json_add_uint(o, "root_complexes", pl->roots)))
			rc = -ENOMEM;
		if (!rc)
			rc = smio_json_push(arr, o);
		else
			json_object_put(o);
	}
	for (unsigned i = 0; !rc && i < res->nexcl; i++) {
		struct json_object *d = json_object_new_object();

		fdid_hex(hex, sizeof(hex), res->excl[i].fdid);
		rc = !d || smio_json_add_str(d, "fdid", hex) ||
		     smio_json_add_str(d, "name", res->excl[i].name) ||
		     smio_json_add_uint(d, "lender", res->excl[i].lender) ||
		     smio_json_add_str(d, "why", res->excl[i].why) || smio_json_push(ex, d);
		if (rc && d)
			json_object_put(d);
		rc = rc ? -ENOMEM : 0;
	}
	if (!rc && (smio_json_add_uint(root, "host", q->host) ||
		    smio_json_add(root, "need", need) ||
		    (need = NULL, smio_json_add_str(root, "for", plan_work_names[q->work])) ||
		    smio_json_add_uint(root, "size", q->size) ||
		    smio_json_add_uint(root, "candidates", res->ncand) ||
		    smio_json_add(root, "plans", arr) || (arr = NULL, smio_json_add(root, "excluded", ex)) ||
		    (ex = NULL, why ? smio_json_add_str(root, "explain", why)
				    : smio_json_add_null(root, "explain"))))
		rc = -ENOMEM;
	if (!rc)
		rc = cli_json_print(root);
	else
		cli_err("plan: out of memory");
	json_object_put(need);
	json_object_put(arr);
	json_object_put(ex);
	json_object_put(root);
	return rc ? 1 : 0;
}

static void plan_text(const struct plan_req *q, const struct plan_result *res, unsigned top,
		      const char *why)
{
	char devs[320];

	printf("%-4s %-58s %12s %10s  %s\n", "RANK", "DEVICES",
	       q->work == PLAN_NVME_QD1 ? "LATENCY" : q->work == PLAN_P2P_READ ? "RTT (64 B)" :
	       "LAT (64 B)", "GB/s", "BOTTLENECK");
	for (unsigned i = 0; i < res->nplans && (!top || i < top); i++) {
		const struct plan *pl = &res->plans[i];

		devs_text(res, pl, q->nneed, devs, sizeof(devs));
		printf("%-4u %-58s %9.0f ns %10.3f  %s\n", i + 1, devs, pl->latency_ns,
		       pl->bw_gbs, pl->bottleneck);
	}
	if (top && res->nplans > top)
		printf("(%u more; --top 0 shows all)\n", res->nplans - top);
	printf("\n%s\n", why);
}

/* Parse --need; -EINVAL after saying what is valid. */
static int parse_need(const char *s, struct plan_req *q)
{
	char buf[128], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", s);
	q->nneed = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int c = plan_class_parse(tok);

		if (c < 0 || q->nneed == PLAN_MAX_NEED) {
			cli_err(c < 0 ? "plan: unknown class '%s' in --need (valid: nvme, accel)" :
				"plan: at most 4 devices in --need ('%s' is one too many)", tok);
			return -EINVAL;
		}
		q->need[q->nneed++] = c;
	}
	if (!q->nneed)
		return cli_err("plan: --need lists no class (valid: nvme, accel)"), -EINVAL;
	return 0;
}

/* The workload against the need; -EINVAL after saying why. */
static int check_work(const struct plan_req *q)
{
	if ((q->work == PLAN_P2P_READ || q->work == PLAN_P2P_WRITE) && q->nneed != 2) {
		cli_err("plan: --for %s needs exactly two devices (e.g. --need accel,accel)",
			plan_work_names[q->work]);
		return -EINVAL;
	}
	for (unsigned i = 0; q->work == PLAN_NVME_QD1 && i < q->nneed; i++)
		if (q->need[i] != PLAN_NVME) {
			cli_err("plan: --for nvme-qd1 prices NVMe drives only (--need nvme)");
			return -EINVAL;
		}
	return 0;
}

static int bad_work(const char *s)
{
	cli_err("plan: unknown workload '%s' for --for (valid: p2p-read, p2p-write, nvme-qd1, "
		"bandwidth)", s);
	return 2;
}

/* No composition: say so, with what is taken and by whom. */
static void say_nothing(const struct plan_req *q, const struct plan_result *res,
			const char *need, const char *work)
{
	char why[1024] = "";
	size_t o = 0;

	for (unsigned i = 0; i < res->nexcl && o < sizeof(why); i++)
		o += (size_t)snprintf(why + o, sizeof(why) - o, "%s %s of host %u is %s",
				      i ? ";" : ":", res->excl[i].name, res->excl[i].lender,
				      res->excl[i].why);
	cli_err("plan: nothing available to host %u for --need %s --for %s (%u usable device%s)%s",
		q->host, need, work, res->ncand, res->ncand == 1 ? "" : "s", why);
}

static int load_params(const char *file, struct timing_params *p)
{
	char err[512];

	timing_params_default(p);
	if (file && timing_params_load_file(file, p, err, sizeof(err))) {
		cli_err("%s", err);
		return -EINVAL;
	}
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "need", required_argument, NULL, 'n' }, { "host", required_argument, NULL, 'H' },
		{ "for", required_argument, NULL, 'f' }, { "top", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "params", required_argument, NULL, 'P' }, { "dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	const char *need = NULL, *work = NULL, *host_opt = NULL, *dir_opt = NULL, *pfile = NULL;
	struct plan_req q = { .size = DEFAULT_SIZE };
	struct plan_result res;
	struct timing_params p;
	char dir[PATH_MAX], why[2048];
	uint64_t top = 5;
	bool json = false;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n': need = optarg; break;
		case 'H': host_opt = optarg; break;
		case 'f': work = optarg; break;
		case 'D': dir_opt = optarg; break;
		case 'P': pfile = optarg; break;
		case 'j': json = true; break;
		case 't':
			if (cli_parse_u64(optarg, &top) || top > PLAN_MAX_PLANS)
				return cli_err("plan: --top is a number from 0 to %d", PLAN_MAX_PLANS), 2;
			break;
		case 's':
			if (cli_parse_u64(optarg, &q.size) || !q.size || q.size > (1ull << 30))
				return cli_err("plan: --size is 1 byte to 1G"), 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		return cli_err("plan: unexpected argument '%s'", argv[optind]), 2;
	if (!need || !work)
		return cli_err("plan: give --need CLASSES and --for WORKLOAD ('smartio plan "
			       "--help')"), 2;
	if (parse_need(need, &q))
		return 2;
	q.work = plan_work_parse(work);
	if (q.work < 0)
		return bad_work(work);
	if (check_work(&q) || cli_host_arg(host_opt, &q.host) || load_params(pfile, &p))
		return 2;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	q.dir = dir;
	q.p = &p;
	rc = plan_run(&q, &res);
	if (rc)
		return 1;
	if (!res.nplans) {
		say_nothing(&q, &res, need, work);
		plan_result_free(&res);
		return 1;
	}
	explain(&q, &res, why, sizeof(why));
	if (json)
		rc = plan_json(&q, &res, (unsigned)top, why);
	else
		plan_text(&q, &res, (unsigned)top, why);
	plan_result_free(&res);
	return rc;
}

int cli_plan_best(const char *cls, const char *work, const char *host_opt,
		  const char *dir_opt, uint32_t *fdid)
{
	struct plan_req q = { .size = DEFAULT_SIZE, .nneed = 1 };
	struct plan_result res;
	struct timing_params p;
	const struct plan_cand *c;
	char dir[PATH_MAX];

	q.need[0] = plan_class_parse(cls);
	if (q.need[0] < 0)
		return cli_err("borrow --best: unknown class '%s' (valid: nvme, accel)", cls), 2;
	q.work = work ? plan_work_parse(work) : q.need[0] == PLAN_NVME ? PLAN_NVME_QD1 :
		 PLAN_BANDWIDTH;
	if (q.work < 0)
		return bad_work(work);
	if (q.work == PLAN_P2P_READ || q.work == PLAN_P2P_WRITE)
		return cli_err("borrow --best: --for %s needs two devices: 'smartio plan --need "
			       "%s,... --for %s' ranks pairs", work, cls, work), 2;
	if (check_work(&q) || cli_host_arg(host_opt, &q.host))
		return 2;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	timing_params_default(&p);
	q.dir = dir;
	q.p = &p;
	if (plan_run(&q, &res))
		return 1;
	if (!res.nplans) {
		say_nothing(&q, &res, cls, plan_work_names[q.work]);
		plan_result_free(&res);
		return 1;
	}
	c = &res.cand[res.plans[0].dev[0]];
	*fdid = c->fdid;
	printf("best %s for %s at host %u: %s of %s (0x%08x), %.0f ns, %.3f GB/s, bottleneck "
	       "%s\n", cls, plan_work_names[q.work], q.host, c->name, c->lender_name, c->fdid,
	       res.plans[0].latency_ns, res.plans[0].bw_gbs, res.plans[0].bottleneck);
	if (c->own || c->borrowed)
		printf("host %u %s it: nothing to borrow\n", q.host,
		       c->own ? "owns" : "already borrows");
	plan_result_free(&res);
	return c->own || c->borrowed ? CLI_BEST_NOTHING : 0;
}
