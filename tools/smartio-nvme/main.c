// SPDX-License-Identifier: MIT
/*
 * smartio-nvme: the distributed NVMe driver's tool (docs/nvme-driver.md).
 * Subcommands: manager, identify, dd, bench, arbstat.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvme/types.h>

#include "sisci_api.h"
#include "snvtool.h"
#include "util/cli_conv.h"
#include "util/json_out.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio-nvme COMMAND [OPTIONS]\n"
		"A userspace NVMe driver that shares one controller among many hosts at queue level.\n"
		"Run as a program of a smartio host: smartio exec --host N -- smartio-nvme ...\n\n"
		"commands:\n"
		"  manager    reset the controller and serve clients (run one per controller)\n"
		"  identify   show the controller and its namespaces (through the manager)\n"
		"  dd         read, write or verify blocks\n"
		"  bench      measure IOPS, bandwidth and latency percentiles\n"
		"  arbstat    the controller's arbitration and commands fetched per queue\n"
		"  devq       a queue pair in an accelerator's memory for its kernel\n\n"
		"`smartio-nvme COMMAND --help` shows a command's options; --version the version.\n"
		"Usage errors exit 2, failures 1.\n");
}

const char *tool_qp_hint(int rc, enum snv_place cq)
{
	if (rc == -ENOTSUP)
		return cq == SNV_PLACE_CMB ? " (CQs cannot be in the CMB: not implemented, the "
			"controller's CMBSZ.CQS is 0)" : " (the controller has no CMB for SQs)";
	if (rc == -ENODEV || rc == -EBUSY)
		return " (--sq accel:DEV: the accelerator cannot be borrowed shared, or the manager "
			"could not borrow it; is it lent exclusively, or no accelerator?)";
	if (rc == -ENOBUFS)
		return " (the controller's CMB is full: other clients' SQs use it)";
	if (rc == -ENOSPC)
		return " (all I/O queues are in use)";
	if (rc == -EADDRNOTAVAIL)
		return cq == SNV_PLACE_DEVICE ?
			" (the lender's NTB has no free window onto this host's memory: other "
			"clients' queues and buffers use them all)" :
			" (the lender's NTB has no free window onto this host's memory: other "
			"clients' queues and buffers use them all; --cq device puts the CQ in the "
			"lender's memory, where it needs none)";
	return "";
}

int tool_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/* A device: its fabric device ID, NAME or NODE:NAME; 1, or -1 (said why). */
static int device_id(const char *arg, uint32_t *fdid)
{
	/* NAME or NODE:NAME, looked up in the pool. */
	sci_smartio_device_info_t f;
	const char *name = arg, *colon = strchr(arg, ':');
	unsigned int ids[4], n;
	sci_error_t se;
	sci_desc_t sd;
	uint64_t v;

	if (tool_parse_size(arg, &v) == 0 && v && v <= 0xffffffffu) {
		*fdid = (uint32_t)v;
		return 1;
	}
	memset(&f, 0, sizeof(f));
	if (colon) {
		f.nodeid = (unsigned)strtoul(arg, NULL, 0);
		name = colon + 1;
	}
	snprintf(f.user_name, sizeof(f.user_name), "%s", name);
	SCIInitialize(0, &se);
	if (!se)
		SCIOpen(&sd, 0, &se);
	if (se) {
		fprintf(stderr, "smartio-nvme: SISCI: %s (is the cluster up, and is "
			"SMARTIO_HOST set? use `smartio exec --host N --`)\n", SCIGetErrorString(se));
		return -1;
	}
	n = SCIGetDeviceList(sd, ids, 4, &f, 0, &se);
	SCIClose(sd, 0, &se);
	if (n != 1) {
		fprintf(stderr, "smartio-nvme: device '%s' %s: see `smartio lspci` for "
			"names, or give NODE:NAME or the fabric device ID\n", arg,
			n ? "is ambiguous" : "not found");
		return -1;
	}
	*fdid = ids[0];
	return 1;
}

