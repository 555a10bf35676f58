// SPDX-License-Identifier: MIT
/*
 * NVM command set I/O commands (NVMe 1.4 section 6): Read, Write, Flush,
 * Write Zeroes, Dataset Management. Data moves between host memory (PRPs)
 * and the namespace's backing store through the bounce buffer, which bounds
 * every transfer to MDTS; reads of a mapped namespace skip it.
 */
#include "ctrl.h"

static uint16_t get_ns(struct nvme_ctrl *c, struct nvme_cmd *cmd, struct nvme_ns **ns)
{
	*ns = nvme_ns_get(c, cmd->sqe.nsid);
	return *ns ? SC_OK : SC_GEN(INVALID_NS) | SC_DNR;
}

static uint16_t lba_check(const struct nvme_ns *ns, uint64_t slba, uint64_t nlb)
{
	if (slba >= ns->nsze || nlb > ns->nsze - slba)
		return SC_GEN(LBA_RANGE) | SC_DNR;
	return SC_OK;
}

static uint16_t read_write(struct nvme_ctrl *c, struct nvme_cmd *cmd, bool write)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint64_t slba = nvme_rw_slba(s), len;
	uint32_t nlb = nvme_rw_nlb(s);
	struct nvme_ns *ns;
	uint16_t st;

	cmd->err_lba = slba;
	if ((st = get_ns(c, cmd, &ns)))
		return st;
	if ((st = lba_check(ns, slba, nlb)))
		return st;
	len = (uint64_t)nlb << ns->lba_shift;
	if (len > NVME_MAX_XFER)
		return SC_GEN(INVALID_FIELD) | SC_DNR;          /* beyond MDTS */
	if (write) {
		st = nvme_prp_xfer(c, s, c->buf, (uint32_t)len, false);
		if (st)
			return st;
		if (nvme_ns_write(ns, c->buf, len, slba << ns->lba_shift))
			return SC_MEDIA(WRITE_FAULT);
		c->bytes_written += len;
		c->host_writes++;
	} else {
		/* Straight from the namespace's memory when it can be (one copy). */
		const void *src = nvme_ns_peek(ns, slba << ns->lba_shift, len);

		if (!src) {
			if (nvme_ns_read(ns, c->buf, len, slba << ns->lba_shift))
				return SC_MEDIA(READ_ERROR);
			src = c->buf;
		}
		st = nvme_prp_xfer(c, s, (void *)src, (uint32_t)len, true);
		if (st)
			return st;
		c->bytes_read += len;
		c->host_reads++;
	}
	cmd->xfer = len;
	return SC_OK;
}

static uint16_t io_read(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	return read_write(c, cmd, false);
}

static uint16_t io_write(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	return read_write(c, cmd, true);
}

/* Flush; NSID FFFFFFFFh flushes every namespace (Identify VWC bits 2:1 = 11b). */
static uint16_t io_flush(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	struct nvme_ns *ns;
	uint16_t st;

	if (cmd->sqe.nsid == 0xffffffffu) {
		for (uint32_t i = 0; i < c->nns; i++)
			if (nvme_ns_flush(&c->ns[i]))
				return SC_MEDIA(WRITE_FAULT);
		return SC_OK;
	}
	if ((st = get_ns(c, cmd, &ns)))
		return st;
	return nvme_ns_flush(ns) ? SC_MEDIA(WRITE_FAULT) : SC_OK;
}

/* Write Zeroes: punching a hole zeroes and deallocates (DLFEAT reads zeroes). */
static uint16_t io_write_zeroes(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint64_t slba = nvme_rw_slba(s);
	uint32_t nlb = nvme_rw_nlb(s);
	struct nvme_ns *ns;
	uint16_t st;

	cmd->err_lba = slba;
	if ((st = get_ns(c, cmd, &ns)))
		return st;
	if ((st = lba_check(ns, slba, nlb)))
		return st;
	if (nvme_ns_zero(ns, slba << ns->lba_shift, (uint64_t)nlb << ns->lba_shift))
		return SC_MEDIA(WRITE_FAULT);
	return SC_OK;
}

#define DSM_AD          (1u << 2)       /* CDW11: attribute deallocate */
#define DSM_MAX_RANGES  256

/* Dataset Management: deallocate punches holes; the hints (IDR/IDW) are ignored. */
static uint16_t io_dsm(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	const struct nvme_sqe *s = &cmd->sqe;
	uint32_t nr = (s->cdw10 & 0xff) + 1;
	struct nvme_dsm_range *r = (struct nvme_dsm_range *)c->buf;
	struct nvme_ns *ns;
	uint16_t st;

	_Static_assert(DSM_MAX_RANGES * sizeof(struct nvme_dsm_range) <= NVME_MAX_XFER,
		       "DSM ranges fit the bounce buffer");
	if ((st = get_ns(c, cmd, &ns)))
		return st;
	st = nvme_prp_xfer(c, s, r, nr * (uint32_t)sizeof(*r), false);
	if (st)
		return st;
	/* all ranges are checked before any is acted on */
	for (uint32_t i = 0; i < nr; i++) {
		cmd->err_lba = r[i].slba;
		if ((st = lba_check(ns, r[i].slba, r[i].nlb)))
			return st;
	}
	if (!(s->cdw11 & DSM_AD))
		return SC_OK;
	for (uint32_t i = 0; i < nr; i++)
		if (nvme_ns_zero(ns, r[i].slba << ns->lba_shift, (uint64_t)r[i].nlb << ns->lba_shift))
			return SC_MEDIA(WRITE_FAULT);
	return SC_OK;
}

static const nvme_cmd_fn io_ops[256] = {
	[nvme_cmd_flush]         = io_flush,
	[nvme_cmd_write]         = io_write,
	[nvme_cmd_read]          = io_read,
	[nvme_cmd_write_zeroes]  = io_write_zeroes,
	[nvme_cmd_dsm]           = io_dsm,
};

uint16_t nvme_io_exec(struct nvme_ctrl *c, struct nvme_cmd *cmd)
{
	nvme_cmd_fn fn = io_ops[cmd->sqe.opcode];

	return fn ? fn(c, cmd) : SC_GEN(INVALID_OPCODE) | SC_DNR;
}
