/* SPDX-License-Identifier: MIT */
/*
 * The host OS's NTB driver, shaped like Linux's include/linux/ntb.h: one
 * instance (struct ntb_drv) per NTB adapter of a host, bound at NTB bring-up
 * (host_ntb_init), and the only software that programs the adapters' tables
 * (src/fabric/ntb.h is the hardware):
 *
 *  - memory windows: ntb_mw_map finds consecutive free look-up-table entries
 *    for a destination range, all or nothing, and says which local bus
 *    address reaches it. All window arithmetic lives here. Entries carry the
 *    mapping that owns them, so an unmap never clears what someone else
 *    programmed since.
 *  - requester IDs with reference counts: the first ntb_rid_get adds the ID to
 *    the adapter's table, the last ntb_rid_put deletes it, so services that
 *    admit the same requester cannot delete each other's entries.
 *  - events: clients (the SISCI service, Device Lending, the DMA engines)
 *    register callbacks for link changes and arriving doorbells; the adapter
 *    interrupts its driver, which tells every client.
 *  - the IOMMU domain of the host's NTBs (ntb_iommu.c): requests arriving
 *    through any NTB carry that NTB's requester ID; whatever is exposed
 *    through the NTBs is identity-mapped in one domain they share.
 *
 * The admin path (smartio ntb lut/rid) goes through the driver too: it sets
 * and clears single entries and holds requester IDs as one more holder.
 *
 * Locking: every call with the host lock held; callbacks run with it held,
 * on the thread that changed the state, and must not wait.
 */
#ifndef SMARTIO_HOST_NTB_DRV_H
#define SMARTIO_HOST_NTB_DRV_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"

struct ntb_drv;

#define NTB_MW_ANY UINT32_MAX      /* ntb_mw_set: the first free entry */

/*
 * A memory-window mapping: LUT entries [first, first + count) translate to
 * dest_host's [dest_addr rounded down to a window, ...). The caller keeps it
 * and hands it back to ntb_mw_unmap.
 */
struct ntb_mw {
	uint32_t first, count;     /* count 0: nothing mapped */
	uint64_t bus;              /* local bus address reaching dest_addr */
	uint64_t size;             /* bytes mapped from bus (what was asked) */
	uint64_t offset;           /* of dest_addr in the first window: bus - run_bus */
	uint64_t run_bus, run_size;  /* the whole windows, in the adapter's LUT BAR */
	uint32_t dest_host;
	uint64_t dest_addr;
	uint64_t tag;              /* the driver's: which mapping owns the entries */
};

/* ---------- instances ---------- */

/*
 * Bring-up: bind a driver to every NTB adapter of h, each admitting the CPU
 * (00:00.0) to its adapter's requester-ID table. -EEXIST already bound,
 * -ENOSPC a requester-ID table with no room for the CPU, -ENOMEM. The
 * drivers are released with the host (fab_host_destroy).
 */
int ntb_drv_probe(struct fab_host *h);
/* The driver of h's adapter idx; NULL before bring-up or no such adapter. */
struct ntb_drv *ntb_drv_of(struct fab_host *h, uint32_t idx);
/* The first adapter whose link is up, whose cable reaches host dest and whose LUT BAR decodes. */
struct ntb_drv *ntb_drv_to(struct fab_host *h, uint32_t dest);
/*
 * h's adapter on the same fabric as adapter via_ntb of host via_host (the
 * path a borrower chose): the adapter whose cable path to via_host ends at
 * via_ntb; via_host == h itself: h's adapter via_ntb. NULL when none. The
 * link may be down (the mapping then fails as PCIe does until it is up).
 */
struct ntb_drv *ntb_drv_via(struct fab_host *h, uint32_t via_host, uint32_t via_ntb);
struct fab_ntb *ntb_drv_hw(const struct ntb_drv *ntb);
uint32_t ntb_drv_index(const struct ntb_drv *ntb);      /* in h->ntbs */
bool ntb_drv_link_up(const struct ntb_drv *ntb);

/* ---------- memory windows ---------- */

/* Bytes one LUT entry translates. */
uint64_t ntb_mw_window(const struct ntb_drv *ntb);
/*
 * Can a window of ntb lead to host dest at all: 0, -EHOSTUNREACH (not over
 * this cable, or dest is this host), -ENODEV (the LUT BAR is unassigned or
 * not decoding: no bus address to give).
 */
