/* SPDX-License-Identifier: MIT */
/*
 * NVMe queue and command helpers shared by the controller model and the
 * drivers (the host's in-kernel driver, libsmartio-nvme): the 64-byte
 * submission queue entry, the 16-byte completion queue entry, doorbell
 * offsets, phase tags, PRP arithmetic and the status field. Installed as
 * <smartio/nvme_queue.h> next to <smartio/nvme.h>, for programs that build
 * raw SQEs (snv_submit_raw) or decode completion status.
 *
 * Header-only; depends on libc and libnvme's <nvme/types.h> (constants only:
 * Debian's libnvme-dev).
 * All structures are little-endian as on the wire; smartio runs on
 * little-endian hosts only (asserted below).
 */
#ifndef SMARTIO_NVME_QUEUE_H
#define SMARTIO_NVME_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <nvme/types.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "NVMe structures are accessed in place: little-endian hosts only");

/* ---- Submission queue entry (NVMe 1.4, Figure 105) ---- */

struct nvme_sqe {
	uint8_t opcode;
	uint8_t flags;          /* FUSE[1:0], reserved[5:2], PSDT[7:6] */
	uint16_t cid;           /* command identifier, unique per SQ while outstanding */
	uint32_t nsid;
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr;          /* metadata pointer */
	uint64_t prp1;          /* data pointer: PRP entry 1 */
	uint64_t prp2;          /* data pointer: PRP entry 2 or PRP list pointer */
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
};
_Static_assert(sizeof(struct nvme_sqe) == 64, "an NVMe SQE is 64 bytes");
_Static_assert(offsetof(struct nvme_sqe, prp1) == 24, "PRP1 is dwords 6-7");
_Static_assert(offsetof(struct nvme_sqe, cdw10) == 40, "CDW10 is dword 10");

#define NVME_SQE_FUSE(flags)    ((flags) & 0x3u)
#define NVME_SQE_PSDT(flags)    (((flags) >> 6) & 0x3u)
#define NVME_SQE_FLAGS_RSVD     0x3cu
#define NVME_SQES_LOG2          6   /* 2^6 = 64-byte SQEs (Identify SQES = 0x66) */

/* ---- Completion queue entry (NVMe 1.4, Figure 124) ---- */

struct nvme_cqe {
	uint32_t dw0;           /* command specific result */
	uint32_t dw1;           /* reserved */
	uint16_t sq_head;       /* SQ head pointer when the entry was posted */
	uint16_t sq_id;
	uint16_t cid;
	uint16_t status;        /* P[0] SC[8:1] SCT[11:9] CRD[13:12] M[14] DNR[15] */
};
_Static_assert(sizeof(struct nvme_cqe) == 16, "an NVMe CQE is 16 bytes");
_Static_assert(offsetof(struct nvme_cqe, cid) == 12, "CID is the low half of dword 3");

#define NVME_CQES_LOG2          4   /* 2^4 = 16-byte CQEs (Identify CQES = 0x44) */

/*
 * ---- Status field ----
 * "st" below is the status field without the phase tag, in libnvme's layout
 * (NVME_SC_* in bits 7:0, NVME_SCT_* in bits 10:8, NVME_SC_MORE, NVME_SC_DNR):
 * the CQE carries it shifted left by one with the phase tag in bit 0.
 */
#define NVME_STATUS(sct, sc)    ((uint16_t)((((sct) & 0x7u) << 8) | ((sc) & 0xffu)))
#define NVME_ST_SC(st)          ((unsigned)(st) & 0xffu)
#define NVME_ST_SCT(st)         (((unsigned)(st) >> 8) & 0x7u)
#define NVME_ST_CRD(st)         (((unsigned)(st) >> 11) & 0x3u)
#define NVME_ST_MORE(st)        (!!((st) & NVME_SC_MORE))
#define NVME_ST_DNR(st)         (!!((st) & NVME_SC_DNR))

