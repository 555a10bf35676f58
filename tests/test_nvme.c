// SPDX-License-Identifier: MIT
/*
 * NVMe controller conformance suite: drives the model only through its
 * registers (BAR0), host memory (harness RAM) and MSI-X, as a host driver
 * would, with valid and malformed commands, and asserts each status code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dev_harness.h"
#include "smartio/nvme_queue.h"
#include "util/smio_time.h"

/* host RAM layout (bus addresses) */
#define RAM_SIZE        0x4000000ull
#define ASQ_ADDR        0x10000ull
#define ACQ_ADDR        0x20000ull
#define IOSQ_ADDR(q)    (0x100000ull + (uint64_t)(q) * 0x10000)
#define IOCQ_ADDR(q)    (0x800000ull + (uint64_t)(q) * 0x4000)
#define ADMIN_BUF       0x900000ull
#define LIST_ADDR       0xa00000ull
#define DATA_ADDR       0x1000000ull
#define DATA2_ADDR      0x2000000ull
#define CMB_BUS         0xc0000000ull
#define NQ              33
#define PAGE            4096u

struct tq {
	uint8_t *mem;           /* where the host writes/reads entries */
	uint64_t addr;
	uint32_t size, idx;     /* SQ: tail; CQ: head */
	uint8_t phase;
	uint16_t cqid;
};

struct t {
	struct harness h;
	unsigned dstrd;
	uint16_t cid;
	struct tq sq[NQ], cq[NQ];
};

static struct t *T;

/* ---- plumbing ---- */

static int setup_params(struct t **tp, const char *const *kv, unsigned nkv, int expect_rc)
{
	static const uint64_t bars[6] = { 16384, 0, 1ull << 20, 0, 65536, 0 };
	struct t *t = calloc(1, sizeof(*t));
	char err[256] = "";
	int rc;

	assert_non_null(t);
	for (unsigned i = 0; i + 1 < nkv; i += 2) {
		h_param(&t->h, kv[i], kv[i + 1]);
		if (!strcmp(kv[i], "dstrd"))
			t->dstrd = (unsigned)atoi(kv[i + 1]);
	}
	rc = h_setup(&t->h, "nvme", bars, NQ, 4, 0, 0x8000, RAM_SIZE, err, sizeof(err));
	if (expect_rc == 0 && rc)
		fail_msg("create: %d %s", rc, err);
	if (expect_rc && rc != expect_rc)
		fail_msg("create returned %d, expected %d", rc, expect_rc);
	*tp = t;
	return rc;
}

static void teardown_t(struct t *t)
{
	h_teardown(&t->h);
	free(t);
}

static int setup(void **state)
{
	setup_params(&T, NULL, 0, 0);
	*state = T;
	return 0;
}

static int teardown(void **state)
{
	teardown_t(T);
	T = NULL;
	return 0;
}

static uint32_t rd32(struct t *t, uint64_t off) { return dev_reg32(&t->h.d, 0, off); }
static uint64_t rd64(struct t *t, uint64_t off) { return dev_reg64(&t->h.d, 0, off); }
static void wr32(struct t *t, uint64_t off, uint32_t v) { dev_set_reg32(&t->h.d, 0, off, v); }
static void wr64(struct t *t, uint64_t off, uint64_t v) { dev_set_reg64(&t->h.d, 0, off, v); }
static void run(struct t *t) { h_run(&t->h, 1000); }
static int poll1(struct t *t) { return t->h.d.ops->poll(&t->h.d); }
static uint8_t *ram(struct t *t, uint64_t a) { return t->h.ram + a; }

static uint32_t cc_value(unsigned mps, unsigned ams)
{
	return 1u | mps << 7 | ams << 11 | NVME_SQES_LOG2 << 16 | NVME_CQES_LOG2 << 20;
}

static void ctl_enable_ex(struct t *t, unsigned mps, unsigned ams, uint32_t asize)
{
	wr32(t, NVME_REG_AQA, (asize - 1) << 16 | (asize - 1));
	wr64(t, NVME_REG_ASQ, ASQ_ADDR);
	wr64(t, NVME_REG_ACQ, ACQ_ADDR);
	wr32(t, NVME_REG_CC, cc_value(mps, ams));
	run(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS) & 3, 1);
	memset(t->sq, 0, sizeof(t->sq));
	memset(t->cq, 0, sizeof(t->cq));
	t->sq[0] = (struct tq){ ram(t, ASQ_ADDR), ASQ_ADDR, asize, 0, 1, 0 };
	t->cq[0] = (struct tq){ ram(t, ACQ_ADDR), ACQ_ADDR, asize, 0, 1, 0 };
	memset(ram(t, ACQ_ADDR), 0, asize * 16);
}

static void ctl_enable(struct t *t)
{
	ctl_enable_ex(t, 0, 0, 32);
}

static void ctl_disable(struct t *t)
{
	wr32(t, NVME_REG_CC, cc_value(0, 0) & ~1u);
	run(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS) & 1, 0);
}

static void submit(struct t *t, uint16_t qid, struct nvme_sqe *s)
{
	struct tq *q = &t->sq[qid];

	if (!s->cid)
		s->cid = ++t->cid ? t->cid : ++t->cid;
	memcpy(q->mem + (uint64_t)q->idx * 64, s, 64);
	q->idx = nvme_q_next(q->idx, q->size);
}

static void ring(struct t *t, uint16_t qid)
{
	wr32(t, nvme_sq_tail_db(qid, t->dstrd), t->sq[qid].idx);
}

static bool reap(struct t *t, uint16_t cqid, struct nvme_cqe *out)
{
	struct tq *q = &t->cq[cqid];
	struct nvme_cqe *e = (struct nvme_cqe *)(q->mem + (uint64_t)q->idx * 16);

	if (!nvme_cqe_is_new(e, q->phase))
		return false;
	*out = *e;
	nvme_q_advance(&q->idx, &q->phase, q->size);
	wr32(t, nvme_cq_head_db(cqid, t->dstrd), q->idx);
	return true;
}

static struct nvme_cqe exec(struct t *t, uint16_t qid, struct nvme_sqe *s)
{
	struct nvme_cqe e;

	submit(t, qid, s);
	ring(t, qid);
	run(t);
	if (!reap(t, t->sq[qid].cqid, &e))
		fail_msg("no completion for opcode 0x%x on SQ %u", s->opcode, qid);
	assert_int_equal(e.cid, s->cid);
	assert_int_equal(e.sq_id, qid);
	return e;
}

#define assert_st(e, sct_, sc_) do {                                            \
		struct nvme_cqe e_ = (e);                                       \
		if (nvme_cqe_sct(&e_) != (sct_) || nvme_cqe_sc(&e_) != (sc_))   \
			fail_msg("status sct %u sc 0x%x, expected sct %u sc 0x%x", \
				 nvme_cqe_sct(&e_), nvme_cqe_sc(&e_),           \
				 (unsigned)(sct_), (unsigned)(sc_));            \
	} while (0)
#define assert_ok(e)    assert_st(e, 0, 0)
#define GEN             NVME_SCT_GENERIC
#define CMD             NVME_SCT_CMD_SPECIFIC

static struct nvme_cqe admin(struct t *t, uint8_t opc, uint32_t nsid, uint32_t cdw10,
			     uint32_t cdw11, uint64_t prp1)
{
	struct nvme_sqe s;

	nvme_sqe_init(&s, opc, 0, nsid);
	s.cdw10 = cdw10;
	s.cdw11 = cdw11;
	s.prp1 = prp1;
	return exec(t, 0, &s);
}

static struct nvme_cqe create_cq_ex(struct t *t, uint16_t qid, uint32_t size, bool ien,
				    uint16_t iv, uint64_t addr)
{
	struct nvme_cqe e = admin(t, nvme_admin_create_cq, 0, nvme_cdw10_queue(qid, size),
				  nvme_cdw11_create_cq(iv, ien), addr);

	if (!nvme_cqe_st(&e) && qid < NQ) {
		t->cq[qid] = (struct tq){ ram(t, addr), addr, size, 0, 1, 0 };
		memset(ram(t, addr), 0, size * 16);
	}
	return e;
}

static struct nvme_cqe create_sq_ex(struct t *t, uint16_t qid, uint32_t size, uint16_t cqid,
				    enum nvme_qprio prio, uint64_t addr, uint8_t *mem)
{
	struct nvme_cqe e = admin(t, nvme_admin_create_sq, 0, nvme_cdw10_queue(qid, size),
				  nvme_cdw11_create_sq(cqid, prio), addr);

	if (!nvme_cqe_st(&e) && qid < NQ)
		t->sq[qid] = (struct tq){ mem ? mem : ram(t, addr), addr, size, 0, 1, cqid };
	return e;
}

/* An I/O queue pair qid/qid with interrupts on vector qid. */
static void qpair(struct t *t, uint16_t qid, uint32_t size)
{
	assert_ok(create_cq_ex(t, qid, size, true, qid, IOCQ_ADDR(qid)));
	assert_ok(create_sq_ex(t, qid, size, qid, NVME_QPRIO_MEDIUM, IOSQ_ADDR(qid), NULL));
}

/* PRPs for a contiguous buffer at addr (lists at LIST_ADDR, chained when needed). */
static void prps(struct t *t, uint64_t addr, uint32_t len, uint64_t *prp1, uint64_t *prp2,
		 uint32_t page)
{
	uint64_t n = nvme_prp_rest_entries(addr, len, page), next;
	uint64_t *list = (uint64_t *)ram(t, LIST_ADDR);
	uint64_t per = page / 8, slot = 0;

	*prp1 = addr;
	*prp2 = 0;
	next = (addr & ~(uint64_t)(page - 1)) + page;
	if (n == 1) {
		*prp2 = next;
	} else if (n > 1) {
		*prp2 = LIST_ADDR;
		for (uint64_t i = 0; i < n; i++, slot++) {
			if (slot % per == per - 1 && n - i > 1) {
				list[slot] = LIST_ADDR + (slot + 1) * 8;   /* chain to the next page */
				slot++;
			}
			list[slot] = next + i * page;
		}
	}
}

static struct nvme_cqe rw_ex(struct t *t, uint16_t qid, uint8_t opc, uint32_t nsid,
			     uint64_t slba, uint32_t nblocks, uint64_t prp1, uint64_t prp2)
{
	struct nvme_sqe s;

	nvme_sqe_init(&s, opc, 0, nsid);
	nvme_rw_set(&s, slba, nblocks);
	s.prp1 = prp1;
	s.prp2 = prp2;
	return exec(t, qid, &s);
}

static struct nvme_cqe rw(struct t *t, uint16_t qid, uint8_t opc, uint64_t slba,
			  uint32_t nblocks, uint64_t addr, unsigned lba_shift)
{
	uint64_t p1, p2;

	prps(t, addr, nblocks << lba_shift, &p1, &p2, PAGE);
	return rw_ex(t, qid, opc, 1, slba, nblocks, p1, p2);
}

static void fill(struct t *t, uint64_t addr, size_t len, uint32_t seed)
{
	uint32_t *p = (uint32_t *)ram(t, addr);

	for (size_t i = 0; i < len / 4; i++)
		p[i] = seed * 2654435761u + (uint32_t)i;
}

/* ---- registers, enable, disable, shutdown ---- */

static void test_reset_values(void **state)
{
	struct t *t = *state;
	uint64_t cap = rd64(t, NVME_REG_CAP);

	assert_int_equal(NVME_CAP_MQES(cap), 1023);
	assert_int_equal(NVME_CAP_CQR(cap), 1);
	assert_int_equal(NVME_CAP_AMS(cap), NVME_CAP_AMS_WRR);
	assert_int_equal(NVME_CAP_TO(cap), 15);
	assert_int_equal(NVME_CAP_DSTRD(cap), 0);
	assert_int_equal(NVME_CAP_NSSRC(cap), 0);
	assert_int_equal(NVME_CAP_CSS(cap), NVME_CAP_CSS_NVM);
	assert_int_equal(NVME_CAP_MPSMIN(cap), 0);
	assert_int_equal(NVME_CAP_MPSMAX(cap), 4);
	assert_int_equal(rd32(t, NVME_REG_VS), 0x00010400);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 0);
	assert_int_equal(rd32(t, NVME_REG_CMBLOC), 0);
	assert_int_equal(rd32(t, NVME_REG_CMBSZ), 0);
}

