// SPDX-License-Identifier: MIT
/*
 * smartiod's core request handlers: handshake and status, config space,
 * routes and maps, the NTB and IOMMU tables (admin), peers' route steps and
 * doorbells, and the entries into the services (segments, interrupts, DMA,
 * devices, lending, drivers). The table of who may send what, and how each
 * request is run, is in dispatch.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "diag.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "handlers.h"
#include "host/ntb_drv.h"

static struct fab_ntb *ntb_at(struct smd *d, uint32_t idx)
{
	return idx < d->host->nntbs ? d->host->ntbs[idx] : NULL;
}

int h_hello(struct smd_req *r)
{
	const struct smio_hello *m = r->p;
	struct smio_hello_reply *o = r->out;
	struct smd *d = r->d;
	struct smd_core *k = d->core;
	int rc;

	if (m->version != SMIO_VERSION)
		return -EPROTONOSUPPORT;
	if (m->role != SMIO_ROLE_PEER && m->host != d->host_id)
		return -EXDEV;     /* the process belongs to another host */
	if (m->role == SMIO_ROLE_PEER && (topo_host_index(d->topo, m->host) < 0 ||
					  m->host == d->host_id))
		return -EINVAL;
	/* The kernel's word, not the message's (auth.c). */
	rc = smd_auth_hello(d, r->c, m);
	if (rc)
		return rc;
	/* Each role has its own pool of slots: clients cannot crowd out peers. */
	if ((m->role == SMIO_ROLE_CLIENT && k->n_clients >= SMD_MAX_CLIENTS) ||
	    (m->role == SMIO_ROLE_ADMIN && k->n_admins >= SMD_MAX_ADMINS) ||
	    (m->role == SMIO_ROLE_PEER &&
	     k->n_peers_in[topo_host_index(d->topo, m->host)] >= SMD_MAX_PEER_CONNS))
		return -EUSERS;
	smd_conn_set_role(r->c, m->role, m->role == SMIO_ROLE_PEER ? m->host : d->host_id);
	*o = (struct smio_hello_reply){ .host = d->host_id,
		.node_id = d->host->t->node_id, .version = SMIO_VERSION };
	r->outlen = sizeof(*o);
	return 0;
}

