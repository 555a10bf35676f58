// SPDX-License-Identifier: MIT
/*
 * The host OS's NTB driver (see ntb_drv.h): one instance per adapter, memory
 * windows over the look-up table, reference-counted requester IDs, and the
 * adapter's interrupts turned into client events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/ntb.h"
#include "fabric/route.h"
#include "ntb_drv_priv.h"
#include "util/vec.h"

/* Owner of a LUT entry: 0 nobody known, the admin, or a mapping's tag. */
#define OWNER_NONE  0
#define OWNER_ADMIN UINT64_MAX

struct rid_ref {
	uint16_t rid;
	bool admin;                /* one of the references is the admin's */
	bool foreign;              /* was in the table before us: never ours to delete */
	uint32_t refs;
};

struct client {
	const struct ntb_client_ops *ops;   /* NULL: unregistered during delivery */
	void *ctx;
};

struct ntb_drv {
	struct ntb_host *nh;
	struct fab_ntb *hw;
	uint32_t index;
	uint64_t *owner;           /* per LUT entry */
	struct rid_ref *rids;
	unsigned nrids, caprids;
	struct client *clients;
	unsigned nclients, capclients;
	unsigned delivering;       /* nesting depth of event delivery */
	bool holes;                /* clients to drop once delivery ends */
};

/*
 * Mapping tags are unique in the process, so a mapping handed to the wrong
 * adapter's driver cannot match entries there.
 */
static uint64_t tag_counter;

static uint64_t new_tag(void)
{
	return __atomic_add_fetch(&tag_counter, 1, __ATOMIC_RELAXED);
}

/* ---------- instances ---------- */

static void drv_irq(void *arg, enum ntb_irq what, uint32_t value);

static void drv_free(struct ntb_drv *ntb)
{
	if (!ntb)
		return;
	if (ntb->hw->irq_arg == ntb) {
		ntb->hw->irq = NULL;
		ntb->hw->irq_arg = NULL;
	}
	free(ntb->owner);
	free(ntb->rids);
	free(ntb->clients);
	free(ntb);
}

static void host_release(struct ntb_host *nh)
{
	for (uint32_t i = 0; i < nh->n; i++)
		drv_free(nh->drv[i]);
	ntb_iommu_release(nh);
	free(nh->drv);
	free(nh);
}

