/* SPDX-License-Identifier: MIT */
/*
 * Harness of tests/test_nvme_dist.c: a cluster started with the smartio CLI,
 * the manager in the test process, clients as forked programs of other
 * hosts that report over pipes, and verified I/O.
 */
#ifndef NVME_DIST_HARNESS_H
#define NVME_DIST_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sisci_api.h"
#include "smartio/nvme.h"
#include "util/smio_time.h"

extern char **environ;

static char h_dir[PATH_MAX], h_cli[PATH_MAX];
/* Every child ever spawned: a failed test leaves none behind (h_cluster_down). */
static pid_t h_pids[256];
static unsigned h_npids;

static int h_run_cli(const char *a1, const char *a2)
{
	char *argv[] = { h_cli, (char *)"cluster", (char *)a1, (char *)a2, NULL };
	pid_t pid;
	int st;

	if (posix_spawn(&pid, h_cli, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Start a cluster of `topology` (NULL: the default one); this process is a program of `host`. */
static int h_cluster_up(const char *topology, const char *host)
{
	const char *b = getenv("SMARTIO_BUILD_DIR"), *s = getenv("SMARTIO_SOURCE_DIR");
	char tmpl[] = "/tmp/smartio-nvd-XXXXXX", topo[PATH_MAX];
	sci_error_t err;

	snprintf(h_cli, sizeof(h_cli), "%s/tools/smartio/smartio", b ? b : "./build");
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(h_dir, sizeof(h_dir), "%s/c", tmpl);
	setenv("SMARTIO_CLUSTER", h_dir, 1);
	setenv("SMARTIO_HOST", host, 1);
	if (topology)
		snprintf(topo, sizeof(topo), "%s/%s", s ? s : ".", topology);
	if (h_run_cli("up", topology ? topo : NULL))
		return -1;
	SCITerminate();
	SCIInitialize(0, &err);
	return err == SCI_ERR_OK ? 0 : -1;
}

/* Kill every child still running (after a failed test). */
static void h_kill_all(void)
{
	for (unsigned i = 0; i < h_npids; i++)
		if (kill(h_pids[i], SIGKILL) == 0)
			waitpid(h_pids[i], NULL, 0);
	h_npids = 0;
}

static int h_cluster_down(void)
{
	char parent[PATH_MAX];
	int rc;

	h_kill_all();
	SCITerminate();
	rc = h_run_cli("down", NULL);
	snprintf(parent, sizeof(parent), "%s", h_dir);
	*strrchr(parent, '/') = '\0';
	rmdir(parent);
	return rc == 0 ? 0 : -1;
}

/* `smartio iommu --host H faults`: the total count, -1 on failure. */
static __attribute__((unused)) long long h_iommu_faults(int host)
{
	char cmd[PATH_MAX + 64], line[256];
	long long total = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' iommu --host %d faults", h_cli, host);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lld faults in total", &total) == 1)
			break;
	while (fgets(line, sizeof(line), f))
		;
	if (pclose(f))
		return -1;
	return total;
}

/* The NVMe controller of node `node` (its fabric device ID), 0 if none. */
static unsigned h_find_nvme(unsigned node)
{
	sci_smartio_device_info_t f;
	unsigned int ids[8], n;
	sci_error_t err;
	sci_desc_t sd;

	SCIOpen(&sd, 0, &err);
	if (err)
		return 0;
	memset(&f, 0, sizeof(f));
	f.pci_class = 0x010802;
	f.nodeid = node;
	n = SCIGetDeviceList(sd, ids, 8, &f, 0, &err);
	SCIClose(sd, 0, &err);
	return n == 1 ? ids[0] : 0;
}

/* ---- Children: forked programs of other hosts ---- */

enum { REP_QID = 1, REP_INFO, REP_RUNNING, REP_DONE, REP_FAIL, REP_COUNT };

struct rep {
	int32_t kind;
	int32_t v[3];
};

#define MAX_REPS 16

struct kid {
	pid_t pid;
	int rd, wr;               /* reports from the child, commands to it */
	int status;               /* wait status once exited */
	bool exited;
	struct rep reps[MAX_REPS];
	unsigned nreps;
};

struct kidio {
	int wr, rd;               /* the child's ends */
};

static void kid_report(struct kidio *io, int kind, int a, int b, int c)
{
	struct rep r = { kind, { a, b, c } };

	if (write(io->wr, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(99);
}

/* Wait up to ms for a command byte from the parent: the byte, or -1. */
static int kid_command(struct kidio *io, int ms)
{
	struct pollfd p = { .fd = io->rd, .events = POLLIN };
	char b;

	if (poll(&p, 1, ms) != 1 || read(io->rd, &b, 1) != 1)
		return -1;
	return (unsigned char)b;
}

typedef int (*kid_fn)(struct kidio *io, void *arg);

static void kid_spawn(struct kid *k, int host, kid_fn fn, void *arg)
{
	int up[2], down[2];
	char hs[16];

	memset(k, 0, sizeof(*k));
	if (pipe(up) || pipe(down))
		abort();
	fflush(NULL);
	k->pid = fork();
	if (k->pid < 0)
		abort();
	if (!k->pid) {
		struct kidio io = { .wr = up[1], .rd = down[0] };
		sci_error_t err;

		close(up[0]);
		close(down[1]);
		snprintf(hs, sizeof(hs), "%d", host);
		setenv("SMARTIO_HOST", hs, 1);
		SCITerminate();
		SCIInitialize(0, &err);
		if (err)
			_exit(98);
		_exit(fn(&io, arg));
	}
	if (h_npids < sizeof(h_pids) / sizeof(h_pids[0]))
		h_pids[h_npids++] = k->pid;
	close(up[1]);
	close(down[0]);
	k->rd = up[0];
	k->wr = down[1];
	fcntl(k->rd, F_SETFL, O_NONBLOCK);
}

static void kid_send(struct kid *k, char cmd)
{
	if (!k->exited && write(k->wr, &cmd, 1) != 1)
		fprintf(stderr, "kid %d: command lost\n", (int)k->pid);
}

/* Collect reports and exits of the children (non-blocking). */
static void kids_collect(struct kid *k, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct rep r;

		while (k[i].nreps < MAX_REPS && read(k[i].rd, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
			if (r.kind == REP_FAIL)
				fprintf(stderr, "child %u (pid %d) failed at line %d: %d\n", i,
					(int)k[i].pid, r.v[0], r.v[1]);
			k[i].reps[k[i].nreps++] = r;
		}
		if (!k[i].exited && waitpid(k[i].pid, &k[i].status, WNOHANG) == k[i].pid)
			k[i].exited = true;
	}
}

static const struct rep *kid_rep(const struct kid *k, int kind, unsigned nth)
{
	for (unsigned i = 0; i < k->nreps; i++)
		if (k->reps[i].kind == kind && !nth--)
			return &k->reps[i];
	return NULL;
}

static bool kid_ok(const struct kid *k)
{
	return k->exited && WIFEXITED(k->status) && WEXITSTATUS(k->status) == 0;
}

static void kids_kill(struct kid *k, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (k[i].pid > 0 && !k[i].exited) {
			kill(k[i].pid, SIGKILL);
			waitpid(k[i].pid, &k[i].status, 0);
			k[i].exited = true;
		}
	for (unsigned i = 0; i < n; i++) {
		if (k[i].rd > 0)
			close(k[i].rd);
		if (k[i].wr > 0)
			close(k[i].wr);
		k[i].rd = k[i].wr = -1;
	}
}

/* Serve up to two managers and collect the children until cond() or ms pass. */
static bool serve_until(struct snv_manager *m1, struct snv_manager *m2, struct kid *k, unsigned n,
			bool (*cond)(struct kid *, unsigned, void *), void *arg, unsigned ms)
{
	uint64_t end = smio_now_ms() + ms;

	for (;;) {
		kids_collect(k, n);
		if (cond(k, n, arg))
			return true;
		if (smio_now_ms() >= end)
			return false;
		if (m1 && snv_manager_run(m1, m2 ? 2 : 5))
			return false;
		if (m2 && snv_manager_run(m2, 2))
			return false;
	}
}

static bool all_exited(struct kid *k, unsigned n, void *arg)
{
	for (unsigned i = 0; i < n; i++)
		if (!k[i].exited)
			return false;
	return true;
}

/* Each child has reported `kind` at least *(unsigned *)arg times in total over all. */
struct want {
	int kind;
	unsigned count;
};

static __attribute__((unused)) bool have_reports(struct kid *k, unsigned n, void *arg)
{
	const struct want *w = arg;
	unsigned got = 0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < k[i].nreps; j++)
			got += k[i].reps[j].kind == w->kind;
	return got >= w->count;
}

/* ---- Verified I/O ---- */

static uint64_t h_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void h_fill(void *p, size_t len, uint64_t seed, uint64_t lba)
{
	uint64_t *w = p;

	for (size_t i = 0; i < len / 8; i++)
		w[i] = h_mix(seed ^ (lba + i / 64) << 20 ^ i);
}

/* Wait for one completion, bounded (5 s); -ETIMEDOUT if none. Spins, then
 * yields: the daemons emulating the fabric share the CPUs with the clients. */
static int h_reap(struct snv_qpair *q, struct snv_cpl *cpl)
{
	uint64_t end = smio_now_ms() + 5000;

	for (unsigned spins = 0;; spins++) {
		if (snv_poll(q, cpl, 1) == 1)
			return 0;
		if (spins < 256)
			continue;
		sched_yield();
		if (spins % 256 == 0 && smio_now_ms() > end)
			return -ETIMEDOUT;
	}
}

#define IO_SLOT   (64 * 1024)
#define IO_QD     4
#define IO_BUF    (2 * IO_QD * IO_SLOT)

/*
 * One round of verified I/O on [base, base + 1024) (512-byte blocks): IO_QD
 * writes of 4 KiB .. 64 KiB (PRP1 only, PRP1+PRP2, PRP lists), then reads of
 * the same ranges into other memory, compared with what was written.
 * Returns 0 or a negative value identifying the failure.
 */
static __attribute__((unused)) int verified_round(struct snv_qpair *q, struct snv_buf *b, uint64_t base, uint64_t seed,
			  unsigned round)
{
	static const uint32_t nlbs[IO_QD] = { 8, 16, 40, 128 };
	uint8_t *mem = snv_buf_vaddr(b);
	struct snv_cpl cpl;
	uint64_t lba[IO_QD];

	for (unsigned i = 0; i < IO_QD; i++) {
		uint32_t nlb = nlbs[(i + round) % IO_QD];

		lba[i] = base + ((round * 7 + i * 256) % 896);
		h_fill(mem + i * IO_SLOT, (size_t)nlb * 512, seed + round, lba[i]);
		if (snv_submit_rw(q, true, 1, lba[i], nlb, b, i * IO_SLOT, (void *)(uintptr_t)i))
			return -1;
	}
	for (unsigned i = 0; i < IO_QD; i++) {
		if (h_reap(q, &cpl))
			return -2;
		if (cpl.status)
			return -1000 - cpl.status;
	}
	for (unsigned i = 0; i < IO_QD; i++) {
		uint32_t nlb = nlbs[(i + round) % IO_QD];

		memset(mem + (IO_QD + i) * IO_SLOT, 0, (size_t)nlb * 512);
		if (snv_submit_rw(q, false, 1, lba[i], nlb, b, (IO_QD + i) * IO_SLOT,
				  (void *)(uintptr_t)i))
			return -3;
	}
	for (unsigned i = 0; i < IO_QD; i++) {
		if (h_reap(q, &cpl))
			return -4;
		if (cpl.status)
			return -2000 - cpl.status;
	}
	for (unsigned i = 0; i < IO_QD; i++) {
		uint32_t nlb = nlbs[(i + round) % IO_QD];

		if (memcmp(mem + i * IO_SLOT, mem + (IO_QD + i) * IO_SLOT, (size_t)nlb * 512))
			return -5;
	}
	return 0;
}

#define KID_CHECK(io, cond, val) do { \
		if (!(cond)) { \
			kid_report(io, REP_FAIL, __LINE__, (int)(val), 0); \
			return 1; \
		} \
	} while (0)

#endif
