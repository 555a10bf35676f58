// SPDX-License-Identifier: MIT
/*
 * NVMe controller model: command fetch and arbitration (NVMe 1.4 sec. 4.13,
 * "Command Arbitration"), by the mechanism CC.AMS selected at enable:
 *
 * - round robin: the admin SQ and every I/O SQ take turns, each launching up
 *   to the Arbitration Burst (2^AB commands, AB = 111b: no limit) per turn;
 * - weighted round robin with urgent priority class: the admin SQ first
 *   (strict), then the urgent class (strict, round robin inside), then the
 *   high, medium and low levels by weighted round robin: a level's turn
 *   launches up to HPW+1, MPW+1 or LPW+1 commands, round robin over its SQs,
 *   each SQ up to the burst per visit. A level with no candidate command
 *   forfeits its turn (the arbiter is work-conserving); a turn cut short by
 *   the end of a pass continues in the next pass, so weights hold however
 *   the passes fall.
 *
 * `slots` (topology parameter) bounds the I/O commands inside the controller
 * (fetched, completion not yet posted): the rest wait in their SQs, which is
 * where arbitration decides who goes next. An SQ whose entry cannot be read
 * stalls alone, with a back-off. Every SQ counts the commands fetched from
 * it (vendor log page SMARTIO_NVME_LOG_ARB). Controller state, doorbells and
 * completions are in ctrl.c.
 */
#include "ctrl.h"
#include "util/log.h"

static bool take_abort(struct nvme_ctrl *c, uint16_t sqid, uint16_t cid)
{
	for (unsigned i = 0; i < c->naborts; i++) {
		if (c->aborts[i].sqid == sqid && c->aborts[i].cid == cid) {
			c->aborts[i] = c->aborts[--c->naborts];
			return true;
		}
	}
	return false;
}

/*
 * The entry at the SQ's head could not be read. Nothing identifies the
 * command, so nothing can be completed: the head stays (the entry is fetched
 * again once the memory answers, e.g. when a link comes back) and the queue
 * is left alone for a while, doubling each time, so a dead queue costs a DMA
 * attempt per back-off period, not one per pass; the device thread does not
 * count the attempt as work, so it idles as usual meanwhile.
 */
static void fetch_failed(struct nvme_ctrl *c, uint16_t qid)
{
	struct nvme_sq *sq = &c->sq[qid];

	c->sq_fetch_errors++;
	if (!sq->retry_ns) {
		sq->backoff_ns = NVME_FETCH_RETRY_MIN_NS;
		nvme_log_error(c, qid, 0xffff, SC_GEN(DATA_XFER_ERROR), 0, 0);
		smio_warn("nvme %s: SQ %u at %#llx not readable: fetching stopped at entry %u, "
			  "retrying", c->d->fn.td ? c->d->fn.td->name : "?", qid,
			  (unsigned long long)sq->base, sq->head);
	} else if (sq->backoff_ns < NVME_FETCH_RETRY_MAX_NS) {
		sq->backoff_ns *= 2;
	}
	sq->retry_ns = nvme_pass_now(c) + sq->backoff_ns;
}

/* Whether the I/O commands inside the controller fill its slots. */
static bool slots_full(const struct nvme_ctrl *c)
{
	return c->slots && c->io_busy >= c->slots;
}

/* I/O commands fetched whose completion is not posted yet. */
static unsigned io_in_controller(const struct nvme_ctrl *c)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->npend; i++)
		n += c->pend[i].sqid != 0;
	return n;
}

