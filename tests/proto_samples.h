/* SPDX-License-Identifier: MIT */
/*
 * A valid payload for every direction of every message of the list
 * (smartio/proto/msgs.h): the protocol tests check the codec against them,
 * and the fuzz seed generator (fuzz/gen_seeds.c) frames them into seeds.
 * A new message needs its samples here; test_proto's test_all_valid fails
 * until it has them.
 */
#ifndef SMARTIO_TESTS_PROTO_SAMPLES_H
#define SMARTIO_TESTS_PROTO_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "smartio/proto.h"

/* sample() for a direction the message does not have (a one-way reply). */
#define NO_DIR	((size_t)-1)

static inline size_t fill_route_reply(uint8_t *buf, uint32_t nhops, bool forward)
{
	struct smio_route_reply r = { 0 };
	struct smio_hop h = { 0 };
	uint32_t i;

	r.status = 0;
	r.forward = forward;
	snprintf(r.reason, sizeof(r.reason), "ok");
	r.tgt.kind = 1;
	r.tgt.len = 64;
	r.nhops = nhops;
	memcpy(buf, &r, sizeof(r));
	for (i = 0; i < nhops; i++) {
		h.kind = 1 + i % 9;
		h.gen = 3;
		h.width = 8;
		snprintf(h.name, sizeof(h.name), "hop%u", i);
		memcpy(buf + sizeof(r) + i * sizeof(h), &h, sizeof(h));
	}
	return sizeof(r) + nhops * sizeof(h);
}

static inline size_t fill_func_list(uint8_t *buf, uint32_t n)
{
	struct smio_func_list l = { .n = n };
	struct smio_func_info f = { 0 };
	uint32_t i;

	memcpy(buf, &l, sizeof(l));
	for (i = 0; i < n; i++) {
		f.bdf = (uint16_t)i;
		f.kind = 4;
		f.lendable = i & 1;
		f.parent_bdf = 0xffff;
		snprintf(f.name, sizeof(f.name), "fn%u", i);
		snprintf(f.model, sizeof(f.model), "model");
		memcpy(buf + sizeof(l) + i * sizeof(f), &f, sizeof(f));
	}
	return sizeof(l) + n * sizeof(f);
}

static inline size_t fill_node_list(uint8_t *buf, uint32_t n)
{
	struct smio_node_list l = { .n = n };
	struct smio_node e = { 0 };

	memcpy(buf, &l, sizeof(l));
	for (uint32_t i = 0; i < n; i++) {
		e.host = i;
		e.node_id = 4 * (i + 1);
		snprintf(e.name, sizeof(e.name), "host%u", i);
		memcpy(buf + sizeof(l) + i * sizeof(e), &e, sizeof(e));
	}
	return sizeof(l) + n * sizeof(e);
}

static inline size_t fill_adapter_list(uint8_t *buf)
{
	struct smio_adapter_list l = { .n = 2 };
	struct smio_adapter a[2] = {
		{ .ntb = 0, .bdf = 0x300, .link_up = 1, .peer_kind = SMIO_PEER_NTB,
		  .peer_host = 2, .link_gen = 3, .link_width = 8 },
		{ .ntb = 1, .bdf = 0x400, .peer_kind = SMIO_PEER_CSWITCH,
		  .peer_host = SMIO_HOST_NONE, .link_gen = 4, .link_width = 16 } };

	memcpy(buf, &l, sizeof(l));
	memcpy(buf + sizeof(l), a, sizeof(a));
	return sizeof(l) + sizeof(a);
}

static inline size_t fill_faults(uint8_t *buf, uint32_t n, uint64_t total)
{
	struct smio_iommu_faults fs = { .total = total, .n = n };
	struct smio_iommu_fault f = { .rid = 0x100, .write = 1, .domain = 2 };
	uint32_t i;

	memcpy(buf, &fs, sizeof(fs));
	for (i = 0; i < n; i++) {
		f.iova = 0x1000ull * i;
		f.seq = i;
		memcpy(buf + sizeof(fs) + i * sizeof(f), &f, sizeof(f));
	}
	return sizeof(fs) + n * sizeof(f);
}

#define SAMPLE_PUT(v) (memcpy(buf, &(v), sizeof(v)), sizeof(v))

