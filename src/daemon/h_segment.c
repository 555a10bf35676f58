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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon.h"
#include "host/lend.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "host/segment.h"

#define MEMFD_CACHE  64           /* peers' memory objects we hold an fd of */

/* A connection of one of our processes to a segment (here or elsewhere). */
struct imp {
	uint32_t handle;
	uint32_t cid;             /* the client connection that made it */
	uint32_t host;            /* owning host id */
	uint32_t segid, ref;      /* the owner's reference */
	uint32_t ntb, lut_first, lut_count;   /* lut_count 0: local, no NTB */
	uint64_t win_addr, offset, size;
	uint64_t dest;            /* the memory's bus address at host (owner's view) */
	uint32_t devmaps;         /* device-side mappings through it (h_device.c) */
	uint32_t borrow;          /* a device BAR of this borrow (no owner reference) */
	bool lost;                /* the owner dropped our reference (peer connection
				   * lost); LUT entries already cleared */
	bool gone;                /* the owner process died (PEER_SEG_GONE); LUT entries
				   * cleared, the reference still ours to release */
	int efd;                  /* SEG_EVENTS eventfd, or -1 */
};

struct memfd_ent {
	uint32_t host, mem;
	int fd;
	uint64_t size;
};

struct smd_segs {
	struct seg_table *tab;
	struct imp *imp;
	unsigned nimp, cap;
	uint32_t next_handle;
	struct memfd_ent cache[MEMFD_CACHE];
	unsigned ncache;
	uint32_t ntb_domain;       /* IOMMU domain of this host's NTBs (0: none yet) */
};

_Static_assert(SEG_ID_AUTO == SMIO_SEGID_AUTO, "automatic id on the wire");
_Static_assert(SEG_F_EMPTY == SMIO_SEG_F_EMPTY, "empty flag on the wire");

/*
 * With the IOMMU on, requests arriving through an NTB carry the NTB's
 * requester ID and are translated: exported segments are identity-mapped in
 * one domain shared by the host's NTBs, so the bus address a remote LUT
 * points at is the segment's physical address (what Dolphin's driver does
 * when a segment is prepared on an adapter).
 */
static int ntb_domain(struct smd *d)
{
	struct smd_segs *s = d->segs;
	struct fab_iommu *mmu = d->host->iommu;
	int dom;

	if (s->ntb_domain)
		return (int)s->ntb_domain;
	/* Shared with Device Lending's windows (src/host/lend.c): one domain. */
	dom = iommu_enabled(mmu) ? lend_ntb_domain(d->host) : -ENODEV;
	if (dom <= 0)
		return dom ? dom : -ENODEV;
	s->ntb_domain = (uint32_t)dom;
	return dom;
}

static int seg_expose(void *arg, uint64_t phys, uint64_t size)
{
	struct smd *d = arg;
	int dom;

	if (!iommu_enabled(d->host->iommu))
		return 0;
	dom = ntb_domain(d);
	if (dom < 0)
		return dom;
	return iommu_map(d->host->iommu, (uint32_t)dom, phys, phys, size,
			 IOMMU_READ | IOMMU_WRITE);
}

static void seg_unexpose(void *arg, uint64_t phys, uint64_t size)
{
	struct smd *d = arg;

	if (iommu_enabled(d->host->iommu) && d->segs && d->segs->ntb_domain &&
	    iommu_unmap(d->host->iommu, d->segs->ntb_domain, phys, size))
		fprintf(stderr, "smartiod: segment at 0x%llx was not mapped for the NTBs\n",
			(unsigned long long)phys);
}

/* For the device service: a lent device's BAR, reachable through our NTBs. */
int smd_seg_ntb_expose(struct smd *d, uint64_t phys, uint64_t size)
{
	return seg_expose(d, phys, size);
}

