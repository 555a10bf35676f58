// SPDX-License-Identifier: MIT
/*
 * The daemon's SISCI segment service, importer side: connections to segments
 * (here or on other hosts) and their remote mappings, the services other
 * daemon services use, and what a closing connection leaves behind. The
 * model, the owner side and the request dispatch are in h_segment.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon.h"
#include "util/log.h"
#include "fabric/ntb.h"
#include "host/lend.h"
#include "host/ntb_drv.h"
#include "host/segment.h"
#include "seg_priv.h"

/* ---------- importer side: connections ---------- */

static struct imp *imp_find(struct smd_segs *s, uint32_t handle)
{
	for (unsigned i = 0; i < s->nimp; i++)
		if (s->imp[i].handle == handle)
			return &s->imp[i];
	return NULL;
}

/* Look up a client's connection: -ENOENT unknown, -EPERM another process's. */
int smd_imp_get(struct smd_segs *s, const struct smd_conn *c, uint32_t handle,
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
void smd_imp_unlink(struct smd_segs *s, struct imp *im)
{
	if (im->efd >= 0)
		close(im->efd);
	*im = s->imp[--s->nimp];
}

/* Tell the process: its connection im changed state (SEG_STATE says how). */
void smd_imp_signal(struct imp *im)
{
	uint64_t one = 1;

	if (im->efd >= 0 && write(im->efd, &one, sizeof(one)) != sizeof(one))
		smio_warn("connection %u: event not delivered", im->handle);
}

/* Close the connection's windows (only those still its own: the driver knows). */
void smd_imp_lut_clear(struct smd *d, struct imp *im)
{
	ntb_mw_unmap(ntb_drv_of(d->host, im->ntb), &im->mw);
}

/* Drop the owner's reference: locally, or by asking the owning daemon. */
void smd_imp_release(struct smd *d, const struct imp *im, bool wait)
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
		smio_warn("releasing segment %#x on host %u: %s", im->segid, im->host,
				strerror(-rc));
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

/*
 * SEG_CONNECT, before the owner is asked: the checks, and a local segment
 * connected at once. Returns 1 when im is complete (local), 0 when the owner
 * must be asked (PEER_SEG_LOOKUP), or -errno.
 */
int smd_seg_connect_begin(struct smd *d, struct smd_conn *c, const struct smio_seg_connect *m,
			  struct imp *im)
{
	struct smd_segs *s = d->segs;
	struct ntb_drv *n = ntb_drv_of(d->host, m->adapter);
	int rc;

	*im = (struct imp){ .cid = c->cid, .segid = m->segid, .ntb = m->adapter, .efd = -1 };
	if (!n)
		return -ENODEV;
	rc = host_of_node(d, m->node_id, &im->host);
	if (rc)
		return rc;
	/* Room first: once the owner counts us, nothing may fail but the LUT. */
	rc = imp_reserve(s);
	if (rc)
		return rc;
	if (im->host == d->host_id) {
		const struct seg *sg;

		/* A local segment: the CPU reaches it directly, no window needed. */
		rc = seg_ref_get(s->tab, m->segid, c->cid, &im->ref, &sg);
		if (rc)
			return rc;
		im->win_addr = sg->phys;
		im->dest = sg->phys;
		im->size = sg->size;
		return 1;
	}
	/* Before the owner counts us: could a window lead there at all? */
	if (!ntb_drv_link_up(n))
		return -ENOLINK;
	return ntb_mw_reachable(n, im->host);   /* -EHOSTUNREACH, -ENODEV (LUT BAR off) */
}

/*
 * The owner counted a reference for us (ps): open the windows. On failure the
 * owner is told to forget it (wait: for its answer; else posted).
 */
int smd_seg_connect_end(struct smd *d, const struct smio_seg_connect *m, struct imp *im,
			const struct smio_peer_seg *ps, bool wait)
{
	struct ntb_drv *n = ntb_drv_of(d->host, m->adapter);
	int rc = -EPROTO;

	im->ref = ps->ref;
	if (ps->segid != m->segid || !n)
		goto undo;
	im->size = ps->size;
	im->dest = ps->addr;
	/* Enough consecutive windows to cover the segment, all or nothing. */
	rc = ntb_mw_map(n, im->host, ps->addr, ps->size, &im->mw);
	if (rc)
		goto undo;
	im->win_addr = im->mw.run_bus;
	im->offset = im->mw.offset;
	/* The table may have grown since begin: check again. */
	rc = imp_reserve(d->segs);
	if (rc) {
		smd_imp_lut_clear(d, im);
		goto undo;
	}
	return 0;
undo:
	/* Nothing half done: the owner forgets the reference we will not use. */
	smd_imp_release(d, im, wait);
	return rc;
}

/* Enter a complete connection in the table and describe it. */
void smd_seg_connect_add(struct smd *d, struct imp *im, struct smio_seg_conn *o,
			 uint32_t *outlen)
{
	struct smd_segs *s = d->segs;

	im->handle = new_handle(s);
	s->imp[s->nimp++] = *im;
	*o = (struct smio_seg_conn){ .conn = im->handle, .host = im->host,
		.win_addr = im->win_addr, .offset = im->offset, .size = im->size,
		.lut_first = im->mw.first, .lut_count = im->mw.count };
	*outlen = sizeof(*o);
}

/* The same, waiting for the owner (a worker: the device service). */
int smd_h_seg_connect(struct smd *d, struct smd_conn *c, const struct smio_seg_connect *m,
		       struct smio_seg_conn *o, uint32_t *outlen)
{
	struct smio_seg_id q = { .segid = m->segid };
	struct smio_peer_seg ps;
	struct imp im;
	uint32_t rlen;
	int rc = smd_seg_connect_begin(d, c, m, &im);

	if (rc < 0)
		return rc;
	if (!rc) {
		rc = smd_peer_request(d, im.host, SMIO_PEER_SEG_LOOKUP, &q, sizeof(q), &ps,
				      sizeof(ps), &rlen, NULL);
		if (rc == -EHOSTDOWN || rc == -EPROTO)
			return -EHOSTUNREACH;
		if (rc)
			return rc;  /* the owner's answer: -ENOENT, -ECONNREFUSED, or a timeout */
		if (rlen != sizeof(ps))
			return -EPROTO;
		rc = smd_seg_connect_end(d, m, &im, &ps, true);
		if (rc)
			return rc;
	}
	smd_seg_connect_add(d, &im, o, outlen);
	return 0;
}

int smd_h_seg_events(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_ref *m,
		     int *out_fd)
{
	struct imp *im;
	int rc = smd_imp_get(d->segs, c, m->conn, &im);

	if (rc)
		return rc;
	if (im->efd < 0) {
		im->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (im->efd < 0)
			return -errno;
		if (smd_imp_dead(im) || im->down)
			smd_imp_signal(im); /* not connected as it was: say so at once */
	}
	*out_fd = im->efd;
	return 0;
}

int smd_h_seg_state(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_ref *m,
		    struct smio_seg_state *o, uint32_t *outlen)
{
	struct imp *im;
	int rc = smd_imp_get(d->segs, c, m->conn, &im);

	if (rc)
		return rc;
	*o = (struct smio_seg_state){ .conn = im->handle, .changes = im->changes,
		.state = im->gone ? SMIO_SEG_DISCONNECTED : im->lost ? SMIO_SEG_LOST :
			 im->down ? SMIO_SEG_NOT_OPERATIONAL : SMIO_SEG_CONNECTED };
	*outlen = sizeof(*o);
	return 0;
}

/* The owner process of segment segid on host died: our connection holding ref is gone. */
void smd_seg_gone(struct smd *d, uint32_t host, uint32_t segid, uint32_t ref)
{
	struct smd_segs *s = d->segs;

	for (unsigned i = 0; i < s->nimp; i++) {
		struct imp *im = &s->imp[i];

		if (im->host != host || im->segid != segid || im->ref != ref || im->borrow ||
		    smd_imp_dead(im))
			continue;
		smd_imp_lut_clear(d, im);
		im->gone = true;
		smd_imp_signal(im);
	}
}

int smd_seg_fab_status_errno(int status)
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

/* A peer's memory object, if we hold an fd of it already. */
int smd_seg_memfd_cached(struct smd *d, uint32_t host, uint32_t mem, int *fd, uint64_t *size)
{
	struct smd_segs *s = d->segs;

	for (unsigned i = 0; i < s->ncache; i++)
		if (s->cache[i].host == host && s->cache[i].mem == mem) {
			*fd = s->cache[i].fd;
			*size = s->cache[i].size;
			return 0;
		}
	return -ENOENT;
}

/* Keep nfd (the peer's answer to PEER_MEMFD) in the cache; *fd is the one kept. */
void smd_seg_memfd_keep(struct smd *d, uint32_t host, uint32_t mem, int nfd, uint64_t size,
			int *fd)
{
	struct smd_segs *s = d->segs;
	uint64_t have;

	/* Filled meanwhile (another request asked too): keep the first. */
	if (!smd_seg_memfd_cached(d, host, mem, fd, &have)) {
		close(nfd);
		return;
	}
	if (s->ncache == MEMFD_CACHE) {
		/* Full: the oldest goes; processes keep their own copies. */
		close(s->cache[0].fd);
		memmove(&s->cache[0], &s->cache[1], (MEMFD_CACHE - 1) * sizeof(s->cache[0]));
		s->ncache--;
	}
	s->cache[s->ncache++] = (struct memfd_ent){ .host = host, .mem = mem, .fd = nfd,
						    .size = size };
	*fd = nfd;
}

/* A peer's memory object as an fd of ours: cached, else fetched (a worker). */
static int peer_memfd(struct smd *d, uint32_t host, uint32_t mem, int *fd, uint64_t *size)
{
	struct smio_peer_memfd q = { .mem = mem }, rep;
	uint32_t rlen;
	int rc, nfd;

	if (!smd_seg_memfd_cached(d, host, mem, fd, size))
		return 0;
	rc = smd_peer_request(d, host, SMIO_PEER_MEMFD, &q, sizeof(q), &rep, sizeof(rep), &rlen,
			      &nfd);
	if (rc)
		return rc == -EPROTO ? -EHOSTDOWN : rc;
	if (nfd < 0 || rlen != sizeof(rep) || rep.mem != mem) {
		if (nfd >= 0)
			close(nfd);
		return -EPROTO;
	}
	smd_seg_memfd_keep(d, host, mem, nfd, rep.size, fd);
	return smd_seg_memfd_cached(d, host, mem, fd, size);
}

/* ---------- for the device service (h_device.c) ---------- */

int smd_seg_import_bar(struct smd *d, struct smd_conn *c, uint32_t borrow, uint32_t host,
		       uint32_t adapter, uint64_t addr, uint64_t size, struct smio_seg_conn *o)
{
	struct smd_segs *s = d->segs;
	struct imp im = { .cid = c->cid, .host = host, .ntb = adapter, .borrow = borrow,
			  .segid = SMIO_SEGID_AUTO, .dest = addr, .size = size, .efd = -1 };
	struct ntb_drv *n = ntb_drv_of(d->host, adapter);
	int rc;

	if (!s || !n)
		return -ENODEV;
	rc = imp_reserve(s);
	if (rc)
		return rc;
	if (host == d->host_id) {
		im.win_addr = addr;     /* our own device: the CPU reaches the BAR directly */
		goto done;
	}
	if (!ntb_drv_link_up(n))
		return -ENOLINK;
	rc = ntb_mw_map(n, host, addr, size, &im.mw);
	if (rc)
		return rc;
	im.win_addr = im.mw.run_bus;
	im.offset = im.mw.offset;
done:
	im.handle = new_handle(s);
	s->imp[s->nimp++] = im;
	*o = (struct smio_seg_conn){ .conn = im.handle, .host = im.host,
		.win_addr = im.win_addr, .offset = im.offset, .size = im.size,
		.lut_first = im.mw.first, .lut_count = im.mw.count };
	return 0;
}

int smd_seg_dev_create(struct smd *d, uint32_t owner, uint64_t io, uint64_t size,
		       uint32_t *segid, uint64_t *rsize)
{
	const struct seg *sg;
	uint32_t id;
	int rc = seg_create(d->segs->tab, owner, SMIO_SEGID_AUTO, size, io ? SEG_F_EMPTY : 0,
			    &sg);

	if (rc)
		return rc;
	id = sg->id;
	*rsize = sg->size;
	if (io) {
		/* Whole pages of the BAR, as seg_create would round RAM. */
		uint64_t len = (size + SMIO_SEG_PAGE - 1) & ~(uint64_t)(SMIO_SEG_PAGE - 1);

		rc = seg_attach(d->segs->tab, owner, id, SEG_MEM_IO, io, len, &sg);
		if (!rc)
			*rsize = sg->size;
	}
	if (!rc)
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
	return smd_h_seg_connect(d, c, &m, o, outlen);
}

unsigned smd_seg_borrow_conns(struct smd *d, uint32_t borrow)
{
	unsigned n = 0;

	for (unsigned i = 0; d->segs && i < d->segs->nimp; i++)
		n += d->segs->imp[i].borrow == borrow;
	return n;
}

int smd_seg_conn_hold(struct smd *d, struct smd_conn *c, uint32_t conn, int delta,
		      uint32_t *owner, uint32_t *host, uint64_t *dest, uint64_t *size,
		      uint32_t *adapter)
{
	struct imp *im;

	if (!d->segs)
		return -ENODEV;
	if (delta < 0) {
		im = imp_find(d->segs, conn);
		if (im && im->devmaps)
			im->devmaps--;
		return 0;
	}
	/* A connection the process made through any of its descriptors. */
	im = imp_find(d->segs, conn);
	if (!im)
		return -ENOENT;
	if (!smd_conn_same_process(d, c, im->cid))
		return -EPERM;
	if (smd_imp_dead(im))
		return -ENOLINK;
	*owner = im->cid;
	*host = im->host;
	*dest = im->dest;
	*size = im->size;
	*adapter = im->ntb;
	im->devmaps++;
	return 0;
}

/*
 * SEG_CONN_P2P (on a worker: a borrowed device's view is its lender's to
 * map). Only the process's own connections, and of this host's memory only
 * device BARs: a lent device's DMA never gets a path into our RAM this way.
 */
int smd_h_seg_conn_p2p(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_p2p *m,
		       struct smio_seg_conn_p2p *o, uint32_t *outlen)
{
	struct pci_dev *pdev = pci_get_dev(d->pci, m->bdf);
	struct imp *im;
	uint32_t host;
	uint64_t dest, size, bus;
	int rc = smd_imp_get(d->segs, c, m->conn, &im);

	if (rc)
		return rc;
	if (!pdev)
		return -ENODEV;
	if (smd_imp_dead(im))
		return -ENOLINK;
	if (!shadow_grant(pdev)) {
		bus = im->win_addr + im->offset;      /* our function: our window */
	} else {
		host = im->host;
		dest = im->dest;
		size = im->size;
		if (host == d->host_id && !smd_in_local_bar(d, dest, size))
			return -EOPNOTSUPP;
		/* The lender's answer may take a while: im may move meanwhile. */
		rc = shadow_p2p_at(pdev, host, dest, size, &bus);
		if (rc)
			return rc;
	}
	*o = (struct smio_seg_conn_p2p){ .conn = m->conn, .bdf = m->bdf, .bus = bus };
	*outlen = sizeof(*o);
	return 0;
}

int smd_seg_conn_ref(struct smd *d, uint32_t conn, uint32_t *segid, uint32_t *ref)
{
	const struct imp *im = d->segs ? imp_find(d->segs, conn) : NULL;

	if (!im || im->borrow || im->host == d->host_id || smd_imp_dead(im))
		return -ENOENT;
	*segid = im->segid;
	*ref = im->ref;
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
	/* Only memory registered with SISCI, and only the process's own: made
	 * through any of its descriptors (Dolphin's are channels of one process). */
	if (!sg || !sg->owner)
		return -ENOENT;
	if (!smd_conn_same_process(d, c, sg->owner))
		return -EPERM;
	if (sg->flags & SEG_F_EMPTY)
		return -ENXIO;
	/* c holds the reference: it goes with c's mappings, or with c. */
	rc = seg_ref_get_for(d->segs->tab, segid, sg->owner, c->cid, ref, &sg);
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
	if (smd_imp_dead(im))
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
			smd_imp_lut_clear(d, im);
			smd_imp_signal(im);
		}
		im->lost = true;
	}
	/* A restarted daemon has new memory objects. */
	smd_dma_peer_lost(d, host);
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
 * Owner cid is going: tell the holders of references to its segments (a
 * copy of the list: the services may walk these tables again meanwhile).
 */
