// SPDX-License-Identifier: MIT
/*
 * The daemon's SISCI segment service: what libsisci calls.
 *
 * Owner side: segments of this host's RAM (host/segment.c) created, given
 * memory later if created empty (SEG_ATTACH: fresh RAM, or a BAR of one of
 * this host's devices), made available, mapped by their owner and removed; other daemons take and drop
 * references on them (PEER_SEG_LOOKUP / PEER_SEG_RELEASE) and fetch the
 * memfd behind them (PEER_MEMFD).
 *
 * Importer side: a connection to a segment on another host programs this
 * host's NTB look-up table so that a window of the NTB's BAR translates to
 * the segment, exactly as a SISCI driver does. Mapping it resolves the window
 * address from the CPU through the fabric (root complex, NTB, LUT, cable, the
 * owner's NTB and root complex), and hands the process the memory object the
 * route ends in. The process then loads and stores with no software in the
 * data path.
 *
 * Reference lifetime: a reference the owner keeps for an importer belongs to
 * the peer connection it arrived on. If that connection goes, both sides
 * drop everything it carried (the owner its references, the importer its LUT
 * entries, which then lead nowhere), so they never disagree for long.
 *
 * Disconnect events: when the owner process dies, the owner's daemon tells
 * every importer of its referenced segments (PEER_SEG_GONE over the peer
 * connection each reference came on; a local importer directly). The
 * importer closes the connection's windows and marks it gone; the orphaned
 * segment keeps its memory until the importer's process disconnects (its
 * mappings still point there), when the reference is released as usual. A
 * connection that becomes gone or lost adds 1 to its eventfd (SEG_EVENTS),
 * which the process polls for SISCI's disconnect callback.
 *
 * Every handler runs with the host lock held. Those that wait for a peer
 * (connect, map, disconnect) serve other peers meanwhile, which may change
 * the tables: they copy what they need and look entries up again afterwards.
 *
 * This file: the service's state, the owner side and the request dispatch.
 * The importer side, the services for other daemon services and connection
 * close are in h_segment_imp.c; the shared tables are in seg_priv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon.h"
#include "util/log.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "host/ntb_drv.h"
#include "host/segment.h"
#include "seg_priv.h"

_Static_assert(SEG_ID_AUTO == SMIO_SEGID_AUTO, "automatic id on the wire");
_Static_assert(SEG_F_EMPTY == SMIO_SEG_F_EMPTY, "empty flag on the wire");

/*
 * With the IOMMU on, requests arriving through an NTB carry the NTB's
 * requester ID and are translated: exported segments are identity-mapped in
 * the domain the NTB driver keeps for the host's NTBs (host/ntb_drv.h), so
 * the bus address a remote LUT points at is the segment's physical address.
 */
static int seg_expose(void *arg, uint64_t phys, uint64_t size)
{
	struct smd *d = arg;

	return ntb_iommu_expose(d->host, phys, size);
}

static void seg_unexpose(void *arg, uint64_t phys, uint64_t size)
{
	struct smd *d = arg;

	if (ntb_iommu_unexpose(d->host, phys, size))
		smio_warn("segment at 0x%llx was not mapped for the NTBs",
				(unsigned long long)phys);
}

/*
 * The SISCI service hears of its adapters' link changes and doorbells. A link
 * change re-checks every connection's path (h_segment_link.c).
 */
static void seg_link_event(void *ctx, struct ntb_drv *ntb, bool up)
{
	struct smd *d = ctx;

	d->segs->link_events++;
	smio_info("%s link %s", ntb_drv_hw(ntb)->fn->name, up ? "up" : "down");
	smd_seg_links_changed(d);
}

static void seg_db_event(void *ctx, struct ntb_drv *ntb, uint32_t bits)
{
	struct smd *d = ctx;

	(void)ntb;
	(void)bits;
	d->segs->db_events++;
}

static const struct ntb_client_ops seg_ntb_client = { .link_event = seg_link_event,
						      .db_event = seg_db_event };

