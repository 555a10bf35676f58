/* SPDX-License-Identifier: MIT */
/*
 * NVMe controller model: internal state shared by ctrl.c (registers, queues,
 * arbitration, completions), admin.c, io.c, prp.c and ns.c.
 */
#ifndef SMARTIO_NVME_CTRL_H
#define SMARTIO_NVME_CTRL_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/dev.h"
#include "smartio/nvme_queue.h"

#define NVME_MAX_NS             256
#define NVME_PENDING_MAX        4096    /* executed commands awaiting their CQE */
#define NVME_AERL               3       /* 0-based: 4 outstanding AERs */
#define NVME_ACL                3       /* 0-based: 4 outstanding Aborts */
#define NVME_AEN_QUEUE          8       /* events waiting for an AER */
#define NVME_ERRLOG_ENTRIES     64      /* Identify ELPE + 1 */
#define NVME_ABORT_MAX          16      /* remembered aborts of unfetched commands */
#define NVME_POLL_BUDGET        256     /* commands fetched per poll pass */
#define NVME_MDTS               5       /* 2^5 * 4 KiB (CAP.MPSMIN) = 128 KiB */
#define NVME_MAX_XFER           (4096u << NVME_MDTS)
#define NVME_MAX_SG             (NVME_MAX_XFER / 4096 + 2)
#define NVME_MPSMIN             0
#define NVME_MPSMAX             4       /* 64 KiB pages */
#define NVME_TEMP_KELVIN        313     /* reported composite temperature (40 C) */
#define NVME_FETCH_RETRY_MIN_NS 1000000ull      /* SQ fetch failed: first retry after 1 ms */
#define NVME_FETCH_RETRY_MAX_NS 128000000ull    /* ... doubling up to 128 ms */

/* Set Features Arbitration (FID 01h) CDW11: HPW[31:24] MPW[23:16] LPW[15:8] AB[2:0]. */
#define NVME_ARB_AB(v)          ((v) & 7u)
#define NVME_ARB_LPW(v)         (((v) >> 8) & 0xffu)
#define NVME_ARB_MPW(v)         (((v) >> 16) & 0xffu)
#define NVME_ARB_HPW(v)         (((v) >> 24) & 0xffu)
#define NVME_ARB_RR             4       /* rr_next[] index of plain round robin */

/* Shorthands for status fields (libnvme layout, see nvme_queue.h). */
#define SC_OK                   0
#define SC_GEN(sc)              NVME_STATUS(NVME_SCT_GENERIC, NVME_SC_##sc)
#define SC_CMD(sc)              NVME_STATUS(NVME_SCT_CMD_SPECIFIC, NVME_SC_##sc)
#define SC_MEDIA(sc)            NVME_STATUS(NVME_SCT_MEDIA, NVME_SC_##sc)
#define SC_DNR                  NVME_SC_DNR

struct nvme_ns {
	uint32_t nsid;
	int fd;                 /* sparse memfd or file; pread/pwrite at LBA << lba_shift */
	/*
	 * A memfd is also mapped (read-only) so that reads DMA straight from it.
	 * Reading a hole through a shared mapping would allocate it, so `written`
	 * has a bit per 4 KiB page that may hold data (set by writes, cleared by
	 * deallocation): unwritten pages are read from zeroes instead. NULL for
	 * files and for namespaces too large to map.
	 */
	const uint8_t *map;
	uint64_t *written;
	uint64_t bytes;         /* the namespace's size */
	uint64_t base;          /* where it starts in fd (SR-IOV: this function's slice) */
	bool shared_media;      /* fd is a reference to media shared with PF/VFs (ns.c) */
	uint64_t nsze;          /* blocks */
	unsigned lba_shift;     /* 9 or 12 */
	uint8_t eui64[8];
	uint8_t nguid[16];
	uint8_t uuid[16];
};

/*
 * Timing-faithful mode: what a command of this SQ costs on real hardware
 * (timing.c), kept until the routes change (route epoch) or a command with
 * other data (direction, size, 2 MiB region of its first page) comes.
 */
struct nvme_qtime {
	bool valid;
	bool write;
	uint64_t epoch;
	uint64_t data_key;      /* PRP1 >> 21 */
	uint64_t size;
	uint64_t ns;            /* PCIe paths + media */
};

