// SPDX-License-Identifier: MIT
/*
 * The timing model of a multicast write (include/smartio/timing.h,
 * timing_multicast): one posted write replicated by the switches along a
 * tree. Every link of the tree serialises the bytes once, whatever the number
 * of receivers behind it, and the switches replicate cut-through, so the
 * write is done when it is done on the slowest root-to-receiver path. The
 * same bytes sent as one unicast write per receiver serialise N times on the
 * sender's own links: that is the comparison the papers make (TOCS'21 7.4.2).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "smartio/timing.h"

static unsigned path_links(const struct timing_hop *h, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		k += h[i].kind == TIMING_HOP_LINK || h[i].kind == TIMING_HOP_CABLE;
	return k;
}

int timing_multicast(const struct timing_params *p, const struct timing_hop *const *paths,
		     const unsigned *npaths, unsigned nrecv, unsigned tree_links,
		     const struct timing_query *q, struct timing_mcast_result *r)
{
	double worst = 0, slowest_bw = 0, first_lat = 0;
	uint64_t wire = 0, uni_bytes = 0;

	memset(r, 0, sizeof(*r));
	if (!p || !paths || !npaths || !nrecv || !q || !q->write || !tree_links)
		return -EINVAL;
	for (unsigned i = 0; i < nrecv; i++) {
		struct timing_result one;
		int rc = timing_path(p, paths[i], npaths[i], q, &one);

		if (rc)
			return rc;
		if (one.latency_ns > worst)
			worst = one.latency_ns;
		if (!i || one.bw_gbs < slowest_bw)
			slowest_bw = one.bw_gbs;
		if (!i)
			first_lat = one.latency_ns;
		wire = one.wire_bytes;      /* per link: the same TLPs on every link */
		uni_bytes += one.wire_bytes * path_links(paths[i], npaths[i]);
	}
	r->receivers = nrecv;
	r->links = tree_links;
	r->latency_ns = worst;
	r->bw_gbs = slowest_bw;
	r->link_bytes = wire * tree_links;
	r->unicast_link_bytes = uni_bytes;
	/*
	 * Unicast: the writes follow each other through the sender's links (the
	 * bottleneck each pays); the last one lands one path latency after its
	 * bytes left, so (N - 1) serialisations plus the slowest path.
	 */
	r->unicast_ns = worst + (double)(nrecv - 1) * (double)q->size / slowest_bw;
	snprintf(r->explain, sizeof(r->explain),
		 "multicast posted write of %llu B to %u receivers over %u links: each link of the "
		 "tree carries %llu B on the wire once (%llu B in all); the switches replicate "
		 "cut-through, so the last receiver has the data after the slowest path, %.0f ns "
		 "(first path %.0f ns). As %u unicast writes: %llu B on the links, %.0f ns "
		 "(the sender's bottleneck serialises %u times at %.3f GB/s).",
		 (unsigned long long)q->size, nrecv, tree_links, (unsigned long long)wire,
		 (unsigned long long)r->link_bytes, worst, first_lat, nrecv,
		 (unsigned long long)uni_bytes, r->unicast_ns, nrecv, slowest_bw);
	return 0;
}
