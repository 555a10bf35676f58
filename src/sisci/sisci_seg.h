/* SPDX-License-Identifier: MIT */
/*
 * libsisci segments, connections, maps and sequences: the objects behind
 * the handles, and the handle registry.
 *
 * Every handle the library gives out is registered; a function first looks
 * its handle up (pointer comparison only, the candidate is never read), so
 * a NULL, stale or foreign handle gives SCI_ERR_ILLEGAL_PARAMETER instead of
 * a crash. Objects are taken out of the registry before they are freed.
 */
#ifndef SMARTIO_SISCI_SEG_H
#define SMARTIO_SISCI_SEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sisci_priv.h"

enum sisci_kind {
	SISCI_OBJ_LSEG = 1,
	SISCI_OBJ_RSEG,
	SISCI_OBJ_MAP,
	SISCI_OBJ_SEQ,
	SISCI_OBJ_DEV,
};

struct sisci_obj {
	struct sisci_obj *next, *prev;
	enum sisci_kind kind;
};

/* A segment of this host's RAM, created by this process. */
struct sci_local_segment {
	struct sisci_obj obj;
	struct sci_desc *sd;
	uint32_t id;
	unsigned int flags;          /* SCI_FLAG_* given at creation */
	size_t size;                 /* as created */
	uint64_t alloc;              /* page-rounded size the daemon allocated */
	uint64_t phys;               /* bus address in this host's RAM; 0 if empty */
	uint64_t prepared;           /* adapters it was prepared on (bit n) */
	uint64_t available;          /* adapters it was made available on */
	sci_cb_local_segment_t cb;   /* SCI_FLAG_USE_CALLBACK: told of connects (sisci_owner.c) */
	void *cb_arg;
	pthread_t owatcher;          /* owatching: its watcher thread */
	int oefd, ocancel_fd;
	bool owatching, ocancelled;
	unsigned int maps;
	void *user;                  /* SCIRegisterSegmentMemory: the program's buffer, */
	size_t user_len;             /* now a shared mapping of the segment's RAM */
	uint64_t mc_joined;          /* SCI_FLAG_BROADCAST: adapters subscribed to the group */
};

/* A connection of this process to a segment (of another host, or its own). */
struct sci_remote_segment {
	struct sisci_obj obj;
	struct sci_desc *sd;
	uint32_t conn;               /* the daemon's connection handle */
	uint32_t host;               /* owning host id */
	unsigned int node_id, segid, adapter;
	uint64_t size;               /* page-rounded, as the owner reports it */
	uint64_t ioaddr;             /* the segment's address on this host's bus */
	sci_cb_remote_segment_t cb;  /* SCI_FLAG_USE_CALLBACK: told of path and owner events */
	void *cb_arg;
	bool cb_cancelled;           /* it returned SCI_CALLBACK_CANCEL */
	/* The watcher (sisci_link.c), started by a callback or the first map: */
	pthread_mutex_t watch_mu;    /* starting it */
	int efd, cancel_fd;          /* the daemon's SEG_EVENTS eventfd, and ours */
	pthread_t watcher;           /* waits on efd: remaps, calls cb */
	bool watching;               /* the watcher was started (efd, cancel_fd open) */
	uint32_t state, changes;     /* SEG_STATE as last acted on (lock held) */
	unsigned int maps;
	struct sci_smartio_device *dev;  /* a device BAR of this borrow (SCIConnectDeviceSegment) */
	bool mcast;                  /* SCI_FLAG_BROADCAST: a window onto a multicast group */
};

/* A borrowed device (sisci_device.c). */
struct sisci_devmap {
	const void *seg;             /* the local or remote segment mapped */
	uint32_t map;                /* the daemon's mapping handle */
};

struct sci_smartio_device {
	struct sisci_obj obj;
	struct sci_desc *sd;
	uint32_t handle;             /* the daemon's borrow handle */
	unsigned int fdid;
	unsigned int segs;           /* device segments connected */
	struct sisci_devmap *maps;   /* device-side mappings */
	unsigned int nmaps, capmaps;
	sci_smartio_device_info_t info;
};

