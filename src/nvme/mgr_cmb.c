// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme manager: the controller memory buffer. The manager reads
 * CMBLOC/CMBSZ, connects the BAR that holds the CMB and maps it for the
 * device (the CMB's bus address), and hands out page-granular regions of it
 * for clients' SQs (first fit over the regions of the live queues, so a
 * region is free again as soon as its queue is deleted or reclaimed).
 * Clients never name a CMB address: they get an offset from the manager.
 */
#include <errno.h>
#include <string.h>

#include "snv_mgr.h"

void snv_mgr_cmb_setup(struct snv_manager *m)
{
	uint32_t loc = snv_rd32(m->bar, NVME_REG_CMBLOC), sz = snv_rd32(m->bar, NVME_REG_CMBSZ);
	uint64_t unit, size, off;
	sci_error_t se;

	m->cmb_flags = 0;
	if (!sz)
		return;                               /* no CMB */
	if (!NVME_CMBSZ_SQS(sz) || NVME_CMBSZ_SZU(sz) > NVME_CMBSZ_SZU_64G ||
	    NVME_CMBLOC_BIR(loc) > 5) {
		snv_mlog(m, "CMB (CMBLOC %#x CMBSZ %#x) not used: no SQ support or bad fields",
			 loc, sz);
		return;
	}
	unit = 4096ull << (4 * NVME_CMBSZ_SZU(sz));
	size = (uint64_t)NVME_CMBSZ_SZ(sz) * unit;
	off = (uint64_t)NVME_CMBLOC_OFST(loc) * unit;
	if (!size)
		return;
	SCIConnectDeviceSegment(m->dev, &m->cmb_rs, NVME_CMBLOC_BIR(loc), SCI_MEMTYPE_BAR, NULL, NULL,
				0, &se);
	if (se) {
		m->cmb_rs = NULL;
		snv_mlog(m, "CMB in BAR%u not used: cannot connect the BAR (%s)", NVME_CMBLOC_BIR(loc),
			 SCIGetErrorString(se));
		return;
	}
	if (off > SCIGetRemoteSegmentSize(m->cmb_rs) ||
	    size > SCIGetRemoteSegmentSize(m->cmb_rs) - off) {
		snv_mlog(m, "CMB (offset %#llx, %llu bytes) runs past BAR%u: not used",
			 (unsigned long long)off, (unsigned long long)size, NVME_CMBLOC_BIR(loc));
		snv_mgr_cmb_release(m);
		return;
	}
	SCIMapRemoteSegmentForDevice(m->cmb_rs, m->dev, &m->cmb_io, off, size, 0, &se);
	if (se || (m->cmb_io & (SNV_PAGE - 1))) {
		if (!se)
			m->cmb_mapped = true;
		snv_mlog(m, "CMB in BAR%u not used: cannot map it for the device (%s)",
			 NVME_CMBLOC_BIR(loc), se ? SCIGetErrorString(se) : "unaligned");
		snv_mgr_cmb_release(m);
		return;
	}
	m->cmb_mapped = true;
	m->cmb_bar = NVME_CMBLOC_BIR(loc);
	m->cmb_off = off;
	m->cmb_size = size & ~(uint64_t)(SNV_PAGE - 1);
	m->cmb_flags = SNV_CMB_SQ;
	snv_mlog(m, "CMB: %llu KiB in BAR%u at offset %#llx, bus address %#llx (SQs)",
		 (unsigned long long)(m->cmb_size >> 10), m->cmb_bar,
		 (unsigned long long)m->cmb_off, (unsigned long long)m->cmb_io);
}

void snv_mgr_cmb_release(struct snv_manager *m)
{
	sci_error_t se;

	if (m->cmb_mapped)
		SCIUnmapRemoteSegmentForDevice(m->cmb_rs, m->dev, 0, &se);
	if (m->cmb_rs)
		SCIDisconnectSegment(m->cmb_rs, 0, &se);
	m->cmb_mapped = false;
	m->cmb_rs = NULL;
	m->cmb_flags = 0;
	m->cmb_size = 0;
}

int64_t snv_mgr_cmb_alloc(const struct snv_manager *m, uint64_t len)
{
	uint64_t cand = 0;
	bool moved = true;

	len = (len + SNV_PAGE - 1) & ~(uint64_t)(SNV_PAGE - 1);
	if (!m->cmb_flags || !len || len > m->cmb_size)
		return -ENOSPC;
	/* Move past every region that overlaps the candidate until none does. */
	while (moved) {
		moved = false;
		if (len > m->cmb_size - cand)
			return -ENOSPC;
		for (unsigned qid = 1; qid <= m->nqueues; qid++) {
			const struct snv_mqueue *q = &m->q[qid];

			if (q->cmb_len && q->cmb_off < cand + len && cand < q->cmb_off + q->cmb_len) {
				cand = q->cmb_off + q->cmb_len;
				moved = true;
				if (cand > m->cmb_size || len > m->cmb_size - cand)
					return -ENOSPC;
			}
		}
	}
	return (int64_t)cand;
}
