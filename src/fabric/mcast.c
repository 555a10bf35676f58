// SPDX-License-Identifier: MIT
/*
 * Multicast groups in the cluster switches (mcast.h): group use counts and
 * per-port membership in the shared switch registers, the receive overlays
 * of NTB adapters, the fan-out tree of a write, and its delivery.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcast.h"
#include "ntb.h"

int fab_mc_port_of(const struct topo *t, uint32_t hi, uint32_t ntb, struct fab_mc_port *p)
{
	const struct topo_ntb *n;
	bool seen[FAB_MC_MAX_CSW] = { false };
	uint32_t queue[FAB_MC_MAX_CSW], qh = 0, qt = 0;

	if (hi >= t->nhosts || !(n = topo_host_ntb(&t->hosts[hi], ntb)))
		return -ENODEV;
	if (n->peer_kind != TOPO_PEER_CSWITCH || n->peer_cswitch >= t->ncswitches ||
	    t->ncswitches > FAB_MC_MAX_CSW)
		return -ENODEV;
	p->csw = n->peer_cswitch;
	p->port = n->peer_port;
	p->s = &t->cswitches[p->csw];
	if (!p->s->mc_groups)
		return -EOPNOTSUPP;
	/* The fabric's root: its lowest-numbered switch, found over the cascades. */
	p->root = p->csw;
	seen[p->csw] = true;
	queue[qt++] = p->csw;
	while (qh < qt) {
		uint32_t u = queue[qh++];

		if (u < p->root)
			p->root = u;
		for (uint32_t c = 0; c < t->ncascades; c++) {
			const struct topo_cascade *k = &t->cascades[c];
			uint32_t v = k->a == u ? k->b : k->b == u ? k->a : UINT32_MAX;

			if (v < FAB_MC_MAX_CSW && !seen[v]) {
				seen[v] = true;
				queue[qt++] = v;
			}
		}
	}
	return 0;
}

int fab_mc_group_of(const struct topo_cswitch *s, uint64_t addr, uint32_t *group,
		    uint64_t *off)
{
	uint64_t span = s->mc_group_size * s->mc_groups;

	if (!s->mc_groups || addr < s->mc_base || addr - s->mc_base >= span)
		return -ERANGE;
	*group = (uint32_t)((addr - s->mc_base) / s->mc_group_size);
	*off = (addr - s->mc_base) % s->mc_group_size;
	return 0;
}

static struct fab_mc_switch *mc_sw(const struct fab_world *w, uint32_t csw)
{
	return w && w->mc && csw < FAB_MC_MAX_CSW ? &w->mc->sw[csw] : NULL;
}

static bool group_unused(const struct fab_mc_switch *s, uint32_t g)
{
	for (uint32_t k = 0; k < TOPO_MAX_HOSTS / 64; k++)
		if (__atomic_load_n(&s->users[g][k], __ATOMIC_ACQUIRE))
			return false;
	return true;
}

