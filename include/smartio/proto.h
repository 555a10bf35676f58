/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol: between applications (libsisci, the smartio CLI)
 * and their host's smartiod, and between the daemons of a cluster. It models
 * the system-call boundary and the NTB's control channel.
 *
 * Every message is a 24-byte header followed by a payload of exactly the
 * length the header states, all little-endian. A receiver validates the
 * header (magic, version, known type, length bounds) and then every field of
 * the payload before acting; anything else is rejected with -EPROTO/-EINVAL
 * and the connection stays usable where framing is intact.
 */
#ifndef SMARTIO_PROTO_H
#define SMARTIO_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SMIO_MAGIC        0x4f494d53u   /* "SMIO" */
#define SMIO_VERSION      1
#define SMIO_MAX_PAYLOAD  (64u * 1024u)
#define SMIO_NAME_MAX     32
#define SMIO_MAX_HOPS     40
#define SMIO_MAX_FUNCS    256

/* header.flags */
#define SMIO_F_REPLY      0x1            /* this is the answer to request seq */
#define SMIO_F_FD         0x2            /* one file descriptor travels with it (SCM_RIGHTS) */

struct smio_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;      /* enum smio_type */
	uint32_t len;       /* payload bytes that follow */
	uint32_t seq;       /* request number; the reply carries the same */
	int32_t status;     /* replies: 0 or negative errno */
	uint32_t flags;
};

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

enum smio_role {
	SMIO_ROLE_CLIENT = 1,      /* an application process of this host */
	SMIO_ROLE_PEER   = 2,      /* another host's daemon */
	SMIO_ROLE_ADMIN  = 3,      /* the smartio CLI */
};

struct smio_hello {
	uint32_t role;             /* enum smio_role */
	uint32_t host;             /* peers: the sender's host id; others: the host they address */
	uint32_t pid;
	uint32_t version;          /* SMIO_VERSION */
};

struct smio_hello_reply {
	uint32_t host;
	uint32_t node_id;
	uint32_t version;
	uint32_t pad;
};

struct smio_status {
	uint32_t host;
	uint32_t node_id;
	uint32_t pid;
	uint32_t nfuncs;
	uint64_t ram_size;
	uint64_t uptime_ns;
	uint32_t iommu;            /* 0/1 */
	uint32_t nntbs;
	uint32_t nclients;
	uint32_t npeers;
	uint64_t route_hits, route_misses;
	uint64_t iommu_faults;
	uint64_t epoch;
	char name[SMIO_NAME_MAX];
};

struct smio_func_info {
	uint16_t bdf;
	uint8_t kind;              /* enum fab_func_kind */
	uint8_t lendable;
	uint16_t parent_bdf;       /* 0xffff for bus-0 functions */
	uint16_t pad;
	char name[SMIO_NAME_MAX];
	char model[24];
};

struct smio_func_list {
	uint32_t n;                /* <= SMIO_MAX_FUNCS; payload = 8 + n * sizeof(info) */
	uint32_t pad;
	struct smio_func_info f[];
};

struct smio_bdf {
	uint16_t bdf;
	uint16_t pad;
};

struct smio_cfg {
	uint16_t bdf;
	uint16_t off;              /* < 4096, aligned to size */
	uint8_t size;              /* 1, 2 or 4 */
	uint8_t pad[3];
	uint32_t value;
};

struct smio_route_req {
	uint16_t rid;              /* requester BDF (0 = CPU) */
	uint8_t write;             /* 0 read, 1 write */
	uint8_t nocache;           /* 1: bypass the route cache */
	uint32_t pad;
	uint64_t addr;
	uint64_t len;              /* 1 .. 2^40 */
};

struct smio_hop {
	uint8_t kind;
	uint8_t gen, width;
	uint8_t pad;
	uint16_t host;
	uint16_t bdf;
	uint32_t latency_ns;
	char name[36];
};

struct smio_target {
	uint8_t kind;
	uint8_t bar;
	uint16_t bdf;
	uint32_t host;
	uint32_t mem;
	uint32_t pad;
	uint64_t addr;
	uint64_t offset;
	uint64_t len;
};

/* A route step's or a full route's result. */
struct smio_route_reply {
	int32_t status;            /* enum fab_status */
	uint8_t cached;
	uint8_t forward;           /* PEER_STEP only: continue at next_* */
	uint16_t pad;
	char reason[120];
	struct smio_target tgt;
	uint32_t next_host;        /* forward */
	uint32_t next_ntb;
	uint64_t next_addr;
	uint64_t next_len;
	uint32_t ntb_hops;
	uint32_t nhops;            /* <= SMIO_MAX_HOPS */
	struct smio_hop hops[];
};

