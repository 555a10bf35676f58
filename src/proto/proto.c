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
 * the type table, generated from the one message list (smartio/proto/msgs.h)
 * together with the list's queries (smio_msg_*); the per-family validators
 * are in proto_dev.c (driver and device-pool messages), proto_seg.c (SISCI
 * segments, interrupts, DMA queues), proto_node.c (the cluster's nodes and a
 * host's adapters, for libsisci) and proto_lend.c (Device Lending).
 */
#include <errno.h>
#include <string.h>

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
_Static_assert(sizeof(struct smio_sriov_req) == 8, "sriov_req layout");
_Static_assert(sizeof(struct smio_sriov_state) == 16, "sriov_state layout");
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
_Static_assert(sizeof(struct smio_route_reply) == 208, "route_reply layout");
_Static_assert(sizeof(struct smio_map_reply) == 40, "map_reply layout");
_Static_assert(sizeof(struct smio_step) == 40, "step layout");
_Static_assert(sizeof(struct smio_cz_info) == 192, "cz_info layout");
_Static_assert(sizeof(struct smio_cz_grant) == 192, "cz_grant layout");
_Static_assert(sizeof(struct smio_peer_cz_bind) == 24, "peer_cz_bind layout");
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
_Static_assert(sizeof(struct smio_seg_owner_ev) == 16, "seg_owner_ev layout");
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

static int check_sriov_req(const void *p, uint32_t len)
{
	struct smio_sriov_req m;

	memcpy(&m, p, sizeof(m));
	if (m.set > 1 || !all_zero(m.pad, sizeof(m.pad)) || (!m.set && m.numvfs))
		return -EINVAL;
	return 0;
}

static int check_sriov_state(const void *p, uint32_t len)
{
	struct smio_sriov_state m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.num_vfs > m.total_vfs ? -EINVAL : 0;
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
	if (m.pad || !all_zero(m.pad2, sizeof(m.pad2)) || m.tgt.pad ||
	    !str_ok(m.reason, sizeof(m.reason)))
		return -EINVAL;
	/* As a step's remap: FAB_CZ_NONE, _TO_OWNER, _TO_USER (with its UID), and only forward. */
	if (m.next_cz > 2 || (m.next_cz && !m.forward) || (m.next_cz != 2 && m.next_rid))
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
	if (!is_bool(m.write) || !is_bool(m.mcast) || m.pad || !all_zero(m.pad2, sizeof(m.pad2)))
		return -EINVAL;
	/* FAB_CZ_NONE, _TO_OWNER, _TO_USER; a requester only with _TO_USER. */
	if (m.cz > 2 || (m.cz != 2 && m.rid) || (m.cz && m.mcast))
		return -EINVAL;
	if (!access_ok(m.addr, m.len))
		return -EINVAL;
	return 0;
}

static int check_invalidate(const void *p, uint32_t len)
{
	struct smio_invalidate m;

	/* Any epoch and link count: only their changes mean something. */
	memcpy(&m, p, sizeof(m));
	return m.origin_host > 0xffff ? -EINVAL : 0;
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

/* ---- the type table, generated from the message list (smartio/proto/msgs.h) ---- */

/* A row as the codec holds it: the public description and the validators. */
struct type_spec {
	struct smio_msg_desc d;
	check_fn req_check, rep_check;
};

/* Take a payload column (kind, size, validator) apart. */
#define PL_DESC_(kind, size, check)	{ (size), (kind) }
#define PL_DESC(spec)			PL_DESC_ spec
#define PL_CHECK_(kind, size, check)	check
#define PL_CHECK(spec)			PL_CHECK_ spec

/*
 * Indexed by number. Two rows with one number would initialise one element
 * twice, which -Werror turns into a build failure (gcc -Woverride-init,
 * clang -Winitializer-overrides).
 */
#define TYPE_SPEC(name, num, fam, roles, flags, req, rep)				\
	[SMIO_##name] = { { #name, SMIO_##name, SMIO_FAM_##fam, (roles), (flags),	\
			    PL_DESC(req), PL_DESC(rep) }, PL_CHECK(req), PL_CHECK(rep) },

static const struct type_spec types[SMIO_TYPE_MAX] = {
	SMIO_MSG_LIST(TYPE_SPEC)
};

/* The rows in list order, for smio_msg_at(). */
#define TYPE_ORDER(name, num, fam, roles, flags, req, rep)	SMIO_##name,

static const uint16_t order[] = {
	SMIO_MSG_LIST(TYPE_ORDER)
};

/* The table has holes between the groups: a hole has no name. */
static const struct type_spec *type_lookup(uint16_t type)
{
	if (type >= SMIO_TYPE_MAX || !types[type].d.name)
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
	const struct smio_payload_desc *d;
	check_fn check;

	if (!t)
		return -EPROTO;
	d = reply ? &t->d.rep : &t->d.req;
	/* No such direction: a reply to a one-way message. */
	if (d->kind == SMIO_PAYLOAD_NONE || (reply && (t->d.flags & SMIO_MSG_F_NO_REPLY)))
		return -EPROTO;
	if (len > SMIO_MAX_PAYLOAD || (len && !payload))
		return -EINVAL;
	if (d->kind == SMIO_PAYLOAD_VAR ? len < d->size : len != d->size)
		return -EINVAL;
	check = reply ? t->rep_check : t->req_check;
	if (!check)
		return 0;
	return check(payload, len);
}

const char *smio_type_name(uint16_t type)
{
	const struct type_spec *t = type_lookup(type);

	return t ? t->d.name : "UNKNOWN";
}

const struct smio_msg_desc *smio_msg_desc(uint16_t type)
{
	const struct type_spec *t = type_lookup(type);

	return t ? &t->d : NULL;
}

size_t smio_msg_count(void)
{
	return sizeof(order) / sizeof(order[0]);
}

const struct smio_msg_desc *smio_msg_at(size_t i)
{
	return i < smio_msg_count() ? &types[order[i]].d : NULL;
}

uint32_t smio_msg_roles(uint16_t type)
{
	const struct type_spec *t = type_lookup(type);

	return t ? t->d.roles : 0;
}

uint32_t smio_msg_flags(uint16_t type)
{
	const struct type_spec *t = type_lookup(type);

	return t ? t->d.flags : 0;
}

int smio_msg_family(uint16_t type)
{
	const struct type_spec *t = type_lookup(type);

	return t ? t->d.family : -EPROTO;
}

const char *smio_family_name(int family)
{
	static const char *const names[SMIO_FAM_COUNT] = {
		[SMIO_FAM_CORE] = "CORE", [SMIO_FAM_ROUTE] = "ROUTE", [SMIO_FAM_NTB] = "NTB",
		[SMIO_FAM_IOMMU] = "IOMMU", [SMIO_FAM_DRIVER] = "DRIVER", [SMIO_FAM_SEG] = "SEG",
		[SMIO_FAM_INTR] = "INTR", [SMIO_FAM_DMA] = "DMA", [SMIO_FAM_DEV] = "DEV",
		[SMIO_FAM_LEND] = "LEND",
	};

	if (family <= 0 || family >= SMIO_FAM_COUNT || !names[family])
		return "UNKNOWN";
	return names[family];
}
