// SPDX-License-Identifier: MIT
/*
 * The in-kernel NVMe block driver, after Linux's drivers/nvme/host/pci.c in
 * miniature: it binds to class 010802 (NVM Express) through the PCI core,
 * brings the controller up through its BAR0 registers, keeps an admin queue
 * pair and up to NVME_DRV_MAX_IOQ I/O queue pairs in coherent DMA memory,
 * and completes commands by MSI-X (an eventfd per vector) or by polling the
 * CQ phase tag when no vectors could be had.
 *
 * Data never moves between the controller and the caller's memory directly:
 * each queue owns a page-aligned bounce buffer of the controller's maximum
 * transfer size and a PRP list, both from dma_alloc_coherent, so every bus
 * address the controller is given was mapped by the DMA API (IOMMU on or off)
 * and the PRP layout is always "page-aligned buffer, contiguous pages".
 *
 * Locking: the PCI core calls probe/remove, and the daemon calls the API,
 * with the host lock held. The controller model's thread takes the same
 * (recursive) lock for every DMA, so the driver drops it completely while it
 * waits for the controller and takes it back, as often as it was held,
 * before it returns.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"

#define NVME_DRV_PAGE           4096u
#define NVME_DRV_PAGE_SHIFT     12
#define NVME_DRV_MAX_XFER       (128u * 1024u)  /* bounce buffer: caps MDTS */
#define NVME_DRV_CLASS          0x010802u
#define NVME_DRV_MAX_NS         1024u           /* one Identify active-NS list */

/* libnvme's *_MASK constants are unshifted: the register bits themselves. */
#define CSTS_RDY                NVME_SET(1u, CSTS_RDY)
#define CSTS_CFS                NVME_SET(1u, CSTS_CFS)
#define CC_EN                   NVME_SET(1u, CC_EN)

struct nvme_drv_params nvme_drv_params;

struct nvme_q {
	uint16_t qid;
	uint32_t depth;
	struct nvme_sqe *sq;
	struct nvme_cqe *cq;
	uint64_t sq_bus, cq_bus;
	uint32_t sq_tail, cq_head;
	uint8_t phase;
	int vec;                 /* MSI-X vector, -1: polled */
	uint16_t next_cid;
	uint64_t cmds;           /* completed commands */
	/* bounce buffer and PRP list pages for this queue's one command in flight */
	uint8_t *buf;
	uint64_t buf_bus;
	uint32_t buf_len;
	uint64_t *prp;
	uint64_t prp_bus;
	uint32_t prp_len;
};

struct nvme_dev {
	struct pci_dev *pdev;
	struct fab_host *h;
	uint8_t *bar;
	uint64_t cap;
	unsigned dstrd;
	uint32_t ready_ms;       /* CAP.TO */
	uint32_t timeout_ms;
	uint32_t max_xfer;
	struct nvme_q adminq;
	struct nvme_q ioq[NVME_DRV_MAX_IOQ];
	unsigned nioq;           /* created */
	unsigned want_ioq;       /* asked for at probe: reused by a reset */
	unsigned rr;             /* next I/O queue for nvme_drv_io */
	int nvec;
	struct nvme_id_ctrl *idc;
	struct nvme_drv_ns *ns;
	unsigned nns;
	bool needs_reset;
	bool busy;
	uint64_t resets;
};

/* ---------- small helpers ---------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint32_t rd32(struct nvme_dev *dev, uint32_t off)
{
	return __atomic_load_n((uint32_t *)(dev->bar + off), __ATOMIC_ACQUIRE);
}

static uint64_t rd64(struct nvme_dev *dev, uint32_t off)
{
	return __atomic_load_n((uint64_t *)(dev->bar + off), __ATOMIC_ACQUIRE);
}

static void wr32(struct nvme_dev *dev, uint64_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(dev->bar + off), v, __ATOMIC_RELEASE);
}

static void wr64(struct nvme_dev *dev, uint32_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(dev->bar + off), v, __ATOMIC_RELEASE);
}

/* Drop the host lock entirely so that the controller's DMA can proceed. */
static unsigned lock_drop(struct nvme_dev *dev)
{
	return fab_host_unlock_all(dev->h);
}

static void lock_retake(struct nvme_dev *dev, unsigned n)
{
	fab_host_relock(dev->h, n);
}

/*
 * Wait until (CSTS & mask) == want, up to timeout_ms. Registers have no
 * interrupt, so this polls, yielding the CPU to the model's thread between
 * reads. Called with the lock dropped.
 */
static int wait_csts(struct nvme_dev *dev, uint32_t mask, uint32_t want, uint32_t timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		uint32_t csts = rd32(dev, NVME_REG_CSTS);

		if ((csts & mask) == want)
			return 0;
		if (csts == 0xffffffffu)
			return -ENODEV;        /* the function is gone (surprise removal) */
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		sched_yield();
	}
}

