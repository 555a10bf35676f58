/* SPDX-License-Identifier: MIT */
/* libsmartio-nvme manager internals (private): manager.c and mgr_rpc.c. */
#ifndef SNV_MGR_H
#define SNV_MGR_H

#include "snv_priv.h"

#define SNV_MGR_ASQ_ID     0x3e000001u   /* the manager's own device segments */
#define SNV_MGR_ACQ_ID     0x3e000002u
#define SNV_MAX_QUEUES     1024u
#define SNV_HB_MISSES      3u            /* failed liveness triggers before reclaiming */
/*
 * A path to a client that fails with a link error (its host answers, the
 * link between does not) is not a dead client: the manager tries its other
 * adapters, and reclaims only after this long without any path (longer than
 * any client waits for its link to come back; docs/nvme-driver.md).
 */
#define SNV_HB_LINK_GRACE_MS 30000u

struct snv_mclient {
	bool used;
	uint32_t id;              /* slot | generation << 16 */
	uint64_t token;
	uint32_t node, reply_intno, live_intno, pid;
	sci_remote_data_interrupt_t reply;
	sci_remote_interrupt_t live;
	uint32_t segid_base;
	unsigned misses;
	unsigned link_misses;     /* consecutive beats that failed for a link */
};

struct snv_mqueue {
	bool used;
	unsigned owner;           /* client slot */
	uint64_t cmb_off, cmb_len;  /* the SQ's CMB region (cmb_len 0: not in the CMB) */
	sci_remote_segment_t sq_rs, cq_rs;
	bool sq_mapped, cq_mapped;
	unsigned accel;           /* the SQ in an accelerator: 1 + its slot in m->accel; 0 none */
};

/* Accelerators holding SQs (SNV_QP_SQ_ACCEL), borrowed shared while they do. */
#define SNV_MGR_ACCELS     8u
struct snv_maccel {
	uint32_t fdid;
	unsigned users;           /* queues with their SQ in it; 0: slot free */
	sci_smartio_device_t dev;
};

struct snv_mpolicy {              /* a node's class (enum nvme_qprio) and rate limit */
	uint32_t node;
	uint8_t qprio;
	uint32_t iops;            /* per queue pair; 0: none */
};

struct snv_manager {
	struct snv_manager_opts o;
	sci_desc_t sd;
	sci_smartio_device_t dev;
	bool borrowed;
	sci_remote_segment_t bar_rs;
	sci_map_t bar_map;
	volatile uint8_t *bar;
	unsigned dstrd, mqes, to_ms;
	/* The controller memory buffer (CMBLOC/CMBSZ): its BAR, connected and mapped for
	 * the device; the manager hands out page-granular regions of it (mgr_cmb.c). */
	uint32_t cmb_bar, cmb_flags;  /* BIR; SNV_CMB_* (0: no usable CMB) */
	uint64_t cmb_off, cmb_size;   /* offset in the BAR, bytes */
	sci_remote_segment_t cmb_rs;
	bool cmb_mapped;
	sci_ioaddr_t cmb_io;          /* the CMB's bus address for the device */
	/* admin queues: device segments in the lender's RAM */
	sci_remote_segment_t asq_rs, acq_rs;
	sci_map_t asq_map, acq_map;
	bool asq_dev, acq_dev;
	struct nvme_sqe *asq;
	struct nvme_cqe *acq;
	sci_ioaddr_t asq_io, acq_io;
	uint32_t asq_tail, acq_head;
	uint8_t acq_phase;
	uint16_t next_cid;
	struct snv_dmamem data;   /* admin data (+ PRP list page at SNV_DATA_MAX) */
	sci_local_data_interrupt_t chan;
	bool have_chan;
	unsigned nqueues, qcursor;
	struct snv_mclient *cl;
	struct snv_mqueue q[SNV_MAX_QUEUES + 1];
	struct snv_maccel accel[SNV_MGR_ACCELS];
	uint16_t gen;
	uint64_t next_hb;
	volatile int stop;
	bool fatal_logged;
	struct snv_manager_stats st;
	/* arbitration and the class policy (mgr_policy.c) */
	bool wrr;                 /* weighted round robin with urgent class in force */
	uint32_t arb;             /* the Arbitration feature value set */
	uint8_t def_prio;         /* class of nodes the policy does not name */
	uint32_t def_iops;        /* ... and their rate limit (0: none) */
	struct snv_mpolicy *pol;
	unsigned npol;
	uint8_t in[SNV_MSG_MAX], out[SNV_MSG_MAX];
};

void snv_mlog(struct snv_manager *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run one admin command (the manager sets CID); returns its NVMe status
 * (0 = success) or a negative errno (timeout, controller fatal). */
int snv_mgr_admin(struct snv_manager *m, struct nvme_sqe *cmd, uint32_t *dw0);
/* Set PRP1/PRP2 of cmd for len bytes of the manager's data buffer. */
void snv_mgr_data_prps(struct snv_manager *m, struct nvme_sqe *cmd, size_t len);
/* Identify into multicast group `group` (mgr_mcast.c): 0 or -errno / NVMe status. */
int snv_mgr_admin_mcast(struct snv_manager *m, struct nvme_sqe *cmd, uint32_t group,
			uint32_t len, uint32_t *dw0);
void snv_mgr_handle(struct snv_manager *m, unsigned len);
void snv_mgr_heartbeat(struct snv_manager *m);
void snv_mgr_drop_client(struct snv_manager *m, unsigned slot, bool lost);
/* mgr_cmb.c: find and map the CMB at start (an unusable one is logged and
 * treated as absent: m->cmb_flags stays 0), release it. */
void snv_mgr_cmb_setup(struct snv_manager *m);
void snv_mgr_cmb_release(struct snv_manager *m);
/* First fit of len bytes (whole pages) not overlapping any queue's region:
 * the offset in the CMB, or -ENOSPC. */
int64_t snv_mgr_cmb_alloc(const struct snv_manager *m, uint64_t len);
/* mgr_accel.c: the accelerator fdid borrowed shared for one more queue's SQ:
 * its slot + 1 (for snv_mqueue.accel) in *slot; 0 or -errno. Put: one queue
 * less; the accelerator is returned when no queue uses it. Release: all (destroy). */
int snv_mgr_accel_get(struct snv_manager *m, uint32_t fdid, unsigned *slot);
sci_smartio_device_t snv_mgr_accel_dev(const struct snv_manager *m, unsigned slot);
void snv_mgr_accel_put(struct snv_manager *m, unsigned slot);
void snv_mgr_accel_release(struct snv_manager *m);

/* mgr_policy.c: parse the options (at start), CC.AMS to enable with (sets
 * m->wrr), the Arbitration feature (after enable), admission of a class:
 * 0 with *granted (enum nvme_qprio or SNV_QP_PRIO_NONE), or -EACCES /
 * -ENOTSUP with a reason in why. */
int snv_mgr_policy_init(struct snv_manager *m, char *err, size_t errlen);
uint32_t snv_mgr_policy_ams(struct snv_manager *m, uint64_t cap);
int snv_mgr_policy_apply(struct snv_manager *m, char *err, size_t errlen);
int snv_mgr_admit(const struct snv_manager *m, uint32_t node, uint32_t flags, uint32_t prio,
		  uint32_t *granted, uint32_t *iops, char *why, size_t whylen);
const char *snv_mgr_class_name(unsigned qprio);

#endif
