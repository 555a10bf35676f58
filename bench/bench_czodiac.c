// SPDX-License-Identifier: MIT
/*
 * bench_czodiac: cZodiac's primitives (libczodiac) between two hosts of the
 * emulated cluster, beside the timing model's prediction for the paper's
 * Gen2 x8 prototype (docs/benchmarks.md, docs/czodiac.md).
 *
 *   smartio cluster up topologies/papers/czodiac-gen2x8.yaml
 *   smartio exec --host 1 -- bench_czodiac server 4 &    # 4: node of host 0
 *   smartio exec --host 0 -- bench_czodiac client 8      # 8: node of host 1
 *
 * Latency: ping-pong of each primitive (DAP store, NAP, RDMA PUT) there and
 * back, half the median round trip; RDMA GET: the median of one GET. Then
 * bandwidth of PUT and GET one message at a time. The client prints one line
 * per measurement, "latency|bandwidth PRIMITIVE SIZE EMULATED MODEL", ns or
 * GB/s (the model: the Gen2 x8 prototype, topologies/timing.yaml defaults).
 * Options: -n ROUNDS (latency, 2000), -b REPEAT (bandwidth, 20), -j JOB (0x2d).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sisci_api.h"
#include "smartio/czodiac.h"
#include "smartio/timing.h"
#include "util/smio_time.h"

#define MEM       (8u << 20)
#define WORD_OFF  0x1000u       /* the DAP ping-pong word, in each side's region */
#define WAIT_MS   30000u

static unsigned int rounds = 2000, repeat = 20, job = 0x2d;
static bool client;
static struct timing_params tp;

static const size_t lat_sizes[] = { 8, 64, 512, 2000 };
static const size_t bw_sizes[] = { 4096, 65536, 1u << 20, 4u << 20 };
#define NLAT (sizeof(lat_sizes) / sizeof(lat_sizes[0]))
#define NBW  (sizeof(bw_sizes) / sizeof(bw_sizes[0]))

static int die(const char *what, int rc)
{
	fprintf(stderr, "bench_czodiac: %s: %s\n", what, strerror(-rc));
	return 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[n / 2];
}

static double model(int prim, size_t size, bool bw)
{
	struct timing_cz o;

	if (timing_czodiac(&tp, prim, size, &o))
		return 0;
	return bw ? o.bw_gbs : o.latency_ns;
}

static void report(const char *kind, int prim, size_t size, double emu, bool bw)
{
	char name[32];

	snprintf(name, sizeof(name), "%s", timing_cz_name(prim));
	for (char *c = name; *c; c++)
		if (*c == ' ')
			*c = '-';
	printf("%-9s %-10s %8zu %12.*f %10.*f\n", kind, name, size, bw ? 3 : 0, emu, bw ? 3 : 0,
	       model(prim, size, bw));
	fflush(stdout);
}

/* Both sides meet: the client sends the phase number, the server echoes it. */
static int barrier(struct cz_qp *q, uint32_t phase)
{
	uint32_t v = 0;
	int rc;

	if (client) {
		rc = cz_nap_send(q, &phase, sizeof(phase));
		if (!rc)
			rc = cz_nap_recv(q, &v, sizeof(v), WAIT_MS);
	} else {
		rc = cz_nap_recv(q, &v, sizeof(v), WAIT_MS);
		if (rc >= 0)
			rc = cz_nap_send(q, &v, sizeof(v));
	}
	if (rc < 0)
		return rc;
	return v == phase ? 0 : -EPROTO;
}

static int dap_pingpong(struct cz_ep *ep, unsigned int peer, uint64_t *t)
{
	volatile uint32_t *mine = (volatile uint32_t *)((uint8_t *)cz_mem(ep, NULL) + WORD_OFF);
	volatile uint32_t *theirs = cz_dap_ptr(ep, CZ_GADDR(peer, WORD_OFF), 4);
	uint64_t dl;

	if (!theirs)
		return -ENOENT;
	for (uint32_t i = 1; i <= rounds; i++) {
		uint64_t t0 = smio_now_ns();

		if (client) {
			*theirs = i;
			SCIFlush(NULL, 0);
		}
		dl = t0 + (uint64_t)WAIT_MS * 1000000u;
		while (*mine != i)
			if (smio_now_ns() > dl)
				return -ETIMEDOUT;
		if (!client) {
			*theirs = i;
			SCIFlush(NULL, 0);
		}
		t[i - 1] = smio_now_ns() - t0;
	}
	return 0;
}

static int nap_pingpong(struct cz_qp *q, size_t size, uint64_t *t)
{
	static uint8_t buf[CZ_NAP_MAX];

	for (unsigned int i = 0; i < rounds; i++) {
		uint64_t t0 = smio_now_ns();
		int rc;

		if (client)
			rc = cz_nap_send(q, buf, size);
		else
			rc = 0;
		if (!rc)
			rc = cz_nap_recv(q, buf, sizeof(buf), WAIT_MS);
		if (rc >= 0 && !client)
			rc = cz_nap_send(q, buf, size);
		if (rc < 0)
			return rc;
		t[i] = smio_now_ns() - t0;
	}
	return 0;
}

