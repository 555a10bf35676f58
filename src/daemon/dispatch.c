// SPDX-License-Identifier: MIT
/* smartiod's request handlers, the handler table (who may send what) and dispatch. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "host/ntb_drv.h"

/* ---------- handlers ---------- */

struct req {
	struct smd *d;
	struct smd_conn *c;
	const void *p;             /* validated payload */
	uint32_t len;              /* its length */
	uint16_t type;
	void *out;                 /* reply payload buffer */
	uint32_t outlen;
	int out_fd;
};

static struct fab_ntb *ntb_at(struct smd *d, uint32_t idx)
{
	return idx < d->host->nntbs ? d->host->ntbs[idx] : NULL;
}

static int h_hello(struct req *r)
{
	const struct smio_hello *m = r->p;
	struct smio_hello_reply *o = r->out;

	if (m->version != SMIO_VERSION)
		return -EPROTONOSUPPORT;
	if (m->role != SMIO_ROLE_PEER && m->host != r->d->host_id)
		return -EXDEV;     /* the process belongs to another host */
	if (m->role == SMIO_ROLE_PEER && (topo_host_index(r->d->topo, m->host) < 0 ||
					  m->host == r->d->host_id))
		return -EINVAL;
	r->c->role = m->role;
	r->c->host = m->host;
	r->c->pid = m->pid;
	*o = (struct smio_hello_reply){ .host = r->d->host_id,
		.node_id = r->d->host->t->node_id, .version = SMIO_VERSION };
	r->outlen = sizeof(*o);
	return 0;
}

