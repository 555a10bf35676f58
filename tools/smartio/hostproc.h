/* SPDX-License-Identifier: MIT */
/* A host's daemon and its processes ('smartio exec --host N'), for signalling. */
#ifndef SMARTIO_CLI_HOSTPROC_H
#define SMARTIO_CLI_HOSTPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_pids {
	pid_t *pid;     /* the exec processes first, then their descendants */
	size_t n, cap;
	size_t nrec;    /* pid[0..nrec): the ones recorded in DIR/procs */
};

/* Is pid a smartiod? Guards against signalling a recycled pid. */
bool cli_is_smartiod(pid_t pid);
/* DIR/host-N.pid, or 0. */
pid_t cli_daemon_pid(const char *dir, uint32_t host);
/* That pid if it is a running (not zombie) smartiod, else 0. */
pid_t cli_daemon_alive(const char *dir, uint32_t host);
/* Wait for pid to end (a pidfd, no sleeping); true once it has. */
bool cli_wait_exit(pid_t pid, int timeout_ms);
/* /proc/PID/stat state letter ('R', 'S', 'T' stopped, 'Z'...), '\0' if no such process. */
char cli_proc_state(pid_t pid);
/* Fields 3 (state), 4 (ppid, may be NULL) and 22 (start time, may be NULL) of /proc/PID/stat. */
int cli_proc_stat(pid_t pid, char *state, pid_t *ppid, unsigned long long *start);
/* The processes of host: its exec records and their descendants. */
int cli_host_procs(const char *dir, uint32_t host, struct cli_pids *s);
/*
 * Send sig to host's daemon and processes. SIGSTOP and SIGKILL freeze the
 * whole set first (so none forks away), SIGKILL then kills it; SIGCONT
 * resumes it. *daemon: the daemon's pid, or 0 if none was running.
 */
int cli_signal_host(const char *dir, uint32_t host, int sig, pid_t *daemon, struct cli_pids *s);
void cli_pids_free(struct cli_pids *s);

#endif