struct nvme_sq {
	bool valid;
	bool cmb;               /* entries live in the controller memory buffer */
	uint8_t prio;           /* QPRIO, used under weighted round robin */
	uint16_t cqid;
	uint32_t size;          /* entries */
	uint64_t base;          /* bus address (or CMB bus address) */
	uint32_t head, tail;
	uint32_t db_last;       /* last doorbell value seen, to act on changes only */
	/*
	 * A fetch of the entry at head failed (the queue's memory unreachable):
	 * head stays and the fetch is retried no sooner than retry_ns, the wait
	 * doubling from NVME_FETCH_RETRY_MIN_NS to NVME_FETCH_RETRY_MAX_NS.
	 * 0: not stalled.
	 */
	uint64_t retry_ns;
	uint64_t backoff_ns;
	struct nvme_qtime qt;
	/* the last read or write (log page C0h) */
	uint64_t last_prp1;
	uint32_t last_size;
	bool last_write, last_valid;
	uint64_t fetched;       /* commands fetched since the queue was created */
};

struct nvme_cq {
	bool valid;
	bool ien;
	bool irq;               /* entries posted in this pass: interrupt due */
	uint8_t phase;
	uint16_t iv;
	uint16_t nsq;           /* SQs that complete into this CQ */
	uint32_t size;
	uint64_t base;
	uint32_t head, tail;
	uint32_t db_last;
	bool losing;            /* entries are being lost (logged once per episode) */
};

/* An executed command whose completion is not yet posted. */
struct nvme_pending {
	uint64_t due_ns;        /* 0: as soon as the CQ has room */
	uint32_t dw0;
	uint16_t sqid, cqid, cid, st;
};

/* The command being executed. */
struct nvme_cmd {
	struct nvme_sqe sqe;
	uint16_t sqid;
	uint32_t dw0;           /* result for the CQE */
	uint64_t xfer;          /* media bytes moved, for the bandwidth model */
	uint64_t err_lba;       /* for the error log */
	bool deferred;          /* no completion now (AER) */
};

struct nvme_features {
	uint32_t arb;           /* 01: HPW/MPW/LPW/AB */
	uint32_t pm;            /* 02 */
	uint16_t tmpth_over;    /* 04, composite sensor */
	uint16_t tmpth_under;
	uint32_t err_rec;       /* 05 */
	uint32_t vwc;           /* 06 */
	uint32_t irq_coal;      /* 08 */
	uint32_t wr_atomic;     /* 0A */
	uint32_t aec;           /* 0B */
};

struct nvme_ctrl {
	struct dev_instance *d;

	/* configuration (params) */
	uint32_t nqueues;       /* I/O queue pairs */
	uint32_t nvec;          /* MSI-X vectors = nqueues + 1 */
	uint32_t mqes;          /* 0-based */
	unsigned dstrd;
	uint32_t nns;
	struct nvme_ns *ns;
	uint64_t latency_ns;
	uint64_t bw_mbps;
	uint64_t media_read_ns, media_write_ns;  /* timing-faithful mode */
	uint64_t cmb_size;
	bool cmb_data;            /* CMBSZ.RDS/WDS: data buffers may be in the CMB */
	bool wrr;               /* CAP.AMS: weighted round robin with urgent supported */
	uint16_t vid;
	char serial[21];

	/* register shadows */
	uint64_t cap;
	uint32_t cc, csts, intms, cmbloc, cmbsz;
	uint32_t page_size;
	unsigned page_shift;
	bool shutdown;

	/* queues, index = queue id */
	struct nvme_sq *sq;
	struct nvme_cq *cq;
	uint16_t *irq_list;             /* CQs with entries posted this pass */
	/*
	 * Doorbells: each pass compares every pair (SQ tail | CQ head << 32)
	 * with what it last acted on and looks closer only at changed ones.
	 * After any change of the queue set (reset, create, delete) the next
	 * pass compares each doorbell with its queue instead (db_rescan).
	 */
	uint64_t *db_seen;
	bool db_rescan;
	uint16_t *act_sq;               /* valid I/O SQ ids, ascending (arbitration) */
	uint32_t nact;
	const uint64_t *pba;            /* MSI-X pending bits (NULL: unknown) */
	uint32_t pba_words;
	bool pba_looked;
	unsigned nirq;
	uint32_t alloc_nsq, alloc_ncq;  /* Number of Queues (0-based counts + 1) */
	/*
	 * Arbitration (arb.c): CC.AMS as latched at enable; the SQ served last
	 * per class (index QPRIO, NVME_ARB_RR under round robin); the weighted
	 * level whose turn it is and the commands left of its turn.
	 */
	uint8_t ams;
	uint16_t rr_next[NVME_ARB_RR + 1];
	uint8_t wrr_level;
	uint32_t wrr_credit;
	uint32_t slots;                 /* I/O commands inside at most (0: no bound) */
	uint32_t io_busy;               /* ... inside now (counted per pass when bounded) */

	struct nvme_features feat;
	uint8_t *iv_cd;                 /* Interrupt Vector Configuration: CD per vector */

	/* asynchronous events */
	uint16_t aer_cid[NVME_AERL + 1];
	unsigned naer;
	uint32_t aen[NVME_AEN_QUEUE];
	unsigned naen;
	uint8_t aen_masked;             /* event types reported, not yet cleared by log read */

