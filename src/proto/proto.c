// SPDX-License-Identifier: MIT
/*
 * smartio wire protocol: header and payload validation.
 *
 * Everything a peer sends is untrusted. The receiver checks the header first
 * (it decides the framing), then the payload for its type and direction.
 * Payloads are copied into aligned locals before their fields are read: the
 * caller's buffer may be at any alignment (fuzzers, offsets into a stream).
 *
 * Errors: -EPROTO for things that can only come from a broken or foreign
 * implementation (unknown type, a reply to a message that has none);
 * -EINVAL for a known message with a bad length or a field out of range.
 *
 * This file holds the framing (header) check, the core message validators and
 * the type table; the per-family validators are in proto_dev.c (driver and
 * device-pool messages), proto_seg.c (SISCI segments, interrupts, DMA queues)
 * and proto_lend.c (Device Lending).
 */
#include <errno.h>
#include <string.h>

#include "proto_lend.h"
#include "proto_priv.h"
#include "smartio/proto.h"

/*
 * The wire format is the in-memory layout of these structs. Hidden padding
 * could not be checked for zero and would leak stack bytes, so every struct
 * must be exactly the sum of its declared members.
 */
_Static_assert(sizeof(struct smio_hdr) == 24, "hdr layout");
_Static_assert(sizeof(struct smio_hello) == 16, "hello layout");
_Static_assert(sizeof(struct smio_hello_reply) == 16, "hello_reply layout");
_Static_assert(sizeof(struct smio_status) == 112, "status layout");
_Static_assert(sizeof(struct smio_func_info) == 64, "func_info layout");
_Static_assert(sizeof(struct smio_nvme_admin) == 80, "nvme_admin layout");
_Static_assert(sizeof(struct smio_nvme_io) == 24, "nvme_io layout");
_Static_assert(sizeof(struct smio_nvme_cpl) == 16, "nvme_cpl layout");
_Static_assert(sizeof(struct smio_accel_op) == 56, "accel_op layout");
_Static_assert(sizeof(struct smio_accel_result) == 48, "accel_result layout");
_Static_assert(sizeof(struct smio_func_list) == 8, "func_list layout");
_Static_assert(sizeof(struct smio_bdf) == 4, "bdf layout");
_Static_assert(sizeof(struct smio_cfg) == 12, "cfg layout");
_Static_assert(sizeof(struct smio_route_req) == 24, "route_req layout");
_Static_assert(sizeof(struct smio_hop) == 48, "hop layout");
_Static_assert(sizeof(struct smio_target) == 40, "target layout");
_Static_assert(sizeof(struct smio_route_reply) == 200, "route_reply layout");
_Static_assert(sizeof(struct smio_map_reply) == 40, "map_reply layout");
_Static_assert(sizeof(struct smio_step) == 32, "step layout");
_Static_assert(sizeof(struct smio_invalidate) == 16, "invalidate layout");
_Static_assert(sizeof(struct smio_ntb_ref) == 8, "ntb_ref layout");
_Static_assert(sizeof(struct smio_ntb_info) == 96, "ntb_info layout");
_Static_assert(sizeof(struct smio_ntb_lut) == 24, "ntb_lut layout");
_Static_assert(sizeof(struct smio_ntb_rid) == 8, "ntb_rid layout");
_Static_assert(sizeof(struct smio_ntb_link) == 8, "ntb_link layout");
_Static_assert(sizeof(struct smio_ntb_db) == 8, "ntb_db layout");
_Static_assert(sizeof(struct smio_ntb_spad) == 16, "ntb_spad layout");
_Static_assert(sizeof(struct smio_iommu) == 16, "iommu layout");
_Static_assert(sizeof(struct smio_iommu_map) == 32, "iommu_map layout");
_Static_assert(sizeof(struct smio_iommu_fault) == 24, "iommu_fault layout");
_Static_assert(sizeof(struct smio_iommu_faults) == 16, "iommu_faults layout");
_Static_assert(sizeof(struct smio_seg_create) == 16, "seg_create layout");
_Static_assert(sizeof(struct smio_seg_info) == 24, "seg_info layout");
_Static_assert(sizeof(struct smio_seg_id) == 8, "seg_id layout");
_Static_assert(sizeof(struct smio_seg_avail) == 8, "seg_avail layout");
_Static_assert(sizeof(struct smio_seg_connect) == 16, "seg_connect layout");
_Static_assert(sizeof(struct smio_seg_conn) == 40, "seg_conn layout");
_Static_assert(sizeof(struct smio_seg_map) == 24, "seg_map layout");
_Static_assert(sizeof(struct smio_seg_conn_ref) == 8, "seg_conn_ref layout");
_Static_assert(sizeof(struct smio_peer_seg) == 24, "peer_seg layout");
_Static_assert(sizeof(struct smio_peer_seg_ref) == 8, "peer_seg_ref layout");
_Static_assert(sizeof(struct smio_seg_attach) == 24, "seg_attach layout");
_Static_assert(sizeof(struct smio_peer_memfd) == 16, "peer_memfd layout");
_Static_assert(sizeof(struct smio_intr_create) == 8, "intr_create layout");
_Static_assert(sizeof(struct smio_intr_info) == 8, "intr_info layout");
_Static_assert(sizeof(struct smio_intr_id) == 8, "intr_id layout");
_Static_assert(sizeof(struct smio_intr_connect) == 16, "intr_connect layout");
_Static_assert(sizeof(struct smio_intr_conn) == 8, "intr_conn layout");
_Static_assert(sizeof(struct smio_intr_conn_ref) == 8, "intr_conn_ref layout");
_Static_assert(sizeof(struct smio_intr_trigger) == 8, "intr_trigger layout");
_Static_assert(sizeof(struct smio_intr_data) == 8, "intr_data layout");
_Static_assert(sizeof(struct smio_peer_intr) == 16, "peer_intr layout");
_Static_assert(sizeof(struct smio_peer_intr_fire) == 16, "peer_intr_fire layout");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_peer_intr_fire) + SMIO_INTR_MAX_DATA,
	       "interrupt message fits");
