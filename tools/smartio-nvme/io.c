// SPDX-License-Identifier: MIT
/* smartio-nvme dd and bench: I/O on a queue pair of one client. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "p2pmem.h"
#include "snvtool.h"
#include "util/json_out.h"
#include "util/smio_time.h"

#define STALL_NS   (10ull * 1000000000ull)    /* no completion for this long: give up */
#define DEV_PAGE   4096u                      /* --buffer: page-aligned device memory */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The verifiable pattern of block `lba` for `seed`. */
static void pattern(uint64_t *p, uint64_t seed, uint64_t lba, unsigned lba_size)
{
	for (unsigned i = 0; i < lba_size / 8; i++)
		p[i] = mix(seed * 0x100000001b3ull ^ lba << 12 ^ i);
}

/*
 * Wait for one completion; returns 0, or -ETIMEDOUT after STALL_NS without
 * any. Spins briefly, then yields and naps: many clients sharing few CPUs with
 * the daemons (which emulate the fabric) must not starve them.
 */
static int reap(struct snv_qpair *q, struct snv_cpl *cpl)
{
	const struct timespec nap = { .tv_nsec = 50000 };
	uint64_t start = 0;

	for (unsigned spins = 0;; spins++) {
		if (snv_poll(q, cpl, 1) == 1)
			return 0;
		if (spins < 512)
			continue;
		if (spins < 2048) {
			sched_yield();
			continue;
		}
		if (!start)
			start = smio_now_ns();
		else if (smio_now_ns() - start > STALL_NS)
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
	}
}

static const char *status_str(uint16_t st)
{
	static char b[48];

	snprintf(b, sizeof(b), "NVMe status %#x (SCT %u SC %#x)", st, (st >> 8) & 7, st & 0xff);
	return b;
}

static int open_client_qp(struct tool_common *tc, struct snv_qpair_opts *qo,
			  struct snv_client **c, struct snv_qpair **q)
{
	int rc;

	if (tool_open(tc, c))
		return -1;
	rc = snv_qpair_create(*c, qo, q);
	if (rc) {
		fprintf(stderr, "smartio-nvme: cannot create a queue pair: %s%s\n", strerror(-rc),
			tool_qp_hint(rc, qo->cq_place));
		snv_client_close(*c);
		return -1;
	}
	return 0;
}

/* ---- dd ---- */

static void dd_help(void)
{
	printf("usage: smartio-nvme dd --mode read|write|verify --lba START --count BLOCKS [OPTIONS]\n"
	       "Read, write or verify blocks of a namespace through a queue pair of its own.\n"
	       "write: a pattern derived from --seed (or --if FILE); read: to --of FILE and/or\n"
	       "--check against the pattern of --seed; verify: write the pattern, read it back,\n"
	       "compare every byte.\n\n"
	       TOOL_COMMON_HELP
	       "  -M, --mode MODE        read, write or verify\n"
	       "  -n, --nsid N           namespace (default 1)\n"
	       "  -s, --lba START        first block (default 0)\n"
	       "  -c, --count BLOCKS     blocks to transfer (required)\n"
	       "  -b, --bs BYTES         bytes per command (default 64K, a multiple of the block)\n"
	       "  -q, --qd N             commands in flight (default 4)\n"
	       "  -S, --seed S           pattern seed (default 1)\n"
	       "  -C, --check            read: compare with the pattern of --seed\n"
	       "  -i, --if FILE          write: data from FILE instead of the pattern\n"
	       "  -o, --of FILE          read: data to FILE\n"
	       "      --sq PLACE         SQ memory: default, device, host, cmb, accel:DEV (an\n"
	       "                         accelerator's memory, e.g. the lender's GPU: fig. 34)\n"
	       "      --cq PLACE         CQ memory: default, device (saves a window of the lender's\n"
	       "                         NTB per client), host\n"
	       "      --buffer bus:ADDR  the data in device memory at this bus address of this\n"
	       "                         host (an accelerator's BAR2, local or borrowed), the\n"
	       "                         whole range in LBA order; the NVMe moves it peer-to-\n"
	       "                         peer, not through RAM\n"
	       "      --buffer p2pmem    the same in p2pmem the daemon's orchestrator picks: the\n"
	       "                         published device memory of this host closest to the\n"
	       "                         controller by hops (fails when none is reachable)\n"
	       "      --buffer p2pmem,fallback  p2pmem, or host memory when none is reachable\n"
	       "  -j, --json             one JSON object on stdout instead of the summary line\n");
}

