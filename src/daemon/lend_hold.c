// SPDX-License-Identifier: MIT
/*
 * Holders of this host's functions (LEND_HOLD): a process that uses a
 * device through its driver for a long time, as 'smartio mount' serving a
 * borrowed NVMe, says so on a connection it keeps open. LEND_RETURN refuses
 * (-ETXTBSY) while a holder lives, unless FORCE; LEND_HOLDERS names them.
 *
 * A hold is its connection's: it ends when the connection closes. Entries
 * are not removed then; a later look finds the connection gone (its cid is
 * never reused) and treats the slot as free. Host lock held throughout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "lend_priv.h"
#include "host/pci.h"
#include "util/json_out.h"

static bool hold_live(struct smd *d, const struct smd_hold *h)
{
	return h->used && smd_conn_find(d, h->cid);
}

int smd_lend_hold(struct smd *d, struct smd_conn *c, const struct smio_lend_hold *m)
{
	struct smd_lend *l = d->lend;
	struct smd_hold *free_slot = NULL;

	for (unsigned i = 0; i < SMD_HOLD_MAX; i++) {
		struct smd_hold *h = &l->holds[i];

		if (!hold_live(d, h)) {
			if (!free_slot)
				free_slot = h;
		} else if (h->cid == c->cid && h->bdf == m->bdf) {
			free_slot = h;      /* the same holder again: its new words */
			break;
		}
	}
	if (!free_slot)
		return -ENOSPC;
	*free_slot = (struct smd_hold){ .used = true, .cid = c->cid, .pid = c->pid,
					.bdf = m->bdf };
	snprintf(free_slot->what, sizeof(free_slot->what), "%s", m->what);
	return 0;
}

uint32_t smd_lend_holders(struct smd *d, uint16_t bdf, struct smio_lend_holders *out)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < SMD_HOLD_MAX; i++) {
		const struct smd_hold *h = &d->lend->holds[i];

		if (h->bdf != bdf || !hold_live(d, h))
			continue;
		if (out && n < SMIO_HOLDERS_MAX) {
			out->h[n] = (struct smio_lend_holder){ .pid = h->pid };
			memcpy(out->h[n].what, h->what, sizeof(h->what));
		}
		n++;
	}
	if (out) {
		out->n = n < SMIO_HOLDERS_MAX ? n : SMIO_HOLDERS_MAX;
		out->pad = 0;
	}
	return n;
}

int smd_lend_holders_reply(struct smd *d, uint16_t bdf, void *out, uint32_t *outlen)
{
	struct smio_lend_holders *o = out;

	smd_lend_holders(d, bdf, o);
	*outlen = (uint32_t)(sizeof(*o) + o->n * sizeof(o->h[0]));
	return 0;
}

void smd_lend_hold_drop(struct smd *d, uint16_t bdf)
{
	for (unsigned i = 0; i < SMD_HOLD_MAX; i++)
		if (d->lend->holds[i].bdf == bdf)
			d->lend->holds[i].used = false;
}

/*
 * STATS' "borrowed" (h_diag.c): each device this host borrows, with its
 * shadow's bound driver and its holders, so the live views can show the
 * driver of any borrow, not only of one they made themselves.
 */
int smd_lend_borrowed_json(struct smd *d, struct json_object *arr)
{
	struct smd_lend *l = d->lend;

	for (unsigned i = 0; l && i < SMD_LEND_MAX; i++) {
		const struct smd_borrowed *b = &l->brw[i];
		const struct pci_dev *p = b->pdev;
		struct json_object *o;
		char fdid[16], lbdf[16], bdf[16];
		int rc;

		if (!b->used)
			continue;
		o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		snprintf(fdid, sizeof(fdid), "0x%08x", b->fdid);
		snprintf(lbdf, sizeof(lbdf), "%02x:%02x.%x", b->lbdf >> 8, (b->lbdf >> 3) & 0x1f,
			 b->lbdf & 7);
		if (p)
			snprintf(bdf, sizeof(bdf), "%02x:%02x.%x", p->bdf >> 8,
				 (p->bdf >> 3) & 0x1f, p->bdf & 7);
		rc = smio_json_add_str(o, "fdid", fdid) || smio_json_add_uint(o, "lender", b->lender) ||
		     smio_json_add_str(o, "lender_bdf", lbdf) ||
		     smio_json_add_str(o, "bdf", p ? bdf : NULL) ||
		     smio_json_add_str(o, "name", p ? p->name : NULL) ||
		     smio_json_add_str(o, "driver", p && p->driver ? p->driver->name : NULL) ||
		     smio_json_add_bool(o, "lost", b->lost) ||
		     smio_json_add_uint(o, "holders", p ? smd_lend_holders(d, p->bdf, NULL) : 0);
		if (rc) {
			json_object_put(o);
			return -ENOMEM;
		}
		if (smio_json_push(arr, o))
			return -ENOMEM;
	}
	return 0;
}
