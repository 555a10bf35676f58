// SPDX-License-Identifier: MIT
/*
 * cZodiac's communication primitives on its Gen2 x8 FPGA prototype (JCST
 * 2014, sec. 3.1, 5.1, 6.2; docs/timing-model.md, "cZodiac's primitives").
 *
 * Two hosts on CPUPorts 0 and 1 of the 3-port prototype, every link Gen2 x8,
 * MPS 128. One chip traversal (ingress port, crossbar, egress port) costs
 * the `cZodiac` chip latency of the parameter set; a doorbell lands in the
 * CPUPort's registers; the CPUPort's engine (UDMA, sec. 5.1) runs the three
 * stages "doorbell, descriptor, payload":
 *
 *   DAP store   CPU store -> root -> link -> chip -> link -> root -> DRAM
 *   NAP         doorbell + descriptor fetch (64 B, with the data if it is
 *               immediate) [+ payload fetch if indirect] + the packet into the
 *               receiver's ring + its completion entry + the receiver's copy
 *               from the ring into the application's buffer
 *   RDMA PUT    doorbell + descriptor + payload fetch + the packet into the
 *               receiver's buffer + its completion entry (after the NAP
 *               handshake, which the paper's minimum latency cannot contain:
 *               1.73 us is less than two NAPs)
 *   RDMA GET    doorbell + descriptor + the GET descriptor through the SMALL
 *               crossbar to the remote engine + that engine's PUT back
 *
 * Bandwidth is one message at a time (as a ping-pong style benchmark, and
 * bench_czodiac, measure it): size / latency; the plateau is the Gen2 x8
 * posted-write limit with 128 B TLPs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "smartio/timing.h"
#include "timing_build.h"

#define DOORBELL_BYTES 8
#define DESC_BYTES     64
#define CHIP           "cZodiac"

/* CPU of host h to its CPUPort's registers. */
static void cpu_to_port(struct pathb *b, uint16_t h)
{
	tb_dev(b, h, "CPU");
	tb_root(b, h);
	tb_rootport(b, h);
	tb_link(b, 2, 8, h);
	tb_chip(b, TIMING_HOP_SWITCH, CHIP, h);
	tb_dev(b, h, "CPUPort");
}

/* Host h's CPUPort engine reading (or writing) host h's RAM. */
static void engine_to_ram(struct pathb *b, uint16_t h)
{
	tb_dev(b, h, "CPUPort engine");
	tb_chip(b, TIMING_HOP_SWITCH, CHIP, h);
	tb_link(b, 2, 8, h);
	tb_rootport(b, h);
	tb_root(b, h);
	tb_dram(b, h);
}

/* Host a's CPUPort engine through the crossbar into host bh's RAM. */
static void engine_to_remote(struct pathb *b, uint16_t a, uint16_t bh)
{
	tb_dev(b, a, "CPUPort engine");
	tb_chip(b, TIMING_HOP_SWITCH, CHIP, bh);
	tb_link(b, 2, 8, bh);
	tb_rootport(b, bh);
	tb_root(b, bh);
	tb_dram(b, bh);
}

void timing_setup_czodiac_dap(struct pathb *b)
{
	tb_dev(b, 0, "CPU");
	tb_root(b, 0);
	tb_rootport(b, 0);
	tb_link(b, 2, 8, 0);
	tb_chip(b, TIMING_HOP_SWITCH, CHIP, 0);
	tb_chip(b, TIMING_HOP_SWITCH, CHIP, 1);
	tb_link(b, 2, 8, 1);
	tb_rootport(b, 1);
	tb_root(b, 1);
	tb_dram(b, 1);
}

static int run(const struct pathb *b, bool write, uint64_t size, uint8_t completer,
	       struct timing_result *r)
{
	struct timing_query q = { .size = size ? size : 1, .write = write,
				  .mps = TIMING_CZODIAC_MPS, .completer = completer };

	if (b->err)
		return b->err;
	return timing_path(b->p, b->h, b->n, &q, r);
}

