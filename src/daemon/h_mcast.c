// SPDX-License-Identifier: MIT
/*
 * The daemon's multicast service (MC_*; docs/sisci.md, "Multicast"): SISCI
 * broadcast segments on the cluster switches' multicast groups.
 *
 *  - The switches' registers (fabric/mcast.h) are shared by every host of
 *    the cluster: one file, DIR/mcast.regs, that each daemon maps. A daemon
 *    that starts forgets whatever an earlier run of its host left there.
 *  - MC_JOIN subscribes a local segment of the caller's: the adapter's
 *    overlay for the group maps onto the segment's memory, the switch port
 *    joins the group (and this host marks the group used). MC_LEAVE undoes it.
 *  - MC_CONNECT gives the caller a look-up-table window onto the group;
 *    MC_WRITE (bytes in the message) and MC_DMA (from a segment of the
 *    caller's) are posted writes through it, which the switches replicate
 *    (they run on a worker: the fan-out steps on other hosts).
 *  - Everything a connection made goes when it closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "fabric/mcast.h"
#include "fabric/ntb.h"
#include "handlers.h"
#include "seg_priv.h"
#include "util/log.h"

enum { MC_JOINED = 1, MC_CONNECTED };
#define MC_HANDLE_BASE 0x40000000u

struct mc_ent {
	uint8_t kind;
	uint32_t cid;             /* the client connection that made it */
	uint32_t handle;          /* MC_CONNECTED */
	uint32_t group, ntb, segid;
	struct ntb_mw mw;         /* MC_CONNECTED: the window */
	struct fab_mc_port port;
};

struct smd_mc {
	struct fab_mc_state *regs;
	struct mc_ent *e;
	unsigned n, cap;
	uint32_t next_handle;
};

int smd_mc_init(struct smd *d)
{
	bool any = false;
	void *p;
	int rc;

	for (uint32_t i = 0; i < d->topo->ncswitches; i++)
		any |= d->topo->cswitches[i].mc_groups > 0;
	d->mc = calloc(1, sizeof(*d->mc));
	if (!d->mc)
		return -ENOMEM;
	if (!any)
		return 0;             /* no switch has groups: nothing to share */
	rc = smd_map_shared_file(d, "mcast.regs", sizeof(*d->mc->regs), &p, NULL);
	if (rc)
		return rc;
	d->mc->regs = p;
	d->world.mc = p;
	return 0;
}

/* After the host exists: what an earlier run of this host left in the switches goes. */
void smd_mc_host_ready(struct smd *d)
{
	if (d->world.mc)
		fab_mc_host_reset(&d->world, d->host->index);
}

static void ent_undo(struct smd *d, struct mc_ent *e)
{
	struct smd_mc *mc = d->mc;
	bool others = false;

	if (e->kind == MC_JOINED)
		fab_mc_leave(d->host, e->ntb, e->group);
	else
		ntb_mw_unmap(ntb_drv_of(d->host, e->ntb), &e->mw);
	/* The host's mark on the group stays while anything of ours uses it. */
	for (unsigned i = 0; i < mc->n; i++)
		if (&mc->e[i] != e && mc->e[i].group == e->group &&
		    mc->e[i].port.root == e->port.root)
			others = true;
	if (!others)
		fab_mc_group_put(&d->world, &e->port, d->host->index, e->group);
	*e = mc->e[--mc->n];
}

void smd_mc_fini(struct smd *d)
{
	if (!d->mc)
		return;
	if (d->host)
		while (d->mc->n)
			ent_undo(d, &d->mc->e[d->mc->n - 1]);
	if (d->mc->regs)
		munmap(d->mc->regs, sizeof(*d->mc->regs));
	d->world.mc = NULL;
	free(d->mc->e);
	free(d->mc);
	d->mc = NULL;
}

