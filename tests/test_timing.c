// SPDX-License-Identifier: MIT
/*
 * Timing model tests: byte accounting against hand-computed cases, read
 * round trips, Little's law, the IOMMU read split, bottleneck naming, the
 * calibration file (errors with line numbers, defaults identical to the
 * file), and every number the papers state, from hop lists that mirror the
 * papers' setups, within 10% with the single default parameter set.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "smartio/proto.h"
#include "smartio/timing.h"
#include "smartio/topology.h"
#include "fabric/route.h"

#define MIB (1024ull * 1024)
#define EPS 1e-3

static struct timing_params P;

static int setup(void **state)
{
	timing_params_default(&P);
	return 0;
}

static void near(double got, double want, double eps, const char *what)
{
	if (fabs(got - want) > eps)
		fail_msg("%s: got %.6f, want %.6f (+-%g)", what, got, want, eps);
}

/* Within the papers' tolerance of a stated figure. */
static void within10(double got, double stated, const char *what)
{
	if (fabs(got - stated) > 0.10 * stated)
		fail_msg("%s: model %.3f vs paper %.3f (%+.1f%%)", what, got, stated,
			 100 * (got - stated) / stated);
	printf("  %-40s model %9.3f  paper %9.3f  %+5.1f%%\n", what, got, stated,
	       100 * (got - stated) / stated);
}

/* ---------- hop-list helpers ---------- */

struct hl {
	struct timing_hop h[TIMING_MAX_HOPS];
	unsigned n;
};

static void dev(struct hl *l, uint16_t host, const char *name)
{
	l->h[l->n++] = timing_hop_make(TIMING_HOP_DEVICE, host, name);
}

static void lnk(struct hl *l, unsigned gen, unsigned width, uint16_t host)
{
	l->h[l->n++] = timing_hop_link(TIMING_HOP_LINK, gen, width, host);
}

static void cbl(struct hl *l, unsigned gen, unsigned width, uint16_t host)
{
	l->h[l->n++] = timing_hop_link(TIMING_HOP_CABLE, gen, width, host);
}

static void chp(struct hl *l, uint8_t kind, const char *chip, uint16_t host)
{
	assert_int_equal(timing_hop_chip(&P, kind, chip, host, &l->h[l->n]), 0);
	l->n++;
}

static void rp(struct hl *l, uint16_t host)
{
	l->h[l->n++] = timing_hop_make(TIMING_HOP_SWITCH, host, "root port");
}

static void rt(struct hl *l, uint16_t host)
{
	chp(l, TIMING_HOP_ROOT, NULL, host);
}

static void mmu(struct hl *l, uint16_t host)
{
	l->h[l->n++] = timing_hop_make(TIMING_HOP_IOMMU, host, "IOMMU");
}

static void ram(struct hl *l, uint16_t host)
{
	l->h[l->n++] = timing_hop_make(TIMING_HOP_MEMORY, host, "RAM");
}

static struct timing_result run(const struct hl *l, uint64_t size, bool write)
{
	struct timing_query q = { .size = size, .write = write };
	struct timing_result r;

	assert_int_equal(timing_path(&P, l->h, l->n, &q, &r), 0);
	return r;
}

static struct timing_result link_q(unsigned gen, unsigned width, uint32_t mps, uint64_t size,
				   bool write)
{
	struct timing_query q = { .size = size, .write = write, .mps = mps };
	struct timing_result r;

	assert_int_equal(timing_link(&P, gen, width, &q, &r), 0);
	return r;
}

/* ---------- byte accounting ---------- */

/*
 * Gen3 x8, MPS 256: raw 8 GT/s x 8 x 128/130 / 8 = 7.876923 GB/s; ACK and
 * UpdateFC every 203 B, SKIP 4 per 1538: x (1 - 8/203 - 8/203 - 4/1538)
 * = 7.235590 GB/s at the TLP level.
 */
static void test_gen3x8_tlp_bw(void **state)
{
	struct timing_link_info li;

	assert_int_equal(timing_link_info(&P, 3, 8, 256, &li), 0);
	near(li.raw_gbs, 7.876923, 1e-6, "raw");
	assert_int_equal(li.ack_limit, 203);
	assert_int_equal(li.fc_interval, 203);
	near(li.tlp_gbs, 7.876923 * (1 - 16.0 / 203 - 4.0 / 1538), 1e-6, "TLP bw");
	near(li.tlp_gbs, 7.235590, 1e-5, "TLP bw value");
	assert_int_equal(li.mwr_hdr, 24);
	assert_int_equal(li.mrd_hdr, 24);
	assert_int_equal(li.cpld_hdr, 20);
}

/* 64 B writes: 64/(64+24) of 7.23559; >= 256 B: 256/(256+24) per full TLP. */
static void test_gen3x8_write_bw(void **state)
{
	struct timing_result r = link_q(3, 8, 256, 64, true);

	near(r.bw_gbs, 7.235590 * 64 / 88, EPS, "64 B");
	near(r.bw_gbs, 5.2623, 1e-4, "64 B value");
	assert_int_equal(r.tlps, 1);
	assert_int_equal(r.wire_bytes, 88);
	r = link_q(3, 8, 256, 256, true);
	near(r.bw_gbs, 6.6154, 1e-4, "256 B");
	r = link_q(3, 8, 256, 4096, true);
	assert_int_equal(r.tlps, 16);
	assert_int_equal(r.wire_bytes, 16 * 24 + 4096);
	near(r.bw_gbs, 6.6154, 1e-4, "4 KiB");
	/* 300 B: two TLPs (256 + 44), 48 B of headers. */
	r = link_q(3, 8, 256, 300, true);
	assert_int_equal(r.tlps, 2);
	near(r.bw_gbs, 7.235590 * 300 / 348, EPS, "300 B");
	assert_int_equal(r.limit, TIMING_LIMIT_LINK);
}