static inline uint16_t nvme_cqe_status_encode(uint16_t st, unsigned phase)
{
	return (uint16_t)((st << 1) | (phase & 1u));
}

static inline uint16_t nvme_cqe_st(const struct nvme_cqe *e)
{
	return (uint16_t)(e->status >> 1);
}

static inline unsigned nvme_cqe_phase(const struct nvme_cqe *e)
{
	return e->status & 1u;
}

static inline unsigned nvme_cqe_sc(const struct nvme_cqe *e)
{
	return NVME_ST_SC(nvme_cqe_st(e));
}

static inline unsigned nvme_cqe_sct(const struct nvme_cqe *e)
{
	return NVME_ST_SCT(nvme_cqe_st(e));
}

static inline bool nvme_cqe_dnr(const struct nvme_cqe *e)
{
	return NVME_ST_DNR(nvme_cqe_st(e));
}

static inline bool nvme_cqe_more(const struct nvme_cqe *e)
{
	return NVME_ST_MORE(nvme_cqe_st(e));
}

/* ---- Doorbells (BAR0, NVMe 1.4 section 3.1.16/3.1.17) ---- */

#define NVME_DB_BASE            0x1000u

static inline uint64_t nvme_db_stride(unsigned dstrd)
{
	return 4ull << dstrd;
}

/* Submission Queue y Tail Doorbell. */
static inline uint64_t nvme_sq_tail_db(unsigned qid, unsigned dstrd)
{
	return NVME_DB_BASE + (2ull * qid) * nvme_db_stride(dstrd);
}

/* Completion Queue y Head Doorbell. */
static inline uint64_t nvme_cq_head_db(unsigned qid, unsigned dstrd)
{
	return NVME_DB_BASE + (2ull * qid + 1) * nvme_db_stride(dstrd);
}

/* First byte past the doorbells of queue pairs 0..npairs-1. */
static inline uint64_t nvme_db_end(unsigned npairs, unsigned dstrd)
{
	return NVME_DB_BASE + 2ull * npairs * nvme_db_stride(dstrd);
}

/* ---- Circular queue arithmetic (sizes are entry counts, 1-based) ---- */

static inline uint32_t nvme_q_next(uint32_t idx, uint32_t size)
{
	return idx + 1 == size ? 0 : idx + 1;
}

static inline bool nvme_q_empty(uint32_t head, uint32_t tail)
{
	return head == tail;
}

/* A queue is full when one slot is left: tail + 1 == head. */
static inline bool nvme_q_full(uint32_t head, uint32_t tail, uint32_t size)
{
	return nvme_q_next(tail, size) == head;
}

static inline uint32_t nvme_q_used(uint32_t head, uint32_t tail, uint32_t size)
{
	return tail >= head ? tail - head : size - head + tail;
}

/*
 * Phase tag: the controller writes entries with the current phase (1 on the
 * first pass after creation) and inverts it each time its tail wraps; the
 * host owns an entry whose phase equals the phase it expects.
 */
static inline void nvme_q_advance(uint32_t *idx, uint8_t *phase, uint32_t size)
{
	*idx = nvme_q_next(*idx, size);
	if (*idx == 0)
		*phase ^= 1;
}

static inline bool nvme_cqe_is_new(const struct nvme_cqe *e, unsigned expected_phase)
{
	uint16_t st = __atomic_load_n(&e->status, __ATOMIC_ACQUIRE);

	return (st & 1u) == (expected_phase & 1u);
}

/* ---- PRP arithmetic (NVMe 1.4 section 4.3) ---- */

#define NVME_PRP_ENTRY_SIZE     8u

/* Bytes described by PRP1: up to the end of its memory page. */
static inline uint64_t nvme_prp_first_len(uint64_t prp1, uint64_t len, uint64_t page)
{
	uint64_t room = page - (prp1 & (page - 1));

	return len < room ? len : room;
}

