// SPDX-License-Identifier: MIT
/*
 * Program KERNEL: the accelerator runs user-supplied device code.
 *
 * Software loads an ELF shared object into device memory and starts the
 * program with its offset and length (and an argument block). The device
 * then starts a device context: a separate process, smartio-accel-ctx, that
 * maps the device's memory (BAR2's memfd) and nothing of the daemon, dlopens
 * the image and calls its entry. So a kernel that scribbles or crashes hurts
 * only itself and the device's memory, never the daemon.
 *
 * Everything the kernel reaches beyond its own memory goes through a request
 * channel to this device thread, which does the access as the device's DMA:
 * accel_resolve (own BAR2 served locally, the DMA limit) then accel_rd /
 * accel_wr (Bus Master Enable, dev_dma_* through the fabric: IOMMU,
 * switches, NTB windows). The device thread never waits for the context: it
 * serves what has arrived, checks whether the context ended, and returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/accel/accel_kchan.h"
#include "devices/accel/accel_priv.h"
#include "util/log.h"

extern char **environ;

/* Requests served per poll at most, so a chatty kernel cannot hold the device. */
#define KERN_REQ_PER_POLL       64
#define KERN_BUF_SIZE           (sizeof(struct accel_kchan_req) + ACCEL_KERNEL_XFER_MAX)
/* Arguments of the context besides the kernel's own: path, size, bus, bits, "--". */
#define KERN_FIXED_ARGS         5

int accel_kern_init(struct accel *a)
{
	a->kern.chan = -1;
	a->kern.buf = malloc(KERN_BUF_SIZE);
	return a->kern.buf ? 0 : -ENOMEM;
}

static void reap(struct accel *a, bool block)
{
	if (a->kern.reap_pid &&
	    waitpid(a->kern.reap_pid, NULL, block ? 0 : WNOHANG) != 0)
		a->kern.reap_pid = 0;
}

/* The context's end: close the channel; the process is reaped later. */
static void kern_close(struct accel *a)
{
	if (a->kern.chan >= 0)
		close(a->kern.chan);
	a->kern.chan = -1;
	if (a->kern.pid) {
		reap(a, true);               /* at most one left waiting */
		a->kern.reap_pid = a->kern.pid;
		a->kern.pid = 0;
	}
}

void accel_kern_stop(struct accel *a)
{
	if (a->kern.pid)
		kill(a->kern.pid, SIGKILL);
	kern_close(a);
}

void accel_kern_fini(struct accel *a)
{
	accel_kern_stop(a);
	reap(a, true);
	free(a->kern.buf);
	a->kern.buf = NULL;
}

/*
 * The context's program: $SMARTIO_ACCEL_CTX; else, for a daemon run from
 * the build tree, the one built with it; else the installed one.
 */
static void ctx_path(char *buf, size_t len)
{
	const char *env = getenv("SMARTIO_ACCEL_CTX");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	if (!strncmp(exe, ACCEL_CTX_BUILD_ROOT "/", strlen(ACCEL_CTX_BUILD_ROOT) + 1))
		snprintf(buf, len, "%s", ACCEL_CTX_BUILD_PATH);
	else
		snprintf(buf, len, "%s", ACCEL_CTX_INSTALL_PATH);
}

/* Split the argument block into argv[KERN_FIXED_ARGS..]; -1 if malformed. */
static int split_args(const uint8_t *blk, uint64_t len, char **argv, int cap)
{
	int n = 0;
	uint64_t i = 0;

	if (len && blk[len - 1])
		return -1;                   /* every string ends with its NUL */
	while (i < len) {
		if (n == cap)
			return -1;
		argv[n++] = (char *)blk + i;
		i += strlen((const char *)blk + i) + 1;
	}
	return n;
}

static int dup_high(int fd)
{
	/* Above the numbers the context expects, so no dup2 lands on a source. */
	return fcntl(fd, F_DUPFD_CLOEXEC, 16);
}

static uint32_t spawn_ctx(struct accel *a, int image_fd, char **argv)
{
	int sv[2] = { -1, -1 }, mem = -1, img = -1, chan = -1;
	posix_spawn_file_actions_t fa;
	uint32_t sc = ACCEL_SC_NO_KERNEL;
	pid_t pid;
	int rc;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return sc;
	mem = dup_high(a->d->fn.bar_fd[ACCEL_BAR_MEM]);
	img = dup_high(image_fd);
	chan = dup_high(sv[1]);
	if (mem < 0 || img < 0 || chan < 0 || posix_spawn_file_actions_init(&fa))
		goto out;
	posix_spawn_file_actions_adddup2(&fa, mem, ACCEL_KCH_FD_MEM);
	posix_spawn_file_actions_adddup2(&fa, img, ACCEL_KCH_FD_IMAGE);
	posix_spawn_file_actions_adddup2(&fa, chan, ACCEL_KCH_FD_CHAN);
	rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		smio_warn("accel %s: cannot start the device context %s: %s",
			  a->d->fn.td ? a->d->fn.td->name : "?", argv[0], strerror(rc));
		goto out;
	}
	a->kern.pid = pid;
	a->kern.chan = sv[0];
	sv[0] = -1;
	sc = 0;
out:
	if (chan >= 0)
		close(chan);
	if (img >= 0)
		close(img);
	if (mem >= 0)
		close(mem);
	if (sv[1] >= 0)
		close(sv[1]);
	if (sv[0] >= 0)
		close(sv[0]);
	return sc;
}

