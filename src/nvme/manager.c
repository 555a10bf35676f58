// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme manager: borrow the controller exclusively, reset it, set
 * up the admin queues in the lender's RAM, enable it, release the borrow to
 * shared and serve clients (mgr_rpc.c) until stopped.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snv_mgr.h"
#include "util/smio_time.h"

void snv_mlog(struct snv_manager *m, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!m->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	m->o.log(m->o.log_arg, line);
}

static int wait_csts(struct snv_manager *m, uint32_t mask, uint32_t want)
{
	uint64_t deadline = smio_now_ms() + m->to_ms;

	for (;;) {
		uint32_t csts = snv_rd32(m->bar, NVME_REG_CSTS);

		if ((csts & mask) == want)
			return 0;
		if (csts == UINT32_MAX)
			return -ENODEV;               /* gone (its daemon died): reads all-ones */
		if (want && NVME_CSTS_CFS(csts))
			return -EIO;                  /* controller fatal status */
		if (smio_now_ms() >= deadline)
			return -ETIMEDOUT;
		snv_pause_ms(1);
	}
}

int snv_mgr_admin(struct snv_manager *m, struct nvme_sqe *cmd, uint32_t *dw0)
{
	unsigned depth = m->o.admin_depth;
	uint16_t cid = m->next_cid++;
	uint64_t deadline;
	unsigned spins = 0;

	cmd->cid = cid;
	memcpy(&m->asq[m->asq_tail], cmd, sizeof(*cmd));
	m->asq_tail = nvme_q_next(m->asq_tail, depth);
	snv_wr32(m->bar, nvme_sq_tail_db(0, m->dstrd), m->asq_tail);
	deadline = smio_now_ms() + 5000;
	for (;;) {
		struct nvme_cqe *e = &m->acq[m->acq_head];

		if (nvme_cqe_is_new(e, m->acq_phase)) {
			struct nvme_cqe c = *e;

			nvme_q_advance(&m->acq_head, &m->acq_phase, depth);
			snv_wr32(m->bar, nvme_cq_head_db(0, m->dstrd), m->acq_head);
			if (c.cid != cid)
				continue;             /* a late completion of a timed-out command */
			if (dw0)
				*dw0 = c.dw0;
			return nvme_cqe_st(&c);
		}
		if (++spins < 2000) {
			sched_yield();
			continue;
		}
		if (smio_now_ms() >= deadline)
			return -ETIMEDOUT;
		if (NVME_CSTS_CFS(snv_rd32(m->bar, NVME_REG_CSTS)))
			return -EIO;
		snv_pause_ms(1);
	}
}

void snv_mgr_data_prps(struct snv_manager *m, struct nvme_sqe *cmd, size_t len)
{
	uint64_t *list = (uint64_t *)((uint8_t *)m->data.vaddr + SNV_DATA_MAX);
	size_t pages = (len + SNV_PAGE - 1) / SNV_PAGE;

	cmd->prp1 = m->data.io;
	cmd->prp2 = 0;
	if (pages == 2) {
		cmd->prp2 = m->data.io + SNV_PAGE;
	} else if (pages > 2) {
		for (size_t i = 1; i < pages; i++)
			list[i - 1] = m->data.io + i * SNV_PAGE;
		cmd->prp2 = m->data.io + SNV_DATA_MAX;
	}
}

/* A device segment of the manager in the lender's RAM, mapped for CPU and device. */
static int admin_seg(struct snv_manager *m, uint32_t id, size_t size, unsigned hints,
		     sci_remote_segment_t *rs, sci_map_t *map, bool *dev_mapped, void **va,
		     sci_ioaddr_t *io)
{
	sci_error_t err;

	SCICreateDeviceSegment(m->dev, id, size, SCI_MEMTYPE_PRIVATE, hints, 0, &err);
	if (err)
		return snv_errno(err);
	SCIConnectDeviceSegment(m->dev, rs, id, SCI_MEMTYPE_PRIVATE, NULL, NULL, 0, &err);
	if (err)
		return snv_errno(err);
	*va = (void *)SCIMapRemoteSegment(*rs, map, 0, size, NULL, 0, &err);
	if (err) {
		*map = NULL;
		return snv_errno(err);
	}
	SCIMapRemoteSegmentForDevice(*rs, m->dev, io, 0, size, 0, &err);
	if (err)
		return snv_errno(err);
	*dev_mapped = true;
	memset(*va, 0, size);
	return 0;
}

