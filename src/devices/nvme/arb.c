// SPDX-License-Identifier: MIT
/*
 * NVMe controller model: command fetch and arbitration. Each pass of the
 * device thread takes the admin SQ first, then the I/O SQs by round robin,
 * or by weighted round robin with an urgent class (CC.AMS, Set Features
 * Arbitration: burst and weights); an SQ whose entry cannot be read stalls
 * alone, with a back-off. Controller state, doorbells and completions are in
 * ctrl.c.
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

/* Fetch and execute up to max commands from one SQ; returns the number. */
static unsigned fetch_sq(struct nvme_ctrl *c, uint16_t qid, unsigned max)
{
	struct nvme_sq *sq = &c->sq[qid];
	unsigned n = 0;

	while (n < max && sq->valid && sq->head != sq->tail && c->npend < NVME_PENDING_MAX &&
	       nvme_ctrl_running(c)) {
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
		if (!cmd.deferred)
			nvme_queue_completion(c, &cmd, st);
	}
	return n;
}

static unsigned arb_burst(const struct nvme_ctrl *c)
{
	unsigned ab = c->feat.arb & 7;

	return ab == 7 ? NVME_POLL_BUDGET : 1u << ab;
}

/*
 * One round over the I/O SQs of a class (prio < 0: all) starting after the
 * class cursor; each queue gets up to `burst` commands, the class at most
 * `credit`. Returns commands fetched.
 */
static unsigned rr_round(struct nvme_ctrl *c, int prio, unsigned burst, unsigned credit)
{
	unsigned cls = prio < 0 ? 0 : (unsigned)prio, got = 0;
	uint32_t n = c->nqueues, start = c->rr_next[cls], k0 = 0;

	/* the valid SQs in the order start+1, start+2, ..., n, 1, ..., start */
	while (k0 < c->nact && c->act_sq[k0] <= start)
		k0++;
	for (uint32_t i = 0; i < c->nact && got < credit; i++) {
		uint32_t k = k0 + i;
		uint16_t q = c->act_sq[k < c->nact ? k : k - c->nact];
		struct nvme_sq *sq = &c->sq[q];
		unsigned m;

		if (!sq->valid || sq->head == sq->tail || (prio >= 0 && sq->prio != prio))
			continue;
		m = fetch_sq(c, q, burst < credit - got ? burst : credit - got);
		got += m;
		if (m)
			c->rr_next[cls] = q % n;        /* next round starts after q */
	}
	return got;
}

int nvme_arbitrate(struct nvme_ctrl *c)
{
	unsigned budget = NVME_POLL_BUDGET, burst = arb_burst(c), total = 0, got;
	bool wrr = NVME_CC_AMS(c->cc) == NVME_CC_AMS_WRRU;

	/* the admin SQ goes first (strict priority under WRR, harmless under RR) */
	got = fetch_sq(c, 0, budget);
	total += got;
	budget -= got;
	while (budget && nvme_ctrl_running(c)) {
		unsigned round = 0;

		if (!wrr) {
			round = rr_round(c, -1, burst, budget);
		} else {
			/* urgent class: strict priority over the weighted classes */
			while (budget && (got = rr_round(c, NVME_QPRIO_URGENT, burst, budget))) {
				round += got;
				budget -= got;
			}
			for (int p = NVME_QPRIO_HIGH; p <= NVME_QPRIO_LOW && budget; p++) {
				unsigned w = ((c->feat.arb >> (8 * (4 - p))) & 0xff) + 1, g;

				g = rr_round(c, p, burst, w < budget ? w : budget);
				round += g;
				budget -= g;
			}
			total += round;
			if (!round)
				break;
			continue;
		}
		if (!round)
			break;
		total += round;
		budget -= round;
	}
	return total > 0;
}