struct dd_job {
	int mode;                /* 0 read, 1 write */
	uint32_t nsid, lba_size;
	uint64_t slba, count, seed;
	unsigned bpc, qd;        /* blocks per command */
	bool check;
	int in_fd, out_fd;
	struct snv_qpair *q;
	struct snv_buf *buf;
	uint64_t *pat;
	uint64_t mismatches;
	bool devbuf;             /* --buffer: device memory at dev_bus, no CPU access */
	uint64_t dev_bus;
	int p2pmem;              /* --buffer p2pmem: 1, p2pmem,fallback: 2 */
	struct tool_p2pmem pm;
};

/* --buffer bus:ADDR, ADDR a page-aligned bus address on this host; 0 or -1 (said). */
static int parse_buffer(const char *s, uint64_t *bus)
{
	uint64_t v;

	if (strncmp(s, "bus:", 4) || tool_parse_size(s + 4, &v) || v % DEV_PAGE) {
		fprintf(stderr, "smartio-nvme dd: --buffer '%s' should be bus:ADDR, a page-aligned "
			"bus address of device memory on this host (e.g. an accelerator's bar2 "
			"from `smartio accel info --json`)\n", s);
		return -1;
	}
	*bus = v;
	return 0;
}

static int dd_pass(struct dd_job *j, bool write)
{
	uint8_t *base = snv_buf_vaddr(j->buf);
	size_t slot = (size_t)j->bpc * j->lba_size;

	for (uint64_t done = 0; done < j->count;) {
		unsigned n = 0;
		uint64_t at = done;

		/* A batch of up to qd commands, handled in LBA order once all complete. */
		for (; n < j->qd && at < j->count; n++) {
			uint32_t nlb = (uint32_t)(j->count - at < j->bpc ? j->count - at : j->bpc);
			size_t off = j->devbuf ? (size_t)at * j->lba_size : n * slot;
			uint8_t *p = j->devbuf ? NULL : base + off;
			int rc;

			if (write && !j->devbuf) {
				if (j->in_fd >= 0) {
					ssize_t r = pread(j->in_fd, p, (size_t)nlb * j->lba_size,
							  (off_t)(at * j->lba_size));

					if (r < 0)
						return -errno;
					memset(p + (r > 0 ? r : 0), 0, (size_t)nlb * j->lba_size -
					       (size_t)(r > 0 ? r : 0));
				} else {
					for (uint32_t b = 0; b < nlb; b++)
						pattern((uint64_t *)(p + (size_t)b * j->lba_size), j->seed,
							j->slba + at + b, j->lba_size);
				}
			}
			/* fewer than depth - 1 in flight: -EAGAIN is the pair's rate limit */
			while ((rc = snv_submit_rw(j->q, write, j->nsid, j->slba + at, nlb, j->buf,
						   off, (void *)(uintptr_t)n)) == -EAGAIN)
				tool_sleep_us(100);
			if (rc) {
				fprintf(stderr, "smartio-nvme dd: submit: %s\n", strerror(-rc));
				return rc;
			}
			at += nlb;
		}
		for (unsigned k = 0; k < n; k++) {
			struct snv_cpl cpl;

			if (reap(j->q, &cpl)) {
				fprintf(stderr, "smartio-nvme dd: no completion for 10 s: is the "
					"controller alive and the manager running?\n");
				return -ETIMEDOUT;
			}
			if (cpl.status) {
				fprintf(stderr, "smartio-nvme dd: %s of LBAs from %llu failed: %s\n",
					write ? "write" : "read",
					(unsigned long long)(j->slba + done + (uintptr_t)cpl.cookie * j->bpc),
					status_str(cpl.status));
				return -EIO;
			}
		}
		for (unsigned k = 0; k < n && !write && !j->devbuf; k++) {
			uint64_t lba = done + (uint64_t)k * j->bpc;
			uint32_t nlb = (uint32_t)(j->count - lba < j->bpc ? j->count - lba : j->bpc);
			uint8_t *p = base + k * slot;

			if (j->out_fd >= 0 && pwrite(j->out_fd, p, (size_t)nlb * j->lba_size,
						     (off_t)(lba * j->lba_size)) < 0)
				return -errno;
			for (uint32_t b = 0; j->check && b < nlb; b++) {
				pattern(j->pat, j->seed, j->slba + lba + b, j->lba_size);
				if (memcmp(p + (size_t)b * j->lba_size, j->pat, j->lba_size)) {
					if (!j->mismatches)
						fprintf(stderr, "smartio-nvme dd: block %llu differs "
							"from the pattern of seed %llu\n",
							(unsigned long long)(j->slba + lba + b),
							(unsigned long long)j->seed);
					j->mismatches++;
				}
			}
		}
		done = at;
	}
	return 0;
}