static void test_ro_registers_restored(void **state)
{
	struct t *t = *state;
	uint64_t cap = rd64(t, NVME_REG_CAP);

	wr64(t, NVME_REG_CAP, 0xdeadbeefcafef00dull);
	wr32(t, NVME_REG_VS, 0x12345678);
	wr32(t, NVME_REG_CSTS, 0xffffffff);
	wr32(t, NVME_REG_CMBSZ, 0xffffffff);
	wr32(t, NVME_REG_CMBLOC, 0xffffffff);
	wr32(t, NVME_REG_NSSR, 0x4e564d65);     /* "NVMe": NSSRS = 0, so ignored */
	poll1(t);
	assert_int_equal(rd64(t, NVME_REG_CAP), cap);
	assert_int_equal(rd32(t, NVME_REG_VS), 0x00010400);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 0);
	assert_int_equal(rd32(t, NVME_REG_CMBSZ), 0);
	assert_int_equal(rd32(t, NVME_REG_CMBLOC), 0);
	assert_int_equal(rd32(t, NVME_REG_NSSR), 0);
	/* also while enabled: CSTS.RDY stays */
	ctl_enable(t);
	wr32(t, NVME_REG_CSTS, 0);
	poll1(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 1);
	/* INTMS/INTMC: set and clear mask bits, both read the mask */
	wr32(t, NVME_REG_INTMS, 0x5);
	poll1(t);
	assert_int_equal(rd32(t, NVME_REG_INTMS), 0x5);
	assert_int_equal(rd32(t, NVME_REG_INTMC), 0x5);
	wr32(t, NVME_REG_INTMC, 0x1);
	poll1(t);
	assert_int_equal(rd32(t, NVME_REG_INTMS), 0x4);
	assert_int_equal(rd32(t, NVME_REG_INTMC), 0x4);
}

static void test_enable_disable(void **state)
{
	struct t *t = *state;

	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
	qpair(t, 1, 16);
	ctl_disable(t);
	/* after reset the I/O queues are gone: re-enable and use queue id 1 again */
	ctl_enable(t);
	assert_st(admin(t, nvme_admin_delete_sq, 0, 1, 0, 0), CMD, NVME_SC_QID_INVALID);
	qpair(t, 1, 16);
	/* repeated enable with other page size */
	ctl_disable(t);
	ctl_enable_ex(t, 1, 0, 2);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
}

static void test_enable_cfs(void **state)
{
	struct t *t = *state;
	const struct {
		uint32_t aqa, cc;
		uint64_t asq, acq;
	} bad[] = {
		{ 31 << 16 | 31, cc_value(0, 0), 0, ACQ_ADDR },                 /* ASQ zero */
		{ 31 << 16 | 31, cc_value(0, 0), ASQ_ADDR, 0 },                 /* ACQ zero */
		{ 31 << 16 | 31, cc_value(0, 0), ASQ_ADDR + 64, ACQ_ADDR },     /* misaligned */
		{ 31 << 16 | 31, cc_value(0, 0), ASQ_ADDR, ACQ_ADDR + 0x800 },
		{ 31 << 16 | 31, cc_value(1, 0), ASQ_ADDR + 0x1000, ACQ_ADDR },/* 8K pages */
		{ 31 << 16 | 31, cc_value(5, 0), ASQ_ADDR, ACQ_ADDR },          /* MPS > MPSMAX */
		{ 31 << 16 | 31, cc_value(0, 2), ASQ_ADDR, ACQ_ADDR },          /* AMS reserved */
		{ 31 << 16 | 31, cc_value(0, 7), ASQ_ADDR, ACQ_ADDR },          /* AMS vendor */
		{ 31 << 16 | 31, cc_value(0, 0) | 1 << 4, ASQ_ADDR, ACQ_ADDR }, /* CSS */
		{ 31 << 16 | 31, (cc_value(0, 0) & ~(0xfu << 16)) | 7 << 16, ASQ_ADDR, ACQ_ADDR },
		{ 31 << 16 | 31, (cc_value(0, 0) & ~(0xfu << 20)) | 5 << 20, ASQ_ADDR, ACQ_ADDR },
		{ 31 << 16 | 0, cc_value(0, 0), ASQ_ADDR, ACQ_ADDR },           /* ASQS 1 entry */
		{ 0 << 16 | 31, cc_value(0, 0), ASQ_ADDR, ACQ_ADDR },           /* ACQS 1 entry */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wr32(t, NVME_REG_AQA, bad[i].aqa);
		wr64(t, NVME_REG_ASQ, bad[i].asq);
		wr64(t, NVME_REG_ACQ, bad[i].acq);
		wr32(t, NVME_REG_CC, bad[i].cc);
		run(t);
		if ((rd32(t, NVME_REG_CSTS) & 3) != 2)
			fail_msg("case %zu: CSTS 0x%x, expected CFS without RDY", i,
				 rd32(t, NVME_REG_CSTS));
		/* reset clears CFS */
		wr32(t, NVME_REG_CC, 0);
		run(t);
		assert_int_equal(rd32(t, NVME_REG_CSTS), 0);
	}
	ctl_enable(t);
}

/*
 * Queue memory that does not answer is that queue's problem, never the
 * controller's: no CSTS.CFS (src/devices/nvme/ctrl.c, "Fault isolation").
 * An admin SQ where nothing decodes: nothing is fetched, the controller
 * stays ready and can be reset as usual.
 */
static void test_unreachable_admin_queue(void **state)
{
	struct t *t = *state;

	wr32(t, NVME_REG_AQA, 31 << 16 | 31);
	wr64(t, NVME_REG_ASQ, 0x100000000ull);
	wr64(t, NVME_REG_ACQ, ACQ_ADDR);
	wr32(t, NVME_REG_CC, cc_value(0, 0));
	run(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 1);
	wr32(t, nvme_sq_tail_db(0, 0), 1);
	run(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 1);
	assert_true(t->h.dma_faults > 0);
	ctl_disable(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 0);
	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
}

static struct nvme_cqe getlog(struct t *t, uint8_t lid, uint32_t nsid, uint32_t len,
			      uint64_t off, bool rae);

/* Submit a 4 KiB write of seed's pattern at slba on qid without waiting. */
static uint16_t submit_write(struct t *t, uint16_t qid, uint64_t slba, uint64_t addr, uint32_t seed)
{
	struct nvme_sqe s;

	fill(t, addr, 4096, seed);
	nvme_sqe_init(&s, nvme_cmd_write, 0, 1);
	nvme_rw_set(&s, slba, 8);
	s.prp1 = addr;
	submit(t, qid, &s);
	ring(t, qid);
	return s.cid;
}

/* One verified 4 KiB round trip on qid. */
static void verify_on(struct t *t, uint16_t qid, uint64_t slba, uint32_t seed)
{
	fill(t, DATA_ADDR, 4096, seed);
	assert_ok(rw(t, qid, nvme_cmd_write, slba, 8, DATA_ADDR, 9));
	memset(ram(t, DATA2_ADDR), 0, 4096);
	assert_ok(rw(t, qid, nvme_cmd_read, slba, 8, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 4096);
}

/*
 * A link flap as the controller sees it, on one queue at a time: the CQ of
 * pair 2 stops answering (its completion is lost, the tail moves on, later
 * ones land), then the SQ of pair 3 (its entry stays unfetched, retried with
 * a back-off, and runs once the memory answers again). Pair 1 verifies data
 * all along; CSTS.CFS stays clear; the error log names both.
 */
static void test_queue_dma_faults(void **state)
{
	struct t *t = *state;
	struct nvme_error_log_page *el = (struct nvme_error_log_page *)ram(t, ADMIN_BUF);
	struct nvme_cqe *slot, e;
	uint64_t faults, end;
	uint16_t lost, cid;

	ctl_enable(t);
	for (uint16_t q = 1; q <= 3; q++)
		qpair(t, q, 16);

	/* CQ 2 unreachable: the completion is lost, nothing else is */
	t->h.down_lo = IOCQ_ADDR(2);
	t->h.down_hi = IOCQ_ADDR(2) + 0x4000;
	lost = submit_write(t, 2, 100, DATA_ADDR + 0x10000, 7);
	run(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 1);
	assert_false(reap(t, 2, &e));
	verify_on(t, 1, 0, 1);
	/* back: the next completion lands in the next slot (the lost one stays old) */
	t->h.down_lo = t->h.down_hi = 0;
	cid = submit_write(t, 2, 108, DATA_ADDR + 0x20000, 8);
	run(t);
	assert_false(reap(t, 2, &e));
	slot = (struct nvme_cqe *)ram(t, IOCQ_ADDR(2) + 16);
	assert_true(nvme_cqe_is_new(slot, 1));
	assert_int_equal(slot->cid, cid);
	assert_int_equal(nvme_cqe_st(slot), 0);
	/* the error log has the lost completion's command */
	assert_ok(getlog(t, NVME_LOG_LID_ERROR, 0, 4096, 0, false));
	assert_int_equal(el[0].sqid, 2);
	assert_int_equal(el[0].cmdid, lost);
	assert_int_equal(el[0].status_field >> 1, NVME_SC_DATA_XFER_ERROR);

	/* SQ 3 unreachable: not fetched, not completed, not retried every pass */
	t->h.down_lo = IOSQ_ADDR(3);
	t->h.down_hi = IOSQ_ADDR(3) + 0x10000;
	faults = t->h.dma_faults;
	cid = submit_write(t, 3, 200, DATA_ADDR + 0x30000, 9);
	for (int i = 0; i < 50; i++)
		poll1(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 1);
	assert_false(reap(t, 3, &e));
	assert_true(t->h.dma_faults > faults);
	assert_true(t->h.dma_faults - faults <= 12);    /* backed off, not 50 attempts */
	verify_on(t, 1, 16, 2);
	assert_ok(getlog(t, NVME_LOG_LID_ERROR, 0, 4096, 0, false));
	assert_int_equal(el[0].sqid, 3);
	assert_int_equal(el[0].cmdid, 0xffff);          /* no command could be identified */
	assert_int_equal(el[0].status_field >> 1, NVME_SC_DATA_XFER_ERROR);
	/* back: the entry is fetched on a later pass (bounded wait) and runs once */
	t->h.down_lo = t->h.down_hi = 0;
	end = smio_now_ms() + 2000;
	while (!reap(t, 3, &e) && smio_now_ms() < end)
		poll1(t);
	assert_int_equal(e.cid, cid);
	assert_ok(e);
	memset(ram(t, DATA2_ADDR), 0, 4096);
	assert_ok(rw(t, 3, nvme_cmd_read, 200, 8, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA_ADDR + 0x30000), ram(t, DATA2_ADDR), 4096);
	assert_false(reap(t, 3, &e));                   /* executed once */
	verify_on(t, 1, 32, 3);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 1);
}

static void test_shutdown(void **state)
{
	struct t *t = *state;
	struct nvme_sqe s;
	struct nvme_cqe e;

	ctl_enable(t);
	wr32(t, NVME_REG_CC, cc_value(0, 0) | NVME_CC_SHN_NORMAL << 14);
	run(t);
	assert_int_equal(NVME_CSTS_SHST(rd32(t, NVME_REG_CSTS)), NVME_CSTS_SHST_CMPLT);
	assert_int_equal(rd32(t, NVME_REG_CSTS) & 1, 1);
	/* no more command processing after shutdown */
	nvme_sqe_init(&s, nvme_admin_identify, 0, 0);
	s.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	s.prp1 = ADMIN_BUF;
	submit(t, 0, &s);
	ring(t, 0);
	run(t);
	assert_false(reap(t, 0, &e));
	/* disable + enable brings it back, SHST cleared */
	wr32(t, NVME_REG_CC, 0);
	run(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 0);
	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
	/* abrupt shutdown too */
	wr32(t, NVME_REG_CC, cc_value(0, 0) | NVME_CC_SHN_ABRUPT << 14);
	run(t);
	assert_int_equal(NVME_CSTS_SHST(rd32(t, NVME_REG_CSTS)), NVME_CSTS_SHST_CMPLT);
}

static void test_create_params(void **state)
{
	static const char *const dstrd_big[] = { "queues", "1024", "dstrd", "1" };
	static const char *const ok1024[] = { "queues", "1024" };
	static const char *const badlba[] = { "lba", "1000" };
	static const char *const badns[] = { "namespaces", "0" };
	static const char *const badq[] = { "queues", "0" };
	static const char *const badsize[] = { "ns_size", "1000" };
	static const char *const badserial[] = { "serial", "012345678901234567890" };
	static const char *const cmbbig[] = { "cmb", "4M" };
	struct t *t;

	assert_int_equal(setup_params(&t, dstrd_big, 4, -EINVAL), -EINVAL);
	teardown_t(t);
	setup_params(&t, ok1024, 2, 0);
	assert_int_equal(NVME_CAP_DSTRD(dev_reg64(&t->h.d, 0, 0)), 0);
	teardown_t(t);
	assert_int_equal(setup_params(&t, badlba, 2, -EINVAL), -EINVAL);
	teardown_t(t);
	assert_int_equal(setup_params(&t, badns, 2, -EINVAL), -EINVAL);
	teardown_t(t);
	assert_int_equal(setup_params(&t, badq, 2, -EINVAL), -EINVAL);
	teardown_t(t);
	assert_int_equal(setup_params(&t, badsize, 2, -EINVAL), -EINVAL);
	teardown_t(t);
	assert_int_equal(setup_params(&t, badserial, 2, -EINVAL), -EINVAL);
	teardown_t(t);
	assert_int_equal(setup_params(&t, cmbbig, 2, -EINVAL), -EINVAL);   /* BAR2 is 1M */
	teardown_t(t);
	(void)state;
}

