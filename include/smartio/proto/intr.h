/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, SISCI interrupts and data interrupts (NTB doorbells
 * and message registers): INTR_*, PEER_INTR_*.
 */
#ifndef SMARTIO_PROTO_INTR_H
#define SMARTIO_PROTO_INTR_H

#include <stdint.h>

#include "wire.h"

#define SMIO_INTNO_AUTO     0xffffffffu   /* INTR_CREATE: the daemon picks a free number */
#define SMIO_INTR_MAX_DATA  4096u         /* longest data-interrupt message */
#define SMIO_INTR_QUEUE     16u           /* messages a data interrupt queues before -EAGAIN */

struct smio_intr_create {
	uint32_t intno;            /* SMIO_INTNO_AUTO: pick one; else this (fixed) number */
	uint32_t data;             /* 0: plain interrupt, 1: data interrupt */
};

/* Reply to INTR_CREATE; the interrupt's eventfd travels with it. */
struct smio_intr_info {
	uint32_t intno;            /* never SMIO_INTNO_AUTO */
	uint32_t data;             /* 0/1 */
};

/* An interrupt of this host: INTR_REMOVE, INTR_RECEIVE, PEER_INTR_LOOKUP. */
struct smio_intr_id {
	uint32_t intno;            /* never SMIO_INTNO_AUTO */
	uint32_t data;             /* 0/1; 1 for INTR_RECEIVE */
};

struct smio_intr_connect {
	uint32_t node_id;          /* SISCI node id of the owning host */
	uint32_t intno;            /* never SMIO_INTNO_AUTO */
	uint32_t adapter;          /* local adapter: NTB index on this host */
	uint32_t data;             /* 0/1 */
};

struct smio_intr_conn {
	uint32_t handle;           /* for INTR_TRIGGER / INTR_DISCONNECT; never 0 */
	uint32_t host;             /* owning host id */
};

struct smio_intr_conn_ref {
	uint32_t handle;
	uint32_t pad;
};

/* INTR_TRIGGER: len message bytes follow (0 for a plain interrupt). */
struct smio_intr_trigger {
	uint32_t handle;
	uint32_t len;              /* <= SMIO_INTR_MAX_DATA; payload = 8 + len */
	uint8_t data[];
};

/* INTR_RECEIVE reply: the oldest queued message. */
struct smio_intr_data {
	uint32_t intno;
	uint32_t len;              /* <= SMIO_INTR_MAX_DATA; payload = 8 + len */
	uint8_t data[];
};

/* Owner -> importer: what a trigger must name (serial changes with every creation). */
struct smio_peer_intr {
	uint32_t intno;
	uint32_t serial;           /* never 0 */
	uint32_t data;             /* 0/1 */
	uint32_t pad;
};

/* Importer -> owner: the doorbell (and message registers for data interrupts). */
struct smio_peer_intr_fire {
	uint32_t intno;
	uint32_t serial;           /* as PEER_INTR_LOOKUP returned it; never 0 */
	uint32_t data;             /* 0/1; a plain interrupt carries no message */
	uint32_t len;              /* <= SMIO_INTR_MAX_DATA; payload = 16 + len */
	uint8_t payload[];
};

#endif
