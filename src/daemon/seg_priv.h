/* SPDX-License-Identifier: MIT */
/*
 * The daemon's SISCI segment service: the tables shared by its owner side
 * (h_segment.c) and its importer side (h_segment_imp.c). See h_segment.c.
 */
#ifndef SMARTIO_DAEMON_SEG_PRIV_H
#define SMARTIO_DAEMON_SEG_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"
#include "host/ntb_drv.h"
#include "host/segment.h"

#define MEMFD_CACHE  64           /* peers' memory objects we hold an fd of */
#define SMD_SEG_MAX_HOSTS TOPO_MAX_HOSTS

/* A connection of one of our processes to a segment (here or elsewhere). */
struct imp {
	uint32_t handle;
	uint32_t cid;             /* the client connection that made it */
	uint32_t host;            /* owning host id */
	uint32_t segid, ref;      /* the owner's reference */
	uint32_t ntb;             /* adapter */
	struct ntb_mw mw;         /* its LUT windows (mw.count 0: local, no NTB) */
	uint64_t win_addr, offset, size;
	uint64_t dest;            /* the memory's bus address at host (owner's view) */
	uint32_t devmaps;         /* device-side mappings through it (h_device.c) */
	uint32_t borrow;          /* a device BAR of this borrow (no owner reference) */
	bool lost;                /* the owner dropped our reference (peer connection
				   * lost); LUT entries already cleared */
	bool gone;                /* the owner process died (PEER_SEG_GONE); LUT entries
				   * cleared, the reference still ours to release */
	/* The path through the window (h_segment_link.c): */
	bool down;                /* its route failed when last walked: NOT_OPERATIONAL */
	bool walking;             /* a walk is under way */
	bool rewalk;              /* links changed since it started: walk again */
	uint32_t changes;         /* operational <-> not operational so far */
	int efd;                  /* SEG_EVENTS eventfd, or -1 */
};

struct memfd_ent {
	uint32_t host, mem;
	int fd;
	uint64_t size;
};

struct smd_segs {
	struct seg_table *tab;
	struct imp *imp;
	unsigned nimp, cap;
	uint32_t next_handle;
	struct memfd_ent cache[MEMFD_CACHE];
	unsigned ncache;
	uint32_t link_events, db_events;   /* heard from the NTB driver (statistics) */
	/* Re-checking paths after link changes (h_segment_link.c). */
	struct smd_defer pass;
	bool pass_queued;
	uint32_t peer_link_gen[SMD_SEG_MAX_HOSTS];   /* last heard, by topology index */
	bool peer_link_seen[SMD_SEG_MAX_HOSTS];
	/* Owners' connect/disconnect events (h_segment_owner.c). */
	struct owatch **owatch;
	unsigned nowatch, capowatch;
};

/* Has the connection's segment gone away (owner process or host)? */
static inline bool smd_imp_dead(const struct imp *im)
{
	return im->lost || im->gone;
}

/* Importer side (h_segment_imp.c), for the requests (h_segment_conn.c) and the owner side. */
int smd_imp_get(struct smd_segs *s, const struct smd_conn *c, uint32_t handle,
		struct imp **out);
void smd_imp_unlink(struct smd_segs *s, struct imp *im);
void smd_imp_signal(struct imp *im);
void smd_imp_lut_clear(struct smd *d, struct imp *im);
void smd_imp_release(struct smd *d, const struct imp *im, bool wait);
int smd_seg_connect_begin(struct smd *d, struct smd_conn *c, const struct smio_seg_connect *m,
			  struct imp *im);
int smd_seg_connect_end(struct smd *d, const struct smio_seg_connect *m, struct imp *im,
			const struct smio_peer_seg *ps, bool wait);
void smd_seg_connect_add(struct smd *d, struct imp *im, struct smio_seg_conn *o,
			 uint32_t *outlen);
int smd_h_seg_connect(struct smd *d, struct smd_conn *c, const struct smio_seg_connect *m,
		       struct smio_seg_conn *o, uint32_t *outlen);
int smd_h_seg_conn_p2p(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_p2p *m,
		       struct smio_seg_conn_p2p *o, uint32_t *outlen);
int smd_h_seg_events(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_ref *m,
		     int *out_fd);
int smd_h_seg_state(struct smd *d, struct smd_conn *c, const struct smio_seg_conn_ref *m,
		    struct smio_seg_state *o, uint32_t *outlen);
/* Owner callbacks (h_segment_owner.c). */
void smd_seg_owner_hook(void *arg, uint32_t segid, uint32_t holder, bool connected);
int smd_h_seg_owner_events(struct smd *d, struct smd_conn *c, uint32_t segid, int *out_fd);
int smd_h_seg_owner_event(struct smd *d, struct smd_conn *c, const struct smio_seg_id *m,
			  struct smio_seg_owner_ev *o, uint32_t *outlen);
void smd_seg_owner_forget(struct smd *d, uint32_t cid, uint32_t segid);
void smd_seg_owner_fini(struct smd_segs *s);
void smd_seg_gone(struct smd *d, uint32_t host, uint32_t segid, uint32_t ref);
int smd_seg_fab_status_errno(int status);
int smd_seg_memfd_cached(struct smd *d, uint32_t host, uint32_t mem, int *fd, uint64_t *size);
void smd_seg_memfd_keep(struct smd *d, uint32_t host, uint32_t mem, int nfd, uint64_t size,
			int *fd);

#endif
