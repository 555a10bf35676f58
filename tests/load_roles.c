// SPDX-License-Identifier: MIT
/*
 * daemon_load case 5: role claims, and the helper mode of the test binary
 * that claims them as a process of host 0 (test_daemon_load.c has the
 * suite's overview).
 */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "load_cases.h"
#include "load_cluster.h"
#include "util/smio_time.h"

/* ---------- 5. role claims ---------- */

char smartio_cli[PATH_MAX];

/*
 * The helper mode of this binary (`--claim-helper DIR`), run by the test as
 * `smartio exec --host 0 --dir DIR -- SELF --claim-helper DIR`: a process of
 * host 0 claims roles on host 1's daemon. No cmocka here: it says what went
 * wrong on stderr and exits non-zero.
 */
static int claim_hello(int fd, uint32_t role, uint32_t host)
{
	struct smio_hello m = { .role = role, .host = host, .pid = (uint32_t)getpid(),
				.version = SMIO_VERSION };
	uint32_t rlen;

	return smio_call(fd, SMIO_HELLO, &m, sizeof(m), rbuf.b, sizeof(rbuf.b), &rlen, NULL,
			 IO_MS);
}

#define CLAIM(what, got, want) do {                                                     \
		int got_ = (got);                                                       \
		if (got_ != (want)) {                                                   \
			fprintf(stderr, "claim helper: %s: %d, expected %d\n", what, got_, \
				(want));                                                \
			return 1;                                                       \
		}                                                                       \
	} while (0)

int claim_helper(const char *dir)
{
	struct smio_ntb_lut lut = { .ntb = 0, .entry = UINT32_MAX, .dest_host = 0 };
	uint32_t rlen;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	snprintf(g.dir, sizeof(g.dir), "%s", dir);
	if (!getenv("SMARTIO_HOST") || strcmp(getenv("SMARTIO_HOST"), "0")) {
		fprintf(stderr, "claim helper: not run by smartio exec --host 0\n");
		return 1;
	}
	fd = smio_connect(dir, 1, IO_MS);
	CLAIM("connect to host 1", fd >= 0, 1);
	CLAIM("PEER as host 0 on host 1", claim_hello(fd, SMIO_ROLE_PEER, 0), -EACCES);
	CLAIM("PEER as host 2 on host 1", claim_hello(fd, SMIO_ROLE_PEER, 2), -EACCES);
	CLAIM("ADMIN on host 1", claim_hello(fd, SMIO_ROLE_ADMIN, 1), -EACCES);
	CLAIM("CLIENT on host 1", claim_hello(fd, SMIO_ROLE_CLIENT, 1), -EXDEV);
	/* Refused in every role, it has none: nothing else is served. */
	CLAIM("STATUS without a role", smio_call(fd, SMIO_STATUS, NULL, 0, rbuf.b,
						 sizeof(rbuf.b), &rlen, NULL, IO_MS), -EACCES);
	CLAIM("LUT_SET without a role", smio_call(fd, SMIO_NTB_LUT_SET, &lut, sizeof(lut),
						  rbuf.b, sizeof(rbuf.b), &rlen, NULL, IO_MS),
	      -EACCES);
	close(fd);
	/* Its own host serves it: the refusals above were about the host. */
	fd = smio_connect(dir, 0, IO_MS);
	CLAIM("connect to host 0", fd >= 0, 1);
	CLAIM("CLIENT on host 0", claim_hello(fd, SMIO_ROLE_CLIENT, 0), 0);
	CLAIM("STATUS on host 0", smio_call(fd, SMIO_STATUS, NULL, 0, rbuf.b, sizeof(rbuf.b),
					    &rlen, NULL, IO_MS), 0);
	close(fd);
	return 0;
}

