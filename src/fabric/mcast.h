/* SPDX-License-Identifier: MIT */
/*
 * Multicast in the cluster switches, after PCIe's Multicast capability
 * (base spec 7.9.11) as the PM8536 (Dolphin MXS824) exposes it:
 *
 *  - each switch has a multicast range of mc_groups groups of mc_group_size
 *    bytes (MC_Num_Group, 2^MC_Index_Position) from mc_base (MC_Base_Address);
 *    cascaded switches share one range (topo_check insists), so a group is
 *    one address range throughout a fabric;
 *  - each port has an MC_Receive bitmap: a posted write to group g's range is
 *    replicated to every port whose bit g is set, except the port it came in
 *    by; a cascade port forwards g when a member lies beyond it (the fabric
 *    manager keeps those bits; here they are derived from the member ports);
 *  - reads and other non-posted requests to the range are unsupported (UR);
 *  - at a receiving NTB adapter an overlay (MC_Overlay_BAR, one per group on
 *    this adapter) maps the group's range onto a linear local range, RAM or
 *    a device BAR, where the write then continues as that NTB's request.
 *
 * Who writes to a group: an NTB look-up-table entry whose destination is
 * NTB_DEST_MCAST and whose address lies in the multicast range.
 *
 * The switches are shared by every host, so their registers are one shared
 * object (struct fab_mc_state) that each world maps: in-process clusters
 * allocate it, daemons map one file of the cluster directory. Everything in
 * it is changed with atomics, so hosts need no lock between them.
 */
#ifndef SMARTIO_FABRIC_MCAST_H
#define SMARTIO_FABRIC_MCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "route.h"

#define FAB_MC_MAX_CSW    64
#define FAB_MC_PORT_WORDS 2          /* 128 ports (TOPO_CSW_MAX_PORTS) */
#define FAB_MC_MAGIC      0x4d434153u

struct fab_mc_switch {
	/* Hosts using a group, by host index (fabric root switch only). */
	uint64_t users[TOPO_MC_MAX_GROUPS][TOPO_MAX_HOSTS / 64];
	uint64_t recv[TOPO_MC_MAX_GROUPS][FAB_MC_PORT_WORDS]; /* MC_Receive, by port */
};

struct fab_mc_state {
	uint32_t magic;
	uint32_t pad;
	struct fab_mc_switch sw[FAB_MC_MAX_CSW];
};

/* Where an NTB sits on the multicast fabric. */
struct fab_mc_port {
	uint32_t csw;        /* cluster switch index its cable plugs into */
	uint32_t port;       /* first port of the cable on that switch */
	uint32_t root;       /* the fabric's lowest switch index: holds group allocation */
	const struct topo_cswitch *s;
};

/*
 * The switch port of host index hi's NTB ntb: -ENODEV not cabled to a
 * cluster switch, -EOPNOTSUPP its switch has no multicast groups.
 */
int fab_mc_port_of(const struct topo *t, uint32_t hi, uint32_t ntb, struct fab_mc_port *p);

/* Group of a multicast address and the offset in it; -ERANGE outside the range. */
int fab_mc_group_of(const struct topo_cswitch *s, uint64_t addr, uint32_t *group,
		    uint64_t *off);
static inline uint64_t fab_mc_group_addr(const struct topo_cswitch *s, uint32_t g)
{
	return s->mc_base + (uint64_t)g * s->mc_group_size;
}

/*
 * Group use at the fabric's root switch, one mark per host (host index hi;
 * the host's software counts its own users). fab_mc_group_alloc takes a group
 * nobody uses (-ENOSPC: all in use); fab_mc_group_get marks group g used by
 * hi whether or not others use it (-ERANGE beyond the switch's groups);
 * fab_mc_group_put drops the mark (-ENOENT not marked). fab_mc_host_reset
 * forgets everything of host hi (its marks, its ports' membership): a host
 * that (re)starts, since the switches outlive it.
 */
int fab_mc_group_alloc(struct fab_world *w, const struct fab_mc_port *p, uint32_t hi,
		       uint32_t *g);
int fab_mc_group_get(struct fab_world *w, const struct fab_mc_port *p, uint32_t hi, uint32_t g);
int fab_mc_group_put(struct fab_world *w, const struct fab_mc_port *p, uint32_t hi, uint32_t g);
uint32_t fab_mc_group_users(const struct fab_world *w, const struct fab_mc_port *p, uint32_t g);
void fab_mc_host_reset(struct fab_world *w, uint32_t hi);

/*
 * Subscribe this host through its NTB ntb to group g: the NTB's overlay maps
 * the group's range onto [local_addr, local_addr + size) of this host's bus
 * address space (size ≤ group size), and the switch port's MC_Receive bit is
 * set. Leave undoes both (-ENOENT not subscribed). Caller holds h's lock.
 */
int fab_mc_join(struct fab_host *h, uint32_t ntb, uint32_t g, uint64_t local_addr,
		uint64_t size);
int fab_mc_leave(struct fab_host *h, uint32_t ntb, uint32_t g);

/* The fan-out of a write entering the fabric at (host index, NTB). */
struct fab_mc_recv {
	uint32_t host;       /* host id */
	uint32_t ntb;        /* its NTB (the egress cable's far end) */
	uint32_t csw;        /* the switch whose port delivers to it */
	uint32_t depth;      /* switches crossed */
};

struct fab_mc_link {
	uint32_t from_csw;   /* switch; UINT32_MAX for the ingress cable */
	uint32_t to_csw;     /* cascade: the next switch; else UINT32_MAX */
	uint32_t host;       /* cables: the host at the end */
	uint8_t gen, width;
};

struct fab_mc_tree {
	uint32_t group;
	uint64_t off;        /* offset in the group */
	uint32_t ingress_csw;
	uint32_t nrecv, nlinks;
	struct fab_mc_recv recv[2 * TOPO_MAX_HOSTS];
	/* Each link of the tree once: ingress cable, cascades, egress cables. */
	struct fab_mc_link links[2 * TOPO_MAX_HOSTS + FAB_MC_MAX_CSW + 1];
};

int fab_mc_tree(const struct fab_world *w, uint32_t hi, uint32_t ntb, uint64_t addr,
		struct fab_mc_tree *tree);

/*
 * A posted write of len bytes at multicast address addr entering at this
 * host's NTB ntb (a resolved FAB_TGT_MCAST target): resolved and delivered
 * to every receiver; a receiver whose part fails drops it, as a switch
 * does. *delivered (may be NULL) counts receivers that got the bytes. On a
 * device thread with receivers on other hosts: -EREMOTE before anything is
 * written (the daemon's worker does it).
 */
int fab_mc_write(struct fab_host *h, uint32_t ntb, uint64_t addr, const void *buf,
		 uint64_t len, uint32_t *delivered);

/* Overlay translation on a receiving NTB (route.c): the local address, or UR. */
int fab_mc_overlay(const struct fab_host *h, uint32_t ntb, uint64_t addr, uint64_t *local,
		   uint64_t *left, uint32_t *group);

#endif
