// SPDX-License-Identifier: MIT
/*
 * Device Lending in the daemon, the lender's side (docs/lending.md; h_lend.c
 * has the messages and the borrower's side): the table of devices this host
 * has lent, a lend set up for a borrower's PEER_LEND_SETUP (the pool's
 * exclusive borrow as the lease, then src/host/lend.c's windows), its
 * reclaim, and this host's part of the pool.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "diag.h"
#include "util/log.h"
#include "fabric/ntb.h"
#include "host/ntb_drv.h"
#include "dev_priv.h"
#include "lend_priv.h"

struct smd_lent *smd_lent_find(struct smd_lend *l, uint32_t cid, uint16_t bdf)
{
	for (unsigned i = 0; i < SMD_LEND_MAX; i++)
		if (l->lent[i].used && l->lent[i].bdf == bdf && (!cid || l->lent[i].cid == cid))
			return &l->lent[i];
	return NULL;
}

/* Undo a lend: windows, MSI channel, and (reset) the device quiesced. */
void smd_lent_drop(struct smd *d, struct smd_conn *c, struct smd_lent *e, bool pool)
{
	struct smd_lent x = *e;

	/* Out of the table first: tearing down tells peers, and a peer lost on
	 * the way closes connections, which comes back here. */
	memset(e, 0, sizeof(*e));
	lend_teardown(d->host, x.s, true);
	smd_lend_msi_channel_close(d, x.msi_slot);
	if (x.msi_rd >= 0)
		close(x.msi_rd);
	if (pool && c) {
		struct smio_peer_dev_ref r = { .bdf = x.bdf, .ref = x.ref };
		uint32_t olen = 0;
		int ofd = -1;

		uint8_t none[8];

		smd_h_device(d, c, SMIO_PEER_DEV_RETURN, &r, none, &olen, &ofd);
	}
}

int smd_lend_pool_local(struct smd *d, struct smd_conn *c, struct smio_lend_pool *o,
		      uint32_t cap)
{
	struct smd_lend *l = d->lend;
	struct smio_dev_list *dl = malloc(SMIO_MAX_PAYLOAD);
	uint32_t dlen = 0, n = 0, cs;
	int ofd = -1, rc;

	if (!dl)
		return -ENOMEM;
	/* The SISCI pool knows every lendable device and its borrows. */
	rc = smd_h_device(d, c, SMIO_PEER_DEV_LIST, NULL, dl, &dlen, &ofd);
	for (uint32_t i = 0; !rc && i < dl->n && n < cap; i++) {
		const struct smio_dev_info *f = &dl->d[i];
		struct smio_lend_entry *e = &o->e[n++];
		struct smd_lent *x = smd_lent_find(l, 0, f->bdf);

		memset(e, 0, sizeof(*e));
		e->fdid = f->fdid;
		e->lender = d->host_id;
		e->class = f->class;
		e->bdf = f->bdf;
		e->vendor = f->vendor;
		e->device = f->device;
		memcpy(e->name, f->name, sizeof(e->name));
		e->borrower = x ? x->borrower : SMIO_LEND_NOBODY;
		e->state = x ? SMIO_LEND_LENT : f->borrowers ? SMIO_LEND_SISCI : SMIO_LEND_AVAILABLE;
		e->sisci_borrows = x ? 0 : f->borrowers;
		if (e->state == SMIO_LEND_AVAILABLE &&
		    smd_vm_resv_holder(d, f->bdf) != SMIO_LEND_NOBODY) {
			e->state = SMIO_LEND_RESERVED;     /* for a VM, not borrowed */
			e->borrower = smd_vm_resv_holder(d, f->bdf);
		}
		/* cZodiac's lease is an exclusive borrow of the pool's own: not SISCI's. */
		if (!x && !smd_cz_shared_with(d, f->bdf, &e->borrower, &cs)) {
			e->state = SMIO_LEND_SHARED;
			e->cswitch = (uint16_t)cs;
			e->sisci_borrows = 0;
		}
	}
	free(dl);
	o->n = n;
	o->pad = 0;
	return rc;
}