int h_status(struct smd_req *r)
{
	struct smd *d = r->d;
	struct smio_status *o = r->out;
	struct timespec now;
	unsigned clients, peers;

	smd_conn_count(d, &clients, &peers);
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

int h_shutdown(struct smd_req *r)
{
	/* The reply is queued before the loop starts to drain (loop.c). */
	smd_loop_stop(r->d);
	return 0;
}

int h_func_list(struct smd_req *r)
{
	struct fab_host *h = r->d->host;
	struct smio_func_list *o = r->out;

	o->n = 0;
	o->pad = 0;
	for (uint32_t i = 0; i < h->nfuncs && o->n < SMIO_MAX_FUNCS; i++) {
		const struct fab_func *f = h->funcs[i];
		struct smio_func_info *fi;

		if (!fab_func_present(f))
			continue;   /* a VF while its PF's VF Enable is clear */
		fi = &o->f[o->n++];

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

int h_cfg_read(struct smd_req *r)
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

int h_cfg_write(struct smd_req *r)
{
	const struct smio_cfg *m = r->p;
	struct fab_func *f = fab_func_by_bdf(r->d->host, m->bdf);
	uint32_t flrs = f ? __atomic_load_n(&f->flr_seq, __ATOMIC_ACQUIRE) : 0;
	int rc = fab_cfg_access_write(r->d->host, m->bdf, m->off, m->size, m->value);

	/* An Initiate FLR is a device fault for the event log (smartio events). */
	if (!rc && f && __atomic_load_n(&f->flr_seq, __ATOMIC_ACQUIRE) != flrs)
		smd_event(r->d, SMIO_EV_DEV_FAULT, m->bdf, 0, "%s (%02x:%02x.%x): function level reset",
			  f->name, FAB_BDF_BUS(m->bdf), FAB_BDF_DEV(m->bdf), FAB_BDF_FN(m->bdf));
	return rc;
}

int h_cfg_dump(struct smd_req *r)
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

static int route_done(struct smd_req *r, struct fab_route *rt)
{
	smd_route_to_wire(rt, NULL, r->out, &r->outlen);
	return 0;
}

/* Resolved without waiting: remote steps are peer calls (peer.c). */
int h_route(struct smd_req *r)
{
	const struct smio_route_req *m = r->p;

	return smd_route_async(r, m->rid, m->addr, m->len, m->write, !m->nocache, route_done);
}

static int map_done(struct smd_req *r, struct fab_route *rt)
{
	struct smio_map_reply *o = r->out;
	const struct fab_mem *mem;
	int rc = 0;

	memset(o, 0, sizeof(*o));
	o->status = rt->status;
	r->outlen = sizeof(*o);
	if (rt->status != FAB_OK)
		goto out;
	/* An interrupt or a multicast group: no memory object to hand over. */
	if (rt->tgt.kind != FAB_TGT_RAM && rt->tgt.kind != FAB_TGT_BAR) {
		rc = -ENOTSUP;
		goto out;
	}
	/* Remote memory is handed over by the owning daemon (libsisci), not here. */
	if (rt->tgt.host != r->d->host_id || rt->tgt.mem >= r->d->host->nmems) {
		rc = rt->tgt.host != r->d->host_id ? -EREMOTE : -EIO;
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
	return rc;
}

int h_map(struct smd_req *r)
{
	const struct smio_route_req *m = r->p;

	return smd_route_async(r, m->rid, m->addr, m->len, m->write, true, map_done);
}

int h_ntb_info(struct smd_req *r)
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

int h_ntb_lut_set(struct smd_req *r)
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

int h_ntb_lut_clear(struct smd_req *r)
{
	const struct smio_ntb_lut *m = r->p;
	struct ntb_drv *n = ntb_drv_of(r->d->host, m->ntb);

	return n ? ntb_mw_clear(n, m->entry) : -ENOENT;
}

static int h_ntb_rid(struct smd_req *r, bool add)
{
	const struct smio_ntb_rid *m = r->p;
	struct ntb_drv *n = ntb_drv_of(r->d->host, m->ntb);

	if (!n)
		return -ENOENT;
	/* The admin's own reference: never one a service holds. */
	return add ? ntb_rid_admin_add(n, m->rid) : ntb_rid_admin_del(n, m->rid);
}

int h_ntb_rid_add(struct smd_req *r) { return h_ntb_rid(r, true); }
int h_ntb_rid_del(struct smd_req *r) { return h_ntb_rid(r, false); }

int h_ntb_link(struct smd_req *r)
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
static void db_rung(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
		    const void *payload, int fd)
{
	struct smd_req *r = arg;
	const struct smio_ntb_db *m = r->p;
	struct fab_ntb *n = ntb_at(d, m->ntb);

	if (fd >= 0)
		close(fd);
	if (!rc)
		rc = h->status;
	if (!rc && n)
		n->db_rung++;
	smd_req_done(r, rc == -ETIMEDOUT || rc == -EHOSTDOWN ? -EHOSTUNREACH : rc);
}

/* Ring the far side of a back-to-back cable (the peer's adapter latches the bits). */
int h_ntb_db_ring(struct smd_req *r)
{
	const struct smio_ntb_db *m = r->p;
	struct fab_ntb *n = ntb_at(r->d, m->ntb);
	struct smio_ntb_db peer;
	int rc;

	if (!n)
		return -ENOENT;
	if (n->t->peer_kind != TOPO_PEER_NTB)
		return -EDESTADDRREQ; /* cluster switch: doorbells need a destination node */
	if (!n->link_up)
		return -ENOLINK;
	if (!m->bits || (n->t->doorbells < 32 && (m->bits >> n->t->doorbells)))
		return -EINVAL;
	peer = (struct smio_ntb_db){ .ntb = n->t->peer_ntb, .bits = m->bits };
	rc = smd_req_keep(r);
	if (!rc)
		rc = smd_call_start(r->d, r->d->topo->hosts[n->t->peer_host].id, SMIO_PEER_DB,
				    &peer, sizeof(peer), SMD_PEER_TIMEOUT, db_rung, r);
	if (rc)
		return rc == -EHOSTDOWN ? -EHOSTUNREACH : rc;
	return SMD_ASYNC;
}

int h_ntb_spad(struct smd_req *r)
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

int h_iommu_domain(struct smd_req *r)
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

int h_iommu_map(struct smd_req *r)
{
	const struct smio_iommu_map *m = r->p;

	if (!iommu_enabled(r->d->host->iommu))
		return -ENODEV;
	return iommu_map(r->d->host->iommu, m->domain, m->iova, m->paddr, m->size, m->prot);
}

int h_iommu_unmap(struct smd_req *r)
{
	const struct smio_iommu_map *m = r->p;

	if (!iommu_enabled(r->d->host->iommu))
		return -ENODEV;
	return iommu_unmap(r->d->host->iommu, m->domain, m->iova, m->size);
}

int h_iommu_faults(struct smd_req *r)
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
int h_nvme_admin(struct smd_req *r)
{
	return smd_h_nvme_admin(r->d, r->p, r->len, r->out, &r->outlen);
}

int h_nvme_io(struct smd_req *r)
{
	return smd_h_nvme_io(r->d, r->p, r->len, r->out, &r->outlen);
}

int h_accel_op(struct smd_req *r)
{
	return smd_h_accel_op(r->d, r->p, r->len, r->out, &r->outlen);
}

int h_accel_launch(struct smd_req *r)
{
	return smd_h_accel_launch(r->d, r->p, r->len, r->out, &r->outlen);
}

int h_accel_load(struct smd_req *r)
{
	return smd_h_accel_load(r->d, r->p, r->len);
}

int h_p2pmem(struct smd_req *r)
{
	return smd_h_p2pmem(r->d, r->c, r->type, r->p, r->out, &r->outlen);
}

int h_nvme_copy(struct smd_req *r)
{
	return smd_h_nvme_copy(r->d, r->p, r->out, &r->outlen);
}

/* SISCI segments (h_segment.c). */
int h_segment(struct smd_req *r)
{
	return smd_h_segment(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* SmartIO devices (h_device.c). */
int h_device(struct smd_req *r)
{
	return smd_h_device(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* Device Lending (h_lend.c). */
int h_lend(struct smd_req *r)
{
	return smd_h_lend(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* Virtual machines (h_vm.c). */
int h_vm(struct smd_req *r)
{
	return smd_h_vm(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* SISCI interrupts (h_intr.c). */
int h_intr(struct smd_req *r)
{
	return smd_h_intr(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

/* SISCI DMA queues (h_dma.c). */
int h_dma(struct smd_req *r)
{
	return smd_h_dma(r->d, r->c, r->type, r->p, r->out, &r->outlen, &r->out_fd);
}

int h_peer_step(struct smd_req *r)
{
	const struct smio_step *m = r->p;
	struct fab_step in = { .host = r->d->host_id, .from_ntb = true,
			       .ntb_index = m->ntb_index, .write = m->write,
			       .mcast = m->mcast, .cz = m->cz, .rid = m->rid,
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

/* Host changed a table our cached routes may cross (on either connection to it). */
void smd_peer_invalidated(struct smd *d, uint32_t host, const struct smio_invalidate *m)
{
	__atomic_fetch_add(&d->world.epoch, 1, __ATOMIC_ACQ_REL);
	/* A link changed there: what crosses it may have stopped or resumed working. */
	if (smd_seg_peer_links(d, host, m->link_gen))
		smd_lend_routes_changed(d);
}

int h_peer_invalidate(struct smd_req *r)
{
	smd_peer_invalidated(r->d, r->c->host, r->p);
	return 0;
}

int h_peer_db(struct smd_req *r)
{
	const struct smio_ntb_db *m = r->p;
	struct fab_ntb *n = ntb_at(r->d, m->ntb);

	return n ? ntb_db_ring(n, m->bits) : -ENOENT;
}