static void seg_clients(struct smd *d, bool add)
{
	for (uint32_t i = 0; i < d->host->nntbs; i++) {
		struct ntb_drv *ntb = ntb_drv_of(d->host, i);

		if (!ntb)
			continue;
		if (add)
			ntb_drv_register_client(ntb, &seg_ntb_client, d);
		else
			ntb_drv_unregister_client(ntb, &seg_ntb_client, d);
	}
}

int smd_seg_init(struct smd *d)
{
	struct smd_segs *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	rc = seg_table_create(pci_host_physmem(d->pci), &s->tab);
	if (rc) {
		free(s);
		return rc;
	}
	seg_table_set_hooks(s->tab, &(struct seg_hooks){ .expose = seg_expose,
			    .unexpose = seg_unexpose, .conn = smd_seg_owner_hook, .arg = d });
	d->segs = s;
	seg_clients(d, true);
	return 0;
}

void smd_seg_fini(struct smd *d)
{
	struct smd_segs *s = d->segs;

	if (!s)
		return;
	seg_clients(d, false);
	for (unsigned i = 0; i < s->ncache; i++)
		close(s->cache[i].fd);
	seg_table_destroy(s->tab);
	smd_seg_owner_fini(s);
	free(s->imp);
	free(s);
	d->segs = NULL;
}

/* ---------- owner side ---------- */

static int h_seg_create(struct smd *d, struct smd_conn *c, const struct smio_seg_create *m,
		      struct smio_seg_info *o, uint32_t *outlen)
{
	const struct seg *sg;
	int rc = seg_create(d->segs->tab, c->cid, m->segid, m->size, m->flags, &sg);

	if (rc)
		return rc;
	*o = (struct smio_seg_info){ .segid = sg->id, .flags = sg->flags, .addr = sg->phys,
				     .size = sg->size };
	*outlen = sizeof(*o);
	return 0;
}

/*
 * Is [addr, addr + size) inside a memory BAR (one backed by device memory) of
 * a function of this host, as enumeration programmed it?
 */
bool smd_in_local_bar(struct smd *d, uint64_t addr, uint64_t size)
{
	for (uint32_t i = 0; i < d->host->nfuncs; i++) {
		const struct fab_func *fn = d->host->funcs[i];

		for (unsigned b = 0; fn && b < 6; b++) {
			const struct fab_bar *bar = &fn->bars[b];
			uint64_t base;

			if (!bar->present || bar->mem < 0 || !bar->size)
				continue;
			base = fab_func_bar_addr(fn, b);
			if (base && addr >= base && addr + size <= base + bar->size)
				return true;
		}
	}
	return false;
}

/*
 * SEG_ATTACH: memory for an empty segment of the caller's. A physical range
 * must be this host's device memory (a borrowed device's included) or RAM
 * the caller already owns as a segment: a process must not be able to export
 * arbitrary physical memory.
 * The expose hook maps it for the NTBs, a BAR too: traffic arriving through
 * an NTB crosses the root complex (and its IOMMU) unless a switch below it
 * routes it peer-to-peer.
 */
static int h_seg_attach(struct smd *d, struct smd_conn *c, const struct smio_seg_attach *m,
			struct smio_seg_info *o, uint32_t *outlen)
{
	enum seg_mem mem = SEG_MEM_RAM;
	const struct seg *sg;
	uint32_t lender;
	uint64_t laddr;
	int rc;

	/* A borrowed device's memory BAR too (its shadow's, as this host's CPU
	 * reaches it): mappings for devices then go to the lender's address by
	 * the P2P rules of Device Lending (h_device_brw.c), not through here. */
	if (m->kind == SMIO_SEG_ATTACH_PHYS)
		mem = smd_in_local_bar(d, m->addr, m->size) ||
		      smd_lend_shadow_mem(d, m->addr, m->size, &lender, &laddr) ?
		      SEG_MEM_IO : SEG_MEM_ALIAS;
	rc = seg_attach(d->segs->tab, c->cid, m->segid, mem, m->addr, m->size, &sg);
	if (rc)
		return rc;
	*o = (struct smio_seg_info){ .segid = sg->id, .flags = sg->flags & SMIO_SEG_FLAGS,
				     .addr = sg->phys, .size = sg->size };
	*outlen = sizeof(*o);
	return 0;
}

