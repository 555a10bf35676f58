// SPDX-License-Identifier: MIT
/*
 * smartio accel: use a host's accelerators through its in-kernel driver
 * (SMIO_ACCEL_OP), as an application would through a GPU's device node.
 * `launch` (device code) is in accel_launch.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "accel_mgrq.h"
#include "accel_priv.h"
#include "cli.h"
#include "util/cli_conv.h"
#include "smartio/accel_regs.h"

#define MAX_REPEAT       4096u          /* the daemon's limit on repeated ring ops */

enum sub { S_LIST, S_INFO, S_COPY, S_FILL, S_CHECKSUM, S_PINGPONG, S_BENCH, S_LAUNCH };

static const char *const sub_names[] = { "list", "info", "copy", "fill", "checksum",
					 "pingpong", "bench", "launch" };


static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio accel COMMAND --host N [--dev BDF|NAME] [OPTIONS] [--dir DIR]\n\n"
		"Commands:\n"
		"  list                          the host's accelerators and their driver\n"
		"  info                          device memory size and BAR2 bus address\n"
		"  copy --src OP --dst OP --len L [--repeat R]\n"
		"                                DMA copy by the device's engine\n"
		"  fill --dst OP --len L --pattern P   repeat the 8-byte pattern P over dst\n"
		"  checksum --src OP --len L [--pattern SEED]   CRC32C (Castagnoli)\n"
		"  pingpong --peer BDF|NAME --iters N   the papers' GPU latency benchmark\n"
		"                                between --dev (initiator) and --peer\n"
		"  bench                         copy bandwidth RAM->device and device->RAM,\n"
		"                                4K..16M\n"
		"  launch [--timeout MS] [--code-offset OFF] [--nvme BDF|NAME [--ns N]\n"
		"         [--queue-depth D]] [--nvme-manager DEV] KERNEL.so [ARGS...]\n"
		"                                run a kernel (device code, an ELF .so) on the\n"
		"                                device; options go before KERNEL.so, the rest\n"
		"                                are the kernel's arguments\n\n"
		"Operands (OP):\n"
		"  dev:OFF    offset in the accelerator's memory (BAR2)\n"
		"  ram:OFF    offset in the driver's DMA buffer in host RAM (16 MiB)\n"
		"  ADDR       a bus address as the device sees it (NAME:barN[+OFF] works too,\n"
		"             e.g. gpu1:bar2+0x1000 for peer-to-peer)\n\n"
		"Options:\n"
		"  --host N        the host (or $SMARTIO_HOST)\n"
		"  --dev BDF|NAME  the accelerator (not needed for list)\n"
		"  --repeat R      run the op R times in one request (1..%u)\n"
		"  --timeout MS    launch: abort the kernel after MS milliseconds (default 10000)\n"
		"  --code-offset OFF  launch: where the image goes in device memory\n"
		"                  (default: the top, below the last 64 bytes)\n"
		"  --nvme BDF|NAME launch: lend the kernel an I/O queue pair of this NVMe, SQ\n"
		"                  and CQ in device memory below the image (nvme.* arguments)\n"
		"  --ns N          launch --nvme/--nvme-manager: the namespace the kernel is told\n"
		"                  about (default 1)\n"
		"  --queue-depth D launch --nvme/--nvme-manager: entries per queue, 2..%u (default 64)\n"
		"  --nvme-manager DEV launch: the queue pair from the distributed driver's\n"
		"                  manager of DEV (smartio-nvme -d: NODE:NAME, FDID), SQ, CQ\n"
		"                  and data in device memory (smartio-nvme devq)\n"
		"  --json          one JSON object instead of text (copy, checksum, pingpong, bench,\n"
		"                  launch)\n"
		"Only accelerators the host keeps (lendable: false in the topology) have a\n"
		"driver; lendable ones belong to smartio for lending.\n", MAX_REPEAT,
		SMIO_ACCEL_QDEPTH_MAX);
}

