// SPDX-License-Identifier: MIT
/*
 * Analytical PCIe timing model (docs/timing-model.md).
 *
 * Links: raw rate after line encoding, less the data-link overhead of ACK and
 * flow-control DLLPs at the spec's recommended intervals and of SKIP ordered
 * sets (the pcie-model of Neugebauer et al., SIGCOMM 2018). Every TLP costs
 * its header plus 8 bytes of framing, sequence number and LCRC.
 *
 * Paths: switches are cut-through, so a TLP pays every chip's latency but is
 * serialised only once, at the slowest link. Posted writes are limited by
 * link bytes alone; reads also by Little's law: outstanding requests x
 * payload / round trip, for the requester's tags and for every root complex
 * that forwards the request (with its IOMMU read split).
 *
 * Units: latencies in ns, bandwidths in GB/s, which is bytes per ns.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "smartio/proto.h"
#include "smartio/timing.h"
#include "fabric/route.h"

#define TLP_FRAMING    8     /* STP/END (Gen1-2) or STP token (Gen3+), sequence, LCRC */
#define HDR_3DW        12
#define HDR_4DW        16
#define ECRC_BYTES     4
#define DLLP_BYTES     8     /* ACK or UpdateFC DLLP with framing */
#define SKIP_BYTES     4
#define SKIP_INTERVAL  1538

/* Spec tables index: generation class (Gen1, Gen2, Gen3+), width, MPS. */
enum { GC_1, GC_2, GC_3, GC_N };
static const unsigned widths[] = { 1, 2, 4, 8, 16, 32 };
#define NWIDTH 6
#define NMPS   6             /* 128 .. 4096 */

/*
 * ACK limits (PCIe Base Spec rev 5.0 tables 3-7..3-9) and UpdateFC intervals
 * (tables 2-46..2-48), as tabulated by pcie-model; they differ in two cells.
 */
static const uint16_t ack_limit[GC_N][NWIDTH][NMPS] = {
	[GC_1] = {
		{ 237, 416, 559, 1071, 2095, 4143 }, { 128, 217, 289, 545, 1057, 2081 },
		{ 73, 118, 154, 282, 538, 1050 },    { 67, 107, 86, 150, 278, 534 },
		{ 48, 72, 86, 150, 278, 534 },       { 33, 45, 52, 84, 148, 276 } },
	[GC_2] = {
		{ 288, 467, 610, 1122, 2146, 4194 }, { 179, 268, 340, 596, 1108, 2132 },
		{ 124, 169, 205, 333, 589, 1101 },   { 118, 158, 137, 201, 329, 585 },
		{ 99, 123, 137, 201, 329, 585 },     { 84, 96, 103, 135, 199, 237 } },
	[GC_3] = {
		{ 333, 512, 655, 1167, 2191, 4239 }, { 224, 313, 385, 641, 1153, 2177 },
		{ 169, 214, 250, 378, 634, 1146 },   { 163, 203, 182, 246, 374, 630 },
		{ 144, 168, 182, 246, 374, 630 },    { 129, 141, 148, 180, 244, 372 } },
};

static unsigned fc_interval(unsigned gc, unsigned wi, unsigned mi)
{
	if (gc == GC_1 && wi == 5 && mi == 4)
		return 248;
	if (gc == GC_2 && wi == 5 && mi == 5)
		return 327;
	return ack_limit[gc][wi][mi];
}

static const double gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0 };

static int width_index(unsigned w)
{
	/* x12 has its own rows in the spec; the x8 row is the conservative stand-in. */
	if (w == 12)
		w = 8;
	for (int i = 0; i < NWIDTH; i++)
		if (widths[i] == w)
			return i;
	return -1;
}

static int mps_index(unsigned mps)
{
	for (int i = 0; i < NMPS; i++)
		if (mps == 128u << i)
			return i;
	return -1;
}

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

