/* SPDX-License-Identifier: MIT */
/*
 * The daemon_load suite's tools on the cluster (tests/cluster_harness.h
 * starts it): the calls its cases share, latency samples with their
 * percentiles, the suite's bounds, and the probes that time what a
 * well-behaved application asks.
 */
#ifndef SMARTIO_TESTS_LOAD_CLUSTER_H
#define SMARTIO_TESTS_LOAD_CLUSTER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster_harness.h"
#include "daemon/core.h"
#include "fabric/route.h"
#include "smartio/proto.h"
#include "util/smio_time.h"

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

/* tools/smartio/smartio, for smartio exec (load_roles.c). */
extern char smartio_cli[PATH_MAX];

/* ---------- calls (replies land in rbuf) ---------- */

/* ROUTE of 64 bytes at addr; the reply's route status (rbuf.rr). */
int route(int fd, uint64_t addr, bool nocache);
/* An available segment of size bytes owned by connection fd; its id. */
uint32_t seg_new(int fd, uint64_t size);
/* SEG_CONNECT from fd to segid on owner through NTB 0 (rbuf.sc on success). */
int seg_connect(int fd, uint32_t owner, uint32_t segid);
int seg_disconnect(int fd, uint32_t conn);

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
