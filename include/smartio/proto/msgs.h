/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol: the one list of messages.
 *
 * Every message is one row of SMIO_MSG_LIST below, and everything else about
 * it is generated from that row: its SMIO_<NAME> in enum smio_type, the
 * codec's table (src/proto/proto.c: payload lengths, validators, names), the
 * roles allowed to send it and its flags, which smartiod enforces
 * (smio_msg_roles, smio_msg_flags), and the list that tests and fuzzers walk
 * (smio_msg_count, smio_msg_at). docs/protocol.md says how to add a message.
 *
 * A row is X(NAME, number, family, roles, flags, request, reply):
 *
 *   NAME     SMIO_<NAME> = number in enum smio_type; smio_type_name() says "NAME".
 *   number   the type on the wire. Old daemons and clients know a message by
 *            it: never renumber, never reuse a retired number. Rows are in
 *            increasing number order (a test checks it).
 *   family   CORE, ROUTE, NTB, IOMMU, DRIVER, SEG, INTR, DMA, DEV or LEND
 *            (enum smio_family): which proto/<family>.h holds its payloads.
 *   roles    SMIO_R_* bits: who may send the request (smartiod answers
 *            others with -EPERM). HELLO is answered before a connection has
 *            a role (it gives it one), so its row says any.
 *   flags    SMIO_MSG_F_* bits, or 0.
 *   request, reply  the payload of each direction, one of
 *            SMIO_PL_EMPTY              len == 0
 *            SMIO_PL_FIXED(s, check)    len == sizeof(struct s)
 *            SMIO_PL_VAR(s, check)      len >= sizeof(struct s), the fixed
 *                                       head; check() bounds the rest
 *            SMIO_PL_BYTES(n, check)    len == n, raw bytes
 *            SMIO_PL_NONE               no such direction: the reply of a
 *                                       one-way (SMIO_MSG_F_NO_REPLY) message
 *            check is the validator smio_payload_check() runs once the length
 *            rule holds. Validators are private to the codec (src/proto,
 *            declared in proto_priv.h with hidden visibility): only the codec
 *            expands the check column.
 *
 * An error reply (status < 0) may always be empty, whatever the reply column.
 */
#ifndef SMARTIO_PROTO_MSGS_H
#define SMARTIO_PROTO_MSGS_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* Who may send a request: bits of enum smio_role. */
#define SMIO_ROLE_BIT(role)  (1u << (role))
#define SMIO_R_CLIENT   SMIO_ROLE_BIT(SMIO_ROLE_CLIENT)
#define SMIO_R_PEER     SMIO_ROLE_BIT(SMIO_ROLE_PEER)
#define SMIO_R_ADMIN    SMIO_ROLE_BIT(SMIO_ROLE_ADMIN)
#define SMIO_R_LOCAL    (SMIO_R_CLIENT | SMIO_R_ADMIN)   /* processes of this host */
#define SMIO_R_ANY      (SMIO_R_LOCAL | SMIO_R_PEER)

/* Message flags. A new flag takes the next free bit and joins SMIO_MSG_F_KNOWN. */
#define SMIO_MSG_F_NO_REPLY  0x1u   /* one-way: no reply is sent; a reply is -EPROTO */
#define SMIO_MSG_F_KNOWN     (SMIO_MSG_F_NO_REPLY)

enum smio_family {
	SMIO_FAM_CORE = 1,   /* the host: HELLO, STATUS, functions, config space (core.h) */
	SMIO_FAM_ROUTE,      /* routes, also across hosts (route.h) */
	SMIO_FAM_NTB,        /* NTB adapters and their far side (ntb.h) */
	SMIO_FAM_IOMMU,      /* the host's IOMMU (iommu.h) */
	SMIO_FAM_DRIVER,     /* the host's in-kernel drivers (driver.h) */
	SMIO_FAM_SEG,        /* SISCI segments (seg.h) */
	SMIO_FAM_INTR,       /* SISCI interrupts (intr.h) */
	SMIO_FAM_DMA,        /* SISCI DMA queues (dma.h) */
	SMIO_FAM_DEV,        /* the SmartIO device pool (dev.h) */
	SMIO_FAM_LEND,       /* Device Lending (lend.h) */
	SMIO_FAM_COUNT       /* one past the last family */
};

enum smio_payload_kind {
	SMIO_PAYLOAD_NONE = 0,   /* no such direction (a one-way message's reply) */
	SMIO_PAYLOAD_EMPTY,      /* len == 0 */
	SMIO_PAYLOAD_FIXED,      /* len == size */
	SMIO_PAYLOAD_VAR,        /* len >= size, the fixed head; the validator bounds the rest */
};

/*
 * The payload columns of the list. Each expands to a tuple
 * (kind, size, validator) that the list's users take apart; a user that
 * reads the size needs the family headers (include "smartio/proto.h").
 */