int ntb_mw_reachable(const struct ntb_drv *ntb, uint32_t dest_host);
/*
 * Map [dest_addr, dest_addr + size) of dest_host: as many consecutive free
 * entries as the range spans from its window-aligned start, all or nothing.
 * -EINVAL size 0; -ERANGE the range wraps past the end of the address space;
 * -EHOSTUNREACH, -ENODEV as ntb_mw_reachable; -ENOSPC no run of enough
 * consecutive free entries (also when the range spans more windows than the
 * table has). On failure nothing is programmed and *mw is zeroed.
 */
int ntb_mw_map(struct ntb_drv *ntb, uint32_t dest_host, uint64_t dest_addr, uint64_t size,
	       struct ntb_mw *mw);
/* Clear mw's entries that are still its own; mw->count becomes 0. */
void ntb_mw_unmap(struct ntb_drv *ntb, struct ntb_mw *mw);

/*
 * Admin: program one whole window, entry *entry (NTB_MW_ANY: the first free
 * one; *entry says which). -ERANGE no such entry, -EINVAL dest_addr not
 * window aligned, -EHOSTUNREACH, -EBUSY the entry is programmed, -ENOSPC
 * (NTB_MW_ANY) none free.
 */
int ntb_mw_set(struct ntb_drv *ntb, uint32_t *entry, uint32_t dest_host, uint64_t dest_addr);
/*
 * Admin: clear one entry. -ERANGE, -ENOENT not programmed, -EBUSY it belongs
 * to a mapping (a segment connection, a lent device...), which clears it.
 */
int ntb_mw_clear(struct ntb_drv *ntb, uint32_t entry);

/* ---------- requester IDs ---------- */

/* One more holder of rid: added to the table on the first. -ENOSPC table full, -ENOMEM. */
int ntb_rid_get(struct ntb_drv *ntb, uint16_t rid);
/* One holder less: deleted from the table with the last. -ENOENT not held. */
int ntb_rid_put(struct ntb_drv *ntb, uint16_t rid);
/* Holders of rid (0: none). */
uint32_t ntb_rid_refs(const struct ntb_drv *ntb, uint16_t rid);
/*
 * Admin: the admin holds at most one reference per ID. Add: -EEXIST it holds
 * one already, else as ntb_rid_get. Delete: its reference goes; -EBUSY the
 * admin holds none but others do (the entry stays theirs), -ENOENT nobody does.
 */
int ntb_rid_admin_add(struct ntb_drv *ntb, uint16_t rid);
int ntb_rid_admin_del(struct ntb_drv *ntb, uint16_t rid);

/* ---------- events ---------- */

struct ntb_client_ops {
	/* The adapter's link went up or down. May be NULL. */
	void (*link_event)(void *ctx, struct ntb_drv *ntb, bool up);
	/* Doorbell bits arrived from the far side (pending until cleared). May be NULL. */
	void (*db_event)(void *ctx, struct ntb_drv *ntb, uint32_t bits);
};

/*
 * Events of ntb go to (ops, ctx) from now on, in registration order.
 * -EEXIST registered already, -EINVAL no ops, -ENOMEM. A callback may
 * unregister any client (itself too); one registered during delivery hears
 * the next event.
 */
int ntb_drv_register_client(struct ntb_drv *ntb, const struct ntb_client_ops *ops, void *ctx);
int ntb_drv_unregister_client(struct ntb_drv *ntb, const struct ntb_client_ops *ops,
			      void *ctx);                          /* -ENOENT */
unsigned ntb_drv_clients(const struct ntb_drv *ntb);

/* ---------- the NTBs' IOMMU domain (ntb_iommu.c) ---------- */

/*
 * The domain shared by h's NTBs, allocated and their requester IDs attached
 * on first use (an NTB attached elsewhere keeps that domain, and the first
 * such one is used). 0 with the IOMMU off; -ENODEV before bring-up; -errno.
 */
int ntb_iommu_domain(struct fab_host *h);
/*
 * Make [addr, addr + size) of h (RAM or a BAR; 4 KiB aligned) reachable by
 * requests arriving through its NTBs: identity-mapped in their domain,
 * counted per exact range, so that services exposing the same range share
 * it. With the IOMMU off: nothing to do, 0. -EEXIST another range overlaps.
 */
int ntb_iommu_expose(struct fab_host *h, uint64_t addr, uint64_t size);
/* One exposure less; unmapped with the last. -ENOENT not exposed (IOMMU on). */
int ntb_iommu_unexpose(struct fab_host *h, uint64_t addr, uint64_t size);

#endif
