/* SPDX-License-Identifier: MIT */
/*
 * Hop-list builders for the papers' setups (timing_paper.c, timing_figures.c).
 * Private to the timing model: every chip latency comes from the parameter
 * set, so the papers' checks and the figures' curves share one calibration.
 */
#ifndef SMARTIO_TIMING_BUILD_H
#define SMARTIO_TIMING_BUILD_H

#include <errno.h>
#include <stdbool.h>

#include "smartio/timing.h"

struct pathb {
	const struct timing_params *p;
	struct timing_hop h[TIMING_MAX_HOPS];
	unsigned n;
	int err;
};

static inline void tb_add(struct pathb *b, struct timing_hop h)
{
	if (b->n < TIMING_MAX_HOPS)
		b->h[b->n++] = h;
	else
		b->err = -ENOSPC;
}

static inline void tb_dev(struct pathb *b, uint16_t host, const char *name)
{
	tb_add(b, timing_hop_make(TIMING_HOP_DEVICE, host, name));
}

static inline void tb_link(struct pathb *b, unsigned gen, unsigned width, uint16_t host)
{
	tb_add(b, timing_hop_link(TIMING_HOP_LINK, gen, width, host));
}

static inline void tb_cable(struct pathb *b, unsigned gen, unsigned width, uint16_t host)
{
	tb_add(b, timing_hop_link(TIMING_HOP_CABLE, gen, width, host));
}

static inline void tb_chip(struct pathb *b, uint8_t kind, const char *name, uint16_t host)
{
	struct timing_hop h;

	if (timing_hop_chip(b->p, kind, name, host, &h))
		b->err = -ENOENT;
	else
		tb_add(b, h);
}

/* A root port: part of the root complex, no latency of its own. */
static inline void tb_rootport(struct pathb *b, uint16_t host)
{
	tb_add(b, timing_hop_make(TIMING_HOP_SWITCH, host, "root port"));
}

static inline void tb_root(struct pathb *b, uint16_t host)
{
	tb_chip(b, TIMING_HOP_ROOT, NULL, host);
}

static inline void tb_iommu(struct pathb *b, uint16_t host)
{
	tb_add(b, timing_hop_make(TIMING_HOP_IOMMU, host, "IOMMU"));
}

static inline void tb_dram(struct pathb *b, uint16_t host)
{
	tb_add(b, timing_hop_make(TIMING_HOP_MEMORY, host, "host RAM"));
}

/* Host A's root port .. host B's root port over back-to-back PXH830s. */
static inline void tb_ntb_crossing(struct pathb *b, unsigned gen, unsigned width, uint16_t a,
				   uint16_t bh)
{
	tb_link(b, gen, width, a);
	tb_chip(b, TIMING_HOP_NTB, "PXH830", a);
	tb_cable(b, gen, width, a);
	tb_chip(b, TIMING_HOP_NTB, "PXH830", bh);
	tb_link(b, gen, width, bh);
}

static inline int tb_run(const struct pathb *b, bool write, uint64_t size, uint32_t mps,
			 struct timing_result *r)
{
	struct timing_query q = { .size = size, .write = write, .mps = mps };

	if (b->err)
		return b->err;
	return timing_path(b->p, b->h, b->n, &q, r);
}

/* Setups shared by the checks and the figures (timing_paper.c). */
/* DL 2020 sec. 7.4: a CPU store on host 0 to host 1's RAM over back-to-back PXH830s. */
void timing_setup_ram_to_ram(struct pathb *b);
/* DL 2020 sec. 7.2: K420 GPU-to-GPU write on one lender or across two (three-node). */
void timing_setup_k420_p2p(struct pathb *b, bool two_lenders);
/* SmartIO sec. 7.3.1: K40c in the expansion chassis DMA-reads the borrower's RAM. */
void timing_setup_k40(struct pathb *b, bool lender_iommu);
/* cZodiac sec. 6: RDMA PUT from host 0's CPUPort engine into host 1's RAM (MPS 128). */
void timing_setup_czodiac(struct pathb *b);
#define TIMING_CZODIAC_MPS 128
/* cZodiac's primitives (timing_czodiac.c): a DAP store's path, the checks, figs. 12-13. */
void timing_setup_czodiac_dap(struct pathb *b);
int timing_check_cz_dap(const struct timing_params *p, struct timing_check *c);
int timing_check_cz_nap(const struct timing_params *p, struct timing_check *c);
int timing_check_cz_rdma(const struct timing_params *p, struct timing_check *c);
int timing_fig_cz12(const struct timing_params *p, struct timing_figure *f);
int timing_fig_cz13(const struct timing_params *p, struct timing_figure *f);

#endif
