// SPDX-License-Identifier: MIT
/*
 * The daemon's SmartIO device service: the cluster's device pool, borrowing
 * and device-side mappings (what SmartIO's driver does for SISCI programs).
 *
 * Fabric device IDs: fdid = lender node ID << 16 | BDF in the lender's
 * domain (SMIO_FDID). Every lendable endpoint (fab_func.lendable, bound to no
 * local driver) is in the pool.
 *
 * Lender side: borrows (struct lend) are references to one device, shared
 * (many) or exclusive (one, and only when nobody else holds it). A borrow
 * belongs to the connection it was made on: a borrower daemon's peer
 * connection, or a local process's connection when the borrower runs on the
 * lender itself. When that connection goes, the borrow and everything made
 * through it go too (a lease). Device-side mappings (struct dmap) map a window
 * of this host's NTB to the borrower's memory and hold a reference to the
 * device's requester ID there (the NTB driver, host/ntb_drv.h) and, with
 * the IOMMU on, map the window in the device's IOMMU domain; the device then
 * uses the window address (or, for memory on this host, the physical
 * address / identity IOVA).
 *
 * Device segments (struct dent at the lender, which keeps each device's
 * namespace of ids; struct bseg at a borrower that holds one in its RAM)
 * belong to the borrow that created them and go with it.
 *
 * Borrower side: a process's borrows (struct brw) and device mappings
 * (struct bmap). Only segments registered with SISCI can be mapped for a
 * device: a segment the process owns (DEV_MAP_LOCAL) or a connection it made
 * (DEV_MAP_REMOTE); both are pinned until unmapped.
 *
 * Every handler runs with the host lock held. Those that wait for a peer copy
 * what they need and look entries up again afterwards.
 *
 * This file: the service's state and the lender side (pool, borrows, BARs,
 * device-side mappings, device segments). The borrower side and connection
 * close are in h_device_brw.c; the shared tables are in dev_priv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "dev_priv.h"
#include "devices/ids.h"
#include "fabric/iommu.h"
#include "host/ntb_drv.h"
#include "util/log.h"

/* A fresh id, unique over all tables (0 and collisions skipped). */
uint32_t smd_devs_new_id(struct smd_devs *s)
{
	for (;;) {
		bool used = false;
		uint32_t id = ++s->next_id;

		if (!id)
			continue;
		for (unsigned i = 0; i < s->nlends && !used; i++)
			used = s->lends[i].ref == id;
		for (unsigned i = 0; i < s->ndmaps && !used; i++)
			used = s->dmaps[i].id == id;
		for (unsigned i = 0; i < s->nbrws && !used; i++)
			used = s->brws[i].handle == id;
		for (unsigned i = 0; i < s->nbmaps && !used; i++)
			used = s->bmaps[i].handle == id;
		if (!used)
			return id;
	}
}

int smd_dev_init(struct smd *d)
{
	d->devs_pool = calloc(1, sizeof(*d->devs_pool));
	return d->devs_pool ? 0 : -ENOMEM;
}

void smd_dev_fini(struct smd *d)
{
	struct smd_devs *s = d->devs_pool;

	if (!s)
		return;
	free(s->lends);
	free(s->dmaps);
	free(s->ddoms);
	free(s->bexps);
	free(s->brws);
	free(s->bmaps);
	free(s->dents);
	free(s->bsegs);
	free(s);
	d->devs_pool = NULL;
}

/* ---------- lender side ---------- */

/* A lendable endpoint of this host at bdf, or NULL. */
static struct fab_func *lendable_fn(struct smd *d, uint16_t bdf)
{
	struct fab_func *fn = fab_func_by_bdf(d->host, bdf);
	struct pci_dev *pdev = pci_get_dev(d->pci, bdf);

	if (!fn || fn->kind != FAB_FN_ENDPOINT || !fn->lendable || !pdev || !pdev->is_lendable)
		return NULL;
	return fn;
}

