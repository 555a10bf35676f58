// SPDX-License-Identifier: MIT
/*
 * The papers' figures from the timing model (docs/timing-model.md, "Figures").
 *
 * Every series is the hop list of one scenario of a paper's setup, costed
 * with the caller's parameter set: the same parameters for every figure and
 * for the stated-number checks of timing_paper.c (which share the setups in
 * timing_build.h). What a setup states about itself (link generation and
 * width, which IOMMUs are on, MPS) is part of the hop list, not a constant.
 *
 * Curves are throughput vs transfer size, 4 KiB .. 128 MiB: the transfer rate
 * of one isolated DMA transfer of that size (xfer_bw_gbs), which is what the
 * papers' bandwidthTest-style programs time. Bars are nanoseconds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "smartio/timing.h"
#include "timing_build.h"

#define MIN_SIZE 4096ull
#define PINGPONG_BYTES 4
#define DOORBELL_BYTES 4
#define NVME_READ_BYTES 4096

/* ---------- scenario building blocks ---------- */

/* A device in the SmartIO expansion chassis (PEX8796), up to the chassis switch. */
static void chassis_dev(struct pathb *b, const char *name, unsigned gen, unsigned width,
			uint16_t h)
{
	tb_dev(b, h, name);
	tb_link(b, gen, width, h);
	tb_chip(b, TIMING_HOP_SWITCH, "PEX8796", h);
}

/* Transparent HIB68 pair (PEX8733 each end) from the chassis up to host h's root port. */
static void hib68_up(struct pathb *b, uint16_t h)
{
	tb_link(b, 3, 16, h);
	tb_chip(b, TIMING_HOP_SWITCH, "PEX8733", h);
	tb_cable(b, 3, 16, h);
	tb_chip(b, TIMING_HOP_SWITCH, "PEX8733", h);
	tb_link(b, 3, 16, h);
	tb_rootport(b, h);
}

/* PXH830 of host a -- MXS824 cluster switch (PM8536) -- PXH830 of host bh. */
static void ntb_via_mxs(struct pathb *b, unsigned gen, unsigned width, uint16_t a, uint16_t bh)
{
	tb_link(b, gen, width, a);
	tb_chip(b, TIMING_HOP_NTB, "PXH830", a);
	tb_cable(b, gen, width, a);
	tb_chip(b, TIMING_HOP_CSWITCH, "PM8536", TIMING_HOST_NONE);
	tb_cable(b, gen, width, bh);
	tb_chip(b, TIMING_HOP_NTB, "PXH830", bh);
	tb_link(b, gen, width, bh);
}

/* Host h's root complex into its DRAM, optionally through its IOMMU. */
static void to_dram(struct pathb *b, uint16_t h, bool iommu)
{
	tb_rootport(b, h);
	tb_root(b, h);
	if (iommu)
		tb_iommu(b, h);
	tb_dram(b, h);
}

/* A Quadro K420 (Gen2 x16) under a DL lender's motherboard switch (PEX8733-class). */
static void k420_up(struct pathb *b, const char *name, uint16_t h)
{
	tb_dev(b, h, name);
	tb_link(b, 2, 16, h);
	tb_chip(b, TIMING_HOP_SWITCH, "PEX8733", h);
}

/* From a DL lender's motherboard switch up through its root (and IOMMU) and back down. */
static void via_root(struct pathb *b, uint16_t h, bool iommu)
{
	tb_link(b, 3, 16, h);
	tb_rootport(b, h);
	tb_root(b, h);
	if (iommu)
		tb_iommu(b, h);
	tb_rootport(b, h);
	tb_link(b, 3, 16, h);
	tb_chip(b, TIMING_HOP_SWITCH, "PEX8733", h);
}

/* ---------- series ---------- */

static struct timing_series *series(struct timing_figure *f, const char *label,
				    const char *path)
{
	struct timing_series *s;

	if (f->nseries >= TIMING_FIG_SERIES)
		return NULL;
	s = &f->s[f->nseries++];
	s->label = label;
	s->path = path;
	s->n = 0;
	return s;
}

