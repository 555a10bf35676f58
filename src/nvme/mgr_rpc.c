// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme manager: the RPC channel. Sessions (HELLO, token), the
 * checks on every request, queue ID allocation, queue creation on the
 * client's device segments (connected and mapped for the device by the
 * manager itself), liveness and reclaim.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "snv_mgr.h"

static void reply(struct snv_manager *m, sci_remote_data_interrupt_t to, const struct snv_hdr *rq,
		  int status, uint64_t token, const void *body, unsigned blen, const void *data,
		  unsigned dlen)
{
	struct snv_hdr h;
	sci_error_t se = SCI_ERR_OK;
	unsigned len = (unsigned)sizeof(h) + blen + dlen;

	snv_msg_init(&h, rq->type | SNV_REPLY, len);
	h.client = rq->client;
	h.seq = rq->seq;
	h.status = status;
	h.token = token;
	memcpy(m->out, &h, sizeof(h));
	if (blen)
		memcpy(m->out + sizeof(h), body, blen);
	if (dlen)
		memcpy(m->out + sizeof(h) + blen, data, dlen);
	/* A full queue (SCI_ERR_BUSY) means the client is slow: a few short retries. */
	for (unsigned i = 0; i < 20; i++) {
		SCITriggerDataInterrupt(to, m->out, len, 0, &se);
		if (se != SCI_ERR_BUSY)
			break;
		snv_pause_ms(1);
	}
	if (se)
		snv_mlog(m, "reply to client %#x failed: %s", rq->client, SCIGetErrorString(se));
}

static void refuse(struct snv_manager *m, const char *why, uint32_t client)
{
	m->st.refused++;
	snv_mlog(m, "refused a request (client %#x): %s", client, why);
}

static struct snv_mclient *session(struct snv_manager *m, const struct snv_hdr *h)
{
	unsigned slot = h->client & 0xffffu;
	struct snv_mclient *c;

	if (slot >= m->o.max_clients)
		return NULL;
	c = &m->cl[slot];
	/* Constant-time token comparison. */
	if (!c->used || c->id != h->client || ((c->token ^ h->token) != 0))
		return NULL;
	return c;
}

static void disconnect_q(struct snv_manager *m, struct snv_mqueue *q)
{
	sci_error_t se;

	if (q->sq_mapped)
		SCIUnmapRemoteSegmentForDevice(q->sq_rs, m->dev, 0, &se);
	if (q->cq_mapped)
		SCIUnmapRemoteSegmentForDevice(q->cq_rs, m->dev, 0, &se);
	if (q->sq_rs)
		SCIDisconnectSegment(q->sq_rs, 0, &se);
	if (q->cq_rs)
		SCIDisconnectSegment(q->cq_rs, 0, &se);
	snv_mgr_accel_put(m, q->accel);   /* after the connection through it */
	*q = (struct snv_mqueue){ 0 };
}

static int delete_qp(struct snv_manager *m, unsigned qid)
{
	struct nvme_sqe cmd;
	int rs, rc;

	nvme_sqe_init(&cmd, nvme_admin_delete_sq, 0, 0);
	cmd.cdw10 = qid;
	rs = snv_mgr_admin(m, &cmd, NULL);
	nvme_sqe_init(&cmd, nvme_admin_delete_cq, 0, 0);
	cmd.cdw10 = qid;
	rc = snv_mgr_admin(m, &cmd, NULL);
	if (rs || rc)
		snv_mlog(m, "deleting queue pair %u: SQ status %d, CQ status %d", qid, rs, rc);
	disconnect_q(m, &m->q[qid]);
	m->st.queues--;
	return rs < 0 ? rs : rc < 0 ? rc : (rs ? rs : rc);
}