int ntb_drv_probe(struct fab_host *h)
{
	struct ntb_host *nh;

	if (h->ntb_os)
		return -EEXIST;
	nh = calloc(1, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	nh->h = h;
	nh->drv = calloc(h->nntbs ? h->nntbs : 1, sizeof(*nh->drv));
	if (!nh->drv) {
		free(nh);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < h->nntbs; i++) {
		struct ntb_drv *ntb = calloc(1, sizeof(*ntb));

		if (ntb)
			ntb->owner = calloc(h->ntbs[i]->nlut, sizeof(*ntb->owner));
		if (!ntb || !ntb->owner) {
			free(ntb);
			host_release(nh);
			return -ENOMEM;
		}
		ntb->nh = nh;
		ntb->hw = h->ntbs[i];
		ntb->index = i;
		nh->drv[nh->n++] = ntb;
	}
	/* Bound: from now on the adapters interrupt their drivers. */
	for (uint32_t i = 0; i < nh->n; i++) {
		nh->drv[i]->hw->irq = drv_irq;
		nh->drv[i]->hw->irq_arg = nh->drv[i];
	}
	h->ntb_os = nh;
	h->ntb_release = host_release;
	return 0;
}

struct ntb_drv *ntb_drv_of(struct fab_host *h, uint32_t idx)
{
	struct ntb_host *nh = h ? h->ntb_os : NULL;

	return nh && idx < nh->n ? nh->drv[idx] : NULL;
}

struct ntb_drv *ntb_drv_to(struct fab_host *h, uint32_t dest)
{
	struct ntb_host *nh = h ? h->ntb_os : NULL;

	for (uint32_t i = 0; nh && i < nh->n; i++)
		if (nh->drv[i]->hw->link_up && !ntb_mw_reachable(nh->drv[i], dest))
			return nh->drv[i];
	return NULL;
}

struct ntb_drv *ntb_drv_via(struct fab_host *h, uint32_t via_host, uint32_t via_ntb)
{
	struct ntb_host *nh = h ? h->ntb_os : NULL;
	int vi;

	if (!nh)
		return NULL;
	vi = topo_host_index(h->topo, via_host);
	if (vi < 0)
		return NULL;
	if ((uint32_t)vi == h->index)
		return ntb_drv_of(h, via_ntb);
	for (uint32_t i = 0; i < nh->n; i++) {
		struct fab_route scratch;
		uint32_t far;

		if (!fab_cable_hops(h->topo, h->index, i, (uint32_t)vi, &far, &scratch) &&
		    far == via_ntb)
			return nh->drv[i];
	}
	return NULL;
}

struct fab_ntb *ntb_drv_hw(const struct ntb_drv *ntb)
{
	return ntb->hw;
}

uint32_t ntb_drv_index(const struct ntb_drv *ntb)
{
	return ntb->index;
}

bool ntb_drv_link_up(const struct ntb_drv *ntb)
{
	return ntb->hw->link_up;
}

/* ---------- memory windows ---------- */

uint64_t ntb_mw_window(const struct ntb_drv *ntb)
{
	return ntb->hw->win_size;
}

int ntb_mw_reachable(const struct ntb_drv *ntb, uint32_t dest_host)
{
	if (!ntb_can_reach(ntb->hw, dest_host))
		return -EHOSTUNREACH;
	if (!fab_func_bar_addr(ntb->hw->fn, NTB_BAR_LUT) || !fab_func_mem_enabled(ntb->hw->fn))
		return -ENODEV;
	return 0;
}

/* The first of count consecutive free entries, or -ENOSPC. */
static int find_run(const struct fab_ntb *hw, uint64_t count)
{
	uint64_t run = 0;

	for (uint32_t i = 0; i < hw->nlut; i++) {
		run = hw->lut[i].valid ? 0 : run + 1;
		if (run == count)
			return (int)(i + 1 - count);
	}
	return -ENOSPC;
}

int ntb_mw_map(struct ntb_drv *ntb, uint32_t dest_host, uint64_t dest_addr, uint64_t size,
	       struct ntb_mw *mw)
{
	struct fab_ntb *hw = ntb->hw;
	uint64_t win = hw->win_size, base = dest_addr & ~(win - 1), count, tag;
	int rc, first;

	memset(mw, 0, sizeof(*mw));
	if (!size)
		return -EINVAL;
	if (size - 1 > UINT64_MAX - dest_addr)
		return -ERANGE;
	rc = ntb_mw_reachable(ntb, dest_host);
	if (rc)
		return rc;
	/* Windows from the one holding the first byte to the one holding the last. */
	count = (dest_addr + (size - 1)) / win - dest_addr / win + 1;
	if (count > hw->nlut)
		return -ENOSPC;
	first = find_run(hw, count);
	if (first < 0)
		return first;
	/* Everything checked: programming cannot fail half-way. */
	tag = new_tag();
	for (uint32_t k = 0; k < count; k++) {
		ntb_lut_set(hw, (uint32_t)first + k, dest_host, base + (uint64_t)k * win);
		ntb->owner[(uint32_t)first + k] = tag;
	}
	*mw = (struct ntb_mw){
		.first = (uint32_t)first, .count = (uint32_t)count,
		.run_bus = fab_func_bar_addr(hw->fn, NTB_BAR_LUT) + (uint64_t)first * win,
		.run_size = count * win, .offset = dest_addr - base,
		.size = size, .dest_host = dest_host, .dest_addr = dest_addr, .tag = tag };
	mw->bus = mw->run_bus + mw->offset;
	return 0;
}

void ntb_mw_unmap(struct ntb_drv *ntb, struct ntb_mw *mw)
{
	if (!ntb || !mw)
		return;
	/* Entries the admin cleared (and maybe someone reused) are not ours. */
	for (uint32_t k = 0; k < mw->count; k++) {
		uint32_t i = mw->first + k;

		if (i < ntb->hw->nlut && ntb->owner[i] == mw->tag) {
			ntb_lut_clear(ntb->hw, i);
			ntb->owner[i] = OWNER_NONE;
		}
	}
	mw->count = 0;
}

int ntb_mw_set(struct ntb_drv *ntb, uint32_t *entry, uint32_t dest_host, uint64_t dest_addr)
{
	struct fab_ntb *hw = ntb->hw;
	uint32_t i = *entry;
	int rc;

	if (i != NTB_MW_ANY && i >= hw->nlut)
		return -ERANGE;
	if (dest_addr & (hw->win_size - 1))
		return -EINVAL;
	if (!ntb_can_reach(hw, dest_host))
		return -EHOSTUNREACH;
	if (i == NTB_MW_ANY) {
		rc = find_run(hw, 1);
		if (rc < 0)
			return rc;
		i = (uint32_t)rc;
	} else if (hw->lut[i].valid) {
		return -EBUSY;
	}
	ntb_lut_set(hw, i, dest_host, dest_addr);
	ntb->owner[i] = OWNER_ADMIN;
	*entry = i;
	return 0;
}

int ntb_mw_clear(struct ntb_drv *ntb, uint32_t entry)
{
	struct fab_ntb *hw = ntb->hw;

	if (entry >= hw->nlut)
		return -ERANGE;
	if (!hw->lut[entry].valid)
		return -ENOENT;
	if (ntb->owner[entry] != OWNER_NONE && ntb->owner[entry] != OWNER_ADMIN)
		return -EBUSY;
	ntb->owner[entry] = OWNER_NONE;
	return ntb_lut_clear(hw, entry);
}

/* ---------- requester IDs ---------- */

static struct rid_ref *rid_find(const struct ntb_drv *ntb, uint16_t rid)
{
	for (unsigned i = 0; i < ntb->nrids; i++)
		if (ntb->rids[i].rid == rid)
			return &ntb->rids[i];
	return NULL;
}

int ntb_rid_get(struct ntb_drv *ntb, uint16_t rid)
{
	struct rid_ref *r = rid_find(ntb, rid);
	bool foreign = false;
	int rc;

	if (r) {
		if (r->refs == UINT32_MAX)
			return -EOVERFLOW;
		r->refs++;
		return 0;
	}
	rc = smio_vec_reserve((void **)&ntb->rids, ntb->nrids, &ntb->caprids,
			      sizeof(*ntb->rids));
	if (rc)
		return rc;
	rc = ntb_rid_add(ntb->hw, rid);
	if (rc == -EEXIST) {
		foreign = true;     /* put there without us (by hand, in tests) */
		rc = 0;
	}
	if (rc)
		return rc;
	ntb->rids[ntb->nrids++] = (struct rid_ref){ .rid = rid, .foreign = foreign, .refs = 1 };
	return 0;
}

int ntb_rid_put(struct ntb_drv *ntb, uint16_t rid)
{
	struct rid_ref *r = ntb ? rid_find(ntb, rid) : NULL;

	if (!r)
		return -ENOENT;
	if (--r->refs)
		return 0;
	if (!r->foreign)
		ntb_rid_del(ntb->hw, rid);
	*r = ntb->rids[--ntb->nrids];
	return 0;
}

uint32_t ntb_rid_refs(const struct ntb_drv *ntb, uint16_t rid)
{
	const struct rid_ref *r = rid_find(ntb, rid);

	return r ? r->refs : 0;
}

int ntb_rid_admin_add(struct ntb_drv *ntb, uint16_t rid)
{
	struct rid_ref *r = rid_find(ntb, rid);
	int rc;

	if (r && r->admin)
		return -EEXIST;
	rc = ntb_rid_get(ntb, rid);
	if (!rc)
		rid_find(ntb, rid)->admin = true;
	return rc;
}

int ntb_rid_admin_del(struct ntb_drv *ntb, uint16_t rid)
{
	struct rid_ref *r = rid_find(ntb, rid);

	if (!r)
		return -ENOENT;
	if (!r->admin)
		return -EBUSY;
	r->admin = false;
	return ntb_rid_put(ntb, rid);
}

/* ---------- events ---------- */

static struct client *client_find(const struct ntb_drv *ntb, const struct ntb_client_ops *ops,
				  void *ctx)
{
	for (unsigned i = 0; i < ntb->nclients; i++)
		if (ntb->clients[i].ops == ops && ntb->clients[i].ctx == ctx)
			return &ntb->clients[i];
	return NULL;
}

int ntb_drv_register_client(struct ntb_drv *ntb, const struct ntb_client_ops *ops, void *ctx)
{
	int rc;

	if (!ntb || !ops)
		return -EINVAL;
	if (client_find(ntb, ops, ctx))
		return -EEXIST;
	rc = smio_vec_reserve((void **)&ntb->clients, ntb->nclients, &ntb->capclients,
			      sizeof(*ntb->clients));
	if (rc)
		return rc;
	ntb->clients[ntb->nclients++] = (struct client){ ops, ctx };
	return 0;
}

int ntb_drv_unregister_client(struct ntb_drv *ntb, const struct ntb_client_ops *ops,
			      void *ctx)
{
	struct client *c = ntb && ops ? client_find(ntb, ops, ctx) : NULL;

	if (!c)
		return -ENOENT;
	if (ntb->delivering) {
		/* Someone is walking the list: leave a hole, dropped afterwards. */
		c->ops = NULL;
		c->ctx = NULL;
		ntb->holes = true;
		return 0;
	}
	memmove(c, c + 1, (size_t)(&ntb->clients[ntb->nclients] - (c + 1)) * sizeof(*c));
	ntb->nclients--;
	return 0;
}

unsigned ntb_drv_clients(const struct ntb_drv *ntb)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ntb->nclients; i++)
		n += ntb->clients[i].ops != NULL;
	return n;
}

static void drop_holes(struct ntb_drv *ntb)
{
	unsigned k = 0;

	for (unsigned i = 0; i < ntb->nclients; i++)
		if (ntb->clients[i].ops)
			ntb->clients[k++] = ntb->clients[i];
	ntb->nclients = k;
	ntb->holes = false;
}

/* The adapter's interrupt: tell the clients registered when it arrived. */
static void drv_irq(void *arg, enum ntb_irq what, uint32_t value)
{
	struct ntb_drv *ntb = arg;
	unsigned n = ntb->nclients;

	ntb->delivering++;
	for (unsigned i = 0; i < n; i++) {
		/* A copy: a callback may register someone (and move the array). */
		struct client c = ntb->clients[i];

		if (!c.ops)
			continue;
		if (what == NTB_IRQ_LINK && c.ops->link_event)
			c.ops->link_event(c.ctx, ntb, value != 0);
		else if (what == NTB_IRQ_DB && c.ops->db_event)
			c.ops->db_event(c.ctx, ntb, value);
	}
	if (!--ntb->delivering && ntb->holes)
		drop_holes(ntb);
}