static int wait_csts_unlocked(struct nvme_dev *dev, uint32_t mask, uint32_t want,
			      uint32_t timeout_ms)
{
	unsigned n = lock_drop(dev);
	int rc = wait_csts(dev, mask, want, timeout_ms);

	lock_retake(dev, n);
	return rc;
}

/* ---------- queues ---------- */

static void q_free(struct nvme_dev *dev, struct nvme_q *q)
{
	struct pci_dev *pdev = dev->pdev;

	if (q->sq)
		dma_free_coherent(pdev, (size_t)q->depth * sizeof(*q->sq), q->sq, q->sq_bus);
	if (q->cq)
		dma_free_coherent(pdev, (size_t)q->depth * sizeof(*q->cq), q->cq, q->cq_bus);
	if (q->buf)
		dma_free_coherent(pdev, q->buf_len, q->buf, q->buf_bus);
	if (q->prp)
		dma_free_coherent(pdev, q->prp_len, q->prp, q->prp_bus);
	memset(q, 0, sizeof(*q));
}

/* A fresh queue state: CQ entries zeroed, so phase 1 marks the first new entry. */
static void q_reset(struct nvme_q *q)
{
	memset(q->cq, 0, (size_t)q->depth * sizeof(*q->cq));
	memset(q->sq, 0, (size_t)q->depth * sizeof(*q->sq));
	q->sq_tail = 0;
	q->cq_head = 0;
	q->phase = 1;
}

static int q_alloc(struct nvme_dev *dev, struct nvme_q *q, uint16_t qid, uint32_t depth,
		   uint32_t xfer, int vec)
{
	struct pci_dev *pdev = dev->pdev;
	uint64_t entries = xfer / NVME_DRV_PAGE + 1;

	memset(q, 0, sizeof(*q));
	q->qid = qid;
	q->depth = depth;
	q->vec = vec;
	q->buf_len = xfer;
	/* Page-sized PRP list pages, chained, enough for the whole bounce buffer. */
	q->prp_len = (uint32_t)(nvme_prp_list_pages(entries, NVME_DRV_PAGE) ?: 1) * NVME_DRV_PAGE;
	q->sq = dma_alloc_coherent(pdev, (size_t)depth * sizeof(*q->sq), &q->sq_bus);
	q->cq = dma_alloc_coherent(pdev, (size_t)depth * sizeof(*q->cq), &q->cq_bus);
	q->buf = dma_alloc_coherent(pdev, xfer, &q->buf_bus);
	q->prp = dma_alloc_coherent(pdev, q->prp_len, &q->prp_bus);
	if (!q->sq || !q->cq || !q->buf || !q->prp) {
		q_free(dev, q);
		return -ENOMEM;
	}
	q_reset(q);
	return 0;
}

/*
 * Point the command at the first len bytes of the queue's bounce buffer. The
 * buffer is page-aligned and contiguous in bus space, so PRP1 covers its
 * first page and the rest is PRP2 (one page) or a PRP list.
 */
static void q_set_prps(struct nvme_q *q, uint32_t len, struct nvme_sqe *s)
{
	const uint64_t page = NVME_DRV_PAGE, per = page / NVME_PRP_ENTRY_SIZE;
	uint64_t rest, slot = 0, list_bus = q->prp_bus;
	uint64_t *list = q->prp;

	s->flags &= (uint8_t)~0xc0u;    /* PSDT 0: PRPs */
	s->prp1 = len ? q->buf_bus : 0;
	s->prp2 = 0;
	if (!len || !nvme_prp_rest_entries(q->buf_bus, len, page))
		return;
	rest = nvme_prp_rest_entries(q->buf_bus, len, page);
	if (!nvme_prp_needs_list(q->buf_bus, len, page)) {
		s->prp2 = q->buf_bus + page;
		return;
	}
	for (uint64_t i = 0; i < rest; i++) {
		/* The last slot of a full list page chains to the next page. */
		if (slot == per - 1 && i + 1 < rest) {
			list[slot] = list_bus + page;
			list = (uint64_t *)((uint8_t *)list + page);
			list_bus += page;
			slot = 0;
		}
		list[slot++] = q->buf_bus + (i + 1) * page;
	}
	s->prp2 = q->prp_bus;
}

/*
 * Look for the completion of cid; other entries (a late answer to a command
 * that timed out before the reset finished) are consumed and dropped.
 * Returns 1 if found, 0 if the queue holds nothing new.
 */