static void test_dstrd(void **state)
{
	static const char *const kv[] = { "dstrd", "3", "queues", "4", "mqes", "63" };
	struct t *t;

	setup_params(&t, kv, 6, 0);
	assert_int_equal(NVME_CAP_DSTRD(dev_reg64(&t->h.d, 0, 0)), 3);
	assert_int_equal(NVME_CAP_MQES(dev_reg64(&t->h.d, 0, 0)), 63);
	ctl_enable(t);
	qpair(t, 4, 64);
	fill(t, DATA_ADDR, 4096, 7);
	assert_ok(rw(t, 4, nvme_cmd_write, 0, 8, DATA_ADDR, 9));
	assert_ok(rw(t, 4, nvme_cmd_read, 0, 8, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 4096);
	assert_st(create_cq_ex(t, 3, 65, true, 3, IOCQ_ADDR(3)), CMD, NVME_SC_QUEUE_SIZE);
	teardown_t(t);
	(void)state;
}

/* ---- Identify ---- */

static void test_identify_ctrl(void **state)
{
	static const char *const kv[] = { "serial", "SN-1234", "namespaces", "3",
					  "ns_size", "64M", "queues", "8" };
	struct nvme_id_ctrl *id;
	struct t *t;

	setup_params(&t, kv, 8, 0);
	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
	id = (struct nvme_id_ctrl *)ram(t, ADMIN_BUF);
	assert_int_equal(id->vid, 0x534d);
	assert_int_equal(id->ssvid, 0x534d);
	assert_memory_equal(id->sn, "SN-1234             ", 20);
	assert_memory_equal(id->mn, "smartio emulated NVMe                   ", 40);
	assert_memory_equal(id->fr, "0.1     ", 8);
	assert_int_equal(id->mdts, 5);
	assert_int_equal(id->ver, 0x00010400);
	assert_int_equal(id->sqes, 0x66);
	assert_int_equal(id->cqes, 0x44);
	assert_int_equal(id->nn, 3);
	assert_int_equal(id->aerl, 3);
	assert_int_equal(id->acl, 3);
	assert_int_equal(id->elpe, 63);
	assert_int_equal(id->oncs, NVME_CTRL_ONCS_DSM | NVME_CTRL_ONCS_WRITE_ZEROES);
	assert_int_equal(id->vwc & 1, 1);
	assert_int_equal(id->sgls, 0);
	assert_int_equal(id->cntrltype, 1);
	assert_int_equal(id->tnvmcap[3], 0x0c);     /* 3 x 64 MiB = 0x0c000000 */
	assert_int_equal(id->psd[0].mp, 1800);
	/* PRP1 + PRP2 for the 4 KiB data at an offset */
	{
		struct nvme_sqe s;

		nvme_sqe_init(&s, nvme_admin_identify, 0, 0);
		s.cdw10 = NVME_IDENTIFY_CNS_CTRL;
		s.prp1 = ADMIN_BUF + 0x10000 + 0x800;
		s.prp2 = ADMIN_BUF + 0x11000;
		assert_ok(exec(t, 0, &s));
		assert_memory_equal(ram(t, ADMIN_BUF + 0x10800), id, 4096);
	}
	/* default serial is derived from the device name */
	teardown_t(t);
	setup_params(&t, NULL, 0, 0);
	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
	id = (struct nvme_id_ctrl *)ram(t, ADMIN_BUF);
	assert_memory_equal(id->sn, "SMARTIO-nvme0       ", 20);
	assert_int_equal(id->nn, 1);
	teardown_t(t);
	(void)state;
}

static void test_identify_ns(void **state)
{
	static const char *const kv[] = { "lba", "4096", "ns_size", "256M", "namespaces", "2" };
	struct nvme_id_ns *ns;
	struct t *t;

	setup_params(&t, kv, 6, 0);
	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 2, NVME_IDENTIFY_CNS_NS, 0, ADMIN_BUF));
	ns = (struct nvme_id_ns *)ram(t, ADMIN_BUF);
	assert_int_equal(ns->nsze, 65536);
	assert_int_equal(ns->ncap, 65536);
	assert_int_equal(ns->nlbaf, 0);
	assert_int_equal(ns->flbas, 0);
	assert_int_equal(ns->lbaf[0].ds, 12);
	assert_int_equal(ns->lbaf[0].ms, 0);
	assert_int_equal(ns->dlfeat & 7, 1);
	assert_st(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_NS, 0, ADMIN_BUF), GEN,
		  NVME_SC_INVALID_NS);
	assert_st(admin(t, nvme_admin_identify, 3, NVME_IDENTIFY_CNS_NS, 0, ADMIN_BUF), GEN,
		  NVME_SC_INVALID_NS);
	assert_st(admin(t, nvme_admin_identify, 0xffffffff, NVME_IDENTIFY_CNS_NS, 0, ADMIN_BUF),
		  GEN, NVME_SC_INVALID_NS);
	/* 512-byte default */
	teardown_t(t);
	setup_params(&t, NULL, 0, 0);
	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 1, NVME_IDENTIFY_CNS_NS, 0, ADMIN_BUF));
	ns = (struct nvme_id_ns *)ram(t, ADMIN_BUF);
	assert_int_equal(ns->nsze, (1ull << 30) / 512);
	assert_int_equal(ns->lbaf[0].ds, 9);
	teardown_t(t);
	(void)state;
}

static void test_identify_list_and_descriptors(void **state)
{
	static const char *const kv[] = { "namespaces", "3", "ns_size", "1M" };
	uint32_t *list;
	uint8_t eui[8], nguid[16], *d;
	struct t *t;

	setup_params(&t, kv, 4, 0);
	ctl_enable(t);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, ADMIN_BUF));
	list = (uint32_t *)ram(t, ADMIN_BUF);
	assert_int_equal(list[0], 1);
	assert_int_equal(list[1], 2);
	assert_int_equal(list[2], 3);
	assert_int_equal(list[3], 0);
	assert_ok(admin(t, nvme_admin_identify, 2, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0, ADMIN_BUF));
	assert_int_equal(list[0], 3);
	assert_int_equal(list[1], 0);
	assert_st(admin(t, nvme_admin_identify, 0xfffffffe, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, 0,
			ADMIN_BUF), GEN, NVME_SC_INVALID_NS);
	/* descriptors repeat identify-ns EUI64/NGUID and add a UUID */
	assert_ok(admin(t, nvme_admin_identify, 2, NVME_IDENTIFY_CNS_NS, 0, ADMIN_BUF));
	memcpy(eui, ((struct nvme_id_ns *)ram(t, ADMIN_BUF))->eui64, 8);
	memcpy(nguid, ((struct nvme_id_ns *)ram(t, ADMIN_BUF))->nguid, 16);
	assert_ok(admin(t, nvme_admin_identify, 2, NVME_IDENTIFY_CNS_NS_DESC_LIST, 0, ADMIN_BUF));
	d = ram(t, ADMIN_BUF);
	assert_int_equal(d[0], NVME_NIDT_EUI64);
	assert_int_equal(d[1], 8);
	assert_memory_equal(d + 4, eui, 8);
	assert_int_equal(d[12], NVME_NIDT_NGUID);
	assert_int_equal(d[13], 16);
	assert_memory_equal(d + 16, nguid, 16);
	assert_int_equal(d[32], NVME_NIDT_UUID);
	assert_int_equal(d[33], 16);
	assert_int_equal(d[36 + 6] >> 4, 5);        /* UUID version */
	assert_int_equal(d[52], 0);                 /* end of list */
	/* another namespace, other identifiers */
	assert_ok(admin(t, nvme_admin_identify, 3, NVME_IDENTIFY_CNS_NS_DESC_LIST, 0, ADMIN_BUF));
	assert_memory_not_equal(d + 4, eui, 8);
	assert_st(admin(t, nvme_admin_identify, 4, NVME_IDENTIFY_CNS_NS_DESC_LIST, 0, ADMIN_BUF),
		  GEN, NVME_SC_INVALID_NS);
	assert_st(admin(t, nvme_admin_identify, 0, 0x10, 0, ADMIN_BUF), GEN, NVME_SC_INVALID_FIELD);
	assert_st(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, 0x100000000ull), GEN,
		  NVME_SC_DATA_XFER_ERROR);
	teardown_t(t);
	(void)state;
}

/* ---- queue management ---- */

static void test_queue_create_errors(void **state)
{
	struct t *t = *state;
	struct nvme_cqe e;

	ctl_enable(t);
	/* CQ */
	assert_st(create_cq_ex(t, 0, 16, true, 0, IOCQ_ADDR(0)), CMD, NVME_SC_QID_INVALID);
	assert_st(create_cq_ex(t, 33, 16, true, 0, IOCQ_ADDR(1)), CMD, NVME_SC_QID_INVALID);
	assert_st(create_cq_ex(t, 1, 1, true, 1, IOCQ_ADDR(1)), CMD, NVME_SC_QUEUE_SIZE);
	assert_st(create_cq_ex(t, 1, 1025, true, 1, IOCQ_ADDR(1)), CMD, NVME_SC_QUEUE_SIZE);
	assert_st(create_cq_ex(t, 1, 16, true, 33, IOCQ_ADDR(1)), CMD, NVME_SC_INVALID_VECTOR);
	assert_st(create_cq_ex(t, 1, 16, true, 1, IOCQ_ADDR(1) + 0x100), GEN,
		  NVME_SC_PRP_INVALID_OFFSET);
	assert_st(create_cq_ex(t, 1, 16, true, 1, 0), GEN, NVME_SC_INVALID_FIELD);
	e = admin(t, nvme_admin_create_cq, 0, nvme_cdw10_queue(1, 16), 1u << 16 | 2u, IOCQ_ADDR(1));
	assert_st(e, GEN, NVME_SC_INVALID_FIELD);   /* PC = 0 with CAP.CQR = 1 */
	assert_true(nvme_cqe_dnr(&e));
	assert_ok(create_cq_ex(t, 1, 16, true, 1, IOCQ_ADDR(1)));
	assert_st(create_cq_ex(t, 1, 16, true, 1, IOCQ_ADDR(2)), CMD, NVME_SC_QID_INVALID);
	assert_ok(create_cq_ex(t, 2, 1024, false, 0xffff, IOCQ_ADDR(2)));   /* IV ignored: IEN 0 */
	/* SQ */
	assert_st(create_sq_ex(t, 0, 16, 1, 0, IOSQ_ADDR(1), NULL), CMD, NVME_SC_QID_INVALID);
	assert_st(create_sq_ex(t, 40, 16, 1, 0, IOSQ_ADDR(1), NULL), CMD, NVME_SC_QID_INVALID);
	assert_st(create_sq_ex(t, 1, 1, 1, 0, IOSQ_ADDR(1), NULL), CMD, NVME_SC_QUEUE_SIZE);
	assert_st(create_sq_ex(t, 1, 2000, 1, 0, IOSQ_ADDR(1), NULL), CMD, NVME_SC_QUEUE_SIZE);
	assert_st(create_sq_ex(t, 1, 16, 0, 0, IOSQ_ADDR(1), NULL), CMD, NVME_SC_CQ_INVALID);
	assert_st(create_sq_ex(t, 1, 16, 3, 0, IOSQ_ADDR(1), NULL), CMD, NVME_SC_CQ_INVALID);
	assert_st(create_sq_ex(t, 1, 16, 40, 0, IOSQ_ADDR(1), NULL), CMD, NVME_SC_CQ_INVALID);
	assert_st(create_sq_ex(t, 1, 16, 1, 0, IOSQ_ADDR(1) + 64, NULL), GEN,
		  NVME_SC_PRP_INVALID_OFFSET);
	e = admin(t, nvme_admin_create_sq, 0, nvme_cdw10_queue(1, 16), 1u << 16, IOSQ_ADDR(1));
	assert_st(e, GEN, NVME_SC_INVALID_FIELD);
	assert_ok(create_sq_ex(t, 1, 16, 1, 0, IOSQ_ADDR(1), NULL));
	assert_st(create_sq_ex(t, 1, 16, 1, 0, IOSQ_ADDR(2), NULL), CMD, NVME_SC_QID_INVALID);
	/* two SQs on one CQ */
	assert_ok(create_sq_ex(t, 2, 16, 1, 0, IOSQ_ADDR(2), NULL));
}

