// SPDX-License-Identifier: MIT
/* Codec checks of the driver (NVMe, accelerator) and SmartIO device-pool messages. */
#include <errno.h>
#include <string.h>

#include "proto_priv.h"
#include "smartio/proto.h"

/* ---- driver messages ---- */

int smio_check_nvme_admin(const void *p, uint32_t len)
{
	struct smio_nvme_admin m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || m.pad2 || m.dir > SMIO_DIR_FROM_DEV || m.data_len > SMIO_NVME_MAX_DATA)
		return -EINVAL;
	if ((m.dir == SMIO_DIR_NONE) != (m.data_len == 0))
		return -EINVAL;
	/* Only a write carries its data along. */
	if (len != sizeof(m) + (m.dir == SMIO_DIR_TO_DEV ? m.data_len : 0))
		return -EINVAL;
	return 0;
}

int smio_check_nvme_io(const void *p, uint32_t len)
{
	struct smio_nvme_io m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || m.op < SMIO_NVME_READ || m.op > SMIO_NVME_DEALLOCATE || !m.nsid)
		return -EINVAL;
	if (m.op == SMIO_NVME_FLUSH ? m.nlb != 0 : (m.nlb == 0 || m.nlb > 65536))
		return -EINVAL;
	if (m.slba + m.nlb < m.slba)
		return -EINVAL;
	if (m.op == SMIO_NVME_WRITE ? (m.data_len == 0 || m.data_len > SMIO_NVME_MAX_DATA ||
				       m.data_len % 512) : m.data_len != 0)
		return -EINVAL;
	return len == sizeof(m) + m.data_len ? 0 : -EINVAL;
}

/* A buffer, not a disk: 1 GiB is more than any provider here has. */
#define P2PMEM_MAX_SIZE  (1ull << 30)

