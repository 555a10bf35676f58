/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol: the message types.
 */
#ifndef SMARTIO_PROTO_MSGS_H
#define SMARTIO_PROTO_MSGS_H

enum smio_type {
	SMIO_HELLO          = 1,   /* smio_hello -> smio_hello_reply */
	SMIO_STATUS         = 2,   /* empty -> smio_status */
	SMIO_SHUTDOWN       = 3,   /* empty -> empty; daemon exits after replying */

	SMIO_FUNC_LIST      = 10,  /* empty -> smio_func_list (variable) */
	SMIO_CFG_READ       = 11,  /* smio_cfg -> smio_cfg (value filled) */
	SMIO_CFG_WRITE      = 12,  /* smio_cfg -> empty */
	SMIO_CFG_DUMP       = 13,  /* smio_bdf -> 4096 bytes of config space */

	SMIO_ROUTE          = 20,  /* smio_route_req -> smio_route_reply (variable) */
	SMIO_MAP            = 21,  /* smio_route_req -> smio_map_reply + fd */

	SMIO_NTB_INFO       = 30,  /* smio_ntb_ref -> smio_ntb_info */
	SMIO_NTB_LUT_SET    = 31,  /* smio_ntb_lut -> smio_ntb_lut (entry filled in) */
	SMIO_NTB_LUT_CLEAR  = 32,  /* smio_ntb_lut (entry only) -> empty */
	SMIO_NTB_RID_ADD    = 33,  /* smio_ntb_rid -> empty */
	SMIO_NTB_RID_DEL    = 34,  /* smio_ntb_rid -> empty */
	SMIO_NTB_LINK       = 35,  /* smio_ntb_link -> empty */
	SMIO_NTB_DB_RING    = 36,  /* smio_ntb_db -> empty (rings the far side) */
	SMIO_NTB_SPAD       = 37,  /* smio_ntb_spad -> smio_ntb_spad */

	SMIO_IOMMU_DOMAIN   = 40,  /* smio_iommu (op alloc/free/attach/detach) -> smio_iommu */
	SMIO_IOMMU_MAP      = 41,  /* smio_iommu_map -> empty */
	SMIO_IOMMU_UNMAP    = 42,  /* smio_iommu_map -> empty */
	SMIO_IOMMU_FAULTS   = 43,  /* empty -> smio_iommu_faults (variable) */

	SMIO_PEER_STEP      = 60,  /* smio_step -> smio_route_reply (variable) */
	SMIO_PEER_INVALIDATE= 61,  /* smio_invalidate -> no reply */
	SMIO_PEER_DB        = 62,  /* smio_ntb_db (arrival side) -> empty */
	SMIO_PEER_SPAD      = 63,  /* smio_ntb_spad (arrival side) -> smio_ntb_spad */

	/* The host's in-kernel drivers, for its applications (like ioctls). */
	SMIO_NVME_ADMIN     = 70,  /* smio_nvme_admin (+ data out) -> smio_nvme_cpl (+ data in) */
	SMIO_NVME_IO        = 71,  /* smio_nvme_io (+ data out) -> smio_nvme_cpl (+ data in) */
	SMIO_ACCEL_OP       = 80,  /* smio_accel_op -> smio_accel_result */

	/* SISCI segments (the daemon's segment service for libsisci). */
	SMIO_SEG_CREATE     = 90,  /* smio_seg_create -> smio_seg_info */
	SMIO_SEG_REMOVE     = 91,  /* smio_seg_id -> empty */
	SMIO_SEG_AVAILABLE  = 92,  /* smio_seg_avail -> empty */
	SMIO_SEG_MAP_LOCAL  = 93,  /* smio_seg_id -> smio_map_reply + fd */
	SMIO_SEG_CONNECT    = 94,  /* smio_seg_connect -> smio_seg_conn */
	SMIO_SEG_MAP_REMOTE = 95,  /* smio_seg_map -> smio_map_reply + fd */
	SMIO_SEG_DISCONNECT = 96,  /* smio_seg_conn_ref -> empty */
	SMIO_PEER_SEG_LOOKUP= 97,  /* smio_seg_id -> smio_peer_seg (owner counts a reference) */
	SMIO_PEER_SEG_RELEASE=98,  /* smio_peer_seg_ref -> empty */
	SMIO_PEER_MEMFD     = 99,  /* smio_peer_memfd -> smio_peer_memfd + fd */

	/* SISCI interrupts and data interrupts (NTB doorbells and message
	 * registers; 108, 109 are reserved for them). */
	SMIO_INTR_CREATE    = 100, /* smio_intr_create -> smio_intr_info + eventfd */
	SMIO_INTR_REMOVE    = 101, /* smio_intr_id -> empty */
	SMIO_INTR_CONNECT   = 102, /* smio_intr_connect -> smio_intr_conn */
	SMIO_INTR_TRIGGER   = 103, /* smio_intr_trigger (+ message) -> empty */
	SMIO_INTR_RECEIVE   = 104, /* smio_intr_id (data 1) -> smio_intr_data (+ message) */
	SMIO_INTR_DISCONNECT= 105, /* smio_intr_conn_ref -> empty */
	SMIO_PEER_INTR_LOOKUP=106, /* smio_intr_id -> smio_peer_intr */
	SMIO_PEER_INTR_FIRE = 107, /* smio_peer_intr_fire (+ message) -> empty */

