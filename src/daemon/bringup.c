// SPDX-License-Identifier: MIT
/*
 * One host up and down (bringup.h): moved out of smartiod's main() so that
 * the daemon fuzzer runs an in-process host through the very same steps.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bringup.h"
#include "diag.h"
#include "util/log.h"
#include "devices/models.h"
#include "host/drivers/drivers.h"
#include "host/enum.h"
#include "smartio/timing.h"

static int make_listener(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, probe;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	/* A live daemon answers; a stale socket file from a crash does not. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(probe);
		snprintf(err, errlen, "a daemon is already serving %s", path);
		return -EADDRINUSE;
	}
	if (probe >= 0)
		close(probe);
	unlink(path);
	/* Non-blocking: the event loop never waits in accept4. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    /* Any user's processes may be clients; roles are checked per
	     * connection against the kernel's credentials (auth.c). */
	    chmod(path, 0666) < 0 || listen(fd, 512) < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

/* Blocked in every thread; the event loop takes them (sd-event's signal sources). */
static int signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	return pthread_sigmask(SIG_BLOCK, &set, NULL) ? -EINVAL : 0;
}

/*
 * Every connection is a descriptor: take what the hard limit allows, so a
 * flood of connections meets our own bounds (core.h) before the kernel's.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* How far smd_up got: what smd_down (or a failure) must undo. */
enum { UP_TOPO, UP_HOST, UP_SOCK };

static void down_from(struct smd *d, struct smd_up *u, int stage)
{
	if (stage >= UP_SOCK) {
		close(d->listen_fd);
		unlink(u->sock);
		unlink(u->pidfile);
	}
	if (stage >= UP_HOST) {
		/* The workers are done (the loop drained them): join them. */
		if (d->core)
			smd_work_stop(d);
		/* The DMA engines stop first, without the host lock (they take it). */
		smd_dma_fini(d);
		if (d->pci) {
			fab_host_lock(d->host);
			smd_cz_fini(d);        /* logic devices too; before lend's MSI channels */
			smd_lend_fini(d);      /* shadows go before the PCI core */
			smd_dev_fini(d);
			smd_intr_fini(d);
			smd_mc_fini(d);        /* overlays onto segments go before them */
			smd_seg_fini(d);
			pci_host_destroy(d->pci);
			fab_host_unlock(d->host);
		}
		devrun_stop(d->devs);
		/* The log goes once nothing can log: no device thread, worker or loop. */
		if (d->pci) {
			fab_host_lock(d->host);
			smd_diag_fini(d);
			fab_host_unlock(d->host);
		}
		smd_dma_release(d);
		smd_loop_fini(d);
		fab_host_destroy(d->host);
	}
	smd_mc_fini(d);               /* a failed bring-up: only the mapping is left */
	smd_cz_fini(d);
	free(d->reply);
	topo_free(d->topo);
}

