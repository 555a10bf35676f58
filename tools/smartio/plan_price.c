// SPDX-License-Identifier: MIT
/*
 * The planner's work (plan.h): which devices host N could use, every
 * composition of them that --need asks for, the route each transfer of the
 * workload would take (plan_model.c: the cluster's own lending and routing
 * code, in-process), its price from the timing model, and the ranking.
 *
 * What a workload costs:
 *   p2p-read   the first device reads the second's memory BAR (BAR2, else
 *              BAR0): latency = round trip of one 64-byte read, bandwidth =
 *              sustained for --size reads; ranked by bandwidth
 *   p2p-write  the same with posted writes (latency: one way of 64 bytes)
 *   nvme-qd1   one 4 KiB read at queue depth 1 with the queues and the data in
 *              the host's RAM, where its driver puts them: doorbell, command
 *              fetch, media, data, completion (as `predict nvme-read`);
 *              ranked by latency
 *   bandwidth  each device writes --size to the host's RAM, all at once: the
 *              sum of their rates, less what a link several of them share
 *              (the host's cable) cannot carry; ranked by bandwidth
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "plan.h"
#include "plan_model.h"

#define LAT_BYTES   64
#define QD1_BYTES   4096
#define DB_BYTES    4

const char *const plan_class_names[PLAN_NCLASS] = { "nvme", "accel" };
const char *const plan_work_names[PLAN_NWORK] = { "p2p-read", "p2p-write", "nvme-qd1",
						  "bandwidth" };

int plan_class_parse(const char *s)
{
	for (int i = 0; i < PLAN_NCLASS; i++)
		if (!strcmp(s, plan_class_names[i]))
			return i;
	return -1;
}

int plan_work_parse(const char *s)
{
	for (int i = 0; i < PLAN_NWORK; i++)
		if (!strcmp(s, plan_work_names[i]))
			return i;
	return -1;
}

/* ---------- one transfer ---------- */

#define NICE_MAX 48

struct xfer {
	struct timing_hop h[TIMING_MAX_HOPS];
	char nice[TIMING_MAX_HOPS][NICE_MAX];   /* "lender-a.ntb0", "mxs0", "borrower RAM" */
	unsigned n;
	struct timing_result lat, bw;   /* a LAT_BYTES transfer; a large one */
};

struct ctx {
	const struct plan_req *q;
	const struct topo *t;
	struct plan_result *res;
	struct plan_world *w;
	struct plan_dev *pd[PLAN_MAX_CANDS];
	struct fab_route *fr;
};

/* A hop named for people: the host's name, the hop's first word. */
static void nice_name(const struct topo *t, const struct timing_hop *h, char *buf, size_t len)
{
	int hi = h->host == TIMING_HOST_NONE ? -1 : topo_host_index(t, h->host);
	const char *host = hi >= 0 ? t->hosts[hi].name : "?";
	size_t w = strcspn(h->name, " ");

	switch (h->kind) {
	case TIMING_HOP_CSWITCH: snprintf(buf, len, "%.*s", (int)w, h->name); break;
	case TIMING_HOP_ROOT: snprintf(buf, len, "%s root complex", host); break;
	case TIMING_HOP_IOMMU: snprintf(buf, len, "%s IOMMU", host); break;
	case TIMING_HOP_MEMORY: snprintf(buf, len, "%s RAM", host); break;
	default: snprintf(buf, len, "%s.%.*s", host, (int)w, h->name); break;
	}
}

/* Price route fr for small and large transfers. 0 or -errno. */
static int price(const struct ctx *c, uint64_t size, bool write, uint8_t completer,
		 struct xfer *x)
{
	struct timing_query q = { .write = write, .completer = completer };
	int n = timing_hops_from_fab(c->fr->hops, c->fr->nhops, x->h, TIMING_MAX_HOPS);

	if (n < 0)
		return n;
	x->n = (unsigned)n;
	for (unsigned i = 0; i < x->n; i++)
		nice_name(c->t, &x->h[i], x->nice[i], sizeof(x->nice[i]));
	q.size = LAT_BYTES;
	if (timing_path(c->q->p, x->h, x->n, &q, &x->lat))
		return -EINVAL;
	q.size = size;
	return timing_path(c->q->p, x->h, x->n, &q, &x->bw) ? -EINVAL : 0;
}