static int ctrl_reset(struct snv_manager *m, char *err, size_t errlen)
{
	unsigned d = m->o.admin_depth;
	uint32_t cc, dw0 = 0;
	struct nvme_sqe cmd;
	uint64_t cap;
	int rc;

	cap = snv_rd64(m->bar, NVME_REG_CAP);
	m->mqes = (unsigned)NVME_CAP_MQES(cap);
	m->dstrd = (unsigned)NVME_CAP_DSTRD(cap);
	m->to_ms = (unsigned)(NVME_CAP_TO(cap) ? NVME_CAP_TO(cap) : 1) * 500u;
	if (m->mqes + 1 < d)
		d = m->o.admin_depth = m->mqes + 1;
	cc = snv_rd32(m->bar, NVME_REG_CC);
	if (cc & SNV_CC_EN)
		snv_wr32(m->bar, NVME_REG_CC, cc & ~SNV_CC_EN);
	rc = wait_csts(m, SNV_CSTS_RDY, 0);
	if (rc) {
		snv_seterr(err, errlen, "controller did not become ready for reset (CSTS.RDY stays 1 "
			   "for %u ms): check the device with `smartio lspci`", m->to_ms);
		return rc;
	}
	snv_wr32(m->bar, NVME_REG_AQA, NVME_SET(d - 1, AQA_ACQS) | NVME_SET(d - 1, AQA_ASQS));
	snv_wr64(m->bar, NVME_REG_ASQ, m->asq_io);
	snv_wr64(m->bar, NVME_REG_ACQ, m->acq_io);
	/* IOCQES 16 B, IOSQES 64 B, AMS (WRR + urgent when supported), MPS 4 KiB
	 * (2^(12 + 0)), CSS NVM, EN. */
	snv_wr32(m->bar, NVME_REG_CC, NVME_SET(NVME_CQES_LOG2, CC_IOCQES) |
		 NVME_SET(NVME_SQES_LOG2, CC_IOSQES) |
		 NVME_SET(snv_mgr_policy_ams(m, cap), CC_AMS) |
		 NVME_SET(0u, CC_MPS) | NVME_SET(NVME_CC_CSS_NVM, CC_CSS) | SNV_CC_EN);
	rc = wait_csts(m, SNV_CSTS_RDY, SNV_CSTS_RDY);
	if (rc) {
		snv_seterr(err, errlen, "controller %s after enable (CSTS %#x): the admin queues "
			   "are not reachable by the device", rc == -EIO ? "failed" : "timed out",
			   snv_rd32(m->bar, NVME_REG_CSTS));
		return rc;
	}
	m->asq_tail = m->acq_head = 0;
	m->acq_phase = 1;
	/* Number of Queues: ask for the most, the controller allocates what it has. */
	nvme_sqe_init(&cmd, nvme_admin_set_features, 0, 0);
	cmd.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	cmd.cdw11 = 0xfffeu << 16 | 0xfffeu;
	rc = snv_mgr_admin(m, &cmd, &dw0);
	if (rc) {
		snv_seterr(err, errlen, "Set Features (Number of Queues) failed (%d)", rc);
		return rc < 0 ? rc : -EIO;
	}
	m->nqueues = ((dw0 & 0xffff) < (dw0 >> 16) ? (dw0 & 0xffff) : (dw0 >> 16)) + 1;
	if (m->nqueues > SNV_MAX_QUEUES)
		m->nqueues = SNV_MAX_QUEUES;
	return snv_mgr_policy_apply(m, err, errlen);
}