int tool_place_arg(const char *cmd, const char *s, bool sq, struct snv_qpair_opts *qo)
{
	static const char *names[] = { "default", "device", "host", "cmb" };
	enum snv_place *p = sq ? &qo->sq_place : &qo->cq_place;

	for (unsigned i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*p = (enum snv_place)i;
			if (sq)
				qo->sq_accel = 0;
			return 0;
		}
	/* accel:DEV: the SQ in that accelerator's memory (fig. 34, "SQ in the lender's GPU") */
	if (sq && !strncmp(s, "accel:", 6) && s[6]) {
		if (device_id(s + 6, &qo->sq_accel) < 0)
			return -1;
		*p = SNV_PLACE_ACCEL;
		return 0;
	}
	fprintf(stderr, "smartio-nvme %s: bad placement '%s' (default, device, host, cmb%s)\n",
		cmd, s, sq ? ", accel:DEV" : "");
	return -1;
}

int tool_common_opt(struct tool_common *tc, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'd':
		return device_id(arg, &tc->fdid);
	case 'm':
		if (tool_parse_size(arg, &v) || v > 0xffffffffu) {
			fprintf(stderr, "smartio-nvme: bad node ID '%s'\n", arg);
			return -1;
		}
		tc->manager_node = (uint32_t)v;
		return 1;
	case 't':
		if (tool_parse_size(arg, &v) || !v || v > 3600000) {
			fprintf(stderr, "smartio-nvme: bad timeout '%s' (milliseconds)\n", arg);
			return -1;
		}
		tc->timeout_ms = (unsigned)v;
		return 1;
	case TOOL_OPT_BACKUP:
		if (tool_parse_size(arg, &v) || v > 255) {
			fprintf(stderr, "smartio-nvme: bad adapter '%s' (0..255; `smartio topo` "
				"lists a host's adapters)\n", arg);
			return -1;
		}
		tc->backup_adapter = (int)v;
		return 1;
	default:
		return 0;
	}
}

int tool_resolve(struct tool_common *tc)
{
	sci_smartio_device_info_t f;
	unsigned int ids[64], n;
	sci_error_t se;
	sci_desc_t sd;

	if (tc->fdid)
		return 0;
	SCIInitialize(0, &se);
	if (!se)
		SCIOpen(&sd, 0, &se);
	if (se) {
		fprintf(stderr, "smartio-nvme: SISCI: %s (is the cluster up, and is SMARTIO_HOST "
			"set? use `smartio exec --host N --`)\n", SCIGetErrorString(se));
		return -1;
	}
	memset(&f, 0, sizeof(f));
	f.pci_class = 0x010802;
	n = SCIGetDeviceList(sd, ids, 64, &f, 0, &se);
	SCIClose(sd, 0, &se);
	if (!n) {
		fprintf(stderr, "smartio-nvme: no NVMe controller in the device pool (see `smartio "
			"lspci`); give one with --device\n");
		return -1;
	}
	tc->fdid = ids[0];
	return 0;
}

int tool_open(struct tool_common *tc, struct snv_client **c)
{
	struct snv_client_opts o = { .manager_node = tc->manager_node,
				     .timeout_ms = tc->timeout_ms,
				     .multipath = tc->backup_adapter >= 0,
				     .backup_adapter = tc->backup_adapter >= 0 ?
						       (unsigned)tc->backup_adapter : 0 };
	char err[256] = "";
	int rc;

	if (tool_resolve(tc))
		return -1;
	o.fdid = tc->fdid;
	rc = snv_client_open(&o, c, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "smartio-nvme: %s\n", err[0] ? err : strerror(-rc));
		return -1;
	}
	return 0;
}

/* ---- manager ---- */

static struct snv_manager *the_manager;

static void on_signal(int sig)
{
	(void)sig;
	if (the_manager)
		snv_manager_stop(the_manager);
}

static void log_line(void *arg, const char *line)
{
	if (!*(bool *)arg)
		fprintf(stderr, "smartio-nvme manager: %s\n", line);
}