static bool is_link(const struct timing_hop *h)
{
	return h->kind == TIMING_HOP_LINK || h->kind == TIMING_HOP_CABLE;
}

/* A link named by what it joins: "lender-a.ntb0 → mxs0 (Gen3 x8)". */
static void link_name(const struct xfer *x, int i, char *buf, size_t len)
{
	int a = i - 1, b = i + 1;

	while (a >= 0 && is_link(&x->h[a]))
		a--;
	while ((unsigned)b < x->n && is_link(&x->h[b]))
		b++;
	snprintf(buf, len, "%s \u2192 %s (Gen%u x%u%s)", a >= 0 ? x->nice[a] : "?",
		 (unsigned)b < x->n ? x->nice[b] : "?", x->h[i].gen, x->h[i].width,
		 x->h[i].kind == TIMING_HOP_CABLE ? " cable" : "");
}

/* What a hop adds to a transfer's latency (one way). */
static double hop_ns(const struct timing_params *p, const struct timing_hop *h)
{
	switch (h->kind) {
	case TIMING_HOP_SWITCH:
	case TIMING_HOP_ROOT:
	case TIMING_HOP_NTB:
	case TIMING_HOP_CSWITCH:
		return h->latency_ns;
	case TIMING_HOP_CABLE:
		return (double)p->cable_ns + h->latency_ns;
	case TIMING_HOP_IOMMU:
		return p->iotlb_hit_ns;
	default:
		return 0;
	}
}

/* The bandwidth bottleneck of x's large transfer. */
static void bw_bottleneck(const struct xfer *x, struct plan *pl)
{
	int i = x->bw.bottleneck;

	snprintf(pl->why, sizeof(pl->why), "%s", timing_limit_str(x->bw.limit));
	if (i < 0 || (unsigned)i >= x->n)
		snprintf(pl->bottleneck, sizeof(pl->bottleneck), "-");
	else if (is_link(&x->h[i]))
		link_name(x, i, pl->bottleneck, sizeof(pl->bottleneck));
	else if (x->bw.limit == TIMING_LIMIT_TAGS)
		snprintf(pl->bottleneck, sizeof(pl->bottleneck), "%s (its outstanding reads)",
			 x->nice[i]);
	else
		snprintf(pl->bottleneck, sizeof(pl->bottleneck), "%s (outstanding reads)",
			 x->nice[i]);
}

/* The latency bottleneck: the hop that adds the most. */
static void lat_bottleneck(const struct timing_params *p, const struct xfer *x,
			   struct plan *pl)
{
	double best = -1;
	int bi = -1;

	for (unsigned i = 0; i < x->n; i++)
		if (hop_ns(p, &x->h[i]) > best) {
			best = hop_ns(p, &x->h[i]);
			bi = (int)i;
		}
	snprintf(pl->why, sizeof(pl->why), "latency");
	if (bi < 0)
		snprintf(pl->bottleneck, sizeof(pl->bottleneck), "-");
	else if (is_link(&x->h[bi]))
		link_name(x, bi, pl->bottleneck, sizeof(pl->bottleneck));
	else
		snprintf(pl->bottleneck, sizeof(pl->bottleneck), "%s (%s, %.0f ns)", x->nice[bi],
			 timing_hop_kind_str(x->h[bi].kind), best);
}

/* Counts and the words of x's path. */
static void describe(const struct xfer *x, struct plan *pl)
{
	size_t o = 0;

	pl->nhops = x->n;
	pl->ntbs = pl->iommus = pl->switches = pl->roots = 0;
	pl->path[0] = '\0';
	for (unsigned i = 0; i < x->n; i++) {
		const struct timing_hop *h = &x->h[i];

		pl->ntbs += h->kind == TIMING_HOP_NTB;
		pl->iommus += h->kind == TIMING_HOP_IOMMU;
		/* root ports are switch hops of 0 ns: not a chip on the way */
		pl->switches += (h->kind == TIMING_HOP_SWITCH && h->latency_ns) ||
				h->kind == TIMING_HOP_CSWITCH;
		pl->roots += h->kind == TIMING_HOP_ROOT;
		if (is_link(h) || o >= sizeof(pl->path))
			continue;
		o += (size_t)snprintf(pl->path + o, sizeof(pl->path) - o, "%s%s",
				      o ? " \u2192 " : "", x->nice[i]);
	}
}

