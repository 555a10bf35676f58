// SPDX-License-Identifier: MIT
/*
 * gen_seeds OUT TOPOLOGIES STAMP: the fuzzers' seed corpora, written by the
 * build (never committed) into OUT/proto, OUT/topo, OUT/nvme and OUT/daemon:
 *
 *  proto   one valid framed message (header + payload) of every type of the
 *          message list, request and reply (tests/proto_samples.h);
 *  topo    the shipped topologies (every *.yaml under TOPOLOGIES) and the
 *          built-in default;
 *  nvme    NVMe command sequences in fuzz_nvme's input format: controller
 *          enable, admin commands, queue creation, reads, writes, resets;
 *  daemon  fuzz_daemon records (fuzz/fuzz_daemon.h): every request on a
 *          connection whose role may send it, replies and an unauthenticated
 *          HELLO, and a few multi-step sessions on the default topology
 *          (segments, interrupts, DMA, borrowing and lending host 1's devices).
 *
 * STAMP is touched last: the build's record that the corpora are there.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "smartio/nvme_queue.h"
#include "fuzz_daemon.h"
#include "proto_samples.h"
#include "smartio/proto.h"
#include "smartio/topology.h"

#define HDR sizeof(struct smio_hdr)

static const char *out_dir;
static uint8_t buf[256 * 1024];
static size_t blen;

static void die(const char *what, const char *path)
{
	fprintf(stderr, "gen_seeds: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void mkdir_p(const char *sub)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", out_dir, sub);
	if (mkdir(path, 0755) && errno != EEXIST)
		die("cannot make", path);
}

static void write_file(const char *sub, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		die("cannot write", path);
}

static void put(const void *p, size_t n)
{
	if (blen + n > sizeof(buf)) {
		fprintf(stderr, "gen_seeds: a seed outgrew its buffer\n");
		exit(1);
	}
	memcpy(buf + blen, p, n);
	blen += n;
}

static void put8(uint8_t v)
{
	put(&v, 1);
}

/* ---------- proto: framed samples ---------- */

static size_t frame(uint8_t *o, uint16_t type, bool reply, uint32_t seq)
{
	size_t n = sample(type, reply, o + HDR);
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION, .type = type,
			      .len = (uint32_t)n, .seq = seq,
			      .flags = reply ? SMIO_F_REPLY : 0 };

	if (n == NO_DIR)
		return 0;
	memcpy(o, &h, HDR);
	return HDR + n;
}

static void gen_proto(void)
{
	static uint8_t o[HDR + SMIO_MAX_PAYLOAD];
	char name[64];

	mkdir_p("proto");
	for (size_t i = 0; i < smio_msg_count(); i++) {
		const struct smio_msg_desc *m = smio_msg_at(i);

		for (int r = 0; r < 2; r++) {
			size_t n = frame(o, m->type, r, 7);

			if (!n)
				continue;
			snprintf(name, sizeof(name), "%s-%s", m->name, r ? "rep" : "req");
			write_file("proto", name, o, n);
		}
	}
}

/* ---------- topo ---------- */

static void copy_yaml(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		die("cannot read", dir);
	while ((e = readdir(d))) {
		char path[4096], name[512];
		size_t len = strlen(e->d_name);
		struct stat st;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st))
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, e->d_name);
		if (S_ISDIR(st.st_mode)) {
			char sub[512];

			snprintf(sub, sizeof(sub), "%s-", name);
			copy_yaml(path, sub);
			continue;
		}
		if (len < 5 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		f = fopen(path, "rb");
		if (!f)
			die("cannot read", path);
		blen = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		write_file("topo", name, buf, blen);
	}
	closedir(d);
}

static void gen_topo(const char *topologies)
{
	const char *y = topo_default_yaml();

	mkdir_p("topo");
	copy_yaml(topologies, "");
	write_file("topo", "builtin-default.yaml", y, strlen(y));
}