int smio_check_p2pmem_req(const void *p, uint32_t len)
{
	struct smio_p2pmem_req m;

	if (len != sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (!m.size || m.size > P2PMEM_MAX_SIZE || (m.flags & ~SMIO_P2PMEM_F_FALLBACK))
		return -EINVAL;
	return 0;
}

int smio_check_p2pmem_grant(const void *p, uint32_t len)
{
	struct smio_p2pmem_grant m;

	if (len != sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || m.bar > 5 || (m.bus & 4095) || (m.size & 4095) || (!m.bus != !m.size))
		return -EINVAL;
	return 0;
}

int smio_check_p2pmem_free(const void *p, uint32_t len)
{
	struct smio_p2pmem_free m;

	if (len != sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	return m.bus && !(m.bus & 4095) ? 0 : -EINVAL;
}

int smio_check_nvme_copy(const void *p, uint32_t len)
{
	struct smio_nvme_copy m;

	if (len != sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || !m.src_nsid || !m.dst_nsid || !m.nlb || m.nlb > SMIO_NVME_COPY_MAX_NLB ||
	    m.src_slba + m.nlb < m.src_slba || m.dst_slba + m.nlb < m.dst_slba ||
	    (m.flags & ~(SMIO_NVME_COPY_F_P2PMEM | SMIO_NVME_COPY_F_FALLBACK)) ||
	    ((m.flags & SMIO_NVME_COPY_F_FALLBACK) && !(m.flags & SMIO_NVME_COPY_F_P2PMEM)))
		return -EINVAL;
	return 0;
}

int smio_check_nvme_copy_result(const void *p, uint32_t len)
{
	struct smio_nvme_copy_result m;

	if (len != sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	return m.pad || m.bar > 5 || (m.status & 0x8000) || (!m.provider && (m.bar || m.hops)) ?
	       -EINVAL : 0;
}

int smio_check_nvme_cpl(const void *p, uint32_t len)
{
	struct smio_nvme_cpl m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || m.pad2 || m.data_len > SMIO_NVME_MAX_DATA || (m.status & 0x8000))
		return -EINVAL;
	return len == sizeof(m) + m.data_len ? 0 : -EINVAL;
}

int smio_check_accel_op(const void *p, uint32_t len)
{
	struct smio_accel_op m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || m.kind < SMIO_ACCEL_COPY || m.kind > SMIO_ACCEL_INFO || (m.flags & ~0xfu))
		return -EINVAL;
	if ((m.flags & SMIO_ACCEL_F_SRC_DEV) && (m.flags & SMIO_ACCEL_F_SRC_RAM))
		return -EINVAL;
	if ((m.flags & SMIO_ACCEL_F_DST_DEV) && (m.flags & SMIO_ACCEL_F_DST_RAM))
		return -EINVAL;
	if (m.len > (1ull << 40) || m.src + m.len < m.src || m.dst + m.len < m.dst)
		return -EINVAL;
	if (m.kind == SMIO_ACCEL_PINGPONG && (m.iters == 0 || m.iters > 10000000))
		return -EINVAL;
	return 0;
}

int smio_check_accel_result(const void *p, uint32_t len)
{
	struct smio_accel_result m;

	memcpy(&m, p, sizeof(m));
	return m.pad ? -EINVAL : 0;
}

int smio_check_accel_launch(const void *p, uint32_t len)
{
	struct smio_accel_launch m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || m.pad2 || !m.image_len || m.args_len > 4096 || !m.timeout_ms ||
	    m.timeout_ms > SMIO_ACCEL_LAUNCH_MAX_MS ||
	    (m.flags & ~(SMIO_ACCEL_LAUNCH_F_NVMEQ | SMIO_ACCEL_LAUNCH_F_LOADED)))
		return -EINVAL;
	if ((m.flags & SMIO_ACCEL_LAUNCH_F_LOADED) && m.code_off == SMIO_ACCEL_CODE_TOP)
		return -EINVAL;
	if ((m.flags & SMIO_ACCEL_LAUNCH_F_NVMEQ) ?
	    (m.qdepth < 2 || m.qdepth > SMIO_ACCEL_QDEPTH_MAX || !m.nsid) :
	    (m.qdepth || m.nsid || m.nvme_bdf))
		return -EINVAL;
	if ((uint64_t)len != sizeof(m) + m.args_len +
	    ((m.flags & SMIO_ACCEL_LAUNCH_F_LOADED) ? 0 : (uint64_t)m.image_len))
		return -EINVAL;
	/* The argument block is NUL-ended strings. */
	if (m.args_len && ((const uint8_t *)p)[len - 1])
		return -EINVAL;
	return 0;
}

int smio_check_accel_load(const void *p, uint32_t len)
{
	struct smio_accel_load m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || !m.len || m.off + m.len < m.off)
		return -EINVAL;
	return (uint64_t)len == sizeof(m) + (uint64_t)m.len ? 0 : -EINVAL;
}

/* ---- SmartIO device pool ---- */

_Static_assert(sizeof(struct smio_accel_launch) == 40, "accel_launch layout");
_Static_assert(sizeof(struct smio_accel_load) == 16, "accel_load layout");
_Static_assert(sizeof(struct smio_dev_info) == 120, "dev_info layout");
_Static_assert(sizeof(struct smio_dev_list) == 8, "dev_list layout");
_Static_assert(sizeof(struct smio_dev_borrow) == 8, "dev_borrow layout");
_Static_assert(sizeof(struct smio_dev_borrowed) == 128, "dev_borrowed layout");
_Static_assert(sizeof(struct smio_dev_ref) == 8, "dev_ref layout");
_Static_assert(sizeof(struct smio_dev_seg_connect) == 16, "dev_seg_connect layout");
_Static_assert(sizeof(struct smio_dev_map_local) == 32, "dev_map_local layout");
_Static_assert(sizeof(struct smio_dev_map_remote) == 24, "dev_map_remote layout");
_Static_assert(sizeof(struct smio_dev_mapping) == 16, "dev_mapping layout");
_Static_assert(sizeof(struct smio_dev_unmap) == 8, "dev_unmap layout");
_Static_assert(sizeof(struct smio_dev_rid) == 8, "dev_rid layout");
_Static_assert(sizeof(struct smio_peer_dev_borrow) == 8, "peer_dev_borrow layout");
_Static_assert(sizeof(struct smio_peer_dev_ref) == 8, "peer_dev_ref layout");
_Static_assert(sizeof(struct smio_peer_dev_bar) == 24, "peer_dev_bar layout");
_Static_assert(sizeof(struct smio_peer_dev_map) == 40, "peer_dev_map layout");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_dev_list) +
	       SMIO_MAX_DEVS * sizeof(struct smio_dev_info), "device list fits");