static int q_reap(struct nvme_dev *dev, struct nvme_q *q, uint16_t cid, struct nvme_drv_cpl *cpl)
{
	for (uint32_t n = 0; n < q->depth; n++) {
		struct nvme_cqe *e = &q->cq[q->cq_head];
		struct nvme_cqe c;

		if (!nvme_cqe_is_new(e, q->phase))
			return 0;
		memcpy(&c, e, sizeof(c));
		nvme_q_advance(&q->cq_head, &q->phase, q->depth);
		/* Hand the entry back at once: the controller may need the slot. */
		wr32(dev, nvme_cq_head_db(q->qid, dev->dstrd), q->cq_head);
		if (c.cid == cid && c.sq_id == q->qid) {
			cpl->result = c.dw0;
			cpl->status = nvme_cqe_st(&c);
			q->cmds++;
			return 1;
		}
	}
	return 0;
}

/* Wait for cid's completion until deadline (lock dropped by the caller). */
static int q_wait(struct nvme_dev *dev, struct nvme_q *q, uint16_t cid, uint64_t deadline,
		  struct nvme_drv_cpl *cpl)
{
	int efd = q->vec >= 0 ? pci_irq_eventfd(dev->pdev, q->vec) : -1;

	for (;;) {
		uint64_t now;

		if (q_reap(dev, q, cid, cpl))
			return 0;
		if (rd32(dev, NVME_REG_CSTS) & CSTS_CFS)
			return -EIO;   /* fatal: nothing more will complete */
		now = now_ms();
		if (now > deadline)
			return -ETIMEDOUT;
		if (efd >= 0) {
			struct pollfd p = { .fd = efd, .events = POLLIN };
			uint64_t cnt;
			/* The entry may already be there (checked above): the
			 * signal is only a wake-up, drained before rechecking. */
			int rc = poll(&p, 1, (int)(deadline - now) + 1);

			if (rc > 0 && read(efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
				return -errno;
			if (rc < 0 && errno != EINTR)
				return -errno;
		} else {
			sched_yield();
		}
	}
}

/*
 * Submit one command on q (its data already in q's bounce buffer) and wait
 * for it. The driver has at most one command in flight per queue, so the SQ
 * cannot be full and CIDs only need to differ from a timed-out one's.
 */
static int q_exec(struct nvme_dev *dev, struct nvme_q *q, struct nvme_sqe *s, uint32_t len,
		  uint32_t timeout_ms, struct nvme_drv_cpl *cpl)
{
	uint64_t deadline;
	uint16_t cid;
	unsigned held;
	int rc;

	cid = q->next_cid;
	q->next_cid = (uint16_t)((q->next_cid + 1) & 0x7fff);   /* 0xffff is "no command" */
	s->cid = cid;
	q_set_prps(q, len, s);
	memcpy(&q->sq[q->sq_tail], s, sizeof(*s));
	q->sq_tail = nvme_q_next(q->sq_tail, q->depth);
	/* The entry must be visible before the doorbell (release store). */
	wr32(dev, nvme_sq_tail_db(q->qid, dev->dstrd), q->sq_tail);
	deadline = now_ms() + (timeout_ms ? timeout_ms : dev->timeout_ms);
	held = lock_drop(dev);
	rc = q_wait(dev, q, cid, deadline, cpl);
	lock_retake(dev, held);
	if (rc == -ETIMEDOUT || rc == -EIO)
		dev->needs_reset = true;
	return rc;
}

/* An admin command of the driver's own, data in/out of the admin bounce buffer. */
static int admin_exec(struct nvme_dev *dev, struct nvme_sqe *s, uint32_t len,
		      struct nvme_drv_cpl *cpl)
{
	uint8_t opcode = s->opcode;
	int rc = q_exec(dev, &dev->adminq, s, len, 0, cpl);

	if (!rc && cpl->status) {
		fprintf(stderr, "%s: nvme: admin opcode 0x%02x failed: status 0x%x\n",
			dev->pdev->name, opcode, cpl->status);
		return -EIO;
	}
	if (rc)
		fprintf(stderr, "%s: nvme: admin opcode 0x%02x: %s (CSTS 0x%x)\n",
			dev->pdev->name, opcode, strerror(-rc), rd32(dev, NVME_REG_CSTS));
	return rc;
}

/* ---------- controller bring-up ---------- */

/* CC.EN = 0 and wait for the controller to acknowledge (RDY = 0). */
static int ctrl_disable(struct nvme_dev *dev)
{
	uint32_t cc = rd32(dev, NVME_REG_CC);
	int rc;

	if (!(cc & CC_EN) && !(rd32(dev, NVME_REG_CSTS) & CSTS_RDY))
		return 0;
	wr32(dev, NVME_REG_CC, cc & ~(uint32_t)(CC_EN |
						NVME_CC_SHN_MASK << NVME_CC_SHN_SHIFT));
	/*
	 * Wait for CFS to clear too: the reset is what clears it, and a
	 * controller that has not yet seen EN = 0 would take the next EN = 1
	 * for no change at all. A CFS that never clears is not fatal here.
	 */
	rc = wait_csts_unlocked(dev, CSTS_RDY | CSTS_CFS, 0, dev->ready_ms);
	if (rc == -ETIMEDOUT && !(rd32(dev, NVME_REG_CSTS) & CSTS_RDY))
		rc = 0;
	return rc;
}

/* Normal shutdown notification, so that the namespaces are made durable. */
static void ctrl_shutdown(struct nvme_dev *dev)
{
	uint32_t cc = rd32(dev, NVME_REG_CC);

	if (!(cc & CC_EN) || (rd32(dev, NVME_REG_CSTS) & CSTS_CFS))
		return;
	cc &= ~(uint32_t)(NVME_CC_SHN_MASK << NVME_CC_SHN_SHIFT);
	wr32(dev, NVME_REG_CC, cc | NVME_CC_SHN_NORMAL << NVME_CC_SHN_SHIFT);
	if (wait_csts_unlocked(dev, NVME_CSTS_SHST_MASK << NVME_CSTS_SHST_SHIFT,
			       NVME_CSTS_SHST_CMPLT << NVME_CSTS_SHST_SHIFT, dev->ready_ms))
		fprintf(stderr, "%s: nvme: shutdown did not complete in %u ms\n",
			dev->pdev->name, dev->ready_ms);
}

/* Reset, program the admin queues, enable, wait for RDY. */
static int ctrl_start(struct nvme_dev *dev)
{
	struct nvme_q *aq = &dev->adminq;
	uint32_t cc;
	int rc;

	rc = ctrl_disable(dev);
	if (rc) {
		fprintf(stderr, "%s: nvme: controller did not reset (CSTS 0x%x): %s\n",
			dev->pdev->name, rd32(dev, NVME_REG_CSTS), strerror(-rc));
		return rc;
	}
	q_reset(aq);
	wr32(dev, NVME_REG_AQA, (aq->depth - 1) << 16 | (aq->depth - 1));
	wr64(dev, NVME_REG_ASQ, aq->sq_bus);
	wr64(dev, NVME_REG_ACQ, aq->cq_bus);
	cc = CC_EN | NVME_CC_CSS_NVM << NVME_CC_CSS_SHIFT |
	     (NVME_DRV_PAGE_SHIFT - 12) << NVME_CC_MPS_SHIFT |
	     NVME_CC_AMS_RR << NVME_CC_AMS_SHIFT |
	     NVME_SQES_LOG2 << NVME_CC_IOSQES_SHIFT | NVME_CQES_LOG2 << NVME_CC_IOCQES_SHIFT;
	wr32(dev, NVME_REG_CC, cc);
	rc = wait_csts_unlocked(dev, CSTS_RDY | CSTS_CFS, CSTS_RDY,
				dev->ready_ms);
	if (rc) {
		fprintf(stderr, "%s: nvme: controller not ready (CSTS 0x%x): %s\n",
			dev->pdev->name, rd32(dev, NVME_REG_CSTS), strerror(-rc));
		return rc == -ETIMEDOUT && (rd32(dev, NVME_REG_CSTS) & CSTS_CFS) ? -EIO
											   : rc;
	}
	return 0;
}

static int identify(struct nvme_dev *dev, uint8_t cns, uint32_t nsid, void *out)
{
	struct nvme_sqe s;
	struct nvme_drv_cpl cpl;
	int rc;

	nvme_sqe_init(&s, nvme_admin_identify, 0, nsid);
	s.cdw10 = cns;
	rc = admin_exec(dev, &s, NVME_IDENTIFY_DATA_SIZE, &cpl);
	if (!rc)
		memcpy(out, dev->adminq.buf, NVME_IDENTIFY_DATA_SIZE);
	return rc;
}

static int identify_all(struct nvme_dev *dev)
{
	uint32_t *list = malloc(NVME_IDENTIFY_DATA_SIZE);
	struct nvme_id_ns *idns = malloc(sizeof(*idns));
	unsigned mdts;
	int rc = -ENOMEM;

	if (!list || !idns)
		goto out;
	rc = identify(dev, NVME_IDENTIFY_CNS_CTRL, 0, dev->idc);
	if (rc)
		goto out;
	mdts = dev->idc->mdts;
	/* MDTS is in units of CAP.MPSMIN pages; 0 means no limit. */
	dev->max_xfer = NVME_DRV_MAX_XFER;
	if (mdts && mdts < 20) {
		uint64_t lim = (4096ull << NVME_CAP_MPSMIN(dev->cap)) << mdts;

		if (lim < dev->max_xfer)
			dev->max_xfer = (uint32_t)lim;
	}
	rc = identify(dev, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, list);
	if (rc)
		goto out;
	free(dev->ns);
	dev->nns = 0;
	dev->ns = calloc(NVME_DRV_MAX_NS, sizeof(*dev->ns));
	if (!dev->ns) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < NVME_DRV_MAX_NS && list[i]; i++) {
		struct nvme_drv_ns *ns = &dev->ns[dev->nns];
		unsigned fmt, ds;

		rc = identify(dev, NVME_IDENTIFY_CNS_NS, list[i], idns);
		if (rc)
			goto out;
		fmt = idns->flbas & 0xf;
		ds = fmt <= idns->nlbaf ? idns->lbaf[fmt].ds : 0;
		if (ds < 9 || ds > NVME_DRV_PAGE_SHIFT + 4) {
			fprintf(stderr, "%s: nvme: namespace %u: unsupported LBA size 2^%u, skipped\n",
				dev->pdev->name, list[i], ds);
			continue;
		}
		ns->nsid = list[i];
		ns->lba_shift = ds;
		ns->nsze = idns->nsze;
		dev->nns++;
	}
	rc = 0;
out:
	free(list);
	free(idns);
	return rc;
}

/* Set Features Number of Queues: returns the pairs granted (1-based). */
static int set_num_queues(struct nvme_dev *dev, unsigned want)
{
	struct nvme_sqe s;
	struct nvme_drv_cpl cpl;
	int rc;

	nvme_sqe_init(&s, nvme_admin_set_features, 0, 0);
	s.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	s.cdw11 = (want - 1) << 16 | (want - 1);
	rc = admin_exec(dev, &s, 0, &cpl);
	if (rc)
		return rc;
	return (int)((cpl.result & 0xffff) < (cpl.result >> 16) ? (cpl.result & 0xffff)
								 : (cpl.result >> 16)) + 1;
}

static int admin_queue_cmd(struct nvme_dev *dev, uint8_t opcode, uint64_t prp1, uint32_t cdw10,
			   uint32_t cdw11)
{
	struct nvme_q *aq = &dev->adminq;
	struct nvme_sqe s;
	struct nvme_drv_cpl cpl;
	uint64_t deadline;
	unsigned held;
	uint16_t cid;
	int rc;

	/* Like q_exec, but PRP1 names the queue memory rather than the bounce. */
	nvme_sqe_init(&s, opcode, 0, 0);
	s.cdw10 = cdw10;
	s.cdw11 = cdw11;
	s.prp1 = prp1;
	cid = aq->next_cid;
	aq->next_cid = (uint16_t)((aq->next_cid + 1) & 0x7fff);
	s.cid = cid;
	memcpy(&aq->sq[aq->sq_tail], &s, sizeof(s));
	aq->sq_tail = nvme_q_next(aq->sq_tail, aq->depth);
	wr32(dev, nvme_sq_tail_db(0, dev->dstrd), aq->sq_tail);
	deadline = now_ms() + dev->timeout_ms;
	held = lock_drop(dev);
	rc = q_wait(dev, aq, cid, deadline, &cpl);
	lock_retake(dev, held);
	if (rc == -ETIMEDOUT || rc == -EIO)
		dev->needs_reset = true;
	if (!rc && cpl.status) {
		fprintf(stderr, "%s: nvme: admin opcode 0x%02x failed: status 0x%x\n",
			dev->pdev->name, opcode, cpl.status);
		rc = -EIO;
	}
	return rc;
}

static int io_queues_create(struct nvme_dev *dev)
{
	int granted, rc;
	unsigned n;

	granted = set_num_queues(dev, dev->want_ioq);
	if (granted < 0)
		return granted;
	n = dev->want_ioq < (unsigned)granted ? dev->want_ioq : (unsigned)granted;
	for (unsigned i = 0; i < n; i++) {
		struct nvme_q *q = &dev->ioq[i];

		q_reset(q);
		rc = admin_queue_cmd(dev, nvme_admin_create_cq, q->cq_bus,
				     nvme_cdw10_queue(q->qid, q->depth),
				     nvme_cdw11_create_cq(q->vec >= 0 ? (uint16_t)q->vec : 0,
							  q->vec >= 0));
		if (!rc)
			rc = admin_queue_cmd(dev, nvme_admin_create_sq, q->sq_bus,
					     nvme_cdw10_queue(q->qid, q->depth),
					     nvme_cdw11_create_sq(q->qid, NVME_QPRIO_MEDIUM));
		if (rc)
			return rc;
		dev->nioq = i + 1;
	}
	return 0;
}

static void io_queues_delete(struct nvme_dev *dev)
{
	/* SQs before their CQs (a CQ in use cannot be deleted). */
	for (unsigned i = dev->nioq; i-- > 0;) {
		uint16_t qid = dev->ioq[i].qid;

		if (admin_queue_cmd(dev, nvme_admin_delete_sq, 0, qid, 0) ||
		    admin_queue_cmd(dev, nvme_admin_delete_cq, 0, qid, 0))
			break;   /* the disable that follows removes them anyway */
	}
	dev->nioq = 0;
}

/* Bring the controller back after a timeout or a fatal status. */
static int ctrl_reinit(struct nvme_dev *dev)
{
	int rc;

	dev->nioq = 0;
	rc = ctrl_start(dev);
	if (!rc)
		rc = io_queues_create(dev);
	dev->resets++;
	dev->needs_reset = rc != 0;
	if (rc)
		fprintf(stderr, "%s: nvme: reset failed: %s\n", dev->pdev->name, strerror(-rc));
	return rc;
}

static void dev_free(struct nvme_dev *dev)
{
	for (unsigned i = 0; i < NVME_DRV_MAX_IOQ; i++)
		if (dev->ioq[i].sq || dev->ioq[i].buf)
			q_free(dev, &dev->ioq[i]);
	q_free(dev, &dev->adminq);
	if (dev->nvec)
		pci_free_irq_vectors(dev->pdev);
	free(dev->idc);
	free(dev->ns);
	free(dev);
}

/* ---------- probe / remove ---------- */

static int nvme_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct nvme_dev *dev;
	unsigned want, depth;
	int rc;