/* Fetch and execute up to max commands from one SQ; returns the number. */
static unsigned fetch_sq(struct nvme_ctrl *c, uint16_t qid, unsigned max)
{
	struct nvme_sq *sq = &c->sq[qid];
	unsigned n = 0;

	while (n < max && sq->valid && sq->head != sq->tail && c->npend < NVME_PENDING_MAX &&
	       (qid == 0 || !slots_full(c)) && nvme_ctrl_running(c)) {
		struct nvme_cmd cmd = { .sqid = qid };
		uint64_t addr = sq->base + (uint64_t)sq->head * sizeof(struct nvme_sqe);
		uint16_t st;

		if (sq->retry_ns && nvme_pass_now(c) < sq->retry_ns)
			break;          /* stalled: not yet time to try again */
		if (nvme_dma(c, addr, &cmd.sqe, sizeof(cmd.sqe), false)) {
			fetch_failed(c, qid);
			break;
		}
		if (sq->retry_ns) {
			sq->retry_ns = 0;
			smio_info("nvme %s: SQ %u readable again (%llu failed fetches on the "
				  "controller so far)", c->d->fn.td ? c->d->fn.td->name : "?", qid,
				  (unsigned long long)c->sq_fetch_errors);
		}
		sq->head = nvme_q_next(sq->head, sq->size);
		sq->fetched++;
		n++;
		if (take_abort(c, qid, cmd.sqe.cid))
			st = SC_GEN(ABORT_REQ);
		else if (NVME_SQE_FUSE(cmd.sqe.flags) || NVME_SQE_PSDT(cmd.sqe.flags) ||
			 (cmd.sqe.flags & NVME_SQE_FLAGS_RSVD))
			st = SC_GEN(INVALID_FIELD) | SC_DNR;   /* no fused ops, no SGLs */
		else if (qid == 0) {
			st = nvme_admin_exec(c, &cmd);
			c->db_rescan = true;    /* queues may have come or gone */
		} else
			st = nvme_io_exec(c, &cmd);
		if (qid != 0)
			c->io_busy++;
		if (!cmd.deferred)
			nvme_queue_completion(c, &cmd, st);
	}
	return n;
}


static unsigned arb_burst(const struct nvme_ctrl *c)
{
	unsigned ab = NVME_ARB_AB(c->feat.arb);

	return ab == 7 ? NVME_POLL_BUDGET : 1u << ab;
}

/* The commands of a weighted level's turn: its weight, 0's based. */
static unsigned level_weight(const struct nvme_ctrl *c, unsigned prio)
{
	switch (prio) {
	case NVME_QPRIO_HIGH:   return NVME_ARB_HPW(c->feat.arb) + 1;
	case NVME_QPRIO_MEDIUM: return NVME_ARB_MPW(c->feat.arb) + 1;
	default:                return NVME_ARB_LPW(c->feat.arb) + 1;
	}
}

/*
 * The arbitration order: SQ ids ascending, the admin SQ (0) included when it
 * takes part (round robin). k-th entry of that list.
 */
static uint16_t nth_sq(const struct nvme_ctrl *c, bool with_admin, uint32_t k)
{
	if (with_admin)
		return k == 0 ? 0 : c->act_sq[k - 1];
	return c->act_sq[k];
}

/*
 * One round over the SQs of a class (cls NVME_ARB_RR: every SQ, the admin SQ
 * too) starting after the class cursor (the SQ served last); each SQ gets up
 * to `burst` commands, the round at most `credit`. Returns commands fetched.
 */
static unsigned rr_round(struct nvme_ctrl *c, unsigned cls, unsigned burst, unsigned credit)
{
	bool all = cls == NVME_ARB_RR;
	uint32_t len = c->nact + (all ? 1 : 0), start = c->rr_next[cls], k0 = 0;
	unsigned got = 0;

	/* the order start+1, start+2, ..., last, first, ..., start */
	while (k0 < len && nth_sq(c, all, k0) <= start)
		k0++;
	for (uint32_t i = 0; i < len && got < credit; i++) {
		uint32_t k = k0 + i;
		uint16_t q = nth_sq(c, all, k < len ? k : k - len);
		struct nvme_sq *sq = &c->sq[q];
		unsigned m;

		if (!sq->valid || sq->head == sq->tail || (!all && sq->prio != cls))
			continue;
		m = fetch_sq(c, q, burst < credit - got ? burst : credit - got);
		got += m;
		if (m)
			c->rr_next[cls] = q;
	}
	return got;
}

