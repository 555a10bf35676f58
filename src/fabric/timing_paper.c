// SPDX-License-Identifier: MIT
/*
 * The papers' stated numbers against the timing model (docs/timing-model.md).
 *
 * Each check builds the hop lists of the paper's setup, as a route through
 * the matching topologies/papers/ file would list them, with every chip
 * latency taken from the parameter set: the same parameters for every check.
 * What a setup states about itself (link generation and width, MPS) is part
 * of the setup, not a calibration constant.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "smartio/timing.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)

struct pathb {
	const struct timing_params *p;
	struct timing_hop h[TIMING_MAX_HOPS];
	unsigned n;
	int err;
};

static void add(struct pathb *b, struct timing_hop h)
{
	if (b->n < TIMING_MAX_HOPS)
		b->h[b->n++] = h;
	else
		b->err = -ENOSPC;
}

static void dev(struct pathb *b, uint16_t host, const char *name)
{
	add(b, timing_hop_make(TIMING_HOP_DEVICE, host, name));
}

static void link_(struct pathb *b, unsigned gen, unsigned width, uint16_t host)
{
	add(b, timing_hop_link(TIMING_HOP_LINK, gen, width, host));
}

static void cable(struct pathb *b, unsigned gen, unsigned width, uint16_t host)
{
	add(b, timing_hop_link(TIMING_HOP_CABLE, gen, width, host));
}

static void chip(struct pathb *b, uint8_t kind, const char *name, uint16_t host)
{
	struct timing_hop h;

	if (timing_hop_chip(b->p, kind, name, host, &h))
		b->err = -ENOENT;
	else
		add(b, h);
}

/* A root port: part of the root complex, no latency of its own. */
static void rootport(struct pathb *b, uint16_t host)
{
	add(b, timing_hop_make(TIMING_HOP_SWITCH, host, "root port"));
}

static void root(struct pathb *b, uint16_t host)
{
	chip(b, TIMING_HOP_ROOT, NULL, host);
}

static void iommu(struct pathb *b, uint16_t host)
{
	add(b, timing_hop_make(TIMING_HOP_IOMMU, host, "IOMMU"));
}

static void dram(struct pathb *b, uint16_t host)
{
	add(b, timing_hop_make(TIMING_HOP_MEMORY, host, "host RAM"));
}

/* Host A's root port .. host B's root port over back-to-back PXH830s. */
static void ntb_crossing(struct pathb *b, unsigned gen, unsigned width, uint16_t a, uint16_t bh)
{
	link_(b, gen, width, a);
	chip(b, TIMING_HOP_NTB, "PXH830", a);
	cable(b, gen, width, a);
	chip(b, TIMING_HOP_NTB, "PXH830", bh);
	link_(b, gen, width, bh);
}

static int run(struct pathb *b, bool write, uint64_t size, struct timing_result *r)
{
	struct timing_query q = { .size = size, .write = write };

	if (b->err)
		return b->err;
	return timing_path(b->p, b->h, b->n, &q, r);
}

/*
 * Device Lending (Cluster Computing 2020) sec. 7.4: hosts back-to-back with
 * PXH830 adapters (Gen3 x8 cable); a CPU store on host 0 lands in host 1's RAM.
 */
static int ram_to_ram(const struct timing_params *p, struct timing_result *r)
{
	struct pathb b = { .p = p };

	dev(&b, 0, "CPU");
	root(&b, 0);
	rootport(&b, 0);
	ntb_crossing(&b, 3, 8, 0, 1);
	rootport(&b, 1);
	root(&b, 1);
	dram(&b, 1);
	return run(&b, true, 64, r);
}

static int check_ram_to_ram(const struct timing_params *p, struct timing_check *c)
{
	struct timing_result r;
	int rc = ram_to_ram(p, &r);

	c->predicted = r.latency_ns;
	snprintf(c->detail, sizeof(c->detail), "CPU -> root -> PXH830 -> cable -> PXH830 -> "
		 "root -> DRAM, 64 B posted write: %.0f ns", r.latency_ns);
	return rc;
}

/* The same paper: "the NTB adds 350-370 ns": remote minus a local RAM write. */
static int check_ntb_adds(const struct timing_params *p, struct timing_check *c)
{
	struct timing_result rem, loc;
	struct pathb b = { .p = p };
	int rc = ram_to_ram(p, &rem);

	dev(&b, 0, "CPU");
	root(&b, 0);
	dram(&b, 0);
	if (!rc)
		rc = b.err ? b.err : 0;
	/* A CPU store to its own RAM never touches a link: root + DRAM only. */
	loc.latency_ns = b.h[1].latency_ns + p->dram_write_ns;
	c->predicted = rem.latency_ns - loc.latency_ns;
	snprintf(c->detail, sizeof(c->detail), "remote RAM write %.0f ns - local RAM write "
		 "%.0f ns (root + DRAM)", rem.latency_ns, loc.latency_ns);
	return rc;
}