int timing_link_info(const struct timing_params *p, unsigned gen, unsigned width,
		     unsigned mps, struct timing_link_info *li)
{
	int wi = width_index(width), mi = mps_index(mps);
	unsigned gc, hdr;
	double enc, ovh;

	if (gen < 1 || gen > 5 || wi < 0 || mi < 0)
		return -EINVAL;
	gc = gen == 1 ? GC_1 : gen == 2 ? GC_2 : GC_3;
	enc = gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
	li->raw_gbs = gts[gen] * enc * width / 8.0;
	li->ack_limit = ack_limit[gc][wi][mi];
	li->fc_interval = fc_interval(gc, (unsigned)wi, (unsigned)mi);
	ovh = (double)DLLP_BYTES / li->ack_limit + (double)DLLP_BYTES / li->fc_interval +
	      (double)SKIP_BYTES / SKIP_INTERVAL;
	li->tlp_gbs = li->raw_gbs * (1.0 - ovh);
	hdr = p->address_bits == 32 ? HDR_3DW : HDR_4DW;
	li->mwr_hdr = TLP_FRAMING + hdr + (p->ecrc ? ECRC_BYTES : 0);
	li->mrd_hdr = li->mwr_hdr;
	li->cpld_hdr = TLP_FRAMING + HDR_3DW + (p->ecrc ? ECRC_BYTES : 0);
	return 0;
}

/* ---------- parameters ---------- */

int timing_chip_ns(const struct timing_params *p, const char *chip, uint32_t *ns)
{
	for (uint32_t i = 0; i < p->nchips && i < TIMING_MAX_CHIPS; i++)
		if (!strcmp(p->chips[i].name, chip)) {
			*ns = p->chips[i].latency_ns;
			return 0;
		}
	return -ENOENT;
}

const struct timing_rc *timing_host_rc(const struct timing_params *p, uint32_t host)
{
	for (uint32_t i = 0; i < p->nhostmap && i < TIMING_MAX_HOSTMAP; i++)
		if (p->hostmap[i].host == host && p->hostmap[i].rc < p->nrcs)
			return &p->rcs[p->hostmap[i].rc];
	return &p->rcs[p->default_rc < p->nrcs ? p->default_rc : 0];
}

static bool params_sane(const struct timing_params *p)
{
	return mps_index(p->mps) >= 0 && pow2_in(p->mrrs, 128, 4096) &&
	       pow2_in(p->rcb, 64, 128) && (p->address_bits == 32 || p->address_bits == 64) &&
	       p->nrcs >= 1 && p->nrcs <= TIMING_MAX_RCS && p->tags >= 1 &&
	       p->cpu_outstanding >= 1 && p->cpu_tlp_bytes >= 4 && p->iommu_page >= 4096;
}

/* ---------- hops ---------- */

struct timing_hop timing_hop_make(uint8_t kind, uint16_t host, const char *name)
{
	struct timing_hop h = { .kind = kind, .host = host };

	snprintf(h.name, sizeof(h.name), "%s", name ? name : "");
	return h;
}

struct timing_hop timing_hop_link(uint8_t kind, unsigned gen, unsigned width, uint16_t host)
{
	struct timing_hop h = { .kind = kind, .gen = (uint8_t)gen, .width = (uint8_t)width,
				.host = host };

	snprintf(h.name, sizeof(h.name), "%s Gen%u x%u",
		 kind == TIMING_HOP_CABLE ? "cable" : "link", gen, width);
	return h;
}

int timing_hop_chip(const struct timing_params *p, uint8_t kind, const char *chip,
		    uint16_t host, struct timing_hop *out)
{
	uint32_t ns;

	if (kind == TIMING_HOP_ROOT) {
		const struct timing_rc *rc = timing_host_rc(p, host);

		*out = timing_hop_make(kind, host, "root complex");
		out->latency_ns = rc->latency_ns;
		return 0;
	}
	if (timing_chip_ns(p, chip, &ns))
		return -ENOENT;
	*out = timing_hop_make(kind, host, chip);
	out->latency_ns = ns;
	return 0;
}

int timing_hops_from_smio(const struct smio_hop *in, unsigned n, struct timing_hop *out,
			  unsigned cap)
{
	if (n > cap)
		return -ENOSPC;
	for (unsigned i = 0; i < n; i++) {
		if (in[i].kind < TIMING_HOP_DEVICE || in[i].kind > TIMING_HOP_MEMORY)
			return -EINVAL;
		out[i] = (struct timing_hop){ .kind = in[i].kind, .gen = in[i].gen,
			.width = in[i].width, .host = in[i].host, .bdf = in[i].bdf,
			.latency_ns = in[i].latency_ns };
		memcpy(out[i].name, in[i].name, sizeof(out[i].name));
		out[i].name[sizeof(out[i].name) - 1] = '\0';
	}
	return (int)n;
}