void snv_mgr_drop_client(struct snv_manager *m, unsigned slot, bool lost)
{
	struct snv_mclient *c = &m->cl[slot];
	unsigned n = 0;
	sci_error_t se;

	for (unsigned qid = 1; qid <= m->nqueues; qid++)
		if (m->q[qid].used && m->q[qid].owner == slot) {
			delete_qp(m, qid);
			n++;
		}
	if (lost)
		m->st.reclaimed += n;
	SCIDisconnectDataInterrupt(c->reply, 0, &se);
	SCIDisconnectInterrupt(c->live, 0, &se);
	snv_mlog(m, "client %#x (node %u pid %u) %s; %u queue pair(s) %s", c->id, c->node, c->pid,
		 lost ? "went away" : "closed", n, lost ? "reclaimed" : "deleted");
	*c = (struct snv_mclient){ 0 };
	m->st.clients--;
}

static void hello(struct snv_manager *m, const struct snv_hdr *h, const void *body, long blen)
{
	struct snv_hello hl;
	struct snv_hello_reply hr;
	struct snv_mclient *c = NULL;
	unsigned slot = 0;
	sci_error_t se;

	if (blen != (long)sizeof(hl) || h->client || h->token) {
		refuse(m, "malformed HELLO", h->client);
		return;
	}
	memcpy(&hl, body, sizeof(hl));
	for (unsigned i = 0; i < m->o.max_clients; i++) {
		if (m->cl[i].used && m->cl[i].node == hl.node &&
		    (m->cl[i].reply_intno == hl.reply_intno || m->cl[i].live_intno == hl.live_intno)) {
			refuse(m, "HELLO names another session's interrupts", 0);
			return;
		}
		if (!m->cl[i].used && !c) {
			c = &m->cl[i];
			slot = i;
		}
	}
	if (!c) {
		refuse(m, "too many clients", 0);
		return;
	}
	SCIConnectDataInterrupt(m->sd, &c->reply, hl.node, m->o.adapter, hl.reply_intno, 0, 0, &se);
	if (se) {
		refuse(m, "HELLO: cannot reach the reply interrupt", 0);
		return;
	}
	SCIConnectInterrupt(m->sd, &c->live, hl.node, m->o.adapter, hl.live_intno, 0, 0, &se);
	if (se) {
		SCIDisconnectDataInterrupt(c->reply, 0, &se);
		refuse(m, "HELLO: cannot reach the liveness interrupt", 0);
		return;
	}
	c->used = true;
	c->id = slot | (uint32_t)(++m->gen ? m->gen : ++m->gen) << 16;
	c->token = snv_random64();
	c->node = hl.node;
	c->reply_intno = hl.reply_intno;
	c->live_intno = hl.live_intno;
	c->pid = hl.pid;
	c->misses = 0;
	/* A random range of device segment IDs, distinct from every other session's. */
	for (unsigned tries = 0; tries < 64; tries++) {
		bool clash = false;

		c->segid_base = 0x40000000u | (uint32_t)(snv_random64() & 0x3fffffu) << 8;
		for (unsigned i = 0; i < m->o.max_clients; i++)
			if (i != slot && m->cl[i].used && m->cl[i].segid_base == c->segid_base)
				clash = true;
		if (!clash)
			break;
	}
	hr = (struct snv_hello_reply){ .segid_base = c->segid_base, .nqueues = (uint16_t)m->nqueues,
				       .max_depth = (uint16_t)(m->mqes + 1 > 4096 ? 4096 : m->mqes + 1),
				       .cmb_bar = m->cmb_flags ? m->cmb_bar : 0,
				       .cmb_flags = m->cmb_flags,
				       .cmb_off = m->cmb_flags ? m->cmb_off : 0,
				       .cmb_size = m->cmb_flags ? m->cmb_size : 0 };
	m->st.clients++;
	snv_mlog(m, "client %#x: node %u pid %u", c->id, c->node, c->pid);
	{
		struct snv_hdr rq = *h;

		rq.client = c->id;
		reply(m, c->reply, &rq, 0, c->token, &hr, sizeof(hr), NULL, 0);
	}
}