/* ---------- workloads ---------- */

static int p2p(struct ctx *c, struct plan *pl, bool write)
{
	struct plan_dev *cl = c->pd[pl->dev[0]], *pv = c->pd[pl->dev[1]];
	unsigned bar = plan_dev_bar_size(pv, 2) ? 2 : 0;
	struct xfer *x = malloc(sizeof(*x));
	int rc;

	if (!x)
		return -ENOMEM;
	rc = plan_route_p2p(c->w, cl, pv, bar, DB_BYTES, write, c->fr);
	if (!rc)
		rc = price(c, c->q->size, write, bar == 2 ? TIMING_CPL_DEVMEM : TIMING_CPL_REGS, x);
	if (!rc) {
		pl->latency_ns = x->lat.latency_ns;
		pl->bw_gbs = x->bw.bw_gbs;
		bw_bottleneck(x, pl);
		describe(x, pl);
	}
	free(x);
	return rc;
}

/* The same physical link in two routes ("link to X" one way, "link from X" back). */
static bool same_link(const struct timing_hop *a, const struct timing_hop *b)
{
	const char *na = strstr(a->name, " to ") ? strstr(a->name, " to ") + 4 :
			 strstr(a->name, " from ") ? strstr(a->name, " from ") + 6 : a->name;
	const char *nb = strstr(b->name, " to ") ? strstr(b->name, " to ") + 4 :
			 strstr(b->name, " from ") ? strstr(b->name, " from ") + 6 : b->name;

	return a->kind == b->kind && a->host == b->host && a->gen == b->gen &&
	       a->width == b->width && !strcmp(na, nb);
}

/* What a link carries of large posted writes (MPS payloads): GB/s. */
static double link_write_gbs(const struct timing_params *p, const struct timing_hop *h)
{
	struct timing_link_info li;

	if (timing_link_info(p, h->gen, h->width, p->mps, &li))
		return INFINITY;
	return li.tlp_gbs * p->mps / (p->mps + li.mwr_hdr);
}

/*
 * All members write at once: the composition moves the sum of their rates,
 * unless a link that several of them cross (host N's cable, a shared
 * upstream port) carries less. Latency is the slowest member's.
 */
static int bandwidth(struct ctx *c, struct plan *pl)
{
	unsigned n = c->q->nneed, worst = 0;
	struct xfer *x = malloc(n * sizeof(*x));
	double sum = 0, cap = INFINITY;
	unsigned cap_users = 0;
	int rc = x ? 0 : -ENOMEM, ck = -1, cm = -1;

	pl->latency_ns = 0;
	for (unsigned k = 0; !rc && k < n; k++) {
		rc = plan_route_ram(c->w, c->pd[pl->dev[k]], DB_BYTES, true, c->fr);
		if (!rc)
			rc = price(c, c->q->size, true, TIMING_CPL_DRAM, &x[k]);
		if (rc)
			break;
		sum += x[k].bw.bw_gbs;
		if (x[k].lat.latency_ns > pl->latency_ns)
			pl->latency_ns = x[k].lat.latency_ns;
		if (x[k].bw.bw_gbs < x[worst].bw.bw_gbs)
			worst = k;
	}
	/* Each shared link L: it carries at most cap(L) of its users' rates, the
	 * others add theirs. The tightest such total binds. */
	for (unsigned k = 0; !rc && k < n; k++)
		for (unsigned i = 0; i < x[k].n; i++) {
			unsigned users = 0;
			double others = 0, total;

			if (!is_link(&x[k].h[i]))
				continue;
			for (unsigned m = 0; m < n; m++) {
				bool uses = false;

				for (unsigned j = 0; j < x[m].n && !uses; j++)
					uses = same_link(&x[k].h[i], &x[m].h[j]);
				users += uses;
				if (!uses)
					others += x[m].bw.bw_gbs;
			}
			if (users < 2)
				continue;
			total = link_write_gbs(c->q->p, &x[k].h[i]) + others;
			if (total < cap - 1e-9 || (total <= cap + 1e-9 && users > cap_users)) {
				cap = total;
				cap_users = users;
				ck = (int)k;
				cm = (int)i;
			}
		}
	if (!rc) {
		describe(&x[ck >= 0 && cap < sum ? (unsigned)ck : worst], pl);
		if (ck >= 0 && cap < sum) {
			pl->bw_gbs = cap;
			link_name(&x[ck], cm, pl->bottleneck, sizeof(pl->bottleneck));
			snprintf(pl->why, sizeof(pl->why), "link bytes, shared by the devices");
		} else {
			pl->bw_gbs = sum;
			bw_bottleneck(&x[worst], pl);
		}
	}
	free(x);
	return rc;
}

