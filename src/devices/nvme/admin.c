// SPDX-License-Identifier: MIT
/*
 * Admin command set (NVMe 1.4 section 5): Identify, queue management,
 * features, log pages, Abort and Asynchronous Event Request. Dispatch is a
 * table indexed by opcode; a missing entry is Invalid Command Opcode.
 */
#include <stdio.h>
#include <string.h>

#include "ctrl.h"
#include "util/smio_time.h"

#define MODEL_NAME      "smartio emulated NVMe"
#define FW_REV          "0.1"
#define WCTEMP          343
#define CCTEMP          373

static void pad_copy(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	memset(dst, ' ', n);
	memcpy(dst, src, l < n ? l : n);
}

static void put_u128(uint8_t out[16], uint64_t v)
{
	memset(out, 0, 16);
	memcpy(out, &v, sizeof(v));
}

/* ---- Identify ---- */

static void identify_ctrl(struct nvme_ctrl *c, struct nvme_id_ctrl *id)
{
	uint64_t total = 0;

	memset(id, 0, sizeof(*id));
	id->vid = c->vid;
	id->ssvid = c->vid;
	pad_copy(id->sn, sizeof(id->sn), c->serial);
	pad_copy(id->mn, sizeof(id->mn), MODEL_NAME);
	pad_copy(id->fr, sizeof(id->fr), FW_REV);
	id->rab = 0;
	/* IEEE OUI left 0: smartio owns none, and borrowing a vendor's would claim its product */
	id->mdts = NVME_MDTS;
	id->cntlid = c->d->fn.vf_index;   /* PF 0, VF n: n (distinct in the subsystem) */
	id->ver = 0x00010400;
	id->oaes = 0;
	id->cntrltype = 1;              /* I/O controller */
	id->oacs = 0;                   /* no security, format, firmware, NS management */
	id->acl = NVME_ACL;
	id->aerl = NVME_AERL;
	id->frmw = 0x03;                /* one slot, slot 1 read-only */
	id->lpa = 0x04;                 /* extended Get Log Page (NUMDU, LPO) */
	id->elpe = NVME_ERRLOG_ENTRIES - 1;
	id->npss = 0;
	id->wctemp = WCTEMP;
	id->cctemp = CCTEMP;
	for (uint32_t i = 0; i < c->nns; i++)
		total += c->ns[i].nsze << c->ns[i].lba_shift;
	put_u128(id->tnvmcap, total);
	id->sqes = (NVME_SQES_LOG2 << 4) | NVME_SQES_LOG2;
	id->cqes = (NVME_CQES_LOG2 << 4) | NVME_CQES_LOG2;
	id->maxcmd = 0;
	id->nn = c->nns;
	id->oncs = NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WRITE_ZEROES;
	id->fuses = 0;
	id->fna = 0;
	id->vwc = NVME_CTRL_VWC_PRESENT | NVME_CTRL_VWC_FLUSH;  /* broadcast flush supported */
	id->sgls = 0;                   /* SGLs not supported */
	snprintf(id->subnqn, sizeof(id->subnqn), "nqn.2014-08.org.smartio:nvme:%s", c->serial);
	id->psd[0].mp = 1800;           /* 18 W in centiwatts */
	id->psd[0].enlat = 0;
	id->psd[0].exlat = 0;
}

static uint16_t identify(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint8_t cns = s->cdw10 & 0xff;
	uint8_t *buf = c->buf;
	struct nvme_ns *ns;

	memset(buf, 0, NVME_IDENTIFY_DATA_SIZE);
	switch (cns) {
	case NVME_IDENTIFY_CNS_NS:
		ns = nvme_ns_get(c, s->nsid);
		if (!ns)
			return SC_GEN(INVALID_NS) | SC_DNR;
		nvme_ns_identify(c, ns, (struct nvme_id_ns *)buf);
		break;
	case NVME_IDENTIFY_CNS_CTRL:
		identify_ctrl(c, (struct nvme_id_ctrl *)buf);
		break;
	case NVME_IDENTIFY_CNS_NS_ACTIVE_LIST: {
		uint32_t *list = (uint32_t *)buf, n = 0;

		if (s->nsid >= 0xfffffffeu)
			return SC_GEN(INVALID_NS) | SC_DNR;
		for (uint32_t i = 0; i < c->nns && n < NVME_ID_NS_LIST_MAX; i++)
			if (c->ns[i].nsid > s->nsid)
				list[n++] = c->ns[i].nsid;
		break;
	}
	case NVME_IDENTIFY_CNS_NS_DESC_LIST: {
		uint8_t *p = buf;

		ns = nvme_ns_get(c, s->nsid);
		if (!ns)
			return SC_GEN(INVALID_NS) | SC_DNR;
		p[0] = NVME_NIDT_EUI64;
		p[1] = NVME_NIDT_EUI64_LEN;
		memcpy(p + 4, ns->eui64, NVME_NIDT_EUI64_LEN);
		p += 4 + NVME_NIDT_EUI64_LEN;
		p[0] = NVME_NIDT_NGUID;
		p[1] = NVME_NIDT_NGUID_LEN;
		memcpy(p + 4, ns->nguid, NVME_NIDT_NGUID_LEN);
		p += 4 + NVME_NIDT_NGUID_LEN;
		p[0] = NVME_NIDT_UUID;
		p[1] = NVME_NIDT_UUID_LEN;
		memcpy(p + 4, ns->uuid, NVME_NIDT_UUID_LEN);
		break;
	}
	default:
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	}
	return nvme_prp_xfer(c, s, buf, NVME_IDENTIFY_DATA_SIZE, true);
}

