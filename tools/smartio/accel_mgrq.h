/* SPDX-License-Identifier: MIT */
/* smartio accel launch --nvme-manager: a queue pair from the NVMe's manager. */
#ifndef ACCEL_MGRQ_H
#define ACCEL_MGRQ_H

#include <stdint.h>
#include <sys/types.h>

#define ACCEL_MGRQ_MAXARGS 16

struct accel_mgrq_req {
	uint32_t host;
	const char *dir;          /* the cluster directory */
	const char *nvme;         /* as smartio-nvme -d takes it (NODE:NAME, FDID, NAME) */
	uint16_t bdf;             /* the accelerator on host */
	uint64_t bar2, mem_size;  /* its BAR2 bus address and memory size */
	unsigned depth, nsid;
};

struct accel_mgrq {
	pid_t pid;                /* smartio exec ... smartio-nvme devq */
	char *line;
	char *args[ACCEL_MGRQ_MAXARGS];   /* nvme.*=... in line */
	unsigned nargs;
};

/* Start devq and read its arguments: 0, or -errno (devq's stderr says why). */
int accel_mgrq_start(const struct accel_mgrq_req *r, struct accel_mgrq *q);
/* Delete the pair (SIGTERM) and reap devq: 0, or -EIO if it did not exit 0. */
int accel_mgrq_stop(struct accel_mgrq *q);

#endif