#define SMIO_PL_NONE             (SMIO_PAYLOAD_NONE, 0, 0)
#define SMIO_PL_EMPTY            (SMIO_PAYLOAD_EMPTY, 0, 0)
#define SMIO_PL_FIXED(s, check)  (SMIO_PAYLOAD_FIXED, sizeof(struct s), check)
#define SMIO_PL_VAR(s, check)    (SMIO_PAYLOAD_VAR, sizeof(struct s), check)
#define SMIO_PL_BYTES(n, check)  (SMIO_PAYLOAD_FIXED, (n), check)

#define SMIO_MSG_LIST(X)									\
	/* core: the host and its cluster (core.h) */						\
	X(HELLO,                  1, CORE,   SMIO_R_ANY,   0, /* first on every connection */	\
	  SMIO_PL_FIXED(smio_hello, check_hello),						\
	  SMIO_PL_FIXED(smio_hello_reply, check_hello_reply))					\
	X(STATUS,                 2, CORE,   SMIO_R_ANY,   0,					\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_FIXED(smio_status, check_status))						\
	X(SHUTDOWN,               3, CORE,   SMIO_R_ADMIN, 0, /* daemon exits after replying */	\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_EMPTY)									\
	X(NODE_LIST,              4, CORE,   SMIO_R_LOCAL, 0, /* the cluster's hosts */		\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_node_list, smio_check_node_list))					\
	X(FUNC_LIST,             10, CORE,   SMIO_R_LOCAL, 0,					\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_func_list, check_func_list))						\
	X(CFG_READ,              11, CORE,   SMIO_R_LOCAL, 0, /* value filled */		\
	  SMIO_PL_FIXED(smio_cfg, check_cfg),							\
	  SMIO_PL_FIXED(smio_cfg, check_cfg))							\
	X(CFG_WRITE,             12, CORE,   SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_cfg, check_cfg),							\
	  SMIO_PL_EMPTY)									\
	X(CFG_DUMP,              13, CORE,   SMIO_R_LOCAL, 0, /* raw config space */		\
	  SMIO_PL_FIXED(smio_bdf, check_bdf),							\
	  SMIO_PL_BYTES(SMIO_CFG_SPACE, check_cfg_dump_reply))					\
												\
	/* routes (route.h) */									\
	X(ROUTE,                 20, ROUTE,  SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_route_req, check_route_req),					\
	  SMIO_PL_VAR(smio_route_reply, check_route_reply))					\
	X(MAP,                   21, ROUTE,  SMIO_R_LOCAL, 0, /* reply + fd */			\
	  SMIO_PL_FIXED(smio_route_req, check_route_req),					\
	  SMIO_PL_FIXED(smio_map_reply, check_map_reply))					\
												\
	/* NTB adapters (ntb.h) */								\
	X(NTB_INFO,              30, NTB,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_ntb_ref, check_ntb_ref),						\
	  SMIO_PL_FIXED(smio_ntb_info, check_ntb_info))						\
	X(NTB_LUT_SET,           31, NTB,    SMIO_R_ADMIN, 0, /* entry filled in */		\
	  SMIO_PL_FIXED(smio_ntb_lut, check_ntb_lut),						\
	  SMIO_PL_FIXED(smio_ntb_lut, check_ntb_lut))						\
	X(NTB_LUT_CLEAR,         32, NTB,    SMIO_R_ADMIN, 0, /* entry only */			\
	  SMIO_PL_FIXED(smio_ntb_lut, check_ntb_lut_clear),					\
	  SMIO_PL_EMPTY)									\
	X(NTB_RID_ADD,           33, NTB,    SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_ntb_rid, check_ntb_rid),						\
	  SMIO_PL_EMPTY)									\
	X(NTB_RID_DEL,           34, NTB,    SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_ntb_rid, check_ntb_rid),						\
	  SMIO_PL_EMPTY)									\
	X(NTB_LINK,              35, NTB,    SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_ntb_link, check_ntb_link),						\
	  SMIO_PL_EMPTY)									\
	X(NTB_DB_RING,           36, NTB,    SMIO_R_ADMIN, 0, /* rings the far side */		\
	  SMIO_PL_FIXED(smio_ntb_db, check_ntb_db),						\
	  SMIO_PL_EMPTY)									\
	X(NTB_SPAD,              37, NTB,    SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_ntb_spad, check_ntb_spad),						\
	  SMIO_PL_FIXED(smio_ntb_spad, check_ntb_spad))						\
	X(ADAPTER_INFO,          38, NTB,    SMIO_R_LOCAL, 0, /* this host's adapters */	\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_adapter_list, smio_check_adapter_list))				\
	X(PROBE_NODE,            39, NTB,    SMIO_R_LOCAL, 0, /* asks the node's daemon */	\
	  SMIO_PL_FIXED(smio_probe_node, smio_check_probe_node),				\
	  SMIO_PL_EMPTY)									\
												\
	/* the IOMMU (iommu.h) */								\
	X(IOMMU_DOMAIN,          40, IOMMU,  SMIO_R_ADMIN, 0, /* op alloc/free/attach/detach */	\
	  SMIO_PL_FIXED(smio_iommu, check_iommu),						\
	  SMIO_PL_FIXED(smio_iommu, check_iommu))						\
	X(IOMMU_MAP,             41, IOMMU,  SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_iommu_map, check_iommu_map),					\
	  SMIO_PL_EMPTY)									\
	X(IOMMU_UNMAP,           42, IOMMU,  SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_iommu_map, check_iommu_map),					\
	  SMIO_PL_EMPTY)									\
	X(IOMMU_FAULTS,          43, IOMMU,  SMIO_R_LOCAL, 0,					\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_iommu_faults, check_iommu_faults))					\
												\
	/* between daemons: a route across hosts (route.h), the far side of an NTB (ntb.h) */	\
	X(PEER_STEP,             60, ROUTE,  SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_step, check_step),							\
	  SMIO_PL_VAR(smio_route_reply, check_route_reply))					\
	X(PEER_INVALIDATE,       61, ROUTE,  SMIO_R_PEER,  SMIO_MSG_F_NO_REPLY,			\
	  SMIO_PL_FIXED(smio_invalidate, check_invalidate),					\
	  SMIO_PL_NONE)										\
	X(PEER_DB,               62, NTB,    SMIO_R_PEER,  0, /* arrival side of NTB_DB_RING */	\
	  SMIO_PL_FIXED(smio_ntb_db, check_ntb_db),						\
	  SMIO_PL_EMPTY)									\
	X(PEER_SPAD,             63, NTB,    SMIO_R_PEER,  0, /* arrival side of NTB_SPAD */	\
	  SMIO_PL_FIXED(smio_ntb_spad, check_ntb_spad),						\
	  SMIO_PL_FIXED(smio_ntb_spad, check_ntb_spad))						\
												\
	/* the host's in-kernel drivers, like ioctls (driver.h) */				\
	X(NVME_ADMIN,            70, DRIVER, SMIO_R_LOCAL, 0, /* + data either way */		\
	  SMIO_PL_VAR(smio_nvme_admin, smio_check_nvme_admin),					\
	  SMIO_PL_VAR(smio_nvme_cpl, smio_check_nvme_cpl))					\
	X(NVME_IO,               71, DRIVER, SMIO_R_LOCAL, 0, /* + data either way */		\
	  SMIO_PL_VAR(smio_nvme_io, smio_check_nvme_io),					\
	  SMIO_PL_VAR(smio_nvme_cpl, smio_check_nvme_cpl))					\
	X(ACCEL_OP,              80, DRIVER, SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_accel_op, smio_check_accel_op),					\
	  SMIO_PL_FIXED(smio_accel_result, smio_check_accel_result))				\
												\
	/* SISCI segments (seg.h; 140..143 below) */						\
	X(SEG_CREATE,            90, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_create, smio_check_seg_create),				\
	  SMIO_PL_FIXED(smio_seg_info, smio_check_seg_info))					\
	X(SEG_REMOVE,            91, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_id, smio_check_seg_id),					\
	  SMIO_PL_EMPTY)									\
	X(SEG_AVAILABLE,         92, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_avail, smio_check_seg_avail),					\
	  SMIO_PL_EMPTY)									\
	X(SEG_MAP_LOCAL,         93, SEG,    SMIO_R_LOCAL, 0, /* reply + fd */			\
	  SMIO_PL_FIXED(smio_seg_id, smio_check_seg_id),					\
	  SMIO_PL_FIXED(smio_map_reply, check_map_reply))					\
	X(SEG_CONNECT,           94, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_connect, smio_check_seg_connect),				\
	  SMIO_PL_FIXED(smio_seg_conn, smio_check_seg_conn))					\
	X(SEG_MAP_REMOTE,        95, SEG,    SMIO_R_LOCAL, 0, /* reply + fd */			\
	  SMIO_PL_FIXED(smio_seg_map, smio_check_seg_map),					\
	  SMIO_PL_FIXED(smio_map_reply, check_map_reply))					\
	X(SEG_DISCONNECT,        96, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_conn_ref, smio_check_seg_conn_ref),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_SEG_LOOKUP,       97, SEG,    SMIO_R_PEER,  0, /* owner counts a reference */	\
	  SMIO_PL_FIXED(smio_seg_id, smio_check_seg_id),					\
	  SMIO_PL_FIXED(smio_peer_seg, smio_check_peer_seg))					\
	X(PEER_SEG_RELEASE,      98, SEG,    SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_seg_ref, smio_check_peer_seg_ref),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_MEMFD,            99, SEG,    SMIO_R_PEER,  0, /* reply + fd */			\
	  SMIO_PL_FIXED(smio_peer_memfd, smio_check_peer_memfd_req),				\
	  SMIO_PL_FIXED(smio_peer_memfd, smio_check_peer_memfd_reply))				\
												\
	/* SISCI interrupts and data interrupts (intr.h; 108, 109 reserved) */			\
	X(INTR_CREATE,          100, INTR,   SMIO_R_LOCAL, 0, /* reply + eventfd */		\
	  SMIO_PL_FIXED(smio_intr_create, smio_check_intr_create),				\
	  SMIO_PL_FIXED(smio_intr_info, smio_check_intr_id))					\
	X(INTR_REMOVE,          101, INTR,   SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_intr_id, smio_check_intr_id),					\
	  SMIO_PL_EMPTY)									\
	X(INTR_CONNECT,         102, INTR,   SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_intr_connect, smio_check_intr_connect),				\
	  SMIO_PL_FIXED(smio_intr_conn, smio_check_intr_conn))					\
	X(INTR_TRIGGER,         103, INTR,   SMIO_R_LOCAL, 0, /* + message */			\
	  SMIO_PL_VAR(smio_intr_trigger, smio_check_intr_msg),					\
	  SMIO_PL_EMPTY)									\
	X(INTR_RECEIVE,         104, INTR,   SMIO_R_LOCAL, 0, /* + message */			\
	  SMIO_PL_FIXED(smio_intr_id, smio_check_intr_receive),					\
	  SMIO_PL_VAR(smio_intr_data, smio_check_intr_data))					\
	X(INTR_DISCONNECT,      105, INTR,   SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_intr_conn_ref, smio_check_intr_conn_ref),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_INTR_LOOKUP,     106, INTR,   SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_intr_id, smio_check_intr_id),					\
	  SMIO_PL_FIXED(smio_peer_intr, smio_check_peer_intr))					\
	X(PEER_INTR_FIRE,       107, INTR,   SMIO_R_PEER,  0, /* + message */			\
	  SMIO_PL_VAR(smio_peer_intr_fire, smio_check_peer_intr_fire),				\
	  SMIO_PL_EMPTY)									\
												\
	/* SISCI DMA queues, run by an NTB adapter's DMA engine (dma.h; 114..119 reserved) */	\
	X(DMA_QUEUE_CREATE,     110, DMA,    SMIO_R_LOCAL, 0, /* reply + eventfd */		\
	  SMIO_PL_FIXED(smio_dma_queue_create, smio_check_dma_queue_create),			\
	  SMIO_PL_FIXED(smio_dma_queue, smio_check_dma_queue))					\
	X(DMA_QUEUE_REMOVE,     111, DMA,    SMIO_R_LOCAL, 0, /* -EBUSY while posted */		\
	  SMIO_PL_FIXED(smio_dma_queue_ref, smio_check_dma_queue_ref),				\
	  SMIO_PL_EMPTY)									\
	X(DMA_START,            112, DMA,    SMIO_R_LOCAL, 0, /* + entries */			\
	  SMIO_PL_VAR(smio_dma_start, smio_check_dma_start),					\
	  SMIO_PL_FIXED(smio_dma_state, smio_check_dma_state))					\
	X(DMA_STATE,            113, DMA,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dma_queue_ref, smio_check_dma_queue_ref),				\
	  SMIO_PL_FIXED(smio_dma_state, smio_check_dma_state))					\
												\
	/* the SmartIO device pool and device-side mappings (dev.h; 139 reserved) */		\
	X(DEV_LIST,             120, DEV,    SMIO_R_LOCAL, 0, /* the cluster's pool */		\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_dev_list, smio_check_dev_list))					\
	X(DEV_BORROW,           121, DEV,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dev_borrow, smio_check_dev_borrow),				\
	  SMIO_PL_FIXED(smio_dev_borrowed, smio_check_dev_borrowed))				\
	X(DEV_RETURN,           122, DEV,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dev_ref, smio_check_dev_ref),					\
	  SMIO_PL_EMPTY)									\
	X(DEV_RELEASE_EXCL,     123, DEV,    SMIO_R_LOCAL, 0, /* exclusive -> shared */		\
	  SMIO_PL_FIXED(smio_dev_ref, smio_check_dev_ref),					\
	  SMIO_PL_EMPTY)									\
	X(DEV_SEG_CONNECT,      124, DEV,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dev_seg_connect, smio_check_dev_seg_connect),			\
	  SMIO_PL_FIXED(smio_seg_conn, smio_check_seg_conn))					\
	X(DEV_MAP_LOCAL,        125, DEV,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dev_map_local, smio_check_dev_map_local),				\
	  SMIO_PL_FIXED(smio_dev_mapping, smio_check_dev_mapping))				\
	X(DEV_MAP_REMOTE,       126, DEV,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dev_map_remote, smio_check_dev_map_remote),			\
	  SMIO_PL_FIXED(smio_dev_mapping, smio_check_dev_mapping))				\
	X(DEV_UNMAP,            127, DEV,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dev_unmap, smio_check_dev_unmap),					\
	  SMIO_PL_EMPTY)									\
	X(DEV_RID,              128, DEV,    SMIO_R_LOCAL, 0, /* (un)register a requester */	\
	  SMIO_PL_FIXED(smio_dev_rid, smio_check_dev_rid),					\
	  SMIO_PL_EMPTY)									\
	X(DEV_SEG_CREATE,       129, DEV,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_dev_seg_create, smio_check_dev_seg_create),			\
	  SMIO_PL_FIXED(smio_dev_seg, smio_check_dev_seg))					\
	X(PEER_DEV_LIST,        130, DEV,    SMIO_R_PEER,  0, /* this host's lendable devices */ \
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_dev_list, smio_check_dev_list))					\
	X(PEER_DEV_BORROW,      131, DEV,    SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_dev_borrow, smio_check_peer_dev_borrow),			\
	  SMIO_PL_FIXED(smio_peer_dev_ref, smio_check_peer_dev_ref))				\
	X(PEER_DEV_RETURN,      132, DEV,    SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_dev_ref, smio_check_peer_dev_ref),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_DEV_RELEASE_EXCL,133, DEV,    SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_dev_ref, smio_check_peer_dev_ref),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_DEV_BAR,         134, DEV,    SMIO_R_PEER,  0, /* addr, size filled */		\
	  SMIO_PL_FIXED(smio_peer_dev_bar, smio_check_peer_dev_bar_req),			\
	  SMIO_PL_FIXED(smio_peer_dev_bar, smio_check_peer_dev_bar_reply))			\
	X(PEER_DEV_MAP,         135, DEV,    SMIO_R_PEER,  0, /* map, ioaddr filled */		\
	  SMIO_PL_FIXED(smio_peer_dev_map, smio_check_peer_dev_map),				\
	  SMIO_PL_FIXED(smio_peer_dev_map, smio_check_peer_dev_map_reply))			\
	X(PEER_DEV_UNMAP,       136, DEV,    SMIO_R_PEER,  0, /* ref, map */			\
	  SMIO_PL_FIXED(smio_peer_dev_map, smio_check_peer_dev_unmap),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_DEV_SEG_CREATE,  137, DEV,    SMIO_R_PEER,  0, /* host, segid filled */		\
	  SMIO_PL_FIXED(smio_peer_dev_seg, smio_check_peer_dev_seg),				\
	  SMIO_PL_FIXED(smio_peer_dev_seg, smio_check_peer_dev_seg))				\
	X(PEER_DEV_SEG_LOOKUP,  138, DEV,    SMIO_R_PEER,  0, /* host, segid filled */		\
	  SMIO_PL_FIXED(smio_peer_dev_seg, smio_check_peer_dev_seg),				\
	  SMIO_PL_FIXED(smio_peer_dev_seg, smio_check_peer_dev_seg))				\
												\
	/* SISCI segments, continued (seg.h) */							\
	X(SEG_ATTACH,           140, SEG,    SMIO_R_LOCAL, 0, /* memory for an EMPTY segment */	\
	  SMIO_PL_FIXED(smio_seg_attach, smio_check_seg_attach),				\
	  SMIO_PL_FIXED(smio_seg_info, smio_check_seg_info))					\
	X(PEER_SEG_GONE,        141, SEG,    SMIO_R_PEER,  SMIO_MSG_F_NO_REPLY,			\
	  SMIO_PL_FIXED(smio_peer_seg_ref, smio_check_peer_seg_ref),				\
	  SMIO_PL_NONE)										\
	X(SEG_EVENTS,           142, SEG,    SMIO_R_LOCAL, 0, /* reply + eventfd */		\
	  SMIO_PL_FIXED(smio_seg_conn_ref, smio_check_seg_conn_ref),				\
	  SMIO_PL_EMPTY)									\
	X(SEG_STATE,            143, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_conn_ref, smio_check_seg_conn_ref),				\
	  SMIO_PL_FIXED(smio_seg_state, smio_check_seg_state))					\
												\
	/* Device Lending (lend.h, docs/lending.md) */						\
	X(LEND_POOL,            150, LEND,   SMIO_R_LOCAL, 0, /* the cluster's devices */	\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_lend_pool, smio_check_lend_pool))					\
	X(LEND_BORROW,          151, LEND,   SMIO_R_ADMIN, 0, /* a shadow device here */	\
	  SMIO_PL_FIXED(smio_lend_req, smio_check_lend_req),					\
	  SMIO_PL_FIXED(smio_lend_info, smio_check_lend_info))					\
	X(LEND_RETURN,          152, LEND,   SMIO_R_ADMIN, 0, /* -EBUSY while a driver is bound */ \
	  SMIO_PL_FIXED(smio_lend_req, smio_check_lend_req),					\
	  SMIO_PL_EMPTY)									\
	X(PEER_LEND_POOL,       153, LEND,   SMIO_R_PEER,  0, /* this host's devices */		\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_lend_pool, smio_check_lend_pool))					\
	X(PEER_LEND_SETUP,      154, LEND,   SMIO_R_PEER,  0, /* reply + fd (MSI channel) */	\
	  SMIO_PL_FIXED(smio_peer_lend_setup, smio_check_peer_lend_setup),			\
	  SMIO_PL_FIXED(smio_lend_grant, smio_check_lend_grant))				\
	X(PEER_LEND_RELEASE,    155, LEND,   SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_lend_ref, smio_check_peer_lend_ref),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_LEND_CFG,        156, LEND,   SMIO_R_PEER,  0, /* value filled */		\
	  SMIO_PL_FIXED(smio_peer_lend_cfg, smio_check_peer_lend_cfg),				\
	  SMIO_PL_FIXED(smio_peer_lend_cfg, smio_check_peer_lend_cfg))				\
	X(PEER_LEND_P2P,        157, LEND,   SMIO_R_PEER,  0, /* bus filled */			\
	  SMIO_PL_FIXED(smio_peer_lend_p2p, smio_check_peer_lend_p2p),				\
	  SMIO_PL_FIXED(smio_peer_lend_p2p, smio_check_peer_lend_p2p))				\
	X(PEER_LEND_HOPS,       158, LEND,   SMIO_R_PEER,  0, /* hops filled */			\
	  SMIO_PL_FIXED(smio_peer_lend_p2p, smio_check_peer_lend_p2p),				\
	  SMIO_PL_FIXED(smio_peer_lend_p2p, smio_check_peer_lend_p2p))				\
	X(LEND_P2P,             159, LEND,   SMIO_R_LOCAL, 0, /* bus, hops filled */		\
	  SMIO_PL_FIXED(smio_lend_p2p, smio_check_lend_p2p),					\
	  SMIO_PL_FIXED(smio_lend_p2p, smio_check_lend_p2p))					\
												\
	/* diagnostics: counters and the event log (diag.h, docs/protocol.md) */		\
	X(STATS,                160, CORE,   SMIO_R_LOCAL, 0, /* JSON text */			\
	  SMIO_PL_FIXED(smio_stats_req, smio_check_stats_req),				\
	  SMIO_PL_VAR(smio_stats, smio_check_stats))						\
	X(STATS_CLEAR,          161, CORE,   SMIO_R_ADMIN, 0, /* counters to zero */		\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_EMPTY)									\
	X(EVENTS,               162, CORE,   SMIO_R_LOCAL, 0, /* seq > since */			\
	  SMIO_PL_FIXED(smio_events_req, smio_check_events_req),				\
	  SMIO_PL_VAR(smio_events, smio_check_events))					\
	/* Holders of borrowed devices: LEND_RETURN refuses while one lives (issue 17) */	\
	X(LEND_HOLD,            170, LEND,   SMIO_R_LOCAL, 0, /* until the connection closes */ \
	  SMIO_PL_FIXED(smio_lend_hold, smio_check_lend_hold),					\
	  SMIO_PL_EMPTY)									\
	X(LEND_HOLDERS,         171, LEND,   SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_lend_req, smio_check_lend_req),					\
	  SMIO_PL_VAR(smio_lend_holders, smio_check_lend_holders))				\
	/* Multicast: SISCI broadcast segments (seg.h) */					\
	X(MC_JOIN,              190, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_mc_join, smio_check_mc_join),					\
	  SMIO_PL_EMPTY)									\
	X(MC_LEAVE,             191, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_mc_join, smio_check_mc_join),					\
	  SMIO_PL_EMPTY)									\
	X(MC_CONNECT,           192, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_mc_connect, smio_check_mc_connect),				\
	  SMIO_PL_FIXED(smio_mc_conn, smio_check_mc_conn))					\
	X(MC_DISCONNECT,        193, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_conn_ref, smio_check_seg_conn_ref),				\
	  SMIO_PL_EMPTY)									\
	X(MC_WRITE,             194, SEG,    SMIO_R_LOCAL, 0, /* + data */			\
	  SMIO_PL_VAR(smio_mc_write, smio_check_mc_write),					\
	  SMIO_PL_FIXED(smio_mc_written, smio_check_mc_written))				\
	X(MC_DMA,               195, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_VAR(smio_mc_write, smio_check_mc_write),					\
	  SMIO_PL_FIXED(smio_mc_written, smio_check_mc_written))				\
	X(MC_TREE,              196, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_mc_tree_req, smio_check_mc_tree_req),				\
	  SMIO_PL_VAR(smio_mc_tree, smio_check_mc_tree))					\
												\
	/* Virtual machines (lend.h, docs/vm.md) */						\
	X(VM_CMD,               200, LEND,   SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_vm_cmd, smio_check_vm_cmd),					\
	  SMIO_PL_FIXED(smio_vm_cmd_reply, smio_check_vm_cmd_reply))				\
	X(VM_MEM,               205, LEND,   SMIO_R_LOCAL, 0, /* reply + fd (host RAM) */	\
	  SMIO_PL_FIXED(smio_vm_mem, smio_check_vm_mem),					\
	  SMIO_PL_FIXED(smio_vm_mem_reply, smio_check_vm_mem_reply))				\
	X(VM_ATTACH,            206, LEND,   SMIO_R_LOCAL, 0, /* until the connection closes */ \
	  SMIO_PL_FIXED(smio_vm_attach, smio_check_vm_attach),					\
	  SMIO_PL_FIXED(smio_vm_attach_reply, smio_check_vm_attach_reply))			\
	X(VM_IRQ,               207, LEND,   SMIO_R_LOCAL, 0, /* reply + eventfd */		\
	  SMIO_PL_FIXED(smio_vm_irq, smio_check_vm_irq),					\
	  SMIO_PL_EMPTY)									\
	X(PEER_VM_DMA,          208, LEND,   SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_vm_dma, smio_check_peer_vm_dma),				\
	  SMIO_PL_EMPTY)									\
	X(VM_BAR,               209, LEND,   SMIO_R_LOCAL, 0, /* reply + fd (BAR memory) */	\
	  SMIO_PL_FIXED(smio_vm_bar, smio_check_vm_bar),					\
	  SMIO_PL_FIXED(smio_vm_bar_reply, smio_check_vm_bar_reply))				\
	X(VM_STATS,             210, LEND,   SMIO_R_LOCAL, 0,					\
	  SMIO_PL_EMPTY,									\
	  SMIO_PL_VAR(smio_vm_stats, smio_check_vm_stats))					\
	X(PEER_VM_RESERVE,      213, LEND,   SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_vm_resv, smio_check_peer_vm_resv),				\
	  SMIO_PL_FIXED(smio_peer_vm_resv_reply, smio_check_peer_vm_resv_reply))					\
												\
	/* SR-IOV: a PF's VFs enabled or disabled live (core.h) */				\
	X(SRIOV,                215, CORE,   SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_sriov_req, check_sriov_req),					\
	  SMIO_PL_FIXED(smio_sriov_state, check_sriov_state))					\
												\
	/* cZodiac sharing through running daemons (lend.h, docs/czodiac.md) */		\
	X(CZ_SHARE,             216, LEND,   SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_cz_share, smio_check_cz_share),					\
	  SMIO_PL_FIXED(smio_cz_info, smio_check_cz_info))					\
	X(CZ_UNSHARE,           217, LEND,   SMIO_R_ADMIN, 0,					\
	  SMIO_PL_FIXED(smio_cz_share, smio_check_cz_share),					\
	  SMIO_PL_FIXED(smio_cz_info, smio_check_cz_info))					\
	X(PEER_CZ_BIND,         218, LEND,   SMIO_R_PEER,  0, /* + MSI channel fd */		\
	  SMIO_PL_FIXED(smio_peer_cz_bind, smio_check_peer_cz_bind),				\
	  SMIO_PL_FIXED(smio_cz_grant, smio_check_cz_grant))					\
	X(PEER_CZ_UNBIND,       219, LEND,   SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_lend_ref, smio_check_peer_lend_ref),				\
	  SMIO_PL_EMPTY)									\
	X(PEER_CZ_CFG,          220, LEND,   SMIO_R_PEER,  0, /* value filled */		\
	  SMIO_PL_FIXED(smio_peer_lend_cfg, smio_check_peer_lend_cfg),				\
	  SMIO_PL_FIXED(smio_peer_lend_cfg, smio_check_peer_lend_cfg))				\
												\
	/* accelerator kernels (driver.h), issue 14 */					\
	X(ACCEL_LAUNCH,         225, DRIVER, SMIO_R_LOCAL, 0, /* + image + args */		\
	  SMIO_PL_VAR(smio_accel_launch, smio_check_accel_launch),				\
	  SMIO_PL_FIXED(smio_accel_result, smio_check_accel_result))				\
	X(ACCEL_LOAD,           226, DRIVER, SMIO_R_LOCAL, 0, /* + bytes for device memory */	\
	  SMIO_PL_VAR(smio_accel_load, smio_check_accel_load),					\
	  SMIO_PL_EMPTY)									\
												\
	/* Segments as devices reach them (seg.h): the owner's answer, a local device's view */		\
	X(PEER_SEG_WHERE,       227, SEG,    SMIO_R_PEER,  0,					\
	  SMIO_PL_FIXED(smio_peer_seg_ref, smio_check_peer_seg_ref),				\
	  SMIO_PL_FIXED(smio_peer_seg_where, smio_check_peer_seg_where))			\
	X(SEG_CONN_P2P,         228, SEG,    SMIO_R_LOCAL, 0, /* a local device's view */	\
	  SMIO_PL_FIXED(smio_seg_conn_p2p, smio_check_seg_conn_p2p_req),			\
	  SMIO_PL_FIXED(smio_seg_conn_p2p, smio_check_seg_conn_p2p))				\
												\
	/* SISCI owner callbacks (seg.h): the oldest connect/disconnect of a segment */	\
	X(SEG_OWNER_EVENT,      233, SEG,    SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_seg_id, smio_check_seg_id),					\
	  SMIO_PL_FIXED(smio_seg_owner_ev, smio_check_seg_owner_ev))				\
												\
	/* p2pmem from the provider the orchestrator finds (driver.h), issue 14 */	\
	X(P2PMEM_ALLOC,         234, DRIVER, SMIO_R_LOCAL, 0, /* until freed or closed */	\
	  SMIO_PL_FIXED(smio_p2pmem_req, smio_check_p2pmem_req),				\
	  SMIO_PL_FIXED(smio_p2pmem_grant, smio_check_p2pmem_grant))			\
	X(P2PMEM_FREE,          235, DRIVER, SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_p2pmem_free, smio_check_p2pmem_free),				\
	  SMIO_PL_EMPTY)									\
	X(NVME_COPY,            236, DRIVER, SMIO_R_LOCAL, 0,					\
	  SMIO_PL_FIXED(smio_nvme_copy, smio_check_nvme_copy),				\
	  SMIO_PL_FIXED(smio_nvme_copy_result, smio_check_nvme_copy_result))		\
												\
	/* SCIAbortDMAQueue (dma.h): a late addition, numbered from issue 14's range */	\
	X(DMA_ABORT,            245, DMA,    SMIO_R_LOCAL, 0, /* state after the request */	\
	  SMIO_PL_FIXED(smio_dma_queue_ref, smio_check_dma_queue_ref),				\
	  SMIO_PL_FIXED(smio_dma_state, smio_check_dma_state))

