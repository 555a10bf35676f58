// SPDX-License-Identifier: MIT
/*
 * NVMe controller model: timing-faithful mode (docs/timing-model.md). A
 * command completes no earlier than real hardware would finish it: the
 * media time plus the PCIe paths of its doorbell, SQ-entry fetch, data and
 * completion entry, from the timing model on the routes this queue's memory
 * actually has (timing_nvme_io, the formula `smartio predict nvme-read`
 * uses). The routes are resolved once per queue and kept until any route
 * changes or the command's data goes elsewhere, so the model is not
 * consulted per command.
 */
#include <errno.h>
#include <string.h>

#include "ctrl.h"
#include "smartio/timing.h"

#define DATA_REGION_SHIFT 21    /* data in the same 2 MiB takes the same route */

/* Hops of an access, or 0 (leg left out) when not resolvable now: *ok = false. */
static unsigned path(struct nvme_ctrl *c, uint64_t addr, bool write, struct timing_hop *h,
		     bool *ok)
{
	const struct dev_func *f = &c->d->fn;
	int n = f->bus->path ? f->bus->path(f->bus_ctx, addr, write, h, TIMING_MAX_HOPS) : -ENOSYS;

	if (n < 0) {
		*ok = false;
		return 0;
	}
	return (unsigned)n;
}

/*
 * What a command on SQ sqid with data at prp1 (size bytes; 0: no data)
 * costs, by calibration p. *ok = false when some path could not be resolved
 * now (that leg counts 0).
 */
static int predict(struct nvme_ctrl *c, const struct timing_params *p, uint16_t sqid,
		   uint64_t prp1, uint64_t size, bool write, uint32_t media_ns,
		   struct timing_nvme *t, bool *ok)
{
	struct nvme_sq *sq = &c->sq[sqid];
	struct timing_hop db[TIMING_MAX_HOPS], sqh[TIMING_MAX_HOPS], data[TIMING_MAX_HOPS];
	struct timing_hop cq[TIMING_MAX_HOPS];
	struct timing_nvme_paths x = { .doorbell = db, .sq = sqh, .data = data, .cq = cq };
	int n;

	*ok = true;
	/* The entry of an SQ in the CMB is the controller's own memory: no bus. */
	if (!sq->cmb)
		x.nsq = path(c, sq->base, false, sqh, ok);
	x.ncq = path(c, c->cq[sq->cqid].base, true, cq, ok);
	/* The doorbell comes from the CPU that polls the CQ, the way back. */
	n = x.ncq ? timing_hops_cpu_to(cq, x.ncq, db, TIMING_MAX_HOPS) : -EINVAL;
	x.ndoorbell = n > 0 ? (unsigned)n : 0;
	if (size)
		x.ndata = path(c, prp1, !write, data, ok);
	return timing_nvme_io(p, &x, NULL, size ? size : 1, write, media_ns, t);
}

uint64_t nvme_faithful_ns(struct nvme_ctrl *c, const struct nvme_cmd *cmd)
{
	const struct dev_func *f = &c->d->fn;
	struct nvme_qtime *qt = &c->sq[cmd->sqid].qt;
	bool write = cmd->sqe.opcode == nvme_cmd_write, ok;
	bool rw = write || cmd->sqe.opcode == nvme_cmd_read;
	uint64_t epoch = f->bus->route_epoch ? f->bus->route_epoch(f->bus_ctx) : 0;
	uint64_t size = rw ? cmd->xfer : 0, key = cmd->sqe.prp1 >> DATA_REGION_SHIFT;
	struct timing_nvme t;

	if (qt->valid && qt->epoch == epoch && qt->write == write && qt->size == size &&
	    (!size || qt->data_key == key))
		return qt->ns;
	if (predict(c, f->timing, cmd->sqid, cmd->sqe.prp1, size, write,
		    (uint32_t)(!rw ? 0 : write ? c->media_write_ns : c->media_read_ns), &t, &ok))
		return 0;
	/* A leg that could not be resolved now counts 0 this time, and is
	 * tried again with the next command (not cached). */
	*qt = (struct nvme_qtime){ .valid = ok, .write = write, .epoch = epoch, .data_key = key,
				   .size = size, .ns = (uint64_t)(t.total_ns + 0.5) };
	return qt->ns;
}

size_t nvme_timing_log(struct nvme_ctrl *c, void *buf, size_t cap)
{
	struct smartio_timing_log_entry *e = buf;
	size_t n = (size_t)c->nqueues + 1;
	struct timing_params def;
	const struct timing_params *p = c->d->fn.timing;
	uint64_t media_r = c->media_read_ns, media_w = c->media_write_ns;

	if (!p) {
		/* Fast mode answers as fast as it can; the log still says what
		 * real hardware would take, by the built-in calibration. */
		timing_params_default(&def);
		p = &def;
		if (!media_r)
			media_r = c->latency_ns ? c->latency_ns : def.nvme_media_read_ns;
		if (!media_w)
			media_w = media_r;
	}
	if (n > cap / sizeof(*e))
		n = cap / sizeof(*e);
	memset(buf, 0, n * sizeof(*e));
	for (size_t q = 1; q < n; q++) {
		const struct nvme_sq *sq = &c->sq[q];
		struct timing_nvme t;
		bool ok;

		if (!sq->valid || !sq->last_valid ||
		    predict(c, p, (uint16_t)q, sq->last_prp1, sq->last_size, sq->last_write,
			    (uint32_t)(sq->last_write ? media_w : media_r), &t, &ok))
			continue;
		e[q] = (struct smartio_timing_log_entry){
			.flags = SMARTIO_TIMING_RAN | (ok ? SMARTIO_TIMING_COMPLETE : 0),
			.write = sq->last_write, .size = sq->last_size,
			.doorbell_ns = (uint32_t)(t.doorbell_ns + 0.5),
			.fetch_ns = (uint32_t)(t.fetch_ns + 0.5),
			.media_ns = (uint32_t)(t.media_ns + 0.5),
			.data_ns = (uint32_t)(t.data_ns + 0.5), .cqe_ns = (uint32_t)(t.cqe_ns + 0.5),
			.total_ns = (uint32_t)(t.total_ns + 0.5) };
	}
	return n * sizeof(*e);
}