static int h_status(struct req *r)
{
	struct smd *d = r->d;
	struct smio_status *o = r->out;
	struct timespec now;
	unsigned clients = 0, peers = 0;

	for (unsigned i = 0; i < d->nconns; i++) {
		if (d->conns[i].fd < 0)
			continue;
		if (d->conns[i].role == SMIO_ROLE_PEER)
			peers++;
		else
			clients++;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	memset(o, 0, sizeof(*o));
	o->host = d->host_id;
	o->node_id = d->host->t->node_id;
	o->pid = (uint32_t)getpid();
	o->nfuncs = d->host->nfuncs;
	o->ram_size = d->host->t->ram_size;
	o->uptime_ns = (uint64_t)(now.tv_sec - d->started.tv_sec) * 1000000000ull +
		       (uint64_t)(now.tv_nsec - d->started.tv_nsec);
	o->iommu = iommu_enabled(d->host->iommu);
	o->nntbs = d->host->nntbs;
	o->nclients = clients;
	o->npeers = peers;
	fab_route_cache_stats(d->host->cache, &o->route_hits, &o->route_misses);
	o->iommu_faults = iommu_fault_count(d->host->iommu);
	o->epoch = d->world.epoch;
	snprintf(o->name, sizeof(o->name), "%s", d->host->t->name);
	r->outlen = sizeof(*o);
	return 0;
}

static int h_shutdown(struct req *r)
{
	r->d->stop = true;
	return 0;
}

static int h_func_list(struct req *r)
{
	struct fab_host *h = r->d->host;
	struct smio_func_list *o = r->out;

	o->n = 0;
	o->pad = 0;
	for (uint32_t i = 0; i < h->nfuncs && o->n < SMIO_MAX_FUNCS; i++) {
		const struct fab_func *f = h->funcs[i];
		struct smio_func_info *fi = &o->f[o->n++];

		memset(fi, 0, sizeof(*fi));
		fi->bdf = fab_func_bdf(f);
		fi->kind = (uint8_t)f->kind;
		fi->lendable = f->lendable;
		fi->parent_bdf = f->parent ? fab_func_bdf(f->parent) : 0xffff;
		snprintf(fi->name, sizeof(fi->name), "%s", f->name);
		snprintf(fi->model, sizeof(fi->model), "%s", f->model);
	}
	smd_lend_func_list(r->d, o);   /* borrowed devices: shadows behind the NTB */
	r->outlen = (uint32_t)(sizeof(*o) + o->n * sizeof(o->f[0]));
	return 0;
}

static int h_cfg_read(struct req *r)
{
	const struct smio_cfg *m = r->p;
	struct smio_cfg *o = r->out;
	uint32_t v;
	int rc = smd_lend_shadow_cfg(r->d, m->bdf, m->off, m->size, &v);   /* a shadow? */

	if (rc == -ENODEV)
		rc = fab_cfg_access_read(r->d->host, m->bdf, m->off, m->size, &v);

	if (rc)
		return rc;
	*o = *m;
	o->value = v;
	r->outlen = sizeof(*o);
	return 0;
}

static int h_cfg_write(struct req *r)
{
	const struct smio_cfg *m = r->p;

	return fab_cfg_access_write(r->d->host, m->bdf, m->off, m->size, m->value);
}

static int h_cfg_dump(struct req *r)
{
	const struct smio_bdf *m = r->p;
	struct fab_func *f = fab_func_by_bdf(r->d->host, m->bdf);

	if (!f) {
		int rc = smd_lend_shadow_dump(r->d, m->bdf, r->out);   /* a shadow? */

		if (!rc)
			r->outlen = FAB_CFG_SIZE;
		return rc;
	}
	memcpy(r->out, f->cfg.data, FAB_CFG_SIZE);
	r->outlen = FAB_CFG_SIZE;
	return 0;
}

static int h_route(struct req *r)
{
	const struct smio_route_req *m = r->p;
	struct fab_route *rt = malloc(sizeof(*rt));
	int rc;

	if (!rt)
		return -ENOMEM;
	if (m->nocache)
		rc = fab_route_resolve_uncached(r->d->host, m->rid, m->addr, m->len, m->write, rt);
	else
		rc = fab_route_resolve(r->d->host, m->rid, m->addr, m->len, m->write, rt);
	if (!rc)
		smd_route_to_wire(rt, NULL, r->out, &r->outlen);
	free(rt);
	return rc;
}

static int h_map(struct req *r)
{
	const struct smio_route_req *m = r->p;
	struct smio_map_reply *o = r->out;
	struct fab_route *rt = malloc(sizeof(*rt));
	const struct fab_mem *mem;
	int rc;

	if (!rt)
		return -ENOMEM;
	rc = fab_route_resolve(r->d->host, m->rid, m->addr, m->len, m->write, rt);
	if (rc)
		goto out;
	memset(o, 0, sizeof(*o));
	o->status = rt->status;
	r->outlen = sizeof(*o);
	if (rt->status != FAB_OK)
		goto out;
	if (rt->tgt.host != r->d->host_id) {
		/* Remote memory is handed over by the owning daemon (libsisci, later). */
		rc = -EREMOTE;
		goto out;
	}
	mem = &r->d->host->mems[rt->tgt.mem];
	o->host = rt->tgt.host;
	o->mem = rt->tgt.mem;
	o->offset = rt->tgt.offset;
	o->len = rt->tgt.len;
	o->fd_size = mem->size;
	r->out_fd = mem->fd;
out:
	free(rt);
	return rc;
}

static int h_ntb_info(struct req *r)
{
	const struct smio_ntb_ref *m = r->p;
	struct smio_ntb_info *o = r->out;
	struct fab_ntb *n = ntb_at(r->d, m->ntb);

	if (!n)
		return -ENOENT;
	memset(o, 0, sizeof(*o));
	o->ntb = m->ntb;
	o->bdf = fab_func_bdf(n->fn);
	o->link_up = n->link_up;
	o->peer_kind = (uint8_t)n->t->peer_kind;
	o->bar_addr = fab_func_bar_addr(n->fn, NTB_BAR_LUT);
	o->bar_size = n->t->bar_size;
	o->win_size = ntb_mw_window(ntb_drv_of(r->d->host, m->ntb));
	o->lut_entries = n->nlut;
	o->lut_used = ntb_lut_used(n);
	o->rid_entries = n->nrid;
	o->rid_used = ntb_rid_used(n);
	o->doorbells = n->t->doorbells;
	o->scratchpads = n->t->scratchpads;
	o->db_pending = n->db_pending;
	o->dma_channels = n->t->dma_channels;
	snprintf(o->name, sizeof(o->name), "%s", n->fn->name);
	r->outlen = sizeof(*o);
	return 0;
}

/* Tables are programmed through the host's NTB driver (host/ntb_drv.h). */
static int h_ntb_lut_set(struct req *r)
{
	const struct smio_ntb_lut *m = r->p;
	struct smio_ntb_lut *o = r->out;
	struct ntb_drv *n = ntb_drv_of(r->d->host, m->ntb);
	uint32_t entry = m->entry;    /* UINT32_MAX (NTB_MW_ANY): the first free one */
	int rc;

	if (!n)
		return -ENOENT;
	rc = ntb_mw_set(n, &entry, m->dest_host, m->dest_addr);
	if (rc)
		return rc;
	*o = *m;
	o->entry = entry;
	r->outlen = sizeof(*o);
	return 0;
}

static int h_ntb_lut_clear(struct req *r)
{
	const struct smio_ntb_lut *m = r->p;
	struct ntb_drv *n = ntb_drv_of(r->d->host, m->ntb);

	return n ? ntb_mw_clear(n, m->entry) : -ENOENT;
}

static int h_ntb_rid(struct req *r, bool add)
{
	const struct smio_ntb_rid *m = r->p;
	struct ntb_drv *n = ntb_drv_of(r->d->host, m->ntb);

	if (!n)
		return -ENOENT;
	/* The admin's own reference: never one a service holds. */
	return add ? ntb_rid_admin_add(n, m->rid) : ntb_rid_admin_del(n, m->rid);
}

static int h_ntb_rid_add(struct req *r) { return h_ntb_rid(r, true); }
static int h_ntb_rid_del(struct req *r) { return h_ntb_rid(r, false); }

static int h_ntb_link(struct req *r)
{
	const struct smio_ntb_link *m = r->p;
	struct fab_ntb *n = ntb_at(r->d, m->ntb);

	if (!n)
		return -ENOENT;
	if (m->up && n->t->peer_kind == TOPO_PEER_NONE)
		return -ENOTCONN;  /* no cable: the link cannot train */
	ntb_set_link(n, m->up);
	return 0;
}

/* Ring the far side of a back-to-back cable (the peer's adapter latches the bits). */
static int h_ntb_db_ring(struct req *r)
{
	const struct smio_ntb_db *m = r->p;
	struct fab_ntb *n = ntb_at(r->d, m->ntb);
	struct smio_ntb_db peer;
	const struct topo_host *ph;
	int fd, rc;

	if (!n)
		return -ENOENT;
	if (n->t->peer_kind != TOPO_PEER_NTB)
		return -EDESTADDRREQ; /* cluster switch: doorbells need a destination node */
	if (!n->link_up)
		return -ENOLINK;
	if (!m->bits || (n->t->doorbells < 32 && (m->bits >> n->t->doorbells)))
		return -EINVAL;
	ph = &r->d->topo->hosts[n->t->peer_host];
	peer = (struct smio_ntb_db){ .ntb = n->t->peer_ntb, .bits = m->bits };
	fd = smio_connect(r->d->dir, ph->id, SMD_PEER_TIMEOUT);
	if (fd < 0)
		return fd;
	{
		struct smio_hello hello = { .role = SMIO_ROLE_PEER, .host = r->d->host_id,
					    .pid = (uint32_t)getpid(), .version = SMIO_VERSION };
		struct smio_hello_reply hr;
		uint32_t rlen;

		rc = smio_call(fd, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen,
			       NULL, SMD_PEER_TIMEOUT);
		if (!rc)
			rc = smio_call(fd, SMIO_PEER_DB, &peer, sizeof(peer), NULL, 0, &rlen, NULL,
				       SMD_PEER_TIMEOUT);
	}
	close(fd);
	if (!rc)
		n->db_rung++;
	return rc;
}

static int h_ntb_spad(struct req *r)
{
	const struct smio_ntb_spad *m = r->p;
	struct smio_ntb_spad *o = r->out;
	struct fab_ntb *n = ntb_at(r->d, m->ntb);
	uint32_t v = m->value;
	int rc;

	if (!n)
		return -ENOENT;
	rc = m->write ? ntb_spad_write(n, m->idx, m->value) : ntb_spad_read(n, m->idx, &v);
	if (rc)
		return rc;
	*o = *m;
	o->value = v;
	r->outlen = sizeof(*o);
	return 0;
}

static int h_iommu_domain(struct req *r)
{
	const struct smio_iommu *m = r->p;
	struct smio_iommu *o = r->out;
	struct fab_iommu *mmu = r->d->host->iommu;
	int rc;

	if (!iommu_enabled(mmu))
		return -ENODEV;
	*o = *m;
	switch (m->op) {
	case SMIO_IOMMU_ALLOC:
		rc = iommu_domain_alloc(mmu);
		if (rc > 0) {
			o->domain = (uint32_t)rc;
			rc = 0;
		}
		break;
	case SMIO_IOMMU_FREE:
		rc = iommu_domain_free(mmu, m->domain);
		break;
	case SMIO_IOMMU_ATTACH:
		rc = iommu_attach(mmu, m->rid, m->domain);
		break;
	case SMIO_IOMMU_DETACH:
		rc = iommu_detach(mmu, m->rid);
		break;
	default:
		rc = -EINVAL;
	}
	if (!rc)
		r->outlen = sizeof(*o);
	return rc;
}

static int h_iommu_map(struct req *r)
{
	const struct smio_iommu_map *m = r->p;

	if (!iommu_enabled(r->d->host->iommu))
		return -ENODEV;
	return iommu_map(r->d->host->iommu, m->domain, m->iova, m->paddr, m->size, m->prot);
}

static int h_iommu_unmap(struct req *r)
{
	const struct smio_iommu_map *m = r->p;

	if (!iommu_enabled(r->d->host->iommu))
		return -ENODEV;
	return iommu_unmap(r->d->host->iommu, m->domain, m->iova, m->size);
}

static int h_iommu_faults(struct req *r)
{
	struct smio_iommu_faults *o = r->out;
	struct iommu_fault f[IOMMU_FAULT_LOG];
	unsigned n = iommu_faults(r->d->host->iommu, f, IOMMU_FAULT_LOG);

	memset(o, 0, sizeof(*o));
	o->total = iommu_fault_count(r->d->host->iommu);
	o->n = n;
	for (unsigned i = 0; i < n; i++)
		o->f[i] = (struct smio_iommu_fault){ .rid = f[i].rid, .write = f[i].write,
			.reason = f[i].reason, .domain = f[i].domain, .iova = f[i].iova,
			.seq = f[i].seq };
	r->outlen = (uint32_t)(sizeof(*o) + n * sizeof(o->f[0]));
	return 0;
}

/* The host's drivers answer these (h_nvme.c, h_accel.c). */
static int h_nvme_admin(struct req *r)
{
	return smd_h_nvme_admin(r->d, r->p, r->len, r->out, &r->outlen);
}

static int h_nvme_io(struct req *r)
{
	return smd_h_nvme_io(r->d, r->p, r->len, r->out, &r->outlen);
}

static int h_accel_op(struct req *r)
{
	return smd_h_accel_op(r->d, r->p, r->len, r->out, &r->outlen);
}

/* SISCI segments (h_segment.c). */
static int h_segment(struct req *r)
{
	return smd_h_segment(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* SmartIO devices (h_device.c). */
static int h_device(struct req *r)
{
	return smd_h_device(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* Device Lending (h_lend.c). */
static int h_lend(struct req *r)
{
	return smd_h_lend(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* SISCI interrupts (h_intr.c). */
static int h_intr(struct req *r)
{
	return smd_h_intr(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* SISCI DMA queues (h_dma.c). */
static int h_dma(struct req *r)
{
	return smd_h_dma(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

static int h_peer_step(struct req *r)
{
	const struct smio_step *m = r->p;
	struct fab_step in = { .host = r->d->host_id, .from_ntb = true,
			       .ntb_index = m->ntb_index, .write = m->write,
			       .addr = m->addr, .len = m->len };
	struct fab_forward fwd = { 0 };
	struct fab_route *rt;
	int rc;

	if (m->host != r->d->host_id)
		return -EXDEV;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	rt->ntb_hops = m->ntb_hops;
	rc = fab_route_step_local(r->d->host, &in, rt, &fwd);
	if (!rc)
		smd_route_to_wire(rt, &fwd, r->out, &r->outlen);
	free(rt);
	return rc;
}

static int h_peer_invalidate(struct req *r)
{
	__atomic_fetch_add(&r->d->world.epoch, 1, __ATOMIC_ACQ_REL);
	return 0;
}

static int h_peer_db(struct req *r)
{
	const struct smio_ntb_db *m = r->p;
	struct fab_ntb *n = ntb_at(r->d, m->ntb);

	return n ? ntb_db_ring(n, m->bits) : -ENOENT;
}

/* Who may send what, and which messages are one-way, is the message list's
 * (smartio/proto/msgs.h: smio_msg_roles, smio_msg_flags). */
static int (*const handlers[SMIO_TYPE_MAX])(struct req *r) = {
	[SMIO_STATUS] = h_status,
	[SMIO_SHUTDOWN] = h_shutdown,
	[SMIO_FUNC_LIST] = h_func_list,
	[SMIO_CFG_READ] = h_cfg_read,
	[SMIO_CFG_WRITE] = h_cfg_write,
	[SMIO_CFG_DUMP] = h_cfg_dump,
	[SMIO_ROUTE] = h_route,
	[SMIO_MAP] = h_map,
	[SMIO_NTB_INFO] = h_ntb_info,
	[SMIO_NTB_LUT_SET] = h_ntb_lut_set,
	[SMIO_NTB_LUT_CLEAR] = h_ntb_lut_clear,
	[SMIO_NTB_RID_ADD] = h_ntb_rid_add,
	[SMIO_NTB_RID_DEL] = h_ntb_rid_del,
	[SMIO_NTB_LINK] = h_ntb_link,
	[SMIO_NTB_DB_RING] = h_ntb_db_ring,
	[SMIO_NTB_SPAD] = h_ntb_spad,
	[SMIO_IOMMU_DOMAIN] = h_iommu_domain,
	[SMIO_IOMMU_MAP] = h_iommu_map,
	[SMIO_IOMMU_UNMAP] = h_iommu_unmap,
	[SMIO_IOMMU_FAULTS] = h_iommu_faults,
	[SMIO_NVME_ADMIN] = h_nvme_admin,
	[SMIO_NVME_IO] = h_nvme_io,
	[SMIO_ACCEL_OP] = h_accel_op,
	[SMIO_PEER_STEP] = h_peer_step,
	[SMIO_PEER_INVALIDATE] = h_peer_invalidate,
	[SMIO_PEER_DB] = h_peer_db,
	[SMIO_SEG_CREATE] = h_segment,
	[SMIO_SEG_REMOVE] = h_segment,
	[SMIO_SEG_AVAILABLE] = h_segment,
	[SMIO_SEG_MAP_LOCAL] = h_segment,
	[SMIO_SEG_CONNECT] = h_segment,
	[SMIO_SEG_MAP_REMOTE] = h_segment,
	[SMIO_SEG_DISCONNECT] = h_segment,
	[SMIO_SEG_ATTACH] = h_segment,
	[SMIO_SEG_EVENTS] = h_segment,
	[SMIO_SEG_STATE] = h_segment,
	[SMIO_PEER_SEG_GONE] = h_segment,
	[SMIO_PEER_SEG_LOOKUP] = h_segment,
	[SMIO_PEER_SEG_RELEASE] = h_segment,
	[SMIO_PEER_MEMFD] = h_segment,
	[SMIO_INTR_CREATE] = h_intr,
	[SMIO_INTR_REMOVE] = h_intr,
	[SMIO_INTR_CONNECT] = h_intr,
	[SMIO_INTR_TRIGGER] = h_intr,
	[SMIO_INTR_RECEIVE] = h_intr,
	[SMIO_INTR_DISCONNECT] = h_intr,
	[SMIO_PEER_INTR_LOOKUP] = h_intr,
	[SMIO_PEER_INTR_FIRE] = h_intr,
	[SMIO_DMA_QUEUE_CREATE] = h_dma,
	[SMIO_DMA_QUEUE_REMOVE] = h_dma,
	[SMIO_DMA_START] = h_dma,
	[SMIO_DMA_STATE] = h_dma,
	[SMIO_DEV_LIST] = h_device,
	[SMIO_DEV_BORROW] = h_device,
	[SMIO_DEV_RETURN] = h_device,
	[SMIO_DEV_RELEASE_EXCL] = h_device,
	[SMIO_DEV_SEG_CONNECT] = h_device,
	[SMIO_DEV_MAP_LOCAL] = h_device,
	[SMIO_DEV_MAP_REMOTE] = h_device,
	[SMIO_DEV_UNMAP] = h_device,
	[SMIO_DEV_RID] = h_device,
	[SMIO_DEV_SEG_CREATE] = h_device,
	[SMIO_PEER_DEV_LIST] = h_device,
	[SMIO_PEER_DEV_BORROW] = h_device,
	[SMIO_PEER_DEV_RETURN] = h_device,
	[SMIO_PEER_DEV_RELEASE_EXCL] = h_device,
	[SMIO_PEER_DEV_BAR] = h_device,
	[SMIO_PEER_DEV_MAP] = h_device,
	[SMIO_PEER_DEV_UNMAP] = h_device,
	[SMIO_PEER_DEV_SEG_CREATE] = h_device,
	[SMIO_PEER_DEV_SEG_LOOKUP] = h_device,
	[SMIO_LEND_POOL] = h_lend,
	[SMIO_LEND_BORROW] = h_lend,
	[SMIO_LEND_RETURN] = h_lend,
	[SMIO_PEER_LEND_POOL] = h_lend,
	[SMIO_PEER_LEND_SETUP] = h_lend,
	[SMIO_PEER_LEND_RELEASE] = h_lend,
	[SMIO_PEER_LEND_CFG] = h_lend,
	[SMIO_PEER_LEND_P2P] = h_lend,
	[SMIO_PEER_LEND_HOPS] = h_lend,
	[SMIO_LEND_P2P] = h_lend,
};

static int dispatch_locked(struct smd *d, unsigned idx, const struct smio_hdr *h,
			   struct req *r, bool *reply);

int smd_dispatch(struct smd *d, unsigned idx, const struct smio_hdr *h, const void *payload,
		 int fd)
{
	struct req r = { .d = d, .c = &d->conns[idx], .p = payload, .len = h->len,
			 .type = h->type, .out = d->reply, .out_fd = -1 };
	bool reply;
	int rc;

	if (fd >= 0)
		close(fd);          /* no request carries a descriptor to us */
	/* Handlers touch the host's tables, which device threads use too; the
	 * reply is sent after the lock is dropped (a slow reader must not stall
	 * the devices). */
	fab_host_lock(d->host);
	rc = dispatch_locked(d, idx, h, &r, &reply);
	fab_host_unlock(d->host);
	if (!reply)
		return rc;
	if (rc < 0) {
		r.outlen = 0;
		r.out_fd = -1;
	}
	if (smio_send(d->conns[idx].fd, h->type, h->seq, rc < 0 ? rc : 0, SMIO_F_REPLY |
		      (r.out_fd >= 0 ? SMIO_F_FD : 0), r.out, r.outlen, r.out_fd) < 0)
		smd_close_conn(d, idx);
	return rc;
}

static int dispatch_locked(struct smd *d, unsigned idx, const struct smio_hdr *h,
			   struct req *r, bool *reply)
{
	struct smd_conn *c = &d->conns[idx];

	*reply = false;
	if (h->flags & SMIO_F_REPLY) {
		/* Unsolicited replies (e.g. to a timed-out step): nothing to do. */
		return 0;
	}
	if (h->type == SMIO_PEER_INVALIDATE && c->outgoing) {
		__atomic_fetch_add(&d->world.epoch, 1, __ATOMIC_ACQ_REL);
		return 0;
	}
	if (h->type == SMIO_HELLO) {
		*reply = true;
		return c->role ? -EALREADY : h_hello(r);
	}
	*reply = true;
	if (!c->role)
		return -EACCES;       /* HELLO first */
	if (h->type >= SMIO_TYPE_MAX || !handlers[h->type])
		return -EOPNOTSUPP;
	if (!(smio_msg_roles(h->type) & SMIO_ROLE_BIT(c->role)))
		return -EPERM;
	*reply = !(smio_msg_flags(h->type) & SMIO_MSG_F_NO_REPLY);
	return handlers[h->type](r);
}
