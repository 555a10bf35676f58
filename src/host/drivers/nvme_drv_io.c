// SPDX-License-Identifier: MIT
/*
 * The in-kernel NVMe block driver's command path: its queues (submission,
 * completion by MSI-X or polling, the PRP bounce buffers) and the API the
 * daemon calls (admin pass-through, block I/O). Bring-up and probe/remove
 * are in nvme_drv.c.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/drivers/drivers.h"
#include "host/drivers/nvme_drv.h"
#include "host/drivers/nvme_drv_priv.h"
#include "util/log.h"

/* ---------- queues ---------- */

void nvme_drv_q_free(struct nvme_dev *dev, struct nvme_q *q)
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
void nvme_drv_q_reset(struct nvme_q *q)
{
	memset(q->cq, 0, (size_t)q->depth * sizeof(*q->cq));
	memset(q->sq, 0, (size_t)q->depth * sizeof(*q->sq));
	q->sq_tail = 0;
	q->cq_head = 0;
	q->phase = 1;
}

int nvme_drv_q_alloc(struct nvme_dev *dev, struct nvme_q *q, uint16_t qid, uint32_t depth,
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
		nvme_drv_q_free(dev, q);
		return -ENOMEM;
	}
	nvme_drv_q_reset(q);
	return 0;
}

/*
 * Point the command at len bytes at bus address bus: the queue's bounce
 * buffer, or p2pmem as this controller reaches it. Either is contiguous in
 * bus space, so PRP1 covers the first (part) page and the rest is PRP2 (one
 * page) or a PRP list of whole pages.
 */
