// SPDX-License-Identifier: MIT
/*
 * The host OS's NTB driver (src/host/ntb_drv.h): window arithmetic at window
 * boundaries, all-or-nothing allocation, ownership of entries, the admin's
 * entries, reference-counted requester IDs, events to several clients, and
 * the NTBs' IOMMU domain.
 */
#include <errno.h>
#include <linux/pci_regs.h>

#include "fabric_util.h"
#include "host/ntb_drv.h"

/*
 * a.n0 -- b.n0 (b has its IOMMU on), a.n1 -- c.n0, a.n2 without a cable.
 * Windows of 64 MiB, 8 entries; a.n0 has a requester-ID table of 4.
 */
static const char *yaml =
	"version: 1\n"
	"hosts:\n"
	"  - {id: 0, name: a, ram: 1G, ports: [{ntb: {name: n0, connect: b.n0, bar_size: 512M, lut_entries: 8, requesters: 4}}, {ntb: {name: n1, connect: c.n0, bar_size: 512M, lut_entries: 8}}, {ntb: {name: n2, bar_size: 512M, lut_entries: 8}}]}\n"
	"  - {id: 1, name: b, ram: 1G, iommu: true, ports: [{ntb: {name: n0, bar_size: 512M, lut_entries: 8}}]}\n"
	"  - {id: 2, name: c, ram: 1G, ports: [{ntb: {name: n0, bar_size: 512M, lut_entries: 8}}]}\n";

#define W (64ull << 20)

static struct fab_route R;

static void resolve(struct fab_host *h, uint64_t addr)
{
	assert_int_equal(fab_route_resolve(h, FAB_RID_CPU, addr, 4, true, &R), 0);
}

static uint64_t lut_bar(struct ntb_drv *n)
{
	return fab_func_bar_addr(ntb_drv_hw(n)->fn, NTB_BAR_LUT);
}

static void test_probe_and_lookup(void **state)
{
	struct tcluster tc;
	struct fab_host *a;
	struct ntb_drv *n0, *n1;

	tc_up(&tc, yaml);
	a = tc_host(&tc, 0);
	assert_int_equal(ntb_drv_probe(a), -EEXIST);   /* host_ntb_init bound them */
	n0 = ntb_drv_of(a, 0);
	n1 = ntb_drv_of(a, 1);
	assert_non_null(n0);
	assert_non_null(ntb_drv_of(a, 2));
	assert_null(ntb_drv_of(a, 3));
	assert_null(ntb_drv_of(NULL, 0));
	assert_ptr_equal(ntb_drv_hw(n1), a->ntbs[1]);
	assert_int_equal(ntb_drv_index(n1), 1);
	assert_int_equal(ntb_mw_window(n0), W);
	/* The adapter towards a host: link up, cable reaches it, LUT BAR decodes. */
	assert_ptr_equal(ntb_drv_to(a, 1), n0);
	assert_ptr_equal(ntb_drv_to(a, 2), n1);
	assert_null(ntb_drv_to(a, 0));
	assert_null(ntb_drv_to(a, 9));
	assert_false(ntb_drv_link_up(ntb_drv_of(a, 2)));     /* no cable */
	ntb_set_link(a->ntbs[0], false);
	assert_null(ntb_drv_to(a, 1));
	ntb_set_link(a->ntbs[0], true);
	/* Bring-up admitted the CPU, holding one reference. */
	assert_int_equal(ntb_rid_refs(n0, FAB_RID_CPU), 1);
	assert_true(ntb_rid_allowed(a->ntbs[0], FAB_RID_CPU));
	tc_down(&tc);
}

static void map_ok(struct ntb_drv *n, uint32_t host, uint64_t addr, uint64_t size,
		   struct ntb_mw *mw)
{
	assert_int_equal(ntb_mw_map(n, host, addr, size, mw), 0);
}