/* Gen2 x8 MPS 128: 4.0 GB/s raw (8b/10b); ACK/FC every 118 B. */
static void test_gen2x8(void **state)
{
	struct timing_link_info li;
	struct timing_result r;

	assert_int_equal(timing_link_info(&P, 2, 8, 128, &li), 0);
	near(li.raw_gbs, 4.0, 1e-9, "raw");
	near(li.tlp_gbs, 4.0 * (1 - 16.0 / 118 - 4.0 / 1538), 1e-9, "TLP");
	r = link_q(2, 8, 128, 1 * MIB, true);
	near(r.bw_gbs, li.tlp_gbs * 128 / 152, 1e-6, "write");
	near(r.bw_gbs, 2.9029, 1e-4, "write value");
}

/* Gen1 x1 MPS 128: 0.25 GB/s raw; ACK/FC every 237 B. */
static void test_gen1x1(void **state)
{
	struct timing_link_info li;
	struct timing_result r;

	assert_int_equal(timing_link_info(&P, 1, 1, 128, &li), 0);
	near(li.raw_gbs, 0.25, 1e-12, "raw");
	near(li.tlp_gbs, 0.25 * (1 - 16.0 / 237 - 4.0 / 1538), 1e-9, "TLP");
	r = link_q(1, 1, 128, 128, true);
	near(r.bw_gbs, li.tlp_gbs * 128 / 152, 1e-9, "128 B write");
}

static void test_headers(void **state)
{
	struct timing_params p = P;
	struct timing_link_info li;

	p.address_bits = 32;
	assert_int_equal(timing_link_info(&p, 3, 8, 256, &li), 0);
	assert_int_equal(li.mwr_hdr, 20);
	p.ecrc = true;
	assert_int_equal(timing_link_info(&p, 3, 8, 256, &li), 0);
	assert_int_equal(li.mwr_hdr, 24);
	assert_int_equal(li.cpld_hdr, 24);
	p.address_bits = 64;
	assert_int_equal(timing_link_info(&p, 3, 8, 256, &li), 0);
	assert_int_equal(li.mwr_hdr, 28);
	/* Gen3 x16 MPS 512 and the x32 FC interval that differs from the ACK limit. */
	assert_int_equal(timing_link_info(&P, 3, 16, 512, &li), 0);
	assert_int_equal(li.ack_limit, 182);
	assert_int_equal(timing_link_info(&P, 1, 32, 2048, &li), 0);
	assert_int_equal(li.ack_limit, 148);
	assert_int_equal(li.fc_interval, 248);
	assert_int_equal(timing_link_info(&P, 6, 8, 256, &li), -EINVAL);
	assert_int_equal(timing_link_info(&P, 3, 3, 256, &li), -EINVAL);
	assert_int_equal(timing_link_info(&P, 3, 8, 192, &li), -EINVAL);
}

/* requester -- Gen3 x8 -- root (120) -- DRAM (200): 64 B read round trip. */
static void test_read_rtt(void **state)
{
	struct timing_result r = link_q(3, 8, 256, 64, false);
	double wire = (24 + 20 + 64) / 7.235590;

	near(r.latency_ns, 120 + 120 + 200 + wire, EPS, "64 B RTT");
	near(r.first_ns, r.latency_ns, EPS, "one request");
	assert_int_equal(r.requests, 1);
	/* 4 KiB: 8 requests of 512 B, 64 B completions from the Xeon root. */
	r = link_q(3, 8, 256, 4096, false);
	assert_int_equal(r.requests, 8);
	assert_int_equal(r.tlps, 64);
	near(r.link_bw_gbs, 7.235590 * 4096 / (64 * 20 + 4096), EPS, "read link limit");
	near(r.latency_ns, r.first_ns + (4096 - 512) / r.bw_gbs, EPS, "pipelined");
	/* A device completer answers in MPS-sized completions. */
	{
		struct hl l = { .n = 0 };
		struct timing_result d;

		dev(&l, 0, "dma");
		lnk(&l, 3, 8, 0);
		dev(&l, 0, "gpu BAR");
		d = run(&l, 4096, false);
		assert_int_equal(d.tlps, 16);
		near(d.first_ns, 250 + (24 + 2 * 20 + 512) / 7.235590, EPS, "device RTT");
	}
}

/*
 * Completion size (predict link --cpl-size): by completer unless given. A
 * root completes DRAM reads in its profile's completion_bytes (else
 * link.rcb), a device in MPS-sized TLPs; cpl_size overrides either, must be
 * a power of two from 64 to the MPS in effect.
 */
static struct timing_result cpl_q(int completer, uint32_t cpl, uint32_t mps)
{
	struct timing_query q = { .size = 4096, .completer = (uint8_t)completer,
				  .cpl_size = cpl, .mps = mps };
	struct timing_result r;

	assert_int_equal(timing_link(&P, 3, 8, &q, &r), 0);
	return r;
}