struct smio_map_reply {
	uint32_t host;             /* host owning the memory */
	uint32_t mem;
	uint64_t offset;           /* offset of the request address in the fd */
	uint64_t len;              /* contiguous bytes mapped */
	uint64_t fd_size;
	int32_t status;            /* enum fab_status of the route */
	uint32_t pad;
};

struct smio_step {
	uint32_t host;             /* host that should run the step (the receiver) */
	uint32_t ntb_index;        /* ingress NTB on the receiver */
	uint8_t write;
	uint8_t pad[3];
	uint32_t ntb_hops;         /* NTB hops so far */
	uint64_t addr;
	uint64_t len;
};

struct smio_invalidate {
	uint32_t origin_host;
	uint32_t pad;
	uint64_t epoch;
};

struct smio_ntb_ref {
	uint32_t ntb;              /* index in the host's NTB list */
	uint32_t pad;
};

struct smio_ntb_info {
	uint32_t ntb;
	uint16_t bdf;
	uint8_t link_up;
	uint8_t peer_kind;
	uint64_t bar_addr;         /* BAR2 bus address */
	uint64_t bar_size;
	uint64_t win_size;
	uint32_t lut_entries, lut_used;
	uint32_t rid_entries, rid_used;
	uint32_t doorbells, scratchpads;
	uint32_t db_pending;
	uint32_t dma_channels;
	char name[SMIO_NAME_MAX];
};

struct smio_ntb_lut {
	uint32_t ntb;
	uint32_t entry;            /* UINT32_MAX with LUT_SET: allocate the first free */
	uint32_t dest_host;
	uint32_t pad;
	uint64_t dest_addr;
};

struct smio_ntb_rid {
	uint32_t ntb;
	uint16_t rid;
	uint16_t pad;
};

struct smio_ntb_link {
	uint32_t ntb;
	uint32_t up;               /* 0/1 */
};

struct smio_ntb_db {
	uint32_t ntb;
	uint32_t bits;
};

struct smio_ntb_spad {
	uint32_t ntb;
	uint32_t idx;
	uint32_t write;            /* 0: read, 1: write value */
	uint32_t value;
};

enum smio_iommu_op {
	SMIO_IOMMU_ALLOC = 1, SMIO_IOMMU_FREE, SMIO_IOMMU_ATTACH, SMIO_IOMMU_DETACH,
};

struct smio_iommu {
	uint32_t op;               /* enum smio_iommu_op */
	uint32_t domain;
	uint16_t rid;
	uint16_t pad[3];
};

struct smio_iommu_map {
	uint32_t domain;
	uint32_t prot;             /* 1 read, 2 write */
	uint64_t iova;
	uint64_t paddr;
	uint64_t size;
};

struct smio_iommu_fault {
	uint16_t rid;
	uint8_t write;
	uint8_t reason;
	uint32_t domain;
	uint64_t iova;
	uint64_t seq;
};

struct smio_iommu_faults {
	uint64_t total;
	uint32_t n;                /* <= 64 */
	uint32_t pad;
	struct smio_iommu_fault f[];
};

/* Data carried in one NVMe message, either way (a multiple of 512). */
#define SMIO_NVME_MAX_DATA  (32u * 1024u)

enum smio_dir {
	SMIO_DIR_NONE = 0,
	SMIO_DIR_TO_DEV = 1,       /* data follows the request */
	SMIO_DIR_FROM_DEV = 2,     /* data follows the completion */
};

/*
 * An admin command for the NVMe controller at bdf, passed through the host's
 * driver (what NVME_IOCTL_ADMIN_CMD does). The driver supplies the data
 * pointers (PRP1/PRP2 of sqe are ignored) and refuses commands that would
 * take the controller from it: queue creation/deletion, format, firmware,
 * security, and anything with an SGL.
 */
struct smio_nvme_admin {
	uint16_t bdf;
	uint8_t dir;               /* enum smio_dir */
	uint8_t pad;
	uint32_t data_len;         /* <= SMIO_NVME_MAX_DATA; with TO_DEV, that many bytes follow */
	uint32_t timeout_ms;       /* 0: the driver's default */
	uint32_t pad2;
	uint8_t sqe[64];           /* opcode, nsid, cdw10..15 are used */
	uint8_t data[];
};

enum smio_nvme_op {
	SMIO_NVME_READ = 1, SMIO_NVME_WRITE, SMIO_NVME_FLUSH, SMIO_NVME_WRITE_ZEROES,
	SMIO_NVME_DEALLOCATE,
};

