/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, NTB adapters: NTB_* for the CLI and their arrival
 * side on the far host (PEER_DB, PEER_SPAD); a host's adapters as SISCI sees
 * them (ADAPTER_INFO, PROBE_NODE).
 */
#ifndef SMARTIO_PROTO_NTB_H
#define SMARTIO_PROTO_NTB_H

#include <stdint.h>

#include "wire.h"

#define SMIO_MAX_ADAPTERS 256            /* NTB adapters of one host (ADAPTER_INFO) */
#define SMIO_HOST_NONE    UINT32_MAX     /* smio_adapter.peer_host: no single far host */

/* What an adapter's cable reaches (smio_ntb_info.peer_kind, smio_adapter.peer_kind). */
enum smio_peer_kind {
	SMIO_PEER_NONE = 0,        /* no cable */
	SMIO_PEER_NTB = 1,         /* back-to-back to another host's NTB */
	SMIO_PEER_CSWITCH = 2,     /* a cluster switch: every host on its fabric */
};

struct smio_ntb_ref {
	uint32_t ntb;              /* index in the host's NTB list */
	uint32_t pad;
};

struct smio_ntb_info {
	uint32_t ntb;
	uint16_t bdf;
	uint8_t link_up;
	uint8_t peer_kind;
	uint64_t bar_addr;         /* BAR2 bus address */
	uint64_t bar_size;
	uint64_t win_size;
	uint32_t lut_entries, lut_used;
	uint32_t rid_entries, rid_used;
	uint32_t doorbells, scratchpads;
	uint32_t db_pending;
	uint32_t dma_channels;
	char name[SMIO_NAME_MAX];
};

/* One adapter of the host (ADAPTER_INFO): its index is SISCI's adapter number. */
struct smio_adapter {
	uint32_t ntb;              /* == its position in the list */
	uint16_t bdf;
	uint8_t link_up;           /* 0/1 when the reply was made (NTB_INFO for the live state) */
	uint8_t peer_kind;         /* enum smio_peer_kind */
	uint32_t peer_host;        /* SMIO_PEER_NTB: the far host's id; else SMIO_HOST_NONE */
	uint8_t link_gen;          /* the cable: PCIe generation 1..5 */
	uint8_t link_width;        /* lanes: 1, 2, 4, 8, 16 or 32 */
	uint16_t pad;
};

struct smio_adapter_list {
	uint32_t n;                /* <= SMIO_MAX_ADAPTERS; payload = 8 + n * sizeof(adapter) */
	uint32_t pad;
	struct smio_adapter a[];
};

/* PROBE_NODE: does node node_id answer over adapter? (reply empty: yes) */
struct smio_probe_node {
	uint32_t adapter;
	uint32_t node_id;
};

struct smio_ntb_lut {
	uint32_t ntb;
	uint32_t entry;            /* UINT32_MAX with LUT_SET: allocate the first free */
	uint32_t dest_host;
	uint32_t pad;
	uint64_t dest_addr;
};

struct smio_ntb_rid {
	uint32_t ntb;
	uint16_t rid;
	uint16_t pad;
};

struct smio_ntb_link {
	uint32_t ntb;
	uint32_t up;               /* 0/1 */
};

struct smio_ntb_db {
	uint32_t ntb;
	uint32_t bits;
};

struct smio_ntb_spad {
	uint32_t ntb;
	uint32_t idx;
	uint32_t write;            /* 0: read, 1: write value */
	uint32_t value;
};

#endif