static void test_cpl_size(void **state)
{
	struct timing_params saved = P;
	struct timing_query q = { .size = 4096, .cpl_size = 512 };
	struct timing_result r;

	/* Defaults by completer: the Xeon root's 64 B, a device's MPS. */
	r = cpl_q(TIMING_CPL_DRAM, 0, 0);
	assert_int_equal(r.cpl_bytes, 64);
	assert_int_equal(r.tlps, 64);
	r = cpl_q(TIMING_CPL_DEVMEM, 0, 0);
	assert_int_equal(r.cpl_bytes, 256);
	assert_int_equal(r.tlps, 16);
	r = cpl_q(TIMING_CPL_REGS, 0, 512);
	assert_int_equal(r.cpl_bytes, 512);
	assert_int_equal(r.tlps, 8);
	/* The flag overrides both ways: fewer headers, more link bandwidth. */
	r = cpl_q(TIMING_CPL_DRAM, 256, 0);
	assert_int_equal(r.cpl_bytes, 256);
	assert_int_equal(r.tlps, 16);
	near(r.link_bw_gbs, 7.235590 * 4096 / (16 * 20 + 4096), EPS, "DRAM in 256 B CplD");
	r = cpl_q(TIMING_CPL_DEVMEM, 64, 0);
	assert_int_equal(r.cpl_bytes, 64);
	near(r.link_bw_gbs, 7.235590 * 4096 / (64 * 20 + 4096), EPS, "device in 64 B CplD");
	/* A root profile without completion_bytes completes at link.rcb. */
	P.rcs[0].completion_bytes = 0;
	P.rcb = 128;
	r = cpl_q(TIMING_CPL_DRAM, 0, 0);
	assert_int_equal(r.cpl_bytes, 128);
	assert_int_equal(r.tlps, 32);
	P = saved;
	/* Larger than the MPS, below 64 or not a power of two: invalid. */
	assert_int_equal(timing_link(&P, 3, 8, &q, &r), -EINVAL);
	q.cpl_size = 32;
	assert_int_equal(timing_link(&P, 3, 8, &q, &r), -EINVAL);
	q.cpl_size = 96;
	assert_int_equal(timing_link(&P, 3, 8, &q, &r), -EINVAL);
	/* Writes ignore it. */
	q.write = true;
	q.cpl_size = 64;
	assert_int_equal(timing_link(&P, 3, 8, &q, &r), 0);
	assert_int_equal(r.cpl_bytes, 0);
	(void)state;
}

/* Little's law: 4 tags x 512 B per round trip. */
static void test_littles_law(void **state)
{
	struct timing_query q = { .size = MIB, .write = false, .tags = 4 };
	struct timing_result r;
	double rtt = 440 + (24 + 8 * 20 + 512) / 7.235590;

	assert_int_equal(timing_link(&P, 3, 8, &q, &r), 0);
	near(r.first_ns, rtt, EPS, "rtt");
	near(r.bw_gbs, 4 * 512 / rtt, EPS, "tags limit");
	assert_int_equal(r.limit, TIMING_LIMIT_TAGS);
	assert_int_equal(r.bottleneck, 0);
	assert_non_null(strstr(r.explain, "requester tags"));
	/* Enough tags: the link limits again. */
	q.tags = 256;
	assert_int_equal(timing_link(&P, 3, 8, &q, &r), 0);
	assert_int_equal(r.limit, TIMING_LIMIT_LINK);
}

/*
 * A read forwarded through a root complex with its IOMMU: requests leave as
 * 64 B, and the root's 40 open requests hold for the round trip beyond it.
 */
static void test_iommu_split(void **state)
{
	struct hl on = { .n = 0 }, off = { .n = 0 };
	struct timing_result a, b;
	struct timing_link_info li;
	double rtt;

	for (int k = 0; k < 2; k++) {
		struct hl *l = k ? &off : &on;

		dev(l, 1, "gpu");
		lnk(l, 3, 16, 1);
		rp(l, 1);
		rt(l, 1);
		if (!k)
			mmu(l, 1);
		rp(l, 1);
		lnk(l, 3, 16, 1);
		dev(l, 1, "peer BAR");
	}
	a = run(&on, 128 * MIB, false);
	b = run(&off, 128 * MIB, false);
	assert_int_equal(timing_link_info(&P, 3, 16, 256, &li), 0);
	rtt = 20 + 250 + (24 + 20 + 64) / li.tlp_gbs;
	near(a.bw_gbs, 40 * 64 / rtt, EPS, "split");
	assert_int_equal(a.limit, TIMING_LIMIT_RC);
	assert_int_equal(a.bottleneck, 3);
	assert_int_equal(a.tlps, 128 * MIB / 64);
	/* Without the IOMMU the root forwards 512 B requests: 8x the bytes per slot. */
	assert_true(b.bw_gbs > a.bw_gbs);
	assert_int_equal(b.limit, TIMING_LIMIT_LINK);
	assert_true(b.outstanding_bw_gbs > 0);
	/* A root profile that does not split. */
	{
		struct timing_params p = P;
		struct timing_query q = { .size = 128 * MIB };
		struct timing_result c;

		p.rcs[0].iommu_read_split = 0;
		assert_int_equal(timing_path(&p, on.h, on.n, &q, &c), 0);
		assert_true(c.bw_gbs > a.bw_gbs);
		assert_int_equal(c.limit, TIMING_LIMIT_LINK);
	}
}

