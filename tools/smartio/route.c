// SPDX-License-Identifier: MIT
/* smartio route, smartio ntb and smartio iommu: the address-routing tools. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/cli_conv.h"

/* The wire carries src/fabric/route.h's numbers (enum fab_status, fab_hop_kind). */
static const char *const status_str[] = { "ok", "unsupported request", "IOMMU fault",
	"link down", "NTB requester rejected", "hop limit", "host down", "bad request" };
static const char *const hop_str[] = { "?", "device", "link", "switch", "root", "iommu",
	"ntb", "cable", "cluster-switch", "memory" };
enum { HOP_LINK = 2, HOP_CABLE = 7, HOP_CSWITCH = 8, HOP_MEMORY = 9 };
#define NO_HOST 0xffff
enum { TGT_RAM = 1, TGT_BAR = 2, TGT_MSI = 3, TGT_MCAST = 4 };
#define MC_NONE 0xffffffffu

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct conn {
	const char *host_opt, *dir_opt;
	char dir[PATH_MAX];
	uint32_t host;
	int fd;
};

static const char *str_of(const char *const *tab, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? tab[v] : "unknown";
}

static void bdf_str(char *buf, size_t len, uint16_t bdf)
{
	snprintf(buf, len, "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
}

static int parse_num(const char *what, const char *s, uint64_t max, uint64_t *v)
{
	if (cli_parse_u64(s, v) || *v > max) {
		cli_err("%s: '%s' is not a number up to %" PRIu64 " (decimal, 0x hex or a size like 4K)",
			what, s, max);
		return -EINVAL;
	}
	return 0;
}

/* 0, or the exit status after saying why: 2 for a usage error (no host given), else 1. */
static int conn_open(struct conn *c, uint32_t role)
{
	c->fd = cli_open_host(c->host_opt, c->dir_opt, role, &c->host, c->dir, sizeof(c->dir));
	return c->fd >= 0 ? 0 : c->fd == -EINVAL ? 2 : 1;
}

/* One round trip; rlen may be NULL when the reply's size is fixed. */
static int call(struct conn *c, uint16_t type, const void *req, uint32_t len, void *out,
		uint32_t cap, uint32_t *rlen)
{
	uint32_t n;

	return smio_call(c->fd, type, req, len, out, cap, rlen ? rlen : &n, NULL, CLI_TIMEOUT_MS);
}

/* ---------- route ---------- */

/* Cables, cluster switches and DRAM have no function; cluster switches no host. */
static void hop_where(const struct smio_hop *h, char *hs, size_t hlen, char *b, size_t blen)
{
	if (h->host == NO_HOST)
		snprintf(hs, hlen, "-");
	else
		snprintf(hs, hlen, "%u", h->host);
	if (h->kind == HOP_CABLE || h->kind == HOP_CSWITCH || h->kind == HOP_MEMORY)
		snprintf(b, blen, "-");
	else
		bdf_str(b, blen, h->bdf);
}

static void route_usage(FILE *f)
{
	fprintf(f,
		"usage: smartio route --host N [--from BDF|NAME|cpu] --addr ADDR|NAME:barN[+OFF] [--len L]\n"
		"                     [--read|--write] [--nocache] [--json] [--dir DIR]\n\n"
		"Resolves a bus address on host N as requester BDF sees it and shows the\n"
		"target (RAM or a BAR, on whichever host) and every hop of the path.\n"
		"  --from BDF   requester function (BDF or its name, e.g. gpu0); default 'cpu'\n"
		"               (the root complex, 00:00.0)\n"
		"  --addr ADDR  bus address, or NAME:barN[+OFFSET] for a function's BAR\n"
		"  --len L      access length in bytes (default 4)\n"
		"  --write      a write (the default); --read for a read\n"
		"  --nocache    bypass the daemon's route cache\n"
		"  --json       one JSON object instead of text\n"
		"Exits 0 if the route resolves, 1 if it fails (the reason is printed),\n"
		"2 on a usage error (bad option, unknown name, unassigned BAR).\n");
}

/* "0x..." for an address field (JSON numbers lose 64-bit precision in many readers). */
static int add_hex(struct json_object *o, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return smio_json_add_str(o, key, buf);
}

static const char *target_kind(uint8_t kind)
{
	switch (kind) {
	case TGT_BAR: return "bar";
	case TGT_MSI: return "msi";
	case TGT_MCAST: return "multicast";
	default: return "ram";
	}
}

/* ---------- a multicast write's fan-out (MC_TREE) ---------- */

static const struct smio_mc_recv *tree_recv(const struct smio_mc_tree *t, uint32_t i)
{
	return (const struct smio_mc_recv *)(const void *)((const uint8_t *)(t + 1) +
							  i * sizeof(struct smio_mc_recv));
}

static const struct smio_mc_link *tree_link(const struct smio_mc_tree *t, uint32_t i)
{
	return (const struct smio_mc_link *)(const void *)((const uint8_t *)(t + 1) +
		t->nrecv * sizeof(struct smio_mc_recv) + i * sizeof(struct smio_mc_link));
}

static const char *csw_name(const struct topo *tp, uint32_t i, char *buf, size_t len)
{
	if (tp && i < tp->ncswitches)
		return tp->cswitches[i].name;
	snprintf(buf, len, "switch %u", i);
	return buf;
}

static void tree_text(const struct smio_mc_tree *t, const struct topo *tp)
{
	char a[40], b[40];

	printf("multicast: group %u (+0x%" PRIx64 "), %u receiver%s, %u link%s in the tree "
	       "(each carries the write once)\n", t->group, t->offset, t->nrecv,
	       t->nrecv == 1 ? "" : "s", t->nlinks, t->nlinks == 1 ? "" : "s");
	for (uint32_t i = 0; i < t->nlinks; i++) {
		const struct smio_mc_link *l = tree_link(t, i);

		if (l->from_csw == MC_NONE)
			printf("  cable    host %u -> %s", l->host, csw_name(tp, l->to_csw, a, sizeof(a)));
		else if (l->to_csw != MC_NONE)
			printf("  cascade  %s -> %s", csw_name(tp, l->from_csw, a, sizeof(a)),
			       csw_name(tp, l->to_csw, b, sizeof(b)));
		else
			printf("  cable    %s -> host %u", csw_name(tp, l->from_csw, a, sizeof(a)),
			       l->host);
		printf("  Gen%u x%u\n", l->gen, l->width);
	}
	for (uint32_t i = 0; i < t->nrecv; i++) {
		const struct smio_mc_recv *v = tree_recv(t, i);

		printf("  receiver host %u ntb%u via %s (%u switch%s)\n", v->host, v->ntb,
		       csw_name(tp, v->csw, a, sizeof(a)), v->depth, v->depth == 1 ? "" : "es");
	}
}

static int tree_json(struct json_object *root, const struct smio_mc_tree *t)
{
	struct json_object *o = json_object_new_object(), *rv = json_object_new_array(),
			   *lk = json_object_new_array();
	int rc = -ENOMEM;

	if (!o || !rv || !lk || smio_json_add_uint(o, "group", t->group) ||
	    add_hex(o, "offset", t->offset) || smio_json_add_uint(o, "ingress_switch", t->ingress_csw))
		goto out;
	for (uint32_t i = 0; i < t->nrecv; i++) {
		const struct smio_mc_recv *v = tree_recv(t, i);
		struct json_object *e = json_object_new_object();

		if (!e || smio_json_add_uint(e, "host", v->host) || smio_json_add_uint(e, "ntb", v->ntb) ||
		    smio_json_add_uint(e, "switch", v->csw) || smio_json_add_uint(e, "depth", v->depth) ||
		    smio_json_push(rv, e)) {
			json_object_put(e);
			goto out;
		}
	}
	for (uint32_t i = 0; i < t->nlinks; i++) {
		const struct smio_mc_link *l = tree_link(t, i);
		struct json_object *e = json_object_new_object();
		const char *kind = l->from_csw == MC_NONE ? "ingress" :
				   l->to_csw != MC_NONE ? "cascade" : "egress";

		if (!e || smio_json_add_str(e, "kind", kind) ||
		    (l->from_csw == MC_NONE ? smio_json_add_null(e, "from_switch")
					     : smio_json_add_uint(e, "from_switch", l->from_csw)) ||
		    (l->to_csw == MC_NONE ? smio_json_add_null(e, "to_switch")
					   : smio_json_add_uint(e, "to_switch", l->to_csw)) ||
		    (l->host == MC_NONE ? smio_json_add_null(e, "host")
					 : smio_json_add_uint(e, "host", l->host)) ||
		    smio_json_add_uint(e, "gen", l->gen) || smio_json_add_uint(e, "width", l->width) ||
		    smio_json_push(lk, e)) {
			json_object_put(e);
			goto out;
		}
	}
	rc = smio_json_add(o, "receivers", rv);
	rv = NULL;
	if (!rc)
		rc = smio_json_add(o, "links", lk);
	lk = NULL;
	if (!rc)
		rc = smio_json_add(root, "multicast", o);
	o = NULL;
out:
	json_object_put(rv);
	json_object_put(lk);
	json_object_put(o);
	return rc;
}

static int target_json(struct json_object *root, const struct smio_target *t)
{
	struct json_object *o = json_object_new_object();
	char b[16];

	if (!o)
		return -ENOMEM;
	bdf_str(b, sizeof(b), t->bdf);
	if (smio_json_add_str(o, "kind", target_kind(t->kind)) ||
	    smio_json_add_uint(o, "host", t->host) ||
	    (t->kind == TGT_BAR && (smio_json_add_uint(o, "bar", t->bar) ||
				    smio_json_add_str(o, "bdf", b))) ||
	    add_hex(o, "addr", t->addr) || smio_json_add_uint(o, "mem", t->mem) ||
	    add_hex(o, "offset", t->offset) || smio_json_add_uint(o, "len", t->len)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_add(root, "target", o);
}

/* One hop; a cluster switch has no host, cables and DRAM no function: null. */
static int hop_json(struct json_object *hops, const struct smio_hop *h)
{
	struct json_object *o = json_object_new_object();
	char b[16], hs[16];

	if (!o)
		return -ENOMEM;
	hop_where(h, hs, sizeof(hs), b, sizeof(b));
	if (smio_json_add_str(o, "kind", str_of(hop_str, ARRAY_LEN(hop_str), h->kind)) ||
	    (h->host == NO_HOST ? smio_json_add_null(o, "host")
				: smio_json_add_uint(o, "host", h->host)) ||
	    smio_json_add_str(o, "bdf", strcmp(b, "-") ? b : NULL) ||
	    smio_json_add_str(o, "name", h->name) || smio_json_add_uint(o, "gen", h->gen) ||
	    smio_json_add_uint(o, "width", h->width) ||
	    smio_json_add_uint(o, "latency_ns", h->latency_ns)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(hops, o);
}

static int route_json(const struct smio_route_req *q, uint32_t host,
		      const struct smio_route_reply *r, const struct smio_mc_tree *mt)
{
	struct json_object *o = json_object_new_object(), *hops = json_object_new_array();
	char b[16];
	int rc = -ENOMEM;

	bdf_str(b, sizeof(b), q->rid);
	if (!o || !hops || smio_json_add_uint(o, "host", host) ||
	    smio_json_add_str(o, "from", q->rid ? b : "cpu") || add_hex(o, "addr", q->addr) ||
	    smio_json_add_uint(o, "len", q->len) || smio_json_add_bool(o, "write", q->write) ||
	    smio_json_add_str(o, "status", str_of(status_str, ARRAY_LEN(status_str), r->status)) ||
	    smio_json_add_int(o, "status_code", r->status) ||
	    smio_json_add_bool(o, "ok", !r->status) || smio_json_add_str(o, "reason", r->reason) ||
	    smio_json_add_bool(o, "cached", r->cached) ||
	    smio_json_add_uint(o, "ntb_hops", r->ntb_hops) ||
	    (!r->status && target_json(o, &r->tgt)) || (mt && tree_json(o, mt)))
		goto out;
	for (uint32_t i = 0; i < r->nhops; i++)
		if (hop_json(hops, &r->hops[i]))
			goto out;
	rc = smio_json_add(o, "hops", hops);
	hops = NULL;                                 /* o holds it, or it was released */
out:
	if (rc)
		cli_err("route: out of memory");
	else
		rc = cli_json_print(o);
	json_object_put(hops);
	json_object_put(o);
	return rc;
}

static void route_text(const struct smio_route_req *q, uint32_t host,
		       const struct smio_route_reply *r, const struct smio_mc_tree *mt,
		       const struct topo *tp)
{
	const struct smio_target *t = &r->tgt;
	char b[16], hs[16];

	bdf_str(b, sizeof(b), q->rid);
	printf("route on host %u: %s %s 0x%" PRIx64 ", %" PRIu64 " bytes, from %s%s\n", host,
	       q->write ? "write" : "read", q->write ? "to" : "from", q->addr, q->len,
	       q->rid ? b : "cpu", r->cached ? " (cached)" : "");
	printf("status: %s\n", str_of(status_str, ARRAY_LEN(status_str), r->status));
	if (r->status) {
		printf("reason: %s\n", r->reason[0] ? r->reason : "(none given)");
	} else {
		printf("target: host %u ", t->host);
		if (t->kind == TGT_MCAST) {
			/* mem is the adapter the write leaves by; the tree follows the hops. */
			printf("multicast address 0x%" PRIx64 " through ntb%u, %" PRIu64
			       " bytes in the group\n", t->addr, t->mem, t->len);
		} else {
			if (t->kind == TGT_BAR) {
				bdf_str(b, sizeof(b), t->bdf);
				printf("BAR%u of %s", t->bar, b);
			} else {
				printf(t->kind == TGT_MSI ? "MSI window" : "RAM");
			}
			printf(" at 0x%" PRIx64 ", memory object %u offset 0x%" PRIx64 ", %" PRIu64
			       " bytes contiguous\n", t->addr, t->mem, t->offset, t->len);
		}
	}
	printf("hops: %u (%u NTB crossing%s)\n", r->nhops, r->ntb_hops, r->ntb_hops == 1 ? "" : "s");
	for (uint32_t i = 0; i < r->nhops; i++) {
		const struct smio_hop *h = &r->hops[i];

		hop_where(h, hs, sizeof(hs), b, sizeof(b));
		printf("  %2u  %-14s host %-3s %-7s  %s", i + 1,
		       str_of(hop_str, ARRAY_LEN(hop_str), h->kind), hs, b, h->name);
		if (h->kind == HOP_LINK || h->kind == HOP_CABLE || h->gen)
			printf("  Gen%u x%u", h->gen, h->width);
		if (h->latency_ns)
			printf("  %u ns", h->latency_ns);
		putchar('\n');
	}
	if (mt)
		tree_text(mt, tp);
}

int cmd_route(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "from", required_argument, NULL, 'f' }, { "addr", required_argument, NULL, 'a' },
		{ "len", required_argument, NULL, 'l' }, { "read", no_argument, NULL, 'r' },
		{ "write", no_argument, NULL, 'w' }, { "nocache", no_argument, NULL, 'N' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	struct smio_route_req q = { .write = 1, .len = 4 };
	struct smio_route_reply *r;
	struct smio_mc_tree *mt = NULL;
	struct topo *tp = NULL;
	struct conn c = { 0 };
	const char *from = "cpu", *addr = NULL;
	bool json = false;
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'H': c.host_opt = optarg; break;
		case 'd': c.dir_opt = optarg; break;
		case 'f': from = optarg; break;
		case 'a': addr = optarg; break;
		case 'l':
			if (parse_num("--len", optarg, SMIO_MAX_LEN, &q.len))
				return 2;
			if (!q.len)
				return cli_err("--len must be at least 1"), 2;
			break;
		case 'r': q.write = 0; break;
		case 'w': q.write = 1; break;
		case 'N': q.nocache = 1; break;
		case 'j': json = true; break;
		case 'h': return route_usage(stdout), 0;
		default: return route_usage(stderr), 2;
		}
	}
	if (optind < argc)
		return cli_err("route: unexpected argument '%s'", argv[optind]), 2;
	if (!addr)
		return cli_err("route needs --addr ADDR (a bus address on the host)"), 2;
	rc = conn_open(&c, SMIO_ROLE_CLIENT);
	if (rc)
		return rc;
	if (cli_parse_func(c.fd, from, &q.rid) || cli_parse_addr(c.fd, addr, &q.addr)) {
		close(c.fd);
		return 2;
	}
	r = malloc(SMIO_MAX_PAYLOAD);
	rc = r ? call(&c, SMIO_ROUTE, &q, sizeof(q), r, SMIO_MAX_PAYLOAD, NULL) : -ENOMEM;
	/* A write into a multicast group: the switches' fan-out tree too. */
	if (!rc && !r->status && r->tgt.kind == TGT_MCAST) {
		struct smio_mc_tree_req tq = { .ntb = r->tgt.mem, .addr = r->tgt.addr };

		mt = malloc(SMIO_MAX_PAYLOAD);
		if (!mt || call(&c, SMIO_MC_TREE, &tq, sizeof(tq), mt, SMIO_MAX_PAYLOAD, NULL)) {
			free(mt);
			mt = NULL;
		}
		if (!json && cli_cluster_topo(c.dir, &tp))
			tp = NULL;
	}
	close(c.fd);
	if (rc) {
		cli_err("route on host %u: %s", c.host, cli_strerror(rc));
		free(r);
		return 1;
	}
	if (json) {
		if (route_json(&q, c.host, r, mt)) {
			free(r);
			free(mt);
			return 1;
		}
	} else {
		route_text(&q, c.host, r, mt, tp);
	}
	rc = r->status ? 1 : 0;
	free(r);
	free(mt);
	topo_free(tp);
	return rc;
}

/* ---------- ntb ---------- */

static void ntb_usage(FILE *f)
{
	fprintf(f,
		"usage: smartio ntb --host N [--ntb I] [--dir DIR] [--json] COMMAND\n\n"
		"Commands (default: info):\n"
		"  info                          adapter, windows, tables, link (--json: one\n"
		"                                object)\n"
		"  lut set ENTRY|auto HOST ADDR  window ENTRY -> HOST's bus address ADDR;\n"
		"                                'auto' takes the first free entry and prints\n"
		"                                the local window address to use\n"
		"  lut clear ENTRY               unprogram a window\n"
		"  rid add|del BDF               requester-ID table (traffic from the far side)\n"
		"  link up|down                  train or drop the external link\n"
		"  db BITS                       ring doorbell bits on the far side\n"
		"  spad IDX [VALUE]              read or write a scratchpad register\n"
		"--ntb I selects the host's I-th adapter (default 0).\n");
}

static const char *ntb_strerror(int rc, const struct smio_ntb_info *ni, const char *cmd,
				const char *sub)
{
	static char buf[128];

	switch (rc) {
	case -ENOSPC: return "look-up table full (or requester-ID table full)";
	case -EHOSTUNREACH: return "host not reachable over this adapter's cable";
	case -EINVAL:
		snprintf(buf, sizeof(buf), "address not aligned to the window size (0x%" PRIx64
			 ") or invalid value", ni->win_size);
		return buf;
	case -EBUSY:
		/* The daemon's NTB driver keeps what its services hold. */
		if (!strcmp(cmd, "rid"))
			return "requester held by a service (segments, lending, DMA); the admin "
			       "removes only what it added";
		if (sub && !strcmp(sub, "clear"))
			return "entry belongs to a mapping (a segment connection, a lent device); "
			       "it is cleared with that";
		return "entry in use; clear it first";
	case -ERANGE: return "index out of range ('smartio ntb info' shows the table sizes)";
	case -ENOENT:
		return !strcmp(cmd, "rid") ? "requester not in the table" : "entry not programmed";
	case -EEXIST: return "requester already added by the admin";
	case -ENOTCONN: return "this adapter has no cable (connect: in the topology)";
	case -ENOLINK: return "link is down ('smartio ntb link up')";
	case -EDESTADDRREQ:
		return "doorbells need a back-to-back cable; this one goes to a cluster switch";
	default: return cli_strerror(rc);
	}
}

static void ntb_print_info(uint32_t host, const struct smio_ntb_info *ni)
{
	static const char *const peer[] = { "not connected", "back-to-back NTB",
					    "cluster switch" };
	char b[16];

	bdf_str(b, sizeof(b), ni->bdf);
	printf("host %u ntb %u: %s at %s\n", host, ni->ntb, ni->name, b);
	printf("  BAR2      0x%" PRIx64 ", size 0x%" PRIx64 " (%u windows of 0x%" PRIx64 ")\n",
	       ni->bar_addr, ni->bar_size, ni->lut_entries, ni->win_size);
	printf("  LUT       %u of %u entries used\n", ni->lut_used, ni->lut_entries);
	printf("  RID table %u of %u entries used\n", ni->rid_used, ni->rid_entries);
	printf("  link      %s (cable to %s)\n", ni->link_up ? "up" : "down",
	       str_of(peer, ARRAY_LEN(peer), ni->peer_kind));
	printf("  doorbells %u (pending 0x%x), scratchpads %u, DMA channels %u\n",
	       ni->doorbells, ni->db_pending, ni->scratchpads, ni->dma_channels);
}

/* A subcommand of ntb/iommu that is not one (did you mean?), or one missing operands. */
static int unknown_or_incomplete(const char *tool, const char *word)
{
	static const char *const ntb_subs[] = { "lut", "rid", "link", "db", "spad" };
	static const char *const iommu_subs[] = { "domain", "attach", "detach", "map", "unmap" };
	bool ntb = !strcmp(tool, "ntb");
	const char *const *subs = ntb ? ntb_subs : iommu_subs;
	size_t n = ntb ? sizeof(ntb_subs) / sizeof(ntb_subs[0]) :
			 sizeof(iommu_subs) / sizeof(iommu_subs[0]);
	char prog[32];

	for (size_t i = 0; i < n; i++)
		if (!strcmp(word, subs[i])) {
			cli_err("%s %s: missing or extra operands (see 'smartio %s --help')", tool,
				word, tool);
			return 2;
		}
	snprintf(prog, sizeof(prog), "smartio %s", tool);
	smio_unknown(prog, "command", word, subs, n, ntb ? "see 'smartio ntb --help'" :
		     "see 'smartio iommu --help'");
	return 2;
}

static int ntb_lut(struct conn *c, const struct smio_ntb_info *ni, int n, char **a)
{
	struct smio_ntb_lut q = { .ntb = ni->ntb }, o;
	uint32_t rlen;
	uint64_t v;
	int rc;

	if (n == 2 && !strcmp(a[0], "clear")) {
		if (parse_num("ENTRY", a[1], UINT32_MAX - 1, &v))
			return 2;
		q.entry = (uint32_t)v;
		rc = call(c, SMIO_NTB_LUT_CLEAR, &q, sizeof(q), NULL, 0, NULL);
		if (!rc)
			printf("host %u ntb %u: LUT[%u] cleared\n", c->host, ni->ntb, q.entry);
		return rc;
	}
	if (n != 4 || strcmp(a[0], "set"))
		return cli_err("usage: ntb lut set ENTRY|auto HOST ADDR | ntb lut clear ENTRY"), 2;
	if (!strcmp(a[1], "auto"))
		q.entry = UINT32_MAX;
	else if (parse_num("ENTRY", a[1], UINT32_MAX - 1, &v))
		return 2;
	else
		q.entry = (uint32_t)v;
	if (parse_num("HOST", a[2], UINT32_MAX, &v))
		return 2;
	q.dest_host = (uint32_t)v;
	if (parse_num("ADDR", a[3], UINT64_MAX, &q.dest_addr))
		return 2;
	rc = call(c, SMIO_NTB_LUT_SET, &q, sizeof(q), &o, sizeof(o), &rlen);
	if (rc)
		return rc;
	if (rlen != sizeof(o)) {
		/* A daemon that does not echo the entry: only an explicit one is known. */
		if (q.entry == UINT32_MAX) {
			printf("host %u ntb %u: a LUT entry -> host %u address 0x%" PRIx64
			       " (the daemon did not say which)\n", c->host, ni->ntb,
			       q.dest_host, q.dest_addr);
			return 0;
		}
		o = q;
	}
	printf("host %u ntb %u: LUT[%u] -> host %u address 0x%" PRIx64 "\n", c->host, ni->ntb,
	       o.entry, o.dest_host, o.dest_addr);
	printf("window: local bus address 0x%" PRIx64 ", 0x%" PRIx64 " bytes\n",
	       ni->bar_addr + (uint64_t)o.entry * ni->win_size, ni->win_size);
	return 0;
}

static int ntb_run(struct conn *c, const struct smio_ntb_info *ni, int n, char **a)
{
	uint64_t v;
	uint16_t rid;
	int rc;

	if (!strcmp(a[0], "lut"))
		return ntb_lut(c, ni, n - 1, a + 1);
	if (!strcmp(a[0], "rid") && n == 3 && (!strcmp(a[1], "add") || !strcmp(a[1], "del"))) {
		struct smio_ntb_rid q = { .ntb = ni->ntb };
		bool add = !strcmp(a[1], "add");

		if (cli_parse_func(c->fd, a[2], &rid))
			return 2;
		q.rid = rid;
		rc = call(c, add ? SMIO_NTB_RID_ADD : SMIO_NTB_RID_DEL, &q, sizeof(q), NULL, 0, NULL);
		if (!rc)
			printf("host %u ntb %u: requester %s %s\n", c->host, ni->ntb, a[2],
			       add ? "added" : "removed");
		return rc;
	}
	if (!strcmp(a[0], "link") && n == 2 && (!strcmp(a[1], "up") || !strcmp(a[1], "down"))) {
		struct smio_ntb_link q = { .ntb = ni->ntb, .up = !strcmp(a[1], "up") };

		rc = call(c, SMIO_NTB_LINK, &q, sizeof(q), NULL, 0, NULL);
		if (!rc)
			printf("host %u ntb %u: link %s\n", c->host, ni->ntb, a[1]);
		return rc;
	}
	if (!strcmp(a[0], "db") && n == 2) {
		struct smio_ntb_db q = { .ntb = ni->ntb };

		if (parse_num("BITS", a[1], UINT32_MAX, &v))
			return 2;
		q.bits = (uint32_t)v;
		rc = call(c, SMIO_NTB_DB_RING, &q, sizeof(q), NULL, 0, NULL);
		if (!rc)
			printf("host %u ntb %u: rang doorbell bits 0x%x\n", c->host, ni->ntb, q.bits);
		return rc;
	}
	if (!strcmp(a[0], "spad") && (n == 2 || n == 3)) {
		struct smio_ntb_spad q = { .ntb = ni->ntb, .write = n == 3 }, o;

		if (parse_num("IDX", a[1], UINT32_MAX, &v))
			return 2;
		q.idx = (uint32_t)v;
		if (n == 3 && parse_num("VALUE", a[2], UINT32_MAX, &v))
			return 2;
		q.value = n == 3 ? (uint32_t)v : 0;
		rc = call(c, SMIO_NTB_SPAD, &q, sizeof(q), &o, sizeof(o), NULL);
		if (!rc)
			printf("host %u ntb %u: spad[%u] = 0x%08x\n", c->host, ni->ntb, o.idx, o.value);
		return rc;
	}
	return unknown_or_incomplete("ntb", a[0]);
}

int cmd_ntb(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "ntb", required_argument, NULL, 'n' }, { "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' }, { 0 } };
	struct smio_ntb_ref ref = { 0 };
	struct smio_ntb_info ni;
	struct conn c = { 0 };
	bool info, json = false;
	uint64_t v;
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch == 'H')
			c.host_opt = optarg;
		else if (ch == 'd')
			c.dir_opt = optarg;
		else if (ch == 'n' && !parse_num("--ntb", optarg, UINT32_MAX, &v))
			ref.ntb = (uint32_t)v;
		else if (ch == 'j')
			json = true;
		else if (ch == 'h')
			return ntb_usage(stdout), 0;
		else
			return ntb_usage(stderr), 2;
	}
	info = optind >= argc || !strcmp(argv[optind], "info");
	if (info && optind + 1 < argc)
		return cli_err("ntb info takes no arguments"), 2;
	if (json && !info)
		return cli_err("ntb: --json is for 'ntb info'; %s prints one line", argv[optind]), 2;
	rc = conn_open(&c, info ? SMIO_ROLE_CLIENT : SMIO_ROLE_ADMIN);
	if (rc)
		return rc;
	rc = call(&c, SMIO_NTB_INFO, &ref, sizeof(ref), &ni, sizeof(ni), NULL);
	if (rc == -ENOENT) {
		cli_err("host %u has no NTB %u (adapters count from 0; 'smartio topo' lists them)",
			c.host, ref.ntb);
		close(c.fd);
		return 1;
	}
	if (!rc && info && json)
		rc = cli_ntb_info_json(c.host, &ni) ? 1 : 0;
	else if (!rc && info)
		ntb_print_info(c.host, &ni);
	else if (!rc)
		rc = ntb_run(&c, &ni, argc - optind, argv + optind);
	close(c.fd);
	if (rc < 0)
		cli_err("host %u ntb %u: %s", c.host, ref.ntb,
			ntb_strerror(rc, &ni, optind < argc ? argv[optind] : "info",
				     optind + 1 < argc ? argv[optind + 1] : NULL));
	return rc < 0 ? 1 : rc;
}