/* Run f in a child and return its exit status (bounded wait, then SIGKILL). */
static int run_child(int (*f)(void))
{
	int pidfd, ws = 0;
	struct pollfd p;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(f());
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	assert_true(pidfd >= 0);
	p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	if (poll(&p, 1, IO_MS * LOAD_SCALE) != 1)
		kill(pid, SIGKILL);
	close(pidfd);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	return ws;
}

static const char *self_exe(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	assert_true(n > 0);
	path[n] = '\0';
	return path;
}

/* A process of host 0, started by smartio exec, claiming roles on host 1. */
static int exec_claims(void)
{
	execl(smartio_cli, "smartio", "exec", "--host", "0", "--dir", g.dir, "--", self_exe(),
	      "--claim-helper", g.dir, (char *)NULL);
	return 127;
}

/* The user nobody: a client anywhere, an admin nowhere. */
static int nobody_claims(void)
{
	int fd;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534) || getuid() != 65534)
		return 2;
	fd = smio_connect(g.dir, 0, IO_MS);
	if (fd < 0)
		return 3;
	if (hello(fd, SMIO_ROLE_ADMIN, 0) != -EACCES)
		return 4;
	if (hello(fd, SMIO_ROLE_CLIENT, 0) != 0)
		return 5;
	if (status(fd) != 0 || rbuf.st.host != 0)
		return 6;
	close(fd);
	return 0;
}

struct tables {
	uint32_t lut_used, rid_used, link_up, db_pending;
	uint64_t epoch;
	uint32_t nclients, npeers;
};

static void tables(uint32_t host, struct tables *t)
{
	struct smio_ntb_ref nr = { .ntb = 0 };

	sync_host(host);
	assert_int_equal(call(g.d[host].ctl, SMIO_NTB_INFO, &nr, sizeof(nr), NULL), 0);
	*t = (struct tables){ .lut_used = rbuf.ni.lut_used, .rid_used = rbuf.ni.rid_used,
			      .link_up = rbuf.ni.link_up, .db_pending = rbuf.ni.db_pending };
	assert_int_equal(status(g.d[host].ctl), 0);
	t->epoch = rbuf.st.epoch;
	t->nclients = rbuf.st.nclients;
	t->npeers = rbuf.st.npeers;
}

/*
 * Roles are the kernel's word, not the message's: a process of host 0
 * (smartio exec) is refused by host 1 in every role and changes nothing
 * there; a process that is not host 2's daemon is no peer; a user other
 * than the cluster's owner is no admin, but a client.
 */
void test_role_claims(void **state)
{
	struct tables before, after;
	uint64_t t0 = smio_now_ns();
	int fd, ws;

	tables(1, &before);
	ws = run_child(exec_claims);
	print_message("[   INFO   ] a process of host 0 claiming PEER, ADMIN, CLIENT on host 1: "
		      "exit status %d after %.1f ms\n", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1,
		      MS(smio_now_ns() - t0));
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	tables(1, &after);
	assert_int_equal(after.lut_used, before.lut_used);
	assert_int_equal(after.rid_used, before.rid_used);
	assert_int_equal(after.link_up, before.link_up);
	assert_int_equal(after.db_pending, before.db_pending);
	assert_int_equal(after.epoch, before.epoch);
	assert_int_equal(after.nclients, before.nclients);
	assert_int_equal(after.npeers, before.npeers);

	/* This process is not host 2's daemon. */
	fd = raw_conn(0);
	assert_int_equal(hello(fd, SMIO_ROLE_PEER, 2), -EACCES);
	assert_int_equal(status(fd), -EACCES);
	assert_int_equal(hello(fd, SMIO_ROLE_CLIENT, 0), 0);
	assert_int_equal(status(fd), 0);
	close(fd);

	if (geteuid() != 0) {
		print_message("[   INFO   ] not root: the claim as user nobody is not tried\n");
		return;
	}
	ws = run_child(nobody_claims);
	print_message("[   INFO   ] user nobody claiming ADMIN, then CLIENT on host 0: exit "
		      "status %d\n", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
}

