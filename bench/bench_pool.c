// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>

#include "bench_pool.h"
#include "sisci_api.h"

int bench_first_nvme(uint32_t *fdid, char *err, size_t errlen)
{
	sci_smartio_device_info_t f = { .pci_class = 0x010802 };
	unsigned int ids[8];
	sci_error_t se;
	sci_desc_t sd;
	int n;

	SCIInitialize(0, &se);
	if (!se)
		SCIOpen(&sd, 0, &se);
	if (se) {
		snprintf(err, errlen, "SISCI: %s", SCIGetErrorString(se));
		return -EIO;
	}
	n = (int)SCIGetDeviceList(sd, ids, 8, &f, 0, &se);
	SCIClose(sd, 0, &se);
	if (n < 1) {
		snprintf(err, errlen, "no NVMe controller in the pool");
		return -ENODEV;
	}
	*fdid = ids[0];
	return 0;
}