	/* logs and counters */
	struct nvme_error_log_page errlog[NVME_ERRLOG_ENTRIES];
	uint64_t err_count;
	/* queue DMA errors (never fatal: one queue's memory is not the controller's) */
	uint64_t cqe_lost;              /* completion entries whose write failed */
	uint64_t sq_fetch_errors;       /* SQ entry fetches that failed (each retry counts) */
	uint64_t pass_ns;               /* the clock, read at most once per pass (0: not yet) */
	uint64_t bytes_read, bytes_written, host_reads, host_writes;
	uint64_t busy_ns;
	uint64_t created_ns;

	/* completions in flight */
	struct nvme_pending *pend;
	unsigned npend;
	bool timed;                     /* latency or bandwidth configured */
	uint64_t media_free_ns;

	struct { uint16_t sqid, cid; } aborts[NVME_ABORT_MAX];
	unsigned naborts;

	uint8_t *buf;                   /* bounce buffer, NVME_MAX_XFER bytes */
};

typedef uint16_t (*nvme_cmd_fn)(struct nvme_ctrl *c, struct nvme_cmd *cmd);

/* config.c */
int nvme_parse_params(struct nvme_ctrl *c, char *err, size_t errlen);

/* timing.c: timing-faithful mode, a command's real-hardware time in ns */
uint64_t nvme_faithful_ns(struct nvme_ctrl *c, const struct nvme_cmd *cmd);
/* Log page C0h (smartio_timing_log_entry per queue ID) into buf; its size. */
size_t nvme_timing_log(struct nvme_ctrl *c, void *buf, size_t cap);

/* ctrl.c */
void nvme_aen(struct nvme_ctrl *c, unsigned type, unsigned info, unsigned lid);
void nvme_log_error(struct nvme_ctrl *c, uint16_t sqid, uint16_t cid, uint16_t st, uint32_t nsid,
		    uint64_t lba);
void nvme_sq_delete(struct nvme_ctrl *c, uint16_t qid);
void nvme_cq_delete(struct nvme_ctrl *c, uint16_t qid);
bool nvme_cmb_range(const struct nvme_ctrl *c, uint64_t addr, uint64_t len, uint64_t *off);
void nvme_features_default(struct nvme_ctrl *c);
/* For arb.c: the pass's clock, whether commands may run, a command's completion. */
uint64_t nvme_pass_now(struct nvme_ctrl *c);
bool nvme_ctrl_running(const struct nvme_ctrl *c);
void nvme_queue_completion(struct nvme_ctrl *c, const struct nvme_cmd *cmd, uint16_t st);

/* arb.c: fetch and run commands from the SQs by the arbitration in force; 1 if any. */
int nvme_arbitrate(struct nvme_ctrl *c);
/* The vendor log page SMARTIO_NVME_LOG_ARB: bytes [off, off + len) into dst
 * (the caller zeroes dst); returns the page's size. */
size_t nvme_arb_log(const struct nvme_ctrl *c, uint8_t *dst, size_t off, size_t len);

/* admin.c, io.c: dispatch by opcode */
uint16_t nvme_admin_exec(struct nvme_ctrl *c, struct nvme_cmd *cmd);
uint16_t nvme_io_exec(struct nvme_ctrl *c, struct nvme_cmd *cmd);

/* prp.c */
int nvme_dma(struct nvme_ctrl *c, uint64_t addr, void *buf, size_t len, bool to_host);
uint16_t nvme_prp_xfer(struct nvme_ctrl *c, const struct nvme_sqe *sqe, void *buf, uint32_t len,
		       bool to_host);

/* ns.c */
int nvme_ns_init(struct nvme_ctrl *c, char *err, size_t errlen);
void nvme_ns_fini(struct nvme_ctrl *c);
struct nvme_ns *nvme_ns_get(struct nvme_ctrl *c, uint32_t nsid);
void nvme_ns_identify(struct nvme_ctrl *c, const struct nvme_ns *ns, struct nvme_id_ns *id);
int nvme_ns_read(struct nvme_ns *ns, void *buf, size_t len, uint64_t off);
/* [off, off+len) as memory to DMA from (len <= NVME_MAX_XFER): the mapping
 * when every page was written, zeroes when none was; NULL: use nvme_ns_read. */
const void *nvme_ns_peek(const struct nvme_ns *ns, uint64_t off, size_t len);
int nvme_ns_write(struct nvme_ns *ns, const void *buf, size_t len, uint64_t off);
int nvme_ns_zero(struct nvme_ns *ns, uint64_t off, uint64_t len);
int nvme_ns_flush(struct nvme_ns *ns);

#endif
