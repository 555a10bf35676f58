// SPDX-License-Identifier: MIT
/*
 * The workload of bench/faults: one client of the distributed NVMe driver
 * writing versioned blocks and reading them back while faults happen, and
 * then telling exactly what survived.
 *
 * Every write puts a self-describing block at an LBA of the client's own
 * region: a header {magic, lba, version, client} and a body derived from
 * (lba, version), so any block read back says which write it came from, or
 * that it is garbage. The client remembers, per LBA, the newest version the
 * controller acknowledged and the newest it submitted. A quarter of the
 * commands read a block back during the run; at the end a fresh queue pair
 * reads every block once more. A block older than its acknowledged version
 * is a lost acknowledged write; a block that is no version at all, or newer
 * than anything submitted, is corrupted. Commands that do not complete within
 * --cmd-timeout are counted as errors the application saw (without a backup
 * path that is what a dead path looks like); once every command in flight has
 * timed out, the client does what an application of the driver must: it
 * deletes the queue pair (never reusing one after a timeout) and asks for a
 * new one, again every 50 ms until it gets one, and goes on.
 *
 * Prints one JSON object: counts, the longest time without a completion
 * (and when it began, on CLOCK_MONOTONIC, to line it up with faults.log),
 * and completions per --bucket ms.
 *
 * With --backup-adapter the client keeps a backup queue pair through that
 * adapter (libsmartio-nvme's multipath): the library fails over by itself,
 * and the application's own timeout (--cmd-timeout, then 15 s by default)
 * only sees what the library could not hide.
 *
 * usage: bench_faults_io [--seconds S] [--blocks N] [--qd Q] [--client K]
 *                        [--cmd-timeout MS] [--bucket MS] [--backup-adapter A]
 * Run as a program of a host: smartio exec --host H -- bench_faults_io ...
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pool.h"
#include "smartio/nvme.h"
#include "util/smio_time.h"

#define MAGIC      0x736d696f6661756cull   /* "smiofaul" */
#define MAX_QD     64
#define MAX_BUCKETS 100000
#define BENCH_MULTIPATH 1   /* libsmartio-nvme has backup paths */

struct hdr {
	uint64_t magic, lba;
	uint32_t version, client;
	uint64_t pad;
};

struct slot {
	bool busy, write, late;   /* late: counted as timed out, still outstanding */
	uint64_t lba;
	uint32_t version;         /* written, or (read) the acknowledged one at submission */
	uint64_t t_ns;
};

static struct {
	unsigned seconds, qd, client, timeout_ms, bucket_ms;
	bool timeout_set;
	int backup_adapter;
	uint64_t blocks, base;
} opt = { .seconds = 10, .qd = 8, .timeout_ms = 1000, .bucket_ms = 100, .blocks = 4096,
	  .backup_adapter = -1 };

static uint32_t lba_size;
static uint32_t *acked, *submitted;
static struct {
	uint64_t writes, writes_acked, reads, reads_ok, errors, timeouts, late, corrupted_reads;
	uint64_t lost, corrupted, verified, unverifiable, recoveries;
	uint64_t failovers, resumes, resubmitted, late_ignored, path_errors, failover_ns;
} n;
static uint64_t first_timeout, recovery_ns;    /* a dead path: until I/O flows again */
static uint32_t buckets[MAX_BUCKETS];
static uint64_t t0, last_cpl, gap_ns, gap_start;
static bool stalled_at_end;           /* no I/O completed since the fault, at the end */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static void fill(uint8_t *b, uint64_t lba, uint32_t version)
{
	struct hdr h = { .magic = MAGIC, .lba = lba, .version = version, .client = opt.client };
	uint64_t *w = (uint64_t *)b;

	memcpy(b, &h, sizeof(h));
	for (size_t i = sizeof(h) / 8; i < lba_size / 8; i++)
		w[i] = mix((lba << 32) ^ version ^ (i << 12));
}

