// SPDX-License-Identifier: MIT
/*
 * Route resolution on one host: the upstream walk from the requester
 * (shortest-path peer-to-peer turns inside switches unless ACS redirects),
 * the root complex (IOMMU, host address map), the downstream walk to the
 * completer, and the NTB look-up-table translation that hands the request to
 * another host. Plus the per-host route cache.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "czodiac_route.h"
#include "iommu.h"
#include "mcast.h"
#include "ntb.h"
#include "route.h"

struct walk {
	struct fab_host *h;
	struct fab_route *r;
	struct fab_forward *fwd;
	const struct fab_step *in;
	struct fab_func *req;      /* requester function on this host */
	uint16_t rid;
	uint64_t limit;            /* contiguous bytes still valid from the address */
};

static void hop(struct walk *w, uint8_t kind, const struct fab_func *fn, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void hop(struct walk *w, uint8_t kind, const struct fab_func *fn, const char *fmt, ...)
{
	struct fab_hop hp = { .kind = kind, .host = (uint16_t)w->h->id };
	va_list ap;

	if (fn) {
		hp.bdf = fab_func_bdf(fn);
		hp.latency_ns = fn->latency_ns;
		if (kind == FAB_HOP_LINK) {
			hp.gen = fn->link.gen;
			hp.width = fn->link.width;
			hp.latency_ns = 0;
		}
	}
	va_start(ap, fmt);
	vsnprintf(hp.name, sizeof(hp.name), fmt, ap);
	va_end(ap);
	fab_route_push(w->r, &hp);
}

static int fail(struct walk *w, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct walk *w, int status, const char *fmt, ...)
{
	va_list ap;

	w->r->status = status;
	va_start(ap, fmt);
	vsnprintf(w->r->reason, sizeof(w->r->reason), fmt, ap);
	va_end(ap);
	w->r->tgt.kind = FAB_TGT_NONE;
	return 0;
}

static inline uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool in_window(const struct fab_window *win, uint64_t a)
{
	return win->base <= win->limit && a >= win->base && a <= win->limit;
}

/* Does a bridge forward this address downstream? Also returns bytes to window end. */
static bool bridge_claims(const struct fab_func *br, uint64_t a, uint64_t *left)
{
	struct fab_window mem, pref;

	fab_bridge_windows(br, &mem, &pref);
	if (in_window(&mem, a)) {
		*left = mem.limit - a + 1;
		return true;
	}
	if (in_window(&pref, a)) {
		*left = pref.limit - a + 1;
		return true;
	}
	return false;
}

static bool acs_redirects(const struct fab_func *port)
{
	uint16_t off = fab_cfg_find_ecap(&port->cfg, PCI_EXT_CAP_ID_ACS);

	return off && (fab_cfg_get16(&port->cfg, off + PCI_ACS_CTRL) & PCI_ACS_RR);
}

static int hit_bar(struct walk *w, struct fab_func *fn, unsigned bar, uint64_t a);

static bool is_bridge(const struct fab_func *fn)
{
	return fn->kind == FAB_FN_ROOTPORT || fn->kind == FAB_FN_SW_UP ||
	       fn->kind == FAB_FN_SW_DOWN;
}

/* The completer below a port: endpoints decode BARs, switches decode their ports. */
static int decode_down(struct walk *w, struct fab_func *port, uint64_t a, unsigned depth)
{
	if (depth > 2 * TOPO_MAX_DEPTH + 2)
		return fail(w, FAB_UR, "decode loop below %s", port->name);
	for (uint32_t i = 0; i < port->nchildren; i++) {
		struct fab_func *c = port->children[i];
		uint64_t left;

		if (is_bridge(c)) {
			if (c->kind == FAB_FN_SW_UP && !bridge_claims(c, a, &left))
				continue;
			if (c->kind == FAB_FN_SW_UP) {
				hop(w, FAB_HOP_LINK, c, "link to %s", c->name);
				hop(w, FAB_HOP_SWITCH, c, "%s (%s)", c->name, c->model);
				return decode_down(w, c, a, depth + 1);
			}
			/* A downstream port of the switch we are in. */
			if (!bridge_claims(c, a, &left))
				continue;
			w->limit = min64(w->limit, left);
			return decode_down(w, c, a, depth + 1);
		}
		if (!fab_func_mem_enabled(c))
			continue;
		for (unsigned b = 0; b < 6; b++) {
			uint64_t base = fab_func_bar_addr(c, b);

			if (!c->bars[b].present || !base || a < base ||
			    a - base >= c->bars[b].size)
				continue;
			hop(w, FAB_HOP_LINK, c, "link to %s", c->name);
			return hit_bar(w, c, b, a);
		}
	}
	return fail(w, FAB_UR, "unsupported request: no function below %s decodes 0x%" PRIx64,
		    port->name, a);
}

/*
 * A LUT entry into the cluster switch's multicast range: the walk ends at the
 * switch with a FAB_TGT_MCAST target, which mcast.c fans out. Only posted
 * writes may go there (PCIe: a non-posted request to a multicast address is
 * an unsupported request).
 */
static int to_multicast(struct walk *w, struct fab_func *fn, uint64_t a, uint64_t len)
{
	struct fab_ntb *ntb = fn->ntb;
	const struct topo_cswitch *s;
	struct fab_target *t = &w->r->tgt;
	struct fab_hop hp = { .kind = FAB_HOP_CABLE, .gen = ntb->t->cable.gen,
			      .width = ntb->t->cable.width, .host = (uint16_t)w->h->id };
	uint64_t off;
	uint32_t g;

	if (!ntb->nmc)
		return fail(w, FAB_UR, "%s: its cable's switch has no multicast groups", fn->name);
	s = &w->h->topo->cswitches[ntb->t->peer_cswitch];
	if (fab_mc_group_of(s, a, &g, &off))
		return fail(w, FAB_UR, "%s: 0x%" PRIx64 " is outside %s's multicast range",
			    fn->name, a, s->name);
	if (!w->in->write)
		return fail(w, FAB_UR, "read of multicast address 0x%" PRIx64 " (group %u): "
			    "multicast carries posted writes only", a, g);
	snprintf(hp.name, sizeof(hp.name), "%.16s.%.16s cable", w->h->t->name, ntb->t->name);
	fab_route_push(w->r, &hp);
	hp = (struct fab_hop){ .kind = FAB_HOP_CSWITCH, .latency_ns = s->latency_ns,
			       .host = 0xffff };
	snprintf(hp.name, sizeof(hp.name), "%.16s multicast group %u", s->name, g);
	fab_route_push(w->r, &hp);
	t->kind = FAB_TGT_MCAST;
	t->host = w->h->id;
	t->mem = ntb->index;
	t->addr = a;
	t->offset = off;
	t->len = min64(len, s->mc_group_size - off);
	w->r->status = FAB_OK;
	return 0;
}

/* The hop into a cZodiac switch, and the step that continues on host `dest`. */
static int cz_forward(struct walk *w, uint32_t ntb_index, uint32_t dest, uint8_t cz,
		      uint16_t rid, uint64_t a, uint64_t len)
{
	int di = topo_host_index(w->h->topo, dest);
	uint32_t dst_ntb;

	if (w->r->ntb_hops >= FAB_MAX_NTB_HOPS)
		return fail(w, FAB_HOP_LIMIT, "more than %d NTB hops", FAB_MAX_NTB_HOPS);
	if (di < 0 || fab_cable_hops(w->h->topo, w->h->index, ntb_index, (uint32_t)di, &dst_ntb,
				     w->r))
		return fail(w, FAB_UR, "IOPort: host %u not reachable over the switch", dest);
	w->r->ntb_hops++;
	w->fwd->forward = true;
	w->fwd->next = (struct fab_step){
		.host = dest, .from_ntb = true, .ntb_index = dst_ntb, .cz = cz, .rid = rid,
		.write = w->in->write, .addr = a, .len = len,
	};
	return 0;
}

/*
 * A USER's request into its port on a czodiac switch: the IOPort's MMIO
 * table (not a look-up table) says which function's BAR it is, in the
 * OWNER's space; the request continues there with the function's OID.
 */
static int cz_user_request(struct walk *w, struct fab_func *fn, uint64_t a)
{
	struct fab_ntb *ntb = fn->ntb;
	uint32_t cs = ntb->t->peer_cswitch, owner = 0;
	uint64_t oaddr = 0, left = 0;
	uint16_t oid = 0;

	if (!ntb->link_up)
		return fail(w, FAB_LINK_DOWN, "%s: link down (writes dropped, reads return all-ones)",
			    fn->name);
	if (!w->h->world || fab_cz_user_mmio(w->h->world, cs, w->h->id, a, &owner, &oid, &oaddr,
					     &left))
		return fail(w, FAB_UR, "%s: no function's UBAR in %s's IOPort MMIO tables holds "
			    "0x%" PRIx64, fn->name, w->h->topo->cswitches[cs].name, a);
	hop(w, FAB_HOP_NTB, fn, "%.10s IOPort ->%02x:%02x.%x", fn->name, FAB_BDF_BUS(oid),
	    FAB_BDF_DEV(oid), FAB_BDF_FN(oid));
	return cz_forward(w, ntb->index, owner, FAB_CZ_TO_OWNER, oid, oaddr, min64(w->limit, left));
}

/*
 * A request of a function shared through a czodiac switch (its OID in an
 * IOPort's RID table): all of it goes to its USER (the paper's RAM 3 gives
 * the USER's port), with the UID as requester and the address unchanged
 * (the USER's own, from its DMA descriptors and MSI-X table).
 */
static int cz_device_request(struct walk *w, uint32_t cs, uint16_t uid, uint32_t user,
			     uint64_t a)
{
	int port = fab_cz_host_port(w->h, cs);

	if (port < 0)
		return fail(w, FAB_UR, "host %u has no port on %s", w->h->id,
			    w->h->topo->cswitches[cs].name);
	if (!w->h->ntbs[port]->link_up)
		return fail(w, FAB_LINK_DOWN, "%s: link down (writes dropped, reads return all-ones)",
			    w->h->ntbs[port]->fn->name);
	hop(w, FAB_HOP_NTB, w->h->ntbs[port]->fn, "IOPort RID %02x:%02x.%x->%02x:%02x.%x",
	    FAB_BDF_BUS(w->rid), FAB_BDF_DEV(w->rid), FAB_BDF_FN(w->rid), FAB_BDF_BUS(uid),
	    FAB_BDF_DEV(uid), FAB_BDF_FN(uid));
	/*
	 * Contiguous at most as far as a step may reach (a daemon's PEER_STEP
	 * carries up to 2^40 bytes; a cached walk asks for the rest of the space).
	 */
	return cz_forward(w, (uint32_t)port, user, FAB_CZ_TO_USER, uid, a,
			  min64(w->limit, 1ull << 40));
}

static int hit_ntb_window(struct walk *w, struct fab_func *fn, uint64_t a, uint64_t base)
{
	struct fab_ntb *ntb = fn->ntb;
	/* The hardware translation: window index and offset of the BAR2 offset. */
	uint32_t idx = (uint32_t)((a - base) / ntb->win_size);
	const struct ntb_lut_entry *e = &ntb->lut[idx];
	uint64_t off_in_win = (a - base) - (uint64_t)idx * ntb->win_size;
	/* An entry holds only the address bits above the window size. */
	uint64_t dest_base = e->dest_addr & ~(ntb->win_size - 1);
	struct fab_hop note = { .kind = FAB_HOP_NTB, .host = (uint16_t)w->h->id,
				.bdf = fab_func_bdf(fn), .latency_ns = fn->latency_ns };
	uint32_t dst_ntb;
	int di, rc;

	if (ntb->t->peer_kind == TOPO_PEER_CSWITCH &&
	    w->h->topo->cswitches[ntb->t->peer_cswitch].czodiac)
		return cz_user_request(w, fn, a);
	if (e->valid && e->dest_host == NTB_DEST_MCAST)
		snprintf(note.name, sizeof(note.name), "%.12s LUT[%u]->multicast", fn->name, idx);
	else if (e->valid)
		snprintf(note.name, sizeof(note.name), "%.12s LUT[%u]->host %u", fn->name, idx,
			 e->dest_host);
	else
		snprintf(note.name, sizeof(note.name), "%.12s LUT[%u]", fn->name, idx);
	fab_route_push(w->r, &note);
	if (!e->valid)
		return fail(w, FAB_UR, "%s: look-up-table entry %u is not programmed", fn->name, idx);
	if (!ntb_rid_allowed(ntb, w->rid))
		return fail(w, FAB_NTB_REJECT, "%s: requester %02x:%02x.%x is not in its requester-ID table",
			    fn->name, FAB_BDF_BUS(w->rid), FAB_BDF_DEV(w->rid), FAB_BDF_FN(w->rid));
	if (!ntb->link_up)
		return fail(w, FAB_LINK_DOWN, "%s: link down (writes dropped, reads return all-ones)",
			    fn->name);
	if (w->r->ntb_hops >= FAB_MAX_NTB_HOPS)
		return fail(w, FAB_HOP_LIMIT, "more than %d NTB hops (loop in the look-up tables?)",
			    FAB_MAX_NTB_HOPS);
	if (e->dest_host == NTB_DEST_MCAST)
		return to_multicast(w, fn, dest_base + off_in_win,
				    min64(w->limit, ntb->win_size - off_in_win));
	di = topo_host_index(w->h->topo, e->dest_host);
	if (di < 0)
		return fail(w, FAB_UR, "%s: LUT names unknown host %u", fn->name, e->dest_host);
	rc = fab_cable_hops(w->h->topo, w->h->index, ntb->index, (uint32_t)di, &dst_ntb, w->r);
	if (rc)
		return fail(w, FAB_UR, "%s: host %u not reachable over this adapter",
			    fn->name, e->dest_host);
	w->r->ntb_hops++;
	w->fwd->forward = true;
	w->fwd->next = (struct fab_step){
		.host = e->dest_host, .from_ntb = true, .ntb_index = dst_ntb,
		.write = w->in->write, .addr = dest_base + off_in_win,
		.len = min64(w->limit, ntb->win_size - off_in_win),
	};
	return 0;
}

static int hit_bar(struct walk *w, struct fab_func *fn, unsigned bar, uint64_t a)
{
	uint64_t base = fab_func_bar_addr(fn, bar);
	struct fab_target *t = &w->r->tgt;

	if (fn->kind == FAB_FN_NTB && bar == NTB_BAR_LUT)
		return hit_ntb_window(w, fn, a, base);
	hop(w, FAB_HOP_DEVICE, fn, "%s BAR%u", fn->name, bar);
	if (fn->bars[bar].mem < 0)
		return fail(w, FAB_UR, "%s BAR%u has no backing memory", fn->name, bar);
	t->kind = FAB_TGT_BAR;
	t->bar = (uint8_t)bar;
	t->bdf = fab_func_bdf(fn);
	t->host = w->h->id;
	t->mem = (uint32_t)fn->bars[bar].mem;
	t->addr = a;
	t->offset = a - base;
	t->len = min64(w->limit, fn->bars[bar].size - (a - base));
	w->r->status = FAB_OK;
	return 0;
}

/* At the root complex: translate (IOMMU), then memory or a root port. */
static int at_root(struct walk *w, uint64_t a, bool from_device)
{
	struct fab_host *h = w->h;
	uint64_t pa = a, off, contig;

	hop(w, FAB_HOP_ROOT, h->rc, "root complex");
	if (fab_msi_addr(a, 1)) {
		struct fab_target *t = &w->r->tgt;

		/* Interrupt messages bypass DMA remapping; only writes make sense. */
		if (!w->in->write)
			return fail(w, FAB_UR, "read from the MSI window 0x%" PRIx64, a);
		t->kind = FAB_TGT_MSI;
		t->host = h->id;
		t->addr = a;
		t->len = min64(w->limit, FAB_MSI_BASE + FAB_MSI_SIZE - a);
		w->r->status = FAB_OK;
		return 0;
	}
	if (from_device && iommu_enabled(h->iommu)) {
		enum iommu_fault_reason why = 0;

		if (iommu_translate(h->iommu, w->rid, a, w->in->write, &pa, &contig, &why))
			return fail(w, FAB_IOMMU_FAULT, "IOMMU fault: %s (requester %02x:%02x.%x, "
				    "address 0x%" PRIx64 ")", iommu_fault_reason_str(why),
				    FAB_BDF_BUS(w->rid), FAB_BDF_DEV(w->rid), FAB_BDF_FN(w->rid), a);
		w->limit = min64(w->limit, contig);
		hop(w, FAB_HOP_IOMMU, NULL, "IOMMU 0x%" PRIx64 "->0x%" PRIx64, a, pa);
	}
	if (fab_ram_offset(h, pa, &off, &contig)) {
		struct fab_target *t = &w->r->tgt;

		hop(w, FAB_HOP_MEMORY, NULL, "host %u RAM", h->id);
		t->kind = FAB_TGT_RAM;
		t->host = h->id;
		t->mem = 0;
		t->addr = pa;
		t->offset = off;
		t->len = min64(w->limit, contig);
		w->r->status = FAB_OK;
		return 0;
	}
	for (uint32_t i = 0; i < h->nfuncs; i++) {
		struct fab_func *rp = h->funcs[i];
		uint64_t left;

		if (rp->kind != FAB_FN_ROOTPORT || !bridge_claims(rp, pa, &left))
			continue;
		if (from_device && !h->t->rc_p2p)
			return fail(w, FAB_UR, "root complex does not forward peer-to-peer "
				    "between root ports");
		w->limit = min64(w->limit, left);
		hop(w, FAB_HOP_SWITCH, rp, "%s", rp->name);
		return decode_down(w, rp, pa, 0);
	}
	return fail(w, FAB_UR, "unsupported request: nothing decodes 0x%" PRIx64 " on host %u",
		    pa, h->id);
}

/* Walk up from the requester, turning peer-to-peer inside a switch when allowed. */
static int walk_up(struct walk *w, uint64_t a)
{
	struct fab_func *cur = w->req;

	/*
	 * An NTB adapter's own DMA engine reaches the adapter's look-up-table
	 * window inside the chip: the request never goes upstream, so no root
	 * complex or IOMMU sees it (the PXH830's engine sits in its PEX switch).
	 */
	if (cur->kind == FAB_FN_NTB && cur->bars[NTB_BAR_LUT].present) {
		uint64_t base = fab_func_bar_addr(cur, NTB_BAR_LUT);

		if (base && a >= base && a - base < cur->bars[NTB_BAR_LUT].size)
			return hit_bar(w, cur, NTB_BAR_LUT, a);
	}
	for (unsigned depth = 0; depth <= 2 * TOPO_MAX_DEPTH + 2; depth++) {
		struct fab_func *port = cur->parent;
		uint64_t left;

		if (!port)
			return at_root(w, a, true);
		hop(w, FAB_HOP_LINK, cur, "link from %s", cur->name);
		if (port->kind == FAB_FN_ROOTPORT) {
			hop(w, FAB_HOP_SWITCH, port, "%s", port->name);
			return at_root(w, a, true);
		}
		if (port->kind != FAB_FN_SW_DOWN || !port->parent)
			return fail(w, FAB_UR, "broken tree above %s", cur->name);
		/* Entered a switch through downstream port `port`. */
		if (!acs_redirects(port)) {
			struct fab_func *up = port->parent;

			for (uint32_t i = 0; i < up->nchildren; i++) {
				struct fab_func *dp = up->children[i];

				if (dp == port || !bridge_claims(dp, a, &left))
					continue;
				hop(w, FAB_HOP_SWITCH, up, "%s (%s) peer-to-peer", up->name, up->model);
				w->limit = min64(w->limit, left);
				return decode_down(w, dp, a, 0);
			}
		}
		hop(w, FAB_HOP_SWITCH, port->parent, "%s (%s)%s", port->parent->name,
		    port->parent->model, acs_redirects(port) ? " ACS redirect" : "");
		cur = port->parent;
	}
	return fail(w, FAB_UR, "tree too deep");
}

/* A multicast write arriving at a member NTB: its overlay says where it lands. */
static int from_multicast(struct walk *w, struct fab_ntb *ntb, uint64_t a)
{
	uint64_t local, left;
	uint32_t g = 0;
	int rc;

	if (!w->in->write)
		return fail(w, FAB_UR, "read of multicast address 0x%" PRIx64, a);
	rc = fab_mc_overlay(w->h, ntb->index, a, &local, &left, &g);
	if (rc)
		return fail(w, FAB_UR, "%s: no multicast overlay for 0x%" PRIx64 " (group %u): %s",
			    ntb->fn->name, a, g, rc == -EFAULT ? "beyond the overlay's size"
								: "not subscribed");
	w->limit = min64(w->limit, left);
	hop(w, FAB_HOP_NTB, ntb->fn, "%.12s overlay g%u->0x%" PRIx64, ntb->fn->name, g, local);
	return walk_up(w, local);
}

int fab_route_step_local(struct fab_host *h, const struct fab_step *in, struct fab_route *r,
			 struct fab_forward *fwd)
{
	struct walk w = { .h = h, .r = r, .fwd = fwd, .in = in, .limit = in->len };

	fwd->forward = false;
	r->status = FAB_OK;
	if (!in->len || in->addr + in->len < in->addr)
		return fail(&w, FAB_BAD_REQUEST, "empty or wrapping address range");
	if (in->from_ntb) {
		struct fab_ntb *ntb;

		if (in->ntb_index >= h->nntbs)
			return fail(&w, FAB_BAD_REQUEST, "host %u has no NTB %u", h->id, in->ntb_index);
		ntb = h->ntbs[in->ntb_index];
		w.req = ntb->fn;
		/* Through an IOPort the requester is the remapped one (the UID). */
		w.rid = in->cz == FAB_CZ_TO_USER ? in->rid : fab_func_bdf(ntb->fn);
		hop(&w, FAB_HOP_NTB, ntb->fn, "%s", ntb->fn->name);
		if (!ntb->link_up)
			return fail(&w, FAB_LINK_DOWN, "%s: link down (writes dropped, reads return "
				    "all-ones)", ntb->fn->name);
		/* The IOPort is where the OWNER's device port is: decode from the root down. */
		if (in->cz == FAB_CZ_TO_OWNER)
			return at_root(&w, in->addr, false);
		if (in->mcast)
			return from_multicast(&w, ntb, in->addr);
		return walk_up(&w, in->addr);
	}
	w.rid = in->rid;
	w.req = fab_func_by_bdf(h, in->rid);
	if (!w.req)
		return fail(&w, FAB_BAD_REQUEST, "no function at %02x:%02x.%x on host %u",
			    FAB_BDF_BUS(in->rid), FAB_BDF_DEV(in->rid), FAB_BDF_FN(in->rid), h->id);
	if (w.req == h->rc) {
		/* The CPU issues through the root complex: its latency is the root hop's. */
		hop(&w, FAB_HOP_DEVICE, NULL, "CPU");
		return at_root(&w, in->addr, false);
	}
	if (w.req->kind != FAB_FN_ENDPOINT && w.req->kind != FAB_FN_NTB)
		return fail(&w, FAB_BAD_REQUEST, "%s is a bridge, not a requester", w.req->name);
	hop(&w, FAB_HOP_DEVICE, w.req, "%s", w.req->name);
	if (h->world && h->world->cz && w.req->kind == FAB_FN_ENDPOINT) {
		uint32_t cs, user;
		uint16_t uid;

		if (!fab_cz_device(h->world, h->id, in->rid, &cs, &uid, &user))
			return cz_device_request(&w, cs, uid, user, in->addr);
	}
	return walk_up(&w, in->addr);
}

const char *fab_status_str(int status)
{
	static const char *const s[] = {
		[FAB_OK] = "ok", [FAB_UR] = "unsupported request",
		[FAB_IOMMU_FAULT] = "IOMMU fault", [FAB_LINK_DOWN] = "link down",
		[FAB_NTB_REJECT] = "NTB requester rejected", [FAB_HOP_LIMIT] = "hop limit",
		[FAB_HOST_DOWN] = "host down", [FAB_BAD_REQUEST] = "bad request",
	};

	if (status < 0 || (size_t)status >= sizeof(s) / sizeof(s[0]) || !s[status])
		return "unknown";
	return s[status];
}

const char *fab_hop_kind_str(int kind)
{
	static const char *const s[] = {
		[FAB_HOP_DEVICE] = "device", [FAB_HOP_LINK] = "link", [FAB_HOP_SWITCH] = "switch",
		[FAB_HOP_ROOT] = "root", [FAB_HOP_IOMMU] = "iommu", [FAB_HOP_NTB] = "ntb",
		[FAB_HOP_CABLE] = "cable", [FAB_HOP_CSWITCH] = "cluster-switch",
		[FAB_HOP_MEMORY] = "memory",
	};

	if (kind < 0 || (size_t)kind >= sizeof(s) / sizeof(s[0]) || !s[kind])
		return "unknown";
	return s[kind];
}
