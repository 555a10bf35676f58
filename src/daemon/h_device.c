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
 * through it go too (a lease). Device-side mappings (struct dmap) program this
 * host's NTB look-up table so that a window leads to the borrower's memory,
 * put the device's requester ID in that NTB's requester-ID table and, with
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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"

#define PAGE          SMIO_SEG_PAGE

/* Lender: one borrow of one of our devices. */
struct lend {
	uint32_t ref;             /* never 0 */
	uint32_t holder;          /* connection id it belongs to */
	uint16_t bdf;
	bool exclusive;
};

/* Lender: a window our NTB (or IOMMU) opens for a borrowed device. */
struct dmap {
	uint32_t id;              /* never 0 */
	uint32_t holder, ref;     /* the borrow it was made for */
	uint16_t bdf;
	bool rid_added;           /* we put the device's requester ID in the NTB's table */
	uint32_t ntb, lut_first, lut_count;  /* lut_count 0: memory of this host */
	uint32_t dom;             /* IOMMU domain mapped in (0: none) */
	uint64_t iova, iosize;
};

/* Lender: a device we gave an IOMMU domain to (it had none). */
struct ddom {
	uint16_t bdf;
	uint32_t dom;
};

/* Lender: a BAR of a lent device exposed to our NTBs (IOMMU on). */
struct bexp {
	uint16_t bdf;
	uint8_t bar;
	uint64_t addr, size;
};

/* Borrower: a process's borrow. */
struct brw {
	uint32_t handle;          /* never 0 */
	uint32_t cid;
	uint32_t host;            /* lender */
	uint32_t ref;             /* the lender's borrow reference */
	uint32_t fdid;
	uint16_t bdf;
	bool exclusive;
};

/* Borrower: a process's device-side mapping. */
struct bmap {
	uint32_t handle;          /* never 0 */
	uint32_t cid, borrow;
	uint32_t host, lref;      /* lender and its borrow reference */
	uint32_t lmap;            /* the lender's mapping id */
	uint16_t bdf;
	bool local;               /* a local segment (segid, segref) or a connection (conn) */
	uint32_t segid, segref, conn;
};

/*
 * Lender: a device segment in a lent device's namespace (bdf, devsegid). It
 * belongs to the borrow that created it (holder, lref) and goes with it;
 * owned: the memory is ours (lender RAM, a segment owned by holder), else it
 * is segment segid of host (the creating borrower's RAM).
 */
struct dent {
	uint16_t bdf;
	bool owned;
	uint32_t devsegid, memtype;
	uint32_t holder, lref;
	uint32_t chost, ccid;     /* the creating process: its host and connection there */
	uint32_t host, segid;
	uint64_t size;
};

/* Borrower: a device segment placed in our RAM for a process's borrow. */
struct bseg {
	uint32_t borrow, cid, segid;
};

#define VEC(T, name) T *name; unsigned n##name, cap##name

struct smd_devs {
	VEC(struct lend, lends);
	VEC(struct dmap, dmaps);
	VEC(struct ddom, ddoms);
	VEC(struct bexp, bexps);
	VEC(struct brw, brws);
	VEC(struct bmap, bmaps);
	VEC(struct dent, dents);
	VEC(struct bseg, bsegs);
	uint32_t next_id;
	struct rid_reg {             /* requester IDs processes registered */
		uint32_t cid, ntb;
		uint16_t rid;
	} rids[64];
	unsigned nrids;
};

static int grow(void **v, unsigned n, unsigned *cap, size_t size)
{
	void *p;
	unsigned c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 8;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

#define RESERVE(s, name) grow((void **)&(s)->name, (s)->n##name, &(s)->cap##name, \
			      sizeof(*(s)->name))

/* A fresh id, unique over all tables (0 and collisions skipped). */
static uint32_t new_id(struct smd_devs *s)
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
static int local_list(struct smd *d, struct smio_dev_list *o, uint32_t cap, uint32_t *outlen)
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

static int lend_borrow(struct smd *d, uint32_t holder, uint16_t bdf, uint32_t flags,
		       uint32_t *ref)
{
	struct smd_devs *s = d->devs_pool;
	bool excl = flags & SMIO_DEV_F_EXCLUSIVE;
	struct pci_dev *pdev;
	unsigned n = 0;
	int rc;

	if (!lendable_fn(d, bdf))
		return -ENODEV;
	for (unsigned i = 0; i < s->nlends; i++) {
		if (s->lends[i].bdf != bdf)
			continue;
		if (s->lends[i].exclusive)
			return -EBUSY;
		n++;
	}
	if (excl && n)
		return -EBUSY;
	rc = RESERVE(s, lends);
	if (rc)
		return rc;
	/* The borrower drives the device: memory decoding and bus mastering on. */
	pdev = pci_get_dev(d->pci, bdf);
	rc = pci_enable_device(pdev);
	if (rc)
		return rc;
	pci_set_master(pdev);
	*ref = new_id(s);
	s->lends[s->nlends++] = (struct lend){ .ref = *ref, .holder = holder, .bdf = bdf,
					       .exclusive = excl };
	return 0;
}

