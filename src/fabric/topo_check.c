// SPDX-License-Identifier: MIT
/*
 * Topology checks of the cluster as a whole, once every host is read
 * (topo_host.c): NTB cables and cascade links; and the lookups the rest of
 * the project uses on a loaded topology.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_priv.h"

/*
 * Whole-cluster checks: NTB cables and cascade links.
 *
 * A cable has two ends.  'connect: HOST.NTB' written on one end fills the
 * other end when that end says nothing; if both ends say something, they
 * must name each other.  Cables to a cluster switch and cascade links take
 * ceil(width / port_width) adjacent ports: explicit ports first, then the
 * cascades, then the other cables, each in file order.
 */

static void ntb_label(char *buf, size_t cap, const struct topo *t, const struct topo_ntbref *r)
{
	snprintf(buf, cap, "host '%s' ntb '%s'", t->hosts[r->host].name, r->ntb->name);
}

static int host_by_ref(const struct topo *t, const char *s)
{
	uint64_t id;

	for (uint32_t i = 0; i < t->nhosts; i++)
		if (!strcmp(t->hosts[i].name, s))
			return (int)i;
	if (!tp_uint(s, strlen(s), &id) && id <= UINT32_MAX)
		return topo_host_index(t, (uint32_t)id);
	return -1;
}

static int cswitch_by_name(const struct topo *t, const char *s)
{
	for (uint32_t i = 0; i < t->ncswitches; i++)
		if (!strcmp(t->cswitches[i].name, s))
			return (int)i;
	return -1;
}

/* 'connect: HOST.NTB': find the other end. */
static int resolve_ntb_peer(struct topo_build *b, size_t i)
{
	struct topo_ntbref *r = &b->ntbs[i];
	char host[sizeof(r->ntb->connect)], what[96];
	const char *ntb;
	int h;

	ntb_label(what, sizeof(what), b->t, r);
	snprintf(host, sizeof(host), "%s", r->ntb->connect);
	*strchr(host, '.') = '\0';
	ntb = host + strlen(host) + 1;
	if (!*host || !*ntb || strpbrk(ntb, ".:"))
		return topo_err(b, r->line, "%s: connect '%s' is not 'HOST.NTB', 'SWITCH' or "
				"'SWITCH:PORT'", what, r->ntb->connect);
	h = host_by_ref(b->t, host);
	if (h < 0)
		return topo_err(b, r->line, "%s: connect '%s': no host named '%s' (give a host "
				"name or id)", what, r->ntb->connect, host);
	if ((uint32_t)h == r->host)
		return topo_err(b, r->line, "%s: connect '%s' cables the host to itself; "
				"connect it to another host's NTB or a cluster switch",
				what, r->ntb->connect);
	for (size_t j = 0; j < b->nntbs; j++) {
		if (b->ntbs[j].host != (uint32_t)h || strcmp(b->ntbs[j].ntb->name, ntb))
			continue;
		r->peer = (int)j;
		r->ntb->peer_kind = TOPO_PEER_NTB;
		r->ntb->peer_host = b->ntbs[j].host;
		r->ntb->peer_ntb = b->ntbs[j].idx;
		return 0;
	}
	return topo_err(b, r->line, "%s: connect '%s': host '%s' has no NTB named '%s'",
			what, r->ntb->connect, b->t->hosts[h].name, ntb);
}

/* Both ends agree, or the silent end is filled in. */
static int pair_ntb_ends(struct topo_build *b, size_t i)
{
	struct topo_ntbref *r = &b->ntbs[i], *o = &b->ntbs[r->peer];
	char what[96], other[96];

	ntb_label(what, sizeof(what), b->t, r);
	ntb_label(other, sizeof(other), b->t, o);
	if (o->ntb->connect[0]) {
		if (o->peer == (int)i)
			return 0;
		return topo_err(b, r->line, "%s: connect '%s', but %s is cabled to '%s' "
				"(line %d); a cable has two ends: make them name each other",
				what, r->ntb->connect, other, o->ntb->connect, o->line);
	}
	if (o->peer >= 0 && o->peer != (int)i)
		return topo_err(b, r->line, "%s: connect '%s', but %s is already cabled to "
				"the NTB connected on line %d; an NTB has one cable",
				what, r->ntb->connect, other, b->ntbs[o->peer].line);
	o->peer = (int)i;
	o->ntb->peer_kind = TOPO_PEER_NTB;
	o->ntb->peer_host = r->host;
	o->ntb->peer_ntb = r->idx;
	return 0;
}

/* Ports used by a xW link on switch @cs: one port carries port_width lanes. */
static uint32_t ports_needed(const struct topo_cswitch *cs, unsigned width)
{
	return (width + cs->port_width - 1) / cs->port_width;
}

/*
 * Take @need adjacent ports of @cs from @first, or the first free run if
 * @first < 0.  @owner[p] is the line of whatever took port p (0: free).
 */