/* Block I/O through the host's NVMe driver. Data: nlb blocks (read: returned). */
struct smio_nvme_io {
	uint16_t bdf;
	uint8_t op;                /* enum smio_nvme_op */
	uint8_t pad;
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;              /* blocks, 1-based; 0 for FLUSH */
	uint32_t data_len;         /* WRITE: bytes that follow (= nlb * block size) */
	uint8_t data[];
};

struct smio_nvme_cpl {
	uint32_t result;           /* completion dword 0 */
	uint16_t status;           /* NVMe status field (SCT << 8 | SC, DNR bit 14), no phase */
	uint16_t pad;
	uint32_t data_len;         /* bytes that follow */
	uint32_t pad2;
	uint8_t data[];
};

enum smio_accel_kind {
	SMIO_ACCEL_COPY = 1,       /* src -> dst, len (bus addresses, or offsets by flags) */
	SMIO_ACCEL_FILL,           /* dst, len, pattern */
	SMIO_ACCEL_CHECKSUM,       /* src, len, pattern = seed -> result */
	SMIO_ACCEL_PINGPONG,       /* with the accelerator at peer_bdf, iters round trips */
	SMIO_ACCEL_INFO,           /* -> result = device memory size, bus = BAR2 address */
};

#define SMIO_ACCEL_F_SRC_DEV  0x1  /* src is an offset in the accelerator's memory */
#define SMIO_ACCEL_F_DST_DEV  0x2  /* dst is an offset in the accelerator's memory */
#define SMIO_ACCEL_F_SRC_RAM  0x4  /* src is an offset in a driver-owned RAM buffer */
#define SMIO_ACCEL_F_DST_RAM  0x8  /* dst is an offset in a driver-owned RAM buffer */

struct smio_accel_op {
	uint16_t bdf;
	uint16_t peer_bdf;         /* PINGPONG */
	uint32_t kind;             /* enum smio_accel_kind */
	uint32_t flags;            /* SMIO_ACCEL_F_* */
	uint32_t pad;
	uint64_t src, dst, len;
	uint64_t pattern;
	uint64_t iters;            /* PINGPONG round trips (1 .. 10^7); a repeat count otherwise */
};

struct smio_accel_result {
	uint32_t status;           /* the device's completion status word */
	uint32_t pad;
	uint64_t result;           /* checksum, bytes done, or memory size */
	uint64_t bus;              /* INFO: BAR2 bus address */
	uint64_t elapsed_ns;
	uint64_t iters_done;
	uint64_t avg_ns;
};

/* ---- SISCI segments ---- */

#define SMIO_SEGID_AUTO     0xffffffffu   /* SEG_CREATE: the daemon picks a free id */
#define SMIO_SEG_F_EMPTY    0x1u          /* SEG_CREATE: no memory yet (attached later) */
#define SMIO_SEG_FLAGS      SMIO_SEG_F_EMPTY
#define SMIO_SEG_PAGE       4096ull       /* sizes and addresses are multiples of this */

struct smio_seg_create {
	uint32_t segid;            /* SMIO_SEGID_AUTO: pick one */
	uint32_t flags;            /* SMIO_SEG_F_* */
	uint64_t size;             /* 1 .. 2^40 bytes, rounded up to SMIO_SEG_PAGE */
};

struct smio_seg_info {
	uint32_t segid;
	uint32_t flags;
	uint64_t addr;             /* bus (physical) address in the owner's RAM; 0 if EMPTY */
	uint64_t size;             /* page-rounded */
};

struct smio_seg_id {
	uint32_t segid;            /* never SMIO_SEGID_AUTO */
	uint32_t pad;
};

struct smio_seg_avail {
	uint32_t segid;
	uint32_t available;        /* 0/1 */
};

struct smio_seg_connect {
	uint32_t node_id;          /* SISCI node id of the owning host (topology node_id) */
	uint32_t segid;
	uint32_t adapter;          /* local adapter: NTB index on this host */
	uint32_t pad;
};

/* A connection: the segment as seen from this host, through the local NTB. */
struct smio_seg_conn {
	uint32_t conn;             /* handle for MAP_REMOTE / DISCONNECT */
	uint32_t host;             /* owning host id */
	uint64_t win_addr;         /* local bus address of the first LUT window used */
	uint64_t offset;           /* the segment starts at win_addr + offset */
	uint64_t size;
	uint32_t lut_first;        /* LUT entries [lut_first, lut_first + lut_count) */
	uint32_t lut_count;        /* 0: a local segment, reached without the NTB */
};

struct smio_seg_map {
	uint32_t conn;
	uint32_t pad;
	uint64_t offset;           /* in the segment */
	uint64_t size;             /* 1 .. 2^40; offset + size <= segment size */
};

