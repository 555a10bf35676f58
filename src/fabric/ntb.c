// SPDX-License-Identifier: MIT
/* NTB adapter state: look-up table, requester-ID table, link, doorbells, scratchpads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ntb.h"
#include "route.h"

static void reg32(struct fab_ntb *ntb, uint32_t off, uint32_t v)
{
	int m = ntb->fn->bars[NTB_BAR_REGS].mem;

	/* Registers live in BAR0's memory, so a process that maps BAR0 reads
	 * what a driver would read from the adapter. */
	if (m >= 0 && pwrite(ntb->fn->host->mems[m].fd, &v, sizeof(v), off) != sizeof(v))
		return;
}

static void sync_regs(struct fab_ntb *ntb)
{
	reg32(ntb, NTB_REG_ID, 0x3142544e);    /* "NTB1" */
	reg32(ntb, NTB_REG_LINK, (ntb->link_up ? 1u : 0u) |
	      ((uint32_t)(ntb->t->cable.gen & 0xf) << 4) |
	      ((uint32_t)(ntb->t->cable.width & 0x3f) << 8));
	reg32(ntb, NTB_REG_DB, ntb->db_pending);
	reg32(ntb, NTB_REG_DB_MASK, ntb->db_mask);
	reg32(ntb, NTB_REG_SPAD_CNT, ntb->t->scratchpads);
	for (uint32_t i = 0; i < ntb->t->scratchpads && i < NTB_MAX_SPADS; i++)
		reg32(ntb, NTB_REG_SPAD + 4 * i, ntb->spad[i]);
}

int ntb_create(struct fab_host *h, struct fab_func *fn, const struct topo_ntb *t,
	       uint32_t index, struct fab_ntb **out)
{
	struct fab_ntb *ntb;

	if (!t->lut_entries || !t->rid_entries || t->bar_size % t->lut_entries)
		return -EINVAL;
	ntb = calloc(1, sizeof(*ntb));
	if (!ntb)
		return -ENOMEM;
	ntb->fn = fn;
	ntb->t = t;
	ntb->index = index;
	ntb->win_size = t->bar_size / t->lut_entries;
	ntb->nlut = t->lut_entries;
	ntb->nrid = t->rid_entries;
	ntb->lut = calloc(ntb->nlut, sizeof(*ntb->lut));
	ntb->rid = calloc(ntb->nrid, sizeof(*ntb->rid));
	ntb->rid_valid = calloc(ntb->nrid, sizeof(*ntb->rid_valid));
	/* Cabled to a switch with multicast: an overlay per group (mcast.h). */
	if (t->peer_kind == TOPO_PEER_CSWITCH && t->peer_cswitch < h->topo->ncswitches)
		ntb->nmc = h->topo->cswitches[t->peer_cswitch].mc_groups;
	ntb->mc_ovl = ntb->nmc ? calloc(ntb->nmc, sizeof(*ntb->mc_ovl)) : NULL;
	if (!ntb->lut || !ntb->rid || !ntb->rid_valid || (ntb->nmc && !ntb->mc_ovl)) {
		ntb_destroy(ntb);
		return -ENOMEM;
	}
	/* A cabled adapter trains its link at power-on. */
	ntb->link_up = t->peer_kind != TOPO_PEER_NONE;
	ntb->db_mask = 0;
	sync_regs(ntb);
	*out = ntb;
	return 0;
}

void ntb_destroy(struct fab_ntb *ntb)
{
	if (!ntb)
		return;
	free(ntb->mc_ovl);
	free(ntb->lut);
	free(ntb->rid);
	free(ntb->rid_valid);
	free(ntb);
}

static void changed(struct fab_ntb *ntb)
{
	fab_host_tables_changed(ntb->fn->host);
}