static bool rid_in_use(struct smd_devs *s, uint32_t ntb, uint16_t bdf, unsigned skip)
{
	for (unsigned i = 0; i < s->ndmaps; i++)
		if (i != skip && s->dmaps[i].lut_count && s->dmaps[i].ntb == ntb &&
		    s->dmaps[i].bdf == bdf)
			return true;
	return false;
}

/* Undo one device-side mapping and take it out of the table. */
static void dmap_remove(struct smd *d, unsigned idx)
{
	struct smd_devs *s = d->devs_pool;
	struct dmap m = s->dmaps[idx];

	if (m.dom)
		iommu_unmap(d->host->iommu, m.dom, m.iova, m.iosize);
	if (m.lut_count && m.ntb < d->host->nntbs) {
		struct fab_ntb *n = d->host->ntbs[m.ntb];

		for (uint32_t k = 0; k < m.lut_count; k++)
			ntb_lut_clear(n, m.lut_first + k);
		if (m.rid_added) {
			bool passed = false;

			/* Another mapping of the device still needs the entry: hand it on. */
			for (unsigned i = 0; i < s->ndmaps && !passed; i++)
				if (i != idx && s->dmaps[i].lut_count && s->dmaps[i].ntb == m.ntb &&
				    s->dmaps[i].bdf == m.bdf) {
					s->dmaps[i].rid_added = true;
					passed = true;
				}
			if (!passed)
				ntb_rid_del(n, m.bdf);
		}
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

static int lend_map(struct smd *d, uint32_t holder, struct smio_peer_dev_map *m)
{
	struct smd_devs *s = d->devs_pool;
	struct dmap dm = { .holder = holder, .ref = m->ref, .bdf = m->bdf };
	uint64_t io;
	int rc;

	if (!lend_find(s, holder, m->bdf, m->ref))
		return -ENOENT;
	rc = RESERVE(s, dmaps);
	if (rc)
		return rc;
	if (m->dest_host == d->host_id) {
		io = m->dest_addr;          /* our own memory: its bus address */
	} else {
		struct fab_ntb *n = NULL;
		uint64_t win, base, bar = 0;

		for (uint32_t i = 0; i < d->host->nntbs; i++) {
			n = d->host->ntbs[i];
			bar = fab_func_bar_addr(n->fn, NTB_BAR_LUT);
			if (n->link_up && bar && ntb_can_reach(n, m->dest_host)) {
				dm.ntb = i;
				break;
			}
			n = NULL;
		}
		if (!n)
			return -EHOSTUNREACH;
		win = n->win_size;
		base = m->dest_addr & ~(win - 1);
		dm.lut_count = (uint32_t)((m->dest_addr + m->size - base + win - 1) / win);
		rc = ntb_lut_alloc(n, dm.lut_count, m->dest_host, base, &dm.lut_first);
		if (rc)
			return rc;
		/* The device's requests must be let into the NTB. */
		if (!rid_in_use(s, dm.ntb, m->bdf, UINT32_MAX)) {
			rc = ntb_rid_add(n, m->bdf);
			if (rc && rc != -EEXIST) {
				for (uint32_t k = 0; k < dm.lut_count; k++)
					ntb_lut_clear(n, dm.lut_first + k);
				return rc;
			}
			dm.rid_added = !rc;
		}
		io = bar + (uint64_t)dm.lut_first * win + (m->dest_addr - base);
	}
	dm.id = new_id(s);
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

static int lend_unmap(struct smd *d, uint32_t holder, const struct smio_peer_dev_map *m)
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
static void lend_drop(struct smd *d, struct lend *l)
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
			smd_seg_ntb_unexpose(d, s->bexps[i].addr, s->bexps[i].size);
			s->bexps[i] = s->bexps[--s->nbexps];
		} else {
			i++;
		}
	}
}

static int lend_return(struct smd *d, uint32_t holder, const struct smio_peer_dev_ref *m)
{
	struct lend *l = lend_find(d->devs_pool, holder, m->bdf, m->ref);

	if (!l)
		return -ENOENT;
	lend_drop(d, l);
	return 0;
}