/* Round robin inside a class until it has no candidate or `credit` is used. */
static unsigned serve_class(struct nvme_ctrl *c, unsigned cls, unsigned burst, unsigned credit)
{
	unsigned got = 0, r;

	while (got < credit && nvme_ctrl_running(c) && (r = rr_round(c, cls, burst, credit - got)))
		got += r;
	return got;
}

/*
 * The weighted levels, as many turns as the budget allows. The level whose
 * turn it is and the credit left of that turn persist across passes; when
 * every level is idle the arbiter starts over at high.
 */
static unsigned serve_weighted(struct nvme_ctrl *c, unsigned burst, unsigned budget)
{
	unsigned total = 0, idle = 0;

	if (c->wrr_level < NVME_QPRIO_HIGH || c->wrr_level > NVME_QPRIO_LOW)
		c->wrr_level = NVME_QPRIO_HIGH;
	while (total < budget && idle < 3 && !slots_full(c) && nvme_ctrl_running(c)) {
		unsigned want, got;

		if (!c->wrr_credit)
			c->wrr_credit = level_weight(c, c->wrr_level);
		want = c->wrr_credit < budget - total ? c->wrr_credit : budget - total;
		got = serve_class(c, c->wrr_level, burst, want);
		total += got;
		c->wrr_credit -= got;
		if (got == want && c->wrr_credit)
			break;          /* the pass's budget ran out mid-turn: resume there */
		if (got < want && slots_full(c))
			break;          /* the controller is full, not the level idle */
		idle = got ? 0 : idle + 1;
		c->wrr_credit = 0;      /* turn used up, or forfeited by an idle level */
		c->wrr_level = c->wrr_level == NVME_QPRIO_LOW ? NVME_QPRIO_HIGH : c->wrr_level + 1;
	}
	if (idle >= 3) {
		c->wrr_level = NVME_QPRIO_HIGH;
		c->wrr_credit = 0;
	}
	return total;
}

size_t nvme_arb_log(const struct nvme_ctrl *c, uint8_t *dst, size_t off, size_t len)
{
	struct smartio_nvme_arb_log h = { .version = 1, .ams = c->ams,
					  .nsq = (uint16_t)(c->nqueues + 1), .arb = c->feat.arb,
					  .slots = c->slots };
	size_t size = sizeof(h) + (size_t)h.nsq * sizeof(struct smartio_nvme_arb_log_sq);

	/* built piecewise: only the entries the window [off, off + len) covers */
	for (size_t pos = 0; pos < size && pos < off + len; ) {
		struct smartio_nvme_arb_log_sq e;
		const void *src = &h;
		size_t n = sizeof(h);

		if (pos >= sizeof(h)) {
			uint32_t q = (uint32_t)((pos - sizeof(h)) / sizeof(e));

			e = (struct smartio_nvme_arb_log_sq){ .fetched = c->sq[q].fetched,
							     .sqid = (uint16_t)q,
							     .valid = c->sq[q].valid,
							     .prio = c->sq[q].prio };
			src = &e;
			n = sizeof(e);
		}
		for (size_t i = 0; i < n; i++)
			if (pos + i >= off && pos + i < off + len)
				dst[pos + i - off] = ((const uint8_t *)src)[i];
		pos += n;
	}
	return size;
}

int nvme_arbitrate(struct nvme_ctrl *c)
{
	unsigned budget = NVME_POLL_BUDGET, burst = arb_burst(c), total;

	c->io_busy = c->slots ? io_in_controller(c) : 0;
	if (c->ams != NVME_CC_AMS_WRRU)
		return serve_class(c, NVME_ARB_RR, burst, budget) > 0;
	/* admin, then urgent: strict priority, each drained before the next class */
	total = fetch_sq(c, 0, budget);
	total += serve_class(c, NVME_QPRIO_URGENT, burst, budget - total);
	if (total < budget)
		total += serve_weighted(c, burst, budget - total);
	return total > 0;
}
