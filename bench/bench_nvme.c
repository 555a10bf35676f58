// SPDX-License-Identifier: MIT
/*
 * The NVMe controller model's 4 KiB random-read IOPS and latency (p50/p99) at
 * queue depth 1 and 32, driven directly on one host: the model runs on its
 * device thread, and this program is the driver (BAR0 registers, SQEs and
 * doorbells, polled CQ without interrupts, no daemon). The reference peer,
 * measured in the same run, is the kernel's psync pread() of a 4 KiB block
 * of a tmpfs file (/dev/shm) at QD1.
 *
 * usage: bench_nvme [--json] [--seconds S]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/models.h"
#include "fabric/route.h"
#include "host/devrun.h"
#include "host/enum.h"
#include "host/pci.h"
#include "smartio/nvme_queue.h"
#include "util/json_out.h"
#include "util/smio_time.h"

#define NS_BYTES     (256ull << 20)
#define BLK          4096u
#define NBLK         (NS_BYTES / BLK)
#define DEPTH        64u          /* I/O queue entries (QD32 needs > 32) */
#define QD_MAX       32u
#define ADEPTH       16u
#define MAX_SAMPLES  (8u << 20)

static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 2G\n"
	"    ports:\n"
	"      - device: {name: nvme0, model: nvme, lendable: false,\n"
	"                 params: {ns_size: 256M, lba: 4096, queues: 4}}\n";

struct q {
	uint16_t qid;
	uint32_t depth, tail, head;
	uint8_t phase;
	struct nvme_sqe *sq;
	struct nvme_cqe *cq;
	uint64_t sq_bus, cq_bus;
};

struct bench {
	struct pci_dev *pdev;
	uint8_t *bar;
	unsigned dstrd;
	struct q aq, ioq;
	uint8_t *data;            /* QD_MAX blocks */
	uint64_t data_bus;
	uint64_t submit_ns[65536];
};

struct result {
	double iops, p50_us, p99_us, mean_us;
	double polls;             /* device poll passes per command */
	uint64_t ops;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: cheap next to a ~µs I/O, and reproducible */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void wr32(struct bench *b, uint64_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(b->bar + off), v, __ATOMIC_RELEASE);
}

static uint32_t rd32(struct bench *b, uint64_t off)
{
	return __atomic_load_n((uint32_t *)(b->bar + off), __ATOMIC_ACQUIRE);
}

static int wait_csts(struct bench *b, uint32_t mask, uint32_t want)
{
	uint64_t deadline = smio_now_ns() + 10000000000ull;

	while ((rd32(b, NVME_REG_CSTS) & mask) != want)
		if (smio_now_ns() > deadline)
			return -ETIMEDOUT;
	return 0;
}

static int q_alloc(struct bench *b, struct q *q, uint16_t qid, uint32_t depth)
{
	q->qid = qid;
	q->depth = depth;
	q->phase = 1;
	q->sq = dma_alloc_coherent(b->pdev, depth * sizeof(*q->sq), &q->sq_bus);
	q->cq = dma_alloc_coherent(b->pdev, depth * sizeof(*q->cq), &q->cq_bus);
	return q->sq && q->cq ? 0 : -ENOMEM;
}

static void submit(struct bench *b, struct q *q, const struct nvme_sqe *s)
{
	q->sq[q->tail] = *s;
	q->tail = nvme_q_next(q->tail, q->depth);
	wr32(b, nvme_sq_tail_db(q->qid, b->dstrd), q->tail);
}

/* Reap one completion if there is one; returns 1 and the entry. */
static int reap(struct bench *b, struct q *q, struct nvme_cqe *out)
{
	struct nvme_cqe *e = &q->cq[q->head];

	if (!nvme_cqe_is_new(e, q->phase))
		return 0;
	*out = *e;
	nvme_q_advance(&q->head, &q->phase, q->depth);
	wr32(b, nvme_cq_head_db(q->qid, b->dstrd), q->head);
	return 1;
}

static int sync_cmd(struct bench *b, struct q *q, struct nvme_sqe *s)
{
	uint64_t deadline = smio_now_ns() + 5000000000ull;
	struct nvme_cqe e;

	submit(b, q, s);
	while (!reap(b, q, &e))
		if (smio_now_ns() > deadline)
			return -ETIMEDOUT;
	return nvme_cqe_st(&e) ? -EIO : 0;
}

