// SPDX-License-Identifier: MIT
/*
 * SMIO_NVME_ADMIN and SMIO_NVME_IO requests to a host's NVMe driver, encoded
 * in one place for `smartio nvme` (nvme.c) and `smartio mount` (mount_io.c).
 */
#include <string.h>

#include "cli.h"

uint32_t nvme_msg_admin(void *req, uint16_t bdf, uint8_t opcode, uint32_t nsid, uint32_t cdw10,
			uint32_t data_len)
{
	struct smio_nvme_admin *q = req;

	memset(q, 0, sizeof(*q));
	q->bdf = bdf;
	q->dir = data_len ? SMIO_DIR_FROM_DEV : SMIO_DIR_NONE;
	q->data_len = data_len;
	q->sqe[0] = opcode;                   /* CDW0: opcode */
	memcpy(q->sqe + 4, &nsid, 4);         /* CDW1: NSID */
	memcpy(q->sqe + 40, &cdw10, 4);       /* CDW10 */
	return (uint32_t)sizeof(*q);
}

uint32_t nvme_msg_io(void *req, uint16_t bdf, uint8_t op, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, const void *wdata, uint32_t wlen)
{
	struct smio_nvme_io *q = req;

	memset(q, 0, sizeof(*q));
	q->bdf = bdf;
	q->op = op;
	q->nsid = nsid;
	q->slba = slba;
	q->nlb = nlb;
	q->data_len = wlen;
	if (wlen)
		memmove(q->data, wdata, wlen);
	return (uint32_t)sizeof(*q) + wlen;
}
