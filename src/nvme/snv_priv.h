/* SPDX-License-Identifier: MIT */
/*
 * libsmartio-nvme internals shared by the manager, the client and the data
 * path. Not installed.
 */
#ifndef SNV_PRIV_H
#define SNV_PRIV_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <nvme/types.h>

#include "sisci_api.h"
#include "smartio/nvme.h"
#include "smartio/nvme_queue.h"
#include "snv_msg.h"

#define SNV_PAGE           4096u
#define SNV_BAR0_SIZE      0x4000u
#define SNV_PRP_ENTRIES    32u           /* PRP list entries per buffer page (128 KiB) */
#define SNV_MAX_XFER       (128u * 1024) /* library cap on one transfer */
#define SNV_NS_CACHE       16u           /* namespaces whose LBA size the client caches */

/*
 * BAR0 registers and their fields are libnvme's (<nvme/types.h>: NVME_REG_*,
 * NVME_CAP_*(), NVME_CSTS_*(), NVME_CMBSZ_*(), ...). Its *_MASK constants are
 * unshifted, so single bits to test or set in place are spelled here.
 */
#define SNV_CSTS_RDY      NVME_SET(1u, CSTS_RDY)
#define SNV_CSTS_CFS      NVME_SET(1u, CSTS_CFS)
#define SNV_CC_EN         NVME_SET(1u, CC_EN)

/* ---- util.c ---- */
int snv_errno(sci_error_t e);
void snv_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void snv_pause_ms(unsigned ms);
uint64_t snv_random64(void);
/* A growing array of pointers: append (-ENOMEM), remove p (order not kept). */
int snv_list_add(void ***arr, unsigned *n, unsigned *cap, void *p);
void snv_list_del(void **arr, unsigned *n, void *p);
static inline uint32_t snv_rd32(volatile uint8_t *bar, unsigned off)
{
	return __atomic_load_n((volatile uint32_t *)(bar + off), __ATOMIC_ACQUIRE);
}
static inline uint64_t snv_rd64(volatile uint8_t *bar, unsigned off)
{
	return __atomic_load_n((volatile uint64_t *)(bar + off), __ATOMIC_ACQUIRE);
}
static inline void snv_wr32(volatile uint8_t *bar, uint64_t off, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *)(bar + off), v, __ATOMIC_RELEASE);
}
static inline void snv_wr64(volatile uint8_t *bar, unsigned off, uint64_t v)
{
	__atomic_store_n((volatile uint64_t *)(bar + off), v, __ATOMIC_RELEASE);
}
/* Check a received message's header; returns the body length or -EPROTO. */
long snv_msg_check(const void *msg, unsigned len);
void snv_msg_init(struct snv_hdr *h, unsigned type, unsigned len);

/* ---- A memory segment mapped for the device (buffers, PRP pools, admin data) ---- */
struct snv_dmamem {
	sci_local_segment_t seg;
	sci_map_t map;
	bool mapped_dev;
	void *vaddr;
	size_t size;
	sci_ioaddr_t io;
};
int snv_dmamem_alloc(sci_desc_t sd, unsigned adapter, sci_smartio_device_t dev, size_t size,
		     struct snv_dmamem *m);
void snv_dmamem_free(struct snv_dmamem *m, unsigned adapter, sci_smartio_device_t dev);

/* ---- Client ---- */
struct snv_devseg {               /* a queue's device segment, reusable after delete */
	uint32_t id;
	size_t size;
	enum snv_place place;
	unsigned adapter;         /* the path the client reaches it through */
	bool in_use;
	sci_remote_segment_t rs;
	sci_map_t map;
	volatile void *vaddr;
	/* SNV_PLACE_ACCEL: also mapped for the controller, to learn where it fetches */
	bool dev_mapped;
	uint64_t dev_io;
};

struct snv_client {
	pthread_mutex_t lock;     /* admin calls and the lists below */
	sci_desc_t sd;
	unsigned adapter;
	uint32_t fdid, node, manager_node, channel;
	unsigned timeout_ms;
	sci_smartio_device_t dev;
	bool borrowed;
	sci_remote_segment_t bar_rs;
	sci_map_t bar_map;
	volatile uint8_t *bar;
	/*
	 * Multipath (docs/nvme-driver.md, "Failover"): the doorbells again
	 * through the backup adapter; pdown is set by the primary BAR
	 * connection's callback while its path is not operational.
	 */
	bool mp;
	unsigned bk_adapter, failover_ms, io_timeout_ms;
	sci_remote_segment_t bk_bar_rs;
	sci_map_t bk_bar_map;
	volatile uint8_t *bk_bar;
	int pdown;                /* atomic */
	unsigned pevents;         /* atomic: path events heard */
	/* The CMB as the manager described it; its BAR is mapped on first use. */
	uint32_t cmb_bar, cmb_flags;
	uint64_t cmb_off, cmb_size;
	sci_remote_segment_t cmb_rs;
	sci_map_t cmb_map;
	volatile uint8_t *cmb;
	/* The accelerator holding SQs (SNV_PLACE_ACCEL), borrowed shared on first use. */
	sci_smartio_device_t accel;
	uint32_t accel_fdid;      /* 0: none borrowed */
	sci_local_data_interrupt_t reply;
	sci_local_interrupt_t live;
	sci_remote_data_interrupt_t chan;
	bool have_reply, have_live, have_chan;
	uint32_t reply_intno, live_intno;
	uint32_t client_id;
	uint64_t token, seq;
	uint32_t segid_base, segid_next;
	unsigned nqueues, max_depth, dstrd, max_xfer;
	uint32_t nn;
	uint8_t lba_shift[SNV_NS_CACHE + 1];
	uint64_t nlb[SNV_NS_CACHE + 1];
	struct snv_devseg segs[SNV_SEGIDS];
	unsigned nsegs;
	struct snv_qpair **qps;
	unsigned nqps, cap_qps;
	struct snv_buf **bufs;
	unsigned nbufs, cap_bufs;
	uint8_t msg[SNV_MSG_MAX];
};

