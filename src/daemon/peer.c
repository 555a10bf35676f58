// SPDX-License-Identifier: MIT
/*
 * How one daemon's routes continue on other hosts: a PEER_STEP request to
 * the next host's daemon (the model of the NTB control channel), and the
 * fan-out of invalidations so that cached routes through a changed table are
 * dropped everywhere.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "host/ntbdma.h"

void smd_route_to_wire(const struct fab_route *r, const struct fab_forward *fwd,
		       struct smio_route_reply *out, uint32_t *len)
{
	memset(out, 0, sizeof(*out));
	out->status = r->status;
	out->cached = r->cached;
	snprintf(out->reason, sizeof(out->reason), "%s", r->reason);
	out->tgt = (struct smio_target){ .kind = r->tgt.kind, .bar = r->tgt.bar,
		.bdf = r->tgt.bdf, .host = r->tgt.host, .mem = r->tgt.mem,
		.addr = r->tgt.addr, .offset = r->tgt.offset, .len = r->tgt.len };
	if (fwd && fwd->forward) {
		out->forward = 1;
		out->next_host = fwd->next.host;
		out->next_ntb = fwd->next.ntb_index;
		out->next_addr = fwd->next.addr;
		out->next_len = fwd->next.len;
	}
	out->ntb_hops = r->ntb_hops;
	out->nhops = r->nhops > SMIO_MAX_HOPS ? SMIO_MAX_HOPS : r->nhops;
	for (uint32_t i = 0; i < out->nhops; i++) {
		const struct fab_hop *s = &r->hops[i];
		struct smio_hop *t = &out->hops[i];

		memset(t, 0, sizeof(*t));   /* pads must be zero on the wire */
		t->kind = s->kind;
		t->gen = s->gen;
		t->width = s->width;
		t->host = s->host;
		t->bdf = s->bdf;
		t->latency_ns = s->latency_ns;
		memcpy(t->name, s->name, sizeof(t->name));
		t->name[sizeof(t->name) - 1] = '\0';
	}
	*len = (uint32_t)(sizeof(*out) + out->nhops * sizeof(struct smio_hop));
}

/* Our open connection to a peer's daemon, or -ENOTCONN. */
static int peer_find(struct smd *d, uint32_t host)
{
	for (unsigned i = 0; i < d->nconns; i++)
		if (d->conns[i].fd >= 0 && d->conns[i].outgoing && d->conns[i].host == host)
			return (int)i;
	return -ENOTCONN;
}