int snv_manager_start(const struct snv_manager_opts *o, struct snv_manager **out, char *err,
		      size_t errlen)
{
	struct snv_manager *m;
	unsigned int intno;
	sci_error_t se;
	int rc;

	*out = NULL;
	if (!o || !o->fdid) {
		snv_seterr(err, errlen, "no controller given: pass its fabric device ID");
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->o = *o;
	if (!m->o.channel_intno)
		m->o.channel_intno = SNV_CHANNEL_INTNO(o->fdid);
	if (!m->o.admin_depth)
		m->o.admin_depth = 32;
	if (m->o.admin_depth < 2 || m->o.admin_depth > 4096)
		m->o.admin_depth = 32;
	if (!m->o.max_clients)
		m->o.max_clients = 64;
	if (m->o.max_clients > 1024)
		m->o.max_clients = 1024;
	if (!m->o.heartbeat_ms)
		m->o.heartbeat_ms = 250;
	m->cl = calloc(m->o.max_clients, sizeof(*m->cl));
	if (!m->cl) {
		free(m);
		return -ENOMEM;
	}
	m->gen = (uint16_t)snv_random64();
	rc = snv_mgr_policy_init(m, err, errlen);
	if (rc)
		goto fail;
	SCIInitialize(0, &se);
	if (se) {
		snv_seterr(err, errlen, "SISCI not available (%s): run as a program of a smartio host "
			   "(`smartio exec --host N`, SMARTIO_HOST)", SCIGetErrorString(se));
		rc = snv_errno(se);
		goto fail;
	}
	SCIOpen(&m->sd, 0, &se);
	if (se) {
		snv_seterr(err, errlen, "SCIOpen: %s: is the cluster up (`smartio cluster up`)?",
			   SCIGetErrorString(se));
		rc = snv_errno(se);
		goto fail;
	}
	SCIBorrowDevice(m->sd, &m->dev, o->fdid, SCI_FLAG_EXCLUSIVE, &se);
	if (se) {
		snv_seterr(err, errlen, "cannot borrow device %#x exclusively: %s%s", o->fdid,
			   SCIGetErrorString(se), se == SCI_ERR_NOT_AVAILABLE ?
			   " (someone else uses it: stop other managers and drivers first)" : "");
		rc = snv_errno(se);
		goto fail;
	}
	m->borrowed = true;
	SCIConnectDeviceSegment(m->dev, &m->bar_rs, 0, SCI_MEMTYPE_BAR, NULL, NULL, 0, &se);
	if (!se)
		m->bar = (volatile uint8_t *)SCIMapRemoteSegment(m->bar_rs, &m->bar_map, 0,
								 SNV_BAR0_SIZE, NULL,
								 SCI_FLAG_IO_MAP_IOSPACE, &se);
	if (se) {
		m->bar = NULL;
		snv_seterr(err, errlen, "cannot map BAR0 of %#x: %s", o->fdid, SCIGetErrorString(se));
		rc = snv_errno(se);
		goto fail;
	}
	rc = admin_seg(m, SNV_MGR_ASQ_ID, (size_t)m->o.admin_depth * 64,
		       SCI_MEMACCESS_HOST_WRITE | SCI_MEMACCESS_DEVICE_READ, &m->asq_rs, &m->asq_map,
		       &m->asq_dev, (void **)&m->asq, &m->asq_io);
	if (!rc)
		rc = admin_seg(m, SNV_MGR_ACQ_ID, (size_t)m->o.admin_depth * 16,
			       SCI_MEMACCESS_MULTIHOST_READ | SCI_MEMACCESS_DEVICE_WRITE,
			       &m->acq_rs, &m->acq_map, &m->acq_dev, (void **)&m->acq,
			       &m->acq_io);
	if (rc) {
		snv_seterr(err, errlen, "cannot allocate the admin queues in the lender's RAM (%s)",
			   strerror(-rc));
		goto fail;
	}
	rc = snv_dmamem_alloc(m->sd, o->adapter, m->dev, SNV_DATA_MAX + SNV_PAGE, &m->data);
	if (rc) {
		snv_seterr(err, errlen, "cannot allocate the admin data buffer (%s)", strerror(-rc));
		goto fail;
	}
	rc = ctrl_reset(m, err, errlen);
	if (rc)
		goto fail;
	snv_mgr_cmb_setup(m);
	SCIReleaseExclusiveBorrow(m->dev, 0, &se);
	if (se) {
		snv_seterr(err, errlen, "cannot release the exclusive borrow: %s",
			   SCIGetErrorString(se));
		rc = snv_errno(se);
		goto fail;
	}
	intno = m->o.channel_intno;
	SCICreateDataInterrupt(m->sd, &m->chan, o->adapter, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO,
			       &se);
	if (se) {
		snv_seterr(err, errlen, "cannot create the RPC channel (data interrupt %#x): %s%s",
			   intno, SCIGetErrorString(se), se == SCI_ERR_INTNO_USED ?
			   " (another manager of this controller runs on this host)" : "");
		rc = snv_errno(se);
		goto fail;
	}
	m->have_chan = true;
	m->next_hb = smio_now_ms() + m->o.heartbeat_ms;
	snv_mlog(m, "manager of %#x: %u I/O queue pairs, MQES %u, channel %#x", o->fdid,
		 m->nqueues, m->mqes, intno);
	*out = m;
	return 0;
fail:
	snv_manager_destroy(m);
	return rc;
}

void snv_manager_stop(struct snv_manager *m)
{
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
}

void snv_manager_get_stats(const struct snv_manager *m, struct snv_manager_stats *s)
{
	*s = m->st;
}

bool snv_manager_wrr(const struct snv_manager *m)
{
	return m->wrr;
}

int snv_manager_run(struct snv_manager *m, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : smio_now_ms() + (uint64_t)timeout_ms;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = smio_now_ms(), wait;
		unsigned int len = sizeof(m->in);
		sci_error_t se;

		if (now >= m->next_hb) {
			snv_mgr_heartbeat(m);
			now = smio_now_ms();
			m->next_hb = now + m->o.heartbeat_ms;
		}
		if (now >= deadline)
			return 0;
		wait = m->next_hb - now;
		if (wait > 100)
			wait = 100;                   /* notice snv_manager_stop soon */
		if (deadline - now < wait)
			wait = deadline - now;
		SCIWaitForDataInterrupt(m->chan, m->in, &len, (unsigned)wait, 0, &se);
		if (se == SCI_ERR_OK)
			snv_mgr_handle(m, len);
		else if (se == SCI_ERR_OUT_OF_RANGE)
			return -EPROTO;               /* cannot happen: 4096 is the maximum */
		else if (se != SCI_ERR_TIMEOUT)
			return se == SCI_ERR_CANCELLED ? 0 : snv_errno(se);
	}
	__atomic_store_n(&m->stop, 0, __ATOMIC_RELEASE);
	return 0;
}

