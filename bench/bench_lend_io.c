// SPDX-License-Identifier: MIT
/*
 * NVMe QD1 4 KiB random-read latency through a daemon's in-kernel driver
 * (SMIO_NVME_IO), as an application sees it: one request in flight, for a
 * local and a borrowed controller of the same host in the same run (bench/lend.sh
 * sets the cluster up and borrows). Reports mean, p50 and p99 per device and
 * the ratio of means.
 *
 * usage: bench_lend_io HOST LOCAL_BDF BORROWED_BDF [OPS] [--json]  (BDF as bb:dd.f)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smartio/proto.h"
#include "util/json_out.h"
#include "util/smio_time.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int parse_bdf(const char *s, uint16_t *bdf)
{
	unsigned b, d, f;

	if (sscanf(s, "%x:%x.%x", &b, &d, &f) != 3 || b > 255 || d > 31 || f > 7)
		return -EINVAL;
	*bdf = (uint16_t)(b << 8 | d << 3 | f);
	return 0;
}

struct res { double mean; uint64_t p50, p99; };

static int run(int fd, uint16_t bdf, unsigned ops, uint64_t *s, struct res *r)
{
	struct smio_nvme_io q = { .bdf = bdf, .op = SMIO_NVME_READ, .nsid = 1, .nlb = 1 };
	uint8_t *rep = malloc(sizeof(struct smio_nvme_cpl) + 4096);
	uint32_t seed = 7, rlen;
	double sum = 0;

	if (!rep)
		return -ENOMEM;
	for (unsigned i = 0; i < ops; i++) {
		uint64_t t0;
		int rc;

		seed = seed * 1103515245u + 12345u;
		q.slba = (seed >> 8) % 4096;
		t0 = smio_now_ns();
		rc = smio_call(fd, SMIO_NVME_IO, &q, sizeof(q), rep,
			       sizeof(struct smio_nvme_cpl) + 4096, &rlen, NULL, 5000);
		s[i] = smio_now_ns() - t0;
		if (rc || ((struct smio_nvme_cpl *)rep)->status) {
			fprintf(stderr, "bench_lend_io: read at %02x:%02x.%x failed: %s\n", bdf >> 8,
				(bdf >> 3) & 31, bdf & 7, rc ? strerror(-rc) : "NVMe status");
			free(rep);
			return -EIO;
		}
		sum += (double)s[i];
	}
	free(rep);
	qsort(s, ops, sizeof(*s), cmp_u64);
	r->mean = sum / ops;
	r->p50 = s[ops / 2];
	r->p99 = s[ops * 99 / 100];
	return 0;
}

/* {"mean", "p50", "p99"} as key of parent; 0 or -ENOMEM. */
static int res_json(struct json_object *parent, const char *key, const struct res *r)
{
	struct json_object *o = json_object_new_object();

	if (!o || smio_json_add_double(o, "mean", r->mean, "%.0f") ||
	    smio_json_add_uint(o, "p50", r->p50) || smio_json_add_uint(o, "p99", r->p99)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_add(parent, key, o);
}

static int print_json(const struct res *l, const struct res *b)
{
	struct json_object *root = json_object_new_object();
	int rc = -ENOMEM;

	if (root && !res_json(root, "local", l) && !res_json(root, "borrowed", b) &&
	    !smio_json_add_double(root, "ratio", b->mean / l->mean, "%.3f"))
		rc = smio_json_print(stdout, root);
	if (rc)
		fprintf(stderr, "bench_lend_io: JSON output: %s\n", strerror(-rc));
	json_object_put(root);
	return rc;
}

int main(int argc, char **argv)
{
	struct smio_hello h = { .role = SMIO_ROLE_CLIENT, .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	char dir[4096];
	uint16_t lb, bb;
	unsigned ops = 4000;
	bool json = argc > 1 && !strcmp(argv[argc - 1], "--json");
	int n = argc - json, fd, rc = 0;
	uint64_t *s;
	struct res l = { 1e18, 0, 0 }, b = { 1e18, 0, 0 };
	uint32_t rlen;

	if (n < 4 || n > 5 || parse_bdf(argv[2], &lb) || parse_bdf(argv[3], &bb) ||
	    (n == 5 && (ops = (unsigned)atoi(argv[4])) < 100)) {
		fprintf(stderr, "usage: bench_lend_io HOST LOCAL_BDF BORROWED_BDF [OPS>=100] [--json]\n");
		return 2;
	}
	h.host = (uint32_t)atoi(argv[1]);
	h.pid = (uint32_t)getpid();
	s = malloc(ops * sizeof(*s));
	if (!s || smio_cluster_dir(dir, sizeof(dir)))
		return 1;
	fd = smio_connect(dir, h.host, 2000);
	if (fd < 0 || smio_call(fd, SMIO_HELLO, &h, sizeof(h), &hr, sizeof(hr), &rlen, NULL, 2000)) {
		fprintf(stderr, "bench_lend_io: host %u does not answer\n", h.host);
		return 1;
	}
	/* Alternate rounds; keep each device's best. */
	for (int round = 0; round < 3; round++) {
		struct res x, y;

		if (run(fd, lb, ops, s, &x) || run(fd, bb, ops, s, &y))
			return 1;
		if (x.mean < l.mean)
			l = x;
		if (y.mean < b.mean)
			b = y;
	}
	if (json)
		rc = print_json(&l, &b);
	else
		printf("NVMe 4 KiB random read, QD1, through the daemon (SMIO_NVME_IO), best of 3 x %u:\n"
		       "  local     mean %8.0f ns  p50 %8" PRIu64 "  p99 %8" PRIu64 "\n"
		       "  borrowed  mean %8.0f ns  p50 %8" PRIu64 "  p99 %8" PRIu64 "\n"
		       "  ratio     %.3f (target <= 1.05)\n", ops, l.mean, l.p50, l.p99, b.mean,
		       b.p50, b.p99, b.mean / l.mean);
	close(fd);
	free(s);
	return rc ? 1 : 0;
}
