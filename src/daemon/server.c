// SPDX-License-Identifier: MIT
/*
 * smartiod's connections and event loop. The request handlers, the handler
 * table and dispatch are in dispatch.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"

int smd_add_conn(struct smd *d, int fd, bool outgoing, uint32_t role, uint32_t host)
{
	unsigned i;

	/* Slots never move while in use: callers may hold an index across a wait. */
	for (i = 0; i < d->nconns; i++)
		if (d->conns[i].fd < 0)
			break;
	if (i == d->nconns) {
		if (d->nconns >= SMD_MAX_CONNS)
			return -EMFILE;
		d->nconns++;
	}
	if (++d->next_cid == 0)
		d->next_cid = 1;
	d->conns[i] = (struct smd_conn){ .fd = fd, .outgoing = outgoing, .role = role,
					 .host = host, .in_fd = -1, .cid = d->next_cid };
	return (int)i;
}

void smd_close_conn(struct smd *d, unsigned idx)
{
	struct smd_conn *c = &d->conns[idx];

	if (c->fd < 0)
		return;
	/* Segments, connections and references die with their connection. */
	smd_dev_conn_closed(d, idx);   /* device mappings pin segments: first */
	smd_dma_conn_closed(d, idx);   /* first: its transfers use the segments */
	smd_seg_conn_closed(d, idx);
	smd_intr_conn_closed(d, idx);
	smd_lend_conn_closed(d, idx);  /* after the pool dropped the lease */
	close(c->fd);
	if (c->in_fd >= 0)
		close(c->in_fd);
	free(c->in);
	/* Routes through a peer we lost contact with can no longer be trusted. */
	if (c->outgoing)
		__atomic_fetch_add(&d->world.epoch, 1, __ATOMIC_ACQ_REL);
	*c = (struct smd_conn){ .fd = -1, .in_fd = -1 };
	while (d->nconns && d->conns[d->nconns - 1].fd < 0)
		d->nconns--;
}

static void accept_one(struct smd *d)
{
	int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (smd_add_conn(d, fd, false, 0, 0) < 0)
		close(fd);  /* over the limit: the client sees the connection close */
}

/*
 * Collect the descriptors that arrived with these bytes. A message carries at
 * most one: more is a protocol violation (false), and all of them are closed.
 */
static bool take_fds(struct smd_conn *c, struct msghdr *mh)
{
	bool ok = !(mh->msg_flags & MSG_CTRUNC);

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t n;
		int *fds;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		fds = (int *)CMSG_DATA(cm);
		for (size_t i = 0; i < n; i++) {
			if (c->in_fd < 0 && ok) {
				c->in_fd = fds[i];
				continue;
			}
			close(fds[i]);
			ok = false;
		}
	}
	return ok;
}

/* A complete message sits in c->in: validate the payload and act on it. */
static void finish_message(struct smd *d, unsigned idx)
{
	struct smd_conn *c = &d->conns[idx];
	struct smio_hdr h;
	int fd = c->in_fd, rc;

	memcpy(&h, c->in, sizeof(h));
	c->have = 0;
	c->in_fd = -1;
	if (!!(h.flags & SMIO_F_FD) != (fd >= 0)) {
		/* A descriptor promised and missing (or the reverse): framing
		 * can no longer be trusted. */
		if (fd >= 0)
			close(fd);
		d->rejected++;
		smd_close_conn(d, idx);
		return;
	}
	/* An error reply may be empty whatever its type (as smio_recv accepts). */
	if ((h.flags & SMIO_F_REPLY) && h.status < 0 && !h.len)
		rc = 0;
	else
		rc = smio_payload_check(h.type, h.flags & SMIO_F_REPLY, c->in + sizeof(h),
					h.len);
	if (rc) {
		/* Framing intact, content invalid: say so and keep the connection. */
		if (fd >= 0)
			close(fd);
		d->rejected++;
		if (!(h.flags & SMIO_F_REPLY) &&
		    smio_send(c->fd, h.type, h.seq, rc, SMIO_F_REPLY, NULL, 0, -1) < 0)
			smd_close_conn(d, idx);
		return;
	}
	if ((h.flags & SMIO_F_REPLY) && c->waiting && h.seq == c->wait_seq) {
		/* The answer a peer request is waiting for (see peer.c). */
		if (fd >= 0 && c->wait_fd)
			*c->wait_fd = fd;
		else if (fd >= 0)
			close(fd);
		*c->wait_hdr = h;
		memcpy(c->wait_buf, c->in + sizeof(h), h.len < c->wait_cap ? h.len : c->wait_cap);
		c->waiting = false;
		c->replied = true;
		return;
	}
	/* Handlers may reuse d->buf; the payload stays in this connection's buffer. */
	smd_dispatch(d, idx, &h, c->in + sizeof(h), fd);
}

