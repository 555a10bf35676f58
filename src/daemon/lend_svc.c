// SPDX-License-Identifier: MIT
/*
 * Two helpers Device Lending needs in a daemon (docs/lending.md):
 *
 * The wait service. In-kernel drivers run on the main thread and drop the
 * host lock while they wait for their device (fab_host_unlock_all). A
 * borrowed device sits at its lender, whose routes into our memory need
 * answers from us (PEER_STEP, PEER_MEMFD): while the main thread waits, a
 * second thread serves our peer connections in its place. The two never run
 * together: the loop mutex is the main thread's, except while it waits, so
 * the daemon stays logically single-threaded.
 *
 * The MSI channel. A lent device's interrupt is a write that ends at the
 * borrower's interrupt controller; a device thread at the lender cannot send
 * peer messages, so the lender writes (address, data) into a pipe whose read
 * end the borrower got with the grant, and a borrower thread delivers it to
 * the interrupt controller (the hardware's message path: no main loop).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "daemon.h"
#include "lend_priv.h"

/* ---------- the wait service ---------- */

static void wait_hook(void *arg, bool waiting)
{
	struct smd_lend *l = arg;
	uint64_t one = 1;

	if (!pthread_equal(pthread_self(), l->main_thread))
		return;   /* only the main thread's waits hand the loop over */
	/*
	 * Only a host with borrowed devices needs it (their lenders ask us while
	 * our driver waits); everyone else's waits stay as cheap as before. The
	 * decision is kept for the matching relock: a borrow may end meanwhile.
	 */
	if (waiting) {
		l->handed = l->nborrowed > 0;
		if (!l->handed)
			return;
	} else if (!l->handed) {
		return;
	}
	if (waiting) {
		pthread_mutex_lock(&l->svc_mu);
		l->svc_waiting = true;
		pthread_cond_signal(&l->svc_cv);
		pthread_mutex_unlock(&l->svc_mu);
		pthread_mutex_unlock(&l->loop_mu);
	} else {
		pthread_mutex_lock(&l->svc_mu);
		l->svc_waiting = false;
		pthread_mutex_unlock(&l->svc_mu);
		if (write(l->svc_wake, &one, sizeof(one)) < 0 && errno != EAGAIN)
			perror("smartiod: wait service wake-up");
		pthread_mutex_lock(&l->loop_mu);
	}
}

static void *svc_main(void *arg)
{
	struct smd *d = arg;
	struct smd_lend *l = d->lend;

	for (;;) {
		struct pollfd pfd[SMD_MAX_CONNS + 3];
		unsigned map[SMD_MAX_CONNS + 3], n = 0;
		uint8_t *saved;
		uint64_t cnt;
		bool waiting;

		pthread_mutex_lock(&l->svc_mu);
		while (!l->svc_waiting && !l->svc_stop)
			pthread_cond_wait(&l->svc_cv, &l->svc_mu);
		waiting = !l->svc_stop;
		pthread_mutex_unlock(&l->svc_mu);
		if (!waiting)
			break;
		pthread_mutex_lock(&l->loop_mu);
		pfd[n++] = (struct pollfd){ .fd = l->svc_wake, .events = POLLIN };
		/* New peers, and our devices' questions that need peers (h_dma.c). */
		pfd[n++] = (struct pollfd){ .fd = d->listen_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = smd_dma_fd(d), .events = POLLIN };
		for (unsigned i = 0; i < d->nconns && n < SMD_MAX_CONNS + 3; i++) {
			/* Peers, and connections still to say HELLO (a peer connecting);
			 * never applications: their requests may call drivers. */
			if (d->conns[i].fd < 0 || (d->conns[i].role != SMIO_ROLE_PEER &&
						   d->conns[i].role != 0))
				continue;
			pfd[n] = (struct pollfd){ .fd = d->conns[i].fd, .events = POLLIN };
			map[n++] = i;
		}
		pthread_mutex_lock(&l->svc_mu);
		waiting = l->svc_waiting;
		pthread_mutex_unlock(&l->svc_mu);
		if (waiting && poll(pfd, n, 100) > 0) {
			/* Our own reply buffer: the waiting handler's stays intact. */
			saved = d->reply;
			d->reply = l->svc_reply;
			for (unsigned k = 3; k < n; k++)
				if ((pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
				    d->conns[map[k]].fd == pfd[k].fd)
					smd_conn_input(d, map[k]);
			if (pfd[2].fd >= 0 && (pfd[2].revents & POLLIN))
				smd_dma_service(d);
			if (pfd[1].revents & POLLIN) {
				int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);

				if (fd >= 0 && smd_add_conn(d, fd, false, 0, 0) < 0)
					close(fd);
			}
			d->reply = saved;
			if (pfd[0].revents & POLLIN)
				(void)!read(l->svc_wake, &cnt, sizeof(cnt));
		}
		pthread_mutex_unlock(&l->loop_mu);
	}
	return NULL;
}