static bool feature_ok(unsigned fid)
{
	switch (fid) {
	case 0x01: case 0x02: case 0x04: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09:
	case 0x0a: case 0x0b:
		return true;
	default:
		return false;
	}
}

/* Whitelisted admin commands; returns 0 or the refusal's -errno. */
static int admin_check(const struct nvme_sqe *s, uint32_t data_len)
{
	if (s->flags)
		return -EINVAL;               /* no fused commands, no SGLs */
	switch (s->opcode) {
	case nvme_admin_identify:
		if ((s->cdw10 & 0xff) > 3 || data_len != 4096)
			return -EINVAL;
		return 0;
	case nvme_admin_get_log_page: {
		unsigned lid = s->cdw10 & 0xff;

		/* error, SMART, firmware; smartio's vendor logs: C0h the timing
		 * model's prediction, C1h the arbitration statistics */
		if (((lid < 1 || lid > 3) && lid != SMARTIO_LOG_LID_TIMING &&
		     lid != SMARTIO_NVME_LOG_ARB) ||
		    nvme_log_len(s) != data_len || data_len > SNV_DATA_MAX)
			return -EINVAL;
		return 0;
	}
	case nvme_admin_get_features:
		if (!feature_ok(s->cdw10 & 0xff) || ((s->cdw10 >> 8) & 7) > 3 || data_len)
			return -EINVAL;
		return 0;
	default:
		return -EPERM;                /* create/delete go through CREATE/DELETE_QP */
	}
}

static void admin(struct snv_manager *m, struct snv_mclient *c, const struct snv_hdr *h,
		  const void *body, long blen)
{
	struct snv_admin a;
	struct snv_admin_reply ar = { 0 };
	struct nvme_sqe cmd, in;
	uint32_t dw0 = 0;
	int rc;

	if (blen != (long)sizeof(a)) {
		refuse(m, "malformed ADMIN", h->client);
		reply(m, c->reply, h, -EPROTO, 0, NULL, 0, NULL, 0);
		return;
	}
	memcpy(&a, body, sizeof(a));
	memcpy(&in, a.sqe, sizeof(in));
	rc = a.mcast > 256 ? -EINVAL : admin_check(&in, a.data_len);
	if (rc) {
		refuse(m, rc == -EPERM ? "admin opcode not allowed" : "admin command fields", h->client);
		reply(m, c->reply, h, rc, 0, NULL, 0, NULL, 0);
		return;
	}
	/* A fresh command: only the opcode, NSID and CDW10-15 come from the client. */
	nvme_sqe_init(&cmd, in.opcode, 0, in.nsid);
	cmd.cdw10 = in.cdw10;
	cmd.cdw11 = in.cdw11;
	cmd.cdw12 = in.cdw12;
	cmd.cdw13 = in.cdw13;
	cmd.cdw14 = in.cdw14;
	cmd.cdw15 = in.cdw15;
	if (a.mcast) {
		/* The data goes to a multicast group: only the completion comes back. */
		rc = snv_mgr_admin_mcast(m, &cmd, a.mcast - 1, a.data_len, &dw0);
		ar.dw0 = dw0;
		reply(m, c->reply, h, rc, 0, &ar, sizeof(ar), NULL, 0);
		return;
	}
	if (a.data_len) {
		memset(m->data.vaddr, 0, a.data_len);
		snv_mgr_data_prps(m, &cmd, a.data_len);
	}
	rc = snv_mgr_admin(m, &cmd, &dw0);
	ar.dw0 = dw0;
	if (rc != 0 || !a.data_len) {
		reply(m, c->reply, h, rc, 0, &ar, sizeof(ar), NULL, 0);
		return;
	}
	ar.total = a.data_len;
	for (uint32_t off = 0; off < a.data_len; off += SNV_CHUNK) {
		ar.off = off;
		ar.chunk = a.data_len - off < SNV_CHUNK ? a.data_len - off : SNV_CHUNK;
		reply(m, c->reply, h, 0, 0, &ar, sizeof(ar), (uint8_t *)m->data.vaddr + off, ar.chunk);
	}
}

