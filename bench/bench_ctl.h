/* SPDX-License-Identifier: MIT */
/*
 * bench_ctl: the control-plane load generator (bench/control-plane drives it).
 * Shared between the driver (bench_ctl.c: threads, phases, statistics, output)
 * and the operations (bench_ctl_ops.c: what one client sends for one op).
 */
#ifndef BENCH_CTL_H
#define BENCH_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "smartio/proto.h"

/* The op kinds a phase runs; the mix phase cycles through all of them. */
enum ctl_op { OP_ROUTE, OP_LSPCI, OP_SEG, OP_BORROW, OP_NKINDS };

/* One timed interval: an op (what = enum ctl_op) or one wire call (what = type). */
struct ctl_rec {
	uint64_t t0, t1;           /* CLOCK_MONOTONIC ns */
	uint16_t what;
};

struct ctl_recs {
	struct ctl_rec *r;
	size_t n, cap;
};

/* What every client shares, fixed before the threads start. */
struct ctl_cfg {
	const char *dir;           /* cluster directory */
	bool route_cached;         /* ROUTE through the daemon's route cache */
	uint64_t seg_size;         /* bytes of each benchmark segment */
	int timeout_ms;            /* bound of one wire call */
};

/* A route target: a segment on the partner host, connected from the home host. */
struct ctl_target {
	uint32_t home, partner;
	int fd_owner, fd_importer; /* kept open so segment and connection stay */
	uint64_t addr, size;       /* where the home CPU sees the segment */
};

struct ctl_client {
	const struct ctl_cfg *cfg;
	unsigned idx;
	uint32_t home, partner;    /* host ids: home is where it "runs" */
	uint32_t partner_node;     /* SISCI node id of partner (from its HELLO reply) */
	int fd_home, fd_partner;   /* CLIENT connections, one per host */
	const struct ctl_target *tgt;
	uint64_t iter;
	void *buf;                 /* SMIO_MAX_PAYLOAD reply buffer */
	struct ctl_recs ops, calls;
	unsigned nerr;
	char err[200];             /* the first error, for the report */
};

/* CLIENT connection to host (HELLO with host = that host); fd or -errno. */
int ctl_connect(const struct ctl_cfg *cfg, uint32_t host, uint32_t *node_id);
/* One route target: home's CPU -> its NTB -> a segment in partner's RAM. */
int ctl_target_setup(const struct ctl_cfg *cfg, struct ctl_target *t, char *err, size_t len);
void ctl_target_close(struct ctl_target *t);

/* Run one op of kind k; 0 or -errno (the reason is in c->err if first). */
int ctl_op_run(struct ctl_client *c, enum ctl_op k);

uint64_t ctl_now_ns(void);
int ctl_recs_add(struct ctl_recs *rs, uint64_t t0, uint64_t t1, uint16_t what);
/* Note an error (the first one's text is kept). Returns rc. */
int ctl_fail(struct ctl_client *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