	(void)id;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->pdev = pdev;
	dev->h = pci_host_fab(pdev->host);
	dev->timeout_ms = nvme_drv_params.timeout_ms ? nvme_drv_params.timeout_ms
						     : NVME_DRV_TIMEOUT_MS;
	dev->idc = calloc(1, sizeof(*dev->idc));
	if (!dev->idc) {
		rc = -ENOMEM;
		goto fail_free;
	}
	rc = pci_enable_device(pdev);
	if (rc)
		goto fail_free;
	pci_set_master(pdev);
	dev->bar = pci_iomap(pdev, 0);
	if (!dev->bar || pdev->bar_size[0] < NVME_DB_BASE + 8) {
		fprintf(stderr, "%s: nvme: BAR0 cannot be mapped\n", pdev->name);
		rc = -ENXIO;
		goto fail_free;
	}
	dev->cap = rd64(dev, NVME_REG_CAP);
	dev->dstrd = (unsigned)NVME_CAP_DSTRD(dev->cap);
	/* CAP.TO is in 500 ms units; 0 would be a broken controller: allow 500 ms. */
	dev->ready_ms = (NVME_CAP_TO(dev->cap) ? NVME_CAP_TO(dev->cap) : 1) * 500u;
	if (!(NVME_CAP_CSS(dev->cap) & NVME_CAP_CSS_NVM) || NVME_CAP_MPSMIN(dev->cap) != 0) {
		fprintf(stderr, "%s: nvme: CAP 0x%llx: no NVM command set or 4 KiB pages\n",
			pdev->name, (unsigned long long)dev->cap);
		rc = -ENODEV;
		goto fail_free;
	}

