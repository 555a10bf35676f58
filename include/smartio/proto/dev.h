/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, the SmartIO device pool and device-side mappings:
 * DEV_* for libsisci, PEER_DEV_* between borrower and lender.
 */
#ifndef SMARTIO_PROTO_DEV_H
#define SMARTIO_PROTO_DEV_H

#include <stdint.h>

#include "wire.h"

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
#define SMIO_DEV_PLACE_DEVICE    3u      /* in the device's memory BAR, else the lender's RAM */

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
	uint32_t adapter;          /* local NTB the device reaches the memory through */
	uint32_t pad;
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
	/*
	 * The path: 0 any (the lender's first NTB that is up and reaches
	 * dest_host); n: the fabric of adapter n - 1 of the asking host (the
	 * borrower; on the lender itself, its own adapter n - 1).
	 */
	uint16_t via;
	uint32_t ref;
	uint32_t dest_host;        /* where the memory is */
	uint32_t map;              /* reply: the lender's mapping id (UNMAP: which) */
	uint64_t dest_addr;        /* bus address at dest_host, page aligned */
	uint64_t size;             /* page multiple */
	uint64_t ioaddr;           /* reply: the address the device uses */
};

#endif