static int doorbell_desc(const struct timing_params *p, uint64_t desc, struct timing_cz *o)
{
	struct pathb db = { .p = p }, rd = { .p = p };
	struct timing_result r;
	int rc;

	cpu_to_port(&db, 0);
	engine_to_ram(&rd, 0);
	rc = run(&db, true, DOORBELL_BYTES, TIMING_CPL_REGS, &r);
	if (rc)
		return rc;
	o->doorbell_ns = r.latency_ns;
	rc = run(&rd, false, desc, TIMING_CPL_DRAM, &r);
	o->descriptor_ns = r.latency_ns;
	return rc;
}

/*
 * The engine of host `from` fetches size bytes from its RAM and writes them
 * into host to's, forwarding data as it arrives (the pipeline's payload
 * stage): the first data's round trip, then the slower of the two streams.
 * The fetch completes in MPS-sized CplDs: the prototype's 3.19 GB/s is more
 * than 64 B completions can carry on Gen2 x8, so its hosts did not split.
 */
static int payload(const struct timing_params *p, uint16_t from, uint16_t to, uint64_t size,
		   bool fetch, struct timing_cz *o)
{
	struct pathb rd = { .p = p }, wr = { .p = p };
	struct timing_result r, w;
	int rc;

	engine_to_ram(&rd, from);
	engine_to_remote(&wr, from, to);
	rc = run(&wr, true, size, TIMING_CPL_DRAM, &w);
	if (rc)
		return rc;
	o->wire_ns = w.latency_ns;
	o->wire_bw_gbs = w.bw_gbs;
	if (fetch) {
		struct timing_query q = { .size = size, .mps = TIMING_CZODIAC_MPS,
					  .completer = TIMING_CPL_DRAM,
					  .cpl_size = TIMING_CZODIAC_MPS };

		if (rd.err)
			return rd.err;
		rc = timing_path(p, rd.h, rd.n, &q, &r);
		if (rc)
			return rc;
		o->payload_read_ns = r.first_ns;
		if (r.bw_gbs < w.bw_gbs)
			o->wire_ns += (double)size / r.bw_gbs - (double)size / w.bw_gbs;
	}
	/* The completion entry follows the data on the same path: its bytes only. */
	o->completion_ns = (double)p->nvme_cqe_bytes / w.link_bw_gbs;
	return 0;
}

int timing_czodiac(const struct timing_params *p, int prim, uint64_t size, struct timing_cz *o)
{
	struct pathb b = { .p = p };
	struct timing_result r;
	bool imm;

	/* (b and r: the DAP store's path) */
	int rc;

	if (!p || !o || prim < 0 || prim >= TIMING_CZ_N || !size)
		return -EINVAL;
	memset(o, 0, sizeof(*o));
	switch (prim) {
	case TIMING_CZ_DAP_STORE:
		timing_setup_czodiac_dap(&b);
		rc = run(&b, true, size, TIMING_CPL_DRAM, &r);
		o->wire_ns = r.latency_ns;
		o->wire_bw_gbs = r.bw_gbs;
		break;
	case TIMING_CZ_NAP:
		if (size > TIMING_CZ_NAP_MAX)
			return -EMSGSIZE;
		imm = size <= TIMING_CZ_NAP_IMM;
		rc = doorbell_desc(p, DESC_BYTES + (imm ? size : 0), o);
		if (!rc)
			rc = payload(p, 0, 1, size, !imm, o);
		/* The receiver copies the entry out of the ring. */
		o->copy_ns = (double)size * 1000.0 / p->cpu_copy_mbs;
		break;
	case TIMING_CZ_PUT:
		rc = doorbell_desc(p, DESC_BYTES, o);
		if (!rc)
			rc = payload(p, 0, 1, size, true, o);
		break;
	case TIMING_CZ_GET:
		rc = doorbell_desc(p, DESC_BYTES, o);
		if (!rc) {
			/* The GET descriptor: engine to engine through the SMALL crossbar. */
			uint32_t ns;

			rc = timing_chip_ns(p, CHIP, &ns);
			o->get_desc_ns = ns;
		}
		if (!rc)
			rc = payload(p, 1, 0, size, true, o);
		break;
	default:
		return -EINVAL;
	}
	if (rc)
		return rc;
	o->latency_ns = o->doorbell_ns + o->descriptor_ns + o->get_desc_ns + o->payload_read_ns +
			o->wire_ns + o->completion_ns + o->copy_ns;
	o->bw_gbs = (double)size / o->latency_ns;
	return 0;
}

