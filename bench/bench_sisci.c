// SPDX-License-Identifier: MIT
/*
 * bench_sisci: SISCI on smartio, remote vs local, in one run.
 *
 * Starts a private default cluster with the smartio CLI (SMARTIO_CLUSTER in a
 * fresh temporary directory), runs as a program of host 1 (node 8) and forks
 * a program of host 0 (node 4). It measures:
 *
 *  (a) store latency: a one-word ping-pong (store + SCIStoreBarrier, the peer
 *      spins until it sees the word and answers), half a round trip; host 0
 *      through a remote map of host 1's segment vs two threads of host 1
 *      through its local map of the same segment vs two threads through
 *      private memory. Load latency: a dependent-load chase over 16 MiB
 *      (random cache-line order) through the same three kinds of memory.
 *  (b) memcpy bandwidth into and out of the remote map, the local map and
 *      private memory, 4 KiB .. 16 MiB.
 *  (c) DMA queue bandwidth: SCIStartDmaTransfer from a local segment of host
 *      1 into (and, SCI_FLAG_DMA_READ, out of) a segment of host 0, 4 KiB ..
 *      16 MiB, vs memcpy between private buffers of the same size.
 *  (d) round trip of a data interrupt (SCITriggerDataInterrupt, 8 bytes,
 *      answered the same way) between the hosts vs a plain interrupt round
 *      trip vs a pipe round trip between the same two processes.
 *
 * Iterations are chosen by time; the whole run takes well under a minute.
 * These are emulation figures: every "host" is a process on this machine and
 * remote memory is the owner's RAM mapped by the CPU. `smartio predict` gives
 * figures for real PCIe fabrics.
 *
 *   bench_sisci [--json]     (SMARTIO_BUILD_DIR: build directory, default ./build)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sisci_api.h"
#include "util/json_out.h"
#include "util/smio_time.h"

#define NODE_HOST0   4
#define NODE_HOST1   8
#define SEG_A_ID     0xbe0          /* host 1: remote maps from host 0 */
#define SEG_B_ID     0xbe1          /* host 0: DMA target */
#define SEG_L_ID     0xbe2          /* host 1: DMA source */
#define INT_DATA     0x3b0          /* host 0's data interrupt (requests) */
#define INT_PLAIN    0x3b1          /* host 0's plain interrupt (requests) */
#define CTL          65536u         /* control page(s) at the start of A */
#define DATA_MAX     (16u << 20)
#define SEG_A_SIZE   (CTL + DATA_MAX)
#define CHASE_BYTES  (16u << 20)
#define LINE         64u
#define WAIT_MS      20000
#define NSIZES       7

/* Control words in A, each on its own cache line (word index). */
#define W_PING       0
#define W_PONG       16
#define W_LPING      32             /* local baseline, host 1 threads */
#define W_LPONG      48

static const size_t sizes[NSIZES] = {
	4096, 16384, 65536, 262144, 1u << 20, 4u << 20, 16u << 20
};

extern char **environ;
static char cli[PATH_MAX], tmpdir[PATH_MAX];
static bool cluster_is_up;

/* ---------- plumbing ---------- */

static void die(const char *what)
{
	fprintf(stderr, "bench_sisci: %s\n", what);
	exit(1);
}

static void ok(const char *what, sci_error_t err)
{
	char b[256];

	if (err == SCI_ERR_OK)
		return;
	snprintf(b, sizeof(b), "[%d] %s: %s (%#x)", (int)getpid(), what,
		 SCIGetErrorString(err), (unsigned int)err);
	die(b);
}

static int run_cli(const char *a1)
{
	char *argv[] = { cli, (char *)"cluster", (char *)a1, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;

	/* The CLI's chatter would spoil --json: send its stdout to stderr. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	if (posix_spawn(&pid, cli, &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cluster_down(void)
{
	if (!cluster_is_up)
		return;
	cluster_is_up = false;
	run_cli("down");
	rmdir(tmpdir);
}

static void put(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		die("pipe write");
}

static void get(int fd, void *p, size_t n)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (poll(&pf, 1, WAIT_MS) != 1)
			die("timed out waiting for the other host");
		r = read(fd, (char *)p + got, n - got);
		if (r <= 0)
			die("the other host went away");
		got += (size_t)r;
	}
}

static bool spin_until(volatile uint32_t *p, uint32_t v)
{
	uint64_t end = smio_now_ns() + (uint64_t)WAIT_MS * 1000000u;

	for (unsigned long n = 1;; n++) {
		if (*p == v)
			return true;
		/* Only two CPUs here: let a descheduled peer run. */
		if (!(n & 1023)) {
			if (smio_now_ns() > end)
				return false;
			sched_yield();
		}
	}
}

