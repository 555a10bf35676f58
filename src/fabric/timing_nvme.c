// SPDX-License-Identifier: MIT
/*
 * One NVMe I/O command on real hardware, composed from the paths it takes
 * (docs/timing-model.md, "NVMe commands"): the one formula behind `smartio
 * predict nvme-read`, `smartio-nvme bench`'s prediction and the NVMe model's
 * timing-faithful mode.
 */
#include <errno.h>
#include <string.h>

#include "smartio/timing.h"

#define DOORBELL_BYTES 4

static int leg(const struct timing_params *p, const struct timing_query *tmpl,
	       const struct timing_hop *h, unsigned n, uint64_t size, bool write,
	       uint8_t completer, struct timing_result *r)
{
	struct timing_query q = { 0 };

	if (tmpl)
		q = *tmpl;
	q.size = size;
	q.write = write;
	if (completer != TIMING_CPL_AUTO || !tmpl)
		q.completer = completer;

	memset(r, 0, sizeof(*r));
	if (!n)
		return 0;               /* a path not on the bus (the model's own CMB): free */
	return timing_path(p, h, n, &q, r);
}

int timing_nvme_io(const struct timing_params *p, const struct timing_nvme_paths *x,
		   const struct timing_query *tmpl, uint64_t size, bool write, uint32_t media_ns,
		   struct timing_nvme *out)
{
	struct timing_result db, fetch, data, cqe;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!size)
		return -EINVAL;
	rc = leg(p, tmpl, x->doorbell, x->ndoorbell, DOORBELL_BYTES, true, TIMING_CPL_REGS, &db);
	if (!rc)
		rc = leg(p, tmpl, x->sq, x->nsq, p->nvme_sqe_bytes, false, TIMING_CPL_AUTO, &fetch);
	/* A read's data is the controller's posted write; a write's, its read. */
	if (!rc)
		rc = leg(p, tmpl, x->data, x->ndata, size, !write, TIMING_CPL_AUTO, &data);
	if (!rc)
		rc = leg(p, tmpl, x->cq, x->ncq, p->nvme_cqe_bytes, true, TIMING_CPL_AUTO, &cqe);
	if (rc)
		return rc;
	out->doorbell_ns = db.latency_ns;
	out->fetch_ns = fetch.latency_ns;
	out->media_ns = media_ns;
	out->data_ns = data.latency_ns;
	if (!write && x->ndata && x->ncq && cqe.link_bw_gbs > 0) {
		/* The CQE follows the data's last TLP: it adds only its own
		 * serialisation and whatever its path is longer than the data's. */
		out->cqe_ns = (double)p->nvme_cqe_bytes / cqe.link_bw_gbs +
			      (cqe.first_ns - data.first_ns > 0 ? cqe.first_ns - data.first_ns : 0);
	} else {
		out->cqe_ns = cqe.latency_ns;   /* a write's CQE waits for the media */
	}
	out->total_ns = out->doorbell_ns + out->fetch_ns + out->media_ns + out->data_ns +
			out->cqe_ns;
	out->pcie_ns = out->total_ns - out->media_ns;
	return 0;
}

int timing_hops_cpu_to(const struct timing_hop *dev_to_mem, unsigned n, struct timing_hop *out,
		       unsigned cap)
{
	unsigned k = 0;

	/* device ... root [iommu] memory  ->  CPU root ... device */
	if (n < 3 || dev_to_mem[n - 1].kind != TIMING_HOP_MEMORY)
		return -EINVAL;
	if (cap < n)
		return -ENOSPC;
	out[k] = timing_hop_make(TIMING_HOP_DEVICE, dev_to_mem[n - 1].host, "CPU");
	k++;
	for (unsigned i = n - 1; i-- > 0;) {
		if (dev_to_mem[i].kind == TIMING_HOP_IOMMU)
			continue;       /* the CPU's own stores are not translated */
		out[k++] = dev_to_mem[i];
	}
	return (int)k;
}
