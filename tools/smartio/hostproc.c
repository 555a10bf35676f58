// SPDX-License-Identifier: MIT
/*
 * A host's processes as the operating system sees them: its daemon (from
 * DIR/host-N.pid) and the processes 'smartio exec --host N' started (its
 * records in DIR/procs/PID, "HOST STARTTIME", and everything below them:
 * exec is their subreaper, so they stay its descendants). Used by cluster
 * down/status/restart and by the fault injector to crash or freeze a host.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "hostproc.h"

bool cli_is_smartiod(pid_t pid)
{
	char path[64], cmd[256] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(cmd, 1, sizeof(cmd) - 1, f);
	fclose(f);
	cmd[n] = '\0';
	return strstr(cmd, "smartiod") != NULL;
}

pid_t cli_daemon_pid(const char *dir, uint32_t host)
{
	char path[PATH_MAX + 32];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/host-%u.pid", dir, host);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid > 0 ? pid : 0;
}

pid_t cli_daemon_alive(const char *dir, uint32_t host)
{
	pid_t pid = cli_daemon_pid(dir, host);

	return pid && kill(pid, 0) == 0 && cli_is_smartiod(pid) &&
	       cli_proc_state(pid) != 'Z' ? pid : 0;
}

bool cli_wait_exit(pid_t pid, int timeout_ms)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p;
	bool gone;

	if (pfd < 0)
		return errno == ESRCH;
	/* A pidfd becomes readable when the process ends: no sleeping. */
	p = (struct pollfd){ .fd = pfd, .events = POLLIN };
	gone = poll(&p, 1, timeout_ms) == 1;
	close(pfd);
	return gone;
}

int cli_proc_stat(pid_t pid, char *state, pid_t *ppid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	int pp = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');        /* the command name may hold anything */
	if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2)
		return -EINVAL;
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &st) != 1)
		return -EINVAL;
	if (ppid)
		*ppid = pp;
	if (start)
		*start = st;
	return 0;
}

char cli_proc_state(pid_t pid)
{
	char s = '?';

	return cli_proc_stat(pid, &s, NULL, NULL) ? '\0' : s;
}

static bool has(const struct cli_pids *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->pid[i] == pid)
			return true;
	return false;
}

static int push(struct cli_pids *s, pid_t pid)
{
	if (has(s, pid))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 32;
		pid_t *np = realloc(s->pid, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		s->pid = np;
		s->cap = cap;
	}
	s->pid[s->n++] = pid;
	return 0;
}

void cli_pids_free(struct cli_pids *s)
{
	free(s->pid);
	*s = (struct cli_pids){ 0 };
}

/* The live 'smartio exec' processes recorded for host (start time matches). */
static int exec_roots(const char *dir, uint32_t host, struct cli_pids *s)
{
	char procs[PATH_MAX + 16], path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	snprintf(procs, sizeof(procs), "%s/procs", dir);
	d = opendir(procs);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!rc && (e = readdir(d))) {
		unsigned long long want, st;
		unsigned h;
		char state;
		FILE *f;
		int pid = atoi(e->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", procs, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%u %llu", &h, &want) != 2)
			h = UINT32_MAX;
		fclose(f);
		if (h != host || cli_proc_stat(pid, &state, NULL, &st) || st != want)
			continue;       /* another host's, or a stale record */
		rc = push(s, pid);
		s->nrec = s->n;
	}
	closedir(d);
	return rc;
}

/* Add every descendant of a member of s, to a fixed point. */
static int add_descendants(struct cli_pids *s)
{
	bool grew = true;
	int rc = 0;

	while (grew && !rc) {
		struct dirent *e;
		DIR *d = opendir("/proc");

		if (!d)
			return -errno;
		grew = false;
		while (!rc && (e = readdir(d))) {
			pid_t pid = atoi(e->d_name), pp;
			char state;

			if (pid <= 0 || has(s, pid) || cli_proc_stat(pid, &state, &pp, NULL))
				continue;
			if (has(s, pp)) {
				rc = push(s, pid);
				grew = true;
			}
		}
		closedir(d);
	}
	return rc;
}

int cli_host_procs(const char *dir, uint32_t host, struct cli_pids *s)
{
	int rc = exec_roots(dir, host, s);

	return rc ? rc : add_descendants(s);
}

int cli_signal_host(const char *dir, uint32_t host, int sig, pid_t *daemon, struct cli_pids *s)
{
	size_t before;
	int rc;

	*daemon = cli_daemon_alive(dir, host);
	rc = cli_host_procs(dir, host, s);
	if (rc)
		return rc;
	if (sig == SIGCONT) {
		for (size_t i = 0; i < s->n; i++)
			kill(s->pid[i], SIGCONT);
		if (*daemon)
			kill(*daemon, SIGCONT);
		return 0;
	}
	/*
	 * Freeze first, all at once as far as signals go: a stopped process
	 * cannot fork, so a second look finds whatever a process started
	 * meanwhile, and the set is complete once a look adds nothing.
	 */
	if (*daemon)
		kill(*daemon, SIGSTOP);
	do {
		before = s->n;
		for (size_t i = 0; i < s->n; i++)
			kill(s->pid[i], SIGSTOP);
		rc = add_descendants(s);
	} while (!rc && s->n != before);
	if (rc || sig == SIGSTOP)
		return rc;
	if (*daemon)
		kill(*daemon, sig);
	for (size_t i = 0; i < s->n; i++)
		kill(s->pid[i], sig);
	return 0;
}
