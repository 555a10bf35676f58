// SPDX-License-Identifier: MIT
/*
 * bench_ctl: control-plane load on a running cluster. N client threads, each
 * with its own CLIENT connections to its home host and to a partner host, run
 * one op kind after another (bench_ctl_ops.c) as fast as replies come, in
 * timed phases: route, lspci, seg, borrow, then a mix of all four. For each
 * phase it reports operations per second and the latency distribution of the
 * ops that completed inside the measurement window (after a warm-up), and the
 * same for every wire call the ops made.
 *
 * Clients spread over the hosts evenly from the last one down (client i of
 * C on hosts 0..N-1: host N-1-i*N/C when C <= N, else N-1-(i mod N)); a
 * client's partner is the host half the cluster away, so on the 60-host
 * cluster its routes and segments cross the top cluster switch. The
 * cluster's hosts are found by their sockets in DIR.
 *
 * Before the clients start, every daemon's peer connections are opened
 * (prime(); --no-prime leaves them to the first ops).
 *
 * usage: bench_ctl --dir DIR --clients N [--duration S] [--warmup S]
 *                  [--phases LIST] [--route-cached] [--seg-size BYTES]
 *                  [--no-prime] [--timeout MS] [--json]
 * Exit status: 0 all ops succeeded, 1 some failed (still reported), 2 usage,
 * 3 set-up failed.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_ctl.h"

#define MAX_HOSTS	4096
#define MAX_CLIENTS	1024
#define PHASE_MIX	OP_NKINDS
#define NPHASES		(OP_NKINDS + 1)

static const char *const phase_names[NPHASES] = { "route", "lspci", "seg", "borrow", "mix" };

static struct {
	pthread_barrier_t start, done;
	atomic_int stop;
	int phase;
	bool quit;
} g;

/* ---------- clients ---------- */

/* A broken connection: no further op on it can mean anything. */
static bool fatal(int rc)
{
	return rc == -ECONNRESET || rc == -EPROTO || rc == -ETIMEDOUT || rc == -EPIPE ||
	       rc == -ENOMEM;
}

static void *client_main(void *arg)
{
	struct ctl_client *c = arg;
	bool dead = false;

	for (;;) {
		pthread_barrier_wait(&g.start);
		if (g.quit)
			return NULL;
		while (!atomic_load(&g.stop)) {
			enum ctl_op k = g.phase == PHASE_MIX ?
					(enum ctl_op)((c->idx + c->iter) % OP_NKINDS) :
					(enum ctl_op)g.phase;

			if (dead) {
				nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
				continue;
			}
			dead = fatal(ctl_op_run(c, k));
		}
		pthread_barrier_wait(&g.done);
	}
}

/* ---------- statistics ---------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct dist {
	size_t n;
	double p50, p99, mean, max;    /* microseconds */
};

/* Nearest-rank percentiles of n latencies (ns), sorted in place. */
static struct dist dist_of(uint64_t *v, size_t n)
{
	struct dist d = { .n = n };
	double sum = 0;

	if (!n)
		return d;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	d.p50 = (double)v[(n * 50 + 99) / 100 - 1] / 1e3;
	d.p99 = (double)v[(n * 99 + 99) / 100 - 1] / 1e3;
	d.mean = sum / (double)n / 1e3;
	d.max = (double)v[n - 1] / 1e3;
	return d;
}

/* Latencies of the records with what == w (any if w < 0) completed in [a, b]. */
static size_t collect(struct ctl_client *cl, unsigned nc, bool calls, int w, uint64_t a,
		      uint64_t b, uint64_t *out)
{
	size_t n = 0;

	for (unsigned i = 0; i < nc; i++) {
		const struct ctl_recs *rs = calls ? &cl[i].calls : &cl[i].ops;

		for (size_t k = 0; k < rs->n; k++) {
			const struct ctl_rec *r = &rs->r[k];

			if (r->t1 >= a && r->t1 <= b && (w < 0 || r->what == w))
				out[n++] = r->t1 - r->t0;
		}
	}
	return n;
}

