// SPDX-License-Identifier: MIT
/*
 * Data movement described by PRPs (NVMe 1.4 section 4.3): the PRP walk with
 * its alignment checks, and DMA through the bus (or straight into the CMB).
 *
 * Only what a command describes is touched: a PRP list is read for exactly
 * the entries the transfer needs, never the rest of its page.
 */
#include <string.h>

#include "ctrl.h"

struct nvme_sg {
	uint64_t addr;
	uint32_t len;
};

/*
 * Bus-master DMA. Addresses inside our own CMB are served from BAR2 memory
 * (the device decodes its own BAR without a trip through the fabric).
 * Returns 0, or non-zero when the transfer failed.
 */
int nvme_dma(struct nvme_ctrl *c, uint64_t addr, void *buf, size_t len, bool to_host)
{
	uint64_t off;

	if (c->cmb_size && nvme_cmb_range(c, addr, len, &off)) {
		uint8_t *p = c->d->fn.bar[2] + off;

		if (to_host)
			memcpy(p, buf, len);
		else
			memcpy(buf, p, len);
		return 0;
	}
	return to_host ? dev_dma_write(c->d, addr, buf, len) : dev_dma_read(c->d, addr, buf, len);
}

/* Read n PRP list entries at list into out; entries must be qword-aligned addresses. */
static uint16_t read_list(struct nvme_ctrl *c, uint64_t list, uint64_t *out, unsigned n)
{
	if (list & 7)
		return SC_GEN(PRP_INVALID_OFFSET) | SC_DNR;
	if (nvme_dma(c, list, out, (size_t)n * NVME_PRP_ENTRY_SIZE, false))
		return SC_GEN(DATA_XFER_ERROR);
	return SC_OK;
}

/*
 * Map a transfer of len bytes (0 < len <= NVME_MAX_XFER) to segments.
 * PRP1 may start anywhere dword-aligned in a page; every later entry must be
 * page-aligned (Invalid PRP Offset otherwise). PRP2 is a data pointer when at
 * most one page remains, else a PRP list whose last entry chains to the next
 * list while more than that list's room remains.
 */
static uint16_t prp_map(struct nvme_ctrl *c, uint64_t prp1, uint64_t prp2, uint32_t len,
			struct nvme_sg *sg, unsigned *nsg)
{
	uint64_t page = c->page_size, entries[NVME_MAX_SG];
	uint64_t first = nvme_prp_first_len(prp1, len, page);
	uint64_t rest = len - first, need = nvme_prp_rest_entries(prp1, len, page), list = prp2;
	unsigned n = 0;
	uint16_t st;

	if (prp1 & 3)
		return SC_GEN(PRP_INVALID_OFFSET) | SC_DNR;
	sg[n++] = (struct nvme_sg){ prp1, (uint32_t)first };
	if (!rest)
		goto done;
	if (need == 1) {
		if (prp2 & (page - 1))
			return SC_GEN(PRP_INVALID_OFFSET) | SC_DNR;
		sg[n++] = (struct nvme_sg){ prp2, (uint32_t)rest };
		goto done;
	}
	/* need <= NVME_MAX_XFER / 4 KiB + 1 entries: bounded, and fits entries[] */
	while (need) {
		uint64_t room = nvme_prp_list_room(list, page);
		unsigned take = (unsigned)(need <= room ? need : room);

		if (room < 2 && need > room)
			return SC_GEN(PRP_INVALID_OFFSET) | SC_DNR;  /* list cannot chain */
		st = read_list(c, list, entries, take);
		if (st)
			return st;
		if (need > room) {
			/* last slot is the pointer to the next list, not data */
			take--;
			list = entries[take];
		}
		for (unsigned i = 0; i < take; i++) {
			uint32_t l = (uint32_t)(rest < page ? rest : page);

			if (entries[i] & (page - 1))
				return SC_GEN(PRP_INVALID_OFFSET) | SC_DNR;
			if (n && sg[n - 1].addr + sg[n - 1].len == entries[i])
				sg[n - 1].len += l;     /* merge physically contiguous pages */
			else
				sg[n++] = (struct nvme_sg){ entries[i], l };
			rest -= l;
		}
		need -= take;
	}
done:
	*nsg = n;
	return SC_OK;
}

/*
 * Move len bytes between buf and the host memory the command's PRPs
 * describe. Returns an NVMe status: Invalid PRP Offset, Data Transfer Error.
 */
uint16_t nvme_prp_xfer(struct nvme_ctrl *c, const struct nvme_sqe *sqe, void *buf, uint32_t len,
		       bool to_host)
{
	struct nvme_sg sg[NVME_MAX_SG];
	unsigned nsg = 0;
	uint8_t *p = buf;
	uint16_t st;

	if (!len)
		return SC_OK;
	if (len > NVME_MAX_XFER)
		return SC_GEN(INVALID_FIELD) | SC_DNR;
	st = prp_map(c, sqe->prp1, sqe->prp2, len, sg, &nsg);
	if (st)
		return st;
	for (unsigned i = 0; i < nsg; i++) {
		if (nvme_dma(c, sg[i].addr, p, sg[i].len, to_host))
			return SC_GEN(DATA_XFER_ERROR);
		p += sg[i].len;
	}
	return SC_OK;
}
