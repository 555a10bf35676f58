/* SPDX-License-Identifier: MIT */
/*
 * Plumbing shared by the SISCI suites (tests/test_sisci*.c): the default
 * cluster started with the smartio CLI in a temporary directory, the test
 * process a SISCI program of one host, and forked children that restart the
 * library as programs of another host.
 *
 * Two kinds of child, as the suites use them:
 *  - struct kid (spawn_on/join): the child checks with CHK()/CHK_ERR() and
 *    exits 1 on the first failure; join() waits for it with a bound and
 *    fails the test unless it exited 0. fork_as()/reap() are its pieces,
 *    for a child without pipes.
 *  - struct child (start_child/end_child): the child's body returns 0 or a
 *    failing line (250: the library did not start), and ends the library
 *    itself; end_child() gives the exit status to check.
 * Both talk over a pair of close-on-exec pipes: send_step/recv_step (steps,
 * 0 means none) or put/get (any value).
 *
 * Everything here is static, so that each suite is one program; what is a
 * suite's own (its bounds, its hosts, its objects) stays in its file, and
 * every bound is a parameter. Each function is marked unused: no suite
 * needs all of them.
 */
#ifndef SMARTIO_TESTS_SISCI_HARNESS_H
#define SMARTIO_TESTS_SISCI_HARNESS_H

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "sisci_api.h"
#include "util/smio_time.h"

#define SH_UNUSED __attribute__((unused))

extern char **environ;

/* The smartio CLI, and the cluster's directory (SMARTIO_CLUSTER). */
static char sh_cli[PATH_MAX], sh_dir[PATH_MAX];

/* ---------- the CLI ---------- */

/* smartio argv[1]... (argv[0] is sh_cli); its exit status, -1 if it did not run or exit. */
static SH_UNUSED int sh_run(char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawn(&pid, sh_cli, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* smartio cluster CMD [ARG] */
static SH_UNUSED int sh_cluster(const char *cmd, const char *arg)
{
	char *argv[] = { sh_cli, (char *)"cluster", (char *)cmd, (char *)arg, NULL };

	return sh_run(argv);
}

/* smartio ntb --host HOST link up|down */
static SH_UNUSED int sh_ntb_link(const char *host, const char *state)
{
	char *argv[] = { sh_cli, (char *)"ntb", (char *)"--host", (char *)host, (char *)"link",
			 (char *)state, NULL };

	return sh_run(argv);
}

/* ---------- the group's cluster ---------- */

/*
 * The default cluster in a new directory /tmp/smartio-NAME-XXXXXX/c (the
 * CLI from $SMARTIO_BUILD_DIR, ./build without it). host: this process's
 * SMARTIO_HOST, and the library initialised as a program of it; NULL leaves
 * both to the tests. ignore_sigpipe: for suites whose writes may meet a
 * closed peer. 0 or -1.
 */
static SH_UNUSED int sh_up(const char *name, const char *host, bool ignore_sigpipe)
{
	const char *b = getenv("SMARTIO_BUILD_DIR");
	char tmpl[96];
	sci_error_t err;

	snprintf(sh_cli, sizeof(sh_cli), "%s/tools/smartio/smartio", b ? b : "./build");
	snprintf(tmpl, sizeof(tmpl), "/tmp/smartio-%s-XXXXXX", name);
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(sh_dir, sizeof(sh_dir), "%s/c", tmpl);
	setenv("SMARTIO_CLUSTER", sh_dir, 1);
	if (host)
		setenv("SMARTIO_HOST", host, 1);
	if (ignore_sigpipe)
		signal(SIGPIPE, SIG_IGN);
	if (sh_cluster("up", NULL))
		return -1;
	if (!host)
		return 0;
	SCIInitialize(0, &err);
	return err == SCI_ERR_OK ? 0 : -1;
}

/* The library ended, the cluster down, its directory's parent removed; 0 or -1. */
static SH_UNUSED int sh_down(void)
{
	char parent[PATH_MAX];
	int rc;

	SCITerminate();
	rc = sh_cluster("down", NULL);
	snprintf(parent, sizeof(parent), "%s", sh_dir);
	*strrchr(parent, '/') = '\0';
	rmdir(parent);
	return rc == 0 ? 0 : -1;
}

/* The FDID of the one device NAME of node NODE in the pool (fails the test otherwise). */
static SH_UNUSED unsigned int sh_find_device(sci_desc_t sd, unsigned int node, const char *name)
{
	sci_smartio_device_info_t f;
	unsigned int ids[8];
	sci_error_t err;
	unsigned int n;

	memset(&f, 0, sizeof(f));
	f.nodeid = node;
	snprintf(f.user_name, sizeof(f.user_name), "%s", name);
	n = SCIGetDeviceList(sd, ids, 8, &f, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(n, 1);
	return ids[0];
}

/* ---------- checks in a child ---------- */

/* In a child: fail by exiting, never by returning into cmocka. */
#define CHK(c) do {							\
	if (!(c)) {							\
		fprintf(stderr, "child %s:%d: %s\n", __FILE__, __LINE__, #c); \
		_exit(1);						\
	}								\
} while (0)
#define CHK_ERR(e, want) do {						\
	sci_error_t e_ = (e), w_ = (want);				\
	if (e_ != w_) {							\
		fprintf(stderr, "child %s:%d: %s = %#x (%s), want %#x\n", \
			__FILE__, __LINE__, #e, (unsigned)e_,		\
			SCIGetErrorString(e_), (unsigned)w_);		\
		_exit(1);						\
	}								\
} while (0)

/* Spin until *p == v, for at most ms milliseconds. */
static SH_UNUSED bool wait_word(volatile uint32_t *p, uint32_t v, unsigned int ms)
{
	uint64_t end = smio_now_ms() + ms;

	for (unsigned long n = 0;; n++) {
		if (*p == v)
			return true;
		if (!(n & 1023) && smio_now_ms() > end)
			return false;
	}
}

/* Permissions of the mapping holding addr, from /proc/self/maps ("rw-s"...). */
static SH_UNUSED bool map_perms(const volatile void *addr, char perms[5])
{
	uintptr_t a = (uintptr_t)addr, lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= a && a < hi)
			found = true;
	fclose(f);
	return found;
}

/* ---------- children that CHK: fork_as, reap, struct kid ---------- */

/*
 * fork(); in the child (0 returned) the library, a copy of the parent's, is
 * started again as a program of host (CHK_ERR on failure).
 */
static SH_UNUSED pid_t fork_as(const char *host)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		sci_error_t err;

		SCITerminate();
		setenv("SMARTIO_HOST", host, 1);
		SCIInitialize(0, &err);
		CHK_ERR(err, SCI_ERR_OK);
	}
	return pid;
}