/* Write a valid payload for (type, reply) into buf; NO_DIR if none exists. */
static inline size_t sample_core(uint16_t type, bool reply, uint8_t *buf)
{
	struct smio_hello hello = { SMIO_ROLE_CLIENT, 0, 42, SMIO_VERSION };
	struct smio_hello_reply hr = { .host = 0, .node_id = 1, .version = SMIO_VERSION };
	struct smio_status st = { .host = 1, .nfuncs = 3, .iommu = 1, .name = "host1" };
	struct smio_cfg cfg = { .bdf = 0x100, .off = 4, .size = 4, .value = 0x12345678 };
	struct smio_bdf bdf = { .bdf = 0x100 };
	struct smio_route_req rr = { .rid = 0x100, .write = 1, .addr = 0x1000, .len = 64 };
	struct smio_map_reply mr = { .host = 1, .offset = 0x1000, .len = 64, .fd_size = 0x2000 };
	struct smio_ntb_ref nref = { .ntb = 0 };
	struct smio_probe_node pn = { .adapter = 0, .node_id = 12 };
	struct smio_ntb_info ni = { .ntb = 0, .bdf = 0x300, .link_up = 1, .lut_entries = 32,
				    .lut_used = 2, .rid_entries = 8, .rid_used = 8, .name = "ntb0" };
	struct smio_ntb_lut lut = { .ntb = 0, .entry = UINT32_MAX, .dest_host = 2 };
	struct smio_ntb_lut lutc = { .ntb = 0, .entry = 3 };
	struct smio_ntb_rid rid = { .ntb = 0, .rid = 0x100 };
	struct smio_ntb_link link = { .ntb = 0, .up = 1 };
	struct smio_ntb_db db = { .ntb = 0, .bits = 0x5 };
	struct smio_ntb_spad sp = { .ntb = 0, .idx = 2, .write = 1, .value = 7 };
	struct smio_iommu io = { .op = SMIO_IOMMU_ATTACH, .domain = 1, .rid = 0x100 };
	struct smio_iommu_map im = { .domain = 1, .prot = 3, .iova = 0x10000,
				     .paddr = 0x20000, .size = 0x1000 };
	struct smio_step step = { .host = 2, .ntb_index = 0, .write = 0, .ntb_hops = 1,
				  .addr = 0x4000, .len = 8 };
	struct smio_invalidate inv = { .origin_host = 1, .epoch = 9 };
	struct smio_seg_create sgc = { .segid = SMIO_SEGID_AUTO, .size = 5000 };
	struct smio_seg_info sgi = { .segid = 0x80000000u, .addr = 0x1000000, .size = 8192 };
	struct smio_seg_id sgid = { .segid = 7 };
	struct smio_seg_avail sga = { .segid = 7, .available = 1 };
	struct smio_seg_connect sgn = { .node_id = 8, .segid = 7, .adapter = 0 };
	struct smio_seg_conn sgcn = { .conn = 1, .host = 1, .win_addr = 0x2000000000ull,
				      .offset = 0x1000000, .size = 8192, .lut_count = 1 };
	struct smio_seg_map sgm = { .conn = 1, .offset = 0, .size = 8192 };
	struct smio_seg_conn_ref sgr = { .conn = 1 };
	struct smio_seg_owner_ev sgo = { .segid = 7, .reason = SMIO_SEG_OWNER_CONNECT, .host = 1 };
	struct smio_peer_seg ps = { .segid = 7, .ref = 3, .addr = 0x1000000, .size = 8192 };
	struct smio_peer_seg_ref psr = { .segid = 7, .ref = 3 };
	struct smio_peer_seg_where psw = { .host = 2, .flags = SMIO_SEG_WHERE_LENT,
					   .addr = 0x8400000000ull, .size = 4096 };
	struct smio_seg_conn_p2p scq = { .conn = 5, .bdf = 0xf001 };
	struct smio_seg_conn_p2p scp = { .conn = 5, .bdf = 0xf001, .bus = 0x8400000000ull };
	struct smio_peer_memfd pmq = { .mem = 0 }, pmr = { .mem = 0, .size = 1ull << 32 };
	struct smio_seg_attach sat = { .segid = 7, .kind = SMIO_SEG_ATTACH_RAM, .size = 8192 };
	struct smio_seg_state sgs = { .conn = 1, .state = SMIO_SEG_CONNECTED };
	struct smio_mc_join mcj = { .segid = 3, .group = 2 };
	struct smio_mc_connect mcc = { .group = 2 };
	struct smio_mc_conn mcn = { .conn = 1, .group = 2, .bus = 0x8000000000ull,
				    .size = 1u << 20, .mc_addr = 0x3f0000200000ull };
	struct smio_mc_write mcw = { .conn = 1, .offset = 16, .len = 3 };
	struct smio_mc_write mcd = { .conn = 1, .segid = 3, .offset = 16, .len = 4096 };
	struct smio_mc_written mcr = { .receivers = 3, .len = 3 };
	struct smio_mc_tree_req mtq = { .ntb = 0, .addr = 0x3f0000200000ull };
	struct smio_mc_tree mtr = { .group = 2, .nrecv = 1, .nlinks = 1 };
	struct smio_mc_recv mrv = { .host = 1, .depth = 1 };
	struct smio_mc_link mlk = { .from_csw = 0xffffffffu, .to_csw = 0, .host = 0, .gen = 3,
				    .width = 8 };
	struct smio_intr_create icr = { .intno = SMIO_INTNO_AUTO, .data = 1 };
	struct smio_intr_info iinf = { .intno = 0x80000000u, .data = 1 };
	struct smio_intr_id iid = { .intno = 5, .data = 0 }, iidd = { .intno = 5, .data = 1 };
	struct smio_intr_connect icn = { .node_id = 8, .intno = 5, .adapter = 0, .data = 1 };
	struct smio_intr_conn icc = { .handle = 1, .host = 1 };
	struct smio_intr_conn_ref icref = { .handle = 1 };
	struct smio_peer_intr pin = { .intno = 5, .serial = 77, .data = 1 };
	struct smio_intr_trigger itr = { .handle = 1, .len = 3 };
	struct smio_intr_data idt = { .intno = 5, .len = 3 };
	struct smio_peer_intr_fire pif = { .intno = 5, .serial = 77, .data = 1, .len = 3 };
	struct smio_dma_queue_create dqc = { .adapter = 0, .max_entries = 16 };
	struct smio_dma_queue dq = { .queue = 1, .max_entries = 16, .channels = 1 };
	struct smio_dma_queue_ref dqr = { .queue = 1 };
	struct smio_dma_state dst = { .queue = 1, .state = SMIO_DMA_DONE, .submissions = 1,
				      .bytes = 4096, .total = 4096 };
	struct smio_dma_start dss = { .queue = 1, .segid = 7, .conn = 1, .n = 2 };
	struct smio_dma_entry dse[2] = { { .size = 4096 }, { .local_offset = 4096,
					  .remote_offset = 8192, .size = 8 } };

	switch (type) {
	case SMIO_HELLO:	return reply ? SAMPLE_PUT(hr) : SAMPLE_PUT(hello);
	case SMIO_STATUS:	return reply ? SAMPLE_PUT(st) : 0;
	case SMIO_SHUTDOWN:	return 0;
	case SMIO_NODE_LIST:	return reply ? fill_node_list(buf, 3) : 0;
	case SMIO_FUNC_LIST:	return reply ? fill_func_list(buf, 3) : 0;
	case SMIO_CFG_READ:	return SAMPLE_PUT(cfg);
	case SMIO_CFG_WRITE:	return reply ? 0 : SAMPLE_PUT(cfg);
	case SMIO_SRIOV: {
		struct smio_sriov_req q = { .bdf = 0x0100, .numvfs = 2, .set = 1 };
		struct smio_sriov_state sv = { .bdf = 0x0100, .total_vfs = 4, .num_vfs = 2,
					       .vf_offset = 1, .vf_stride = 1, .vf_device = 0x11,
					       .vendor = 0x534d };

		return reply ? SAMPLE_PUT(sv) : SAMPLE_PUT(q);
	}
	case SMIO_CFG_DUMP:
		if (!reply)
			return SAMPLE_PUT(bdf);
		memset(buf, 0xff, SMIO_CFG_SPACE);
		return SMIO_CFG_SPACE;
	case SMIO_ROUTE:	return reply ? fill_route_reply(buf, 3, false) : SAMPLE_PUT(rr);
	case SMIO_MAP:		return reply ? SAMPLE_PUT(mr) : SAMPLE_PUT(rr);
	case SMIO_NTB_INFO:	return reply ? SAMPLE_PUT(ni) : SAMPLE_PUT(nref);
	case SMIO_NTB_LUT_SET:	return SAMPLE_PUT(lut);
	case SMIO_NTB_LUT_CLEAR: return reply ? 0 : SAMPLE_PUT(lutc);
	case SMIO_NTB_RID_ADD:
	case SMIO_NTB_RID_DEL:	return reply ? 0 : SAMPLE_PUT(rid);
	case SMIO_NTB_LINK:	return reply ? 0 : SAMPLE_PUT(link);
	case SMIO_NTB_DB_RING:	return reply ? 0 : SAMPLE_PUT(db);
	case SMIO_NTB_SPAD:	return SAMPLE_PUT(sp);
	case SMIO_ADAPTER_INFO:	return reply ? fill_adapter_list(buf) : 0;
	case SMIO_PROBE_NODE:	return reply ? 0 : SAMPLE_PUT(pn);
	case SMIO_IOMMU_DOMAIN:	return SAMPLE_PUT(io);
	case SMIO_IOMMU_MAP:
	case SMIO_IOMMU_UNMAP:	return reply ? 0 : SAMPLE_PUT(im);
	case SMIO_IOMMU_FAULTS:	return reply ? fill_faults(buf, 2, 5) : 0;
	case SMIO_PEER_STEP:	return reply ? fill_route_reply(buf, 2, true) : SAMPLE_PUT(step);
	case SMIO_PEER_INVALIDATE: return reply ? NO_DIR : SAMPLE_PUT(inv);
	case SMIO_PEER_DB:	return reply ? 0 : SAMPLE_PUT(db);
	case SMIO_PEER_SPAD:	return SAMPLE_PUT(sp);
	case SMIO_SEG_CREATE:	return reply ? SAMPLE_PUT(sgi) : SAMPLE_PUT(sgc);
	case SMIO_SEG_REMOVE:	return reply ? 0 : SAMPLE_PUT(sgid);
	case SMIO_SEG_AVAILABLE: return reply ? 0 : SAMPLE_PUT(sga);
	case SMIO_SEG_MAP_LOCAL: return reply ? SAMPLE_PUT(mr) : SAMPLE_PUT(sgid);
	case SMIO_SEG_CONNECT:	return reply ? SAMPLE_PUT(sgcn) : SAMPLE_PUT(sgn);
	case SMIO_SEG_MAP_REMOTE: return reply ? SAMPLE_PUT(mr) : SAMPLE_PUT(sgm);
	case SMIO_SEG_DISCONNECT: return reply ? 0 : SAMPLE_PUT(sgr);
	case SMIO_PEER_SEG_LOOKUP: return reply ? SAMPLE_PUT(ps) : SAMPLE_PUT(sgid);
	case SMIO_PEER_SEG_RELEASE: return reply ? 0 : SAMPLE_PUT(psr);
	case SMIO_PEER_MEMFD:	return reply ? SAMPLE_PUT(pmr) : SAMPLE_PUT(pmq);
	case SMIO_SEG_ATTACH:	return reply ? SAMPLE_PUT(sgi) : SAMPLE_PUT(sat);
	case SMIO_PEER_SEG_GONE: return reply ? NO_DIR : SAMPLE_PUT(psr);
	case SMIO_SEG_EVENTS:	return reply ? 0 : SAMPLE_PUT(sgr);
	case SMIO_SEG_STATE:	return reply ? SAMPLE_PUT(sgs) : SAMPLE_PUT(sgr);
	case SMIO_SEG_OWNER_EVENT: return reply ? SAMPLE_PUT(sgo) : SAMPLE_PUT(sgid);
	case SMIO_PEER_SEG_WHERE: return reply ? SAMPLE_PUT(psw) : SAMPLE_PUT(psr);
	case SMIO_SEG_CONN_P2P:	return reply ? SAMPLE_PUT(scp) : SAMPLE_PUT(scq);
	case SMIO_MC_JOIN:
	case SMIO_MC_LEAVE:	return reply ? 0 : SAMPLE_PUT(mcj);
	case SMIO_MC_CONNECT:	return reply ? SAMPLE_PUT(mcn) : SAMPLE_PUT(mcc);
	case SMIO_MC_DISCONNECT: return reply ? 0 : SAMPLE_PUT(sgr);
	case SMIO_MC_WRITE:
		if (reply)
			return SAMPLE_PUT(mcr);
		memcpy(buf, &mcw, sizeof(mcw));
		memcpy(buf + sizeof(mcw), "abc", 3);
		return sizeof(mcw) + 3;
	case SMIO_MC_DMA:	return reply ? SAMPLE_PUT(mcr) : SAMPLE_PUT(mcd);
	case SMIO_MC_TREE:
		if (!reply)
			return SAMPLE_PUT(mtq);
		memcpy(buf, &mtr, sizeof(mtr));
		memcpy(buf + sizeof(mtr), &mrv, sizeof(mrv));
		memcpy(buf + sizeof(mtr) + sizeof(mrv), &mlk, sizeof(mlk));
		return sizeof(mtr) + sizeof(mrv) + sizeof(mlk);
	case SMIO_INTR_CREATE:	return reply ? SAMPLE_PUT(iinf) : SAMPLE_PUT(icr);
	case SMIO_INTR_REMOVE:	return reply ? 0 : SAMPLE_PUT(iid);
	case SMIO_INTR_CONNECT:	return reply ? SAMPLE_PUT(icc) : SAMPLE_PUT(icn);
	case SMIO_INTR_TRIGGER:
		if (reply)
			return 0;
		memcpy(buf, &itr, sizeof(itr));
		memcpy(buf + sizeof(itr), "abc", 3);
		return sizeof(itr) + 3;
	case SMIO_INTR_RECEIVE:
		if (!reply)
			return SAMPLE_PUT(iidd);
		memcpy(buf, &idt, sizeof(idt));
		memcpy(buf + sizeof(idt), "xyz", 3);
		return sizeof(idt) + 3;
	case SMIO_INTR_DISCONNECT: return reply ? 0 : SAMPLE_PUT(icref);
	case SMIO_PEER_INTR_LOOKUP: return reply ? SAMPLE_PUT(pin) : SAMPLE_PUT(iid);
	case SMIO_PEER_INTR_FIRE:
		if (reply)
			return 0;
		memcpy(buf, &pif, sizeof(pif));
		memcpy(buf + sizeof(pif), "msg", 3);
		return sizeof(pif) + 3;
	case SMIO_DMA_QUEUE_CREATE: return reply ? SAMPLE_PUT(dq) : SAMPLE_PUT(dqc);
	case SMIO_DMA_QUEUE_REMOVE: return reply ? 0 : SAMPLE_PUT(dqr);
	case SMIO_DMA_START:
		if (reply)
			return SAMPLE_PUT(dst);
		memcpy(buf, &dss, sizeof(dss));
		memcpy(buf + sizeof(dss), dse, sizeof(dse));
		return sizeof(dss) + sizeof(dse);
	case SMIO_DMA_STATE:
	case SMIO_DMA_ABORT:	return reply ? SAMPLE_PUT(dst) : SAMPLE_PUT(dqr);
	}
	return NO_DIR;
}