struct smio_seg_conn_ref {
	uint32_t conn;
	uint32_t pad;
};

/*
 * SEG_ATTACH: give an EMPTY segment of the caller's its memory (once).
 * RAM: fresh host RAM of size bytes (addr 0). PHYS: the existing bus range
 * [addr, addr + size) of this host, which must lie inside a memory BAR of one
 * of its functions or inside RAM of a segment the caller owns (-EACCES
 * otherwise).
 */
#define SMIO_SEG_ATTACH_RAM  1u
#define SMIO_SEG_ATTACH_PHYS 2u

struct smio_seg_attach {
	uint32_t segid;
	uint32_t kind;             /* SMIO_SEG_ATTACH_* */
	uint64_t addr;             /* PHYS: page aligned bus address; RAM: 0 */
	uint64_t size;             /* page multiple, 1 page .. 2^40 */
};

/* Owner -> importer: what the importer programs its NTB with. */
struct smio_peer_seg {
	uint32_t segid;
	uint32_t ref;              /* the owner's reference id, for PEER_SEG_RELEASE */
	uint64_t addr;             /* bus address in the owner's RAM (page aligned) */
	uint64_t size;             /* page multiple, > 0 */
};

struct smio_peer_seg_ref {
	uint32_t segid;
	uint32_t ref;
};

/*
 * SEG_STATE: is a connection still usable? LOST: its owner process died
 * (PEER_SEG_GONE), or the owner's host became unreachable; its windows are
 * closed and only SEG_DISCONNECT is left to do. The SEG_EVENTS eventfd
 * counts 1 when a connection becomes LOST.
 */
#define SMIO_SEG_CONNECTED  1u
#define SMIO_SEG_LOST       2u

struct smio_seg_state {
	uint32_t conn;
	uint32_t state;            /* SMIO_SEG_CONNECTED or SMIO_SEG_LOST */
};

/* Request: mem (pad 0, size 0); reply: mem, its size, and the memfd. */
struct smio_peer_memfd {
	uint32_t mem;              /* memory object index on the receiving host */
	uint32_t pad;
	uint64_t size;
};

/* ---- SISCI interrupts ---- */

#define SMIO_INTNO_AUTO     0xffffffffu   /* INTR_CREATE: the daemon picks a free number */
#define SMIO_INTR_MAX_DATA  4096u         /* longest data-interrupt message */
#define SMIO_INTR_QUEUE     16u           /* messages a data interrupt queues before -EAGAIN */

struct smio_intr_create {
	uint32_t intno;            /* SMIO_INTNO_AUTO: pick one; else this (fixed) number */
	uint32_t data;             /* 0: plain interrupt, 1: data interrupt */
};

/* Reply to INTR_CREATE; the interrupt's eventfd travels with it. */
struct smio_intr_info {
	uint32_t intno;            /* never SMIO_INTNO_AUTO */
	uint32_t data;             /* 0/1 */
};

/* An interrupt of this host: INTR_REMOVE, INTR_RECEIVE, PEER_INTR_LOOKUP. */
struct smio_intr_id {
	uint32_t intno;            /* never SMIO_INTNO_AUTO */
	uint32_t data;             /* 0/1; 1 for INTR_RECEIVE */
};

struct smio_intr_connect {
	uint32_t node_id;          /* SISCI node id of the owning host */
	uint32_t intno;            /* never SMIO_INTNO_AUTO */
	uint32_t adapter;          /* local adapter: NTB index on this host */
	uint32_t data;             /* 0/1 */
};

struct smio_intr_conn {
	uint32_t handle;           /* for INTR_TRIGGER / INTR_DISCONNECT; never 0 */
	uint32_t host;             /* owning host id */
};

struct smio_intr_conn_ref {
	uint32_t handle;
	uint32_t pad;
};

/* INTR_TRIGGER: len message bytes follow (0 for a plain interrupt). */
struct smio_intr_trigger {
	uint32_t handle;
	uint32_t len;              /* <= SMIO_INTR_MAX_DATA; payload = 8 + len */
	uint8_t data[];
};

/* INTR_RECEIVE reply: the oldest queued message. */
struct smio_intr_data {
	uint32_t intno;
	uint32_t len;              /* <= SMIO_INTR_MAX_DATA; payload = 8 + len */
	uint8_t data[];
};

/* Owner -> importer: what a trigger must name (serial changes with every creation). */
struct smio_peer_intr {
	uint32_t intno;
	uint32_t serial;           /* never 0 */
	uint32_t data;             /* 0/1 */
	uint32_t pad;
};