/* The version a block holds, or -1 if it is none (garbage, another LBA's). */
static int64_t version_of(const uint8_t *b, uint64_t lba)
{
	struct hdr h;
	const uint64_t *w = (const uint64_t *)b;

	memcpy(&h, b, sizeof(h));
	if (h.magic != MAGIC || h.lba != lba || h.client != opt.client)
		return -1;
	for (size_t i = sizeof(h) / 8; i < lba_size / 8; i++)
		if (w[i] != mix((lba << 32) ^ h.version ^ (i << 12)))
			return -1;
	return h.version;
}

static void completed(uint64_t now)
{
	if (first_timeout) {
		if (now - first_timeout > recovery_ns)
			recovery_ns = now - first_timeout;
		first_timeout = 0;
	}
	uint64_t b = (now - t0) / (opt.bucket_ms * 1000000ull);

	if (b < MAX_BUCKETS)
		buckets[b]++;
	if (last_cpl && now - last_cpl > gap_ns) {
		gap_ns = now - last_cpl;
		gap_start = last_cpl;
	}
	last_cpl = now;
}

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, "bench_faults_io: %s\n", why);
	fprintf(stderr, "usage: bench_faults_io [--seconds S] [--blocks N] [--qd Q] [--client K]\n"
		"                       [--cmd-timeout MS] [--bucket MS] [--backup-adapter A]\n");
	return 2;
}

static int parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seconds", 1, NULL, 's' }, { "blocks", 1, NULL, 'b' }, { "qd", 1, NULL, 'q' },
		{ "client", 1, NULL, 'k' }, { "cmd-timeout", 1, NULL, 't' },
		{ "bucket", 1, NULL, 'B' }, { "backup-adapter", 1, NULL, 'a' },
		{ "probe-multipath", 0, NULL, 'p' }, { "help", 0, NULL, 'h' }, { 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *end;
		unsigned long v = 0;

		if (c == 'h')
			return usage(NULL), 1;
		if (c == 'p')
			return BENCH_MULTIPATH ? 1 : 3;   /* for bench/faults */
		if (c == '?')
			return usage(NULL);
		errno = 0;
		v = strtoul(optarg, &end, 0);
		if (errno || *end || !optarg[0])
			return usage("numbers only");
		switch (c) {
		case 's': opt.seconds = (unsigned)v; break;
		case 'b': opt.blocks = v; break;
		case 'q': opt.qd = (unsigned)v; break;
		case 'k': opt.client = (unsigned)v; break;
		case 't': opt.timeout_ms = (unsigned)v; opt.timeout_set = true; break;
		case 'B': opt.bucket_ms = (unsigned)v; break;
		case 'a': opt.backup_adapter = (int)v; break;
		}
	}
	if (optind != argc || !opt.seconds || opt.seconds > 3600 || !opt.qd || opt.qd > MAX_QD ||
	    !opt.blocks || opt.blocks > (1u << 20) || !opt.timeout_ms || !opt.bucket_ms)
		return usage("a value is out of range");
	if ((uint64_t)opt.seconds * 1000 / opt.bucket_ms >= MAX_BUCKETS)
		return usage("too many buckets: a larger --bucket");
	return 0;
}

static int open_client(struct snv_client **c, char *err, size_t errlen)
{
	struct snv_client_opts o = { .timeout_ms = 5000, .multipath = opt.backup_adapter >= 0,
				     .backup_adapter = opt.backup_adapter >= 0 ?
						       (unsigned)opt.backup_adapter : 0 };
	int rc = bench_first_nvme(&o.fdid, err, errlen);

	return rc ? rc : snv_client_open(&o, c, err, errlen);
}

/* Submit the next command into slot s (index i of the buffer). */
static int submit(struct snv_qpair *q, struct snv_buf *buf, struct slot *s, unsigned i,
		  uint64_t seq)
{
	uint8_t *data = (uint8_t *)snv_buf_vaddr(buf) + (size_t)i * lba_size;
	uint64_t r = mix(seq * 0x9e3779b97f4a7c15ull + opt.client);
	uint64_t lba = r % opt.blocks;
	bool write = (r >> 40) % 4 != 0 || !acked[lba];
	int rc;

	*s = (struct slot){ .busy = true, .write = write, .lba = lba, .t_ns = smio_now_ns() };
	if (write) {
		s->version = ++submitted[lba];
		fill(data, opt.base + lba, s->version);
		n.writes++;
	} else {
		s->version = acked[lba];
		n.reads++;
	}
	rc = snv_submit_rw(q, write, 1, opt.base + lba, 1, buf, (size_t)i * lba_size, s);
	if (rc)
		s->busy = false;
	return rc;
}

