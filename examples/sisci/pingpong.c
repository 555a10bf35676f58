// SPDX-License-Identifier: MIT
/*
 * pingpong: shared-memory ping-pong between two hosts, using only SISCI.
 *
 * The server creates a one-page segment and makes it available; the client
 * connects to it through its NTB, maps it and, for each round, stores a
 * counter into the "ping" word and spins until the server has copied it into
 * the "pong" word. Both words live in the server's segment, so every ping
 * crosses the fabric as a store and every pong as a load: no messages, no
 * daemon, no kernel in the data path.
 *
 *   smartio cluster up
 *   smartio exec --host 1 -- ./pingpong server &
 *   smartio exec --host 0 -- ./pingpong client 8      # 8: node ID of host 1
 *
 * Options (after the role): -s SEGID (default 0x5150), -n ROUNDS (100000),
 * -a ADAPTER (0).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sisci_api.h>

#define SEG_SIZE    4096
#define PING        0           /* word index of the ping (client -> server) */
#define PONG        16          /* word index of the pong, another cache line */
#define WAIT_MS     60000       /* bound on waiting for the other side */

static unsigned int seg_id = 0x5150, adapter = 0, rounds = 100000;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin until *p == v; 0 when it is, -1 after ms milliseconds. */
static int wait_word(volatile uint32_t *p, uint32_t v, unsigned int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;

	for (unsigned long n = 0;; n++) {
		if (*p == v)
			return 0;
		if (!(n & 4095) && now_ns() > end)
			return -1;
	}
}

static int check(const char *what, sci_error_t err)
{
	if (err == SCI_ERR_OK)
		return 0;
	fprintf(stderr, "pingpong: %s: %s (%#x)\n", what, SCIGetErrorString(err),
		(unsigned int)err);
	return -1;
}

static int server(sci_desc_t sd)
{
	sci_local_segment_t seg;
	sci_map_t map;
	volatile uint32_t *w;
	sci_error_t err;
	unsigned int node = 0;
	uint64_t end;

	SCIGetLocalNodeId(adapter, &node, 0, &err);
	if (check("SCIGetLocalNodeId", err))
		return 1;
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
	printf("server: segment %#x on node %u, %u rounds\n", seg_id, node, rounds);
	fflush(stdout);

	for (uint32_t i = 1; i <= rounds; i++) {
		if (wait_word(&w[PING], i, WAIT_MS)) {
			fprintf(stderr, "pingpong: no ping %u from the client\n", i);
			return 1;
		}
		w[PONG] = i;
		SCIFlush(NULL, 0);
	}
	SCISetSegmentUnavailable(seg, adapter, 0, &err);
	SCIUnmapSegment(map, 0, &err);
	if (check("SCIUnmapSegment", err))
		return 1;
	/* The client disconnects once it has seen the last pong. */
	end = now_ns() + (uint64_t)WAIT_MS * 1000000u;
	do {
		SCIRemoveSegment(seg, 0, &err);
	} while (err == SCI_ERR_BUSY && now_ns() < end);
	if (check("SCIRemoveSegment", err))
		return 1;
	printf("server: done\n");
	return 0;
}

static int client(sci_desc_t sd, unsigned int node)
{
	sci_remote_segment_t seg;
	sci_sequence_t seq;
	sci_map_t map;
	volatile uint32_t *w;
	sci_error_t err;
	uint64_t t0, t1;

	/* Waits for the server to create the segment and make it available. */
	SCIConnectSegment(sd, &seg, node, seg_id, adapter, NULL, NULL, WAIT_MS, 0, &err);
	if (check("SCIConnectSegment", err))
		return 1;
	w = SCIMapRemoteSegment(seg, &map, 0, SEG_SIZE, NULL, 0, &err);
	if (check("SCIMapRemoteSegment", err))
		return 1;
	SCICreateMapSequence(map, &seq, 0, &err);
	if (check("SCICreateMapSequence", err))
		return 1;

	t0 = now_ns();
	for (uint32_t i = 1; i <= rounds; i++) {
		w[PING] = i;
		SCIStoreBarrier(seq, 0);
		if (wait_word(&w[PONG], i, WAIT_MS)) {
			fprintf(stderr, "pingpong: no pong %u from the server\n", i);
			return 1;
		}
	}
	t1 = now_ns();
	printf("client: %u round trips with node %u, %.0f ns each\n", rounds, node,
	       (double)(t1 - t0) / rounds);

	SCIRemoveSequence(seq, 0, &err);
	SCIUnmapSegment(map, 0, &err);
	if (check("SCIUnmapSegment", err))
		return 1;
	SCIDisconnectSegment(seg, 0, &err);
	return check("SCIDisconnectSegment", err) ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: pingpong server [-s SEGID] [-n ROUNDS] [-a ADAPTER]\n"
			"       pingpong client NODEID [-s SEGID] [-n ROUNDS] [-a ADAPTER]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int node = 0;
	sci_error_t err;
	sci_desc_t sd;
	int i = 2, rc;
	bool is_server;

	if (argc < 2)
		usage();
	is_server = !strcmp(argv[1], "server");
	if (!is_server) {
		if (strcmp(argv[1], "client") || argc < 3)
			usage();
		node = (unsigned int)strtoul(argv[2], NULL, 0);
		i = 3;
	}
	for (; i < argc; i += 2) {
		unsigned long v;

		if (i + 1 >= argc)
			usage();
		v = strtoul(argv[i + 1], NULL, 0);
		if (!strcmp(argv[i], "-s"))
			seg_id = (unsigned int)v;
		else if (!strcmp(argv[i], "-n") && v > 0 && v < UINT32_MAX)
			rounds = (unsigned int)v;
		else if (!strcmp(argv[i], "-a"))
			adapter = (unsigned int)v;
		else
			usage();
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