/* Data pages after the first segment (each one PRP entry). */
static inline uint64_t nvme_prp_rest_entries(uint64_t prp1, uint64_t len, uint64_t page)
{
	uint64_t rest = len - nvme_prp_first_len(prp1, len, page);

	return (rest + page - 1) / page;
}

/* PRP2 is a PRP list pointer (not a data pointer) when more than one page remains. */
static inline bool nvme_prp_needs_list(uint64_t prp1, uint64_t len, uint64_t page)
{
	return nvme_prp_rest_entries(prp1, len, page) > 1;
}

/* Entries that fit in a PRP list starting at list address `list`. */
static inline uint64_t nvme_prp_list_room(uint64_t list, uint64_t page)
{
	return (page - (list & (page - 1))) / NVME_PRP_ENTRY_SIZE;
}

/*
 * Number of page-sized PRP list pages needed for `entries` data entries when
 * each list starts page-aligned: every list but the last gives its last slot
 * to the pointer to the next list.
 */
static inline uint64_t nvme_prp_list_pages(uint64_t entries, uint64_t page)
{
	uint64_t per = page / NVME_PRP_ENTRY_SIZE, pages = 1;

	if (entries <= 1)
		return 0;
	while (entries > per) {
		entries -= per - 1;
		pages++;
	}
	return pages;
}

/* ---- Command dword helpers (host side builds, controller side parses) ---- */

static inline void nvme_sqe_init(struct nvme_sqe *s, uint8_t opcode, uint16_t cid, uint32_t nsid)
{
	memset(s, 0, sizeof(*s));
	s->opcode = opcode;
	s->cid = cid;
	s->nsid = nsid;
}

/* Create I/O CQ/SQ CDW10: QSIZE (0-based) and QID. */
static inline uint32_t nvme_cdw10_queue(uint16_t qid, uint32_t entries)
{
	return ((entries - 1) & 0xffffu) << 16 | qid;
}

#define NVME_CDW10_QID(v)       ((v) & 0xffffu)
#define NVME_CDW10_QSIZE(v)     ((v) >> 16)          /* 0-based */

/* Create I/O CQ CDW11: IV[31:16], IEN[1], PC[0]. */
static inline uint32_t nvme_cdw11_create_cq(uint16_t iv, bool ien)
{
	return (uint32_t)iv << 16 | (ien ? 2u : 0u) | 1u;
}

#define NVME_CQ_IV(cdw11)       ((cdw11) >> 16)
#define NVME_CQ_IEN(cdw11)      (((cdw11) >> 1) & 1u)
#define NVME_Q_PC(cdw11)        ((cdw11) & 1u)

/* Create I/O SQ CDW11: CQID[31:16], QPRIO[2:1], PC[0]. */
enum nvme_qprio {
	NVME_QPRIO_URGENT = 0,
	NVME_QPRIO_HIGH = 1,
	NVME_QPRIO_MEDIUM = 2,
	NVME_QPRIO_LOW = 3,
};

static inline uint32_t nvme_cdw11_create_sq(uint16_t cqid, enum nvme_qprio prio)
{
	return (uint32_t)cqid << 16 | ((uint32_t)prio & 3u) << 1 | 1u;
}

#define NVME_SQ_CQID(cdw11)     ((cdw11) >> 16)
#define NVME_SQ_QPRIO(cdw11)    (((cdw11) >> 1) & 3u)

/* Read/Write/Write Zeroes: SLBA in CDW10-11, NLB (0-based) in CDW12[15:0]. */
static inline uint64_t nvme_rw_slba(const struct nvme_sqe *s)
{
	return (uint64_t)s->cdw11 << 32 | s->cdw10;
}

static inline uint32_t nvme_rw_nlb(const struct nvme_sqe *s)
{
	return (s->cdw12 & 0xffffu) + 1;
}