int fab_mc_group_alloc(struct fab_world *w, const struct fab_mc_port *p, uint32_t hi,
		       uint32_t *g)
{
	struct fab_mc_switch *s = mc_sw(w, p->root);
	uint64_t bit = 1ull << (hi % 64);

	if (!s || hi >= TOPO_MAX_HOSTS)
		return -ENODEV;
	for (uint32_t i = 0; i < p->s->mc_groups; i++) {
		uint64_t zero = 0;

		if (!group_unused(s, i))
			continue;
		/* Claim through our word, then make sure no other word was taken meanwhile. */
		if (!__atomic_compare_exchange_n(&s->users[i][hi / 64], &zero, bit, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		__atomic_fetch_and(&s->users[i][hi / 64], ~bit, __ATOMIC_ACQ_REL);
		if (group_unused(s, i) &&
		    !(__atomic_fetch_or(&s->users[i][hi / 64], bit, __ATOMIC_ACQ_REL) & ~bit)) {
			*g = i;
			return 0;
		}
		__atomic_fetch_and(&s->users[i][hi / 64], ~bit, __ATOMIC_ACQ_REL);
	}
	return -ENOSPC;
}

int fab_mc_group_get(struct fab_world *w, const struct fab_mc_port *p, uint32_t hi, uint32_t g)
{
	struct fab_mc_switch *s = mc_sw(w, p->root);

	if (!s || hi >= TOPO_MAX_HOSTS)
		return -ENODEV;
	if (g >= p->s->mc_groups)
		return -ERANGE;
	__atomic_fetch_or(&s->users[g][hi / 64], 1ull << (hi % 64), __ATOMIC_ACQ_REL);
	return 0;
}

int fab_mc_group_put(struct fab_world *w, const struct fab_mc_port *p, uint32_t hi, uint32_t g)
{
	struct fab_mc_switch *s = mc_sw(w, p->root);
	uint64_t bit = 1ull << (hi % 64);

	if (!s || hi >= TOPO_MAX_HOSTS)
		return -ENODEV;
	if (g >= p->s->mc_groups)
		return -ERANGE;
	if (!(__atomic_fetch_and(&s->users[g][hi / 64], ~bit, __ATOMIC_ACQ_REL) & bit))
		return -ENOENT;
	return 0;
}

uint32_t fab_mc_group_users(const struct fab_world *w, const struct fab_mc_port *p, uint32_t g)
{
	struct fab_mc_switch *s = mc_sw(w, p->root);
	uint32_t n = 0;

	for (uint32_t k = 0; s && g < TOPO_MC_MAX_GROUPS && k < TOPO_MAX_HOSTS / 64; k++)
		n += (uint32_t)__builtin_popcountll(__atomic_load_n(&s->users[g][k],
								    __ATOMIC_ACQUIRE));
	return n;
}

void fab_mc_host_reset(struct fab_world *w, uint32_t hi)
{
	const struct topo *t = w->topo;
	const struct topo_ntb *n;

	if (!w->mc || hi >= t->nhosts || hi >= TOPO_MAX_HOSTS)
		return;
	for (uint32_t c = 0; c < t->ncswitches && c < FAB_MC_MAX_CSW; c++)
		for (uint32_t g = 0; g < TOPO_MC_MAX_GROUPS; g++)
			__atomic_fetch_and(&w->mc->sw[c].users[g][hi / 64], ~(1ull << (hi % 64)),
					   __ATOMIC_ACQ_REL);
	for (uint32_t k = 0; (n = topo_host_ntb(&t->hosts[hi], k)); k++) {
		if (n->peer_kind != TOPO_PEER_CSWITCH || n->peer_cswitch >= FAB_MC_MAX_CSW ||
		    n->peer_port >= 64 * FAB_MC_PORT_WORDS)
			continue;
		for (uint32_t g = 0; g < TOPO_MC_MAX_GROUPS; g++)
			__atomic_fetch_and(&w->mc->sw[n->peer_cswitch].recv[g][n->peer_port / 64],
					   ~(1ull << (n->peer_port % 64)), __ATOMIC_ACQ_REL);
	}
}

static bool port_member(const struct fab_mc_switch *s, uint32_t g, uint32_t port)
{
	return port < 64 * FAB_MC_PORT_WORDS &&
	       (__atomic_load_n(&s->recv[g][port / 64], __ATOMIC_ACQUIRE) >> (port % 64)) & 1;
}

/* Adapter ntb of h, the switch port it is cabled to and that switch's
 * multicast registers; -ENODEV without multicast there. */
static int mc_adapter(struct fab_host *h, uint32_t ntb, struct fab_mc_port *p,
		      struct fab_mc_switch **s, struct fab_ntb **n)
{
	int rc;

	if (ntb >= h->nntbs)
		return -ENODEV;
	rc = fab_mc_port_of(h->topo, h->index, ntb, p);
	if (rc)
		return rc;
	*s = mc_sw(h->world, p->csw);
	*n = h->ntbs[ntb];
	return *s && (*n)->mc_ovl ? 0 : -ENODEV;
}

int fab_mc_join(struct fab_host *h, uint32_t ntb, uint32_t g, uint64_t local_addr,
		uint64_t size)
{
	struct fab_mc_port p;
	struct fab_mc_switch *s;
	struct fab_ntb *n;
	int rc = mc_adapter(h, ntb, &p, &s, &n);

	if (rc)
		return rc;
	if (g >= n->nmc)
		return -ERANGE;
	if (!size || size > p.s->mc_group_size || local_addr + size < local_addr)
		return -EINVAL;
	if (n->mc_ovl[g].valid)
		return -EBUSY;
	n->mc_ovl[g] = (struct ntb_mc_overlay){ .valid = true, .base = local_addr, .size = size };
	__atomic_fetch_or(&s->recv[g][p.port / 64], 1ull << (p.port % 64), __ATOMIC_ACQ_REL);
	fab_host_tables_changed(h);
	return 0;
}

int fab_mc_leave(struct fab_host *h, uint32_t ntb, uint32_t g)
{
	struct fab_mc_port p;
	struct fab_mc_switch *s;
	struct fab_ntb *n;
	int rc = ntb < h->nntbs ? mc_adapter(h, ntb, &p, &s, &n) : -ENODEV;

	if (rc == -ENODEV && ntb < h->nntbs)
		return -ENOENT;     /* nothing joined where there is no multicast */
	if (rc)
		return rc;
	if (g >= n->nmc || !n->mc_ovl[g].valid)
		return -ENOENT;
	/* The port stops receiving first, then the overlay goes. */
	__atomic_fetch_and(&s->recv[g][p.port / 64], ~(1ull << (p.port % 64)), __ATOMIC_ACQ_REL);
	memset(&n->mc_ovl[g], 0, sizeof(n->mc_ovl[g]));
	fab_host_tables_changed(h);
	return 0;
}

int fab_mc_overlay(const struct fab_host *h, uint32_t ntb, uint64_t addr, uint64_t *local,
		   uint64_t *left, uint32_t *group)
{
	const struct fab_ntb *n;
	const struct topo_cswitch *s;
	uint64_t off;

	if (ntb >= h->nntbs)
		return -ENODEV;
	n = h->ntbs[ntb];
	if (!n->mc_ovl)
		return -ENODEV;
	s = &h->topo->cswitches[n->t->peer_cswitch];
	if (fab_mc_group_of(s, addr, group, &off))
		return -ERANGE;
	if (*group >= n->nmc || !n->mc_ovl[*group].valid)
		return -ENOENT;
	if (off >= n->mc_ovl[*group].size)
		return -EFAULT;
	*local = n->mc_ovl[*group].base + off;
	*left = n->mc_ovl[*group].size - off;
	return 0;
}

/* ---------- the fan-out tree ---------- */

static void add_link(struct fab_mc_tree *tr, uint32_t from, uint32_t to, uint32_t host,
		     const struct topo_link *l)
{
	if (tr->nlinks >= sizeof(tr->links) / sizeof(tr->links[0]))
		return;
	tr->links[tr->nlinks++] = (struct fab_mc_link){ .from_csw = from, .to_csw = to,
		.host = host, .gen = l->gen, .width = l->width };
}

struct tree_walk {
	const struct topo *t;
	const struct fab_mc_state *mc;
	struct fab_mc_tree *tr;
	uint32_t group, in_csw, in_port;
	int prev[FAB_MC_MAX_CSW];
	bool has_member[FAB_MC_MAX_CSW];   /* a member at or beyond this switch */
};

/* Members on switch csw (not the ingress port): receivers and egress cables. */
static void switch_members(struct tree_walk *tw, uint32_t csw, uint32_t depth, bool record)
{
	const struct fab_mc_switch *s = &tw->mc->sw[csw];

	for (uint32_t hi = 0; hi < tw->t->nhosts; hi++) {
		const struct topo_host *th = &tw->t->hosts[hi];
		const struct topo_ntb *n;

		for (uint32_t k = 0; (n = topo_host_ntb(th, k)); k++) {
			struct fab_mc_tree *tr = tw->tr;

			if (n->peer_kind != TOPO_PEER_CSWITCH || n->peer_cswitch != csw ||
			    (csw == tw->in_csw && n->peer_port == tw->in_port) ||
			    !port_member(s, tw->group, n->peer_port))
				continue;
			tw->has_member[csw] = true;
			if (!record)
				continue;
			if (tr->nrecv < sizeof(tr->recv) / sizeof(tr->recv[0]))
				tr->recv[tr->nrecv++] = (struct fab_mc_recv){ .host = th->id,
					.ntb = k, .csw = csw, .depth = depth };
			add_link(tr, csw, UINT32_MAX, th->id, &n->cable);
		}
	}
}

int fab_mc_tree(const struct fab_world *w, uint32_t hi, uint32_t ntb, uint64_t addr,
		struct fab_mc_tree *tr)
{
	struct tree_walk tw = { .t = w->topo, .mc = w->mc, .tr = tr };
	const struct topo *t = w->topo;
	uint32_t queue[FAB_MC_MAX_CSW], order = 0, qt = 0, depth[FAB_MC_MAX_CSW] = { 0 };
	const struct topo_cascade *via[FAB_MC_MAX_CSW] = { NULL };
	struct fab_mc_port p;
	int rc;

	memset(tr, 0, offsetof(struct fab_mc_tree, recv));
	if (!w->mc)
		return -ENODEV;
	rc = fab_mc_port_of(t, hi, ntb, &p);
	if (rc)
		return rc;
	rc = fab_mc_group_of(p.s, addr, &tr->group, &tr->off);
	if (rc)
		return rc;
	tw.group = tr->group;
	tw.in_csw = p.csw;
	tw.in_port = p.port;
	tr->ingress_csw = p.csw;
	add_link(tr, UINT32_MAX, p.csw, t->hosts[hi].id, &topo_host_ntb(&t->hosts[hi], ntb)->cable);
	/* Breadth-first over the cascades: the tree of shortest paths. */
	for (uint32_t i = 0; i < FAB_MC_MAX_CSW; i++)
		tw.prev[i] = -2;
	tw.prev[p.csw] = -1;
	queue[qt++] = p.csw;
	while (order < qt) {
		uint32_t u = queue[order++];

		for (uint32_t c = 0; c < t->ncascades; c++) {
			const struct topo_cascade *k = &t->cascades[c];
			uint32_t v = k->a == u ? k->b : k->b == u ? k->a : UINT32_MAX;

			if (v >= FAB_MC_MAX_CSW || tw.prev[v] != -2)
				continue;
			tw.prev[v] = (int)u;
			via[v] = k;
			depth[v] = depth[u] + 1;
			queue[qt++] = v;
		}
	}
	/* Which subtrees hold a member: a cascade port forwards only towards one. */
	for (uint32_t i = 0; i < qt; i++)
		switch_members(&tw, queue[i], depth[queue[i]] + 1, false);
	for (uint32_t i = qt; i-- > 1;)
		if (tw.has_member[queue[i]])
			tw.has_member[tw.prev[queue[i]]] = true;
	/* Record in breadth-first order: the cascade into a switch, then its ports. */
	for (uint32_t i = 0; i < qt; i++) {
		uint32_t v = queue[i];

		if (!tw.has_member[v])
			continue;
		if (tw.prev[v] >= 0)
			add_link(tr, (uint32_t)tw.prev[v], v, UINT32_MAX, &via[v]->link);
		switch_members(&tw, v, depth[v] + 1, true);
	}
	return 0;
}

/* ---------- delivery ---------- */

/* One receiver's part: its steps to the end, then the bytes. */
static int deliver_one(struct fab_host *h, const struct fab_mc_recv *rv, uint64_t addr,
		       const void *buf, uint64_t len)
{
	struct fab_world *w = h->world;
	struct fab_route *r = malloc(sizeof(*r));
	struct fab_forward fwd = { 0 };
	struct fab_step st = { .host = rv->host, .from_ntb = true, .ntb_index = rv->ntb,
			       .write = true, .mcast = true, .addr = addr, .len = len };
	uint64_t size = 0;
	uint8_t *m;
	int rc = 0;

	if (!r)
		return -ENOMEM;
	memset(r, 0, offsetof(struct fab_route, hops));
	for (unsigned steps = 0;; steps++) {
		if (steps > FAB_MAX_NTB_HOPS) {
			rc = FAB_HOP_LIMIT;
			goto out;
		}
		memset(&fwd, 0, sizeof(fwd));
		rc = st.host == h->id ? fab_route_step_local(h, &st, r, &fwd)
				      : w->ops && w->ops->step ? w->ops->step(w, &st, r, &fwd)
							       : -EHOSTUNREACH;
		if (rc < 0)
			goto out;
		if (r->status != FAB_OK) {
			rc = r->status;
			goto out;
		}
		if (!fwd.forward)
			break;
		st = fwd.next;
	}
	if (r->tgt.kind == FAB_TGT_MSI) {
		rc = FAB_UR;          /* interrupts are not multicast here */
		goto out;
	}
	if (r->tgt.kind != FAB_TGT_RAM && r->tgt.kind != FAB_TGT_BAR) {
		rc = FAB_UR;
		goto out;
	}
	m = fab_target_map(h, &r->tgt, &size);
	if (!m) {
		rc = -EREMOTE;
		goto out;
	}
	if (r->tgt.offset > size || len > size - r->tgt.offset || r->tgt.len < len) {
		rc = FAB_UR;          /* crosses the end of what the overlay maps */
		goto out;
	}
	fab_copy_to_mem(m + r->tgt.offset, buf, len);
out:
	free(r);
	return rc;
}

int fab_mc_write(struct fab_host *h, uint32_t ntb, uint64_t addr, const void *buf,
		 uint64_t len, uint32_t *delivered)
{
	struct fab_mc_tree *tr = malloc(sizeof(*tr));
	uint32_t ok = 0;
	int rc;

	if (!tr)
		return -ENOMEM;
	rc = fab_mc_tree(h->world, h->index, ntb, addr, tr);
	if (rc)
		goto out;
	if (tr->off + len > tr->off && tr->off + len > h->topo->cswitches[tr->ingress_csw].mc_group_size) {
		rc = FAB_UR;          /* a TLP never crosses a group's end */
		goto out;
	}
	/* A device thread cannot talk to peers: all or nothing, its daemon does it. */
	for (uint32_t i = 0; fab_thread_is_worker() && i < tr->nrecv; i++)
		if (tr->recv[i].host != h->id) {
			rc = -EREMOTE;
			goto out;
		}
	/*
	 * A receiver whose part fails drops it (a posted write). One whose
	 * memory cannot be mapped here is the emulator's limit, not the fabric's:
	 * the others still get theirs, and the caller hears of it.
	 */
	for (uint32_t i = 0; i < tr->nrecv; i++) {
		int one = deliver_one(h, &tr->recv[i], addr, buf, len);

		if (one == -ENOMEM) {
			rc = one;
			goto out;
		}
		if (one == -EREMOTE)
			rc = one;
		ok += !one;
	}
out:
	if (delivered)
		*delivered = ok;
	free(tr);
	return rc;
}
