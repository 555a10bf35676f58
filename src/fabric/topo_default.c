// SPDX-License-Identifier: MIT
/*
 * The built-in default cluster, used when no --topology is given.
 *
 * It is kept as YAML rather than filled in C so that it goes through the very
 * same parser and checks as any file, and so that `smartio topology --dump`
 * style tools can print it as a starting point for one's own file.
 */
#include <string.h>

#include "smartio/topology.h"

static const char default_yaml[] =
	"# smartio built-in default topology (docs/topology.md).\n"
	"#\n"
	"# Three hosts, each with one PXH830-like NTB adapter cabled to one\n"
	"# MXS824-like cluster switch (PM8536, 24 ports of x4 lanes):\n"
	"#\n"
	"#   borrower ---+\n"
	"#   lender-a ---+--- mxs0\n"
	"#   lender-b ---+\n"
	"#\n"
	"# lender-a keeps its devices in an expansion chassis (a PEX8796 switch\n"
	"# behind root port 1), so peer-to-peer between its GPUs and its NVMe stays\n"
	"# below the switch; lender-b has them on root ports, so the same traffic\n"
	"# crosses its root complex.  borrower and lender-b have an IOMMU, lender-a\n"
	"# does not, so DMA both with and without IOMMU translation can be tried.\n"
	"version: 1\n"
	"name: default\n"
	"\n"
	"cluster_switches:\n"
	"  - name: mxs0           # chip PM8536, latency 170 ns, 24 ports of x4\n"
	"\n"
	"hosts:\n"
	"  - id: 0                # node_id 4 (4 * (id + 1))\n"
	"    name: borrower\n"
	"    ram: 4G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}   # cable gen3 x8: ports 0-1 of mxs0\n"
	"\n"
	"  - id: 1                # node_id 8\n"
	"    name: lender-a\n"
	"    ram: 4G\n"
	"    iommu: false\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}   # root port 0\n"
	"      - link: {gen: 3, width: 16}          # root port 1: expansion chassis\n"
	"        switch:\n"
	"          name: chassis\n"
	"          chip: PEX8796\n"
	"          latency_ns: 150\n"
	"          ports:\n"
	"            - link: {gen: 3, width: 4}\n"
	"              device: {name: nvme0, model: nvme}\n"
	"            - link: {gen: 3, width: 16}\n"
	"              device: {name: gpu0, model: accel}\n"
	"            - link: {gen: 3, width: 16}\n"
	"              device: {name: gpu1, model: accel}\n"
	"\n"
	"  - id: 2                # node_id 12\n"
	"    name: lender-b\n"
	"    ram: 4G\n"
	"    iommu: true\n"
	"    ports:\n"
	"      - ntb: {name: ntb0, connect: mxs0}   # root port 0\n"
	"      - link: {gen: 3, width: 4}           # root port 1\n"
	"        device: {name: nvme0, model: nvme, params: {cmb: 1M}}   # CMB: SQs, BAR2\n"
	"      - link: {gen: 3, width: 16}          # root port 2\n"
	"        device: {name: gpu0, model: accel}\n";

const char *topo_default_yaml(void)
{
	return default_yaml;
}

int topo_load_default(struct topo **out, char *err, size_t errlen)
{
	return topo_load_string(default_yaml, strlen(default_yaml), "<default>",
				out, err, errlen);
}