static void print_dist_json(const char *key, const struct dist *d, double secs, bool comma)
{
	printf("%s\"%s\":{\"n\":%zu,\"ops_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
	       "\"mean_us\":%.1f,\"max_us\":%.1f}", comma ? "," : "", key, d->n,
	       (double)d->n / secs, d->p50, d->p99, d->mean, d->max);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* Report one phase: its ops, per op kind (the mix), and per wire call. */
static int report(struct ctl_client *cl, unsigned nc, int phase, uint64_t a, uint64_t b,
		  unsigned errors, const char *err, bool json, bool first)
{
	size_t total = 0;
	uint64_t *v;
	double secs = (double)(b - a) / 1e9;
	struct dist all;

	for (unsigned i = 0; i < nc; i++)
		total += cl[i].calls.n > cl[i].ops.n ? cl[i].calls.n : cl[i].ops.n;
	v = malloc((total ? total : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	all = dist_of(v, collect(cl, nc, false, -1, a, b, v));
	if (!json) {
		printf("%-7s %5u clients %10.1f ops/s  p50 %9.1f us  p99 %9.1f us  errors %u%s%s\n",
		       phase_names[phase], nc, (double)all.n / secs, all.p50, all.p99, errors,
		       err[0] ? ": " : "", err);
	} else {
		printf("%s{\"phase\":\"%s\",\"window_s\":%.3f,\"errors\":%u,\"error\":",
		       first ? "" : ",", phase_names[phase], secs, errors);
		json_str(err);
		print_dist_json("all", &all, secs, true);
		printf(",\"by_op\":{");
		for (int k = 0, n = 0; k < OP_NKINDS; k++) {
			struct dist d = dist_of(v, collect(cl, nc, false, k, a, b, v));

			if (d.n)
				print_dist_json(phase_names[k], &d, secs, n++ > 0);
		}
		printf("},\"calls\":{");
		for (int t = 0, n = 0; t < SMIO_TYPE_MAX; t++) {
			struct dist d = dist_of(v, collect(cl, nc, true, t, a, b, v));

			if (d.n)
				print_dist_json(smio_type_name((uint16_t)t), &d, secs, n++ > 0);
		}
		printf("}}");
	}
	free(v);
	return 0;
}

/* ---------- set-up ---------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The cluster's host ids, from the daemons' sockets host-N.sock in dir. */
static int find_hosts(const char *dir, uint32_t *ids, unsigned *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return -errno;
	*n = 0;
	while ((e = readdir(d)) && *n < MAX_HOSTS) {
		unsigned id;
		int end = 0;

		/* Exactly host-N.sock (not host-N.pid, host-N.log). */
		if (sscanf(e->d_name, "host-%u.sock%n", &id, &end) == 1 && end &&
		    !e->d_name[end])
			ids[(*n)++] = id;
	}
	closedir(d);
	qsort(ids, *n, sizeof(*ids), cmp_u32);
	return 0;
}

static int parse_phases(const char *s, bool *on)
{
	char buf[128], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	memset(on, 0, NPHASES * sizeof(*on));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < NPHASES && strcmp(tok, phase_names[k]); k++)
			;
		if (k == NPHASES)
			return -EINVAL;
		on[k] = true;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_ctl --dir DIR --clients N [--duration S] [--warmup S]\n"
		"                 [--phases route,lspci,seg,borrow,mix] [--route-cached]\n"
		"                 [--seg-size BYTES] [--no-prime] [--timeout MS] [--json]\n\n"
		"Control-plane load on the running cluster in DIR: N client threads (CLIENT\n"
		"role only), each phase a warm-up then a timed window; ops/s and latency per\n"
		"phase, op kind and wire call. Defaults: --duration 1 --warmup 0.25, all phases,\n"
		"routes bypass the route cache, segments of 64K. --no-prime: do not open the\n"
		"daemons' peer connections before the clients start. --timeout: bound of one\n"
		"call (default 10000 ms); a client whose call times out stops.\n"
		"Exit: 0 ok, 1 some ops failed, 2 usage, 3 set-up failed.\n");
}

static void sleep_s(double s)
{
	struct timespec t = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

struct opts {
	struct ctl_cfg cfg;
	unsigned clients;
	double duration, warmup;
	double prime_s;            /* the longest DEV_LIST of prime() */
	bool phase_on[NPHASES];
	bool json;
	bool no_prime;
};

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dir", required_argument, NULL, 'd' }, { "clients", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 't' }, { "warmup", required_argument, NULL, 'w' },
		{ "phases", required_argument, NULL, 'p' }, { "route-cached", no_argument, NULL, 'r' },
		{ "seg-size", required_argument, NULL, 's' }, { "json", no_argument, NULL, 'j' },
		{ "no-prime", no_argument, NULL, 'P' }, { "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	char *end;
	int ch;

	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'd': o->cfg.dir = optarg; break;
		case 'c':
			o->clients = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !o->clients || o->clients > MAX_CLIENTS)
				return fprintf(stderr, "bench_ctl: --clients 1..%u\n", MAX_CLIENTS), -1;
			break;
		case 't': o->duration = strtod(optarg, &end); if (*end || o->duration <= 0) return -1; break;
		case 'w': o->warmup = strtod(optarg, &end); if (*end || o->warmup < 0) return -1; break;
		case 'p':
			if (parse_phases(optarg, o->phase_on))
				return fprintf(stderr, "bench_ctl: --phases: a list of route, lspci, "
					       "seg, borrow, mix\n"), -1;
			break;
		case 'r': o->cfg.route_cached = true; break;
		case 's':
			o->cfg.seg_size = strtoull(optarg, &end, 0);
			if (*end || o->cfg.seg_size < 4096 || o->cfg.seg_size > (1ull << 30))
				return fprintf(stderr, "bench_ctl: --seg-size 4096..1G\n"), -1;
			break;
		case 'j': o->json = true; break;
		case 'P': o->no_prime = true; break;
		case 'T':
			o->cfg.timeout_ms = (int)strtol(optarg, &end, 10);
			if (*end || o->cfg.timeout_ms < 100)
				return fprintf(stderr, "bench_ctl: --timeout: at least 100 ms\n"), -1;
			break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	if (optind < argc || !o->cfg.dir || !o->clients)
		return -1;
	return 0;
}

/*
 * Open every daemon's peer connections before anything is timed: one
 * DEV_LIST per host, one host after the other (it asks every other host).
 * Two daemons that contact each other for the first time at the same moment
 * can each wait for the other's HELLO reply until the peer timeout, which is
 * a start-up effect, not the steady state this benchmark is about. Returns
 * the longest DEV_LIST in *worst_s.
 */
static int prime(const struct ctl_cfg *cfg, const uint32_t *ids, unsigned nh, double *worst_s)
{
	void *buf = malloc(SMIO_MAX_PAYLOAD);
	int rc = buf ? 0 : -ENOMEM;

	*worst_s = 0;
	for (unsigned i = 0; i < nh && !rc; i++) {
		int fd = ctl_connect(cfg, ids[i], NULL);
		uint64_t t0 = ctl_now_ns();
		uint32_t n;
		double s;

		if (fd < 0) {
			fprintf(stderr, "bench_ctl: connect to host %u: %s\n", ids[i], strerror(-fd));
			rc = fd;
			break;
		}
		rc = smio_call(fd, SMIO_DEV_LIST, NULL, 0, buf, SMIO_MAX_PAYLOAD, &n, NULL,
			       cfg->timeout_ms);
		s = (double)(ctl_now_ns() - t0) / 1e9;
		*worst_s = s > *worst_s ? s : *worst_s;
		close(fd);
		if (rc)
			fprintf(stderr, "bench_ctl: DEV_LIST on host %u: %s\n", ids[i], strerror(-rc));
	}
	free(buf);
	return rc;
}

/* Clients, their connections, and one route target per home host. */
static int setup(struct opts *o, const uint32_t *ids, unsigned nh, struct ctl_client *cl,
		 struct ctl_target *tg)
{
	char err[256];
	int rc;

	for (unsigned i = 0; i < o->clients; i++) {
		struct ctl_client *c = &cl[i];
		/* From the last host down: one client on cluster-60 sits on host 59,
		 * far from the lender (host 0), as in tests/cluster60_test.sh. */
		unsigned hi = nh - 1 - (o->clients <= nh ? i * nh / o->clients : i % nh);
		unsigned pi = (hi + (nh / 2 ? nh / 2 : 1)) % nh;

		c->cfg = &o->cfg;
		c->idx = i;
		c->home = ids[hi];
		c->partner = ids[pi];
		c->buf = malloc(SMIO_MAX_PAYLOAD);
		if (!c->buf)
			return -ENOMEM;
		if (tg[hi].fd_owner < 0) {
			tg[hi].home = c->home;
			tg[hi].partner = c->partner;
			rc = ctl_target_setup(&o->cfg, &tg[hi], err, sizeof(err));
			if (rc) {
				fprintf(stderr, "bench_ctl: route target: %s\n", err);
				return rc;
			}
		}
		c->tgt = &tg[hi];
		c->fd_home = ctl_connect(&o->cfg, c->home, NULL);
		c->fd_partner = ctl_connect(&o->cfg, c->partner, &c->partner_node);
		if (c->fd_home < 0 || c->fd_partner < 0) {
			rc = c->fd_home < 0 ? c->fd_home : c->fd_partner;
			fprintf(stderr, "bench_ctl: client %u: connect to host %u: %s\n", i,
				c->fd_home < 0 ? c->home : c->partner, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static void teardown(struct ctl_client *cl, unsigned nc, struct ctl_target *tg, unsigned nh)
{
	for (unsigned i = 0; i < nc; i++) {
		if (cl[i].fd_partner >= 0)
			close(cl[i].fd_partner);
		if (cl[i].fd_home >= 0)
			close(cl[i].fd_home);
		free(cl[i].calls.r);
		free(cl[i].ops.r);
		free(cl[i].buf);
	}
	for (unsigned i = 0; i < nh; i++)
		ctl_target_close(&tg[i]);
}

/* Run every phase that is on; the clients' threads are started and joined here. */
static int run_phases(struct opts *o, struct ctl_client *cl, unsigned nh, bool *failed)
{
	pthread_t *th = calloc(o->clients, sizeof(*th));
	unsigned started = 0, errs_before = 0;
	bool first = true;
	char err[200] = "";
	int rc = 0;

	if (!th)
		return -ENOMEM;
	pthread_barrier_init(&g.start, NULL, o->clients + 1);
	pthread_barrier_init(&g.done, NULL, o->clients + 1);
	for (; started < o->clients; started++) {
		rc = -pthread_create(&th[started], NULL, client_main, &cl[started]);
		if (rc) {
			fprintf(stderr, "bench_ctl: starting client %u: %s\n", started, strerror(-rc));
			/* A barrier cannot shrink: the started ones wait for good. */
			exit(3);
		}
	}
	if (o->json)
		printf("{\"bench\":\"control-plane\",\"hosts\":%u,\"clients\":%u,\"duration_s\":%.3f,"
		       "\"warmup_s\":%.3f,\"route_cached\":%s,\"seg_size\":%" PRIu64 ","
		       "\"primed\":%s,\"prime_worst_s\":%.4f,",
		       nh, o->clients, o->duration, o->warmup, o->cfg.route_cached ? "true" : "false",
		       o->cfg.seg_size, o->no_prime ? "false" : "true", o->prime_s);
	if (o->json) {
		/* Where each client lives: [home, partner] host ids. */
		printf("\"placement\":[");
		for (unsigned i = 0; i < o->clients; i++)
			printf("%s[%u,%u]", i ? "," : "", cl[i].home, cl[i].partner);
		printf("],\"phases\":[");
	}
	for (int p = 0; p < NPHASES && !rc; p++) {
		unsigned errs = 0;
		uint64_t a, b;

		if (!o->phase_on[p])
			continue;
		for (unsigned i = 0; i < o->clients; i++)
			cl[i].ops.n = cl[i].calls.n = 0;
		g.phase = p;
		atomic_store(&g.stop, 0);
		pthread_barrier_wait(&g.start);
		sleep_s(o->warmup);
		a = ctl_now_ns();
		sleep_s(o->duration);
		b = ctl_now_ns();
		atomic_store(&g.stop, 1);
		pthread_barrier_wait(&g.done);
		for (unsigned i = 0; i < o->clients; i++) {
			errs += cl[i].nerr;
			if (!err[0] && cl[i].nerr)
				snprintf(err, sizeof(err), "client %u: %s", i, cl[i].err);
		}
		errs -= errs_before;
		errs_before += errs;
		*failed |= errs > 0;
		rc = report(cl, o->clients, p, a, b, errs, errs ? err : "", o->json, first);
		first = false;
		fflush(stdout);
	}
	if (o->json)
		printf("]}\n");
	g.quit = true;
	pthread_barrier_wait(&g.start);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&g.start);
	pthread_barrier_destroy(&g.done);
	free(th);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { .cfg = { .seg_size = 64 * 1024, .timeout_ms = 10000 },
			  .duration = 1.0, .warmup = 0.25 };
	static uint32_t ids[MAX_HOSTS];
	struct ctl_client *cl = NULL;
	struct ctl_target *tg = NULL;
	bool failed = false;
	unsigned nh = 0;
	int rc;

	for (int k = 0; k < NPHASES; k++)
		o.phase_on[k] = true;
	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	rc = find_hosts(o.cfg.dir, ids, &nh);
	if (rc || nh < 2) {
		fprintf(stderr, "bench_ctl: %s: %s\n", o.cfg.dir,
			rc ? strerror(-rc) : "needs a running cluster of at least 2 hosts");
		return 3;
	}
	cl = calloc(o.clients, sizeof(*cl));
	tg = calloc(nh, sizeof(*tg));
	if (!cl || !tg) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < nh; i++)
		tg[i].fd_owner = tg[i].fd_importer = -1;
	for (unsigned i = 0; i < o.clients; i++)
		cl[i].fd_home = cl[i].fd_partner = -1;
	rc = o.no_prime ? 0 : prime(&o.cfg, ids, nh, &o.prime_s);
	if (!rc)
		rc = setup(&o, ids, nh, cl, tg);
	if (!rc)
		rc = run_phases(&o, cl, nh, &failed);
out:
	if (cl)
		teardown(cl, o.clients, tg, nh);
	free(tg);
	free(cl);
	if (rc) {
		fprintf(stderr, "bench_ctl: set-up failed: %s\n", strerror(-rc));
		return 3;
	}
	if (failed)
		fprintf(stderr, "bench_ctl: some operations failed (see \"error\" in the report)\n");
	return failed ? 1 : 0;
}
