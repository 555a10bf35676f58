// SPDX-License-Identifier: MIT
/* smartiod --cluster DIR --host N: bring up one emulated host and serve it. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bringup.h"
#include "daemon.h"
#include "util/cli_conv.h"
#include "util/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartiod [--cluster DIR] [--host N] [--topology FILE] [--ready-fd FD]\n"
		"\n"
		"Runs one host of an emulated smartio cluster: its RAM, PCIe tree, NTB\n"
		"adapters and IOMMU, and the kernel side that serves its processes.\n"
		"Normally started by 'smartio cluster up', not by hand.\n"
		"\n"
		"  --cluster DIR     cluster directory (default: $SMARTIO_CLUSTER, else\n"
		"                    $XDG_RUNTIME_DIR/smartio, else /tmp/smartio-UID)\n"
		"  --host N          host id from the topology (default: $SMARTIO_HOST)\n"
		"  --topology FILE   topology (default: DIR/topology.yaml)\n"
		"  --ready-fd FD     write one line to FD once serving, then close it\n"
		"  -h, --help        this text\n"
		"  --version         the version\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ "host", required_argument, NULL, 'H' },
		{ "topology", required_argument, NULL, 't' },
		{ "ready-fd", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	static struct smd d;
	static struct smd_up up;
	char dir[PATH_MAX], topo_path[PATH_MAX + 32] = "";
	const char *host_arg = NULL;
	int ready_fd = -1;
	int c, rc;

	if (smio_cluster_dir(dir, sizeof(dir)) < 0) {
		fprintf(stderr, "smartiod: cluster directory path too long\n");
		return 2;
	}
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': snprintf(dir, sizeof(dir), "%s", optarg); break;
		case 'H': host_arg = optarg; break;
		case 't': snprintf(topo_path, sizeof(topo_path), "%s", optarg); break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		case 'V': smio_print_version(stdout, "smartiod"); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "smartiod: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (host_arg) {
		char *end;
		unsigned long v = strtoul(host_arg, &end, 10);

		if (!*host_arg || *end || v > 65535) {
			fprintf(stderr, "smartiod: --host wants a host id (0..65535), not '%s'\n",
				host_arg);
			return 2;
		}
		d.host_id = (uint32_t)v;
	} else if (smio_env_host(&d.host_id) < 0) {
		fprintf(stderr, "smartiod: which host? give --host N or set SMARTIO_HOST\n");
		return 2;
	}
	/* "smartiod[host N]: ..." on every line of its log (SMARTIO_LOG sets the level). */
	smio_log_init("smartiod", SMIO_LOG_INFO);
	smio_log_set_host((int)d.host_id);
	smio_log_set_timestamps(true);   /* 'smartio cluster logs' merges hosts' logs */
	if (!topo_path[0])
		snprintf(topo_path, sizeof(topo_path), "%s/topology.yaml", dir);
	d.dir = dir;
	if (smd_up(&d, topo_path, &up))
		return 1;
	if (ready_fd >= 0) {
		/* Tell whoever started us that the socket answers now. */
		if (write(ready_fd, "ready\n", 6) != 6)
			fprintf(stderr, "smartiod: ready notification failed: %s\n",
				strerror(errno));
		close(ready_fd);
		ready_fd = -1;
	}
	rc = smd_loop_run(&d);
	smd_down(&d, &up);
	return rc ? 1 : 0;
}
