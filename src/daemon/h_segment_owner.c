// SPDX-License-Identifier: MIT
/*
 * SISCI owner callbacks: a process that created a segment with a callback
 * (SCICreateSegment, SCI_FLAG_USE_CALLBACK) hears SCI_CB_CONNECT and
 * SCI_CB_DISCONNECT when a program (of any host) connects to it or drops its
 * connection. The segment table reports each connection reference taken or
 * dropped (seg_hooks.conn); a watched segment queues the event with the
 * other end's host and counts 1 on its eventfd, the same SEG_EVENTS channel
 * connections use (SMIO_SEG_REF_OWNER). The process takes the events one by
 * one with SEG_OWNER_EVENT.
 *
 * A watch belongs to the owner's connection and the segment: it goes when
 * the segment is removed or the connection closes. Host lock held
 * throughout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "seg_priv.h"
#include "util/vec.h"

struct owatch {
	uint32_t cid, segid;
	int efd;
	uint32_t lost;
	unsigned head, n;         /* the queue: q[head .. head + n) mod QUEUE */
	struct { uint32_t reason, host; } q[SMIO_SEG_OWNER_QUEUE];
};

static struct owatch *find(struct smd_segs *s, uint32_t cid, uint32_t segid)
{
	for (unsigned i = 0; i < s->nowatch; i++)
		if (s->owatch[i]->cid == cid && s->owatch[i]->segid == segid)
			return s->owatch[i];
	return NULL;
}

void smd_seg_owner_hook(void *arg, uint32_t segid, uint32_t holder, bool connected)
{
	struct smd *d = arg;
	const struct seg *sg = seg_lookup(d->segs->tab, segid);
	struct smd_conn *hc = smd_conn_find(d, holder);
	struct owatch *w = sg ? find(d->segs, sg->owner, segid) : NULL;
	uint64_t one = 1;

	if (!w)
		return;
	if (w->n == SMIO_SEG_OWNER_QUEUE) {
		/* Nobody reads: the oldest goes, and the owner can tell. */
		w->head = (w->head + 1) % SMIO_SEG_OWNER_QUEUE;
		w->n--;
		w->lost++;
	}
	w->q[(w->head + w->n) % SMIO_SEG_OWNER_QUEUE].reason =
		connected ? SMIO_SEG_OWNER_CONNECT : SMIO_SEG_OWNER_DISCONNECT;
	w->q[(w->head + w->n) % SMIO_SEG_OWNER_QUEUE].host = hc ? hc->host : d->host_id;
	w->n++;
	/* Non-blocking eventfd: a full counter only means "look". */
	if (write(w->efd, &one, sizeof(one)) != sizeof(one))
		return;
}

/* SEG_EVENTS with SMIO_SEG_REF_OWNER: the eventfd of c's segment segid. */
int smd_h_seg_owner_events(struct smd *d, struct smd_conn *c, uint32_t segid, int *out_fd)
{
	struct smd_segs *s = d->segs;
	const struct seg *sg = seg_lookup(s->tab, segid);
	struct owatch *w;
	int rc;

	if (!sg || sg->owner != c->cid)
		return -ENOENT;
	w = find(s, c->cid, segid);
	if (!w) {
		rc = smio_vec_reserve((void **)&s->owatch, s->nowatch, &s->capowatch,
				      sizeof(*s->owatch));
		if (rc)
			return rc;
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w->efd < 0) {
			rc = -errno;
			free(w);
			return rc;
		}
		w->cid = c->cid;
		w->segid = segid;
		s->owatch[s->nowatch++] = w;
	}
	*out_fd = w->efd;
	return 0;
}

/* SEG_OWNER_EVENT: the oldest event of c's segment, or SMIO_SEG_OWNER_NONE. */
int smd_h_seg_owner_event(struct smd *d, struct smd_conn *c, const struct smio_seg_id *m,
			  struct smio_seg_owner_ev *o, uint32_t *outlen)
{
	struct owatch *w = find(d->segs, c->cid, m->segid);

	if (!w)
		return -ENOENT;
	*o = (struct smio_seg_owner_ev){ .segid = m->segid, .lost = w->lost };
	if (w->n) {
		o->reason = w->q[w->head].reason;
		o->host = w->q[w->head].host;
		w->head = (w->head + 1) % SMIO_SEG_OWNER_QUEUE;
		w->n--;
	}
	*outlen = sizeof(*o);
	return 0;
}

/* Forget the watches of cid (segid: that one; SEG_ID_AUTO: all of them). */
void smd_seg_owner_forget(struct smd *d, uint32_t cid, uint32_t segid)
{
	struct smd_segs *s = d->segs;

	for (unsigned i = 0; i < s->nowatch;) {
		struct owatch *w = s->owatch[i];

		if (w->cid != cid || (segid != SEG_ID_AUTO && w->segid != segid)) {
			i++;
			continue;
		}
		close(w->efd);
		free(w);
		s->owatch[i] = s->owatch[--s->nowatch];
	}
}

void smd_seg_owner_fini(struct smd_segs *s)
{
	for (unsigned i = 0; i < s->nowatch; i++) {
		close(s->owatch[i]->efd);
		free(s->owatch[i]);
	}
	free(s->owatch);
}