/* PROG_START of KERNEL: check the ranges, copy the image out, start the context. */
uint32_t accel_kern_start(struct accel *a)
{
	struct accel_prog *p = &a->prog;
	char *argv[KERN_FIXED_ARGS + ACCEL_KERN_ARGS_MAX / 2 + 2];
	char path[PATH_MAX], size[24], bus[24], bits[8];
	char args[ACCEL_KERN_ARGS_MAX];
	uint64_t alen = p->iters;
	int fd, n;
	uint32_t sc;

	reap(a, true);
	a->kern.value = 0;
	a->fail_addr = p->src;
	if (!p->len || p->len > ACCEL_KERN_IMAGE_MAX || p->src > a->mem_size ||
	    p->len > a->mem_size - p->src)
		return ACCEL_SC_RANGE;
	a->fail_addr = p->dst;
	if (alen > ACCEL_KERN_ARGS_MAX)
		return ACCEL_SC_BAD_FIELD;
	if (p->dst > a->mem_size || alen > a->mem_size - p->dst)
		return ACCEL_SC_RANGE;
	/* Latch the arguments: software may reuse the block once we run. */
	memcpy(args, a->mem + p->dst, alen);
	n = split_args((const uint8_t *)args, alen, argv + KERN_FIXED_ARGS,
		       (int)(sizeof(argv) / sizeof(argv[0])) - KERN_FIXED_ARGS - 1);
	if (n < 0)
		return ACCEL_SC_BAD_FIELD;
	if (a->d->fn.bar_fd[ACCEL_BAR_MEM] <= 0 || !a->kern.buf)
		return ACCEL_SC_NO_KERNEL;   /* memory no other process can map */
	fd = memfd_create("accel-kernel", MFD_CLOEXEC);
	if (fd < 0)
		return ACCEL_SC_NO_KERNEL;
	if (write(fd, a->mem + p->src, p->len) != (ssize_t)p->len) {
		close(fd);
		return ACCEL_SC_NO_KERNEL;
	}
	ctx_path(path, sizeof(path));
	snprintf(size, sizeof(size), "%llu", (unsigned long long)a->mem_size);
	snprintf(bus, sizeof(bus), "%llu", (unsigned long long)accel_bar2_base(a));
	snprintf(bits, sizeof(bits), "%u", a->dma_bits);
	argv[0] = path;
	argv[1] = size;
	argv[2] = bus;
	argv[3] = bits;
	argv[4] = (char *)"--";
	argv[KERN_FIXED_ARGS + n] = NULL;
	sc = spawn_ctx(a, fd, argv);
	close(fd);
	return sc;
}

/* One request from the context; replies unless it is a last word. */
static void serve(struct accel *a, size_t n)
{
	struct accel_kchan_req q;
	struct accel_kchan_rep r = { 0 };
	uint8_t *data = a->kern.buf + sizeof(q);
	struct accel_span sp;
	size_t out = sizeof(r);

	memcpy(&q, a->kern.buf, sizeof(q));
	switch (q.op) {
	case ACCEL_KCH_DONE:
		a->kern.value = (int64_t)q.addr;
		accel_kern_stop(a);          /* the kernel is done with the device */
		accel_prog_finish(a, 0);
		return;
	case ACCEL_KCH_NO_KERNEL:
		accel_kern_stop(a);
		accel_prog_finish(a, ACCEL_SC_NO_KERNEL);
		return;
	case ACCEL_KCH_READ:
	case ACCEL_KCH_WRITE:
		if (q.len > ACCEL_KERNEL_XFER_MAX ||
		    (q.op == ACCEL_KCH_WRITE && n != sizeof(q) + q.len)) {
			r.status = ACCEL_SC_BAD_FIELD;
			break;
		}
		r.status = accel_resolve(a, q.addr, q.len, &sp);
		if (r.status)
			break;
		if (q.op == ACCEL_KCH_WRITE) {
			r.status = accel_wr(a, &sp, 0, data, q.len);
			break;
		}
		/* The reply's data goes where the request's header was. */
		r.status = accel_rd(a, &sp, 0, a->kern.buf + sizeof(r), q.len);
		if (!r.status) {
			r.len = q.len;
			out += q.len;
		}
		break;
	default:
		r.status = ACCEL_SC_BAD_OP;
		break;
	}
	if (r.status)
		r.status |= ACCEL_ST_DONE;
	memcpy(a->kern.buf, &r, sizeof(r));
	/* A context that went away is noticed by recv/waitpid next. */
	(void)send(a->kern.chan, a->kern.buf, out, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* The context ended without a last word: it crashed or exited. */
static void ended(struct accel *a)
{
	int st = 0, sig = 0;
	pid_t pid = a->kern.pid;

	if (a->kern.chan >= 0)
		close(a->kern.chan);
	a->kern.chan = -1;
	a->kern.pid = 0;
	/* A context that closed its channel but lives on is ended here, so the
	 * wait below cannot block; one that died keeps its own signal. */
	kill(pid, SIGKILL);
	if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
		sig = WTERMSIG(st);
	a->kern.value = sig;
	accel_prog_finish(a, ACCEL_SC_KERNEL_FAULT);
}

int accel_kern_poll(struct accel *a)
{
	int work = 0;

	reap(a, false);
	for (int i = 0; i < KERN_REQ_PER_POLL && a->kern.pid; i++) {
		ssize_t n = recv(a->kern.chan, a->kern.buf, KERN_BUF_SIZE, MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		work = 1;
		if (n < (ssize_t)sizeof(struct accel_kchan_req)) {
			/* 0: the context closed its end (it exited or died). */
			ended(a);
			break;
		}
		serve(a, (size_t)n);
	}
	return work;
}