static int put_pingpong(struct cz_qp *q, size_t size, unsigned int n, uint64_t *t)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t0 = smio_now_ns();
		long rc;

		if (client) {
			rc = cz_put(q, 0, size, i);
			if (!rc)
				rc = cz_put_accept(q, 0, size, i, WAIT_MS);
		} else {
			rc = cz_put_accept(q, 0, size, i, WAIT_MS);
			if (rc >= 0)
				rc = cz_put(q, 0, size, i);
		}
		if (rc < 0)
			return (int)rc;
		t[i] = smio_now_ns() - t0;
	}
	return 0;
}

/* The client GETs n times; the server serves until the client's barrier. */
static int gets(struct cz_qp *q, size_t size, unsigned int n, uint64_t *t)
{
	for (unsigned int i = 0; client && i < n; i++) {
		uint64_t t0 = smio_now_ns();
		int rc = cz_get(q, 0, 0, size);

		if (rc)
			return rc;
		t[i] = smio_now_ns() - t0;
	}
	return 0;
}

/* Client PUTs n times, server accepts n times. */
static int puts_one_way(struct cz_qp *q, size_t size, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		long rc = client ? cz_put(q, 0, size, i) : cz_put_accept(q, 0, size, i, WAIT_MS);

		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

static int run(struct cz_ep *ep, struct cz_qp *q, unsigned int peer)
{
	uint64_t *t = calloc(rounds > repeat ? rounds : repeat, sizeof(*t));
	uint32_t phase = 1;
	int rc;

	if (!t)
		return -ENOMEM;
	if (client)
		printf("%-9s %-10s %8s %12s %10s\n", "# measure", "primitive", "bytes",
		       "emulated", "model");
	rc = barrier(q, phase++);
	if (!rc)
		rc = dap_pingpong(ep, peer, t);
	if (!rc && client)
		report("latency", TIMING_CZ_DAP_STORE, 4, median(t, rounds) / 2, false);
	for (unsigned int i = 0; !rc && i < NLAT; i++) {
		rc = barrier(q, phase++);
		if (!rc)
			rc = nap_pingpong(q, lat_sizes[i], t);
		if (!rc && client)
			report("latency", TIMING_CZ_NAP, lat_sizes[i], median(t, rounds) / 2, false);
	}
	for (unsigned int i = 0; !rc && i < NLAT; i++) {
		unsigned int n = rounds / 4 ? rounds / 4 : 1;

		rc = barrier(q, phase++);
		if (!rc)
			rc = put_pingpong(q, lat_sizes[i], n, t);
		if (!rc && client)
			report("latency", TIMING_CZ_PUT, lat_sizes[i], median(t, n) / 2, false);
		if (!rc)
			rc = barrier(q, phase++);
		if (!rc)
			rc = gets(q, lat_sizes[i], n, t);
		if (!rc && client)
			report("latency", TIMING_CZ_GET, lat_sizes[i], median(t, n), false);
	}
	for (unsigned int i = 0; !rc && i < NBW; i++) {
		size_t s = bw_sizes[i];
		uint64_t t0;

		rc = barrier(q, phase++);
		t0 = smio_now_ns();
		if (!rc)
			rc = puts_one_way(q, s, repeat);
		if (!rc && client)
			report("bandwidth", TIMING_CZ_PUT, s,
			       (double)s * repeat / (double)(smio_now_ns() - t0), true);
		if (!rc)
			rc = barrier(q, phase++);
		t0 = smio_now_ns();
		if (!rc)
			rc = gets(q, s, repeat, t);
		if (!rc && client)
			report("bandwidth", TIMING_CZ_GET, s,
			       (double)s * repeat / (double)(smio_now_ns() - t0), true);
	}
	if (!rc)
		rc = barrier(q, phase++);
	free(t);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_czodiac server|client PEER_NODE [-n ROUNDS] [-b REPEAT] "
			"[-j JOB]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct cz_config cfg = { .mem_size = MEM, .ring_entries = 64, .timeout_ms = WAIT_MS };
	unsigned int peer;
	struct cz_ep *ep;
	struct cz_qp *q;
	int rc;

	if (argc < 3 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		usage();
	client = !strcmp(argv[1], "client");
	peer = (unsigned int)strtoul(argv[2], NULL, 0);
	for (int i = 3; i < argc; i += 2) {
		unsigned long v;

		if (i + 1 >= argc)
			usage();
		v = strtoul(argv[i + 1], NULL, 0);
		if (!v || v > 10000000)
			usage();
		if (!strcmp(argv[i], "-n"))
			rounds = (unsigned int)v;
		else if (!strcmp(argv[i], "-b"))
			repeat = (unsigned int)v;
		else if (!strcmp(argv[i], "-j") && v <= 0xffff)
			job = (unsigned int)v;
		else
			usage();
	}
	cfg.job = job;
	timing_params_default(&tp);
	rc = cz_open(&cfg, &ep);
	if (rc)
		return die("cz_open", rc);
	rc = cz_qp_open(ep, peer, 0, &q);
	if (rc) {
		cz_close(ep);
		SCITerminate();
		return die("cz_qp_open", rc);
	}
	rc = run(ep, q, peer);
	cz_close(ep);
	SCITerminate();
	return rc ? die("run", rc) : 0;
}
