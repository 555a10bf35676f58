// SPDX-License-Identifier: MIT
/*
 * smartio predict: what a link, a resolved route or a composition costs on
 * real PCIe hardware, from the analytical timing model (docs/timing-model.md).
 *
 *   predict link      a bare link (no daemon needed)
 *   predict path      a route the running daemon resolves (SMIO_ROUTE)
 *   predict pingpong  two devices writing to each other (routes from the daemon)
 *   predict nvme-read one QD1 NVMe read: doorbell, command fetch, media, data, completion
 *   predict paper     the papers' stated numbers against the model (no daemon)
 *   predict figure    the papers' figures as curves/bars (predict_figure.c)
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plan.h"
#include "util/cli_conv.h"
#include "smartio/timing.h"

#define DEFAULT_PARAMS "topologies/timing.yaml"
#define PINGPONG_BYTES 4
#define DOORBELL_BYTES 4

struct popts {
	const char *params_file, *host_opt, *dir_opt, *from, *addr;
	const char *from2, *addr2;                 /* pingpong: the way back */
	const char *sq, *cq, *data;                /* nvme-read */
	unsigned gen, width;
	uint32_t mps, mrrs, rcb, tags, cpl;
	uint64_t size;
	bool write, rw_given, json;
	int completer;
	double miss;
};

static void predict_usage(FILE *f)
{
	fprintf(f,
		"usage: smartio predict link --gen G --width W [--mps M --mrrs R --rcb C]\n"
		"                            [--cpl-size B] --size S --read|--write [--json]\n"
		"       smartio predict path --host N --from BDF|NAME|cpu --addr ADDR|NAME:barN\n"
		"                            --size S --read|--write [--json] [--dir DIR]\n"
		"       smartio predict pingpong --host N --from DEV --addr PEER:barN\n"
		"                            [--back-from PEER --back-addr DEV:barN] [--json]\n"
		"       smartio predict nvme-read --host N --from NVME --sq ADDR --data ADDR\n"
		"                            [--cq ADDR] [--size 4K] [--json]\n"
		"       smartio predict paper [--json]\n"
		"       smartio predict figure [ID|all|list] [--json] [--measured FILE]\n"
		"                            [--gnuplot DIR]   (see 'predict figure --help')\n\n"
		"Predicts latency and sustained bandwidth on real PCIe hardware with the\n"
		"analytical model of docs/timing-model.md (one calibration for everything).\n"
		"  --params FILE    calibration file (default: built-in values, which equal\n"
		"                   " DEFAULT_PARAMS ")\n"
		"  --completer K    dram, devmem or regs (default: from the route's end)\n"
		"  --tags T         requester's outstanding reads (default: calibration)\n"
		"  --iotlb-miss R   fraction 0..1 of IOMMU translations that miss\n"
		"  --mps/--mrrs     the system's MPS and MRRS; --rcb C: the root completes\n"
		"                   DRAM reads in C-byte completions\n"
		"  --cpl-size B     reads: the completer's completion payload (64..MPS);\n"
		"                   default by completer: a root complex (dram) its RCB-sized\n"
		"                   completions, a device (devmem, regs) MPS-sized ones\n"
		"'paper' exits 1 if a prediction is more than 10%% off the paper's number.\n"
		"Exit status: 0 ok, 1 failure (route or daemon), 2 usage error.\n");
}

