/* SPDX-License-Identifier: MIT */
/* smartio fault: shared between the injector's files (fault*.c). */
#ifndef SMARTIO_CLI_FAULT_H
#define SMARTIO_CLI_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

#define FAULT_MAX_ENDS 2

/* One injected fault, as logged (DIR/faults.log, DIR/faults.jsonl) and printed. */
struct fault_ev {
	const char *kind;          /* link-down, link-up, crash, hang, resume, restart, reset */
	char target[96];           /* as the user named it: "cable lender-a.ntb0", "host 1" */
	char detail[256];          /* what was done, for people */
	uint32_t hosts[FAULT_MAX_ENDS];
	uint32_t nhosts;
	int64_t pid_old, pid_new;  /* daemons (crash, hang, restart); -1: none */
	uint32_t procs;            /* host processes signalled */
	uint64_t real_ns, mono_ns; /* when it was injected */
};

struct fault_opts {
	char dir[PATH_MAX];
	bool json;
	uint64_t for_ns;           /* --for; 0: not given */
};

/* An NTB adapter: host index/id and adapter index in the topology. */
struct fault_end {
	uint32_t host_index, host_id, ntb;
	char name[64];             /* "lender-a.ntb0" */
};

/* The instant of injection: both clocks. */
void fault_stamp(struct fault_ev *ev);
/* Append ev to the logs and print it (text or --json). 0, or 1 after an error. */
int fault_record(const struct fault_opts *o, const struct fault_ev *ev);
/* Sleep for ns, with progress on a terminal ("what" in 1.2 s). */
void fault_wait_ns(uint64_t ns, const char *what);

/* fault_link.c: link down|up|flap cable|adapter|port WHAT */
int fault_link(const struct fault_opts *o, int argc, char **argv);

#endif