/* One RPC: send hdr+body (len bytes in c->msg), wait for the reply(s).
 * `data` receives returned data (up to data_cap). Returns the reply status
 * (0, -errno or a positive NVMe status). */
int snv_rpc(struct snv_client *c, unsigned type, const void *body, unsigned blen,
	    void *reply_body, unsigned rb_len, void *data, size_t data_cap, uint32_t *dw0);

/*
 * A buffer and its PRP table: for each page p of the buffer, the PRP list a
 * transfer whose first page is p needs (the device addresses of pages p+1 ..
 * p+32), written once at allocation. Lists depend only on where a transfer
 * starts, so concurrent commands never write PRP memory. The table is a
 * device segment in the lender's RAM: the controller reads lists locally.
 */
struct snv_buf {
	struct snv_client *c;
	struct snv_dmamem mem;    /* the data */
	struct snv_devseg *tseg;  /* the table */
	bool tseg_mapped;
	size_t size;              /* data bytes */
	uint64_t io;              /* device address of the data */
	uint64_t tbl_io;          /* device address of the table */
	bool registered;
	/* The same through the backup path (multipath clients). */
	struct snv_devseg *tseg2;
	bool tseg2_mapped;
	uint64_t io2, tbl_io2;
};

/* One NVMe SQ/CQ pair as the controller knows it, on one path. */
struct snv_hwq {
	uint16_t qid;                     /* 0: none */
	struct snv_devseg *sqs, *cqs;     /* sqs NULL: the SQ is in the CMB */
	uint64_t sq_cmb_off;              /* its offset there, from the manager */
	uint64_t sq_io;                   /* where the controller fetches (0: not known) */
	struct nvme_sqe *sq;
	struct nvme_cqe *cq;
	volatile uint32_t *sq_db, *cq_db;
	uint32_t sq_tail, cq_head;
	uint8_t cq_phase;
	unsigned inflight;
};

/* A command until it completes: enough to submit it again on another path. */
struct snv_cmd {
	struct nvme_sqe sqe;              /* as submitted (PRPs of the path it is on) */
	struct snv_buf *buf;              /* NULL: flush or raw (resubmitted as is) */
	size_t off;
	uint64_t len;
	uint64_t t_ns;                    /* submitted (timeouts) */
	uint8_t on;                       /* which hw queue */
	uint8_t epoch;                    /* in the CID's top bits: late completions */
};

#define SNV_CID_SLOT_BITS 12u
#define SNV_RATE_BURST_MS 10u             /* a rate-limited pair may burst 10 ms worth */             /* CID = slot | epoch << 12 (depth <= 4096) */

struct snv_qpair {
	struct snv_client *c;
	uint32_t depth;
	enum snv_prio want, got;          /* class asked for, class granted */
	/*
	 * The manager's rate limit for this pair (0: none): a token bucket of
	 * up to SNV_RATE_BURST_MS worth of commands, refilled at iops_limit
	 * per second; a submission without a token is -EAGAIN.
	 */
	uint32_t iops_limit;
	double tokens;
	uint64_t tokens_ns;
	struct snv_hwq hw[2];             /* [0] primary path, [1] backup (multipath) */
	unsigned act;                     /* the hw queue new commands go to */
	enum snv_place sp, cp;            /* of the primary (recreated on resume) */
	bool mp, dead;
	unsigned seen_events;             /* c->pevents when last looked */
	uint64_t next_try_ns, on_backup_ns;
	unsigned inflight;
	uint16_t *free_cids;
	unsigned nfree;
	void **cookies;
	uint8_t *busy;
	struct snv_cmd *cmds;
	struct snv_qpair_stats st;
};

/* qpair.c: queue memory (a device segment placed by p), for buffer.c's PRP tables too */
int snv_get_seg(struct snv_client *c, bool sq, enum snv_place p, size_t size,
		unsigned adapter, struct snv_devseg **out);
/* qpair.c for multipath.c */
int snv_hwq_create(struct snv_qpair *q, unsigned h, enum snv_place sp, enum snv_place cp);
int snv_hwq_delete(struct snv_client *c, struct snv_hwq *w);
uint64_t snv_now_ns(void);
void snv_hwq_ring(struct snv_qpair *q, unsigned h, uint16_t slot);
/* multipath.c */
void snv_mp_check(struct snv_qpair *q);
int snv_mp_client_open(struct snv_client *c);
int snv_mp_bar_primary(struct snv_client *c);
void snv_mp_client_close(struct snv_client *c);
int snv_mp_buf_setup(struct snv_client *c, struct snv_buf *b);
void snv_prp_set(struct nvme_sqe *s, const struct snv_buf *buf, size_t off, uint64_t len,
		 bool backup);

#endif