	want = nvme_drv_params.io_queues ? nvme_drv_params.io_queues : 2;
	if (want > NVME_DRV_MAX_IOQ)
		want = NVME_DRV_MAX_IOQ;
	/*
	 * Vectors: 0 for the admin queue, one per I/O queue. All or nothing:
	 * without enough vectors, every queue is polled.
	 */
	if (!nvme_drv_params.use_polling) {
		rc = pci_alloc_irq_vectors(pdev, (int)want + 1);
		dev->nvec = rc > 0 ? rc : 0;
		if (rc < 0)
			fprintf(stderr, "%s: nvme: no MSI-X vectors (%s): polling\n", pdev->name,
				strerror(-rc));
	}
	depth = NVME_CAP_MQES(dev->cap) + 1u;
	depth = depth < NVME_DRV_QDEPTH ? depth : NVME_DRV_QDEPTH;
	if (depth < 2) {
		rc = -ENODEV;
		goto fail_free;
	}
	rc = q_alloc(dev, &dev->adminq, 0, NVME_DRV_ADMIN_DEPTH, NVME_DRV_MAX_XFER,
		     dev->nvec ? 0 : -1);
	if (rc)
		goto fail_free;
	rc = ctrl_start(dev);
	if (rc)
		goto fail_free;
	rc = identify_all(dev);
	if (rc)
		goto fail_disable;
	for (unsigned i = 0; i < want; i++) {
		rc = q_alloc(dev, &dev->ioq[i], (uint16_t)(i + 1), depth, dev->max_xfer,
			     dev->nvec ? (int)i + 1 : -1);
		if (rc)
			goto fail_disable;
	}
	dev->want_ioq = want;
	rc = io_queues_create(dev);
	if (rc || !dev->nioq) {
		rc = rc ? rc : -EIO;
		goto fail_disable;
	}
	pdev->drvdata = dev;
	return 0;

fail_disable:
	ctrl_disable(dev);
fail_free:
	pci_clear_master(pdev);
	dev_free(dev);
	return rc;
}

