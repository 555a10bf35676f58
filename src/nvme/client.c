// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme client: borrow the controller shared, map its doorbells,
 * open a session with the manager and relay admin commands through it;
 * DMA buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snv_priv.h"
#include "util/smio_time.h"

static int send_msg(struct snv_client *c, unsigned len, uint64_t deadline)
{
	sci_error_t se;

	for (;;) {
		SCITriggerDataInterrupt(c->chan, c->msg, len, 0, &se);
		if (se != SCI_ERR_BUSY || smio_now_ms() >= deadline)
			return snv_errno(se);
		snv_pause_ms(1);                      /* the manager's queue is full */
	}
}

int snv_rpc(struct snv_client *c, unsigned type, const void *body, unsigned blen,
	    void *reply_body, unsigned rb_len, void *data, size_t data_cap, uint32_t *dw0)
{
	uint64_t deadline = smio_now_ms() + c->timeout_ms, seq = ++c->seq;
	unsigned len = (unsigned)sizeof(struct snv_hdr) + blen;
	size_t got = 0;
	struct snv_hdr h;
	int rc;

	if (len > SNV_MSG_MAX)
		return -EINVAL;
	snv_msg_init(&h, type, len);
	h.client = c->client_id;
	h.token = c->token;
	h.seq = seq;
	memcpy(c->msg, &h, sizeof(h));
	if (blen)
		memcpy(c->msg + sizeof(h), body, blen);
	rc = send_msg(c, len, deadline);
	if (rc)
		return rc;
	for (;;) {
		uint64_t now = smio_now_ms();
		unsigned int rlen = sizeof(c->msg);
		const uint8_t *rb = c->msg + sizeof(h);
		sci_error_t se;
		long n;

		if (now >= deadline)
			return -ETIMEDOUT;
		SCIWaitForDataInterrupt(c->reply, c->msg, &rlen, (unsigned)(deadline - now), 0, &se);
		if (se)
			return snv_errno(se);
		n = snv_msg_check(c->msg, rlen);
		if (n < 0)
			continue;
		memcpy(&h, c->msg, sizeof(h));
		if (h.type != (type | SNV_REPLY) || h.seq != seq ||
		    (type != SNV_MSG_HELLO && h.client != c->client_id))
			continue;                     /* stale or not ours */
		if (type == SNV_MSG_HELLO && !h.status) {
			c->client_id = h.client;
			c->token = h.token;
		}
		if (type == SNV_MSG_ADMIN && n >= (long)sizeof(struct snv_admin_reply)) {
			struct snv_admin_reply ar;

			memcpy(&ar, rb, sizeof(ar));
			if (dw0)
				*dw0 = ar.dw0;
			if (h.status || !ar.total)
				return h.status;
			if (ar.chunk != n - (long)sizeof(ar) || ar.off > ar.total ||
			    ar.chunk > ar.total - ar.off || ar.total > data_cap)
				return -EPROTO;
			memcpy((uint8_t *)data + ar.off, rb + sizeof(ar), ar.chunk);
			got += ar.chunk;
			if (got >= ar.total)
				return 0;
			continue;
		}
		if (h.status)
			return h.status;
		if (n != (long)rb_len)
			return -EPROTO;
		if (rb_len)
			memcpy(reply_body, rb, rb_len);
		return 0;
	}
}

