// SPDX-License-Identifier: MIT
/* smartio-nvme bench: IOPS, bandwidth and latency percentiles on one queue pair. */
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snvtool.h"
#include "util/json_out.h"
#include "util/smio_time.h"

#define MAX_SAMPLES  (4u << 20)                /* latency samples kept (32 MiB) */
#define STALL_NS     (10ull * 1000000000ull)

static void bench_help(void)
{
	printf("usage: smartio-nvme bench [OPTIONS]\n"
	       "Run I/O on a queue pair of its own and report IOPS, bandwidth and latency\n"
	       "percentiles (p50/p99/p99.9; submission to completion as seen by the client).\n\n"
	       TOOL_COMMON_HELP
	       "  -w, --rw PATTERN       read, write, randread or randwrite (default randread)\n"
	       "  -b, --bs BYTES         bytes per command (default 4K)\n"
	       "  -q, --qd N             commands in flight (default 1)\n"
	       "  -T, --time SEC         run time (default 2; fractions allowed)\n"
	       "  -N, --ios N            stop after N commands (whichever comes first)\n"
	       "  -n, --nsid N           namespace (default 1)\n"
	       "  -r, --range BLOCKS     blocks of the namespace used, from 0 (default: all)\n"
	       "      --sq PLACE         SQ memory: default, device, host, cmb, accel:DEV (an\n"
	       "                         accelerator's memory, e.g. the lender's GPU: fig. 34)\n"
	       "      --cq PLACE         CQ memory: default, device, host\n"
	       "  -p, --prio CLASS       ask for the queue pair's priority class: urgent, high,\n"
	       "                         medium or low (default: what the manager's policy\n"
	       "                         gives this host; docs/nvme-driver.md, \"Priorities\")\n"
	       "      --poll-sleep US    sleep US microseconds whenever a poll finds nothing\n"
	       "                         (default 0: spin, yielding after 1 ms without completions)\n"
	       "      --ready-file PATH  create PATH once the queue pair and buffers are set up\n"
	       "      --go-file PATH     then start the timed run only once PATH exists\n"
	       "  -j, --json             one JSON object on stdout\n"
	       "  -P, --no-progress      no progress bar (shown on a terminal for runs >= 2 s)\n");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *s, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return (double)s[i < n ? i : n - 1] / 1000.0;
}

/* What --json prints (docs/cli.md): the run, then latencies in microseconds. */
struct bench_out {
	const char *rw, *prio;
	uint64_t bs, qd, ios, errors;
	unsigned nsid, qpair;
	double seconds, iops, mib_s;
	double lat[6];                         /* avg, min, p50, p99, p99.9, max */
	int model_rc;                          /* snv_qpair_predict's answer */
	struct snv_prediction model;
	unsigned iops_limit;
	uint64_t sq_ioaddr;                    /* snv_qpair_sq_ioaddr (0: not known) */
};

/* "sq_ioaddr": where the controller fetches the SQ from (--sq accel:DEV), or null. */
static int sq_json(struct json_object *o, uint64_t io)
{
	char hex[24];

	if (!io)
		return smio_json_add_null(o, "sq_ioaddr");
	snprintf(hex, sizeof(hex), "0x%" PRIx64, io);
	return smio_json_add_str(o, "sq_ioaddr", hex);
}

/*
 * "measured ...: X us; model (real hardware, this route): Y us": the timing
 * model's cost of one command on the routes this queue pair's memory has,
 * as the controller reports it (snv_qpair_predict).
 */
static void print_model(const struct bench_out *b)
{
	const struct snv_prediction *m = &b->model;
	char size[32];

	if (b->model_rc) {
		printf("  model: %s\n", b->model_rc == -ENOTSUP ? "the controller offers no "
		       "prediction" : strerror(-b->model_rc));
		return;
	}
	if (m->size % 1024)
		snprintf(size, sizeof(size), "%u B", m->size);
	else
		snprintf(size, sizeof(size), "%u KiB", m->size / 1024);
	printf("  measured %s QD%llu %s p50: %.2f us; model (real hardware, this route): "
	       "%.2f us%s\n", size, (unsigned long long)b->qd,
	       m->write ? "write" : "read", b->lat[2], m->total_us,
	       b->qd > 1 ? " for one command alone" : "");
	printf("  model: doorbell %.2f + fetch %.2f + media %.2f + data %.2f + completion %.2f us%s\n",
	       m->doorbell_us, m->fetch_us, m->media_us, m->data_us, m->cqe_us,
	       m->complete ? "" : " (some paths not resolvable now: counted 0)");
}

