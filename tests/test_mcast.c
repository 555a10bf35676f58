// SPDX-License-Identifier: MIT
/*
 * Multicast in the cluster switches (src/fabric/mcast.h): fan-out to member
 * ports only, across cascaded switches; reads are unsupported requests;
 * overlays into RAM and into a device BAR; leaving stops delivery; groups
 * run out with a clear error; the topology's multicast attributes.
 */
#include <errno.h>
#include <stdlib.h>

#include "fabric_util.h"
#include "fabric/mcast.h"
#include "host/ntb_drv.h"
#include "smartio/timing.h"

/* mxs0: hosts 0, 1, 2; cascaded mxs1: hosts 3 (with an accelerator) and 4. */
static const char *mc_yaml =
	"version: 1\n"
	"cluster_switches:\n"
	"  - {name: mxs0, multicast: {groups: 4, group_size: 1M}}\n"
	"  - {name: mxs1, cascade: [mxs0], multicast: {groups: 4, group_size: 1M}}\n"
	"hosts:\n"
	"  - {id: 0, name: w, ram: 256M, ports: [{ntb: {connect: mxs0}}]}\n"
	"  - {id: 1, name: a, ram: 256M, ports: [{ntb: {connect: mxs0}}]}\n"
	"  - {id: 2, name: b, ram: 256M, ports: [{ntb: {connect: mxs0}}]}\n"
	"  - {id: 3, name: c, ram: 256M, ports: [{ntb: {connect: mxs1}}, "
	"{device: {name: gpu0, model: accel, params: {memory: 1M}}}]}\n"
	"  - {id: 4, name: d, ram: 256M, ports: [{ntb: {connect: mxs1}}]}\n";

#define SUB_ADDR 0x100000ull     /* where each subscriber's overlay lands in its RAM */

static void ram_read(struct tcluster *tc, uint32_t host, uint64_t addr, void *buf, size_t n)
{
	assert_int_equal(fab_access(tc_host(tc, host), FAB_RID_CPU, addr, buf, n, false), 0);
}

static void ram_fill(struct tcluster *tc, uint32_t host, uint64_t addr, int c, size_t n)
{
	uint8_t buf[256];

	memset(buf, c, sizeof(buf));
	assert_true(n <= sizeof(buf));
	assert_int_equal(fab_access(tc_host(tc, host), FAB_RID_CPU, addr, buf, n, true), 0);
}

/* The writer's window onto group g (an NTB memory window into the range). */
static uint64_t writer_window(struct tcluster *tc, uint32_t host, uint32_t g,
			      struct ntb_mw *mw)
{
	struct fab_host *h = tc_host(tc, host);
	const struct topo_cswitch *s = &tc->topo->cswitches[0];

	assert_int_equal(ntb_mw_map(ntb_drv_of(h, 0), NTB_DEST_MCAST, fab_mc_group_addr(s, g),
				    s->mc_group_size, mw), 0);
	return mw->bus;
}

static void join(struct tcluster *tc, uint32_t host, uint32_t g, uint64_t addr)
{
	assert_int_equal(fab_mc_join(tc_host(tc, host), 0, g, addr, 1ull << 20), 0);
}

static void test_mc_fanout_members_only(void **state)
{
	struct tcluster tc;
	struct ntb_mw mw;
	uint8_t msg[128], got[128], before[128];
	uint64_t win;

	(void)state;
	tc_up(&tc, mc_yaml);
	for (uint32_t h = 0; h < 5; h++)
		ram_fill(&tc, h, SUB_ADDR, 0xee, 256);
	ram_read(&tc, 4, SUB_ADDR, before, sizeof(before));
	/* The writer subscribes too: a switch never sends a write back its ingress port. */
	for (uint32_t h = 0; h < 4; h++)
		join(&tc, h, 2, SUB_ADDR);
	win = writer_window(&tc, 0, 2, &mw);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(fab_access(tc_host(&tc, 0), FAB_RID_CPU, win + 0x40, msg, sizeof(msg),
				    true), 0);
	for (uint32_t h = 1; h < 4; h++) {
		ram_read(&tc, h, SUB_ADDR + 0x40, got, sizeof(got));
		assert_memory_equal(got, msg, sizeof(msg));
	}
	/* The non-member (host 4, on the cascaded switch) and the writer: unchanged. */
	ram_read(&tc, 4, SUB_ADDR, got, sizeof(got));
	assert_memory_equal(got, before, sizeof(got));
	ram_read(&tc, 0, SUB_ADDR + 0x40, got, sizeof(got));
	assert_memory_equal(got, before, sizeof(got));
	/* Another group's members get nothing. */
	join(&tc, 4, 1, SUB_ADDR);
	assert_int_equal(fab_access(tc_host(&tc, 0), FAB_RID_CPU, win, msg, 16, true), 0);
	ram_read(&tc, 4, SUB_ADDR, got, sizeof(got));
	assert_memory_equal(got, before, sizeof(got));
	ntb_mw_unmap(ntb_drv_of(tc_host(&tc, 0), 0), &mw);
	tc_down(&tc);
}

