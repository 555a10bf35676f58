// SPDX-License-Identifier: MIT
/*
 * mcast_subscribe: receive one multicast write, using only SISCI.
 *
 * Creates a broadcast segment (SCI_FLAG_BROADCAST) whose ID is the multicast
 * group, subscribes it on adapter 0 (SCIPrepareSegment), prints "subscribed"
 * and waits until something lands in it — every byte starts as 0xee, so the
 * first change shows a write arrived — or the wait ends; then it waits until
 * the bytes stop changing between two polls, writes them to a file (or
 * stdout) and exits 0 (1: nothing arrived in time). The 59-host multicast
 * Identify runs one per host and compares the files with a unicast Identify:
 *
 *   smartio cluster up topologies/cluster-60.yaml
 *   smartio exec --host 0 -- smartio-nvme manager &
 *   for h in $(seq 1 59); do
 *       smartio exec --host $h -- ./mcast_subscribe -g 7 -o id.$h &
 *   done                                   # each prints "subscribed"
 *   smartio exec --host 1 -- smartio-nvme identify --raw id.unicast
 *   smartio exec --host 1 -- smartio-nvme identify --multicast 7
 *
 * Options: -g GROUP (default 7), -s SIZE (4096), -w WAIT_MS (30000),
 * -o FILE (default: stdout).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sisci_api.h>

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int changed(const volatile uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xee)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int group = 7, wait_ms = 30000;
	size_t size = 4096;
	const char *out = NULL;
	sci_local_segment_t seg;
	sci_map_t map;
	sci_desc_t sd;
	sci_error_t err;
	volatile uint8_t *mem;
	unsigned waited = 0;
	FILE *f;
	int opt, rc = 1;

	while ((opt = getopt(argc, argv, "g:s:w:o:")) != -1) {
		switch (opt) {
		case 'g': group = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'w': wait_ms = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'o': out = optarg; break;
		default:
			fprintf(stderr, "usage: mcast_subscribe [-g GROUP] [-s SIZE] [-w MS] [-o FILE]\n");
			return 2;
		}
	}
	SCIInitialize(0, &err);
	if (err)
		return fprintf(stderr, "SCIInitialize: %s\n", SCIGetErrorString(err)), 1;
	SCIOpen(&sd, 0, &err);
	if (!err)
		SCICreateSegment(sd, &seg, group, size, NULL, NULL, SCI_FLAG_BROADCAST, &err);
	if (!err)
		SCIPrepareSegment(seg, 0, SCI_FLAG_BROADCAST, &err);
	if (!err)
		mem = SCIMapLocalSegment(seg, &map, 0, size, NULL, 0, &err);
	if (err) {
		fprintf(stderr, "subscribing to group %u: %s\n", group, SCIGetErrorString(err));
		return 1;
	}
	memset((void *)mem, 0xee, size);
	printf("subscribed\n");
	fflush(stdout);
	while (!changed(mem, size) && waited < wait_ms) {
		sleep_ms(1);
		waited++;
	}
	if (waited < wait_ms) {
		/* The first changed byte says a write arrived, not that all of it has:
		 * take the bytes once they stop changing between two polls. */
		uint8_t *snap = malloc(size);

		while (snap && waited < wait_ms) {
			memcpy(snap, (const void *)mem, size);
			sleep_ms(1);
			waited++;
			if (!memcmp(snap, (const void *)mem, size))
				break;
		}
		free(snap);
		f = out ? fopen(out, "wb") : stdout;
		if (f && fwrite((const void *)mem, 1, size, f) == size)
			rc = 0;
		if (f && out && fclose(f))
			rc = 1;
	} else {
		fprintf(stderr, "nothing arrived in group %u within %u ms\n", group, wait_ms);
	}
	SCIUnmapSegment(map, 0, &err);
	SCIRemoveSegment(seg, 0, &err);
	SCIClose(sd, 0, &err);
	SCITerminate();
	return rc;
}