static void test_mw_arithmetic(void **state)
{
	struct tcluster tc;
	struct fab_host *a;
	struct ntb_drv *n;
	struct fab_ntb *hw;
	struct ntb_mw m1, m2, m3, m4, m;
	uint64_t bar;

	tc_up(&tc, yaml);
	a = tc_host(&tc, 0);
	n = ntb_drv_of(a, 1);          /* towards c, IOMMU off there */
	hw = ntb_drv_hw(n);
	bar = lut_bar(n);
	assert_true(bar != 0);

	/* Exactly one window. */
	map_ok(n, 2, 0, W, &m1);
	assert_int_equal(m1.first, 0);
	assert_int_equal(m1.count, 1);
	assert_int_equal(m1.bus, bar);
	assert_int_equal(m1.offset, 0);
	assert_int_equal(m1.run_bus, bar);
	assert_int_equal(m1.run_size, W);
	assert_int_equal(m1.size, W);
	assert_int_equal(m1.dest_host, 2);
	/* The last byte of a window: still one. */
	map_ok(n, 2, W - 1, 1, &m2);
	assert_int_equal(m2.first, 1);
	assert_int_equal(m2.count, 1);
	assert_int_equal(m2.offset, W - 1);
	assert_int_equal(m2.run_bus, bar + W);
	assert_int_equal(m2.bus, bar + W + W - 1);
	assert_int_equal(hw->lut[1].dest_addr, 0);
	/* One byte across the boundary: two windows, translating base and base + W. */
	map_ok(n, 2, W - 1, 2, &m3);
	assert_int_equal(m3.first, 2);
	assert_int_equal(m3.count, 2);
	assert_int_equal(m3.run_size, 2 * W);
	assert_int_equal(m3.bus, bar + 2 * W + W - 1);
	assert_int_equal(hw->lut[2].dest_addr, 0);
	assert_int_equal(hw->lut[3].dest_addr, W);
	assert_int_equal(hw->lut[3].dest_host, 2);
	/* Aligned, one byte more than a window. */
	map_ok(n, 2, 5 * W, W + 1, &m4);
	assert_int_equal(m4.first, 4);
	assert_int_equal(m4.count, 2);
	assert_int_equal(m4.offset, 0);
	assert_int_equal(hw->lut[5].dest_addr, 6 * W);
	assert_int_equal(ntb_lut_used(hw), 6);

	/* The CPU's route through them ends where the arithmetic says. */
	resolve(a, m3.bus);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.host, 2);
	assert_int_equal(R.tgt.offset, W - 1);
	resolve(a, m3.bus + 1);           /* the second window */
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.offset, W);
	resolve(a, m4.bus + W);
	assert_int_equal(R.tgt.offset, 6 * W);

	ntb_mw_unmap(n, &m1);
	ntb_mw_unmap(n, &m2);
	ntb_mw_unmap(n, &m3);
	ntb_mw_unmap(n, &m4);
	assert_int_equal(m4.count, 0);
	assert_int_equal(ntb_lut_used(hw), 0);
	ntb_mw_unmap(n, &m4);              /* twice: nothing */

	/* The whole table, and one byte more. */
	map_ok(n, 2, 0, 8 * W, &m);
	assert_int_equal(m.count, 8);
	ntb_mw_unmap(n, &m);
	assert_int_equal(ntb_mw_map(n, 2, 0, 8 * W + 1, &m), -ENOSPC);
	assert_int_equal(ntb_mw_map(n, 2, W / 2, 8 * W, &m), -ENOSPC);   /* 9 windows */
	assert_int_equal(m.count, 0);
	/* The top of the address space, but not past it. */
	map_ok(n, 2, UINT64_MAX - W + 1, W, &m);
	assert_int_equal(m.count, 1);
	assert_int_equal(hw->lut[m.first].dest_addr, UINT64_MAX - W + 1);
	ntb_mw_unmap(n, &m);
	assert_int_equal(ntb_mw_map(n, 2, UINT64_MAX - 10, 12, &m), -ERANGE);
	assert_int_equal(ntb_mw_map(n, 2, 0x1000, 0, &m), -EINVAL);
	/* Hosts this cable does not lead to. */
	assert_int_equal(ntb_mw_map(n, 1, 0, W, &m), -EHOSTUNREACH);
	assert_int_equal(ntb_mw_map(n, 0, 0, W, &m), -EHOSTUNREACH);
	assert_int_equal(ntb_mw_map(n, 77, 0, W, &m), -EHOSTUNREACH);
	assert_int_equal(ntb_mw_reachable(n, 2), 0);
	assert_int_equal(ntb_mw_reachable(ntb_drv_of(a, 2), 2), -EHOSTUNREACH);
	assert_int_equal(ntb_lut_used(hw), 0);

	/* No memory decoding: the LUT BAR has no bus address to give. */
	{
		uint16_t bdf = fab_func_bdf(hw->fn);
		uint32_t cmd;

		assert_int_equal(fab_cfg_access_read(a, bdf, PCI_COMMAND, 2, &cmd), 0);
		assert_int_equal(fab_cfg_access_write(a, bdf, PCI_COMMAND, 2,
						      cmd & ~(uint32_t)PCI_COMMAND_MEMORY), 0);
		assert_int_equal(ntb_mw_map(n, 2, 0, W, &m), -ENODEV);
		assert_null(ntb_drv_to(a, 2));
		assert_int_equal(fab_cfg_access_write(a, bdf, PCI_COMMAND, 2, cmd), 0);
		map_ok(n, 2, 0, W, &m);
		ntb_mw_unmap(n, &m);
	}
	tc_down(&tc);
}