static void test_mc_tree_across_cascade(void **state)
{
	struct tcluster tc;
	struct fab_mc_tree *tr = malloc(sizeof(*tr));
	const struct topo_cswitch *s;
	uint32_t cascades = 0, egress = 0;

	(void)state;
	assert_non_null(tr);
	tc_up(&tc, mc_yaml);
	s = &tc.topo->cswitches[0];
	/* Only host 3 (behind the cascade) is a member. */
	join(&tc, 3, 0, SUB_ADDR);
	assert_int_equal(fab_mc_tree(&tc.c->w, 0, 0, fab_mc_group_addr(s, 0) + 8, tr), 0);
	assert_int_equal(tr->group, 0);
	assert_int_equal(tr->off, 8);
	assert_int_equal(tr->nrecv, 1);
	assert_int_equal(tr->recv[0].host, 3);
	assert_int_equal(tr->recv[0].depth, 2);
	/* ingress cable, one cascade, one egress cable: each link once */
	assert_int_equal(tr->nlinks, 3);
	/* Members on both switches: the cascade carries the write once. */
	join(&tc, 1, 0, SUB_ADDR);
	join(&tc, 2, 0, SUB_ADDR);
	join(&tc, 4, 0, SUB_ADDR);
	assert_int_equal(fab_mc_tree(&tc.c->w, 0, 0, fab_mc_group_addr(s, 0), tr), 0);
	assert_int_equal(tr->nrecv, 4);
	for (uint32_t i = 0; i < tr->nlinks; i++) {
		if (tr->links[i].to_csw != UINT32_MAX && tr->links[i].from_csw != UINT32_MAX)
			cascades++;
		if (tr->links[i].from_csw != UINT32_MAX && tr->links[i].to_csw == UINT32_MAX)
			egress++;
	}
	assert_int_equal(cascades, 1);
	assert_int_equal(egress, 4);
	assert_int_equal(tr->nlinks, 6);
	/* Entering at host 4 (mxs1), the cascade goes the other way. */
	assert_int_equal(fab_mc_tree(&tc.c->w, 4, 0, fab_mc_group_addr(s, 0), tr), 0);
	assert_int_equal(tr->nrecv, 3);
	assert_int_equal(tr->ingress_csw, 1);
	/* A multicast write across the cascade lands at host 3. */
	{
		struct ntb_mw mw;
		uint8_t v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, got[8];
		uint32_t n = 0;

		writer_window(&tc, 0, 0, &mw);
		assert_int_equal(fab_mc_write(tc_host(&tc, 0), 0, fab_mc_group_addr(s, 0) + 16, v,
					      sizeof(v), &n), 0);
		assert_int_equal(n, 4);
		ram_read(&tc, 3, SUB_ADDR + 16, got, sizeof(got));
		assert_memory_equal(got, v, sizeof(v));
	}
	free(tr);
	tc_down(&tc);
}