/* SEG_MAP_LOCAL of a segment on device memory: the BAR's object, found as the CPU reaches it. */
static int map_local_io(struct smd *d, const struct seg *sg, struct smio_map_reply *o,
			uint32_t *outlen, int *out_fd)
{
	struct fab_route *rt = malloc(sizeof(*rt));
	const struct fab_mem *mem;
	uint64_t size;
	int rc;

	if (!rt)
		return -ENOMEM;
	rc = fab_route_resolve(d->host, FAB_RID_CPU, sg->phys, sg->size, true, rt);
	if (!rc)
		rc = smd_seg_fab_status_errno(rt->status);
	if (!rc && (rt->tgt.kind != FAB_TGT_BAR || rt->tgt.host != d->host_id ||
		    rt->tgt.len < sg->size || rt->tgt.mem >= d->host->nmems))
		rc = -EIO;
	/* The object is mapped here as the route's target: check it exists. */
	if (!rc && !fab_target_map(d->host, &rt->tgt, &size))
		rc = -EIO;
	if (rc)
		goto out;
	mem = &d->host->mems[rt->tgt.mem];
	if (rt->tgt.offset > mem->size || sg->size > mem->size - rt->tgt.offset) {
		rc = -EIO;
		goto out;
	}
	*o = (struct smio_map_reply){ .host = d->host_id, .mem = rt->tgt.mem,
		.offset = rt->tgt.offset, .len = sg->size, .fd_size = mem->size,
		.status = FAB_OK };
	*outlen = sizeof(*o);
	*out_fd = mem->fd;
out:
	free(rt);
	return rc;
}

static int h_seg_map_local(struct smd *d, struct smd_conn *c, const struct smio_seg_id *m,
			 struct smio_map_reply *o, uint32_t *outlen, int *out_fd)
{
	const struct seg *sg = seg_lookup(d->segs->tab, m->segid);
	const struct fab_mem *ram = &d->host->mems[0];
	uint64_t off, contig;

	if (!sg || !sg->owner)
		return -ENOENT;
	if (sg->owner != c->cid)
		return -EPERM;
	if (sg->flags & SEG_F_EMPTY)
		return -ENXIO;
	if (sg->mem == SEG_MEM_IO)
		return map_local_io(d, sg, o, outlen, out_fd);
	/* Segments come from RAM (memory object 0) and never span its hole. */
	if (!ram->is_ram || !fab_ram_offset(d->host, sg->phys, &off, &contig) ||
	    contig < sg->size)
		return -EIO;
	*o = (struct smio_map_reply){ .host = d->host_id, .mem = 0, .offset = off,
		.len = sg->size, .fd_size = ram->size, .status = FAB_OK };
	*outlen = sizeof(*o);
	*out_fd = ram->fd;
	return 0;
}

static int peer_seg_lookup(struct smd *d, struct smd_conn *c, const struct smio_seg_id *m,
			   struct smio_peer_seg *o, uint32_t *outlen)
{
	const struct seg *sg;
	uint32_t ref;
	int rc = seg_ref_get(d->segs->tab, m->segid, c->cid, &ref, &sg);

	if (rc)
		return rc;
	*o = (struct smio_peer_seg){ .segid = sg->id, .ref = ref, .addr = sg->phys,
				     .size = sg->size };
	*outlen = sizeof(*o);
	return 0;
}

/*
 * PEER_SEG_WHERE: where a segment the asking daemon holds a reference on is
 * for devices. On a borrowed device's memory BAR (SEG_ATTACH of a shadow's
 * BAR), that device's lender and the bus address there, so that the
 * importer's device reaches it by Device Lending's P2P rules; else here.
 */
static int peer_seg_where(struct smd *d, struct smd_conn *c, const struct smio_peer_seg_ref *m,
			  struct smio_peer_seg_where *o, uint32_t *outlen)
{
	const struct seg *sg = seg_lookup(d->segs->tab, m->segid);
	uint32_t host = d->host_id, flags = 0;
	uint64_t addr;