/*
 * Connect to a client's device segment and map it for the device. A segment
 * in the client's RAM takes a window of the lender's NTB; with none free the
 * map fails with SCI_ERR_HW_NOSPC, told apart as -EADDRNOTAVAIL so that the
 * client can say so instead of "no queue free" (-ENOSPC). `of`: the device
 * whose segment it is (the controller, or the accelerator holding an SQ).
 */
static int qseg(struct snv_manager *m, sci_smartio_device_t of, uint32_t node, uint32_t id,
		size_t need, sci_remote_segment_t *rs, bool *mapped, sci_ioaddr_t *io)
{
	sci_error_t se;

	/* node: an ordinary segment of the client's node (SNV_QP_EXT_SEGS); else 0 */
	if (node)
		SCIConnectSegment(m->sd, rs, node, id, m->o.adapter, NULL, NULL, 1000, 0, &se);
	else
		SCIConnectDeviceSegment(of, rs, id, SCI_MEMTYPE_SHARED, NULL, NULL, 0, &se);
	if (se) {
		*rs = NULL;
		return -ENOENT;
	}
	if (SCIGetRemoteSegmentSize(*rs) < need)
		return -EINVAL;
	SCIMapRemoteSegmentForDevice(*rs, m->dev, io, 0, need, 0, &se);
	if (se == SCI_ERR_HW_NOSPC)
		return -EADDRNOTAVAIL;
	if (se)
		return snv_errno(se);
	*mapped = true;
	return (*io & (SNV_PAGE - 1)) ? -EINVAL : 0;
}