static void test_mc_read_is_ur(void **state)
{
	struct tcluster tc;
	struct fab_route r;
	struct ntb_mw mw;
	uint8_t got[16];
	uint64_t win;

	(void)state;
	tc_up(&tc, mc_yaml);
	join(&tc, 1, 3, SUB_ADDR);
	win = writer_window(&tc, 0, 3, &mw);
	assert_int_equal(fab_route_resolve(tc_host(&tc, 0), FAB_RID_CPU, win, 16, false, &r), 0);
	assert_int_equal(r.status, FAB_UR);
	assert_non_null(strstr(r.reason, "multicast"));
	assert_int_equal(fab_access(tc_host(&tc, 0), FAB_RID_CPU, win, got, sizeof(got), false),
			 FAB_UR);
	for (size_t i = 0; i < sizeof(got); i++)
		assert_int_equal(got[i], 0xff);
	/* A write resolves to the switch's group. */
	assert_int_equal(fab_route_resolve(tc_host(&tc, 0), FAB_RID_CPU, win, 16, true, &r), 0);
	assert_int_equal(r.status, FAB_OK);
	assert_int_equal(r.tgt.kind, FAB_TGT_MCAST);
	assert_true(route_has(&r, FAB_HOP_CSWITCH, "multicast group 3"));
	tc_down(&tc);
}

static void test_mc_overlay_into_device_bar(void **state)
{
	struct tcluster tc;
	struct fab_func *gpu;
	struct ntb_mw mw;
	uint8_t v[64], got[64];
	uint64_t bar, win;

	(void)state;
	tc_up(&tc, mc_yaml);
	gpu = tc_fn(&tc, 3, "gpu0");
	bar = fab_func_bar_addr(gpu, 2);
	assert_true(bar != 0);
	/* Host 3's overlay maps group 1 onto the accelerator's memory BAR. */
	assert_int_equal(fab_mc_join(tc_host(&tc, 3), 0, 1, bar + 0x1000, 0x10000), 0);
	join(&tc, 1, 1, SUB_ADDR);
	win = writer_window(&tc, 0, 1, &mw);
	memset(v, 0x5a, sizeof(v));
	assert_int_equal(fab_access(tc_host(&tc, 0), FAB_RID_CPU, win + 0x20, v, sizeof(v), true),
			 0);
	assert_int_equal(fab_access(tc_host(&tc, 3), FAB_RID_CPU, bar + 0x1020, got, sizeof(got),
				    false), 0);
	assert_memory_equal(got, v, sizeof(v));
	ram_read(&tc, 1, SUB_ADDR + 0x20, got, sizeof(got));
	assert_memory_equal(got, v, sizeof(v));
	/* Beyond the overlay's size: that receiver drops it, the others still get it. */
	memset(v, 0x33, sizeof(v));
	assert_int_equal(fab_access(tc_host(&tc, 0), FAB_RID_CPU, win + 0x20000, v, sizeof(v),
				    true), 0);
	ram_read(&tc, 1, SUB_ADDR + 0x20000, got, sizeof(got));
	assert_memory_equal(got, v, sizeof(v));
	tc_down(&tc);
}

static void test_mc_leave_stops_delivery(void **state)
{
	struct tcluster tc;
	struct ntb_mw mw;
	uint8_t one[8] = "first..", two[8] = "second.", got[8];
	uint64_t win;

	(void)state;
	tc_up(&tc, mc_yaml);
	join(&tc, 1, 0, SUB_ADDR);
	join(&tc, 2, 0, SUB_ADDR);
	win = writer_window(&tc, 0, 0, &mw);
	assert_int_equal(fab_access(tc_host(&tc, 0), FAB_RID_CPU, win, one, 8, true), 0);
	assert_int_equal(fab_mc_leave(tc_host(&tc, 2), 0, 0), 0);
	assert_int_equal(fab_mc_leave(tc_host(&tc, 2), 0, 0), -ENOENT);
	assert_int_equal(fab_access(tc_host(&tc, 0), FAB_RID_CPU, win, two, 8, true), 0);
	ram_read(&tc, 1, SUB_ADDR, got, 8);
	assert_memory_equal(got, two, 8);
	ram_read(&tc, 2, SUB_ADDR, got, 8);
	assert_memory_equal(got, one, 8);
	/* Joining twice is refused; a bad group or size is refused. */
	assert_int_equal(fab_mc_join(tc_host(&tc, 1), 0, 0, SUB_ADDR, 4096), -EBUSY);
	assert_int_equal(fab_mc_join(tc_host(&tc, 1), 0, 4, SUB_ADDR, 4096), -ERANGE);
	assert_int_equal(fab_mc_join(tc_host(&tc, 1), 0, 1, SUB_ADDR, 2ull << 20), -EINVAL);
	tc_down(&tc);
}

