/* SPDX-License-Identifier: MIT */
/*
 * An NTB adapter (PXH830-like). To its host it is an endpoint with
 *  - BAR0: registers (link status, doorbells, scratchpads, MSI-X table);
 *  - BAR2: the look-up-table window BAR, split into lut_entries windows of
 *    bar_size / lut_entries bytes; entry i translates window i to an address
 *    in a remote host's bus address space.
 * Requests entering the NTB from its own side must come from a requester in
 * the requester-ID table (limited size); requests leaving on the far side are
 * issued with the far NTB's own requester ID.
 */
#ifndef SMARTIO_FABRIC_NTB_H
#define SMARTIO_FABRIC_NTB_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric.h"

#define NTB_BAR_REGS  0
#define NTB_BAR_LUT   2

/* BAR0 register layout (offsets in bytes). */
#define NTB_REG_ID         0x000  /* 'NTB1' */
#define NTB_REG_LINK       0x004  /* bit0 link up, bits 4..7 gen, 8..13 width */
#define NTB_REG_DB         0x010  /* doorbell: read pending bits, write 1 to clear */
#define NTB_REG_DB_SET     0x014  /* peer side rings by writing bits here */
#define NTB_REG_DB_MASK    0x018
#define NTB_REG_SPAD_CNT   0x01c
#define NTB_REG_SPAD       0x100  /* scratchpads, 4 bytes each, up to 64 */
#define NTB_REGS_SIZE      0x10000
#define NTB_MSIX_TABLE     0x8000
#define NTB_MSIX_PBA       0x9000
#define NTB_MAX_SPADS      64

struct ntb_lut_entry {
	bool valid;
	uint32_t dest_host;   /* topology host id */
	uint64_t dest_addr;   /* bus address in the destination host, window aligned */
};

struct fab_ntb {
	struct fab_func *fn;
	const struct topo_ntb *t;
	uint32_t index;        /* in host->ntbs */
	uint64_t win_size;
	uint32_t nlut;
	struct ntb_lut_entry *lut;
	uint32_t nrid;
	uint16_t *rid;         /* requester-ID table */
	bool *rid_valid;
	bool link_up;          /* state of the external link */
	uint32_t db_pending;
	uint32_t db_mask;
	uint32_t spad[NTB_MAX_SPADS];
	uint64_t db_rung;      /* statistics */
};

int ntb_create(struct fab_host *h, struct fab_func *fn, const struct topo_ntb *t,
	       uint32_t index, struct fab_ntb **out);
void ntb_destroy(struct fab_ntb *ntb);

/* Window size, window index of a BAR2 offset. */
static inline uint32_t ntb_window_of(const struct fab_ntb *ntb, uint64_t bar_off)
{
	return (uint32_t)(bar_off / ntb->win_size);
}

/* Hosts reachable over this NTB's cable (peer, or all on the cluster-switch fabric). */
bool ntb_can_reach(const struct fab_ntb *ntb, uint32_t dest_host_id);

/*
 * LUT: set entry idx (-ERANGE bad index, -EINVAL dest_addr not window aligned,
 * -EHOSTUNREACH host not reachable over this cable, -EBUSY entry in use).
 */
int ntb_lut_set(struct fab_ntb *ntb, uint32_t idx, uint32_t dest_host, uint64_t dest_addr);
int ntb_lut_clear(struct fab_ntb *ntb, uint32_t idx);    /* -ENOENT if not valid */
/* Allocate count consecutive free entries; -ENOSPC (nothing changed) if none. */
int ntb_lut_alloc(struct fab_ntb *ntb, uint32_t count, uint32_t dest_host,
		  uint64_t dest_addr, uint32_t *first);
uint32_t ntb_lut_used(const struct fab_ntb *ntb);

/* Requester-ID table: -EEXIST already present, -ENOSPC full (nothing changed). */
int ntb_rid_add(struct fab_ntb *ntb, uint16_t rid);
int ntb_rid_del(struct fab_ntb *ntb, uint16_t rid);      /* -ENOENT */
bool ntb_rid_allowed(const struct fab_ntb *ntb, uint16_t rid);
uint32_t ntb_rid_used(const struct fab_ntb *ntb);

void ntb_set_link(struct fab_ntb *ntb, bool up);
/* Doorbells and scratchpads on this adapter (the peer's side calls these on arrival). */
int ntb_db_ring(struct fab_ntb *ntb, uint32_t bits);     /* -EINVAL bits beyond doorbells */
int ntb_spad_write(struct fab_ntb *ntb, uint32_t idx, uint32_t val);  /* -ERANGE */
int ntb_spad_read(const struct fab_ntb *ntb, uint32_t idx, uint32_t *val);

#endif
