// SPDX-License-Identifier: MIT
/*
 * The external side of NTB adapters: back-to-back cables and cluster
 * switches (cascades found by breadth-first search, so routes between hosts
 * take the fewest cluster-switch hops, as the switches' routing tables do).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "route.h"

#define CSW_MAX 64

bool fab_route_push(struct fab_route *r, const struct fab_hop *hop)
{
	if (r->nhops >= FAB_MAX_HOPS) {
		r->status = FAB_HOP_LIMIT;
		snprintf(r->reason, sizeof(r->reason), "path longer than %d hops", FAB_MAX_HOPS);
		return false;
	}
	r->hops[r->nhops++] = *hop;
	return true;
}

static void push_cable(struct fab_route *r, const struct topo_host *h,
		       const struct topo_ntb *n)
{
	struct fab_hop hop = { .kind = FAB_HOP_CABLE, .gen = n->cable.gen,
			       .width = n->cable.width, .host = (uint16_t)h->id };

	snprintf(hop.name, sizeof(hop.name), "%.16s.%.16s cable", h->name, n->name);
	fab_route_push(r, &hop);
}

static void push_cswitch(struct fab_route *r, const struct topo_cswitch *s)
{
	struct fab_hop hop = { .kind = FAB_HOP_CSWITCH, .latency_ns = s->latency_ns,
			       .host = 0xffff };

	snprintf(hop.name, sizeof(hop.name), "%.20s (%.12s)", s->name, s->chip);
	fab_route_push(r, &hop);
}

/* BFS over cluster switches from src; fills prev[] and dist[] (-1 unreachable). */
static void csw_bfs(const struct topo *t, uint32_t src, int *dist, int *prev)
{
	uint32_t queue[CSW_MAX], qh = 0, qt = 0;

	for (uint32_t i = 0; i < t->ncswitches && i < CSW_MAX; i++)
		dist[i] = prev[i] = -1;
	dist[src] = 0;
	queue[qt++] = src;
	while (qh < qt) {
		uint32_t u = queue[qh++];

		for (uint32_t c = 0; c < t->ncascades; c++) {
			const struct topo_cascade *k = &t->cascades[c];
			uint32_t v;

			if (k->a == u)
				v = k->b;
			else if (k->b == u)
				v = k->a;
			else
				continue;
			if (v >= CSW_MAX || dist[v] >= 0)
				continue;
			dist[v] = dist[u] + 1;
			prev[v] = (int)u;
			queue[qt++] = v;
		}
	}
}

int fab_cable_hops(const struct topo *t, uint32_t src_host_index, uint32_t src_ntb,
		   uint32_t dst_host_index, uint32_t *dst_ntb, struct fab_route *r)
{
	const struct topo_host *sh, *dh;
	const struct topo_ntb *sn;
	int dist[CSW_MAX], prev[CSW_MAX];
	int best = -1, best_d = -1;
	uint32_t path[CSW_MAX], plen = 0;

	if (src_host_index >= t->nhosts || dst_host_index >= t->nhosts ||
	    t->ncswitches > CSW_MAX)
		return -EINVAL;
	sh = &t->hosts[src_host_index];
	dh = &t->hosts[dst_host_index];
	sn = topo_host_ntb(sh, src_ntb);
	if (!sn)
		return -EINVAL;
	if (sn->peer_kind == TOPO_PEER_NTB) {
		if (sn->peer_host != dst_host_index)
			return -EHOSTUNREACH;
		*dst_ntb = sn->peer_ntb;
		push_cable(r, sh, sn);
		return 0;
	}
	if (sn->peer_kind != TOPO_PEER_CSWITCH)
		return -EHOSTUNREACH;
	csw_bfs(t, sn->peer_cswitch, dist, prev);
	for (uint32_t i = 0;; i++) {
		const struct topo_ntb *dn = topo_host_ntb(dh, i);

		if (!dn)
			break;
		if (dn->peer_kind != TOPO_PEER_CSWITCH || dn->peer_cswitch >= CSW_MAX ||
		    dist[dn->peer_cswitch] < 0)
			continue;
		if (best < 0 || dist[dn->peer_cswitch] < best_d) {
			best = (int)i;
			best_d = dist[dn->peer_cswitch];
		}
	}
	if (best < 0)
		return -EHOSTUNREACH;
	*dst_ntb = (uint32_t)best;
	/* Walk back from the destination's switch to recover the path. */
	for (int v = (int)topo_host_ntb(dh, (uint32_t)best)->peer_cswitch; v >= 0 && plen < CSW_MAX;
	     v = prev[v])
		path[plen++] = (uint32_t)v;
	push_cable(r, sh, sn);
	for (uint32_t i = plen; i-- > 0;)
		push_cswitch(r, &t->cswitches[path[i]]);
	push_cable(r, dh, topo_host_ntb(dh, (uint32_t)best));
	return 0;
}
