// SPDX-License-Identifier: MIT
/*
 * The world's cZodiac IOPorts (czodiac_route.h): finding and creating them,
 * and the two look-ups route.c makes (USER MMIO by address, device requests
 * by OID).
 */
#include <errno.h>
#include <string.h>

#include "czodiac_route.h"
#include "ntb.h"

int fab_cz_host_port(const struct fab_host *h, uint32_t cswitch)
{
	for (uint32_t i = 0; i < h->nntbs; i++) {
		const struct topo_ntb *t = h->ntbs[i]->t;

		if (t->peer_kind == TOPO_PEER_CSWITCH && t->peer_cswitch == cswitch)
			return (int)i;
	}
	return -1;
}

static int ntb_on_switch(const struct topo_host *h, const struct topo_ntb *ntb, uint32_t index,
			 void *arg)
{
	(void)h;
	(void)index;
	return ntb->peer_kind == TOPO_PEER_CSWITCH && ntb->peer_cswitch == *(uint32_t *)arg;
}

bool fab_cz_host_on_switch(const struct topo *t, uint32_t cswitch, uint32_t host)
{
	int hi = topo_host_index(t, host);

	return hi >= 0 && topo_for_each_ntb(&t->hosts[hi], ntb_on_switch, &cswitch) > 0;
}

struct cz_iop *fab_cz_ioport(struct fab_world *w, uint32_t cswitch, uint32_t owner,
			     uint16_t oid_base, int *rc)
{
	struct fab_cz_ioport *free_slot = NULL;

	if (!w->cz) {
		*rc = -ENODEV;
		return NULL;
	}
	if (cswitch >= w->topo->ncswitches || !w->topo->cswitches[cswitch].czodiac ||
	    !fab_cz_host_on_switch(w->topo, cswitch, owner)) {
		*rc = -EINVAL;
		return NULL;
	}
	for (unsigned i = 0; i < FAB_CZ_MAX_IOPORTS; i++) {
		struct fab_cz_ioport *p = &w->cz->port[i];

		if (p->used && p->cswitch == cswitch && p->owner == owner)
			return &p->t;
		if (!p->used && !free_slot)
			free_slot = p;
	}
	if (!free_slot) {
		*rc = -ENOSPC;
		return NULL;
	}
	free_slot->used = true;
	free_slot->cswitch = cswitch;
	free_slot->owner = owner;
	cz_iop_init(&free_slot->t, oid_base);
	return &free_slot->t;
}

void fab_cz_changed(struct fab_world *w)
{
	__atomic_add_fetch(&w->epoch, 1, __ATOMIC_ACQ_REL);
}

int fab_cz_user_mmio(const struct fab_world *w, uint32_t cswitch, uint32_t user, uint64_t a,
		     uint32_t *owner, uint16_t *oid, uint64_t *oaddr, uint64_t *left)
{
	for (unsigned i = 0; w->cz && i < FAB_CZ_MAX_IOPORTS; i++) {
		const struct fab_cz_ioport *p = &w->cz->port[i];

		if (!p->used || p->cswitch != cswitch)
			continue;
		if (!cz_iop_user_mmio(&p->t, (uint16_t)user, a, oid, oaddr, left)) {
			*owner = p->owner;
			return 0;
		}
	}
	return -ENOENT;
}

int fab_cz_device(const struct fab_world *w, uint32_t owner, uint16_t oid, uint32_t *cswitch,
		  uint16_t *uid, uint32_t *user)
{
	for (unsigned i = 0; w->cz && i < FAB_CZ_MAX_IOPORTS; i++) {
		const struct fab_cz_ioport *p = &w->cz->port[i];
		uint16_t u;

		if (!p->used || p->owner != owner || cz_iop_device_to_user(&p->t, oid, uid, &u))
			continue;
		*cswitch = p->cswitch;
		*user = u;
		return 0;
	}
	return -ENOENT;
}

uint64_t fab_cz_user_top(const struct fab_world *w, uint32_t cswitch, uint32_t user)
{
	uint64_t top = 0;

	for (unsigned i = 0; w->cz && i < FAB_CZ_MAX_IOPORTS; i++) {
		const struct fab_cz_ioport *p = &w->cz->port[i];

		for (unsigned f = 0; p->used && p->cswitch == cswitch && f < CZ_IOP_FUNCS; f++)
			for (unsigned b = 0; p->t.fn[f].used && p->t.fn[f].user == user &&
			     b < CZ_IOP_BARS; b++) {
				const struct cz_iop_bar *bar = &p->t.fn[f].bar[b];

				if (bar->size && bar->ubar + bar->size > top)
					top = bar->ubar + bar->size;
			}
	}
	return top;
}
