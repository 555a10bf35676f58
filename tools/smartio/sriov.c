// SPDX-License-Identifier: MIT
/*
 * smartio sriov: a host's SR-IOV physical function and its virtual functions,
 * enabled or disabled live (Linux's sriov_numvfs). Enabled VFs are functions
 * of their own in the lending pool (their own FDIDs) until disabled.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/cli_conv.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio sriov [--host N] [--dir DIR] --dev PF [--numvfs K] [--json]\n"
		"\n"
		"Shows the SR-IOV physical function PF of host N (a BDF or its name there):\n"
		"TotalVFs, the VFs enabled and their BDFs. With --numvfs K, enables K VFs\n"
		"(0 disables them) as 'echo K > sriov_numvfs' does: they join the lending\n"
		"pool with FDIDs of their own. Refused while a VF or the PF is borrowed.\n"
		"  --numvfs K   VFs to enable, 0..TotalVFs\n"
		"  --json       one JSON object: bdf, vendor, vf_device, total_vfs, num_vfs,\n"
		"               vf_offset, vf_stride, vfs (their BDFs)\n");
}

static void bdf_str(char *b, size_t n, unsigned bdf)
{
	snprintf(b, n, "%02x:%02x.%x", (bdf >> 8) & 0xff, (bdf >> 3) & 0x1f, bdf & 7);
}

static unsigned vf_bdf(const struct smio_sriov_state *s, unsigned n)
{
	return (s->bdf + s->vf_offset + (n - 1) * s->vf_stride) & 0xffff;
}

static int print_json(uint32_t host, const struct smio_sriov_state *s)
{
	struct json_object *o = json_object_new_object(), *vfs = json_object_new_array();
	char b[16], id[8];
	int rc = 0;

	if (!o || !vfs) {
		json_object_put(o);
		json_object_put(vfs);
		return -ENOMEM;
	}
	bdf_str(b, sizeof(b), s->bdf);
	rc |= smio_json_add_uint(o, "host", host);
	rc |= smio_json_add_str(o, "bdf", b);
	snprintf(id, sizeof(id), "%04x", s->vendor);
	rc |= smio_json_add_str(o, "vendor", id);
	snprintf(id, sizeof(id), "%04x", s->vf_device);
	rc |= smio_json_add_str(o, "vf_device", id);
	rc |= smio_json_add_uint(o, "total_vfs", s->total_vfs);
	rc |= smio_json_add_uint(o, "num_vfs", s->num_vfs);
	rc |= smio_json_add_uint(o, "vf_offset", s->vf_offset);
	rc |= smio_json_add_uint(o, "vf_stride", s->vf_stride);
	for (unsigned n = 1; n <= s->num_vfs; n++) {
		bdf_str(b, sizeof(b), vf_bdf(s, n));
		rc |= smio_json_push(vfs, json_object_new_string(b));
	}
	rc |= smio_json_add(o, "vfs", vfs);
	if (!rc)
		rc = cli_json_print(o);
	json_object_put(o);
	return rc ? -EIO : 0;
}

int cmd_sriov(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "dev", required_argument, NULL, 'D' }, { "numvfs", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	const char *host_opt = NULL, *dir_opt = NULL, *dev = NULL;
	struct smio_sriov_req q = { 0 };
	struct smio_sriov_state s;
	char dir[PATH_MAX], b[16];
	uint32_t host, rlen;
	bool json = false;
	uint64_t v;
	int ch, fd, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'H': host_opt = optarg; break;
		case 'd': dir_opt = optarg; break;
		case 'D': dev = optarg; break;
		case 'n':
			if (cli_parse_u64(optarg, &v) || v > 0xffff)
				return cli_err("--numvfs: '%s' is not a number of VFs", optarg), 2;
			q.numvfs = (uint16_t)v;
			q.set = 1;
			break;
		case 'j': json = true; break;
		case 'h': return usage(stdout), 0;
		default: return usage(stderr), 2;
		}
	}
	if (optind < argc)
		return cli_err("sriov: unexpected argument '%s'", argv[optind]), 2;
	if (!dev)
		return cli_err("sriov needs --dev PF (a BDF or a device name on the host)"), 2;
	fd = cli_open_host(host_opt, dir_opt, SMIO_ROLE_ADMIN, &host, dir, sizeof(dir));
	if (fd < 0)
		return fd == -EINVAL ? 2 : 1;
	if (cli_parse_func(fd, dev, &q.bdf)) {
		close(fd);
		return 2;
	}
	rc = smio_call(fd, SMIO_SRIOV, &q, sizeof(q), &s, sizeof(s), &rlen, NULL,
		       CLI_TIMEOUT_MS);
	close(fd);
	if (rc) {
		bdf_str(b, sizeof(b), q.bdf);
		if (rc == -EOPNOTSUPP)
			cli_err("sriov: %s (%s) on host %u is not an SR-IOV physical function "
				"(the topology gives it 'sriov: {vfs: N}')", dev, b, host);
		else if (rc == -EBUSY)
			cli_err("sriov: cannot change the VFs of %s (%s) on host %u: a VF or the "
				"PF is borrowed; return it first ('smartio devices' shows who has "
				"it)", dev, b, host);
		else if (rc == -ERANGE)
			cli_err("sriov: %s (%s) on host %u has fewer VFs than %u (TotalVFs: "
				"'smartio sriov --dev %s' shows it)", dev, b, host, q.numvfs, dev);
		else
			cli_err("sriov on host %u: %s", host, cli_strerror(rc));
		return 1;
	}
	if (json)
		return print_json(host, &s) ? 1 : 0;
	bdf_str(b, sizeof(b), s.bdf);
	printf("%s host %u: SR-IOV PF %04x, VF device %04x, %u of %u VFs enabled "
	       "(offset %u, stride %u)\n", b, host, s.vendor, s.vf_device, s.num_vfs,
	       s.total_vfs, s.vf_offset, s.vf_stride);
	for (unsigned n = 1; n <= s.num_vfs; n++) {
		bdf_str(b, sizeof(b), vf_bdf(&s, n));
		printf("  VF%u %s\n", n, b);
	}
	return 0;
}
