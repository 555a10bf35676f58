/* SPDX-License-Identifier: MIT */
/*
 * libsmartio-nvme RPC messages (private): the format of the data-interrupt
 * messages between clients and the manager (docs/nvme-driver.md, "RPC").
 *
 * Every message is a header followed by a type-specific body; all integers
 * are little-endian, the layout has no implicit padding. The receiver checks
 * magic, version, the length against what it received, the body size of the
 * type, and every field before acting.
 */
#ifndef SNV_MSG_H
#define SNV_MSG_H

#include <stddef.h>
#include <stdint.h>

#define SNV_MSG_MAGIC      0x31564e53u   /* "SNV1" */
#define SNV_MSG_VERSION    3u            /* 2: the CMB; 3: priority classes (CREATE_QP) */
#define SNV_MSG_MAX        4096u         /* a data interrupt's largest message */
#define SNV_REPLY          0x80u         /* type bit of replies */
#define SNV_CHUNK          3072u         /* data bytes per reply message */
#define SNV_DATA_MAX       16384u        /* largest relayed data transfer */
#define SNV_SEGIDS         256u          /* device segment IDs per client */

enum snv_msg_type {
	SNV_MSG_HELLO = 1,      /* open a session */
	SNV_MSG_BYE,            /* close it: the manager deletes the client's queues */
	SNV_MSG_ADMIN,          /* a relayed admin command (whitelisted, data returned) */
	SNV_MSG_CREATE_QP,      /* create an I/O CQ + SQ on the client's device segments */
	SNV_MSG_DELETE_QP,      /* delete one of the client's queue pairs */
};

struct snv_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;           /* header + body (+ data) in bytes */
	uint32_t client;        /* session ID (0 in HELLO) */
	uint64_t token;         /* session token (0 in HELLO; in the HELLO reply: the new token) */
	uint64_t seq;           /* request sequence number, echoed in the reply */
	int32_t status;         /* replies: 0, -errno, or a positive NVMe status */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct snv_hdr) == 40, "RPC header layout");

struct snv_hello {
	uint32_t node;          /* the client's node ID */
	uint32_t reply_intno;   /* its data interrupt for replies */
	uint32_t live_intno;    /* its plain interrupt the manager triggers for liveness */
	uint32_t pid;           /* for logs only */
};

struct snv_hello_reply {
	uint32_t segid_base;    /* the client's device segment IDs: [base, base + SNV_SEGIDS) */
	uint16_t nqueues;       /* I/O queue pairs of the controller */
	uint16_t max_depth;     /* MQES + 1 */
	uint32_t cmb_bar;       /* the BAR holding the CMB (CMBLOC.BIR); 0 without a CMB */
	uint32_t cmb_flags;     /* SNV_CMB_*: what the manager places there; 0: no CMB */
	uint64_t cmb_off;       /* the CMB's offset in that BAR (CMBLOC.OFST x unit) */
	uint64_t cmb_size;      /* its usable size in bytes (whole pages); 0 without a CMB */
};
_Static_assert(sizeof(struct snv_hello_reply) == 32, "HELLO reply layout");

#define SNV_CMB_SQ         0x1u          /* SQs in the CMB (CMBSZ.SQS) */

struct snv_admin {
	uint8_t sqe[64];        /* the command; the manager replaces CID and PRPs */
	uint32_t data_len;      /* bytes of data the command returns (0..SNV_DATA_MAX) */
	uint32_t mcast;         /* 0, or 1 + a multicast group: an Identify's data goes to
				 * the group's subscribers, not in the reply (mgr_mcast.c) */
};

/* Reply to ADMIN: one or more messages, each with this body and a chunk of data. */
struct snv_admin_reply {
	uint32_t dw0;
	uint32_t total;         /* data bytes in all chunks */
	uint32_t off;           /* this chunk's offset */
	uint32_t chunk;         /* bytes following this body */
};

struct snv_create_qp {
	uint32_t depth;         /* entries per queue */
	uint32_t sq_segid;      /* device segment with the SQ (the client's range); 0 with SQ_CMB */
	uint32_t cq_segid;      /* device segment with the CQ */
	uint32_t prio;          /* enum nvme_qprio (0 with PRIO_POLICY) */
	uint32_t flags;         /* SNV_QP_* */
	uint32_t sq_fdid;       /* with SQ_ACCEL: the accelerator holding sq_segid; else 0 */
};
_Static_assert(sizeof(struct snv_create_qp) == 24, "CREATE_QP layout");

/* The SQ goes in the CMB: the manager allocates the region and names it in the reply. */
#define SNV_QP_SQ_CMB      0x1u
/* No class asked for: the manager gives the one its policy names for the client's node. */
#define SNV_QP_PRIO_POLICY 0x2u
/* sq_segid/cq_segid are ordinary SISCI segments of the client's node (not device
 * segments), e.g. backed by an accelerator's BAR that drives the queues itself
 * (snv_devq_create); the manager connects them through its adapter. */
#define SNV_QP_EXT_SEGS    0x4u
/* sq_segid is a SHARED device segment of the accelerator sq_fdid (in its memory
 * BAR, placed by hints: fig. 34's "SQ in the lender's GPU"); the manager borrows
 * that accelerator shared, connects the segment through it and maps it for the
 * controller (peer-to-peer). A manager older than this flag refuses it. */
#define SNV_QP_SQ_ACCEL    0x8u

struct snv_qp_reply {
	uint32_t qid;
	uint32_t prio;          /* the class granted: enum nvme_qprio, or SNV_QP_PRIO_NONE */
	uint64_t sq_cmb_off;    /* with SQ_CMB: the SQ's page-aligned offset in the CMB; else 0 */
	uint32_t iops_limit;    /* commands per second the library paces the pair to; 0: none */
	uint32_t rsvd;          /* 0 */
};
_Static_assert(sizeof(struct snv_qp_reply) == 24, "CREATE_QP reply layout");

/* In the reply's prio: the manager runs round robin, classes have no effect. */
#define SNV_QP_PRIO_NONE   0xffu

struct snv_delete_qp {
	uint32_t qid;
	uint32_t rsvd;
};

#endif