static void q_set_prps(struct nvme_q *q, uint64_t bus, uint32_t len, struct nvme_sqe *s)
{
	const uint64_t page = NVME_DRV_PAGE, per = page / NVME_PRP_ENTRY_SIZE;
	const uint64_t first_page = bus & ~(page - 1);
	uint64_t rest, slot = 0, list_bus = q->prp_bus;
	uint64_t *list = q->prp;

	s->flags &= (uint8_t)~0xc0u;    /* PSDT 0: PRPs */
	s->prp1 = len ? bus : 0;
	s->prp2 = 0;
	if (!len || !nvme_prp_rest_entries(bus, len, page))
		return;
	rest = nvme_prp_rest_entries(bus, len, page);
	if (!nvme_prp_needs_list(bus, len, page)) {
		s->prp2 = first_page + page;
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
		list[slot++] = first_page + (i + 1) * page;
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
int nvme_drv_q_wait(struct nvme_dev *dev, struct nvme_q *q, uint16_t cid, uint64_t deadline,
		    struct nvme_drv_cpl *cpl)
{
	int efd = q->vec >= 0 ? pci_irq_eventfd(dev->pdev, q->vec) : -1;

	for (;;) {
		uint64_t now;

		if (q_reap(dev, q, cid, cpl))
			return 0;
		/* The link is down or the device gone: what is in flight fails now
		 * (error_detected woke us), not at the timeout. */
		if (pci_channel_offline(dev->pdev))
			return -EIO;
		if (rd32(dev, NVME_REG_CSTS) & CSTS_CFS)
			return -EIO;   /* fatal: nothing more will complete */
		now = smio_now_ms();
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
int nvme_drv_q_exec(struct nvme_dev *dev, struct nvme_q *q, struct nvme_sqe *s, uint32_t len,
		    uint32_t timeout_ms, struct nvme_drv_cpl *cpl)
{
	uint64_t deadline;
	uint16_t cid;
	unsigned held;
	int rc;

	cid = q->next_cid;
	q->next_cid = (uint16_t)((q->next_cid + 1) & 0x7fff);   /* 0xffff is "no command" */
	s->cid = cid;
	q_set_prps(q, q->data_bus ? q->data_bus : q->buf_bus, len, s);
	memcpy(&q->sq[q->sq_tail], s, sizeof(*s));
	q->sq_tail = nvme_q_next(q->sq_tail, q->depth);
	/* The entry must be visible before the doorbell (release store). */
	wr32(dev, nvme_sq_tail_db(q->qid, dev->dstrd), q->sq_tail);
	deadline = smio_now_ms() + (timeout_ms ? timeout_ms : dev->timeout_ms);
	held = lock_drop(dev);
	rc = nvme_drv_q_wait(dev, q, cid, deadline, cpl);
	lock_retake(dev, held);
	if (rc == -ETIMEDOUT || rc == -EIO)
		dev->needs_reset = true;
	return rc;
}

/* An admin command of the driver's own, data in/out of the admin bounce buffer. */
int nvme_drv_admin_exec(struct nvme_dev *dev, struct nvme_sqe *s, uint32_t len,
			struct nvme_drv_cpl *cpl)
{
	uint8_t opcode = s->opcode;
	int rc = nvme_drv_q_exec(dev, &dev->adminq, s, len, 0, cpl);

	if (!rc && cpl->status) {
		smio_error("%s: nvme: admin opcode 0x%02x failed: status 0x%x",
			dev->pdev->name, opcode, cpl->status);
		return -EIO;
	}
	if (rc)
		smio_error("%s: nvme: admin opcode 0x%02x: %s (CSTS 0x%x)",
			dev->pdev->name, opcode, strerror(-rc), rd32(dev, NVME_REG_CSTS));
	return rc;
}

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
	if (pci_channel_offline(pdev))
		return -EIO;     /* frozen or gone: nothing reaches the controller */
	if (dev->needs_reset) {
		dev->busy = true;
		rc = nvme_drv_ctrl_reinit(dev);
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
	info->channel_events = dev->channel_events;
	info->cmb_size = dev->cmb_size;
	info->cmb_p2pmem = dev->cmb_p2pmem;
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
	rc = nvme_drv_q_exec(dev, &dev->adminq, &s, len, timeout_ms, cpl);
	if (!rc && dir == NVME_DRV_FROM_DEV)
		memcpy(data, dev->adminq.buf, len);
	dev->busy = false;
	return rc;
}

/*
 * One command. p2p_bus != 0: buf is p2pmem that the controller reaches at
 * p2p_bus, and the data moves between the controller and that memory with
 * no bounce through host RAM (Linux's blk-mq with P2PDMA pages).
 */
static int io_one(struct nvme_dev *dev, struct nvme_q *q, const struct nvme_drv_ns *ns,
		  enum nvme_drv_op op, uint64_t slba, uint32_t nlb, uint8_t *buf,
		  uint64_t p2p_bus, struct nvme_drv_cpl *cpl)
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
		if (op == NVME_DRV_WRITE && !p2p_bus)
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
		int rc;

		q->data_bus = p2p_bus;
		rc = nvme_drv_q_exec(dev, q, &s, len, 0, cpl);
		q->data_bus = 0;
		if (!rc && !cpl->status && op == NVME_DRV_READ && !p2p_bus)
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
	uint64_t p2p_bus = 0;
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
	/* Data in p2pmem: the address at which this controller reaches it, once. */
	if ((op == NVME_DRV_READ || op == NVME_DRV_WRITE) &&
	    pci_is_p2pmem(pdev->host, buf, (size_t)nlb << ns.lba_shift)) {
		if (((uintptr_t)buf & 3))
			return -EINVAL;      /* PRP1 must be dword aligned */
		rc = pci_p2pmem_map(pdev, buf, (size_t)nlb << ns.lba_shift, &p2p_bus);
		if (rc)
			return rc;
	}
	cpl->result = 0;
	cpl->status = 0;
	dev->busy = true;
	if (op == NVME_DRV_FLUSH) {
		rc = io_one(dev, &dev->ioq[qi], &ns, op, 0, 0, NULL, 0, cpl);
		goto out;
	}
	/* Data commands by MDTS (and the bounce buffer); the others by NLB's 16 bits. */
	chunk = op == NVME_DRV_READ || op == NVME_DRV_WRITE ? dev->max_xfer >> ns.lba_shift
							    : 65536u;
	while (done < nlb) {
		uint32_t n = nlb - done < chunk ? nlb - done : chunk;

		rc = io_one(dev, &dev->ioq[qi], &ns, op, slba + done, n,
			    p ? p + ((uint64_t)done << ns.lba_shift) : NULL,
			    p2p_bus ? p2p_bus + ((uint64_t)done << ns.lba_shift) : 0, cpl);
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