struct sci_map {
	struct sisci_obj obj;
	struct sci_desc *sd;
	struct sci_local_segment *lseg;   /* exactly one of lseg, rseg */
	struct sci_remote_segment *rseg;
	void *base;                  /* what was mmap()ed */
	size_t maplen;
	volatile void *addr;         /* what the program got: base + delta */
	size_t offset, size;         /* in the segment */
	unsigned int flags;
	uint32_t host;               /* host whose memory the map reaches */
	unsigned int sequences;
	bool failed;                 /* the path fails: mapped to all-ones (sisci_link.c) */
	bool mcast;                  /* a multicast segment's map: a private buffer
				      * pushed to the group (sisci_mcast.c) */
};

struct sci_sequence {
	struct sisci_obj obj;
	struct sci_map *map;
	unsigned int flags;
	uint32_t changes;            /* the connection's path changes at SCIStartSequence */
};

/* The registry; sisci_lock() guards it and the objects' counters. */
void sisci_lock(void);
void sisci_unlock(void);
void sisci_obj_add(struct sisci_obj *o, enum sisci_kind kind);
void sisci_obj_del(struct sisci_obj *o);
/* Is p a live object of that kind? Call with the lock held. */
bool sisci_obj_valid(const void *p, enum sisci_kind kind);
/* Walk the objects of one kind (lock held): first, then next until NULL. */
struct sisci_obj *sisci_obj_first(enum sisci_kind kind);
struct sisci_obj *sisci_obj_next(struct sisci_obj *o, enum sisci_kind kind);

/* Count an object created through sd (SCIClose refuses while any exist). */
void sisci_desc_get(struct sci_desc *sd);
void sisci_desc_put(struct sci_desc *sd);

/* A daemon's negative errno from a segment request as a SISCI error. */
sci_error_t sisci_seg_errno(int rc);

#define SEG_MAX_SIZE     (1ull << 40)     /* what SEG_CREATE accepts */

/* Registered buffers (sisci_seg_mem.c), for SCIRemoveSegment. */
sci_error_t sisci_seg_alias_buffer(struct sci_local_segment *s, bool copy);
sci_error_t sisci_seg_unregister_buffer(struct sci_local_segment *s);

/*
 * A connection's watcher (sisci_link.c): started by a callback or the first
 * map (idempotent; r is registered), stopped before r is freed.
 */
void sisci_rseg_init(struct sci_remote_segment *r);
sci_error_t sisci_rseg_watch(struct sci_remote_segment *r);
/* sisci_owner.c: a local segment's owner callbacks. */
sci_error_t sisci_lseg_watch(struct sci_local_segment *s);
void sisci_lseg_unwatch(struct sci_local_segment *s);
void sisci_rseg_unwatch(struct sci_remote_segment *r);
/* Stores out and globally visible (sisci_map.c). */
void sisci_store_fence(void);

/* Multicast segments (sisci_mcast.c). */
sci_error_t sisci_mc_join(struct sci_local_segment *s, unsigned int adapter);
void sisci_mc_leave_all(struct sci_local_segment *s);
sci_error_t sisci_mc_connect(sci_desc_t sd, unsigned int group, unsigned int adapter,
			     struct sci_remote_segment **out);
int sisci_mc_disconnect(struct sci_remote_segment *r);
sci_error_t sisci_mc_map(struct sci_map *m, void *addr);
sci_error_t sisci_mc_write(struct sci_desc *sd, uint32_t conn, uint64_t off, const void *src,
			   size_t n);
sci_error_t sisci_mc_flush(struct sci_map *m);
sci_error_t sisci_mc_dma(struct sci_desc *sd, uint32_t conn, uint32_t segid,
			 const dis_dma_vec_t *v, size_t n);

/* Look an adapter number up: SCI_ERR_OK or why it is no adapter of ours (sisci_segment.c). */
sci_error_t sisci_check_adapter(unsigned int adapter);

#endif