static int parse_u(const char *what, const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	if (cli_parse_u64(s, v) || *v < lo || *v > hi) {
		cli_err("%s: '%s' is not a number from %" PRIu64 " to %" PRIu64, what, s, lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int load_params(const struct popts *o, struct timing_params *p)
{
	char err[512];
	int rc;

	timing_params_default(p);
	if (o->params_file) {
		rc = timing_params_load_file(o->params_file, p, err, sizeof(err));
		if (rc) {
			cli_err("%s", err);
			return rc;
		}
	}
	if (o->rcb)
		for (uint32_t i = 0; i < p->nrcs; i++)
			p->rcs[i].completion_bytes = o->rcb;
	return 0;
}

/* A result's fields into o; 0 or -ENOMEM. */
static int result_json_fields(struct json_object *o, const struct timing_result *r,
			      const struct timing_hop *h, unsigned n)
{
	struct json_object *bn = NULL;

	if (r->bottleneck >= 0 && (unsigned)r->bottleneck < n) {
		bn = json_object_new_object();
		if (!bn || smio_json_add_int(bn, "hop", r->bottleneck) ||
		    smio_json_add_str(bn, "kind", timing_hop_kind_str(h[r->bottleneck].kind)) ||
		    smio_json_add_str(bn, "name", h[r->bottleneck].name)) {
			json_object_put(bn);
			return -ENOMEM;
		}
	}
	if (smio_json_add_double(o, "latency_ns", r->latency_ns, "%.1f") ||
	    smio_json_add_double(o, "first_ns", r->first_ns, "%.1f") ||
	    smio_json_add_double(o, "bw_gbs", r->bw_gbs, "%.4f") ||
	    smio_json_add_double(o, "link_bw_gbs", r->link_bw_gbs, "%.4f") ||
	    smio_json_add_double(o, "outstanding_bw_gbs", r->outstanding_bw_gbs, "%.4f") ||
	    smio_json_add_double(o, "xfer_ns", r->xfer_ns, "%.1f") ||
	    smio_json_add_double(o, "xfer_bw_gbs", r->xfer_bw_gbs, "%.4f") ||
	    smio_json_add_uint(o, "tlps", r->tlps) || smio_json_add_uint(o, "requests", r->requests) ||
	    smio_json_add_uint(o, "wire_bytes", r->wire_bytes) ||
	    smio_json_add_uint(o, "cpl_bytes", r->cpl_bytes) ||
	    smio_json_add_str(o, "limit", timing_limit_str(r->limit))) {
		json_object_put(bn);
		return -ENOMEM;
	}
	if (bn ? smio_json_add(o, "bottleneck", bn) : smio_json_add_null(o, "bottleneck"))
		return -ENOMEM;
	return smio_json_add_str(o, "explain", r->explain);
}

/* Print o (or say it could not be built: ok false); puts o. 0 or 1. */
static int json_done(struct json_object *o, bool ok)
{
	int rc = 0;

	if (!ok) {
		cli_err("predict: out of memory");
		rc = 1;
	} else if (cli_json_print(o)) {
		rc = 1;
	}
	json_object_put(o);
	return rc;
}

static void result_text(const struct timing_result *r, const struct timing_hop *h, unsigned n,
			bool write)
{
	printf("%-22s %.0f ns\n", write ? "one-way latency:" : "round trip:", r->latency_ns);
	printf("%-22s %.0f ns\n", write ? "first TLP one way:" : "one request's RTT:", r->first_ns);
	printf("%-22s %.3f GB/s\n", "sustained bandwidth:", r->bw_gbs);
	printf("%-22s %.3f GB/s\n", "link byte limit:", r->link_bw_gbs);
	if (!write)
		printf("%-22s %.3f GB/s\n", "outstanding limit:", r->outstanding_bw_gbs);
	printf("%-22s %.3f GB/s (one isolated transfer, %.0f ns)\n", "transfer rate:",
	       r->xfer_bw_gbs, r->xfer_ns);
	if (r->bottleneck >= 0 && (unsigned)r->bottleneck < n)
		printf("%-22s %s, hop %d (%s '%s')\n", "bottleneck:", timing_limit_str(r->limit),
		       r->bottleneck, timing_hop_kind_str(h[r->bottleneck].kind),
		       h[r->bottleneck].name);
	printf("why: %s\n", r->explain);
}

static struct timing_query make_query(const struct popts *o, uint64_t size, bool write)
{
	return (struct timing_query){ .size = size, .write = write, .completer = (uint8_t)o->completer,
		.tags = o->tags, .mps = o->mps, .mrrs = o->mrrs, .iotlb_miss_rate = o->miss,
		.cpl_size = o->cpl };
}

/* ---------- link ---------- */

static int do_link(const struct popts *o, const struct timing_params *p)
{
	struct timing_query q = make_query(o, o->size, o->write);
	struct timing_link_info li;
	struct timing_result r;
	struct timing_hop h[1];
	int rc;

	if (!o->gen || !o->width)
		return cli_err("predict link needs --gen G and --width W"), 2;
	rc = timing_link_info(p, o->gen, o->width, o->mps ? o->mps : p->mps, &li);
	if (!rc)
		rc = timing_link(p, o->gen, o->width, &q, &r);
	if (rc)
		return cli_err("Gen%u x%u with MPS %u / MRRS %u is not a link the model knows "
			       "(Gen1-5; x1, x2, x4, x8, x12, x16, x32; MPS 128-4096)", o->gen,
			       o->width, o->mps ? o->mps : p->mps, o->mrrs ? o->mrrs : p->mrrs), 2;
	h[0] = timing_hop_link(TIMING_HOP_LINK, o->gen, o->width, 0);
	r.bottleneck = r.bottleneck >= 0 ? 0 : -1;
	if (o->json) {
		struct json_object *j = json_object_new_object();

		return json_done(j, j && !smio_json_add_uint(j, "gen", o->gen) &&
				 !smio_json_add_uint(j, "width", o->width) &&
				 !smio_json_add_uint(j, "mps", o->mps ? o->mps : p->mps) &&
				 !smio_json_add_uint(j, "mrrs", o->mrrs ? o->mrrs : p->mrrs) &&
				 !smio_json_add_uint(j, "size", o->size) &&
				 !smio_json_add_bool(j, "write", o->write) &&
				 !smio_json_add_double(j, "raw_gbs", li.raw_gbs, "%.4f") &&
				 !smio_json_add_double(j, "tlp_gbs", li.tlp_gbs, "%.4f") &&
				 !smio_json_add_uint(j, "ack_limit", li.ack_limit) &&
				 !smio_json_add_uint(j, "fc_interval", li.fc_interval) &&
				 !result_json_fields(j, &r, h, 1));
	}
	printf("Gen%u x%u, MPS %u, MRRS %u: raw %.3f GB/s, TLP-level %.3f GB/s "
	       "(ACK every %u B, UpdateFC every %u B, SKIP 4/1538)\n", o->gen, o->width,
	       o->mps ? o->mps : p->mps, o->mrrs ? o->mrrs : p->mrrs, li.raw_gbs, li.tlp_gbs,
	       li.ack_limit, li.fc_interval);
	printf("%s of %" PRIu64 " B (requester -- link -- root complex -- %s):\n",
	       o->write ? "write" : "read", o->size,
	       o->completer == TIMING_CPL_DEVMEM ? "device memory" :
	       o->completer == TIMING_CPL_REGS ? "registers" : "DRAM");
	if (!o->write)
		printf("%-22s %u B (%s)\n", "completions of:", r.cpl_bytes,
		       o->cpl ? "--cpl-size" : o->completer == TIMING_CPL_DEVMEM ||
		       o->completer == TIMING_CPL_REGS ? "a device completes in MPS" :
		       "the root complex's RCB-sized completions");
	result_text(&r, h, 1, o->write);
	return 0;
}

/* ---------- routes from the daemon ---------- */

struct dconn {
	uint32_t host;
	int fd;
	struct smio_route_reply *r;
};

static int dconn_open(const struct popts *o, struct dconn *c)
{
	char dir[PATH_MAX];

	c->fd = -1;
	c->r = NULL;
	if (cli_host_arg(o->host_opt, &c->host))
		return 2;
	if (cli_cluster_dir(o->dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	c->fd = cli_connect(dir, c->host, SMIO_ROLE_CLIENT);
	if (c->fd < 0) {
		cli_err("host %u in %s: %s", c->host, dir, cli_strerror(c->fd));
		return 1;
	}
	c->r = malloc(SMIO_MAX_PAYLOAD);
	if (!c->r) {
		close(c->fd);
		return cli_err("out of memory"), 1;
	}
	return 0;
}

static void dconn_close(struct dconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->r);
}

/* Resolve FROM -> ADDR on the daemon and convert its hops. 0, 1 (route failed) or 2. */
static int route_hops(struct dconn *c, const char *from, const char *addr, uint64_t len,
		      bool write, struct timing_hop *h, unsigned *n)
{
	struct smio_route_req q = { .write = write, .len = len ? len : 1 };
	uint32_t rlen;
	int rc;

	if (cli_parse_func(c->fd, from ? from : "cpu", &q.rid) ||
	    cli_parse_addr(c->fd, addr, &q.addr))
		return 2;
	if (q.len > SMIO_MAX_LEN)
		q.len = SMIO_MAX_LEN;
	rc = smio_call(c->fd, SMIO_ROUTE, &q, sizeof(q), c->r, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (rc) {
		cli_err("route on host %u: %s", c->host, cli_strerror(rc));
		return 1;
	}
	if (c->r->status) {
		cli_err("route %s -> %s on host %u does not resolve: %s", from ? from : "cpu",
			addr, c->host, c->r->reason[0] ? c->r->reason : "no reason given");
		return 1;
	}
	rc = timing_hops_from_smio(c->r->hops, c->r->nhops, h, TIMING_MAX_HOPS);
	if (rc < 0) {
		cli_err("route on host %u: unusable hop list (%s)", c->host, strerror(-rc));
		return 1;
	}
	*n = (unsigned)rc;
	return 0;
}

static void hops_text(const struct timing_hop *h, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		printf("  %2u  %-14s %-34s", i, timing_hop_kind_str(h[i].kind), h[i].name);
		if (h[i].kind == TIMING_HOP_LINK || h[i].kind == TIMING_HOP_CABLE)
			printf(" Gen%u x%u", h[i].gen, h[i].width);
		if (h[i].latency_ns)
			printf(" %u ns", h[i].latency_ns);
		putchar('\n');
	}
}

static int do_path(const struct popts *o, const struct timing_params *p)
{
	struct timing_hop h[TIMING_MAX_HOPS];
	struct timing_query q = make_query(o, o->size, o->write);
	struct timing_result r;
	struct dconn c;
	unsigned n = 0;
	int rc;

	if (!o->addr)
		return cli_err("predict path needs --addr ADDR"), 2;
	rc = dconn_open(o, &c);
	if (!rc)
		rc = route_hops(&c, o->from, o->addr, o->size, o->write, h, &n);
	dconn_close(&c);
	if (rc)
		return rc;
	if (timing_path(p, h, n, &q, &r))
		return cli_err("the model cannot evaluate this route (no link on it?)"), 1;
	if (o->json) {
		struct json_object *j = json_object_new_object();

		return json_done(j, j && !smio_json_add_uint(j, "host", c.host) &&
				 !smio_json_add_str(j, "from", o->from ? o->from : "cpu") &&
				 !smio_json_add_str(j, "addr", o->addr) &&
				 !smio_json_add_uint(j, "size", o->size) &&
				 !smio_json_add_bool(j, "write", o->write) &&
				 !smio_json_add_uint(j, "nhops", n) &&
				 !result_json_fields(j, &r, h, n));
	}
	printf("%s of %" PRIu64 " B from %s to %s on host %u, %u hops:\n",
	       o->write ? "write" : "read", o->size, o->from ? o->from : "cpu", o->addr, c.host, n);
	hops_text(h, n);
	result_text(&r, h, n, o->write);
	return 0;
}

/* ---------- compositions ---------- */

static int do_pingpong(const struct popts *o, const struct timing_params *p)
{
	struct timing_hop h[TIMING_MAX_HOPS];
	struct timing_query q = make_query(o, PINGPONG_BYTES, true);
	struct timing_result there = { 0 }, back;
	struct dconn c;
	unsigned n = 0;
	int rc;

	if (!o->from || !o->addr)
		return cli_err("predict pingpong needs --from DEV and --addr PEER:barN"), 2;
	if (!o->from2 != !o->addr2)
		return cli_err("give both --back-from and --back-addr, or neither"), 2;
	rc = dconn_open(o, &c);
	if (!rc)
		rc = route_hops(&c, o->from, o->addr, PINGPONG_BYTES, true, h, &n);
	if (!rc && timing_path(p, h, n, &q, &there))
		rc = 1;
	back = there;
	if (!rc && o->from2) {
		rc = route_hops(&c, o->from2, o->addr2, PINGPONG_BYTES, true, h, &n);
		if (!rc && timing_path(p, h, n, &q, &back))
			rc = 1;
	}
	dconn_close(&c);
	if (rc)
		return rc;
	if (o->json) {
		struct json_object *j = json_object_new_object();

		return json_done(j, j && !smio_json_add_uint(j, "host", c.host) &&
				 !smio_json_add_double(j, "there_ns", there.latency_ns, "%.1f") &&
				 !smio_json_add_double(j, "back_ns", back.latency_ns, "%.1f") &&
				 !smio_json_add_double(j, "pingpong_ns",
						       there.latency_ns + back.latency_ns, "%.1f") &&
				 !smio_json_add_bool(j, "symmetric", !o->from2));
	}
	printf("ping-pong of %d-byte writes %s <-> %s: %.0f ns (there %.0f ns, back %.0f ns%s)\n",
	       PINGPONG_BYTES, o->from, o->addr, there.latency_ns + back.latency_ns,
	       there.latency_ns, back.latency_ns, o->from2 ? "" : ", assumed symmetric");
	return 0;
}

/*
 * One QD1 NVMe read, the critical path of Device Lending fig. 19 / SmartIO
 * fig. 34: the CPU's doorbell write, the controller's command fetch (a read
 * of the SQ entry), the media, the data write, then the completion entry
 * (ordered behind the data). The driver polls the CQ.
 */
static int do_nvme(const struct popts *o, const struct timing_params *p)
{
	struct timing_hop db[TIMING_MAX_HOPS], sq[TIMING_MAX_HOPS], data[TIMING_MAX_HOPS];
	struct timing_hop cq[TIMING_MAX_HOPS];
	struct timing_query tmpl = make_query(o, o->size, false);
	struct timing_nvme_paths x = { .doorbell = db, .sq = sq, .data = data, .cq = cq };
	struct timing_nvme t;
	struct dconn c;
	char bar0[TOPO_NAME_MAX + 8];
	double total;
	int rc;

	if (!o->from || !o->sq || !o->data)
		return cli_err("predict nvme-read needs --from NVME, --sq ADDR and --data ADDR"), 2;
	snprintf(bar0, sizeof(bar0), "%s:bar0", o->from);
	rc = dconn_open(o, &c);
	if (!rc)
		rc = route_hops(&c, "cpu", bar0, DOORBELL_BYTES, true, db, &x.ndoorbell);
	if (!rc)
		rc = route_hops(&c, o->from, o->sq, p->nvme_sqe_bytes, false, sq, &x.nsq);
	if (!rc)
		rc = route_hops(&c, o->from, o->data, o->size, true, data, &x.ndata);
	if (!rc)
		rc = route_hops(&c, o->from, o->cq ? o->cq : o->data, p->nvme_cqe_bytes, true, cq,
				&x.ncq);
	dconn_close(&c);
	if (rc)
		return rc;
	if (timing_nvme_io(p, &x, &tmpl, o->size, false, p->nvme_media_read_ns, &t))
		return cli_err("the model cannot evaluate these routes (no link on one?)"), 1;
	total = t.total_ns;
	if (o->json) {
		struct json_object *j = json_object_new_object();

		return json_done(j, j && !smio_json_add_uint(j, "host", c.host) &&
				 !smio_json_add_double(j, "doorbell_ns", t.doorbell_ns, "%.1f") &&
				 !smio_json_add_double(j, "fetch_ns", t.fetch_ns, "%.1f") &&
				 !smio_json_add_uint(j, "media_ns", p->nvme_media_read_ns) &&
				 !smio_json_add_double(j, "data_ns", t.data_ns, "%.1f") &&
				 !smio_json_add_double(j, "cqe_ns", t.cqe_ns, "%.1f") &&
				 !smio_json_add_double(j, "total_ns", total, "%.1f") &&
				 !smio_json_add_double(j, "pcie_ns", total - p->nvme_media_read_ns,
						       "%.1f"));
	}
	printf("QD1 NVMe read of %" PRIu64 " B by %s on host %u:\n", o->size, o->from, c.host);
	printf("  %-32s %8.0f ns\n", "doorbell write (CPU -> BAR0)", t.doorbell_ns);
	printf("  %-32s %8.0f ns\n", "command fetch (SQ entry read)", t.fetch_ns);
	printf("  %-32s %8u ns\n", "media (calibration)", p->nvme_media_read_ns);
	printf("  %-32s %8.0f ns\n", "data write", t.data_ns);
	printf("  %-32s %8.0f ns\n", "completion entry after the data", t.cqe_ns);
	printf("  %-32s %8.0f ns (PCIe part %.0f ns)\n", "total", total,
	       total - p->nvme_media_read_ns);
	return 0;
}

static int check_json(struct json_object *arr, const struct timing_check *c, bool ok)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_str(o, "id", c->id) || smio_json_add_str(o, "unit", c->unit) ||
	    smio_json_add_double(o, "stated", c->stated, "%.3f") ||
	    smio_json_add_double(o, "predicted", c->predicted, "%.3f") ||
	    smio_json_add_bool(o, "ok", ok) || smio_json_add_str(o, "source", c->source) ||
	    smio_json_add_str(o, "what", c->what) || smio_json_add_str(o, "detail", c->detail)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

static int do_paper(const struct popts *o, const struct timing_params *p)
{
	unsigned n = timing_paper_count(), bad = 0;
	struct json_object *root = NULL, *checks = NULL;
	bool built = true;

	if (o->json) {
		root = json_object_new_object();
		checks = json_object_new_array();
		built = root && checks &&
			!smio_json_add_double(root, "tolerance", TIMING_TOLERANCE, "%.2f");
	} else {
		printf("%-22s %10s %10s %7s  %s\n", "check", "paper", "model", "diff", "source");
	}
	for (unsigned i = 0; i < n && built; i++) {
		struct timing_check c;
		int rc = timing_paper_check(p, i, &c);
		bool ok = !rc && timing_check_ok(&c);

		bad += !ok;
		if (o->json) {
			built = !check_json(checks, &c, ok);
		} else {
			printf("%-22s %6.4g %-4s %6.4g %-4s %+6.1f%%  %s%s\n", c.id, c.stated, c.unit,
			       c.predicted, c.unit, 100.0 * (c.predicted - c.stated) / c.stated,
			       c.source, ok ? "" : "  OUTSIDE 10%");
			printf("%-22s   %s: %s\n", "", c.what, c.detail);
		}
	}
	if (o->json) {
		if (built) {
			built = !smio_json_add(root, "checks", checks);
			checks = NULL;          /* root holds it, or it was released */
		}
		built = built && !smio_json_add_uint(root, "outside", bad);
		json_object_put(checks);
		if (json_done(root, built))
			return 1;
	}
	return bad ? 1 : 0;
}

int cmd_predict(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gen", required_argument, NULL, 'g' }, { "width", required_argument, NULL, 'W' },
		{ "mps", required_argument, NULL, 'm' }, { "mrrs", required_argument, NULL, 'R' },
		{ "rcb", required_argument, NULL, 'c' }, { "size", required_argument, NULL, 's' },
		{ "read", no_argument, NULL, 'r' }, { "write", no_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' }, { "params", required_argument, NULL, 'P' },
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "from", required_argument, NULL, 'f' }, { "addr", required_argument, NULL, 'a' },
		{ "back-from", required_argument, NULL, 'F' },
		{ "back-addr", required_argument, NULL, 'A' },
		{ "sq", required_argument, NULL, 'S' }, { "cq", required_argument, NULL, 'C' },
		{ "data", required_argument, NULL, 'D' },
		{ "completer", required_argument, NULL, 'k' },
		{ "tags", required_argument, NULL, 't' },
		{ "cpl-size", required_argument, NULL, 'B' },
		{ "iotlb-miss", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	struct popts o = { .size = 0 };
	struct timing_params p;
	const char *sub;
	uint64_t v;
	char *end;
	int ch;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		predict_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	sub = argv[1];
	if (!strcmp(sub, "figure"))
		return cmd_predict_figure(argc, argv);
	optind = 2;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'g': if (parse_u("--gen", optarg, 1, 5, &v)) return 2; o.gen = (unsigned)v; break;
		case 'W': if (parse_u("--width", optarg, 1, 32, &v)) return 2; o.width = (unsigned)v; break;
		case 'm': if (parse_u("--mps", optarg, 128, 4096, &v)) return 2; o.mps = (uint32_t)v; break;
		case 'R': if (parse_u("--mrrs", optarg, 128, 4096, &v)) return 2; o.mrrs = (uint32_t)v; break;
		case 'c': if (parse_u("--rcb", optarg, 64, 4096, &v)) return 2; o.rcb = (uint32_t)v; break;
		case 's': if (parse_u("--size", optarg, 1, 1ull << 40, &o.size)) return 2; break;
		case 't': if (parse_u("--tags", optarg, 1, 4096, &v)) return 2; o.tags = (uint32_t)v; break;
		case 'B':
			if (parse_u("--cpl-size", optarg, 64, 4096, &v) || (v & (v - 1)))
				return cli_err("--cpl-size is a power of two from 64 to 4096"), 2;
			o.cpl = (uint32_t)v;
			break;
		case 'r': o.write = false; o.rw_given = true; break;
		case 'w': o.write = true; o.rw_given = true; break;
		case 'j': o.json = true; break;
		case 'P': o.params_file = optarg; break;
		case 'H': o.host_opt = optarg; break;
		case 'd': o.dir_opt = optarg; break;
		case 'f': o.from = optarg; break;
		case 'a': o.addr = optarg; break;
		case 'F': o.from2 = optarg; break;
		case 'A': o.addr2 = optarg; break;
		case 'S': o.sq = optarg; break;
		case 'C': o.cq = optarg; break;
		case 'D': o.data = optarg; break;
		case 'k':
			o.completer = !strcmp(optarg, "dram") ? TIMING_CPL_DRAM :
				      !strcmp(optarg, "devmem") ? TIMING_CPL_DEVMEM :
				      !strcmp(optarg, "regs") ? TIMING_CPL_REGS : -1;
			if (o.completer < 0)
				return cli_err("--completer is dram, devmem or regs"), 2;
			break;
		case 'i':
			o.miss = strtod(optarg, &end);
			if (*end || !(o.miss >= 0.0 && o.miss <= 1.0))
				return cli_err("--iotlb-miss is a fraction from 0 to 1"), 2;
			break;
		case 'h': return predict_usage(stdout), 0;
		default: return predict_usage(stderr), 2;
		}
	}
	if (optind < argc)
		return cli_err("predict: unexpected argument '%s'", argv[optind]), 2;
	if (load_params(&o, &p))
		return 2;
	if (o.cpl && o.cpl > (o.mps ? o.mps : p.mps))
		return cli_err("--cpl-size %u exceeds the MPS %u: a completion carries at most MPS "
			       "bytes", o.cpl, o.mps ? o.mps : p.mps), 2;
	if (!strcmp(sub, "paper"))
		return do_paper(&o, &p);
	if (!strcmp(sub, "pingpong"))
		return do_pingpong(&o, &p);
	if (!strcmp(sub, "nvme-read")) {
		if (!o.size)
			o.size = 4096;
		return do_nvme(&o, &p);
	}
	if (strcmp(sub, "link") && strcmp(sub, "path")) {
		static const char *const subs[] = { "link", "path", "pingpong", "nvme-read",
						    "paper", "figure" };

		smio_unknown("smartio predict", "command", sub, subs,
			     sizeof(subs) / sizeof(subs[0]),
			     "link, path, pingpong, nvme-read, paper, figure");
		return 2;
	}
	if (!o.size || !o.rw_given)
		return cli_err("predict %s needs --size S and --read or --write", sub), 2;
	return !strcmp(sub, "link") ? do_link(&o, &p) : do_path(&o, &p);
}
