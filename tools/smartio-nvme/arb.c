// SPDX-License-Identifier: MIT
/*
 * smartio-nvme: priority classes on the client side (hints, start
 * synchronisation of many benches) and `arbstat`, the controller's own
 * per-SQ fetch counts (smartio's vendor log page C1h, docs/devices.md).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "smartio/nvme_queue.h"
#include "snvtool.h"
#include "util/json_out.h"
#include "util/smio_time.h"

const char *tool_prio_hint(int rc, enum snv_prio asked)
{
	if (rc == -EACCES)
		return " (the manager's policy does not allow this class to this host: ask for a "
		       "lower one, or see the manager's --policy and its log)";
	if (rc == -ENOTSUP && asked != SNV_PRIO_DEFAULT)
		return " (the manager runs round robin - the controller has no weighted round "
		       "robin, or the manager was started with --arb rr: there are no classes; "
		       "leave out --prio)";
	return NULL;
}

void tool_sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * Wait until the go file exists, sleeping in poll() on an inotify watch of its
 * directory: many clients waiting to start together (bench/cluster.sh
 * --clients keeps 30 attached and idle) must cost no CPU, which a periodic
 * check does. The watch comes before the check, so a file created in between
 * is not missed. Without inotify: a check every 10 ms. Bounded: a go file
 * that never comes is a broken script, not a reason to hang.
 */
static int wait_go(const char *go)
{
	uint64_t deadline = smio_now_ms() + 120000;
	char *dir = strdup(go);
	int fd = dir ? inotify_init1(IN_CLOEXEC | IN_NONBLOCK) : -1;

	if (fd >= 0 && inotify_add_watch(fd, dirname(dir), IN_CREATE | IN_MOVED_TO | IN_ATTRIB) < 0) {
		close(fd);
		fd = -1;
	}
	while (access(go, F_OK)) {
		uint64_t now = smio_now_ms();
		char ev[4096];

		if (now >= deadline) {
			fprintf(stderr, "smartio-nvme: %s did not appear within 120 s\n", go);
			if (fd >= 0)
				close(fd);
			free(dir);
			return -1;
		}
		if (fd < 0) {
			tool_sleep_us(10000);
			continue;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, (int)(deadline - now)) > 0)
			while (read(fd, ev, sizeof(ev)) > 0)
				;               /* any change in the directory: check again */
	}
	if (fd >= 0)
		close(fd);
	free(dir);
	return 0;
}

int tool_ready_go(const char *ready, const char *go)
{
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f || fclose(f)) {
			fprintf(stderr, "smartio-nvme: cannot create %s: %s\n", ready, strerror(errno));
			return -1;
		}
	}
	return go ? wait_go(go) : 0;
}

static const char *qprio_name(unsigned p)
{
	static const char *const n[] = { "urgent", "high", "medium", "low" };

	return p < 4 ? n[p] : "?";
}

static int print_json(const struct smartio_nvme_arb_log *h,
		      const struct smartio_nvme_arb_log_sq *e, unsigned n)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	int rc = -ENOMEM;

	if (!o || !a)
		goto out;
	if (smio_json_add_str(o, "arbitration", h->ams == 1 ? "wrr" : "rr") ||
	    smio_json_add_uint(o, "burst", (h->arb & 7) == 7 ? 0 : 1u << (h->arb & 7)) ||
	    smio_json_add_uint(o, "weight_high", (h->arb >> 24) + 1) ||
	    smio_json_add_uint(o, "weight_medium", ((h->arb >> 16) & 0xff) + 1) ||
	    smio_json_add_uint(o, "weight_low", ((h->arb >> 8) & 0xff) + 1) ||
	    smio_json_add_uint(o, "slots", h->slots))
		goto out;
	for (unsigned i = 1; i < n; i++) {
		struct json_object *s;

		if (!e[i].valid)
			continue;
		s = json_object_new_object();
		if (!s || smio_json_add_uint(s, "sqid", e[i].sqid) ||
		    smio_json_add_str(s, "prio", qprio_name(e[i].prio)) ||
		    smio_json_add_uint(s, "fetched", e[i].fetched) ||
		    json_object_array_add(a, s)) {
			json_object_put(s);
			goto out;
		}
	}
	rc = smio_json_add(o, "sqs", a);
	a = NULL;
	if (!rc)
		rc = smio_json_print(stdout, o);
out:
	json_object_put(a);
	json_object_put(o);
	return rc;
}

int cmd_arbstat(int argc, char **argv)
{
	static const struct option lo[] = { TOOL_COMMON_LONGOPTS,
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	struct tool_common tc = { .backup_adapter = -1 };
	const struct smartio_nvme_arb_log *h;
	const struct smartio_nvme_arb_log_sq *e;
	size_t len = 16384;
	struct snv_client *c;
	bool json = false;
	uint8_t *buf;
	unsigned n;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "d:m:t:jh", lo, NULL)) != -1) {
		if ((rc = tool_common_opt(&tc, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		if (opt == 'j') {
			json = true;
			continue;
		}
		if (opt == 'h') {
			printf("usage: smartio-nvme arbstat [OPTIONS]\n"
			       "Show the controller's arbitration and, per I/O SQ, its class and the\n"
			       "commands fetched from it since it was created (the smartio NVMe model's\n"
			       "vendor log page C1h): shares as the controller saw them.\n\n"
			       TOOL_COMMON_HELP
			       "  -j, --json             one JSON object on stdout\n");
			return 0;
		}
		fprintf(stderr, "see `smartio-nvme arbstat --help`\n");
		return 2;
	}
	if (tool_open(&tc, &c))
		return 1;
	buf = calloc(1, len);
	rc = buf ? snv_get_log_page(c, SMARTIO_NVME_LOG_ARB, 0, buf, len) : -ENOMEM;
	snv_client_close(c);
	if (rc) {
		fprintf(stderr, "smartio-nvme arbstat: Get Log Page C1h failed (%d): %s\n", rc,
			rc > 0 ? "the controller has no smartio arbitration log" : strerror(-rc));
		free(buf);
		return 1;
	}
	h = (const struct smartio_nvme_arb_log *)buf;
	e = (const struct smartio_nvme_arb_log_sq *)(buf + sizeof(*h));
	n = h->nsq;
	if (n > (len - sizeof(*h)) / sizeof(*e))
		n = (unsigned)((len - sizeof(*h)) / sizeof(*e));
	if (json) {
		rc = print_json(h, e, n);
	} else {
		printf("arbitration %s", h->ams == 1 ? "weighted round robin with urgent class" :
		       "round robin");
		if ((h->arb & 7) == 7)
			printf(", burst unlimited");
		else
			printf(", burst %u", 1u << (h->arb & 7));
		if (h->ams == 1)
			printf(", weights high %u medium %u low %u", (h->arb >> 24) + 1,
			       ((h->arb >> 16) & 0xff) + 1, ((h->arb >> 8) & 0xff) + 1);
		printf(", slots %u\n", h->slots);
		for (unsigned i = 1; i < n; i++)
			if (e[i].valid)
				printf("sq %-4u %-7s fetched %llu\n", e[i].sqid,
				       h->ams == 1 ? qprio_name(e[i].prio) : "-",
				       (unsigned long long)e[i].fetched);
	}
	free(buf);
	return rc ? 1 : 0;
}
