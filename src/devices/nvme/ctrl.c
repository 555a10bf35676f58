// SPDX-License-Identifier: MIT
/*
 * NVMe controller model (NVMe 1.4 subset): the controller registers in BAR0,
 * enable/disable/shutdown, doorbells, and completion posting with MSI-X.
 * Command fetch and arbitration are in arb.c, commands in admin.c/io.c.
 *
 * Software owns BAR0 as plain memory, so every pass re-asserts the read-only
 * registers and acts on *changes* of CC and of the doorbells it reads (each
 * doorbell is read once per pass).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "ctrl.h"
#include "util/log.h"
#include "util/smio_time.h"

#define NVME_VS_1_4             0x00010400u
#define NVME_CAP_TO_500MS       15      /* 7.5 s ready timeout */
#define BAR0                    0

static void set_csts(struct nvme_ctrl *c, uint32_t csts)
{
	c->csts = csts;
	dev_set_reg32(c->d, BAR0, NVME_REG_CSTS, csts);
}

/*
 * Fault isolation. CSTS.CFS stops every queue of every user of a shared
 * controller until someone resets it, so the model sets it only where the
 * spec makes it the answer: a configuration that cannot be brought up at
 * CC.EN (CSTS 3.1.6: CFS may be 1 after a fatal error during initialisation;
 * see ctrl_enable). A DMA error on one queue's memory is that queue's
 * problem, as on a robust PCIe controller (the spec's "Controller Fatal
 * Status Condition", sec. 9.5 of NVMe 1.4, is for errors the controller
 * cannot report through a completion queue *and* cannot survive):
 *
 * - a completion entry whose write fails is lost, as a dropped posted write
 *   is on PCIe: the tail advances as if it had landed, the host times the
 *   command out (post_cqe);
 * - an SQ entry whose fetch fails (Unsupported Request, all-ones) cannot be
 *   identified, so it cannot be completed with an error: the head stays and
 *   the fetch is retried with a back-off, other queues being served
 *   meanwhile (fetch_sq);
 * - data DMA failing completes that command with Data Transfer Error
 *   (prp.c).
 *
 * The admin queues get the same treatment: they are one host's memory like
 * any other queue (in smartio the manager's, in the lender's RAM); the
 * manager sees a lost admin completion as a timeout and may reset.
 * Each is counted, logged once per episode and put in the Error Information
 * log (CID FFFFh for an entry that could not be fetched).
 */
uint64_t nvme_pass_now(struct nvme_ctrl *c)
{
	if (!c->pass_ns)
		c->pass_ns = smio_now_ns();
	return c->pass_ns;
}

bool nvme_ctrl_running(const struct nvme_ctrl *c)
{
	return NVME_CSTS_RDY(c->csts) && !NVME_CSTS_CFS(c->csts) && !c->shutdown;
}

/* ---- Controller Memory Buffer ---- */

/* The CMB's bus address, from BAR2 as software programmed it; 0 if none. */
static uint64_t cmb_base(const struct nvme_ctrl *c)
{
	const struct dev_func *f = &c->d->fn;
	uint32_t lo, hi;

	if (!c->cmb_size || !f->bar[2])
		return 0;
	lo = f->bus->cfg_read(f->bus_ctx, 0x18, 4);
	hi = f->bus->cfg_read(f->bus_ctx, 0x1c, 4);
	return ((uint64_t)hi << 32 | lo) & ~0xfull;
}

/* Whether [addr, addr+len) lies entirely in the CMB; *off = offset in BAR2. */
bool nvme_cmb_range(const struct nvme_ctrl *c, uint64_t addr, uint64_t len, uint64_t *off)
{
	uint64_t base = cmb_base(c);

	if (!base || addr < base || addr - base >= c->cmb_size ||
	    len > c->cmb_size - (addr - base))
		return false;
	*off = addr - base;
	return true;
}

/* ---- Queues ---- */