	/* SISCI DMA queues, executed by an NTB adapter's DMA engine (110..119). */
	SMIO_DMA_QUEUE_CREATE=110, /* smio_dma_queue_create -> smio_dma_queue + eventfd */
	SMIO_DMA_QUEUE_REMOVE=111, /* smio_dma_queue_ref -> empty (-EBUSY while posted) */
	SMIO_DMA_START      = 112, /* smio_dma_start (+ entries) -> smio_dma_state */
	SMIO_DMA_STATE      = 113, /* smio_dma_queue_ref -> smio_dma_state */

	/* SmartIO device pool and device-side mappings (120..139, h_device.c). */
	SMIO_DEV_LIST       = 120, /* empty -> smio_dev_list (variable): the cluster's pool */
	SMIO_DEV_BORROW     = 121, /* smio_dev_borrow -> smio_dev_borrowed */
	SMIO_DEV_RETURN     = 122, /* smio_dev_ref -> empty */
	SMIO_DEV_RELEASE_EXCL=123, /* smio_dev_ref -> empty (exclusive -> shared) */
	SMIO_DEV_SEG_CONNECT= 124, /* smio_dev_seg_connect -> smio_seg_conn */
	SMIO_DEV_MAP_LOCAL  = 125, /* smio_dev_map_local -> smio_dev_mapping */
	SMIO_DEV_MAP_REMOTE = 126, /* smio_dev_map_remote -> smio_dev_mapping */
	SMIO_DEV_UNMAP      = 127, /* smio_dev_unmap -> empty */
	SMIO_DEV_RID        = 128, /* smio_dev_rid -> empty (register/unregister a requester) */
	SMIO_DEV_SEG_CREATE = 129, /* smio_dev_seg_create -> smio_dev_seg (a device segment) */
	SMIO_PEER_DEV_LIST  = 130, /* empty -> smio_dev_list (variable): this host's lendable devices */
	SMIO_PEER_DEV_BORROW= 131, /* smio_peer_dev_borrow -> smio_peer_dev_ref */
	SMIO_PEER_DEV_RETURN= 132, /* smio_peer_dev_ref -> empty */
	SMIO_PEER_DEV_RELEASE_EXCL=133, /* smio_peer_dev_ref -> empty */
	SMIO_PEER_DEV_BAR   = 134, /* smio_peer_dev_bar -> smio_peer_dev_bar (addr, size filled) */
	SMIO_PEER_DEV_MAP   = 135, /* smio_peer_dev_map -> smio_peer_dev_map (map, ioaddr filled) */
	SMIO_PEER_DEV_UNMAP = 136, /* smio_peer_dev_map (ref, map) -> empty */
	SMIO_PEER_DEV_SEG_CREATE=137, /* smio_peer_dev_seg -> smio_peer_dev_seg (host, segid filled) */
	SMIO_PEER_DEV_SEG_LOOKUP=138, /* smio_peer_dev_seg -> smio_peer_dev_seg (host, segid filled) */

	/* SISCI segments, continued (140..). */
	SMIO_SEG_ATTACH     = 140, /* smio_seg_attach -> smio_seg_info (memory for an EMPTY segment) */
	SMIO_PEER_SEG_GONE  = 141, /* smio_peer_seg_ref -> no reply (owner -> importer: owner died) */
	SMIO_SEG_EVENTS     = 142, /* smio_seg_conn_ref -> empty + eventfd (the connection's events) */
	SMIO_SEG_STATE      = 143, /* smio_seg_conn_ref -> smio_seg_state */

	/* Device Lending (150..): docs/lending.md. */
	SMIO_LEND_POOL      = 150, /* empty -> smio_lend_pool (variable): the cluster's devices */
	SMIO_LEND_BORROW    = 151, /* smio_lend_req -> smio_lend_info: a shadow device here */
	SMIO_LEND_RETURN    = 152, /* smio_lend_req -> empty (-EBUSY while a driver is bound) */
	SMIO_PEER_LEND_POOL = 153, /* empty -> smio_lend_pool (variable): this host's devices */
	SMIO_PEER_LEND_SETUP= 154, /* smio_peer_lend_setup -> smio_lend_grant + fd (MSI channel) */
	SMIO_PEER_LEND_RELEASE=155, /* smio_peer_lend_ref -> empty */
	SMIO_PEER_LEND_CFG  = 156, /* smio_peer_lend_cfg -> smio_peer_lend_cfg (value filled) */
	SMIO_PEER_LEND_P2P  = 157, /* smio_peer_lend_p2p -> smio_peer_lend_p2p (bus filled) */
	SMIO_PEER_LEND_HOPS = 158, /* smio_peer_lend_p2p -> smio_peer_lend_p2p (hops filled) */
	SMIO_LEND_P2P       = 159, /* smio_lend_p2p -> smio_lend_p2p (bus, hops filled) */

	SMIO_TYPE_MAX
};

#endif