	if (!sg || !seg_ref_held(d->segs->tab, m->segid, m->ref, c->cid))
		return -ENOENT;
	if (sg->flags & SEG_F_EMPTY)
		return -ENXIO;
	addr = sg->phys;
	if (sg->mem == SEG_MEM_IO && smd_lend_shadow_mem(d, sg->phys, sg->size, &host, &addr))
		flags = SMIO_SEG_WHERE_LENT;
	*o = (struct smio_peer_seg_where){ .host = host, .flags = flags, .addr = addr,
					   .size = sg->size };
	*outlen = sizeof(*o);
	return 0;
}

static int peer_memfd_serve(struct smd *d, const struct smio_peer_memfd *m,
			    struct smio_peer_memfd *o, uint32_t *outlen, int *out_fd)
{
	if (m->mem >= d->host->nmems)
		return -ENOENT;
	*o = (struct smio_peer_memfd){ .mem = m->mem, .size = d->host->mems[m->mem].size };
	*outlen = sizeof(*o);
	*out_fd = d->host->mems[m->mem].fd;
	return 0;
}

int smd_h_segment(struct smd *d, struct smd_conn *c, uint16_t type, const void *p,
		  void *out, uint32_t *outlen, int *out_fd)
{
	struct seg_table *tab;
	int rc;

	if (!d->segs)
		return -ENODEV;
	tab = d->segs->tab;
	switch (type) {
	case SMIO_SEG_CREATE:
		return h_seg_create(d, c, p, out, outlen);
	case SMIO_SEG_REMOVE: {
		const struct seg *sg = seg_lookup(tab, ((const struct smio_seg_id *)p)->segid);

		/* Not while an NTB's DMA engine moves its bytes. */
		if (sg && sg->owner == c->cid && sg->size && smd_dma_busy(d, sg->phys, sg->size))
			return -EBUSY;
		/* Nor while a multicast overlay lands in it (libsisci leaves first). */
		if (sg && sg->owner == c->cid && smd_mc_seg_joined(d, c, sg->id))
			return -EBUSY;
		rc = seg_remove(tab, c->cid, ((const struct smio_seg_id *)p)->segid);
		if (!rc)
			smd_seg_owner_forget(d, c->cid, ((const struct smio_seg_id *)p)->segid);
		return rc;
	}
	case SMIO_SEG_AVAILABLE: {
		const struct smio_seg_avail *m = p;

		return seg_set_available(tab, c->cid, m->segid, m->available);
	}
	case SMIO_SEG_MAP_LOCAL:
		return h_seg_map_local(d, c, p, out, outlen, out_fd);
	case SMIO_SEG_ATTACH:
		return h_seg_attach(d, c, p, out, outlen);
	case SMIO_SEG_EVENTS: {
		const struct smio_seg_conn_ref *m = p;

		if (m->flags & SMIO_SEG_REF_OWNER)
			return smd_h_seg_owner_events(d, c, m->conn, out_fd);
		return smd_h_seg_events(d, c, p, out_fd);
	}
	case SMIO_SEG_OWNER_EVENT:
		return smd_h_seg_owner_event(d, c, p, out, outlen);
	case SMIO_SEG_STATE:
		if (((const struct smio_seg_conn_ref *)p)->flags)
			return -EINVAL;
		return smd_h_seg_state(d, c, p, out, outlen);
	case SMIO_PEER_SEG_GONE: {
		const struct smio_peer_seg_ref *m = p;

		/* Only the owner sends it, on our connection to it. */
		if (!c->outgoing)
			return -EPROTO;
		smd_seg_gone(d, c->host, m->segid, m->ref);
		return 0;
	}
	case SMIO_PEER_SEG_LOOKUP:
		return peer_seg_lookup(d, c, p, out, outlen);
	case SMIO_PEER_SEG_RELEASE: {
		const struct smio_peer_seg_ref *m = p;

		/* Only the connection that took a reference can drop it. */
		return seg_ref_put(tab, m->segid, m->ref, c->cid);
	}
	case SMIO_SEG_CONN_P2P:
		return smd_h_seg_conn_p2p(d, c, p, out, outlen);
	case SMIO_PEER_SEG_WHERE:
		return peer_seg_where(d, c, p, out, outlen);
	case SMIO_PEER_MEMFD:
		return peer_memfd_serve(d, p, out, outlen, out_fd);
	default:
		return -EOPNOTSUPP;
	}
}