/*
 * Device Lending sec. 7.4, fig. 19: an NVMe (Gen3 x4) on the lender's root
 * port, used locally or borrowed over back-to-back PXH830s; the lender's
 * IOMMU is off, so its root complex forwards peer-to-peer to the NTB. The
 * paper: reaching over the NTB for the command and again for the completion
 * "adds 700-730 ns". The model: the command fetch's round trip, remote - local.
 */
static int check_nvme_remote(const struct timing_params *p, struct timing_check *c)
{
	struct pathb loc = { .p = p }, rem = { .p = p };
	struct timing_result a, b;
	int rc;

	dev(&loc, 1, "nvme0");
	link_(&loc, 3, 4, 1);
	rootport(&loc, 1);
	root(&loc, 1);
	dram(&loc, 1);

	dev(&rem, 1, "nvme0");
	link_(&rem, 3, 4, 1);
	rootport(&rem, 1);
	root(&rem, 1);
	rootport(&rem, 1);
	ntb_crossing(&rem, 3, 8, 1, 0);
	rootport(&rem, 0);
	root(&rem, 0);
	dram(&rem, 0);
	rc = run(&loc, false, p->nvme_sqe_bytes, &a);
	if (!rc)
		rc = run(&rem, false, p->nvme_sqe_bytes, &b);
	c->predicted = b.latency_ns - a.latency_ns;
	snprintf(c->detail, sizeof(c->detail), "%u B command fetch round trip: borrowed %.0f ns "
		 "- local %.0f ns", p->nvme_sqe_bytes, b.latency_ns, a.latency_ns);
	return rc;
}

/*
 * Device Lending sec. 7.2, figs. 11 and 14: Quadro K420s (Gen2 x16) below a
 * motherboard PCIe switch with the PXH830; three hosts pairwise cabled with
 * Gen3 x8. Ping-pong = 4-byte GPU-to-GPU writes there and back.
 * 2L-P2P-SW - 1L-P2P-SW: "a little more than 700 ns".
 */
static int gpu_write(const struct timing_params *p, bool two_lenders, struct timing_result *r)
{
	struct pathb b = { .p = p };

	dev(&b, 1, "gpu0");
	link_(&b, 2, 16, 1);
	chip(&b, TIMING_HOP_SWITCH, "PEX8733", 1);
	if (two_lenders) {
		ntb_crossing(&b, 3, 8, 1, 2);
		chip(&b, TIMING_HOP_SWITCH, "PEX8733", 2);
	}
	link_(&b, 2, 16, two_lenders ? 2 : 1);
	dev(&b, two_lenders ? 2 : 1, "gpu1");
	return run(&b, true, 4, r);
}

static int check_pingpong(const struct timing_params *p, struct timing_check *c)
{
	struct timing_result one, two;
	int rc = gpu_write(p, false, &one);

	if (!rc)
		rc = gpu_write(p, true, &two);
	c->predicted = 2 * (two.latency_ns - one.latency_ns);
	snprintf(c->detail, sizeof(c->detail), "ping-pong same lender %.0f ns, different "
		 "lenders %.0f ns", 2 * one.latency_ns, 2 * two.latency_ns);
	return rc;
}

/*
 * SmartIO (TOCS 2021) sec. 7.3.1, fig. 31: a Tesla K40c (Gen3 x16) and the
 * lender's PXH830 in an expansion chassis (PEX8796) cabled to the lender
 * through transparent adapters (PEX8733-class); Gen3 x16 NTB cable; the
 * borrower's IOMMU is on. The GPU DMA-reads the borrower's RAM.
 */
static int k40_read(const struct timing_params *p, bool lender_iommu, struct timing_result *r)
{
	struct pathb b = { .p = p };

	dev(&b, 1, "K40c");
	link_(&b, 3, 16, 1);
	chip(&b, TIMING_HOP_SWITCH, "PEX8796", 1);
	if (lender_iommu) {
		/* ACS sends the request up to the lender's root for translation. */
		link_(&b, 3, 16, 1);
		chip(&b, TIMING_HOP_SWITCH, "PEX8733", 1);
		cable(&b, 3, 16, 1);
		chip(&b, TIMING_HOP_SWITCH, "PEX8733", 1);
		link_(&b, 3, 16, 1);
		rootport(&b, 1);
		root(&b, 1);
		iommu(&b, 1);
		rootport(&b, 1);
		link_(&b, 3, 16, 1);
		chip(&b, TIMING_HOP_SWITCH, "PEX8733", 1);
		cable(&b, 3, 16, 1);
		chip(&b, TIMING_HOP_SWITCH, "PEX8733", 1);
		link_(&b, 3, 16, 1);
		chip(&b, TIMING_HOP_SWITCH, "PEX8796", 1);
	}
	ntb_crossing(&b, 3, 16, 1, 0);
	rootport(&b, 0);
	root(&b, 0);
	iommu(&b, 0);
	dram(&b, 0);
	return run(&b, false, 128 * MIB, r);
}