/* ---------- nvme: fuzz_nvme's operations (fuzz/fuzz_nvme.c) ---------- */

#define OP_POLL     8
#define OP_ENABLE   10
#define OP_ADMIN    11
#define OP_IO       12
#define OP_CC       0
#define OP_RESET    15
#define STEER_ALL   0x0f     /* PRPs into RAM, nsid from the steer byte (0), small cdw12 */
#define RAM_DATA    0x50000ull

static void sqe(uint8_t op, uint8_t q, uint8_t steer, const struct nvme_sqe *s)
{
	put8(op);
	if (op == OP_IO)
		put8(q);
	put8(steer);
	put(s, sizeof(*s));
	put8(OP_POLL);
	put8(3);
}

static void admin(uint8_t opc, uint32_t nsid, uint32_t cdw10, uint32_t cdw11, uint32_t cdw14)
{
	struct nvme_sqe s = { .opcode = opc, .cid = (uint16_t)blen, .nsid = nsid,
			      .prp1 = RAM_DATA, .cdw10 = cdw10, .cdw11 = cdw11, .cdw14 = cdw14 };

	/* Steering bits 0-1 keep the PRPs in RAM; nsid (bit 2) stays ours. */
	sqe(OP_ADMIN, 0, 0x03, &s);
}

static void io(uint8_t q, uint8_t opc, uint64_t slba, uint16_t nlb)
{
	struct nvme_sqe s = { .opcode = opc, .cid = (uint16_t)blen, .nsid = 1,
			      .prp1 = RAM_DATA + 0x1000, .cdw10 = (uint32_t)slba,
			      .cdw11 = (uint32_t)(slba >> 32), .cdw12 = nlb };

	sqe(OP_IO, q - 1, 0x03, &s);
}

static void enable(uint8_t first)
{
	put8(first);
	put8(0);
}

/* I/O queue pair q (1..4): its CQ, then its SQ (cdw14 bit 0 steers the base into RAM). */
static void queues(uint16_t q)
{
	admin(nvme_admin_create_cq, 0, q | 15u << 16, 1, 1);
	admin(nvme_admin_create_sq, 0, q | 15u << 16, (uint32_t)q << 16 | 1, 1);
}

static void gen_nvme(void)
{
	mkdir_p("nvme");

	blen = 0;
	enable(OP_ENABLE);
	admin(nvme_admin_identify, 0, 1, 0, 0);          /* controller */
	admin(nvme_admin_identify, 1, 0, 0, 0);          /* namespace 1 */
	admin(nvme_admin_identify, 0, 2, 0, 0);          /* active namespaces */
	write_file("nvme", "identify", buf, blen);

	blen = 0;
	enable(OP_ENABLE | 0x80);                        /* 4 KiB LBAs */
	admin(nvme_admin_set_features, 0, 0x07, 3u << 16 | 3u, 0);   /* queue counts */
	admin(nvme_admin_get_features, 0, 0x07, 0, 0);
	admin(nvme_admin_get_log_page, 0, 0x02 | 127u << 16, 0, 0);  /* SMART */
	admin(nvme_admin_abort_cmd, 0, 1, 0, 0);
	write_file("nvme", "features-log", buf, blen);

	blen = 0;
	enable(OP_ENABLE);
	queues(1);
	queues(2);
	io(1, nvme_cmd_write, 0, 7);
	io(1, nvme_cmd_read, 0, 7);
	io(2, nvme_cmd_flush, 0, 0);
	io(2, nvme_cmd_read, 2040, 15);                  /* beyond the namespace's end */
	admin(nvme_admin_delete_sq, 0, 2, 0, 0);
	admin(nvme_admin_delete_cq, 0, 2, 0, 0);
	write_file("nvme", "io", buf, blen);

	blen = 0;
	enable(OP_ENABLE | 0x40);                        /* doorbell stride 2 */
	queues(1);
	io(1, nvme_cmd_write, 8, 0);
	put8(OP_CC);                                     /* shutdown notification */
	put((uint32_t[]){ 0x460001u | 1u << 14 }, 4);
	put8(OP_POLL);
	put8(3);
	put8(OP_RESET);
	put8(0xa5);
	enable(OP_ENABLE);
	admin(nvme_admin_identify, 0, 1, 0, 0);
	write_file("nvme", "shutdown-reset", buf, blen);
}