/* ---------- the measurements shared by both hosts ---------- */

/*
 * Every figure is the median (ping-pong: the 10th percentile) of many short samples, each timed on its own:
 * two CPUs and another program being scheduled would otherwise decide the
 * result (one preemption while spinning costs milliseconds).
 */
#define MAXS 8192

struct samples {
	unsigned int n;
	double v[MAXS];
};

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static void sample(struct samples *s, double v)
{
	if (s->n < MAXS)
		s->v[s->n++] = v;
}

/* The pct-th percentile of the samples. */
static double pctl(struct samples *s, unsigned int pct)
{
	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(double), cmp_dbl);
	return s->v[s->n * pct / 100];
}

static double median(struct samples *s)
{
	return pctl(s, 50);
}

/* A random cyclic chain of cache lines over bytes at base (offsets, so it
 * works through any mapping of the same memory). */
static void build_chain(volatile uint8_t *base, size_t bytes)
{
	size_t n = bytes / LINE;
	uint32_t *perm = malloc(n * sizeof(*perm));
	uint64_t x = 0x9e3779b97f4a7c15u;

	if (!perm)
		die("out of memory");
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j;
		uint32_t t;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = x % (i + 1);
		t = perm[i], perm[i] = perm[j], perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		*(volatile uint32_t *)(base + (size_t)perm[i] * LINE) =
			perm[(i + 1) % n] * LINE;
	free(perm);
}

/* ns per dependent load, following the chain for about budget_ns. */
static double chase(volatile uint8_t *base, uint64_t budget_ns)
{
	static struct samples s;
	uint32_t off = 0;
	uint64_t t0, t1, end;

	s.n = 0;
	for (int i = 0; i < 100000; i++)          /* warm up (TLB, caches) */
		off = *(volatile uint32_t *)(base + off);
	end = smio_now_ns() + budget_ns;
	do {
		t0 = smio_now_ns();
		for (int i = 0; i < 4096; i++)
			off = *(volatile uint32_t *)(base + off);
		t1 = smio_now_ns();
		sample(&s, (double)(t1 - t0) / 4096);
	} while (t1 < end);
	__asm__ volatile("" : : "r"(off));
	return median(&s);
}

/* MB/s (10^6 bytes/s) of memcpy(dst, src, size), about budget_ns. */
static double copy_bw(void *dst, const void *src, size_t size, uint64_t budget_ns)
{
	static struct samples s;
	uint64_t t0, t1, end;
	unsigned int k = size < 65536 ? 16 : 1;   /* copies per sample */

	s.n = 0;
	memcpy(dst, src, size);                   /* warm up */
	end = smio_now_ns() + budget_ns;
	do {
		t0 = smio_now_ns();
		for (unsigned int i = 0; i < k; i++) {
			memcpy(dst, src, size);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
		}
		t1 = smio_now_ns();
		sample(&s, (double)size * k / ((double)(t1 - t0) / 1e9) / 1e6);
	} while (t1 < end);
	return median(&s);
}

/* Bandwidth into (w) and out of (r) mem for every size; buf is private. */
static void copy_all(void *mem, void *buf, double w[NSIZES], double r[NSIZES])
{
	for (int i = 0; i < NSIZES; i++) {
		w[i] = copy_bw(mem, buf, sizes[i], 40000000);
		r[i] = copy_bw(buf, mem, sizes[i], 40000000);
	}
}