static void test_bottleneck_naming(void **state)
{
	struct hl l = { .n = 0 };
	struct timing_result r;

	dev(&l, 0, "dev");
	lnk(&l, 3, 16, 0);
	chp(&l, TIMING_HOP_SWITCH, "PEX8796", 0);
	lnk(&l, 2, 4, 0);
	chp(&l, TIMING_HOP_SWITCH, "PEX8733", 0);
	lnk(&l, 3, 8, 0);
	rp(&l, 0);
	rt(&l, 0);
	ram(&l, 0);
	r = run(&l, MIB, true);
	assert_int_equal(r.bottleneck, 3);
	assert_string_equal(l.h[r.bottleneck].name, "link Gen2 x4");
	assert_non_null(strstr(r.explain, "link Gen2 x4"));
	r = run(&l, MIB, false);
	assert_int_equal(r.bottleneck, 3);
	/* Chip latencies add; serialisation counts once (cut-through). */
	r = run(&l, 64, true);
	near(r.first_ns, 150 + 110 + 120 + 80 + 88 / (r.link_bw_gbs * 88 / 64), EPS, "latency");
}

static void test_bad_input(void **state)
{
	struct timing_query q = { .size = 0, .write = true };
	struct timing_result r;
	struct hl l = { .n = 0 };

	assert_int_equal(timing_link(&P, 3, 8, &q, &r), -EINVAL);
	q.size = 64;
	assert_int_equal(timing_link(&P, 6, 8, &q, &r), -EINVAL);
	assert_int_equal(timing_link(&P, 3, 5, &q, &r), -EINVAL);
	q.mps = 100;
	assert_int_equal(timing_link(&P, 3, 8, &q, &r), -EINVAL);
	q.mps = 0;
	q.iotlb_miss_rate = 2;
	assert_int_equal(timing_link(&P, 3, 8, &q, &r), -EINVAL);
	q.iotlb_miss_rate = 0;
	assert_int_equal(timing_path(&P, l.h, 0, &q, &r), -EINVAL);
	dev(&l, 0, "a");
	dev(&l, 0, "b");
	assert_int_equal(timing_path(&P, l.h, l.n, &q, &r), -EINVAL);  /* no link */
}

static void test_converters(void **state)
{
	struct smio_hop s[2] = { { .kind = 2, .gen = 3, .width = 8, .host = 1, .bdf = 0x100,
				   .name = "link to gpu0" },
				 { .kind = 6, .host = 1, .latency_ns = 110, .name = "ntb0" } };
	struct fab_hop f[2] = { { .kind = FAB_HOP_CSWITCH, .host = 0xffff, .latency_ns = 170,
				  .name = "mxs0 (PM8536)" },
				{ .kind = FAB_HOP_MEMORY, .host = 2, .name = "host 2 RAM" } };
	struct timing_hop h[2];

	assert_int_equal(timing_hops_from_smio(s, 2, h, 2), 2);
	assert_int_equal(h[0].kind, TIMING_HOP_LINK);
	assert_int_equal(h[0].gen, 3);
	assert_int_equal(h[0].width, 8);
	assert_int_equal(h[1].latency_ns, 110);
	assert_string_equal(h[1].name, "ntb0");
	assert_int_equal(timing_hops_from_fab(f, 2, h, 2), 2);
	assert_int_equal(h[0].kind, TIMING_HOP_CSWITCH);
	assert_int_equal(h[0].host, TIMING_HOST_NONE);
	assert_int_equal(h[0].latency_ns, 170);
	assert_int_equal(h[1].kind, TIMING_HOP_MEMORY);
	assert_int_equal(timing_hops_from_fab(f, 2, h, 1), -ENOSPC);
	s[0].kind = 42;
	assert_int_equal(timing_hops_from_smio(s, 2, h, 2), -EINVAL);
}

/* ---------- the calibration file ---------- */

static const char *src_dir(void)
{
	const char *s = getenv("SMARTIO_SOURCE_DIR");

	return s ? s : ".";
}

static void test_params_file_equals_defaults(void **state)
{
	struct timing_params p;
	char path[4096], err[512];
	int rc;

	snprintf(path, sizeof(path), "%s/topologies/timing.yaml", src_dir());
	rc = timing_params_load_file(path, &p, err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
	assert_true(timing_params_equal(&p, &P));
}

static void param_bad(const char *yaml, int line, const char *want)
{
	struct timing_params p;
	char err[512], prefix[32];

	timing_params_default(&p);
	assert_int_equal(timing_params_load_string(yaml, strlen(yaml), "t.yaml", &p, err,
						   sizeof(err)), -EINVAL);
	snprintf(prefix, sizeof(prefix), "t.yaml:%d: ", line);
	if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, want))
		fail_msg("want '%s...%s', got '%s'", prefix, want, err);
	assert_true(timing_params_equal(&p, &P));  /* untouched on error */
}