static int model_json(struct json_object *o, const struct bench_out *b)
{
	const struct snv_prediction *m = &b->model;
	struct json_object *j;

	if (b->model_rc)
		return smio_json_add_null(o, "model_us");
	j = json_object_new_object();
	if (!j || smio_json_add_double(j, "total", m->total_us, "%.3f") ||
	    smio_json_add_double(j, "doorbell", m->doorbell_us, "%.3f") ||
	    smio_json_add_double(j, "fetch", m->fetch_us, "%.3f") ||
	    smio_json_add_double(j, "media", m->media_us, "%.3f") ||
	    smio_json_add_double(j, "data", m->data_us, "%.3f") ||
	    smio_json_add_double(j, "completion", m->cqe_us, "%.3f") ||
	    smio_json_add_bool(j, "complete", m->complete)) {
		json_object_put(j);
		return -ENOMEM;
	}
	return smio_json_add(o, "model_us", j);
}

static int print_json(const struct bench_out *b)
{
	static const char *const lat_keys[6] = { "avg", "min", "p50", "p99", "p99_9", "max" };
	struct json_object *o = json_object_new_object(), *lat = json_object_new_object();
	int rc = -ENOMEM;

	if (!o || !lat)
		goto out;
	for (unsigned i = 0; i < 6; i++)
		if (smio_json_add_double(lat, lat_keys[i], b->lat[i], "%.3f"))
			goto out;
	if (smio_json_add_str(o, "rw", b->rw) || smio_json_add_uint(o, "bs", b->bs) ||
	    smio_json_add_uint(o, "qd", b->qd) || smio_json_add_uint(o, "nsid", b->nsid) ||
	    smio_json_add_uint(o, "qpair", b->qpair) || smio_json_add_str(o, "prio", b->prio) ||
	    smio_json_add_uint(o, "iops_limit", b->iops_limit) ||
	    smio_json_add_uint(o, "ios", b->ios) ||
	    smio_json_add_uint(o, "errors", b->errors) ||
	    smio_json_add_double(o, "seconds", b->seconds, "%.3f") ||
	    smio_json_add_double(o, "iops", b->iops, "%.1f") ||
	    smio_json_add_double(o, "mib_s", b->mib_s, "%.2f"))
		goto out;
	rc = smio_json_add(o, "lat_us", lat);
	lat = NULL;                            /* o holds it, or it was released */
	if (!rc)
		rc = model_json(o, b);
	if (!rc)
		rc = sq_json(o, b->sq_ioaddr);
	if (!rc)
		rc = smio_json_print(stdout, o);
out:
	if (rc)
		fprintf(stderr, "smartio-nvme bench: printing the result: %s\n", strerror(-rc));
	json_object_put(lat);
	json_object_put(o);
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option lo[] = { TOOL_COMMON_LONGOPTS,
		{ "rw", required_argument, NULL, 'w' }, { "bs", required_argument, NULL, 'b' },
		{ "qd", required_argument, NULL, 'q' }, { "time", required_argument, NULL, 'T' },
		{ "ios", required_argument, NULL, 'N' }, { "nsid", required_argument, NULL, 'n' },
		{ "range", required_argument, NULL, 'r' }, { "sq", required_argument, NULL, 1 },
		{ "cq", required_argument, NULL, 2 }, { "json", no_argument, NULL, 'j' },
		{ "no-progress", no_argument, NULL, 'P' }, { "help", no_argument, NULL, 'h' },
		{ "prio", required_argument, NULL, 'p' }, { "poll-sleep", required_argument, NULL, 3 },
		{ "ready-file", required_argument, NULL, 4 }, { "go-file", required_argument, NULL, 5 },
		{ 0 } };
	const char *ready = NULL, *go = NULL;
	uint64_t poll_sleep_us = 0;
	struct tool_common tc = { .backup_adapter = -1 };
	struct snv_qpair_opts qo = { 0 };
	const char *rw = "randread";
	uint64_t bs = 4096, qd = 1, ios = 0, range = 0, v, *lat = NULL, *t_sub = NULL;
	uint64_t nsamp = 0, done = 0, sub = 0, errors = 0, next_blk = 0, rng;
	uint64_t t0, t_end, last_cpl, next_bar, sum = 0, minl = UINT64_MAX, maxl = 0;
	double secs = 2.0;
	bool json = false, progress = true, printed = true, wr, rnd;
	struct snv_client *c = NULL;
	struct snv_qpair *q = NULL;
	struct snv_buf *buf = NULL;
	struct snv_ns_info ni;
	uint32_t nsid = 1, bpc;
	uint16_t first_err = 0;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "d:m:t:w:b:q:T:N:n:r:p:jPh", lo, NULL)) != -1) {
		if ((rc = tool_common_opt(&tc, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		switch (opt) {
		case 'w': rw = optarg; break;
		case 'j': json = true; break;
		case 'P': progress = false; break;
		case 'h': bench_help(); return 0;
		case 1: if (tool_place_arg("bench", optarg, true, &qo)) return 2; break;
		case 2: if (tool_place_arg("bench", optarg, false, &qo)) return 2; break;
		case 4: ready = optarg; break;
		case 5: go = optarg; break;
		case 'p':
			if (snv_prio_parse(optarg, &qo.prio)) {
				fprintf(stderr, "smartio-nvme bench: bad --prio '%s' (urgent, high, "
					"medium, low)\n", optarg);
				return 2;
			}
			break;
		case 3:
			if (tool_parse_size(optarg, &poll_sleep_us) || poll_sleep_us > 1000000) {
				fprintf(stderr, "smartio-nvme bench: bad --poll-sleep '%s' (0..1000000 "
					"microseconds)\n", optarg);
				return 2;
			}
			break;
		case 'T':
			secs = strtod(optarg, NULL);
			if (!(secs > 0 && secs <= 3600)) {
				fprintf(stderr, "smartio-nvme bench: bad --time '%s' (seconds)\n", optarg);
				return 2;
			}
			break;
		case 'b': case 'q': case 'N': case 'n': case 'r':
			if (tool_parse_size(optarg, &v)) {
				fprintf(stderr, "smartio-nvme bench: bad number '%s'\n", optarg);
				return 2;
			}
			if (opt == 'b') bs = v;
			if (opt == 'q') qd = v;
			if (opt == 'N') ios = v;
			if (opt == 'n') nsid = (uint32_t)v;
			if (opt == 'r') range = v;
			break;
		default:
			fprintf(stderr, "see `smartio-nvme bench --help`\n");
			return 2;
		}
	}
	wr = !strcmp(rw, "write") || !strcmp(rw, "randwrite");
	rnd = !strncmp(rw, "rand", 4);
	if ((!wr && strcmp(rw, "read") && strcmp(rw, "randread")) || !qd || qd > 1023) {
		fprintf(stderr, "smartio-nvme bench: --rw read|write|randread|randwrite, --qd 1..1023\n");
		return 2;
	}
	qo.depth = (unsigned)qd + 1;
	if (tool_open(&tc, &c))
		return 1;
	rc = snv_ns_info(c, nsid, &ni);
	if (rc || bs < ni.lba_size || bs % ni.lba_size || bs > 128 * 1024) {
		fprintf(stderr, "smartio-nvme bench: namespace %u %s\n", nsid, rc ? "not usable" :
			"needs --bs a multiple of its block size, up to 128K");
		goto fail;
	}
	bpc = (uint32_t)(bs / ni.lba_size);
	if (!range || range > ni.nlb)
		range = ni.nlb;
	range -= range % bpc;
	if (range < bpc) {
		fprintf(stderr, "smartio-nvme bench: --range smaller than one command\n");
		goto fail;
	}
	rc = snv_qpair_create(c, &qo, &q);
	if (rc) {
		fprintf(stderr, "smartio-nvme bench: cannot create a queue pair: %s%s\n",
			strerror(-rc), tool_prio_hint(rc, qo.prio) ?: tool_qp_hint(rc, qo.cq_place));
		goto fail;
	}
	lat = malloc(MAX_SAMPLES * sizeof(*lat));
	t_sub = calloc(qd, sizeof(*t_sub));
	rc = lat && t_sub ? snv_buf_alloc(c, (size_t)(bs * qd), &buf) : -ENOMEM;
	if (rc) {
		fprintf(stderr, "smartio-nvme bench: buffers: %s%s\n", strerror(-rc),
			tool_qp_hint(rc == -EADDRNOTAVAIL ? rc : 0, qo.cq_place));
		goto fail;
	}
	memset(snv_buf_vaddr(buf), 0xa5, (size_t)(bs * qd));
	if (tool_ready_go(ready, go))
		goto fail;
	progress = progress && isatty(2) && secs >= 2 && !json;
	rng = smio_now_ns() | 1;
	t0 = smio_now_ns();
	t_end = t0 + (uint64_t)(secs * 1e9);
	last_cpl = next_bar = t0;
	for (;;) {
		struct snv_cpl cpl[32];
		uint64_t now;
		int n;

		while (snv_qpair_inflight(q) < qd && (!ios || sub < ios)) {
			unsigned slot = 0;
			uint64_t blk;

			while (t_sub[slot])
				slot++;
			if (rnd) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				blk = (rng % (range / bpc)) * bpc;
			} else {
				blk = next_blk;
				next_blk = (next_blk + bpc) % range;
			}
			t_sub[slot] = smio_now_ns();
			rc = snv_submit_rw(q, wr, nsid, blk, bpc, buf, (size_t)slot * bs,
					   (void *)(uintptr_t)slot);
			if (rc == -EAGAIN) {          /* the manager's rate limit: later */
				t_sub[slot] = 0;
				break;
			}
			if (rc) {
				fprintf(stderr, "smartio-nvme bench: submit: %s\n", strerror(-rc));
				goto fail;
			}
			sub++;
		}
		n = snv_poll(q, cpl, 32);
		now = smio_now_ns();
		for (int i = 0; i < n; i++) {
			unsigned slot = (unsigned)(uintptr_t)cpl[i].cookie;
			uint64_t l = now - t_sub[slot];

			t_sub[slot] = 0;
			if (cpl[i].status && !errors++)
				first_err = cpl[i].status;
			sum += l;
			minl = l < minl ? l : minl;
			maxl = l > maxl ? l : maxl;
			if (nsamp < MAX_SAMPLES)
				lat[nsamp++] = l;
			done++;
		}
		if (n)
			last_cpl = now;
		else if (poll_sleep_us)
			tool_sleep_us(poll_sleep_us); /* a polite poller: the CPU is shared */
		else if (now - last_cpl > 1000000)
			sched_yield();                /* 1 ms without a completion: let others run */
		if (!n && now - last_cpl > STALL_NS) {
			fprintf(stderr, "smartio-nvme bench: no completion for 10 s: is the manager "
				"running and the controller alive?\n");
			goto fail;
		}
		if ((now >= t_end || (ios && sub >= ios)) && !snv_qpair_inflight(q))
			break;
		if (now >= t_end)
			ios = sub;                    /* stop submitting, drain */
		if (progress && now >= next_bar) {
			double f = (double)(now - t0) / (double)(t_end - t0);
			int w = (int)(f > 1 ? 40 : f * 40);

			fprintf(stderr, "\r[%.*s%*s] %3d%% %8.0f IOPS", w,
				"########################################", 40 - w, "",
				(int)(f > 1 ? 100 : f * 100), (double)done / ((double)(now - t0) / 1e9));
			next_bar = now + 200000000ull;
		}
	}
	if (progress)
		fprintf(stderr, "\r%*s\r", 60, "");
	{
		double s = (double)(smio_now_ns() - t0) / 1e9, iops = (double)done / s;
		double mibs = iops * (double)bs / 1048576.0;
		double avg = done ? (double)sum / (double)done / 1000.0 : 0;

		struct bench_out b;

		qsort(lat, nsamp, sizeof(*lat), cmp_u64);
		b = (struct bench_out){ .rw = rw, .prio = snv_prio_name(snv_qpair_prio(q)),
			.iops_limit = snv_qpair_iops_limit(q),
			.bs = bs, .qd = qd, .ios = done,
			.errors = errors, .nsid = nsid, .qpair = snv_qpair_id(q),
			.seconds = s, .iops = iops, .mib_s = mibs,
			.lat = { avg, done ? (double)minl / 1000.0 : 0, pct(lat, nsamp, 50),
				 pct(lat, nsamp, 99), pct(lat, nsamp, 99.9),
				 (double)maxl / 1000.0 } };
		b.model_rc = snv_qpair_predict(q, &b.model);
		b.sq_ioaddr = snv_qpair_sq_ioaddr(q);
		if (json) {
			printed = !print_json(&b);
		} else {
			printf("%s bs=%llu qd=%llu nsid=%u qpair=%u class=%s: %llu I/Os in %.2f s\n"
			       "  IOPS %.0f, %.1f MiB/s, errors %llu\n"
			       "  latency us: avg %.2f min %.2f p50 %.2f p99 %.2f p99.9 %.2f max %.2f\n",
			       rw, (unsigned long long)bs, (unsigned long long)qd, nsid,
			       snv_qpair_id(q), snv_prio_name(snv_qpair_prio(q)),
			       (unsigned long long)done, s, iops, mibs,
			       (unsigned long long)errors, avg, done ? (double)minl / 1000.0 : 0,
			       pct(lat, nsamp, 50), pct(lat, nsamp, 99), pct(lat, nsamp, 99.9),
			       (double)maxl / 1000.0);
			print_model(&b);
			if (b.sq_ioaddr)
				printf("  SQ fetched by the controller at bus address %#" PRIx64 "\n",
				       b.sq_ioaddr);
		}
	}
	if (errors)
		fprintf(stderr, "smartio-nvme bench: %llu commands failed, the first with NVMe status "
			"%#x\n", (unsigned long long)errors, first_err);
	free(lat);
	free(t_sub);
	snv_client_close(c);
	return errors || !printed ? 1 : 0;
fail:
	free(lat);
	free(t_sub);
	snv_client_close(c);
	return 1;
}