static void test_mw_all_or_nothing(void **state)
{
	struct tcluster tc;
	struct ntb_drv *n;
	struct fab_ntb *hw;
	struct ntb_mw a3, b2, c2, m;
	uint32_t e = 5;

	tc_up(&tc, yaml);
	n = ntb_drv_of(tc_host(&tc, 0), 1);
	hw = ntb_drv_hw(n);
	map_ok(n, 2, 0, 3 * W, &a3);                    /* 0..2 */
	assert_int_equal(ntb_mw_set(n, &e, 2, 0), 0);   /* 5 */
	/* Free: 3-4 and 6-7. Three in a row do not exist: nothing is programmed. */
	assert_int_equal(ntb_mw_map(n, 2, 0x1000, 3 * W - 0x2000, &m), -ENOSPC);
	assert_int_equal(m.count, 0);
	assert_int_equal(ntb_lut_used(hw), 4);
	assert_false(hw->lut[3].valid);
	map_ok(n, 2, W, 2 * W, &b2);
	assert_int_equal(b2.first, 3);
	map_ok(n, 2, 0x1000, W, &c2);                   /* two windows: 6-7 */
	assert_int_equal(c2.first, 6);
	assert_int_equal(c2.count, 2);
	assert_int_equal(ntb_mw_map(n, 2, 0, 1, &m), -ENOSPC);
	assert_int_equal(ntb_lut_used(hw), 8);
	ntb_mw_unmap(n, &a3);
	assert_int_equal(ntb_lut_used(hw), 5);
	map_ok(n, 2, 0, 3 * W, &m);
	assert_int_equal(m.first, 0);
	ntb_mw_unmap(n, &m);
	ntb_mw_unmap(n, &b2);
	ntb_mw_unmap(n, &c2);
	assert_int_equal(ntb_lut_used(hw), 1);          /* the admin's */
	tc_down(&tc);
}