void snv_manager_destroy(struct snv_manager *m)
{
	sci_error_t se;

	if (!m)
		return;
	for (unsigned i = 0; m->cl && i < m->o.max_clients; i++)
		if (m->cl[i].used)
			snv_mgr_drop_client(m, i, false);
	if (m->have_chan)
		SCIRemoveDataInterrupt(m->chan, 0, &se);
	if (m->bar && m->asq) {
		uint32_t cc = snv_rd32(m->bar, NVME_REG_CC);

		if (cc & SNV_CC_EN) {
			snv_wr32(m->bar, NVME_REG_CC, cc & ~SNV_CC_EN);
			wait_csts(m, SNV_CSTS_RDY, 0);
		}
	}
	snv_dmamem_free(&m->data, m->o.adapter, m->dev);
	snv_mgr_cmb_release(m);
	snv_mgr_accel_release(m);     /* the queues (and their SQs) went with their clients */
	if (m->asq_dev)
		SCIUnmapRemoteSegmentForDevice(m->asq_rs, m->dev, 0, &se);
	if (m->acq_dev)
		SCIUnmapRemoteSegmentForDevice(m->acq_rs, m->dev, 0, &se);
	if (m->asq_map)
		SCIUnmapSegment(m->asq_map, 0, &se);
	if (m->acq_map)
		SCIUnmapSegment(m->acq_map, 0, &se);
	if (m->asq_rs)
		SCIDisconnectSegment(m->asq_rs, 0, &se);
	if (m->acq_rs)
		SCIDisconnectSegment(m->acq_rs, 0, &se);
	if (m->bar_map)
		SCIUnmapSegment(m->bar_map, 0, &se);
	if (m->bar_rs)
		SCIDisconnectSegment(m->bar_rs, 0, &se);
	if (m->borrowed)
		SCIReturnDevice(m->dev, 0, &se);
	if (m->sd)
		SCIClose(m->sd, 0, &se);
	free(m->pol);
	free(m->cl);
	free(m);
}