/* ---- Queue management ---- */

static bool io_qid_ok(const struct nvme_ctrl *c, uint32_t qid, uint32_t alloc)
{
	return qid >= 1 && qid <= alloc && qid <= c->nqueues;
}

static uint16_t create_cq(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint32_t qid = NVME_CDW10_QID(s->cdw10), qsize = NVME_CDW10_QSIZE(s->cdw10);
	uint32_t iv = NVME_CQ_IV(s->cdw11);
	bool ien = NVME_CQ_IEN(s->cdw11);
	uint64_t off, bytes = ((uint64_t)qsize + 1) * sizeof(struct nvme_cqe);
	struct nvme_cq *cq;

	if (!io_qid_ok(c, qid, c->alloc_ncq) || c->cq[qid].valid)
		return SC_CMD(QID_INVALID) | SC_DNR;
	if (qsize < 1 || qsize > c->mqes)
		return SC_CMD(QUEUE_SIZE) | SC_DNR;
	if (!NVME_Q_PC(s->cdw11))
		return SC_GEN(INVALID_FIELD) | SC_DNR;         /* CAP.CQR: contiguous only */
	if (ien && iv >= c->nvec)
		return SC_CMD(INVALID_VECTOR) | SC_DNR;
	if (!s->prp1)
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	if (s->prp1 & (c->page_size - 1))
		return SC_GEN(PRP_INVALID_OFFSET) | SC_DNR;
	if (nvme_cmb_range(c, s->prp1, 1, &off))
		return SC_GEN(CMB_INVALID_USE) | SC_DNR;       /* CMBSZ.CQS = 0 */
	(void)bytes;
	cq = &c->cq[qid];
	*cq = (struct nvme_cq){ .valid = true, .size = qsize + 1, .base = s->prp1, .ien = ien,
				.iv = (uint16_t)iv, .phase = 1 };
	dev_set_reg32(c->d, 0, nvme_cq_head_db(qid, c->dstrd), 0);
	return SC_OK;
}

static uint16_t create_sq(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint32_t qid = NVME_CDW10_QID(s->cdw10), qsize = NVME_CDW10_QSIZE(s->cdw10);
	uint32_t cqid = NVME_SQ_CQID(s->cdw11);
	uint64_t off, bytes = ((uint64_t)qsize + 1) * sizeof(struct nvme_sqe);
	bool cmb = false;
	struct nvme_sq *sq;

	if (!io_qid_ok(c, qid, c->alloc_nsq) || c->sq[qid].valid)
		return SC_CMD(QID_INVALID) | SC_DNR;
	if (qsize < 1 || qsize > c->mqes)
		return SC_CMD(QUEUE_SIZE) | SC_DNR;
	if (cqid == 0 || cqid > c->nqueues || !c->cq[cqid].valid)
		return SC_CMD(CQ_INVALID) | SC_DNR;
	if (!NVME_Q_PC(s->cdw11))
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	if (!s->prp1)
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	if (s->prp1 & (c->page_size - 1))
		return SC_GEN(PRP_INVALID_OFFSET) | SC_DNR;
	if (nvme_cmb_range(c, s->prp1, 1, &off)) {
		if (!nvme_cmb_range(c, s->prp1, bytes, &off))
			return SC_GEN(INVALID_FIELD) | SC_DNR;  /* runs off the CMB's end */
		cmb = true;
	}
	sq = &c->sq[qid];
	*sq = (struct nvme_sq){ .valid = true, .cmb = cmb, .size = qsize + 1, .base = s->prp1,
				.cqid = (uint16_t)cqid, .prio = (uint8_t)NVME_SQ_QPRIO(s->cdw11) };
	c->cq[cqid].nsq++;
	dev_set_reg32(c->d, 0, nvme_sq_tail_db(qid, c->dstrd), 0);
	return SC_OK;
}