void smd_mc_conn_closed(struct smd *d, struct smd_conn *c)
{
	for (unsigned i = d->mc ? d->mc->n : 0; i-- > 0;)
		if (d->mc->e[i].cid == c->cid)
			ent_undo(d, &d->mc->e[i]);
}

static struct mc_ent *ent_new(struct smd *d)
{
	struct smd_mc *mc = d->mc;

	if (mc->n == mc->cap) {
		unsigned cap = mc->cap ? 2 * mc->cap : 16;
		struct mc_ent *e = realloc(mc->e, cap * sizeof(*e));

		if (!e)
			return NULL;
		mc->e = e;
		mc->cap = cap;
	}
	memset(&mc->e[mc->n], 0, sizeof(mc->e[0]));
	return &mc->e[mc->n++];
}

static int port_of(struct smd *d, uint32_t adapter, uint32_t group, struct fab_mc_port *p)
{
	int rc;

	if (!d->world.mc)
		return -EOPNOTSUPP;
	if (adapter >= d->host->nntbs)
		return -ENODEV;
	rc = fab_mc_port_of(d->topo, d->host->index, adapter, p);
	if (!rc && group >= p->s->mc_groups)
		rc = -ERANGE;
	return rc;
}

static int h_join(struct smd *d, struct smd_conn *c, const struct smio_mc_join *m)
{
	const struct seg *sg = seg_lookup(d->segs->tab, m->segid);
	struct fab_mc_port p;
	struct mc_ent *e;
	int rc;

	if (!sg || sg->owner != c->cid)
		return -ENOENT;
	if (!sg->size || !sg->phys)
		return -EINVAL;       /* an empty segment has nothing to receive into */
	rc = port_of(d, m->adapter, m->group, &p);
	if (rc)
		return rc;
	if (sg->size > p.s->mc_group_size)
		return -EFBIG;
	e = ent_new(d);
	if (!e)
		return -ENOMEM;
	rc = fab_mc_join(d->host, m->adapter, m->group, sg->phys, sg->size);
	if (!rc)
		rc = fab_mc_group_get(&d->world, &p, d->host->index, m->group);
	if (rc) {
		if (rc != -EBUSY)
			fab_mc_leave(d->host, m->adapter, m->group);
		d->mc->n--;
		return rc;
	}
	*e = (struct mc_ent){ .kind = MC_JOINED, .cid = c->cid, .group = m->group,
			      .ntb = m->adapter, .segid = m->segid, .port = p };
	smio_info("segment %#x joined multicast group %u of %s through ntb%u", m->segid,
		  m->group, p.s->name, m->adapter);
	return 0;
}

static int h_leave(struct smd *d, struct smd_conn *c, const struct smio_mc_join *m)
{
	for (unsigned i = 0; i < d->mc->n; i++) {
		struct mc_ent *e = &d->mc->e[i];

		if (e->kind == MC_JOINED && e->cid == c->cid && e->group == m->group &&
		    e->ntb == m->adapter && e->segid == m->segid) {
			ent_undo(d, e);
			return 0;
		}
	}
	return -ENOENT;
}

static int h_connect(struct smd *d, struct smd_conn *c, const struct smio_mc_connect *m,
		     struct smio_mc_conn *o, uint32_t *outlen)
{
	struct ntb_drv *drv = ntb_drv_of(d->host, m->adapter);
	struct fab_mc_port p;
	struct mc_ent *e;
	uint64_t ga;
	int rc = port_of(d, m->adapter, m->group, &p);