static void dev_info(struct smd *d, struct fab_func *fn, struct smio_dev_info *o)
{
	struct smd_devs *s = d->devs_pool;
	uint16_t bdf = fab_func_bdf(fn);
	struct pci_dev *pdev = pci_get_dev(d->pci, bdf);
	uint32_t ss = 0;

	memset(o, 0, sizeof(*o));
	o->node_id = d->host->t->node_id;
	o->host = d->host_id;
	o->bdf = bdf;
	o->fdid = SMIO_FDID(o->node_id, bdf);
	if (pdev) {
		o->vendor = pdev->vendor;
		o->device = pdev->device;
		o->class = pdev->class & 0xffffff;
		if (!pci_read_config(pdev, 0x2c, 4, &ss)) {
			o->ss_vendor = (uint16_t)ss;
			o->ss_device = (uint16_t)(ss >> 16);
		}
	}
	for (unsigned i = 0; i < SMIO_DEV_BARS; i++)
		if (fn->bars[i].present)
			o->bar_size[i] = fn->bars[i].size;
	for (unsigned i = 0; i < s->nlends; i++)
		if (s->lends[i].bdf == bdf) {
			o->borrowers++;
			o->exclusive |= s->lends[i].exclusive;
		}
	snprintf(o->name, sizeof(o->name), "%s", fn->name);
}

/* PEER_DEV_LIST (and our own part of DEV_LIST). */
int smd_devs_local_list(struct smd *d, struct smio_dev_list *o, uint32_t cap, uint32_t *outlen)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < d->host->nfuncs; i++) {
		struct fab_func *fn = d->host->funcs[i];

		if (!lendable_fn(d, fab_func_bdf(fn)))
			continue;
		if (n == SMIO_MAX_DEVS ||
		    sizeof(*o) + (n + 1) * sizeof(o->d[0]) > cap)
			break;
		dev_info(d, fn, &o->d[n++]);
	}
	o->n = n;
	o->pad = 0;
	*outlen = (uint32_t)(sizeof(*o) + n * sizeof(o->d[0]));
	return 0;
}

static struct lend *lend_find(struct smd_devs *s, uint32_t holder, uint16_t bdf, uint32_t ref)
{
	for (unsigned i = 0; i < s->nlends; i++)
		if (s->lends[i].ref == ref && s->lends[i].bdf == bdf &&
		    s->lends[i].holder == holder)
			return &s->lends[i];
	return NULL;
}

int smd_devs_lend_borrow(struct smd *d, uint32_t holder, uint16_t bdf, uint32_t flags,
			 uint32_t *ref)
{
	struct smd_devs *s = d->devs_pool;
	bool excl = flags & SMIO_DEV_F_EXCLUSIVE, guest = false;
	struct pci_dev *pdev;
	uint32_t user, cs;
	unsigned n = 0;
	int rc;

	if (!lendable_fn(d, bdf))
		return -ENODEV;
	/* Its exclusive borrow would refuse it too: the log says whose it is. */
	if (!smd_cz_shared_with(d, bdf, &user, &cs)) {
		smio_info("borrow of %02x:%02x.%x refused: shared with host %u through cZodiac",
			  FAB_BDF_BUS(bdf), FAB_BDF_DEV(bdf), FAB_BDF_FN(bdf), user);
		return -EBUSY;
	}
	for (unsigned i = 0; i < s->nlends; i++) {
		if (s->lends[i].bdf != bdf)
			continue;
		/* A device lent with Device Lending still shares its memory BARs. */
		if (s->lends[i].lease || s->lends[i].guest)
			guest = true;
		else if (s->lends[i].exclusive)
			return -EBUSY;
		n++;
	}
	if (excl && n)
		return -EBUSY;
	rc = RESERVE(s, lends);
	if (rc)
		return rc;
	if (!guest) {
		/* The borrower drives the device: memory decoding and bus mastering on. */
		pdev = pci_get_dev(d->pci, bdf);
		rc = pci_enable_device(pdev);
		if (rc)
			return rc;
		pci_set_master(pdev);
	}
	*ref = smd_devs_new_id(s);
	s->lends[s->nlends++] = (struct lend){ .ref = *ref, .holder = holder, .bdf = bdf,
					       .exclusive = excl, .guest = guest };
	return 0;
}

/*
 * Borrow ref of bdf is Device Lending's lease (h_lend.c): from now on SISCI
 * borrowers of the device are guests (memory BARs only). Marked after the
 * borrow, so that no wire flag can claim it.
 */
void smd_devs_lend_mark_lease(struct smd *d, uint32_t holder, uint16_t bdf, uint32_t ref)
{
	struct lend *l = lend_find(d->devs_pool, holder, bdf, ref);

	if (l)
		l->lease = true;
}

/* Undo one device-side mapping and take it out of the table. */
static void dmap_remove(struct smd *d, unsigned idx)
{
	struct smd_devs *s = d->devs_pool;
	struct dmap m = s->dmaps[idx];

	if (m.dom)
		iommu_unmap(d->host->iommu, m.dom, m.iova, m.iosize);
	if (m.ntb) {
		/* Each mapping holds its own reference to the device's requester ID. */
		ntb_mw_unmap(m.ntb, &m.mw);
		ntb_rid_put(m.ntb, m.bdf);
	}
	s->dmaps[idx] = s->dmaps[--s->ndmaps];
	fab_host_tables_changed(d->host);
}

