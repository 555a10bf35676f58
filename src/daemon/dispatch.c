// SPDX-License-Identifier: MIT
/*
 * How smartiod runs a request: the table of who may send what and whether
 * its handler may wait, and the life of a request from its arrival on a
 * connection to its reply (docs/architecture.md, "How a request flows").
 *
 *  - every message is validated by the protocol layer first: a broken frame
 *    closes the connection, a bad payload gets an error reply;
 *  - HELLO fixes the connection's role, checked against the kernel (auth.c);
 *  - a handler that never waits runs at once on the loop; one that needs a
 *    peer's answer either starts a peer call and returns SMD_ASYNC (its
 *    continuation replies), or is run on a worker (work: it may wait for
 *    peers and devices), keyed by the device it drives;
 *  - while a client's request is served its connection is not read, so a
 *    client's requests are answered in order; a peer's run side by side.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"
#include "util/log.h"
#include "diag.h"
#include "handlers.h"

/*
 * The daemon's side of the message list: the handler of each type, and
 * whether it may wait (work: it runs on a worker). Who may send what, and
 * which messages are one-way, is the list's (smartio/proto/msgs.h:
 * smio_msg_roles, smio_msg_flags).
 */
static const struct {
	int (*fn)(struct smd_req *r);
	bool work;
} handlers[SMIO_TYPE_MAX] = {
	[SMIO_STATUS] = { .fn = h_status },
	[SMIO_SHUTDOWN] = { .fn = h_shutdown },
	[SMIO_NODE_LIST] = { .fn = h_node_list },
	[SMIO_FUNC_LIST] = { .fn = h_func_list },
	[SMIO_CFG_READ] = { .fn = h_cfg_read },
	[SMIO_CFG_WRITE] = { .fn = h_cfg_write },
	[SMIO_CFG_DUMP] = { .fn = h_cfg_dump },
	[SMIO_ROUTE] = { .fn = h_route },
	[SMIO_MAP] = { .fn = h_map },
	[SMIO_NTB_INFO] = { .fn = h_ntb_info },
	[SMIO_NTB_LUT_SET] = { .fn = h_ntb_lut_set },
	[SMIO_NTB_LUT_CLEAR] = { .fn = h_ntb_lut_clear },
	[SMIO_NTB_RID_ADD] = { .fn = h_ntb_rid_add },
	[SMIO_NTB_RID_DEL] = { .fn = h_ntb_rid_del },
	[SMIO_NTB_LINK] = { .fn = h_ntb_link },
	[SMIO_NTB_DB_RING] = { .fn = h_ntb_db_ring },
	[SMIO_NTB_SPAD] = { .fn = h_ntb_spad },
	[SMIO_ADAPTER_INFO] = { .fn = h_adapter_info },
	[SMIO_PROBE_NODE] = { .fn = h_probe_node },
	[SMIO_IOMMU_DOMAIN] = { .fn = h_iommu_domain },
	[SMIO_IOMMU_MAP] = { .fn = h_iommu_map },
	[SMIO_IOMMU_UNMAP] = { .fn = h_iommu_unmap },
	[SMIO_IOMMU_FAULTS] = { .fn = h_iommu_faults },
	[SMIO_NVME_ADMIN] = { .fn = h_nvme_admin, .work = true },
	[SMIO_NVME_IO] = { .fn = h_nvme_io, .work = true },
	[SMIO_ACCEL_OP] = { .fn = h_accel_op, .work = true },
	[SMIO_ACCEL_LAUNCH] = { .fn = h_accel_launch, .work = true },
	[SMIO_ACCEL_LOAD] = { .fn = h_accel_load, .work = true },
	[SMIO_P2PMEM_ALLOC] = { .fn = h_p2pmem, .work = true },
	[SMIO_P2PMEM_FREE] = { .fn = h_p2pmem, .work = true },
	[SMIO_NVME_COPY] = { .fn = h_nvme_copy, .work = true },
	[SMIO_PEER_STEP] = { .fn = h_peer_step },
	[SMIO_PEER_INVALIDATE] = { .fn = h_peer_invalidate },
	[SMIO_PEER_DB] = { .fn = h_peer_db },
	[SMIO_SEG_CREATE] = { .fn = h_segment },
	[SMIO_SEG_REMOVE] = { .fn = h_segment },
	[SMIO_SEG_AVAILABLE] = { .fn = h_segment },
	[SMIO_SEG_MAP_LOCAL] = { .fn = smd_seg_request },
	[SMIO_SEG_CONNECT] = { .fn = smd_seg_request },
	[SMIO_SEG_MAP_REMOTE] = { .fn = smd_seg_request },
	[SMIO_SEG_DISCONNECT] = { .fn = smd_seg_request },
	[SMIO_SEG_ATTACH] = { .fn = h_segment },
	[SMIO_SEG_EVENTS] = { .fn = h_segment },
	[SMIO_SEG_STATE] = { .fn = h_segment },
	[SMIO_SEG_OWNER_EVENT] = { .fn = h_segment },
	[SMIO_PEER_SEG_GONE] = { .fn = h_segment },
	[SMIO_PEER_SEG_LOOKUP] = { .fn = h_segment },
	[SMIO_PEER_SEG_RELEASE] = { .fn = h_segment },
	[SMIO_PEER_SEG_WHERE] = { .fn = h_segment },
	/* A borrowed device's view asks its lender: a worker. */
	[SMIO_SEG_CONN_P2P] = { .fn = h_segment, .work = true },
	[SMIO_PEER_MEMFD] = { .fn = h_segment },
	[SMIO_INTR_CREATE] = { .fn = h_intr },
	[SMIO_INTR_REMOVE] = { .fn = h_intr },
	[SMIO_INTR_CONNECT] = { .fn = smd_intr_request },
	[SMIO_INTR_TRIGGER] = { .fn = smd_intr_request },
	[SMIO_INTR_RECEIVE] = { .fn = h_intr },
	[SMIO_INTR_DISCONNECT] = { .fn = h_intr },
	[SMIO_PEER_INTR_LOOKUP] = { .fn = h_intr },
	[SMIO_PEER_INTR_FIRE] = { .fn = h_intr },
	[SMIO_DMA_QUEUE_CREATE] = { .fn = h_dma },
	[SMIO_DMA_QUEUE_REMOVE] = { .fn = h_dma },
	[SMIO_DMA_START] = { .fn = h_dma },
	[SMIO_DMA_STATE] = { .fn = h_dma },
	[SMIO_DMA_ABORT] = { .fn = h_dma },
	[SMIO_DEV_LIST] = { .fn = smd_dev_pool_request },
	[SMIO_DEV_BORROW] = { .fn = smd_dev_pool_request },
	[SMIO_DEV_RETURN] = { .fn = smd_dev_pool_request },
	[SMIO_DEV_RELEASE_EXCL] = { .fn = h_device, .work = true },
	[SMIO_DEV_SEG_CONNECT] = { .fn = h_device, .work = true },
	[SMIO_DEV_MAP_LOCAL] = { .fn = h_device, .work = true },
	[SMIO_DEV_MAP_REMOTE] = { .fn = h_device, .work = true },
	[SMIO_DEV_UNMAP] = { .fn = h_device, .work = true },
	[SMIO_DEV_RID] = { .fn = h_device },
	[SMIO_DEV_SEG_CREATE] = { .fn = h_device, .work = true },
	[SMIO_PEER_DEV_LIST] = { .fn = h_device },
	[SMIO_PEER_DEV_BORROW] = { .fn = h_device },
	[SMIO_PEER_DEV_RETURN] = { .fn = h_device },
	[SMIO_PEER_DEV_RELEASE_EXCL] = { .fn = h_device },
	[SMIO_PEER_DEV_BAR] = { .fn = h_device },
	[SMIO_PEER_DEV_MAP] = { .fn = h_device, .work = true },
	[SMIO_PEER_DEV_UNMAP] = { .fn = h_device, .work = true },
	[SMIO_PEER_DEV_SEG_CREATE] = { .fn = h_device, .work = true },
	[SMIO_PEER_DEV_SEG_LOOKUP] = { .fn = h_device, .work = true },
	[SMIO_LEND_POOL] = { .fn = h_lend, .work = true },
	[SMIO_LEND_BORROW] = { .fn = h_lend, .work = true },
	[SMIO_LEND_RETURN] = { .fn = h_lend, .work = true },
	[SMIO_PEER_LEND_POOL] = { .fn = h_lend },
	[SMIO_PEER_LEND_SETUP] = { .fn = h_lend, .work = true },
	[SMIO_PEER_LEND_RELEASE] = { .fn = h_lend, .work = true },
	[SMIO_PEER_LEND_CFG] = { .fn = h_lend, .work = true },
	[SMIO_PEER_LEND_P2P] = { .fn = h_lend, .work = true },
	[SMIO_PEER_LEND_HOPS] = { .fn = h_lend, .work = true },
	[SMIO_LEND_P2P] = { .fn = h_lend, .work = true },
	[SMIO_LEND_HOLD] = { .fn = h_lend, .work = true },
	[SMIO_LEND_HOLDERS] = { .fn = h_lend, .work = true },
	[SMIO_VM_MEM] = { .fn = h_vm, .work = true },
	[SMIO_VM_ATTACH] = { .fn = h_vm, .work = true },
	[SMIO_VM_IRQ] = { .fn = h_vm, .work = true },
	[SMIO_VM_BAR] = { .fn = h_vm, .work = true },
	[SMIO_VM_STATS] = { .fn = h_vm, .work = true },
	[SMIO_VM_CMD] = { .fn = h_vm, .work = true },
	[SMIO_PEER_VM_RESERVE] = { .fn = h_vm, .work = true },
	[SMIO_PEER_VM_DMA] = { .fn = h_lend, .work = true },
	[SMIO_STATS] = { .fn = h_stats },
	[SMIO_STATS_CLEAR] = { .fn = h_stats_clear },
	[SMIO_EVENTS] = { .fn = h_events },
	[SMIO_MC_JOIN] = { .fn = h_mcast },
	[SMIO_MC_LEAVE] = { .fn = h_mcast },
	[SMIO_MC_CONNECT] = { .fn = h_mcast },
	[SMIO_MC_DISCONNECT] = { .fn = h_mcast },
	[SMIO_MC_WRITE] = { .fn = h_mcast, .work = true },
	[SMIO_MC_DMA] = { .fn = h_mcast, .work = true },
	[SMIO_MC_TREE] = { .fn = h_mcast },
	[SMIO_SRIOV] = { .fn = h_sriov, .work = true },
	[SMIO_CZ_SHARE] = { .fn = h_czodiac, .work = true },
	[SMIO_CZ_UNSHARE] = { .fn = h_czodiac, .work = true },
	[SMIO_PEER_CZ_BIND] = { .fn = h_czodiac, .work = true },
	[SMIO_PEER_CZ_UNBIND] = { .fn = h_czodiac, .work = true },
	[SMIO_PEER_CZ_CFG] = { .fn = h_czodiac, .work = true },
};

