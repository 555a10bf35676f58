/* SPDX-License-Identifier: MIT */
/*
 * smartio accel's parts (accel.c: the command, list, bench and the one-shot
 * ops; accel_launch.c: launch, a kernel on the device): its options, the
 * connection to the host's daemon and the calls both use.
 */
#ifndef SMARTIO_TOOLS_ACCEL_PRIV_H
#define SMARTIO_TOOLS_ACCEL_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/*
 * The daemon's waits are bounded by the driver (accel_drv_timeout_ms and
 * accel_drv_pingpong_timeout_ms); ours are those plus a margin, so an
 * answer is never cut off while the driver still waits.
 */
#define MARGIN_MS        5000
struct opts {
	const char *host_opt, *dir_opt, *dev, *peer, *src, *dst;
	uint64_t len, pattern, iters, repeat, timeout_ms, code_off, nsid, qdepth;
	const char *nvme;               /* launch --nvme: lend the kernel a queue pair */
	const char *nvme_mgr;           /* launch --nvme-manager: a pair from the manager */
	bool have_len, have_pattern, have_iters, json;
	uint16_t nvme_bdf;
	int kargc;                      /* launch: KERNEL.so and its arguments */
	char **kargv;
};

struct conn {
	char dir[PATH_MAX];
	uint32_t host;
	int fd;
};

void accel_bdf_str(char *buf, size_t len, uint16_t bdf);
/* The device's status code (low byte of a result's status) in words. */
const char *accel_code_str(uint32_t st);
int accel_call(struct conn *c, const struct smio_accel_op *q, int timeout_ms,
	       struct smio_accel_result *r);

/* accel_launch.c: launch KERNEL.so on bdf (--nvme: with a queue pair of the
 * host's driver), or with a pair from the NVMe's manager (--nvme-manager). */
int accel_do_launch(struct conn *c, uint16_t bdf, const struct opts *o);
int accel_launch_mgrq(struct conn *c, uint16_t bdf, const struct opts *o);

#endif