static int lend_release_excl(struct smd *d, uint32_t holder, const struct smio_peer_dev_ref *m)
{
	struct lend *l = lend_find(d->devs_pool, holder, m->bdf, m->ref);

	if (!l)
		return -ENOENT;
	l->exclusive = false;
	return 0;
}

static int lend_bar(struct smd *d, uint32_t holder, struct smio_peer_dev_bar *m)
{
	struct fab_func *fn;
	uint64_t addr;

	if (!lend_find(d->devs_pool, holder, m->bdf, m->ref))
		return -ENOENT;
	fn = lendable_fn(d, m->bdf);
	if (!fn)
		return -ENODEV;
	if (m->bar >= SMIO_DEV_BARS || !fn->bars[m->bar].present)
		return -ENOENT;
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
		rc = smd_seg_ntb_expose(d, addr, m->size);
		if (rc)
			return rc;
		s->bexps[s->nbexps++] = (struct bexp){ .bdf = m->bdf, .bar = (uint8_t)m->bar,
						       .addr = addr, .size = m->size };
	}
	return 0;
}

/*
 * A device segment for borrow m->ref of ours, asked by a process of host
 * rhost. SMIO_DEV_PLACE_LENDER: we create the memory, owned by the borrow's
 * holder; _BORROWER: m->segid names the segment in rhost's RAM.
 */
static int lend_seg_create(struct smd *d, uint32_t holder, uint32_t rhost,
			   struct smio_peer_dev_seg *m)
{
	struct smd_devs *s = d->devs_pool;
	struct dent e = { .bdf = m->bdf, .devsegid = m->devsegid, .memtype = m->memtype,
			  .holder = holder, .lref = m->ref, .chost = rhost, .ccid = m->cid,
			  .host = rhost, .segid = m->segid, .size = m->size };
	int rc;

	if (!lend_find(s, holder, m->bdf, m->ref))
		return -ENOENT;
	if (!m->size)
		return -EINVAL;
	for (unsigned i = 0; i < s->ndents; i++)
		if (s->dents[i].bdf == m->bdf && s->dents[i].devsegid == m->devsegid)
			return -EEXIST;
	rc = RESERVE(s, dents);
	if (rc)
		return rc;
	if (m->place == SMIO_DEV_PLACE_LENDER) {
		rc = smd_seg_dev_create(d, holder, m->size, &e.segid, &e.size);
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
static int lend_seg_lookup(struct smd *d, uint32_t holder, uint32_t rhost,
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
		m->place = e->owned ? SMIO_DEV_PLACE_LENDER : SMIO_DEV_PLACE_BORROWER;
		m->host = e->host;
		m->segid = e->segid;
		m->size = e->size;
		return 0;
	}
	return -ENOENT;
}

/* ---------- borrower side ---------- */

static struct brw *brw_get(struct smd_devs *s, const struct smd_conn *c, uint32_t handle,
			   int *rc)
{
	for (unsigned i = 0; i < s->nbrws; i++)
		if (s->brws[i].handle == handle) {
			if (s->brws[i].cid != c->cid) {
				*rc = -EPERM;
				return NULL;
			}
			return &s->brws[i];
		}
	*rc = -ENOENT;
	return NULL;
}

/*
 * Ask the lender (type one of the PEER_DEV_*): ourselves for our own devices,
 * with the process's connection as holder, else the lender's daemon over our
 * peer connection. The reply goes back into req (same layout) if rcap.
 */
static int lender_call(struct smd *d, struct smd_conn *c, uint32_t host, uint16_t type,
		       void *req, uint32_t len, uint32_t rcap)
{
	uint8_t rep[64];
	uint32_t rlen = 0;
	int rc;

	if (host == d->host_id) {
		switch (type) {
		case SMIO_PEER_DEV_BORROW: {
			struct smio_peer_dev_borrow *m = req;
			struct smio_peer_dev_ref r = { .bdf = m->bdf };

			rc = lend_borrow(d, c->cid, m->bdf, m->flags, &r.ref);
			if (!rc)
				memcpy(req, &r, sizeof(r));
			return rc;
		}
		case SMIO_PEER_DEV_RETURN:
			return lend_return(d, c->cid, req);
		case SMIO_PEER_DEV_RELEASE_EXCL:
			return lend_release_excl(d, c->cid, req);
		case SMIO_PEER_DEV_BAR:
			return lend_bar(d, c->cid, req);
		case SMIO_PEER_DEV_MAP:
			return lend_map(d, c->cid, req);
		case SMIO_PEER_DEV_UNMAP:
			return lend_unmap(d, c->cid, req);
		case SMIO_PEER_DEV_SEG_CREATE:
			return lend_seg_create(d, c->cid, d->host_id, req);
		case SMIO_PEER_DEV_SEG_LOOKUP:
			return lend_seg_lookup(d, c->cid, d->host_id, req);
		default:
			return -EOPNOTSUPP;
		}
	}
	if (rcap > sizeof(rep))
		return -EINVAL;
	rc = smd_peer_request(d, host, type, req, len, rcap ? rep : NULL, rcap, &rlen, NULL);
	if (rc == -EPROTO)
		rc = -EHOSTDOWN;
	if (rc)
		return rc;
	if (rlen != rcap)
		return -EPROTO;
	if (rcap)
		memcpy(req, rep, rcap);
	return 0;
}

static int host_of_node(struct smd *d, uint32_t node_id, uint32_t *host)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == node_id) {
			*host = d->topo->hosts[i].id;
			return 0;
		}
	return -ENODEV;
}