bool ntb_can_reach(const struct fab_ntb *ntb, uint32_t dest_host_id)
{
	const struct topo *t = ntb->fn->host->topo;
	int di = topo_host_index(t, dest_host_id);
	uint32_t n;

	/* The multicast range of the switch the cable plugs into. */
	if (dest_host_id == NTB_DEST_MCAST)
		return ntb->nmc > 0;
	if (di < 0 || (uint32_t)di == ntb->fn->host->index)
		return false;
	switch (ntb->t->peer_kind) {
	case TOPO_PEER_NTB:
		return ntb->t->peer_host == (uint32_t)di;
	case TOPO_PEER_CSWITCH: {
		struct fab_route scratch;

		/* Reachable if some NTB of that host hangs off the same switch fabric. */
		return fab_cable_hops(t, ntb->fn->host->index, ntb->index, (uint32_t)di, &n,
				      &scratch) == 0;
	}
	default:
		return false;
	}
}

int ntb_lut_set(struct fab_ntb *ntb, uint32_t idx, uint32_t dest_host, uint64_t dest_addr)
{
	if (idx >= ntb->nlut)
		return -ERANGE;
	ntb->lut[idx] = (struct ntb_lut_entry){ true, dest_host, dest_addr };
	changed(ntb);
	return 0;
}

int ntb_lut_clear(struct fab_ntb *ntb, uint32_t idx)
{
	if (idx >= ntb->nlut)
		return -ERANGE;
	if (!ntb->lut[idx].valid)
		return -ENOENT;
	ntb->lut[idx].valid = false;
	changed(ntb);
	return 0;
}

uint32_t ntb_lut_used(const struct fab_ntb *ntb)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ntb->nlut; i++)
		n += ntb->lut[i].valid;
	return n;
}

int ntb_rid_add(struct fab_ntb *ntb, uint16_t rid)
{
	int free_slot = -1;

	for (uint32_t i = 0; i < ntb->nrid; i++) {
		if (ntb->rid_valid[i] && ntb->rid[i] == rid)
			return -EEXIST;
		if (!ntb->rid_valid[i] && free_slot < 0)
			free_slot = (int)i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	ntb->rid[free_slot] = rid;
	ntb->rid_valid[free_slot] = true;
	changed(ntb);
	return 0;
}

int ntb_rid_del(struct fab_ntb *ntb, uint16_t rid)
{
	for (uint32_t i = 0; i < ntb->nrid; i++) {
		if (ntb->rid_valid[i] && ntb->rid[i] == rid) {
			ntb->rid_valid[i] = false;
			changed(ntb);
			return 0;
		}
	}
	return -ENOENT;
}

bool ntb_rid_allowed(const struct fab_ntb *ntb, uint16_t rid)
{
	for (uint32_t i = 0; i < ntb->nrid; i++)
		if (ntb->rid_valid[i] && ntb->rid[i] == rid)
			return true;
	return false;
}

uint32_t ntb_rid_used(const struct fab_ntb *ntb)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ntb->nrid; i++)
		n += ntb->rid_valid[i];
	return n;
}

void ntb_set_link(struct fab_ntb *ntb, bool up)
{
	if (ntb->link_up == up)
		return;
	ntb->link_up = up;
	if (!up)
		ntb->link_downs++;
	ntb->fn->host->link_gen++;
	sync_regs(ntb);
	changed(ntb);
	if (ntb->irq)
		ntb->irq(ntb->irq_arg, NTB_IRQ_LINK, up);
}

int ntb_db_ring(struct fab_ntb *ntb, uint32_t bits)
{
	uint32_t n = ntb->t->doorbells;
	uint32_t valid = n >= 32 ? 0xffffffffu : (1u << n) - 1;

	if (!bits || (bits & ~valid))
		return -EINVAL;
	ntb->db_pending |= bits;
	ntb->db_rung++;
	sync_regs(ntb);
	if (ntb->irq && (bits & ~ntb->db_mask))
		ntb->irq(ntb->irq_arg, NTB_IRQ_DB, bits & ~ntb->db_mask);
	return 0;
}

int ntb_spad_write(struct fab_ntb *ntb, uint32_t idx, uint32_t val)
{
	if (idx >= ntb->t->scratchpads || idx >= NTB_MAX_SPADS)
		return -ERANGE;
	ntb->spad[idx] = val;
	sync_regs(ntb);
	return 0;
}

int ntb_spad_read(const struct fab_ntb *ntb, uint32_t idx, uint32_t *val)
{
	if (idx >= ntb->t->scratchpads || idx >= NTB_MAX_SPADS)
		return -ERANGE;
	*val = ntb->spad[idx];
	return 0;
}