static void test_mw_unmap_only_own(void **state)
{
	struct tcluster tc;
	struct fab_host *a;
	struct ntb_drv *n, *other;
	struct fab_ntb *hw;
	struct ntb_mw m, o;
	uint32_t e = NTB_MW_ANY;

	tc_up(&tc, yaml);
	a = tc_host(&tc, 0);
	n = ntb_drv_of(a, 1);
	other = ntb_drv_of(a, 0);
	hw = ntb_drv_hw(n);
	map_ok(n, 2, 0, 2 * W, &m);                     /* 0-1 */
	/* The admin cannot take a mapping's entry away. */
	assert_int_equal(ntb_mw_clear(n, 0), -EBUSY);
	/* The register cleared behind the driver's back, then reused. */
	assert_int_equal(ntb_lut_clear(hw, 1), 0);
	assert_int_equal(ntb_mw_set(n, &e, 2, 4 * W), 0);
	assert_int_equal(e, 1);
	ntb_mw_unmap(n, &m);
	assert_false(hw->lut[0].valid);
	assert_true(hw->lut[1].valid);                  /* not the mapping's any more */
	assert_int_equal(hw->lut[1].dest_addr, 4 * W);
	assert_int_equal(ntb_mw_clear(n, 1), 0);
	/* A mapping handed to another adapter's driver matches nothing there. */
	map_ok(n, 2, 0, W, &m);
	map_ok(other, 1, 0, W, &o);
	assert_int_equal(m.first, o.first);
	ntb_mw_unmap(other, &m);
	assert_true(hw->lut[m.first].valid);
	assert_true(ntb_drv_hw(other)->lut[o.first].valid);
	m.count = 1;
	ntb_mw_unmap(n, &m);
	ntb_mw_unmap(other, &o);
	assert_int_equal(ntb_lut_used(hw), 0);
	assert_int_equal(ntb_lut_used(ntb_drv_hw(other)), 0);
	tc_down(&tc);
}

static void test_admin_entries(void **state)
{
	struct tcluster tc;
	struct ntb_drv *n;
	struct fab_ntb *hw;
	uint32_t e;

	tc_up(&tc, yaml);
	n = ntb_drv_of(tc_host(&tc, 0), 1);
	hw = ntb_drv_hw(n);
	e = 3;
	assert_int_equal(ntb_mw_set(n, &e, 2, W), 0);
	assert_int_equal(e, 3);
	assert_true(hw->lut[3].valid);
	assert_int_equal(hw->lut[3].dest_addr, W);
	assert_int_equal(ntb_mw_set(n, &e, 2, 0), -EBUSY);
	e = 8;
	assert_int_equal(ntb_mw_set(n, &e, 2, 0), -ERANGE);
	e = 4;
	assert_int_equal(ntb_mw_set(n, &e, 2, W + 0x1000), -EINVAL);   /* not window aligned */
	assert_int_equal(ntb_mw_set(n, &e, 1, 0), -EHOSTUNREACH);      /* not this cable */
	assert_int_equal(ntb_mw_set(n, &e, 0, 0), -EHOSTUNREACH);      /* itself */
	assert_false(hw->lut[4].valid);
	/* Automatic: the first free ones, then none. */
	for (uint32_t want = 0; want < 8; want++) {
		if (want == 3)
			continue;
		e = NTB_MW_ANY;
		assert_int_equal(ntb_mw_set(n, &e, 2, 0), 0);
		assert_int_equal(e, want);
	}
	e = NTB_MW_ANY;
	assert_int_equal(ntb_mw_set(n, &e, 2, 0), -ENOSPC);
	assert_int_equal(ntb_mw_clear(n, 3), 0);
	assert_int_equal(ntb_mw_clear(n, 3), -ENOENT);
	assert_int_equal(ntb_mw_clear(n, 8), -ERANGE);
	assert_int_equal(ntb_lut_used(hw), 7);
	tc_down(&tc);
}