static void zero_doorbells(struct nvme_ctrl *c, uint16_t qid)
{
	dev_set_reg32(c->d, BAR0, nvme_sq_tail_db(qid, c->dstrd), 0);
	dev_set_reg32(c->d, BAR0, nvme_cq_head_db(qid, c->dstrd), 0);
}

static bool post_cqe(struct nvme_ctrl *c, const struct nvme_pending *p);

/*
 * Deleting an SQ: its commands were already executed (data moved at fetch
 * time), so their completions are posted now rather than lost.
 */
void nvme_sq_delete(struct nvme_ctrl *c, uint16_t qid)
{
	struct nvme_sq *sq = &c->sq[qid];
	unsigned j = 0;

	for (unsigned i = 0; i < c->npend; i++) {
		if (c->pend[i].sqid == qid && qid != 0) {
			(void)post_cqe(c, &c->pend[i]);
			continue;
		}
		c->pend[j++] = c->pend[i];
	}
	c->npend = j;
	for (unsigned i = 0; i < c->naborts;) {
		if (c->aborts[i].sqid == qid)
			c->aborts[i] = c->aborts[--c->naborts];
		else
			i++;
	}
	if (sq->valid && c->cq[sq->cqid].nsq)
		c->cq[sq->cqid].nsq--;
	memset(sq, 0, sizeof(*sq));
	dev_set_reg32(c->d, BAR0, nvme_sq_tail_db(qid, c->dstrd), 0);
	c->db_rescan = true;
}

void nvme_cq_delete(struct nvme_ctrl *c, uint16_t qid)
{
	memset(&c->cq[qid], 0, sizeof(c->cq[qid]));
	dev_set_reg32(c->d, BAR0, nvme_cq_head_db(qid, c->dstrd), 0);
	c->db_rescan = true;
}

/* Controller reset (CC.EN 1 -> 0, FLR): queues, events and features go. */
static void ctrl_reset(struct nvme_ctrl *c)
{
	c->npend = 0;
	c->nirq = 0;
	for (uint32_t q = 0; q <= c->nqueues; q++) {
		memset(&c->sq[q], 0, sizeof(c->sq[q]));
		memset(&c->cq[q], 0, sizeof(c->cq[q]));
		zero_doorbells(c, (uint16_t)q);
	}
	c->naer = 0;
	c->naen = 0;
	c->aen_masked = 0;
	c->naborts = 0;
	c->shutdown = false;
	c->media_free_ns = 0;
	c->db_rescan = true;
	memset(c->rr_next, 0, sizeof(c->rr_next));
	c->ams = NVME_CC_AMS_RR;
	c->wrr_level = NVME_QPRIO_HIGH;
	c->wrr_credit = 0;
	nvme_features_default(c);
}

static void regs_reset(struct nvme_ctrl *c)
{
	struct dev_instance *d = c->d;

	c->cc = 0;
	c->intms = 0;
	dev_set_reg64(d, BAR0, NVME_REG_CAP, c->cap);
	dev_set_reg32(d, BAR0, NVME_REG_VS, NVME_VS_1_4);
	dev_set_reg32(d, BAR0, NVME_REG_INTMS, 0);
	dev_set_reg32(d, BAR0, NVME_REG_INTMC, 0);
	dev_set_reg32(d, BAR0, NVME_REG_CC, 0);
	dev_set_reg32(d, BAR0, NVME_REG_NSSR, 0);
	dev_set_reg32(d, BAR0, NVME_REG_AQA, 0);
	dev_set_reg64(d, BAR0, NVME_REG_ASQ, 0);
	dev_set_reg64(d, BAR0, NVME_REG_ACQ, 0);
	dev_set_reg32(d, BAR0, NVME_REG_CMBLOC, c->cmbloc);
	dev_set_reg32(d, BAR0, NVME_REG_CMBSZ, c->cmbsz);
	set_csts(c, 0);
}

