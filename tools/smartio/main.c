// SPDX-License-Identifier: MIT
/* smartio: manage and inspect an emulated PCIe/NTB cluster. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util/cli_conv.h"

static const struct cli_cmd cmds[] = {
	{ "cluster", "start, stop and check a cluster (up | down | status | restart | logs)",
	  cmd_cluster },
	{ "fault", "inject a fault: link down/flap, host crash/hang, restart, device FLR", cmd_fault },
	{ "exec", "run a command as a process of host N", cmd_exec },
	{ "lspci", "list a host's PCI functions in lspci's formats", cmd_lspci },
	{ "topo", "show the cluster topology (text or Graphviz)", cmd_topo },
	{ "route", "resolve an address from a requester and show the hop path", cmd_route },
	{ "ntb", "inspect and program an NTB adapter (LUT, requester IDs, link)", cmd_ntb },
	{ "iommu", "inspect and program a host's IOMMU", cmd_iommu },
	{ "accel", "use a host's accelerators through its driver (copy, pingpong, bench)", cmd_accel },
	{ "nvme", "use a host's NVMe drives through its driver (list, identify, read, write)", cmd_nvme },
	{ "predict", "predict latency and bandwidth on real PCIe hardware (timing model)", cmd_predict },
	{ "mount", "a host's NVMe namespaces as files through FUSE (dd, fio, mkfs)", cmd_mount },
	{ "umount", "unmount a 'smartio mount'", cmd_umount },
	{ "devices", "the cluster's pool of lendable devices, their state and borrower", cmd_lend },
	{ "borrow", "borrow a device for host N (Device Lending: a shadow device)", cmd_lend },
	{ "return", "return a borrowed device (refused while held or its driver is bound)",
	  cmd_lend },
	{ "plan", "rank the pool's compositions for a workload (timing model)", cmd_plan },
	{ "web", "a live view of the cluster in a browser (+ /metrics for Prometheus)", cmd_web },
	{ "top", "the cluster at a glance in a terminal: hosts, links, pool, events", cmd_top },
	{ "diag", "per-adapter and per-device counters: errors, I/O, interrupts (--clear)", cmd_diag },
	{ "events", "the daemons' event logs: borrow, return, link changes, faults", cmd_events },
	{ "sriov", "enable or disable an SR-IOV device's virtual functions (VFs join the pool)",
	  cmd_sriov },
	{ "czodiac", "share a device's function with another host through a cZodiac switch",
	  cmd_czodiac },
	{ "vm", "virtual machines with borrowed devices (run, list, stop, stats, hot-add)", cmd_vm },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: smartio COMMAND [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\nRun 'smartio COMMAND --help' for a command's options ('smartio --version':\n"
		   "the version). Usage errors exit 2, failures 1 (docs/cli.md). The cluster\n"
		   "directory is $SMARTIO_CLUSTER, else $XDG_RUNTIME_DIR/smartio, else\n"
		   "/tmp/smartio-UID; a process belongs to host $SMARTIO_HOST.\n"
		   "Documentation: docs/cli.md\n");
}

int main(int argc, char **argv)
{
	const char *names[sizeof(cmds) / sizeof(cmds[0])];

	/*
	 * Any command, any subcommand: --version before a "--". exec's command
	 * may follow without "--": there only its own leading options count.
	 */
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		int n = 2;

		while (n < argc && argv[n][0] == '-' && strcmp(argv[n], "--"))
			n++;
		if (smio_wants_version(n, argv)) {
			smio_print_version(stdout, "smartio");
			return 0;
		}
	} else if (smio_wants_version(argc, argv)) {
		smio_print_version(stdout, "smartio");
		return 0;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		names[i] = cmds[i].name;
	smio_unknown("smartio", "command", argv[1], names, sizeof(cmds) / sizeof(cmds[0]),
		     "'smartio --help' lists the commands");
	return 2;
}
