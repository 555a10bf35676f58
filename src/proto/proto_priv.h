/* SPDX-License-Identifier: MIT */
/*
 * Private to the wire-protocol codec: field helpers shared by proto.c and its
 * per-family validator files, and the validators that the message list
 * (smartio/proto/msgs.h) names and proto.c's type table points to.
 */
#ifndef SMARTIO_PROTO_PRIV_H
#define SMARTIO_PROTO_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "smartio/proto.h"

#define CFG_SPACE_SIZE	SMIO_CFG_SPACE
#define MAX_LEN		SMIO_MAX_LEN
#define PAGE_MASK_4K	4095ull
#define MAX_FAULTS	SMIO_MAX_FAULTS
#define MAX_ERRNO	4095

/* ---- small field helpers ---- */

static inline bool is_bool(uint32_t v)
{
	return v == 0 || v == 1;
}

/* A fixed-size string field must end inside its array (no over-read later). */
static inline bool str_ok(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static inline bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * [addr, addr + len) must not wrap past 2^64. The last byte is what counts:
 * a range ending exactly at 2^64 is representable. len == 0 is up to callers.
 */
static inline bool range_ok(uint64_t addr, uint64_t len)
{
	return !len || addr + (len - 1) >= addr;
}

/* Access length bounds shared by ROUTE/MAP requests and PEER_STEP. */
static inline bool access_ok(uint64_t addr, uint64_t len)
{
	return len >= 1 && len <= MAX_LEN && range_ok(addr, len);
}

#define SEG_PAGE_MASK	(SMIO_SEG_PAGE - 1)

/* A segment's extent as the daemon reports it: page granular, not wrapping. */
static inline bool seg_extent_ok(uint64_t addr, uint64_t size)
{
	return size && size <= MAX_LEN && !((addr | size) & SEG_PAGE_MASK) &&
	       range_ok(addr, size);
}

/*
 * The validators are private to the codec, as they were when static: hidden,
 * so that a shared object linking proto_lib (the nvme-cli shim) does not
 * export them.
 */
#pragma GCC visibility push(hidden)

/* Driver messages and the SmartIO device pool (proto_dev.c). */
int smio_check_nvme_admin(const void *p, uint32_t len);
int smio_check_nvme_io(const void *p, uint32_t len);
int smio_check_p2pmem_req(const void *p, uint32_t len);
int smio_check_p2pmem_grant(const void *p, uint32_t len);
int smio_check_p2pmem_free(const void *p, uint32_t len);
int smio_check_nvme_copy(const void *p, uint32_t len);
int smio_check_nvme_copy_result(const void *p, uint32_t len);
int smio_check_nvme_cpl(const void *p, uint32_t len);
int smio_check_accel_op(const void *p, uint32_t len);
int smio_check_accel_result(const void *p, uint32_t len);
int smio_check_accel_launch(const void *p, uint32_t len);
int smio_check_accel_load(const void *p, uint32_t len);
int smio_check_dev_list(const void *p, uint32_t len);
int smio_check_dev_borrow(const void *p, uint32_t len);
int smio_check_dev_borrowed(const void *p, uint32_t len);
int smio_check_dev_ref(const void *p, uint32_t len);
int smio_check_dev_seg_connect(const void *p, uint32_t len);
int smio_check_dev_seg_create(const void *p, uint32_t len);
int smio_check_dev_seg(const void *p, uint32_t len);
int smio_check_peer_dev_seg(const void *p, uint32_t len);
int smio_check_dev_map_local(const void *p, uint32_t len);
int smio_check_dev_map_remote(const void *p, uint32_t len);
int smio_check_dev_mapping(const void *p, uint32_t len);
int smio_check_dev_unmap(const void *p, uint32_t len);
int smio_check_dev_rid(const void *p, uint32_t len);
int smio_check_peer_dev_borrow(const void *p, uint32_t len);
int smio_check_peer_dev_ref(const void *p, uint32_t len);
int smio_check_peer_dev_bar_req(const void *p, uint32_t len);
int smio_check_peer_dev_bar_reply(const void *p, uint32_t len);
int smio_check_peer_dev_map(const void *p, uint32_t len);
int smio_check_peer_dev_map_reply(const void *p, uint32_t len);
int smio_check_peer_dev_unmap(const void *p, uint32_t len);

/* SISCI segments, interrupts and DMA queues (proto_seg.c). */
int smio_check_seg_create(const void *p, uint32_t len);
int smio_check_seg_info(const void *p, uint32_t len);
int smio_check_seg_id(const void *p, uint32_t len);
int smio_check_seg_owner_ev(const void *p, uint32_t len);
int smio_check_seg_avail(const void *p, uint32_t len);
int smio_check_seg_connect(const void *p, uint32_t len);
int smio_check_seg_conn(const void *p, uint32_t len);
int smio_check_seg_map(const void *p, uint32_t len);
int smio_check_seg_conn_ref(const void *p, uint32_t len);
int smio_check_seg_state(const void *p, uint32_t len);
int smio_check_mc_join(const void *p, uint32_t len);
int smio_check_mc_connect(const void *p, uint32_t len);
int smio_check_mc_conn(const void *p, uint32_t len);
int smio_check_mc_write(const void *p, uint32_t len);
int smio_check_mc_written(const void *p, uint32_t len);
int smio_check_mc_tree_req(const void *p, uint32_t len);
int smio_check_mc_tree(const void *p, uint32_t len);
int smio_check_seg_attach(const void *p, uint32_t len);
int smio_check_peer_seg(const void *p, uint32_t len);
int smio_check_peer_seg_ref(const void *p, uint32_t len);
int smio_check_peer_seg_where(const void *p, uint32_t len);
int smio_check_seg_conn_p2p_req(const void *p, uint32_t len);
int smio_check_seg_conn_p2p(const void *p, uint32_t len);
int smio_check_peer_memfd_req(const void *p, uint32_t len);
int smio_check_peer_memfd_reply(const void *p, uint32_t len);
int smio_check_intr_create(const void *p, uint32_t len);
int smio_check_intr_id(const void *p, uint32_t len);
int smio_check_intr_receive(const void *p, uint32_t len);
int smio_check_intr_connect(const void *p, uint32_t len);
int smio_check_intr_conn(const void *p, uint32_t len);
int smio_check_intr_conn_ref(const void *p, uint32_t len);
int smio_check_intr_msg(const void *p, uint32_t len);
int smio_check_intr_data(const void *p, uint32_t len);
int smio_check_peer_intr(const void *p, uint32_t len);
int smio_check_peer_intr_fire(const void *p, uint32_t len);
int smio_check_dma_queue_create(const void *p, uint32_t len);
int smio_check_dma_queue(const void *p, uint32_t len);
int smio_check_dma_queue_ref(const void *p, uint32_t len);
int smio_check_dma_start(const void *p, uint32_t len);
int smio_check_dma_state(const void *p, uint32_t len);

/* The cluster's nodes and this host's adapters, for libsisci (proto_node.c). */
int smio_check_node_list(const void *p, uint32_t len);
int smio_check_adapter_list(const void *p, uint32_t len);
int smio_check_probe_node(const void *p, uint32_t len);

/* Device Lending (proto_lend.c). */
int smio_check_lend_pool(const void *p, uint32_t len);
int smio_check_lend_req(const void *p, uint32_t len);
int smio_check_lend_info(const void *p, uint32_t len);
int smio_check_peer_lend_setup(const void *p, uint32_t len);
int smio_check_lend_grant(const void *p, uint32_t len);
int smio_check_peer_lend_ref(const void *p, uint32_t len);
int smio_check_peer_lend_cfg(const void *p, uint32_t len);
int smio_check_cz_share(const void *p, uint32_t len);
int smio_check_cz_info(const void *p, uint32_t len);
int smio_check_peer_cz_bind(const void *p, uint32_t len);
int smio_check_cz_grant(const void *p, uint32_t len);
int smio_check_peer_lend_p2p(const void *p, uint32_t len);
int smio_check_lend_p2p(const void *p, uint32_t len);
int smio_check_lend_hold(const void *p, uint32_t len);
int smio_check_lend_holders(const void *p, uint32_t len);
int smio_check_vm_mem(const void *p, uint32_t len);
int smio_check_vm_mem_reply(const void *p, uint32_t len);
int smio_check_vm_attach(const void *p, uint32_t len);
int smio_check_vm_attach_reply(const void *p, uint32_t len);
int smio_check_vm_irq(const void *p, uint32_t len);
int smio_check_peer_vm_dma(const void *p, uint32_t len);
int smio_check_vm_bar(const void *p, uint32_t len);
int smio_check_vm_bar_reply(const void *p, uint32_t len);
int smio_check_vm_stats(const void *p, uint32_t len);
int smio_check_vm_cmd(const void *p, uint32_t len);
int smio_check_vm_cmd_reply(const void *p, uint32_t len);
int smio_check_peer_vm_resv(const void *p, uint32_t len);
int smio_check_peer_vm_resv_reply(const void *p, uint32_t len);

/* Diagnostics: counters and the event log (proto_diag.c). */
int smio_check_stats_req(const void *p, uint32_t len);
int smio_check_stats(const void *p, uint32_t len);
int smio_check_events_req(const void *p, uint32_t len);
int smio_check_events(const void *p, uint32_t len);

#pragma GCC visibility pop

#endif