static int nvme_qd1(struct ctx *c, struct plan *pl)
{
	const struct timing_params *p = c->q->p;
	struct xfer *x = malloc(4 * sizeof(*x));
	int rc = x ? 0 : -ENOMEM;

	pl->latency_ns = 0;
	for (unsigned k = 0; !rc && k < c->q->nneed; k++) {
		struct plan_dev *d = c->pd[pl->dev[k]];
		struct timing_nvme_paths paths;
		struct timing_nvme t;
		double total;

		/* doorbell (CPU -> BAR0), fetch (SQE read), data and CQE writes */
		rc = plan_route_cpu(c->w, d, 0, DB_BYTES, true, c->fr);
		if (!rc)
			rc = price(c, DB_BYTES, true, TIMING_CPL_REGS, &x[0]);
		if (!rc)
			rc = plan_route_ram(c->w, d, p->nvme_sqe_bytes, false, c->fr);
		if (!rc)
			rc = price(c, p->nvme_sqe_bytes, false, TIMING_CPL_DRAM, &x[1]);
		if (!rc)
			rc = plan_route_ram(c->w, d, QD1_BYTES, true, c->fr);
		if (!rc)
			rc = price(c, QD1_BYTES, true, TIMING_CPL_DRAM, &x[2]);
		if (!rc)
			rc = price(c, p->nvme_cqe_bytes, true, TIMING_CPL_DRAM, &x[3]);
		if (rc)
			break;
		/* the formula of predict nvme-read and the model's faithful mode */
		paths = (struct timing_nvme_paths){ .doorbell = x[0].h, .ndoorbell = x[0].n,
						    .sq = x[1].h, .nsq = x[1].n,
						    .data = x[2].h, .ndata = x[2].n,
						    .cq = x[3].h, .ncq = x[3].n };
		rc = timing_nvme_io(p, &paths, NULL, QD1_BYTES, false, p->nvme_media_read_ns, &t);
		if (rc)
			break;
		total = t.total_ns;
		if (total > pl->latency_ns) {
			pl->latency_ns = total;
			pl->bw_gbs = QD1_BYTES / total;
			lat_bottleneck(p, &x[1], pl);   /* the fetch round trip is what placement moves */
			describe(&x[1], pl);
		}
	}
	free(x);
	return rc;
}

/* ---------- candidates ---------- */

static int cls_of(const char *model)
{
	return model ? plan_class_parse(model) : -1;
}

static bool needed(const struct plan_req *q, int cls)
{
	for (unsigned i = 0; i < q->nneed; i++)
		if (q->need[i] == cls)
			return true;
	return false;
}

static void add_excl(struct plan_result *res, uint32_t fdid, uint32_t lender, const char *name,
		     const char *why)
{
	struct plan_excl *e;

	if (res->nexcl >= PLAN_MAX_CANDS)
		return;
	e = &res->excl[res->nexcl++];
	*e = (struct plan_excl){ .fdid = fdid, .lender = lender };
	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->why, sizeof(e->why), "%s", why);
}