/* ---------- iommu ---------- */

static void iommu_usage(FILE *f)
{
	fprintf(f,
		"usage: smartio iommu --host N [--dir DIR] [--json] COMMAND\n\n"
		"Commands:\n"
		"  faults                          recent translation faults (default; --json:\n"
		"                                  one object)\n"
		"  domain alloc | domain free D    create / destroy a translation domain\n"
		"  attach D BDF | detach BDF       put a requester in a domain / take it out\n"
		"  map D IOVA PADDR SIZE [r|w|rw]  map (4 KiB aligned; default rw)\n"
		"  unmap D IOVA SIZE\n");
}

static const char *iommu_strerror(int rc, uint32_t host)
{
	static char buf[96];

	switch (rc) {
	case -ENODEV:
		snprintf(buf, sizeof(buf), "host %u has its IOMMU off (iommu: true in the topology)",
			 host);
		return buf;
	case -ENOENT: return "no such domain, attachment or mapping";
	case -EBUSY: return "domain still has requesters attached; detach them first";
	case -EEXIST: return "part of the range is already mapped; unmap it first";
	case -EINVAL: return "addresses and sizes must be 4 KiB aligned, permissions r, w or rw";
	case -ERANGE: return "range beyond the IOMMU's address width";
	case -ENOSPC: return "no free domain";
	default: return cli_strerror(rc);
	}
}