static void on_cpl(struct snv_buf *buf, struct slot *slots, const struct snv_cpl *e,
		   uint64_t now)
{
	struct slot *s = e->cookie;
	unsigned i = (unsigned)(s - slots);
	const uint8_t *data = (const uint8_t *)snv_buf_vaddr(buf) + (size_t)i * lba_size;

	if (s->late)
		n.late++;
	s->busy = false;
	if (e->status) {
		n.errors++;
		return;
	}
	completed(now);
	if (s->write) {
		n.writes_acked++;
		if (s->version > acked[s->lba])
			acked[s->lba] = s->version;
	} else {
		int64_t v = version_of(data, opt.base + s->lba);

		/* Anything from the acknowledged version at submission on is fine. */
		if (v < 0 || (uint32_t)v < s->version || (uint32_t)v > submitted[s->lba])
			n.corrupted_reads++;
		else
			n.reads_ok++;
	}
}

/*
 * Give up q with commands in flight. When the manager could not delete it
 * (the path to it down), the controller may still carry those commands out
 * later and write into *bufp: what a read then finds there would be theirs.
 * The buffer is then set aside (freed at the end) and a fresh one used, as a
 * driver must not reuse a buffer the device may still write.
 */
#define RETIRED_MAX 64
static struct snv_buf *retired[RETIRED_MAX];
static unsigned nretired;

static void drop_qpair(struct snv_client *c, struct snv_qpair *q, struct snv_buf **bufp)
{
	struct snv_buf *nb = NULL;

	if (!snv_qpair_delete(q, true) || nretired == RETIRED_MAX)
		return;
	if (snv_buf_alloc(c, (size_t)MAX_QD * lba_size, &nb))
		return;
	retired[nretired++] = *bufp;
	*bufp = nb;
	fprintf(stderr, "bench_faults_io: a queue pair the manager could not delete: its buffer "
		"set aside\n");
}

/*
 * Read every written block back, through q or (q NULL) a fresh queue pair;
 * the queue pair is deleted at the end (q is consumed).
 * A read that does not complete in time makes the queue pair unusable (its
 * buffer may still be written, its completion may come late): it is deleted
 * and a new one asked for, within an overall budget.
 */
static int verify_all(struct snv_client *c, struct snv_qpair *q, struct snv_buf **bufp)
{
	struct snv_qpair_opts qo = { .depth = 32 };
	uint64_t budget = smio_now_ms() + 30000;
	struct snv_cpl e;
	int rc = 0;

	for (uint64_t lba = 0; lba < opt.blocks; lba++) {
		uint64_t end = smio_now_ms() + 2000;
		int64_t v;
		int got = 0;

		if (!submitted[lba])
			continue;
		while (!q && (rc = snv_qpair_create(c, &qo, &q)) && smio_now_ms() < budget)
			poll(NULL, 0, 50);
		if (!q)
			return rc;
		rc = snv_submit_rw(q, false, 1, opt.base + lba, 1, *bufp, 0, (void *)(uintptr_t)(lba + 1));
		if (rc)
			break;
		while (!(got = snv_poll(q, &e, 1)) && smio_now_ms() < end)
			;
		if (got != 1) {
			drop_qpair(c, q, bufp);
			q = NULL;
			if (smio_now_ms() < budget)
				lba--;              /* again, on a new queue pair */
			else
				n.unverifiable++;
			continue;
		}
		if (e.cookie != (void *)(uintptr_t)(lba + 1) || e.status) {
			n.unverifiable++;
			continue;
		}
		v = version_of(snv_buf_vaddr(*bufp), opt.base + lba);
		n.verified++;
		if (v < 0 || (uint32_t)v > submitted[lba])
			n.corrupted++;
		else if ((uint32_t)v < acked[lba])
			n.lost++;
	}
	if (q)
		snv_qpair_delete(q, true);
	return rc;
}