/* Importer -> owner: the doorbell (and message registers for data interrupts). */
struct smio_peer_intr_fire {
	uint32_t intno;
	uint32_t serial;           /* as PEER_INTR_LOOKUP returned it; never 0 */
	uint32_t data;             /* 0/1; a plain interrupt carries no message */
	uint32_t len;              /* <= SMIO_INTR_MAX_DATA; payload = 16 + len */
	uint8_t payload[];
};

/* ---- SISCI DMA queues ---- */

#define SMIO_DMA_MAX_VEC     256u        /* entries in one DMA_START (DIS_DMA_MAX_VECLEN) */
#define SMIO_DMA_F_READ      0x1u        /* DMA_START: remote -> local (else local -> remote) */

/* Queue states; the numbers are sci_dma_queue_state_t's. */
enum smio_dma_qstate {
	SMIO_DMA_IDLE    = 0,
	SMIO_DMA_POSTED  = 2,
	SMIO_DMA_DONE    = 3,
	SMIO_DMA_ABORTED = 4,
	SMIO_DMA_ERROR   = 5,
};

struct smio_dma_queue_create {
	uint32_t adapter;          /* local NTB index */
	uint32_t max_entries;      /* 1..SMIO_DMA_MAX_VEC: entries one DMA_START may carry */
};

/* Reply to DMA_QUEUE_CREATE; an eventfd signalled on every completion travels with it. */
struct smio_dma_queue {
	uint32_t queue;            /* never 0 */
	uint32_t adapter;
	uint32_t max_entries;
	uint32_t channels;         /* the adapter's DMA channels (> 0) */
};

struct smio_dma_queue_ref {
	uint32_t queue;            /* never 0 */
	uint32_t pad;
};

/* One transfer: size bytes between local_offset in the local segment and
 * remote_offset in the connected segment. */
struct smio_dma_entry {
	uint64_t local_offset;
	uint64_t remote_offset;
	uint64_t size;             /* > 0 */
};

/* DMA_START: n entries follow, executed in order as one submission. */
struct smio_dma_start {
	uint32_t queue;            /* never 0 */
	uint32_t segid;            /* a local segment of the caller */
	uint32_t conn;             /* the caller's SEG_CONNECT handle */
	uint32_t flags;            /* SMIO_DMA_F_* */
	uint32_t n;                /* 1..SMIO_DMA_MAX_VEC; payload = 24 + 24 * n */
	uint32_t pad;
	struct smio_dma_entry e[];
};

struct smio_dma_state {
	uint32_t queue;
	uint32_t state;            /* enum smio_dma_qstate */
	int32_t error;             /* 0, or the failure's negative errno (ERROR/ABORTED) */
	uint32_t submissions;      /* DMA_STARTs accepted over the queue's life */
	uint64_t bytes;            /* moved by the current (last) submission */
	uint64_t total;            /* bytes the current (last) submission asked for */
};

/* ---- SmartIO device pool ---- */

/*
 * Fabric device ID: the lender's SISCI node ID in the upper 16 bits, the
 * device's BDF in its host's domain in the lower 16: fdid = node_id << 16 | bdf.
 */
#define SMIO_FDID(node_id, bdf)  (((uint32_t)(node_id) << 16) | (uint16_t)(bdf))
#define SMIO_FDID_NODE(fdid)     ((uint32_t)(fdid) >> 16)
#define SMIO_FDID_BDF(fdid)      ((uint16_t)((fdid) & 0xffffu))
#define SMIO_MAX_DEVS        128         /* devices in one DEV_LIST reply */
#define SMIO_DEV_BARS        6
#define SMIO_DEV_F_EXCLUSIVE 0x1u        /* DEV_BORROW / PEER_DEV_BORROW */
#define SMIO_DEV_MEMTYPE_BAR 1u          /* DEV_SEG_CONNECT memtype (SCI_MEMTYPE_BAR) */
#define SMIO_DEV_MEMTYPE_PRIVATE 2u      /* device segment of its creator only (SCI_MEMTYPE_PRIVATE) */
#define SMIO_DEV_MEMTYPE_SHARED  4u      /* device segment of every borrower (SCI_MEMTYPE_SHARED) */
#define SMIO_DEV_PLACE_BORROWER  1u      /* device segment in the borrower's RAM */
#define SMIO_DEV_PLACE_LENDER    2u      /* device segment in the lender's RAM */