static void iommu_print_faults(const struct smio_iommu_faults *f)
{
	static const char *const why[] = { "?", "no domain", "not present", "read denied",
					   "write denied", "address width" };
	char b[16];

	printf("%" PRIu64 " faults in total%s\n", f->total, f->n ? "; most recent:" : "");
	for (uint32_t i = 0; i < f->n; i++) {
		const struct smio_iommu_fault *x = &f->f[i];

		bdf_str(b, sizeof(b), x->rid);
		printf("  #%-4" PRIu64 " %s %-5s iova 0x%" PRIx64 " domain %u: %s\n", x->seq, b,
		       x->write ? "write" : "read", x->iova, x->domain,
		       str_of(why, ARRAY_LEN(why), x->reason));
	}
}

static int iommu_map_cmd(struct conn *c, int n, char **a)
{
	struct smio_iommu_map q = { .prot = 3 };
	bool map = !strcmp(a[0], "map");
	uint64_t v;
	int rc;

	if (parse_num("D", a[1], UINT32_MAX, &v) || parse_num("IOVA", a[2], UINT64_MAX, &q.iova))
		return 2;
	q.domain = (uint32_t)v;
	if (map) {
		if (parse_num("PADDR", a[3], UINT64_MAX, &q.paddr) ||
		    parse_num("SIZE", a[4], UINT64_MAX, &q.size))
			return 2;
		if (n == 6) {
			q.prot = !strcmp(a[5], "r") ? 1 : !strcmp(a[5], "w") ? 2 :
				 !strcmp(a[5], "rw") ? 3 : 0;
			if (!q.prot)
				return cli_err("permissions are r, w or rw, not '%s'", a[5]), 2;
		}
	} else if (parse_num("SIZE", a[3], UINT64_MAX, &q.size)) {
		return 2;
	}
	rc = call(c, map ? SMIO_IOMMU_MAP : SMIO_IOMMU_UNMAP, &q, sizeof(q), NULL, 0, NULL);
	if (!rc && map)
		printf("domain %u: iova 0x%" PRIx64 " -> 0x%" PRIx64 ", 0x%" PRIx64 " bytes %s%s\n",
		       q.domain, q.iova, q.paddr, q.size, q.prot & 1 ? "r" : "",
		       q.prot & 2 ? "w" : "");
	else if (!rc)
		printf("domain %u: iova 0x%" PRIx64 ", 0x%" PRIx64 " bytes unmapped\n", q.domain,
		       q.iova, q.size);
	return rc;
}

