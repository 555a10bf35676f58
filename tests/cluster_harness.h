/* SPDX-License-Identifier: MIT */
/*
 * A real cluster for the suites that talk to daemons (daemon, segment,
 * daemon_load): the built-in default topology (3 hosts) in a temporary
 * directory, one $SMARTIO_BUILD_DIR/src/daemon/smartiod per host, each
 * started with a ready pipe so that nothing sleeps or polls for start-up.
 * For each daemon the harness holds its pid, two admin connections (ctl and
 * ctl2, the barrier's two halves), its node id and its fd baseline.
 *
 * call(), hello() and status() return the reply's status (a negative errno);
 * the other helpers fail the running cmocka test on anything unexpected.
 * Replies land in the one reply buffer, rbuf. A suite keeps what is its own
 * (its messages, its bounds, its extra checks) in its own file. (test_proto
 * links the harness only for count_fds().)
 */
#ifndef SMARTIO_TESTS_CLUSTER_HARNESS_H
#define SMARTIO_TESTS_CLUSTER_HARNESS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "smartio/proto.h"

#define NHOSTS		3
#define IO_MS		5000      /* generous bound for one reply or close */
#define READY_MS	30000     /* daemon start-up (sanitizer builds are slow) */
#define EXIT_MS		10000

struct daemon {
	pid_t pid;
	int ctl;                  /* admin connection: table reads, the barrier */
	int ctl2;                 /* a second one: the barrier's other half */
	int fds;                  /* /proc/PID/fd count at the start of a test */
	uint32_t node_id;
};

struct cluster {
	const char *suite;        /* names the suite in messages */
	char dir[64];
	char smartiod[PATH_MAX];
	struct daemon d[NHOSTS];
};

extern struct cluster g;

/* One reply buffer; replies are at most SMIO_MAX_PAYLOAD. */
extern union rbuf {
	uint8_t b[SMIO_MAX_PAYLOAD];
	struct smio_status st;
	struct smio_hello_reply hr;
	struct smio_route_reply rr;
	struct smio_map_reply mr;
	struct smio_cfg cfg;
	struct smio_func_list fl;
	struct smio_ntb_info ni;
	struct smio_ntb_lut lut;
	struct smio_seg_info si;
	struct smio_seg_conn sc;
	struct smio_seg_state ss;
	struct smio_peer_seg ps;
	struct smio_peer_memfd pm;
	uint64_t align;
} rbuf;

/* ---------- calls (replies land in rbuf) ---------- */

/* One round trip; the reply's length to *rlen if rlen is not NULL. */
int call(int fd, uint16_t type, const void *req, uint32_t len, uint32_t *rlen);
/* One round trip; a descriptor in the reply goes to *rfd (closed if rfd is NULL). */
int call_fd(int fd, uint16_t type, const void *req, uint32_t len, int *rfd);
int hello(int fd, uint32_t role, uint32_t host);
int hello_version(int fd, uint32_t role, uint32_t host, uint32_t version);
/* STATUS; -EPROTO if the reply is not a struct smio_status. */
int status(int fd);
/* A connection to host's daemon, nothing sent yet. */
int raw_conn(uint32_t host);
/* A connection that said HELLO as role of as_host. */
int open_conn(uint32_t host, uint32_t role, uint32_t as_host);

/*
 * Through host's admin connection, an entry of its NTB 0's LUT programmed
 * onto dest_host's address dest_addr: the bus address of that window (the
 * entry to *entry).
 */
uint64_t lut_window(uint32_t host, uint32_t dest_host, uint64_t dest_addr, uint32_t *entry);
void lut_clear(uint32_t host, uint32_t entry);

/* ---------- cluster ---------- */

/* $SMARTIO_BUILD_DIR/rel (./build/rel without it); -ENOENT unless executable. */
int build_exe(char *out, size_t n, const char *rel);
/* Open descriptors of pid (/proc/PID/fd). */
int count_fds(pid_t pid);
/* Started, ready, its ctl and ctl2 connected and its node id known. */
void start_daemon(uint32_t host);
/* ctl and ctl2 closed, then sig (after SIGCONT) and a reap; the wait status. */
int stop_daemon(uint32_t host, int sig);
/* A clean stop (SIGTERM, exit status 0), then started again. */
void restart_daemon(uint32_t host);
/*
 * Every close made before this call (of a connection not busy with a
 * request) has been handled by host's daemon.
 */
void sync_host(uint32_t host);
/* A fresh client connection gets HELLO + STATUS answered by host's daemon. */
void assert_alive(uint32_t host);
/* Wait (bounded) until host's daemon counts base non-peer connections. */
void wait_clients(uint32_t host, unsigned base, int timeout_ms);
/* Remember each daemon's fd count, once the test holds only ctl and ctl2. */
void snapshot(void);
/* Each daemon alive, its fd count back where snapshot() saw it (bounded wait). */
void check_daemons(void);
/*
 * The cluster of suite (its name for messages and the directory
 * /tmp/smio-SUITE-XXXXXX), RLIMIT_NOFILE raised to nofile first (the
 * daemons inherit it; 0 leaves it); SIGPIPE ignored. 0 or -1 (said on stderr).
 */
int cluster_setup(const char *suite, rlim_t nofile);

/* ---------- cmocka fixtures ---------- */

/* The group's: every daemon stopped (SIGTERM), the directory removed; -1 unless each exited 0. */
int cluster_teardown(void **state);
/* Per test: snapshot() before, check_daemons() after. */
int cluster_test_setup(void **state);
int cluster_test_teardown(void **state);

#endif