void smd_conn_input(struct smd *d, unsigned idx)
{
	/* Bounded: header, then payload, then act; never waits for missing bytes. */
	for (int round = 0; round < 3; round++) {
		struct smd_conn *c = &d->conns[idx];
		union { char buf[CMSG_SPACE(4 * sizeof(int))]; struct cmsghdr align; } ctl;
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		uint32_t need = sizeof(struct smio_hdr);
		ssize_t n;

		if (c->fd < 0)
			return;
		if (!c->in) {
			c->in = malloc(sizeof(struct smio_hdr) + SMIO_MAX_PAYLOAD);
			if (!c->in) {
				smd_close_conn(d, idx);
				return;
			}
		}
		if (c->have >= need)
			need += ((const struct smio_hdr *)c->in)->len;
		iov = (struct iovec){ c->in + c->have, need - c->have };
		n = need > c->have ? recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) : 0;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0 && need > c->have) {
			smd_close_conn(d, idx);     /* EOF or error */
			return;
		}
		if (!take_fds(c, &mh)) {
			d->rejected++;
			smd_close_conn(d, idx);
			return;
		}
		c->have += (uint32_t)n;
		if (c->have == sizeof(struct smio_hdr)) {
			const struct smio_hdr *h = (const void *)c->in;

			if (smio_hdr_check(h)) {
				d->rejected++;       /* framing is lost */
				smd_close_conn(d, idx);
				return;
			}
			if (h->len)
				continue;
		}
		if (c->have < sizeof(struct smio_hdr) ||
		    c->have < sizeof(struct smio_hdr) + ((const struct smio_hdr *)c->in)->len)
			continue;
		/* One message per connection per wake-up: connections take turns. */
		finish_message(d, idx);
		return;
	}
}

int smd_serve(struct smd *d)
{
	static struct pollfd pfd[SMD_MAX_CONNS + 3];
	static unsigned map[SMD_MAX_CONNS + 3];

	while (!d->stop) {
		unsigned n = 0;
		int rc;

		pfd[n++] = (struct pollfd){ .fd = d->signal_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d->listen_fd, .events = POLLIN };
		/* The DMA engines' questions (-1, ignored, without engines). */
		pfd[n++] = (struct pollfd){ .fd = smd_dma_fd(d), .events = POLLIN };
		for (unsigned i = 0; i < d->nconns; i++) {
			if (d->conns[i].fd < 0)
				continue;
			map[n] = i;
			pfd[n++] = (struct pollfd){ .fd = d->conns[i].fd, .events = POLLIN };
		}
		/* Block with no timeout: an idle host costs nothing. */
		rc = poll(pfd, n, -1);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(d->signal_fd, &si, sizeof(si)) == sizeof(si))
				d->stop = true;
		}
		if (pfd[2].revents & POLLIN)
			smd_dma_service(d);
		for (unsigned k = 3; k < n && !d->stop; k++)
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				if (d->conns[map[k]].fd == pfd[k].fd)
					smd_conn_input(d, map[k]);
		if (pfd[1].revents & POLLIN)
			accept_one(d);
	}
	return 0;
}
