// SPDX-License-Identifier: MIT
/*
 * smartio-accel-ctx: an accelerator's device context. The accelerator model
 * starts one per KERNEL program (accel_kern.c) with
 *
 *     smartio-accel-ctx MEM_SIZE MEM_BUS DMA_BITS -- KERNEL_ARGS...
 *
 * and fds 3 (device memory), 4 (the kernel's ELF image) and 5 (the request
 * channel, accel_kchan.h). It maps the device memory, dlopens the image,
 * calls accel_kernel_main and sends the return value as its last word. All
 * it can reach besides the device memory is what the device thread does for
 * it over the channel, as the device's DMA. Not a program for people to run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "devices/accel/accel_kchan.h"
#include "smartio/accel_regs.h"

struct ctx {
	int chan;
	uint8_t buf[sizeof(struct accel_kchan_req) + ACCEL_KERNEL_XFER_MAX];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One request and its reply; the device thread answers every READ/WRITE. */
static uint32_t xfer(struct ctx *c, uint32_t op, uint64_t bus, void *rbuf, const void *wbuf,
		     size_t len)
{
	struct accel_kchan_req q = { .op = op, .len = (uint32_t)len, .addr = bus };
	struct accel_kchan_rep r;
	size_t out = sizeof(q);
	ssize_t n;

	memcpy(c->buf, &q, sizeof(q));
	if (wbuf) {
		memcpy(c->buf + sizeof(q), wbuf, len);
		out += len;
	}
	if (send(c->chan, c->buf, out, MSG_NOSIGNAL) != (ssize_t)out)
		_exit(1);                    /* the device is gone: so are we */
	do
		n = recv(c->chan, c->buf, sizeof(c->buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < (ssize_t)sizeof(r))
		_exit(1);
	memcpy(&r, c->buf, sizeof(r));
	if (!r.status && rbuf) {
		if (r.len != len || (size_t)n != sizeof(r) + len)
			return ACCEL_ST_MAKE(ACCEL_SC_BAD_FIELD, 0);
		memcpy(rbuf, c->buf + sizeof(r), len);
	}
	return r.status;
}

static uint32_t k_read(struct accel_kctx *k, uint64_t bus, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		size_t n = len < ACCEL_KERNEL_XFER_MAX ? len : ACCEL_KERNEL_XFER_MAX;
		uint32_t st = xfer(k->priv, ACCEL_KCH_READ, bus, p, NULL, n);

		if (st)
			return st;
		p += n;
		bus += n;
		len -= n;
	}
	return 0;
}

static uint32_t k_write(struct accel_kctx *k, uint64_t bus, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* The kernel's stores to its memory come before what it writes out
	 * (a doorbell after the queue entries). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	while (len) {
		size_t n = len < ACCEL_KERNEL_XFER_MAX ? len : ACCEL_KERNEL_XFER_MAX;
		uint32_t st = xfer(k->priv, ACCEL_KCH_WRITE, bus, NULL, p, n);

		if (st)
			return st;
		p += n;
		bus += n;
		len -= n;
	}
	return 0;
}

static void last_word(int chan, uint32_t op, uint64_t value)
{
	struct accel_kchan_req q = { .op = op, .addr = value };

	(void)send(chan, &q, sizeof(q), MSG_NOSIGNAL);
}

int main(int argc, char **argv)
{
	static struct ctx c = { .chan = ACCEL_KCH_FD_CHAN };
	struct accel_kctx k = { .abi = ACCEL_KERNEL_ABI };
	accel_kernel_fn *entry;
	void *so;
	int64_t v;

	/* The context lives no longer than the daemon whose device runs it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (argc < 5 || strcmp(argv[4], "--")) {
		fprintf(stderr, "smartio-accel-ctx: started by the accelerator model only\n");
		return 2;
	}
	k.mem_size = strtoull(argv[1], NULL, 0);
	k.mem_bus = strtoull(argv[2], NULL, 0);
	k.dma_bits = (uint32_t)strtoul(argv[3], NULL, 0);
	k.mem = mmap(NULL, k.mem_size, PROT_READ | PROT_WRITE, MAP_SHARED, ACCEL_KCH_FD_MEM, 0);
	close(ACCEL_KCH_FD_MEM);
	if (k.mem == MAP_FAILED) {
		last_word(c.chan, ACCEL_KCH_NO_KERNEL, 0);
		return 1;
	}
	so = dlopen("/proc/self/fd/4", RTLD_NOW | RTLD_LOCAL);
	entry = so ? (accel_kernel_fn *)dlsym(so, ACCEL_KERNEL_ENTRY) : NULL;
	close(ACCEL_KCH_FD_IMAGE);
	if (!entry) {
		fprintf(stderr, "smartio-accel-ctx: kernel did not load: %s\n",
			so ? "no " ACCEL_KERNEL_ENTRY : dlerror());
		last_word(c.chan, ACCEL_KCH_NO_KERNEL, 0);
		return 1;
	}
	/* A kernel's fault ends the context by its signal, which the device
	 * reports (a sanitizer runtime would catch it and exit instead). */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	/* Nothing the daemon may have left open reaches the kernel. */
	close_range(ACCEL_KCH_FD_CHAN + 1, ~0u, 0);
	k.read = k_read;
	k.write = k_write;
	k.now_ns = now_ns;
	k.priv = &c;
	/* argv[4] is "--": the kernel's argv[0] is the "--" slot, renamed. */
	argv[4] = (char *)"kernel";
	v = entry(&k, argc - 4, argv + 4);
	last_word(c.chan, ACCEL_KCH_DONE, (uint64_t)v);
	/* The device kills us once it has the value; no exit handlers needed. */
	pause();
	return 0;
}