_Static_assert(sizeof(struct smio_dma_queue_create) == 8, "dma_queue_create layout");
_Static_assert(sizeof(struct smio_dma_queue) == 16, "dma_queue layout");
_Static_assert(sizeof(struct smio_dma_queue_ref) == 8, "dma_queue_ref layout");
_Static_assert(sizeof(struct smio_dma_entry) == 24, "dma_entry layout");
_Static_assert(sizeof(struct smio_dma_start) == 24, "dma_start layout");
_Static_assert(sizeof(struct smio_dma_state) == 32, "dma_state layout");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_dma_start) +
	       SMIO_DMA_MAX_VEC * sizeof(struct smio_dma_entry), "DMA vector fits");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_func_list) +
	       SMIO_MAX_FUNCS * sizeof(struct smio_func_info), "func list fits");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_route_reply) +
	       SMIO_MAX_HOPS * sizeof(struct smio_hop), "route reply fits");

/* A payload validator: p is aligned and len already known to be right. */
typedef int (*check_fn)(const void *p, uint32_t len);

/* ---- per-struct validators ---- */

static int check_hello(const void *p, uint32_t len)
{
	struct smio_hello m;

	memcpy(&m, p, sizeof(m));
	if (m.role < SMIO_ROLE_CLIENT || m.role > SMIO_ROLE_ADMIN)
		return -EINVAL;
	/*
	 * m.version is the daemon's to refuse, with -EPROTONOSUPPORT
	 * (docs/protocol.md, Versioning); -EINVAL here would pre-empt that.
	 */
	return 0;
}

static int check_hello_reply(const void *p, uint32_t len)
{
	struct smio_hello_reply m;

	memcpy(&m, p, sizeof(m));
	if (m.version != SMIO_VERSION || m.pad)
		return -EINVAL;
	return 0;
}

static int check_status(const void *p, uint32_t len)
{
	struct smio_status m;

	memcpy(&m, p, sizeof(m));
	if (!is_bool(m.iommu) || !str_ok(m.name, sizeof(m.name)))
		return -EINVAL;
	return 0;
}

static int check_func_info(const struct smio_func_info *f)
{
	if (!is_bool(f->lendable) || f->pad)
		return -EINVAL;
	if (!str_ok(f->name, sizeof(f->name)) || !str_ok(f->model, sizeof(f->model)))
		return -EINVAL;
	return 0;
}

static int check_func_list(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_func_list m;
	struct smio_func_info f;
	uint32_t i;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_MAX_FUNCS || m.pad)
		return -EINVAL;
	if (len != sizeof(m) + (size_t)m.n * sizeof(f))
		return -EINVAL;
	for (i = 0; i < m.n; i++) {
		memcpy(&f, b + sizeof(m) + (size_t)i * sizeof(f), sizeof(f));
		if (check_func_info(&f))
			return -EINVAL;
	}
	return 0;
}