#define KEY_DEV(bdf)   (0x100000000ull | (uint16_t)(bdf))
#define KEY_FDID(fdid) (0x200000000ull | (uint32_t)(fdid))
#define KEY_CZ_SLOTS   0x300000000ull   /* a USER's virtual slots and UIDs: one change at a time */

/* Config cycles of a borrowed device go to its lender: they wait. */
static bool must_work(struct smd *d, const struct smd_req *r)
{
	if (r->type == SMIO_CFG_READ)
		return smd_lend_is_shadow(d, ((const struct smio_cfg *)r->p)->bdf);
	if (r->type == SMIO_CFG_DUMP)
		return smd_lend_is_shadow(d, ((const struct smio_bdf *)r->p)->bdf);
	return false;
}

/* The devices a request drives: requests for one device never run together. */
static void work_keys(struct smd *d, const struct smd_req *r, struct smd_work *w)
{
	const void *p = r->p;

	w->key = w->key2 = 0;
	switch (r->type) {
	case SMIO_NVME_ADMIN:
		w->key = KEY_DEV(((const struct smio_nvme_admin *)p)->bdf);
		break;
	case SMIO_NVME_IO:
		w->key = KEY_DEV(((const struct smio_nvme_io *)p)->bdf);
		break;
	case SMIO_NVME_COPY: {
		const struct smio_nvme_copy *m = p;

		w->key = KEY_DEV(m->src_bdf);
		if (m->dst_bdf != m->src_bdf)
			w->key2 = KEY_DEV(m->dst_bdf);
		break;
	}
	case SMIO_ACCEL_OP: {
		const struct smio_accel_op *m = p;

		w->key = KEY_DEV(m->bdf);
		if (m->kind == SMIO_ACCEL_PINGPONG && m->peer_bdf != m->bdf)
			w->key2 = KEY_DEV(m->peer_bdf);
		break;
	}
	case SMIO_ACCEL_LOAD:
		w->key = KEY_DEV(((const struct smio_accel_load *)p)->bdf);
		break;
	case SMIO_ACCEL_LAUNCH: {
		const struct smio_accel_launch *m = p;

		w->key = KEY_DEV(m->bdf);
		if ((m->flags & SMIO_ACCEL_LAUNCH_F_NVMEQ) && m->nvme_bdf != m->bdf)
			w->key2 = KEY_DEV(m->nvme_bdf);   /* its queue pair's driver */
		break;
	}
	case SMIO_CFG_READ:
		w->key = KEY_DEV(((const struct smio_cfg *)p)->bdf);
		break;
	case SMIO_CFG_DUMP:
		w->key = KEY_DEV(((const struct smio_bdf *)p)->bdf);
		break;
	case SMIO_SRIOV:
		w->key = KEY_DEV(((const struct smio_sriov_req *)p)->bdf);
		break;
	case SMIO_VM_CMD:       /* as the return when its QEMU ends (h_vm.c) */
		w->key = KEY_FDID(((const struct smio_vm_cmd *)p)->fdid);
		break;
	case SMIO_LEND_BORROW:
	case SMIO_LEND_RETURN: {
		const struct smio_lend_req *m = p;
		int bdf = smd_lend_shadow_bdf(d, m->fdid);

		w->key = KEY_FDID(m->fdid);
		if (bdf >= 0)
			w->key2 = KEY_DEV(bdf);      /* its shadow's driver too */
		break;
	}
	case SMIO_CZ_SHARE:
	case SMIO_CZ_UNSHARE: {
		int bdf = smd_cz_uid(d, ((const struct smio_cz_share *)p)->fdid);

		w->key = KEY_CZ_SLOTS;
		if (bdf >= 0)
			w->key2 = KEY_DEV(bdf);      /* its logic device's driver too */
		break;
	}
	case SMIO_PEER_CZ_BIND:
	case SMIO_PEER_CZ_UNBIND:
	case SMIO_PEER_CZ_CFG:
	case SMIO_PEER_LEND_SETUP:
	case SMIO_PEER_LEND_RELEASE:
	case SMIO_PEER_LEND_CFG:
	case SMIO_PEER_LEND_P2P:
	case SMIO_PEER_LEND_HOPS:
	case SMIO_PEER_VM_RESERVE:
		/* Every PEER_LEND_* payload starts with the lent device's BDF. */
		w->key = KEY_DEV(*(const uint16_t *)p);
		break;
	default:
		break;
	}
}