/* dd --json (docs/cli.md): the summary line's facts; printed with mismatches too. */
static int dd_json(const struct dd_job *j, const char *mode, uint32_t fdid, double s)
{
	struct json_object *o = json_object_new_object();
	char id[24];
	int rc;

	snprintf(id, sizeof(id), "0x%08x", fdid);
	rc = !o || smio_json_add_str(o, "mode", mode) || smio_json_add_str(o, "fdid", id) ||
	     smio_json_add_uint(o, "nsid", j->nsid) || smio_json_add_uint(o, "lba", j->slba) ||
	     smio_json_add_uint(o, "count", j->count) ||
	     smio_json_add_uint(o, "block_size", j->lba_size) ||
	     smio_json_add_double(o, "seconds", s, "%.6f") ||
	     smio_json_add_uint(o, "qpair", snv_qpair_id(j->q)) ||
	     (j->check ? smio_json_add_bool(o, "verified", !j->mismatches)
		       : smio_json_add_null(o, "verified")) ||
	     smio_json_add_uint(o, "mismatches", j->mismatches) ? -ENOMEM : 0;
	/* --buffer: the data's address as the NVMe sees it (for `smartio route`). */
	if (!rc && j->devbuf) {
		snprintf(id, sizeof(id), "0x%" PRIx64, snv_buf_ioaddr(j->buf, 0));
		rc = smio_json_add_str(o, "buffer_ioaddr", id) ? -ENOMEM : 0;
	}
	/* --sq accel:DEV: where the controller fetches the SQ from (else null). */
	if (!rc && snv_qpair_sq_ioaddr(j->q)) {
		snprintf(id, sizeof(id), "0x%" PRIx64, snv_qpair_sq_ioaddr(j->q));
		rc = smio_json_add_str(o, "sq_ioaddr", id) ? -ENOMEM : 0;
	} else if (!rc) {
		rc = smio_json_add_null(o, "sq_ioaddr") ? -ENOMEM : 0;
	}
	/* --buffer p2pmem: the orchestrator's choice (null: host memory). */
	if (!rc && j->p2pmem) {
		struct json_object *p = j->pm.g.bus ? json_object_new_object() : NULL;
		char bus[24];

		snprintf(id, sizeof(id), "0x%08x", j->pm.g.provider);
		snprintf(bus, sizeof(bus), "0x%" PRIx64, j->pm.g.bus);
		if (p && (smio_json_add_str(p, "provider", id) ||
			  smio_json_add_uint(p, "bar", j->pm.g.bar) ||
			  smio_json_add_str(p, "bus", bus) ||
			  smio_json_add_uint(p, "size", j->pm.g.size) ||
			  smio_json_add_uint(p, "hops", j->pm.g.hops)))
			rc = -ENOMEM;
		if (!rc && (j->pm.g.bus && !p))
			rc = -ENOMEM;
		if (!rc && json_object_object_add(o, "p2pmem", p))
			rc = -ENOMEM;
		if (rc)
			json_object_put(p);
	}
	if (!rc)
		rc = smio_json_print(stdout, o);
	json_object_put(o);
	return rc;
}