/* CC.EN 0 -> 1: validate the configuration and the admin queues (latched now). */
static void ctrl_enable(struct nvme_ctrl *c, uint32_t cc)
{
	struct dev_instance *d = c->d;
	uint32_t aqa = dev_reg32(d, BAR0, NVME_REG_AQA);
	uint64_t asq = dev_reg64(d, BAR0, NVME_REG_ASQ);
	uint64_t acq = dev_reg64(d, BAR0, NVME_REG_ACQ);
	uint32_t mps = NVME_CC_MPS(cc), asqs, acqs;   /* MPSMIN is 0: only the upper bound */
	uint64_t page, off;

	if (mps > NVME_MPSMAX || NVME_CC_CSS(cc) != NVME_CC_CSS_NVM ||
	    (NVME_CC_AMS(cc) != NVME_CC_AMS_RR &&
	     (NVME_CC_AMS(cc) != NVME_CC_AMS_WRRU || !(NVME_CAP_AMS(c->cap) & NVME_CAP_AMS_WRR))) ||
	    NVME_CC_IOSQES(cc) != NVME_SQES_LOG2 || NVME_CC_IOCQES(cc) != NVME_CQES_LOG2)
		goto fail;
	page = 4096ull << mps;
	asqs = NVME_AQA_ASQS(aqa) + 1;
	acqs = NVME_AQA_ACQS(aqa) + 1;
	/* a one-entry queue can never hold a command (full when tail + 1 == head) */
	if (!asq || !acq || (asq & (page - 1)) || (acq & (page - 1)) || asqs < 2 || acqs < 2)
		goto fail;
	/* the admin SQ may sit in the CMB, but not straddle its end */
	if (cmb_base(c) && asq >= cmb_base(c) && asq - cmb_base(c) < c->cmb_size &&
	    !nvme_cmb_range(c, asq, (uint64_t)asqs * sizeof(struct nvme_sqe), &off))
		goto fail;

	c->page_size = (uint32_t)page;
	c->page_shift = 12 + mps;
	ctrl_reset(c);
	c->ams = (uint8_t)NVME_CC_AMS(cc);      /* the arbitration is chosen here, once */
	c->sq[0] = (struct nvme_sq){ .valid = true, .size = asqs, .base = asq, .cqid = 0 };
	c->cq[0] = (struct nvme_cq){ .valid = true, .size = acqs, .base = acq, .ien = true,
				     .iv = 0, .phase = 1, .nsq = 1 };
	zero_doorbells(c, 0);
	set_csts(c, NVME_SET(1, CSTS_RDY));
	return;
fail:
	/*
	 * The one place the model reports Controller Fatal Status: the
	 * controller cannot come up with this configuration, and there is no
	 * queue yet to say so through (CSTS.CFS, NVMe 1.4 sec. 3.1.6; host
	 * software resets the controller, sec. 9.5).
	 */
	set_csts(c, NVME_SET(1, CSTS_CFS));
}

static void post_all_now(struct nvme_ctrl *c);

/* CC.SHN: finish outstanding work, make data durable, report completion. */
static void ctrl_shutdown(struct nvme_ctrl *c)
{
	set_csts(c, (c->csts & ~NVME_SET(NVME_CSTS_SHST_MASK, CSTS_SHST)) |
		    NVME_SET(NVME_CSTS_SHST_OCCUR, CSTS_SHST));
	post_all_now(c);
	for (uint32_t i = 0; i < c->nns; i++)
		(void)nvme_ns_flush(&c->ns[i]);
	c->shutdown = true;
	set_csts(c, (c->csts & ~NVME_SET(NVME_CSTS_SHST_MASK, CSTS_SHST)) |
		    NVME_SET(NVME_CSTS_SHST_CMPLT, CSTS_SHST));
}

static int handle_cc(struct nvme_ctrl *c)
{
	uint32_t cc = dev_reg32(c->d, BAR0, NVME_REG_CC), old = c->cc;

	if (cc == old)
		return 0;
	c->cc = cc;
	if (NVME_CC_EN(old) && !NVME_CC_EN(cc)) {
		ctrl_reset(c);
		set_csts(c, 0);
		return 1;
	}
	if (!NVME_CC_EN(old) && NVME_CC_EN(cc))
		ctrl_enable(c, cc);
	if (NVME_CC_SHN(cc) && !NVME_CC_SHN(old))
		ctrl_shutdown(c);
	return 1;
}