/* ---------- on a worker ---------- */

static void req_run(struct smd_work *w)
{
	struct reqbox *b = (struct reqbox *)((char *)w - offsetof(struct reqbox, w));
	struct smd_req *r = &b->r;
	int rc = handlers[r->type].fn(r);

	if (rc == SMD_ASYNC) {
		smio_error("bug: %s went asynchronous on a worker", smio_type_name(r->type));
		rc = -EIO;
	}
	/* The descriptor is the service's: the reply sends a copy made now,
	 * while the host lock still keeps it open. */
	if (!rc && r->out_fd >= 0) {
		r->out_fd = fcntl(r->out_fd, F_DUPFD_CLOEXEC, 3);
		if (r->out_fd < 0)
			rc = -errno;
		b->fd_owned = r->out_fd >= 0;
	}
	r->rc = rc;
}

static void req_work_done(struct smd_work *w)
{
	struct reqbox *b = (struct reqbox *)((char *)w - offsetof(struct reqbox, w));

	smd_req_done(&b->r, b->r.rc);
}

/* ---------- arrival ---------- */

/* Validate msg (header + payload, ours now) from c; -1 if c was closed. */
static int check(struct smd_conn *c, const struct smio_hdr *h, const uint8_t *payload, int fd)
{
	struct smd *d = c->d;
	int rc;

	if (!!(h->flags & SMIO_F_FD) != (fd >= 0)) {
		/* A descriptor promised and missing (or the reverse): framing can no
		 * longer be trusted. */
		d->rejected++;
		smd_conn_close(c, "descriptor and flag disagree");
		return -1;
	}
	/* An error reply may be empty whatever its type (as smio_recv accepts). */
	if ((h->flags & SMIO_F_REPLY) && h->status < 0 && !h->len)
		return 0;
	rc = smio_payload_check(h->type, h->flags & SMIO_F_REPLY, payload, h->len);
	if (rc) {
		/* Framing intact, content invalid: say so and keep the connection. */
		d->rejected++;
		if (!(h->flags & SMIO_F_REPLY))
			smd_conn_queue(c, h->type, h->seq, rc, SMIO_F_REPLY, NULL, 0, -1);
	}
	return rc;
}