void smd_seg_ntb_unexpose(struct smd *d, uint64_t phys, uint64_t size)
{
	if (iommu_enabled(d->host->iommu) && d->segs && d->segs->ntb_domain)
		iommu_unmap(d->host->iommu, d->segs->ntb_domain, phys, size);
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
			    .unexpose = seg_unexpose, .arg = d });
	d->segs = s;
	return 0;
}

void smd_seg_fini(struct smd *d)
{
	struct smd_segs *s = d->segs;

	if (!s)
		return;
	for (unsigned i = 0; i < s->ncache; i++)
		close(s->cache[i].fd);
	seg_table_destroy(s->tab);
	free(s->imp);
	free(s);
	d->segs = NULL;
}

/* ---------- importer side: connections ---------- */

static struct imp *imp_find(struct smd_segs *s, uint32_t handle)
{
	for (unsigned i = 0; i < s->nimp; i++)
		if (s->imp[i].handle == handle)
			return &s->imp[i];
	return NULL;
}

/* Look up a client's connection: -ENOENT unknown, -EPERM another process's. */
static int imp_get(struct smd_segs *s, const struct smd_conn *c, uint32_t handle,
		   struct imp **out)
{
	struct imp *im = imp_find(s, handle);

	if (!im)
		return -ENOENT;
	if (im->cid != c->cid)
		return -EPERM;
	*out = im;
	return 0;
}

/* Take the entry out of the table (the caller has a copy, without the eventfd). */
static void imp_unlink(struct smd_segs *s, struct imp *im)
{
	if (im->efd >= 0)
		close(im->efd);
	*im = s->imp[--s->nimp];
}

/* Has the connection's segment gone away (owner process or host)? */
static bool imp_dead(const struct imp *im)
{
	return im->lost || im->gone;
}

/* Tell the process: its connection im just became unusable. */
static void imp_signal(struct imp *im)
{
	uint64_t one = 1;

	if (im->efd >= 0 && write(im->efd, &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, "smartiod: connection %u: event not delivered\n", im->handle);
}

static void lut_clear_run(struct smd *d, const struct imp *im)
{
	struct fab_ntb *n = im->ntb < d->host->nntbs ? d->host->ntbs[im->ntb] : NULL;

	if (!n)
		return;
	/* -ENOENT: the admin cleared an entry by hand; nothing left to undo. */
	for (uint32_t k = 0; k < im->lut_count; k++)
		ntb_lut_clear(n, im->lut_first + k);
}

/* Drop the owner's reference: locally, or by asking the owning daemon. */
static void release_ref(struct smd *d, const struct imp *im, bool wait)
{
	struct smio_peer_seg_ref m = { .segid = im->segid, .ref = im->ref };
	int rc;

	if (im->lost || im->borrow)
		return;
	if (im->host == d->host_id) {
		seg_ref_put(d->segs->tab, im->segid, im->ref, im->cid);
		return;
	}
	if (wait)
		rc = smd_peer_request(d, im->host, SMIO_PEER_SEG_RELEASE, &m, sizeof(m), NULL, 0,
				      NULL, NULL);
	else
		rc = smd_peer_post(d, im->host, SMIO_PEER_SEG_RELEASE, &m, sizeof(m));
	/*
	 * Not reaching the owner is fine: losing the peer connection made it drop
	 * every reference we held through it. Anything else is worth a note.
	 */
	if (rc < 0 && rc != -EHOSTDOWN && rc != -ENOTCONN && rc != -ECONNRESET)
		fprintf(stderr, "smartiod: host %u: releasing segment %#x on host %u: %s\n",
			d->host_id, im->segid, im->host, strerror(-rc));
}

static int host_of_node(struct smd *d, uint32_t node_id, uint32_t *host)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == node_id) {
			*host = d->topo->hosts[i].id;
			return 0;
		}
	return -EHOSTUNREACH;
}