/* ---------- daemon: fuzz_daemon records ---------- */

static void rec(uint8_t sel, uint16_t type, const void *p, size_t n, uint32_t flags)
{
	struct smio_hdr h = { .magic = SMIO_MAGIC, .version = SMIO_VERSION, .type = type,
			      .len = (uint32_t)n, .flags = flags };

	put8(sel);
	put(&h, HDR);
	if (n)
		put(p, n);
}

#define REC(sel, type, v) rec(sel, type, &(v), sizeof(v), 0)

/* The connection a message's request may come from. */
static uint8_t conn_for(const struct smio_msg_desc *m)
{
	if (m->type == SMIO_HELLO)
		return FD_UNAUTH;
	if (m->roles & SMIO_R_CLIENT)
		return FD_CLIENT_A;
	if (m->roles & SMIO_R_ADMIN)
		return FD_ADMIN;
	return FD_PEER_1;
}

/* The default topology's devices (docs/topology.md): host 1's and 2's. */
#define NODE(host)     (4u * ((host) + 1))
#define H1_NVME        SMIO_FDID(NODE(1), 0x0400)
#define H1_GPU0        SMIO_FDID(NODE(1), 0x0500)
#define H2_NVME        SMIO_FDID(NODE(2), 0x0200)

static void gen_sessions(void)
{
	struct smio_seg_create sc = { .segid = 7, .size = 8192 };
	struct smio_seg_avail sa = { .segid = 7, .available = 1 };
	struct smio_seg_id si = { .segid = 7 };
	struct smio_seg_connect sn = { .node_id = NODE(0), .segid = 7, .adapter = 0 };
	struct smio_seg_connect sr = { .node_id = NODE(1), .segid = 7, .adapter = 0 };
	struct smio_seg_conn_ref cr = { .conn = FD_REF(0, 0) };     /* the last SEG_CONNECT's */
	struct smio_seg_conn_ref cr1 = { .conn = FD_REF(1, 0) };
	struct smio_seg_conn_ref cr4 = { .conn = FD_REF(4, 0) };
	struct smio_seg_map sm = { .conn = FD_REF(1, 0), .size = 4096 };
	struct smio_intr_create ic = { .intno = 5, .data = 1 };
	struct smio_intr_connect in = { .node_id = NODE(0), .intno = 5, .data = 1 };
	struct smio_intr_id ii = { .intno = 5, .data = 1 };
	struct smio_intr_trigger tr = { .handle = FD_REF(0, 0), .len = 3 };
	uint8_t msg[sizeof(tr) + 3];
	struct smio_dma_queue_create dq = { .adapter = 0, .max_entries = 16 };
	struct smio_dma_queue_ref dr = { .queue = FD_REF(0, 0) };
	struct smio_dma_queue_ref dr1 = { .queue = FD_REF(1, 0) };
	struct smio_dev_borrow db = { .fdid = H1_NVME };
	struct smio_dev_borrow dg = { .fdid = H1_GPU0 };
	struct smio_dev_ref dref = { .handle = FD_REF(5, 0) };      /* A's borrow */
	struct smio_dev_ref dref6 = { .handle = FD_REF(6, 0) };
	struct smio_dev_map_local dml = { .handle = FD_REF(1, 0), .segid = 7, .size = 4096 };
	struct smio_dev_seg_create dsc = { .handle = FD_REF(2, 0), .segid = 9, .size = 4096,
		.memtype = SMIO_DEV_MEMTYPE_SHARED, .place = SMIO_DEV_PLACE_LENDER };
	struct smio_dev_rid rid = { .rid = 0x0100, .add = 1 };
	struct smio_lend_req lb = { .fdid = H2_NVME };
	struct smio_lend_req lr = { .fdid = H2_NVME, .flags = SMIO_LEND_F_UNBIND };
	struct smio_lend_p2p lp = { .client = H1_GPU0, .provider = H1_NVME, .bar = 0 };
	struct smio_route_req rr = { .rid = 0x0100, .addr = 0x1000, .len = 64 };
	struct smio_ntb_lut lut = { .ntb = 0, .entry = UINT32_MAX, .dest_host = 1,
				    .dest_addr = 0x100000 };
	struct smio_ntb_rid nr = { .ntb = 0, .rid = 0x0200 };
	struct smio_ntb_link nl = { .ntb = 0, .up = 0 };
	struct smio_iommu ia = { .op = SMIO_IOMMU_ALLOC };
	struct smio_iommu_map im = { .domain = 1, .prot = 3, .iova = 0x10000,
				     .paddr = 0x20000, .size = 0x1000 };
	struct smio_cfg cw = { .bdf = 0x0100, .off = 4, .size = 2, .value = 0 };
	struct smio_peer_seg_ref pr = { .segid = 7, .ref = FD_REF(0, 1) };   /* the lookup's */
	struct smio_invalidate inv = { .origin_host = 1, .epoch = 1 };

	blen = 0;                 /* a segment: created, offered, mapped, connected by another */
	REC(FD_CLIENT_A, SMIO_SEG_CREATE, sc);
	REC(FD_CLIENT_A, SMIO_SEG_AVAILABLE, sa);
	REC(FD_CLIENT_A, SMIO_SEG_MAP_LOCAL, si);
	REC(FD_CLIENT_B, SMIO_SEG_CONNECT, sn);
	REC(FD_CLIENT_B, SMIO_SEG_STATE, cr);
	REC(FD_CLIENT_B, SMIO_SEG_MAP_REMOTE, sm);
	REC(FD_PEER_1, SMIO_PEER_SEG_LOOKUP, si);
	REC(FD_PEER_1, SMIO_PEER_SEG_RELEASE, pr);
	REC(FD_CLIENT_B, SMIO_SEG_DISCONNECT, cr4);
	REC(FD_CLIENT_A, SMIO_SEG_REMOVE, si);
	write_file("daemon", "session-segment", buf, blen);

	blen = 0;                 /* a segment on host 1 (no such id: the peer says so) */
	REC(FD_CLIENT_A, SMIO_SEG_CONNECT, sr);
	REC(FD_CLIENT_A, SMIO_SEG_EVENTS, cr);
	REC(FD_CLIENT_A, SMIO_SEG_DISCONNECT, cr1);
	write_file("daemon", "session-segment-remote", buf, blen);

	blen = 0;                 /* interrupts and a DMA queue */
	REC(FD_CLIENT_A, SMIO_INTR_CREATE, ic);
	REC(FD_CLIENT_B, SMIO_INTR_CONNECT, in);
	memcpy(msg, &tr, sizeof(tr));
	memcpy(msg + sizeof(tr), "abc", 3);
	rec(FD_CLIENT_B, SMIO_INTR_TRIGGER, msg, sizeof(tr) + 3, 0);
	REC(FD_CLIENT_A, SMIO_INTR_RECEIVE, ii);
	REC(FD_PEER_2, SMIO_PEER_INTR_LOOKUP, ii);
	REC(FD_CLIENT_A, SMIO_SEG_CREATE, sc);
	REC(FD_CLIENT_A, SMIO_DMA_QUEUE_CREATE, dq);
	REC(FD_CLIENT_A, SMIO_DMA_STATE, dr);
	REC(FD_CLIENT_A, SMIO_DMA_QUEUE_REMOVE, dr1);
	write_file("daemon", "session-intr-dma", buf, blen);

	blen = 0;                 /* SmartIO: borrow host 1's NVMe and GPU, map, return */
	rec(FD_CLIENT_A, SMIO_DEV_LIST, NULL, 0, 0);
	REC(FD_CLIENT_A, SMIO_DEV_BORROW, db);
	REC(FD_CLIENT_A, SMIO_SEG_CREATE, sc);
	REC(FD_CLIENT_A, SMIO_DEV_MAP_LOCAL, dml);
	REC(FD_CLIENT_A, SMIO_DEV_SEG_CREATE, dsc);
	REC(FD_CLIENT_A, SMIO_DEV_RID, rid);
	REC(FD_CLIENT_B, SMIO_DEV_BORROW, dg);
	REC(FD_CLIENT_A, SMIO_DEV_RELEASE_EXCL, dref);
	REC(FD_CLIENT_A, SMIO_DEV_RETURN, dref6);
	write_file("daemon", "session-device", buf, blen);

	blen = 0;                 /* Device Lending: host 2's NVMe as a shadow on host 0 */
	rec(FD_CLIENT_A, SMIO_LEND_POOL, NULL, 0, 0);
	REC(FD_ADMIN, SMIO_LEND_BORROW, lb);
	rec(FD_CLIENT_A, SMIO_FUNC_LIST, NULL, 0, 0);
	REC(FD_CLIENT_A, SMIO_LEND_P2P, lp);
	REC(FD_ADMIN, SMIO_LEND_RETURN, lr);
	write_file("daemon", "session-lend", buf, blen);

	blen = 0;                 /* the admin's tables (undone after the input) */
	REC(FD_ADMIN, SMIO_NTB_LUT_SET, lut);
	REC(FD_ADMIN, SMIO_NTB_RID_ADD, nr);
	REC(FD_ADMIN, SMIO_IOMMU_DOMAIN, ia);
	REC(FD_ADMIN, SMIO_IOMMU_MAP, im);
	REC(FD_ADMIN, SMIO_CFG_WRITE, cw);
	REC(FD_CLIENT_A, SMIO_ROUTE, rr);
	REC(FD_CLIENT_A, SMIO_MAP, rr);
	REC(FD_ADMIN, SMIO_NTB_LINK, nl);
	REC(FD_CLIENT_A, SMIO_ROUTE, rr);
	write_file("daemon", "session-admin", buf, blen);

	blen = 0;                 /* in flight together, then a close and a one-way message */
	rec(FD_CLIENT_A | FD_SEL_NOWAIT, SMIO_STATUS, NULL, 0, 0);
	rec(FD_CLIENT_A | FD_SEL_NOWAIT, SMIO_DEV_LIST, NULL, 0, 0);
	rec(FD_PEER_1 | FD_SEL_NOWAIT, SMIO_PEER_DEV_LIST, NULL, 0, 0);
	rec(FD_PEER_1 | FD_SEL_CLOSE, SMIO_PEER_LEND_POOL, NULL, 0, 0);
	REC(FD_PEER_2, SMIO_PEER_INVALIDATE, inv);
	rec(FD_CLIENT_B | FD_SEL_FD, SMIO_STATUS, NULL, 0, 0);
	write_file("daemon", "session-pipelined", buf, blen);
}