/* What the library did about paths on q, added up (q is about to go). */
static void path_stats(struct snv_qpair *q)
{
	struct snv_qpair_stats st;

	if (opt.backup_adapter < 0)
		return;
	snv_qpair_get_stats(q, &st);
	n.failovers += st.failovers;
	n.resumes += st.resumes;
	n.resubmitted += st.resubmitted;
	n.late_ignored += st.late_ignored;
	n.path_errors += st.path_errors;
	if (st.last_failover_ns > n.failover_ns)
		n.failover_ns = st.last_failover_ns;
}

/*
 * Every command in flight timed out: delete the queue pair and get a new one
 * (the path may be back, or come back), until the run ends.
 */
static struct snv_qpair *recover(struct snv_client *c, struct snv_qpair *q, struct slot *slots,
				 uint64_t end, struct snv_buf **bufp)
{
	struct snv_qpair_opts qo = { .depth = 64 };
	struct snv_qpair *nq = NULL;

	if (q) {
		path_stats(q);
		drop_qpair(c, q, bufp);
	}
	memset(slots, 0, sizeof(*slots) * MAX_QD);
	n.recoveries++;
	while (smio_now_ns() < end && snv_qpair_create(c, &qo, &nq))
		poll(NULL, 0, 50);
	return nq;
}

