// SPDX-License-Identifier: MIT
/*
 * A request's life after dispatch (dispatch.c): its reply buffer, its end,
 * and the peer calls a handler on the loop makes without waiting.
 *
 * smd_req_call() is the continuation form of a peer call for handlers: the
 * loop sends, the handler returns SMD_ASYNC, and `then` runs on the loop
 * (host lock held) with the peer's answer already checked - the same answer
 * smd_peer_request() gives a worker, without a thread in between. `then`
 * either ends the request (smd_req_done) or makes the next call.
 * smd_req_fanout() asks several hosts at once and continues when all have
 * answered (or failed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_priv.h"
#include "daemon.h"

static void req_free(struct smd_req *r)
{
	struct reqbox *b = BOX(r);

	if (b->fd_owned && r->out_fd >= 0)
		close(r->out_fd);
	if (r->own_out)
		free(r->out);
	free(r->msg);
	free(b);
}

int smd_req_keep(struct smd_req *r)
{
	void *out;

	if (r->own_out)
		return 0;
	out = malloc(SMIO_MAX_PAYLOAD);
	if (!out)
		return -ENOMEM;
	r->out = out;
	r->own_out = true;
	return 0;
}

static void req_reply(struct smd_req *r, int rc)
{
	struct smd_conn *c = r->c;

	if (r->no_reply || c->dead)
		return;
	if (rc < 0) {
		r->outlen = 0;
		r->out_fd = BOX(r)->fd_owned ? r->out_fd : -1;
	}
	smd_conn_queue(c, r->type, r->h.seq, rc < 0 ? rc : 0, SMIO_F_REPLY, r->out, r->outlen,
		       rc < 0 ? -1 : r->out_fd);
}

void smd_req_done(struct smd_req *r, int rc)
{
	struct smd_conn *c = r->c;
	bool deferred = BOX(r)->deferred;

	req_reply(r, rc);
	req_free(r);
	if (deferred) {
		c->busy--;
		smd_conn_resume(c);       /* read on; forget c if it closed meanwhile */
	}
	smd_conn_put(c);
}

/* A peer call's outcome as a handler wants it (the same as smd_peer_request's). */
static int call_result(uint16_t type, int rc, const struct smio_hdr *h)
{
	if (rc)
		return rc == -ETIMEDOUT || rc == -ESHUTDOWN ? rc : -EHOSTDOWN;
	if (h->type != type)
		return -EPROTO;
	return h->status < 0 ? h->status : 0;
}

/* ---------- one call ---------- */

struct rcall {
	struct smd_req *r;
	uint16_t type;
	smd_req_then then;
};

static void rcall_reply(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
			const void *payload, int fd)
{
	struct rcall x = *(struct rcall *)arg;

	free(arg);
	rc = call_result(x.type, rc, h);
	if (rc && fd >= 0) {
		close(fd);
		fd = -1;
	}
	x.then(x.r, rc, rc ? NULL : payload, rc ? 0 : h->len, fd);
}

int smd_req_call(struct smd_req *r, uint32_t host, uint16_t type, const void *req, uint32_t len,
		 smd_req_then then)
{
	struct rcall *x;
	int rc = smd_req_keep(r);

	if (rc)
		return rc;
	x = malloc(sizeof(*x));
	if (!x)
		return -ENOMEM;
	*x = (struct rcall){ .r = r, .type = type, .then = then };
	rc = smd_call_start(r->d, host, type, req, len, SMD_PEER_TIMEOUT, rcall_reply, x);
	if (rc) {
		free(x);
		return rc == -ETIMEDOUT || rc == -ESHUTDOWN || rc == -EHOSTUNREACH ? rc
										   : -EHOSTDOWN;
	}
	return SMD_ASYNC;
}

/* ---------- several hosts at once ---------- */

struct fanout;

struct fan_slot {
	struct fanout *f;
	unsigned i;
};

struct fanout {
	struct smd_defer x;       /* none could be started: finish from the inbox */
	struct smd_req *r;
	uint16_t type;
	smd_req_then_all then;
	unsigned n, left;
	struct smd_reply *v;
	struct fan_slot *slot;
};

static void fan_finish(struct fanout *f)
{
	f->then(f->r, f->v, f->n);
	for (unsigned i = 0; i < f->n; i++)
		free(f->v[i].payload);
	free(f->v);
	free(f->slot);
	free(f);
}

static void fan_reply(struct smd *d, void *arg, int rc, const struct smio_hdr *h,
		      const void *payload, int fd)
{
	struct fan_slot *s = arg;
	struct fanout *f = s->f;
	struct smd_reply *v = &f->v[s->i];

	if (fd >= 0)
		close(fd);
	v->rc = call_result(f->type, rc, h);
	if (!v->rc && h->len) {
		v->payload = malloc(h->len);
		if (v->payload) {
			memcpy(v->payload, payload, h->len);
			v->len = h->len;
		} else {
			v->rc = -ENOMEM;
		}
	}
	if (--f->left == 0)
		fan_finish(f);
}

static void fan_deferred(struct smd *d, struct smd_defer *x)
{
	fan_finish((struct fanout *)x);
}

int smd_req_fanout(struct smd_req *r, const uint32_t *hosts, unsigned n, uint16_t type,
		   const void *req, uint32_t len, smd_req_then_all then)
{
	struct fanout *f;
	int rc = smd_req_keep(r);

	if (rc)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->v = calloc(n ? n : 1, sizeof(*f->v));
	f->slot = calloc(n ? n : 1, sizeof(*f->slot));
	if (!f->v || !f->slot) {
		free(f->v);
		free(f->slot);
		free(f);
		return -ENOMEM;
	}
	*f = (struct fanout){ .x.fn = fan_deferred, .r = r, .type = type, .then = then, .n = n,
			      .left = n, .v = f->v, .slot = f->slot };
	/* Counted down by the calls' continuations, which never run in here. */
	for (unsigned i = 0; i < n; i++) {
		f->v[i].host = hosts[i];
		f->slot[i] = (struct fan_slot){ .f = f, .i = i };
		rc = smd_call_start(r->d, hosts[i], type, req, len, SMD_PEER_TIMEOUT, fan_reply,
				    &f->slot[i]);
		if (rc) {
			f->v[i].rc = rc == -ETIMEDOUT || rc == -ESHUTDOWN ? rc : -EHOSTDOWN;
			f->left--;
		}
	}
	if (!f->left)
		smd_defer(r->d, &f->x);   /* answered by nobody: finish on the next turn */
	return SMD_ASYNC;
}