static void add_cand(struct ctx *c, const struct topo *t, uint32_t fdid, uint32_t lender,
		     uint16_t bdf, int cls, bool borrowed, const char *name)
{
	struct plan_result *res = c->res;
	struct plan_cand *k;
	int hi = topo_host_index(t, lender), rc;

	if (res->ncand >= PLAN_MAX_CANDS)
		return;
	rc = plan_world_dev(c->w, lender, bdf, &c->pd[res->ncand]);
	if (rc) {
		char why[48];

		snprintf(why, sizeof(why), "cannot be lent here: %s", strerror(-rc));
		add_excl(res, fdid, lender, name, why);
		return;
	}
	k = &res->cand[res->ncand++];
	*k = (struct plan_cand){ .fdid = fdid, .lender = lender, .bdf = bdf, .cls = cls,
				 .own = lender == c->q->host, .borrowed = borrowed };
	snprintf(k->name, sizeof(k->name), "%s", name);
	snprintf(k->lender_name, sizeof(k->lender_name), "%s",
		 hi >= 0 ? t->hosts[hi].name : "?");
}

static int gather(struct ctx *c, const struct topo *t)
{
	struct smio_lend_pool *pool = malloc(SMIO_MAX_PAYLOAD);
	const struct plan_req *q = c->q;
	const char *model, *name;
	uint32_t rlen, node;
	uint16_t bdf;
	int fd, rc, hi = topo_host_index(t, q->host);

	if (!pool)
		return -ENOMEM;
	fd = cli_connect(q->dir, q->host, SMIO_ROLE_CLIENT);
	rc = fd < 0 ? fd : smio_call(fd, SMIO_LEND_POOL, NULL, 0, pool, SMIO_MAX_PAYLOAD, &rlen,
				     NULL, CLI_TIMEOUT_MS);
	if (fd >= 0)
		close(fd);
	if (rc) {
		cli_err("plan: the pool from host %u: %s", q->host, cli_strerror(rc));
		free(pool);
		return 1;
	}
	for (uint32_t i = 0; i < pool->n; i++) {
		const struct smio_lend_entry *e = &pool->e[i];
		int cls = cls_of(plan_world_model(c->w, e->lender, e->bdf));
		char why[48];

		if (cls < 0 || !needed(q, cls))
			continue;
		if (e->state == SMIO_LEND_AVAILABLE || (e->state == SMIO_LEND_LENT &&
							e->borrower == q->host)) {
			add_cand(c, t, e->fdid, e->lender, e->bdf, cls,
				 e->state == SMIO_LEND_LENT, e->name);
			continue;
		}
		if (e->state == SMIO_LEND_LENT)
			snprintf(why, sizeof(why), "lent to host %u", e->borrower);
		else
			snprintf(why, sizeof(why), "borrowed through SISCI (%u users)",
				 e->sisci_borrows);
		add_excl(c->res, e->fdid, e->lender, e->name, why);
	}
	/* The host's own devices that it does not lend count too. */
	node = hi >= 0 ? t->hosts[hi].node_id : 0;
	for (unsigned i = 0; plan_world_endpoint(c->w, q->host, i, &bdf, &model, &name); i++) {
		int cls = cls_of(model);
		bool pooled = false;

		for (uint32_t k = 0; k < pool->n; k++)
			pooled |= pool->e[k].lender == q->host && pool->e[k].bdf == bdf;
		if (!pooled && cls >= 0 && needed(q, cls))
			add_cand(c, t, SMIO_FDID(node, bdf), q->host, bdf, cls, false, name);
	}
	free(pool);
	return 0;
}

/* ---------- compositions ---------- */

static int price_plan(struct ctx *c, struct plan *pl)
{
	const struct plan_req *q = c->q;
	int rc;

	switch (q->work) {
	case PLAN_P2P_READ: rc = p2p(c, pl, false); break;
	case PLAN_P2P_WRITE: rc = p2p(c, pl, true); break;
	case PLAN_NVME_QD1: rc = nvme_qd1(c, pl); break;
	default: rc = bandwidth(c, pl); break;
	}
	if (rc)
		return rc;
	if (q->work == PLAN_NVME_QD1) {
		pl->k1 = pl->latency_ns;
		pl->k2 = -pl->bw_gbs;
	} else {
		pl->k1 = -pl->bw_gbs;
		pl->k2 = pl->latency_ns;
	}
	pl->pref = 0;
	for (unsigned k = 0; k < q->nneed; k++)
		pl->pref += 2 * c->res->cand[pl->dev[k]].borrowed + c->res->cand[pl->dev[k]].own;
	return 0;
}