/* Software may have stored anything into read-only registers: put them back. */
static void restore_ro(struct nvme_ctrl *c)
{
	struct dev_instance *d = c->d;
	uint32_t ms = dev_reg32(d, BAR0, NVME_REG_INTMS), mc = dev_reg32(d, BAR0, NVME_REG_INTMC);

	if (dev_reg64(d, BAR0, NVME_REG_CAP) != c->cap)
		dev_set_reg64(d, BAR0, NVME_REG_CAP, c->cap);
	if (dev_reg32(d, BAR0, NVME_REG_VS) != NVME_VS_1_4)
		dev_set_reg32(d, BAR0, NVME_REG_VS, NVME_VS_1_4);
	if (dev_reg32(d, BAR0, NVME_REG_CSTS) != c->csts)
		dev_set_reg32(d, BAR0, NVME_REG_CSTS, c->csts);
	if (dev_reg32(d, BAR0, NVME_REG_CC + 4))           /* reserved 0x18 */
		dev_set_reg32(d, BAR0, NVME_REG_CC + 4, 0);
	if (dev_reg32(d, BAR0, NVME_REG_NSSR))             /* CAP.NSSRS = 0: reserved */
		dev_set_reg32(d, BAR0, NVME_REG_NSSR, 0);
	if (dev_reg32(d, BAR0, NVME_REG_CMBLOC) != c->cmbloc)
		dev_set_reg32(d, BAR0, NVME_REG_CMBLOC, c->cmbloc);
	if (dev_reg32(d, BAR0, NVME_REG_CMBSZ) != c->cmbsz)
		dev_set_reg32(d, BAR0, NVME_REG_CMBSZ, c->cmbsz);
	/*
	 * INTMS/INTMC: writing 1s sets/clears mask bits and both read back the
	 * mask. Only pin-based and MSI interrupts honour it; with MSI-X (the only
	 * interrupt mode this model uses) the spec leaves them undefined. A store
	 * is seen as a change of the value, so rewriting the current mask is lost.
	 */
	if (ms != c->intms)
		c->intms |= ms;
	else if (mc != c->intms)
		c->intms &= ~mc;
	if (ms != c->intms)
		dev_set_reg32(d, BAR0, NVME_REG_INTMS, c->intms);
	if (mc != c->intms)
		dev_set_reg32(d, BAR0, NVME_REG_INTMC, c->intms);
}

/* ---- Doorbells ---- */

static void invalid_doorbell(struct nvme_ctrl *c, uint16_t qid, unsigned info)
{
	nvme_log_error(c, qid, 0xffff, 0, 0, 0);
	nvme_aen(c, NVME_AER_ERROR, info, NVME_LOG_LID_ERROR);
}

/* Act on the doorbells of pair q as read (sv: SQ tail, cv: CQ head). */
static int doorbell_pair(struct nvme_ctrl *c, uint32_t q, uint32_t sv, uint32_t cv)
{
	struct dev_instance *d = c->d;
	struct nvme_sq *sq = &c->sq[q];
	struct nvme_cq *cq = &c->cq[q];
	int work = 0;

	if (sq->valid && sv != sq->db_last) {
		sq->db_last = sv;
		if (sv >= sq->size)
			invalid_doorbell(c, (uint16_t)q, NVME_AER_ERROR_INVALID_DB_VAL);
		else
			sq->tail = sv;
		work = 1;
	} else if (!sq->valid && sv) {
		dev_set_reg32(d, BAR0, nvme_sq_tail_db(q, c->dstrd), 0);
		invalid_doorbell(c, (uint16_t)q, NVME_AER_ERROR_INVALID_DB_REG);
	}
	if (cq->valid && cv != cq->db_last) {
		cq->db_last = cv;
		/* the new head may only release entries the controller posted */
		if (cv >= cq->size ||
		    nvme_q_used(cq->head, cv, cq->size) > nvme_q_used(cq->head, cq->tail, cq->size))
			invalid_doorbell(c, (uint16_t)q, NVME_AER_ERROR_INVALID_DB_VAL);
		else
			cq->head = cv;
		work = 1;
	} else if (!cq->valid && cv) {
		dev_set_reg32(d, BAR0, nvme_cq_head_db(q, c->dstrd), 0);
		invalid_doorbell(c, (uint16_t)q, NVME_AER_ERROR_INVALID_DB_REG);
	}
	/* what the doorbells hold now as far as acting on them goes */
	c->db_seen[q] = (sq->valid ? sv : 0) | (uint64_t)(cq->valid ? cv : 0) << 32;
	return work;
}

