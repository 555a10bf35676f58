// SPDX-License-Identifier: MIT
/*
 * obs_collect: a snapshot of a running cluster from its daemons (observe.h).
 *
 * Sections, in the order a pass runs them:
 *   1. topology   DIR/topology.yaml: hosts, their slots, cluster switches
 *   2. hosts      STATUS per host (no answer in time: down) and its counters;
 *                 STATS (the daemon's own counters, kept for sections 3 and 6)
 *                 and, with a tracker, EVENTS after the tracker's cursor
 *   3. adapters   NTB_INFO per adapter: link state, LUT/RID usage; STATS' link
 *                 errors, drops and doorbells
 *   4. faults     IOMMU_FAULTS per host with an IOMMU
 *   5. cables     the topology's cables with the live state of their ends
 *   6. pool       LEND_POOL from the first host that answers, each lease's
 *                 path (the cables between lender and borrower), each
 *                 device's counters from its lender's STATS and, when lent,
 *                 the driver bound on the borrower (the borrower's STATS)
 * Every call has a short timeout: a hung daemon costs one timeout per pass and
 * is shown down, never blocks the caller for long.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "lease_path.h"
#include "obs_stats.h"
#include "observe.h"
#include "stats.h"

#define LINK_UNKNOWN (-1)
#define CABLE_ID_MAX 80

struct obs_cable {
	char id[CABLE_ID_MAX];
	uint32_t ha, na;            /* host index, NTB index of end a */
	bool to_host;               /* end b: another host's NTB (else a cluster switch) */
	uint32_t hb, nb;            /* end b when to_host */
	uint32_t cs;                /* end b otherwise: cluster switch index */
	int state;                  /* 1 up, 0 down, LINK_UNKNOWN */
};

/* One pass: what the sections share. */
struct pass {
	const char *dir;
	int tmo;
	struct topo *t;
	int *up;                    /* per host index: 1 answered STATUS */
	int **link;                 /* per host index, per NTB: 1, 0, LINK_UNKNOWN */
	uint32_t *nntb;             /* NTBs per host in the topology */
	struct obs_cable *cab;
	uint32_t ncab;
	void *buf;                  /* SMIO_MAX_PAYLOAD bytes for variable replies */
	struct json_object **stats; /* per host index: its STATS object, or NULL */
	const struct obs_tracker *trk;  /* event cursors, or NULL: no daemon events */
};

int64_t obs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void bdf_str(char *buf, size_t len, uint16_t bdf)
{
	snprintf(buf, len, "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
}

static int add_hex(struct json_object *o, const char *key, uint64_t v, int width)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%0*" PRIx64, width, v);
	return smio_json_add_str(o, key, b);
}

