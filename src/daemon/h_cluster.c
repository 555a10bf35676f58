// SPDX-License-Identifier: MIT
/*
 * The cluster as this host's processes may see it (libsisci): its hosts and
 * their SISCI node IDs (NODE_LIST), this host's adapters (ADAPTER_INFO) and
 * whether a node answers over one of them (PROBE_NODE). A process talks only
 * to its own host's daemon, so these facts come from here rather than from
 * the topology file or other hosts' sockets. All three run on the loop and
 * never wait: PROBE_NODE asks the node's daemon with an asynchronous call.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "fabric/ntb.h"
#include "handlers.h"

/* smio_ntb_info.peer_kind has always carried the topology's numbers. */
_Static_assert(SMIO_PEER_NONE == (int)TOPO_PEER_NONE && SMIO_PEER_NTB == (int)TOPO_PEER_NTB &&
	       SMIO_PEER_CSWITCH == (int)TOPO_PEER_CSWITCH, "peer kinds are the topology's");

int h_node_list(struct smd_req *r)
{
	const struct topo *t = r->d->topo;
	struct smio_node_list *o = r->out;

	if (t->nhosts > SMIO_MAX_NODES)
		return -EOVERFLOW;    /* the parser allows no more (TOPO_MAX_HOSTS) */
	o->n = t->nhosts;
	o->pad = 0;
	for (uint32_t i = 0; i < t->nhosts; i++) {
		struct smio_node *e = &o->node[i];

		memset(e, 0, sizeof(*e));
		e->host = t->hosts[i].id;
		e->node_id = t->hosts[i].node_id;
		snprintf(e->name, sizeof(e->name), "%s", t->hosts[i].name);
	}
	r->outlen = (uint32_t)(sizeof(*o) + o->n * sizeof(o->node[0]));
	return 0;
}

int h_adapter_info(struct smd_req *r)
{
	const struct fab_host *h = r->d->host;
	struct smio_adapter_list *o = r->out;

	if (h->nntbs > SMIO_MAX_ADAPTERS)
		return -EOVERFLOW;
	o->n = h->nntbs;
	o->pad = 0;
	for (uint32_t i = 0; i < h->nntbs; i++) {
		const struct fab_ntb *n = h->ntbs[i];
		const struct topo_ntb *t = n->t;

		o->a[i] = (struct smio_adapter){
			.ntb = i, .bdf = fab_func_bdf(n->fn), .link_up = n->link_up,
			.peer_kind = (uint8_t)t->peer_kind,
			.peer_host = t->peer_kind == TOPO_PEER_NTB ?
				     r->d->topo->hosts[t->peer_host].id : SMIO_HOST_NONE,
			.link_gen = t->cable.gen, .link_width = t->cable.width };
	}
	r->outlen = (uint32_t)(sizeof(*o) + o->n * sizeof(o->a[0]));
	return 0;
}

/* The node's daemon answered STATUS (whatever it said), or did not. */
static void probed(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
		   const void *payload, int fd)
{
	if (fd >= 0)
		close(fd);
	smd_req_done(arg, rc ? -EHOSTDOWN : 0);
}

/*
 * Does node node_id answer over adapter? This node always does; another
 * needs the adapter's link up, the cable reaching it (back-to-back to it, or
 * a cluster-switch fabric it hangs off too) and its daemon answering.
 */
int h_probe_node(struct smd_req *r)
{
	const struct smio_probe_node *m = r->p;
	struct smd *d = r->d;
	const struct fab_ntb *n;
	int hi, rc;

	if (m->adapter >= d->host->nntbs)
		return -ENODEV;
	n = d->host->ntbs[m->adapter];
	hi = topo_host_by_node(d->topo, m->node_id);
	if (hi < 0)
		return -EHOSTUNREACH;
	if (d->topo->hosts[hi].id == d->host_id)
		return 0;
	if (!n->link_up)
		return -ENOLINK;
	if (!ntb_can_reach(n, d->topo->hosts[hi].id))
		return -EHOSTUNREACH;
	rc = smd_req_keep(r);
	if (!rc)
		rc = smd_call_start(d, d->topo->hosts[hi].id, SMIO_STATUS, NULL, 0,
				    SMD_PEER_TIMEOUT, probed, r);
	if (rc)
		return rc == -ENOMEM ? rc : -EHOSTDOWN;
	return SMD_ASYNC;
}
