/* SPDX-License-Identifier: MIT */
/*
 * cZodiac mode on the fabric (issue 16 item 3, docs/czodiac.md): the IOPort
 * tables of the cluster switches whose topology says `mode: czodiac`, kept
 * by the world (like the multicast registers), and the look-ups route.c
 * makes through them instead of NTB look-up-table windows.
 *
 * One IOPort per (switch, OWNER host): the OWNER's port on the switch, with
 * the RID and MMIO tables of the functions of its device (czodiac_ioport.h).
 * A USER's request that enters the switch through the USER's port is
 * matched by its address against the UBARs the USER was given; a request of
 * a bound function (by its OID) leaves towards its USER with the UID.
 */
#ifndef SMARTIO_FABRIC_CZODIAC_ROUTE_H
#define SMARTIO_FABRIC_CZODIAC_ROUTE_H

#include "czodiac_ioport.h"
#include "route.h"

#define FAB_CZ_MAX_IOPORTS 16

struct fab_cz_ioport {
	bool used;
	uint32_t cswitch;            /* index in topo.cswitches */
	uint32_t owner;              /* the OWNER's host id */
	struct cz_iop t;
};

/*
 * The world's cZodiac state (plain data: a daemon may share it by mmap).
 * seq is a sequence lock over the tables: its low 32 bits count, odd while
 * a writer changes them, its high 32 bits are then that writer's pid (one
 * word, so both change at once); a reader in any process sees the tables
 * whole, before or after a change, and never waits for a lock a writer
 * could hold across anything slower than the stores themselves. magic:
 * FAB_CZ_MAGIC once a daemon laid the shared file out (a file of another
 * layout is cleared).
 */
#define FAB_CZ_MAGIC 0x637a5331u      /* "czS1" */

struct fab_cz_state {
	uint64_t seq;
	uint32_t magic;
	uint32_t pad;
	struct fab_cz_ioport port[FAB_CZ_MAX_IOPORTS];
};

/*
 * A change of the tables: begin waits for other writers (in any process
 * that maps s) to end theirs, end publishes it; callers then call
 * fab_cz_changed(). A writer that died in between (its pid gone) is counted
 * past, so neither writers nor readers wait for it for ever.
 */
void fab_cz_write_begin(struct fab_cz_state *s);
void fab_cz_write_end(struct fab_cz_state *s);
/*
 * A consistent read: v = fab_cz_read_begin(s), the look-ups, and again
 * while fab_cz_read_retry(s, v). Readers never block a writer.
 */
uint64_t fab_cz_read_begin(struct fab_cz_state *s);
bool fab_cz_read_retry(const struct fab_cz_state *s, uint64_t v);

/*
 * The IOPort of `owner` on czodiac switch `cswitch`, created with the
 * device's first OID if absent. NULL with *rc: -EINVAL (not a czodiac switch,
 * or owner has no NTB port on it), -ENOSPC, -ENODEV (world has no state).
 * Callers that change its tables call fab_cz_changed() afterwards.
 */
struct cz_iop *fab_cz_ioport(struct fab_world *w, uint32_t cswitch, uint32_t owner,
			     uint16_t oid_base, int *rc);
/* The tables changed: every route cache must forget (advances the epoch). */
void fab_cz_changed(struct fab_world *w);

/* Is host (an id) cabled to czodiac switch cswitch? */
bool fab_cz_host_on_switch(const struct topo *t, uint32_t cswitch, uint32_t host);
/* The end of the highest UBAR given to USER `user` on the switch, 0 if none. */
uint64_t fab_cz_user_top(const struct fab_world *w, uint32_t cswitch, uint32_t user);

/* The index of host h's NTB cabled to czodiac switch `cswitch`, or -1. */
int fab_cz_host_port(const struct fab_host *h, uint32_t cswitch);

/* USER `user` addressed a on switch `cswitch`: the OWNER, OID, OBAR address, bytes left. */
int fab_cz_user_mmio(const struct fab_world *w, uint32_t cswitch, uint32_t user, uint64_t a,
		     uint32_t *owner, uint16_t *oid, uint64_t *oaddr, uint64_t *left);
/* A request of function oid on owner: its switch, UID and USER. -ENOENT if not shared. */
int fab_cz_device(const struct fab_world *w, uint32_t owner, uint16_t oid, uint32_t *cswitch,
		  uint16_t *uid, uint32_t *user);

#endif