static void test_params_errors(void **state)
{
	struct timing_params p;
	char err[512];
	const char *ok = "version: 1\nlink:\n  mps: 128\nchips:\n  PEX8733: 100\n"
			 "root_complexes:\n  epyc: {latency_ns: 90, outstanding: 64}\n"
			 "  xeon: {latency_ns: 120, outstanding: 40, iommu_read_split: 64}\n"
			 "host_root_complex: {2: xeon}\n";

	param_bad("link:\n  mps: 256\n", 1, "missing 'version: 1'");
	param_bad("version: 1\nlink:\n  mps: 300\n", 3, "power of two");
	param_bad("version: 1\nlink:\n  mps: 256\n  mrs: 512\n", 4, "unknown key 'mrs'");
	param_bad("version: 1\n\nfoo: 1\n", 3, "unknown key 'foo'");
	param_bad("version: 1\nchips:\n  PEX8733: -5\n", 3, "'PEX8733' must be a number");
	param_bad("version: 1\nchips:\n  A: 1\n  A: 2\n", 4, "duplicate key");
	param_bad("version: 1\ndefault_root_complex: arm\n", 2, "no root-complex profile 'arm'");
	param_bad("version: 1\nroot_complexes:\n  x: {latency_ns: 5}\n", 3, "needs 'outstanding'");
	param_bad("version: 1\nlink: [1, 2]\n", 2, "must be a mapping");
	param_bad("version: 1\nlink: {mps: 256\n", 3, "YAML syntax error");
	param_bad("version: 2\n", 1, "from 1 to 1");
	param_bad("version: 1\nlink:\n  ecrc: maybe\n", 3, "true or false");
	param_bad("version: 1\nhost_root_complex: {1: pentium}\n", 2, "no root-complex profile");
	/* Text libfyaml 0.7 would loop on is refused before it gets there. */
	param_bad("%\xaf\n", 1, "not UTF-8 text");
	param_bad("version: 1\n---\nversion: 1\n", 3, "second YAML document");

	timing_params_default(&p);
	assert_int_equal(timing_params_load_string(ok, strlen(ok), "t.yaml", &p, err,
						   sizeof(err)), 0);
	assert_int_equal(p.mps, 128);
	assert_int_equal(p.nrcs, 2);
	assert_int_equal(timing_host_rc(&p, 2)->latency_ns, 120);
	assert_int_equal(timing_host_rc(&p, 0)->latency_ns, 90);   /* first profile is default */
	assert_int_equal(p.nchips, 1);
	assert_int_equal(timing_params_load_file("/nonexistent/timing.yaml", &p, err, sizeof(err)),
			 -ENOENT);
}

/* The papers' topologies use the calibration's chip latencies. */
static void test_paper_topologies_match(void **state)
{
	static const char *const files[] = { "back-to-back-pxh830", "expansion-chassis",
		"lender-iommu-off", "lender-iommu-on", "mxs824-cluster", "three-node" };
	const struct timing_rc *rc = timing_host_rc(&P, 0);

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096], err[512];
		struct topo *t = NULL;
		uint32_t ns;

		snprintf(path, sizeof(path), "%s/topologies/papers/%s.yaml", src_dir(), files[i]);
		if (topo_load_file(path, &t, err, sizeof(err)))
			fail_msg("%s", err);
		for (uint32_t c = 0; c < t->ncswitches; c++) {
			assert_int_equal(timing_chip_ns(&P, t->cswitches[c].chip, &ns), 0);
			assert_int_equal(t->cswitches[c].latency_ns, ns);
		}
		for (uint32_t h = 0; h < t->nhosts; h++) {
			assert_int_equal(t->hosts[h].rc_latency_ns, rc->latency_ns);
			for (uint32_t k = 0; topo_host_ntb(&t->hosts[h], k); k++) {
				const struct topo_ntb *n = topo_host_ntb(&t->hosts[h], k);

				assert_int_equal(timing_chip_ns(&P, n->model, &ns), 0);
				assert_int_equal(n->latency_ns, ns);
			}
			for (uint32_t pi = 0; pi < t->hosts[h].nports; pi++) {
				const struct topo_port *po = &t->hosts[h].ports[pi];

				for (int d = 0; po && po->kind == TOPO_SLOT_SWITCH && d < 4; d++) {
					assert_int_equal(timing_chip_ns(&P, po->sw.chip, &ns), 0);
					assert_int_equal(po->sw.latency_ns, ns);
					po = po->sw.nports ? &po->sw.ports[0] : NULL;
				}
			}
		}
		topo_free(t);
	}
}

/* ---------- the papers' numbers ---------- */

/* Host a's root port .. host b's root port over back-to-back PXH830s. */
static void crossing(struct hl *l, unsigned gen, unsigned width, uint16_t a, uint16_t b)
{
	lnk(l, gen, width, a);
	chp(l, TIMING_HOP_NTB, "PXH830", a);
	cbl(l, gen, width, a);
	chp(l, TIMING_HOP_NTB, "PXH830", b);
	lnk(l, gen, width, b);
}

/* Device Lending sec. 7.4: one-way RAM-to-RAM, back-to-back PXH830, 550-580 ns. */
static void test_paper_ntb_ram_to_ram(void **state)
{
	struct hl l = { .n = 0 };
	struct timing_result r;

	dev(&l, 0, "CPU");
	rt(&l, 0);
	rp(&l, 0);
	crossing(&l, 3, 8, 0, 1);
	rp(&l, 1);
	rt(&l, 1);
	ram(&l, 1);
	r = run(&l, 64, true);
	within10(r.latency_ns, 565, "NTB one-way RAM-to-RAM (ns)");
	assert_true(r.latency_ns >= 550 * 0.9 && r.latency_ns <= 580 * 1.1);
}

/*
 * Device Lending sec. 7.4, fig. 19: borrowing the NVMe adds 700-730 ns: the
 * controller's command fetch crosses the NTB there and back.
 */
static void test_paper_nvme_remote(void **state)
{
	struct hl loc = { .n = 0 }, rem = { .n = 0 };
	double d;

	dev(&loc, 1, "nvme0");
	lnk(&loc, 3, 4, 1);
	rp(&loc, 1);
	rt(&loc, 1);
	ram(&loc, 1);
	dev(&rem, 1, "nvme0");
	lnk(&rem, 3, 4, 1);
	rp(&rem, 1);
	rt(&rem, 1);          /* the lender's root forwards peer-to-peer (IOMMU off) */
	rp(&rem, 1);
	crossing(&rem, 3, 8, 1, 0);
	rp(&rem, 0);
	rt(&rem, 0);
	ram(&rem, 0);
	d = run(&rem, 64, false).latency_ns - run(&loc, 64, false).latency_ns;
	within10(d, 715, "remote NVMe read adds (ns)");
}