static void test_mc_group_exhaustion(void **state)
{
	struct tcluster tc;
	struct fab_mc_port p, q;
	uint32_t g, seen = 0;

	(void)state;
	tc_up(&tc, mc_yaml);
	assert_int_equal(fab_mc_port_of(tc.topo, 0, 0, &p), 0);
	assert_int_equal(fab_mc_port_of(tc.topo, 4, 0, &q), 0);
	assert_int_equal(p.root, 0);
	assert_int_equal(q.root, 0);    /* one fabric, one allocator */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(fab_mc_group_alloc(&tc.c->w, i % 2 ? &p : &q, (uint32_t)i, &g), 0);
		seen |= 1u << g;
	}
	assert_int_equal(seen, 0xf);
	assert_int_equal(fab_mc_group_alloc(&tc.c->w, &p, 4, &g), -ENOSPC);
	assert_int_equal(fab_mc_group_users(&tc.c->w, &p, 2), 1);
	assert_int_equal(fab_mc_group_get(&tc.c->w, &p, 3, 2), 0);
	assert_int_equal(fab_mc_group_users(&tc.c->w, &p, 2), 2);
	/* The group is free again once every host let go (host 2 by a restart). */
	assert_int_equal(fab_mc_group_put(&tc.c->w, &p, 3, 2), 0);
	assert_int_equal(fab_mc_group_put(&tc.c->w, &p, 3, 2), -ENOENT);
	fab_mc_host_reset(&tc.c->w, 2);
	assert_int_equal(fab_mc_group_users(&tc.c->w, &p, 2), 0);
	assert_int_equal(fab_mc_group_alloc(&tc.c->w, &q, 4, &g), 0);
	assert_int_equal(g, 2);
	assert_int_equal(fab_mc_group_get(&tc.c->w, &p, 0, 4), -ERANGE);
	tc_down(&tc);
}

static void test_mc_topology(void **state)
{
	struct topo *t = NULL;
	char err[512];
	static const char *bad_cascade =
		"version: 1\n"
		"cluster_switches:\n"
		"  - {name: s0, multicast: {groups: 8}}\n"
		"  - {name: s1, cascade: [s0]}\n"
		"hosts:\n  - ports: [{}]\n";
	static const char *bad_size =
		"version: 1\n"
		"cluster_switches:\n"
		"  - {name: s0, multicast: {groups: 8, group_size: 3M}}\n"
		"hosts:\n  - ports: [{}]\n";
	static const char *ok =
		"version: 1\n"
		"cluster_switches:\n"
		"  - {name: s0, multicast: {groups: 16, group_size: 64K, base: 0x200000000000}}\n"
		"  - {name: s1}\n"
		"hosts:\n  - ports: [{ntb: {connect: s1}}]\n";

	(void)state;
	assert_int_equal(topo_load_string(bad_cascade, strlen(bad_cascade), "t", &t, err,
					  sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "multicast settings differ"));
	assert_int_equal(topo_load_string(bad_size, strlen(bad_size), "t", &t, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "power of two"));
	assert_int_equal(topo_load_string(ok, strlen(ok), "t", &t, err, sizeof(err)), 0);
	assert_int_equal(t->cswitches[0].mc_groups, 16);
	assert_int_equal(t->cswitches[0].mc_group_size, 65536);
	assert_int_equal(t->cswitches[0].mc_base, 0x200000000000ull);
	assert_int_equal(t->cswitches[1].mc_groups, 0);   /* default: off */
	topo_free(t);
	/* No multicast on the switch: no window into it. */
	{
		struct tcluster tc;
		struct fab_mc_port p;
		struct ntb_mw mw;

		tc_up(&tc, ok);
		assert_int_equal(fab_mc_port_of(tc.topo, 0, 0, &p), -EOPNOTSUPP);
		assert_int_equal(ntb_mw_map(ntb_drv_of(tc_host(&tc, 0), 0), NTB_DEST_MCAST,
					    0x3f0000000000ull, 4096, &mw), -EHOSTUNREACH);
		tc_down(&tc);
	}
}

/*
 * The timing model prices a multicast write per link of the tree: the paths
 * from the writer to each receiver (the writer's route to the switch, the
 * tree's cascades and egress cable, the receiver's own step) priced
 * together, against the same bytes as one unicast write per receiver.
 */