/* Ping side of a ping-pong through words ping/pong: ns per half round trip. */
static double pinger(volatile uint32_t *ping, volatile uint32_t *pong, sci_sequence_t seq,
		     uint64_t budget_ns)
{
	static struct samples s;
	uint64_t end = smio_now_ns() + budget_ns, t0, t1;
	uint32_t i = 0;

	s.n = 0;
	do {
		t0 = smio_now_ns();
		for (int k = 0; k < 32; k++) {
			i++;
			*ping = i;
			SCIStoreBarrier(seq, 0);
			if (!spin_until(pong, i))
				die("no pong");
		}
		t1 = smio_now_ns();
		sample(&s, (double)(t1 - t0) / 32 / 2.0);
	} while (t1 < end);
	*ping = UINT32_MAX;                       /* stop */
	SCIStoreBarrier(seq, 0);
	/* The 10th percentile: a spinning pair on two shared CPUs is descheduled
	 * whenever anything else runs, and then a sample measures the scheduler. */
	return pctl(&s, 10);
}

/* Pong side: echo until the stop word. */
static void ponger(volatile uint32_t *ping, volatile uint32_t *pong)
{
	uint32_t i = 0;

	for (;;) {
		uint64_t end = smio_now_ns() + (uint64_t)WAIT_MS * 1000000u;
		uint32_t v;

		for (unsigned long n = 1; (v = *ping) == i; n++)
			if (!(n & 1023)) {
				if (smio_now_ns() > end)
					die("no ping");
				sched_yield();
			}
		if (v == UINT32_MAX)
			return;
		i = v;
		*pong = v;
		SCIStoreBarrier(NULL, 0);
	}
}

struct pong_arg {
	volatile uint32_t *ping, *pong;
};

static void *pong_thread(void *p)
{
	struct pong_arg *a = p;

	ponger(a->ping, a->pong);
	return NULL;
}

static double local_pingpong(volatile uint32_t *ping, volatile uint32_t *pong)
{
	struct pong_arg a = { ping, pong };
	pthread_t th;
	double ns;

	*ping = *pong = 0;
	if (pthread_create(&th, NULL, pong_thread, &a))
		die("pthread_create");
	ns = pinger(ping, pong, NULL, 300000000);
	pthread_join(th, NULL);
	return ns;
}

/* ---------- host 0 (the forked child) ---------- */

struct remote_res {
	double store_ns, load_ns;
	double w[NSIZES], r[NSIZES];
};

enum { REQ_STOP, REQ_DATA, REQ_PLAIN, REQ_PIPE };