int timing_hops_from_fab(const struct fab_hop *in, unsigned n, struct timing_hop *out,
			 unsigned cap)
{
	if (n > cap)
		return -ENOSPC;
	for (unsigned i = 0; i < n; i++) {
		if (in[i].kind < FAB_HOP_DEVICE || in[i].kind > FAB_HOP_MEMORY)
			return -EINVAL;
		out[i] = (struct timing_hop){ .kind = in[i].kind, .gen = in[i].gen,
			.width = in[i].width, .host = in[i].host, .bdf = in[i].bdf,
			.latency_ns = in[i].latency_ns };
		memcpy(out[i].name, in[i].name, sizeof(out[i].name));
		out[i].name[sizeof(out[i].name) - 1] = '\0';
	}
	return (int)n;
}

const char *timing_limit_str(int limit)
{
	static const char *const s[] = { "none", "link bytes", "requester tags",
					 "root-complex outstanding requests" };

	return limit >= 0 && limit <= TIMING_LIMIT_RC ? s[limit] : "?";
}

const char *timing_hop_kind_str(int kind)
{
	static const char *const s[] = { "?", "device", "link", "switch", "root", "iommu",
					 "ntb", "cable", "cluster-switch", "memory" };

	return kind >= 0 && kind <= TIMING_HOP_MEMORY ? s[kind] : "?";
}

/* ---------- path analysis ---------- */

struct seg {                 /* what a stretch of the path costs one way */
	double req_ns;       /* request direction: chips, cables, IOMMU */
	double cpl_ns;       /* completion direction: no IOMMU translation */
	double min_gbs;      /* slowest link's TLP bandwidth */
	int min_hop;         /* its index */
};

struct path {
	const struct timing_params *p;
	const struct timing_hop *h;
	unsigned n;
	uint32_t mps, mrrs;
	double iommu_ns;
	bool cpu;            /* the requester is a CPU (hop 0 device, hop 1 root) */
	int completer;       /* enum timing_completer, resolved */
	int cpl_root;        /* root complex completing from DRAM, or -1 */
	struct timing_link_info li[TIMING_MAX_HOPS];
};

static bool is_link(const struct timing_hop *h)
{
	return h->kind == TIMING_HOP_LINK || h->kind == TIMING_HOP_CABLE;
}

/* Costs of hops [from, to). */
static void seg_cost(const struct path *x, unsigned from, unsigned to, struct seg *s)
{
	s->req_ns = s->cpl_ns = 0;
	s->min_gbs = INFINITY;
	s->min_hop = -1;
	for (unsigned i = from; i < to && i < x->n; i++) {
		const struct timing_hop *h = &x->h[i];

		switch (h->kind) {
		case TIMING_HOP_LINK:
		case TIMING_HOP_CABLE:
			if (x->li[i].tlp_gbs < s->min_gbs) {
				s->min_gbs = x->li[i].tlp_gbs;
				s->min_hop = (int)i;
			}
			if (h->kind == TIMING_HOP_CABLE) {
				s->req_ns += x->p->cable_ns + h->latency_ns;
				s->cpl_ns += x->p->cable_ns + h->latency_ns;
			}
			break;
		case TIMING_HOP_IOMMU:
			/* Requests are translated; completions route by requester ID. */
			s->req_ns += x->iommu_ns;
			break;
		case TIMING_HOP_SWITCH:
		case TIMING_HOP_ROOT:
		case TIMING_HOP_NTB:
		case TIMING_HOP_CSWITCH:
			s->req_ns += h->latency_ns;
			s->cpl_ns += h->latency_ns;
			break;
		default:
			break;
		}
	}
}