	if (rc)
		return rc;
	if (!drv)
		return -ENODEV;
	e = ent_new(d);
	if (!e)
		return -ENOMEM;
	ga = fab_mc_group_addr(p.s, m->group);
	rc = ntb_mw_map(drv, NTB_DEST_MCAST, ga, p.s->mc_group_size, &e->mw);
	if (!rc)
		rc = fab_mc_group_get(&d->world, &p, d->host->index, m->group);
	if (rc) {
		ntb_mw_unmap(drv, &e->mw);
		d->mc->n--;
		return rc;
	}
	e->kind = MC_CONNECTED;
	e->cid = c->cid;
	/* Apart from the segment service's handles: a device mapping asks both. */
	e->handle = MC_HANDLE_BASE + ++d->mc->next_handle;
	e->group = m->group;
	e->ntb = m->adapter;
	e->port = p;
	*o = (struct smio_mc_conn){ .conn = e->handle, .group = m->group, .bus = e->mw.bus,
				    .size = p.s->mc_group_size, .mc_addr = ga };
	*outlen = sizeof(*o);
	return 0;
}

static struct mc_ent *conn_get(struct smd *d, struct smd_conn *c, uint32_t handle)
{
	for (unsigned i = 0; d->mc && i < d->mc->n; i++)
		if (d->mc->e[i].kind == MC_CONNECTED && d->mc->e[i].handle == handle &&
		    (d->mc->e[i].cid == c->cid || smd_conn_same_process(d, c, d->mc->e[i].cid)))
			return &d->mc->e[i];
	return NULL;
}

bool smd_mc_seg_joined(struct smd *d, struct smd_conn *c, uint32_t segid)
{
	for (unsigned i = 0; d->mc && i < d->mc->n; i++)
		if (d->mc->e[i].kind == MC_JOINED && d->mc->e[i].cid == c->cid &&
		    d->mc->e[i].segid == segid)
			return true;
	return false;
}

int smd_mc_conn_info(struct smd *d, struct smd_conn *c, uint32_t handle, uint64_t *addr,
		     uint64_t *size)
{
	struct mc_ent *e = conn_get(d, c, handle);

	if (!e)
		return -ENOENT;
	*addr = fab_mc_group_addr(e->port.s, e->group);
	*size = e->port.s->mc_group_size;
	return 0;
}

/* The posted writes themselves (on a worker: receivers on other hosts). */
static int mc_write(struct smd *d, const struct mc_ent *e, uint64_t off, const void *buf,
		    uint64_t len, uint32_t *receivers)
{
	uint32_t n = 0;
	int rc;

	if (off >= e->port.s->mc_group_size || len > e->port.s->mc_group_size - off)
		return -ERANGE;
	rc = fab_mc_write(d->host, e->ntb, fab_mc_group_addr(e->port.s, e->group) + off, buf,
			  len, &n);
	*receivers = n;
	return rc < 0 ? rc : rc ? -EIO : 0;
}

static int h_mc_write(struct smd_req *r)
{
	const struct smio_mc_write *m = r->p;
	struct smio_mc_written *o = r->out;
	struct mc_ent *e = conn_get(r->d, r->c, m->conn), ec;
	uint32_t n = 0;
	int rc;

	if (!e)
		return -ENOENT;
	if (r->len != sizeof(*m) + m->len)
		return -EINVAL;
	/* The table may change while a step waits for a peer (the lock is let go). */
	ec = *e;
	rc = mc_write(r->d, &ec, m->offset, (const uint8_t *)r->p + sizeof(*m), m->len, &n);
	if (rc)
		return rc;
	*o = (struct smio_mc_written){ .receivers = n, .len = m->len };
	r->outlen = sizeof(*o);
	return 0;
}