static int cmd_manager(int argc, char **argv)
{
	static const struct option lo[] = { TOOL_COMMON_LONGOPTS,
		{ "heartbeat", required_argument, NULL, 'H' },
		{ "max-clients", required_argument, NULL, 'c' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "policy", required_argument, NULL, 'p' },
		{ "weights", required_argument, NULL, 'W' },
		{ "burst", required_argument, NULL, 'B' },
		{ "arb", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	struct tool_common tc = { .backup_adapter = -1 };
	struct snv_manager_opts o = { 0 };
	struct snv_manager_stats st;
	const char *ready = NULL;
	struct sigaction sa;
	bool quiet = false;
	char err[256] = "";
	uint64_t v;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "d:m:t:H:c:r:qp:W:B:A:h", lo, NULL)) != -1) {
		if ((rc = tool_common_opt(&tc, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		switch (opt) {
		case 'H':
		case 'c':
			if (tool_parse_size(optarg, &v) || !v || v > 100000) {
				fprintf(stderr, "smartio-nvme manager: bad value '%s'\n", optarg);
				return 2;
			}
			if (opt == 'H')
				o.heartbeat_ms = (unsigned)v;
			else
				o.max_clients = (unsigned)v;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'p':
			o.policy = optarg;
			break;
		case 'W':
			if (sscanf(optarg, "%u:%u:%u%c", &o.weight_high, &o.weight_medium,
				   &o.weight_low, (char[1]){ 0 }) != 3 || !o.weight_high ||
			    !o.weight_medium || !o.weight_low) {
				fprintf(stderr, "smartio-nvme manager: bad --weights '%s' (HIGH:MEDIUM:"
					"LOW, each 1..256)\n", optarg);
				return 2;
			}
			break;
		case 'B':
			if (!strcmp(optarg, "unlimited")) {
				o.burst = SNV_BURST_UNLIMITED;
			} else if (tool_parse_size(optarg, &v) || !v || v > 64) {
				fprintf(stderr, "smartio-nvme manager: bad --burst '%s' (1, 2, 4, .., "
					"64 or unlimited)\n", optarg);
				return 2;
			} else {
				o.burst = (unsigned)v;
			}
			break;
		case 'A':
			if (strcmp(optarg, "rr") && strcmp(optarg, "wrr")) {
				fprintf(stderr, "smartio-nvme manager: bad --arb '%s' (rr, wrr)\n",
					optarg);
				return 2;
			}
			o.round_robin = !strcmp(optarg, "rr");
			break;
		case 'h':
			printf("usage: smartio-nvme manager [OPTIONS]\n"
			       "Borrow the controller exclusively, reset it, keep its admin queues in the\n"
			       "lender's RAM and serve clients until SIGINT/SIGTERM. Run it on the lender's\n"
			       "host (clients look for it there unless given --manager-node).\n\n"
			       TOOL_COMMON_HELP
			       "  -H, --heartbeat MS     client liveness check period (default 250)\n"
			       "  -c, --max-clients N    sessions at once (default 64)\n"
			       "  -r, --ready-file PATH  create PATH once clients can connect\n"
			       "  -q, --quiet            no event log on stderr\n"
			       "  -p, --policy LIST      priority class per client host: comma-separated\n"
			       "                         host:N=CLASS, node:N=CLASS (SISCI node ID) and\n"
			       "                         default=CLASS; CLASS urgent, high, medium, low.\n"
			       "                         A host's queue pairs get its class, or a lower one\n"
			       "                         they ask for; a higher one is refused.\n"
			       "                         CLASS@IOPS also limits each of the host's queue\n"
			       "                         pairs to IOPS commands/s (paced by the client\n"
			       "                         library: cooperative)\n"
			       "                         (default: every host medium)\n"
			       "  -W, --weights H:M:L    commands per turn of the high, medium and low\n"
			       "                         classes, 1..256 each (default 8:4:1)\n"
			       "  -B, --burst N          commands per SQ per visit: 1, 2, 4, .., 64 or\n"
			       "                         unlimited (default 8)\n"
			       "  -A, --arb rr|wrr       arbitration (default wrr: weighted round robin with\n"
			       "                         urgent class when the controller has it, else rr)\n");
			return 0;
		default:
			fprintf(stderr, "see `smartio-nvme manager --help`\n");
			return 2;
		}
	}
	if (tool_resolve(&tc))
		return 1;
	o.fdid = tc.fdid;
	o.log = log_line;
	o.log_arg = &quiet;
	rc = snv_manager_start(&o, &the_manager, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "smartio-nvme manager: %s\n", err[0] ? err : strerror(-rc));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f || fclose(f)) {
			fprintf(stderr, "smartio-nvme manager: cannot create %s: %s\n", ready,
				strerror(errno));
			snv_manager_destroy(the_manager);
			return 1;
		}
	}
	rc = snv_manager_run(the_manager, -1);
	snv_manager_get_stats(the_manager, &st);
	if (!quiet)
		fprintf(stderr, "smartio-nvme manager: stopping: %llu requests, %llu refused, "
			"%llu queue pairs reclaimed, %u still handed out to %u clients\n",
			(unsigned long long)st.requests, (unsigned long long)st.refused,
			(unsigned long long)st.reclaimed, st.queues, st.clients);
	snv_manager_destroy(the_manager);
	the_manager = NULL;
	if (rc) {
		fprintf(stderr, "smartio-nvme manager: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}

/* ---- identify ---- */

static void trimmed(const char *label, const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || !s[n - 1]))
		n--;
	printf("%-12s %.*s\n", label, (int)n, s);
}

/* id's field without its padding, as a JSON string. */
static int add_trimmed(struct json_object *o, const char *key, const char *s, size_t n)
{
	char buf[64];

	while (n && (s[n - 1] == ' ' || !s[n - 1]))
		n--;
	snprintf(buf, sizeof(buf), "%.*s", (int)n, s);
	return smio_json_add_str(o, key, buf);
}

/* identify --json (docs/cli.md): the text's facts; io_queues null if not asked. */
static int identify_json(struct snv_client *c, uint32_t fdid, const struct nvme_id_ctrl *id,
			 int nq_rc, uint32_t nq)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	char dev[16];
	int rc = -ENOMEM;

	snprintf(dev, sizeof(dev), "0x%08x", fdid);
	if (!o || !arr || smio_json_add_str(o, "fdid", dev) ||
	    add_trimmed(o, "model", id->mn, sizeof(id->mn)) ||
	    add_trimmed(o, "serial", id->sn, sizeof(id->sn)) ||
	    add_trimmed(o, "firmware", id->fr, sizeof(id->fr)) ||
	    smio_json_add_uint(o, "max_transfer_kib", id->mdts ? 4u << id->mdts : 0) ||
	    (nq_rc ? smio_json_add_null(o, "io_queues") :
	     smio_json_add_uint(o, "io_queues", ((nq & 0xffff) < (nq >> 16) ? (nq & 0xffff) :
						 (nq >> 16)) + 1)) ||
	    smio_json_add_uint(o, "namespaces", id->nn))
		goto out;
	for (uint32_t ns = 1; ns <= id->nn && ns <= 64; ns++) {
		struct snv_ns_info ni;
		struct json_object *e;

		if (snv_ns_info(c, ns, &ni))
			continue;
		e = json_object_new_object();
		if (!e || smio_json_add_uint(e, "nsid", ns) || smio_json_add_uint(e, "blocks", ni.nlb) ||
		    smio_json_add_uint(e, "block_size", ni.lba_size)) {
			json_object_put(e);
			goto out;
		}
		if (smio_json_push(arr, e))
			goto out;
	}
	rc = smio_json_add(o, "ns", arr);
	arr = NULL;
	if (!rc)
		rc = smio_json_print(stdout, o);
out:
	json_object_put(arr);
	json_object_put(o);
	return rc;
}

