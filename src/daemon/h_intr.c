// SPDX-License-Identifier: MIT
/*
 * The daemon's SISCI interrupt service: what libsisci calls.
 *
 * Owner side: interrupts of this host's processes (host/intr.c). The creator
 * gets the interrupt's eventfd with the INTR_CREATE reply and waits on it
 * itself; data-interrupt messages are fetched with INTR_RECEIVE. Other
 * daemons look interrupts up (PEER_INTR_LOOKUP) and fire them
 * (PEER_INTR_FIRE): the model of an NTB doorbell plus message registers.
 *
 * Importer side: a connection of one of our processes to an interrupt (here
 * or on another host) is a handle naming (host, number, serial). A trigger
 * is one PEER_INTR_FIRE to the owner, waited for, so the process learns
 * whether it arrived (-ENOENT: the interrupt is gone; -EAGAIN: a data
 * interrupt's queue is full). Owners keep no state per connection: removing
 * an interrupt needs no one's consent, and a stale connection is detected by
 * its serial on the next trigger.
 *
 * Every handler runs with the host lock held. Those that wait for a peer
 * serve other peers meanwhile: they copy what they need and look entries up
 * again afterwards.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "fabric/ntb.h"
#include "host/intr.h"

#define INTR_CONN_MAX 1024        /* connections to interrupts per host */

struct iconn {
	uint32_t handle;
	uint32_t cid;             /* the client connection that made it */
	uint32_t host;            /* owning host id */
	uint32_t intno, serial;
	bool data;
	bool gone;                /* the owner said the interrupt is gone */
};

struct smd_intrs {
	struct intr_table *tab;
	struct iconn *conns;
	unsigned n, cap;
	uint32_t next_handle;
};

_Static_assert(INTR_NO_AUTO == SMIO_INTNO_AUTO, "automatic number on the wire");
_Static_assert(INTR_MAX_DATA == SMIO_INTR_MAX_DATA, "message size on the wire");
_Static_assert(INTR_QUEUE == SMIO_INTR_QUEUE, "queue depth on the wire");

int smd_intr_init(struct smd *d)
{
	struct smd_intrs *s = calloc(1, sizeof(*s));
	struct timespec now;
	int rc;

	if (!s)
		return -ENOMEM;
	/* Serials of a restarted daemon do not repeat its predecessor's. */
	clock_gettime(CLOCK_REALTIME, &now);
	rc = intr_table_create((uint32_t)(now.tv_sec * 1000 + now.tv_nsec / 1000000) ^
			       ((uint32_t)getpid() << 20), &s->tab);
	if (rc) {
		free(s);
		return rc;
	}
	d->intrs = s;
	return 0;
}

void smd_intr_fini(struct smd *d)
{
	struct smd_intrs *s = d->intrs;

	if (!s)
		return;
	intr_table_destroy(s->tab);
	free(s->conns);
	free(s);
	d->intrs = NULL;
}

/* ---------- importer side ---------- */

static struct iconn *iconn_find(struct smd_intrs *s, uint32_t handle)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->conns[i].handle == handle)
			return &s->conns[i];
	return NULL;
}

/* -ENOENT unknown, -EPERM another process's. */
static int iconn_get(struct smd_intrs *s, const struct smd_conn *c, uint32_t handle,
		     struct iconn **out)
{
	struct iconn *ic = iconn_find(s, handle);

	if (!ic)
		return -ENOENT;
	if (ic->cid != c->cid)
		return -EPERM;
	*out = ic;
	return 0;
}

static int iconn_reserve(struct smd_intrs *s)
{
	struct iconn *v;
	unsigned cap;

	if (s->n >= INTR_CONN_MAX)
		return -ENOSPC;
	if (s->n < s->cap)
		return 0;
	cap = s->cap ? 2 * s->cap : 16;
	v = realloc(s->conns, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->conns = v;
	s->cap = cap;
	return 0;
}

static uint32_t new_handle(struct smd_intrs *s)
{
	do {
		if (++s->next_handle == 0)
			s->next_handle = 1;
	} while (iconn_find(s, s->next_handle));
	return s->next_handle;
}

static int host_of_node(struct smd *d, uint32_t node_id, uint32_t *host)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].node_id == node_id) {
			*host = d->topo->hosts[i].id;
			return 0;
		}
	return -EHOSTUNREACH;
}

/* Enter a complete connection and describe it. */
static int iconn_add(struct smd *d, struct iconn *ic, struct smd_req *r)
{
	struct smd_intrs *s = d->intrs;
	int rc = iconn_reserve(s);    /* the table may have grown meanwhile */

	if (rc)
		return rc;
	ic->handle = new_handle(s);
	s->conns[s->n++] = *ic;
	*(struct smio_intr_conn *)r->out = (struct smio_intr_conn){ .handle = ic->handle,
								    .host = ic->host };
	r->outlen = sizeof(struct smio_intr_conn);
	return 0;
}