/* Push o on arr unless failed (then release o); 0 or -ENOMEM. */
static int push_or_put(struct json_object *arr, struct json_object *o, bool failed)
{
	if (failed || !o) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

/* Both adds run (each takes its value in every case); 0 or -ENOMEM. */
static int add_two(struct json_object *o, const char *k1, struct json_object *v1, const char *k2,
		   struct json_object *v2)
{
	int r1 = smio_json_add(o, k1, v1), r2 = smio_json_add(o, k2, v2);

	return r1 || r2 ? -ENOMEM : 0;
}

/* A client connection to host id with HELLO under the pass's timeout; fd or -errno. */
static int host_open(const struct pass *p, uint32_t id)
{
	struct smio_hello hello = { .role = SMIO_ROLE_CLIENT, .host = id,
				    .pid = (uint32_t)getpid(), .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	uint32_t rlen;
	int fd = smio_connect(p->dir, id, 0), rc;

	if (fd < 0)
		return fd;
	rc = smio_call(fd, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen, NULL,
		       p->tmo);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* ---------- 1. topology: a host's slots, for drawing ---------- */

static struct json_object *slot_json(const struct topo_port *port, uint32_t *ntb_idx);

static struct json_object *slots_json(const struct topo_port *ports, uint32_t n, uint32_t *ntb_idx)
{
	struct json_object *arr = json_object_new_array();

	for (uint32_t i = 0; arr && i < n; i++)
		if (smio_json_push(arr, slot_json(&ports[i], ntb_idx))) {
			json_object_put(arr);
			return NULL;
		}
	return arr;
}

static struct json_object *slot_json(const struct topo_port *port, uint32_t *ntb_idx)
{
	static const char *const kinds[] = { "empty", "device", "switch", "ntb" };
	struct json_object *o = json_object_new_object();
	char link[16];
	int rc;

	if (!o)
		return NULL;
	snprintf(link, sizeof(link), "Gen%u x%u", port->link.gen, port->link.width);
	rc = smio_json_add_str(o, "kind", kinds[port->kind]) || smio_json_add_str(o, "link", link);
	switch (port->kind) {
	case TOPO_SLOT_DEVICE:
		rc = rc || smio_json_add_str(o, "name", port->dev.name) ||
		     smio_json_add_str(o, "model", port->dev.model) ||
		     smio_json_add_bool(o, "lendable", port->dev.lendable);
		break;
	case TOPO_SLOT_SWITCH:
		rc = rc || smio_json_add_str(o, "name", port->sw.name) ||
		     smio_json_add_str(o, "chip", port->sw.chip) ||
		     smio_json_add(o, "ports", slots_json(port->sw.ports, port->sw.nports, ntb_idx));
		break;
	case TOPO_SLOT_NTB:
		rc = rc || smio_json_add_str(o, "name", port->ntb.name) ||
		     smio_json_add_str(o, "model", port->ntb.model) ||
		     smio_json_add_uint(o, "ntb", (*ntb_idx)++);
		break;
	default:
		break;
	}
	if (rc) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int count_ntb(const struct topo_host *h, const struct topo_ntb *n, uint32_t i, void *arg)
{
	(void)h, (void)n, (void)i;
	(*(uint32_t *)arg)++;
	return 0;
}

/* The model of host h's device called name ("" if the topology has none). */
static const char *dev_model(const struct topo_port *ports, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct topo_port *p = &ports[i];
		const char *m;

		if (p->kind == TOPO_SLOT_DEVICE && !strcmp(p->dev.name, name))
			return p->dev.model;
		if (p->kind == TOPO_SLOT_SWITCH &&
		    *(m = dev_model(p->sw.ports, p->sw.nports, name)))
			return m;
	}
	return "";
}

/* ---------- 2. hosts and 3. adapters ---------- */

static int adapter_json(struct json_object *arr, const struct smio_ntb_info *ni, bool known,
			const struct topo_ntb *tn, uint32_t idx, int link, struct json_object *st)
{
	struct json_object *o = json_object_new_object(), *c = json_object_new_object();
	char b[16], peer[2 * TOPO_NAME_MAX + 16];
	int rc;

	if (!o || !c) {
		json_object_put(o);
		json_object_put(c);
		return -ENOMEM;
	}
	snprintf(peer, sizeof(peer), "%s", tn ? tn->connect : "");
	bdf_str(b, sizeof(b), ni->bdf);
	rc = smio_json_add_uint(o, "ntb", idx) ||
	     smio_json_add_str(o, "name", known ? ni->name : tn ? tn->name : "?") ||
	     smio_json_add_str(o, "bdf", known ? b : NULL) ||
	     smio_json_add_str(o, "link", link == 1 ? "up" : link == 0 ? "down" : "unknown") ||
	     smio_json_add_str(o, "connect", peer) ||
	     (tn ? smio_json_add_uint(o, "cable_gen", tn->cable.gen) ||
		   smio_json_add_uint(o, "cable_width", tn->cable.width) : 0);
	if (!rc && known)
		rc = smio_json_add_uint(c, "lut_used", ni->lut_used) ||
		     smio_json_add_uint(c, "lut_entries", ni->lut_entries) ||
		     smio_json_add_uint(c, "rid_used", ni->rid_used) ||
		     smio_json_add_uint(c, "rid_entries", ni->rid_entries) ||
		     smio_json_add_uint(c, "doorbells_pending", ni->db_pending) ||
		     smio_json_add_uint(c, "dma_channels", ni->dma_channels);
	/* The daemon's counters of this adapter (STATS, "adapters" by index). */
	st = known ? obs_stats_find(st, "adapters", "index", NULL, idx) : NULL;
	if (!rc && st)
		rc = obs_copy_counter(c, "link_errors_total", st, "link_errors") ||
		     obs_copy_counter(c, "link_drops_total", st, "link_drops") ||
		     obs_copy_counter(c, "doorbells_total", st, "doorbells");
	if (rc || smio_json_add(o, "counters", c)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

static int faults_json(struct json_object *host, const struct smio_iommu_faults *f)
{
	static const char *const why[] = { "?", "no domain", "not present", "read denied",
					   "write denied", "address width" };
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	int rc = (!o || !arr) ? -ENOMEM : 0;

	for (uint32_t i = 0; i < f->n && !rc; i++) {
		const struct smio_iommu_fault *x = &f->f[i];
		struct json_object *e = json_object_new_object();
		char b[16];

		bdf_str(b, sizeof(b), x->rid);
		rc = push_or_put(arr, e, !e || smio_json_add_uint(e, "seq", x->seq) ||
				 smio_json_add_str(e, "rid", b) ||
				 smio_json_add_bool(e, "write", x->write) ||
				 add_hex(e, "iova", x->iova, 1) ||
				 smio_json_add_uint(e, "domain", x->domain) ||
				 smio_json_add_str(e, "reason",
						   x->reason < 6 ? why[x->reason] : "?"));
	}
	if (rc) {
		json_object_put(arr);
		json_object_put(o);
		return rc;
	}
	rc = smio_json_add(o, "recent", arr) || smio_json_add_uint(o, "total", f->total);
	if (rc) {
		json_object_put(o);
		return rc;
	}
	return smio_json_add(host, "iommu_faults", o);
}

/*
 * The daemon's events after the tracker's cursor, for obs_track to merge:
 * host "daemon_events" (oldest first) and "daemon_events_next" (the next
 * cursor; 0 when the daemon restarted). Nothing when EVENTS fails: the
 * cursor stays and the next pass asks again.
 */
static int host_events(struct pass *p, uint32_t hi, int fd, uint32_t pid, struct json_object *host)
{
	uint64_t since = obs_track_since(p->trk, p->t->hosts[hi].id, pid,
					 obs_stat_u(p->stats[hi], "events_last"));
	uint64_t next = since;
	struct json_object *ev = NULL;

	if (cli_events_fetch(fd, since, &ev, &next))
		return 0;
	return smio_json_add(host, "daemon_events", ev) ||
	       smio_json_add_uint(host, "daemon_events_next", next) ? -ENOMEM : 0;
}

/* Sections 2-4 for one host: STATUS, STATS, EVENTS, NTB_INFO per adapter, IOMMU_FAULTS. */
static int host_json(struct pass *p, uint32_t hi, struct json_object *hosts)
{
	const struct topo_host *h = &p->t->hosts[hi];
	struct json_object *o = json_object_new_object(), *c = json_object_new_object(),
			   *ads = json_object_new_array();
	struct smio_status st;
	uint32_t ntb_idx = 0, rlen;
	int fd = host_open(p, h->id), rc;
	const char *reason = NULL;

	if (!o || !c || !ads) {
		rc = -ENOMEM;
		goto fail;
	}
	if (fd >= 0 && smio_call(fd, SMIO_STATUS, NULL, 0, &st, sizeof(st), &rlen, NULL,
				 p->tmo) == 0 && rlen == sizeof(st))
		p->up[hi] = 1;
	else
		reason = fd == -ENOENT || fd == -ECONNREFUSED ? "no daemon" : "no answer";
	rc = smio_json_add_uint(o, "id", h->id) || smio_json_add_str(o, "name", h->name) ||
	     smio_json_add_uint(o, "node_id", h->node_id) || smio_json_add_bool(o, "iommu", h->iommu) ||
	     smio_json_add_str(o, "state", p->up[hi] ? "up" : "down") ||
	     smio_json_add_str(o, "reason", reason) ||
	     smio_json_add(o, "slots", slots_json(h->ports, h->nports, &ntb_idx)) ? -ENOMEM : 0;
	if (!rc && p->up[hi])
		rc = smio_json_add_double(o, "uptime_s", (double)st.uptime_ns / 1e9, "%.1f") ||
		     smio_json_add_uint(o, "pid", st.pid) ||
		     smio_json_add_uint(c, "functions", st.nfuncs) ||
		     smio_json_add_uint(c, "clients", st.nclients) ||
		     smio_json_add_uint(c, "peers", st.npeers) ||
		     smio_json_add_uint(c, "route_hits_total", st.route_hits) ||
		     smio_json_add_uint(c, "route_misses_total", st.route_misses) ||
		     smio_json_add_uint(c, "iommu_faults_total", st.iommu_faults) ? -ENOMEM : 0;
	if (!rc && p->up[hi] && cli_stats_fetch(fd, &p->stats[hi]) == 0)
		rc = obs_copy_counter(c, "dma_faults_total", p->stats[hi], "dma_faults");
	if (!rc && p->up[hi] && p->trk)
		rc = host_events(p, hi, fd, st.pid, o);
	for (uint32_t i = 0; i < p->nntb[hi] && !rc; i++) {
		struct smio_ntb_ref ref = { .ntb = i };
		struct smio_ntb_info ni = { 0 };
		bool known = p->up[hi] && smio_call(fd, SMIO_NTB_INFO, &ref, sizeof(ref), &ni,
						    sizeof(ni), &rlen, NULL, p->tmo) == 0;

		p->link[hi][i] = known ? (ni.link_up ? 1 : 0) : LINK_UNKNOWN;
		rc = adapter_json(ads, &ni, known, topo_host_ntb(h, i), i, p->link[hi][i],
				  p->stats[hi]);
	}
	/*
	 * More per-host counters go into c, per-adapter ones into that adapter's
	 * "counters": the page, top and /metrics show every number there without
	 * further change.
	 */
	if (!rc && p->up[hi] && h->iommu &&
	    smio_call(fd, SMIO_IOMMU_FAULTS, NULL, 0, p->buf, SMIO_MAX_PAYLOAD, &rlen, NULL,
		      p->tmo) == 0)
		rc = faults_json(o, p->buf);
	if (!rc) {
		rc = add_two(o, "counters", c, "adapters", ads);
		c = ads = NULL;
	}
	if (!rc)
		rc = smio_json_push(hosts, o);
	o = NULL;
fail:
	if (fd >= 0)
		close(fd);
	json_object_put(ads);
	json_object_put(c);
	json_object_put(o);
	return rc;
}

/* ---------- 5. cables ---------- */

static int end_link(const struct pass *p, uint32_t hi, uint32_t ni)
{
	return ni < p->nntb[hi] ? p->link[hi][ni] : LINK_UNKNOWN;
}

struct cab_visit {
	struct pass *p;
	uint32_t hi;
};

static int cable_add(const struct topo_host *h, const struct topo_ntb *n, uint32_t idx, void *arg)
{
	struct cab_visit *v = arg;
	struct pass *p = v->p;
	struct obs_cable *c;
	int a, b;

	(void)h;
	if (n->peer_kind == TOPO_PEER_NONE)
		return 0;
	/* A back-to-back cable once, from its lower end. */
	if (n->peer_kind == TOPO_PEER_NTB &&
	    (n->peer_host < v->hi || (n->peer_host == v->hi && n->peer_ntb < idx)))
		return 0;
	c = &p->cab[p->ncab++];
	memset(c, 0, sizeof(*c));
	c->ha = v->hi;
	c->na = idx;
	a = end_link(p, v->hi, idx);
	if (n->peer_kind == TOPO_PEER_NTB) {
		c->to_host = true;
		c->hb = n->peer_host;
		c->nb = n->peer_ntb;
		snprintf(c->id, sizeof(c->id), "h%u.%s-h%u.%u", p->t->hosts[v->hi].id, n->name,
			 p->t->hosts[n->peer_host].id, n->peer_ntb);
		b = end_link(p, n->peer_host, n->peer_ntb);
	} else {
		c->cs = n->peer_cswitch;
		snprintf(c->id, sizeof(c->id), "h%u.%s-%s", p->t->hosts[v->hi].id, n->name,
			 p->t->cswitches[n->peer_cswitch].name);
		b = 1;          /* a cluster switch port has no state of its own here */
	}
	c->state = (a == 0 || b == 0) ? 0 : (a == 1 && b == 1) ? 1 : LINK_UNKNOWN;
	return 0;
}

static const char *state_word(int s)
{
	return s == 1 ? "up" : s == 0 ? "down" : "unknown";
}

static int cables_json(struct pass *p, struct json_object *root)
{
	struct json_object *arr = json_object_new_array(), *sw = json_object_new_array();
	uint32_t total = 0;
	int rc = (!arr || !sw) ? -ENOMEM : 0;

	for (uint32_t i = 0; i < p->t->nhosts; i++)
		total += p->nntb[i];
	p->cab = calloc(total + 1, sizeof(*p->cab));
	if (!p->cab)
		rc = -ENOMEM;
	for (uint32_t i = 0; i < p->t->nhosts && !rc; i++) {
		struct cab_visit v = { p, i };

		topo_for_each_ntb(&p->t->hosts[i], cable_add, &v);
	}
	for (uint32_t i = 0; i < p->ncab && !rc; i++) {
		const struct obs_cable *c = &p->cab[i];
		struct json_object *o = json_object_new_object(), *a = json_object_new_object(),
				   *b = json_object_new_object();

		rc = !o || !a || !b || smio_json_add_uint(a, "host", p->t->hosts[c->ha].id) ||
		     smio_json_add_uint(a, "ntb", c->na) ? -ENOMEM : 0;
		if (!rc && c->to_host)
			rc = smio_json_add_uint(b, "host", p->t->hosts[c->hb].id) ||
			     smio_json_add_uint(b, "ntb", c->nb) ? -ENOMEM : 0;
		else if (!rc)
			rc = smio_json_add_str(b, "switch", p->t->cswitches[c->cs].name);
		if (!rc) {
			rc = add_two(o, "a", a, "b", b);
			a = b = NULL;
		}
		rc = push_or_put(arr, o, rc || smio_json_add_str(o, "id", c->id) ||
				 smio_json_add_str(o, "state", state_word(c->state)));
		json_object_put(a);
		json_object_put(b);
	}
	for (uint32_t i = 0; i < p->t->ncswitches && !rc; i++) {
		const struct topo_cswitch *cs = &p->t->cswitches[i];
		struct json_object *o = json_object_new_object();

		rc = push_or_put(sw, o, !o || smio_json_add_str(o, "name", cs->name) ||
				 smio_json_add_str(o, "chip", cs->chip) ||
				 smio_json_add_uint(o, "ports", cs->ports) ||
				 smio_json_add_uint(o, "used_ports", cs->used_ports));
	}
	for (uint32_t i = 0; i < p->t->ncascades && !rc; i++) {
		const struct topo_cascade *k = &p->t->cascades[i];
		struct json_object *o = json_object_new_object(), *a = json_object_new_object(),
				   *b = json_object_new_object();
		char id[CABLE_ID_MAX];

		snprintf(id, sizeof(id), "%s-%s", p->t->cswitches[k->a].name,
			 p->t->cswitches[k->b].name);
		rc = !o || !a || !b || smio_json_add_str(a, "switch", p->t->cswitches[k->a].name) ||
		     smio_json_add_str(b, "switch", p->t->cswitches[k->b].name) ? -ENOMEM : 0;
		if (!rc) {
			rc = add_two(o, "a", a, "b", b);
			a = b = NULL;
		}
		rc = push_or_put(arr, o, rc || smio_json_add_str(o, "id", id) ||
				 smio_json_add_str(o, "state", "up"));
		json_object_put(a);
		json_object_put(b);
	}
	if (rc) {
		json_object_put(sw);
		json_object_put(arr);
		return rc;
	}
	return add_two(root, "switches", sw, "cables", arr);
}

/* ---------- 6. pool ---------- */

static int cascade_of(const struct topo *t, uint32_t x, uint32_t y)
{
	for (uint32_t i = 0; i < t->ncascades; i++)
		if ((t->cascades[i].a == x && t->cascades[i].b == y) ||
		    (t->cascades[i].a == y && t->cascades[i].b == x))
			return (int)i;
	return -1;
}

static const struct obs_cable *cable_at(const struct pass *p, uint32_t hi, uint32_t ni)
{
	for (uint32_t i = 0; i < p->ncab; i++) {
		const struct obs_cable *c = &p->cab[i];

		if ((c->ha == hi && c->na == ni) || (c->to_host && c->hb == hi && c->nb == ni))
			return c;
	}
	return NULL;
}

/*
 * The cables between hosts x and y (indices): a back-to-back cable, or both
 * hosts' cables to one cluster switch (or two cascaded ones). The first path
 * whose cables are all up, else the first path. 0 and the path, or -ENOENT.
 */
static int lease_cables(const struct pass *p, uint32_t x, uint32_t y, struct json_object *path,
		      int *state)
{
	const struct obs_cable *best[3] = { NULL }, *cand[3];
	char casc[CABLE_ID_MAX] = "", bcasc[CABLE_ID_MAX] = "";
	int bstate = LINK_UNKNOWN - 1;

	for (uint32_t i = 0; i < p->nntb[x]; i++) {
		const struct obs_cable *a = cable_at(p, x, i);

		if (!a)
			continue;
		for (uint32_t j = 0; j < p->nntb[y]; j++) {
			const struct obs_cable *b = cable_at(p, y, j);
			int s, k;

			memset(cand, 0, sizeof(cand));
			casc[0] = 0;
			if (!b)
				continue;
			if (a == b) {
				cand[0] = a;
			} else if (!a->to_host && !b->to_host && a->cs == b->cs) {
				cand[0] = a, cand[1] = b;
			} else if (!a->to_host && !b->to_host &&
				   (k = cascade_of(p->t, a->cs, b->cs)) >= 0) {
				cand[0] = a, cand[1] = b;
				snprintf(casc, sizeof(casc), "%s-%s",
					 p->t->cswitches[p->t->cascades[k].a].name,
					 p->t->cswitches[p->t->cascades[k].b].name);
			} else {
				continue;
			}
			s = cand[0]->state;
			if (cand[1] && (cand[1]->state == 0 || s == 1))
				s = cand[1]->state == 0 ? 0 : s == 0 ? 0 : cand[1]->state;
			if (!best[0] || (s == 1 && bstate != 1)) {
				memcpy(best, cand, sizeof(best));
				memcpy(bcasc, casc, sizeof(bcasc));
				bstate = s;
			}
		}
	}
	if (!best[0])
		return -ENOENT;
	*state = bstate;
	if (json_object_array_add(path, json_object_new_string(best[0]->id)))
		return -ENOMEM;
	if (bcasc[0] && json_object_array_add(path, json_object_new_string(bcasc)))
		return -ENOMEM;
	if (best[1] && json_object_array_add(path, json_object_new_string(best[1]->id)))
		return -ENOMEM;
	return 0;
}

static int device_json(struct pass *p, struct json_object *arr, const struct smio_lend_entry *e)
{
	static const char *const states[] = { "available", "lent", "sisci", "reserved", "shared" };
	struct json_object *o = json_object_new_object(), *path = json_object_new_array();
	bool shared = e->state == SMIO_LEND_SHARED;
	int li = topo_host_index(p->t, e->lender);
	/* A cZodiac share's USER is its borrower; its path the cables to the switch. */
	int bi = e->state == SMIO_LEND_LENT || shared ? topo_host_index(p->t, e->borrower) : -1;
	int pstate = LINK_UNKNOWN;
	char b[16], cls[8];
	int rc;

	if (!o || !path) {
		json_object_put(o);
		json_object_put(path);
		return -ENOMEM;
	}
	bdf_str(b, sizeof(b), e->bdf);
	snprintf(cls, sizeof(cls), "%06x", e->class & 0xffffffu);
	rc = add_hex(o, "fdid", e->fdid, 8) || smio_json_add_str(o, "name", e->name) ||
	     smio_json_add_str(o, "model", li >= 0 ? dev_model(p->t->hosts[li].ports,
							       p->t->hosts[li].nports, e->name) : "") ||
	     smio_json_add_str(o, "class", cls) || smio_json_add_uint(o, "lender", e->lender) ||
	     smio_json_add_str(o, "bdf", b) ||
	     smio_json_add_str(o, "state", e->state < sizeof(states) / sizeof(states[0]) ? states[e->state] : "?") ||
	     (bi >= 0 || e->state == SMIO_LEND_LENT || shared
		      ? smio_json_add_uint(o, "borrower", e->borrower)
		      : smio_json_add_null(o, "borrower")) ||
	     smio_json_add_str(o, "ioport", !shared ? NULL : e->cswitch < p->t->ncswitches ?
			       p->t->cswitches[e->cswitch].name : "?") ||
	     smio_json_add_uint(o, "sisci_borrows", e->sisci_borrows) ||
	     smio_json_add(o, "counters", obs_device_counters(li >= 0 ? p->stats[li] : NULL, b)) ||
	     (bi >= 0 && obs_borrow_json(o, p->stats[bi],
					  json_object_get_string(json_object_object_get(o, "fdid"))))
		     ? -ENOMEM : 0;
	if (!rc && li >= 0 && bi >= 0) {
		rc = lease_cables(p, (uint32_t)bi, (uint32_t)li, path, &pstate);
		rc = rc == -ENOENT ? 0 : rc;
	}
	if (!rc) {
		char via[2 * TOPO_NAME_MAX + 2] = "";

		/* where it is down, by the rule `devices` and `cluster status` use */
		if (pstate == 0 && li >= 0)
			lease_path(p->t, p->stats, (uint32_t)bi, (uint32_t)li, via, sizeof(via));
		rc = smio_json_add(o, "path", path) ||
		     (bi >= 0 ? smio_json_add_str(o, "path_state", state_word(pstate))
			      : smio_json_add_null(o, "path_state")) ||
		     smio_json_add_str(o, "path_down_at", via[0] ? via : NULL) ? -ENOMEM : 0;
		path = NULL;
	}
	json_object_put(path);
	if (rc) {
		json_object_put(o);
		return rc;
	}
	return smio_json_push(arr, o);
}

/* The pool from the first host that answers; "devices": null if none did. */
static int pool_json(struct pass *p, struct json_object *root)
{
	struct smio_lend_pool *pool = p->buf;
	struct json_object *arr;
	int rc = 0;

	for (uint32_t i = 0; i < p->t->nhosts; i++) {
		uint32_t rlen;
		int fd;

		if (!p->up[i] || (fd = host_open(p, p->t->hosts[i].id)) < 0)
			continue;
		rc = smio_call(fd, SMIO_LEND_POOL, NULL, 0, pool, SMIO_MAX_PAYLOAD, &rlen, NULL,
			       p->tmo > OBS_POOL_TIMEOUT_MS ? p->tmo : OBS_POOL_TIMEOUT_MS);
		close(fd);
		if (rc == -ETIMEDOUT)
			break;      /* it waits for a hung peer: so would the next host */
		if (rc)
			continue;
		arr = json_object_new_array();
		rc = arr ? 0 : -ENOMEM;
		for (uint32_t k = 0; k < pool->n && !rc; k++)
			rc = device_json(p, arr, &pool->e[k]);
		if (rc) {
			json_object_put(arr);
			return rc;
		}
		return smio_json_add(root, "devices", arr) ||
		       smio_json_add_uint(root, "pool_from", p->t->hosts[i].id) ? -ENOMEM : 0;
	}
	return smio_json_add_null(root, "devices") || smio_json_add_null(root, "pool_from")
		       ? -ENOMEM : 0;
}

/* ---------- the pass ---------- */

static void pass_free(struct pass *p)
{
	for (uint32_t i = 0; p->stats && i < p->t->nhosts; i++)
		json_object_put(p->stats[i]);
	free(p->stats);
	for (uint32_t i = 0; p->link && i < p->t->nhosts; i++)
		free(p->link[i]);
	free(p->link);
	free(p->nntb);
	free(p->up);
	free(p->cab);
	free(p->buf);
	topo_free(p->t);
}

int obs_collect_with(const char *dir, int timeout_ms, const struct obs_tracker *trk,
		     struct json_object **out)
{
	char path[PATH_MAX + 16], err[512];
	struct pass p = { .dir = dir, .tmo = timeout_ms, .trk = trk };
	struct json_object *root = NULL, *hosts = NULL;
	uint32_t up = 0;
	int rc;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/topology.yaml", dir);
	rc = topo_load_file(path, &p.t, err, sizeof(err));
	if (rc)
		return rc;
	p.up = calloc(p.t->nhosts, sizeof(*p.up));
	p.link = calloc(p.t->nhosts, sizeof(*p.link));
	p.nntb = calloc(p.t->nhosts, sizeof(*p.nntb));
	p.buf = malloc(SMIO_MAX_PAYLOAD);
	p.stats = calloc(p.t->nhosts, sizeof(*p.stats));
	rc = p.up && p.link && p.nntb && p.buf && p.stats ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < p.t->nhosts && !rc; i++) {
		topo_for_each_ntb(&p.t->hosts[i], count_ntb, &p.nntb[i]);
		p.link[i] = calloc(p.nntb[i] + 1, sizeof(int));
		rc = p.link[i] ? 0 : -ENOMEM;
	}
	root = rc ? NULL : json_object_new_object();
	hosts = rc ? NULL : json_object_new_array();
	if (!root || !hosts)
		rc = -ENOMEM;
	for (uint32_t i = 0; i < p.t->nhosts && !rc; i++) {
		rc = host_json(&p, i, hosts);
		up += (uint32_t)p.up[i];
	}
	if (!rc)
		rc = smio_json_add_uint(root, "version", 1) ||
		     smio_json_add_int(root, "time_ms", obs_now_ms()) ||
		     smio_json_add_str(root, "cluster", p.t->name) ||
		     smio_json_add_str(root, "dir", dir) ||
		     smio_json_add_uint(root, "hosts_up", up) ||
		     smio_json_add_uint(root, "hosts_total", p.t->nhosts) ? -ENOMEM : 0;
	if (!rc) {
		rc = smio_json_add(root, "hosts", hosts);
		hosts = NULL;
	}
	if (!rc)
		rc = cables_json(&p, root);
	if (!rc)
		rc = pool_json(&p, root);
	json_object_put(hosts);
	pass_free(&p);
	if (rc) {
		json_object_put(root);
		return rc;
	}
	*out = root;
	return 0;
}

int obs_collect_timeout(const char *dir, int timeout_ms, struct json_object **out)
{
	return obs_collect_with(dir, timeout_ms, NULL, out);
}

int obs_collect(const char *dir, struct json_object **out)
{
	return obs_collect_timeout(dir, OBS_TIMEOUT_MS, out);
}