static void test_mc_timing(void **state)
{
	struct tcluster tc;
	struct fab_mc_tree *tr = malloc(sizeof(*tr));
	struct fab_route *r0 = malloc(sizeof(*r0)), *rs = malloc(sizeof(*rs));
	static struct timing_hop paths[4][TIMING_MAX_HOPS];
	const struct timing_hop *pp[4];
	unsigned np[4];
	struct timing_params tp;
	struct timing_query q = { .size = 4096, .write = true };
	struct timing_mcast_result res;
	struct ntb_mw mw;
	uint64_t win;

	(void)state;
	assert_non_null(tr);
	assert_non_null(r0);
	assert_non_null(rs);
	tc_up(&tc, mc_yaml);
	for (uint32_t h = 1; h < 5; h++)
		join(&tc, h, 0, SUB_ADDR);
	win = writer_window(&tc, 0, 0, &mw);
	assert_int_equal(fab_route_resolve(tc_host(&tc, 0), FAB_RID_CPU, win, 4096, true, r0), 0);
	assert_int_equal(r0->tgt.kind, FAB_TGT_MCAST);
	assert_int_equal(fab_mc_tree(&tc.c->w, 0, 0, r0->tgt.addr, tr), 0);
	assert_int_equal(tr->nrecv, 4);
	for (uint32_t i = 0; i < tr->nrecv; i++) {
		struct fab_forward fwd = { 0 };
		struct fab_step st = { .host = tr->recv[i].host, .from_ntb = true,
				       .ntb_index = tr->recv[i].ntb, .write = true, .mcast = true,
				       .addr = r0->tgt.addr, .len = 4096 };
		struct fab_hop cab = { .kind = FAB_HOP_CABLE, .gen = 3, .width = 16 };
		struct fab_hop csw = { .kind = FAB_HOP_CSWITCH, .latency_ns = 170, .host = 0xffff };
		int n;

		memcpy(rs, r0, sizeof(*rs));
		/* Behind the cascade: its link and the second switch. */
		for (uint32_t d = 1; d < tr->recv[i].depth; d++) {
			fab_route_push(rs, &cab);
			fab_route_push(rs, &csw);
		}
		cab.width = 8;
		fab_route_push(rs, &cab);
		assert_int_equal(fab_route_step_local(tc_host(&tc, tr->recv[i].host), &st, rs, &fwd), 0);
		assert_int_equal(rs->status, FAB_OK);
		assert_int_equal(rs->tgt.kind, FAB_TGT_RAM);
		n = timing_hops_from_fab(rs->hops, rs->nhops, paths[i], TIMING_MAX_HOPS);
		assert_true(n > 0);
		pp[i] = paths[i];
		np[i] = (unsigned)n;
	}
	timing_params_default(&tp);
	assert_int_equal(timing_multicast(&tp, pp, np, tr->nrecv, tr->nlinks, &q, &res), 0);
	assert_int_equal(res.links, 6);
	/* Each of the 6 links once, against every path's links for each receiver. */
	assert_true(res.link_bytes < res.unicast_link_bytes);
	assert_true(res.latency_ns > 0 && res.latency_ns < res.unicast_ns);
	/* The last receiver is one behind the cascade: slower than one on mxs0. */
	{
		struct timing_result near, far;

		assert_int_equal(timing_path(&tp, pp[0], np[0], &q, &near), 0);
		assert_int_equal(timing_path(&tp, pp[3], np[3], &q, &far), 0);
		assert_true(far.latency_ns > near.latency_ns);
		assert_true(res.latency_ns >= far.latency_ns);
	}
	q.write = false;
	assert_int_equal(timing_multicast(&tp, pp, np, tr->nrecv, tr->nlinks, &q, &res), -EINVAL);
	free(tr);
	free(r0);
	free(rs);
	tc_down(&tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mc_fanout_members_only),
		cmocka_unit_test(test_mc_tree_across_cascade),
		cmocka_unit_test(test_mc_read_is_ur),
		cmocka_unit_test(test_mc_overlay_into_device_bar),
		cmocka_unit_test(test_mc_leave_stops_delivery),
		cmocka_unit_test(test_mc_group_exhaustion),
		cmocka_unit_test(test_mc_topology),
		cmocka_unit_test(test_mc_timing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