/* Device Lending sec. 7.2, fig. 14: two lenders add "a little more than 700 ns". */
static void test_paper_pingpong(void **state)
{
	struct hl one = { .n = 0 }, two = { .n = 0 };
	double d;

	dev(&one, 1, "gpu0");
	lnk(&one, 2, 16, 1);
	chp(&one, TIMING_HOP_SWITCH, "PEX8733", 1);
	lnk(&one, 2, 16, 1);
	dev(&one, 1, "gpu1");

	dev(&two, 1, "gpu0");
	lnk(&two, 2, 16, 1);
	chp(&two, TIMING_HOP_SWITCH, "PEX8733", 1);
	crossing(&two, 3, 8, 1, 2);
	chp(&two, TIMING_HOP_SWITCH, "PEX8733", 2);
	lnk(&two, 2, 16, 2);
	dev(&two, 2, "gpu1");
	d = 2 * (run(&two, 4, true).latency_ns - run(&one, 4, true).latency_ns);
	within10(d, 720, "two lenders add to ping-pong (ns)");
}

/* SmartIO sec. 7.3.1, fig. 31: lender IOMMU off 10.2 GB/s, on ~1.5 GB/s. */
static void k40(struct hl *l, bool iommu_on)
{
	dev(l, 1, "K40c");
	lnk(l, 3, 16, 1);
	chp(l, TIMING_HOP_SWITCH, "PEX8796", 1);
	if (iommu_on) {
		lnk(l, 3, 16, 1);
		chp(l, TIMING_HOP_SWITCH, "PEX8733", 1);
		cbl(l, 3, 16, 1);
		chp(l, TIMING_HOP_SWITCH, "PEX8733", 1);
		lnk(l, 3, 16, 1);
		rp(l, 1);
		rt(l, 1);
		mmu(l, 1);
		rp(l, 1);
		lnk(l, 3, 16, 1);
		chp(l, TIMING_HOP_SWITCH, "PEX8733", 1);
		cbl(l, 3, 16, 1);
		chp(l, TIMING_HOP_SWITCH, "PEX8733", 1);
		lnk(l, 3, 16, 1);
		chp(l, TIMING_HOP_SWITCH, "PEX8796", 1);
	}
	crossing(l, 3, 16, 1, 0);
	rp(l, 0);
	rt(l, 0);
	mmu(l, 0);
	ram(l, 0);
}

static void test_paper_lender_iommu(void **state)
{
	struct hl off = { .n = 0 }, on = { .n = 0 };
	struct timing_result a, b;

	k40(&off, false);
	k40(&on, true);
	a = run(&off, 128 * MIB, false);
	b = run(&on, 128 * MIB, false);
	within10(a.bw_gbs, 10.2, "DMA read, lender IOMMU off (GB/s)");
	within10(b.bw_gbs, 1.5, "DMA read, lender IOMMU on (GB/s)");
	assert_int_equal(a.limit, TIMING_LIMIT_LINK);
	assert_int_equal(b.limit, TIMING_LIMIT_RC);
	assert_int_equal(on.h[b.bottleneck].kind, TIMING_HOP_ROOT);
	assert_int_equal(on.h[b.bottleneck].host, 1);   /* the lender's root */
}

/* cZodiac sec. 6, fig. 13: RDMA PUT 3.19 GB/s over Gen2 x8 with MPS 128. */
static void test_paper_czodiac(void **state)
{
	struct timing_query q = { .size = 2 * MIB, .write = true, .mps = 128 };
	struct hl l = { .n = 0 };
	struct timing_result r;

	dev(&l, 0, "CPUPort engine");
	lnk(&l, 2, 8, 0);
	l.h[l.n++] = timing_hop_make(TIMING_HOP_SWITCH, 0, "crossbar");
	lnk(&l, 2, 8, 1);
	rp(&l, 1);
	rt(&l, 1);
	ram(&l, 1);
	assert_int_equal(timing_path(&P, l.h, l.n, &q, &r), 0);
	within10(r.bw_gbs, 3.19, "cZodiac RDMA PUT (GB/s)");
}

/*
 * cZodiac sec. 6.2, fig. 12: the primitives' minimum latencies (DAP store
 * 0.53, NAP 1.12, RDMA 1.73 us) and their order; NAP immediate vs indirect;
 * GET a crossbar pass above PUT; fig. 13's plateau.
 */
