/* SPDX-License-Identifier: MIT */
/* The smartio command-line tool: shared helpers for its subcommands. */
#ifndef SMARTIO_CLI_H
#define SMARTIO_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "smartio/proto.h"
#include "smartio/topology.h"
#include "util/json_out.h"

#define CLI_TIMEOUT_MS 5000

struct cli_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);   /* argv[0] is the subcommand name */
};

/* The cluster directory: --dir value if given, else the convention. */
int cli_cluster_dir(const char *opt, char *buf, size_t len);
/* Load DIR/topology.yaml of a running cluster (prints an actionable error). */
int cli_cluster_topo(const char *dir, struct topo **t);
/* Connect to host N of the cluster in dir and say HELLO with a role. Returns fd or -errno. */
int cli_connect(const char *dir, uint32_t host, uint32_t role);
/*
 * --host/--dir (or the environment) to a connected socket that has said HELLO
 * in role; prints what went wrong. Returns the fd, -EINVAL for a usage error,
 * or another negative errno.
 */
int cli_open_host(const char *host_opt, const char *dir_opt, uint32_t role, uint32_t *host,
		  char *dir, size_t dirlen);
/*
 * For a question about the whole cluster, which any host's daemon answers:
 * --host or $SMARTIO_HOST if given (as cli_open_host), else the first host
 * in the topology whose daemon answers (verbose: say which on stderr).
 */
int cli_open_any(const char *host_opt, const char *dir_opt, uint32_t role, bool verbose,
		 uint32_t *host, char *dir, size_t dirlen);
/* DIR/topology.yaml exists: a cluster was started there and not taken down. */
bool cli_cluster_running(const char *dir);
/* --host N or $SMARTIO_HOST. Prints an error and returns -EINVAL if neither. */
int cli_host_arg(const char *opt, uint32_t *host);
int cli_parse_u64(const char *s, uint64_t *v);       /* decimal, 0x hex, or K/M/G sizes */
int cli_parse_bdf(const char *s, uint16_t *bdf);     /* "BB:DD.F" or "DDDD:BB:DD.F" */
/* "10ms", "1.5s", "2" (seconds): ns, us, ms, s, m, h; fault.c. */
int cli_parse_duration(const char *s, uint64_t *ns);
/* o and a newline on stdout (compact, util/json_out.h); 0, or -errno said with cli_err. */
int cli_json_print(struct json_object *o);
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Error text of a daemon reply or transport status, with a hint. */
const char *cli_strerror(int rc);

/* names.c: "cpu" | BDF | function name; ADDR | NAME:barN[+OFF] (queried on fd). */
int cli_parse_func(int fd, const char *s, uint16_t *bdf);
int cli_parse_addr(int fd, const char *s, uint64_t *addr);

/* devname.c: the lending pool from any live host (*p malloc'ed); a device
 * argument (FDID, NAME or LENDER:NAME) to its FDID (borrower >= 0: a NAME
 * several lenders have means the one that host borrowed). 0, -EINVAL for an
 * argument that names nothing or several (said: a usage error), or -errno. */
int cli_lend_pool(const char *host_opt, const char *dir_opt, bool verbose,
		  struct smio_lend_pool **p);
int cli_resolve_fdid(const char *arg, const char *dir_opt, int borrower, uint32_t *fdid);

/* info_json.c: --json of ntb info and iommu faults; 0 or -errno (said). */
int cli_ntb_info_json(uint32_t host, const struct smio_ntb_info *ni);
int cli_iommu_faults_json(uint32_t host, const struct smio_iommu_faults *f);
/* topo_json.c: smartio topo --json; 0 or -errno (said). */
int cli_topo_json(const struct topo *t);

/* tools.c: a sibling program (smartiod, smartio-nvme) next to this executable,
 * or at its place in a build tree; -ENOENT if neither. */
int cli_find_tool(const char *name, char *buf, size_t len);
int cmd_cluster(int argc, char **argv);
/* cluster_timing.c: the YAML text's top-level timing: key set to mode (the
 * old one dropped; put after version:); *yaml replaced. 0, -EINVAL (no
 * version: line), -ENOMEM. */
int cli_topo_set_timing(char **yaml, size_t *len, const char *mode);
/* Stop host's daemon (hard: SIGKILL) and start a fresh one in the running
 * cluster in dir; 0, or 1 after saying what failed. */
int cli_cluster_restart(const char *dir, uint32_t host, bool hard, pid_t *old_pid,
			pid_t *new_pid);
int cmd_cluster_logs(int argc, char **argv);   /* cluster_logs.c: argv[0] "logs" */
int cmd_fault(int argc, char **argv);    /* fault.c: the fault injector */
int cmd_exec(int argc, char **argv);
/* Remove DIR/procs (the records of processes bound to hosts by smartio exec). */
void cli_exec_records_clear(const char *dir);
int cmd_lspci(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_sriov(int argc, char **argv);
int cmd_czodiac(int argc, char **argv);
int cmd_ntb(int argc, char **argv);
int cmd_iommu(int argc, char **argv);
int cmd_accel(int argc, char **argv);
int cmd_nvme(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_predict_figure(int argc, char **argv);   /* predict_figure.c */
int cmd_mount(int argc, char **argv);    /* mount.c (FUSE) or mount_nofuse.c */
int cmd_lend(int argc, char **argv);     /* lend.c: devices, borrow, return */
int cmd_umount(int argc, char **argv);
int cmd_plan(int argc, char **argv);     /* plan.c: the placement planner */
/* plan.c: the FDID `borrow --best CLS [--for WORK]` takes: 0, CLI_BEST_NOTHING
 * (host N owns or already borrows the best: said), or an exit status (said). */
#define CLI_BEST_NOTHING 3
int cli_plan_best(const char *cls, const char *work, const char *host_opt,
		  const char *dir_opt, uint32_t *fdid);
int cmd_web(int argc, char **argv);      /* web.c (libmicrohttpd) or web_nomhd.c */
int cmd_top(int argc, char **argv);      /* top.c */
int cmd_diag(int argc, char **argv);     /* diag.c: counters (stats.c) */
int cmd_events(int argc, char **argv);   /* diag.c: the daemons' event logs */
int cmd_vm(int argc, char **argv);       /* vm.c: QEMU virtual machines (docs/vm.md) */

/* nvme_msg.c: encode an SMIO_NVME_ADMIN (SQE with opcode, NSID, CDW10; data_len
 * bytes back from the device) or SMIO_NVME_IO request into req; returns its length. */
uint32_t nvme_msg_admin(void *req, uint16_t bdf, uint8_t opcode, uint32_t nsid, uint32_t cdw10,
			uint32_t data_len);
uint32_t nvme_msg_io(void *req, uint16_t bdf, uint8_t op, uint32_t nsid, uint64_t slba,
		     uint32_t nlb, const void *wdata, uint32_t wlen);

#endif