/* Both doorbells of pair q, each read once (one load when they are adjacent). */
static uint64_t db_load(const struct nvme_ctrl *c, uint32_t q)
{
	const struct dev_instance *d = c->d;

	if (!c->dstrd)
		return __atomic_load_n((const uint64_t *)(d->fn.bar[BAR0] + nvme_sq_tail_db(q, 0)),
				       __ATOMIC_ACQUIRE);
	return dev_reg32(d, BAR0, nvme_sq_tail_db(q, c->dstrd)) |
	       (uint64_t)dev_reg32(d, BAR0, nvme_cq_head_db(q, c->dstrd)) << 32;
}

static int scan_doorbells(struct nvme_ctrl *c)
{
	bool all = c->db_rescan;
	int work = 0;

	if (all) {
		c->db_rescan = false;
		c->nact = 0;
		for (uint32_t q = 1; q <= c->nqueues; q++)
			if (c->sq[q].valid)
				c->act_sq[c->nact++] = (uint16_t)q;
	}
	for (uint32_t q = 0; q <= c->nqueues; q++) {
		uint64_t v = db_load(c, q);

		if (all || v != c->db_seen[q])
			work |= doorbell_pair(c, q, (uint32_t)v, (uint32_t)(v >> 32));
	}
	return work;
}

/* ---- Completions ---- */

static bool post_cqe(struct nvme_ctrl *c, const struct nvme_pending *p)
{
	struct nvme_cq *cq = &c->cq[p->cqid];
	struct nvme_cqe e;
	uint64_t addr;

	if (!cq->valid)
		return true;            /* queue gone: the completion is dropped */
	if (nvme_q_full(cq->head, cq->tail, cq->size))
		return false;
	e.dw0 = p->dw0;
	e.dw1 = 0;
	e.sq_head = c->sq[p->sqid].valid ? (uint16_t)c->sq[p->sqid].head : 0;
	e.sq_id = p->sqid;
	e.cid = p->cid;
	e.status = nvme_cqe_status_encode(p->st, cq->phase);
	addr = cq->base + (uint64_t)cq->tail * sizeof(e);
	/*
	 * Dwords 0-2 first, then dword 3 with the phase tag: a host polling the
	 * phase never sees a half-written entry.
	 */
	if (nvme_dma(c, addr, &e, 12, true) || nvme_dma(c, addr + 12, &e.cid, 4, true)) {
		/*
		 * Lost, as a posted write that never arrives: no half entry is
		 * left behind (the phase dword goes only after the rest), the
		 * tail moves on so that this queue's later completions and every
		 * other queue keep flowing. See "Fault isolation" above.
		 */
		c->cqe_lost++;
		nvme_log_error(c, p->sqid, p->cid, SC_GEN(DATA_XFER_ERROR), 0, 0);
		if (!cq->losing) {
			cq->losing = true;
			smio_warn("nvme %s: CQ %u at %#llx not writable: completions lost until it is "
				  "(command %u of SQ %u first)", c->d->fn.td ? c->d->fn.td->name : "?",
				  p->cqid, (unsigned long long)cq->base, p->cid, p->sqid);
		}
	} else if (cq->losing) {
		cq->losing = false;
		smio_info("nvme %s: CQ %u writable again (%llu completions lost on the controller "
			  "so far)", c->d->fn.td ? c->d->fn.td->name : "?", p->cqid,
			  (unsigned long long)c->cqe_lost);
	}
	nvme_q_advance(&cq->tail, &cq->phase, cq->size);
	if (!cq->irq) {
		cq->irq = true;
		c->irq_list[c->nirq++] = p->cqid;
	}
	return true;
}

