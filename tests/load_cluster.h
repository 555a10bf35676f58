/* SPDX-License-Identifier: MIT */
/*
 * The daemon_load suite's cluster and measuring tools: a real 3-host
 * cluster (the built-in default topology) started from
 * $SMARTIO_BUILD_DIR/src/daemon/smartiod with ready pipes, the way
 * tests/test_daemon.c starts it; calls with one reply buffer; a barrier per
 * daemon; latency samples with their percentiles, the suite's bounds, and
 * the probes that time what a well-behaved application asks.
 *
 * The cluster directory is made searchable by everyone (0755) so that a
 * process running as another user can reach the daemons' sockets (0666).
 */
#ifndef SMARTIO_TESTS_LOAD_CLUSTER_H
#define SMARTIO_TESTS_LOAD_CLUSTER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "daemon/core.h"
#include "fabric/route.h"
#include "smartio/proto.h"
#include "util/smio_time.h"

#define NHOSTS		3
#define IO_MS		5000      /* generous bound for one reply or close */
#define READY_MS	30000     /* daemon start-up (sanitizer builds are slow) */
#define EXIT_MS		10000

/*
 * Sanitizer builds (the test and the daemons are built alike) run several
 * times slower; latency bounds are multiplied by this.
 */
#if defined(__SANITIZE_THREAD__)
#define LOAD_SCALE 8
#elif defined(__SANITIZE_ADDRESS__)
#define LOAD_SCALE 4
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOAD_SCALE 8
#elif __has_feature(address_sanitizer)
#define LOAD_SCALE 4
#endif
#endif
#ifndef LOAD_SCALE
#define LOAD_SCALE 1
#endif

struct daemon {
	pid_t pid;
	int ctl;                  /* admin connection: table reads, barrier */
	int ctl2;                 /* a second one: the barrier's other half */
	int fds;                  /* /proc/PID/fd count at the start of a test */
	uint32_t node_id;
};

struct cluster {
	char dir[64];
	char smartiod[PATH_MAX];
	char cli[PATH_MAX];       /* tools/smartio/smartio */
	struct daemon d[NHOSTS];
};

extern struct cluster g;

/* One reply buffer; replies are at most SMIO_MAX_PAYLOAD. */
extern union rbuf {
	uint8_t b[SMIO_MAX_PAYLOAD];
	struct smio_status st;
	struct smio_route_reply rr;
	struct smio_ntb_info ni;
	struct smio_ntb_lut lut;
	struct smio_hello_reply hr;
	struct smio_seg_info si;
	struct smio_seg_conn sc;
	struct smio_func_list fl;
	uint64_t align;
} rbuf;

/* ---------- calls (replies land in rbuf) ---------- */

int call(int fd, uint16_t type, const void *req, uint32_t len, uint32_t *rlen);
int hello(int fd, uint32_t role, uint32_t host);
int status(int fd);
int raw_conn(uint32_t host);                       /* connected, nothing sent */
int open_conn(uint32_t host, uint32_t role, uint32_t as_host);
/* ROUTE of 64 bytes at addr; the reply's route status (rbuf.rr). */
int route(int fd, uint64_t addr, bool nocache);
/* The bus address of host's NTB 0 LUT window programmed to dest_host's addr. */
uint64_t lut_window(uint32_t host, uint32_t dest_host, uint64_t dest_addr, uint32_t *entry);
void lut_clear(uint32_t host, uint32_t entry);
/* An available segment of size bytes owned by connection fd; its id. */
uint32_t seg_new(int fd, uint64_t size);
/* SEG_CONNECT from fd to segid on owner through NTB 0 (rbuf.sc on success). */
int seg_connect(int fd, uint32_t owner, uint32_t segid);
int seg_disconnect(int fd, uint32_t conn);

/* ---------- cluster ---------- */

int count_fds(pid_t pid);
void start_daemon(uint32_t host);
int stop_daemon(uint32_t host, int sig);           /* wait status */
void restart_daemon(uint32_t host);                /* clean stop, start again */
/*
 * Every close made before this call (of a connection not busy with a
 * request) has been handled by host's daemon.
 */
void sync_host(uint32_t host);
/* A fresh client connection gets HELLO + STATUS answered by host's daemon. */
void assert_alive(uint32_t host);
/* Remember each daemon's fd count; the test holds only ctl and ctl2. */
void snapshot(void);
/* Each daemon alive, its fd count back where snapshot() saw it (bounded wait). */
void check_daemons(void);
/* Wait (bounded) until host's daemon counts base non-peer connections. */
void wait_clients(uint32_t host, unsigned base, int timeout_ms);
int cluster_setup(rlim_t nofile);
int cluster_teardown(void);

/* ---------- latency samples ---------- */

struct lat {
	const char *name;
	unsigned n, cap;
	uint64_t *ns;
};

void lat_init(struct lat *l, const char *name, unsigned cap);
void lat_add(struct lat *l, uint64_t ns);
uint64_t lat_max(const struct lat *l);
uint64_t lat_pct(const struct lat *l, unsigned pct);     /* nearest rank */
/* "[   INFO   ] name: n=.. p50=..ms p99=..ms max=..ms" */
void lat_print(const struct lat *l);
/* Fail unless the 99th percentile and the maximum are below their bounds. */
void lat_check(const struct lat *l, unsigned p99_ms, unsigned max_ms);
void lat_free(struct lat *l);

#define MS(ns) ((double)(ns) / 1e6)

/* ---------- bounds ---------- */

/*
 * What a request that does not need the misbehaving party may take, loaded or
 * not: its 99th percentile stays below FAST_MS and its maximum below
 * STALL_MS. The two bounds because the machine is shared: with a load
 * average of 10 on 2 vCPUs, scheduling alone gave single samples of 60 ms
 * (one ROUTE of 1,207). A request that waited for the misbehaver instead
 * takes SMD_PEER_TIMEOUT (3 s) or SMD_SEND_TIMEOUT (5 s): far above both.
 */
#define FAST_MS		(50 * LOAD_SCALE)
#define STALL_MS	(250 * LOAD_SCALE)
/*
 * Beyond SMD_PEER_TIMEOUT, for a request that needs a stopped peer: the
 * daemon's timer is exact (3.0 s measured, ASan too); only the turn-around
 * is slower under sanitizers. Below SMD_PEER_TIMEOUT in every build, so a
 * second timeout served after the first is told apart.
 */
#define TIMEOUT_MARGIN_MS	(1000 + 250 * (LOAD_SCALE - 1))

#define TIMED(l, expr) do {                                             \
		uint64_t t0_ = smio_now_ns();                           \
		expr;                                                   \
		lat_add((l), smio_now_ns() - t0_);                      \
	} while (0)

/* ---------- probes: what a well-behaved application asks ---------- */

struct probe {
	struct lat conn;          /* connect + HELLO */
	struct lat status;
	struct lat lspci;         /* each FUNC_LIST and CFG_DUMP */
};

/* What `smartio lspci` asks: FUNC_LIST, then CFG_DUMP of every function. */
void lspci(int fd, struct lat *l);
void probe_init(struct probe *p, const char *what);
/* A new application on host: HELLO, STATUS, lspci; each request timed. */
void probe_round(uint32_t host, struct probe *p);
void probe_print(const struct probe *p);
/* p99 under FAST_MS, max under STALL_MS, for each kind. */
void probe_check(const struct probe *p);
void probe_free(struct probe *p);

#endif
