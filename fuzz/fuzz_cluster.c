// SPDX-License-Identifier: MIT
/* fuzz_daemon's cluster directory and peer daemons (fuzz_cluster.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_cluster.h"
#include "smartio/topology.h"

#define READY_MS      30000     /* a peer daemon's start-up */

int fzc_make_dir(char *dir, size_t len)
{
	const char *yaml = topo_default_yaml();
	char path[PATH_MAX];
	FILE *f;

	snprintf(dir, len, "/tmp/smio-fuzz-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/topology.yaml", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	if (fwrite(yaml, 1, strlen(yaml), f) != strlen(yaml)) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

void fzc_remove_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) && errno == EISDIR)
			fzc_remove_dir(path);
	}
	closedir(d);
	rmdir(dir);
}

int fzc_find_smartiod(const char *argv0, char *out, size_t len)
{
	const char *env = getenv("SMARTIOD");
	char self[PATH_MAX], *dir;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK) ? -1 : 0;
	}
	if (!realpath(argv0, self))
		return -1;
	dir = dirname(dirname(self));            /* BUILD-FUZZ/fuzz/fuzz_daemon -> BUILD-FUZZ */
	snprintf(out, len, "%s/../build/src/daemon/smartiod", dir);
	if (!access(out, X_OK))
		return 0;
	snprintf(out, len, "%s/src/daemon/smartiod", dir);
	return access(out, X_OK) ? -1 : 0;
}

pid_t fzc_start_peer(const char *dir, const char *exe, uint32_t host)
{
	char arg[16], line[16], log[PATH_MAX];
	struct pollfd p;
	int pfd[2], n;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	snprintf(arg, sizeof(arg), "%u", host);
	snprintf(log, sizeof(log), "%s/host-%u.log", dir, host);
	pid = fork();
	if (pid == 0) {
		int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive the fuzzer */
		if (lfd >= 0)
			dup2(lfd, 2);
		if (dup2(pfd[1], 3) < 0)
			_exit(126);
		/* Only stdio and the ready pipe: nothing of the fuzzer's. */
		syscall(SYS_close_range, 4u, ~0u, 0u);
		execl(exe, "smartiod", "--cluster", dir, "--host", arg, "--ready-fd", "3",
		      (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return -1;
	}
	p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
	n = poll(&p, 1, READY_MS) == 1 ? (int)read(pfd[0], line, sizeof(line) - 1) : -1;
	close(pfd[0]);
	if (n <= 0 || strncmp(line, "ready\n", 6)) {
		fprintf(stderr, "fuzz_daemon: %s --host %u did not start (see %s)\n", exe, host,
			log);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

void fzc_stop_peer(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}