/* Shadows of borrowed devices on host 0 (the first is f0:00.0, the next f0:00.1). */
#define SHADOW0        0xf000
#define SHADOW1        0xf001

/* Borrowed devices driven by host 0's own drivers, across the NTB. */
static void gen_shadow_session(void)
{
	struct smio_lend_req nv = { .fdid = H2_NVME }, gpu = { .fdid = H1_GPU0 };
	struct smio_lend_req rnv = { .fdid = H2_NVME, .flags = SMIO_LEND_F_UNBIND };
	struct smio_lend_req rgpu = { .fdid = H1_GPU0, .flags = SMIO_LEND_F_UNBIND };
	struct smio_nvme_admin id = { .bdf = SHADOW0, .dir = SMIO_DIR_FROM_DEV, .data_len = 4096 };
	struct nvme_sqe idc = { .opcode = nvme_admin_identify, .cdw10 = 1 };
	struct smio_nvme_io rd = { .bdf = SHADOW0, .op = SMIO_NVME_READ, .nsid = 1, .slba = 8,
				   .nlb = 1 };
	struct smio_nvme_io wr = { .bdf = SHADOW0, .op = SMIO_NVME_WRITE, .nsid = 1, .slba = 8,
				   .nlb = 1, .data_len = 512 };
	struct smio_accel_op cp = { .bdf = SHADOW1, .kind = SMIO_ACCEL_COPY, .len = 4096,
				    .dst = 8192 };
	struct smio_cfg cr = { .bdf = SHADOW0, .off = 0, .size = 4 };
	struct smio_bdf dump = { .bdf = SHADOW1 };
	uint8_t w[sizeof(wr) + 512];

	blen = 0;
	REC(FD_ADMIN, SMIO_LEND_BORROW, nv);
	REC(FD_ADMIN, SMIO_LEND_BORROW, gpu);
	memcpy(id.sqe, &idc, sizeof(idc));
	REC(FD_CLIENT_A, SMIO_NVME_ADMIN, id);
	memcpy(w, &wr, sizeof(wr));
	memset(w + sizeof(wr), 0x5a, 512);
	rec(FD_CLIENT_A, SMIO_NVME_IO, w, sizeof(w), 0);
	REC(FD_CLIENT_A, SMIO_NVME_IO, rd);
	REC(FD_CLIENT_B, SMIO_ACCEL_OP, cp);
	REC(FD_CLIENT_A, SMIO_CFG_READ, cr);
	REC(FD_CLIENT_A, SMIO_CFG_DUMP, dump);
	REC(FD_ADMIN, SMIO_LEND_RETURN, rgpu);
	REC(FD_ADMIN, SMIO_LEND_RETURN, rnv);
	write_file("daemon", "session-shadow", buf, blen);
}

