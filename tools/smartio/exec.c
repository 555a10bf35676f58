// SPDX-License-Identifier: MIT
/*
 * smartio exec --host N -- COMMAND: run COMMAND as a process of host N.
 *
 * Its environment names the host (SMARTIO_HOST, SMARTIO_CLUSTER), and so
 * does the kernel: exec records itself in DIR/procs/<pid> ("N <start time>")
 * and stays COMMAND's parent and the subreaper of everything COMMAND starts,
 * so every such process has exec among its ancestors. The daemons walk a
 * connecting process's ancestry and refuse one bound to another host, in
 * any role (src/daemon/auth.c): a process of host 0 cannot change host 1's
 * tables. Signals that would stop exec are passed on to COMMAND; exec ends
 * with COMMAND's status and removes its record.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "hostproc.h"

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Our start time (clock ticks after boot, /proc/self/stat field 22). */
static int start_time(unsigned long long *st)
{
	char state;

	return cli_proc_stat(getpid(), &state, NULL, st);
}

/* DIR/procs/<our pid>: the daemons' evidence that our descendants are host's. */
static int record(const char *dir, uint32_t host, char *path, size_t len)
{
	char procs[PATH_MAX + 16], tmp[PATH_MAX + 64];
	unsigned long long st;
	FILE *f;
	int rc = start_time(&st);

	if (rc)
		return rc;
	snprintf(procs, sizeof(procs), "%s/procs", dir);
	if (mkdir(procs, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, len, "%s/%d", procs, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "%u %llu\n", host, st);
	if (fclose(f) || rename(tmp, path) < 0) {
		rc = -errno;
		unlink(tmp);
		return rc;
	}
	return 0;
}

void cli_exec_records_clear(const char *dir)
{
	char procs[PATH_MAX + 16], path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d;

	snprintf(procs, sizeof(procs), "%s/procs", dir);
	d = opendir(procs);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", procs, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(procs);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: smartio exec --host N [--dir DIR] -- COMMAND [ARGS...]\n\n"
		"Runs COMMAND as a process of host N: with SMARTIO_HOST=N and\n"
		"SMARTIO_CLUSTER=DIR in its environment, and known as host N's to every\n"
		"daemon of the cluster (it and what it starts may use host N's daemon\n"
		"only). Exits with COMMAND's status.\n");
}

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	const char *host_opt = NULL, *dir_opt = NULL;
	char dir[PATH_MAX], hostbuf[16], rec[PATH_MAX + 64];
	struct sigaction sa = { .sa_handler = forward };
	struct topo *t;
	uint32_t host;
	int c, rc, ws;
	pid_t pid;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'H') {
			host_opt = optarg;
		} else if (c == 'd') {
			dir_opt = optarg;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			return 2;
		}
	}
	if (optind >= argc) {
		cli_err("exec needs a command: smartio exec --host N -- COMMAND [ARGS...]");
		return 2;
	}
	if (!host_opt)
		return cli_err("exec needs --host N"), 2;
	if (cli_host_arg(host_opt, &host))
		return 2;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
		return cli_err("cluster directory path too long"), 2;
	if (cli_cluster_topo(dir, &t))
		return 1;
	if (topo_host_index(t, host) < 0) {
		cli_err("the cluster in %s has no host %u", dir, host);
		topo_free(t);
		return 1;
	}
	topo_free(t);
	snprintf(hostbuf, sizeof(hostbuf), "%u", host);
	setenv("SMARTIO_HOST", hostbuf, 1);
	setenv("SMARTIO_CLUSTER", dir, 1);
	rc = record(dir, host, rec, sizeof(rec));
	if (rc) {
		cli_err("cannot record the process for host %u in %s/procs: %s", host, dir,
			strerror(-rc));
		return 1;
	}
	/* Orphans of COMMAND become ours, and stay host N's processes. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = errno;
		unlink(rec);
		cli_err("cannot start %s: %s", argv[optind], strerror(rc));
		return 1;
	}
	if (pid == 0) {
		char sibling[PATH_MAX];
		int err;

		execvp(argv[optind], argv + optind);
		err = errno;
		/* smartio-nvme and smartio run even when PATH lacks them: the
		 * commands the demo and docs print work from a build tree too. */
		if (err == ENOENT && !strchr(argv[optind], '/') &&
		    !cli_find_tool(argv[optind], sibling, sizeof(sibling))) {
			execv(sibling, argv + optind);
			err = errno;
		}
		cli_err("cannot run %s: %s%s", argv[optind], strerror(err),
			err == ENOENT ? " (not on PATH: see docs/troubleshooting.md)" : "");
		_exit(127);
	}
	child_pid = pid;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	/* Reap whatever ends; COMMAND's own end is ours. */
	for (;;) {
		pid_t w = waitpid(-1, &ws, 0);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			ws = 1 << 8;
			break;
		}
	}
	unlink(rec);
	if (WIFEXITED(ws))
		return WEXITSTATUS(ws);
	if (WIFSIGNALED(ws)) {
		/* End as COMMAND did, so that callers see the same signal. */
		signal(WTERMSIG(ws), SIG_DFL);
		raise(WTERMSIG(ws));
		return 128 + WTERMSIG(ws);
	}
	return 1;
}