static int check_bdf(const void *p, uint32_t len)
{
	struct smio_bdf m;

	memcpy(&m, p, sizeof(m));
	return m.pad ? -EINVAL : 0;
}

static int check_cfg(const void *p, uint32_t len)
{
	struct smio_cfg m;

	memcpy(&m, p, sizeof(m));
	if (m.size != 1 && m.size != 2 && m.size != 4)
		return -EINVAL;
	if (m.off >= CFG_SPACE_SIZE || m.off % m.size)
		return -EINVAL;
	if (!all_zero(m.pad, sizeof(m.pad)))
		return -EINVAL;
	/* A value wider than the access would be silently truncated. */
	if (m.size < 4 && (m.value >> (8 * m.size)))
		return -EINVAL;
	return 0;
}

static int check_cfg_dump_reply(const void *p, uint32_t len)
{
	return 0;	/* raw bytes; the length was checked by the table */
}

static int check_route_req(const void *p, uint32_t len)
{
	struct smio_route_req m;

	memcpy(&m, p, sizeof(m));
	if (!is_bool(m.write) || !is_bool(m.nocache) || m.pad)
		return -EINVAL;
	if (!access_ok(m.addr, m.len))
		return -EINVAL;
	return 0;
}

static int check_hop(const struct smio_hop *h)
{
	if (h->kind < 1 || h->kind > 9 || h->pad)
		return -EINVAL;
	if (!str_ok(h->name, sizeof(h->name)))
		return -EINVAL;
	return 0;
}

static int check_route_reply(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_route_reply m;
	struct smio_hop h;
	uint32_t i;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.nhops > SMIO_MAX_HOPS)
		return -EINVAL;
	if (len != sizeof(m) + (size_t)m.nhops * sizeof(h))
		return -EINVAL;
	if (m.status < 0 || !is_bool(m.cached) || !is_bool(m.forward))
		return -EINVAL;
	if (m.pad || m.tgt.pad || !str_ok(m.reason, sizeof(m.reason)))
		return -EINVAL;
	for (i = 0; i < m.nhops; i++) {
		memcpy(&h, b + sizeof(m) + (size_t)i * sizeof(h), sizeof(h));
		if (check_hop(&h))
			return -EINVAL;
	}
	return 0;
}

static int check_map_reply(const void *p, uint32_t len)
{
	struct smio_map_reply m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || m.status < 0)
		return -EINVAL;
	/* The client mmaps [offset, offset + len) of the fd: it must lie inside. */
	if (m.offset > m.fd_size || m.len > m.fd_size - m.offset)
		return -EINVAL;
	return 0;
}

static int check_step(const void *p, uint32_t len)
{
	struct smio_step m;

	memcpy(&m, p, sizeof(m));
	if (!is_bool(m.write) || !all_zero(m.pad, sizeof(m.pad)))
		return -EINVAL;
	if (!access_ok(m.addr, m.len))
		return -EINVAL;
	return 0;
}

static int check_invalidate(const void *p, uint32_t len)
{
	struct smio_invalidate m;

	memcpy(&m, p, sizeof(m));
	return m.pad ? -EINVAL : 0;
}

static int check_ntb_ref(const void *p, uint32_t len)
{
	struct smio_ntb_ref m;

	memcpy(&m, p, sizeof(m));
	return m.pad ? -EINVAL : 0;
}

static int check_ntb_info(const void *p, uint32_t len)
{
	struct smio_ntb_info m;

	memcpy(&m, p, sizeof(m));
	if (!is_bool(m.link_up) || !str_ok(m.name, sizeof(m.name)))
		return -EINVAL;
	if (m.lut_used > m.lut_entries || m.rid_used > m.rid_entries)
		return -EINVAL;
	return 0;
}

static int check_ntb_lut(const void *p, uint32_t len)
{
	struct smio_ntb_lut m;

	memcpy(&m, p, sizeof(m));
	return m.pad ? -EINVAL : 0;
}

static int check_ntb_lut_clear(const void *p, uint32_t len)
{
	struct smio_ntb_lut m;

	memcpy(&m, p, sizeof(m));
	/* "first free" only means something when allocating. */
	if (m.entry == UINT32_MAX)
		return -EINVAL;
	return check_ntb_lut(p, len);
}