static int check_dev_info(const struct smio_dev_info *f)
{
	if (f->pad || f->pad2 || !is_bool(f->exclusive) || f->class > 0xffffff)
		return -EINVAL;
	if (f->fdid != SMIO_FDID(f->node_id, f->bdf) || f->node_id > 0xffff)
		return -EINVAL;
	if (f->exclusive && f->borrowers != 1)
		return -EINVAL;
	for (unsigned i = 0; i < SMIO_DEV_BARS; i++)
		if (f->bar_size[i] > MAX_LEN)
			return -EINVAL;
	return str_ok(f->name, sizeof(f->name)) ? 0 : -EINVAL;
}

int smio_check_dev_list(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_dev_list m;
	struct smio_dev_info f;

	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_MAX_DEVS || m.pad || len != sizeof(m) + (size_t)m.n * sizeof(f))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		memcpy(&f, b + sizeof(m) + (size_t)i * sizeof(f), sizeof(f));
		if (check_dev_info(&f))
			return -EINVAL;
	}
	return 0;
}

int smio_check_dev_borrow(const void *p, uint32_t len)
{
	struct smio_dev_borrow m;

	memcpy(&m, p, sizeof(m));
	return m.flags & ~SMIO_DEV_F_EXCLUSIVE ? -EINVAL : 0;
}

int smio_check_dev_borrowed(const void *p, uint32_t len)
{
	struct smio_dev_borrowed m;

	memcpy(&m, p, sizeof(m));
	if (!m.handle || m.flags & ~SMIO_DEV_F_EXCLUSIVE)
		return -EINVAL;
	return check_dev_info(&m.info);
}

int smio_check_dev_ref(const void *p, uint32_t len)
{
	struct smio_dev_ref m;

	memcpy(&m, p, sizeof(m));
	return !m.handle || m.pad ? -EINVAL : 0;
}

int smio_check_dev_seg_connect(const void *p, uint32_t len)
{
	struct smio_dev_seg_connect m;

	memcpy(&m, p, sizeof(m));
	if (!m.handle || (m.memtype == SMIO_DEV_MEMTYPE_BAR && m.segid >= SMIO_DEV_BARS))
		return -EINVAL;
	if (m.memtype != SMIO_DEV_MEMTYPE_BAR && m.memtype != SMIO_DEV_MEMTYPE_PRIVATE &&
	    m.memtype != SMIO_DEV_MEMTYPE_SHARED)
		return -EINVAL;
	return 0;
}

static bool dev_seg_memtype_ok(uint32_t memtype)
{
	return memtype == SMIO_DEV_MEMTYPE_PRIVATE || memtype == SMIO_DEV_MEMTYPE_SHARED;
}

static bool dev_seg_place_ok(uint32_t place)
{
	return place == SMIO_DEV_PLACE_BORROWER || place == SMIO_DEV_PLACE_LENDER ||
	       place == SMIO_DEV_PLACE_DEVICE;
}

int smio_check_dev_seg_create(const void *p, uint32_t len)
{
	struct smio_dev_seg_create m;

	memcpy(&m, p, sizeof(m));
	if (!m.handle || !dev_seg_memtype_ok(m.memtype) || !dev_seg_place_ok(m.place) ||
	    !m.size || m.size > (1ull << 40))
		return -EINVAL;
	return 0;
}

