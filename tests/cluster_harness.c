// SPDX-License-Identifier: MIT
/*
 * A real cluster for the suites that talk to daemons (cluster_harness.h).
 *
 * Each daemon gets a ready pipe on fd 3 and nothing else of ours, so nothing
 * here sleeps or polls for start-up; a stop is SIGTERM (or another signal),
 * a pidfd wait and a reap.
 *
 * Daemon-side effects of a close are asynchronous; sync_host() is the
 * barrier: a STATUS round trip on one admin connection, then one on
 * another. The close made before the first request was seen by the loop no
 * later than that request; the second request arrives only after the first
 * was served, so it is seen in a later turn of the loop, and sd-event
 * dispatches what has waited longest first: the close is handled before the
 * second reply. (Two round trips on the same connection are not enough: the
 * daemon reads up to SMD_MSGS_PER_WAKE messages of a connection in one turn,
 * so it may serve both before it looks at the closed one.) A close whose
 * connection still has a request on a worker is handled once that request
 * ends: check_daemons() polls the fd count, bounded, with a barrier between
 * looks (never a bare sleep).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cluster_harness.h"
#include "smartio/topology.h"
#include "util/smio_time.h"

struct cluster g;
union rbuf rbuf;

/* ---------- calls ---------- */

int call(int fd, uint16_t type, const void *req, uint32_t len, uint32_t *rlen)
{
	uint32_t n;

	return smio_call(fd, type, req, len, rbuf.b, sizeof(rbuf.b), rlen ? rlen : &n, NULL,
			 IO_MS);
}

int call_fd(int fd, uint16_t type, const void *req, uint32_t len, int *rfd)
{
	uint32_t n;

	return smio_call(fd, type, req, len, rbuf.b, sizeof(rbuf.b), &n, rfd, IO_MS);
}

int hello_version(int fd, uint32_t role, uint32_t host, uint32_t version)
{
	struct smio_hello m = { .role = role, .host = host, .pid = (uint32_t)getpid(),
				.version = version };

	return call(fd, SMIO_HELLO, &m, sizeof(m), NULL);
}

int hello(int fd, uint32_t role, uint32_t host)
{
	return hello_version(fd, role, host, SMIO_VERSION);
}

int status(int fd)
{
	uint32_t len;
	int rc = call(fd, SMIO_STATUS, NULL, 0, &len);

	if (!rc && len != sizeof(struct smio_status))
		return -EPROTO;
	return rc;
}

int raw_conn(uint32_t host)
{
	int fd = smio_connect(g.dir, host, IO_MS);

	assert_true(fd >= 0);
	return fd;
}

int open_conn(uint32_t host, uint32_t role, uint32_t as_host)
{
	int fd = raw_conn(host);

	assert_int_equal(hello(fd, role, as_host), 0);
	return fd;
}