struct smio_dev_info {
	uint32_t fdid;
	uint32_t node_id;          /* lender's SISCI node id */
	uint32_t host;             /* lender's host id */
	uint16_t bdf;              /* in the lender's domain */
	uint16_t vendor, device;
	uint16_t ss_vendor, ss_device;
	uint16_t pad;
	uint32_t class;            /* 24-bit class code */
	uint32_t borrowers;        /* current borrows (shared or exclusive) */
	uint32_t exclusive;        /* 0/1: borrowed exclusively */
	uint32_t pad2;
	uint64_t bar_size[SMIO_DEV_BARS];   /* 0: no such BAR (upper half of a 64-bit BAR) */
	char name[SMIO_NAME_MAX];
};

struct smio_dev_list {
	uint32_t n;                /* <= SMIO_MAX_DEVS; payload = 8 + n * sizeof(info) */
	uint32_t pad;
	struct smio_dev_info d[];
};

struct smio_dev_borrow {
	uint32_t fdid;
	uint32_t flags;            /* SMIO_DEV_F_* */
};

struct smio_dev_borrowed {
	uint32_t handle;           /* this process's borrow (never 0) */
	uint32_t flags;
	struct smio_dev_info info;
};

struct smio_dev_ref {
	uint32_t handle;
	uint32_t pad;
};

struct smio_dev_seg_connect {
	uint32_t handle;           /* borrow */
	uint32_t segid;            /* BAR number with SMIO_DEV_MEMTYPE_BAR, else device segment id */
	uint32_t memtype;          /* SMIO_DEV_MEMTYPE_BAR, _PRIVATE or _SHARED */
	uint32_t adapter;          /* local NTB index */
};

/* Create a device segment (segid in the device's namespace). */
struct smio_dev_seg_create {
	uint32_t handle;           /* borrow */
	uint32_t segid;
	uint32_t memtype;          /* SMIO_DEV_MEMTYPE_PRIVATE or _SHARED */
	uint32_t place;            /* SMIO_DEV_PLACE_* (the library applied the hints) */
	uint64_t size;             /* 1 .. 2^40 */
};

struct smio_dev_seg {
	uint32_t host;             /* host whose RAM holds it */
	uint32_t segid;            /* its SISCI segment id at that host */
	uint32_t place;            /* SMIO_DEV_PLACE_* */
	uint32_t pad;
	uint64_t size;
};

/*
 * Lender: register (PEER_DEV_SEG_CREATE) or find (PEER_DEV_SEG_LOOKUP) a
 * device segment in the device's namespace. With SMIO_DEV_PLACE_LENDER the
 * lender creates the memory itself, owned by the borrow (gone with it); with
 * _BORROWER host/segid name the borrower's segment. cid: the borrower
 * daemon's connection id of the process (PRIVATE: only the creator finds it).
 */
struct smio_peer_dev_seg {
	uint16_t bdf;
	uint16_t place;            /* SMIO_DEV_PLACE_* */
	uint32_t ref;              /* the borrow */
	uint32_t devsegid;
	uint32_t memtype;          /* SMIO_DEV_MEMTYPE_PRIVATE or _SHARED */
	uint32_t cid;
	uint32_t host;             /* reply (and request with _BORROWER) */
	uint32_t segid;            /* reply (and request with _BORROWER) */
	uint32_t pad;
	uint64_t size;
};

/* Make a local segment of this process reachable by the borrowed device. */
struct smio_dev_map_local {
	uint32_t handle;           /* borrow */
	uint32_t segid;            /* a segment this process created */
	uint64_t offset;           /* page aligned, in the segment */
	uint64_t size;             /* 1 .. 2^40; offset + size <= segment size */
};

/* ...or a segment this process is connected to (SEG_CONNECT handle). */
struct smio_dev_map_remote {
	uint32_t handle;
	uint32_t conn;
	uint64_t offset;
	uint64_t size;
};

struct smio_dev_mapping {
	uint32_t map;              /* for DEV_UNMAP (never 0) */
	uint32_t pad;
	uint64_t ioaddr;           /* the address the device must use */
};

struct smio_dev_unmap {
	uint32_t handle;
	uint32_t map;
};

struct smio_dev_rid {
	uint32_t adapter;          /* local NTB index */
	uint16_t rid;              /* requester BDF */
	uint8_t add;               /* 1 register, 0 unregister */
	uint8_t pad;
};

struct smio_peer_dev_borrow {
	uint16_t bdf;
	uint16_t pad;
	uint32_t flags;            /* SMIO_DEV_F_* */
};

/* The lender's borrow reference (belongs to the peer connection it came on). */
struct smio_peer_dev_ref {
	uint16_t bdf;
	uint16_t pad;
	uint32_t ref;              /* never 0 */
};

struct smio_peer_dev_bar {
	uint16_t bdf;
	uint16_t bar;              /* 0..5 */
	uint32_t ref;
	uint64_t addr;             /* reply: bus address in the lender (page aligned) */
	uint64_t size;             /* reply: page multiple */
};