static void test_czodiac_primitives(void **state)
{
	struct timing_cz o[TIMING_CZ_N], imm, ind, big;
	uint32_t chip;

	for (int i = 0; i < TIMING_CZ_N; i++)
		assert_int_equal(timing_czodiac(&P, i, TIMING_CZ_MIN_BYTES, &o[i]), 0);
	within10(o[TIMING_CZ_DAP_STORE].latency_ns, 530, "DAP store (ns)");
	within10(o[TIMING_CZ_NAP].latency_ns, 1120, "NAP (ns)");
	within10(o[TIMING_CZ_PUT].latency_ns, 1730, "RDMA PUT (ns)");
	assert_true(o[TIMING_CZ_DAP_STORE].latency_ns < o[TIMING_CZ_NAP].latency_ns);
	assert_true(o[TIMING_CZ_NAP].latency_ns < o[TIMING_CZ_PUT].latency_ns);
	assert_int_equal(timing_chip_ns(&P, "cZodiac", &chip), 0);
	assert_true(o[TIMING_CZ_GET].latency_ns - o[TIMING_CZ_PUT].latency_ns == chip);
	/* Immediate: no payload fetch; one byte more goes indirect and pays it. */
	assert_int_equal(timing_czodiac(&P, TIMING_CZ_NAP, TIMING_CZ_NAP_IMM, &imm), 0);
	assert_int_equal(timing_czodiac(&P, TIMING_CZ_NAP, TIMING_CZ_NAP_IMM + 1, &ind), 0);
	assert_true(imm.payload_read_ns == 0 && ind.payload_read_ns > 0);
	assert_true(ind.latency_ns > imm.latency_ns + ind.payload_read_ns / 2);
	assert_int_equal(timing_czodiac(&P, TIMING_CZ_NAP, TIMING_CZ_NAP_MAX + 1, &big),
			 -EMSGSIZE);
	assert_int_equal(timing_czodiac(&P, TIMING_CZ_N, 8, &big), -EINVAL);
	assert_int_equal(timing_czodiac(&P, TIMING_CZ_PUT, 0, &big), -EINVAL);
	/* NAP's copy-out makes its latency grow faster with size than a PUT's. */
	assert_int_equal(timing_czodiac(&P, TIMING_CZ_NAP, TIMING_CZ_NAP_MAX, &big), 0);
	assert_true(big.copy_ns > 100);
	/* Large PUTs approach the Gen2 x8 posted-write limit (fig. 13: 3.19 GB/s). */
	assert_int_equal(timing_czodiac(&P, TIMING_CZ_PUT, 128 * MIB, &big), 0);
	within10(big.bw_gbs, 3.19, "RDMA PUT 128 MiB (GB/s)");
}

/* The library's paper table agrees and every entry is within 10%. */
static void test_paper_table(void **state)
{
	for (unsigned i = 0; i < timing_paper_count(); i++) {
		struct timing_check c;

		assert_int_equal(timing_paper_check(&P, i, &c), 0);
		if (!timing_check_ok(&c))
			fail_msg("%s: model %.3f vs paper %.3f", c.id, c.predicted, c.stated);
	}
	assert_int_equal(timing_paper_check(&P, timing_paper_count(), NULL), -EINVAL);
}

/* The figures (timing_figures.c): the shapes the papers describe, from the same parameters. */
static const struct timing_series *series_of(const struct timing_figure *f, const char *label)
{
	for (unsigned s = 0; s < f->nseries; s++)
		if (!strcmp(f->s[s].label, label))
			return &f->s[s];
	fail_msg("%s: no series '%s'", f->id, label);
	return NULL;
}

static double last(const struct timing_series *s)
{
	return s->y[s->n - 1];
}

static void check_by_id(const char *id, struct timing_check *c)
{
	for (unsigned i = 0; i < timing_paper_count(); i++)
		if (!timing_paper_check(&P, i, c) && !strcmp(c->id, id))
			return;
	fail_msg("no check '%s'", id);
}

static void figure(const char *id, struct timing_figure *f)
{
	int idx = timing_figure_find(id);

	assert_true(idx >= 0);
	assert_int_equal(timing_figure(&P, (unsigned)idx, f), 0);
}

static void test_figures(void **state)
{
	struct timing_figure f;
	struct timing_check c;
	(void)state;

	assert_int_equal(timing_figure_count(), 14);
	assert_int_equal(timing_figure_find("nosuch"), -ENOENT);
	assert_int_equal(timing_figure(&P, timing_figure_count(), &f), -EINVAL);
	for (unsigned i = 0; i < timing_figure_count(); i++) {
		assert_int_equal(timing_figure(&P, i, &f), 0);
		assert_true(f.nseries >= 1);
		for (unsigned s = 0; s < f.nseries; s++) {
			assert_int_equal(f.s[s].n, f.bars ? 1 : TIMING_FIG_POINTS);
			for (unsigned k = 1; k < f.s[s].n; k++)   /* rate grows with size */
				assert_true(f.s[s].y[k] >= f.s[s].y[k - 1]);
		}
	}
	/* Fig. 22: local and borrowed have the same chips: identical curves. */
	figure("smartio-fig22", &f);
	assert_memory_equal(series_of(&f, "local read")->y, series_of(&f, "borrowed read")->y,
			    sizeof(f.s[0].y));
	/* Fig. 23: one more switch: writes converge, reads stay lower (tag-limited). */
	figure("smartio-fig23", &f);
	near(last(series_of(&f, "cluster switch write")), last(series_of(&f, "back-to-back write")),
	     0.01, "fig. 23 writes converge");
	assert_true(last(series_of(&f, "cluster switch read")) <
		    0.95 * last(series_of(&f, "back-to-back read")));
	assert_true(series_of(&f, "cluster switch write")->y[0] <
		    series_of(&f, "back-to-back write")->y[0]);
	/* Fig. 31: the curves' plateaus are the checked numbers. */
	figure("smartio-fig31", &f);
	check_by_id("iommu-off-read", &c);
	near(last(series_of(&f, "no-IOMMU read")), c.predicted, 0.01 * c.predicted, "fig. 31 off");
	check_by_id("iommu-on-read", &c);
	near(last(series_of(&f, "IOMMU read")), c.predicted, 0.01 * c.predicted, "fig. 31 on");
	/* MDEV is the bare-metal IOMMU data path: the paper's "almost identical". */
	assert_memory_equal(series_of(&f, "MDEV read")->y, series_of(&f, "IOMMU read")->y,
			    sizeof(f.s[0].y));
	assert_memory_equal(series_of(&f, "MDEV write")->y, series_of(&f, "IOMMU write")->y,
			    sizeof(f.s[0].y));
	/* Fig. 34: the SQ closer to the NVMe is faster. */
	figure("smartio-fig34", &f);
	assert_true(f.s[0].y[0] > f.s[1].y[0] && f.s[1].y[0] > f.s[2].y[0]);
	/* DL fig. 14: 2L - 1L is the checked difference. */
	figure("dl-fig14", &f);
	check_by_id("pingpong-two-lenders", &c);
	near(series_of(&f, "2L-P2P-SW")->y[0] - series_of(&f, "1L-P2P-SW")->y[0], c.predicted,
	     EPS, "DL fig. 14");
	/* DL fig. 10: the lender IOMMU drops reads far more than writes. */
	figure("dl-fig10", &f);
	assert_true(last(series_of(&f, "Rem-IOMMU read")) < 0.5 * last(series_of(&f, "Rem-SW read")));
}