const char *timing_cz_name(int prim)
{
	static const char *const names[TIMING_CZ_N] = { "DAP store", "NAP", "RDMA PUT",
							"RDMA GET" };

	return prim >= 0 && prim < TIMING_CZ_N ? names[prim] : "?";
}

/* ---------- the paper's stated numbers (timing_paper.c's table) ---------- */

static int check_min(const struct timing_params *p, int prim, struct timing_check *c)
{
	struct timing_cz o;
	int rc = timing_czodiac(p, prim, TIMING_CZ_MIN_BYTES, &o);

	c->predicted = o.latency_ns;
	if (prim == TIMING_CZ_DAP_STORE)
		snprintf(c->detail, sizeof(c->detail), "%u B store: CPU -> root -> Gen2 x8 -> "
			 "cZodiac -> Gen2 x8 -> root -> DRAM: %.0f ns", TIMING_CZ_MIN_BYTES,
			 o.latency_ns);
	else
		snprintf(c->detail, sizeof(c->detail), "%u B: doorbell %.0f + descriptor %.0f + "
			 "payload fetch %.0f + packet %.0f + completion %.0f + copy %.0f ns",
			 TIMING_CZ_MIN_BYTES, o.doorbell_ns, o.descriptor_ns, o.payload_read_ns,
			 o.wire_ns, o.completion_ns, o.copy_ns);
	return rc;
}

int timing_check_cz_dap(const struct timing_params *p, struct timing_check *c)
{
	return check_min(p, TIMING_CZ_DAP_STORE, c);
}

int timing_check_cz_nap(const struct timing_params *p, struct timing_check *c)
{
	return check_min(p, TIMING_CZ_NAP, c);
}

int timing_check_cz_rdma(const struct timing_params *p, struct timing_check *c)
{
	return check_min(p, TIMING_CZ_PUT, c);
}

/* ---------- figures 12 and 13 (timing_figures.c's table) ---------- */

int timing_fig_cz12(const struct timing_params *p, struct timing_figure *f)
{
	static const char *const path[TIMING_CZ_N] = {
		"CPU store -> Gen2 x8 -> crossbar -> Gen2 x8 -> receiver RAM",
		"doorbell, descriptor (data immediate), packet into the receiver's ring, copy out",
		"doorbell, descriptor, payload fetch, packet into the receiver's buffer",
		"as PUT plus the GET descriptor to the remote engine (SMALL crossbar)" };

	for (int i = 0; i < TIMING_CZ_N; i++) {
		struct timing_series *s = &f->s[f->nseries++];
		struct timing_cz o;
		int rc = timing_czodiac(p, i, TIMING_CZ_MIN_BYTES, &o);

		if (rc)
			return rc;
		s->label = timing_cz_name(i);
		s->path = path[i];
		s->n = 1;
		s->x[0] = 0;
		s->y[0] = o.latency_ns;
	}
	return 0;
}

int timing_fig_cz13(const struct timing_params *p, struct timing_figure *f)
{
	static const char *const path[2] = {
		"one PUT at a time: doorbell, descriptor, payload fetch, Gen2 x8 MPS 128 writes",
		"one GET at a time: as PUT, the remote engine writing back" };

	for (int k = 0; k < 2; k++) {
		struct timing_series *s = &f->s[f->nseries++];

		s->label = timing_cz_name(k ? TIMING_CZ_GET : TIMING_CZ_PUT);
		s->path = path[k];
		for (unsigned i = 0; i < TIMING_FIG_POINTS; i++) {
			struct timing_cz o;
			int rc = timing_czodiac(p, k ? TIMING_CZ_GET : TIMING_CZ_PUT, 4096ull << i,
						&o);

			if (rc)
				return rc;
			s->x[i] = (double)(4096ull << i);
			s->y[i] = o.bw_gbs;
			s->n = i + 1;
		}
	}
	return 0;
}
