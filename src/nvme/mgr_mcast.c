// SPDX-License-Identifier: MIT
/*
 * Manager: an Identify whose data the controller writes to a multicast group
 * (issue 15's multicast Identify; docs/nvme-driver.md, "Multicast Identify").
 * The manager opens a window onto the group (a SISCI broadcast connection),
 * maps it for the device, and puts that device address into PRP1: the
 * controller's one 4 KiB DMA is replicated by the cluster switches into the
 * memory of every host subscribed to the group. The client gets only the
 * completion; the data is in the subscribers' segments.
 */
#include <errno.h>

#include "snv_mgr.h"
#include "snv_priv.h"

int snv_mgr_admin_mcast(struct snv_manager *m, struct nvme_sqe *cmd, uint32_t group,
			uint32_t len, uint32_t *dw0)
{
	sci_remote_segment_t rs;
	sci_ioaddr_t io = 0;
	sci_error_t se, ignored;
	int rc;

	/* One page of data, one PRP: what an Identify returns. */
	if (cmd->opcode != nvme_admin_identify || len != SNV_PAGE)
		return -EINVAL;
	SCIConnectSegment(m->sd, &rs, DIS_BROADCAST_NODEID_GROUP_ALL, group, m->o.adapter, NULL,
			  NULL, 0, SCI_FLAG_BROADCAST, &se);
	if (se)
		return snv_errno(se);
	SCIMapRemoteSegmentForDevice(rs, m->dev, &io, 0, len, 0, &se);
	if (se) {
		SCIDisconnectSegment(rs, 0, &ignored);
		return snv_errno(se);
	}
	cmd->prp1 = io;
	cmd->prp2 = 0;
	rc = snv_mgr_admin(m, cmd, dw0);
	/* The completion came after the data: the window may close. */
	SCIUnmapRemoteSegmentForDevice(rs, m->dev, 0, &ignored);
	SCIDisconnectSegment(rs, 0, &ignored);
	return rc;
}