/* The owner's answer: the interrupt's serial, which every trigger names. */
static void intr_looked_up(struct smd_req *r, int rc, const void *payload, uint32_t len,
			   int fd)
{
	struct iconn *ic = r->priv;
	struct smio_peer_intr pi;

	if (fd >= 0)
		close(fd);
	if (rc == -EHOSTDOWN || rc == -EPROTO)
		rc = -EHOSTUNREACH;
	if (!rc && len != sizeof(pi))
		rc = -EPROTO;
	if (!rc) {
		memcpy(&pi, payload, sizeof(pi));
		if (pi.intno != ic->intno || pi.data != ic->data)
			rc = -EPROTO;
	}
	if (!rc) {
		ic->serial = pi.serial;
		rc = r->d->intrs ? iconn_add(r->d, ic, r) : -ENODEV;
	}
	free(ic);
	smd_req_done(r, rc);
}

/* INTR_CONNECT: a local interrupt at once, a remote one once its owner answers. */
static int intr_connect(struct smd_req *r)
{
	const struct smio_intr_connect *m = r->p;
	struct smd *d = r->d;
	struct smd_intrs *s = d->intrs;
	struct iconn ic = { .cid = r->c->cid, .intno = m->intno, .data = m->data }, *x;
	struct smio_intr_id q = { .intno = m->intno, .data = m->data };
	struct fab_ntb *n;
	int rc;

	if (m->adapter >= d->host->nntbs)
		return -ENODEV;
	n = d->host->ntbs[m->adapter];
	rc = host_of_node(d, m->node_id, &ic.host);
	if (!rc)
		rc = iconn_reserve(s);
	if (rc)
		return rc;
	if (ic.host == d->host_id) {
		/* An interrupt of this host: no doorbell crosses the NTB. */
		const struct intr *it = intr_lookup(s->tab, m->intno, m->data);

		if (!it)
			return -ENOENT;
		ic.serial = it->serial;
		return iconn_add(d, &ic, r);
	}
	if (!n->link_up)
		return -ENOLINK;
	if (!ntb_can_reach(n, ic.host))
		return -EHOSTUNREACH;
	x = malloc(sizeof(*x));
	if (!x)
		return -ENOMEM;
	*x = ic;
	r->priv = x;
	rc = smd_req_call(r, ic.host, SMIO_PEER_INTR_LOOKUP, &q, sizeof(q), intr_looked_up);
	if (rc == SMD_ASYNC)
		return rc;
	free(x);
	return rc == -EHOSTDOWN ? -EHOSTUNREACH : rc;
}

/* A trigger's connection is gone on the owner's side: it leads nowhere now. */
static void iconn_gone(struct smd_intrs *s, uint32_t handle)
{
	struct iconn *p = iconn_find(s, handle);

	if (p)
		p->gone = true;
}

/* The owner's answer to a remote trigger (on the loop). */
static void trigger_done(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
			 const void *payload, int fd)
{
	struct smd_req *r = arg;
	const struct smio_intr_trigger *m = r->p;

	if (fd >= 0)
		close(fd);
	if (!rc)
		rc = h->status;
	else if (rc != -ETIMEDOUT)
		rc = -EHOSTDOWN;     /* not reachable, or the connection went */
	if (rc == -ENOENT && d->intrs)
		iconn_gone(d->intrs, m->handle);
	smd_req_done(r, rc);
}

/*
 * INTR_TRIGGER: a local interrupt fires at once; a remote one is a doorbell
 * across the NTB, i.e. a peer call whose continuation answers the process.
 */
static int intr_trigger(struct smd_req *r)
{
	const struct smio_intr_trigger *m = r->p;
	struct smd *d = r->d;
	struct smd_intrs *s = d->intrs;
	struct smio_peer_intr_fire *f;
	struct iconn *p;
	int rc;

	if (!s)
		return -ENODEV;
	rc = iconn_get(s, r->c, m->handle, &p);
	if (rc)
		return rc;
	if (p->gone)
		return -ENOENT;
	if (!p->data && m->len)
		return -EINVAL;
	if (p->host == d->host_id) {
		rc = intr_fire(s->tab, p->intno, p->data, p->serial, m->data, m->len);
		if (rc == -ENOENT)
			p->gone = true;   /* removed (or its owner died) */
		return rc;
	}
	f = malloc(sizeof(*f) + m->len);
	if (!f)
		return -ENOMEM;
	*f = (struct smio_peer_intr_fire){ .intno = p->intno, .serial = p->serial,
					   .data = p->data, .len = m->len };
	memcpy(f->payload, m->data, m->len);
	rc = smd_req_keep(r);
	if (!rc)
		rc = smd_call_start(d, p->host, SMIO_PEER_INTR_FIRE, f,
				    (uint32_t)(sizeof(*f) + m->len), SMD_PEER_TIMEOUT,
				    trigger_done, r);
	free(f);
	if (rc)
		return rc == -ETIMEDOUT ? rc : -EHOSTDOWN;
	return SMD_ASYNC;
}