static void nvme_remove(struct pci_dev *pdev)
{
	struct nvme_dev *dev = pdev->drvdata;

	if (!dev)
		return;
	if (!dev->needs_reset)
		io_queues_delete(dev);
	ctrl_shutdown(dev);
	ctrl_disable(dev);
	pci_clear_master(pdev);
	dev_free(dev);
	pdev->drvdata = NULL;
}

static const struct pci_device_id nvme_ids[] = {
	{ .vendor = PCI_ANY_ID, .device = PCI_ANY_ID, .class = NVME_DRV_CLASS,
	  .class_mask = 0xffffff },
	{ 0 },
};

const struct pci_driver nvme_pci_driver = {
	.name = "nvme",
	.id_table = nvme_ids,
	.probe = nvme_probe,
	.remove = nvme_remove,
};

/* ---------- the API ---------- */

bool nvme_drv_bound(const struct pci_dev *pdev)
{
	return pdev && pdev->driver == &nvme_pci_driver && pdev->drvdata;
}

/* The device, reset first if a command timed out; -EBUSY when reentered. */
static int get_dev(struct pci_dev *pdev, struct nvme_dev **out)
{
	struct nvme_dev *dev;
	int rc;

	if (!nvme_drv_bound(pdev))
		return -ENODEV;
	dev = pdev->drvdata;
	if (dev->busy)
		return -EBUSY;
	if (dev->needs_reset) {
		dev->busy = true;
		rc = ctrl_reinit(dev);
		dev->busy = false;
		if (rc)
			return rc;
	}
	*out = dev;
	return 0;
}