int smd_up(struct smd *d, const char *topo_path, struct smd_up *u)
{
	struct timing_params timing;    /* faithful mode's calibration (devrun copies it) */
	char err[512] = "";
	int idx, rc;
	FILE *pf;

	rc = topo_load_file(topo_path, &d->topo, err, sizeof(err));
	if (rc) {
		smio_error("%s", err);
		return -1;
	}
	idx = topo_host_index(d->topo, d->host_id);
	if (idx < 0) {
		smio_error("%s has no host %u", topo_path, d->host_id);
		goto out_topo;
	}
	d->world = (struct fab_world){ .topo = d->topo, .ops = &smd_world_ops, .priv = d };
	d->listen_fd = -1;
	clock_gettime(CLOCK_MONOTONIC, &d->started);
	d->reply = malloc(SMIO_MAX_PAYLOAD);
	if (!d->reply)
		goto out_topo;
	raise_fd_limit();
	/* Block the signals before any thread exists, so every thread inherits
	 * the mask and they all arrive at the event loop. */
	if (signals() < 0) {
		smio_error("signals: %s", strerror(errno));
		goto out_topo;
	}
	/* The cluster switches' registers first: the host's NTBs use them. */
	rc = smd_mc_init(d);
	if (rc)
		snprintf(err, sizeof(err), "%s/mcast.regs: %s", d->dir, strerror(-rc));
	if (!rc) {
		rc = smd_cz_init(d);
		if (rc)
			snprintf(err, sizeof(err), "%s/czodiac.iop: %s", d->dir, strerror(-rc));
	}
	if (!rc)
		rc = fab_host_create(&d->world, d->topo, (uint32_t)idx, dev_endpoint_init,
				     &d->host, err, sizeof(err));
	if (!rc)
		smd_mc_host_ready(d);
	if (!rc)
		rc = host_enumerate(d->host, err, sizeof(err));
	if (!rc)
		rc = host_ntb_init(d->host, err, sizeof(err));
	/* The core's workers first: what device threads cannot do alone goes to them. */
	if (!rc) {
		rc = smd_core_init(d);
		if (rc)
			snprintf(err, sizeof(err), "daemon core: %s", strerror(-rc));
	}
	/* Power the devices on, then let the kernel's PCI core find them. With
	 * `timing: faithful` they answer by the built-in calibration (which
	 * equals topologies/timing.yaml). */
	timing_params_default(&timing);
	if (!rc)
		rc = devrun_start(d->host, &(struct devrun_ops){ .access = smd_worker_access,
				  .arg = d,
				  .timing = d->topo->timing_faithful ? &timing : NULL }, &d->devs, err, sizeof(err));
	if (!rc) {
		fab_host_lock(d->host);
		rc = pci_host_create(d->host, &d->pci, err, sizeof(err));
		/* Drivers bind to the devices this host keeps for itself. */
		if (!rc)
			rc = pci_register_driver(d->pci, &nvme_pci_driver);
		if (!rc)
			rc = pci_register_driver(d->pci, &accel_pci_driver);
		/* The event log first: the services log what they do from the start. */
		if (!rc)
			rc = smd_diag_init(d);
		/* SISCI segments take their memory from the PCI core's allocator. */
		if (!rc)
			rc = smd_seg_init(d);
		if (!rc)
			rc = smd_intr_init(d);
		if (!rc)
			rc = smd_dma_init(d);
		if (!rc)
			rc = smd_dev_init(d);
		if (!rc)
			rc = smd_lend_init(d);
		fab_host_unlock(d->host);
	}
	if (rc) {
		smio_error("%s", err[0] ? err : strerror(-rc));
		goto out_host;
	}
	smio_sock_path(d->dir, d->host_id, u->sock, sizeof(u->sock));
	snprintf(u->pidfile, sizeof(u->pidfile), "%s/host-%u.pid", d->dir, d->host_id);
	/* Claim the socket first: if another daemon serves this host, leave its
	 * socket and pid file alone. Once the socket answers, the host is up. */
	d->listen_fd = make_listener(u->sock, err, sizeof(err));
	if (d->listen_fd < 0) {
		smio_error("%s", err);
		goto out_host;
	}
	pf = fopen(u->pidfile, "w");
	if (!pf || fprintf(pf, "%d\n", (int)getpid()) < 0 || fclose(pf)) {
		smio_error("cannot write %s: %s", u->pidfile, strerror(errno));
		close(d->listen_fd);
		unlink(u->sock);
		goto out_host;
	}
	smio_info("%s up: %u functions, %u NTBs, IOMMU %s", d->host->t->name, d->host->nfuncs,
		  d->host->nntbs, d->host->t->iommu ? "on" : "off");
	rc = smd_loop_init(d);
	if (rc) {
		smio_error("event loop: %s", strerror(-rc));
		goto out_sock;
	}
	return 0;
out_sock:
	down_from(d, u, UP_SOCK);
	return -1;
out_host:
	down_from(d, u, UP_HOST);
	return -1;
out_topo:
	down_from(d, u, UP_TOPO);
	return -1;
}

void smd_down(struct smd *d, struct smd_up *u)
{
	down_from(d, u, UP_SOCK);
}

int smd_map_shared_file(struct smd *d, const char *name, size_t size, void **p, int *fd_out)
{
	char path[4096];
	struct stat st;
	int fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/%s", d->dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* Every daemon makes it this long; extending is idempotent and reads zeros. */
	if (fstat(fd, &st) || (st.st_size < (off_t)size && ftruncate(fd, (off_t)size)))
		rc = -errno;
	if (!rc) {
		*p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (*p == MAP_FAILED)
			rc = -errno;
	}
	if (rc || !fd_out)
		close(fd);
	else
		*fd_out = fd;
	return rc;
}