/* The adapter's DMA engine: a segment of the caller's to the group, in chunks. */
static int h_mc_dma(struct smd_req *r)
{
	const struct smio_mc_write *m = r->p;
	struct smio_mc_written *o = r->out;
	struct smd *d = r->d;
	struct mc_ent *e = conn_get(d, r->c, m->conn), ec;
	const struct seg *sg = seg_lookup(d->segs->tab, m->segid);
	uint64_t done = 0, chunk = 64 * 1024, phys;
	uint8_t *buf;
	uint32_t n = 0;
	int rc = 0;

	if (!e || !sg || sg->owner != r->c->cid)
		return -ENOENT;
	if (r->len != sizeof(*m) || m->seg_offset >= sg->size || m->len > sg->size - m->seg_offset)
		return -EINVAL;
	/* Both may change while a step waits for a peer (the lock is let go). */
	ec = *e;
	phys = sg->phys;
	buf = malloc(chunk);
	if (!buf)
		return -ENOMEM;
	while (!rc && done < m->len) {
		uint64_t k = m->len - done < chunk ? m->len - done : chunk;

		rc = fab_access(d->host, FAB_RID_CPU, phys + m->seg_offset + done, buf, k, false);
		if (rc > 0)
			rc = -EIO;
		if (!rc)
			rc = mc_write(d, &ec, m->offset + done, buf, k, &n);
		done += k;
	}
	free(buf);
	if (rc)
		return rc;
	*o = (struct smio_mc_written){ .receivers = n, .len = m->len };
	r->outlen = sizeof(*o);
	return 0;
}

/* The fan-out tree for `smartio route` (on the loop: only shared registers are read). */
static int h_tree(struct smd_req *r)
{
	const struct smio_mc_tree_req *m = r->p;
	struct fab_mc_tree *tr;
	struct smio_mc_tree *o = r->out;
	uint8_t *p = (uint8_t *)(o + 1);
	int rc;

	if (m->ntb >= r->d->host->nntbs)
		return -ENODEV;
	tr = malloc(sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	rc = fab_mc_tree(&r->d->world, r->d->host->index, m->ntb, m->addr, tr);
	if (!rc && sizeof(*o) + tr->nrecv * sizeof(struct smio_mc_recv) +
		   tr->nlinks * sizeof(struct smio_mc_link) > SMIO_MAX_PAYLOAD)
		rc = -E2BIG;
	if (rc) {
		free(tr);
		return rc;
	}
	*o = (struct smio_mc_tree){ .group = tr->group, .ingress_csw = tr->ingress_csw,
				    .nrecv = tr->nrecv, .nlinks = tr->nlinks, .offset = tr->off };
	for (uint32_t i = 0; i < tr->nrecv; i++, p += sizeof(struct smio_mc_recv)) {
		struct smio_mc_recv v = { .host = tr->recv[i].host, .ntb = tr->recv[i].ntb,
					  .csw = tr->recv[i].csw, .depth = tr->recv[i].depth };

		memcpy(p, &v, sizeof(v));
	}
	for (uint32_t i = 0; i < tr->nlinks; i++, p += sizeof(struct smio_mc_link)) {
		struct smio_mc_link l = { .from_csw = tr->links[i].from_csw,
			.to_csw = tr->links[i].to_csw, .host = tr->links[i].host,
			.gen = tr->links[i].gen, .width = tr->links[i].width };

		memcpy(p, &l, sizeof(l));
	}
	r->outlen = (uint32_t)(p - (uint8_t *)o);
	free(tr);
	return 0;
}

int h_mcast(struct smd_req *r)
{
	struct smd *d = r->d;

	if (!d->mc)
		return -EOPNOTSUPP;
	switch (r->type) {
	case SMIO_MC_JOIN:
		return h_join(d, r->c, r->p);
	case SMIO_MC_LEAVE:
		return h_leave(d, r->c, r->p);
	case SMIO_MC_CONNECT:
		return h_connect(d, r->c, r->p, r->out, &r->outlen);
	case SMIO_MC_DISCONNECT: {
		struct mc_ent *e = conn_get(d, r->c,
					    ((const struct smio_seg_conn_ref *)r->p)->conn);

		if (!e)
			return -ENOENT;
		ent_undo(d, e);
		return 0;
	}
	case SMIO_MC_WRITE:
		return h_mc_write(r);
	case SMIO_MC_DMA:
		return h_mc_dma(r);
	case SMIO_MC_TREE:
		return h_tree(r);
	default:
		return -EOPNOTSUPP;
	}
}