/* The device's IOMMU domain, given one if it has none. */
static int dev_domain(struct smd *d, uint16_t bdf)
{
	struct smd_devs *s = d->devs_pool;
	struct fab_iommu *mmu = d->host->iommu;
	uint32_t dom = iommu_domain_of(mmu, bdf);
	int rc;

	if (dom)
		return (int)dom;
	rc = RESERVE(s, ddoms);
	if (rc)
		return rc;
	rc = iommu_domain_alloc(mmu);
	if (rc < 0)
		return rc;
	dom = (uint32_t)rc;
	rc = iommu_attach(mmu, bdf, dom);
	if (rc) {
		iommu_domain_free(mmu, dom);
		return rc;
	}
	s->ddoms[s->nddoms++] = (struct ddom){ .bdf = bdf, .dom = dom };
	return (int)dom;
}

/*
 * The NTB the device reaches dest_host through: any that is up (via 0), or
 * the one on the fabric of the asking host's adapter via - 1 (the path its
 * program chose: SCIMapLocalSegmentForDevice's adapter, or the adapter of the
 * connection it maps), so that a backup path shares no link with the primary.
 */
static struct ntb_drv *map_ntb(struct smd *d, uint32_t rhost, const struct smio_peer_dev_map *m)
{
	struct ntb_drv *n;

	if (!m->via)
		return ntb_drv_to(d->host, m->dest_host);
	n = ntb_drv_via(d->host, rhost, m->via - 1u);
	return n && !ntb_mw_reachable(n, m->dest_host) ? n : NULL;
}

int smd_devs_lend_map(struct smd *d, uint32_t holder, uint32_t rhost,
		      struct smio_peer_dev_map *m)
{
	struct smd_devs *s = d->devs_pool;
	struct dmap dm = { .holder = holder, .ref = m->ref, .bdf = m->bdf };
	const struct lend *l = lend_find(s, holder, m->bdf, m->ref);
	uint64_t io;
	int rc;

	if (!l)
		return -ENOENT;
	if (l->guest)
		return -EACCES;     /* the device's DMA is the lease's driver's */
	rc = RESERVE(s, dmaps);
	if (rc)
		return rc;
	if (m->dest_host == d->host_id) {
		io = m->dest_addr;          /* our own memory: its bus address */
	} else {
		struct ntb_drv *n = map_ntb(d, rhost, m);

		if (!n)
			return -EHOSTUNREACH;
		rc = ntb_mw_map(n, m->dest_host, m->dest_addr, m->size, &dm.mw);
		if (rc)
			return rc;
		/* The device's requests must be let into the NTB. */
		rc = ntb_rid_get(n, m->bdf);
		if (rc) {
			ntb_mw_unmap(n, &dm.mw);
			return rc;
		}
		dm.ntb = n;
		io = dm.mw.bus;
	}
	dm.id = smd_devs_new_id(s);
	s->dmaps[s->ndmaps++] = dm;
	if (iommu_enabled(d->host->iommu)) {
		/* Identity IOVA for the window (or our memory) in the device's domain. */
		rc = dev_domain(d, m->bdf);
		if (rc > 0) {
			uint32_t dom = (uint32_t)rc;

			rc = iommu_map(d->host->iommu, dom, io, io, m->size,
				       IOMMU_READ | IOMMU_WRITE);
			if (!rc) {
				s->dmaps[s->ndmaps - 1].dom = dom;
				s->dmaps[s->ndmaps - 1].iova = io;
				s->dmaps[s->ndmaps - 1].iosize = m->size;
			}
		}
		if (rc) {
			dmap_remove(d, s->ndmaps - 1);
			return rc;
		}
	}
	fab_host_tables_changed(d->host);
	m->map = dm.id;
	m->ioaddr = io;
	return 0;
}

int smd_devs_lend_unmap(struct smd *d, uint32_t holder, const struct smio_peer_dev_map *m)
{
	struct smd_devs *s = d->devs_pool;

	for (unsigned i = 0; i < s->ndmaps; i++)
		if (s->dmaps[i].id == m->map && s->dmaps[i].holder == holder &&
		    s->dmaps[i].ref == m->ref) {
			dmap_remove(d, i);
			return 0;
		}
	return -ENOENT;
}