static int iommu_run(struct conn *c, int n, char **a)
{
	struct smio_iommu q = { 0 }, o;
	uint64_t v;
	int rc;

	if (!strcmp(a[0], "domain") && n == 2 && !strcmp(a[1], "alloc")) {
		q.op = SMIO_IOMMU_ALLOC;
	} else if (!strcmp(a[0], "domain") && n == 3 && !strcmp(a[1], "free")) {
		if (parse_num("D", a[2], UINT32_MAX, &v))
			return 2;
		q = (struct smio_iommu){ .op = SMIO_IOMMU_FREE, .domain = (uint32_t)v };
	} else if (!strcmp(a[0], "attach") && n == 3) {
		if (parse_num("D", a[1], UINT32_MAX, &v) || cli_parse_func(c->fd, a[2], &q.rid))
			return 2;
		q.op = SMIO_IOMMU_ATTACH;
		q.domain = (uint32_t)v;
	} else if (!strcmp(a[0], "detach") && n == 2) {
		if (cli_parse_func(c->fd, a[1], &q.rid))
			return 2;
		q.op = SMIO_IOMMU_DETACH;
	} else if ((!strcmp(a[0], "map") && (n == 5 || n == 6)) ||
		   (!strcmp(a[0], "unmap") && n == 4)) {
		return iommu_map_cmd(c, n, a);
	} else {
		return unknown_or_incomplete("iommu", a[0]);
	}
	rc = call(c, SMIO_IOMMU_DOMAIN, &q, sizeof(q), &o, sizeof(o), NULL);
	if (rc)
		return rc;
	if (q.op == SMIO_IOMMU_ALLOC)
		printf("domain %u\n", o.domain);
	else if (q.op == SMIO_IOMMU_FREE)
		printf("host %u: domain %u freed\n", c->host, q.domain);
	else
		printf("host %u: %s %s%s\n", c->host, a[n - 1], q.op == SMIO_IOMMU_ATTACH ?
		       "attached to domain " : "detached", q.op == SMIO_IOMMU_ATTACH ? a[1] : "");
	return 0;
}

