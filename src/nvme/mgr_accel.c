// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme manager: accelerators that hold clients' SQs (SNV_QP_SQ_ACCEL,
 * TOCS'21 fig. 34 "SQ in the lender's GPU"). A client's SQ is a SHARED device
 * segment of the accelerator, which only a borrower of that accelerator can
 * connect; the manager borrows it shared for as long as some queue's SQ is in
 * it, and returns it with the last such queue so that it does not keep the
 * accelerator from being borrowed exclusively (Device Lending) afterwards.
 */
#include <errno.h>

#include "snv_mgr.h"

int snv_mgr_accel_get(struct snv_manager *m, uint32_t fdid, unsigned *slot)
{
	struct snv_maccel *a = NULL;
	sci_error_t se;

	for (unsigned i = 0; i < SNV_MGR_ACCELS; i++) {
		if (m->accel[i].users && m->accel[i].fdid == fdid) {
			m->accel[i].users++;
			*slot = i + 1;
			return 0;
		}
		if (!m->accel[i].users && !a)
			a = &m->accel[i];
	}
	if (!a)
		return -ENOSPC;
	SCIBorrowDevice(m->sd, &a->dev, fdid, 0, &se);
	if (se)
		return snv_errno(se);
	a->fdid = fdid;
	a->users = 1;
	*slot = (unsigned)(a - m->accel) + 1;
	snv_mlog(m, "borrowed accelerator %#x (shared): SQs in its memory", fdid);
	return 0;
}

sci_smartio_device_t snv_mgr_accel_dev(const struct snv_manager *m, unsigned slot)
{
	return m->accel[slot - 1].dev;
}

void snv_mgr_accel_put(struct snv_manager *m, unsigned slot)
{
	struct snv_maccel *a;
	sci_error_t se;

	if (!slot || slot > SNV_MGR_ACCELS || !m->accel[slot - 1].users)
		return;
	a = &m->accel[slot - 1];
	if (--a->users)
		return;
	SCIReturnDevice(a->dev, 0, &se);
	snv_mlog(m, "returned accelerator %#x: no SQ in it any more", a->fdid);
	*a = (struct snv_maccel){ 0 };
}

void snv_mgr_accel_release(struct snv_manager *m)
{
	sci_error_t se;

	for (unsigned i = 0; i < SNV_MGR_ACCELS; i++)
		if (m->accel[i].users)
			SCIReturnDevice(m->accel[i].dev, 0, &se);
}