static int h_intr_disconnect(struct smd *d, struct smd_conn *c,
			     const struct smio_intr_conn_ref *m)
{
	struct smd_intrs *s = d->intrs;
	struct iconn *p;
	int rc = iconn_get(s, c, m->handle, &p);

	if (rc)
		return rc;
	*p = s->conns[--s->n];
	return 0;
}

/* ---------- owner side ---------- */

static int h_intr_create(struct smd *d, struct smd_conn *c, const struct smio_intr_create *m,
			 struct smio_intr_info *o, uint32_t *outlen, int *out_fd)
{
	const struct intr *it;
	int rc = intr_create(d->intrs->tab, c->cid, m->intno, m->data, &it);

	if (rc)
		return rc;
	*o = (struct smio_intr_info){ .intno = it->intno, .data = it->data };
	*outlen = sizeof(*o);
	*out_fd = it->efd;          /* the process's copy; ours stays until removal */
	return 0;
}

static int h_intr_receive(struct smd *d, struct smd_conn *c, const struct smio_intr_id *m,
			  struct smio_intr_data *o, uint32_t *outlen)
{
	uint32_t len;
	int rc = intr_receive(d->intrs->tab, c->cid, m->intno, o->data, SMIO_INTR_MAX_DATA, &len);

	if (rc)
		return rc;
	o->intno = m->intno;
	o->len = len;
	*outlen = (uint32_t)sizeof(*o) + len;
	return 0;
}

static int peer_intr_lookup(struct smd *d, const struct smio_intr_id *m,
			    struct smio_peer_intr *o, uint32_t *outlen)
{
	const struct intr *it = intr_lookup(d->intrs->tab, m->intno, m->data);

	if (!it)
		return -ENOENT;
	*o = (struct smio_peer_intr){ .intno = it->intno, .serial = it->serial,
				      .data = it->data };
	*outlen = sizeof(*o);
	return 0;
}

int smd_h_intr(struct smd *d, struct smd_conn *c, uint16_t type, const void *p,
	       void *out, uint32_t *outlen, int *out_fd)
{
	struct smd_intrs *s = d->intrs;

	if (!s)
		return -ENODEV;
	switch (type) {
	case SMIO_INTR_CREATE:
		return h_intr_create(d, c, p, out, outlen, out_fd);
	case SMIO_INTR_REMOVE: {
		const struct smio_intr_id *m = p;

		return intr_remove(s->tab, c->cid, m->intno, m->data);
	}
	case SMIO_INTR_RECEIVE:
		return h_intr_receive(d, c, p, out, outlen);
	case SMIO_INTR_DISCONNECT:
		return h_intr_disconnect(d, c, p);
	case SMIO_PEER_INTR_LOOKUP:
		return peer_intr_lookup(d, p, out, outlen);
	case SMIO_PEER_INTR_FIRE: {
		const struct smio_peer_intr_fire *m = p;

		return intr_fire(s->tab, m->intno, m->data, m->serial, m->payload, m->len);
	}
	default:
		return -EOPNOTSUPP;
	}
}

/* ---------- connection close ---------- */

void smd_intr_conn_closed(struct smd *d, struct smd_conn *c)
{
	struct smd_intrs *s = d->intrs;
	uint32_t cid = c->cid;

	if (!s || !cid)
		return;
	fab_host_lock(d->host);
	/* Its connections need no one told: owners keep no state for them. */
	for (unsigned i = 0; i < s->n;) {
		if (s->conns[i].cid == cid)
			s->conns[i] = s->conns[--s->n];
		else
			i++;
	}
	/* Its interrupts: connected peers learn it on their next trigger. */
	intr_owner_gone(s->tab, cid);
	fab_host_unlock(d->host);
}

/* INTR_CONNECT and INTR_TRIGGER: continuations when the interrupt is remote. */
int smd_intr_request(struct smd_req *r)
{
	if (!r->d->intrs)
		return -ENODEV;
	return r->type == SMIO_INTR_CONNECT ? intr_connect(r) : intr_trigger(r);
}
