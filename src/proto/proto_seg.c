// SPDX-License-Identifier: MIT
/* Codec checks of the SISCI segment, interrupt and DMA-queue messages. */
#include <errno.h>
#include <string.h>

#include "proto_priv.h"
#include "smartio/proto.h"

/* ---- SISCI segments ---- */


int smio_check_seg_create(const void *p, uint32_t len)
{
	struct smio_seg_create m;

	memcpy(&m, p, sizeof(m));
	/* The daemon rounds the size up to a page: bound it before rounding. */
	if (m.flags & ~SMIO_SEG_FLAGS || !m.size || m.size > MAX_LEN)
		return -EINVAL;
	return 0;
}

int smio_check_seg_info(const void *p, uint32_t len)
{
	struct smio_seg_info m;

	memcpy(&m, p, sizeof(m));
	if (m.segid == SMIO_SEGID_AUTO || m.flags & ~SMIO_SEG_FLAGS)
		return -EINVAL;
	if (!seg_extent_ok(m.addr, m.size))
		return -EINVAL;
	/* An empty segment has no memory, hence no address. */
	if ((m.flags & SMIO_SEG_F_EMPTY) && m.addr)
		return -EINVAL;
	return 0;
}

int smio_check_seg_id(const void *p, uint32_t len)
{
	struct smio_seg_id m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.segid == SMIO_SEGID_AUTO ? -EINVAL : 0;
}

int smio_check_seg_avail(const void *p, uint32_t len)
{
	struct smio_seg_avail m;

	memcpy(&m, p, sizeof(m));
	return m.segid == SMIO_SEGID_AUTO || !is_bool(m.available) ? -EINVAL : 0;
}

int smio_check_seg_connect(const void *p, uint32_t len)
{
	struct smio_seg_connect m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.segid == SMIO_SEGID_AUTO ? -EINVAL : 0;
}

int smio_check_seg_conn(const void *p, uint32_t len)
{
	struct smio_seg_conn m;

	memcpy(&m, p, sizeof(m));
	if (!m.size || m.size > MAX_LEN || (m.size & SEG_PAGE_MASK))
		return -EINVAL;
	/* The segment lies inside what the LUT run translates. */
	if (m.offset > MAX_LEN || !range_ok(m.win_addr, m.offset + m.size))
		return -EINVAL;
	if (m.lut_first + (uint64_t)m.lut_count > UINT32_MAX)
		return -EINVAL;
	return 0;
}

int smio_check_seg_map(const void *p, uint32_t len)
{
	struct smio_seg_map m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || !access_ok(m.offset, m.size))
		return -EINVAL;
	return 0;
}

int smio_check_seg_conn_ref(const void *p, uint32_t len)
{
	struct smio_seg_conn_ref m;

	memcpy(&m, p, sizeof(m));
	return m.flags & ~SMIO_SEG_REF_OWNER ? -EINVAL : 0;
}

int smio_check_seg_owner_ev(const void *p, uint32_t len)
{
	struct smio_seg_owner_ev m;

	memcpy(&m, p, sizeof(m));
	return m.reason <= SMIO_SEG_OWNER_DISCONNECT ? 0 : -EINVAL;
}

int smio_check_seg_state(const void *p, uint32_t len)
{
	struct smio_seg_state m;

	memcpy(&m, p, sizeof(m));
	return m.state >= SMIO_SEG_CONNECTED && m.state <= SMIO_SEG_DISCONNECTED && !m.pad ?
	       0 : -EINVAL;
}

