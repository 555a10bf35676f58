// SPDX-License-Identifier: MIT
/*
 * Device Lending's interrupt path in a daemon (docs/lending.md): the MSI
 * channel. A lent device's interrupt is a write that ends at the
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
#include "util/log.h"
#include "lend_priv.h"

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
		smio_error("interrupt thread wake-up: %s", strerror(errno));
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
		smio_error("interrupt thread wake-up: %s", strerror(errno));
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

int smd_lend_msi_start(struct smd *d)
{
	struct smd_lend *l = d->lend;
	int rc;

	for (unsigned i = 0; i < SMD_LEND_MAX; i++) {
		l->msi_rd[i] = -1;
		l->msi_wr[i] = -1;
	}
	l->intc_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->intc_wake < 0)
		return -errno;
	pthread_mutex_init(&l->msi_mu, NULL);
	rc = pthread_create(&l->intc_thr, NULL, intc_main, d);
	if (rc)
		return -rc;
	l->intc_started = true;
	pthread_setname_np(l->intc_thr, "smd-intc");
	return 0;
}

void smd_lend_msi_stop(struct smd *d)
{
	struct smd_lend *l = d->lend;
	uint64_t one = 1;
	unsigned depth;

	/* The interrupt thread takes the host lock to deliver: not held while joining. */
	depth = fab_host_unlock_all(d->host);
	if (l->intc_started) {
		pthread_mutex_lock(&l->msi_mu);
		l->intc_stop = true;
		pthread_mutex_unlock(&l->msi_mu);
		if (write(l->intc_wake, &one, sizeof(one)) < 0)
			smio_error("interrupt thread wake-up: %s", strerror(errno));
		pthread_join(l->intc_thr, NULL);
	}
	fab_host_relock(d->host, depth);
	for (unsigned i = 0; i < SMD_LEND_MAX; i++) {
		if (l->msi_rd[i] >= 0)
			close(l->msi_rd[i]);
		if (l->msi_wr[i] >= 0)
			close(l->msi_wr[i]);
	}
	if (l->intc_wake >= 0)
		close(l->intc_wake);
}