static void send_interrupts(struct nvme_ctrl *c)
{
	/*
	 * Interrupt coalescing is simplified: one message per CQ per pass in
	 * which entries were posted (aggregation time/threshold are stored only).
	 */
	for (unsigned i = 0; i < c->nirq; i++) {
		struct nvme_cq *cq = &c->cq[c->irq_list[i]];

		cq->irq = false;
		if (cq->valid && cq->ien)
			(void)dev_msix_notify(c->d, cq->iv);
	}
	c->nirq = 0;
}

/* Post what is due; returns entries posted, *waiting = entries due later, the
 * first of them due at *next. */
static int post_completions(struct nvme_ctrl *c, unsigned *waiting, uint64_t *next)
{
	uint64_t now = c->timed && c->npend ? smio_now_ns() : 0;
	unsigned j = 0;
	int posted = 0;

	*waiting = 0;
	*next = 0;
	for (unsigned i = 0; i < c->npend; i++) {
		struct nvme_pending *p = &c->pend[i];

		if (p->due_ns > now) {
			(*waiting)++;
			if (!*next || p->due_ns < *next)
				*next = p->due_ns;
			c->pend[j++] = *p;
		} else if (!post_cqe(c, p)) {
			c->pend[j++] = *p;
		} else {
			posted++;
		}
	}
	c->npend = j;
	send_interrupts(c);
	return posted;
}

static void post_all_now(struct nvme_ctrl *c)
{
	unsigned j = 0;

	for (unsigned i = 0; i < c->npend; i++)
		if (!post_cqe(c, &c->pend[i]))
			c->pend[j++] = c->pend[i];
	c->npend = j;
	send_interrupts(c);
}

/* The counters smartio diag shows (dev.h): by kind, bytes moved, errors. */
static void count_completion(struct nvme_ctrl *c, const struct nvme_cmd *cmd, uint16_t st)
{
	enum dev_stat kind = DEV_ST_OTHER;

	if (cmd->sqid == 0)
		kind = DEV_ST_ADMIN;
	else if (cmd->sqe.opcode == nvme_cmd_read)
		kind = DEV_ST_READ;
	else if (cmd->sqe.opcode == nvme_cmd_write)
		kind = DEV_ST_WRITE;
	dev_stat_add(c->d, kind, 1);
	if (st)
		dev_stat_add(c->d, DEV_ST_ERRORS, 1);
	else if (kind == DEV_ST_READ)
		dev_stat_add(c->d, DEV_ST_BYTES_READ, cmd->xfer);
	else if (kind == DEV_ST_WRITE)
		dev_stat_add(c->d, DEV_ST_BYTES_WRITTEN, cmd->xfer);
}

