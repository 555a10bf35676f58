// SPDX-License-Identifier: MIT
/*
 * smartio-nvme devq: a queue pair of the shared NVMe for an accelerator kernel
 * (docs/nvme-driver.md, "Queues a device drives"). The SQ, the CQ and the data
 * range lie in the accelerator's BAR2 on this host; the tool creates the pair
 * through the manager, prints the kernel's nvme.* arguments, holds the pair
 * until SIGTERM/SIGINT, then deletes it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snvtool.h"

static void devq_help(void)
{
	printf("usage: smartio-nvme devq --bar2 ADDR --sq OFF --cq OFF --data OFF --data-len LEN\n"
	       "                         [--depth N] [--requester BDF] [--nsid N] [OPTIONS]\n"
	       "A queue pair for an accelerator kernel: SQ, CQ and data in the accelerator's\n"
	       "memory (BAR2 at bus address ADDR on this host, e.g. `smartio accel info --json`),\n"
	       "created through the manager. Prints the kernel's arguments (nvme.sq_db= ...\n"
	       "nvme.mem_bus=) on one line, holds the pair until SIGTERM or SIGINT, deletes it.\n\n"
	       TOOL_COMMON_HELP
	       "      --bar2 ADDR        the accelerator's BAR2 bus address on this host\n"
	       "      --sq OFF           the SQ's offset in it (page-aligned; depth x 64 bytes)\n"
	       "      --cq OFF           the CQ's offset (page-aligned; depth x 16 bytes)\n"
	       "      --data OFF         the data range the NVMe may write (page-aligned)\n"
	       "      --data-len LEN     its length (a page multiple)\n"
	       "      --depth N          entries per queue (default 32)\n"
	       "      --requester BDF    the accelerator's BDF on this host: its doorbell stores\n"
	       "                         cross the NTB, which must accept it as a requester\n"
	       "  -n, --nsid N           namespace (default 1)\n");
}

static int num(const char *what, const char *s, uint64_t *v)
{
	if (tool_parse_size(s, v)) {
		fprintf(stderr, "smartio-nvme devq: bad %s '%s'\n", what, s);
		return -1;
	}
	return 0;
}

int cmd_devq(int argc, char **argv)
{
	static const struct option lo[] = { TOOL_COMMON_LONGOPTS,
		{ "bar2", required_argument, NULL, 1 }, { "sq", required_argument, NULL, 2 },
		{ "cq", required_argument, NULL, 3 }, { "data", required_argument, NULL, 4 },
		{ "data-len", required_argument, NULL, 5 }, { "depth", required_argument, NULL, 6 },
		{ "requester", required_argument, NULL, 7 },
		{ "nsid", required_argument, NULL, 'n' }, { "help", no_argument, NULL, 'h' },
		{ 0 } };
	struct tool_common tc = { .backup_adapter = -1 };
	uint64_t v[7] = { 0 }, depth = 32, nsid = 1;
	bool have[7] = { false };
	struct snv_devq_info info;
	struct snv_ns_info ni;
	struct snv_client *c;
	struct snv_devq *q = NULL;
	struct snv_buf *data = NULL;
	unsigned shift = 0;
	int requester = -1;
	sigset_t set;
	int opt, rc, sig;

	while ((opt = getopt_long(argc, argv, "d:m:t:n:h", lo, NULL)) != -1) {
		if ((rc = tool_common_opt(&tc, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		switch (opt) {
		case 'h': devq_help(); return 0;
		case 1: case 2: case 3: case 4: case 5:
			if (num("address or offset", optarg, &v[opt]))
				return 2;
			have[opt] = true;
			break;
		case 6: if (num("depth", optarg, &depth)) return 2; break;
		case 7: {
			unsigned b, d, f;
			char end;

			if (sscanf(optarg, "%x:%x.%x%c", &b, &d, &f, &end) != 3 || b > 0xff ||
			    d > 0x1f || f > 7) {
				fprintf(stderr, "smartio-nvme devq: --requester '%s' should be a "
					"BDF like 02:00.0\n", optarg);
				return 2;
			}
			requester = (int)(b << 8 | d << 3 | f);
			break;
		}
		case 'n': if (num("namespace", optarg, &nsid)) return 2; break;
		default:
			fprintf(stderr, "see `smartio-nvme devq --help`\n");
			return 2;
		}
	}
	if (optind < argc || !have[1] || !have[2] || !have[3] || !have[4] || !v[5] ||
	    depth < 2 || depth > 4096 || (v[1] | v[2] | v[3] | v[4] | v[5]) % 4096) {
		fprintf(stderr, "smartio-nvme devq: give --bar2, --sq, --cq, --data and --data-len, "
			"page-aligned (and --depth 2..4096); see `smartio-nvme devq --help`\n");
		return 2;
	}
	if (tool_open(&tc, &c))
		return 1;
	rc = snv_ns_info(c, (uint32_t)nsid, &ni);
	if (rc) {
		fprintf(stderr, "smartio-nvme devq: namespace %" PRIu64 ": %s\n", nsid,
			rc < 0 ? strerror(-rc) : "not active");
		goto out;
	}
	while ((1u << shift) < ni.lba_size)
		shift++;
	/* Block the signals first: the holder waits for them with sigwait. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	rc = snv_buf_attach_bus(c, v[1] + v[4], v[5], &data);
	if (rc) {
		fprintf(stderr, "smartio-nvme devq: data range: %s\n", strerror(-rc));
		goto out;
	}
	rc = snv_devq_create(c, (unsigned)depth, v[1] + v[2], v[1] + v[3], requester, &q,
			     &info);
	if (rc) {
		fprintf(stderr, "smartio-nvme devq: queue pair: %s%s\n", strerror(-rc),
			tool_qp_hint(rc, SNV_PLACE_DEFAULT));
		goto out;
	}
	/* nvme.mem_bus: offset 0 of the accelerator's memory as the NVMe sees it (PRPs
	 * are valid inside the data range only). */
	printf("nvme.sq_db=%#" PRIx64 " nvme.cq_db=%#" PRIx64 " nvme.depth=%u nvme.nsid=%" PRIu64
	       " nvme.lba_shift=%u nvme.sq=%#" PRIx64 " nvme.cq=%#" PRIx64 " nvme.mem_bus=%#" PRIx64
	       "\n", info.sq_db_bus, info.cq_db_bus, info.depth, nsid, shift, v[2], v[3],
	       snv_buf_ioaddr(data, 0) - v[4]);
	fflush(stdout);
	fprintf(stderr, "smartio-nvme devq: queue pair %u held; SIGTERM deletes it\n", info.qid);
	sigwait(&set, &sig);
	rc = snv_devq_delete(q);
	q = NULL;
	if (rc)
		fprintf(stderr, "smartio-nvme devq: delete: %s\n", strerror(-rc));
out:
	if (q)
		snv_devq_delete(q);
	snv_buf_free(data);
	snv_client_close(c);
	return rc ? 1 : 0;
}
