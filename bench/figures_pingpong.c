// SPDX-License-Identifier: MIT
/*
 * figures_pingpong: the emulated side of the papers' ping-pong figures
 * (SmartIO figs. 25 and 27, Device Lending fig. 14), for bench/figures.
 *
 * Like examples/sisci/pingpong.c: the server creates a one-page segment, the
 * client maps it (through its NTB when the server is another host), stores a
 * counter into "ping" and spins until the server has copied it into "pong".
 * Unlike the example, every round trip is timed on its own and the spins
 * yield the CPU now and then, so that on a small, shared machine the result
 * is a distribution: the 10th percentile is the undisturbed round trip, the
 * median and mean show how much the scheduler added.
 *
 *   smartio exec --host 1 -- figures_pingpong server [-s SEGID] [-n ROUNDS] [-a ADAPTER]
 *   smartio exec --host 0 -- figures_pingpong client NODEID [-s SEGID] [-n ROUNDS] [-a N]
 *
 * The client prints "rounds R node N p10_ns X p50_ns Y mean_ns Z".
 * These are wall-clock figures of processes on one machine, not PCIe figures.
 */
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sisci_api.h>
#include "util/smio_time.h"

#define SEG_SIZE    4096
#define PING        0
#define PONG        16          /* another cache line */
#define WAIT_MS     20000
#define MAX_ROUNDS  1000000u
#define YIELD_EVERY 256u        /* spins between sched_yield() calls */

static unsigned int seg_id = 0xf0f0, rounds = 10000, adapter;

/* Spin (yielding now and then) until *p == v: 0, or -1 after WAIT_MS. */
static int wait_word(volatile uint32_t *p, uint32_t v)
{
	uint64_t end = smio_now_ns() + (uint64_t)WAIT_MS * 1000000u;

	for (unsigned long n = 1;; n++) {
		if (*p == v)
			return 0;
		if (!(n % YIELD_EVERY)) {
			sched_yield();
			if (smio_now_ns() > end)
				return -1;
		}
	}
}

static int check(const char *what, sci_error_t err)
{
	if (err == SCI_ERR_OK)
		return 0;
	fprintf(stderr, "figures_pingpong: %s: %s (%#x)\n", what, SCIGetErrorString(err),
		(unsigned int)err);
	return -1;
}

static int server(sci_desc_t sd)
{
	sci_local_segment_t seg;
	volatile uint32_t *w;
	sci_error_t err;
	sci_map_t map;
	uint64_t end;

	SCICreateSegment(sd, &seg, seg_id, SEG_SIZE, NULL, NULL, 0, &err);
	if (check("SCICreateSegment", err))
		return 1;
	SCIPrepareSegment(seg, adapter, 0, &err);
	if (check("SCIPrepareSegment", err))
		return 1;
	w = SCIMapLocalSegment(seg, &map, 0, SEG_SIZE, NULL, 0, &err);
	if (check("SCIMapLocalSegment", err))
		return 1;
	w[PING] = w[PONG] = 0;
	SCISetSegmentAvailable(seg, adapter, 0, &err);
	if (check("SCISetSegmentAvailable", err))
		return 1;
	for (uint32_t i = 1; i <= rounds; i++) {
		if (wait_word(&w[PING], i)) {
			fprintf(stderr, "figures_pingpong: no ping %u from the client\n", i);
			return 1;
		}
		w[PONG] = i;
		SCIFlush(NULL, 0);
	}
	SCISetSegmentUnavailable(seg, adapter, 0, &err);
	SCIUnmapSegment(map, 0, &err);
	/* The client disconnects once it has seen the last pong. */
	end = smio_now_ns() + (uint64_t)WAIT_MS * 1000000u;
	do {
		SCIRemoveSegment(seg, 0, &err);
		if (err == SCI_ERR_BUSY)
			sched_yield();
	} while (err == SCI_ERR_BUSY && smio_now_ns() < end);
	return check("SCIRemoveSegment", err) ? 1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int client(sci_desc_t sd, unsigned int node)
{
	sci_remote_segment_t seg;
	volatile uint32_t *w;
	sci_sequence_t seq;
	sci_error_t err;
	sci_map_t map;
	uint64_t *t, sum = 0;
	int rc = 1;

	t = malloc(sizeof(*t) * rounds);
	if (!t)
		return 1;
	SCIConnectSegment(sd, &seg, node, seg_id, adapter, NULL, NULL, WAIT_MS, 0, &err);
	if (check("SCIConnectSegment", err))
		goto out;
	w = SCIMapRemoteSegment(seg, &map, 0, SEG_SIZE, NULL, 0, &err);
	if (check("SCIMapRemoteSegment", err))
		goto out_disconnect;
	SCICreateMapSequence(map, &seq, 0, &err);
	if (check("SCICreateMapSequence", err))
		goto out_unmap;
	for (uint32_t i = 1; i <= rounds; i++) {
		uint64_t t0 = smio_now_ns();

		w[PING] = i;
		SCIStoreBarrier(seq, 0);
		if (wait_word(&w[PONG], i)) {
			fprintf(stderr, "figures_pingpong: no pong %u from the server\n", i);
			goto out_seq;
		}
		t[i - 1] = smio_now_ns() - t0;
		sum += t[i - 1];
	}
	qsort(t, rounds, sizeof(*t), cmp_u64);
	printf("rounds %u node %u p10_ns %llu p50_ns %llu mean_ns %.0f\n", rounds, node,
	       (unsigned long long)t[rounds / 10], (unsigned long long)t[rounds / 2],
	       (double)sum / rounds);
	rc = 0;
out_seq:
	SCIRemoveSequence(seq, 0, &err);
out_unmap:
	SCIUnmapSegment(map, 0, &err);
out_disconnect:
	SCIDisconnectSegment(seg, 0, &err);
out:
	free(t);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: figures_pingpong server [-s SEGID] [-n ROUNDS] [-a ADAPTER]\n"
		   "       figures_pingpong client NODEID [-s SEGID] [-n ROUNDS] [-a ADAPTER]\n"
		   "One-word ping-pong through a SISCI segment; the client prints the 10th\n"
		   "percentile, median and mean round trip (wall clock, ns).\n");
}

int main(int argc, char **argv)
{
	unsigned int node = 0;
	sci_error_t err;
	sci_desc_t sd;
	int i = 2, rc;
	bool is_server;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2)
		return usage(stderr), 2;
	is_server = !strcmp(argv[1], "server");
	if (!is_server) {
		if (strcmp(argv[1], "client") || argc < 3)
			return usage(stderr), 2;
		node = (unsigned int)strtoul(argv[2], NULL, 0);
		i = 3;
	}
	for (; i < argc; i += 2) {
		unsigned long v;

		if (i + 1 >= argc)
			return usage(stderr), 2;
		v = strtoul(argv[i + 1], NULL, 0);
		if (!strcmp(argv[i], "-s"))
			seg_id = (unsigned int)v;
		else if (!strcmp(argv[i], "-n") && v > 0 && v <= MAX_ROUNDS)
			rounds = (unsigned int)v;
		else if (!strcmp(argv[i], "-a"))
			adapter = (unsigned int)v;
		else
			return usage(stderr), 2;
	}
	SCIInitialize(0, &err);
	if (check("SCIInitialize", err))
		return 1;
	SCIOpen(&sd, 0, &err);
	if (check("SCIOpen", err))
		return 1;
	rc = is_server ? server(sd) : client(sd, node);
	SCIClose(sd, 0, &err);
	SCITerminate();
	return rc;
}