static inline void nvme_rw_set(struct nvme_sqe *s, uint64_t slba, uint32_t nblocks)
{
	s->cdw10 = (uint32_t)slba;
	s->cdw11 = (uint32_t)(slba >> 32);
	s->cdw12 = (s->cdw12 & ~0xffffu) | ((nblocks - 1) & 0xffffu);
}

#define NVME_RW_LR              (1u << 31)
#define NVME_RW_FUA             (1u << 30)
#define NVME_WZ_DEAC            (1u << 25)

/* Get Log Page: dword count (0-based NUMD split over CDW10/CDW11) and offset. */
static inline uint64_t nvme_log_len(const struct nvme_sqe *s)
{
	return (((uint64_t)(s->cdw11 & 0xffffu) << 16 | (s->cdw10 >> 16)) + 1) * 4;
}

static inline uint64_t nvme_log_offset(const struct nvme_sqe *s)
{
	return (uint64_t)s->cdw13 << 32 | s->cdw12;
}

static inline void nvme_log_set(struct nvme_sqe *s, uint8_t lid, uint32_t len, uint64_t off)
{
	uint32_t numd = len / 4 - 1;

	s->cdw10 = (numd & 0xffffu) << 16 | lid;
	s->cdw11 = numd >> 16;
	s->cdw12 = (uint32_t)off;
	s->cdw13 = (uint32_t)(off >> 32);
}

/*
 * smartio's vendor-specific log page C1h: arbitration statistics of the
 * controller model (docs/devices.md, "Arbitration"). A header, then one
 * entry per queue ID 0..nsq-1; `fetched` counts the commands fetched from
 * the SQ since it was created (so a window's share is the difference of
 * two reads).
 */
#define SMARTIO_NVME_LOG_ARB    0xc1

struct smartio_nvme_arb_log {
	uint8_t version;        /* 1 */
	uint8_t ams;            /* CC.AMS in force: 0 round robin, 1 WRR + urgent */
	uint16_t nsq;           /* entries following (I/O queues + 1) */
	uint32_t arb;           /* the Arbitration feature (HPW/MPW/LPW/AB) */
	uint32_t slots;         /* I/O commands inside the controller at most; 0: no bound */
	uint32_t rsvd;
};

struct smartio_nvme_arb_log_sq {
	uint64_t fetched;
	uint16_t sqid;
	uint8_t valid;          /* the SQ exists */
	uint8_t prio;           /* its QPRIO (enum nvme_qprio) */
	uint32_t rsvd;
};

/* Asynchronous event completion DW0: type[2:0], info[15:8], log page[23:16]. */
static inline uint32_t nvme_aen_dw0(unsigned type, unsigned info, unsigned lid)
{
	return (type & 7u) | (info & 0xffu) << 8 | (lid & 0xffu) << 16;
}

/* ---- smartio's vendor-specific log page: the timing model's view ---- */

/*
 * Log page C0h of the smartio NVMe model (docs/devices.md): one entry per
 * queue ID (entry 0, the admin queue, unused), saying what the last read or
 * write on that SQ would cost on real PCIe hardware over the routes its SQ,
 * CQ and data actually take (the timing model, docs/timing-model.md).
 */
#define SMARTIO_LOG_LID_TIMING          0xc0
#define SMARTIO_TIMING_RAN              0x01    /* a read or write ran on this SQ */
#define SMARTIO_TIMING_COMPLETE         0x02    /* every path resolved (else some count 0) */

struct smartio_timing_log_entry {
	uint8_t flags;          /* SMARTIO_TIMING_* */
	uint8_t write;          /* that command was a write */
	uint16_t rsvd;
	uint32_t size;          /* its bytes */
	uint32_t doorbell_ns, fetch_ns, media_ns, data_ns, cqe_ns;
	uint32_t total_ns;      /* doorbell to completion entry */
	uint32_t rsvd2[8];
};
_Static_assert(sizeof(struct smartio_timing_log_entry) == 64, "64-byte log entries");

#endif