void nvme_queue_completion(struct nvme_ctrl *c, const struct nvme_cmd *cmd, uint16_t st)
{
	struct nvme_pending *p = &c->pend[c->npend++];
	uint64_t due = 0;

	if (st)
		nvme_log_error(c, cmd->sqid, cmd->sqe.cid, st, cmd->sqe.nsid, cmd->err_lba);
	count_completion(c, cmd, st);
	if (cmd->sqid && cmd->xfer && (cmd->sqe.opcode == nvme_cmd_read ||
				       cmd->sqe.opcode == nvme_cmd_write)) {
		struct nvme_sq *sq = &c->sq[cmd->sqid];    /* for log page C0h */

		sq->last_prp1 = cmd->sqe.prp1;
		sq->last_size = (uint32_t)cmd->xfer;
		sq->last_write = cmd->sqe.opcode == nvme_cmd_write;
		sq->last_valid = true;
	}
	/* media timing applies to I/O: transfers serialise on bandwidth, latency overlaps */
	if (c->timed && cmd->sqid != 0) {
		uint64_t now = smio_now_ns(), start = now > c->media_free_ns ? now : c->media_free_ns;
		/* Faithful mode: media and PCIe paths from the timing model (timing.c),
		 * counted from now, when the data has moved: never early. */
		uint64_t lat = c->d->fn.timing ? nvme_faithful_ns(c, cmd) : c->latency_ns;

		if (c->bw_mbps) {
			c->media_free_ns = start + cmd->xfer * 1000 / c->bw_mbps;
			due = c->media_free_ns + lat;
		} else {
			due = now + lat;
		}
		c->busy_ns += due - now;
	}
	p->due_ns = due;
	p->dw0 = cmd->dw0;
	p->sqid = cmd->sqid;
	p->cqid = c->sq[cmd->sqid].cqid;
	p->cid = cmd->sqe.cid;
	p->st = st;
}

/* Complete outstanding AERs with queued events of unmasked types. */
static void aen_dispatch(struct nvme_ctrl *c)
{
	for (unsigned i = 0; i < c->naen && c->naer && c->npend < NVME_PENDING_MAX;) {
		unsigned type = c->aen[i] & 7;
		struct nvme_pending *p;

		if (c->aen_masked & (1u << type)) {
			i++;
			continue;
		}
		p = &c->pend[c->npend++];
		*p = (struct nvme_pending){ .dw0 = c->aen[i], .cid = c->aer_cid[--c->naer] };
		c->aen_masked |= (uint8_t)(1u << type);
		memmove(&c->aen[i], &c->aen[i + 1], (--c->naen - i) * sizeof(c->aen[0]));
	}
}

/* ---- dev_model_ops ---- */

/*
 * Whether any MSI-X vector may be pending (masked when it fired): only then
 * is dev_msix_poll_pending() worth its config reads. The PBA's place is
 * read-only config, looked up once.
 */
static bool msix_maybe_pending(struct nvme_ctrl *c)
{
	const struct dev_func *f = &c->d->fn;

	if (!c->pba_looked) {
		uint32_t nvec, pba, bir;

		c->pba_looked = true;
		if (f->msix_cap) {
			nvec = (f->bus->cfg_read(f->bus_ctx, f->msix_cap + PCI_MSIX_FLAGS, 2) &
				PCI_MSIX_FLAGS_QSIZE) + 1;
			pba = f->bus->cfg_read(f->bus_ctx, f->msix_cap + PCI_MSIX_PBA, 4);
			bir = pba & PCI_MSIX_PBA_BIR;
			pba &= PCI_MSIX_PBA_OFFSET;
			if (bir < 6 && f->bar[bir] &&
			    pba + (uint64_t)(nvec + 63) / 64 * 8 <= f->bar_size[bir]) {
				c->pba = (const uint64_t *)(f->bar[bir] + pba);
				c->pba_words = (nvec + 63) / 64;
			}
		}
	}
	if (!c->pba)
		return f->msix_cap != 0;        /* not understood here: let msix.c look */
	for (uint32_t i = 0; i < c->pba_words; i++)
		if (__atomic_load_n(&c->pba[i], __ATOMIC_ACQUIRE))
			return true;
	return false;
}

static int nvme_poll(struct dev_instance *d)
{
	struct nvme_ctrl *c = d->state;
	unsigned waiting = 0;
	uint64_t next = 0;
	int work;

	c->pass_ns = 0;
	d->wake_ns = 0;
	restore_ro(c);
	work = handle_cc(c);
	if (nvme_ctrl_running(c) && dev_bus_master(d)) {
		work |= scan_doorbells(c);
		work |= nvme_arbitrate(c);
		aen_dispatch(c);
		if (post_completions(c, &waiting, &next))
			work = 1;
	}
	if (msix_maybe_pending(c))
		(void)dev_msix_poll_pending(d);
	/* Completions waiting for their time (faithful mode or latency_us):
	 * the runner sleeps until shortly before the first is due (wake_ns)
	 * instead of spinning for it - with latency_us = 2000 that spin took a
	 * CPU of the two the 30 clients of bench/cluster60 share. */
	if (waiting)
		d->wake_ns = next;
	return work;
}