static int h_dev_list(struct smd *d, struct smio_dev_list *o, uint32_t *outlen)
{
	const uint32_t cap = SMIO_MAX_PAYLOAD;
	struct smio_dev_list *all = malloc(cap), *part = malloc(cap);
	uint32_t n = 0, rlen;
	int rc = -ENOMEM;

	if (!all || !part)
		goto out;
	/* Host order: every daemon gives the same list. */
	for (uint32_t i = 0; i < d->topo->nhosts; i++) {
		uint32_t host = d->topo->hosts[i].id;

		if (host == d->host_id)
			rc = local_list(d, part, cap, &rlen);
		else
			rc = smd_peer_request(d, host, SMIO_PEER_DEV_LIST, NULL, 0, part, cap,
					      &rlen, NULL);
		if (rc)
			continue;       /* a host that does not answer lends nothing now */
		for (uint32_t k = 0; k < part->n && n < SMIO_MAX_DEVS; k++)
			/* A peer may only speak for its own devices. */
			if (part->d[k].host == host)
				all->d[n++] = part->d[k];
	}
	all->n = n;
	all->pad = 0;
	*outlen = (uint32_t)(sizeof(*all) + n * sizeof(all->d[0]));
	memcpy(o, all, *outlen);
	rc = 0;
out:
	free(all);
	free(part);
	return rc;
}

/* The pool entry for fdid (asks the lender). */
static int dev_lookup(struct smd *d, uint32_t fdid, struct smio_dev_info *info)
{
	struct smio_dev_list *l = malloc(SMIO_MAX_PAYLOAD);
	uint32_t host, rlen;
	int rc;

	if (!l)
		return -ENOMEM;
	rc = host_of_node(d, SMIO_FDID_NODE(fdid), &host);
	if (rc)
		goto out;
	if (host == d->host_id)
		rc = local_list(d, l, SMIO_MAX_PAYLOAD, &rlen);
	else
		rc = smd_peer_request(d, host, SMIO_PEER_DEV_LIST, NULL, 0, l, SMIO_MAX_PAYLOAD,
				      &rlen, NULL);
	if (rc) {
		rc = rc == -EHOSTDOWN || rc == -EPROTO ? -EHOSTUNREACH : rc;
		goto out;
	}
	rc = -ENODEV;
	for (uint32_t k = 0; k < l->n; k++)
		if (l->d[k].fdid == fdid && l->d[k].host == host) {
			*info = l->d[k];
			rc = 0;
			break;
		}
out:
	free(l);
	return rc;
}

static int h_dev_borrow(struct smd *d, struct smd_conn *c, const struct smio_dev_borrow *m,
			struct smio_dev_borrowed *o, uint32_t *outlen)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_dev_info info;
	struct smio_peer_dev_borrow q = { .bdf = SMIO_FDID_BDF(m->fdid), .flags = m->flags };
	struct smio_peer_dev_ref r;
	struct brw b = { .cid = c->cid, .fdid = m->fdid, .bdf = q.bdf,
			 .exclusive = m->flags & SMIO_DEV_F_EXCLUSIVE };
	int rc = dev_lookup(d, m->fdid, &info);

	if (rc)
		return rc;
	b.host = info.host;
	memcpy(&r, &q, sizeof(r));
	rc = lender_call(d, c, b.host, SMIO_PEER_DEV_BORROW, &r, sizeof(q), sizeof(r));
	if (rc)
		return rc == -EHOSTDOWN ? -EHOSTUNREACH : rc;
	if (r.bdf != b.bdf) {
		rc = -EPROTO;
		goto undo;
	}
	b.ref = r.ref;
	rc = RESERVE(s, brws);
	if (rc)
		goto undo;
	b.handle = new_id(s);
	s->brws[s->nbrws++] = b;
	/* The borrow counts itself now. */
	info.borrowers++;
	info.exclusive = b.exclusive;
	if (b.exclusive)
		info.borrowers = 1;
	*o = (struct smio_dev_borrowed){ .handle = b.handle, .flags = m->flags, .info = info };
	*outlen = sizeof(*o);
	return 0;