struct smio_peer_dev_map {
	uint16_t bdf;
	uint16_t pad;
	uint32_t ref;
	uint32_t dest_host;        /* where the memory is */
	uint32_t map;              /* reply: the lender's mapping id (UNMAP: which) */
	uint64_t dest_addr;        /* bus address at dest_host, page aligned */
	uint64_t size;             /* page multiple */
	uint64_t ioaddr;           /* reply: the address the device uses */
};

/* ---- codec (src/proto) ---- */

/* Validate a header as received; -EPROTO on bad magic/version/type/length. */
int smio_hdr_check(const struct smio_hdr *h);
/*
 * Validate a payload for its type and direction (request or reply). Checks the
 * exact or bounded length and every field's range. Returns 0 or -EINVAL/-EPROTO.
 */
int smio_payload_check(uint16_t type, bool reply, const void *payload, uint32_t len);
const char *smio_type_name(uint16_t type);

/* ---- framing over a connected SOCK_STREAM Unix socket ---- */

/*
 * Send one message (optionally with an fd). fd >= 0 sets SMIO_F_FD and passes
 * the fd with SCM_RIGHTS (the caller keeps its own copy); SMIO_F_FD without
 * an fd is -EINVAL. The header is checked before sending (-EINVAL for an
 * unknown type, len > SMIO_MAX_PAYLOAD, bad flags/status); the payload is
 * not: the receiver is the authority. Never raises SIGPIPE, never blocks in
 * the kernel: short writes and EINTR/EAGAIN are retried with poll() for at
 * most 5 s (-ETIMEDOUT). Returns 0, -ECONNRESET if the peer is gone, or -errno.
 */
int smio_send(int sock, uint16_t type, uint32_t seq, int32_t status, uint32_t flags,
	      const void *payload, uint32_t len, int fd);
/*
 * Receive one message into buf (capacity cap >= SMIO_MAX_PAYLOAD). Blocks up to
 * timeout_ms (-1: forever). Validates the header and the payload for its type.
 * A passed fd (if any) is returned in *fd (else -1). Returns 0, -ETIMEDOUT,
 * -ECONNRESET on EOF, -EPROTO/-EINVAL on a malformed message (the payload has
 * been consumed when framing allowed it, so the stream stays in sync).
 *
 * timeout_ms is one deadline for the whole message. What each error leaves:
 *  -ETIMEDOUT   nothing was read; the connection is intact.
 *  -EINVAL      valid header in *h, payload consumed but invalid: the stream
 *               is in sync, answer with an error reply to h->seq.
 *  -EMSGSIZE    valid header, h->len > cap: payload drained and discarded,
 *               the stream is in sync.
 *  -EPROTO      framing lost or peer broken (bad header, deadline expired
 *               mid-message, SMIO_F_FD without exactly one fd or an fd without
 *               it, a reply to a one-way type): close the connection.
 *  -ECONNRESET  EOF or reset: close the connection.
 * A reply with status < 0 may have an empty payload; it is then not checked
 * against the type's reply layout. On any error no fd is returned (a received
 * one is closed); with fd == NULL a received fd is closed too.
 */
int smio_recv(int sock, struct smio_hdr *h, void *buf, uint32_t cap, int *fd, int timeout_ms);

/*
 * Connect to host N's daemon socket in cluster dir; returns fd or -errno.
 * ENOENT/ECONNREFUSED (a daemon still starting) are retried with short,
 * growing waits (1..50 ms) until timeout_ms; timeout_ms <= 0: one attempt.
 * Sends nothing: the caller sends HELLO.
 */
int smio_connect(const char *cluster_dir, uint32_t host, int timeout_ms);
/*
 * One request/reply round trip; reply payload into rbuf (rcap), its length in
 * *rlen, a passed fd in *fd (-1 if none; closed if fd is NULL). Uses a fresh
 * sequence number from a process-wide atomic counter; late replies to earlier
 * (timed-out) calls are consumed and skipped. One call in flight per socket.
 * Returns:
 *   0                 success;
 *   the reply's status (negative errno) if the daemon answered with an error;
 *   -ETIMEDOUT, -ECONNRESET, -EPROTO for transport failures (-EPROTO also for
 *                     a malformed reply, a reply of another type, or a request
 *                     arriving on this client connection);
 *   -EMSGSIZE         the reply did not fit rcap (it was drained);
 *   -EINVAL           bad arguments (nothing sent).
 */
int smio_call(int sock, uint16_t type, const void *req, uint32_t reqlen,
	      void *rbuf, uint32_t rcap, uint32_t *rlen, int *fd, int timeout_ms);