static void gen_daemon(void)
{
	static uint8_t p[SMIO_MAX_PAYLOAD];
	char name[64];

	mkdir_p("daemon");
	for (size_t i = 0; i < smio_msg_count(); i++) {
		const struct smio_msg_desc *m = smio_msg_at(i);
		size_t n = sample(m->type, false, p);

		blen = 0;
		if (m->type == SMIO_HELLO) {
			/* The one connection the harness does not greet. */
			struct smio_hello h = { .role = SMIO_ROLE_CLIENT, .host = 0,
						.version = SMIO_VERSION };

			REC(FD_UNAUTH, SMIO_HELLO, h);
			rec(FD_UNAUTH, SMIO_STATUS, NULL, 0, 0);
		} else {
			rec(conn_for(m), m->type, p, n, 0);
		}
		snprintf(name, sizeof(name), "%s", m->name);
		write_file("daemon", name, buf, blen);
		/* Its reply, sent to the daemon as if it had asked. */
		n = sample(m->type, true, p);
		if (n != NO_DIR) {
			blen = 0;
			rec(FD_PEER_2, m->type, p, n, SMIO_F_REPLY);
			snprintf(name, sizeof(name), "%s-rep", m->name);
			write_file("daemon", name, buf, blen);
		}
	}
	gen_sessions();
	gen_shadow_session();
}

int main(int argc, char **argv)
{
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: gen_seeds OUT TOPOLOGIES STAMP\n");
		return 2;
	}
	out_dir = argv[1];
	if (mkdir(out_dir, 0755) && errno != EEXIST)
		die("cannot make", out_dir);
	gen_proto();
	gen_topo(argv[2]);
	gen_nvme();
	gen_daemon();
	f = fopen(argv[3], "w");
	if (!f || fclose(f))
		die("cannot write", argv[3]);
	return 0;
}