static void create_qp(struct snv_manager *m, struct snv_mclient *c, const struct snv_hdr *h,
		      const void *body, long blen)
{
	struct snv_create_qp r;
	struct snv_qp_reply qr = { 0 };
	struct snv_mqueue *q;
	sci_ioaddr_t sq_io = 0, cq_io = 0;
	struct nvme_sqe cmd;
	unsigned qid = 0;
	uint32_t prio;
	char why[160];
	uint32_t ext_node;
	bool sq_cmb, sq_accel;
	int rc;

	if (blen != (long)sizeof(r)) {
		refuse(m, "malformed CREATE_QP", h->client);
		reply(m, c->reply, h, -EPROTO, 0, NULL, 0, NULL, 0);
		return;
	}
	memcpy(&r, body, sizeof(r));
	sq_cmb = r.flags & SNV_QP_SQ_CMB;
	sq_accel = r.flags & SNV_QP_SQ_ACCEL;
	ext_node = r.flags & SNV_QP_EXT_SEGS ? c->node : 0;
	if (r.depth < 2 || r.depth > m->mqes + 1 || r.prio > 3 ||
	    (sq_accel ? !r.sq_fdid || sq_cmb || ext_node : r.sq_fdid != 0) ||
	    (r.flags & ~(SNV_QP_SQ_CMB | SNV_QP_PRIO_POLICY | SNV_QP_EXT_SEGS | SNV_QP_SQ_ACCEL)) ||
	    ((r.flags & SNV_QP_EXT_SEGS) && sq_cmb) ||
	    ((r.flags & SNV_QP_PRIO_POLICY) && r.prio) || r.cq_segid - c->segid_base >= SNV_SEGIDS ||
	    (sq_cmb ? r.sq_segid != 0 : (r.sq_segid == r.cq_segid ||
					  r.sq_segid - c->segid_base >= SNV_SEGIDS))) {
		refuse(m, "CREATE_QP fields (depth, priority, flags or segments not the client's)",
		       h->client);
		reply(m, c->reply, h, -EINVAL, 0, NULL, 0, NULL, 0);
		return;
	}
	rc = snv_mgr_admit(m, c->node, r.flags, r.prio, &prio, &qr.iops_limit, why, sizeof(why));
	if (rc) {
		refuse(m, why, h->client);
		reply(m, c->reply, h, rc, 0, NULL, 0, NULL, 0);
		return;
	}
	if (sq_cmb && !(m->cmb_flags & SNV_CMB_SQ)) {
		refuse(m, "CREATE_QP: SQ in the CMB, but the controller has no (usable) CMB",
		       h->client);
		reply(m, c->reply, h, -ENOTSUP, 0, NULL, 0, NULL, 0);
		return;
	}
	for (unsigned i = 0; i < m->nqueues; i++) {
		unsigned cand = (m->qcursor + i) % m->nqueues + 1;

		if (!m->q[cand].used) {
			qid = cand;
			break;
		}
	}
	if (!qid) {
		reply(m, c->reply, h, -ENOSPC, 0, NULL, 0, NULL, 0);
		return;
	}
	m->qcursor = qid % m->nqueues;
	q = &m->q[qid];
	if (sq_cmb) {
		int64_t off = snv_mgr_cmb_alloc(m, (uint64_t)r.depth * 64);

		if (off < 0) {
			refuse(m, "CREATE_QP: the CMB is full", h->client);
			reply(m, c->reply, h, -ENOBUFS, 0, NULL, 0, NULL, 0);
			return;
		}
		q->cmb_off = (uint64_t)off;
		q->cmb_len = ((uint64_t)r.depth * 64 + SNV_PAGE - 1) & ~(uint64_t)(SNV_PAGE - 1);
		sq_io = m->cmb_io + q->cmb_off;
		rc = 0;
	} else if (sq_accel) {
		/* The client's device segment of the accelerator (the ID range checked
		 * above is the client's there too): reached through a borrow of it. */
		rc = snv_mgr_accel_get(m, r.sq_fdid, &q->accel);
		if (!rc)
			rc = qseg(m, snv_mgr_accel_dev(m, q->accel), 0, r.sq_segid,
				  (size_t)r.depth * 64, &q->sq_rs, &q->sq_mapped, &sq_io);
		else
			rc = -ENODEV;
	} else {
		rc = qseg(m, m->dev, ext_node, r.sq_segid, (size_t)r.depth * 64, &q->sq_rs,
			  &q->sq_mapped, &sq_io);
	}
	if (!rc)
		rc = qseg(m, m->dev, ext_node, r.cq_segid, (size_t)r.depth * 16, &q->cq_rs,
			  &q->cq_mapped, &cq_io);
	if (rc) {
		disconnect_q(m, q);
		refuse(m, rc == -EADDRNOTAVAIL ? "CREATE_QP: the lender's NTB has no free window "
		       "onto the client's queue memory" : rc == -ENODEV ? "CREATE_QP: cannot borrow "
		       "the accelerator named for the SQ" : "CREATE_QP: segment missing, too small or "
		       "unaligned", h->client);
		reply(m, c->reply, h, rc, 0, NULL, 0, NULL, 0);
		return;
	}
	nvme_sqe_init(&cmd, nvme_admin_create_cq, 0, 0);
	cmd.prp1 = cq_io;
	cmd.cdw10 = nvme_cdw10_queue((uint16_t)qid, r.depth);
	cmd.cdw11 = nvme_cdw11_create_cq(0, false);
	rc = snv_mgr_admin(m, &cmd, NULL);
	if (!rc) {
		nvme_sqe_init(&cmd, nvme_admin_create_sq, 0, 0);
		cmd.prp1 = sq_io;
		cmd.cdw10 = nvme_cdw10_queue((uint16_t)qid, r.depth);
		cmd.cdw11 = nvme_cdw11_create_sq((uint16_t)qid, prio == SNV_QP_PRIO_NONE ?
						 NVME_QPRIO_MEDIUM : (enum nvme_qprio)prio);
		rc = snv_mgr_admin(m, &cmd, NULL);
		if (rc) {
			nvme_sqe_init(&cmd, nvme_admin_delete_cq, 0, 0);
			cmd.cdw10 = qid;
			snv_mgr_admin(m, &cmd, NULL);
		}
	}
	if (rc) {
		disconnect_q(m, q);
		snv_mlog(m, "client %#x: creating queue pair %u failed (%d)", c->id, qid, rc);
		reply(m, c->reply, h, rc, 0, NULL, 0, NULL, 0);
		return;
	}
	q->used = true;
	q->owner = (unsigned)(c - m->cl);
	m->st.queues++;
	qr.qid = qid;
	qr.prio = prio;
	qr.sq_cmb_off = q->cmb_off;
	if (sq_cmb)
		snv_mlog(m, "client %#x: queue pair %u, depth %u, class %s, SQ in the CMB at %#llx",
			 c->id, qid, r.depth, snv_mgr_class_name(prio),
			 (unsigned long long)q->cmb_off);
	else if (sq_accel)
		snv_mlog(m, "client %#x: queue pair %u, depth %u, class %s, SQ in accelerator %#x "
			 "at bus address %#llx", c->id, qid, r.depth, snv_mgr_class_name(prio),
			 r.sq_fdid, (unsigned long long)sq_io);
	else if (ext_node)
		snv_mlog(m, "client %#x: queue pair %u, depth %u, class %s, in the client's device "
			 "memory: SQ at %#llx, CQ at %#llx as the controller reaches them", c->id, qid,
			 r.depth, snv_mgr_class_name(prio), (unsigned long long)sq_io,
			 (unsigned long long)cq_io);
	else
		snv_mlog(m, "client %#x: queue pair %u, depth %u, class %s, %u IOPS at most "
			 "(0: no limit)", c->id, qid, r.depth, snv_mgr_class_name(prio),
			 qr.iops_limit);
	reply(m, c->reply, h, 0, 0, &qr, sizeof(qr), NULL, 0);
}