static int bring_up(struct bench *b)
{
	struct nvme_sqe s;
	uint64_t cap;
	int rc;

	if (pci_enable_device(b->pdev))
		return -EIO;
	pci_set_master(b->pdev);
	b->bar = pci_iomap(b->pdev, 0);
	if (!b->bar)
		return -ENXIO;
	cap = __atomic_load_n((uint64_t *)(b->bar + NVME_REG_CAP), __ATOMIC_ACQUIRE);
	b->dstrd = (unsigned)NVME_CAP_DSTRD(cap);
	if ((rc = q_alloc(b, &b->aq, 0, ADEPTH)) || (rc = q_alloc(b, &b->ioq, 1, DEPTH)))
		return rc;
	b->data = dma_alloc_coherent(b->pdev, QD_MAX * BLK, &b->data_bus);
	if (!b->data)
		return -ENOMEM;
	wr32(b, NVME_REG_CC, 0);
	if ((rc = wait_csts(b, 1, 0)))
		return rc;
	wr32(b, NVME_REG_AQA, (ADEPTH - 1) << 16 | (ADEPTH - 1));
	__atomic_store_n((uint64_t *)(b->bar + NVME_REG_ASQ), b->aq.sq_bus, __ATOMIC_RELEASE);
	__atomic_store_n((uint64_t *)(b->bar + NVME_REG_ACQ), b->aq.cq_bus, __ATOMIC_RELEASE);
	wr32(b, NVME_REG_CC, 1 | NVME_SQES_LOG2 << NVME_CC_IOSQES_SHIFT |
			     NVME_CQES_LOG2 << NVME_CC_IOCQES_SHIFT);
	if ((rc = wait_csts(b, 3, 1)))
		return rc;
	nvme_sqe_init(&s, nvme_admin_set_features, 1, 0);
	s.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	if ((rc = sync_cmd(b, &b->aq, &s)))
		return rc;
	/* Polled completion queue: no interrupts, as a polling driver (SPDK) runs. */
	nvme_sqe_init(&s, nvme_admin_create_cq, 2, 0);
	s.prp1 = b->ioq.cq_bus;
	s.cdw10 = nvme_cdw10_queue(1, DEPTH);
	s.cdw11 = nvme_cdw11_create_cq(0, false);
	if ((rc = sync_cmd(b, &b->aq, &s)))
		return rc;
	nvme_sqe_init(&s, nvme_admin_create_sq, 3, 0);
	s.prp1 = b->ioq.sq_bus;
	s.cdw10 = nvme_cdw10_queue(1, DEPTH);
	s.cdw11 = nvme_cdw11_create_sq(1, NVME_QPRIO_MEDIUM);
	return sync_cmd(b, &b->aq, &s);
}

static void rw_sqe(struct bench *b, struct nvme_sqe *s, uint8_t op, uint16_t slot,
		   uint64_t lba)
{
	nvme_sqe_init(s, op, slot, 1);
	s->prp1 = b->data_bus + (uint64_t)slot * BLK;
	nvme_rw_set(s, lba, 1);
}