int smio_check_dev_seg(const void *p, uint32_t len)
{
	struct smio_dev_seg m;

	memcpy(&m, p, sizeof(m));
	return m.pad || !dev_seg_place_ok(m.place) || !m.size ? -EINVAL : 0;
}

int smio_check_peer_dev_seg(const void *p, uint32_t len)
{
	struct smio_peer_dev_seg m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || !m.ref || !dev_seg_memtype_ok(m.memtype) ||
	    (m.place && !dev_seg_place_ok(m.place)) || m.size > (1ull << 40))
		return -EINVAL;
	return 0;
}

int smio_check_dev_map_local(const void *p, uint32_t len)
{
	struct smio_dev_map_local m;

	memcpy(&m, p, sizeof(m));
	if (!m.handle || m.segid == SMIO_SEGID_AUTO || !access_ok(m.offset, m.size) || m.pad ||
	    m.adapter >= SMIO_MAX_ADAPTERS)
		return -EINVAL;
	return 0;
}

int smio_check_dev_map_remote(const void *p, uint32_t len)
{
	struct smio_dev_map_remote m;

	memcpy(&m, p, sizeof(m));
	if (!m.handle || !m.conn || !access_ok(m.offset, m.size))
		return -EINVAL;
	return 0;
}

int smio_check_dev_mapping(const void *p, uint32_t len)
{
	struct smio_dev_mapping m;

	memcpy(&m, p, sizeof(m));
	return !m.map || m.pad ? -EINVAL : 0;
}

int smio_check_dev_unmap(const void *p, uint32_t len)
{
	struct smio_dev_unmap m;

	memcpy(&m, p, sizeof(m));
	return !m.handle || !m.map ? -EINVAL : 0;
}

int smio_check_dev_rid(const void *p, uint32_t len)
{
	struct smio_dev_rid m;

	memcpy(&m, p, sizeof(m));
	return !is_bool(m.add) || m.pad || !m.rid ? -EINVAL : 0;
}

int smio_check_peer_dev_borrow(const void *p, uint32_t len)
{
	struct smio_peer_dev_borrow m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.flags & ~SMIO_DEV_F_EXCLUSIVE ? -EINVAL : 0;
}

int smio_check_peer_dev_ref(const void *p, uint32_t len)
{
	struct smio_peer_dev_ref m;

	memcpy(&m, p, sizeof(m));
	return m.pad || !m.ref ? -EINVAL : 0;
}

int smio_check_peer_dev_bar_req(const void *p, uint32_t len)
{
	struct smio_peer_dev_bar m;

	memcpy(&m, p, sizeof(m));
	return !m.ref || m.bar >= SMIO_DEV_BARS || m.addr || m.size ? -EINVAL : 0;
}

int smio_check_peer_dev_bar_reply(const void *p, uint32_t len)
{
	struct smio_peer_dev_bar m;

	memcpy(&m, p, sizeof(m));
	if (!m.ref || m.bar >= SMIO_DEV_BARS || !seg_extent_ok(m.addr, m.size))
		return -EINVAL;
	return 0;
}

int smio_check_peer_dev_map(const void *p, uint32_t len)
{
	struct smio_peer_dev_map m;

	memcpy(&m, p, sizeof(m));
	if (m.via > SMIO_MAX_ADAPTERS || !m.ref || !seg_extent_ok(m.dest_addr, m.size))
		return -EINVAL;
	return 0;
}

int smio_check_peer_dev_map_reply(const void *p, uint32_t len)
{
	struct smio_peer_dev_map m;

	if (smio_check_peer_dev_map(p, len))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	return !m.map || !range_ok(m.ioaddr, m.size) ? -EINVAL : 0;
}

int smio_check_peer_dev_unmap(const void *p, uint32_t len)
{
	struct smio_peer_dev_map m;

	memcpy(&m, p, sizeof(m));
	return m.via > SMIO_MAX_ADAPTERS || !m.ref || !m.map ? -EINVAL : 0;
}