static void del_qp(struct snv_manager *m, struct snv_mclient *c, const struct snv_hdr *h,
		   const void *body, long blen)
{
	struct snv_delete_qp r;
	int rc;

	if (blen != (long)sizeof(r)) {
		refuse(m, "malformed DELETE_QP", h->client);
		reply(m, c->reply, h, -EPROTO, 0, NULL, 0, NULL, 0);
		return;
	}
	memcpy(&r, body, sizeof(r));
	if (r.rsvd || r.qid < 1 || r.qid > m->nqueues || !m->q[r.qid].used ||
	    m->q[r.qid].owner != (unsigned)(c - m->cl)) {
		refuse(m, "DELETE_QP of a queue the client does not own", h->client);
		reply(m, c->reply, h, -EPERM, 0, NULL, 0, NULL, 0);
		return;
	}
	rc = delete_qp(m, r.qid);
	reply(m, c->reply, h, rc, 0, NULL, 0, NULL, 0);
}

void snv_mgr_handle(struct snv_manager *m, unsigned len)
{
	long blen = snv_msg_check(m->in, len);
	const void *body = m->in + sizeof(struct snv_hdr);
	struct snv_mclient *c;
	struct snv_hdr h;

	if (blen < 0) {
		refuse(m, "malformed message (magic, version or length)", 0);
		return;
	}
	memcpy(&h, m->in, sizeof(h));
	if (h.status) {
		refuse(m, "request with a status", h.client);
		return;
	}
	if (h.type == SNV_MSG_HELLO) {
		m->st.requests++;
		hello(m, &h, body, blen);
		return;
	}
	c = session(m, &h);
	if (!c) {
		/* Unknown session or wrong token: no reply, there is nobody verified to tell. */
		refuse(m, "unknown session or wrong token", h.client);
		return;
	}
	m->st.requests++;
	switch (h.type) {
	case SNV_MSG_BYE:
		if (blen) {
			refuse(m, "malformed BYE", h.client);
			reply(m, c->reply, &h, -EPROTO, 0, NULL, 0, NULL, 0);
			return;
		}
		reply(m, c->reply, &h, 0, 0, NULL, 0, NULL, 0);
		snv_mgr_drop_client(m, (unsigned)(c - m->cl), false);
		break;
	case SNV_MSG_ADMIN:
		admin(m, c, &h, body, blen);
		break;
	case SNV_MSG_CREATE_QP:
		create_qp(m, c, &h, body, blen);
		break;
	case SNV_MSG_DELETE_QP:
		del_qp(m, c, &h, body, blen);
		break;
	default:
		refuse(m, "unknown request type", h.client);
		reply(m, c->reply, &h, -EOPNOTSUPP, 0, NULL, 0, NULL, 0);
		break;
	}
}