static int check_ntb_rid(const void *p, uint32_t len)
{
	struct smio_ntb_rid m;

	memcpy(&m, p, sizeof(m));
	return m.pad ? -EINVAL : 0;
}

static int check_ntb_link(const void *p, uint32_t len)
{
	struct smio_ntb_link m;

	memcpy(&m, p, sizeof(m));
	return is_bool(m.up) ? 0 : -EINVAL;
}

static int check_ntb_db(const void *p, uint32_t len)
{
	return 0;	/* any ntb index / bit mask; the device checks them */
}

static int check_ntb_spad(const void *p, uint32_t len)
{
	struct smio_ntb_spad m;

	memcpy(&m, p, sizeof(m));
	return is_bool(m.write) ? 0 : -EINVAL;
}

static int check_iommu(const void *p, uint32_t len)
{
	struct smio_iommu m;

	memcpy(&m, p, sizeof(m));
	if (m.op < SMIO_IOMMU_ALLOC || m.op > SMIO_IOMMU_DETACH)
		return -EINVAL;
	if (!all_zero(m.pad, sizeof(m.pad)))
		return -EINVAL;
	return 0;
}

static int check_iommu_map(const void *p, uint32_t len)
{
	struct smio_iommu_map m;

	memcpy(&m, p, sizeof(m));
	if (m.prot < 1 || m.prot > 3 || m.size == 0)
		return -EINVAL;
	if ((m.iova | m.paddr | m.size) & PAGE_MASK_4K)
		return -EINVAL;
	if (!range_ok(m.iova, m.size) || !range_ok(m.paddr, m.size))
		return -EINVAL;
	return 0;
}

static int check_iommu_faults(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_iommu_faults m;
	struct smio_iommu_fault f;
	uint32_t i;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.n > MAX_FAULTS || m.pad || m.total < m.n)
		return -EINVAL;
	if (len != sizeof(m) + (size_t)m.n * sizeof(f))
		return -EINVAL;
	for (i = 0; i < m.n; i++) {
		memcpy(&f, b + sizeof(m) + (size_t)i * sizeof(f), sizeof(f));
		if (!is_bool(f.write))
			return -EINVAL;
	}
	return 0;
}

/* ---- the type table ---- */

/*
 * One direction of a message type. size is the exact payload length, or the
 * fixed head of a variable payload (var: the check function bounds the rest).
 * A NULL check with size 0 means "empty payload".
 */
struct dir_spec {
	uint32_t size;
	bool var;
	check_fn check;
};

struct type_spec {
	const char *name;
	bool no_reply;		/* one-way message: a reply is a protocol error */
	struct dir_spec req, rep;
};

#define EMPTY		{ 0, false, NULL }
#define FIXED(s, fn)	{ sizeof(s), false, fn }
#define VAR(s, fn)	{ sizeof(s), true, fn }