static void test_queue_delete_errors(void **state)
{
	struct t *t = *state;

	ctl_enable(t);
	qpair(t, 1, 16);
	assert_st(admin(t, nvme_admin_delete_sq, 0, 0, 0, 0), CMD, NVME_SC_QID_INVALID);
	assert_st(admin(t, nvme_admin_delete_sq, 0, 2, 0, 0), CMD, NVME_SC_QID_INVALID);
	assert_st(admin(t, nvme_admin_delete_sq, 0, 5000, 0, 0), CMD, NVME_SC_QID_INVALID);
	assert_st(admin(t, nvme_admin_delete_cq, 0, 0, 0, 0), CMD, NVME_SC_QID_INVALID);
	assert_st(admin(t, nvme_admin_delete_cq, 0, 2, 0, 0), CMD, NVME_SC_QID_INVALID);
	assert_st(admin(t, nvme_admin_delete_cq, 0, 1, 0, 0), CMD, NVME_SC_INVALID_QUEUE);
	assert_ok(admin(t, nvme_admin_delete_sq, 0, 1, 0, 0));
	assert_st(admin(t, nvme_admin_delete_sq, 0, 1, 0, 0), CMD, NVME_SC_QID_INVALID);
	assert_ok(admin(t, nvme_admin_delete_cq, 0, 1, 0, 0));
	assert_st(admin(t, nvme_admin_delete_cq, 0, 1, 0, 0), CMD, NVME_SC_QID_INVALID);
	qpair(t, 1, 16);
}

/* ---- features ---- */

static struct nvme_cqe setf(struct t *t, uint32_t fid, uint32_t v)
{
	return admin(t, nvme_admin_set_features, 0, fid, v, 0);
}

static struct nvme_cqe getf(struct t *t, uint32_t fid, uint32_t sel, uint32_t cdw11)
{
	return admin(t, nvme_admin_get_features, 0, fid | sel << 8, cdw11, 0);
}

static void test_features(void **state)
{
	struct t *t = *state;
	struct nvme_cqe e;

	ctl_enable(t);
	/* Number of Queues: the controller reports what it allocated - all 32 of its
	 * pairs (0-based), whatever was asked, as QEMU's model and real drives do. */
	e = setf(t, NVME_FEAT_FID_NUM_QUEUES, 3u << 16 | 3u);
	assert_ok(e);
	assert_int_equal(e.dw0, 31u << 16 | 31u);
	e = getf(t, NVME_FEAT_FID_NUM_QUEUES, 0, 0);
	assert_int_equal(e.dw0, 31u << 16 | 31u);
	e = setf(t, NVME_FEAT_FID_NUM_QUEUES, 4999u << 16 | 1u);
	assert_ok(e);
	assert_int_equal(e.dw0, 31u << 16 | 31u);
	assert_st(setf(t, NVME_FEAT_FID_NUM_QUEUES, 0xffff), GEN, NVME_SC_INVALID_FIELD);
	assert_st(setf(t, NVME_FEAT_FID_NUM_QUEUES, 0xffffu << 16), GEN, NVME_SC_INVALID_FIELD);
	/* Asked for 2 SQs, allocated 32: a queue beyond the request is valid, one
	 * beyond the allocation is not. */
	assert_ok(create_cq_ex(t, 3, 16, true, 3, IOCQ_ADDR(3)));
	assert_ok(create_sq_ex(t, 3, 16, 3, 0, IOSQ_ADDR(3), NULL));
	assert_st(create_sq_ex(t, 33, 16, 3, 0, IOSQ_ADDR(2), NULL), CMD, NVME_SC_QID_INVALID);
	assert_st(setf(t, NVME_FEAT_FID_NUM_QUEUES, 0), GEN, NVME_SC_CMD_SEQ_ERROR);
	e = getf(t, NVME_FEAT_FID_NUM_QUEUES, 1, 0);      /* default */
	assert_int_equal(e.dw0, 31u << 16 | 31u);
	/* Arbitration */
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, 0x07030102));
	assert_int_equal(getf(t, NVME_FEAT_FID_ARBITRATION, 0, 0).dw0, 0x07030102);
	assert_int_equal(getf(t, NVME_FEAT_FID_ARBITRATION, 1, 0).dw0, 3);
	assert_int_equal(getf(t, NVME_FEAT_FID_ARBITRATION, 3, 0).dw0, 4);
	/* Power Management: only PS 0 */
	assert_ok(setf(t, NVME_FEAT_FID_POWER_MGMT, 0));
	assert_st(setf(t, NVME_FEAT_FID_POWER_MGMT, 1), GEN, NVME_SC_INVALID_FIELD);
	/* Temperature threshold */
	assert_ok(setf(t, NVME_FEAT_FID_TEMP_THRESH, 350));
	assert_int_equal(getf(t, NVME_FEAT_FID_TEMP_THRESH, 0, 0).dw0, 350);
	assert_ok(setf(t, NVME_FEAT_FID_TEMP_THRESH, 1u << 20 | 270));
	assert_int_equal(getf(t, NVME_FEAT_FID_TEMP_THRESH, 0, 1u << 20).dw0, 270);
	assert_st(setf(t, NVME_FEAT_FID_TEMP_THRESH, 1u << 16 | 300), GEN, NVME_SC_INVALID_FIELD);
	assert_st(setf(t, NVME_FEAT_FID_TEMP_THRESH, 2u << 20 | 300), GEN, NVME_SC_INVALID_FIELD);
	/* Error recovery; DULBE unsupported */
	assert_ok(setf(t, NVME_FEAT_FID_ERR_RECOVERY, 100));
	assert_int_equal(getf(t, NVME_FEAT_FID_ERR_RECOVERY, 0, 0).dw0, 100);
	assert_st(setf(t, NVME_FEAT_FID_ERR_RECOVERY, 1u << 16), GEN, NVME_SC_INVALID_FIELD);
	/* Volatile write cache */
	assert_int_equal(getf(t, NVME_FEAT_FID_VOLATILE_WC, 0, 0).dw0, 1);
	assert_ok(setf(t, NVME_FEAT_FID_VOLATILE_WC, 0));
	assert_int_equal(getf(t, NVME_FEAT_FID_VOLATILE_WC, 0, 0).dw0, 0);
	/* Interrupt coalescing, vector configuration */
	assert_ok(setf(t, NVME_FEAT_FID_IRQ_COALESCE, 0x0a08));
	assert_int_equal(getf(t, NVME_FEAT_FID_IRQ_COALESCE, 0, 0).dw0, 0x0a08);
	assert_ok(setf(t, NVME_FEAT_FID_IRQ_CONFIG, 1u << 16 | 5));
	assert_int_equal(getf(t, NVME_FEAT_FID_IRQ_CONFIG, 0, 5).dw0, 1u << 16 | 5);
	assert_int_equal(getf(t, NVME_FEAT_FID_IRQ_CONFIG, 0, 6).dw0, 6);
	assert_st(setf(t, NVME_FEAT_FID_IRQ_CONFIG, 33), GEN, NVME_SC_INVALID_FIELD);
	assert_st(getf(t, NVME_FEAT_FID_IRQ_CONFIG, 0, 40), GEN, NVME_SC_INVALID_FIELD);
	/* Write atomicity, async event configuration */
	assert_ok(setf(t, NVME_FEAT_FID_WRITE_ATOMIC, 1));
	assert_int_equal(getf(t, NVME_FEAT_FID_WRITE_ATOMIC, 0, 0).dw0, 1);
	assert_ok(setf(t, NVME_FEAT_FID_ASYNC_EVENT, 0x1f));
	assert_int_equal(getf(t, NVME_FEAT_FID_ASYNC_EVENT, 0, 0).dw0, 0x1f);
	/* unsupported, not saveable, bad select */
	assert_st(setf(t, NVME_FEAT_FID_LBA_RANGE, 0), GEN, NVME_SC_INVALID_FIELD);
	assert_st(setf(t, NVME_FEAT_FID_TIMESTAMP, 0), GEN, NVME_SC_INVALID_FIELD);
	assert_st(getf(t, NVME_FEAT_FID_HOST_MEM_BUF, 0, 0), GEN, NVME_SC_INVALID_FIELD);
	assert_st(setf(t, NVME_FEAT_FID_ARBITRATION | 1u << 31, 0), CMD,
		  NVME_SC_FEATURE_NOT_SAVEABLE);
	assert_st(getf(t, NVME_FEAT_FID_ARBITRATION, 4, 0), GEN, NVME_SC_INVALID_FIELD);
	/* a controller reset restores defaults */
	ctl_disable(t);
	ctl_enable(t);
	assert_int_equal(getf(t, NVME_FEAT_FID_ARBITRATION, 0, 0).dw0, 3);
	assert_int_equal(getf(t, NVME_FEAT_FID_NUM_QUEUES, 0, 0).dw0, 31u << 16 | 31u);
}

/* ---- log pages ---- */

static struct nvme_cqe getlog(struct t *t, uint8_t lid, uint32_t nsid, uint32_t len,
			      uint64_t off, bool rae)
{
	struct nvme_sqe s;

	nvme_sqe_init(&s, nvme_admin_get_log_page, 0, nsid);
	nvme_log_set(&s, lid, len, off);
	if (rae)
		s.cdw10 |= 1u << 15;
	s.prp1 = ADMIN_BUF;
	return exec(t, 0, &s);
}

