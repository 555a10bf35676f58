// SPDX-License-Identifier: MIT
/*
 * bench_identify: time one Identify Controller through the NVMe manager,
 * unicast (the 4 KiB come back to this client) or multicast (the controller
 * writes them to a SISCI multicast group, docs/nvme-driver.md "Multicast
 * Identify"). bench/cluster60's multicast half runs it once with --multicast
 * and once per host without, so its numbers are the commands' own times,
 * without the process start-up and the session set-up the CLI would add.
 *
 *   bench_identify [--multicast G] [--raw FILE]
 *
 * Prints one JSON object: {"multicast": G|null, "us": command time,
 * "open_us": session set-up}. Exit 0 ok, 1 failure, 2 usage.
 * Run it under `smartio exec --host N`; the first NVMe of the pool is used.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pool.h"
#include "smartio/nvme.h"
#include "util/smio_time.h"

static int open_client(struct snv_client **c, char *err, size_t errlen)
{
	struct snv_client_opts o = { .timeout_ms = 10000 };
	int rc = bench_first_nvme(&o.fdid, err, errlen);

	return rc ? rc : snv_client_open(&o, c, err, errlen);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "multicast", required_argument, NULL, 'M' },
					    { "raw", required_argument, NULL, 'R' }, { 0 } };
	const char *raw = NULL;
	struct snv_client *c;
	uint64_t t0, t1, t2;
	long group = -1;
	char err[256] = "";
	void *id = NULL;
	char *end;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (opt == 'M') {
			group = strtol(optarg, &end, 0);
			if (*end || group < 0 || group > 255)
				return fprintf(stderr, "bench_identify: bad group '%s'\n", optarg), 2;
		} else if (opt == 'R') {
			raw = optarg;
		} else {
			fprintf(stderr, "usage: bench_identify [--multicast G] [--raw FILE]\n");
			return 2;
		}
	}
	t0 = smio_now_ns();
	rc = open_client(&c, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench_identify: %s (%d)\n", err, rc);
		return 1;
	}
	if (group < 0 && !(id = malloc(4096))) {
		snv_client_close(c);
		return 1;
	}
	t1 = smio_now_ns();
	rc = group >= 0 ? snv_identify_ctrl_mcast(c, (uint32_t)group) : snv_identify_ctrl(c, id);
	t2 = smio_now_ns();
	snv_client_close(c);
	if (rc) {
		fprintf(stderr, "bench_identify: Identify Controller failed (%d)\n", rc);
		free(id);
		return 1;
	}
	if (raw && id) {
		FILE *f = fopen(raw, "wb");
		int bad = !f || fwrite(id, 1, 4096, f) != 4096;

		if (f && fclose(f))
			bad = 1;
		if (bad) {
			fprintf(stderr, "bench_identify: cannot write %s\n", raw);
			free(id);
			return 1;
		}
	}
	free(id);
	if (group >= 0)
		printf("{\"multicast\": %ld, ", group);
	else
		printf("{\"multicast\": null, ");
	printf("\"us\": %.1f, \"open_us\": %.1f}\n", (double)(t2 - t1) / 1e3,
	       (double)(t1 - t0) / 1e3);
	return 0;
}