undo:
	lender_call(d, c, b.host, SMIO_PEER_DEV_RETURN, &r, sizeof(r), 0);
	return rc;
}

static int h_dev_return(struct smd *d, struct smd_conn *c, const struct smio_dev_ref *m)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_ref r;
	struct brw *b = NULL, cp;
	int rc;

	b = brw_get(s, c, m->handle, &rc);
	if (!b)
		return rc;
	for (unsigned i = 0; i < s->nbmaps; i++)
		if (s->bmaps[i].borrow == b->handle)
			return -EBUSY;
	if (smd_seg_borrow_conns(d, b->handle))
		return -EBUSY;
	/* Device segments placed in our RAM for it (connected ones linger). */
	for (unsigned i = 0; i < s->nbsegs;) {
		struct bseg bs = s->bsegs[i];

		if (bs.borrow != b->handle) {
			i++;
			continue;
		}
		s->bsegs[i] = s->bsegs[--s->nbsegs];
		smd_seg_dev_remove(d, bs.cid, bs.segid);
	}
	cp = *b;
	*b = s->brws[--s->nbrws];
	r = (struct smio_peer_dev_ref){ .bdf = cp.bdf, .ref = cp.ref };
	rc = lender_call(d, c, cp.host, SMIO_PEER_DEV_RETURN, &r, sizeof(r), 0);
	/* A lender we cannot reach has dropped the borrow with our connection. */
	if (rc && rc != -EHOSTDOWN && rc != -ENOENT)
		fprintf(stderr, "smartiod: host %u: returning device %#x: %s\n", d->host_id,
			cp.fdid, strerror(-rc));
	return 0;
}

static int h_dev_release_excl(struct smd *d, struct smd_conn *c, const struct smio_dev_ref *m)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_ref r;
	struct brw *b;
	uint32_t handle = m->handle, host;
	int rc;

	b = brw_get(s, c, handle, &rc);
	if (!b)
		return rc;
	if (!b->exclusive)
		return 0;
	r = (struct smio_peer_dev_ref){ .bdf = b->bdf, .ref = b->ref };
	host = b->host;
	rc = lender_call(d, c, host, SMIO_PEER_DEV_RELEASE_EXCL, &r, sizeof(r), 0);
	if (rc)
		return rc;
	b = brw_get(s, c, handle, &rc);
	if (b)
		b->exclusive = false;
	return 0;
}

static int h_dev_seg_connect(struct smd *d, struct smd_conn *c,
			     const struct smio_dev_seg_connect *m, struct smio_seg_conn *o,
			     uint32_t *outlen)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_bar q;
	struct brw *b;
	uint32_t host;
	int rc;

	b = brw_get(s, c, m->handle, &rc);
	if (!b)
		return rc;
	if (m->adapter >= d->host->nntbs)
		return -ENODEV;
	host = b->host;
	if (m->memtype != SMIO_DEV_MEMTYPE_BAR) {
		/* A device segment: the lender knows where it is. */
		struct smio_peer_dev_seg ds = { .bdf = b->bdf, .ref = b->ref,
						.devsegid = m->segid, .memtype = m->memtype,
						.cid = c->cid };

		rc = lender_call(d, c, host, SMIO_PEER_DEV_SEG_LOOKUP, &ds, sizeof(ds),
				 sizeof(ds));
		if (rc)
			return rc == -EHOSTDOWN ? -EHOSTUNREACH : rc;
		if (!brw_get(s, c, m->handle, &rc))
			return rc;
		return smd_seg_dev_connect(d, c, ds.host, ds.segid, m->adapter, o, outlen);
	}
	q = (struct smio_peer_dev_bar){ .bdf = b->bdf, .bar = (uint16_t)m->segid, .ref = b->ref };
	rc = lender_call(d, c, host, SMIO_PEER_DEV_BAR, &q, sizeof(q), sizeof(q));
	if (rc)
		return rc;
	/* The borrow may have been returned while we waited. */
	if (!brw_get(s, c, m->handle, &rc))
		return rc;
	rc = smd_seg_import_bar(d, c, m->handle, host, m->adapter, q.addr, q.size, o);
	if (!rc)
		*outlen = sizeof(*o);
	return rc;
}

/*
 * A device segment for a process's borrow: in our RAM (owned by the process,
 * registered with the lender), or in the lender's RAM (the lender creates it
 * for the borrow). Either way the lender keeps the device's namespace.
 */