static uint64_t u128lo(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void test_log_pages(void **state)
{
	struct t *t = *state;
	struct nvme_smart_log *sl = (struct nvme_smart_log *)ram(t, ADMIN_BUF);
	struct nvme_error_log_page *el = (struct nvme_error_log_page *)ram(t, ADMIN_BUF);
	struct nvme_firmware_slot *fw = (struct nvme_firmware_slot *)ram(t, ADMIN_BUF);
	struct nvme_cqe e;

	ctl_enable(t);
	qpair(t, 1, 64);
	/* 3 writes of 64 KiB and 2 reads of 4 KiB */
	for (int i = 0; i < 3; i++)
		assert_ok(rw(t, 1, nvme_cmd_write, (uint64_t)i * 128, 128, DATA_ADDR, 9));
	for (int i = 0; i < 2; i++)
		assert_ok(rw(t, 1, nvme_cmd_read, 0, 8, DATA_ADDR, 9));
	assert_ok(getlog(t, NVME_LOG_LID_SMART, 0xffffffff, 512, 0, false));
	assert_int_equal(u128lo(sl->host_writes), 3);
	assert_int_equal(u128lo(sl->host_reads), 2);
	assert_int_equal(u128lo(sl->data_units_written), 1);   /* 384 units of 512 B, rounded up */
	assert_int_equal(u128lo(sl->data_units_read), 1);
	assert_int_equal(u128lo(sl->power_cycles), 1);
	assert_int_equal(sl->temperature[0] | sl->temperature[1] << 8, 313);
	assert_int_equal(sl->avail_spare, 100);
	assert_int_equal(sl->critical_warning, 0);
	assert_ok(getlog(t, NVME_LOG_LID_SMART, 0, 512, 0, false));
	assert_st(getlog(t, NVME_LOG_LID_SMART, 1, 512, 0, false), GEN, NVME_SC_INVALID_FIELD);
	/* error log: newest first, with the failing command's identity */
	e = rw(t, 1, nvme_cmd_read, 1ull << 40, 1, DATA_ADDR, 9);
	assert_st(e, GEN, NVME_SC_LBA_RANGE);
	assert_ok(getlog(t, NVME_LOG_LID_ERROR, 0, 4096, 0, false));
	assert_int_equal(el[0].sqid, 1);
	assert_int_equal(el[0].cmdid, e.cid);
	assert_int_equal(el[0].status_field >> 1, NVME_SC_LBA_RANGE | NVME_SC_DNR);
	assert_int_equal(el[0].lba, 1ull << 40);
	assert_int_equal(el[0].nsid, 1);
	assert_true(el[0].error_count >= 1);
	assert_int_equal(el[1].error_count + 1, el[0].error_count);
	/* offset and partial reads */
	assert_ok(getlog(t, NVME_LOG_LID_ERROR, 0, 64, 64, false));
	assert_int_equal(el[0].error_count + 1, ((struct nvme_error_log_page *)ram(t, ADMIN_BUF))->error_count + 1);
	assert_st(getlog(t, NVME_LOG_LID_ERROR, 0, 64, 2, false), GEN, NVME_SC_INVALID_FIELD);
	assert_st(getlog(t, NVME_LOG_LID_ERROR, 0, 64, 8192, false), GEN, NVME_SC_INVALID_FIELD);
	/* firmware slot */
	assert_ok(getlog(t, NVME_LOG_LID_FW_SLOT, 0, 512, 0, false));
	assert_int_equal(fw->afi, 1);
	assert_memory_equal(fw->frs[0], "0.1     ", 8);
	/* unsupported pages */
	assert_st(getlog(t, NVME_LOG_LID_CMD_EFFECTS, 0, 4096, 0, false), CMD,
		  NVME_SC_INVALID_LOG_PAGE);
	assert_st(getlog(t, 0x7f, 0, 512, 0, false), CMD, NVME_SC_INVALID_LOG_PAGE);
	/* SMART counts errors */
	assert_ok(getlog(t, NVME_LOG_LID_SMART, 0, 512, 0, false));
	assert_true(u128lo(sl->num_err_log_entries) >= 2);
	/* temperature threshold below current raises the SMART critical warning */
	assert_ok(setf(t, NVME_FEAT_FID_TEMP_THRESH, 300));
	assert_ok(getlog(t, NVME_LOG_LID_SMART, 0, 512, 0, false));
	assert_int_equal(sl->critical_warning, NVME_SMART_CRIT_TEMPERATURE);
}

/* ---- Abort, AER ---- */

static void test_abort(void **state)
{
	struct t *t = *state;
	struct nvme_sqe io, ab;
	struct nvme_cqe e, e1, e2;

	/* weighted round robin: the admin SQ has strict priority (under round
	 * robin it takes its turn with the I/O SQs, which may come first) */
	ctl_enable_ex(t, 0, NVME_CC_AMS_WRRU, 32);
	qpair(t, 1, 16);
	/* a command waiting in SQ 1 while the admin queue (served first) aborts it */
	nvme_sqe_init(&io, nvme_cmd_flush, 0x55, 1);
	submit(t, 1, &io);
	ring(t, 1);
	nvme_sqe_init(&ab, nvme_admin_abort_cmd, 0x66, 0);
	ab.cdw10 = 0x55u << 16 | 1;
	submit(t, 0, &ab);
	ring(t, 0);
	run(t);
	assert_true(reap(t, 0, &e));
	assert_ok(e);
	assert_int_equal(e.cid, 0x66);
	assert_int_equal(e.dw0 & 1, 0);             /* aborted */
	assert_true(reap(t, 1, &e1));
	assert_int_equal(e1.cid, 0x55);
	assert_st(e1, GEN, NVME_SC_ABORT_REQ);
	/* nothing to abort: completed commands, unknown CIDs, unknown SQs */
	e2 = admin(t, nvme_admin_abort_cmd, 0, 0x55u << 16 | 1, 0, 0);
	assert_ok(e2);
	assert_int_equal(e2.dw0 & 1, 1);
	e2 = admin(t, nvme_admin_abort_cmd, 0, 0x1234u << 16 | 7, 0, 0);
	assert_ok(e2);
	assert_int_equal(e2.dw0 & 1, 1);
	e2 = admin(t, nvme_admin_abort_cmd, 0, 0x1234u << 16 | 0xffff, 0, 0);
	assert_int_equal(e2.dw0 & 1, 1);
	/* the queue still works */
	assert_ok(rw(t, 1, nvme_cmd_write, 0, 1, DATA_ADDR, 9));
}

static void test_aer(void **state)
{
	struct t *t = *state;
	struct nvme_sqe s;
	struct nvme_cqe e;
	uint16_t cids[4];

	ctl_enable(t);
	for (int i = 0; i < 4; i++) {
		nvme_sqe_init(&s, nvme_admin_async_event, 0, 0);
		submit(t, 0, &s);
		cids[i] = s.cid;
	}
	ring(t, 0);
	run(t);
	assert_false(reap(t, 0, &e));               /* outstanding, no completion */
	/* the fifth exceeds AERL = 3 */
	nvme_sqe_init(&s, nvme_admin_async_event, 0, 0);
	e = exec(t, 0, &s);
	assert_st(e, CMD, NVME_SC_ASYNC_LIMIT);
	/* a write to the doorbell of a queue that does not exist */
	wr32(t, nvme_sq_tail_db(5, 0), 3);
	run(t);
	assert_true(reap(t, 0, &e));
	assert_ok(e);
	assert_int_equal(e.dw0 & 7, NVME_AER_ERROR);
	assert_int_equal((e.dw0 >> 8) & 0xff, NVME_AER_ERROR_INVALID_DB_REG);
	assert_int_equal((e.dw0 >> 16) & 0xff, NVME_LOG_LID_ERROR);
	assert_true(e.cid == cids[0] || e.cid == cids[1] || e.cid == cids[2] || e.cid == cids[3]);
	assert_int_equal(rd32(t, nvme_sq_tail_db(5, 0)), 0);
	/* error events are masked until the error log is read */
	qpair(t, 1, 16);
	wr32(t, nvme_sq_tail_db(1, 0), 16);         /* beyond the queue size */
	run(t);
	assert_false(reap(t, 0, &e));
	assert_ok(getlog(t, NVME_LOG_LID_ERROR, 0, 64, 0, false));
	run(t);
	assert_true(reap(t, 0, &e));                /* the queued event, now unmasked */
	assert_int_equal((e.dw0 >> 8) & 0xff, NVME_AER_ERROR_INVALID_DB_VAL);
	/* invalid CQ head doorbell: beyond what was posted */
	assert_ok(getlog(t, NVME_LOG_LID_ERROR, 0, 64, 0, false));
	wr32(t, nvme_cq_head_db(1, 0), 5);
	run(t);
	assert_true(reap(t, 0, &e));
	assert_int_equal((e.dw0 >> 8) & 0xff, NVME_AER_ERROR_INVALID_DB_VAL);
	/* a SMART temperature event (enabled in AEC) */
	assert_ok(setf(t, NVME_FEAT_FID_ASYNC_EVENT, 0x2));
	assert_ok(setf(t, NVME_FEAT_FID_TEMP_THRESH, 300));
	run(t);
	assert_true(reap(t, 0, &e));
	assert_int_equal(e.dw0 & 7, NVME_AER_SMART);
	assert_int_equal((e.dw0 >> 8) & 0xff, NVME_AER_SMART_TEMPERATURE_THRESHOLD);
	assert_int_equal((e.dw0 >> 16) & 0xff, NVME_LOG_LID_SMART);
	/* the queue that got the bad doorbell value keeps working */
	wr32(t, nvme_cq_head_db(1, 0), 0);
	t->sq[1].idx = 0;
	assert_ok(rw(t, 1, nvme_cmd_write, 0, 1, DATA_ADDR, 9));
}

/* ---- I/O ---- */

static void test_io_errors(void **state)
{
	struct t *t = *state;
	struct nvme_sqe s;
	struct nvme_cqe e;
	uint64_t nsze = (1ull << 30) / 512;

	ctl_enable(t);
	qpair(t, 1, 64);
	/* invalid opcodes, admin and I/O */
	nvme_sqe_init(&s, 0x7e, 0, 0);
	e = exec(t, 0, &s);
	assert_st(e, GEN, NVME_SC_INVALID_OPCODE);
	assert_true(nvme_cqe_dnr(&e));
	nvme_sqe_init(&s, nvme_admin_format_nvm, 0, 1);
	assert_st(exec(t, 0, &s), GEN, NVME_SC_INVALID_OPCODE);
	nvme_sqe_init(&s, nvme_cmd_compare, 0, 1);
	assert_st(exec(t, 1, &s), GEN, NVME_SC_INVALID_OPCODE);
	nvme_sqe_init(&s, 0xff, 0, 1);
	assert_st(exec(t, 1, &s), GEN, NVME_SC_INVALID_OPCODE);
	/* invalid namespace */
	assert_st(rw_ex(t, 1, nvme_cmd_read, 0, 0, 1, DATA_ADDR, 0), GEN, NVME_SC_INVALID_NS);
	assert_st(rw_ex(t, 1, nvme_cmd_write, 2, 0, 1, DATA_ADDR, 0), GEN, NVME_SC_INVALID_NS);
	assert_st(rw_ex(t, 1, nvme_cmd_write_zeroes, 0xffffffff, 0, 1, 0, 0), GEN,
		  NVME_SC_INVALID_NS);
	nvme_sqe_init(&s, nvme_cmd_flush, 0, 7);
	assert_st(exec(t, 1, &s), GEN, NVME_SC_INVALID_NS);
	/* LBA out of range: past the end, straddling it, overflowing */
	assert_st(rw(t, 1, nvme_cmd_read, nsze, 1, DATA_ADDR, 9), GEN, NVME_SC_LBA_RANGE);
	assert_st(rw(t, 1, nvme_cmd_write, nsze - 1, 2, DATA_ADDR, 9), GEN, NVME_SC_LBA_RANGE);
	assert_st(rw(t, 1, nvme_cmd_read, UINT64_MAX, 1, DATA_ADDR, 9), GEN, NVME_SC_LBA_RANGE);
	assert_st(rw_ex(t, 1, nvme_cmd_write_zeroes, 1, nsze - 3, 4, 0, 0), GEN, NVME_SC_LBA_RANGE);
	assert_ok(rw(t, 1, nvme_cmd_write, nsze - 1, 1, DATA_ADDR, 9));
	/* MDTS: 128 KiB = 256 blocks; 257 is too many */
	assert_ok(rw(t, 1, nvme_cmd_read, 0, 256, DATA_ADDR, 9));
	assert_st(rw(t, 1, nvme_cmd_read, 0, 257, DATA_ADDR, 9), GEN, NVME_SC_INVALID_FIELD);
	/* SGLs (PSDT != 0) and fused operations are not supported */
	nvme_sqe_init(&s, nvme_cmd_read, 0, 1);
	s.flags = 1u << 6;
	s.prp1 = DATA_ADDR;
	assert_st(exec(t, 1, &s), GEN, NVME_SC_INVALID_FIELD);
	nvme_sqe_init(&s, nvme_cmd_read, 0, 1);
	s.flags = 1;
	s.prp1 = DATA_ADDR;
	assert_st(exec(t, 1, &s), GEN, NVME_SC_INVALID_FIELD);
	nvme_sqe_init(&s, nvme_admin_identify, 0, 0);
	s.flags = 2u << 6;
	assert_st(exec(t, 0, &s), GEN, NVME_SC_INVALID_FIELD);
	/* a DMA the fabric refuses is a Data Transfer Error */
	assert_st(rw_ex(t, 1, nvme_cmd_read, 1, 0, 1, RAM_SIZE + 0x1000, 0), GEN,
		  NVME_SC_DATA_XFER_ERROR);
	assert_st(rw_ex(t, 1, nvme_cmd_write, 1, 0, 8, 0x50000000ull, 0), GEN,
		  NVME_SC_DATA_XFER_ERROR);
	/* a PRP list in unreachable memory too */
	assert_st(rw_ex(t, 1, nvme_cmd_write, 1, 0, 32, DATA_ADDR, 0x50000000ull), GEN,
		  NVME_SC_DATA_XFER_ERROR);
}

static void test_prp_forms(void **state)
{
	struct t *t = *state;
	uint64_t *list = (uint64_t *)ram(t, LIST_ADDR);
	uint64_t p1, p2;

	ctl_enable(t);
	qpair(t, 1, 64);
	/* PRP1 only, with an offset inside the page */
	fill(t, DATA_ADDR + 0x200, 1024, 1);
	assert_ok(rw_ex(t, 1, nvme_cmd_write, 1, 0, 2, DATA_ADDR + 0x200, 0));
	assert_ok(rw_ex(t, 1, nvme_cmd_read, 1, 0, 2, DATA2_ADDR + 0x600, 0));
	assert_memory_equal(ram(t, DATA_ADDR + 0x200), ram(t, DATA2_ADDR + 0x600), 1024);
	/* PRP1 + PRP2 data pointer: 4 KiB from a 0xe00 offset spans two pages */
	fill(t, DATA_ADDR + 0xe00, 4096, 2);
	assert_ok(rw_ex(t, 1, nvme_cmd_write, 1, 16, 8, DATA_ADDR + 0xe00, DATA_ADDR + 0x1000));
	memset(ram(t, DATA2_ADDR), 0, 0x10000);
	/* read back into two discontiguous pages */
	assert_ok(rw_ex(t, 1, nvme_cmd_read, 1, 16, 8, DATA2_ADDR + 0xe00, DATA2_ADDR + 0x8000));
	assert_memory_equal(ram(t, DATA_ADDR + 0xe00), ram(t, DATA2_ADDR + 0xe00), 0x200);
	assert_memory_equal(ram(t, DATA_ADDR + 0x1000), ram(t, DATA2_ADDR + 0x8000), 0xe00);
	/* PRP list: 64 KiB, scattered pages in reverse order */
	fill(t, DATA_ADDR, 65536, 3);
	prps(t, DATA_ADDR, 65536, &p1, &p2, PAGE);
	assert_ok(rw_ex(t, 1, nvme_cmd_write, 1, 100, 128, p1, p2));
	for (int i = 0; i < 15; i++)
		list[i] = DATA2_ADDR + (uint64_t)(15 - i) * 0x2000;
	assert_ok(rw_ex(t, 1, nvme_cmd_read, 1, 100, 128, DATA2_ADDR, LIST_ADDR));
	assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 4096);
	for (int i = 0; i < 15; i++)
		assert_memory_equal(ram(t, DATA_ADDR + 4096 + (uint64_t)i * 4096),
				    ram(t, DATA2_ADDR + (uint64_t)(15 - i) * 0x2000), 4096);
	/* chained PRP list: the first list starts 4 entries before its page end */
	fill(t, DATA_ADDR, 131072, 4);
	{
		uint64_t l1 = LIST_ADDR + 0x1000 - 32, l2 = LIST_ADDR + 0x3000;
		uint64_t *a = (uint64_t *)ram(t, l1), *b = (uint64_t *)ram(t, l2);

		for (int i = 0; i < 3; i++)
			a[i] = DATA_ADDR + 0x1000 + (uint64_t)i * 0x1000;
		a[3] = l2;
		for (int i = 0; i < 28; i++)
			b[i] = DATA_ADDR + 0x4000 + (uint64_t)i * 0x1000;
		assert_ok(rw_ex(t, 1, nvme_cmd_write, 1, 1000, 256, DATA_ADDR, l1));
		memset(ram(t, DATA2_ADDR), 0, 131072);
		assert_ok(rw(t, 1, nvme_cmd_read, 1000, 256, DATA2_ADDR, 9));
		assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 131072);
		/* a chained list that continues from an unaligned list page end, 3 levels */
		for (int i = 0; i < 3; i++)
			a[i] = DATA_ADDR + 0x1000 + (uint64_t)i * 0x1000;
		a[3] = LIST_ADDR + 0x5000 - 16;
		((uint64_t *)ram(t, LIST_ADDR + 0x5000 - 16))[0] = DATA_ADDR + 0x4000;
		((uint64_t *)ram(t, LIST_ADDR + 0x5000 - 16))[1] = l2 + 8;
		assert_ok(rw_ex(t, 1, nvme_cmd_read, 1, 1000, 256, DATA_ADDR, l1));
	}
	/* the controller reads only the list entries the command needs */
	{
		uint64_t reads = t->h.dma_reads;

		prps(t, DATA_ADDR, 12288, &p1, &p2, PAGE);
		assert_ok(rw_ex(t, 1, nvme_cmd_write, 1, 0, 24, p1, p2));
		assert_true(t->h.dma_reads - reads <= 6);  /* SQE, list, 3 data segments max */
	}
	/* page size 8 KiB (CC.MPS = 1) with a list */
	ctl_disable(t);
	ctl_enable_ex(t, 1, 0, 32);
	qpair(t, 1, 64);
	fill(t, DATA_ADDR, 65536, 5);
	prps(t, DATA_ADDR + 0x1000, 65536 - 0x1000, &p1, &p2, 8192);
	assert_ok(rw_ex(t, 1, nvme_cmd_write, 1, 0, 120, p1, p2));
	prps(t, DATA2_ADDR, 65536 - 0x1000, &p1, &p2, 8192);
	assert_ok(rw_ex(t, 1, nvme_cmd_read, 1, 0, 120, p1, p2));
	assert_memory_equal(ram(t, DATA_ADDR + 0x1000), ram(t, DATA2_ADDR), 65536 - 0x1000);
	/* with 8 KiB pages, a 4 KiB-aligned PRP2 is misaligned */
	assert_st(rw_ex(t, 1, nvme_cmd_read, 1, 0, 24, DATA_ADDR + 0x1000, DATA_ADDR + 0x3000), GEN,
		  NVME_SC_PRP_INVALID_OFFSET);
}