int cmd_iommu(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' }, { "json", no_argument, NULL, 'j' }, { 0 } };
	struct conn c = { 0 };
	bool faults, json = false;
	int ch, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch == 'H')
			c.host_opt = optarg;
		else if (ch == 'd')
			c.dir_opt = optarg;
		else if (ch == 'j')
			json = true;
		else if (ch == 'h')
			return iommu_usage(stdout), 0;
		else
			return iommu_usage(stderr), 2;
	}
	faults = optind >= argc || !strcmp(argv[optind], "faults");
	if (json && !faults)
		return cli_err("iommu: --json is for 'iommu faults'; %s prints one line",
			       argv[optind]), 2;
	rc = conn_open(&c, faults ? SMIO_ROLE_CLIENT : SMIO_ROLE_ADMIN);
	if (rc)
		return rc;
	if (faults) {
		struct smio_iommu_faults *f = malloc(SMIO_MAX_PAYLOAD);

		rc = f ? call(&c, SMIO_IOMMU_FAULTS, NULL, 0, f, SMIO_MAX_PAYLOAD, NULL) : -ENOMEM;
		if (!rc && json)
			rc = cli_iommu_faults_json(c.host, f) ? 1 : 0;
		else if (!rc)
			iommu_print_faults(f);
		free(f);
	} else {
		rc = iommu_run(&c, argc - optind, argv + optind);
	}
	close(c.fd);
	if (rc < 0)
		cli_err("host %u: %s", c.host, iommu_strerror(rc, c.host));
	return rc < 0 ? 1 : rc;
}