static const struct type_spec types[SMIO_TYPE_MAX] = {
	[SMIO_HELLO] = { "HELLO", false,
		FIXED(struct smio_hello, check_hello),
		FIXED(struct smio_hello_reply, check_hello_reply) },
	[SMIO_STATUS] = { "STATUS", false,
		EMPTY, FIXED(struct smio_status, check_status) },
	[SMIO_SHUTDOWN] = { "SHUTDOWN", false, EMPTY, EMPTY },

	[SMIO_FUNC_LIST] = { "FUNC_LIST", false,
		EMPTY, VAR(struct smio_func_list, check_func_list) },
	[SMIO_CFG_READ] = { "CFG_READ", false,
		FIXED(struct smio_cfg, check_cfg), FIXED(struct smio_cfg, check_cfg) },
	[SMIO_CFG_WRITE] = { "CFG_WRITE", false,
		FIXED(struct smio_cfg, check_cfg), EMPTY },
	[SMIO_CFG_DUMP] = { "CFG_DUMP", false,
		FIXED(struct smio_bdf, check_bdf),
		{ CFG_SPACE_SIZE, false, check_cfg_dump_reply } },

	[SMIO_ROUTE] = { "ROUTE", false,
		FIXED(struct smio_route_req, check_route_req),
		VAR(struct smio_route_reply, check_route_reply) },
	[SMIO_MAP] = { "MAP", false,
		FIXED(struct smio_route_req, check_route_req),
		FIXED(struct smio_map_reply, check_map_reply) },

	[SMIO_NTB_INFO] = { "NTB_INFO", false,
		FIXED(struct smio_ntb_ref, check_ntb_ref),
		FIXED(struct smio_ntb_info, check_ntb_info) },
	[SMIO_NTB_LUT_SET] = { "NTB_LUT_SET", false,
		FIXED(struct smio_ntb_lut, check_ntb_lut),
		FIXED(struct smio_ntb_lut, check_ntb_lut) },
	[SMIO_NTB_LUT_CLEAR] = { "NTB_LUT_CLEAR", false,
		FIXED(struct smio_ntb_lut, check_ntb_lut_clear), EMPTY },
	[SMIO_NTB_RID_ADD] = { "NTB_RID_ADD", false,
		FIXED(struct smio_ntb_rid, check_ntb_rid), EMPTY },
	[SMIO_NTB_RID_DEL] = { "NTB_RID_DEL", false,
		FIXED(struct smio_ntb_rid, check_ntb_rid), EMPTY },
	[SMIO_NTB_LINK] = { "NTB_LINK", false,
		FIXED(struct smio_ntb_link, check_ntb_link), EMPTY },
	[SMIO_NTB_DB_RING] = { "NTB_DB_RING", false,
		FIXED(struct smio_ntb_db, check_ntb_db), EMPTY },
	[SMIO_NTB_SPAD] = { "NTB_SPAD", false,
		FIXED(struct smio_ntb_spad, check_ntb_spad),
		FIXED(struct smio_ntb_spad, check_ntb_spad) },

	[SMIO_IOMMU_DOMAIN] = { "IOMMU_DOMAIN", false,
		FIXED(struct smio_iommu, check_iommu),
		FIXED(struct smio_iommu, check_iommu) },
	[SMIO_IOMMU_MAP] = { "IOMMU_MAP", false,
		FIXED(struct smio_iommu_map, check_iommu_map), EMPTY },
	[SMIO_IOMMU_UNMAP] = { "IOMMU_UNMAP", false,
		FIXED(struct smio_iommu_map, check_iommu_map), EMPTY },
	[SMIO_IOMMU_FAULTS] = { "IOMMU_FAULTS", false,
		EMPTY, VAR(struct smio_iommu_faults, check_iommu_faults) },

	[SMIO_PEER_STEP] = { "PEER_STEP", false,
		FIXED(struct smio_step, check_step),
		VAR(struct smio_route_reply, check_route_reply) },
	[SMIO_PEER_INVALIDATE] = { "PEER_INVALIDATE", true,
		FIXED(struct smio_invalidate, check_invalidate), EMPTY },
	[SMIO_PEER_DB] = { "PEER_DB", false,
		FIXED(struct smio_ntb_db, check_ntb_db), EMPTY },
	[SMIO_NVME_ADMIN] = { "NVME_ADMIN", false,
		VAR(struct smio_nvme_admin, smio_check_nvme_admin),
		VAR(struct smio_nvme_cpl, smio_check_nvme_cpl) },
	[SMIO_NVME_IO] = { "NVME_IO", false,
		VAR(struct smio_nvme_io, smio_check_nvme_io),
		VAR(struct smio_nvme_cpl, smio_check_nvme_cpl) },
	[SMIO_ACCEL_OP] = { "ACCEL_OP", false,
		FIXED(struct smio_accel_op, smio_check_accel_op),
		FIXED(struct smio_accel_result, smio_check_accel_result) },
	[SMIO_PEER_SPAD] = { "PEER_SPAD", false,
		FIXED(struct smio_ntb_spad, check_ntb_spad),
		FIXED(struct smio_ntb_spad, check_ntb_spad) },

	[SMIO_SEG_CREATE] = { "SEG_CREATE", false,
		FIXED(struct smio_seg_create, smio_check_seg_create),
		FIXED(struct smio_seg_info, smio_check_seg_info) },
	[SMIO_SEG_REMOVE] = { "SEG_REMOVE", false,
		FIXED(struct smio_seg_id, smio_check_seg_id), EMPTY },
	[SMIO_SEG_AVAILABLE] = { "SEG_AVAILABLE", false,
		FIXED(struct smio_seg_avail, smio_check_seg_avail), EMPTY },
	[SMIO_SEG_MAP_LOCAL] = { "SEG_MAP_LOCAL", false,
		FIXED(struct smio_seg_id, smio_check_seg_id),
		FIXED(struct smio_map_reply, check_map_reply) },
	[SMIO_SEG_CONNECT] = { "SEG_CONNECT", false,
		FIXED(struct smio_seg_connect, smio_check_seg_connect),
		FIXED(struct smio_seg_conn, smio_check_seg_conn) },
	[SMIO_SEG_MAP_REMOTE] = { "SEG_MAP_REMOTE", false,
		FIXED(struct smio_seg_map, smio_check_seg_map),
		FIXED(struct smio_map_reply, check_map_reply) },
	[SMIO_SEG_DISCONNECT] = { "SEG_DISCONNECT", false,
		FIXED(struct smio_seg_conn_ref, smio_check_seg_conn_ref), EMPTY },
	[SMIO_PEER_SEG_LOOKUP] = { "PEER_SEG_LOOKUP", false,
		FIXED(struct smio_seg_id, smio_check_seg_id),
		FIXED(struct smio_peer_seg, smio_check_peer_seg) },
	[SMIO_PEER_SEG_RELEASE] = { "PEER_SEG_RELEASE", false,
		FIXED(struct smio_peer_seg_ref, smio_check_peer_seg_ref), EMPTY },
	[SMIO_PEER_MEMFD] = { "PEER_MEMFD", false,
		FIXED(struct smio_peer_memfd, smio_check_peer_memfd_req),
		FIXED(struct smio_peer_memfd, smio_check_peer_memfd_reply) },

	[SMIO_INTR_CREATE] = { "INTR_CREATE", false,
		FIXED(struct smio_intr_create, smio_check_intr_create),
		FIXED(struct smio_intr_info, smio_check_intr_id) },
	[SMIO_INTR_REMOVE] = { "INTR_REMOVE", false,
		FIXED(struct smio_intr_id, smio_check_intr_id), EMPTY },
	[SMIO_INTR_CONNECT] = { "INTR_CONNECT", false,
		FIXED(struct smio_intr_connect, smio_check_intr_connect),
		FIXED(struct smio_intr_conn, smio_check_intr_conn) },
	[SMIO_INTR_TRIGGER] = { "INTR_TRIGGER", false,
		VAR(struct smio_intr_trigger, smio_check_intr_msg), EMPTY },
	[SMIO_INTR_RECEIVE] = { "INTR_RECEIVE", false,
		FIXED(struct smio_intr_id, smio_check_intr_receive),
		VAR(struct smio_intr_data, smio_check_intr_data) },
	[SMIO_INTR_DISCONNECT] = { "INTR_DISCONNECT", false,
		FIXED(struct smio_intr_conn_ref, smio_check_intr_conn_ref), EMPTY },
	[SMIO_PEER_INTR_LOOKUP] = { "PEER_INTR_LOOKUP", false,
		FIXED(struct smio_intr_id, smio_check_intr_id),
		FIXED(struct smio_peer_intr, smio_check_peer_intr) },
	[SMIO_PEER_INTR_FIRE] = { "PEER_INTR_FIRE", false,
		VAR(struct smio_peer_intr_fire, smio_check_peer_intr_fire), EMPTY },

	[SMIO_DMA_QUEUE_CREATE] = { "DMA_QUEUE_CREATE", false,
		FIXED(struct smio_dma_queue_create, smio_check_dma_queue_create),
		FIXED(struct smio_dma_queue, smio_check_dma_queue) },
	[SMIO_DMA_QUEUE_REMOVE] = { "DMA_QUEUE_REMOVE", false,
		FIXED(struct smio_dma_queue_ref, smio_check_dma_queue_ref), EMPTY },
	[SMIO_DMA_START] = { "DMA_START", false,
		VAR(struct smio_dma_start, smio_check_dma_start),
		FIXED(struct smio_dma_state, smio_check_dma_state) },
	[SMIO_DMA_STATE] = { "DMA_STATE", false,
		FIXED(struct smio_dma_queue_ref, smio_check_dma_queue_ref),
		FIXED(struct smio_dma_state, smio_check_dma_state) },

	[SMIO_DEV_LIST] = { "DEV_LIST", false,
		EMPTY, VAR(struct smio_dev_list, smio_check_dev_list) },
	[SMIO_DEV_BORROW] = { "DEV_BORROW", false,
		FIXED(struct smio_dev_borrow, smio_check_dev_borrow),
		FIXED(struct smio_dev_borrowed, smio_check_dev_borrowed) },
	[SMIO_DEV_RETURN] = { "DEV_RETURN", false,
		FIXED(struct smio_dev_ref, smio_check_dev_ref), EMPTY },
	[SMIO_DEV_RELEASE_EXCL] = { "DEV_RELEASE_EXCL", false,
		FIXED(struct smio_dev_ref, smio_check_dev_ref), EMPTY },
	[SMIO_DEV_SEG_CONNECT] = { "DEV_SEG_CONNECT", false,
		FIXED(struct smio_dev_seg_connect, smio_check_dev_seg_connect),
		FIXED(struct smio_seg_conn, smio_check_seg_conn) },
	[SMIO_DEV_MAP_LOCAL] = { "DEV_MAP_LOCAL", false,
		FIXED(struct smio_dev_map_local, smio_check_dev_map_local),
		FIXED(struct smio_dev_mapping, smio_check_dev_mapping) },
	[SMIO_DEV_MAP_REMOTE] = { "DEV_MAP_REMOTE", false,
		FIXED(struct smio_dev_map_remote, smio_check_dev_map_remote),
		FIXED(struct smio_dev_mapping, smio_check_dev_mapping) },
	[SMIO_DEV_UNMAP] = { "DEV_UNMAP", false,
		FIXED(struct smio_dev_unmap, smio_check_dev_unmap), EMPTY },
	[SMIO_DEV_RID] = { "DEV_RID", false,
		FIXED(struct smio_dev_rid, smio_check_dev_rid), EMPTY },
	[SMIO_DEV_SEG_CREATE] = { "DEV_SEG_CREATE", false,
		FIXED(struct smio_dev_seg_create, smio_check_dev_seg_create),
		FIXED(struct smio_dev_seg, smio_check_dev_seg) },
	[SMIO_PEER_DEV_LIST] = { "PEER_DEV_LIST", false,
		EMPTY, VAR(struct smio_dev_list, smio_check_dev_list) },
	[SMIO_PEER_DEV_BORROW] = { "PEER_DEV_BORROW", false,
		FIXED(struct smio_peer_dev_borrow, smio_check_peer_dev_borrow),
		FIXED(struct smio_peer_dev_ref, smio_check_peer_dev_ref) },
	[SMIO_PEER_DEV_RETURN] = { "PEER_DEV_RETURN", false,
		FIXED(struct smio_peer_dev_ref, smio_check_peer_dev_ref), EMPTY },
	[SMIO_PEER_DEV_RELEASE_EXCL] = { "PEER_DEV_RELEASE_EXCL", false,
		FIXED(struct smio_peer_dev_ref, smio_check_peer_dev_ref), EMPTY },
	[SMIO_PEER_DEV_BAR] = { "PEER_DEV_BAR", false,
		FIXED(struct smio_peer_dev_bar, smio_check_peer_dev_bar_req),
		FIXED(struct smio_peer_dev_bar, smio_check_peer_dev_bar_reply) },
	[SMIO_PEER_DEV_MAP] = { "PEER_DEV_MAP", false,
		FIXED(struct smio_peer_dev_map, smio_check_peer_dev_map),
		FIXED(struct smio_peer_dev_map, smio_check_peer_dev_map_reply) },
	[SMIO_PEER_DEV_UNMAP] = { "PEER_DEV_UNMAP", false,
		FIXED(struct smio_peer_dev_map, smio_check_peer_dev_unmap), EMPTY },
	[SMIO_PEER_DEV_SEG_CREATE] = { "PEER_DEV_SEG_CREATE", false,
		FIXED(struct smio_peer_dev_seg, smio_check_peer_dev_seg),
		FIXED(struct smio_peer_dev_seg, smio_check_peer_dev_seg) },
	[SMIO_PEER_DEV_SEG_LOOKUP] = { "PEER_DEV_SEG_LOOKUP", false,
		FIXED(struct smio_peer_dev_seg, smio_check_peer_dev_seg),
		FIXED(struct smio_peer_dev_seg, smio_check_peer_dev_seg) },

	[SMIO_SEG_ATTACH] = { "SEG_ATTACH", false,
		FIXED(struct smio_seg_attach, smio_check_seg_attach),
		FIXED(struct smio_seg_info, smio_check_seg_info) },
	[SMIO_PEER_SEG_GONE] = { "PEER_SEG_GONE", true,
		FIXED(struct smio_peer_seg_ref, smio_check_peer_seg_ref), EMPTY },
	[SMIO_SEG_EVENTS] = { "SEG_EVENTS", false,
		FIXED(struct smio_seg_conn_ref, smio_check_seg_conn_ref), EMPTY },
	[SMIO_SEG_STATE] = { "SEG_STATE", false,
		FIXED(struct smio_seg_conn_ref, smio_check_seg_conn_ref),
		FIXED(struct smio_seg_state, smio_check_seg_state) },

	[SMIO_LEND_POOL] = { "LEND_POOL", false,
		EMPTY, VAR(struct smio_lend_pool, smio_check_lend_pool) },
	[SMIO_LEND_BORROW] = { "LEND_BORROW", false,
		FIXED(struct smio_lend_req, smio_check_lend_req),
		FIXED(struct smio_lend_info, smio_check_lend_info) },
	[SMIO_LEND_RETURN] = { "LEND_RETURN", false,
		FIXED(struct smio_lend_req, smio_check_lend_req), EMPTY },
	[SMIO_PEER_LEND_POOL] = { "PEER_LEND_POOL", false,
		EMPTY, VAR(struct smio_lend_pool, smio_check_lend_pool) },
	[SMIO_PEER_LEND_SETUP] = { "PEER_LEND_SETUP", false,
		FIXED(struct smio_peer_lend_setup, smio_check_peer_lend_setup),
		FIXED(struct smio_lend_grant, smio_check_lend_grant) },
	[SMIO_PEER_LEND_RELEASE] = { "PEER_LEND_RELEASE", false,
		FIXED(struct smio_peer_lend_ref, smio_check_peer_lend_ref), EMPTY },
	[SMIO_PEER_LEND_CFG] = { "PEER_LEND_CFG", false,
		FIXED(struct smio_peer_lend_cfg, smio_check_peer_lend_cfg),
		FIXED(struct smio_peer_lend_cfg, smio_check_peer_lend_cfg) },
	[SMIO_PEER_LEND_P2P] = { "PEER_LEND_P2P", false,
		FIXED(struct smio_peer_lend_p2p, smio_check_peer_lend_p2p),
		FIXED(struct smio_peer_lend_p2p, smio_check_peer_lend_p2p) },
	[SMIO_PEER_LEND_HOPS] = { "PEER_LEND_HOPS", false,
		FIXED(struct smio_peer_lend_p2p, smio_check_peer_lend_p2p),
		FIXED(struct smio_peer_lend_p2p, smio_check_peer_lend_p2p) },
	[SMIO_LEND_P2P] = { "LEND_P2P", false,
		FIXED(struct smio_lend_p2p, smio_check_lend_p2p),
		FIXED(struct smio_lend_p2p, smio_check_lend_p2p) },
};