static int curve(struct timing_figure *f, const char *label, const char *path,
		 const struct pathb *b, bool write, uint32_t mps)
{
	struct timing_series *s = series(f, label, path);
	struct timing_result r;
	int rc;

	if (!s)
		return -ENOSPC;
	for (unsigned i = 0; i < TIMING_FIG_POINTS; i++) {
		rc = tb_run(b, write, MIN_SIZE << i, mps, &r);
		if (rc)
			return rc;
		s->x[i] = (double)(MIN_SIZE << i);
		s->y[i] = r.xfer_bw_gbs;
		s->n = i + 1;
	}
	return 0;
}

static int bar(struct timing_figure *f, const char *label, const char *path, double ns)
{
	struct timing_series *s = series(f, label, path);

	if (!s)
		return -ENOSPC;
	s->n = 1;
	s->x[0] = 0;
	s->y[0] = ns;
	return 0;
}

/* The papers' ping-pong: a 4-byte posted write there and (mirrored) back. */
static int pingpong(struct timing_figure *f, const char *label, const char *path,
		    const struct pathb *b)
{
	struct timing_result r;
	int rc = tb_run(b, true, PINGPONG_BYTES, 0, &r);

	return rc ? rc : bar(f, label, path, 2 * r.latency_ns);
}

/*
 * One QD1 NVMe read (as `smartio predict nvme-read`): the doorbell, the
 * command fetch, the media, the data write and the completion entry behind
 * the data; the driver polls. With the SQ away from the CPU, the CPU's write
 * of the command is posted just before the doorbell: the fetch waits only if
 * the command has not landed when the fetch's request reaches it (taken to
 * be half the fetch's round trip after the doorbell).
 */
struct nvme_read {
	struct pathb db, sqe, fetch, data, cqe;
};

static int nvme_qd1(const struct timing_params *p, const struct nvme_read *x, double *total)
{
	struct timing_query q = { .size = DOORBELL_BYTES, .write = true,
				  .completer = TIMING_CPL_REGS };
	struct timing_result db, sqe = { 0 }, fetch, data, cqe;
	double start;
	int rc;

	if (x->db.err || x->sqe.err || x->fetch.err || x->data.err || x->cqe.err)
		return -ENOENT;
	rc = timing_path(p, x->db.h, x->db.n, &q, &db);
	if (!rc && x->sqe.n)
		rc = tb_run(&x->sqe, true, p->nvme_sqe_bytes, 0, &sqe);
	if (!rc)
		rc = tb_run(&x->fetch, false, p->nvme_sqe_bytes, 0, &fetch);
	if (!rc)
		rc = tb_run(&x->data, true, NVME_READ_BYTES, 0, &data);
	if (!rc)
		rc = tb_run(&x->cqe, true, p->nvme_cqe_bytes, 0, &cqe);
	if (rc)
		return rc;
	start = db.latency_ns;
	if (sqe.latency_ns > db.latency_ns + fetch.first_ns / 2)
		start = sqe.latency_ns - fetch.first_ns / 2;
	*total = start + fetch.latency_ns + p->nvme_media_read_ns + data.latency_ns +
		 (double)p->nvme_cqe_bytes / cqe.link_bw_gbs +
		 (cqe.first_ns - data.first_ns > 0 ? cqe.first_ns - data.first_ns : 0);
	return 0;
}

static void nvme_init(struct nvme_read *x, const struct timing_params *p)
{
	memset(x, 0, sizeof(*x));
	x->db.p = x->sqe.p = x->fetch.p = x->data.p = x->cqe.p = p;
}

/* ---------- SmartIO (TOCS 2021) ---------- */

/* Figs. 22-23: Quadro P4000 (Gen3 x16) in the chassis DMAs to/from the CPU's RAM. */
enum p4000_where { P4_LOCAL, P4_B2B, P4_MXS };

static void p4000_ram(struct pathb *b, enum p4000_where w)
{
	chassis_dev(b, "P4000", 3, 16, w == P4_LOCAL ? 0 : 1);
	if (w == P4_LOCAL) {
		/* The local baseline: the chassis on HIB68s, as many chips as the NTB path. */
		hib68_up(b, 0);
		tb_root(b, 0);
		tb_iommu(b, 0);
		tb_dram(b, 0);
		return;
	}
	if (w == P4_B2B)
		tb_ntb_crossing(b, 3, 16, 1, 0);
	else
		ntb_via_mxs(b, 3, 16, 1, 0);
	to_dram(b, 0, true);
}

