// SPDX-License-Identifier: MIT
/*
 * dma_bandwidth: DMA bandwidth from a local segment to a remote one, using
 * only SISCI. The adapter's DMA engine moves the bytes (SCIStartDmaTransfer);
 * the CPU only submits and waits.
 *
 * The server creates a segment and makes it available; the client connects
 * to it through its NTB, creates a local segment of the same size and a DMA
 * queue, and for every size from 4 KiB to 16 MiB (doubling) times `-n`
 * transfers local -> remote (or remote -> local with -r), printing GB/s.
 *
 *   smartio cluster up
 *   smartio exec --host 0 -- ./dma_bandwidth server &
 *   smartio exec --host 1 -- ./dma_bandwidth client 4      # 4: node ID of host 0
 *
 * Options (after the role): -s SEGID (default 0xdb0), -n TRANSFERS per size
 * (default 20), -a ADAPTER (0), -r (read: remote -> local), -t SECONDS the
 * server stays up (default 600).
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sisci_api.h>

#define MAX_SIZE    (16u << 20)
#define MIN_SIZE    4096u
#define WAIT_MS     60000

static unsigned int seg_id = 0xdb0, adapter = 0, transfers = 20, server_secs = 600;
static unsigned int dma_flags;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int check(const char *what, sci_error_t err)
{
	if (err == SCI_ERR_OK)
		return 0;
	fprintf(stderr, "dma_bandwidth: %s: %s (%#x)\n", what, SCIGetErrorString(err),
		(unsigned int)err);
	return -1;
}

static int server(sci_desc_t sd)
{
	sci_local_segment_t seg;
	sci_error_t err;

	SCICreateSegment(sd, &seg, seg_id, MAX_SIZE, NULL, NULL, 0, &err);
	if (check("SCICreateSegment", err))
		return 1;
	SCIPrepareSegment(seg, adapter, 0, &err);
	if (!err)
		SCISetSegmentAvailable(seg, adapter, 0, &err);
	if (check("making the segment available", err))
		return 1;
	printf("server: segment %#x (%u MiB) available; up for %u s\n", seg_id, MAX_SIZE >> 20,
	       server_secs);
	fflush(stdout);
	/* A bounded life: clients come and go meanwhile. */
	for (unsigned int s = 0; s < server_secs; s++)
		poll(NULL, 0, 1000);
	SCISetSegmentUnavailable(seg, adapter, 0, &err);
	SCIRemoveSegment(seg, 0, &err);
	return check("SCIRemoveSegment", err) ? 1 : 0;
}

static int client(sci_desc_t sd, unsigned int node)
{
	sci_remote_segment_t rseg;
	sci_local_segment_t lseg;
	sci_dma_queue_t dq;
	sci_map_t lmap;
	sci_error_t err;
	uint8_t *lmem;
	int rc = 1;

	SCIConnectSegment(sd, &rseg, node, seg_id, adapter, NULL, NULL, 10000, 0, &err);
	if (check("SCIConnectSegment", err))
		return 1;
	SCICreateSegment(sd, &lseg, seg_id + 1, MAX_SIZE, NULL, NULL, 0, &err);
	if (check("SCICreateSegment", err))
		goto out_disconnect;
	SCIPrepareSegment(lseg, adapter, 0, &err);
	if (check("SCIPrepareSegment", err))
		goto out_remove;
	lmem = SCIMapLocalSegment(lseg, &lmap, 0, MAX_SIZE, NULL, 0, &err);
	if (check("SCIMapLocalSegment", err))
		goto out_remove;
	for (size_t i = 0; i < MAX_SIZE; i++)
		lmem[i] = (uint8_t)(i * 7 + 1);
	SCICreateDMAQueue(sd, &dq, adapter, 1, 0, &err);
	if (check("SCICreateDMAQueue", err))
		goto out_unmap;

	printf("DMA %s node %u, adapter %u, %u transfers per size\n",
	       dma_flags & SCI_FLAG_DMA_READ ? "read from" : "write to", node, adapter,
	       transfers);
	printf("%10s %12s %10s\n", "size", "usec/xfer", "GB/s");
	for (size_t size = MIN_SIZE; size <= MAX_SIZE; size *= 2) {
		uint64_t t0 = now_ns(), dt;

		for (unsigned int k = 0; k < transfers; k++) {
			SCIStartDmaTransfer(dq, lseg, rseg, 0, size, 0, NULL, NULL, dma_flags, &err);
			if (!err && SCIWaitForDMAQueue(dq, WAIT_MS, 0, &err) != SCI_DMAQUEUE_DONE &&
			    !err)
				err = SCI_ERR_TRANSFER_FAILED;
			if (check("DMA transfer", err))
				goto out_queue;
		}
		dt = now_ns() - t0;
		printf("%10zu %12.1f %10.2f\n", size, (double)dt / 1e3 / transfers,
		       (double)size * transfers / (double)dt);
	}
	rc = 0;
out_queue:
	SCIRemoveDMAQueue(dq, 0, &err);
out_unmap:
	SCIUnmapSegment(lmap, 0, &err);
out_remove:
	SCIRemoveSegment(lseg, 0, &err);
out_disconnect:
	SCIDisconnectSegment(rseg, 0, &err);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: dma_bandwidth server [-s SEGID] [-a ADAPTER] [-t SECONDS]\n"
			"       dma_bandwidth client NODE [-s SEGID] [-a ADAPTER] [-n N] [-r]\n");
}

int main(int argc, char **argv)
{
	unsigned int node = 0;
	sci_desc_t sd;
	sci_error_t err;
	int i, rc;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		usage();
		return 2;
	}
	i = 2;
	if (!strcmp(argv[1], "client")) {
		if (argc < 3) {
			usage();
			return 2;
		}
		node = (unsigned int)strtoul(argv[2], NULL, 0);
		i = 3;
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "-r")) {
			dma_flags |= SCI_FLAG_DMA_READ;
			continue;
		}
		if (i + 1 >= argc) {
			usage();
			return 2;
		}
		if (!strcmp(argv[i], "-s"))
			seg_id = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-a"))
			adapter = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-n"))
			transfers = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-t"))
			server_secs = (unsigned int)strtoul(argv[++i], NULL, 0);
		else {
			usage();
			return 2;
		}
	}
	if (!transfers)
		transfers = 1;
	SCIInitialize(0, &err);
	if (check("SCIInitialize", err))
		return 1;
	SCIOpen(&sd, 0, &err);
	if (check("SCIOpen", err))
		return 1;
	rc = !strcmp(argv[1], "server") ? server(sd) : client(sd, node);
	SCIClose(sd, 0, &err);
	SCITerminate();
	return rc;
}