static void owner_gone_notify(struct smd *d, uint32_t cid)
{
	struct smd_segs *s = d->segs;
	struct seg_ref_info *v = NULL;
	unsigned n = seg_owner_refs(s->tab, cid, &v);

	for (unsigned k = 0; k < n; k++) {
		struct smio_peer_seg_ref m = { .segid = v[k].segid, .ref = v[k].ref };
		struct smd_conn *h = smd_conn_find(d, v[k].holder);

		if (!h)
			continue;
		if (h->role == SMIO_ROLE_CLIENT)
			smd_seg_gone(d, d->host_id, m.segid, m.ref);    /* an importer of this host */
		else if (h->role == SMIO_ROLE_PEER && !h->outgoing)
			/* Queued: a peer that does not take it loses the connection. */
			smd_conn_send(d, h->cid, SMIO_PEER_SEG_GONE, 0, 0, 0, &m, sizeof(m), -1);
	}
	free(v);
}

void smd_seg_conn_closed(struct smd *d, struct smd_conn *c)
{
	struct smd_segs *s = d->segs;
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
		smd_imp_unlink(s, &s->imp[i]);
		if (!smd_imp_dead(&im))
			smd_imp_lut_clear(d, &im);
		smd_imp_release(d, &im, false);
	}
	/* References peers held through this connection, then its own segments
	 * (those still referenced linger until the last reference goes): their
	 * importers learn that the owner is gone. */
	seg_holder_gone(s->tab, cid);
	owner_gone_notify(d, cid);
	seg_owner_gone(s->tab, cid);
	smd_seg_owner_forget(d, cid, SEG_ID_AUTO);
	fab_host_unlock(d->host);
}