static void test_prp_invalid_offset(void **state)
{
	struct t *t = *state;
	uint64_t *list = (uint64_t *)ram(t, LIST_ADDR);
	struct nvme_cqe e;

	ctl_enable(t);
	qpair(t, 1, 64);
	/* PRP2 data pointer with an offset */
	e = rw_ex(t, 1, nvme_cmd_write, 1, 0, 16, DATA_ADDR, DATA_ADDR + 0x1010);
	assert_st(e, GEN, NVME_SC_PRP_INVALID_OFFSET);
	assert_true(nvme_cqe_dnr(&e));
	/* PRP1 not dword aligned */
	assert_st(rw_ex(t, 1, nvme_cmd_write, 1, 0, 1, DATA_ADDR + 2, 0), GEN,
		  NVME_SC_PRP_INVALID_OFFSET);
	/* a list entry with an offset */
	list[0] = DATA_ADDR + 0x1000;
	list[1] = DATA_ADDR + 0x2008;
	assert_st(rw_ex(t, 1, nvme_cmd_read, 1, 0, 24, DATA_ADDR, LIST_ADDR), GEN,
		  NVME_SC_PRP_INVALID_OFFSET);
	/* a list pointer that is not qword aligned */
	assert_st(rw_ex(t, 1, nvme_cmd_read, 1, 0, 24, DATA_ADDR, LIST_ADDR + 4), GEN,
		  NVME_SC_PRP_INVALID_OFFSET);
	/* a chain pointer at a list's end that leaves no room for data */
	list[0] = DATA_ADDR + 0x1000;
	((uint64_t *)ram(t, LIST_ADDR + 0x2000 - 16))[0] = DATA_ADDR + 0x1000;
	((uint64_t *)ram(t, LIST_ADDR + 0x2000 - 16))[1] = LIST_ADDR + 0x3000 - 8;
	((uint64_t *)ram(t, LIST_ADDR + 0x3000 - 8))[0] = LIST_ADDR + 0x4000 - 8;
	assert_st(rw_ex(t, 1, nvme_cmd_read, 1, 0, 64, DATA_ADDR, LIST_ADDR + 0x2000 - 16), GEN,
		  NVME_SC_PRP_INVALID_OFFSET);
	/* the admin queue validates PRPs too */
	{
		struct nvme_sqe s;

		nvme_sqe_init(&s, nvme_admin_identify, 0, 0);
		s.cdw10 = NVME_IDENTIFY_CNS_CTRL;
		s.prp1 = ADMIN_BUF + 0x100;
		s.prp2 = ADMIN_BUF + 0x1100;
		assert_st(exec(t, 0, &s), GEN, NVME_SC_PRP_INVALID_OFFSET);
	}
}

static void test_write_zeroes_dsm_flush(void **state)
{
	struct t *t = *state;
	struct nvme_dsm_range *r = (struct nvme_dsm_range *)ram(t, ADMIN_BUF);
	struct nvme_sqe s;
	static uint8_t zero[65536];

	ctl_enable(t);
	qpair(t, 1, 64);
	fill(t, DATA_ADDR, 65536, 9);
	assert_ok(rw(t, 1, nvme_cmd_write, 0, 128, DATA_ADDR, 9));
	/* write zeroes over blocks 8..15 */
	assert_ok(rw_ex(t, 1, nvme_cmd_write_zeroes, 1, 8, 8, 0, 0));
	assert_ok(rw(t, 1, nvme_cmd_read, 0, 128, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA2_ADDR), ram(t, DATA_ADDR), 4096);
	assert_memory_equal(ram(t, DATA2_ADDR + 4096), zero, 4096);
	assert_memory_equal(ram(t, DATA2_ADDR + 8192), ram(t, DATA_ADDR + 8192), 65536 - 8192);
	/* DSM deallocate two ranges: blocks 20..27 and 64..127 read as zero */
	r[0] = (struct nvme_dsm_range){ .cattr = 0, .nlb = 8, .slba = 20 };
	r[1] = (struct nvme_dsm_range){ .cattr = 0, .nlb = 64, .slba = 64 };
	nvme_sqe_init(&s, nvme_cmd_dsm, 0, 1);
	s.cdw10 = 1;
	s.cdw11 = 1u << 2;
	s.prp1 = ADMIN_BUF;
	assert_ok(exec(t, 1, &s));
	assert_ok(rw(t, 1, nvme_cmd_read, 0, 128, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA2_ADDR + 20 * 512), zero, 8 * 512);
	assert_memory_equal(ram(t, DATA2_ADDR + 64 * 512), zero, 64 * 512);
	assert_memory_equal(ram(t, DATA2_ADDR + 28 * 512), ram(t, DATA_ADDR + 28 * 512), 36 * 512);
	/* a range beyond the namespace fails the whole command, nothing deallocated */
	r[0] = (struct nvme_dsm_range){ .nlb = 8, .slba = 0 };
	r[1] = (struct nvme_dsm_range){ .nlb = 8, .slba = (1ull << 30) / 512 - 4 };
	nvme_sqe_init(&s, nvme_cmd_dsm, 0, 1);
	s.cdw10 = 1;
	s.cdw11 = 1u << 2;
	s.prp1 = ADMIN_BUF;
	assert_st(exec(t, 1, &s), GEN, NVME_SC_LBA_RANGE);
	assert_ok(rw(t, 1, nvme_cmd_read, 0, 8, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA2_ADDR), ram(t, DATA_ADDR), 4096);
	/* hints only (no AD): succeeds, data kept */
	nvme_sqe_init(&s, nvme_cmd_dsm, 0, 1);
	s.cdw10 = 0;
	s.cdw11 = 3;
	s.prp1 = ADMIN_BUF;
	assert_ok(exec(t, 1, &s));
	/* DSM range list in unreachable memory */
	nvme_sqe_init(&s, nvme_cmd_dsm, 0, 1);
	s.cdw11 = 1u << 2;
	s.prp1 = RAM_SIZE;
	assert_st(exec(t, 1, &s), GEN, NVME_SC_DATA_XFER_ERROR);
	/* flush one and all namespaces */
	nvme_sqe_init(&s, nvme_cmd_flush, 0, 1);
	assert_ok(exec(t, 1, &s));
	nvme_sqe_init(&s, nvme_cmd_flush, 0, 0xffffffff);
	assert_ok(exec(t, 1, &s));
	nvme_sqe_init(&s, nvme_cmd_flush, 0, 0);
	assert_st(exec(t, 1, &s), GEN, NVME_SC_INVALID_NS);
}

static void test_file_backing(void **state)
{
	char prefix[64], path[80];
	const char *kv[] = { "backing", prefix, "namespaces", "2", "ns_size", "16M" };
	struct stat st;
	struct t *t;

	snprintf(prefix, sizeof(prefix), "/tmp/test_nvme_%d", (int)getpid());
	setup_params(&t, kv, 6, 0);
	ctl_enable(t);
	qpair(t, 1, 16);
	fill(t, DATA_ADDR, 4096, 77);
	assert_ok(rw(t, 1, nvme_cmd_write, 1000, 8, DATA_ADDR, 9));
	snprintf(path, sizeof(path), "%s.ns1", prefix);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 16 << 20);
	assert_true(st.st_blocks * 512 < (1 << 20));   /* sparse */
	{
		FILE *f = fopen(path, "rb");
		uint8_t buf[4096];

		assert_non_null(f);
		assert_int_equal(fseek(f, 1000 * 512, SEEK_SET), 0);
		assert_int_equal(fread(buf, 1, 4096, f), 4096);
		fclose(f);
		assert_memory_equal(buf, ram(t, DATA_ADDR), 4096);
	}
	teardown_t(t);
	unlink(path);
	snprintf(path, sizeof(path), "%s.ns2", prefix);
	assert_int_equal(stat(path, &st), 0);
	unlink(path);
	(void)state;
}