int nvme_drv_info(struct pci_dev *pdev, struct nvme_drv_info *info)
{
	struct nvme_dev *dev;

	if (!nvme_drv_bound(pdev) || !info)
		return -ENODEV;
	dev = pdev->drvdata;
	memset(info, 0, sizeof(*info));
	/* Identify strings are space padded, not terminated. */
	memcpy(info->model, dev->idc->mn, sizeof(dev->idc->mn));
	memcpy(info->serial, dev->idc->sn, sizeof(dev->idc->sn));
	memcpy(info->firmware, dev->idc->fr, sizeof(dev->idc->fr));
	for (char *s = info->model + sizeof(dev->idc->mn); s > info->model && s[-1] == ' ';)
		*--s = '\0';
	for (char *s = info->serial + sizeof(dev->idc->sn); s > info->serial && s[-1] == ' ';)
		*--s = '\0';
	for (char *s = info->firmware + sizeof(dev->idc->fr); s > info->firmware && s[-1] == ' ';)
		*--s = '\0';
	info->max_xfer = dev->max_xfer;
	info->nn = dev->idc->nn;
	info->nns = dev->nns;
	info->nioq = dev->nioq;
	info->nvec = dev->nvec;
	info->needs_reset = dev->needs_reset;
	info->resets = dev->resets;
	return 0;
}

int nvme_drv_ns_info(struct pci_dev *pdev, uint32_t nsid, struct nvme_drv_ns *ns)
{
	struct nvme_dev *dev;

	if (!nvme_drv_bound(pdev))
		return -ENODEV;
	dev = pdev->drvdata;
	for (unsigned i = 0; i < dev->nns; i++) {
		if (dev->ns[i].nsid == nsid) {
			if (ns)
				*ns = dev->ns[i];
			return 0;
		}
	}
	return -ENOENT;
}

int nvme_drv_admin(struct pci_dev *pdev, const struct nvme_sqe *sqe, void *data, uint32_t len,
		   enum nvme_drv_dir dir, uint32_t timeout_ms, struct nvme_drv_cpl *cpl)
{
	struct nvme_dev *dev;
	struct nvme_sqe s;
	int rc;

	if (!sqe || !cpl || (len && !data) || (dir == NVME_DRV_NONE) != (len == 0) ||
	    dir > NVME_DRV_FROM_DEV)
		return -EINVAL;
	rc = get_dev(pdev, &dev);
	if (rc)
		return rc;
	if (len > dev->adminq.buf_len || len > dev->max_xfer)
		return -EINVAL;
	memcpy(&s, sqe, sizeof(s));
	dev->busy = true;
	/* Stale bytes of an earlier command must not leak to the caller. */
	if (dir == NVME_DRV_TO_DEV)
		memcpy(dev->adminq.buf, data, len);
	else if (len)
		memset(dev->adminq.buf, 0, len);
	rc = q_exec(dev, &dev->adminq, &s, len, timeout_ms, cpl);
	if (!rc && dir == NVME_DRV_FROM_DEV)
		memcpy(data, dev->adminq.buf, len);
	dev->busy = false;
	return rc;
}

static int io_one(struct nvme_dev *dev, struct nvme_q *q, const struct nvme_drv_ns *ns,
		  enum nvme_drv_op op, uint64_t slba, uint32_t nlb, uint8_t *buf,
		  struct nvme_drv_cpl *cpl)
{
	uint32_t len = 0;
	struct nvme_sqe s;

