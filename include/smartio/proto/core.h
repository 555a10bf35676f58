/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, core messages: HELLO, STATUS, SHUTDOWN, the
 * cluster's hosts (NODE_LIST), the host's functions (FUNC_LIST) and their
 * configuration space (CFG_*).
 */
#ifndef SMARTIO_PROTO_CORE_H
#define SMARTIO_PROTO_CORE_H

#include <stdint.h>

#include "wire.h"

#define SMIO_MAX_FUNCS    256
#define SMIO_MAX_NODES    256            /* hosts of a cluster (NODE_LIST) */
#define SMIO_CFG_SPACE    4096           /* SMIO_CFG_DUMP reply length, cfg offsets below */

struct smio_hello {
	uint32_t role;             /* enum smio_role */
	uint32_t host;             /* peers: the sender's host id; others: the host they address */
	uint32_t pid;
	uint32_t version;          /* SMIO_VERSION */
};

struct smio_hello_reply {
	uint32_t host;
	uint32_t node_id;
	uint32_t version;
	uint32_t pad;
};

struct smio_status {
	uint32_t host;
	uint32_t node_id;
	uint32_t pid;
	uint32_t nfuncs;
	uint64_t ram_size;
	uint64_t uptime_ns;
	uint32_t iommu;            /* 0/1 */
	uint32_t nntbs;
	uint32_t nclients;
	uint32_t npeers;
	uint64_t route_hits, route_misses;
	uint64_t iommu_faults;
	uint64_t epoch;
	char name[SMIO_NAME_MAX];
};

/*
 * One host of the cluster as SISCI names it (NODE_LIST): what libsisci needs
 * to turn node IDs into hosts without reading the topology itself.
 */
struct smio_node {
	uint32_t host;             /* topology host id (SMARTIO_HOST), <= 65535 */
	uint32_t node_id;          /* SISCI node ID: a non-zero multiple of 4 */
	char name[SMIO_NAME_MAX];
};

struct smio_node_list {
	uint32_t n;                /* <= SMIO_MAX_NODES; payload = 8 + n * sizeof(node) */
	uint32_t pad;
	struct smio_node node[];
};

struct smio_func_info {
	uint16_t bdf;
	uint8_t kind;              /* enum fab_func_kind */
	uint8_t lendable;
	uint16_t parent_bdf;       /* 0xffff for bus-0 functions */
	uint16_t pad;
	char name[SMIO_NAME_MAX];
	char model[24];
};

struct smio_func_list {
	uint32_t n;                /* <= SMIO_MAX_FUNCS; payload = 8 + n * sizeof(info) */
	uint32_t pad;
	struct smio_func_info f[];
};

struct smio_bdf {
	uint16_t bdf;
	uint16_t pad;
};

/* SRIOV: a PF's SR-IOV state; set: enable numvfs VFs (0: disable them). */
struct smio_sriov_req {
	uint16_t bdf;              /* the PF */
	uint16_t numvfs;
	uint8_t set;               /* 0: only ask */
	uint8_t pad[3];
};

struct smio_sriov_state {
	uint16_t bdf;
	uint16_t total_vfs;
	uint16_t num_vfs;          /* enabled now */
	uint16_t vf_offset;        /* First VF Offset */
	uint16_t vf_stride;
	uint16_t vf_device;        /* VF Device ID */
	uint16_t vendor;           /* the PF's (and its VFs') */
	uint16_t pad;
};

struct smio_cfg {
	uint16_t bdf;
	uint16_t off;              /* < 4096, aligned to size */
	uint8_t size;              /* 1, 2 or 4 */
	uint8_t pad[3];
	uint32_t value;
};

#endif