static void test_cross_queue_and_reset(void **state)
{
	struct t *t = *state;

	ctl_enable(t);
	qpair(t, 1, 64);
	qpair(t, 7, 64);
	fill(t, DATA_ADDR, 131072, 11);
	assert_ok(rw(t, 1, nvme_cmd_write, 4096, 256, DATA_ADDR, 9));
	assert_ok(rw(t, 7, nvme_cmd_read, 4096, 256, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 131072);
	/* across a controller reset */
	ctl_disable(t);
	ctl_enable(t);
	qpair(t, 3, 64);
	memset(ram(t, DATA2_ADDR), 0, 131072);
	assert_ok(rw(t, 3, nvme_cmd_read, 4096, 256, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 131072);
	/* and across a function-level reset */
	t->h.d.ops->reset(&t->h.d);
	assert_int_equal(rd32(t, NVME_REG_CC), 0);
	ctl_enable(t);
	qpair(t, 2, 64);
	memset(ram(t, DATA2_ADDR), 0, 131072);
	assert_ok(rw(t, 2, nvme_cmd_read, 4096, 256, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 131072);
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* A 1 GiB namespace round-trips checksummed data over its whole LBA range. */
static void test_1g_roundtrip(void **state)
{
	struct t *t = *state;
	const uint32_t chunk = 131072, nb = chunk / 512;
	const uint64_t contig = 64ull << 20, contig_base = 512ull << 20;
	static uint64_t sums[1024 + 512];
	unsigned k = 0;

	ctl_enable(t);
	qpair(t, 1, 256);
	/* a 128 KiB chunk at every MiB, including the last one */
	for (uint64_t off = 0; off < (1ull << 30); off += 1 << 20, k++) {
		fill(t, DATA_ADDR, chunk, (uint32_t)k + 1000);
		sums[k] = fnv(ram(t, DATA_ADDR), chunk);
		assert_ok(rw(t, 1, nvme_cmd_write, off / 512 + (off ? 2048 - nb : 0), nb,
			     DATA_ADDR, 9));
	}
	/* 64 MiB contiguous in the middle (overwrites the sparse chunks there) */
	for (uint64_t off = 0; off < contig; off += chunk) {
		fill(t, DATA_ADDR, chunk, (uint32_t)(off / chunk) + 5000);
		assert_ok(rw(t, 1, nvme_cmd_write, (contig_base + off) / 512, nb, DATA_ADDR, 9));
	}
	k = 0;
	for (uint64_t off = 0; off < (1ull << 30); off += 1 << 20, k++) {
		uint64_t lba = off / 512 + (off ? 2048 - nb : 0);

		if (lba * 512 >= contig_base && lba * 512 < contig_base + contig)
			continue;
		assert_ok(rw(t, 1, nvme_cmd_read, lba, nb, DATA2_ADDR, 9));
		if (fnv(ram(t, DATA2_ADDR), chunk) != sums[k])
			fail_msg("checksum mismatch at %llu", (unsigned long long)off);
	}
	for (uint64_t off = 0; off < contig; off += chunk) {
		fill(t, DATA_ADDR, chunk, (uint32_t)(off / chunk) + 5000);
		assert_ok(rw(t, 1, nvme_cmd_read, (contig_base + off) / 512, nb, DATA2_ADDR, 9));
		if (fnv(ram(t, DATA2_ADDR), chunk) != fnv(ram(t, DATA_ADDR), chunk))
			fail_msg("contiguous region mismatch at %llu", (unsigned long long)off);
	}
	/* the last block of the namespace */
	assert_ok(rw(t, 1, nvme_cmd_read, (1ull << 30) / 512 - 1, 1, DATA2_ADDR, 9));
}

/* ---- arbitration ---- */

static void collect_order(struct t *t, uint16_t cqid, uint16_t *order, unsigned n)
{
	struct nvme_cqe e;

	for (unsigned i = 0; i < n; i++) {
		if (!reap(t, cqid, &e))
			fail_msg("only %u of %u completions", i, n);
		assert_ok(e);
		order[i] = e.sq_id;
	}
}

static void submit_flushes(struct t *t, uint16_t qid, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct nvme_sqe s;

		nvme_sqe_init(&s, nvme_cmd_flush, 0, 1);
		submit(t, qid, &s);
	}
}

static void test_wrr_urgent_order(void **state)
{
	struct t *t = *state;
	uint16_t order[16];

	ctl_enable_ex(t, 0, NVME_CC_AMS_WRRU, 32);
	assert_ok(create_cq_ex(t, 1, 64, true, 1, IOCQ_ADDR(1)));
	/* queue ids deliberately in reverse priority order */
	assert_ok(create_sq_ex(t, 1, 16, 1, NVME_QPRIO_LOW, IOSQ_ADDR(1), NULL));
	assert_ok(create_sq_ex(t, 2, 16, 1, NVME_QPRIO_MEDIUM, IOSQ_ADDR(2), NULL));
	assert_ok(create_sq_ex(t, 3, 16, 1, NVME_QPRIO_HIGH, IOSQ_ADDR(3), NULL));
	assert_ok(create_sq_ex(t, 4, 16, 1, NVME_QPRIO_URGENT, IOSQ_ADDR(4), NULL));
	/* weights 8 each, no burst limit: each class drains in its turn */
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, 7u << 24 | 7u << 16 | 7u << 8 | 7u));
	for (uint16_t q = 1; q <= 4; q++)
		submit_flushes(t, q, 4);
	for (uint16_t q = 1; q <= 4; q++)
		ring(t, q);
	poll1(t);
	collect_order(t, 1, order, 16);
	for (int i = 0; i < 16; i++)
		assert_int_equal(order[i], 4 - i / 4);
	/* weights shape the share: HPW=1 (2 per round), MPW=LPW=0 (1 per round) */
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, 1u << 24 | 0u << 16 | 0u << 8 | 7u));
	for (uint16_t q = 1; q <= 3; q++)
		submit_flushes(t, q, 4);
	for (uint16_t q = 1; q <= 3; q++)
		ring(t, q);
	poll1(t);
	collect_order(t, 1, order, 12);
	{
		static const uint16_t want[12] = { 3, 3, 2, 1, 3, 3, 2, 1, 2, 1, 2, 1 };

		assert_memory_equal(order, want, sizeof(want));
	}
}

static void test_rr_order(void **state)
{
	struct t *t = *state;
	uint16_t order[9];

	ctl_enable(t);
	assert_ok(create_cq_ex(t, 1, 64, true, 1, IOCQ_ADDR(1)));
	for (uint16_t q = 1; q <= 3; q++)
		assert_ok(create_sq_ex(t, q, 16, 1, (enum nvme_qprio)(q - 1), IOSQ_ADDR(q), NULL));
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, 0));      /* burst 1 */
	for (uint16_t q = 1; q <= 3; q++)
		submit_flushes(t, q, 3);
	for (uint16_t q = 3; q >= 1; q--)
		ring(t, q);
	poll1(t);
	collect_order(t, 1, order, 9);
	/* priorities are ignored under round robin */
	for (int i = 0; i < 9; i++)
		assert_int_equal(order[i], i % 3 + 1);
}

/* Commands fetched from SQ 1..n so far, from the vendor log page C1h. */
static void fetched_counts(struct t *t, uint64_t *out, unsigned n, uint8_t *ams)
{
	struct smartio_nvme_arb_log h;
	struct smartio_nvme_arb_log_sq e;
	uint32_t len = (uint32_t)(sizeof(h) + NQ * sizeof(e));

	assert_ok(getlog(t, SMARTIO_NVME_LOG_ARB, 0, len, 0, false));
	memcpy(&h, ram(t, ADMIN_BUF), sizeof(h));
	assert_int_equal(h.version, 1);
	assert_int_equal(h.nsq, NQ);
	if (ams)
		*ams = h.ams;
	for (unsigned q = 1; q <= n; q++) {
		memcpy(&e, ram(t, ADMIN_BUF + sizeof(h) + q * sizeof(e)), sizeof(e));
		assert_int_equal(e.sqid, q);
		out[q - 1] = e.fetched;
	}
}

static uint32_t arb_value(unsigned hw, unsigned mw, unsigned lw, unsigned ab)
{
	return (hw - 1) << 24 | (mw - 1) << 16 | (lw - 1) << 8 | ab;
}

/*
 * Weights 8:4:1 with a burst of 1: a level's turn goes on round robin over
 * its SQs until its credit is used (the burst limits a visit, not a turn),
 * so one pass of 256 commands is 19 turns of 13 plus 8 high and 1 medium.
 */
static void test_wrr_weights(void **state)
{
	struct t *t = *state;
	uint16_t order[13];
	uint64_t n[4];
	uint8_t ams;

	ctl_enable_ex(t, 0, NVME_CC_AMS_WRRU, 32);
	assert_ok(create_cq_ex(t, 1, 1024, true, 1, IOCQ_ADDR(1)));
	assert_ok(create_sq_ex(t, 1, 256, 1, NVME_QPRIO_LOW, IOSQ_ADDR(1), NULL));
	assert_ok(create_sq_ex(t, 2, 256, 1, NVME_QPRIO_MEDIUM, IOSQ_ADDR(2), NULL));
	assert_ok(create_sq_ex(t, 3, 256, 1, NVME_QPRIO_HIGH, IOSQ_ADDR(3), NULL));
	assert_ok(create_sq_ex(t, 4, 256, 1, NVME_QPRIO_HIGH, IOSQ_ADDR(4), NULL));
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, arb_value(8, 4, 1, 0)));
	for (uint16_t q = 1; q <= 4; q++)
		submit_flushes(t, q, 200);
	for (uint16_t q = 1; q <= 4; q++)
		ring(t, q);
	poll1(t);
	collect_order(t, 1, order, 13);
	{
		static const uint16_t want[13] = { 3, 4, 3, 4, 3, 4, 3, 4, 2, 2, 2, 2, 1 };

		assert_memory_equal(order, want, sizeof(want));
	}
	/* the log is read before the next pass fetches (the admin SQ goes first) */
	fetched_counts(t, n, 4, &ams);
	assert_int_equal(ams, NVME_CC_AMS_WRRU);
	assert_int_equal(n[0], 19);
	assert_int_equal(n[1], 77);
	assert_int_equal(n[2], 80);
	assert_int_equal(n[3], 80);
}

/* The Arbitration Burst: 2^AB commands per SQ per visit, 111b no limit. */
static void test_wrr_burst(void **state)
{
	struct t *t = *state;
	uint16_t order[12];

	ctl_enable_ex(t, 0, NVME_CC_AMS_WRRU, 32);
	assert_ok(create_cq_ex(t, 1, 64, true, 1, IOCQ_ADDR(1)));
	assert_ok(create_sq_ex(t, 1, 16, 1, NVME_QPRIO_MEDIUM, IOSQ_ADDR(1), NULL));
	assert_ok(create_sq_ex(t, 2, 16, 1, NVME_QPRIO_MEDIUM, IOSQ_ADDR(2), NULL));
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, arb_value(1, 8, 1, 1)));
	submit_flushes(t, 1, 6);
	submit_flushes(t, 2, 6);
	ring(t, 2);
	ring(t, 1);
	poll1(t);
	collect_order(t, 1, order, 12);
	for (int i = 0; i < 12; i++)
		assert_int_equal(order[i], i / 2 % 2 + 1);
	/* urgent is strict: a full urgent SQ goes before weighted ones, whatever the weights */
	assert_ok(create_sq_ex(t, 3, 16, 1, NVME_QPRIO_URGENT, IOSQ_ADDR(3), NULL));
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, arb_value(256, 256, 256, 0)));
	submit_flushes(t, 1, 3);
	submit_flushes(t, 3, 5);
	ring(t, 1);
	ring(t, 3);
	poll1(t);
	collect_order(t, 1, order, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(order[i], i < 5 ? 3 : 1);
}

/*
 * `slots` bounds the I/O commands inside the controller, so commands wait in
 * their SQs and a weighted turn spans passes: 65 passes of 4 commands are
 * exactly 20 turns of 8 + 4 + 1.
 */
static void test_wrr_slots_across_passes(void **state)
{
	static const char *const kv[] = { "slots", "4" };
	struct t *t;
	uint64_t n[3];

	(void)state;
	setup_params(&t, kv, 2, 0);
	ctl_enable_ex(t, 0, NVME_CC_AMS_WRRU, 32);
	assert_ok(create_cq_ex(t, 1, 1024, true, 1, IOCQ_ADDR(1)));
	for (uint16_t q = 1; q <= 3; q++)
		assert_ok(create_sq_ex(t, q, 256, 1, (enum nvme_qprio)q, IOSQ_ADDR(q), NULL));
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, arb_value(8, 4, 1, 7)));
	for (uint16_t q = 1; q <= 3; q++)
		submit_flushes(t, q, 200);
	for (uint16_t q = 1; q <= 3; q++)
		ring(t, q);
	for (int i = 0; i < 65; i++)
		poll1(t);
	fetched_counts(t, n, 3, NULL);
	assert_int_equal(n[0], 160);    /* high */
	assert_int_equal(n[1], 80);     /* medium */
	assert_int_equal(n[2], 20);     /* low */
	teardown_t(t);
}

/*
 * Round robin: the admin SQ takes its turn with the I/O SQs and priorities
 * are ignored, so at any moment the queues' counts differ by at most the
 * burst; without WRR support (CAP.AMS 0) enabling with WRR is fatal.
 */
static void test_rr_shares_and_no_wrr(void **state)
{
	static const char *const kv[] = { "wrr", "0" };
	struct t *t = *state;
	uint64_t n[3];
	uint8_t ams;

	ctl_enable(t);
	assert_ok(create_cq_ex(t, 1, 1024, true, 1, IOCQ_ADDR(1)));
	for (uint16_t q = 1; q <= 3; q++)
		assert_ok(create_sq_ex(t, q, 256, 1, (enum nvme_qprio)(q - 1), IOSQ_ADDR(q), NULL));
	assert_ok(setf(t, NVME_FEAT_FID_ARBITRATION, 0));      /* burst 1 */
	for (uint16_t q = 1; q <= 3; q++)
		submit_flushes(t, q, 200);
	for (uint16_t q = 1; q <= 3; q++)
		ring(t, q);
	poll1(t);
	fetched_counts(t, n, 3, &ams);
	assert_int_equal(ams, NVME_CC_AMS_RR);
	assert_true(n[0] + n[1] + n[2] >= 256);
	for (int i = 0; i < 3; i++)
		assert_true(n[i] + 1 >= n[(i + 1) % 3] && n[(i + 1) % 3] + 1 >= n[i]);

	setup_params(&t, kv, 2, 0);
	assert_int_equal(NVME_CAP_AMS(rd64(t, NVME_REG_CAP)), 0);
	wr32(t, NVME_REG_AQA, 31u << 16 | 31u);
	wr64(t, NVME_REG_ASQ, ASQ_ADDR);
	wr64(t, NVME_REG_ACQ, ACQ_ADDR);
	wr32(t, NVME_REG_CC, cc_value(0, NVME_CC_AMS_WRRU));
	run(t);
	assert_true(NVME_CSTS_CFS(rd32(t, NVME_REG_CSTS)));
	teardown_t(t);
}