static inline size_t fill_dev_list(uint8_t *buf)
{
	struct smio_dev_list l = { .n = 1 };
	struct smio_dev_info d = { .fdid = SMIO_FDID(8, 0x400), .node_id = 8, .host = 1,
				   .bdf = 0x400, .class = 0x010802, .borrowers = 1,
				   .bar_size = { 0x4000 }, .name = "nvme0" };

	memcpy(buf, &l, sizeof(l));
	memcpy(buf + sizeof(l), &d, sizeof(d));
	return sizeof(l) + sizeof(d);
}

static inline size_t fill_lend_pool(uint8_t *buf)
{
	struct smio_lend_pool l = { .n = 1 };
	struct smio_lend_entry e = { .fdid = SMIO_FDID(8, 0x400), .lender = 1, .bdf = 0x400,
				     .state = SMIO_LEND_AVAILABLE, .borrower = SMIO_LEND_NOBODY,
				     .name = "nvme0" };

	memcpy(buf, &l, sizeof(l));
	memcpy(buf + sizeof(l), &e, sizeof(e));
	return sizeof(l) + sizeof(e);
}

static inline size_t fill_lend_holders(uint8_t *buf)
{
	struct smio_lend_holders l = { .n = 1 };
	struct smio_lend_holder h = { .pid = 42, .what = "smartio mount /mnt" };

	memcpy(buf, &l, sizeof(l));
	memcpy(buf + sizeof(l), &h, sizeof(h));
	return sizeof(l) + sizeof(h);
}