int cmd_dd(int argc, char **argv)
{
	static const struct option lo[] = { TOOL_COMMON_LONGOPTS,
		{ "mode", required_argument, NULL, 'M' }, { "nsid", required_argument, NULL, 'n' },
		{ "lba", required_argument, NULL, 's' }, { "count", required_argument, NULL, 'c' },
		{ "bs", required_argument, NULL, 'b' }, { "qd", required_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' }, { "check", no_argument, NULL, 'C' },
		{ "if", required_argument, NULL, 'i' }, { "of", required_argument, NULL, 'o' },
		{ "sq", required_argument, NULL, 1 }, { "cq", required_argument, NULL, 2 },
		{ "buffer", required_argument, NULL, 3 },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	struct snv_qpair_opts qo = { 0 };
	struct tool_common tc = { .backup_adapter = -1 };
	struct dd_job j = { .mode = -1, .nsid = 1, .seed = 1, .qd = 4, .in_fd = -1, .out_fd = -1,
			   .pm.fd = -1 };
	const char *mode = NULL, *inf = NULL, *outf = NULL;
	uint64_t bs = 64 * 1024, v, t0;
	struct snv_client *c;
	struct snv_ns_info ni;
	bool have_count = false, json = false;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "d:m:t:M:n:s:c:b:q:S:Ci:o:jh", lo, NULL)) != -1) {
		if ((rc = tool_common_opt(&tc, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		switch (opt) {
		case 'M': mode = optarg; break;
		case 'C': j.check = true; break;
		case 'i': inf = optarg; break;
		case 'o': outf = optarg; break;
		case 'j': json = true; break;
		case 'h': dd_help(); return 0;
		case 1:
		case 2:
			if (tool_place_arg("dd", optarg, opt == 1, &qo))
				return 2;
			break;
		case 3:
			if (!strcmp(optarg, "p2pmem") || !strcmp(optarg, "p2pmem,fallback")) {
				j.p2pmem = optarg[6] ? 2 : 1;
				break;
			}
			if (parse_buffer(optarg, &j.dev_bus))
				return 2;
			j.devbuf = true;
			break;
		case 'n': case 's': case 'c': case 'b': case 'q': case 'S':
			if (tool_parse_size(optarg, &v)) {
				fprintf(stderr, "smartio-nvme dd: bad number '%s'\n", optarg);
				return 2;
			}
			if (opt == 'n') j.nsid = (uint32_t)v;
			if (opt == 's') j.slba = v;
			if (opt == 'c') { j.count = v; have_count = true; }
			if (opt == 'b') bs = v;
			if (opt == 'q') j.qd = (unsigned)v;
			if (opt == 'S') j.seed = v;
			break;
		default:
			fprintf(stderr, "see `smartio-nvme dd --help`\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "smartio-nvme dd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!mode || (strcmp(mode, "read") && strcmp(mode, "write") && strcmp(mode, "verify")) ||
	    !have_count || !j.count || !j.qd || j.qd > 256) {
		fprintf(stderr, "smartio-nvme dd: give --mode read|write|verify and --count BLOCKS "
			"(and --qd 1..256); see `smartio-nvme dd --help`\n");
		return 2;
	}
	if ((j.devbuf || j.p2pmem) && (j.check || inf || outf || !strcmp(mode, "verify"))) {
		fprintf(stderr, "smartio-nvme dd: --buffer %s keeps the data in device memory: "
			"no --check, --if, --of or verify with it\n", j.p2pmem ? "p2pmem" : "bus:ADDR");
		return 2;
	}
	if (inf && (j.in_fd = open(inf, O_RDONLY)) < 0) {
		fprintf(stderr, "smartio-nvme dd: %s: %s\n", inf, strerror(errno));
		return 1;
	}
	if (outf && (j.out_fd = open(outf, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
		fprintf(stderr, "smartio-nvme dd: %s: %s\n", outf, strerror(errno));
		return 1;
	}
	qo.depth = j.qd + 1 < 2 ? 2 : j.qd + 1;
	if (open_client_qp(&tc, &qo, &c, &j.q))
		return 1;
	rc = snv_ns_info(c, j.nsid, &ni);
	if (rc) {
		fprintf(stderr, "smartio-nvme dd: namespace %u: %s\n", j.nsid,
			rc < 0 ? strerror(-rc) : "not active");
		goto out;
	}
	j.lba_size = ni.lba_size;
	if (bs < j.lba_size || bs % j.lba_size || bs > 128 * 1024 || j.slba >= ni.nlb ||
	    j.count > ni.nlb - j.slba) {
		fprintf(stderr, "smartio-nvme dd: --bs must be a multiple of %u up to 128K, and "
			"LBAs %llu+%llu must lie within the namespace's %llu blocks\n", j.lba_size,
			(unsigned long long)j.slba, (unsigned long long)j.count,
			(unsigned long long)ni.nlb);
		rc = -EINVAL;
		goto out;
	}
	j.bpc = (unsigned)(bs / j.lba_size);
	if (j.p2pmem) {
		rc = tool_p2pmem_alloc(tc.fdid, j.count * j.lba_size, j.p2pmem == 2, &j.pm);
		if (rc) {
			fprintf(stderr, "smartio-nvme dd: p2pmem: %s%s\n", strerror(-rc),
				rc == -ENODEV ? " (no published device memory of this host is "
				"reachable by the controller; --buffer p2pmem,fallback uses host "
				"memory then)" : rc == -EINVAL ? " (run it on a host: smartio exec "
				"--host N)" : "");
			goto out;
		}
		j.devbuf = j.pm.g.bus != 0;
		j.dev_bus = j.pm.g.bus;
	}
	j.pat = malloc(j.lba_size);
	if (!j.pat)
		rc = -ENOMEM;
	else if (j.devbuf)      /* the whole range, in LBA order: the device sees all of it */
		rc = snv_buf_attach_bus(c, j.dev_bus, (j.count * j.lba_size + DEV_PAGE - 1) &
					~(uint64_t)(DEV_PAGE - 1), &j.buf);
	else
		rc = snv_buf_alloc(c, (size_t)bs * j.qd, &j.buf);
	if (rc) {
		fprintf(stderr, "smartio-nvme dd: buffer: %s%s\n", strerror(-rc),
			tool_qp_hint(rc == -EADDRNOTAVAIL ? rc : 0, qo.cq_place));
		goto out;
	}
	t0 = smio_now_ns();
	if (!strcmp(mode, "write") || !strcmp(mode, "verify"))
		rc = dd_pass(&j, true);
	if (!rc && (!strcmp(mode, "read") || !strcmp(mode, "verify"))) {
		if (!strcmp(mode, "verify"))
			j.check = true;
		rc = dd_pass(&j, false);
	}
	if (!rc) {
		double s = (double)(smio_now_ns() - t0) / 1e9;

		if (json && dd_json(&j, mode, tc.fdid, s))
			rc = -ENOMEM;
		else if (!json)
			printf("%s %llu blocks of %u bytes at LBA %llu in %.3f s (qpair %u)%s\n",
			       mode, (unsigned long long)j.count, j.lba_size,
			       (unsigned long long)j.slba, s, snv_qpair_id(j.q),
			       j.check ? (j.mismatches ? ": MISMATCH" : ": verified") : "");
		if (j.mismatches) {
			fprintf(stderr, "smartio-nvme dd: %llu blocks differ\n",
				(unsigned long long)j.mismatches);
			rc = -EIO;
		}
	}
out:
	free(j.pat);
	snv_client_close(c);
	tool_p2pmem_close(&j.pm);
	if (j.in_fd >= 0)
		close(j.in_fd);
	if (j.out_fd >= 0)
		close(j.out_fd);
	return rc ? 1 : 0;
}