/* ---------- the MSI channel, borrower side ---------- */

static void *intc_main(void *arg)
{
	struct smd *d = arg;
	struct smd_lend *l = d->lend;

	for (;;) {
		struct pollfd pfd[SMD_LEND_MAX + 1];
		unsigned n = 0;
		uint64_t cnt;

		pthread_mutex_lock(&l->msi_mu);
		if (l->intc_stop) {
			pthread_mutex_unlock(&l->msi_mu);
			break;
		}
		pfd[n++] = (struct pollfd){ .fd = l->intc_wake, .events = POLLIN };
		for (unsigned i = 0; i < SMD_LEND_MAX; i++)
			if (l->msi_rd[i] >= 0)
				pfd[n++] = (struct pollfd){ .fd = l->msi_rd[i], .events = POLLIN };
		pthread_mutex_unlock(&l->msi_mu);
		if (poll(pfd, n, -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & POLLIN)
			(void)!read(l->intc_wake, &cnt, sizeof(cnt));
		for (unsigned k = 1; k < n; k++) {
			struct smd_msi_msg m[64];
			ssize_t got;

			if (!(pfd[k].revents & POLLIN))
				continue;
			/* The table may have changed: the fd is ours until removed under msi_mu. */
			pthread_mutex_lock(&l->msi_mu);
			got = read(pfd[k].fd, m, sizeof(m));
			pthread_mutex_unlock(&l->msi_mu);
			if (got <= 0)
				continue;
			fab_host_lock(d->host);
			for (ssize_t i = 0; i < got / (ssize_t)sizeof(m[0]); i++)
				if (fab_intc_deliver(&d->host->intc, m[i].addr, m[i].data))
					l->msi_bad++;
			fab_host_unlock(d->host);
		}
	}
	return NULL;
}

int smd_lend_msi_add(struct smd *d, int fd)
{
	struct smd_lend *l = d->lend;
	uint64_t one = 1;
	int rc = -ENOSPC;

	pthread_mutex_lock(&l->msi_mu);
	for (unsigned i = 0; i < SMD_LEND_MAX; i++)
		if (l->msi_rd[i] < 0) {
			l->msi_rd[i] = fd;
			rc = (int)i;
			break;
		}
	pthread_mutex_unlock(&l->msi_mu);
	if (rc >= 0 && write(l->intc_wake, &one, sizeof(one)) < 0)
		perror("smartiod: interrupt thread wake-up");
	return rc;
}

void smd_lend_msi_del(struct smd *d, int slot)
{
	struct smd_lend *l = d->lend;
	uint64_t one = 1;

	if (slot < 0 || slot >= SMD_LEND_MAX)
		return;
	pthread_mutex_lock(&l->msi_mu);
	if (l->msi_rd[slot] >= 0)
		close(l->msi_rd[slot]);
	l->msi_rd[slot] = -1;
	pthread_mutex_unlock(&l->msi_mu);
	if (write(l->intc_wake, &one, sizeof(one)) < 0)
		perror("smartiod: interrupt thread wake-up");
}

/* ---------- the MSI channel, lender side (world op, any thread) ---------- */

int smd_lend_world_msi(struct fab_world *w, uint32_t host, uint64_t addr, uint32_t data)
{
	struct smd *d = w->priv;
	struct smd_lend *l = d->lend;
	struct smd_msi_msg m = { .addr = addr, .data = data };
	int rc = -EREMOTE;

	if (!l)
		return rc;
	pthread_mutex_lock(&l->msi_mu);
	for (unsigned i = 0; i < SMD_LEND_MAX; i++)
		if (l->msi_wr[i] >= 0 && l->msi_host[i] == host) {
			/* One message, atomic in a pipe; a full pipe loses it (as a
			 * borrower that stopped reading would). */
			rc = write(l->msi_wr[i], &m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : FAB_UR;
			break;
		}
	pthread_mutex_unlock(&l->msi_mu);
	return rc;
}

int smd_lend_msi_channel(struct smd *d, uint32_t host, int *rd, int *slot)
{
	struct smd_lend *l = d->lend;
	int p[2], rc = -ENOSPC;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	pthread_mutex_lock(&l->msi_mu);
	for (unsigned i = 0; i < SMD_LEND_MAX; i++)
		if (l->msi_wr[i] < 0) {
			l->msi_wr[i] = p[1];
			l->msi_host[i] = host;
			*slot = (int)i;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&l->msi_mu);
	if (rc) {
		close(p[0]);
		close(p[1]);
		return rc;
	}
	*rd = p[0];
	return 0;
}

void smd_lend_msi_channel_close(struct smd *d, int slot)
{
	struct smd_lend *l = d->lend;

	if (slot < 0 || slot >= SMD_LEND_MAX)
		return;
	pthread_mutex_lock(&l->msi_mu);
	if (l->msi_wr[slot] >= 0)
		close(l->msi_wr[slot]);
	l->msi_wr[slot] = -1;
	pthread_mutex_unlock(&l->msi_mu);
}

/* ---------- start and stop ---------- */

int smd_lend_svc_start(struct smd *d)
{
	struct smd_lend *l = d->lend;
	unsigned depth;
	int rc;

	for (unsigned i = 0; i < SMD_LEND_MAX; i++) {
		l->msi_rd[i] = -1;
		l->msi_wr[i] = -1;
	}
	l->svc_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->intc_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->svc_reply = malloc(SMIO_MAX_PAYLOAD);
	if (l->svc_wake < 0 || l->intc_wake < 0 || !l->svc_reply)
		return -ENOMEM;
	pthread_mutex_init(&l->loop_mu, NULL);
	pthread_mutex_init(&l->svc_mu, NULL);
	pthread_mutex_init(&l->msi_mu, NULL);
	pthread_cond_init(&l->svc_cv, NULL);
	l->main_thread = pthread_self();
	/* The main thread's, except while it waits; taken before the host lock,
	 * as the wait hook takes it back. */
	depth = fab_host_unlock_all(d->host);
	pthread_mutex_lock(&l->loop_mu);
	fab_host_relock(d->host, depth);
	rc = pthread_create(&l->svc_thr, NULL, svc_main, d);
	if (rc) {
		pthread_mutex_unlock(&l->loop_mu);
		return -rc;
	}
	l->svc_started = true;
	rc = pthread_create(&l->intc_thr, NULL, intc_main, d);
	if (rc)
		return -rc;
	l->intc_started = true;
	d->host->wait_arg = l;
	d->host->wait_hook = wait_hook;
	return 0;
}

void smd_lend_svc_stop(struct smd *d)
{
	struct smd_lend *l = d->lend;
	uint64_t one = 1;
	unsigned depth;

	d->host->wait_hook = NULL;
	/* The interrupt thread takes the host lock to deliver: not held while joining. */
	depth = fab_host_unlock_all(d->host);
	if (l->svc_started) {
		pthread_mutex_lock(&l->svc_mu);
		l->svc_stop = true;
		pthread_cond_signal(&l->svc_cv);
		pthread_mutex_unlock(&l->svc_mu);
		/* It may be waiting for the loop: let it see the stop. */
		pthread_mutex_unlock(&l->loop_mu);
		pthread_join(l->svc_thr, NULL);
	}
	if (l->intc_started) {
		pthread_mutex_lock(&l->msi_mu);
		l->intc_stop = true;
		pthread_mutex_unlock(&l->msi_mu);
		if (write(l->intc_wake, &one, sizeof(one)) < 0)
			perror("smartiod: interrupt thread wake-up");
		pthread_join(l->intc_thr, NULL);
	}
	fab_host_relock(d->host, depth);
	for (unsigned i = 0; i < SMD_LEND_MAX; i++) {
		if (l->msi_rd[i] >= 0)
			close(l->msi_rd[i]);
		if (l->msi_wr[i] >= 0)
			close(l->msi_wr[i]);
	}
	if (l->svc_wake >= 0)
		close(l->svc_wake);
	if (l->intc_wake >= 0)
		close(l->intc_wake);
	free(l->svc_reply);
}