static int fig22(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb l = { .p = p }, r = { .p = p };
	int rc;

	p4000_ram(&l, P4_LOCAL);
	p4000_ram(&r, P4_B2B);
	rc = curve(f, "local write", "P4000 -> PEX8796 -> HIB68 pair -> root -> IOMMU -> RAM", &l,
		   true, 0);
	if (!rc)
		rc = curve(f, "borrowed write", "P4000 -> PEX8796 -> PXH830 -> cable -> PXH830 -> "
			   "borrower root -> IOMMU -> RAM", &r, true, 0);
	if (!rc)
		rc = curve(f, "local read", "as local write, DMA read", &l, false, 0);
	if (!rc)
		rc = curve(f, "borrowed read", "as borrowed write, DMA read", &r, false, 0);
	return rc;
}

static int fig23(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb l = { .p = p }, r = { .p = p };
	int rc;

	p4000_ram(&l, P4_B2B);
	p4000_ram(&r, P4_MXS);
	rc = curve(f, "back-to-back write", "P4000 -> PEX8796 -> PXH830 -> cable -> PXH830 -> "
		   "root -> RAM", &l, true, 0);
	if (!rc)
		rc = curve(f, "cluster switch write", "as back-to-back plus the MXS824 (PM8536) "
			   "between the cables", &r, true, 0);
	if (!rc)
		rc = curve(f, "back-to-back read", "DMA read", &l, false, 0);
	if (!rc)
		rc = curve(f, "cluster switch read", "DMA read", &r, false, 0);
	return rc;
}

/* Figs. 24-27: P4000 to P4000 peer-to-peer writes (same chassis, or two lenders' chassis). */
static void p4000_p2p(struct pathb *b, uint16_t h, bool two_lenders)
{
	chassis_dev(b, "gpu0", 3, 16, h);
	if (two_lenders) {
		ntb_via_mxs(b, 3, 16, h, (uint16_t)(h + 1));
		h++;
		tb_chip(b, TIMING_HOP_SWITCH, "PEX8796", h);
	}
	tb_link(b, 3, 16, h);
	tb_dev(b, h, "gpu1");
}

static int fig24(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb l = { .p = p }, r = { .p = p };
	int rc;

	p4000_p2p(&l, 0, false);
	p4000_p2p(&r, 1, false);
	rc = curve(f, "local", "gpu0 -> PEX8796 -> gpu1 (local chassis)", &l, true, 0);
	return rc ? rc : curve(f, "borrowed", "gpu0 -> PEX8796 -> gpu1 (lender's chassis)", &r,
			       true, 0);
}

static int fig25(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb l = { .p = p }, r = { .p = p };
	int rc;

	p4000_p2p(&l, 0, false);
	p4000_p2p(&r, 1, false);
	rc = pingpong(f, "local", "gpu0 <-> PEX8796 <-> gpu1", &l);
	return rc ? rc : pingpong(f, "borrowed", "the same, in the lender's chassis", &r);
}

static int fig26(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb s = { .p = p }, d = { .p = p };
	int rc;

	p4000_p2p(&s, 1, false);
	p4000_p2p(&d, 1, true);
	rc = curve(f, "same lender", "gpu0 -> PEX8796 -> gpu1", &s, true, 0);
	return rc ? rc : curve(f, "different lenders", "gpu0 -> PEX8796 -> PXH830 -> MXS824 -> "
			       "PXH830 -> PEX8796 -> gpu1", &d, true, 0);
}

static int fig27(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb s = { .p = p }, d = { .p = p };
	int rc;

	p4000_p2p(&s, 1, false);
	p4000_p2p(&d, 1, true);
	rc = pingpong(f, "same lender", "gpu0 <-> PEX8796 <-> gpu1", &s);
	return rc ? rc : pingpong(f, "different lenders", "+ NTB, cluster switch, NTB, "
				  "internal switch each way", &d);
}

/*
 * Fig. 31: Tesla K40c DMA to/from the borrower's RAM, lender IOMMU off / on
 * (bare-metal Device Lending), and the GPU passed through to a VM (MDEV).
 * MDEV needs the lender's IOMMU (it mirrors guest-physical addresses), and
 * its parent acts only on the control path (config cycles, mappings,
 * interrupts): the data path is the bare-metal IOMMU one, built again here,
 * so the model predicts what the paper measures, "almost identical".
 */
