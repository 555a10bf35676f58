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
 *
 * This file: controller bring-up, reset and probe/remove. The queues and the
 * API are in nvme_drv_io.c; the shared state is in nvme_drv_priv.h.
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

struct nvme_drv_params nvme_drv_params;

/*
 * Wait until (CSTS & mask) == want, up to timeout_ms. Registers have no
 * interrupt, so this polls, yielding the CPU to the model's thread between
 * reads. Called with the lock dropped.
 */
static int wait_csts(struct nvme_dev *dev, uint32_t mask, uint32_t want, uint32_t timeout_ms)
{
	uint64_t deadline = smio_now_ms() + timeout_ms;

	for (;;) {
		uint32_t csts = rd32(dev, NVME_REG_CSTS);

		if ((csts & mask) == want)
			return 0;
		if (csts == 0xffffffffu)
			return -ENODEV;        /* the function is gone (surprise removal) */
		if (smio_now_ms() > deadline)
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
		smio_warn("%s: nvme: shutdown did not complete in %u ms",
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
		smio_error("%s: nvme: controller did not reset (CSTS 0x%x): %s",
			dev->pdev->name, rd32(dev, NVME_REG_CSTS), strerror(-rc));
		return rc;
	}
	nvme_drv_q_reset(aq);
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
		smio_error("%s: nvme: controller not ready (CSTS 0x%x): %s",
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
	rc = nvme_drv_admin_exec(dev, &s, NVME_IDENTIFY_DATA_SIZE, &cpl);
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
			smio_warn("%s: nvme: namespace %u: unsupported LBA size 2^%u, skipped",
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
	rc = nvme_drv_admin_exec(dev, &s, 0, &cpl);
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

	/* Like nvme_drv_q_exec, but PRP1 names the queue memory rather than the bounce. */
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
	deadline = smio_now_ms() + dev->timeout_ms;
	held = lock_drop(dev);
	rc = nvme_drv_q_wait(dev, aq, cid, deadline, &cpl);
	lock_retake(dev, held);
	if (rc == -ETIMEDOUT || rc == -EIO)
		dev->needs_reset = true;
	if (!rc && cpl.status) {
		smio_error("%s: nvme: admin opcode 0x%02x failed: status 0x%x",
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
	dev->granted = (unsigned)granted;
	dev->ext_qids = 0;          /* a reset took every queue pair away */
	for (unsigned i = 0; i < n; i++) {
		struct nvme_q *q = &dev->ioq[i];

		nvme_drv_q_reset(q);
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

/*
 * A queue pair for another owner: an accelerator kernel's device-resident
 * queues (docs/devices.md "Kernels"). The caller's memory holds SQ and CQ
 * (bus addresses, page aligned, the CQ zeroed); the pair has no interrupt
 * (the owner polls its CQ) and the first queue id above the driver's own
 * and other lent-out pairs, up to what the controller allocated.
 */
int nvme_drv_ext_queue(struct pci_dev *pdev, uint64_t sq_bus, uint64_t cq_bus, unsigned depth,
		       struct nvme_drv_extq *q)
{
	struct nvme_dev *dev;
	unsigned qid;
	int rc;

	if (!nvme_drv_bound(pdev))
		return -ENODEV;
	dev = pdev->drvdata;
	if (dev->busy)
		return -EBUSY;
	if (dev->needs_reset || pci_channel_offline(pdev))
		return -EIO;
	if (depth < 2 || depth > NVME_CAP_MQES(dev->cap) + 1u || !q ||
	    ((sq_bus | cq_bus) & 4095))
		return -EINVAL;
	for (qid = dev->nioq + 1; qid <= dev->granted && qid < 32; qid++)
		if (!(dev->ext_qids & (1u << qid)))
			break;
	if (qid > dev->granted || qid >= 32)
		return -ENOSPC;
	dev->busy = true;
	rc = admin_queue_cmd(dev, nvme_admin_create_cq, cq_bus, nvme_cdw10_queue((uint16_t)qid, depth),
			     nvme_cdw11_create_cq(0, false));
	if (!rc) {
		rc = admin_queue_cmd(dev, nvme_admin_create_sq, sq_bus,
				     nvme_cdw10_queue((uint16_t)qid, depth),
				     nvme_cdw11_create_sq((uint16_t)qid, NVME_QPRIO_MEDIUM));
		if (rc)
			(void)admin_queue_cmd(dev, nvme_admin_delete_cq, 0, qid, 0);
	}
	dev->busy = false;
	if (rc)
		return rc;
	dev->ext_qids |= 1u << qid;
	q->qid = (uint16_t)qid;
	q->depth = (uint16_t)depth;
	q->dstrd = dev->dstrd;
	q->sq_db_off = nvme_sq_tail_db(qid, dev->dstrd);
	q->cq_db_off = nvme_cq_head_db(qid, dev->dstrd);
	return 0;
}

int nvme_drv_ext_queue_delete(struct pci_dev *pdev, unsigned qid)
{
	struct nvme_dev *dev;
	int rc;

	if (!nvme_drv_bound(pdev))
		return -ENODEV;
	dev = pdev->drvdata;
	if (qid >= 32 || !(dev->ext_qids & (1u << qid)))
		return -ENOENT;
	if (dev->busy)
		return -EBUSY;
	dev->busy = true;
	rc = admin_queue_cmd(dev, nvme_admin_delete_sq, 0, qid, 0);
	if (!rc)
		rc = admin_queue_cmd(dev, nvme_admin_delete_cq, 0, qid, 0);
	dev->busy = false;
	/* A failed delete leaves needs_reset set: the reset removes the pair. */
	dev->ext_qids &= ~(1u << qid);
	return rc;
}

/* Bring the controller back after a timeout or a fatal status. */
int nvme_drv_ctrl_reinit(struct nvme_dev *dev)
{
	int rc;

	dev->nioq = 0;
	rc = ctrl_start(dev);
	if (!rc)
		rc = io_queues_create(dev);
	dev->resets++;
	dev->needs_reset = rc != 0;
	if (rc)
		smio_error("%s: nvme: reset failed: %s", dev->pdev->name, strerror(-rc));
	return rc;
}

static void dev_free(struct nvme_dev *dev)
{
	for (unsigned i = 0; i < NVME_DRV_MAX_IOQ; i++)
		if (dev->ioq[i].sq || dev->ioq[i].buf)
			nvme_drv_q_free(dev, &dev->ioq[i]);
	nvme_drv_q_free(dev, &dev->adminq);
	if (dev->nvec)
		pci_free_irq_vectors(dev->pdev);
	free(dev->idc);
	free(dev->ns);
	free(dev);
}

/* ---------- probe / remove ---------- */

/*
 * The Controller Memory Buffer as p2pmem, as Linux's nvme-pci does: the
 * whole CMB goes to the PCI core, and it is published for others' data
 * buffers only when the controller takes data there (CMBSZ.RDS and WDS). A
 * CMB the core cannot take is no reason to fail the probe.
 */
static void nvme_map_cmb(struct nvme_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	uint32_t cmbsz = rd32(dev, NVME_REG_CMBSZ), cmbloc;
	uint64_t unit, size, off;
	unsigned bar;
	int rc;

	if (!NVME_CMBSZ_SZ(cmbsz))
		return;
	cmbloc = rd32(dev, NVME_REG_CMBLOC);
	unit = 1ull << (12 + 4 * NVME_CMBSZ_SZU(cmbsz));
	size = unit * NVME_CMBSZ_SZ(cmbsz);
	off = unit * NVME_CMBLOC_OFST(cmbloc);
	bar = NVME_CMBLOC_BIR(cmbloc);
	if (bar > 5 || off >= pdev->bar_size[bar])
		return;
	if (size > pdev->bar_size[bar] - off)
		size = pdev->bar_size[bar] - off;
	rc = pci_p2pdma_add_resource(pdev, bar, size, off);
	if (rc && rc != -EEXIST) {
		smio_warn("%s: nvme: CMB (BAR%u) not usable as p2pmem: %s", pdev->name, bar,
			  strerror(-rc));
		return;
	}
	dev->cmb_size = size;
	if (NVME_CMBSZ_WDS(cmbsz) && NVME_CMBSZ_RDS(cmbsz)) {
		pci_p2pmem_publish(pdev, true);
		dev->cmb_p2pmem = true;
	}
}

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
		smio_error("%s: nvme: BAR0 cannot be mapped", pdev->name);
		rc = -ENXIO;
		goto fail_free;
	}
	dev->cap = rd64(dev, NVME_REG_CAP);
	dev->dstrd = (unsigned)NVME_CAP_DSTRD(dev->cap);
	/* CAP.TO is in 500 ms units; 0 would be a broken controller: allow 500 ms. */
	dev->ready_ms = (NVME_CAP_TO(dev->cap) ? NVME_CAP_TO(dev->cap) : 1) * 500u;
	if (!(NVME_CAP_CSS(dev->cap) & NVME_CAP_CSS_NVM) || NVME_CAP_MPSMIN(dev->cap) != 0) {
		smio_error("%s: nvme: CAP 0x%llx: no NVM command set or 4 KiB pages",
			pdev->name, (unsigned long long)dev->cap);
		rc = -ENODEV;
		goto fail_free;
	}

	nvme_map_cmb(dev);

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
			smio_warn("%s: nvme: no MSI-X vectors (%s): polling", pdev->name,
				strerror(-rc));
	}
	depth = NVME_CAP_MQES(dev->cap) + 1u;
	depth = depth < NVME_DRV_QDEPTH ? depth : NVME_DRV_QDEPTH;
	if (depth < 2) {
		rc = -ENODEV;
		goto fail_free;
	}
	rc = nvme_drv_q_alloc(dev, &dev->adminq, 0, NVME_DRV_ADMIN_DEPTH, NVME_DRV_MAX_XFER,
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
		rc = nvme_drv_q_alloc(dev, &dev->ioq[i], (uint16_t)(i + 1), depth, dev->max_xfer,
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
	/* Surprise removal: nothing can reach the controller any more. */
	if (!pci_dev_is_disconnected(pdev)) {
		if (!dev->needs_reset)
			io_queues_delete(dev);
		ctrl_shutdown(dev);
		ctrl_disable(dev);
		pci_clear_master(pdev);
	}
	dev_free(dev);
	pdev->drvdata = NULL;
}

/*
 * Link down (frozen) or the device gone (perm_failure): every command in
 * flight fails with -EIO now instead of at its timeout (its waiter is woken
 * through its vector's eventfd and sees the channel offline; a polled queue
 * sees it on its next pass), and the controller is reset on the next request
 * after the link returns: its queues may have lost doorbells and entries.
 * Runs with the host lock held, possibly while a worker waits without it:
 * only flags and wake-ups here.
 */
static void nvme_error_detected(struct pci_dev *pdev, enum pci_channel_state state)
{
	struct nvme_dev *dev = pdev->drvdata;
	uint64_t one = 1;

	if (!dev)
		return;
	dev->needs_reset = true;
	dev->channel_events++;
	for (int v = 0; v < dev->nvec; v++) {
		int efd = pci_irq_eventfd(pdev, v);

		if (efd >= 0 && write(efd, &one, sizeof(one)) < 0)
			smio_warn("%s: nvme: waking vector %d: %s", pdev->name, v, strerror(errno));
	}
	if (state == pci_channel_io_perm_failure)
		smio_warn("%s: nvme: permanent failure (device gone): commands in flight fail",
			  pdev->name);
	else
		smio_warn("%s: nvme: link down (frozen): commands in flight fail", pdev->name);
}

static void nvme_resume(struct pci_dev *pdev)
{
	struct nvme_dev *dev = pdev->drvdata;

	if (!dev)
		return;
	dev->channel_events++;
	smio_info("%s: nvme: link back: the controller is reset on next use", pdev->name);
}

static const struct pci_error_handlers nvme_err_handler = {
	.error_detected = nvme_error_detected,
	.resume = nvme_resume,
};

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
	.err_handler = &nvme_err_handler,
};