/* Every assignment of distinct candidates to the needed classes from position pos. */
static int compose(struct ctx *c, struct plan *cur, unsigned pos)
{
	struct plan_result *res = c->res;
	int rc;

	if (pos == c->q->nneed) {
		if (res->nplans >= PLAN_MAX_PLANS)
			return 0;
		rc = price_plan(c, cur);
		if (rc == -ENOMEM)
			return rc;
		if (!rc)     /* a composition without a route is no choice */
			res->plans[res->nplans++] = *cur;
		return 0;
	}
	for (unsigned i = 0; i < res->ncand; i++) {
		bool used = false;

		for (unsigned k = 0; k < pos; k++)
			used |= cur->dev[k] == i;
		if (used || res->cand[i].cls != c->q->need[pos])
			continue;
		cur->dev[pos] = i;
		rc = compose(c, cur, pos + 1);
		if (rc)
			return rc;
	}
	return 0;
}

static bool differ(double a, double b)
{
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	/* Differences below 0.05 % are the model's rounding, not a reason to prefer. */
	return fabs(a - b) > 5e-4 * m;
}

static int cmp_plan(const void *a, const void *b)
{
	const struct plan *x = a, *y = b;

	if (differ(x->k1, y->k1))
		return x->k1 < y->k1 ? -1 : 1;
	if (differ(x->k2, y->k2))
		return x->k2 < y->k2 ? -1 : 1;
	if (x->pref != y->pref)
		return y->pref - x->pref;
	return memcmp(x->dev, y->dev, sizeof(x->dev));
}

static void sorted_set(const struct plan *p, unsigned n, unsigned *out)
{
	memcpy(out, p->dev, n * sizeof(*out));
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && out[j - 1] > out[j]; j--) {
			unsigned t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
}

/* The same devices in another order (accel,accel both ways): keep the better one. */
static void dedupe(struct plan_result *res, unsigned n)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < res->nplans; i++) {
		unsigned a[PLAN_MAX_NEED], b[PLAN_MAX_NEED];
		bool dup = false;

		sorted_set(&res->plans[i], n, a);
		for (unsigned k = 0; k < kept && !dup; k++) {
			sorted_set(&res->plans[k], n, b);
			dup = !memcmp(a, b, n * sizeof(*a));
		}
		if (!dup)
			res->plans[kept++] = res->plans[i];
	}
	res->nplans = kept;
}

int plan_run(const struct plan_req *q, struct plan_result *res)
{
	struct ctx c = { .q = q, .res = res };
	struct plan cur;
	struct topo *t = NULL;
	char err[512];
	int rc, hi;

	memset(res, 0, sizeof(*res));
	memset(&cur, 0, sizeof(cur));
	if (cli_cluster_topo(q->dir, &t))
		return 1;
	hi = topo_host_index(t, q->host);
	if (hi < 0) {
		cli_err("plan: no host %u in the cluster's topology", q->host);
		topo_free(t);
		return 1;
	}
	snprintf(res->host_name, sizeof(res->host_name), "%s", t->hosts[hi].name);
	c.t = t;
	res->plans = calloc(PLAN_MAX_PLANS, sizeof(*res->plans));
	c.fr = malloc(sizeof(*c.fr));
	rc = res->plans && c.fr ? 0 : -ENOMEM;
	if (!rc) {
		rc = plan_world_open(t, q->host, &c.w, err, sizeof(err));
		if (rc) {
			cli_err("plan: modelling the cluster: %s", err);
			rc = 1;
		}
	}
	if (!rc)
		rc = gather(&c, t);
	if (!rc)
		rc = compose(&c, &cur, 0);
	if (!rc) {
		qsort(res->plans, res->nplans, sizeof(*res->plans), cmp_plan);
		dedupe(res, q->nneed);
	}
	plan_world_close(c.w);
	free(c.fr);
	topo_free(t);
	if (rc)
		plan_result_free(res);
	return rc;
}

void plan_result_free(struct plan_result *res)
{
	free(res->plans);
	res->plans = NULL;
	res->nplans = 0;
}
