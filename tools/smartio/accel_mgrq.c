// SPDX-License-Identifier: MIT
/*
 * smartio accel launch --nvme-manager DEV: the kernel's queue pair from the
 * distributed NVMe driver's manager (docs/nvme-driver.md, "Queues a device
 * drives"). `smartio-nvme devq`, run as a program of the accelerator's host,
 * creates the pair in the accelerator's memory and holds it; its one line of
 * nvme.* arguments is appended to the kernel's; SIGTERM deletes the pair once
 * the kernel has ended. Layout in device memory: data [0, top - 4 MiB), SQ at
 * top - 4 MiB, CQ 256 KiB above it; the image stays above (at the top).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accel_mgrq.h"
#include "cli.h"

#define MGRQ_RESERVE ((uint64_t)4 << 20)   /* queues + image at the top of device memory */
#define MGRQ_CQ_OFF  ((uint64_t)256 << 10) /* after the largest SQ (4096 x 64 bytes) */
#define MGRQ_LINE    1024

int accel_mgrq_start(const struct accel_mgrq_req *r, struct accel_mgrq *q)
{
	char host[16], bar2[24], sq[24], cq[24], len[24], depth[16], nsid[16], req[16];
	int pfd[2];
	FILE *f;
	size_t n;

	memset(q, 0, sizeof(*q));
	q->pid = -1;
	if (r->mem_size <= MGRQ_RESERVE * 2)
		return -ERANGE;
	snprintf(host, sizeof(host), "%u", r->host);
	snprintf(bar2, sizeof(bar2), "%#" PRIx64, r->bar2);
	snprintf(sq, sizeof(sq), "%#" PRIx64, r->mem_size - MGRQ_RESERVE);
	snprintf(cq, sizeof(cq), "%#" PRIx64, r->mem_size - MGRQ_RESERVE + MGRQ_CQ_OFF);
	snprintf(len, sizeof(len), "%#" PRIx64, r->mem_size - MGRQ_RESERVE);
	snprintf(depth, sizeof(depth), "%u", r->depth);
	snprintf(nsid, sizeof(nsid), "%u", r->nsid);
	snprintf(req, sizeof(req), "%02x:%02x.%x", r->bdf >> 8, (r->bdf >> 3) & 0x1f, r->bdf & 7);
	if (pipe(pfd))
		return -errno;
	q->pid = fork();
	if (q->pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (!q->pid) {
		const char *argv[] = { "smartio", "exec", "--host", host, "--dir", r->dir, "--",
			"smartio-nvme", "devq", "-d", r->nvme, "--bar2", bar2, "--sq", sq, "--cq", cq,
			"--data", "0", "--data-len", len, "--depth", depth, "--nsid", nsid,
			"--requester", req, NULL };

		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		close(pfd[1]);
		execv("/proc/self/exe", (char **)argv);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (!f) {
		close(pfd[0]);
		accel_mgrq_stop(q);
		return -ENOMEM;
	}
	/* One line of arguments, or EOF when devq failed (it said why on stderr). */
	q->line = malloc(MGRQ_LINE);
	if (!q->line || !fgets(q->line, MGRQ_LINE, f) || !strchr(q->line, '\n')) {
		fclose(f);
		accel_mgrq_stop(q);
		return -EIO;
	}
	fclose(f);
	for (char *s = strtok(q->line, " \n"); s && q->nargs < ACCEL_MGRQ_MAXARGS;
	     s = strtok(NULL, " \n"))
		q->args[q->nargs++] = s;
	n = q->nargs;
	return n ? 0 : -EIO;
}

int accel_mgrq_stop(struct accel_mgrq *q)
{
	int st = 0, rc = 0;

	if (q->pid > 0) {
		kill(q->pid, SIGTERM);       /* smartio exec passes it on to devq */
		while (waitpid(q->pid, &st, 0) < 0 && errno == EINTR)
			;
		rc = WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
	}
	q->pid = -1;
	free(q->line);
	q->line = NULL;
	q->nargs = 0;
	return rc;
}