/* Our connection to a peer's daemon, opened on first use. */
static int peer_conn(struct smd *d, uint32_t host)
{
	struct smio_hello hello = { .role = SMIO_ROLE_PEER, .host = d->host_id,
				    .pid = (uint32_t)getpid(), .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	uint32_t rlen;
	int fd, rc;

	rc = peer_find(d, host);
	if (rc >= 0)
		return rc;
	fd = smio_connect(d->dir, host, 0);   /* up already, or gone: no retrying */
	if (fd < 0)
		return fd;
	rc = smio_call(fd, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen, NULL,
		       SMD_PEER_TIMEOUT);
	if (rc < 0 || rlen != sizeof(hr) || hr.host != host) {
		close(fd);
		return rc < 0 ? rc : -EPROTO;
	}
	rc = smd_add_conn(d, fd, true, SMIO_ROLE_PEER, host);
	if (rc < 0)
		close(fd);
	return rc;
}

/*
 * Wait for the reply to `seq` on conns[idx] while still answering the steps
 * other daemons ask of us: two daemons resolving through each other at the
 * same moment must not deadlock. A descriptor that comes with the reply goes
 * to *rfd (NULL: it is closed).
 */
static int wait_reply(struct smd *d, unsigned idx, uint32_t seq, struct smio_hdr *h,
		      void *buf, uint32_t cap, int *rfd)
{
	struct smd_conn *c = &d->conns[idx];
	struct timespec t0;
	int64_t left = SMD_PEER_TIMEOUT;
	int fd = c->fd;

	c->waiting = true;
	c->replied = false;
	c->wait_seq = seq;
	c->wait_hdr = h;
	c->wait_buf = buf;
	c->wait_cap = cap;
	c->wait_fd = rfd;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (left > 0) {
		struct pollfd pfd[SMD_MAX_CONNS];
		unsigned map[SMD_MAX_CONNS], n = 0;
		struct timespec now;
		int rc;

		pfd[n] = (struct pollfd){ .fd = fd, .events = POLLIN };
		map[n++] = idx;
		for (unsigned i = 0; i < d->nconns; i++) {
			if (i == idx || d->conns[i].fd < 0 || d->conns[i].role != SMIO_ROLE_PEER ||
			    d->conns[i].outgoing)
				continue;
			pfd[n] = (struct pollfd){ .fd = d->conns[i].fd, .events = POLLIN };
			map[n++] = i;
		}
		rc = poll(pfd, n, (int)left);
		if (rc < 0 && errno != EINTR)
			break;
		/* Our peer's answer, and meanwhile other peers' steps: one reader
		 * per connection (smd_conn_input), so streams never desynchronise. */
		for (unsigned k = 0; rc > 0 && k < n; k++)
			if ((pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    d->conns[map[k]].fd == pfd[k].fd)
				smd_conn_input(d, map[k]);   /* slots stay put */
		if (d->conns[idx].fd != fd)
			return -ECONNRESET;          /* the peer went away */
		if (c->replied) {
			c->replied = false;
			c->wait_fd = NULL;
			return 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = SMD_PEER_TIMEOUT - ((now.tv_sec - t0.tv_sec) * 1000 +
					   (now.tv_nsec - t0.tv_nsec) / 1000000);
	}
	c->waiting = false;
	c->wait_fd = NULL;
	return -ETIMEDOUT;
}

static uint32_t next_seq(void)
{
	static uint32_t seq = 0x40000000;

	return ++seq;
}

int smd_peer_request(struct smd *d, uint32_t host, uint16_t type, const void *req,
		     uint32_t len, void *rbuf, uint32_t cap, uint32_t *rlen, int *fd)
{
	struct smio_hdr h;
	uint32_t seq = next_seq();
	uint8_t none;
	int idx, rc, rfd = -1;

	if (fd)
		*fd = -1;
	if (!rbuf) {
		rbuf = &none;       /* an empty reply is still copied (0 bytes) somewhere */
		cap = 0;
	}
	if (host == d->host_id)
		return -EINVAL;     /* a daemon does not talk to itself */
	idx = peer_conn(d, host);
	if (idx < 0)
		return -EHOSTDOWN;
	rc = smio_send(d->conns[idx].fd, type, seq, 0, 0, req, len, -1);
	if (rc < 0) {
		smd_close_conn(d, (unsigned)idx);
		return -EHOSTDOWN;
	}
	rc = wait_reply(d, (unsigned)idx, seq, &h, rbuf, cap, &rfd);
	if (rc < 0) {
		/* A late answer would land on a stream we no longer follow. */
		smd_close_conn(d, (unsigned)idx);
		return -EHOSTDOWN;
	}
	if (h.type != type || h.status < 0 || h.len > cap) {
		if (rfd >= 0)
			close(rfd);
		return h.status < 0 && h.type == type ? h.status : -EPROTO;
	}
	if (rlen)
		*rlen = h.len;
	if (fd)
		*fd = rfd;
	else if (rfd >= 0)
		close(rfd);
	return 0;
}

int smd_peer_post(struct smd *d, uint32_t host, uint16_t type, const void *req,
		  uint32_t len)
{
	int idx = peer_find(d, host);

	if (idx < 0)
		return idx;
	/* The answer comes back as an unsolicited reply and is dropped. */
	if (smio_send(d->conns[idx].fd, type, next_seq(), 0, 0, req, len, -1) < 0) {
		smd_close_conn(d, (unsigned)idx);
		return -ECONNRESET;
	}
	return 0;
}

static void append_hops(struct fab_route *r, const struct smio_route_reply *rep)
{
	for (uint32_t i = 0; i < rep->nhops; i++) {
		struct fab_hop hp = { .kind = rep->hops[i].kind, .gen = rep->hops[i].gen,
			.width = rep->hops[i].width, .host = rep->hops[i].host,
			.bdf = rep->hops[i].bdf, .latency_ns = rep->hops[i].latency_ns };

		memcpy(hp.name, rep->hops[i].name, sizeof(hp.name));
		if (!fab_route_push(r, &hp))
			return;
	}
}

static int remote_step(struct fab_world *w, const struct fab_step *in, struct fab_route *r,
		       struct fab_forward *fwd)
{
	struct smd *d = w->priv;
	struct smio_step st = { .host = in->host, .ntb_index = in->ntb_index,
				.write = in->write, .ntb_hops = r->ntb_hops,
				.addr = in->addr, .len = in->len };
	const struct smio_route_reply *rep = (const void *)d->peer_reply;
	uint32_t rlen;
	int rc, idx;

	if (in->host == d->host_id)
		return fab_route_step_local(d->host, in, r, fwd);
	/* Only the main thread talks to peers: a DMA engine asks it (h_dma.c). */
	if (fab_thread_is_worker())
		return -EWOULDBLOCK;
	rc = smd_peer_request(d, in->host, SMIO_PEER_STEP, &st, sizeof(st), d->peer_reply,
			      SMIO_MAX_PAYLOAD, &rlen, NULL);
	if (rc < 0)
		return rc;
	/*
	 * A step ends on the host that ran it. A target elsewhere is a lie that
	 * would make us trust its memory index as one of ours (h_map indexes
	 * host->mems with it): drop the peer as broken.
	 */
	if (!rep->forward && rep->status == FAB_OK && rep->tgt.host != in->host) {
		idx = peer_find(d, in->host);    /* the connection we just used */
		if (idx >= 0)
			smd_close_conn(d, (unsigned)idx);
		return -EPROTO;
	}
	append_hops(r, rep);
	r->status = rep->status;
	memcpy(r->reason, rep->reason, sizeof(r->reason));
	r->reason[sizeof(r->reason) - 1] = '\0';
	r->tgt = (struct fab_target){ .kind = rep->tgt.kind, .bar = rep->tgt.bar,
		.bdf = rep->tgt.bdf, .host = rep->tgt.host, .mem = rep->tgt.mem,
		.addr = rep->tgt.addr, .offset = rep->tgt.offset, .len = rep->tgt.len };
	if (rep->forward) {
		r->ntb_hops++;
		fwd->forward = true;
		fwd->next = (struct fab_step){ .host = rep->next_host, .from_ntb = true,
			.ntb_index = rep->next_ntb, .write = in->write,
			.addr = rep->next_addr, .len = rep->next_len };
	}
	return 0;
}

static void fan_out_invalidate(struct fab_world *w, uint32_t origin)
{
	struct smd *d = w->priv;
	struct smio_invalidate inv = { .origin_host = origin, .epoch = w->epoch };

	/* Every daemon that stepped through us may cache a route through us. */
	for (unsigned i = 0; i < d->nconns; i++) {
		if (d->conns[i].fd < 0 || d->conns[i].role != SMIO_ROLE_PEER ||
		    d->conns[i].outgoing)
			continue;
		/* A peer that cannot take it is dropped; it reconnects on its next
		 * step, and our closing the connection tells it to distrust its cache. */
		if (smio_send(d->conns[i].fd, SMIO_PEER_INVALIDATE, 0, 0, 0, &inv, sizeof(inv),
			      -1) < 0)
			smd_close_conn(d, i);
	}
}

/* Memory of this host, and other hosts' memory objects the DMA engines had
 * mapped (h_dma.c); another host's memory reaches a process through that
 * host's daemon (SMIO_MAP there), not through ours. */
static void *own_mem_map(struct fab_world *w, uint32_t host, uint32_t mem, uint64_t *size)
{
	struct smd *d = w->priv;

	if (host != d->host_id) {
		void *p = smd_dma_mem_map(d, host, mem, size);   /* mapped for the DMA engines */

		/* The main thread may fetch it (a borrowed device's BAR, pci_iomap). */
		if (!p && !fab_thread_is_worker())
			p = smd_dma_mem_fetch(d, host, mem, size);
		return p;
	}
	if (mem >= d->host->nmems)
		return NULL;
	*size = d->host->mems[mem].size;
	return fab_mem_map(d->host, mem);
}

const struct fab_world_ops smd_world_ops = {
	.step = remote_step,
	.invalidate = fan_out_invalidate,
	.mem_map = own_mem_map,
	.msi = smd_lend_world_msi,   /* a lent device's interrupt for its borrower */
};