/* enum smio_type: SMIO_<NAME> = number, for every row. */
#define SMIO__TYPE_ENUM(name, num, fam, roles, flags, req, rep)  SMIO_##name = (num),
/* One char array per row, num + 1 long: the union's size is the highest number + 1. */
#define SMIO__TYPE_SLOT(name, num, fam, roles, flags, req, rep)  char SMIO__##name[(num) + 1];
union smio__type_max {
	SMIO_MSG_LIST(SMIO__TYPE_SLOT)
};

enum smio_type {
	SMIO_MSG_LIST(SMIO__TYPE_ENUM)
	SMIO_TYPE_MAX = sizeof(union smio__type_max)   /* one past the highest number */
};

/* One direction of a message. */
struct smio_payload_desc {
	uint32_t size;             /* exact length (FIXED), fixed head (VAR), else 0 */
	uint32_t kind;             /* enum smio_payload_kind */
};

/* One row of the list, as the codec holds it. */
struct smio_msg_desc {
	const char *name;          /* "HELLO" */
	uint16_t type;             /* enum smio_type */
	uint16_t family;           /* enum smio_family */
	uint32_t roles;            /* SMIO_R_* */
	uint32_t flags;            /* SMIO_MSG_F_* */
	struct smio_payload_desc req, rep;
};

/* The row of a type; NULL if no message has that number. */
const struct smio_msg_desc *smio_msg_desc(uint16_t type);
/* Every message, in list (increasing number) order: i < smio_msg_count(); NULL past the end. */
size_t smio_msg_count(void);
const struct smio_msg_desc *smio_msg_at(size_t i);
/* Roles that may send a type's request (SMIO_R_*); 0 for an unknown type. */
uint32_t smio_msg_roles(uint16_t type);
/* A type's SMIO_MSG_F_* flags; 0 for an unknown type. */
uint32_t smio_msg_flags(uint16_t type);
/* A type's enum smio_family, or -EPROTO for an unknown type. */
int smio_msg_family(uint16_t type);
/* "CORE", "ROUTE", ...; "UNKNOWN" for anything else. */
const char *smio_family_name(int family);

#endif