static int imp_reserve(struct smd_segs *s)
{
	struct imp *v;
	unsigned cap;

	if (s->nimp < s->cap)
		return 0;
	cap = s->cap ? 2 * s->cap : 16;
	v = realloc(s->imp, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->imp = v;
	s->cap = cap;
	return 0;
}

static uint32_t new_handle(struct smd_segs *s)
{
	do {
		if (++s->next_handle == 0)
			s->next_handle = 1;
	} while (imp_find(s, s->next_handle));
	return s->next_handle;
}

static int h_seg_connect(struct smd *d, struct smd_conn *c, const struct smio_seg_connect *m,
		       struct smio_seg_conn *o, uint32_t *outlen)
{
	struct smd_segs *s = d->segs;
	struct imp im = { .cid = c->cid, .segid = m->segid, .ntb = m->adapter, .efd = -1 };
	struct fab_ntb *n;
	struct smio_seg_id q = { .segid = m->segid };
	struct smio_peer_seg ps;
	uint64_t win, base, bar;
	uint32_t rlen;
	int rc;

	if (m->adapter >= d->host->nntbs)
		return -ENODEV;
	n = d->host->ntbs[m->adapter];
	rc = host_of_node(d, m->node_id, &im.host);
	if (rc)
		return rc;
	/* Room first: once the owner counts us, nothing may fail but the LUT. */
	rc = imp_reserve(s);
	if (rc)
		return rc;

	if (im.host == d->host_id) {
		const struct seg *sg;

		/* A local segment: the CPU reaches it directly, no window needed. */
		rc = seg_ref_get(s->tab, m->segid, c->cid, &im.ref, &sg);
		if (rc)
			return rc;
		im.win_addr = sg->phys;
		im.dest = sg->phys;
		im.size = sg->size;
		goto done;
	}

	if (!n->link_up)
		return -ENOLINK;
	if (!ntb_can_reach(n, im.host))
		return -EHOSTUNREACH;
	bar = fab_func_bar_addr(n->fn, NTB_BAR_LUT);
	if (!bar)
		return -ENODEV;     /* BAR unassigned or decoding off: no windows */

	rc = smd_peer_request(d, im.host, SMIO_PEER_SEG_LOOKUP, &q, sizeof(q), &ps, sizeof(ps),
			      &rlen, NULL);
	if (rc == -EHOSTDOWN || rc == -EPROTO)
		return -EHOSTUNREACH;
	if (rc)
		return rc;          /* the owner's answer: -ENOENT, -ECONNREFUSED */
	if (rlen != sizeof(ps) || ps.segid != m->segid) {
		rc = -EPROTO;
		goto undo;
	}
	im.ref = ps.ref;
	im.size = ps.size;
	im.dest = ps.addr;

	/* Enough consecutive windows to cover the segment, all or nothing. */
	win = n->win_size;
	base = ps.addr & ~(win - 1);
	im.lut_count = (uint32_t)((ps.addr + ps.size - base + win - 1) / win);
	rc = ntb_lut_alloc(n, im.lut_count, im.host, base, &im.lut_first);
	if (rc)
		goto undo;
	im.win_addr = bar + (uint64_t)im.lut_first * win;
	im.offset = ps.addr - base;
	/* Peers served while we waited may have grown the table: check again. */
	rc = imp_reserve(s);
	if (rc) {
		lut_clear_run(d, &im);
		goto undo;
	}
done:
	im.handle = new_handle(s);
	s->imp[s->nimp++] = im;
	*o = (struct smio_seg_conn){ .conn = im.handle, .host = im.host,
		.win_addr = im.win_addr, .offset = im.offset, .size = im.size,
		.lut_first = im.lut_first, .lut_count = im.lut_count };
	*outlen = sizeof(*o);
	return 0;
undo:
	/* Nothing half done: the owner forgets the reference we will not use. */
	im.lut_count = 0;
	release_ref(d, &im, true);
	return rc;
}

static int h_seg_disconnect(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_ref *m)
{
	struct imp *p, im;
	int rc = imp_get(d->segs, c, m->conn, &p);

	if (rc)
		return rc;
	if (p->devmaps)
		return -EBUSY;      /* mapped for a device: unmap that first */
	im = *p;
	imp_unlink(d->segs, p);
	/* Close the windows before the owner may free the memory behind them. */
	if (!imp_dead(&im))
		lut_clear_run(d, &im);
	release_ref(d, &im, true);
	return 0;
}

static int h_seg_events(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_ref *m,
			int *out_fd)
{
	struct imp *im;
	int rc = imp_get(d->segs, c, m->conn, &im);

	if (rc)
		return rc;
	if (im->efd < 0) {
		im->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (im->efd < 0)
			return -errno;
		if (imp_dead(im))
			imp_signal(im);     /* already gone: say so at once */
	}
	*out_fd = im->efd;
	return 0;
}

static int h_seg_state(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_ref *m,
		       struct smio_seg_state *o, uint32_t *outlen)
{
	struct imp *im;
	int rc = imp_get(d->segs, c, m->conn, &im);

	if (rc)
		return rc;
	*o = (struct smio_seg_state){ .conn = im->handle,
		.state = imp_dead(im) ? SMIO_SEG_LOST : SMIO_SEG_CONNECTED };
	*outlen = sizeof(*o);
	return 0;
}

/* The owner process of segment segid on host died: our connection holding ref is gone. */
static void seg_gone(struct smd *d, uint32_t host, uint32_t segid, uint32_t ref)
{
	struct smd_segs *s = d->segs;

	for (unsigned i = 0; i < s->nimp; i++) {
		struct imp *im = &s->imp[i];

		if (im->host != host || im->segid != segid || im->ref != ref || im->borrow ||
		    imp_dead(im))
			continue;
		lut_clear_run(d, im);
		im->gone = true;
		imp_signal(im);
	}
}

static int fab_status_errno(int status)
{
	switch (status) {
	case FAB_OK:          return 0;
	case FAB_LINK_DOWN:   return -ENOLINK;
	case FAB_HOST_DOWN:   return -EHOSTDOWN;
	case FAB_IOMMU_FAULT: return -EFAULT;
	case FAB_NTB_REJECT:  return -EACCES;
	default:              return -EIO;
	}
}

/* A peer's memory object as an fd of ours: cached, else fetched by PEER_MEMFD. */
static int peer_memfd(struct smd *d, uint32_t host, uint32_t mem, int *fd, uint64_t *size)
{
	struct smd_segs *s = d->segs;
	struct smio_peer_memfd q = { .mem = mem }, rep;
	uint32_t rlen;
	int rc, nfd;

	for (unsigned i = 0; i < s->ncache; i++)
		if (s->cache[i].host == host && s->cache[i].mem == mem) {
			*fd = s->cache[i].fd;
			*size = s->cache[i].size;
			return 0;
		}
	rc = smd_peer_request(d, host, SMIO_PEER_MEMFD, &q, sizeof(q), &rep, sizeof(rep), &rlen,
			      &nfd);
	if (rc)
		return rc == -EPROTO ? -EHOSTDOWN : rc;
	if (nfd < 0 || rlen != sizeof(rep) || rep.mem != mem) {
		if (nfd >= 0)
			close(nfd);
		return -EPROTO;
	}
	/* The cache may have been filled while we waited (nested requests). */
	for (unsigned i = 0; i < s->ncache; i++)
		if (s->cache[i].host == host && s->cache[i].mem == mem) {
			close(nfd);
			*fd = s->cache[i].fd;
			*size = s->cache[i].size;
			return 0;
		}
	if (s->ncache == MEMFD_CACHE) {
		/* Full: the oldest goes; processes keep their own copies. */
		close(s->cache[0].fd);
		memmove(&s->cache[0], &s->cache[1], (MEMFD_CACHE - 1) * sizeof(s->cache[0]));
		s->ncache--;
	}
	s->cache[s->ncache++] = (struct memfd_ent){ .host = host, .mem = mem, .fd = nfd,
						    .size = rep.size };
	*fd = nfd;
	*size = rep.size;
	return 0;
}

static int h_seg_map_remote(struct smd *d, struct smd_conn *c, const struct smio_seg_map *m,
			  struct smio_map_reply *o, uint32_t *outlen, int *out_fd)
{
	struct imp *p, im;
	struct fab_route *rt;
	uint64_t addr, fd_size;
	uint32_t tgt_host, tgt_mem;
	uint64_t tgt_off;
	int rc = imp_get(d->segs, c, m->conn, &p), fd;

	if (rc)
		return rc;
	im = *p;                    /* the table may change while peers are served */
	if (imp_dead(&im))
		return -ENOLINK;
	if (m->offset > im.size || m->size > im.size - m->offset)
		return -ERANGE;
	addr = im.win_addr + im.offset + m->offset;

	/* The route the CPU's loads and stores will take: through the LUT. */
	rt = malloc(sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	rc = fab_route_resolve(d->host, FAB_RID_CPU, addr, m->size, true, rt);
	if (!rc)
		rc = fab_status_errno(rt->status);
	if (!rc && (rt->tgt.kind != FAB_TGT_RAM && rt->tgt.kind != FAB_TGT_BAR))
		rc = -EIO;
	if (!rc && rt->tgt.len < m->size)
		rc = -EIO;          /* not one contiguous object: cannot be one mmap */
	tgt_host = rt->tgt.host;
	tgt_mem = rt->tgt.mem;
	tgt_off = rt->tgt.offset;
	free(rt);
	if (rc)
		return rc;

	if (tgt_host == d->host_id) {
		if (tgt_mem >= d->host->nmems)
			return -EIO;
		fd = d->host->mems[tgt_mem].fd;
		fd_size = d->host->mems[tgt_mem].size;
	} else {
		rc = peer_memfd(d, tgt_host, tgt_mem, &fd, &fd_size);
		if (rc)
			return rc;
	}
	if (tgt_off > fd_size || m->size > fd_size - tgt_off)
		return -EPROTO;     /* the owner's object is smaller than its route says */
	*o = (struct smio_map_reply){ .host = tgt_host, .mem = tgt_mem, .offset = tgt_off,
		.len = m->size, .fd_size = fd_size, .status = FAB_OK };
	*outlen = sizeof(*o);
	*out_fd = fd;
	return 0;
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
static bool in_local_bar(struct smd *d, uint64_t addr, uint64_t size)
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
 * must be this host's device memory or RAM the caller already owns as a
 * segment: a process must not be able to export arbitrary physical memory.
 * The expose hook maps it for the NTBs, a BAR too: traffic arriving through
 * an NTB crosses the root complex (and its IOMMU) unless a switch below it
 * routes it peer-to-peer.
 */
static int h_seg_attach(struct smd *d, struct smd_conn *c, const struct smio_seg_attach *m,
			struct smio_seg_info *o, uint32_t *outlen)
{
	enum seg_mem mem = SEG_MEM_RAM;
	const struct seg *sg;
	int rc;

	if (m->kind == SMIO_SEG_ATTACH_PHYS)
		mem = in_local_bar(d, m->addr, m->size) ? SEG_MEM_IO : SEG_MEM_ALIAS;
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
		rc = fab_status_errno(rt->status);
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
		return seg_remove(tab, c->cid, ((const struct smio_seg_id *)p)->segid);
	}
	case SMIO_SEG_AVAILABLE: {
		const struct smio_seg_avail *m = p;

		return seg_set_available(tab, c->cid, m->segid, m->available);
	}
	case SMIO_SEG_MAP_LOCAL:
		return h_seg_map_local(d, c, p, out, outlen, out_fd);
	case SMIO_SEG_CONNECT:
		return h_seg_connect(d, c, p, out, outlen);
	case SMIO_SEG_MAP_REMOTE:
		return h_seg_map_remote(d, c, p, out, outlen, out_fd);
	case SMIO_SEG_DISCONNECT:
		return h_seg_disconnect(d, c, p);
	case SMIO_SEG_ATTACH:
		return h_seg_attach(d, c, p, out, outlen);
	case SMIO_SEG_EVENTS:
		return h_seg_events(d, c, p, out_fd);
	case SMIO_SEG_STATE:
		return h_seg_state(d, c, p, out, outlen);
	case SMIO_PEER_SEG_GONE: {
		const struct smio_peer_seg_ref *m = p;

		/* Only the owner sends it, on our connection to it. */
		if (!c->outgoing)
			return -EPROTO;
		seg_gone(d, c->host, m->segid, m->ref);
		return 0;
	}
	case SMIO_PEER_SEG_LOOKUP:
		return peer_seg_lookup(d, c, p, out, outlen);
	case SMIO_PEER_SEG_RELEASE: {
		const struct smio_peer_seg_ref *m = p;

		/* Only the connection that took a reference can drop it. */
		return seg_ref_put(tab, m->segid, m->ref, c->cid);
	}
	case SMIO_PEER_MEMFD:
		return peer_memfd_serve(d, p, out, outlen, out_fd);
	default:
		return -EOPNOTSUPP;
	}
}

/* ---------- for the device service (h_device.c) ---------- */

int smd_seg_import_bar(struct smd *d, struct smd_conn *c, uint32_t borrow, uint32_t host,
		       uint32_t adapter, uint64_t addr, uint64_t size, struct smio_seg_conn *o)
{
	struct smd_segs *s = d->segs;
	struct imp im = { .cid = c->cid, .host = host, .ntb = adapter, .borrow = borrow,
			  .segid = SMIO_SEGID_AUTO, .dest = addr, .size = size, .efd = -1 };
	struct fab_ntb *n;
	uint64_t win, base, bar;
	int rc;

	if (!s)
		return -ENODEV;
	if (adapter >= d->host->nntbs)
		return -ENODEV;
	rc = imp_reserve(s);
	if (rc)
		return rc;
	if (host == d->host_id) {
		im.win_addr = addr;     /* our own device: the CPU reaches the BAR directly */
		goto done;
	}
	n = d->host->ntbs[adapter];
	if (!n->link_up)
		return -ENOLINK;
	if (!ntb_can_reach(n, host))
		return -EHOSTUNREACH;
	bar = fab_func_bar_addr(n->fn, NTB_BAR_LUT);
	if (!bar)
		return -ENODEV;
	win = n->win_size;
	base = addr & ~(win - 1);
	im.lut_count = (uint32_t)((addr + size - base + win - 1) / win);
	rc = ntb_lut_alloc(n, im.lut_count, host, base, &im.lut_first);
	if (rc)
		return rc;
	im.win_addr = bar + (uint64_t)im.lut_first * win;
	im.offset = addr - base;
done:
	im.handle = new_handle(s);
	s->imp[s->nimp++] = im;
	*o = (struct smio_seg_conn){ .conn = im.handle, .host = im.host,
		.win_addr = im.win_addr, .offset = im.offset, .size = im.size,
		.lut_first = im.lut_first, .lut_count = im.lut_count };
	return 0;
}

int smd_seg_dev_create(struct smd *d, uint32_t owner, uint64_t size, uint32_t *segid,
		       uint64_t *rsize)
{
	const struct seg *sg;
	uint32_t id;
	int rc = seg_create(d->segs->tab, owner, SMIO_SEGID_AUTO, size, 0, &sg);

	if (rc)
		return rc;
	id = sg->id;
	*rsize = sg->size;
	rc = seg_set_available(d->segs->tab, owner, id, true);
	if (rc) {
		seg_disown(d->segs->tab, owner, id);
		return rc;
	}
	*segid = id;
	return 0;
}

void smd_seg_dev_remove(struct smd *d, uint32_t owner, uint32_t segid)
{
	const struct seg *sg = seg_lookup(d->segs->tab, segid);

	/* Never under a running DMA transfer of an NTB engine: let it linger. */
	if (sg && sg->owner == owner && sg->size && smd_dma_busy(d, sg->phys, sg->size))
		return;
	seg_disown(d->segs->tab, owner, segid);
}

int smd_seg_dev_connect(struct smd *d, struct smd_conn *c, uint32_t host, uint32_t segid,
			uint32_t adapter, struct smio_seg_conn *o, uint32_t *outlen)
{
	struct smio_seg_connect m = { .segid = segid, .adapter = adapter };
	uint32_t i;

	for (i = 0; i < d->topo->nhosts && d->topo->hosts[i].id != host; i++)
		;
	if (i == d->topo->nhosts)
		return -EHOSTUNREACH;
	m.node_id = d->topo->hosts[i].node_id;
	return h_seg_connect(d, c, &m, o, outlen);
}

unsigned smd_seg_borrow_conns(struct smd *d, uint32_t borrow)
{
	unsigned n = 0;

	for (unsigned i = 0; d->segs && i < d->segs->nimp; i++)
		n += d->segs->imp[i].borrow == borrow;
	return n;
}

int smd_seg_conn_hold(struct smd *d, struct smd_conn *c, uint32_t conn, int delta,
		      uint32_t *host, uint64_t *dest, uint64_t *size)
{
	struct imp *im;
	int rc;

	if (!d->segs)
		return -ENODEV;
	if (delta < 0) {
		im = imp_find(d->segs, conn);
		if (im && im->devmaps)
			im->devmaps--;
		return 0;
	}
	rc = imp_get(d->segs, c, conn, &im);
	if (rc)
		return rc;
	if (imp_dead(im))
		return -ENOLINK;
	*host = im->host;
	*dest = im->dest;
	*size = im->size;
	im->devmaps++;
	return 0;
}

int smd_seg_local_get(struct smd *d, struct smd_conn *c, uint32_t segid, uint32_t *ref,
		      uint64_t *phys, uint64_t *size)
{
	const struct seg *sg;
	int rc;

	if (!d->segs)
		return -ENODEV;
	sg = seg_lookup(d->segs->tab, segid);
	/* Only memory registered with SISCI, and only the process's own. */
	if (!sg || !sg->owner)
		return -ENOENT;
	if (sg->owner != c->cid)
		return -EPERM;
	if (sg->flags & SEG_F_EMPTY)
		return -ENXIO;
	rc = seg_ref_get_own(d->segs->tab, segid, c->cid, ref, &sg);
	if (rc)
		return rc;
	*phys = sg->phys;
	*size = sg->size;
	return 0;
}

void smd_seg_local_put(struct smd *d, uint32_t segid, uint32_t ref, uint32_t cid)
{
	if (d->segs)
		seg_ref_put(d->segs->tab, segid, ref, cid);
}

/* ---------- for other services ---------- */

int smd_seg_local_range(struct smd *d, uint32_t cid, uint32_t segid, uint64_t *phys,
			uint64_t *size)
{
	const struct seg *sg = d->segs ? seg_lookup(d->segs->tab, segid) : NULL;

	if (!sg || !sg->owner)
		return -ENOENT;
	if (sg->owner != cid)
		return -EPERM;
	if (sg->flags & SEG_F_EMPTY)
		return -ENXIO;
	*phys = sg->phys;
	*size = sg->size;
	return 0;
}

int smd_seg_conn_range(struct smd *d, uint32_t cid, uint32_t handle, uint64_t *addr,
		       uint64_t *size, uint32_t *adapter)
{
	struct imp *im = d->segs ? imp_find(d->segs, handle) : NULL;

	if (!im)
		return -ENOENT;
	if (im->cid != cid)
		return -EPERM;
	if (imp_dead(im))
		return -ENOLINK;
	*addr = im->win_addr + im->offset;
	*size = im->size;
	*adapter = im->ntb;
	return 0;
}

int smd_seg_peer_memfd(struct smd *d, uint32_t host, uint32_t mem, int *fd, uint64_t *size)
{
	if (!d->segs || host == d->host_id)
		return -EINVAL;
	return peer_memfd(d, host, mem, fd, size);
}

/* ---------- connection close ---------- */

/* Our peer connection to host is gone: so are the owner's references. */
static void peer_lost(struct smd *d, uint32_t host)
{
	struct smd_segs *s = d->segs;

	for (unsigned i = 0; i < s->nimp; i++) {
		struct imp *im = &s->imp[i];

		if (im->host != host || im->lost || im->host == d->host_id)
			continue;
		/* The memory may be reused by the owner now: close the windows. */
		if (!im->gone) {
			lut_clear_run(d, im);
			imp_signal(im);
		}
		im->lost = true;
	}
	/* A restarted daemon has new memory objects. */
	for (unsigned i = 0; i < s->ncache;) {
		if (s->cache[i].host == host) {
			close(s->cache[i].fd);
			s->cache[i] = s->cache[--s->ncache];
		} else {
			i++;
		}
	}
}

/*
 * Owner cid is going: tell the holders of references to its segments. Copy
 * them first: a failed send closes a peer connection, which drops the
 * references it held (and walks these tables).
 */
static void owner_gone_notify(struct smd *d, uint32_t cid)
{
	struct smd_segs *s = d->segs;
	struct seg_ref_info *v = NULL;
	unsigned n = seg_owner_refs(s->tab, cid, &v);

	for (unsigned k = 0; k < n; k++) {
		struct smio_peer_seg_ref m = { .segid = v[k].segid, .ref = v[k].ref };
		unsigned i;

		for (i = 0; i < d->nconns; i++)
			if (d->conns[i].fd >= 0 && d->conns[i].cid == v[k].holder)
				break;
		if (i == d->nconns)
			continue;
		if (d->conns[i].role == SMIO_ROLE_CLIENT) {
			seg_gone(d, d->host_id, m.segid, m.ref);    /* an importer of this host */
		} else if (d->conns[i].role == SMIO_ROLE_PEER && !d->conns[i].outgoing) {
			if (smio_send(d->conns[i].fd, SMIO_PEER_SEG_GONE, 0, 0, 0, &m, sizeof(m),
				      -1) < 0)
				smd_close_conn(d, i);
		}
	}
	free(v);
}

void smd_seg_conn_closed(struct smd *d, unsigned idx)
{
	struct smd_segs *s = d->segs;
	struct smd_conn *c = &d->conns[idx];
	uint32_t cid = c->cid;

	if (!s || !cid)
		return;
	/* Handlers' tables, LUTs and physmem are guarded by the host lock. */
	fab_host_lock(d->host);
	if (c->outgoing)
		peer_lost(d, c->host);
	/*
	 * The process's connections: close the windows, tell the owners. Take each
	 * one out before telling (a failed post closes a peer connection, which
	 * walks this table too), and do not wait: we may be anywhere here.
	 */
	for (;;) {
		struct imp im;
		unsigned i;

		for (i = 0; i < s->nimp && s->imp[i].cid != cid; i++)
			;
		if (i == s->nimp)
			break;
		im = s->imp[i];
		imp_unlink(s, &s->imp[i]);
		if (!imp_dead(&im))
			lut_clear_run(d, &im);
		release_ref(d, &im, false);
	}
	/* References peers held through this connection, then its own segments
	 * (those still referenced linger until the last reference goes): their
	 * importers learn that the owner is gone. */
	seg_holder_gone(s->tab, cid);
	owner_gone_notify(d, cid);
	seg_owner_gone(s->tab, cid);
	fab_host_unlock(d->host);
}
