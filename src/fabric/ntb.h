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
 *
 * This is the hardware only: registers and tables, written as a driver writes
 * them. Which entries to use, window arithmetic, who holds a requester ID and
 * who hears of link changes and doorbells is the host OS's NTB driver
 * (src/host/ntb_drv.h), the only software that programs these tables.
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

/* A LUT destination that is not a host: the cluster switch's multicast range. */
#define NTB_DEST_MCAST 0xffffffffu

/* Receive side of multicast: group g's range mapped onto [base, base + size). */
struct ntb_mc_overlay {
	bool valid;
	uint64_t base;        /* local bus address */
	uint64_t size;
};

struct ntb_lut_entry {
	bool valid;
	uint32_t dest_host;   /* topology host id */
	uint64_t dest_addr;   /* bus address in the destination host; the translation
			       * uses only the bits above the window size */
};

/* What the adapter interrupts its driver for. */
enum ntb_irq {
	NTB_IRQ_LINK,         /* the link changed; value: 1 up, 0 down */
	NTB_IRQ_DB,           /* doorbell bits arrived; value: the unmasked bits */
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
	uint64_t link_downs;   /* link-down transitions (link errors) */
	uint64_t link_drops;   /* accesses dropped / read as all-ones for a down link
				* (fab_access; relaxed atomics: device threads count) */
	/* Multicast overlays, one per group of its switch (NULL: no multicast). */
	struct ntb_mc_overlay *mc_ovl;
	uint32_t nmc;
	/*
	 * The adapter's interrupt line to its driver (host/ntb_drv.c), raised
	 * after the state changed, on the thread that changed it (with the host
	 * lock held). NULL: no driver bound.
	 */
	void (*irq)(void *arg, enum ntb_irq what, uint32_t value);
	void *irq_arg;
};

int ntb_create(struct fab_host *h, struct fab_func *fn, const struct topo_ntb *t,
	       uint32_t index, struct fab_ntb **out);
void ntb_destroy(struct fab_ntb *ntb);

/* Hosts reachable over this NTB's cable (peer, or all on the cluster-switch fabric). */
bool ntb_can_reach(const struct fab_ntb *ntb, uint32_t dest_host_id);

/*
 * LUT registers: write entry idx (valid, overwriting what was there), or
 * invalidate it. -ERANGE bad index; clear: -ENOENT if it was not valid.
 */
int ntb_lut_set(struct fab_ntb *ntb, uint32_t idx, uint32_t dest_host, uint64_t dest_addr);
int ntb_lut_clear(struct fab_ntb *ntb, uint32_t idx);
uint32_t ntb_lut_used(const struct fab_ntb *ntb);

/* Requester-ID table: -EEXIST already present, -ENOSPC full (nothing changed). */
int ntb_rid_add(struct fab_ntb *ntb, uint16_t rid);
int ntb_rid_del(struct fab_ntb *ntb, uint16_t rid);      /* -ENOENT */
bool ntb_rid_allowed(const struct fab_ntb *ntb, uint16_t rid);
uint32_t ntb_rid_used(const struct fab_ntb *ntb);

/* Train or drop the external link (interrupts the driver when it changes). */
void ntb_set_link(struct fab_ntb *ntb, bool up);
/*
 * Doorbells and scratchpads on this adapter (the peer's side calls these on
 * arrival); arriving doorbell bits not masked interrupt the driver.
 */
int ntb_db_ring(struct fab_ntb *ntb, uint32_t bits);     /* -EINVAL bits beyond doorbells */
int ntb_spad_write(struct fab_ntb *ntb, uint32_t idx, uint32_t val);  /* -ERANGE */
int ntb_spad_read(const struct fab_ntb *ntb, uint32_t idx, uint32_t *val);

#endif
