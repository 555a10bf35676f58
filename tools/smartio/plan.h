/* SPDX-License-Identifier: MIT */
/*
 * smartio plan: rank compositions of the device pool for a workload with the
 * timing model (docs/cli.md "plan", docs/timing-model.md "How plans are
 * priced"). plan.c is the command and its output, plan_price.c the
 * candidates, routes, prices and ranking.
 */
#ifndef SMARTIO_CLI_PLAN_H
#define SMARTIO_CLI_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "smartio/timing.h"
#include "smartio/topology.h"

#define PLAN_MAX_NEED   4
#define PLAN_MAX_CANDS  48
#define PLAN_MAX_PLANS  512
#define PLAN_BN_MAX     96

enum plan_class { PLAN_NVME, PLAN_ACCEL, PLAN_NCLASS };
enum plan_work { PLAN_P2P_READ, PLAN_P2P_WRITE, PLAN_NVME_QD1, PLAN_BANDWIDTH, PLAN_NWORK };

extern const char *const plan_class_names[PLAN_NCLASS];   /* "nvme", "accel" */
extern const char *const plan_work_names[PLAN_NWORK];

/* A device the host could use. */
struct plan_cand {
	uint32_t fdid, lender;        /* lender: host id */
	uint16_t bdf;
	int cls;                      /* enum plan_class */
	bool own;                     /* the host's own device */
	bool borrowed;                /* already borrowed by the host */
	char name[TOPO_NAME_MAX];
	char lender_name[TOPO_NAME_MAX];
};

/* A device left out, and why. */
struct plan_excl {
	uint32_t fdid, lender;
	char name[TOPO_NAME_MAX];
	char why[48];
};

struct plan {
	unsigned dev[PLAN_MAX_NEED];  /* candidate indexes, in --need order */
	double latency_ns;            /* what the workload waits for (see plan_price.c) */
	double bw_gbs;
	char bottleneck[PLAN_BN_MAX]; /* "lender-a.ntb0 -> mxs0 (Gen3 x8)" */
	char why[48];                 /* what limits it: "link bytes", "latency", ... */
	unsigned nhops, ntbs, iommus, switches, roots;
	char path[400];               /* the route of the deciding transfer, in words */
	/* ranking: k1 then k2 ascending, then pref (already borrowed, own) descending */
	double k1, k2;
	int pref;
};

struct plan_req {
	uint32_t host;
	int need[PLAN_MAX_NEED];
	unsigned nneed;
	int work;
	uint64_t size;                /* large transfers: p2p and bandwidth */
	const char *dir;              /* cluster directory */
	const struct timing_params *p;
};

struct plan_result {
	struct plan_cand cand[PLAN_MAX_CANDS];
	unsigned ncand;
	struct plan_excl excl[PLAN_MAX_CANDS];
	unsigned nexcl;
	struct plan *plans;           /* ranked, best first (malloc'd) */
	unsigned nplans;
	char host_name[TOPO_NAME_MAX];
};

/*
 * Ask host's daemon for the pool, price every composition, rank them.
 * 0 (nplans may be 0), 1 a failure that was said, or -ENOMEM.
 */
int plan_run(const struct plan_req *q, struct plan_result *res);
void plan_result_free(struct plan_result *res);

/* Parse names; -1 if unknown. */
int plan_class_parse(const char *s);
int plan_work_parse(const char *s);


#endif