/* The same for the driver, device-pool and Device Lending messages. */
static inline size_t sample_dev(uint16_t type, bool reply, uint8_t *buf)
{
	struct smio_nvme_admin na = { .dir = SMIO_DIR_FROM_DEV, .data_len = 4096 };
	struct smio_nvme_io nio = { .op = SMIO_NVME_READ, .nsid = 1, .slba = 8, .nlb = 8 };
	struct smio_nvme_cpl cpl = { .data_len = 512 };
	struct smio_accel_op aop = { .kind = SMIO_ACCEL_COPY, .len = 4096 };
	struct smio_accel_launch alau = { .image_len = 12, .args_len = 4, .timeout_ms = 1000,
					  .code_off = SMIO_ACCEL_CODE_TOP };
	struct smio_accel_load aload = { .len = 8, .off = 0x1000 };
	struct smio_accel_result ares = { .result = 4096 };
	struct smio_dev_borrow dbr = { .fdid = SMIO_FDID(8, 0x400) };
	struct smio_dev_borrowed dbd = { .handle = 1, .info = { .fdid = SMIO_FDID(8, 0x400),
		.node_id = 8, .bdf = 0x400, .borrowers = 1, .name = "nvme0" } };
	struct smio_dev_ref dref = { .handle = 1 };
	struct smio_dev_seg_connect dsc = { .handle = 1, .segid = 2,
					    .memtype = SMIO_DEV_MEMTYPE_BAR };
	struct smio_seg_conn sgcn = { .conn = 1, .host = 1, .win_addr = 0x2000000000ull,
				      .size = 0x4000, .lut_count = 1 };
	struct smio_dev_map_local dml = { .handle = 1, .segid = 7, .size = 4096 };
	struct smio_dev_map_remote dmr = { .handle = 1, .conn = 1, .size = 4096 };
	struct smio_dev_mapping dmap = { .map = 1, .ioaddr = 0x10000000 };
	struct smio_dev_unmap dun = { .handle = 1, .map = 1 };
	struct smio_dev_rid drid = { .rid = 0x100, .add = 1 };
	struct smio_dev_seg_create dsg = { .handle = 1, .segid = 7, .size = 4096,
		.memtype = SMIO_DEV_MEMTYPE_SHARED, .place = SMIO_DEV_PLACE_LENDER };
	struct smio_dev_seg dsr = { .host = 1, .segid = 9, .place = SMIO_DEV_PLACE_LENDER,
				    .size = 4096 };
	struct smio_peer_dev_borrow pdb = { .bdf = 0x400, .flags = SMIO_DEV_F_EXCLUSIVE };
	struct smio_peer_dev_ref pdr = { .bdf = 0x400, .ref = 3 };
	struct smio_peer_dev_bar pbq = { .bdf = 0x400, .bar = 2, .ref = 3 };
	struct smio_peer_dev_bar pbr = { .bdf = 0x400, .bar = 2, .ref = 3, .addr = 0x10000000,
					 .size = 0x4000 };
	struct smio_peer_dev_map pmq = { .bdf = 0x400, .ref = 3, .dest_host = 1,
					 .dest_addr = 0x100000, .size = 0x2000 };
	struct smio_peer_dev_map pmr = { .bdf = 0x400, .ref = 3, .dest_host = 1,
					 .dest_addr = 0x100000, .size = 0x2000, .map = 1,
					 .ioaddr = 0x8000000 };
	struct smio_peer_dev_map pmu = { .bdf = 0x400, .ref = 3, .map = 1 };
	struct smio_peer_dev_seg psq = { .bdf = 0x400, .ref = 3, .devsegid = 7,
					 .memtype = SMIO_DEV_MEMTYPE_PRIVATE };
	struct smio_peer_dev_seg psr = { .bdf = 0x400, .ref = 3, .devsegid = 7,
					 .memtype = SMIO_DEV_MEMTYPE_PRIVATE,
					 .place = SMIO_DEV_PLACE_BORROWER, .host = 2, .segid = 9,
					 .size = 4096 };
	struct smio_lend_req lrq = { .fdid = SMIO_FDID(8, 0x400) };
	struct smio_lend_req lrt = { .fdid = SMIO_FDID(8, 0x400), .flags = SMIO_LEND_F_UNBIND };
	struct smio_lend_hold lhd = { .bdf = 0xf000, .what = "smartio mount /mnt" };
	struct smio_vm_mem vmm = { .size = 512ull << 20 };
	struct smio_vm_attach vma = { .fdid = 0x000c0200, .phys = 1ull << 30,
				      .size = 512ull << 20 };
	struct smio_vm_attach_reply vmar = { .info = { .fdid = 0x000c0200, .lender = 2,
						       .bdf = 0xf000 }, .nvec = 4 };
	struct smio_vm_irq vmi = { .fdid = 0x000c0200, .vector = 1 };
	struct smio_vm_cmd vmc = { .fdid = 0x000c0200, .cmd = 0x6 };
	struct smio_vm_cmd_reply vmcr = { .state = SMIO_VM_BORROWED, .nvec = 33 };
	struct smio_peer_vm_resv pvr = { .bdf = 0x0200, .flags = SMIO_VM_RESV_HOLD };
	struct smio_peer_vm_resv_reply pvrr = { .bar_size = { 16384 } };
	struct smio_vm_bar vbq = { .fdid = 0x000c0200, .bar = 0 };
	struct smio_vm_bar_reply vbr = { .offset = 0, .len = 16384 };
	struct smio_peer_vm_dma pvd = { .bdf = 0x0200, .iova = 0, .bus = 1ull << 32,
					.size = 512ull << 20 };
	struct smio_vm_mem_reply vmr = { .phys = 1ull << 30, .offset = 1ull << 30,
					 .size = 512ull << 20 };
	struct smio_lend_info lin = { .fdid = SMIO_FDID(8, 0x400), .lender = 1, .bdf = 0x300,
				      .bar_addr = { 0x40000000 }, .bar_size = { 0x4000 },
				      .name = "nvme0", .driver = "nvme" };
	struct smio_peer_lend_setup pls = { .bdf = 0x400, .dma_target = 1ull << 46,
					    .dma_size = 256 << 20 };
	struct smio_lend_grant lgr = { .bdf = 0x400, .class = 0x010802, .lender = 1,
				       .borrower = 2, .bar_size = { 0x4000 },
				       .dma_size = 4096, .name = "nvme0", .model = "nvme" };
	struct smio_peer_lend_ref plr = { .bdf = 0x400 };
	struct smio_peer_lend_cfg plc = { .bdf = 0x400, .size = 4, .off = 0x10 };
	struct smio_peer_lend_p2p plp = { .bdf = 0x400, .host = 2, .addr = 0x1000,
					  .size = 0x1000 };
	struct smio_lend_p2p lp = { .client = SMIO_FDID(8, 0x400), .provider = SMIO_FDID(9, 0x500),
				    .bar = 2 };
	struct smio_p2pmem_req p2q = { .size = 1 << 20, .client = SMIO_FDID(8, 0x400),
				       .flags = SMIO_P2PMEM_F_FALLBACK };
	struct smio_p2pmem_grant pmg = { .bus = 0x80000000, .size = 1 << 20,
					 .provider = SMIO_FDID(8, 0x500), .bar = 2, .hops = 3 };
	struct smio_p2pmem_free pmf = { .bus = 0x80000000 };
	struct smio_nvme_copy ncp = { .src_bdf = 0x300, .dst_bdf = 0x400, .src_nsid = 1,
				      .dst_nsid = 1, .dst_slba = 64, .nlb = 2048,
				      .flags = SMIO_NVME_COPY_F_P2PMEM };
	struct smio_nvme_copy_result ncr = { .bytes = 1 << 20, .elapsed_ns = 1000,
					     .provider = SMIO_FDID(8, 0x500), .bar = 2,
					     .hops = 6 };

	switch (type) {
	case SMIO_NVME_ADMIN:
	case SMIO_NVME_IO:
		if (!reply)
			return type == SMIO_NVME_IO ? SAMPLE_PUT(nio) : SAMPLE_PUT(na);
		memcpy(buf, &cpl, sizeof(cpl));
		memset(buf + sizeof(cpl), 0xa5, cpl.data_len);
		return sizeof(cpl) + cpl.data_len;
	case SMIO_ACCEL_OP:	return reply ? SAMPLE_PUT(ares) : SAMPLE_PUT(aop);
	case SMIO_P2PMEM_ALLOC:	return reply ? SAMPLE_PUT(pmg) : SAMPLE_PUT(p2q);
	case SMIO_P2PMEM_FREE:	return reply ? 0 : SAMPLE_PUT(pmf);
	case SMIO_NVME_COPY:	return reply ? SAMPLE_PUT(ncr) : SAMPLE_PUT(ncp);
	case SMIO_ACCEL_LOAD:
		if (reply)
			return 0;
		memcpy(buf, &aload, sizeof(aload));
		memset(buf + sizeof(aload), 0x7f, 8);
		return sizeof(aload) + 8;
	case SMIO_ACCEL_LAUNCH:
		if (reply)
			return SAMPLE_PUT(ares);
		memcpy(buf, &alau, sizeof(alau));
		memset(buf + sizeof(alau), 0x7f, 12);    /* an "image" */
		memcpy(buf + sizeof(alau) + 12, "a\0b", 4);  /* two arguments */
		return sizeof(alau) + 16;
	case SMIO_DEV_LIST:
	case SMIO_PEER_DEV_LIST: return reply ? fill_dev_list(buf) : 0;
	case SMIO_DEV_BORROW:	return reply ? SAMPLE_PUT(dbd) : SAMPLE_PUT(dbr);
	case SMIO_DEV_RETURN:
	case SMIO_DEV_RELEASE_EXCL: return reply ? 0 : SAMPLE_PUT(dref);
	case SMIO_DEV_SEG_CONNECT: return reply ? SAMPLE_PUT(sgcn) : SAMPLE_PUT(dsc);
	case SMIO_DEV_MAP_LOCAL: return reply ? SAMPLE_PUT(dmap) : SAMPLE_PUT(dml);
	case SMIO_DEV_MAP_REMOTE: return reply ? SAMPLE_PUT(dmap) : SAMPLE_PUT(dmr);
	case SMIO_DEV_UNMAP:	return reply ? 0 : SAMPLE_PUT(dun);
	case SMIO_DEV_RID:	return reply ? 0 : SAMPLE_PUT(drid);
	case SMIO_DEV_SEG_CREATE: return reply ? SAMPLE_PUT(dsr) : SAMPLE_PUT(dsg);
	case SMIO_PEER_DEV_BORROW: return reply ? SAMPLE_PUT(pdr) : SAMPLE_PUT(pdb);
	case SMIO_PEER_DEV_RETURN:
	case SMIO_PEER_DEV_RELEASE_EXCL: return reply ? 0 : SAMPLE_PUT(pdr);
	case SMIO_PEER_DEV_BAR:	return reply ? SAMPLE_PUT(pbr) : SAMPLE_PUT(pbq);
	case SMIO_PEER_DEV_MAP:	return reply ? SAMPLE_PUT(pmr) : SAMPLE_PUT(pmq);
	case SMIO_PEER_DEV_UNMAP: return reply ? 0 : SAMPLE_PUT(pmu);
	case SMIO_PEER_DEV_SEG_CREATE:
	case SMIO_PEER_DEV_SEG_LOOKUP: return reply ? SAMPLE_PUT(psr) : SAMPLE_PUT(psq);
	case SMIO_LEND_POOL:
	case SMIO_PEER_LEND_POOL: return reply ? fill_lend_pool(buf) : 0;
	case SMIO_LEND_BORROW:	return reply ? SAMPLE_PUT(lin) : SAMPLE_PUT(lrq);
	case SMIO_LEND_RETURN:	return reply ? 0 : SAMPLE_PUT(lrt);
	case SMIO_PEER_LEND_SETUP: return reply ? SAMPLE_PUT(lgr) : SAMPLE_PUT(pls);
	case SMIO_PEER_LEND_RELEASE: return reply ? 0 : SAMPLE_PUT(plr);
	case SMIO_PEER_LEND_CFG:
	case SMIO_PEER_CZ_CFG:	return SAMPLE_PUT(plc);
	case SMIO_CZ_SHARE:
	case SMIO_CZ_UNSHARE: {
		struct smio_cz_share czs = { .fdid = 0x00080400 };
		struct smio_cz_info czi = { .fdid = 0x00080400, .uid = 0xe000, .oid = 0x400,
					    .present = 1, .bound = 1, .msis = 1,
					    .bar_addr = { 0x10000000 }, .bar_size = { 0x4000 },
					    .name = "nvme0", .driver = "nvme" };

		return reply ? SAMPLE_PUT(czi) : SAMPLE_PUT(czs);
	}
	case SMIO_PEER_CZ_BIND: {
		struct smio_peer_cz_bind czb = { .bdf = 0x400, .uid = 0xe000,
						 .ubar = 0x10000000, .ubar_size = 1u << 24 };
		struct smio_cz_grant czg = { .bdf = 0x400, .vendor = 0x534d, .device = 0x10,
					     .class = 0x010802, .bar_addr = { 0x10000000 },
					     .bar_size = { 0x4000 }, .name = "nvme0",
					     .model = "nvme" };

		return reply ? SAMPLE_PUT(czg) : SAMPLE_PUT(czb);
	}
	case SMIO_PEER_CZ_UNBIND: return reply ? 0 : SAMPLE_PUT(plr);
	case SMIO_PEER_LEND_P2P:
	case SMIO_PEER_LEND_HOPS: return SAMPLE_PUT(plp);
	case SMIO_LEND_P2P:	return SAMPLE_PUT(lp);
	case SMIO_LEND_HOLD:	return reply ? 0 : SAMPLE_PUT(lhd);
	case SMIO_VM_MEM:	return reply ? SAMPLE_PUT(vmr) : SAMPLE_PUT(vmm);
	case SMIO_VM_ATTACH:	return reply ? SAMPLE_PUT(vmar) : SAMPLE_PUT(vma);
	case SMIO_VM_IRQ:	return reply ? 0 : SAMPLE_PUT(vmi);
	case SMIO_VM_CMD:	return reply ? SAMPLE_PUT(vmcr) : SAMPLE_PUT(vmc);
	case SMIO_PEER_VM_RESERVE: return reply ? SAMPLE_PUT(pvrr) : SAMPLE_PUT(pvr);
	case SMIO_PEER_VM_DMA:	return reply ? 0 : SAMPLE_PUT(pvd);
	case SMIO_VM_BAR:	return reply ? SAMPLE_PUT(vbr) : SAMPLE_PUT(vbq);
	case SMIO_VM_STATS:
		if (!reply)
			return 0;
		{
			struct smio_vm_stats vs = { .n = 1 };
			struct smio_vm_stat ve = { .fdid = 0x000c0200, .pid = 42, .nvec = 33,
						   .nbars = 3, .msgs = 37, .irqs = 1000 };

			memcpy(buf, &vs, sizeof(vs));
			memcpy(buf + sizeof(vs), &ve, sizeof(ve));
			return sizeof(vs) + sizeof(ve);
		}
	case SMIO_LEND_HOLDERS:	return reply ? fill_lend_holders(buf) : SAMPLE_PUT(lrt);
	}
	return NO_DIR;
}

