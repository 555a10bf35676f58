// SPDX-License-Identifier: MIT
/*
 * device_bar: borrow the first NVMe controller of the cluster's device pool,
 * map its BAR0 through the NTB and read CAP and VS, as a SmartIO program on
 * the borrower would. Run with SMARTIO_HOST (and SMARTIO_CLUSTER) set.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sisci_api.h"

int main(void)
{
	sci_smartio_device_info_t filter;
	sci_smartio_device_t dev;
	sci_remote_segment_t bar;
	sci_map_t map;
	volatile uint32_t *regs;
	unsigned int fdid;
	sci_error_t err, first = SCI_ERR_OK;   /* the error that stopped us */
	sci_desc_t sd;
	int rc = 1;

	SCIInitialize(0, &err);
	if (err) {
		fprintf(stderr, "SCIInitialize: %s\n", SCIGetErrorString(err));
		return 1;
	}
	SCIOpen(&sd, 0, &err);
	if (err)
		goto out_term;
	memset(&filter, 0, sizeof(filter));
	filter.pci_class = 0x010802;            /* NVMe */
	if (SCIGetDeviceList(sd, &fdid, 1, &filter, 0, &err) != 1) {
		fprintf(stderr, "no NVMe controller in the pool\n");
		goto out_close;
	}
	SCIBorrowDevice(sd, &dev, fdid, 0, &err);
	if (err)
		goto out_close;
	SCIConnectDeviceSegment(dev, &bar, 0, SCI_MEMTYPE_BAR, NULL, NULL, 0, &first);
	if (first)
		goto out_return;
	regs = SCIMapRemoteSegment(bar, &map, 0, 0x1000, NULL, SCI_FLAG_IO_MAP_IOSPACE, &first);
	if (first)
		goto out_disconnect;
	printf("fdid %#x: CAP %#010x%08x VS %#010x\n", fdid, regs[1], regs[0], regs[2]);
	rc = 0;
	SCIUnmapSegment(map, 0, &err);
out_disconnect:
	SCIDisconnectSegment(bar, 0, &err);
out_return:
	SCIReturnDevice(dev, 0, &err);
out_close:
	if (rc && (first || err))
		fprintf(stderr, "error: %s\n", SCIGetErrorString(first ? first : err));
	SCIClose(sd, 0, &err);
out_term:
	SCITerminate();
	return rc;
}