static int parse_num(const char *what, const char *s, uint64_t max, uint64_t *v)
{
	if (cli_parse_u64(s, v) || *v > max) {
		cli_err("%s: '%s' is not a number up to %" PRIu64 " (decimal, 0x hex or a size like 4K)",
			what, s, max);
		return -EINVAL;
	}
	return 0;
}

void accel_bdf_str(char *buf, size_t len, uint16_t bdf)
{
	snprintf(buf, len, "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
}

const char *accel_code_str(uint32_t st)
{
	static const char *const codes[] = { "ok", "bad op", "bad field", "beyond the DMA limit",
		"read fault", "write fault", "bus mastering off", "outside device memory",
		"aborted", "no kernel (the image did not load)", "kernel fault (it crashed)" };
	uint32_t c = st & 0xff;

	return c < sizeof(codes) / sizeof(codes[0]) ? codes[c] : "unknown";
}

static const char *accel_strerror(int rc)
{
	switch (rc) {
	case -ENODEV:
		return "no accelerator driver bound there (the device may be registered for "
		       "lending; 'lendable: false' in the topology keeps it for the host)";
	case -ERANGE:
		return "offset + length runs outside device memory or the driver's RAM buffer "
		       "('smartio accel info' shows the sizes)";
	case -EBUSY:
		return "the accelerator is busy with another request";
	case -ETIMEDOUT:
		return "the device did not finish in time (the driver reset its ring)";
	case -EINVAL:
		return "invalid request (length, repeat count, or peer)";
	default:
		return cli_strerror(rc);
	}
}

/* An operand: dev:OFF, ram:OFF, or an address. */
static int parse_operand(int fd, const char *what, const char *s, uint32_t f_dev,
			 uint32_t f_ram, uint32_t *flags, uint64_t *v)
{
	if (!strncmp(s, "dev:", 4) || !strncmp(s, "ram:", 4)) {
		if (parse_num(what, s + 4, UINT64_MAX, v))
			return -EINVAL;
		*flags |= s[0] == 'd' ? f_dev : f_ram;
		return 0;
	}
	return cli_parse_addr(fd, s, v);
}

/* 0, or the exit status after saying why: 2 for a usage error (no host given), else 1. */
static int conn_open(struct conn *c, const struct opts *o)
{
	c->fd = cli_open_host(o->host_opt, o->dir_opt, SMIO_ROLE_CLIENT, &c->host, c->dir,
			      sizeof(c->dir));
	return c->fd >= 0 ? 0 : c->fd == -EINVAL ? 2 : 1;
}

int accel_call(struct conn *c, const struct smio_accel_op *q, int timeout_ms,
		      struct smio_accel_result *r)
{
	uint32_t rlen;

	memset(r, 0, sizeof(*r));
	return smio_call(c->fd, SMIO_ACCEL_OP, q, sizeof(*q), r, sizeof(*r), &rlen, NULL,
			 timeout_ms);
}

static int copy_timeout(uint64_t len, uint64_t repeat)
{
	uint64_t ms = (2000 + len / 50000) * (repeat ? repeat : 1) + MARGIN_MS;

	return ms > INT32_MAX / 2 ? INT32_MAX / 2 : (int)ms;
}

/* ---------- list ---------- */

static int do_list(struct conn *c)
{
	struct smio_func_list *l = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen, found = 0;
	int rc;

	if (!l)
		return -ENOMEM;
	rc = smio_call(c->fd, SMIO_FUNC_LIST, NULL, 0, l, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (rc) {
		free(l);
		return rc;
	}
	printf("%-8s %-12s %-10s %-18s %s\n", "BDF", "NAME", "MEMORY", "BAR2", "DRIVER");
	for (uint32_t i = 0; i < l->n; i++) {
		struct smio_accel_op q = { .bdf = l->f[i].bdf, .kind = SMIO_ACCEL_INFO };
		struct smio_accel_result r;
		char b[16], mem[24] = "-", bar[24] = "-";

		if (strcmp(l->f[i].model, "accel"))
			continue;
		found++;
		accel_bdf_str(b, sizeof(b), l->f[i].bdf);
		rc = accel_call(c, &q, CLI_TIMEOUT_MS, &r);
		if (!rc) {
			snprintf(mem, sizeof(mem), "%" PRIu64 "M", r.result >> 20);
			snprintf(bar, sizeof(bar), "0x%" PRIx64, r.bus);
		}
		printf("%-8s %-12s %-10s %-18s %s\n", b, l->f[i].name, mem, bar,
		       !rc ? "smartio-accel" : rc == -ENODEV ?
		       (l->f[i].lendable ? "none (lendable)" : "none") : accel_strerror(rc));
	}
	if (!found)
		printf("(no accelerators on host %u)\n", c->host);
	free(l);
	return 0;
}

/* ---------- bench ---------- */

static int bench_json(struct json_object *arr, uint64_t sz, int dir, uint64_t rep, double gbs,
		      double us)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_uint(o, "size", sz) ||
	    smio_json_add_str(o, "direction", dir ? "dev_to_ram" : "ram_to_dev") ||
	    smio_json_add_uint(o, "repeat", rep) || smio_json_add_double(o, "gbps", gbs, "%.3f") ||
	    smio_json_add_double(o, "us_per_op", us, "%.2f")) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

/* JSON: nothing is printed unless every size was measured. */
static int do_bench(struct conn *c, uint16_t bdf, bool json)
{
	static const uint64_t sizes[] = { 4096, 16384, 65536, 262144, 1 << 20, 4 << 20,
					  16 << 20 };
	struct smio_accel_op q = { .bdf = bdf, .kind = SMIO_ACCEL_INFO };
	struct smio_accel_result info, r;
	struct json_object *root = NULL, *res = NULL;
	char b[16];
	int rc = accel_call(c, &q, CLI_TIMEOUT_MS, &info);

	if (rc)
		return rc;
	accel_bdf_str(b, sizeof(b), bdf);
	if (json) {
		root = json_object_new_object();
		res = json_object_new_array();
		if (!root || !res || smio_json_add_uint(root, "host", c->host) ||
		    smio_json_add_str(root, "dev", b))
			goto oom;
	} else {
		printf("%-9s %-12s %10s %10s\n", "size", "direction", "GB/s", "us/op");
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t sz = sizes[i];
		/* Enough repeats to amortise the request round trip and device wake-up. */
		uint64_t rep = (64ull << 20) / sz;

		rep = rep < 4 ? 4 : rep > 256 ? 256 : rep;
		if (sz > info.result)
			continue;   /* device memory smaller than this size */
		for (int dir = 0; dir < 2; dir++) {
			double gbs, us;

			q = (struct smio_accel_op){ .bdf = bdf, .kind = SMIO_ACCEL_COPY, .len = sz,
				.iters = rep, .flags = dir ? SMIO_ACCEL_F_SRC_DEV | SMIO_ACCEL_F_DST_RAM
							   : SMIO_ACCEL_F_SRC_RAM | SMIO_ACCEL_F_DST_DEV };
			rc = accel_call(c, &q, copy_timeout(sz, rep), &r);
			if (rc == -ERANGE)
				break;      /* larger than the driver's RAM buffer */
			if (rc)
				goto out;
			if ((r.status & 0xff) || !r.elapsed_ns) {
				cli_err("bench: %" PRIu64 " bytes: device status 0x%x (%s)", sz,
					r.status, accel_code_str(r.status));
				rc = 1;
				goto out;
			}
			gbs = (double)sz * (double)r.iters_done / (double)r.elapsed_ns;
			us = (double)r.elapsed_ns / (double)r.iters_done / 1000.0;
			if (json) {
				if (bench_json(res, sz, dir, r.iters_done, gbs, us))
					goto oom;
			} else {
				printf("%-9" PRIu64 " %-12s %10.3f %10.2f\n", sz,
				       dir ? "dev->RAM" : "RAM->dev", gbs, us);
			}
		}
	}
	rc = 0;
	if (json) {
		rc = smio_json_add(root, "results", res);
		res = NULL;                     /* root holds it, or it was released */
		if (rc)
			goto oom;
		rc = cli_json_print(root) ? 1 : 0;
	}
	goto out;
oom:
	cli_err("bench: out of memory");
	rc = 1;
out:
	json_object_put(res);
	json_object_put(root);
	return rc;
}

/* ---------- the one-shot ops ---------- */

/* The one object of info, pingpong, copy, fill and checksum; 0 or -errno (said). */
static int op_json(const struct conn *c, const char *b, enum sub s, const struct opts *o,
		   const struct smio_accel_result *r)
{
	struct json_object *j = json_object_new_object();
	char bar[24];
	int rc = -ENOMEM;

	snprintf(bar, sizeof(bar), "0x%" PRIx64, r->bus);
	if (!j || smio_json_add_uint(j, "host", c->host) || smio_json_add_str(j, "dev", b))
		goto out;
	if (s == S_INFO) {
		if (smio_json_add_uint(j, "memory", r->result) || smio_json_add_str(j, "bar2", bar))
			goto out;
	} else if (s == S_PINGPONG) {
		if (smio_json_add_str(j, "peer", o->peer) ||
		    smio_json_add_str(j, "status", accel_code_str(r->status)) ||
		    smio_json_add_uint(j, "iters", r->iters_done) ||
		    smio_json_add_uint(j, "elapsed_ns", r->elapsed_ns) ||
		    smio_json_add_uint(j, "avg_rtt_ns", r->avg_ns) ||
		    smio_json_add_uint(j, "one_way_ns", r->avg_ns / 2))
			goto out;
	} else if (smio_json_add_str(j, "op", sub_names[s]) ||
		   smio_json_add_str(j, "status", accel_code_str(r->status)) ||
		   smio_json_add_uint(j, "status_word", r->status) ||
		   smio_json_add_uint(j, "result", r->result) ||
		   smio_json_add_uint(j, "repeat", r->iters_done) ||
		   smio_json_add_uint(j, "elapsed_ns", r->elapsed_ns)) {
		goto out;
	}
	rc = 0;
out:
	if (rc)
		cli_err("%s: out of memory", sub_names[s]);
	else
		rc = cli_json_print(j);
	json_object_put(j);
	return rc;
}

static int do_op(struct conn *c, enum sub s, uint16_t bdf, const struct opts *o)
{
	struct smio_accel_op q = { .bdf = bdf };
	struct smio_accel_result r;
	char b[16];
	int rc, tmo = CLI_TIMEOUT_MS;

	accel_bdf_str(b, sizeof(b), bdf);
	switch (s) {
	case S_INFO:
		q.kind = SMIO_ACCEL_INFO;
		break;
	case S_PINGPONG:
		q.kind = SMIO_ACCEL_PINGPONG;
		q.iters = o->have_iters ? o->iters : 1000;
		if (cli_parse_func(c->fd, o->peer, &q.peer_bdf))
			return 2;
		tmo = (int)(2000 + q.iters + MARGIN_MS);
		break;
	default:
		q.kind = s == S_COPY ? SMIO_ACCEL_COPY : s == S_FILL ? SMIO_ACCEL_FILL :
			 SMIO_ACCEL_CHECKSUM;
		q.len = o->len;
		q.pattern = o->pattern;
		q.iters = o->repeat;
		if (o->src && parse_operand(c->fd, "--src", o->src, SMIO_ACCEL_F_SRC_DEV,
					    SMIO_ACCEL_F_SRC_RAM, &q.flags, &q.src))
			return 2;
		if (o->dst && parse_operand(c->fd, "--dst", o->dst, SMIO_ACCEL_F_DST_DEV,
					    SMIO_ACCEL_F_DST_RAM, &q.flags, &q.dst))
			return 2;
		tmo = copy_timeout(q.len, q.iters);
		break;
	}
	rc = accel_call(c, &q, tmo, &r);
	if (rc)
		return rc;
	if (s == S_INFO) {
		if (o->json)
			return op_json(c, b, s, o, &r) ? 1 : 0;
		printf("host %u accel %s: memory %" PRIu64 " bytes (%" PRIu64
		       " MiB), BAR2 at bus address 0x%" PRIx64 "\n", c->host, b, r.result,
		       r.result >> 20, r.bus);
		return 0;
	}
	if (o->json) {
		if (op_json(c, b, s, o, &r))
			return 1;
	} else if (s == S_PINGPONG) {
		printf("ping-pong %s <-> %s: %" PRIu64 " iterations in %" PRIu64
		       " ns: round trip %" PRIu64 " ns average, one-way ~%" PRIu64
		       " ns (%s)\n", b, o->peer, r.iters_done, r.elapsed_ns, r.avg_ns,
		       r.avg_ns / 2, accel_code_str(r.status));
	} else if (s == S_CHECKSUM && !(r.status & 0xff)) {
		printf("crc32c 0x%08" PRIx64 "\n", r.result);
	} else {
		printf("%s: %" PRIu64 " bytes, %s", sub_names[s], r.result, accel_code_str(r.status));
		if (r.status & 0xff00)
			printf(" (fabric status %u)", (r.status >> 8) & 0xff);
		if (r.elapsed_ns && !(r.status & 0xff))
			printf(", %.3f GB/s", (double)o->len * (double)r.iters_done /
			       (double)r.elapsed_ns);
		putchar('\n');
	}
	return (r.status & 0xff) ? 1 : 0;
}

int cmd_accel(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "dev", required_argument, NULL, 'D' }, { "peer", required_argument, NULL, 'p' },
		{ "src", required_argument, NULL, 's' }, { "dst", required_argument, NULL, 't' },
		{ "len", required_argument, NULL, 'l' }, { "pattern", required_argument, NULL, 'P' },
		{ "iters", required_argument, NULL, 'i' }, { "repeat", required_argument, NULL, 'r' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "code-offset", required_argument, NULL, 'C' },
		{ "nvme", required_argument, NULL, 'N' }, { "ns", required_argument, NULL, 'n' },
		{ "queue-depth", required_argument, NULL, 'Q' },
		{ "nvme-manager", required_argument, NULL, 'M' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	struct opts o = { .timeout_ms = 10000, .code_off = SMIO_ACCEL_CODE_TOP, .nsid = 1,
			  .qdepth = 64 };
	struct conn c = { .fd = -1 };
	enum sub s = S_LIST;
	const char *name;
	uint16_t bdf = 0;
	size_t i;
	int ch, rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	name = argv[1];
	for (i = 0; i < sizeof(sub_names) / sizeof(sub_names[0]); i++)
		if (!strcmp(name, sub_names[i]))
			break;
	if (i == sizeof(sub_names) / sizeof(sub_names[0])) {
		smio_unknown("smartio accel", "command", name, sub_names,
			     sizeof(sub_names) / sizeof(sub_names[0]), "see 'smartio accel --help'");
		return 2;
	}
	s = (enum sub)i;
	optind = 1;
	argc--;
	argv++;
	/* launch: the first non-option is KERNEL.so, the rest are the kernel's. */
	while ((ch = getopt_long(argc, argv, s == S_LAUNCH ? "+h" : "h", lopts, NULL)) != -1) {
		switch (ch) {
		case 'H': o.host_opt = optarg; break;
		case 'd': o.dir_opt = optarg; break;
		case 'D': o.dev = optarg; break;
		case 'p': o.peer = optarg; break;
		case 's': o.src = optarg; break;
		case 't': o.dst = optarg; break;
		case 'j': o.json = true; break;
		case 'l':
			if (parse_num("--len", optarg, 1ull << 40, &o.len))
				return 2;
			o.have_len = true;
			break;
		case 'P':
			if (parse_num("--pattern", optarg, UINT64_MAX, &o.pattern))
				return 2;
			o.have_pattern = true;
			break;
		case 'i':
			if (parse_num("--iters", optarg, 10000000, &o.iters) || !o.iters)
				return cli_err("--iters is 1..10000000"), 2;
			o.have_iters = true;
			break;
		case 'r':
			if (parse_num("--repeat", optarg, MAX_REPEAT, &o.repeat) || !o.repeat)
				return cli_err("--repeat is 1..%u", MAX_REPEAT), 2;
			break;
		case 'T':
			if (parse_num("--timeout", optarg, SMIO_ACCEL_LAUNCH_MAX_MS, &o.timeout_ms) ||
			    !o.timeout_ms)
				return cli_err("--timeout is 1..%u ms", SMIO_ACCEL_LAUNCH_MAX_MS), 2;
			break;
		case 'C':
			if (parse_num("--code-offset", optarg, UINT64_MAX - 1, &o.code_off))
				return 2;
			break;
		case 'N': o.nvme = optarg; break;
		case 'M': o.nvme_mgr = optarg; break;
		case 'n':
			if (parse_num("--ns", optarg, UINT32_MAX, &o.nsid) || !o.nsid)
				return cli_err("--ns is 1..%u", UINT32_MAX), 2;
			break;
		case 'Q':
			if (parse_num("--queue-depth", optarg, SMIO_ACCEL_QDEPTH_MAX, &o.qdepth) ||
			    o.qdepth < 2)
				return cli_err("--queue-depth is 2..%u", SMIO_ACCEL_QDEPTH_MAX), 2;
			break;
		case 'h': return usage(stdout), 0;
		default: return usage(stderr), 2;
		}
	}
	if (s != S_LAUNCH && (o.nvme || o.nvme_mgr || o.code_off != SMIO_ACCEL_CODE_TOP))
		return cli_err("--nvme, --nvme-manager and --code-offset go with accel launch"), 2;
	if (o.nvme && o.nvme_mgr)
		return cli_err("accel launch: --nvme or --nvme-manager, not both"), 2;
	if (s == S_LAUNCH) {
		if (optind >= argc)
			return cli_err("accel launch needs KERNEL.so"), 2;
		o.kargc = argc - optind;
		o.kargv = argv + optind;
		optind = argc;
	}
	if (optind < argc)
		return cli_err("accel %s: unexpected argument '%s'", name, argv[optind]), 2;
	/* What each command needs, checked before anything is sent. */
	if (s != S_LIST && !o.dev)
		return cli_err("accel %s needs --dev BDF|NAME", name), 2;
	if ((s == S_COPY || s == S_CHECKSUM) && !o.src)
		return cli_err("accel %s needs --src dev:OFF|ram:OFF|ADDR", name), 2;
	if ((s == S_COPY || s == S_FILL) && !o.dst)
		return cli_err("accel %s needs --dst dev:OFF|ram:OFF|ADDR", name), 2;
	if ((s == S_COPY || s == S_FILL || s == S_CHECKSUM) && !o.have_len)
		return cli_err("accel %s needs --len L", name), 2;
	if (s == S_FILL && !o.have_pattern)
		return cli_err("accel fill needs --pattern P (8 bytes, repeated)"), 2;
	if (s == S_PINGPONG && !o.peer)
		return cli_err("accel pingpong needs --peer BDF|NAME (another accelerator)"), 2;
	rc = conn_open(&c, &o);
	if (rc)
		return rc;
	if ((s != S_LIST && cli_parse_func(c.fd, o.dev, &bdf)) ||
	    (o.nvme && cli_parse_func(c.fd, o.nvme, &o.nvme_bdf))) {
		close(c.fd);
		return 2;
	}
	if (s == S_LIST)
		rc = do_list(&c);
	else if (s == S_BENCH)
		rc = do_bench(&c, bdf, o.json);
	else if (s == S_LAUNCH && o.nvme_mgr)
		rc = accel_launch_mgrq(&c, bdf, &o);
	else if (s == S_LAUNCH)
		rc = accel_do_launch(&c, bdf, &o);
	else
		rc = do_op(&c, s, bdf, &o);
	close(c.fd);
	if (rc < 0) {
		cli_err("host %u accel %s: %s", c.host, name, accel_strerror(rc));
		return 1;
	}
	return rc;
}