static uint16_t delete_sq(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	uint32_t qid = NVME_CDW10_QID(cmd->sqe.cdw10);

	if (qid == 0 || qid > c->nqueues || !c->sq[qid].valid)
		return SC_CMD(QID_INVALID) | SC_DNR;
	nvme_sq_delete(c, (uint16_t)qid);
	return SC_OK;
}

static uint16_t delete_cq(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	uint32_t qid = NVME_CDW10_QID(cmd->sqe.cdw10);

	if (qid == 0 || qid > c->nqueues || !c->cq[qid].valid)
		return SC_CMD(QID_INVALID) | SC_DNR;
	if (c->cq[qid].nsq)
		return SC_CMD(INVALID_QUEUE) | SC_DNR;
	nvme_cq_delete(c, (uint16_t)qid);
	return SC_OK;
}

/* ---- Features ---- */

static bool io_queues_exist(const struct nvme_ctrl *c)
{
	for (uint32_t q = 1; q <= c->nqueues; q++)
		if (c->sq[q].valid || c->cq[q].valid)
			return true;
	return false;
}

/* Temperature over/under the thresholds raises a SMART event, as hardware does. */
static void check_temperature(struct nvme_ctrl *c)
{
	if ((NVME_TEMP_KELVIN > c->feat.tmpth_over || NVME_TEMP_KELVIN < c->feat.tmpth_under) &&
	    (c->feat.aec & 0x2))
		nvme_aen(c, NVME_AER_SMART, NVME_AER_SMART_TEMPERATURE_THRESHOLD,
			 NVME_LOG_LID_SMART);
}

static uint16_t set_features(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint8_t fid = s->cdw10 & 0xff;
	uint32_t v = s->cdw11;

	if (s->cdw10 & (1u << 31))
		return SC_CMD(FEATURE_NOT_SAVEABLE) | SC_DNR;
	switch (fid) {
	case NVME_FEAT_FID_ARBITRATION:
		c->feat.arb = v & 0xffffff07u;
		break;
	case NVME_FEAT_FID_POWER_MGMT:
		if ((v & 0x1f) > 0)     /* NPSS = 0: only power state 0 */
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		c->feat.pm = v & 0xff;
		break;
	case NVME_FEAT_FID_TEMP_THRESH: {
		unsigned tmpsel = (v >> 16) & 0xf, thsel = (v >> 20) & 0x3;

		if (tmpsel != 0 || thsel > 1)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		if (thsel == 0)
			c->feat.tmpth_over = (uint16_t)v;
		else
			c->feat.tmpth_under = (uint16_t)v;
		check_temperature(c);
		break;
	}
	case NVME_FEAT_FID_ERR_RECOVERY:
		if (v & (1u << 16))     /* DULBE needs NSFEAT bit 2 */
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		c->feat.err_rec = v & 0xffff;
		break;
	case NVME_FEAT_FID_VOLATILE_WC:
		c->feat.vwc = v & 1;
		break;
	case NVME_FEAT_FID_NUM_QUEUES: {
		uint32_t nsqr = v & 0xffff, ncqr = v >> 16;

		if (nsqr == 0xffff || ncqr == 0xffff)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		if (io_queues_exist(c))
			return SC_GEN(CMD_SEQ_ERROR) | SC_DNR;
		/* The controller allocates what it has, whatever was asked (NVMe base
		 * spec: NSQA/NCQA may be more or fewer than requested; QEMU's model and
		 * real drives answer their maximum). The host uses min(asked, allocated). */
		c->alloc_nsq = c->nqueues;
		c->alloc_ncq = c->nqueues;
		cmd->dw0 = (c->alloc_ncq - 1) << 16 | (c->alloc_nsq - 1);
		return SC_OK;
	}
	case NVME_FEAT_FID_IRQ_COALESCE:
		c->feat.irq_coal = v & 0xffff;
		break;
	case NVME_FEAT_FID_IRQ_CONFIG:
		if ((v & 0xffff) >= c->nvec)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		c->iv_cd[v & 0xffff] = (v >> 16) & 1;
		break;
	case NVME_FEAT_FID_WRITE_ATOMIC:
		c->feat.wr_atomic = v & 1;
		break;
	case NVME_FEAT_FID_ASYNC_EVENT:
		c->feat.aec = v;
		check_temperature(c);
		break;
	default:
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	}
	return SC_OK;
}