static int take_ports(struct topo_build *b, uint32_t csw, int *owner, int first,
		      uint32_t need, int line, const char *what, uint32_t *got)
{
	struct topo_cswitch *cs = &b->t->cswitches[csw];
	int *own = owner + (size_t)csw * TOPO_CSW_MAX_PORTS;
	uint32_t p = 0, run = 0;

	if (first >= 0) {
		if ((uint32_t)first + need > cs->ports)
			return topo_err(b, line, "%s: ports %d..%u of cluster switch '%s' do "
					"not exist (it has ports 0..%u)", what, first,
					first + need - 1, cs->name, cs->ports - 1);
		for (p = (uint32_t)first; p < first + need; p++)
			if (own[p])
				return topo_err(b, line, "%s: port %u of cluster switch '%s' "
						"is already taken by the link on line %d",
						what, p, cs->name, own[p]);
		p = (uint32_t)first;
	} else {
		for (p = 0; p < cs->ports && run < need; p++)
			run = own[p] ? 0 : run + 1;
		if (run < need)
			return topo_err(b, line, "%s: cluster switch '%s' is out of ports: it "
					"has %u ports of x%u, %u in use, and this link needs %u "
					"adjacent free port(s); give it more 'ports' or use "
					"narrower links", what, cs->name, cs->ports,
					cs->port_width, cs->used_ports, need);
		p -= need;
	}
	for (uint32_t k = p; k < p + need; k++)
		own[k] = line;
	cs->used_ports += need;
	*got = p;
	return 0;
}

/* 'connect: SWITCH[:PORT]' on ports fixed (@fixed) or chosen by us. */
static int cable_to_cswitch(struct topo_build *b, struct topo_ntbref *r, int *owner,
			    bool fixed)
{
	char name[sizeof(r->ntb->connect)], what[96];
	char *colon;
	uint64_t port = 0;
	int csw;

	snprintf(name, sizeof(name), "%s", r->ntb->connect);
	colon = strchr(name, ':');
	if (!colon != !fixed)
		return 0;
	ntb_label(what, sizeof(what), b->t, r);
	if (colon) {
		*colon = '\0';
		if (tp_uint(colon + 1, strlen(colon + 1), &port) || port >= TOPO_CSW_MAX_PORTS)
			return topo_err(b, r->line, "%s: connect '%s': '%s' is not a port "
					"number", what, r->ntb->connect, colon + 1);
	}
	csw = cswitch_by_name(b->t, name);
	if (csw < 0)
		return topo_err(b, r->line, "%s: connect '%s': no cluster switch named '%s' "
				"(connect is 'SWITCH', 'SWITCH:PORT' or 'HOST.NTB')",
				what, r->ntb->connect, name);
	r->ntb->peer_kind = TOPO_PEER_CSWITCH;
	r->ntb->peer_cswitch = (uint32_t)csw;
	return take_ports(b, (uint32_t)csw, owner, colon ? (int)port : -1,
			  ports_needed(&b->t->cswitches[csw], r->ntb->cable.width), r->line,
			  what, &r->ntb->peer_port);
}

/*
 * A multicast group is one address range throughout a fabric (PCIe requires
 * the same MC_Base_Address and MC_Index_Position in every switch of a
 * hierarchy), so cascaded switches must agree on their multicast settings.
 */
static int check_cascade_mc(struct topo_build *b, const struct topo_cascade *k)
{
	const struct topo_cswitch *x = &b->t->cswitches[k->a], *y = &b->t->cswitches[k->b];

	if (x->mc_groups == y->mc_groups && (!x->mc_groups ||
	    (x->mc_group_size == y->mc_group_size && x->mc_base == y->mc_base)))
		return 0;
	return topo_err(b, k->line, "cluster switch '%s' cascade to '%s': multicast settings "
			"differ (%u groups of %" PRIu64 " bytes at 0x%" PRIx64 " vs %u of %" PRIu64
			" at 0x%" PRIx64 "); cascaded switches must share one multicast range",
			x->name, y->name, x->mc_groups, x->mc_group_size, x->mc_base,
			y->mc_groups, y->mc_group_size, y->mc_base);
}

/* One topo_cascade per switch pair, whichever side (or both) lists it. */
static int add_cascade(struct topo_build *b, const struct topo_cascref *c, int *owner)
{
	struct topo *t = b->t;
	const char *from = t->cswitches[c->from].name;
	char what[96];
	uint32_t pa, pb;
	int to, rc;

	snprintf(what, sizeof(what), "cluster switch '%s' cascade to '%s'", from, c->to);
	to = cswitch_by_name(t, c->to);
	if (to < 0)
		return topo_err(b, c->line, "%s: no cluster switch named '%s'", what, c->to);
	if ((uint32_t)to == c->from)
		return topo_err(b, c->line, "%s: a switch cannot be cascaded to itself", what);
	/* An IOPort remaps between hosts on its own switch only (docs/czodiac.md). */
	if (t->cswitches[c->from].czodiac || t->cswitches[to].czodiac)
		return topo_err(b, c->line, "%s: a czodiac switch cannot be cascaded", what);
	for (uint32_t i = 0; i < t->ncascades; i++) {
		struct topo_cascade *k = &t->cascades[i];

		if (k->a == c->from && k->b == (uint32_t)to)
			return topo_err(b, c->line, "%s: listed twice (first on line %d)",
					what, k->line);
		if (k->a != (uint32_t)to || k->b != c->from)
			continue;
		/* The other side lists it too: the same cable, described twice. */
		if (k->link.gen != c->link.gen || k->link.width != c->link.width)
			return topo_err(b, c->line, "%s: gen%u x%u here but gen%u x%u on line "
					"%d; make both sides agree or list it once",
					what, c->link.gen, c->link.width, k->link.gen,
					k->link.width, k->line);
		return 0;
	}
	rc = take_ports(b, c->from, owner, -1, ports_needed(&t->cswitches[c->from],
			c->link.width), c->line, what, &pa);
	if (!rc)
		rc = take_ports(b, (uint32_t)to, owner, -1,
				ports_needed(&t->cswitches[to], c->link.width), c->line,
				what, &pb);
	if (rc)
		return rc;
	t->cascades[t->ncascades++] = (struct topo_cascade){
		.a = c->from, .b = (uint32_t)to, .link = c->link, .line = c->line,
	};
	return 0;
}

