/* SPDX-License-Identifier: MIT */
/*
 * Bringing one host up and down: everything smartiod does between parsing
 * its arguments and running its loop, and after the loop ends. smartiod's
 * main() and the in-process host of the daemon fuzzer (fuzz/fuzz_daemon.c)
 * share it, so the fuzzer serves requests with exactly the daemon's set-up:
 * the host's hardware and devices, the kernel side and its services, the
 * listening socket and the pid file the peers check.
 */
#ifndef SMARTIO_DAEMON_BRINGUP_H
#define SMARTIO_DAEMON_BRINGUP_H

#include <limits.h>

#include "daemon.h"

struct smd_up {
	char sock[PATH_MAX + 32];     /* DIR/host-N.sock, removed by smd_down */
	char pidfile[PATH_MAX + 32];  /* DIR/host-N.pid, likewise */
};

/*
 * With d zeroed but for d->dir and d->host_id: load the topology (topo_path),
 * create the host, its devices and services, listen on its socket, write its
 * pid file and make the loop (not run: smd_loop_run). Blocks SIGTERM, SIGINT
 * and SIGHUP in the calling thread (the loop takes them) and ignores
 * SIGPIPE. On failure, says why on stderr ("smartiod: ..."), undoes what it
 * did and returns -1.
 */
int smd_up(struct smd *d, const char *topo_path, struct smd_up *u);
/* After the loop ended: stop everything smd_up started, remove the socket and pid file. */
void smd_down(struct smd *d, struct smd_up *u);

#endif
