/* SPDX-License-Identifier: MIT */
/* Shared by the NVMe benchmark programs: which controller to use. */
#ifndef SMARTIO_BENCH_POOL_H
#define SMARTIO_BENCH_POOL_H

#include <stddef.h>
#include <stdint.h>

/*
 * The fabric device ID of the first NVMe controller (class 010802) in the
 * cluster's pool, asked through SISCI. 0, or -EIO / -ENODEV with err said.
 */
int bench_first_nvme(uint32_t *fdid, char *err, size_t errlen);

#endif
