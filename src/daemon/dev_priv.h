/* SPDX-License-Identifier: MIT */
/*
 * The daemon's SmartIO device service: the tables shared by its lender side
 * (h_device.c) and its borrower side (h_device_brw.c). See h_device.c.
 */
#ifndef SMARTIO_DAEMON_DEV_PRIV_H
#define SMARTIO_DAEMON_DEV_PRIV_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "daemon.h"
#include "util/vec.h"
#include "host/ntb_drv.h"

#define PAGE          SMIO_SEG_PAGE

/* Lender: one borrow of one of our devices. */
struct lend {
	uint32_t ref;             /* never 0 */
	uint32_t holder;          /* connection id it belongs to */
	uint16_t bdf;
	bool exclusive;
	/*
	 * lease: Device Lending's exclusive borrow (h_lend.c), the device's
	 * driver runs at the borrowing host. guest: a shared SISCI borrow made
	 * while a lease holds the device: it may connect the device's memory
	 * (prefetchable) BARs only, never its registers, and may not make the
	 * device DMA (the lease's driver owns it).
	 */
	bool lease, guest;
};

/* Lender: a window our NTB (or IOMMU) opens for a borrowed device. */
struct dmap {
	uint32_t id;              /* never 0 */
	uint32_t holder, ref;     /* the borrow it was made for */
	uint16_t bdf;
	struct ntb_drv *ntb;      /* NULL: memory of this host, no window */
	struct ntb_mw mw;         /* the window; a reference to bdf in ntb's RID table */
	uint32_t dom;             /* IOMMU domain mapped in (0: none) */
	uint64_t iova, iosize;
};

/* Lender: a device we gave an IOMMU domain to (it had none). */
struct ddom {
	uint16_t bdf;
	uint32_t dom;
};

/* Lender: a BAR of a lent device exposed to our NTBs (IOMMU on). */
struct bexp {
	uint16_t bdf;
	uint8_t bar;
	uint64_t addr, size;
};

/* Borrower: a process's borrow. */
struct brw {
	uint32_t handle;          /* never 0 */
	uint32_t cid;
	uint32_t host;            /* lender */
	uint32_t ref;             /* the lender's borrow reference */
	uint32_t fdid;
	uint16_t bdf;
	bool exclusive;
};

/* Borrower: a process's device-side mapping. */
struct bmap {
	uint32_t handle;          /* never 0 */
	uint32_t cid, borrow;
	uint32_t host, lref;      /* lender and its borrow reference */
	uint32_t lmap;            /* the lender's mapping id */
	uint16_t bdf;
	bool local;               /* a local segment (segid, segref) or a connection (conn) */
	bool mcast;               /* conn is a multicast group's window (h_mcast.c): no pin */
	uint32_t segid, segref, conn;
	uint32_t owner;           /* conn: the client connection that made it (may not be cid) */
};

/*
 * Lender: a device segment in a lent device's namespace (bdf, devsegid). It
 * belongs to the borrow that created it (holder, lref) and goes with it;
 * owned: the memory is ours (lender RAM, a segment owned by holder), else it
 * is segment segid of host (the creating borrower's RAM).
 */
struct dent {
	uint16_t bdf;
	bool owned;
	uint32_t devsegid, memtype;
	uint32_t holder, lref;
	uint32_t chost, ccid;     /* the creating process: its host and connection there */
	uint32_t host, segid;
	uint64_t size;
	uint64_t io;              /* owned, in the device's memory BAR: its bus address (else 0) */
};

/* Borrower: a device segment placed in our RAM for a process's borrow. */
struct bseg {
	uint32_t borrow, cid, segid;
};

#define VEC(T, name) T *name; unsigned n##name, cap##name

struct smd_devs {
	VEC(struct lend, lends);
	VEC(struct dmap, dmaps);
	VEC(struct ddom, ddoms);
	VEC(struct bexp, bexps);
	VEC(struct brw, brws);
	VEC(struct bmap, bmaps);
	VEC(struct dent, dents);
	VEC(struct bseg, bsegs);
	uint32_t next_id;
	struct rid_reg {             /* requester IDs processes registered */
		uint32_t cid, ntb;
		uint16_t rid;
	} rids[64];
	unsigned nrids;
};

#define RESERVE(s, name) smio_vec_reserve((void **)&(s)->name, (s)->n##name, \
					  &(s)->cap##name, sizeof(*(s)->name))

/* Borrower side (h_device_brw.c): c's borrow handle (-ENOENT, -EPERM another's). */
struct brw *smd_devs_brw_get(struct smd_devs *s, const struct smd_conn *c, uint32_t handle,
			     int *rc);

/* Lender side (h_device.c), for the borrower side's own devices and PEER_DEV_*. */
uint32_t smd_devs_new_id(struct smd_devs *s);
int smd_devs_local_list(struct smd *d, struct smio_dev_list *o, uint32_t cap, uint32_t *outlen);
int smd_devs_lend_borrow(struct smd *d, uint32_t holder, uint16_t bdf, uint32_t flags,
			 uint32_t *ref);
int smd_devs_lend_map(struct smd *d, uint32_t holder, uint32_t rhost,
		      struct smio_peer_dev_map *m);
int smd_devs_lend_unmap(struct smd *d, uint32_t holder, const struct smio_peer_dev_map *m);
void smd_devs_lend_drop(struct smd *d, struct lend *l);
void smd_devs_lend_mark_lease(struct smd *d, uint32_t holder, uint16_t bdf, uint32_t ref);
int smd_devs_lend_return(struct smd *d, uint32_t holder, const struct smio_peer_dev_ref *m);
int smd_devs_lend_release_excl(struct smd *d, uint32_t holder, const struct smio_peer_dev_ref *m);
int smd_devs_lend_bar(struct smd *d, uint32_t holder, struct smio_peer_dev_bar *m);
int smd_devs_lend_seg_create(struct smd *d, uint32_t holder, uint32_t rhost,
			     struct smio_peer_dev_seg *m);
int smd_devs_lend_seg_lookup(struct smd *d, uint32_t holder, uint32_t rhost,
			     struct smio_peer_dev_seg *m);

#endif
