// SPDX-License-Identifier: MIT
/* An in-process world: every host of a topology in one process (tests, tools). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcast.h"
#include "czodiac_route.h"
#include "route.h"

static int local_step(struct fab_world *w, const struct fab_step *in, struct fab_route *r,
		      struct fab_forward *fwd)
{
	struct fab_cluster *c = w->priv;
	struct fab_host *h = fab_cluster_host(c, in->host);

	if (!h)
		return -EHOSTUNREACH;
	return fab_route_step_local(h, in, r, fwd);
}

static void local_invalidate(struct fab_world *w, uint32_t origin)
{
	/* One epoch covers all hosts in the process: already advanced. */
}

static void *local_mem_map(struct fab_world *w, uint32_t host, uint32_t mem, uint64_t *size)
{
	struct fab_host *h = fab_cluster_host(w->priv, host);

	if (!h || mem >= h->nmems)
		return NULL;
	*size = h->mems[mem].size;
	return fab_mem_map(h, mem);
}

static int local_msi(struct fab_world *w, uint32_t host, uint64_t addr, uint32_t data)
{
	struct fab_host *h = fab_cluster_host(w->priv, host);
	int rc;

	if (!h)
		return -EHOSTUNREACH;
	fab_host_lock(h);
	rc = fab_intc_deliver(&h->intc, addr, data) ? FAB_UR : 0;
	fab_host_unlock(h);
	return rc;
}

static const struct fab_world_ops local_ops = {
	.step = local_step,
	.invalidate = local_invalidate,
	.mem_map = local_mem_map,
	.msi = local_msi,
};

int fab_cluster_create(const struct topo *t, fab_endpoint_init_fn ep_init,
		       struct fab_cluster **out, char *err, size_t errlen)
{
	struct fab_cluster *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->w.topo = t;
	c->w.ops = &local_ops;
	c->w.priv = c;
	/* The cluster switches' registers, shared by the in-process hosts. */
	c->w.mc = calloc(1, sizeof(*c->w.mc));
	c->w.cz = calloc(1, sizeof(*c->w.cz));
	c->hosts = calloc(t->nhosts, sizeof(*c->hosts));
	if (!c->hosts || !c->w.mc || !c->w.cz) {
		free(c->hosts);
		free(c->w.cz);
		free(c->w.mc);
		free(c);
		return -ENOMEM;
	}
	c->nhosts = t->nhosts;
	for (uint32_t i = 0; i < t->nhosts; i++) {
		rc = fab_host_create(&c->w, t, i, ep_init, &c->hosts[i], err, errlen);
		if (rc) {
			fab_cluster_destroy(c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

void fab_cluster_destroy(struct fab_cluster *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nhosts; i++)
		fab_host_destroy(c->hosts[i]);
	free(c->hosts);
	free(c->w.cz);
	free(c->w.mc);
	free(c);
}

struct fab_host *fab_cluster_host(struct fab_cluster *c, uint32_t host_id)
{
	for (uint32_t i = 0; i < c->nhosts; i++)
		if (c->hosts[i] && c->hosts[i]->id == host_id)
			return c->hosts[i];
	return NULL;
}