/* Drop a borrow and every mapping made for it. */
void smd_devs_lend_drop(struct smd *d, struct lend *l)
{
	struct smd_devs *s = d->devs_pool;
	struct lend c = *l;

	for (unsigned i = 0; i < s->ndmaps;) {
		if (s->dmaps[i].holder == c.holder && s->dmaps[i].ref == c.ref)
			dmap_remove(d, i);
		else
			i++;
	}
	/* Its device segments: ours are freed (or linger while connected). */
	for (unsigned i = 0; i < s->ndents;) {
		struct dent e = s->dents[i];

		if (e.holder != c.holder || e.lref != c.ref) {
			i++;
			continue;
		}
		s->dents[i] = s->dents[--s->ndents];
		if (e.owned)
			smd_seg_dev_remove(d, e.holder, e.segid);
	}
	*l = s->lends[--s->nlends];
	/* The last borrow of the device gone: its BARs are no longer exposed. */
	for (unsigned i = 0; i < s->nlends; i++)
		if (s->lends[i].bdf == c.bdf)
			return;
	for (unsigned i = 0; i < s->nbexps;) {
		if (s->bexps[i].bdf == c.bdf) {
			ntb_iommu_unexpose(d->host, s->bexps[i].addr, s->bexps[i].size);
			s->bexps[i] = s->bexps[--s->nbexps];
		} else {
			i++;
		}
	}
}

int smd_devs_lend_return(struct smd *d, uint32_t holder, const struct smio_peer_dev_ref *m)
{
	struct lend *l = lend_find(d->devs_pool, holder, m->bdf, m->ref);

	if (!l)
		return -ENOENT;
	smd_devs_lend_drop(d, l);
	return 0;
}

int smd_devs_lend_release_excl(struct smd *d, uint32_t holder, const struct smio_peer_dev_ref *m)
{
	struct lend *l = lend_find(d->devs_pool, holder, m->bdf, m->ref);

	if (!l)
		return -ENOENT;
	l->exclusive = false;
	return 0;
}

int smd_devs_lend_bar(struct smd *d, uint32_t holder, struct smio_peer_dev_bar *m)
{
	const struct lend *l = lend_find(d->devs_pool, holder, m->bdf, m->ref);
	struct fab_func *fn;
	uint64_t addr;

	if (!l)
		return -ENOENT;
	fn = lendable_fn(d, m->bdf);
	if (!fn)
		return -ENODEV;
	if (m->bar >= SMIO_DEV_BARS || !fn->bars[m->bar].present)
		return -ENOENT;
	/*
	 * A guest of a lent device gets its memory, not its registers: a
	 * prefetchable BAR has no side effects on reads (PCI's own word for
	 * memory), the others are the lease's driver's alone.
	 */
	if (l->guest && !fn->bars[m->bar].prefetch)
		return -EACCES;
	addr = fab_func_bar_addr(fn, m->bar);
	if (!addr)
		return -ENXIO;      /* unassigned or decoding off */
	/* Whole pages only: a window cannot show part of one. */
	if (fn->bars[m->bar].size < PAGE || (addr & (PAGE - 1)))
		return -ENXIO;
	m->addr = addr;
	m->size = fn->bars[m->bar].size;
	/*
	 * With the IOMMU on, the borrower's requests arrive with the NTB's
	 * requester ID and are translated like DMA: expose the BAR to the NTBs
	 * (once per BAR, while the device is lent).
	 */
	if (iommu_enabled(d->host->iommu)) {
		struct smd_devs *s = d->devs_pool;
		int rc;

		for (unsigned i = 0; i < s->nbexps; i++)
			if (s->bexps[i].bdf == m->bdf && s->bexps[i].bar == m->bar &&
			    s->bexps[i].addr == addr && s->bexps[i].size == m->size)
				return 0;
		rc = RESERVE(s, bexps);
		if (rc)
			return rc;
		rc = ntb_iommu_expose(d->host, addr, m->size);
		if (rc)
			return rc;
		s->bexps[s->nbexps++] = (struct bexp){ .bdf = m->bdf, .bar = (uint8_t)m->bar,
						       .addr = addr, .size = m->size };
	}
	return 0;
}

/*
 * Room for size bytes (whole pages) in a memory (prefetchable) BAR of our
 * device bdf, from the top down so that the low addresses a program uses
 * through the BAR itself stay free: the bus address, or 0 when there is no
 * such BAR or no room. Taken ranges are the device segments placed there.
 * An NVMe controller's CMB is not such memory: its driver places queues in
 * it by the controller's rules (CMBLOC/CMBSZ, `--sq cmb`) and owns it.
 */