	switch (op) {
	case NVME_DRV_READ:
	case NVME_DRV_WRITE:
		nvme_sqe_init(&s, op == NVME_DRV_READ ? nvme_cmd_read : nvme_cmd_write, 0,
			      ns->nsid);
		nvme_rw_set(&s, slba, nlb);
		len = nlb << ns->lba_shift;
		if (op == NVME_DRV_WRITE)
			memcpy(q->buf, buf, len);
		break;
	case NVME_DRV_WRITE_ZEROES:
		nvme_sqe_init(&s, nvme_cmd_write_zeroes, 0, ns->nsid);
		nvme_rw_set(&s, slba, nlb);
		break;
	case NVME_DRV_DEALLOCATE: {
		struct nvme_dsm_range r = { .cattr = 0, .nlb = nlb, .slba = slba };

		nvme_sqe_init(&s, nvme_cmd_dsm, 0, ns->nsid);
		s.cdw10 = 0;                 /* NR: one range (0-based) */
		s.cdw11 = NVME_DSMGMT_AD;
		memcpy(q->buf, &r, sizeof(r));
		len = sizeof(r);
		break;
	}
	case NVME_DRV_FLUSH:
		nvme_sqe_init(&s, nvme_cmd_flush, 0, ns->nsid);
		break;
	default:
		return -EINVAL;
	}
	{
		int rc = q_exec(dev, q, &s, len, 0, cpl);

		if (!rc && !cpl->status && op == NVME_DRV_READ)
			memcpy(buf, q->buf, len);
		return rc;
	}
}

int nvme_drv_io_queue(struct pci_dev *pdev, unsigned qi, uint32_t nsid, enum nvme_drv_op op,
		      uint64_t slba, uint32_t nlb, void *buf, struct nvme_drv_cpl *cpl)
{
	struct nvme_drv_ns ns;
	struct nvme_dev *dev;
	uint32_t chunk, done = 0;
	uint8_t *p = buf;
	int rc;

	if (!cpl || op < NVME_DRV_READ || op > NVME_DRV_DEALLOCATE)
		return -EINVAL;
	if ((op == NVME_DRV_READ || op == NVME_DRV_WRITE) && (!buf || !nlb))
		return -EINVAL;
	if (op != NVME_DRV_FLUSH && (!nlb || slba + nlb < slba))
		return -EINVAL;
	rc = get_dev(pdev, &dev);
	if (rc)
		return rc;
	if (qi >= dev->nioq)
		return -EINVAL;
	rc = nvme_drv_ns_info(pdev, nsid, &ns);
	if (rc)
		return rc;
	if (op != NVME_DRV_FLUSH && (slba >= ns.nsze || nlb > ns.nsze - slba))
		return -ERANGE;
	cpl->result = 0;
	cpl->status = 0;
	dev->busy = true;
	if (op == NVME_DRV_FLUSH) {
		rc = io_one(dev, &dev->ioq[qi], &ns, op, 0, 0, NULL, cpl);
		goto out;
	}
	/* Data commands by MDTS (and the bounce buffer); the others by NLB's 16 bits. */
	chunk = op == NVME_DRV_READ || op == NVME_DRV_WRITE ? dev->max_xfer >> ns.lba_shift
							    : 65536u;
	while (done < nlb) {
		uint32_t n = nlb - done < chunk ? nlb - done : chunk;

		rc = io_one(dev, &dev->ioq[qi], &ns, op, slba + done, n,
			    p ? p + ((uint64_t)done << ns.lba_shift) : NULL, cpl);
		if (rc || cpl->status)
			break;
		done += n;
	}
out:
	dev->busy = false;
	return rc;
}

int nvme_drv_io(struct pci_dev *pdev, uint32_t nsid, enum nvme_drv_op op, uint64_t slba,
		uint32_t nlb, void *buf, struct nvme_drv_cpl *cpl)
{
	struct nvme_dev *dev;
	unsigned q;

	if (!nvme_drv_bound(pdev))
		return -ENODEV;
	dev = pdev->drvdata;
	if (!dev->nioq && !dev->needs_reset)
		return -EIO;
	q = dev->nioq ? dev->rr++ % dev->nioq : 0;
	return nvme_drv_io_queue(pdev, q, nsid, op, slba, nlb, buf, cpl);
}

uint64_t nvme_drv_queue_cmds(struct pci_dev *pdev, unsigned q)
{
	struct nvme_dev *dev;

	if (!nvme_drv_bound(pdev))
		return 0;
	dev = pdev->drvdata;
	return q < dev->nioq ? dev->ioq[q].cmds : 0;
}

int nvme_drv_queue_vector(struct pci_dev *pdev, unsigned q)
{
	struct nvme_dev *dev;

	if (!nvme_drv_bound(pdev))
		return -1;
	dev = pdev->drvdata;
	return q < dev->nioq ? dev->ioq[q].vec : -1;
}