static void nvme_destroy(struct dev_instance *d)
{
	struct nvme_ctrl *c = d->state;

	if (!c)
		return;
	nvme_ns_fini(c);
	free(c->sq);
	free(c->cq);
	free(c->irq_list);
	free(c->db_seen);
	free(c->act_sq);
	free(c->iv_cd);
	free(c->pend);
	free(c->buf);
	free(c);
	d->state = NULL;
}

static int nvme_create(struct dev_instance *d, char *err, size_t errlen)
{
	struct nvme_ctrl *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->d = d;
	d->state = c;
	rc = nvme_parse_params(c, err, errlen);
	if (rc)
		goto out;
	rc = -ENOMEM;
	c->sq = calloc(c->nqueues + 1, sizeof(*c->sq));
	c->cq = calloc(c->nqueues + 1, sizeof(*c->cq));
	c->irq_list = calloc(c->nqueues + 1, sizeof(*c->irq_list));
	c->db_seen = calloc(c->nqueues + 1, sizeof(*c->db_seen));
	c->act_sq = calloc(c->nqueues + 1, sizeof(*c->act_sq));
	c->iv_cd = calloc(c->nvec, 1);
	c->pend = calloc(NVME_PENDING_MAX, sizeof(*c->pend));
	c->buf = malloc(NVME_MAX_XFER);
	if (!c->sq || !c->cq || !c->irq_list || !c->db_seen || !c->act_sq || !c->iv_cd ||
	    !c->pend || !c->buf) {
		snprintf(err, errlen, "nvme: out of memory");
		goto out;
	}
	rc = nvme_ns_init(c, err, errlen);
	if (rc)
		goto out;
	c->cap = NVME_SET((uint64_t)c->mqes, CAP_MQES) | NVME_SET(1ull, CAP_CQR) |
		 NVME_SET((uint64_t)(c->wrr ? NVME_CAP_AMS_WRR : 0), CAP_AMS) |
		 NVME_SET((uint64_t)NVME_CAP_TO_500MS, CAP_TO) |
		 NVME_SET((uint64_t)c->dstrd, CAP_DSTRD) |
		 NVME_SET((uint64_t)NVME_CAP_CSS_NVM, CAP_CSS) |
		 NVME_SET((uint64_t)NVME_MPSMIN, CAP_MPSMIN) |
		 NVME_SET((uint64_t)NVME_MPSMAX, CAP_MPSMAX);
	if (c->cmb_size) {
		/* BAR2 from offset 0, SQs (and data with cmb_data); size in 4 KiB units, or 1 MiB when large */
		unsigned szu = c->cmb_size >> 12 > 0xfffff ? 2 : 0;

		c->cmbloc = NVME_SET(2u, CMBLOC_BIR);
		c->cmbsz = NVME_SET(1u, CMBSZ_SQS) | NVME_SET(szu, CMBSZ_SZU) |
			   NVME_SET(c->cmb_data ? 1u : 0u, CMBSZ_RDS) |
			   NVME_SET(c->cmb_data ? 1u : 0u, CMBSZ_WDS) |
			   NVME_SET((uint32_t)(c->cmb_size >> (12 + 4 * szu)), CMBSZ_SZ);
	}
	c->created_ns = smio_now_ns();
	ctrl_reset(c);
	regs_reset(c);
	return 0;
out:
	nvme_destroy(d);
	return rc;
}

static void nvme_reset(struct dev_instance *d)
{
	struct nvme_ctrl *c = d->state;

	ctrl_reset(c);
	regs_reset(c);
}

const struct dev_model_ops nvme_model_ops = {
	.name = "nvme",
	.create = nvme_create,
	.destroy = nvme_destroy,
	.poll = nvme_poll,
	.reset = nvme_reset,
};