uint64_t lut_window(uint32_t host, uint32_t dest_host, uint64_t dest_addr, uint32_t *entry)
{
	struct smio_ntb_lut lut = { .ntb = 0, .entry = UINT32_MAX, .dest_host = dest_host,
				    .dest_addr = dest_addr };
	struct smio_ntb_ref nr = { .ntb = 0 };
	int ad = g.d[host].ctl;
	uint64_t win;

	assert_int_equal(call(ad, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	assert_int_equal(rbuf.ni.link_up, 1);
	assert_true(rbuf.ni.win_size > 0);
	win = rbuf.ni.win_size;
	assert_int_equal(call(ad, SMIO_NTB_LUT_SET, &lut, sizeof(lut), NULL), 0);
	assert_int_not_equal(rbuf.lut.entry, UINT32_MAX);
	assert_int_equal(rbuf.lut.dest_host, dest_host);
	*entry = rbuf.lut.entry;
	win *= rbuf.lut.entry;
	assert_int_equal(call(ad, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	return win + rbuf.ni.bar_addr;
}

void lut_clear(uint32_t host, uint32_t entry)
{
	struct smio_ntb_lut lut = { .ntb = 0, .entry = entry };

	assert_int_equal(call(g.d[host].ctl, SMIO_NTB_LUT_CLEAR, &lut, sizeof(lut), NULL), 0);
}

/* ---------- cluster ---------- */

int build_exe(char *out, size_t n, const char *rel)
{
	const char *bd = getenv("SMARTIO_BUILD_DIR");

	snprintf(out, n, "%s/%s", bd && *bd ? bd : "./build", rel);
	return access(out, X_OK) ? -ENOENT : 0;
}

int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* What a daemon holds, for the log of a failed fd check. */
static void list_fds(pid_t pid)
{
	char path[64], lnk[PATH_MAX + 64], tgt[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(lnk, sizeof(lnk), "%s/%s", path, e->d_name);
		n = readlink(lnk, tgt, sizeof(tgt) - 1);
		tgt[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "  pid %d fd %s -> %s\n", (int)pid, e->d_name, tgt);
	}
	closedir(d);
}

void start_daemon(uint32_t host)
{
	char hostarg[16], line[16];
	struct pollfd p;
	int pfd[2], n;
	pid_t pid;

	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	snprintf(hostarg, sizeof(hostarg), "%u", host);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Never outlive the test, even if it crashes. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (pfd[1] == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(pfd[1], 3) < 0)
			_exit(126);
		/* Only stdio and the ready pipe: nothing the test holds. */
		syscall(SYS_close_range, 4u, ~0u, 0u);
		execl(g.smartiod, "smartiod", "--cluster", g.dir, "--host", hostarg,
		      "--ready-fd", "3", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	assert_int_equal(poll(&p, 1, READY_MS), 1);
	n = (int)read(pfd[0], line, sizeof(line) - 1);
	close(pfd[0]);
	if (n <= 0)
		fail_msg("smartiod host %u died before it was ready (%s)", host, g.smartiod);
	line[n] = '\0';
	assert_string_equal(line, "ready\n");
	g.d[host].pid = pid;
	g.d[host].ctl = open_conn(host, SMIO_ROLE_ADMIN, host);
	g.d[host].node_id = rbuf.hr.node_id;
	g.d[host].ctl2 = open_conn(host, SMIO_ROLE_ADMIN, host);
}

int stop_daemon(uint32_t host, int sig)
{
	pid_t pid = g.d[host].pid;
	int pidfd, ws = 0;

	if (g.d[host].ctl >= 0)
		close(g.d[host].ctl);
	if (g.d[host].ctl2 >= 0)
		close(g.d[host].ctl2);
	g.d[host].ctl = g.d[host].ctl2 = -1;
	if (pid <= 0)
		return 0;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	kill(pid, SIGCONT);          /* a stopped daemon cannot take SIGTERM */
	kill(pid, sig);
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		if (poll(&p, 1, EXIT_MS) != 1)
			kill(pid, SIGKILL);
		close(pidfd);
	}
	waitpid(pid, &ws, 0);
	g.d[host].pid = 0;
	return ws;
}

void restart_daemon(uint32_t host)
{
	int ws = stop_daemon(host, SIGTERM);

	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	start_daemon(host);
}

void sync_host(uint32_t host)
{
	assert_int_equal(status(g.d[host].ctl), 0);
	assert_int_equal(status(g.d[host].ctl2), 0);
}

void assert_alive(uint32_t host)
{
	int fd;

	assert_int_equal(kill(g.d[host].pid, 0), 0);
	fd = open_conn(host, SMIO_ROLE_CLIENT, host);
	assert_int_equal(status(fd), 0);
	assert_int_equal(rbuf.st.host, host);
	assert_int_equal(rbuf.st.pid, (uint32_t)g.d[host].pid);
	close(fd);
}

void wait_clients(uint32_t host, unsigned base, int timeout_ms)
{
	int64_t deadline = smio_deadline(timeout_ms);

	for (;;) {
		assert_int_equal(status(g.d[host].ctl), 0);
		if (rbuf.st.nclients == base)
			return;
		if (smio_ms_left(deadline) == 0)
			fail_msg("host %u: %u connections, expected %u", host, rbuf.st.nclients,
				 base);
		poll(NULL, 0, 5);
	}
}

void snapshot(void)
{
	for (uint32_t i = 0; i < NHOSTS; i++) {
		sync_host(i);
		wait_clients(i, 2, IO_MS);    /* ctl and ctl2: the rest is gone */
		g.d[i].fds = count_fds(g.d[i].pid);
	}
}

void check_daemons(void)
{
	for (uint32_t i = 0; i < NHOSTS; i++) {
		int64_t deadline = smio_deadline(IO_MS);
		int n;

		assert_alive(i);
		/* Bounded: each look is after a barrier; a worker may still hold a close. */
		for (;;) {
			sync_host(i);
			n = count_fds(g.d[i].pid);
			if (n == g.d[i].fds || smio_ms_left(deadline) == 0)
				break;
			poll(NULL, 0, 10);
		}
		if (n != g.d[i].fds) {
			list_fds(g.d[i].pid);
			fail_msg("host %u: %d open fds, %d before the test", i, n, g.d[i].fds);
		}
	}
}

static void remove_tree(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);        /* DIR/procs of smartio exec */
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	size_t n = strlen(text);
	int rc;

	if (!f)
		return -1;
	rc = fwrite(text, 1, n, f) == n ? 0 : -1;
	if (fclose(f))
		rc = -1;
	return rc;
}

int cluster_setup(const char *suite, rlim_t nofile)
{
	char path[PATH_MAX];
	struct rlimit rl;

	g.suite = suite;
	signal(SIGPIPE, SIG_IGN);
	/* Raised before the daemons start: they inherit it. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < nofile) {
		rl.rlim_cur = rl.rlim_max < nofile ? rl.rlim_max : nofile;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (build_exe(g.smartiod, sizeof(g.smartiod), "src/daemon/smartiod")) {
		fprintf(stderr, "%s: no executable %s\n", suite, g.smartiod);
		return -1;
	}
	snprintf(g.dir, sizeof(g.dir), "/tmp/smio-%s-XXXXXX", suite);
	if (!mkdtemp(g.dir))
		return -1;
	snprintf(path, sizeof(path), "%s/topology.yaml", g.dir);
	if (write_file(path, topo_default_yaml())) {
		remove_tree(g.dir);
		return -1;
	}
	for (uint32_t i = 0; i < NHOSTS; i++)
		g.d[i].ctl = g.d[i].ctl2 = -1;
	for (uint32_t i = 0; i < NHOSTS; i++)
		start_daemon(i);
	return 0;
}

int cluster_teardown(void **state)
{
	int rc = 0;

	for (uint32_t i = 0; i < NHOSTS; i++) {
		int ws = stop_daemon(i, SIGTERM);

		/* A clean exit on SIGTERM: no crash, no sanitizer report. */
		if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
			fprintf(stderr, "%s: host %u exited with status 0x%x\n", g.suite, i, ws);
			rc = -1;
		}
	}
	remove_tree(g.dir);
	return rc;
}

int cluster_test_setup(void **state)
{
	snapshot();
	return 0;
}

int cluster_test_teardown(void **state)
{
	check_daemons();
	return 0;
}