static int host0(int to, int from)
{
	sci_local_data_interrupt_t din;
	sci_remote_data_interrupt_t dout;
	sci_local_interrupt_t pin;
	sci_remote_interrupt_t pout;
	sci_local_segment_t segb;
	sci_remote_segment_t rs;
	sci_sequence_t seq;
	sci_map_t map;
	struct remote_res res;
	volatile uint8_t *a;
	unsigned int intno;
	sci_error_t err;
	sci_desc_t sd;
	uint32_t msg[2];
	void *buf;

	SCITerminate();
	setenv("SMARTIO_HOST", "0", 1);
	SCIInitialize(0, &err);
	ok("host 0: SCIInitialize", err);
	SCIOpen(&sd, 0, &err);
	ok("host 0: SCIOpen", err);

	/* The DMA target and the request interrupts. */
	SCICreateSegment(sd, &segb, SEG_B_ID, DATA_MAX, NULL, NULL, 0, &err);
	ok("host 0: SCICreateSegment", err);
	SCIPrepareSegment(segb, 0, 0, &err);
	ok("host 0: SCIPrepareSegment", err);
	SCISetSegmentAvailable(segb, 0, 0, &err);
	ok("host 0: SCISetSegmentAvailable", err);
	intno = INT_DATA;
	SCICreateDataInterrupt(sd, &din, 0, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	ok("host 0: SCICreateDataInterrupt", err);
	intno = INT_PLAIN;
	SCICreateInterrupt(sd, &pin, 0, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	ok("host 0: SCICreateInterrupt", err);

	/* Host 1's segment, through this host's NTB. */
	SCIConnectSegment(sd, &rs, NODE_HOST1, SEG_A_ID, 0, NULL, NULL, WAIT_MS, 0, &err);
	ok("host 0: SCIConnectSegment", err);
	a = SCIMapRemoteSegment(rs, &map, 0, SEG_A_SIZE, NULL, 0, &err);
	ok("host 0: SCIMapRemoteSegment", err);
	SCICreateMapSequence(map, &seq, 0, &err);
	ok("host 0: SCICreateMapSequence", err);
	put(to, "R", 1);

	/* (a) ping-pong with host 1, which answers in its local map; chase. */
	res.store_ns = pinger((volatile uint32_t *)a + W_PING, (volatile uint32_t *)a + W_PONG,
			      seq, 300000000);
	res.load_ns = chase(a + CTL, 300000000);
	/* (b) */
	buf = aligned_alloc(4096, DATA_MAX);
	if (!buf)
		die("out of memory");
	memset(buf, 0x5a, DATA_MAX);
	copy_all((void *)(a + CTL), buf, res.w, res.r);
	put(to, &res, sizeof(res));

	/* (d) requests from host 1: answer each on its interrupts. */
	get(from, msg, sizeof(msg));              /* host 1's answer interrupt numbers */
	SCIConnectDataInterrupt(sd, &dout, NODE_HOST1, 0, msg[0], WAIT_MS, 0, &err);
	ok("host 0: SCIConnectDataInterrupt", err);
	SCIConnectInterrupt(sd, &pout, NODE_HOST1, 0, msg[1], WAIT_MS, 0, &err);
	ok("host 0: SCIConnectInterrupt", err);
	put(to, "C", 1);
	for (;;) {
		uint32_t req[2];                  /* kind, rounds */

		get(from, req, sizeof(req));
		if (req[0] == REQ_STOP)
			break;
		for (uint32_t i = 0; i < req[1]; i++) {
			uint64_t m[2];
			unsigned int len = sizeof(m);
			char c;

			switch (req[0]) {
			case REQ_DATA:
				SCIWaitForDataInterrupt(din, m, &len, WAIT_MS, 0, &err);
				ok("host 0: SCIWaitForDataInterrupt", err);
				SCITriggerDataInterrupt(dout, m, len, 0, &err);
				ok("host 0: SCITriggerDataInterrupt", err);
				break;
			case REQ_PLAIN:
				SCIWaitForInterrupt(pin, WAIT_MS, 0, &err);
				ok("host 0: SCIWaitForInterrupt", err);
				SCITriggerInterrupt(pout, 0, &err);
				ok("host 0: SCITriggerInterrupt", err);
				break;
			default:
				get(from, &c, 1);
				put(to, &c, 1);
			}
		}
	}

	SCIDisconnectDataInterrupt(dout, 0, &err);
	SCIDisconnectInterrupt(pout, 0, &err);
	SCIRemoveDataInterrupt(din, 0, &err);
	SCIRemoveInterrupt(pin, 0, &err);
	SCIRemoveSequence(seq, 0, &err);
	SCIUnmapSegment(map, 0, &err);
	SCIDisconnectSegment(rs, 0, &err);
	ok("host 0: SCIDisconnectSegment", err);
	/* Host 1 disconnects from B before it stops us. */
	SCISetSegmentUnavailable(segb, 0, 0, &err);
	SCIRemoveSegment(segb, 0, &err);
	ok("host 0: SCIRemoveSegment", err);
	SCIClose(sd, 0, &err);
	SCITerminate();
	free(buf);
	return 0;
}

/* ---------- host 1 (this process) ---------- */

static double dma_bw(sci_dma_queue_t dq, sci_local_segment_t l, sci_remote_segment_t r,
		     size_t size, unsigned int flags, uint64_t budget_ns)
{
	uint64_t t0, t1, end;
	sci_error_t err;

	for (int warm = 1;; warm = 0) {
		SCIStartDmaTransfer(dq, l, r, 0, size, 0, NULL, NULL, flags, &err);
		ok("SCIStartDmaTransfer", err);
		if (SCIWaitForDMAQueue(dq, WAIT_MS, 0, &err) != SCI_DMAQUEUE_DONE)
			ok("SCIWaitForDMAQueue", err ? err : SCI_ERR_TRANSFER_FAILED);
		if (!warm)
			break;
	}
	static struct samples s;

	s.n = 0;
	end = smio_now_ns() + budget_ns;
	do {
		t0 = smio_now_ns();
		SCIStartDmaTransfer(dq, l, r, 0, size, 0, NULL, NULL, flags, &err);
		ok("SCIStartDmaTransfer", err);
		if (SCIWaitForDMAQueue(dq, WAIT_MS, 0, &err) != SCI_DMAQUEUE_DONE)
			ok("SCIWaitForDMAQueue", err ? err : SCI_ERR_TRANSFER_FAILED);
		t1 = smio_now_ns();
		sample(&s, (double)size / ((double)(t1 - t0) / 1e9) / 1e6);
	} while (t1 < end);
	return median(&s);
}

/* Round trips of kind with host 0 for about budget_ns: us each. */
static double round_trips(int to, int from, uint32_t kind, sci_remote_data_interrupt_t dout,
			  sci_local_data_interrupt_t din, sci_remote_interrupt_t pout,
			  sci_local_interrupt_t pin, uint64_t budget_ns)
{
	const uint32_t batch = 32;
	static struct samples s;
	uint64_t n = 0, end = 0, t;
	sci_error_t err;

	s.n = 0;
	for (int warm = 1;; warm = 0) {
		uint32_t req[2] = { kind, batch };

		if (!warm && !end)
			end = smio_now_ns() + budget_ns;
		put(to, req, sizeof(req));
		for (uint32_t i = 0; i < batch; i++) {
			uint64_t m[2] = { n, 0 }, back[2];
			unsigned int len = sizeof(back);
			char c = 'x';
			uint64_t t0 = smio_now_ns();

			switch (kind) {
			case REQ_DATA:
				SCITriggerDataInterrupt(dout, m, sizeof(uint64_t), 0, &err);
				ok("SCITriggerDataInterrupt", err);
				SCIWaitForDataInterrupt(din, back, &len, WAIT_MS, 0, &err);
				ok("SCIWaitForDataInterrupt", err);
				if (len != sizeof(uint64_t) || back[0] != n)
					die("data interrupt: wrong answer");
				break;
			case REQ_PLAIN:
				SCITriggerInterrupt(pout, 0, &err);
				ok("SCITriggerInterrupt", err);
				SCIWaitForInterrupt(pin, WAIT_MS, 0, &err);
				ok("SCIWaitForInterrupt", err);
				break;
			default:
				put(to, &c, 1);
				get(from, &c, 1);
			}
			if (!warm)
				sample(&s, (double)(smio_now_ns() - t0) / 1e3);
			n++;
		}
		t = smio_now_ns();
		if (!warm && t >= end)
			break;
	}
	return median(&s);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* Everything --json reports. */
struct results {
	const struct remote_res *rem;
	double l_store, l_load, p_store, p_load;
	const double *lw, *lr, *pw, *pr, *dw, *dr;
	double rt_data, rt_plain, rt_pipe, seconds;
};

/* Like every other failure here, a failed allocation ends the run. */
static void must(int rc)
{
	if (rc)
		die("JSON output: out of memory");
}

static struct json_object *new_obj(void)
{
	struct json_object *o = json_object_new_object();

	must(!o);
	return o;
}

/* {"remote_map", "local_map", "private"} of one measure. */
static struct json_object *three(double remote, double local, double priv)
{
	struct json_object *o = new_obj();

	must(smio_json_add_double(o, "remote_map", remote, "%.1f"));
	must(smio_json_add_double(o, "local_map", local, "%.1f"));
	must(smio_json_add_double(o, "private", priv, "%.1f"));
	return o;
}

static void print_json(const struct results *r)
{
	struct json_object *root = new_obj(), *mc = json_object_new_array(),
			   *dma = json_object_new_array(), *rt = new_obj();

	must(!mc || !dma);
	for (int i = 0; i < NSIZES; i++) {
		struct json_object *m = new_obj(), *d = new_obj();

		must(smio_json_add_uint(m, "bytes", sizes[i]));
		must(smio_json_add_double(m, "write_remote", r->rem->w[i], "%.0f"));
		must(smio_json_add_double(m, "write_local", r->lw[i], "%.0f"));
		must(smio_json_add_double(m, "write_private", r->pw[i], "%.0f"));
		must(smio_json_add_double(m, "read_remote", r->rem->r[i], "%.0f"));
		must(smio_json_add_double(m, "read_local", r->lr[i], "%.0f"));
		must(smio_json_add_double(m, "read_private", r->pr[i], "%.0f"));
		must(smio_json_push(mc, m));
		must(smio_json_add_uint(d, "bytes", sizes[i]));
		must(smio_json_add_double(d, "dma_write", r->dw[i], "%.0f"));
		must(smio_json_add_double(d, "dma_read", r->dr[i], "%.0f"));
		must(smio_json_add_double(d, "memcpy_private", r->pw[i], "%.0f"));
		must(smio_json_push(dma, d));
	}
	must(smio_json_add_double(rt, "data_interrupt", r->rt_data, "%.2f"));
	must(smio_json_add_double(rt, "interrupt", r->rt_plain, "%.2f"));
	must(smio_json_add_double(rt, "pipe", r->rt_pipe, "%.2f"));
	must(smio_json_add_str(root, "benchmark", "sisci"));
	must(smio_json_add_bool(root, "emulated", true));
	must(smio_json_add(root, "store_latency_ns",
			   three(r->rem->store_ns, r->l_store, r->p_store)));
	must(smio_json_add(root, "load_latency_ns", three(r->rem->load_ns, r->l_load, r->p_load)));
	must(smio_json_add(root, "memcpy_MBps", mc));
	must(smio_json_add(root, "dma_MBps", dma));
	must(smio_json_add(root, "round_trip_us", rt));
	must(smio_json_add_double(root, "seconds", r->seconds, "%.1f"));
	if (smio_json_print(stdout, root))
		die("JSON output: cannot write it");
	json_object_put(root);
}

int main(int argc, char **argv)
{
	const char *b = getenv("SMARTIO_BUILD_DIR");
	char tmpl[] = "/tmp/smartio-bench-sisci-XXXXXX", cdir[PATH_MAX + 8];
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	sci_local_data_interrupt_t din;
	sci_remote_data_interrupt_t dout;
	sci_local_interrupt_t pin;
	sci_remote_interrupt_t pout;
	sci_local_segment_t sega, segl;
	sci_remote_segment_t rsb;
	sci_dma_queue_t dq;
	sci_map_t mapa, mapl;
	struct remote_res rem;
	double l_store, l_load, p_store, p_load;
	double lw[NSIZES], lr[NSIZES], pw[NSIZES], pr[NSIZES], dw[NSIZES], dr[NSIZES];
	double rt_data, rt_plain, rt_pipe;
	volatile uint8_t *a;
	uint8_t *priv, *buf;
	int down[2], up[2], ws;
	uint32_t stop[2] = { REQ_STOP, 0 }, nums[2];
	unsigned int intno;
	uint64_t t_start = smio_now_ns();
	sci_error_t err;
	sci_desc_t sd;
	char c;
	pid_t pid;

	if (argc > 1 && !json) {
		fprintf(stderr, "usage: bench_sisci [--json]\n");
		return 2;
	}
	snprintf(cli, sizeof(cli), "%s/tools/smartio/smartio", b ? b : "./build");
	if (access(cli, X_OK))
		die("no smartio CLI: set SMARTIO_BUILD_DIR to the build directory");
	if (!mkdtemp(tmpl))
		die("mkdtemp");
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	snprintf(cdir, sizeof(cdir), "%s/c", tmpl);
	setenv("SMARTIO_CLUSTER", cdir, 1);
	setenv("SMARTIO_HOST", "1", 1);
	signal(SIGPIPE, SIG_IGN);
	if (run_cli("up"))
		die("smartio cluster up failed");
	cluster_is_up = true;
	atexit(cluster_down);

	SCIInitialize(0, &err);
	ok("SCIInitialize", err);
	SCIOpen(&sd, 0, &err);
	ok("SCIOpen", err);
	SCICreateSegment(sd, &sega, SEG_A_ID, SEG_A_SIZE, NULL, NULL, 0, &err);
	ok("SCICreateSegment", err);
	SCIPrepareSegment(sega, 0, 0, &err);
	ok("SCIPrepareSegment", err);
	a = SCIMapLocalSegment(sega, &mapa, 0, SEG_A_SIZE, NULL, 0, &err);
	ok("SCIMapLocalSegment", err);
	memset((void *)a, 0, CTL);
	build_chain(a + CTL, CHASE_BYTES);
	SCISetSegmentAvailable(sega, 0, 0, &err);
	ok("SCISetSegmentAvailable", err);

	if (pipe2(down, O_CLOEXEC) || pipe2(up, O_CLOEXEC))
		die("pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		cluster_is_up = false;            /* the parent takes it down */
		_exit(host0(up[1], down[0]));
	}
	close(down[0]);
	close(up[1]);
	get(up[0], &c, 1);

	/* (a), (b) remote: host 0 pings, we answer through our local map. */
	ponger((volatile uint32_t *)a + W_PING, (volatile uint32_t *)a + W_PONG);
	get(up[0], &rem, sizeof(rem));

	/* (a), (b) local segment map and private memory, on host 1. */
	priv = aligned_alloc(4096, DATA_MAX);
	buf = aligned_alloc(4096, DATA_MAX);
	if (!priv || !buf)
		die("out of memory");
	memset(priv, 0, DATA_MAX);
	memset(buf, 0x5a, DATA_MAX);
	l_store = local_pingpong((volatile uint32_t *)a + W_LPING,
				 (volatile uint32_t *)a + W_LPONG);
	p_store = local_pingpong((volatile uint32_t *)priv, (volatile uint32_t *)priv + 16);
	build_chain(a + CTL, CHASE_BYTES);
	l_load = chase(a + CTL, 300000000);
	build_chain(priv, CHASE_BYTES);
	p_load = chase(priv, 300000000);
	copy_all((void *)(a + CTL), buf, lw, lr);
	copy_all(priv, buf, pw, pr);

	/* (c) DMA from our local segment into host 0's, and back. */
	SCICreateSegment(sd, &segl, SEG_L_ID, DATA_MAX, NULL, NULL, 0, &err);
	ok("SCICreateSegment L", err);
	SCIPrepareSegment(segl, 0, 0, &err);
	ok("SCIPrepareSegment L", err);
	memset(SCIMapLocalSegment(segl, &mapl, 0, DATA_MAX, NULL, 0, &err), 0x33, DATA_MAX);
	ok("SCIMapLocalSegment L", err);
	SCIConnectSegment(sd, &rsb, NODE_HOST0, SEG_B_ID, 0, NULL, NULL, WAIT_MS, 0, &err);
	ok("SCIConnectSegment B", err);
	SCICreateDMAQueue(sd, &dq, 0, 1, 0, &err);
	ok("SCICreateDMAQueue", err);
	for (int i = 0; i < NSIZES; i++) {
		dw[i] = dma_bw(dq, segl, rsb, sizes[i], 0, 60000000);
		dr[i] = dma_bw(dq, segl, rsb, sizes[i], SCI_FLAG_DMA_READ, 60000000);
	}
	SCIRemoveDMAQueue(dq, 0, &err);
	ok("SCIRemoveDMAQueue", err);
	SCIDisconnectSegment(rsb, 0, &err);
	ok("SCIDisconnectSegment B", err);

	/* (d) interrupts: ours take the answers. */
	SCICreateDataInterrupt(sd, &din, 0, &intno, NULL, NULL, 0, &err);
	ok("SCICreateDataInterrupt", err);
	nums[0] = intno;
	SCICreateInterrupt(sd, &pin, 0, &intno, NULL, NULL, 0, &err);
	ok("SCICreateInterrupt", err);
	nums[1] = intno;
	put(down[1], nums, sizeof(nums));
	get(up[0], &c, 1);
	SCIConnectDataInterrupt(sd, &dout, NODE_HOST0, 0, INT_DATA, WAIT_MS, 0, &err);
	ok("SCIConnectDataInterrupt", err);
	SCIConnectInterrupt(sd, &pout, NODE_HOST0, 0, INT_PLAIN, WAIT_MS, 0, &err);
	ok("SCIConnectInterrupt", err);
	rt_data = round_trips(down[1], up[0], REQ_DATA, dout, din, pout, pin, 500000000);
	rt_plain = round_trips(down[1], up[0], REQ_PLAIN, dout, din, pout, pin, 500000000);
	rt_pipe = round_trips(down[1], up[0], REQ_PIPE, dout, din, pout, pin, 500000000);
	put(down[1], stop, sizeof(stop));
	{
		struct pollfd pf = { .events = POLLIN };
		uint64_t end = smio_now_ns() + (uint64_t)WAIT_MS * 1000000u;

		while (waitpid(pid, &ws, WNOHANG) == 0) {
			if (smio_now_ns() > end) {
				kill(pid, SIGKILL);
				waitpid(pid, &ws, 0);
				break;
			}
			pf.fd = up[0];
			poll(&pf, 1, 10);
		}
	}
	if (!WIFEXITED(ws) || WEXITSTATUS(ws))
		die("host 0 failed");
	SCIDisconnectDataInterrupt(dout, 0, &err);
	SCIDisconnectInterrupt(pout, 0, &err);
	SCIRemoveDataInterrupt(din, 0, &err);
	SCIRemoveInterrupt(pin, 0, &err);
	SCIUnmapSegment(mapl, 0, &err);
	SCIRemoveSegment(segl, 0, &err);
	SCIUnmapSegment(mapa, 0, &err);
	SCISetSegmentUnavailable(sega, 0, 0, &err);
	SCIRemoveSegment(sega, 0, &err);
	ok("SCIRemoveSegment A", err);
	SCIClose(sd, 0, &err);
	SCITerminate();
	cluster_down();

	if (json) {
		const struct results res = { &rem, l_store, l_load, p_store, p_load, lw, lr, pw, pr,
			dw, dr, rt_data, rt_plain, rt_pipe,
			(double)(smio_now_ns() - t_start) / 1e9 };

		print_json(&res);
		return 0;
	}

	printf("SISCI on smartio, emulated (host 0 -> host 1 through host 0's NTB; one machine)\n\n");
	printf("(a) latency, ns             remote map   local map     private  remote/local  remote/private\n");
	printf("store (ping-pong,1/2RTT,p10)%10.1f  %10.1f  %10.1f  %11.2fx  %13.2fx\n",
	       rem.store_ns, l_store, p_store, ratio(rem.store_ns, l_store),
	       ratio(rem.store_ns, p_store));
	printf("load (16 MiB chase)         %10.1f  %10.1f  %10.1f  %11.2fx  %13.2fx\n\n",
	       rem.load_ns, l_load, p_load, ratio(rem.load_ns, l_load),
	       ratio(rem.load_ns, p_load));
	printf("(b) memcpy, MB/s   write: remote     local   private  rem/loc  rem/priv |"
	       "  read: remote     local   private  rem/loc  rem/priv\n");
	for (int i = 0; i < NSIZES; i++)
		printf("%8zu KiB       %13.0f %9.0f %9.0f  %6.2fx  %7.2fx | %13.0f %9.0f %9.0f  "
		       "%6.2fx  %7.2fx\n", sizes[i] >> 10, rem.w[i], lw[i], pw[i],
		       ratio(rem.w[i], lw[i]), ratio(rem.w[i], pw[i]), rem.r[i], lr[i], pr[i],
		       ratio(rem.r[i], lr[i]), ratio(rem.r[i], pr[i]));
	printf("\n(c) DMA queue, MB/s  write (local->remote)  read (remote->local)  "
	       "memcpy private  write/memcpy  read/memcpy\n");
	for (int i = 0; i < NSIZES; i++)
		printf("%8zu KiB         %21.0f  %20.0f  %14.0f  %11.2fx  %10.2fx\n",
		       sizes[i] >> 10, dw[i], dr[i], pw[i], ratio(dw[i], pw[i]),
		       ratio(dr[i], pw[i]));
	printf("\n(d) round trip, us     data interrupt   interrupt    pipe  data/interrupt  "
	       "data/pipe\n");
	printf("host 1 <-> host 0      %14.2f  %10.2f  %6.2f  %13.2fx  %8.2fx\n",
	       rt_data, rt_plain, rt_pipe, ratio(rt_data, rt_plain), ratio(rt_data, rt_pipe));
	printf("\ntotal %.1f s (including cluster up/down)\n", (double)(smio_now_ns() - t_start) / 1e9);
	return 0;
}