void smd_dispatch(struct smd_conn *c, uint8_t *msg, int fd)
{
	struct smd *d = c->d;
	struct smio_hdr h;
	const uint8_t *payload = msg + sizeof(h);
	struct reqbox *b;
	struct smd_req *r;
	int rc;

	memcpy(&h, msg, sizeof(h));
	rc = check(c, &h, payload, fd);
	if (rc) {
		if (fd >= 0)
			close(fd);
		free(msg);
		return;
	}
	if (h.flags & SMIO_F_REPLY) {
		/* The answer to one of our calls (call.c); anything else is dropped. */
		if (!(c->outgoing && smd_call_reply(c, &h, payload, fd)) && fd >= 0)
			close(fd);
		free(msg);
		return;
	}
	if (fd >= 0)
		close(fd);                /* no request carries a descriptor to us */
	if (c->outgoing && h.type == SMIO_PEER_INVALIDATE) {
		/* The peer changed a table our cached routes may cross. */
		struct smio_invalidate inv;

		if (h.len == sizeof(inv)) {
			memcpy(&inv, payload, sizeof(inv));
			smd_peer_invalidated(d, c->host, &inv);
		} else {
			__atomic_fetch_add(&d->world.epoch, 1, __ATOMIC_ACQ_REL);
		}
		free(msg);
		return;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		free(msg);
		smd_conn_queue(c, h.type, h.seq, -ENOMEM, SMIO_F_REPLY, NULL, 0, -1);
		return;
	}
	r = &b->r;
	*r = (struct smd_req){ .d = d, .c = c, .h = h, .p = payload, .len = h.len,
			       .type = h.type, .out = d->reply, .out_fd = -1, .msg = msg };
	c->refs++;                    /* the request's */
	if (d->core->stopping)
		rc = -ESHUTDOWN;
	else if (h.type == SMIO_HELLO)
		rc = c->role ? -EALREADY : h_hello(r);
	else if (!c->role)
		rc = -EACCES;             /* HELLO first */
	else if (h.type >= SMIO_TYPE_MAX || !handlers[h.type].fn)
		rc = -EOPNOTSUPP;
	else if (!(smio_msg_roles(h.type) & (1u << c->role)))
		rc = -EPERM;
	else {
		r->no_reply = smio_msg_flags(h.type) & SMIO_MSG_F_NO_REPLY;
		if (handlers[h.type].work || must_work(d, r)) {
			/* Its own reply buffer; the connection waits for it. */
			rc = smd_req_keep(r);
			if (!rc) {
				b->deferred = true;
				c->busy++;
				b->w.run = req_run;
				b->w.done = req_work_done;
				work_keys(d, r, &b->w);
				smd_work_queue(d, &b->w);
				return;
			}
		} else {
			rc = handlers[h.type].fn(r);
			if (rc == SMD_ASYNC) {
				b->deferred = true;
				c->busy++;
				return;
			}
		}
	}
	smd_req_done(r, rc);
}

/* ---------- a connection's end ---------- */

void smd_conn_closed_hooks(struct smd *d, struct smd_conn *c)
{
	/* Segments, connections and references die with their connection. */
	smd_dev_conn_closed(d, c);     /* device mappings pin segments: first */
	smd_dma_conn_closed(d, c);     /* first: its transfers use the segments */
	smd_p2pmem_conn_closed(d, c);
	smd_mc_conn_closed(d, c);      /* overlays onto its segments go before them */
	smd_seg_conn_closed(d, c);
	smd_intr_conn_closed(d, c);
	smd_lend_conn_closed(d, c);    /* after the pool dropped the lease */
	smd_cz_conn_closed(d, c);      /* likewise: a cZodiac USER gone */
	smd_vm_conn_closed(d, c);
}