/* The table has holes between the groups: a hole has no name. */
static const struct type_spec *type_lookup(uint16_t type)
{
	if (type >= SMIO_TYPE_MAX || !types[type].name)
		return NULL;
	return &types[type];
}

int smio_hdr_check(const struct smio_hdr *h)
{
	if (!h)
		return -EINVAL;
	if (h->magic != SMIO_MAGIC || h->version != SMIO_VERSION)
		return -EPROTO;
	if (!type_lookup(h->type))
		return -EPROTO;
	if (h->len > SMIO_MAX_PAYLOAD)
		return -EPROTO;
	/* Unknown flags may change the framing (e.g. more fds): refuse them. */
	if (h->flags & ~(uint32_t)(SMIO_F_REPLY | SMIO_F_FD))
		return -EPROTO;
	if (h->flags & SMIO_F_REPLY) {
		if (h->status > 0 || h->status < -MAX_ERRNO)
			return -EPROTO;
	} else if (h->status) {
		return -EPROTO;
	}
	return 0;
}

int smio_payload_check(uint16_t type, bool reply, const void *payload, uint32_t len)
{
	const struct type_spec *t = type_lookup(type);
	const struct dir_spec *d;

	if (!t)
		return -EPROTO;
	if (reply && t->no_reply)
		return -EPROTO;
	if (len > SMIO_MAX_PAYLOAD || (len && !payload))
		return -EINVAL;

	d = reply ? &t->rep : &t->req;
	if (d->var ? len < d->size : len != d->size)
		return -EINVAL;
	if (!d->check)
		return 0;
	return d->check(payload, len);
}

const char *smio_type_name(uint16_t type)
{
	const struct type_spec *t = type_lookup(type);

	return t ? t->name : "UNKNOWN";
}