static int fig31(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb off = { .p = p }, on = { .p = p }, mdev = { .p = p };
	int rc;

	timing_setup_k40(&off, false);
	timing_setup_k40(&on, true);
	timing_setup_k40(&mdev, true);
	rc = curve(f, "no-IOMMU read", "K40c -> PEX8796 -> PXH830 x16 -> borrower root", &off,
		   false, 0);
	if (!rc)
		rc = curve(f, "IOMMU read", "up through the HIB68s to the lender's root (IOMMU, "
			   "64 B split) and back down first", &on, false, 0);
	if (!rc)
		rc = curve(f, "MDEV read", "the IOMMU path: the lender's IOMMU maps guest-physical "
			   "addresses, the NTB window the VM's RAM", &mdev, false, 0);
	if (!rc)
		rc = curve(f, "no-IOMMU write", "DMA write", &off, true, 0);
	if (!rc)
		rc = curve(f, "IOMMU write", "DMA write", &on, true, 0);
	if (!rc)
		rc = curve(f, "MDEV write", "DMA write", &mdev, true, 0);
	return rc;
}

/*
 * Fig. 34: QD1 4 KiB reads of a borrowed P4800X (Gen3 x4, in the lender's
 * chassis) by a userspace driver on host 0; data into the borrower's local
 * GPU (P620), CQ in the borrower's RAM; SQ in local RAM, lender RAM or the
 * lender's GPU memory next to the NVMe. Borrower IOMMU on, lender's off.
 */
enum sq_where { SQ_LOCAL, SQ_LENDER_RAM, SQ_GPU };

static void p4800_to_borrower(struct pathb *b)
{
	chassis_dev(b, "P4800X", 3, 4, 1);
	ntb_via_mxs(b, 3, 16, 1, 0);
	tb_rootport(b, 0);
	tb_root(b, 0);
	tb_iommu(b, 0);
}

static void cpu_to_chassis(struct pathb *b)
{
	tb_dev(b, 0, "CPU");
	tb_root(b, 0);
	tb_rootport(b, 0);
	ntb_via_mxs(b, 3, 16, 0, 1);
	tb_chip(b, TIMING_HOP_SWITCH, "PEX8796", 1);
}

static int sq_placement(const struct timing_params *p, enum sq_where w, double *ns)
{
	struct nvme_read x;

	nvme_init(&x, p);
	cpu_to_chassis(&x.db);
	tb_link(&x.db, 3, 4, 1);
	tb_dev(&x.db, 1, "P4800X");
	if (w == SQ_LOCAL) {
		p4800_to_borrower(&x.fetch);
		tb_dram(&x.fetch, 0);
	} else if (w == SQ_LENDER_RAM) {
		chassis_dev(&x.fetch, "P4800X", 3, 4, 1);
		hib68_up(&x.fetch, 1);
		tb_root(&x.fetch, 1);
		tb_dram(&x.fetch, 1);
		/* the CPU writes the command over the NTB, down into the lender's RAM */
		cpu_to_chassis(&x.sqe);
		hib68_up(&x.sqe, 1);
		tb_root(&x.sqe, 1);
		tb_dram(&x.sqe, 1);
	} else {
		chassis_dev(&x.fetch, "P4800X", 3, 4, 1);
		tb_link(&x.fetch, 3, 16, 1);
		tb_dev(&x.fetch, 1, "P4000");
		cpu_to_chassis(&x.sqe);
		tb_link(&x.sqe, 3, 16, 1);
		tb_dev(&x.sqe, 1, "P4000");
	}
	p4800_to_borrower(&x.data);
	tb_rootport(&x.data, 0);
	tb_link(&x.data, 3, 16, 0);
	tb_dev(&x.data, 0, "P620");
	p4800_to_borrower(&x.cqe);
	tb_dram(&x.cqe, 0);
	return nvme_qd1(p, &x, ns);
}