static int cmd_identify(int argc, char **argv)
{
	static const struct option lo[] = { TOOL_COMMON_LONGOPTS,
		{ "json", no_argument, NULL, 'j' },
		{ "multicast", required_argument, NULL, 'M' },
		{ "raw", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' }, { 0 } };
	struct tool_common tc = { .backup_adapter = -1 };
	struct nvme_id_ctrl *id;
	struct snv_client *c;
	uint32_t nq = 0;
	bool json = false;
	long group = -1;
	const char *raw = NULL;
	char *end;
	int opt, rc, nq_rc;

	while ((opt = getopt_long(argc, argv, "d:m:t:jh", lo, NULL)) != -1) {
		if ((rc = tool_common_opt(&tc, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		if (opt == 'j') {
			json = true;
			continue;
		}
		if (opt == 'R') {
			raw = optarg;
			continue;
		}
		if (opt == 'M') {
			group = strtol(optarg, &end, 0);
			if (*end || group < 0 || group > 255) {
				fprintf(stderr, "smartio-nvme identify: --multicast takes a group "
					"0..255, not '%s'\n", optarg);
				return 2;
			}
			continue;
		}
		if (opt == 'h') {
			printf("usage: smartio-nvme identify [OPTIONS]\n"
			       "Identify the controller and its namespaces through the manager.\n\n"
			       TOOL_COMMON_HELP
			       "  -j, --json             one JSON object on stdout\n"
			       "      --multicast GROUP  the controller writes its Identify Controller\n"
			       "                         data to multicast group GROUP (every SISCI\n"
			       "                         broadcast segment subscribed to it gets the\n"
			       "                         same 4 KiB); nothing is printed but the outcome\n"
			       "      --raw FILE         also write the 4 KiB Identify Controller data\n"
			       "                         to FILE (to compare with multicast copies)\n");
			return 0;
		}
		fprintf(stderr, "see `smartio-nvme identify --help`\n");
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "smartio-nvme identify: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (group >= 0 && (json || raw)) {
		fprintf(stderr, "smartio-nvme identify: --multicast prints only the outcome; "
			"--json and --raw go with a unicast Identify\n");
		return 2;
	}
	if (tool_open(&tc, &c))
		return 1;
	if (group >= 0) {
		rc = snv_identify_ctrl_mcast(c, (uint32_t)group);
		snv_client_close(c);
		if (rc) {
			fprintf(stderr, "smartio-nvme identify: Identify Controller to multicast "
				"group %ld failed (%d)\n", group, rc);
			return 1;
		}
		printf("Identify Controller written to multicast group %ld\n", group);
		return 0;
	}
	id = malloc(sizeof(*id));
	rc = id ? snv_identify_ctrl(c, id) : -ENOMEM;
	if (rc) {
		fprintf(stderr, "smartio-nvme identify: Identify Controller failed (%d)\n", rc);
		free(id);
		snv_client_close(c);
		return 1;
	}
	if (raw) {
		FILE *f = fopen(raw, "wb");
		bool ok = f && fwrite(id, 1, sizeof(*id), f) == sizeof(*id);

		if (f && fclose(f))
			ok = false;
		if (!ok) {
			fprintf(stderr, "smartio-nvme identify: cannot write %s\n", raw);
			free(id);
			snv_client_close(c);
			return 1;
		}
	}
	nq_rc = snv_get_features(c, NVME_FEAT_FID_NUM_QUEUES, 0, &nq);
	if (json) {
		rc = identify_json(c, tc.fdid, id, nq_rc, nq);
		if (rc)
			fprintf(stderr, "smartio-nvme identify: %s\n", strerror(-rc));
		free(id);
		snv_client_close(c);
		return rc ? 1 : 0;
	}
	printf("%-12s %#x\n", "device", tc.fdid);
	trimmed("model", id->mn, sizeof(id->mn));
	trimmed("serial", id->sn, sizeof(id->sn));
	trimmed("firmware", id->fr, sizeof(id->fr));
	printf("%-12s %u KiB\n", "max transfer", id->mdts ? 4u << id->mdts : 0);
	if (nq_rc == 0)
		printf("%-12s %u\n", "I/O queues", ((nq & 0xffff) < (nq >> 16) ? (nq & 0xffff) :
						     (nq >> 16)) + 1);
	printf("%-12s %u\n", "namespaces", id->nn);
	for (uint32_t ns = 1; ns <= id->nn && ns <= 64; ns++) {
		struct snv_ns_info ni;

		if (snv_ns_info(c, ns, &ni))
			continue;
		printf("  ns %-3u     %llu blocks of %u bytes (%llu MiB)\n", ns,
		       (unsigned long long)ni.nlb, ni.lba_size,
		       (unsigned long long)(ni.nlb * ni.lba_size >> 20));
	}
	free(id);
	snv_client_close(c);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "manager", "identify", "dd", "bench", "arbstat",
					       "devq" };

	if (smio_wants_version(argc, argv)) {
		smio_print_version(stdout, "smartio-nvme");
		return 0;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "manager"))
		return cmd_manager(argc - 1, argv + 1);
	if (!strcmp(argv[1], "identify"))
		return cmd_identify(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dd"))
		return cmd_dd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "arbstat"))
		return cmd_arbstat(argc - 1, argv + 1);
	if (!strcmp(argv[1], "devq"))
		return cmd_devq(argc - 1, argv + 1);
	smio_unknown("smartio-nvme", "command", argv[1], names, sizeof(names) / sizeof(names[0]),
		     "'smartio-nvme --help' lists the commands");
	return 2;
}
