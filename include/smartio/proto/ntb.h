/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, NTB adapters: NTB_* for the CLI and their arrival
 * side on the far host (PEER_DB, PEER_SPAD).
 */
#ifndef SMARTIO_PROTO_NTB_H
#define SMARTIO_PROTO_NTB_H

#include <stdint.h>

#include "wire.h"

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
