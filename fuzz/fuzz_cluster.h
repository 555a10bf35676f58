/* SPDX-License-Identifier: MIT */
/*
 * fuzz_daemon's cluster (fuzz/fuzz_cluster.c): a cluster directory with the
 * built-in default topology, and real smartiod processes for the hosts the
 * fuzzer does not run in its own process.
 */
#ifndef SMARTIO_FUZZ_CLUSTER_H
#define SMARTIO_FUZZ_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A fresh /tmp/smio-fuzz-XXXXXX holding topology.yaml (the built-in default); -1 on failure. */
int fzc_make_dir(char *dir, size_t len);
/* Remove dir and what is in it. */
void fzc_remove_dir(const char *dir);
/*
 * The smartiod to run as the peers: $SMARTIOD, else the normal build's
 * beside ours (BUILD-FUZZ/../build/src/daemon/smartiod), else our own
 * build's. argv0 is the fuzzer's path. -1 if none is executable.
 */
int fzc_find_smartiod(const char *argv0, char *out, size_t len);
/*
 * exe --cluster dir --host host, logging to DIR/host-N.log, killed with the
 * fuzzer; returns its pid once it said it is ready, or -1.
 */
pid_t fzc_start_peer(const char *dir, const char *exe, uint32_t host);
/* SIGTERM and reap. */
void fzc_stop_peer(pid_t pid);

#endif