static void test_rid_refcounts(void **state)
{
	struct tcluster tc;
	struct fab_host *a;
	struct ntb_drv *n, *n1;
	struct fab_ntb *hw;

	tc_up(&tc, yaml);
	a = tc_host(&tc, 0);
	n = ntb_drv_of(a, 0);          /* 4 requester IDs, the CPU holds one */
	hw = ntb_drv_hw(n);
	assert_int_equal(ntb_rid_used(hw), 1);
	/* Two holders (say, the segment service and Device Lending). */
	assert_int_equal(ntb_rid_get(n, 0x100), 0);
	assert_int_equal(ntb_rid_get(n, 0x100), 0);
	assert_int_equal(ntb_rid_refs(n, 0x100), 2);
	assert_int_equal(ntb_rid_used(hw), 2);
	assert_int_equal(ntb_rid_put(n, 0x100), 0);
	assert_true(ntb_rid_allowed(hw, 0x100));        /* the other still needs it */
	assert_int_equal(ntb_rid_put(n, 0x100), 0);
	assert_false(ntb_rid_allowed(hw, 0x100));
	assert_int_equal(ntb_rid_put(n, 0x100), -ENOENT);
	assert_int_equal(ntb_rid_refs(n, 0x100), 0);
	/* The table's limit: a new ID fails, nothing changes; a held one still counts up. */
	assert_int_equal(ntb_rid_get(n, 0x101), 0);
	assert_int_equal(ntb_rid_get(n, 0x102), 0);
	assert_int_equal(ntb_rid_get(n, 0x103), 0);
	assert_int_equal(ntb_rid_get(n, 0x104), -ENOSPC);
	assert_int_equal(ntb_rid_used(hw), 4);
	assert_int_equal(ntb_rid_refs(n, 0x104), 0);
	assert_int_equal(ntb_rid_get(n, 0x101), 0);
	assert_int_equal(ntb_rid_refs(n, 0x101), 2);
	/* The admin holds at most one reference, and never drops another's. */
	assert_int_equal(ntb_rid_admin_add(n, 0x101), 0);
	assert_int_equal(ntb_rid_admin_add(n, 0x101), -EEXIST);
	assert_int_equal(ntb_rid_refs(n, 0x101), 3);
	assert_int_equal(ntb_rid_put(n, 0x101), 0);
	assert_int_equal(ntb_rid_put(n, 0x101), 0);
	assert_true(ntb_rid_allowed(hw, 0x101));        /* the admin's still */
	assert_int_equal(ntb_rid_admin_del(n, 0x101), 0);
	assert_false(ntb_rid_allowed(hw, 0x101));
	assert_int_equal(ntb_rid_admin_del(n, 0x101), -ENOENT);
	assert_int_equal(ntb_rid_admin_del(n, 0x102), -EBUSY);
	assert_int_equal(ntb_rid_admin_del(n, FAB_RID_CPU), -EBUSY);
	assert_true(ntb_rid_allowed(hw, 0x102));
	assert_int_equal(ntb_rid_admin_add(n, 0x1fe), 0);
	assert_int_equal(ntb_rid_admin_add(n, 0x1fd), -ENOSPC);
	assert_int_equal(ntb_rid_refs(n, 0x1fd), 0);
	/* An entry put there by hand is counted, but never deleted by the driver. */
	n1 = ntb_drv_of(a, 1);
	assert_int_equal(ntb_rid_add(ntb_drv_hw(n1), 0x200), 0);
	assert_int_equal(ntb_rid_get(n1, 0x200), 0);
	assert_int_equal(ntb_rid_put(n1, 0x200), 0);
	assert_true(ntb_rid_allowed(ntb_drv_hw(n1), 0x200));
	tc_down(&tc);
}

/* ---------- events ---------- */

struct rec {
	unsigned ups, downs, dbs;
	uint32_t bits;
	unsigned seq;              /* when it last heard something */
};

static unsigned seq;

static void rec_link(void *ctx, struct ntb_drv *ntb, bool up)
{
	struct rec *r = ctx;

	(void)ntb;
	if (up)
		r->ups++;
	else
		r->downs++;
	r->seq = ++seq;
}

static void rec_db(void *ctx, struct ntb_drv *ntb, uint32_t bits)
{
	struct rec *r = ctx;

	(void)ntb;
	r->dbs++;
	r->bits |= bits;
	r->seq = ++seq;
}

static const struct ntb_client_ops rec_ops = { .link_event = rec_link, .db_event = rec_db };
static const struct ntb_client_ops db_only_ops = { .db_event = rec_db };