static int h_dev_seg_create(struct smd *d, struct smd_conn *c,
			    const struct smio_dev_seg_create *m, struct smio_dev_seg *o,
			    uint32_t *outlen)
{
	struct smd_devs *s = d->devs_pool;
	struct smio_peer_dev_seg q;
	uint32_t host, handle = m->handle, lseg = 0;
	struct brw *b;
	int rc;

	b = brw_get(s, c, handle, &rc);
	if (!b)
		return rc;
	host = b->host;
	q = (struct smio_peer_dev_seg){ .bdf = b->bdf, .place = (uint16_t)m->place,
		.ref = b->ref, .devsegid = m->segid, .memtype = m->memtype, .cid = c->cid,
		.size = m->size };
	if (m->place == SMIO_DEV_PLACE_BORROWER) {
		rc = smd_seg_dev_create(d, c->cid, m->size, &lseg, &q.size);
		if (rc)
			return rc;
		q.host = d->host_id;
		q.segid = lseg;
	}
	rc = lender_call(d, c, host, SMIO_PEER_DEV_SEG_CREATE, &q, sizeof(q), sizeof(q));
	if (rc)
		rc = rc == -EHOSTDOWN ? -EHOSTUNREACH : rc;
	/* The borrow may have been returned while we waited (the lender forgot it). */
	else if (!brw_get(s, c, handle, &rc))
		;
	else if (lseg)
		rc = RESERVE(s, bsegs);
	if (rc) {
		if (lseg)
			smd_seg_dev_remove(d, c->cid, lseg);
		return rc;
	}
	if (lseg)
		s->bsegs[s->nbsegs++] = (struct bseg){ .borrow = handle, .cid = c->cid,
						       .segid = lseg };
	*o = (struct smio_dev_seg){ .host = q.host, .segid = q.segid, .place = m->place,
				    .size = q.size };
	*outlen = sizeof(*o);
	return 0;
}

static int h_dev_map(struct smd *d, struct smd_conn *c, uint16_t type, const void *p,
		     struct smio_dev_mapping *o, uint32_t *outlen)
{
	struct smd_devs *s = d->devs_pool;
	struct bmap bm = { .cid = c->cid };
	struct smio_peer_dev_map q = { 0 };
	uint64_t off, size, base, len, msize;
	struct brw *b;
	int rc;

	if (type == SMIO_DEV_MAP_LOCAL) {
		const struct smio_dev_map_local *m = p;

		bm.borrow = m->handle;
		bm.local = true;
		bm.segid = m->segid;
		off = m->offset;
		size = m->size;
	} else {
		const struct smio_dev_map_remote *m = p;

		bm.borrow = m->handle;
		bm.conn = m->conn;
		off = m->offset;
		size = m->size;
	}
	b = brw_get(s, c, bm.borrow, &rc);
	if (!b)
		return rc;
	bm.host = b->host;
	bm.lref = b->ref;
	bm.bdf = b->bdf;
	rc = RESERVE(s, bmaps);
	if (rc)
		return rc;
	/* Pin the memory: a registered segment of the process, or its connection. */
	if (bm.local)
		rc = smd_seg_local_get(d, c, bm.segid, &bm.segref, &base, &msize);
	else
		rc = smd_seg_conn_hold(d, c, bm.conn, 1, &q.dest_host, &base, &msize);
	if (rc)
		return rc;
	if (bm.local)
		q.dest_host = d->host_id;
	if (off > msize || size > msize - off) {
		rc = -ERANGE;
		goto unpin;
	}
	len = ((off & (PAGE - 1)) + size + PAGE - 1) & ~(PAGE - 1);
	q.bdf = bm.bdf;
	q.ref = bm.lref;
	q.dest_addr = base + (off & ~(PAGE - 1));
	q.size = len;
	rc = lender_call(d, c, bm.host, SMIO_PEER_DEV_MAP, &q, sizeof(q), sizeof(q));
	if (rc)
		goto unpin;
	bm.lmap = q.map;
	rc = RESERVE(s, bmaps);
	if (rc) {
		lender_call(d, c, bm.host, SMIO_PEER_DEV_UNMAP, &q, sizeof(q), 0);
		goto unpin;
	}
	bm.handle = new_id(s);
	s->bmaps[s->nbmaps++] = bm;
	*o = (struct smio_dev_mapping){ .map = bm.handle, .ioaddr = q.ioaddr + (off & (PAGE - 1)) };
	*outlen = sizeof(*o);
	return 0;
unpin:
	if (bm.local)
		smd_seg_local_put(d, bm.segid, bm.segref, c->cid);
	else
		smd_seg_conn_hold(d, c, bm.conn, -1, NULL, NULL, NULL);
	return rc;
}