/*
 * Our connection to the borrower, opened now (asynchronously): our device's
 * first DMA into the borrower's memory, or a P2P question the borrower asks
 * us, then finds it open.
 */
static void preconnect(struct smd *d, uint32_t host)
{
	smd_peer_connect(d, host);
}

int smd_lend_setup_req(struct smd *d, struct smd_conn *c,
			  const struct smio_peer_lend_setup *m, struct smio_lend_grant *o,
			  int *out_fd)
{
	struct smd_lend *l = d->lend;
	struct smio_peer_dev_borrow b = { .bdf = m->bdf, .flags = SMIO_DEV_F_EXCLUSIVE };
	struct smio_peer_dev_ref ref;
	struct smd_lent *e = NULL;
	struct lend_grant g;
	uint32_t olen = 0;
	int ofd = -1, rc;

	if (c->outgoing || c->host == d->host_id)
		return -EINVAL;
	if (smd_lent_find(l, 0, m->bdf))
		return -EBUSY;
	if (smd_vm_resv_holder(d, m->bdf) != SMIO_LEND_NOBODY &&
	    smd_vm_resv_holder(d, m->bdf) != c->host)
		return -EBUSY;    /* reserved for a VM on another host (h_vm_life.c) */
	for (unsigned i = 0; i < SMD_LEND_MAX && !e; i++)
		if (!l->lent[i].used)
			e = &l->lent[i];
	if (!e)
		return -ENOSPC;
	/* The lease: an exclusive borrow in the pool, held by this connection. */
	rc = smd_h_device(d, c, SMIO_PEER_DEV_BORROW, &b, &ref, &olen, &ofd);
	if (rc)
		return rc;
	/* SISCI borrowers may still share its memory BARs (h_device.c: guests). */
	smd_devs_lend_mark_lease(d, c->cid, m->bdf, ref.ref);
	*e = (struct smd_lent){ .used = true, .cid = c->cid, .borrower = c->host,
				.bdf = m->bdf, .ref = ref.ref, .msi_slot = -1, .msi_rd = -1 };
	rc = lend_setup(d->host, m->bdf, c->host,
			m->flags & SMIO_LEND_SETUP_VM ? LEND_SETUP_VM : 0, m->dma_target,
			m->dma_size, &g, &e->s);
	if (!rc)
		rc = smd_lend_msi_channel(d, c->host, &e->msi_rd, &e->msi_slot);
	if (rc) {
		if (e->s)
			lend_teardown(d->host, e->s, true);
		e->s = NULL;
		uint8_t none[8];

		smd_h_device(d, c, SMIO_PEER_DEV_RETURN, &ref, none, &olen, &ofd);
		memset(e, 0, sizeof(*e));
		return rc;
	}
	memset(o, 0, sizeof(*o));
	o->bdf = g.bdf;
	o->vendor = g.vendor;
	o->device = g.device;
	o->class = g.class;
	o->lender = g.lender;
	o->borrower = g.borrower;
	for (unsigned i = 0; i < 6; i++) {
		o->bar_addr[i] = g.bar_addr[i];
		o->bar_size[i] = g.bar_size[i];
		o->bar_flags[i] = g.bar_flags[i];
	}
	o->dma_bus = g.dma_bus;
	o->dma_target = g.dma_target;
	o->dma_size = g.dma_size;
	o->msi_bus = g.msi_bus;
	snprintf(o->name, sizeof(o->name), "%s", g.name);
	snprintf(o->model, sizeof(o->model), "%s", g.model);
	*out_fd = e->msi_rd;
	preconnect(d, c->host);
	smio_info("lent %s (%02x:%02x.%x) to host %u", g.name, FAB_BDF_BUS(m->bdf),
			FAB_BDF_DEV(m->bdf), FAB_BDF_FN(m->bdf), c->host);
	smd_event(d, SMIO_EV_BORROW, m->bdf, c->host, "lent %s (%02x:%02x.%x) to host %u", g.name,
		  FAB_BDF_BUS(m->bdf), FAB_BDF_DEV(m->bdf), FAB_BDF_FN(m->bdf), c->host);
	return 0;
}