static void test_events_to_clients(void **state)
{
	struct tcluster tc;
	struct fab_ntb *hw;
	struct ntb_drv *n;
	struct rec x = { 0 }, y = { 0 }, z = { 0 };

	tc_up(&tc, yaml);
	n = ntb_drv_of(tc_host(&tc, 0), 1);
	hw = ntb_drv_hw(n);
	assert_int_equal(ntb_drv_clients(n), 0);
	assert_int_equal(ntb_drv_register_client(n, &rec_ops, &x), 0);
	assert_int_equal(ntb_drv_register_client(n, &rec_ops, &y), 0);
	assert_int_equal(ntb_drv_register_client(n, &db_only_ops, &z), 0);
	assert_int_equal(ntb_drv_register_client(n, &rec_ops, &x), -EEXIST);
	assert_int_equal(ntb_drv_register_client(n, NULL, &x), -EINVAL);
	assert_int_equal(ntb_drv_clients(n), 3);

	/* The link goes down (the admin's NTB_LINK does this): everyone, in order. */
	ntb_set_link(hw, false);
	assert_int_equal(x.downs, 1);
	assert_int_equal(y.downs, 1);
	assert_true(x.seq < y.seq);
	assert_int_equal(z.seq, 0);         /* no link callback */
	ntb_set_link(hw, false);            /* no change, no event */
	assert_int_equal(x.downs, 1);
	ntb_set_link(hw, true);
	assert_int_equal(x.ups, 1);
	assert_int_equal(y.ups, 1);

	/* Doorbells arriving (PEER_DB): the unmasked bits. */
	assert_int_equal(ntb_db_ring(hw, 0x5), 0);
	assert_int_equal(x.bits, 0x5);
	assert_int_equal(y.bits, 0x5);
	assert_int_equal(z.bits, 0x5);
	hw->db_mask = 0x4;
	assert_int_equal(ntb_db_ring(hw, 0x4), 0);
	assert_int_equal(x.dbs, 1);         /* masked: latched, no interrupt */
	assert_int_equal(hw->db_pending, 0x5);
	assert_int_equal(ntb_db_ring(hw, 0x6), 0);
	assert_int_equal(x.dbs, 2);
	assert_int_equal(z.dbs, 2);

	/* Gone clients hear nothing. */
	assert_int_equal(ntb_drv_unregister_client(n, &rec_ops, &x), 0);
	assert_int_equal(ntb_drv_unregister_client(n, &rec_ops, &x), -ENOENT);
	assert_int_equal(ntb_drv_unregister_client(n, &db_only_ops, &x), -ENOENT);
	ntb_set_link(hw, false);
	assert_int_equal(x.downs, 1);
	assert_int_equal(y.downs, 2);
	assert_int_equal(ntb_drv_unregister_client(n, &rec_ops, &y), 0);
	assert_int_equal(ntb_drv_unregister_client(n, &db_only_ops, &z), 0);
	assert_int_equal(ntb_drv_clients(n), 0);
	ntb_set_link(hw, true);
	assert_int_equal(y.ups, 1);
	/* Another adapter's events are not ours. */
	assert_int_equal(ntb_drv_register_client(n, &rec_ops, &x), 0);
	ntb_set_link(tc_host(&tc, 0)->ntbs[0], false);
	assert_int_equal(x.downs, 1);
	tc_down(&tc);
}

/* A client that, on its event, drops itself and the next one and adds another. */
struct juggler {
	struct rec r;
	struct ntb_drv *n;
	struct rec *next, *added;
};

static void juggle_link(void *ctx, struct ntb_drv *ntb, bool up);
static const struct ntb_client_ops juggle_ops = { .link_event = juggle_link };

static void juggle_link(void *ctx, struct ntb_drv *ntb, bool up)
{
	struct juggler *j = ctx;

	rec_link(&j->r, ntb, up);
	assert_int_equal(ntb_drv_unregister_client(ntb, &juggle_ops, j), 0);
	assert_int_equal(ntb_drv_unregister_client(ntb, &rec_ops, j->next), 0);
	assert_int_equal(ntb_drv_register_client(ntb, &rec_ops, j->added), 0);
}