/* ---- interrupts ---- */

static void test_msix(void **state)
{
	struct t *t = *state;
	uint8_t *bar4 = t->h.d.fn.bar[4];
	uint64_t pba;
	struct nvme_cqe e;
	struct nvme_sqe s;

	ctl_enable(t);
	assert_int_equal(t->h.msi[0], 0);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
	assert_int_equal(t->h.msi[0], 1);               /* admin CQ: vector 0 */
	qpair(t, 1, 16);
	qpair(t, 2, 16);
	assert_int_equal(t->h.msi[0], 5);
	/* polled CQ 3 (IEN = 0) on vector 3: never an interrupt */
	assert_ok(create_cq_ex(t, 3, 16, false, 3, IOCQ_ADDR(3)));
	assert_ok(create_sq_ex(t, 3, 16, 3, 0, IOSQ_ADDR(3), NULL));
	for (int i = 0; i < 3; i++)
		assert_ok(rw(t, 1, nvme_cmd_write, 0, 1, DATA_ADDR, 9));
	assert_ok(rw(t, 2, nvme_cmd_write, 0, 1, DATA_ADDR, 9));
	for (int i = 0; i < 4; i++)
		assert_ok(rw(t, 3, nvme_cmd_write, 0, 1, DATA_ADDR, 9));
	assert_int_equal(t->h.msi[1], 3);
	assert_int_equal(t->h.msi[2], 1);
	assert_int_equal(t->h.msi[3], 0);
	/* two completions in one pass: one message (per-pass coalescing) */
	submit_flushes(t, 1, 2);
	ring(t, 1);
	poll1(t);
	assert_int_equal(t->h.msi[1], 4);
	assert_true(reap(t, 1, &e));
	assert_true(reap(t, 1, &e));
	/* mask vector 2: the message is held pending in the PBA */
	bar4[2 * 16 + 12] = 1;
	nvme_sqe_init(&s, nvme_cmd_flush, 0, 1);
	submit(t, 2, &s);
	ring(t, 2);
	run(t);
	assert_true(reap(t, 2, &e));                    /* the entry is posted anyway */
	assert_int_equal(t->h.msi[2], 1);
	memcpy(&pba, bar4 + 0x8000, 8);
	assert_int_equal(pba & (1u << 2), 1u << 2);
	/* unmask: delivered on the next pass, pending bit cleared */
	bar4[2 * 16 + 12] = 0;
	poll1(t);
	assert_int_equal(t->h.msi[2], 2);
	memcpy(&pba, bar4 + 0x8000, 8);
	assert_int_equal(pba & (1u << 2), 0);
	/* function mask (MSI-X control) also holds messages */
	t->h.cfg[0x70 + PCI_MSIX_FLAGS + 1] |= PCI_MSIX_FLAGS_MASKALL >> 8;
	assert_ok(rw(t, 1, nvme_cmd_write, 0, 1, DATA_ADDR, 9));
	assert_int_equal(t->h.msi[1], 4);
	t->h.cfg[0x70 + PCI_MSIX_FLAGS + 1] &= (uint8_t)~(PCI_MSIX_FLAGS_MASKALL >> 8);
	poll1(t);
	assert_int_equal(t->h.msi[1], 5);
}

static void test_bus_master_off(void **state)
{
	struct t *t = *state;
	struct nvme_sqe s;
	struct nvme_cqe e;

	ctl_enable(t);
	t->h.cfg[PCI_COMMAND] &= (uint8_t)~PCI_COMMAND_MASTER;
	nvme_sqe_init(&s, nvme_admin_identify, 0, 0);
	s.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	s.prp1 = ADMIN_BUF;
	submit(t, 0, &s);
	ring(t, 0);
	run(t);
	assert_false(reap(t, 0, &e));
	assert_int_equal(t->h.dma_reads + t->h.dma_writes, 0);
	t->h.cfg[PCI_COMMAND] |= PCI_COMMAND_MASTER;
	run(t);
	assert_true(reap(t, 0, &e));
	assert_ok(e);
}

/* ---- queue mechanics ---- */

static void test_phase_wrap_and_cq_full(void **state)
{
	struct t *t = *state;
	struct nvme_cqe e;

	ctl_enable(t);
	/* 3 slots of SQ, 2 of CQ: many wraps */
	assert_ok(create_cq_ex(t, 1, 3, true, 1, IOCQ_ADDR(1)));
	assert_ok(create_sq_ex(t, 1, 4, 1, 0, IOSQ_ADDR(1), NULL));
	for (int i = 0; i < 50; i++) {
		struct nvme_cqe r = rw(t, 1, nvme_cmd_write, (uint64_t)i, 1, DATA_ADDR, 9);

		assert_ok(r);
		assert_int_equal(r.sq_head, (i + 1) % 4);
	}
	/* 3 commands, CQ room for 2: the third waits until the host frees a slot */
	submit_flushes(t, 1, 3);
	ring(t, 1);
	run(t);
	assert_true(reap(t, 1, &e));
	assert_true(reap(t, 1, &e));
	assert_false(reap(t, 1, &e));
	run(t);
	assert_true(reap(t, 1, &e));
	assert_ok(e);
	assert_false(reap(t, 1, &e));
}

static void test_delete_sq_with_pending(void **state)
{
	static const char *const kv[] = { "latency_us", "200000" };
	struct nvme_cqe e;
	struct t *t;

	setup_params(&t, kv, 2, 0);
	ctl_enable(t);
	qpair(t, 1, 16);
	/* a command in flight (200 ms media latency) when its SQ is deleted */
	submit_flushes(t, 1, 1);
	ring(t, 1);
	poll1(t);
	assert_false(reap(t, 1, &e));
	assert_ok(admin(t, nvme_admin_delete_sq, 0, 1, 0, 0));
	assert_true(reap(t, 1, &e));                /* posted before the SQ went */
	assert_ok(admin(t, nvme_admin_delete_cq, 0, 1, 0, 0));
	teardown_t(t);
	(void)state;
}

/* ---- CMB ---- */

static void test_cmb_sq(void **state)
{
	static const char *const kv[] = { "cmb", "1M" };
	uint32_t lo = (uint32_t)CMB_BUS | 0xc, hi = 0;
	struct nvme_cqe e;
	struct t *t;
	uint32_t sz;

	setup_params(&t, kv, 2, 0);
	memcpy(t->h.cfg + 0x18, &lo, 4);            /* BAR2 as enumeration assigned it */
	memcpy(t->h.cfg + 0x1c, &hi, 4);
	sz = rd32(t, NVME_REG_CMBSZ);
	assert_int_equal(NVME_CMBSZ_SQS(sz), 1);
	assert_int_equal(NVME_CMBSZ_CQS(sz), 0);
	assert_int_equal(NVME_CMBSZ_SZU(sz), 0);
	assert_int_equal(NVME_CMBSZ_SZ(sz), 256);   /* 256 x 4 KiB */
	assert_int_equal(NVME_CMBLOC_BIR(rd32(t, NVME_REG_CMBLOC)), 2);
	assert_int_equal(NVME_CMBLOC_OFST(rd32(t, NVME_REG_CMBLOC)), 0);
	ctl_enable(t);
	assert_ok(create_cq_ex(t, 1, 16, true, 1, IOCQ_ADDR(1)));
	assert_ok(create_sq_ex(t, 1, 16, 1, 0, CMB_BUS + 0x1000, t->h.d.fn.bar[2] + 0x1000));
	fill(t, DATA_ADDR, 4096, 3);
	{
		uint64_t reads = t->h.dma_reads;

		assert_ok(rw(t, 1, nvme_cmd_write, 0, 8, DATA_ADDR, 9));
		assert_int_equal(t->h.dma_reads - reads, 1);  /* data only: the SQE came from the CMB */
	}
	assert_ok(rw(t, 1, nvme_cmd_read, 0, 8, DATA2_ADDR, 9));
	assert_memory_equal(ram(t, DATA_ADDR), ram(t, DATA2_ADDR), 4096);
	/* CQs cannot live in this CMB, nor SQs that run past its end */
	assert_st(create_cq_ex(t, 2, 16, true, 2, CMB_BUS + 0x10000), GEN, NVME_SC_CMB_INVALID_USE);
	assert_st(create_sq_ex(t, 2, 128, 1, 0, CMB_BUS + (1 << 20) - 0x1000, NULL), GEN,
		  NVME_SC_INVALID_FIELD);
	/* an admin SQ in the CMB */
	ctl_disable(t);
	wr64(t, NVME_REG_ASQ, CMB_BUS);
	wr32(t, NVME_REG_CC, cc_value(0, 0));
	run(t);
	assert_int_equal(rd32(t, NVME_REG_CSTS), 1);
	t->sq[0].mem = t->h.d.fn.bar[2];
	t->sq[0].idx = 0;
	t->cq[0].idx = 0;
	t->cq[0].phase = 1;
	memset(ram(t, ACQ_ADDR), 0, 4096);
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
	e = admin(t, nvme_admin_get_features, 0, NVME_FEAT_FID_NUM_QUEUES, 0, 0);
	assert_ok(e);
	teardown_t(t);
	(void)state;
}

/* ---- media timing ---- */

static uint64_t timed_io(struct t *t, uint8_t opc, uint32_t nblocks)
{
	struct nvme_sqe s;
	struct nvme_cqe e;
	uint64_t t0, dt;

	nvme_sqe_init(&s, opc, 0, 1);
	nvme_rw_set(&s, 0, nblocks);
	prps(t, DATA_ADDR, nblocks * 512, &s.prp1, &s.prp2, PAGE);
	submit(t, 1, &s);
	t0 = smio_now_ns();
	ring(t, 1);
	poll1(t);
	assert_false(reap(t, 1, &e));
	while (!reap(t, 1, &e)) {
		if (smio_now_ns() - t0 > 2000000000ull)
			fail_msg("no completion within 2 s");
		poll1(t);
	}
	dt = smio_now_ns() - t0;
	assert_ok(e);
	return dt;
}

static void test_media_latency(void **state)
{
	static const char *const kv[] = { "latency_us", "2000" };
	static const char *const kv2[] = { "bandwidth_mbps", "100" };
	struct t *t;

	setup_params(&t, kv, 2, 0);
	ctl_enable(t);
	qpair(t, 1, 16);
	assert_true(timed_io(t, nvme_cmd_read, 8) >= 2000000ull);
	assert_true(timed_io(t, nvme_cmd_flush, 1) >= 2000000ull);
	/* the admin queue is not subject to media timing */
	assert_ok(admin(t, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, 0, ADMIN_BUF));
	teardown_t(t);
	/* 128 KiB at 100 MB/s takes >= 1.31 ms */
	setup_params(&t, kv2, 2, 0);
	ctl_enable(t);
	qpair(t, 1, 16);
	assert_true(timed_io(t, nvme_cmd_write, 256) >= 1310000ull);
	teardown_t(t);
	(void)state;
}

static void test_idle(void **state)
{
	struct t *t = *state;

	assert_int_equal(poll1(t), 0);
	ctl_enable(t);
	qpair(t, 1, 16);
	run(t);
	assert_int_equal(poll1(t), 0);
	assert_ok(rw(t, 1, nvme_cmd_write, 0, 1, DATA_ADDR, 9));
	assert_int_equal(poll1(t), 1);              /* the host's CQ head doorbell write */
	assert_int_equal(poll1(t), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reset_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ro_registers_restored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enable_disable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enable_cfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreachable_admin_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_dma_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown, setup, teardown),
		cmocka_unit_test(test_create_params),
		cmocka_unit_test(test_dstrd),
		cmocka_unit_test(test_identify_ctrl),
		cmocka_unit_test(test_identify_ns),
		cmocka_unit_test(test_identify_list_and_descriptors),
		cmocka_unit_test_setup_teardown(test_queue_create_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_delete_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_io_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prp_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prp_invalid_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_zeroes_dsm_flush, setup, teardown),
		cmocka_unit_test(test_file_backing),
		cmocka_unit_test_setup_teardown(test_cross_queue_and_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_1g_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrr_urgent_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rr_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrr_weights, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrr_burst, setup, teardown),
		cmocka_unit_test(test_wrr_slots_across_passes),
		cmocka_unit_test_setup_teardown(test_rr_shares_and_no_wrr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_msix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bus_master_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phase_wrap_and_cq_full, setup, teardown),
		cmocka_unit_test(test_delete_sq_with_pending),
		cmocka_unit_test(test_cmb_sq),
		cmocka_unit_test(test_media_latency),
		cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
	};

	return cmocka_run_group_tests_name("nvme", tests, NULL, NULL);
}
