// SPDX-License-Identifier: MIT
/*
 * The segment service's view of links: is the path from this host's CPU to
 * each connection's memory operational?
 *
 * A link change anywhere on a path reaches this daemon as an NTB link event
 * of its own adapters, or as a peer's invalidation whose link count moved
 * (peer.c puts the origin's count in every PEER_INVALIDATE; a daemon that
 * stepped through a host hears of it). Either schedules one pass, on the
 * loop's next turn, that walks the route of every connection through a
 * window again (smd_route_walk: remote steps are peer calls, nothing waits).
 * A connection whose route fails is NOT_OPERATIONAL, one whose route works
 * again OPERATIONAL; each change counts in imp.changes and adds 1 to the
 * connection's SEG_EVENTS eventfd, so the process (libsisci) remaps its maps
 * and calls its callbacks. Changes that arrive while a connection's walk is
 * under way make it walk once more afterwards, so the last word is always
 * that of a walk that started after the last change.
 */
#include <errno.h>
#include <stdlib.h>

#include "core_priv.h"
#include "daemon.h"
#include "seg_priv.h"
#include "fabric/ntb.h"
#include "util/log.h"

struct walk {
	uint32_t handle;
};

static struct imp *imp_by_handle(struct smd_segs *s, uint32_t handle)
{
	for (unsigned i = 0; i < s->nimp; i++)
		if (s->imp[i].handle == handle)
			return &s->imp[i];
	return NULL;
}

/* Does this connection's memory lie behind a window (a path that can fail)? */
static bool imp_crosses(const struct smd *d, const struct imp *im)
{
	return im->mw.count && im->host != d->host_id && !smd_imp_dead(im);
}

static void walk_start(struct smd *d, struct imp *im);

static void walked(struct smd *d, void *arg, struct fab_route *rt)
{
	struct walk *w = arg;
	struct imp *im = d->segs ? imp_by_handle(d->segs, w->handle) : NULL;
	bool down;

	free(w);
	if (!im)
		return;                 /* disconnected meanwhile */
	im->walking = false;
	if (smd_imp_dead(im))
		return;                 /* lost or gone: that state says it all */
	/* A timeout or an unreachable host fails the route too: the path is down. */
	down = rt->status != FAB_OK;
	if (down != im->down) {
		im->down = down;
		im->changes++;
		smio_info("segment %#x of host %u through %s: %s", im->segid, im->host,
			  ntb_drv_hw(ntb_drv_of(d->host, im->ntb))->fn->name,
			  down ? rt->reason : "operational again");
		smd_imp_signal(im);
	}
	if (im->rewalk && !(d->core && d->core->stopping)) {
		im->rewalk = false;
		walk_start(d, im);
	}
}

static void walk_start(struct smd *d, struct imp *im)
{
	struct walk *w = malloc(sizeof(*w));

	if (!w) {
		smio_warn("segment %#x: no memory to check its path", im->segid);
		return;
	}
	w->handle = im->handle;
	im->walking = true;
	/* The CPU's stores through the window, as SEG_MAP_REMOTE resolved them. */
	if (smd_route_walk(d, FAB_RID_CPU, im->win_addr + im->offset, im->size, true, true,
			   walked, w)) {
		im->walking = false;
		free(w);
	}
}

static void pass(struct smd *d, struct smd_defer *x)
{
	struct smd_segs *s = d->segs;

	(void)x;
	if (!s)
		return;
	s->pass_queued = false;
	if (d->core->stopping)
		return;
	/*
	 * A walk that ends at once runs its continuation inside walk_start; it
	 * finds its connection again by handle and never adds or removes one, so
	 * the index stays valid.
	 */
	for (unsigned i = 0; i < s->nimp; i++) {
		struct imp *im = &s->imp[i];

		if (!imp_crosses(d, im))
			continue;
		if (im->walking)
			im->rewalk = true;
		else
			walk_start(d, im);
	}
}

void smd_seg_links_changed(struct smd *d)
{
	struct smd_segs *s = d->segs;

	if (!s || !d->core || s->pass_queued)
		return;
	s->pass_queued = true;
	s->pass.fn = pass;
	smd_defer(d, &s->pass);
}

bool smd_seg_peer_links(struct smd *d, uint32_t host, uint32_t link_gen)
{
	struct smd_segs *s = d->segs;
	int idx = topo_host_index(d->topo, host);

	if (!s || idx < 0 || (uint32_t)idx >= SMD_SEG_MAX_HOSTS)
		return true;        /* cannot tell: assume it did */
	if (s->peer_link_seen[idx] && s->peer_link_gen[idx] == link_gen)
		return false;
	s->peer_link_seen[idx] = true;
	s->peer_link_gen[idx] = link_gen;
	smd_seg_links_changed(d);
	return true;
}