/*
 * One NVMe read composed by timing_nvme_io: the sum of its legs, the CQE
 * adding only its serialisation behind the data on the same path, and the
 * doorbell path derived from the device's path to the CPU's memory.
 */
static void test_nvme_io(void **state)
{
	struct hl d = { 0 }, cpu;
	struct timing_hop db[TIMING_MAX_HOPS];
	struct timing_nvme t, tw;
	struct timing_result fetch, data, bell;
	struct timing_query q = { .size = 4, .write = true, .completer = TIMING_CPL_REGS };
	int n;

	dev(&d, 1, "nvme0");
	lnk(&d, 3, 4, 1);
	rp(&d, 1);
	rt(&d, 1);
	mmu(&d, 1);
	ram(&d, 1);
	n = timing_hops_cpu_to(d.h, d.n, db, TIMING_MAX_HOPS);
	assert_int_equal(n, (int)d.n - 1);              /* no IOMMU on the CPU's stores */
	assert_int_equal(db[0].kind, TIMING_HOP_DEVICE);
	assert_int_equal(db[1].kind, TIMING_HOP_ROOT);  /* the CPU issues through its root */
	assert_int_equal(db[n - 1].kind, TIMING_HOP_DEVICE);
	assert_int_equal(timing_hops_cpu_to(d.h, 2, db, TIMING_MAX_HOPS), -EINVAL);
	memcpy(cpu.h, db, sizeof(db[0]) * (size_t)n);
	cpu.n = (unsigned)n;
	assert_int_equal(timing_path(&P, cpu.h, cpu.n, &q, &bell), 0);
	fetch = run(&d, P.nvme_sqe_bytes, false);
	data = run(&d, 4096, true);
	{
		struct timing_nvme_paths x = { .doorbell = db, .ndoorbell = (unsigned)n, .sq = d.h,
			.nsq = d.n, .data = d.h, .ndata = d.n, .cq = d.h, .ncq = d.n };

		assert_int_equal(timing_nvme_io(&P, &x, NULL, 4096, false, P.nvme_media_read_ns,
						&t), 0);
		assert_int_equal(timing_nvme_io(&P, &x, NULL, 4096, true, 10000, &tw), 0);
	}
	near(t.doorbell_ns, bell.latency_ns, 0.01, "doorbell");
	near(t.fetch_ns, fetch.latency_ns, 0.01, "fetch");
	near(t.data_ns, data.latency_ns, 0.01, "data");
	assert_true(t.cqe_ns > 0 && t.cqe_ns < 20);    /* 16 bytes (+ header) behind the data */
	near(t.total_ns, t.doorbell_ns + t.fetch_ns + P.nvme_media_read_ns + t.data_ns + t.cqe_ns,
	     0.01, "total");
	near(t.pcie_ns, t.total_ns - P.nvme_media_read_ns, 0.01, "pcie");
	/* A write reads its data (a round trip) and its CQE waits for the media. */
	assert_true(tw.data_ns > t.data_ns && tw.cqe_ns > t.cqe_ns);
	near(tw.media_ns, 10000, 0.01, "write media");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gen3x8_tlp_bw),
		cmocka_unit_test(test_nvme_io),
		cmocka_unit_test(test_gen3x8_write_bw),
		cmocka_unit_test(test_gen2x8),
		cmocka_unit_test(test_gen1x1),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_read_rtt),
		cmocka_unit_test(test_cpl_size),
		cmocka_unit_test(test_littles_law),
		cmocka_unit_test(test_iommu_split),
		cmocka_unit_test(test_bottleneck_naming),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_converters),
		cmocka_unit_test(test_params_file_equals_defaults),
		cmocka_unit_test(test_params_errors),
		cmocka_unit_test(test_paper_topologies_match),
		cmocka_unit_test(test_paper_ntb_ram_to_ram),
		cmocka_unit_test(test_paper_nvme_remote),
		cmocka_unit_test(test_paper_pingpong),
		cmocka_unit_test(test_paper_lender_iommu),
		cmocka_unit_test(test_paper_czodiac),
		cmocka_unit_test(test_czodiac_primitives),
		cmocka_unit_test(test_paper_table),
		cmocka_unit_test(test_figures),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