int smio_check_seg_attach(const void *p, uint32_t len)
{
	struct smio_seg_attach m;

	memcpy(&m, p, sizeof(m));
	if (m.segid == SMIO_SEGID_AUTO)
		return -EINVAL;
	switch (m.kind) {
	case SMIO_SEG_ATTACH_RAM:
		return !m.addr && seg_extent_ok(0, m.size) ? 0 : -EINVAL;
	case SMIO_SEG_ATTACH_PHYS:
		return seg_extent_ok(m.addr, m.size) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

int smio_check_peer_seg(const void *p, uint32_t len)
{
	struct smio_peer_seg m;

	memcpy(&m, p, sizeof(m));
	if (m.segid == SMIO_SEGID_AUTO || !seg_extent_ok(m.addr, m.size))
		return -EINVAL;
	return 0;
}

int smio_check_peer_seg_ref(const void *p, uint32_t len)
{
	struct smio_peer_seg_ref m;

	memcpy(&m, p, sizeof(m));
	return m.segid == SMIO_SEGID_AUTO ? -EINVAL : 0;
}

int smio_check_peer_seg_where(const void *p, uint32_t len)
{
	struct smio_peer_seg_where m;

	memcpy(&m, p, sizeof(m));
	if ((m.flags & ~SMIO_SEG_WHERE_LENT) || !seg_extent_ok(m.addr, m.size))
		return -EINVAL;
	return 0;
}

int smio_check_seg_conn_p2p_req(const void *p, uint32_t len)
{
	struct smio_seg_conn_p2p m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.bus ? -EINVAL : 0;
}

int smio_check_seg_conn_p2p(const void *p, uint32_t len)
{
	struct smio_seg_conn_p2p m;

	memcpy(&m, p, sizeof(m));
	return m.pad || !m.bus ? -EINVAL : 0;
}

int smio_check_peer_memfd_req(const void *p, uint32_t len)
{
	struct smio_peer_memfd m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.size ? -EINVAL : 0;
}

int smio_check_peer_memfd_reply(const void *p, uint32_t len)
{
	struct smio_peer_memfd m;

	memcpy(&m, p, sizeof(m));
	return m.pad || !m.size ? -EINVAL : 0;
}

/* ---- SISCI interrupts ---- */

int smio_check_intr_create(const void *p, uint32_t len)
{
	struct smio_intr_create m;

	memcpy(&m, p, sizeof(m));
	return is_bool(m.data) ? 0 : -EINVAL;
}

/* INTR_CREATE reply, INTR_REMOVE, PEER_INTR_LOOKUP: a real number, a kind. */
int smio_check_intr_id(const void *p, uint32_t len)
{
	struct smio_intr_id m;

	memcpy(&m, p, sizeof(m));
	return m.intno == SMIO_INTNO_AUTO || !is_bool(m.data) ? -EINVAL : 0;
}

/* Only data interrupts queue messages. */
int smio_check_intr_receive(const void *p, uint32_t len)
{
	struct smio_intr_id m;

	memcpy(&m, p, sizeof(m));
	return m.intno == SMIO_INTNO_AUTO || m.data != 1 ? -EINVAL : 0;
}

int smio_check_intr_connect(const void *p, uint32_t len)
{
	struct smio_intr_connect m;

	memcpy(&m, p, sizeof(m));
	return m.intno == SMIO_INTNO_AUTO || !is_bool(m.data) ? -EINVAL : 0;
}

int smio_check_intr_conn(const void *p, uint32_t len)
{
	struct smio_intr_conn m;

	memcpy(&m, p, sizeof(m));
	return m.handle ? 0 : -EINVAL;
}

int smio_check_intr_conn_ref(const void *p, uint32_t len)
{
	struct smio_intr_conn_ref m;

	memcpy(&m, p, sizeof(m));
	return m.pad || !m.handle ? -EINVAL : 0;
}

/* Head {u32, u32 len} + exactly len message bytes. */
int smio_check_intr_msg(const void *p, uint32_t len)
{
	struct smio_intr_data m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.len > SMIO_INTR_MAX_DATA || len != sizeof(m) + m.len)
		return -EINVAL;
	return 0;
}

int smio_check_intr_data(const void *p, uint32_t len)
{
	struct smio_intr_data m;

	if (smio_check_intr_msg(p, len))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	return m.intno == SMIO_INTNO_AUTO ? -EINVAL : 0;
}

int smio_check_peer_intr(const void *p, uint32_t len)
{
	struct smio_peer_intr m;

	memcpy(&m, p, sizeof(m));
	if (m.intno == SMIO_INTNO_AUTO || !m.serial || !is_bool(m.data) || m.pad)
		return -EINVAL;
	return 0;
}

int smio_check_peer_intr_fire(const void *p, uint32_t len)
{
	struct smio_peer_intr_fire m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.intno == SMIO_INTNO_AUTO || !m.serial || !is_bool(m.data))
		return -EINVAL;
	if (m.len > SMIO_INTR_MAX_DATA || (!m.data && m.len))
		return -EINVAL;
	return len == sizeof(m) + m.len ? 0 : -EINVAL;
}