static int path_init(struct path *x, const struct timing_params *p,
		     const struct timing_hop *hops, unsigned n, const struct timing_query *q)
{
	double miss = q->iotlb_miss_rate;
	const struct timing_hop *last;

	if (!p || !hops || !q || !n || n > TIMING_MAX_HOPS || !q->size || !params_sane(p) ||
	    !(miss >= 0.0 && miss <= 1.0))
		return -EINVAL;
	memset(x, 0, offsetof(struct path, li));
	x->p = p;
	x->h = hops;
	x->n = n;
	x->mps = q->mps ? q->mps : p->mps;
	x->mrrs = q->mrrs ? q->mrrs : p->mrrs;
	if (mps_index(x->mps) < 0 || !pow2_in(x->mrrs, 128, 4096) ||
	    (q->cpl_size && !pow2_in(q->cpl_size, 64, x->mps)))
		return -EINVAL;
	x->iommu_ns = p->iotlb_hit_ns + miss * ((double)p->iotlb_miss_ns - p->iotlb_hit_ns);
	x->cpu = n > 1 && hops[0].kind == TIMING_HOP_DEVICE && hops[1].kind == TIMING_HOP_ROOT;
	for (unsigned i = 0; i < n; i++) {
		if (hops[i].kind < TIMING_HOP_DEVICE || hops[i].kind > TIMING_HOP_MEMORY)
			return -EINVAL;
		if (is_link(&hops[i]) &&
		    timing_link_info(p, hops[i].gen, hops[i].width, x->mps, &x->li[i]))
			return -EINVAL;
	}
	last = &hops[n - 1];
	x->completer = q->completer;
	if (x->completer == TIMING_CPL_AUTO)
		x->completer = last->kind == TIMING_HOP_MEMORY ? TIMING_CPL_DRAM : TIMING_CPL_DEVMEM;
	x->cpl_root = -1;
	if (x->completer == TIMING_CPL_DRAM)
		for (int i = (int)n - 1; i >= 0; i--)
			if (hops[i].kind == TIMING_HOP_ROOT) {
				x->cpl_root = i;
				break;
			}
	return 0;
}

static double completer_ns(const struct path *x, bool write)
{
	const struct timing_params *p = x->p;

	switch (x->completer) {
	case TIMING_CPL_DRAM: return write ? p->dram_write_ns : p->dram_read_ns;
	case TIMING_CPL_REGS: return write ? p->reg_write_ns : p->reg_read_ns;
	default: return write ? p->devmem_write_ns : p->devmem_read_ns;
	}
}