static int check_iommu_off(const struct timing_params *p, struct timing_check *c)
{
	struct timing_result r;
	int rc = k40_read(p, false, &r);

	c->predicted = r.bw_gbs;
	snprintf(c->detail, sizeof(c->detail), "%s (Gen3 x16, 64 B completions from the "
		 "borrower's root), bottleneck hop %d", timing_limit_str(r.limit), r.bottleneck);
	return rc;
}

static int check_iommu_on(const struct timing_params *p, struct timing_check *c)
{
	struct timing_result r;
	int rc = k40_read(p, true, &r);

	c->predicted = r.bw_gbs;
	snprintf(c->detail, sizeof(c->detail), "%s: the lender's root (hop %d) forwards "
		 "64 B pieces", timing_limit_str(r.limit), r.bottleneck);
	return rc;
}

/*
 * cZodiac (JCST 2014) sec. 6, fig. 13: RDMA PUT between two hosts through the
 * 3-port FPGA prototype, every port Gen2 x8, MPS 128: posted writes from the
 * sender's CPUPort through the crossbar to the receiver's RAM.
 */
static int check_czodiac(const struct timing_params *p, struct timing_check *c)
{
	struct timing_query q = { .size = 2 * MIB, .write = true, .mps = 128 };
	struct pathb b = { .p = p };
	struct timing_result r;
	int rc;

	dev(&b, 0, "CPUPort0 engine");
	link_(&b, 2, 8, 0);
	add(&b, timing_hop_make(TIMING_HOP_SWITCH, 0, "cZodiac crossbar"));
	link_(&b, 2, 8, 1);
	rootport(&b, 1);
	root(&b, 1);
	dram(&b, 1);
	if (b.err)
		return b.err;
	rc = timing_path(p, b.h, b.n, &q, &r);
	c->predicted = r.bw_gbs;
	snprintf(c->detail, sizeof(c->detail), "Gen2 x8 MPS 128: TLP-level %.3f GB/s x "
		 "128/(128+24) payload", r.link_bw_gbs / (128.0 / 152.0));
	return rc;
}

static const struct {
	const char *id, *source, *what, *unit;
	double stated, lo, hi;
	int (*fn)(const struct timing_params *, struct timing_check *);
} checks[] = {
	{ "ntb-ram-to-ram", "Device Lending 2020, sec. 7.4",
	  "one-way RAM-to-RAM latency, back-to-back PXH830", "ns", 565, 550, 580,
	  check_ram_to_ram },
	{ "ntb-adds", "Device Lending 2020, sec. 7.4",
	  "latency the NTB crossing adds one way", "ns", 360, 350, 370, check_ntb_adds },
	{ "nvme-remote-adds", "Device Lending 2020, sec. 7.4, fig. 19",
	  "remote NVMe read: added latency (command fetch over the NTB)", "ns", 715, 700, 730,
	  check_nvme_remote },
	{ "pingpong-two-lenders", "Device Lending 2020, sec. 7.2, fig. 14",
	  "GPU ping-pong: two lenders minus one lender", "ns", 720, 700, 750, check_pingpong },
	{ "iommu-off-read", "SmartIO TOCS 2021, sec. 7.3.1, fig. 31",
	  "GPU DMA read of borrower RAM, lender IOMMU off", "GB/s", 10.2, 10.2, 10.2,
	  check_iommu_off },
	{ "iommu-on-read", "SmartIO TOCS 2021, sec. 7.3.1, fig. 31",
	  "GPU DMA read of borrower RAM, lender IOMMU on", "GB/s", 1.5, 1.5, 1.6,
	  check_iommu_on },
	{ "czodiac-put", "cZodiac JCST 2014, sec. 6, fig. 13",
	  "RDMA PUT point-to-point bandwidth, Gen2 x8", "GB/s", 3.19, 3.19, 3.19,
	  check_czodiac },
};

unsigned timing_paper_count(void)
{
	return sizeof(checks) / sizeof(checks[0]);
}

int timing_paper_check(const struct timing_params *p, unsigned idx, struct timing_check *c)
{
	if (!p || !c || idx >= timing_paper_count())
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->id = checks[idx].id;
	c->source = checks[idx].source;
	c->what = checks[idx].what;
	c->unit = checks[idx].unit;
	c->stated = checks[idx].stated;
	c->stated_lo = checks[idx].lo;
	c->stated_hi = checks[idx].hi;
	return checks[idx].fn(p, c);
}

bool timing_check_ok(const struct timing_check *c)
{
	double d = c->predicted - c->stated;

	return (d < 0 ? -d : d) <= TIMING_TOLERANCE * c->stated;
}