/* ---- SISCI DMA queues ---- */

int smio_check_dma_queue_create(const void *p, uint32_t len)
{
	struct smio_dma_queue_create m;

	memcpy(&m, p, sizeof(m));
	return m.max_entries && m.max_entries <= SMIO_DMA_MAX_VEC ? 0 : -EINVAL;
}

int smio_check_dma_queue(const void *p, uint32_t len)
{
	struct smio_dma_queue m;

	memcpy(&m, p, sizeof(m));
	if (!m.queue || !m.max_entries || m.max_entries > SMIO_DMA_MAX_VEC || !m.channels)
		return -EINVAL;
	return 0;
}

int smio_check_dma_queue_ref(const void *p, uint32_t len)
{
	struct smio_dma_queue_ref m;

	memcpy(&m, p, sizeof(m));
	return m.queue && !m.pad ? 0 : -EINVAL;
}

int smio_check_dma_start(const void *p, uint32_t len)
{
	struct smio_dma_start m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (!m.queue || m.pad || (m.flags & ~SMIO_DMA_F_READ))
		return -EINVAL;
	if (!m.n || m.n > SMIO_DMA_MAX_VEC ||
	    len != sizeof(m) + m.n * sizeof(struct smio_dma_entry))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		struct smio_dma_entry e;

		memcpy(&e, (const uint8_t *)p + sizeof(m) + i * sizeof(e), sizeof(e));
		if (!e.size)
			return -EINVAL;
	}
	return 0;
}

int smio_check_dma_state(const void *p, uint32_t len)
{
	struct smio_dma_state m;

	memcpy(&m, p, sizeof(m));
	switch (m.state) {
	case SMIO_DMA_IDLE: case SMIO_DMA_POSTED: case SMIO_DMA_DONE:
	case SMIO_DMA_ABORTED: case SMIO_DMA_ERROR:
		break;
	default:
		return -EINVAL;
	}
	if (!m.queue || m.error > 0 || m.bytes > m.total)
		return -EINVAL;
	return 0;
}

/* ---- multicast (broadcast segments) ---- */

int smio_check_mc_join(const void *p, uint32_t len)
{
	struct smio_mc_join m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.segid == SMIO_SEGID_AUTO || m.group >= 256 ? -EINVAL : 0;
}

int smio_check_mc_connect(const void *p, uint32_t len)
{
	struct smio_mc_connect m;

	memcpy(&m, p, sizeof(m));
	return m.group >= 256 ? -EINVAL : 0;
}

int smio_check_mc_conn(const void *p, uint32_t len)
{
	struct smio_mc_conn m;

	memcpy(&m, p, sizeof(m));
	if (m.group >= 256 || !m.size || m.size > MAX_LEN || !range_ok(m.bus, m.size) ||
	    !range_ok(m.mc_addr, m.size))
		return -EINVAL;
	return 0;
}

/* MC_WRITE carries exactly len bytes after its head; MC_DMA none. */
int smio_check_mc_write(const void *p, uint32_t len)
{
	struct smio_mc_write m;

	memcpy(&m, p, sizeof(m));
	if (!access_ok(m.offset, m.len))
		return -EINVAL;
	if (len == sizeof(m))          /* MC_DMA: from a segment */
		return access_ok(m.seg_offset, m.len) ? 0 : -EINVAL;
	if (m.segid || m.seg_offset || len - sizeof(m) != m.len)
		return -EINVAL;
	return 0;
}

int smio_check_mc_written(const void *p, uint32_t len)
{
	struct smio_mc_written m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.len > MAX_LEN ? -EINVAL : 0;
}

int smio_check_mc_tree_req(const void *p, uint32_t len)
{
	struct smio_mc_tree_req m;

	memcpy(&m, p, sizeof(m));
	return m.pad ? -EINVAL : 0;
}

int smio_check_mc_tree(const void *p, uint32_t len)
{
	struct smio_mc_tree m;

	memcpy(&m, p, sizeof(m));
	if (m.nrecv > 1024 || m.nlinks > 2048 ||
	    len - sizeof(m) != m.nrecv * sizeof(struct smio_mc_recv) +
			       m.nlinks * sizeof(struct smio_mc_link))
		return -EINVAL;
	return 0;
}