static uint16_t get_features(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint8_t fid = s->cdw10 & 0xff;
	unsigned sel = (s->cdw10 >> 8) & 7;
	struct nvme_features def, *f = &c->feat;
	bool dflt = sel == 1 || sel == 2;       /* nothing is saveable: saved == default */

	if (sel > 3)
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	memset(&def, 0, sizeof(def));
	def.arb = 3;
	def.tmpth_over = WCTEMP;
	def.vwc = 1;
	if (dflt)
		f = &def;
	switch (fid) {
	case NVME_FEAT_FID_ARBITRATION:   cmd->dw0 = f->arb; break;
	case NVME_FEAT_FID_POWER_MGMT:    cmd->dw0 = f->pm; break;
	case NVME_FEAT_FID_TEMP_THRESH: {
		unsigned tmpsel = (s->cdw11 >> 16) & 0xf, thsel = (s->cdw11 >> 20) & 0x3;

		if (tmpsel != 0 || thsel > 1)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		cmd->dw0 = thsel ? f->tmpth_under : f->tmpth_over;
		break;
	}
	case NVME_FEAT_FID_ERR_RECOVERY:  cmd->dw0 = f->err_rec; break;
	case NVME_FEAT_FID_VOLATILE_WC:   cmd->dw0 = f->vwc; break;
	case NVME_FEAT_FID_NUM_QUEUES:
		cmd->dw0 = dflt ? (c->nqueues - 1) << 16 | (c->nqueues - 1)
				: (c->alloc_ncq - 1) << 16 | (c->alloc_nsq - 1);
		break;
	case NVME_FEAT_FID_IRQ_COALESCE:  cmd->dw0 = f->irq_coal; break;
	case NVME_FEAT_FID_IRQ_CONFIG:
		if ((s->cdw11 & 0xffff) >= c->nvec)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		cmd->dw0 = (s->cdw11 & 0xffff) | (dflt ? 0 : (uint32_t)c->iv_cd[s->cdw11 & 0xffff] << 16);
		break;
	case NVME_FEAT_FID_WRITE_ATOMIC:  cmd->dw0 = f->wr_atomic; break;
	case NVME_FEAT_FID_ASYNC_EVENT:   cmd->dw0 = f->aec; break;
	default:
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	}
	if (sel == 3)
		cmd->dw0 = 0x4;         /* capabilities: changeable, not saveable, not per-NS */
	return SC_OK;
}

/* ---- Log pages ---- */

static size_t smart_log(struct nvme_ctrl *c, struct nvme_smart_log *l)
{
	uint64_t now = smio_now_ns();
	uint16_t temp = NVME_TEMP_KELVIN;

	memset(l, 0, sizeof(*l));
	if (NVME_TEMP_KELVIN > c->feat.tmpth_over || NVME_TEMP_KELVIN < c->feat.tmpth_under)
		l->critical_warning |= NVME_SMART_CRIT_TEMPERATURE;
	memcpy(l->temperature, &temp, 2);
	l->avail_spare = 100;
	l->spare_thresh = 10;
	l->percent_used = 0;
	/* data units: thousands of 512-byte units, rounded up */
	put_u128(l->data_units_read, (c->bytes_read + 511999) / 512000);
	put_u128(l->data_units_written, (c->bytes_written + 511999) / 512000);
	put_u128(l->host_reads, c->host_reads);
	put_u128(l->host_writes, c->host_writes);
	put_u128(l->ctrl_busy_time, c->busy_ns / 60000000000ull);
	put_u128(l->power_cycles, 1);
	put_u128(l->power_on_hours, (now - c->created_ns) / 3600000000000ull);
	put_u128(l->num_err_log_entries, c->err_count);
	l->temp_sensor[0] = temp;
	return sizeof(*l);
}