/* Write every block once, so that reads hit data (not sparse holes). */
static int prefill(struct bench *b)
{
	uint64_t next = 0, done = 0, deadline = smio_now_ns() + 120000000000ull;
	unsigned inflight = 0;
	struct nvme_cqe e;

	memset(b->data, 0x5a, QD_MAX * BLK);
	while (done < NBLK) {
		while (inflight < QD_MAX && next < NBLK) {
			struct nvme_sqe s;

			rw_sqe(b, &s, nvme_cmd_write, (uint16_t)(next % QD_MAX), next);
			submit(b, &b->ioq, &s);
			next++;
			inflight++;
		}
		while (reap(b, &b->ioq, &e)) {
			if (nvme_cqe_st(&e))
				return -EIO;
			inflight--;
			done++;
		}
		if (smio_now_ns() > deadline)
			return -ETIMEDOUT;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void summarize(uint64_t *lat, uint64_t n, uint64_t elapsed, struct result *r)
{
	double sum = 0;

	qsort(lat, n, sizeof(*lat), cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		sum += (double)lat[i];
	r->ops = n;
	r->iops = (double)n / ((double)elapsed / 1e9);
	r->p50_us = n ? (double)lat[n / 2] / 1e3 : 0;
	r->p99_us = n ? (double)lat[(n * 99) / 100] / 1e3 : 0;
	r->mean_us = n ? sum / (double)n / 1e3 : 0;
}

/* Random 4 KiB reads at queue depth qd for `secs` seconds. */
static int run_reads(struct bench *b, unsigned qd, double secs, uint64_t *lat, struct result *r)
{
	uint64_t t0 = smio_now_ns(), stop = t0 + (uint64_t)(secs * 1e9), n = 0, hard = stop + 10000000000ull;
	unsigned inflight = 0;
	struct nvme_cqe e;
	bool submitting = true;

	while (submitting || inflight) {
		uint64_t t;

		while (submitting && inflight < qd) {
			struct nvme_sqe s;
			uint16_t slot = (uint16_t)((b->ioq.tail) % QD_MAX);

			rw_sqe(b, &s, nvme_cmd_read, slot, rnd() % NBLK);
			s.cid = (uint16_t)b->ioq.tail;
			b->submit_ns[s.cid] = smio_now_ns();
			submit(b, &b->ioq, &s);
			inflight++;
		}
		/* Spin on the CQ a while before looking at the clock again: a clock
		 * read per empty check would delay seeing the entry by its cost. */
		for (unsigned spin = 0, got = 0; spin < 1024 && !got; spin++) {
			while (reap(b, &b->ioq, &e)) {
				t = smio_now_ns();
				if (nvme_cqe_st(&e))
					return -EIO;
				if (n < MAX_SAMPLES)
					lat[n++] = t - b->submit_ns[e.cid];
				inflight--;
				got++;
			}
		}
		t = smio_now_ns();
		if (t >= stop)
			submitting = false;
		if (t > hard)
			return -ETIMEDOUT;
	}
	summarize(lat, n, smio_now_ns() - t0, r);
	return 0;
}

/* The reference: pread() of random 4 KiB blocks of a tmpfs file, QD1. */
static int run_pread(double secs, uint64_t *lat, struct result *r)
{
	char path[] = "/dev/shm/bench_nvme.XXXXXX";
	static uint8_t buf[BLK] __attribute__((aligned(4096)));
	uint64_t t0, stop, n = 0;
	int fd = mkstemp(path);

	if (fd < 0)
		return -errno;
	unlink(path);
	memset(buf, 0x5a, sizeof(buf));
	for (uint64_t i = 0; i < NBLK; i++)
		if (pwrite(fd, buf, BLK, (off_t)(i * BLK)) != BLK) {
			close(fd);
			return -EIO;
		}
	t0 = smio_now_ns();
	stop = t0 + (uint64_t)(secs * 1e9);
	for (;;) {
		uint64_t a = smio_now_ns(), z;

		if (a >= stop || n >= MAX_SAMPLES)
			break;
		if (pread(fd, buf, BLK, (off_t)((rnd() % NBLK) * BLK)) != BLK) {
			close(fd);
			return -EIO;
		}
		z = smio_now_ns();
		lat[n++] = z - a;
	}
	summarize(lat, n, smio_now_ns() - t0, r);
	close(fd);
	return 0;
}

/* A run's object as key of parent; polls_per_io only for the NVMe runs. */
static int result_json(struct json_object *parent, const char *key, const struct result *r,
		       bool polls)
{
	struct json_object *o = json_object_new_object();

	if (!o || smio_json_add_double(o, "iops", r->iops, "%.0f") ||
	    smio_json_add_double(o, "p50_us", r->p50_us, "%.2f") ||
	    smio_json_add_double(o, "p99_us", r->p99_us, "%.2f") ||
	    smio_json_add_double(o, "mean_us", r->mean_us, "%.2f") ||
	    (polls && smio_json_add_double(o, "polls_per_io", r->polls, "%.1f"))) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_add(parent, key, o);
}

static int print_json(double secs, const struct result *qd1, const struct result *qd32,
		      const struct result *ref)
{
	struct json_object *root = json_object_new_object();
	int rc = -ENOMEM;

	if (root && !smio_json_add_uint(root, "block", BLK) &&
	    !smio_json_add_double(root, "seconds", secs, "%.2f") &&
	    !result_json(root, "nvme_qd1", qd1, true) &&
	    !result_json(root, "nvme_qd32", qd32, true) &&
	    !result_json(root, "pread_tmpfs_qd1", ref, false) &&
	    !smio_json_add_double(root, "ratio_qd1_iops", qd1->iops / ref->iops, "%.3f") &&
	    !smio_json_add_double(root, "ratio_qd32_iops", qd32->iops / ref->iops, "%.3f"))
		rc = smio_json_print(stdout, root);
	if (rc)
		fprintf(stderr, "bench_nvme: JSON output: %s\n", strerror(-rc));
	json_object_put(root);
	return rc;
}

int main(int argc, char **argv)
{
	struct topo *topo = NULL;
	struct fab_cluster *c = NULL;
	struct devrun_set *devs = NULL;
	struct pci_host *ph = NULL;
	struct result qd1, qd32, ref;
	struct bench *b = calloc(1, sizeof(*b));
	uint64_t *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	double secs = 1.0;
	uint64_t polls;
	bool json = false;
	char err[512] = "";
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			secs = atof(argv[++i]);
			if (secs <= 0 || secs > 600)
				secs = 1.0;
		} else {
			fprintf(stderr, "usage: bench_nvme [--json] [--seconds S]\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	if (!b || !lat)
		return 1;
	rc = topo_load_string(yaml, strlen(yaml), "bench.yaml", &topo, err, sizeof(err));
	if (!rc)
		rc = fab_cluster_create(topo, dev_endpoint_init, &c, err, sizeof(err));
	if (!rc)
		rc = host_enumerate(c->hosts[0], err, sizeof(err));
	if (!rc)
		rc = devrun_start(c->hosts[0], NULL, &devs, err, sizeof(err));
	if (!rc)
		rc = pci_host_create(c->hosts[0], &ph, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench_nvme: %s\n", err[0] ? err : strerror(-rc));
		return 1;
	}
	for (unsigned i = 0; i < pci_host_ndevs(ph); i++)
		if (pci_host_dev(ph, i)->class == 0x010802)
			b->pdev = pci_host_dev(ph, i);
	rc = b->pdev ? bring_up(b) : -ENODEV;
	if (!rc)
		rc = prefill(b);
	polls = devrun_polls(devs);
	if (!rc)
		rc = run_reads(b, 1, secs, lat, &qd1);
	qd1.polls = qd1.ops ? (double)(devrun_polls(devs) - polls) / (double)qd1.ops : 0;
	polls = devrun_polls(devs);
	if (!rc)
		rc = run_reads(b, QD_MAX, secs, lat, &qd32);
	qd32.polls = qd32.ops ? (double)(devrun_polls(devs) - polls) / (double)qd32.ops : 0;
	if (!rc)
		rc = run_pread(secs, lat, &ref);
	if (rc) {
		fprintf(stderr, "bench_nvme: %s\n", strerror(-rc));
		return 1;
	}
	if (json) {
		rc = print_json(secs, &qd1, &qd32, &ref);
	} else {
		printf("4 KiB random reads, %.1f s each (nvme: model thread + polled CQ, no daemon)\n",
		       secs);
		printf("%-22s %12s %10s %10s %10s %12s %12s\n", "run", "IOPS", "p50 us", "p99 us",
		       "mean us", "vs pread", "polls/IO");
		printf("%-22s %12.0f %10.2f %10.2f %10.2f %11.2fx %12.1f\n", "nvme QD1", qd1.iops,
		       qd1.p50_us, qd1.p99_us, qd1.mean_us, qd1.iops / ref.iops, qd1.polls);
		printf("%-22s %12.0f %10.2f %10.2f %10.2f %11.2fx %12.1f\n", "nvme QD32", qd32.iops,
		       qd32.p50_us, qd32.p99_us, qd32.mean_us, qd32.iops / ref.iops, qd32.polls);
		printf("%-22s %12.0f %10.2f %10.2f %10.2f %11.2fx\n", "pread tmpfs QD1 (ref)",
		       ref.iops, ref.p50_us, ref.p99_us, ref.mean_us, 1.0);
	}
	pci_host_destroy(ph);
	devrun_stop(devs);
	fab_cluster_destroy(c);
	topo_free(topo);
	free(lat);
	free(b);
	return rc ? 1 : 0;
}
