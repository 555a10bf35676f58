// SPDX-License-Identifier: MIT
/*
 * SMIO_ACCEL_OP: an application's request to the host's accelerator driver
 * (what an ioctl on a GPU's device node would be). Offsets in device memory
 * and in the driver's RAM buffer are translated to bus addresses here and
 * bounds-checked; bare bus addresses go to the device as they are (the
 * device's DMA limit and the IOMMU, when on, still apply to them).
 *
 * Called with the host lock held; the driver drops it while it waits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "util/log.h"
#include "util/smio_time.h"
#include "host/drivers/accel_drv.h"
#include "host/drivers/nvme_drv.h"

/* Repeats of one ring op in a single request (benchmarking), at most. */
#define ACCEL_OP_MAX_REPEAT  4096u

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static struct pci_dev *bound_accel(struct smd *d, uint16_t bdf)
{
	struct pci_dev *pdev = pci_get_dev(d->pci, bdf);

	if (!pdev)
		return NULL;
	if (!accel_drv_bound(pdev)) {
		smio_warn("%02x:%02x.%x: no accelerator driver bound (the device may be "
			"registered for lending)", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
		return NULL;
	}
	return pdev;
}

/* An operand: device-memory offset, RAM-buffer offset, or bus address. */
static int xlate(const struct accel_drv_info *in, uint32_t flags, uint32_t f_dev,
		 uint32_t f_ram, uint64_t v, uint64_t len, uint64_t *bus)
{
	if (flags & f_dev) {
		if (v > in->mem_size || len > in->mem_size - v)
			return -ERANGE;
		*bus = in->mem_bus + v;
	} else if (flags & f_ram) {
		if (v > in->buf_size || len > in->buf_size - v)
			return -ERANGE;
		*bus = in->buf_bus + v;
	} else {
		*bus = v;
	}
	return 0;
}

static int ring_op(struct pci_dev *pdev, const struct accel_drv_info *in,
		   const struct smio_accel_op *op, struct smio_accel_result *res)
{
	struct accel_desc descs[ACCEL_DRV_RING_SIZE - 1];
	struct accel_desc one = { .len = op->len, .pattern = op->pattern };
	uint64_t repeat = op->iters ? op->iters : 1, left, t0;
	bool failed = false;
	unsigned n;
	int rc;

	if (repeat > ACCEL_OP_MAX_REPEAT)
		return -EINVAL;
	switch (op->kind) {
	case SMIO_ACCEL_COPY:
		one.op = ACCEL_OP_COPY;
		rc = xlate(in, op->flags, SMIO_ACCEL_F_SRC_DEV, SMIO_ACCEL_F_SRC_RAM, op->src,
			   op->len, &one.src);
		if (!rc)
			rc = xlate(in, op->flags, SMIO_ACCEL_F_DST_DEV, SMIO_ACCEL_F_DST_RAM,
				   op->dst, op->len, &one.dst);
		break;
	case SMIO_ACCEL_FILL:
		one.op = ACCEL_OP_FILL;
		rc = xlate(in, op->flags, SMIO_ACCEL_F_DST_DEV, SMIO_ACCEL_F_DST_RAM, op->dst,
			   op->len, &one.dst);
		break;
	default:
		one.op = ACCEL_OP_CHECKSUM;
		rc = xlate(in, op->flags, SMIO_ACCEL_F_SRC_DEV, SMIO_ACCEL_F_SRC_RAM, op->src,
			   op->len, &one.src);
		break;
	}
	if (rc)
		return rc;
	/* Repeats go in ring-sized batches, timed as a whole (one request, no
	 * round trips in between: what a benchmark wants to see). */
	t0 = smio_now_ns();
	for (left = repeat; left && !rc && !failed; left -= n) {
		n = left < ARRAY_LEN(descs) ? (unsigned)left : ARRAY_LEN(descs);
		for (unsigned i = 0; i < n; i++)
			descs[i] = one;
		rc = accel_drv_submit_batch(pdev, descs, n,
					    accel_drv_timeout_ms(op->len * (uint64_t)n));
		/* The first failed descriptor is the request's answer. */
		for (unsigned i = 0; i < n && !rc; i++) {
			res->status = descs[i].status;
			res->result = descs[i].result;
			res->iters_done++;
			if (ACCEL_ST_CODE(descs[i].status) != ACCEL_SC_OK) {
				failed = true;
				break;
			}
		}
	}
	res->elapsed_ns = smio_now_ns() - t0;
	res->avg_ns = res->iters_done ? res->elapsed_ns / res->iters_done : 0;
	return rc;
}

int smd_h_accel_op(struct smd *d, const void *payload, uint32_t len, void *out,
		   uint32_t *outlen)
{
	struct smio_accel_op op;
	struct smio_accel_result res = { 0 };
	struct accel_drv_info in;
	struct pci_dev *pdev;
	int rc;

	if (len < sizeof(op))
		return -EINVAL;
	memcpy(&op, payload, sizeof(op));
	pdev = bound_accel(d, op.bdf);
	if (!pdev)
		return -ENODEV;
	rc = accel_drv_get_info(pdev, &in);
	if (rc)
		return rc;
	switch (op.kind) {
	case SMIO_ACCEL_INFO:
		res.status = ACCEL_ST_MAKE(ACCEL_SC_OK, 0);
		res.result = in.mem_size;
		res.bus = in.mem_bus;
		break;
	case SMIO_ACCEL_PINGPONG: {
		struct accel_prog_res pr = { 0 };
		struct pci_dev *peer;

		if (op.peer_bdf == op.bdf)
			return -EINVAL;
		peer = bound_accel(d, op.peer_bdf);
		if (!peer)
			return -ENODEV;
		rc = accel_drv_pingpong(pdev, peer, op.iters,
					accel_drv_pingpong_timeout_ms(op.iters), &pr);
		if (rc)
			return rc;
		res.status = pr.status;
		res.result = pr.iters_done;
		res.bus = in.mem_bus;
		res.elapsed_ns = pr.elapsed_ns;
		res.iters_done = pr.iters_done;
		res.avg_ns = pr.avg_ns;
		break;
	}
	default:
		rc = ring_op(pdev, &in, &op, &res);
		if (rc)
			return rc;
		break;
	}
	memcpy(out, &res, sizeof(res));
	*outlen = sizeof(res);
	return 0;
}

/* A kernel's NVMe queue pair (F_NVMEQ), lent for the length of one launch. */
struct launch_nvmeq {
	struct pci_dev *nvme;
	struct nvme_drv_extq q;
	bool made;
};

/*
 * Place SQ and CQ just below the image in the accelerator's memory, have the
 * NVMe driver create the pair there, and tell the kernel by nvme.* arguments
 * appended to its own (args: the block, grown in place; *alen its length).
 */
static int nvmeq_setup(struct smd *d, struct pci_dev *accel, const struct smio_accel_launch *m,
		       const struct accel_drv_info *in, char *args, uint32_t *alen,
		       uint64_t *code_off, struct launch_nvmeq *lq)
{
	uint64_t mem_for_nvme, bar0_for_accel;
	uint64_t sqb = ((uint64_t)m->qdepth * 64 + 4095) & ~4095ull;
	uint64_t cqb = ((uint64_t)m->qdepth * 16 + 4095) & ~4095ull;
	uint64_t code, qoff;
	struct nvme_drv_ns ns;
	char more[512];
	int n, rc;

	lq->nvme = pci_get_dev(d->pci, m->nvme_bdf);
	if (!lq->nvme || !nvme_drv_bound(lq->nvme))
		return -ENODEV;
	rc = nvme_drv_ns_info(lq->nvme, m->nsid, &ns);
	if (rc)
		return rc;
	/* Each device's own view of the other, resolved by the P2P rules (local,
	 * same lender, borrower-local, another lender: docs/lending.md). */
	rc = pci_p2pdma_bus(lq->nvme, accel, ACCEL_BAR_MEM, &mem_for_nvme);
	if (!rc)
		rc = pci_p2pdma_bus(accel, lq->nvme, 0, &bar0_for_accel);
	if (rc)
		return rc;
	/* The arguments' final length decides where the image goes: reserve the
	 * longest nvme.* text first, then place, then write the real one. */
	code = m->code_off != SMIO_ACCEL_CODE_TOP ? m->code_off :
	       accel_drv_kernel_top(in->mem_size, m->image_len, *alen + sizeof(more));
	if (code < sqb + cqb)
		return -ERANGE;
	qoff = (code - sqb - cqb) & ~4095ull;
	memset(in->mem + qoff, 0, sqb + cqb);    /* CQ entries start with phase 0 */
	rc = nvme_drv_ext_queue(lq->nvme, mem_for_nvme + qoff, mem_for_nvme + qoff + sqb,
				m->qdepth, &lq->q);
	if (rc)
		return rc;
	lq->made = true;
	n = snprintf(more, sizeof(more),
		     "nvme.sq_db=0x%llx%cnvme.cq_db=0x%llx%cnvme.qid=%u%cnvme.depth=%u%c"
		     "nvme.sq=0x%llx%cnvme.cq=0x%llx%cnvme.nsid=%u%cnvme.lba_shift=%u%c"
		     "nvme.nsze=%llu%cnvme.mem_bus=0x%llx",
		     (unsigned long long)(bar0_for_accel + lq->q.sq_db_off), 0,
		     (unsigned long long)(bar0_for_accel + lq->q.cq_db_off), 0, lq->q.qid, 0,
		     lq->q.depth, 0, (unsigned long long)qoff, 0, (unsigned long long)(qoff + sqb), 0,
		     m->nsid, 0, ns.lba_shift, 0, (unsigned long long)ns.nsze, 0,
		     (unsigned long long)mem_for_nvme);
	if (n < 0 || (size_t)n >= sizeof(more) || *alen + (uint32_t)n + 1 > ACCEL_KERN_ARGS_MAX)
		return -E2BIG;
	memcpy(args + *alen, more, (size_t)n + 1);
	*alen += (uint32_t)n + 1;
	*code_off = code;
	return 0;
}

/* SMIO_ACCEL_LAUNCH: a kernel from the request, run by the driver (the wait is bounded by
 * the request's timeout; the driver aborts a kernel that overruns it). */
int smd_h_accel_launch(struct smd *d, const void *payload, uint32_t len, void *out,
		       uint32_t *outlen)
{
	const struct smio_accel_launch *m = payload;
	struct smio_accel_result res = { 0 };
	struct accel_prog_res pr = { 0 };
	struct launch_nvmeq lq = { 0 };
	struct accel_drv_info in;
	char args[ACCEL_KERN_ARGS_MAX];
	struct pci_dev *pdev;
	uint64_t placed = 0, code_off;
	uint32_t alen;
	int rc;

	bool loaded = m->flags & SMIO_ACCEL_LAUNCH_F_LOADED;
	const uint8_t *image = loaded ? NULL : m->data;

	if (len < sizeof(*m) || m->args_len > sizeof(args) ||
	    len != sizeof(*m) + m->args_len + (loaded ? 0 : (uint64_t)m->image_len))
		return -EINVAL;
	pdev = bound_accel(d, m->bdf);
	if (!pdev)
		return -ENODEV;
	rc = accel_drv_get_info(pdev, &in);
	if (rc)
		return rc;
	alen = m->args_len;
	memcpy(args, m->data + (loaded ? 0 : m->image_len), alen);
	code_off = m->code_off == SMIO_ACCEL_CODE_TOP ? ACCEL_DRV_KERNEL_TOP : m->code_off;
	if (m->flags & SMIO_ACCEL_LAUNCH_F_NVMEQ) {
		rc = nvmeq_setup(d, pdev, m, &in, args, &alen, &code_off, &lq);
		if (rc)
			goto out;
	}
	rc = accel_drv_kernel(pdev, image, m->image_len, args, alen, code_off,
			      (int)m->timeout_ms, &pr, &placed);
	if (rc && rc != -ETIMEDOUT)
		goto out;
	res.status = pr.status;
	res.result = pr.result;
	res.bus = placed;
	res.elapsed_ns = pr.elapsed_ns;
	memcpy(out, &res, sizeof(res));
	*outlen = sizeof(res);
out:
	/* The pair goes back once the kernel has ended (or never ran). */
	if (lq.made && nvme_drv_ext_queue_delete(lq.nvme, lq.q.qid))
		smio_warn("%s: nvme: the queue pair of a kernel (qid %u) was not deleted; "
			  "the next controller reset removes it", lq.nvme->name, lq.q.qid);
	return rc;
}

/* SMIO_ACCEL_LOAD: bytes into device memory (a large kernel image, before its launch). */
int smd_h_accel_load(struct smd *d, const void *payload, uint32_t len)
{
	const struct smio_accel_load *m = payload;
	struct accel_drv_info in;
	struct pci_dev *pdev;
	int rc;

	if (len < sizeof(*m) || len != sizeof(*m) + (uint64_t)m->len)
		return -EINVAL;
	pdev = bound_accel(d, m->bdf);
	if (!pdev)
		return -ENODEV;
	rc = accel_drv_get_info(pdev, &in);
	if (rc)
		return rc;
	if (m->off > in.mem_size || m->len > in.mem_size - m->off)
		return -ERANGE;
	memcpy(in.mem + m->off, m->data, m->len);
	return 0;
}
