/* SPDX-License-Identifier: MIT */
/* smartio-nvme: shared declarations of the tool's subcommands. */
#ifndef SNVTOOL_H
#define SNVTOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "smartio/nvme.h"

struct tool_common {
	uint32_t fdid;
	uint32_t manager_node;
	unsigned timeout_ms;
	int backup_adapter;       /* -1: no backup path */
};

#define TOOL_OPT_BACKUP 0x1001

/* Parse a common option (--device, --manager-node, --timeout); returns 1 if
 * it was one (consuming optarg), 0 if not, -1 on a bad value. */
int tool_common_opt(struct tool_common *tc, int opt, const char *arg);
/* Resolve the device (default: the first NVMe controller in the pool). */
int tool_resolve(struct tool_common *tc);
int tool_open(struct tool_common *tc, struct snv_client **c);
int tool_parse_size(const char *s, uint64_t *out);
/* --sq/--cq PLACE of command cmd into qo (sq: the SQ's, which may also be
 * accel:DEV); 0, or -1 (said why). */
int tool_place_arg(const char *cmd, const char *s, bool sq, struct snv_qpair_opts *qo);
/* Why snv_qpair_create failed, in words ("" if nothing to add). */
const char *tool_qp_hint(int rc, enum snv_place cq);

/* Why snv_qpair_create failed for a class asked for (NULL: not about classes). */
const char *tool_prio_hint(int rc, enum snv_prio asked);
/* --ready-file/--go-file: create ready (if given), then wait for go (if given). */
int tool_ready_go(const char *ready, const char *go);
void tool_sleep_us(uint64_t us);

int cmd_dd(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_arbstat(int argc, char **argv);
int cmd_devq(int argc, char **argv);

#define TOOL_COMMON_HELP \
	"  -d, --device DEV       controller: fabric device ID (0x80100), NAME or NODE:NAME\n" \
	"                         (default: the first NVMe controller in the pool)\n" \
	"  -m, --manager-node N   node ID of the manager's host (default: the lender's)\n" \
	"  -t, --timeout MS       per request to the manager (default 5000)\n" \
	"      --backup-adapter N keep a backup queue pair through local adapter N and\n" \
	"                         fail over to it when the primary path fails\n"

#define TOOL_COMMON_LONGOPTS \
	{ "device", required_argument, NULL, 'd' }, \
	{ "manager-node", required_argument, NULL, 'm' }, \
	{ "timeout", required_argument, NULL, 't' }, \
	{ "backup-adapter", required_argument, NULL, TOOL_OPT_BACKUP }

#endif