static uint64_t bar_alloc(struct smd *d, uint16_t bdf, uint64_t size)
{
	struct smd_devs *s = d->devs_pool;
	struct fab_func *fn = lendable_fn(d, bdf);
	struct pci_dev *pdev = pci_get_dev(d->pci, bdf);

	if (!pdev || (pdev->class & 0xffffff) == SMARTIO_PCI_CLASS_NVME)
		return 0;

	size = (size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	for (unsigned b = 0; fn && b < SMIO_DEV_BARS; b++) {
		uint64_t base = fab_func_bar_addr(fn, b), top, cand;
		bool moved = true;

		if (!fn->bars[b].present || !fn->bars[b].prefetch || !base ||
		    (base & (PAGE - 1)) || fn->bars[b].size < size)
			continue;
		top = base + fn->bars[b].size;
		cand = top - size;
		while (moved && cand >= base) {
			moved = false;
			for (unsigned i = 0; i < s->ndents; i++) {
				const struct dent *e = &s->dents[i];

				if (e->io && e->io < cand + size && cand < e->io + e->size) {
					if (e->io - base < size)
						return 0;   /* nothing below it: full */
					cand = e->io - size;
					moved = true;
				}
			}
		}
		if (!moved && cand >= base)
			return cand;
	}
	return 0;
}

/*
 * A device segment for borrow m->ref of ours, asked by a process of host
 * rhost. SMIO_DEV_PLACE_LENDER: we create the memory, owned by the borrow's
 * holder; _BORROWER: m->segid names the segment in rhost's RAM.
 */
int smd_devs_lend_seg_create(struct smd *d, uint32_t holder, uint32_t rhost,
			     struct smio_peer_dev_seg *m)
{
	struct smd_devs *s = d->devs_pool;
	struct dent e = { .bdf = m->bdf, .devsegid = m->devsegid, .memtype = m->memtype,
			  .holder = holder, .lref = m->ref, .chost = rhost, .ccid = m->cid,
			  .host = rhost, .segid = m->segid, .size = m->size };
	const struct lend *l = lend_find(s, holder, m->bdf, m->ref);
	int rc;

	if (!l)
		return -ENOENT;
	if (l->guest)
		return -EACCES;     /* memory for the device to use: only its driver's */
	if (!m->size)
		return -EINVAL;
	for (unsigned i = 0; i < s->ndents; i++)
		if (s->dents[i].bdf == m->bdf && s->dents[i].devsegid == m->devsegid)
			return -EEXIST;
	rc = RESERVE(s, dents);
	if (rc)
		return rc;
	if (m->place == SMIO_DEV_PLACE_DEVICE) {
		/* The device's own memory if it has room, else the lender's RAM. */
		e.io = bar_alloc(d, m->bdf, m->size);
		m->place = e.io ? SMIO_DEV_PLACE_DEVICE : SMIO_DEV_PLACE_LENDER;
	}
	if (m->place == SMIO_DEV_PLACE_LENDER || m->place == SMIO_DEV_PLACE_DEVICE) {
		rc = smd_seg_dev_create(d, holder, e.io, m->size, &e.segid, &e.size);
		if (rc)
			return rc;
		e.host = d->host_id;
		e.owned = true;
	} else if (m->place != SMIO_DEV_PLACE_BORROWER) {
		return -EINVAL;
	}
	s->dents[s->ndents++] = e;
	m->host = e.host;
	m->segid = e.segid;
	m->size = e.size;
	return 0;
}

/* Find device segment m->devsegid for a borrower of the device (private: its creator). */
int smd_devs_lend_seg_lookup(struct smd *d, uint32_t holder, uint32_t rhost,
			     struct smio_peer_dev_seg *m)
{
	struct smd_devs *s = d->devs_pool;

	if (!lend_find(s, holder, m->bdf, m->ref))
		return -ENOENT;
	for (unsigned i = 0; i < s->ndents; i++) {
		const struct dent *e = &s->dents[i];

		if (e->bdf != m->bdf || e->devsegid != m->devsegid)
			continue;
		if (e->memtype != m->memtype)
			return -ENOENT;
		/* Nobody else even learns that a private one exists. */
		if (e->memtype == SMIO_DEV_MEMTYPE_PRIVATE &&
		    (e->chost != rhost || e->ccid != m->cid))
			return -ENOENT;
		m->place = e->io ? SMIO_DEV_PLACE_DEVICE : e->owned ? SMIO_DEV_PLACE_LENDER :
			   SMIO_DEV_PLACE_BORROWER;
		m->host = e->host;
		m->segid = e->segid;
		m->size = e->size;
		return 0;
	}
	return -ENOENT;
}