static int admin_cmd(struct snv_client *c, const struct nvme_sqe *cmd, void *data, uint32_t len,
		     uint32_t *dw0)
{
	struct snv_admin a = { .data_len = len };
	int rc;

	memcpy(a.sqe, cmd, sizeof(a.sqe));
	pthread_mutex_lock(&c->lock);
	rc = snv_rpc(c, SNV_MSG_ADMIN, &a, sizeof(a), NULL, 0, data, len, dw0);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int snv_identify_ctrl_mcast(struct snv_client *c, uint32_t group)
{
	struct snv_admin a = { .data_len = 4096, .mcast = group + 1 };
	struct nvme_sqe cmd;
	int rc;

	if (group >= 256)
		return -EINVAL;
	nvme_sqe_init(&cmd, nvme_admin_identify, 0, 0);
	cmd.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	memcpy(a.sqe, &cmd, sizeof(a.sqe));
	pthread_mutex_lock(&c->lock);
	/* The reply carries the completion only: no data to take. */
	rc = snv_rpc(c, SNV_MSG_ADMIN, &a, sizeof(a), NULL, 0, NULL, 0, NULL);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

static int identify(struct snv_client *c, unsigned cns, uint32_t nsid, void *data)
{
	struct nvme_sqe cmd;

	nvme_sqe_init(&cmd, nvme_admin_identify, 0, nsid);
	cmd.cdw10 = cns;
	return admin_cmd(c, &cmd, data, 4096, NULL);
}

int snv_identify_ctrl(struct snv_client *c, void *data)
{
	return identify(c, NVME_IDENTIFY_CNS_CTRL, 0, data);
}

int snv_identify_ns(struct snv_client *c, uint32_t nsid, void *data)
{
	return identify(c, NVME_IDENTIFY_CNS_NS, nsid, data);
}

int snv_get_log_page(struct snv_client *c, uint8_t lid, uint32_t nsid, void *data, size_t len)
{
	struct nvme_sqe cmd;

	if (!len || len % 4 || len > SNV_DATA_MAX)
		return -EINVAL;
	nvme_sqe_init(&cmd, nvme_admin_get_log_page, 0, nsid);
	nvme_log_set(&cmd, lid, (uint32_t)len, 0);
	return admin_cmd(c, &cmd, data, (uint32_t)len, NULL);
}

int snv_get_features(struct snv_client *c, uint8_t fid, uint32_t nsid, uint32_t *result)
{
	struct nvme_sqe cmd;

	nvme_sqe_init(&cmd, nvme_admin_get_features, 0, nsid);
	cmd.cdw10 = fid;
	return admin_cmd(c, &cmd, NULL, 0, result);
}

int snv_ns_info(struct snv_client *c, uint32_t nsid, struct snv_ns_info *out)
{
	struct nvme_id_ns *ns = malloc(sizeof(*ns));
	int rc;

	if (!ns)
		return -ENOMEM;
	rc = snv_identify_ns(c, nsid, ns);
	if (!rc) {
		unsigned fmt = ns->flbas & 0xf;

		out->nsid = nsid;
		out->nlb = ns->nsze;
		out->lba_size = 1u << ns->lbaf[fmt].ds;
		if (ns->lbaf[fmt].ds < 9 || ns->lbaf[fmt].ds > 16)
			rc = -EPROTO;
	}
	free(ns);
	return rc;
}

static int find_manager(struct snv_client *c, char *err, size_t errlen)
{
	struct snv_hello hl = { .node = c->node, .pid = (uint32_t)getpid() };
	struct snv_hello_reply hr;
	unsigned int intno = 0;
	sci_error_t se;
	int rc;

	SCICreateDataInterrupt(c->sd, &c->reply, c->adapter, &intno, NULL, NULL, 0, &se);
	if (se)
		goto sci_fail;
	c->have_reply = true;
	c->reply_intno = intno;
	SCICreateInterrupt(c->sd, &c->live, c->adapter, &intno, NULL, NULL, 0, &se);
	if (se)
		goto sci_fail;
	c->have_live = true;
	c->live_intno = intno;
	SCIConnectDataInterrupt(c->sd, &c->chan, c->manager_node, c->adapter, c->channel,
				c->timeout_ms, 0, &se);
	if (se) {
		snv_seterr(err, errlen, "no manager for device %#x at node %u (%s): start one with "
			   "`smartio-nvme manager` on the lender's host", c->fdid, c->manager_node,
			   SCIGetErrorString(se));
		return snv_errno(se);
	}
	c->have_chan = true;
	c->token = 0;
	hl.reply_intno = c->reply_intno;
	hl.live_intno = c->live_intno;
	rc = snv_rpc(c, SNV_MSG_HELLO, &hl, sizeof(hl), &hr, sizeof(hr), NULL, 0, NULL);
	if (rc) {
		snv_seterr(err, errlen, "the manager did not accept the session (%s)",
			   rc < 0 ? strerror(-rc) : "NVMe status");
		return rc < 0 ? rc : -EPROTO;
	}
	c->segid_base = hr.segid_base;
	c->nqueues = hr.nqueues;
	c->max_depth = hr.max_depth;
	if ((hr.cmb_flags & ~SNV_CMB_SQ) || (!hr.cmb_flags && (hr.cmb_size || hr.cmb_off ||
							      hr.cmb_bar)) ||
	    (hr.cmb_flags && (!hr.cmb_size || hr.cmb_size % SNV_PAGE || hr.cmb_bar > 5))) {
		snv_seterr(err, errlen, "the manager described the CMB inconsistently (flags %#x, "
			   "BAR%u, %llu bytes): manager and library versions differ?", hr.cmb_flags,
			   hr.cmb_bar, (unsigned long long)hr.cmb_size);
		return -EPROTO;
	}
	c->cmb_flags = hr.cmb_flags;
	c->cmb_bar = hr.cmb_bar;
	c->cmb_off = hr.cmb_off;
	c->cmb_size = hr.cmb_size;
	return 0;
sci_fail:
	snv_seterr(err, errlen, "cannot create interrupts: %s", SCIGetErrorString(se));
	return snv_errno(se);
}

static int load_ctrl(struct snv_client *c, char *err, size_t errlen)
{
	struct nvme_id_ctrl *id = malloc(sizeof(*id));
	int rc;

	if (!id)
		return -ENOMEM;
	rc = snv_identify_ctrl(c, id);
	if (rc) {
		snv_seterr(err, errlen, "Identify Controller through the manager failed (%d)", rc);
		free(id);
		return rc < 0 ? rc : -EIO;
	}
	c->max_xfer = SNV_MAX_XFER;
	if (id->mdts && ((size_t)SNV_PAGE << id->mdts) < c->max_xfer)
		c->max_xfer = SNV_PAGE << id->mdts;
	c->nn = id->nn;
	free(id);
	for (uint32_t ns = 1; ns <= c->nn && ns <= SNV_NS_CACHE; ns++) {
		struct snv_ns_info ni;

		rc = snv_ns_info(c, ns, &ni);
		if (rc < 0)
			return rc;
		if (rc)
			continue;                     /* inactive namespace */
		c->lba_shift[ns] = (uint8_t)__builtin_ctz(ni.lba_size);
		c->nlb[ns] = ni.nlb;
	}
	return 0;
}

int snv_client_open(const struct snv_client_opts *o, struct snv_client **out, char *err,
		    size_t errlen)
{
	struct snv_client *c;
	uint64_t deadline;
	sci_error_t se;
	int rc;

	*out = NULL;
	if (!o || !o->fdid) {
		snv_seterr(err, errlen, "no controller given: pass its fabric device ID");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->fdid = o->fdid;
	c->adapter = o->adapter;
	c->manager_node = o->manager_node ? o->manager_node : o->fdid >> 16;
	c->timeout_ms = o->timeout_ms ? o->timeout_ms : 5000;
	c->channel = o->channel_intno ? o->channel_intno : SNV_CHANNEL_INTNO(o->fdid);
	c->seq = snv_random64();
	c->mp = o->multipath;
	c->bk_adapter = o->backup_adapter;
	c->failover_ms = o->failover_ms ? o->failover_ms : 1000;
	c->io_timeout_ms = o->io_timeout_ms ? o->io_timeout_ms : 10000;
	if (c->mp && c->bk_adapter == c->adapter) {
		snv_seterr(err, errlen, "the backup adapter must differ from the primary (%u)",
			   c->adapter);
		rc = -EINVAL;
		goto fail;
	}
	SCIInitialize(0, &se);
	if (!se)
		SCIOpen(&c->sd, 0, &se);
	if (!se)
		SCIGetLocalNodeId(c->adapter, &c->node, 0, &se);
	if (se) {
		snv_seterr(err, errlen, "SISCI not available (%s): run as a program of a smartio host "
			   "(`smartio exec --host N`) of a running cluster", SCIGetErrorString(se));
		rc = snv_errno(se);
		goto fail;
	}
	/* The manager holds the device exclusively while it resets it: retry. */
	deadline = smio_now_ms() + c->timeout_ms;
	for (;;) {
		SCIBorrowDevice(c->sd, &c->dev, c->fdid, 0, &se);
		if (se != SCI_ERR_NOT_AVAILABLE || smio_now_ms() >= deadline)
			break;
		snv_pause_ms(5);
	}
	if (se) {
		snv_seterr(err, errlen, "cannot borrow device %#x: %s (list devices with `smartio "
			   "lspci`)", c->fdid, SCIGetErrorString(se));
		rc = snv_errno(se);
		goto fail;
	}
	c->borrowed = true;
	rc = snv_mp_bar_primary(c);
	if (rc) {
		snv_seterr(err, errlen, "cannot map the doorbells of %#x: %s", c->fdid,
			   strerror(-rc));
		goto fail;
	}
	if (c->mp) {
		rc = snv_mp_client_open(c);
		if (rc) {
			snv_seterr(err, errlen, "cannot map the doorbells of %#x through the backup "
				   "adapter %u: %s (does this host have a second path to the lender?)",
				   c->fdid, c->bk_adapter, strerror(-rc));
			goto fail;
		}
	}
	c->dstrd = (unsigned)NVME_CAP_DSTRD(snv_rd64(c->bar, NVME_REG_CAP));
	rc = find_manager(c, err, errlen);
	if (!rc)
		rc = load_ctrl(c, err, errlen);
	if (rc)
		goto fail;
	*out = c;
	return 0;
fail:
	snv_client_close(c);
	return rc;
}

void snv_client_close(struct snv_client *c)
{
	sci_error_t se;

	if (!c)
		return;
	while (c->nqps)                               /* frees it even if the manager is gone */
		snv_qpair_delete(c->qps[c->nqps - 1], true);
	while (c->nbufs)
		snv_buf_free(c->bufs[c->nbufs - 1]);
	if (c->have_chan && c->client_id) {
		pthread_mutex_lock(&c->lock);
		snv_rpc(c, SNV_MSG_BYE, NULL, 0, NULL, 0, NULL, 0, NULL);
		pthread_mutex_unlock(&c->lock);
	}
	if (c->have_chan)
		SCIDisconnectDataInterrupt(c->chan, 0, &se);
	if (c->have_reply)
		SCIRemoveDataInterrupt(c->reply, 0, &se);
	if (c->have_live)
		SCIRemoveInterrupt(c->live, 0, &se);
	for (unsigned i = 0; i < c->nsegs; i++) {
		if (c->segs[i].dev_mapped)
			SCIUnmapRemoteSegmentForDevice(c->segs[i].rs, c->dev, 0, &se);
		if (c->segs[i].map)
			SCIUnmapSegment(c->segs[i].map, 0, &se);
		if (c->segs[i].rs)
			SCIDisconnectSegment(c->segs[i].rs, 0, &se);
	}
	if (c->accel_fdid)            /* its device segments go with the borrow */
		SCIReturnDevice(c->accel, 0, &se);
	if (c->cmb_map)
		SCIUnmapSegment(c->cmb_map, 0, &se);
	if (c->cmb_rs)
		SCIDisconnectSegment(c->cmb_rs, 0, &se);
	snv_mp_client_close(c);
	if (c->bar_map)
		SCIUnmapSegment(c->bar_map, 0, &se);
	if (c->bar_rs)
		SCIDisconnectSegment(c->bar_rs, 0, &se);
	if (c->borrowed)
		SCIReturnDevice(c->dev, 0, &se);
	if (c->sd)
		SCIClose(c->sd, 0, &se);
	free(c->qps);
	free(c->bufs);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