int main(int argc, char **argv)
{
	struct snv_qpair_opts qo = { .depth = 64 };
	struct slot slots[MAX_QD] = { 0 };
	struct snv_client *c = NULL;
	struct snv_qpair *q = NULL;
	struct snv_buf *buf = NULL;
	struct snv_ns_info ns;
	char err[256] = "";
	uint64_t seq = 0, end, stop;
	int rc = parse(argc, argv);

	if (rc)
		return rc == 1 ? 0 : rc;   /* 1: --help, or --probe-multipath said yes */
	if (opt.backup_adapter >= 0 && !opt.timeout_set)
		opt.timeout_ms = 15000;     /* longer than the library's own io_timeout */
	rc = open_client(&c, err, sizeof(err));
	if (!rc)
		rc = snv_ns_info(c, 1, &ns);
	if (!rc && (ns.lba_size < sizeof(struct hdr) || ns.lba_size % 8 ||
		    (uint64_t)(opt.client + 1) * opt.blocks > ns.nlb))
		rc = -ERANGE;
	if (!rc) {
		lba_size = ns.lba_size;
		opt.base = (uint64_t)opt.client * opt.blocks;
		rc = snv_buf_alloc(c, (size_t)MAX_QD * lba_size, &buf);
	}
	if (!rc)
		rc = snv_qpair_create(c, &qo, &q);
	acked = calloc(opt.blocks, sizeof(*acked));
	submitted = calloc(opt.blocks, sizeof(*submitted));
	if (!rc && (!acked || !submitted))
		rc = -ENOMEM;
	if (rc) {
		fprintf(stderr, "bench_faults_io: %s\n", err[0] ? err : strerror(-rc));
		return 1;
	}

	t0 = smio_now_ns();
	end = t0 + opt.seconds * 1000000000ull;
	while (smio_now_ns() < end) {
		struct snv_cpl e[16];
		uint64_t now = smio_now_ns();
		int got;

		unsigned late = 0;

		if (!q) {
			q = recover(c, NULL, slots, end, &buf);
			continue;
		}
		for (unsigned i = 0; i < opt.qd; i++) {
			if (slots[i].busy) {
				if (!slots[i].late &&
				    now - slots[i].t_ns > opt.timeout_ms * 1000000ull) {
					slots[i].late = true;   /* the application sees an error */
					n.timeouts++;
					if (!first_timeout)
						first_timeout = slots[i].t_ns;
				}
				late += slots[i].late;
				continue;
			}
			submit(q, buf, &slots[i], i, ++seq);
		}
		if (late == opt.qd) {
			q = recover(c, q, slots, end, &buf);
			continue;
		}
		got = snv_poll(q, e, 16);
		for (int k = 0; k < got; k++)
			on_cpl(buf, slots, &e[k], now);
		if (!got)
			sched_yield();  /* clients and the controller share the CPUs */
	}
	/* A run that ends in a stall: that stall counts too (it has not ended). */
	{
		uint64_t now = smio_now_ns(), from = last_cpl ? last_cpl : t0;

		if (now - from > gap_ns) {
			gap_ns = now - from;
			gap_start = from;
		}
		stalled_at_end = now - from > 1000000000ull;   /* nothing in the last second */
	}
	/* Let what is in flight finish (bounded), then judge everything. */
	stop = smio_now_ns() + 2000000000ull;
	for (unsigned busy = opt.qd; q && busy && smio_now_ns() < stop;) {
		struct snv_cpl e[16];
		int got = snv_poll(q, e, 16);

		for (int k = 0; k < got; k++)
			on_cpl(buf, slots, &e[k], smio_now_ns());
		busy = 0;
		for (unsigned i = 0; i < opt.qd; i++)
			busy += slots[i].busy;
	}
	if (q)
		path_stats(q);
	/* A queue pair with nothing outstanding is still good (and needs no manager). */
	if (q && snv_qpair_inflight(q)) {
		drop_qpair(c, q, &buf);
		q = NULL;
	}
	rc = verify_all(c, q, &buf);

	printf("{\"client\":%u,\"seconds\":%u,\"qd\":%u,\"blocks\":%llu,\"start_mono_ns\":%llu,"
	       "\"writes\":%llu,\"writes_acked\":%llu,\"reads\":%llu,\"reads_ok\":%llu,"
	       "\"io_errors\":%llu,\"timeouts\":%llu,\"late_completions\":%llu,"
	       "\"corrupted_reads\":%llu,\"verified\":%llu,\"unverifiable\":%llu,"
	       "\"lost_acked_writes\":%llu,\"corrupted_blocks\":%llu,\"verify_rc\":%d,"
	       "\"buffers_set_aside\":%u,\"recoveries\":%llu,\"recovery_ms\":%.3f,\"multipath\":%s,\"failovers\":%llu,"
	       "\"resumes\":%llu,\"resubmitted\":%llu,\"late_ignored\":%llu,\"path_errors\":%llu,"
	       "\"failover_ms\":%.3f,\"stalled_at_end\":%s,\"max_gap_ms\":%.3f,"
	       "\"max_gap_start_mono_ns\":%llu,\"bucket_ms\":%u,\"iops\":[",
	       opt.client, opt.seconds, opt.qd, (unsigned long long)opt.blocks,
	       (unsigned long long)t0, (unsigned long long)n.writes,
	       (unsigned long long)n.writes_acked, (unsigned long long)n.reads,
	       (unsigned long long)n.reads_ok, (unsigned long long)n.errors,
	       (unsigned long long)n.timeouts, (unsigned long long)n.late,
	       (unsigned long long)n.corrupted_reads, (unsigned long long)n.verified,
	       (unsigned long long)n.unverifiable, (unsigned long long)n.lost,
	       (unsigned long long)n.corrupted, rc, nretired, (unsigned long long)n.recoveries,
	       recovery_ns / 1e6, opt.backup_adapter >= 0 ? "true" : "false",
	       (unsigned long long)n.failovers, (unsigned long long)n.resumes,
	       (unsigned long long)n.resubmitted, (unsigned long long)n.late_ignored,
	       (unsigned long long)n.path_errors, n.failover_ns / 1e6,
	       stalled_at_end ? "true" : "false", gap_ns / 1e6,
	       (unsigned long long)gap_start, opt.bucket_ms);
	for (uint64_t b = 0; b < (uint64_t)opt.seconds * 1000 / opt.bucket_ms; b++)
		printf("%s%.0f", b ? "," : "", buckets[b] * 1000.0 / opt.bucket_ms);
	printf("]}\n");
	snv_buf_free(buf);
	for (unsigned i = 0; i < nretired; i++)
		snv_buf_free(retired[i]);
	snv_client_close(c);
	free(acked);
	free(submitted);
	return 0;
}