static void test_events_unregister_in_callback(void **state)
{
	struct tcluster tc;
	struct ntb_drv *n;
	struct rec before = { 0 }, next = { 0 }, added = { 0 };
	struct juggler j = { .next = &next, .added = &added };

	tc_up(&tc, yaml);
	n = ntb_drv_of(tc_host(&tc, 0), 1);
	j.n = n;
	assert_int_equal(ntb_drv_register_client(n, &rec_ops, &before), 0);
	assert_int_equal(ntb_drv_register_client(n, &juggle_ops, &j), 0);
	assert_int_equal(ntb_drv_register_client(n, &rec_ops, &next), 0);
	ntb_set_link(ntb_drv_hw(n), false);
	assert_int_equal(before.downs, 1);
	assert_int_equal(j.r.downs, 1);
	assert_int_equal(next.downs, 0);    /* dropped before its turn */
	assert_int_equal(added.downs, 0);   /* came during the delivery: the next one */
	assert_int_equal(ntb_drv_clients(n), 2);
	ntb_set_link(ntb_drv_hw(n), true);
	assert_int_equal(before.ups, 1);
	assert_int_equal(j.r.ups, 0);
	assert_int_equal(added.ups, 1);
	assert_int_equal(ntb_drv_unregister_client(n, &rec_ops, &before), 0);
	assert_int_equal(ntb_drv_unregister_client(n, &rec_ops, &added), 0);
	assert_int_equal(ntb_drv_clients(n), 0);
	tc_down(&tc);
}

/* ---------- the NTBs' IOMMU domain ---------- */

static void test_iommu_exposure(void **state)
{
	struct tcluster tc;
	struct fab_host *a, *b;
	struct ntb_mw m;
	int dom;

	tc_up(&tc, yaml);
	a = tc_host(&tc, 0);
	b = tc_host(&tc, 1);
	/* IOMMU off: nothing to do. */
	assert_int_equal(ntb_iommu_domain(a), 0);
	assert_int_equal(ntb_iommu_expose(a, 0x200000, 0x1000), 0);
	assert_int_equal(ntb_iommu_unexpose(a, 0x200000, 0x1000), 0);
	/* One domain, every NTB of b attached. */
	dom = ntb_iommu_domain(b);
	assert_true(dom > 0);
	assert_int_equal(ntb_iommu_domain(b), dom);
	assert_int_equal(iommu_domain_of(b->iommu, fab_func_bdf(b->ntbs[0]->fn)), (uint32_t)dom);

	/* a's CPU through a window into b's RAM: translated by b's IOMMU. */
	map_ok(ntb_drv_of(a, 0), 1, 0x200000, 0x1000, &m);
	resolve(a, m.bus);
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	/* Two services expose the same range: it stays until both are done. */
	assert_int_equal(ntb_iommu_expose(b, 0x200000, 0x1000), 0);
	assert_int_equal(ntb_iommu_expose(b, 0x200000, 0x1000), 0);
	resolve(a, m.bus + 0x10);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(R.tgt.host, 1);
	assert_int_equal(R.tgt.offset, 0x200010);
	assert_int_equal(ntb_iommu_unexpose(b, 0x200000, 0x1000), 0);
	resolve(a, m.bus + 0x10);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(ntb_iommu_unexpose(b, 0x200000, 0x1000), 0);
	resolve(a, m.bus + 0x10);
	assert_int_equal(R.status, FAB_IOMMU_FAULT);
	assert_int_equal(ntb_iommu_unexpose(b, 0x200000, 0x1000), -ENOENT);
	/* Overlapping another range: refused, the first one intact. */
	assert_int_equal(ntb_iommu_expose(b, 0x200000, 0x2000), 0);
	assert_int_equal(ntb_iommu_expose(b, 0x201000, 0x1000), -EEXIST);
	assert_int_equal(ntb_iommu_expose(b, 0x200000, 0), -EINVAL);
	resolve(a, m.bus + 0x10);
	assert_int_equal(R.status, FAB_OK);
	assert_int_equal(ntb_iommu_unexpose(b, 0x200000, 0x2000), 0);
	ntb_mw_unmap(ntb_drv_of(a, 0), &m);
	tc_down(&tc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_and_lookup),
		cmocka_unit_test(test_mw_arithmetic),
		cmocka_unit_test(test_mw_all_or_nothing),
		cmocka_unit_test(test_mw_unmap_only_own),
		cmocka_unit_test(test_admin_entries),
		cmocka_unit_test(test_rid_refcounts),
		cmocka_unit_test(test_events_to_clients),
		cmocka_unit_test(test_events_unregister_in_callback),
		cmocka_unit_test(test_iommu_exposure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