/* Cluster directory convention: $SMARTIO_CLUSTER, else $XDG_RUNTIME_DIR/smartio,
 * else /tmp/smartio-UID. Writes into buf; returns 0 or -ENAMETOOLONG. */
int smio_cluster_dir(char *buf, size_t len);
/* Socket path of host N. */
int smio_sock_path(const char *cluster_dir, uint32_t host, char *buf, size_t len);
/* $SMARTIO_HOST as a host id; -ENOENT if unset, -EINVAL if malformed. */
int smio_env_host(uint32_t *host);

/* ---- additions (smartio proto library) ---- */

#define SMIO_CFG_SPACE    4096           /* SMIO_CFG_DUMP reply length, cfg offsets below */
#define SMIO_MAX_FAULTS   64             /* smio_iommu_faults.n bound */
#define SMIO_MAX_LEN      (1ull << 40)   /* route/map/step access length bound */

/* ---- Device Lending (docs/lending.md) ---- */

#define SMIO_LEND_AVAILABLE  0u      /* smio_lend_entry.state */
#define SMIO_LEND_LENT       1u      /* lent to `borrower` by Device Lending */
#define SMIO_LEND_SISCI      2u      /* borrowed through SISCI (sisci_borrows of them) */
#define SMIO_LEND_NOBODY     0xffffffffu

struct smio_lend_entry {
	uint32_t fdid;
	uint32_t lender;            /* host id */
	uint32_t class;             /* 24-bit */
	uint32_t state;             /* SMIO_LEND_* */
	uint32_t borrower;          /* host id, or SMIO_LEND_NOBODY */
	uint32_t sisci_borrows;
	uint16_t bdf, vendor, device, pad;
	char name[SMIO_NAME_MAX];
};

struct smio_lend_pool {
	uint32_t n;                 /* <= SMIO_MAX_DEVS; payload = 8 + n * sizeof(entry) */
	uint32_t pad;
	struct smio_lend_entry e[];
};

#define SMIO_LEND_F_UNBIND   0x1u    /* LEND_RETURN: unbind the driver first */

struct smio_lend_req {
	uint32_t fdid;
	uint32_t flags;             /* SMIO_LEND_F_* */
};

/* A shadow device on the borrower. */
struct smio_lend_info {
	uint32_t fdid;
	uint32_t lender;
	uint16_t bdf;               /* the shadow's BDF on the borrower */
	uint16_t pad;
	uint32_t bound;             /* 0/1: a driver is bound */
	uint64_t bar_addr[SMIO_DEV_BARS], bar_size[SMIO_DEV_BARS];   /* borrower's windows */
	char name[SMIO_NAME_MAX];
	char driver[SMIO_NAME_MAX];
};

struct smio_peer_lend_setup {
	uint16_t bdf;
	uint16_t pad;
	uint32_t pad2;
	uint64_t dma_target, dma_size;   /* the borrower's DMA window */
};

/* What the lender prepared (struct lend_grant on the wire). */
struct smio_lend_grant {
	uint16_t bdf, vendor, device, pad;
	uint32_t class, lender, borrower, pad2;
	uint64_t bar_addr[SMIO_DEV_BARS], bar_size[SMIO_DEV_BARS];
	uint32_t bar_flags[SMIO_DEV_BARS];
	uint64_t dma_bus, dma_target, dma_size, msi_bus;
	char name[SMIO_NAME_MAX];
	char model[24];
};

struct smio_peer_lend_ref {
	uint16_t bdf;
	uint16_t pad;
	uint32_t pad2;
};

struct smio_peer_lend_cfg {
	uint16_t bdf;
	uint8_t write;              /* 0/1 */
	uint8_t size;               /* 1, 2, 4; off aligned to it */
	uint32_t off;               /* < SMIO_CFG_SPACE */
	uint32_t value;
	uint32_t pad;
};

/* Where borrowed device `client` reaches BAR `bar` of borrowed device `provider`. */
struct smio_lend_p2p {
	uint32_t client, provider;  /* FDIDs, both borrowed by this host */
	uint32_t bar;               /* 0..5 */
	uint32_t hops;              /* reply: hops of the route (every link, switch, NTB...) */
	uint64_t bus;               /* reply: the address the client's device uses */
};

struct smio_peer_lend_p2p {
	uint16_t bdf;
	uint16_t pad;
	uint32_t host;              /* where the target is */
	uint64_t addr, size;        /* target at that host (P2P) / bus (HOPS) */
	uint64_t bus;               /* reply: the device's address of addr */
	uint32_t hops, pad2;        /* HOPS reply */
};

#endif