static int fig34(const struct timing_params *p, struct timing_figure *f)
{
	static const char *const label[] = { "SQ in local RAM", "SQ in remote RAM",
					     "SQ in remote GPU" };
	static const char *const path[] = {
		"command fetch: NVMe -> PEX8796 -> PXH830 -> MXS824 -> PXH830 -> borrower RAM",
		"command fetch: NVMe -> PEX8796 -> HIB68 pair -> lender RAM",
		"command fetch: NVMe -> PEX8796 -> P4000 memory" };
	double ns;
	int rc;

	for (int w = SQ_LOCAL; w <= SQ_GPU; w++) {
		rc = sq_placement(p, (enum sq_where)w, &ns);
		if (!rc)
			rc = bar(f, label[w], path[w], ns);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---------- Device Lending (Cluster Computing 2020) ---------- */

/* Fig. 10: K420 bandwidthTest to/from the borrower's RAM: local, Rem-SW, Rem-IOMMU. */
static int dl10(const struct timing_params *p, struct timing_figure *f)
{
	struct pathb loc = { .p = p }, sw = { .p = p }, io = { .p = p };
	int rc;

	k420_up(&loc, "K420", 1);
	tb_link(&loc, 3, 16, 1);
	to_dram(&loc, 1, false);
	k420_up(&sw, "K420", 1);
	tb_ntb_crossing(&sw, 3, 8, 1, 0);
	to_dram(&sw, 0, false);
	k420_up(&io, "K420", 1);
	via_root(&io, 1, true);
	tb_ntb_crossing(&io, 3, 8, 1, 0);
	to_dram(&io, 0, false);
	rc = curve(f, "Loc write", "K420 -> PEX8733 -> lender root -> RAM", &loc, true, 0);
	if (!rc)
		rc = curve(f, "Rem-SW write", "K420 -> PEX8733 -> PXH830 -> cable -> PXH830 -> "
			   "borrower RAM", &sw, true, 0);
	if (!rc)
		rc = curve(f, "Rem-IOMMU write", "K420 -> PEX8733 -> lender root + IOMMU -> "
			   "PEX8733 -> NTB -> borrower RAM", &io, true, 0);
	if (!rc)
		rc = curve(f, "Loc read", "DMA read", &loc, false, 0);
	if (!rc)
		rc = curve(f, "Rem-SW read", "DMA read", &sw, false, 0);
	if (!rc)
		rc = curve(f, "Rem-IOMMU read", "DMA read (the lender root splits into 64 B)",
			   &io, false, 0);
	return rc;
}

/* Figs. 12 and 14: K420 to K420 peer-to-peer writes, the six scenarios of Table 1. */
enum dl_p2p { LOC_SW, L1_SW, L2_SW, LOC_ROOT, L1_IOMMU, L2_IOMMU, DL_P2P_N };

static void dl_p2p_path(struct pathb *b, enum dl_p2p s)
{
	switch (s) {
	case LOC_SW:
	case L1_SW:
		timing_setup_k420_p2p(b, false);
		return;
	case L2_SW:
		timing_setup_k420_p2p(b, true);
		return;
	case LOC_ROOT:
	case L1_IOMMU:
		k420_up(b, "gpu0", 1);
		via_root(b, 1, s == L1_IOMMU);
		break;
	case L2_IOMMU:
		k420_up(b, "gpu0", 1);
		via_root(b, 1, true);
		tb_ntb_crossing(b, 3, 8, 1, 2);
		tb_chip(b, TIMING_HOP_SWITCH, "PEX8733", 2);
		via_root(b, 2, true);
		tb_link(b, 2, 16, 2);
		tb_dev(b, 2, "gpu1");
		return;
	default:
		return;
	}
	tb_link(b, 2, 16, 1);
	tb_dev(b, 1, "gpu1");
}

static const char *const dl_p2p_label[DL_P2P_N] = {
	"Loc-P2P-SW", "1L-P2P-SW", "2L-P2P-SW", "Loc-P2P-Root", "1L-P2P-IOMMU", "2L-P2P-IOMMU" };
static const char *const dl_p2p_desc[DL_P2P_N] = {
	"gpu0 -> PEX8733 -> gpu1 (local)", "gpu0 -> PEX8733 -> gpu1 (one lender)",
	"gpu0 -> PEX8733 -> PXH830 -> cable -> PXH830 -> PEX8733 -> gpu1",
	"gpu0 -> switch -> root -> switch -> gpu1 (local)",
	"gpu0 -> PEX8733 -> root + IOMMU -> PEX8733 -> gpu1",
	"through lender B's root + IOMMU, the NTB, lender C's root + IOMMU" };

static int dl12(const struct timing_params *p, struct timing_figure *f)
{
	for (int s = 0; s < DL_P2P_N; s++) {
		struct pathb b = { .p = p };
		int rc;

		dl_p2p_path(&b, (enum dl_p2p)s);
		rc = curve(f, dl_p2p_label[s], dl_p2p_desc[s], &b, true, 0);
		if (rc)
			return rc;
	}
	return 0;
}

static int dl14(const struct timing_params *p, struct timing_figure *f)
{
	for (int s = 0; s < DL_P2P_N; s++) {
		struct pathb b = { .p = p };
		int rc;

		dl_p2p_path(&b, (enum dl_p2p)s);
		rc = pingpong(f, dl_p2p_label[s], dl_p2p_desc[s], &b);
		if (rc)
			return rc;
	}
	return 0;
}

/* Fig. 19: QD1 reads of 8 x 512 B from an Optane 900P (Gen3 x4), local vs borrowed. */
static int dl19_read(const struct timing_params *p, bool remote, double *ns)
{
	struct nvme_read x;
	struct pathb *dma[3] = { &x.fetch, &x.data, &x.cqe };
	uint16_t c = remote ? 0 : 1;

	nvme_init(&x, p);
	tb_dev(&x.db, c, "CPU");
	tb_root(&x.db, c);
	if (remote) {
		tb_rootport(&x.db, 0);
		tb_ntb_crossing(&x.db, 3, 8, 0, 1);
		tb_rootport(&x.db, 1);
		tb_root(&x.db, 1);
	}
	tb_rootport(&x.db, 1);
	tb_link(&x.db, 3, 4, 1);
	tb_dev(&x.db, 1, "nvme0");
	for (unsigned i = 0; i < 3; i++) {
		tb_dev(dma[i], 1, "nvme0");
		tb_link(dma[i], 3, 4, 1);
		tb_rootport(dma[i], 1);
		tb_root(dma[i], 1);
		if (remote) {
			tb_rootport(dma[i], 1);
			tb_ntb_crossing(dma[i], 3, 8, 1, 0);
			to_dram(dma[i], 0, false);
		} else {
			tb_dram(dma[i], 1);
		}
	}
	return nvme_qd1(p, &x, ns);
}

static int dl19(const struct timing_params *p, struct timing_figure *f)
{
	double l, r;
	int rc = dl19_read(p, false, &l);

	if (!rc)
		rc = dl19_read(p, true, &r);
	if (!rc)
		rc = bar(f, "local", "NVMe on the lender's root port, used by the lender", l);
	if (!rc)
		rc = bar(f, "borrowed (NatRem)", "the same NVMe over back-to-back PXH830s (Gen3 x8)",
			 r);
	if (!rc)
		rc = bar(f, "added by borrowing", "borrowed - local", r - l);
	return rc;
}

/* ---------- cZodiac (JCST 2014): timing_czodiac.c ---------- */

/* ---------- the table ---------- */

static const struct {
	const char *id, *source, *title, *unit, *topology, *checks, *note;
	bool bars;
	int (*fn)(const struct timing_params *, struct timing_figure *);
} figs[] = {
	{ "smartio-fig22", "SmartIO TOCS 2021, sec. 7.1.2, fig. 22",
	  "DMA throughput vs size, local vs borrowed (Quadro P4000)", "GB/s",
	  "expansion-chassis.yaml", "",
	  "Same number of chips local and borrowed: the curves coincide, as in the paper.",
	  false, fig22 },
	{ "smartio-fig23", "SmartIO TOCS 2021, sec. 7.1.3, fig. 23",
	  "DMA throughput vs size, back-to-back vs one more switch hop (MXS824)", "GB/s",
	  "mxs824-cluster.yaml", "",
	  "Small sizes pay the PM8536; writes converge, reads stay lower (tag-bound).", false, fig23 },
	{ "smartio-fig24", "SmartIO TOCS 2021, sec. 7.1.4, fig. 24",
	  "peer-to-peer throughput vs size, local vs borrowed GPUs", "GB/s",
	  "mxs824-cluster.yaml", "", "The peer-to-peer path is the same chassis switch.", false,
	  fig24 },
	{ "smartio-fig25", "SmartIO TOCS 2021, sec. 7.1.4, fig. 25",
	  "peer-to-peer ping-pong latency, local vs borrowed GPUs", "ns", "mxs824-cluster.yaml",
	  "", "Two 4-byte posted writes; identical paths.", true, fig25 },
	{ "smartio-fig26", "SmartIO TOCS 2021, sec. 7.1.5, fig. 26",
	  "peer-to-peer throughput vs size, same vs different lenders", "GB/s",
	  "mxs824-cluster.yaml", "", "Posted writes: the longer path costs latency, not "
	  "bandwidth.", false, fig26 },
	{ "smartio-fig27", "SmartIO TOCS 2021, sec. 7.1.5, fig. 27",
	  "peer-to-peer ping-pong latency, same vs different lenders", "ns",
	  "mxs824-cluster.yaml", "", "Four more chips (NTB, PM8536, NTB, PEX8796) and two "
	  "cables each way.", true, fig27 },
	{ "smartio-fig31", "SmartIO TOCS 2021, sec. 7.3.1, fig. 31",
	  "IOMMU penalty: K40c DMA throughput vs size, lender IOMMU off vs on vs MDEV", "GB/s",
	  "lender-iommu-on.yaml", "iommu-off-read,iommu-on-read",
	  "Reads through the lender's IOMMU leave its root as 64 B pieces, 40 outstanding. "
	  "MDEV takes the IOMMU path (its parent is on the control path only).",
	  false, fig31 },
	{ "smartio-fig34", "SmartIO TOCS 2021, sec. 7.4.1, fig. 34",
	  "NVMe QD1 4 KiB read latency by SQ placement", "ns", "mxs824-cluster.yaml", "",
	  "Moving the SQ next to the NVMe shortens the command fetch round trip.", true, fig34 },
	{ "dl-fig10", "Device Lending 2020, sec. 7.1, fig. 10",
	  "lender IOMMU penalty: K420 bandwidthTest vs size", "GB/s", "lender-iommu-on.yaml", "",
	  "Rem-IOMMU reads are bound by the lender root's outstanding 64 B requests.", false,
	  dl10 },
	{ "dl-fig12", "Device Lending 2020, sec. 7.2, fig. 12",
	  "peer-to-peer write bandwidth vs size, local / one lender / two lenders", "GB/s",
	  "three-node.yaml", "", "Writes are posted: every scenario reaches the Gen2 x16 link "
	  "limit; only small sizes differ.", false, dl12 },
	{ "dl-fig14", "Device Lending 2020, sec. 7.2, fig. 14",
	  "peer-to-peer ping-pong latency", "ns", "three-node.yaml",
	  "ram-to-ram-3node,pingpong-two-lenders",
	  "2L-P2P-SW - 1L-P2P-SW is the stated 'a little more than 700 ns'.", true, dl14 },
	{ "dl-fig19", "Device Lending 2020, sec. 7.4, fig. 19",
	  "remote NVMe QD1 read latency (8 x 512 B)", "ns", "back-to-back-pxh830.yaml",
	  "ntb-ram-to-ram,ntb-adds,nvme-remote-adds",
	  "The stated 700-730 ns is the command fetch crossing; the whole read adds more "
	  "(doorbell and completion cross too).", true, dl19 },
	{ "czodiac-fig12", "cZodiac JCST 2014, sec. 6.2, fig. 12",
	  "point-to-point minimum latency of the four primitives (8 B), Gen2 x8", "ns",
	  "czodiac-gen2x8.yaml", "czodiac-dap,czodiac-nap,czodiac-rdma",
	  "One CPUPort pass per chip crossing; the engine's doorbell, descriptor and payload "
	  "stages add theirs.", true, timing_fig_cz12 },
	{ "czodiac-fig13", "cZodiac JCST 2014, sec. 6.2, fig. 13",
	  "RDMA PUT/GET point-to-point bandwidth vs size, Gen2 x8", "GB/s", "czodiac-gen2x8.yaml",
	  "czodiac-put", "One message at a time; posted writes of 128 B TLPs, the stated "
	  "3.19 GB/s is the plateau.", false, timing_fig_cz13 },
};

unsigned timing_figure_count(void)
{
	return sizeof(figs) / sizeof(figs[0]);
}

int timing_figure_find(const char *id)
{
	for (unsigned i = 0; id && i < timing_figure_count(); i++)
		if (!strcmp(figs[i].id, id))
			return (int)i;
	return -ENOENT;
}

int timing_figure(const struct timing_params *p, unsigned idx, struct timing_figure *f)
{
	if (!p || !f || idx >= timing_figure_count())
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->id = figs[idx].id;
	f->source = figs[idx].source;
	f->title = figs[idx].title;
	f->unit = figs[idx].unit;
	f->topology = figs[idx].topology;
	f->checks = figs[idx].checks;
	f->note = figs[idx].note;
	f->bars = figs[idx].bars;
	return figs[idx].fn(p, f);
}