/*
 * The liveness path to client c failed for a link: connect its interrupts
 * through another of our adapters (a second fabric). True when the client
 * answers through the new path, which then replaces the old one.
 */
static bool repath(struct snv_manager *m, struct snv_mclient *c)
{
	for (unsigned a = 0; a < 16; a++) {
		sci_remote_interrupt_t live;
		sci_remote_data_interrupt_t rep;
		sci_error_t se;

		SCIConnectInterrupt(m->sd, &live, c->node, a, c->live_intno, 0, 0, &se);
		if (se == SCI_ERR_NO_SUCH_ADAPTERNO)
			break;
		if (se)
			continue;
		SCITriggerInterrupt(live, 0, &se);
		if (!se)
			SCIConnectDataInterrupt(m->sd, &rep, c->node, a, c->reply_intno, 0, 0, &se);
		if (se) {
			SCIDisconnectInterrupt(live, 0, &se);
			continue;
		}
		SCIDisconnectInterrupt(c->live, 0, &se);
		SCIDisconnectDataInterrupt(c->reply, 0, &se);
		c->live = live;
		c->reply = rep;
		snv_mlog(m, "client %#x: liveness and replies now through adapter %u", c->id, a);
		return true;
	}
	return false;
}

void snv_mgr_heartbeat(struct snv_manager *m)
{
	uint32_t csts = snv_rd32(m->bar, NVME_REG_CSTS);
	bool cfs = NVME_CSTS_CFS(csts);

	if (cfs && !m->fatal_logged && csts == UINT32_MAX)
		/* All-ones, as a surprise-removed device reads: not the controller's word. */
		snv_mlog(m, "controller unreachable (its registers read all-ones: the lender or this "
			 "host's daemon is gone); stop the manager and start it again once the "
			 "cluster is back");
	else if (cfs && !m->fatal_logged)
		snv_mlog(m, "controller fatal status (CSTS.CFS): every queue is stopped; restart the "
			 "manager (it resets the controller)");
	m->fatal_logged = cfs;
	for (unsigned i = 0; i < m->o.max_clients; i++) {
		struct snv_mclient *c = &m->cl[i];
		sci_error_t se;

		if (!c->used)
			continue;
		SCITriggerInterrupt(c->live, 0, &se);
		if (se == SCI_ERR_NO_LINK_ACCESS && repath(m, c))
			se = SCI_ERR_OK;
		if (se == SCI_ERR_OK) {
			c->misses = 0;
			c->link_misses = 0;
			continue;
		}
		if (se == SCI_ERR_NO_LINK_ACCESS) {
			/* Its host may well be fine: wait out the grace, not 3 beats. */
			if (++c->link_misses * m->o.heartbeat_ms >= SNV_HB_LINK_GRACE_MS)
				snv_mgr_drop_client(m, i, true);
			continue;
		}
		/* The process is gone (its interrupt no longer exists), or its host is. */
		if (se == SCI_ERR_NO_SUCH_INTNO || se == SCI_ERR_NO_SUCH_NODEID ||
		    ++c->misses >= SNV_HB_MISSES)
			snv_mgr_drop_client(m, i, true);
	}
}