static const char *hop_name(const struct path *x, int i)
{
	return i >= 0 && (unsigned)i < x->n ? x->h[i].name : "-";
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static void finish(struct timing_result *r, double bw, double link, int limit, int hop)
{
	r->bw_gbs = bw;
	r->link_bw_gbs = link;
	r->limit = limit;
	r->bottleneck = hop;
}

static int path_write(const struct path *x, const struct timing_query *q,
		      struct timing_result *r)
{
	uint64_t chunk = x->cpu ? (x->p->cpu_tlp_bytes < x->mps ? x->p->cpu_tlp_bytes : x->mps)
				: x->mps;
	uint64_t ntlp = div_up(q->size, chunk), wire;
	struct seg s;
	double hdr, eff, lat0;

	seg_cost(x, 0, x->n, &s);
	if (s.min_hop < 0)
		return -EINVAL;     /* a path without a link has no byte limit */
	hdr = x->li[s.min_hop].mwr_hdr;
	wire = ntlp * (uint64_t)hdr + q->size;
	eff = s.min_gbs * (double)q->size / (double)wire;
	lat0 = s.req_ns + completer_ns(x, true);
	r->tlps = (uint32_t)(ntlp > UINT32_MAX ? UINT32_MAX : ntlp);
	r->requests = 0;
	r->wire_bytes = wire;
	r->first_ns = lat0 + (hdr + (double)(q->size < chunk ? q->size : chunk)) / s.min_gbs;
	r->latency_ns = lat0 + (double)wire / s.min_gbs;
	r->xfer_ns = r->latency_ns;
	r->outstanding_bw_gbs = 0;
	finish(r, eff, eff, TIMING_LIMIT_LINK, s.min_hop);
	snprintf(r->explain, sizeof(r->explain),
		 "posted write of %llu B in %llu MWr TLP%s of <= %llu B (%u B header+framing each): "
		 "%llu B on the wire, %.1f%% payload. One way: %.0f ns of chips/cables/IOMMU + "
		 "%.0f ns completer + %.1f ns serialised once at the slowest link (cut-through). "
		 "Sustained %.3f GB/s, limited by link bytes on hop %d '%s' (TLP-level %.3f GB/s); "
		 "posted writes have no outstanding-request limit.",
		 (unsigned long long)q->size, (unsigned long long)ntlp, ntlp == 1 ? "" : "s",
		 (unsigned long long)chunk, (unsigned)hdr, (unsigned long long)wire,
		 100.0 * (double)q->size / (double)wire, s.req_ns, completer_ns(x, true),
		 (double)wire / s.min_gbs, eff, s.min_hop, hop_name(x, s.min_hop), s.min_gbs);
	return 0;
}

/* A root hop that forwards a request (not the CPU's issue, not the completer). */
static bool forwards(const struct path *x, unsigned i)
{
	return x->h[i].kind == TIMING_HOP_ROOT && !(x->cpu && i == 1) &&
	       (int)i != x->cpl_root;
}

static int path_read(const struct path *x, const struct timing_query *q,
		     struct timing_result *r)
{
	const struct timing_params *p = x->p;
	uint64_t req = x->cpu ? p->cpu_tlp_bytes : x->mrrs, cpl = x->mps, nreq, ncpl, cwire;
	uint32_t tags = x->cpu ? p->cpu_outstanding : (q->tags ? q->tags : p->tags);
	double link_bw, tag_bw, bw, rtt1, hdr_c, hdr_r;
	int limit = TIMING_LIMIT_LINK, hop, n;
	const char *cpl_src = "device, MPS";
	char rcbuf[256] = "";
	struct seg s;

	if (req > q->size)
		req = q->size;
	/* Completions by completer: a root from DRAM in its RCB-sized pieces, a
	 * device in MPS-sized TLPs; --cpl-size (q->cpl_size) overrides both. */
	if (q->cpl_size) {
		cpl = q->cpl_size;
		cpl_src = "as given";
	} else if (x->cpl_root >= 0) {
		const struct timing_rc *rc = timing_host_rc(p, x->h[x->cpl_root].host);
		uint32_t b = rc->completion_bytes ? rc->completion_bytes : p->rcb;

		cpl_src = "root complex";
		if (b < cpl)
			cpl = b;
	}
	r->cpl_bytes = (uint32_t)cpl;
	for (unsigned i = 0; i < x->n; i++) {
		const struct timing_rc *rc = timing_host_rc(p, x->h[i].host);

		if (forwards(x, i) && i + 1 < x->n && x->h[i + 1].kind == TIMING_HOP_IOMMU &&
		    rc->iommu_read_split && rc->iommu_read_split < cpl)
			cpl = rc->iommu_read_split;
	}
	seg_cost(x, 0, x->n, &s);
	if (s.min_hop < 0)
		return -EINVAL;
	hdr_c = x->li[s.min_hop].cpld_hdr;
	hdr_r = x->li[s.min_hop].mrd_hdr;
	nreq = div_up(q->size, req);
	/* Completions per request at the completion size, the last request maybe short. */
	ncpl = (q->size / req) * div_up(req, cpl) + div_up(q->size % req, cpl);
	cwire = ncpl * (uint64_t)hdr_c + q->size;
	link_bw = s.min_gbs * (double)q->size / (double)cwire;
	if (s.min_gbs * (double)q->size / ((double)nreq * hdr_r) < link_bw)
		link_bw = s.min_gbs * (double)q->size / ((double)nreq * hdr_r);
	rtt1 = s.req_ns + s.cpl_ns + completer_ns(x, false) +
	       (hdr_r + (double)div_up(req, cpl) * hdr_c + (double)req) / s.min_gbs;
	tag_bw = (double)tags * (double)req / rtt1;
	bw = link_bw;
	hop = s.min_hop;
	if (tag_bw < bw) {
		bw = tag_bw;
		limit = TIMING_LIMIT_TAGS;
		hop = 0;
	}
	n = 0;
	for (unsigned i = 0; i < x->n; i++) {
		const struct timing_rc *rc;
		uint64_t sub = req;
		double rtt, rc_bw;
		struct seg t;

		if (!forwards(x, i))
			continue;
		rc = timing_host_rc(p, x->h[i].host);
		if (i + 1 < x->n && x->h[i + 1].kind == TIMING_HOP_IOMMU && rc->iommu_read_split &&
		    rc->iommu_read_split < sub)
			sub = rc->iommu_read_split;
		/* The root holds each request from forwarding it until its completion returns. */
		seg_cost(x, i + 1, x->n, &t);
		rtt = t.req_ns + t.cpl_ns + completer_ns(x, false) +
		      (hdr_r + (double)div_up(sub, cpl) * hdr_c + (double)sub) /
		      (t.min_hop >= 0 ? t.min_gbs : s.min_gbs);
		rc_bw = (double)rc->outstanding * (double)sub / rtt;
		if (n >= 0 && (size_t)n < sizeof(rcbuf))
			n += snprintf(rcbuf + n, sizeof(rcbuf) - (size_t)n,
				      "; root '%s' (hop %u) %u x %llu B / %.0f ns = %.3f GB/s",
				      rc->name, i, rc->outstanding, (unsigned long long)sub, rtt, rc_bw);
		if (rc_bw < bw) {
			bw = rc_bw;
			limit = TIMING_LIMIT_RC;
			hop = (int)i;
		}
	}
	r->tlps = (uint32_t)(ncpl > UINT32_MAX ? UINT32_MAX : ncpl);
	r->requests = (uint32_t)(nreq > UINT32_MAX ? UINT32_MAX : nreq);
	r->wire_bytes = cwire;
	r->first_ns = rtt1;
	r->latency_ns = rtt1 + (double)(q->size - req) / bw;
	r->xfer_ns = r->latency_ns;
	r->outstanding_bw_gbs = limit == TIMING_LIMIT_LINK ? (tag_bw < INFINITY ? tag_bw : 0) : bw;
	finish(r, bw, link_bw, limit, hop);
	snprintf(r->explain, sizeof(r->explain),
		 "read of %llu B: %llu request%s of <= %llu B, %llu CplD of <= %llu B (%s; %u B "
		 "header+framing each). Round trip of one request %.0f ns (%.0f out + %.0f back "
		 "+ %.0f completer + wire). Limits: link bytes %.3f GB/s (hop %d '%s'); "
		 "requester %u outstanding x %llu B / %.0f ns = %.3f GB/s%s. Bottleneck: %s "
		 "at hop %d '%s': %.3f GB/s.",
		 (unsigned long long)q->size, (unsigned long long)nreq, nreq == 1 ? "" : "s",
		 (unsigned long long)req, (unsigned long long)ncpl, (unsigned long long)cpl,
		 cpl_src, (unsigned)hdr_c, rtt1, s.req_ns, s.cpl_ns, completer_ns(x, false), link_bw,
		 s.min_hop, hop_name(x, s.min_hop), tags, (unsigned long long)req, rtt1, tag_bw,
		 rcbuf, timing_limit_str(limit), hop, hop_name(x, hop), bw);
	return 0;
}

int timing_path(const struct timing_params *p, const struct timing_hop *hops, unsigned n,
		const struct timing_query *q, struct timing_result *r)
{
	struct path x;
	int rc;

	if (!r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->bottleneck = -1;
	rc = path_init(&x, p, hops, n, q);
	if (rc)
		return rc;
	rc = q->write ? path_write(&x, q, r) : path_read(&x, q, r);
	if (!rc)
		r->xfer_bw_gbs = (double)q->size / r->xfer_ns;
	return rc;
}

int timing_link(const struct timing_params *p, unsigned gen, unsigned width,
		const struct timing_query *q, struct timing_result *r)
{
	struct timing_hop h[4];

	if (!p || gen > UINT8_MAX || width > UINT8_MAX)
		return -EINVAL;
	h[0] = timing_hop_make(TIMING_HOP_DEVICE, 0, "requester");
	h[1] = timing_hop_link(TIMING_HOP_LINK, gen, width, 0);
	timing_hop_chip(p, TIMING_HOP_ROOT, NULL, 0, &h[2]);
	h[3] = timing_hop_make(TIMING_HOP_MEMORY, 0, "host DRAM");
	return timing_path(p, h, 4, q, r);
}