/* Take a mapping out and undo it (wait: ask the lender and wait for it). */
static void bmap_drop(struct smd *d, struct smd_conn *c, unsigned idx, bool wait)
{
	struct smd_devs *s = d->devs_pool;
	struct bmap bm = s->bmaps[idx];
	struct smio_peer_dev_map q = { .bdf = bm.bdf, .ref = bm.lref, .map = bm.lmap };

	s->bmaps[idx] = s->bmaps[--s->nbmaps];
	/* The lender closes its windows first: then the memory may go. */
	if (!bm.lmap)
		;                   /* the lender dropped it with our peer connection */
	else if (bm.host == d->host_id)
		lend_unmap(d, bm.cid, &q);
	else if (wait)
		lender_call(d, c, bm.host, SMIO_PEER_DEV_UNMAP, &q, sizeof(q), 0);
	else
		smd_peer_post(d, bm.host, SMIO_PEER_DEV_UNMAP, &q, sizeof(q));
	if (bm.local)
		smd_seg_local_put(d, bm.segid, bm.segref, bm.cid);
	else
		smd_seg_conn_hold(d, c, bm.conn, -1, NULL, NULL, NULL);
}

static int h_dev_unmap(struct smd *d, struct smd_conn *c, const struct smio_dev_unmap *m)
{
	struct smd_devs *s = d->devs_pool;

	for (unsigned i = 0; i < s->nbmaps; i++) {
		if (s->bmaps[i].handle != m->map)
			continue;
		if (s->bmaps[i].cid != c->cid)
			return -EPERM;
		if (s->bmaps[i].borrow != m->handle)
			return -EINVAL;
		bmap_drop(d, c, i, true);
		return 0;
	}
	return -ENOENT;
}

static int h_dev_rid(struct smd *d, struct smd_conn *c, const struct smio_dev_rid *m)
{
	struct smd_devs *s = d->devs_pool;
	struct fab_ntb *n;
	int rc;

	if (m->adapter >= d->host->nntbs)
		return -ENODEV;
	n = d->host->ntbs[m->adapter];
	if (m->add) {
		if (s->nrids == sizeof(s->rids) / sizeof(s->rids[0]))
			return -ENOSPC;
		rc = ntb_rid_add(n, m->rid);
		if (rc)
			return rc;
		s->rids[s->nrids++] = (struct rid_reg){ .cid = c->cid, .ntb = m->adapter, .rid = m->rid };
		fab_host_tables_changed(d->host);
		return 0;
	}
	/* Only what this process registered. */
	for (unsigned i = 0; i < s->nrids; i++)
		if (s->rids[i].cid == c->cid && s->rids[i].ntb == m->adapter && s->rids[i].rid == m->rid) {
			s->rids[i] = s->rids[--s->nrids];
			ntb_rid_del(n, m->rid);
			fab_host_tables_changed(d->host);
			return 0;
		}
	return -ENOENT;
}