static uint16_t get_log_page(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint8_t lid = s->cdw10 & 0xff;
	bool rae = s->cdw10 & (1u << 15);
	uint64_t len = nvme_log_len(s), off = nvme_log_offset(s);
	union {
		struct nvme_smart_log smart;
		struct nvme_firmware_slot fw;
		uint8_t raw[sizeof(c->errlog)];
	} u;
	const void *src = &u;
	size_t size;
	unsigned aen_type = 8;

	memset(&u, 0, sizeof(u));
	switch (lid) {
	case NVME_LOG_LID_ERROR:
		src = c->errlog;
		size = sizeof(c->errlog);
		aen_type = NVME_AER_ERROR;
		break;
	case NVME_LOG_LID_SMART:
		if (s->nsid != 0 && s->nsid != 0xffffffffu)
			return SC_GEN(INVALID_FIELD) | SC_DNR;  /* LPA bit 0: no per-NS log */
		size = smart_log(c, &u.smart);
		aen_type = NVME_AER_SMART;
		break;
	case SMARTIO_NVME_LOG_ARB:
		if (len > NVME_MAX_XFER)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		memset(c->buf, 0, len);
		size = nvme_arb_log(c, c->buf, off, len);
		if ((off & 3) || off >= size)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		return nvme_prp_xfer(c, s, c->buf, (uint32_t)len, true);
	case NVME_LOG_LID_FW_SLOT:
		u.fw.afi = 1;
		pad_copy(u.fw.frs[0], sizeof(u.fw.frs[0]), FW_REV);
		size = sizeof(u.fw);
		break;
	case SMARTIO_LOG_LID_TIMING:
		/* built in c->buf (NVME_MAX_XFER), copied to the front below */
		size = nvme_timing_log(c, c->buf + NVME_MAX_XFER / 2, NVME_MAX_XFER / 2);
		src = c->buf + NVME_MAX_XFER / 2;
		if (len > NVME_MAX_XFER / 2)
			return SC_GEN(INVALID_FIELD) | SC_DNR;
		break;
	default:
		return SC_CMD(INVALID_LOG_PAGE) | SC_DNR;
	}
	if ((off & 3) || off >= size || len > NVME_MAX_XFER)
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	memmove(c->buf, (const uint8_t *)src + off, len < size - off ? len : size - off);
	if (len > size - off)
		memset(c->buf + (size - off), 0, len - (size - off));
	if (!rae && aen_type < 8)
		c->aen_masked &= (uint8_t)~(1u << aen_type);
	return nvme_prp_xfer(c, s, c->buf, (uint32_t)len, true);
}

/* ---- Abort, Asynchronous Event Request ---- */

/*
 * Best effort, like most controllers: only a command still waiting in its SQ
 * (behind the tail the host rang, not yet fetched) can be aborted; it will
 * complete with Command Abort Requested when fetched. DW0 bit 0 = not aborted.
 */
static uint16_t abort_cmd(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	uint32_t sqid = cmd->sqe.cdw10 & 0xffff;
	uint16_t cid = (uint16_t)(cmd->sqe.cdw10 >> 16);
	struct nvme_sqe chunk[16];
	struct nvme_sq *sq;
	uint32_t i, n;

	cmd->dw0 = 1;
	if (sqid > c->nqueues || !c->sq[sqid].valid || c->naborts == NVME_ABORT_MAX)
		return SC_OK;
	sq = &c->sq[sqid];
	for (i = sq->head; i != sq->tail; i = (i + n) % sq->size) {
		uint32_t end = sq->tail > i ? sq->tail : sq->size;

		n = end - i < 16 ? end - i : 16;
		if (nvme_dma(c, sq->base + (uint64_t)i * sizeof(chunk[0]), chunk,
			     n * sizeof(chunk[0]), false))
			return SC_OK;
		for (uint32_t k = 0; k < n; k++) {
			if (chunk[k].cid == cid) {
				c->aborts[c->naborts].sqid = (uint16_t)sqid;
				c->aborts[c->naborts++].cid = cid;
				cmd->dw0 = 0;
				return SC_OK;
			}
		}
	}
	return SC_OK;
}

static uint16_t async_event(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	if (c->naer > NVME_AERL)
		return SC_CMD(ASYNC_LIMIT);
	c->aer_cid[c->naer++] = cmd->sqe.cid;
	cmd->deferred = true;
	return SC_OK;
}

static const nvme_cmd_fn admin_ops[256] = {
	[nvme_admin_delete_sq]     = delete_sq,
	[nvme_admin_create_sq]     = create_sq,
	[nvme_admin_get_log_page]  = get_log_page,
	[nvme_admin_delete_cq]     = delete_cq,
	[nvme_admin_create_cq]     = create_cq,
	[nvme_admin_identify]      = identify,
	[nvme_admin_abort_cmd]     = abort_cmd,
	[nvme_admin_set_features]  = set_features,
	[nvme_admin_get_features]  = get_features,
	[nvme_admin_async_event]   = async_event,
};

uint16_t nvme_admin_exec(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	nvme_cmd_fn fn = admin_ops[cmd->sqe.opcode];

	return fn ? fn(c, cmd) : SC_GEN(INVALID_OPCODE) | SC_DNR;
}