/* Wait at most ms for pid to exit (SIGKILL after that), reap it: its wait status. */
static SH_UNUSED int reap(pid_t pid, int ms)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), ws = 0;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	assert_true(pidfd >= 0);
	if (poll(&p, 1, ms) != 1)
		kill(pid, SIGKILL);
	close(pidfd);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	return ws;
}

struct kid {
	pid_t pid;
	int to, from;             /* pipes: parent -> child, child -> parent */
};

static SH_UNUSED void send_step(int fd, uint32_t v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		_exit(2);
}

/* The next step number from the other side, or 0 if none within ms. */
static SH_UNUSED uint32_t recv_step(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint32_t v = 0;

	if (poll(&p, 1, ms) != 1 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* Fork a child that runs fn as a program of host (a fresh SCIInitialize). */
static SH_UNUSED struct kid spawn_on(const char *host, int (*fn)(struct kid *k, void *arg),
				     void *arg)
{
	int down[2], up[2];
	struct kid k;

	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	k.pid = fork_as(host);
	if (k.pid == 0) {
		close(down[1]);
		close(up[0]);
		k.to = up[1];
		k.from = down[0];
		_exit(fn(&k, arg));
	}
	close(down[0]);
	close(up[1]);
	k.to = down[1];
	k.from = up[0];
	return k;
}

/* Wait (at most ms) for the child; it must exit with status 0. */
static SH_UNUSED void join(struct kid *k, int ms)
{
	int ws = reap(k->pid, ms);

	close(k->to);
	close(k->from);
	if (!WIFEXITED(ws) || WEXITSTATUS(ws))
		fail_msg("child failed: status %#x", ws);
}

/* ---------- children that return a line: struct child ---------- */

static SH_UNUSED int put(int fd, uint32_t v)
{
	return write(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

/* One value from fd within ms; -1 on timeout or EOF. */
static SH_UNUSED int get(int fd, uint32_t *v, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return read(fd, v, sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

struct child {
	pid_t pid;
	int to, from;               /* parent's ends */
};

/* A child's body: in/out are its pipe ends; returns 0 or a failing line. */
typedef int (*child_fn)(int in, int out, void *arg);

/* A process of host `host` running fn, with its own SISCI state. */
static SH_UNUSED void start_child(struct child *c, const char *host, child_fn fn, void *arg)
{
	int down[2], up[2];

	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		sci_error_t err;
		int rc;

		close(down[1]);
		close(up[0]);
		/* The parent's SISCI state is not ours: start afresh on our host. */
		SCITerminate();
		setenv("SMARTIO_HOST", host, 1);
		SCIInitialize(0, &err);
		rc = err ? 250 : fn(down[0], up[1], arg);
		SCITerminate();
		_exit(rc);
	}
	close(down[0]);
	close(up[1]);
	c->to = down[1];
	c->from = up[0];
}

/* Both pipes closed, the child reaped: its exit status (1000 + signal if killed, -1). */
static SH_UNUSED int end_child(struct child *c)
{
	int st;

	close(c->to);
	close(c->from);
	if (waitpid(c->pid, &st, 0) != c->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

#endif