/* Diagnostics (diag.h): STATS, STATS_CLEAR, EVENTS. */
static inline size_t sample_diag(uint16_t type, bool reply, uint8_t *buf)
{
	static const char json[] = "{\"host\":1}";
	struct smio_stats_req sq = { 0 };
	struct smio_stats sr = { .len = sizeof(json) - 1 };
	struct smio_events_req eq = { .since = 3, .max = 16 };
	struct smio_events er = { .next = 5, .first = 1, .last = 9, .n = 2 };
	struct smio_event ev = { .seq = 4, .time_ns = 1, .kind = SMIO_EV_LINK_DOWN, .host = 1,
				 .text = "ntb0 link down" };

	switch (type) {
	case SMIO_STATS:
		if (!reply)
			return SAMPLE_PUT(sq);
		memcpy(buf, &sr, sizeof(sr));
		memcpy(buf + sizeof(sr), json, sr.len);
		return sizeof(sr) + sr.len;
	case SMIO_STATS_CLEAR:	return 0;
	case SMIO_EVENTS:
		if (!reply)
			return SAMPLE_PUT(eq);
		memcpy(buf, &er, sizeof(er));
		memcpy(buf + sizeof(er), &ev, sizeof(ev));
		ev.seq = 5;
		memcpy(buf + sizeof(er) + sizeof(ev), &ev, sizeof(ev));
		return sizeof(er) + 2 * sizeof(ev);
	}
	return NO_DIR;
}

static inline size_t sample(uint16_t type, bool reply, uint8_t *buf)
{
	size_t n = sample_core(type, reply, buf);

	if (n == NO_DIR)
		n = sample_dev(type, reply, buf);
	return n != NO_DIR ? n : sample_diag(type, reply, buf);
}

#endif