int topo_check(struct topo_build *b)
{
	int *owner = NULL;
	int rc = 0;

	for (size_t i = 0; !rc && i < b->nntbs; i++)
		if (strchr(b->ntbs[i].ntb->connect, '.'))
			rc = resolve_ntb_peer(b, i);
	for (size_t i = 0; !rc && i < b->nntbs; i++)
		if (strchr(b->ntbs[i].ntb->connect, '.'))
			rc = pair_ntb_ends(b, i);
	if (rc)
		return rc;

	if (b->t->ncswitches) {
		owner = calloc((size_t)b->t->ncswitches * TOPO_CSW_MAX_PORTS, sizeof(*owner));
		if (!owner)
			return tp_oom(b);
	}
	if (b->ncas) {
		b->t->cascades = calloc(b->ncas, sizeof(*b->t->cascades));
		if (!b->t->cascades) {
			free(owner);
			return tp_oom(b);
		}
	}
	/* Fixed ports first so that automatic placement cannot take them. */
	for (size_t i = 0; !rc && i < b->nntbs; i++)
		if (b->ntbs[i].ntb->connect[0] && !strchr(b->ntbs[i].ntb->connect, '.'))
			rc = cable_to_cswitch(b, &b->ntbs[i], owner, true);
	for (size_t i = 0; !rc && i < b->ncas; i++)
		rc = add_cascade(b, &b->cas[i], owner);
	for (size_t i = 0; !rc && i < b->nntbs; i++)
		if (b->ntbs[i].ntb->connect[0] && !strchr(b->ntbs[i].ntb->connect, '.'))
			rc = cable_to_cswitch(b, &b->ntbs[i], owner, false);
	free(owner);
	for (uint32_t i = 0; !rc && i < b->t->ncascades; i++)
		rc = check_cascade_mc(b, &b->t->cascades[i]);
	return rc;
}

int topo_host_index(const struct topo *t, uint32_t id)
{
	for (uint32_t i = 0; t && i < t->nhosts; i++)
		if (t->hosts[i].id == id)
			return (int)i;
	return -1;
}

int topo_host_by_node(const struct topo *t, uint32_t node_id)
{
	for (uint32_t i = 0; t && i < t->nhosts; i++)
		if (t->hosts[i].node_id == node_id)
			return (int)i;
	return -1;
}

/* Depth-first, file order; recursion is bounded by TOPO_MAX_DEPTH. */
static int visit_ports(const struct topo_host *h, const struct topo_port *ports, uint32_t n,
		       topo_ntb_visit_fn fn, void *arg, uint32_t *idx)
{
	for (uint32_t i = 0; i < n; i++) {
		int rc = 0;

		if (ports[i].kind == TOPO_SLOT_NTB)
			rc = fn(h, &ports[i].ntb, (*idx)++, arg);
		else if (ports[i].kind == TOPO_SLOT_SWITCH)
			rc = visit_ports(h, ports[i].sw.ports, ports[i].sw.nports, fn, arg, idx);
		if (rc)
			return rc;
	}
	return 0;
}

/* Returns 0 after visiting all, or the first nonzero value @fn returned. */
int topo_for_each_ntb(const struct topo_host *h, topo_ntb_visit_fn fn, void *arg)
{
	uint32_t idx = 0;

	if (!h || !fn)
		return -EINVAL;
	return visit_ports(h, h->ports, h->nports, fn, arg, &idx);
}

struct ntb_find {
	uint32_t want;
	const struct topo_ntb *found;
};

static int ntb_find_fn(const struct topo_host *h, const struct topo_ntb *ntb, uint32_t index,
		       void *arg)
{
	struct ntb_find *f = arg;

	if (index != f->want)
		return 0;
	f->found = ntb;
	return 1;
}

const struct topo_ntb *topo_host_ntb(const struct topo_host *h, uint32_t idx)
{
	struct ntb_find f = { .want = idx };

	if (topo_for_each_ntb(h, ntb_find_fn, &f) != 1)
		return NULL;
	return f.found;
}