int smd_h_device(struct smd *d, struct smd_conn *c, uint16_t type, const void *p,
		 void *out, uint32_t *outlen, int *out_fd)
{
	(void)out_fd;
	if (!d->devs_pool)
		return -ENODEV;
	switch (type) {
	case SMIO_DEV_LIST:
		return h_dev_list(d, out, outlen);
	case SMIO_DEV_BORROW:
		return h_dev_borrow(d, c, p, out, outlen);
	case SMIO_DEV_RETURN:
		return h_dev_return(d, c, p);
	case SMIO_DEV_RELEASE_EXCL:
		return h_dev_release_excl(d, c, p);
	case SMIO_DEV_SEG_CONNECT:
		return h_dev_seg_connect(d, c, p, out, outlen);
	case SMIO_DEV_MAP_LOCAL:
	case SMIO_DEV_MAP_REMOTE:
		return h_dev_map(d, c, type, p, out, outlen);
	case SMIO_DEV_UNMAP:
		return h_dev_unmap(d, c, p);
	case SMIO_DEV_RID:
		return h_dev_rid(d, c, p);
	case SMIO_DEV_SEG_CREATE:
		return h_dev_seg_create(d, c, p, out, outlen);
	case SMIO_PEER_DEV_SEG_CREATE:
	case SMIO_PEER_DEV_SEG_LOOKUP: {
		struct smio_peer_dev_seg m;
		int rc;

		memcpy(&m, p, sizeof(m));
		rc = type == SMIO_PEER_DEV_SEG_CREATE ? lend_seg_create(d, c->cid, c->host, &m) :
			lend_seg_lookup(d, c->cid, c->host, &m);
		if (rc)
			return rc;
		memcpy(out, &m, sizeof(m));
		*outlen = sizeof(m);
		return 0;
	}
	case SMIO_PEER_DEV_LIST:
		return local_list(d, out, SMIO_MAX_PAYLOAD, outlen);
	case SMIO_PEER_DEV_BORROW: {
		const struct smio_peer_dev_borrow *m = p;
		struct smio_peer_dev_ref *o = out;
		uint32_t ref;
		int rc = lend_borrow(d, c->cid, m->bdf, m->flags, &ref);

		if (rc)
			return rc;
		*o = (struct smio_peer_dev_ref){ .bdf = m->bdf, .ref = ref };
		*outlen = sizeof(*o);
		return 0;
	}
	case SMIO_PEER_DEV_RETURN:
		return lend_return(d, c->cid, p);
	case SMIO_PEER_DEV_RELEASE_EXCL:
		return lend_release_excl(d, c->cid, p);
	case SMIO_PEER_DEV_BAR: {
		struct smio_peer_dev_bar m;
		int rc;

		memcpy(&m, p, sizeof(m));
		rc = lend_bar(d, c->cid, &m);
		if (rc)
			return rc;
		memcpy(out, &m, sizeof(m));
		*outlen = sizeof(m);
		return 0;
	}
	case SMIO_PEER_DEV_MAP: {
		struct smio_peer_dev_map m;
		int rc;

		memcpy(&m, p, sizeof(m));
		rc = lend_map(d, c->cid, &m);
		if (rc)
			return rc;
		memcpy(out, &m, sizeof(m));
		*outlen = sizeof(m);
		return 0;
	}
	case SMIO_PEER_DEV_UNMAP:
		return lend_unmap(d, c->cid, p);
	default:
		return -EOPNOTSUPP;
	}
}

/* ---------- connection close ---------- */

/* Our peer connection to host is gone: the lender dropped our borrows. */
static void lender_lost(struct smd *d, uint32_t host)
{
	struct smd_devs *s = d->devs_pool;

	for (unsigned i = 0; i < s->nbmaps; i++)
		if (s->bmaps[i].host == host && host != d->host_id)
			s->bmaps[i].lmap = 0;
}

void smd_dev_conn_closed(struct smd *d, unsigned idx)
{
	struct smd_devs *s = d->devs_pool;
	struct smd_conn *c = &d->conns[idx];
	uint32_t cid = c->cid;

	if (!s || !cid)
		return;
	fab_host_lock(d->host);
	if (c->outgoing)
		lender_lost(d, c->host);
	/* The process's device mappings, then its borrows: do not wait. */
	for (unsigned i = 0; i < s->nbmaps;) {
		if (s->bmaps[i].cid != cid) {
			i++;
			continue;
		}
		if (!s->bmaps[i].lmap) {
			struct bmap bm = s->bmaps[i];

			s->bmaps[i] = s->bmaps[--s->nbmaps];
			if (bm.local)
				smd_seg_local_put(d, bm.segid, bm.segref, cid);
			else
				smd_seg_conn_hold(d, c, bm.conn, -1, NULL, NULL, NULL);
			continue;
		}
		bmap_drop(d, c, i, false);
	}
	for (unsigned i = 0; i < s->nbrws;) {
		struct brw b = s->brws[i];
		struct smio_peer_dev_ref r = { .bdf = b.bdf, .ref = b.ref };

		if (b.cid != cid) {
			i++;
			continue;
		}
		s->brws[i] = s->brws[--s->nbrws];
		/* Its device segments in our RAM are the process's: the segment
		 * service frees them with the connection. */
		for (unsigned k = 0; k < s->nbsegs;) {
			if (s->bsegs[k].borrow == b.handle)
				s->bsegs[k] = s->bsegs[--s->nbsegs];
			else
				k++;
		}
		if (b.host != d->host_id)
			smd_peer_post(d, b.host, SMIO_PEER_DEV_RETURN, &r, sizeof(r));
	}
	/* Borrows held through this connection (a borrower daemon, or a local process). */
	for (unsigned i = 0; i < s->nlends;) {
		if (s->lends[i].holder == cid)
			lend_drop(d, &s->lends[i]);
		else
			i++;
	}
	for (unsigned i = 0; i < s->nrids;) {
		if (s->rids[i].cid == cid && s->rids[i].ntb < d->host->nntbs) {
			ntb_rid_del(d->host->ntbs[s->rids[i].ntb], s->rids[i].rid);
			s->rids[i] = s->rids[--s->nrids];
		} else {
			i++;
		}
	}
	fab_host_unlock(d->host);
}
