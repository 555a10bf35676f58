/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, routes: ROUTE and MAP for applications, PEER_STEP
 * and PEER_INVALIDATE between daemons (a route crossing hosts).
 */
#ifndef SMARTIO_PROTO_ROUTE_H
#define SMARTIO_PROTO_ROUTE_H

#include <stdint.h>

#include "wire.h"

#define SMIO_MAX_HOPS     40

struct smio_route_req {
	uint16_t rid;              /* requester BDF (0 = CPU) */
	uint8_t write;             /* 0 read, 1 write */
	uint8_t nocache;           /* 1: bypass the route cache */
	uint32_t pad;
	uint64_t addr;
	uint64_t len;              /* 1 .. 2^40 */
};

struct smio_hop {
	uint8_t kind;
	uint8_t gen, width;
	uint8_t pad;
	uint16_t host;
	uint16_t bdf;
	uint32_t latency_ns;
	char name[36];
};

struct smio_target {
	uint8_t kind;
	uint8_t bar;
	uint16_t bdf;
	uint32_t host;
	uint32_t mem;
	uint32_t pad;
	uint64_t addr;
	uint64_t offset;
	uint64_t len;
};

/* A route step's or a full route's result. */
struct smio_route_reply {
	int32_t status;            /* enum fab_status */
	uint8_t cached;
	uint8_t forward;           /* PEER_STEP only: continue at next_* */
	uint8_t next_cz;           /* forward through a cZodiac IOPort: FAB_CZ_TO_OWNER/_TO_USER */
	uint8_t pad;
	char reason[120];
	struct smio_target tgt;
	uint32_t next_host;        /* forward */
	uint32_t next_ntb;
	uint64_t next_addr;
	uint64_t next_len;
	uint32_t ntb_hops;
	uint32_t nhops;            /* <= SMIO_MAX_HOPS */
	uint16_t next_rid;         /* next_cz == FAB_CZ_TO_USER: the remapped requester (UID) */
	uint16_t pad2[3];
	struct smio_hop hops[];
};

struct smio_map_reply {
	uint32_t host;             /* host owning the memory */
	uint32_t mem;
	uint64_t offset;           /* offset of the request address in the fd */
	uint64_t len;              /* contiguous bytes mapped */
	uint64_t fd_size;
	int32_t status;            /* enum fab_status of the route */
	uint32_t pad;
};

struct smio_step {
	uint32_t host;             /* host that should run the step (the receiver) */
	uint32_t ntb_index;        /* ingress NTB on the receiver */
	uint8_t write;
	uint8_t mcast;             /* a multicast write: addr is in the switch's multicast
				    * range, the ingress NTB's overlay translates it */
	uint8_t cz;                /* through a cZodiac IOPort: FAB_CZ_TO_OWNER / _TO_USER */
	uint8_t pad;
	uint32_t ntb_hops;         /* NTB hops so far */
	uint64_t addr;
	uint64_t len;
	uint16_t rid;              /* cz == FAB_CZ_TO_USER: the remapped requester (UID) */
	uint16_t pad2[3];
};

struct smio_invalidate {
	uint32_t origin_host;
	uint32_t link_gen;         /* the origin's NTB link changes so far (any value) */
	uint64_t epoch;
};

#endif
