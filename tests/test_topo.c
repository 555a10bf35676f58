// SPDX-License-Identifier: MIT
/*
 * Topology parser tests: defaults, every validation rule with its line
 * number, sizes, cable resolution, cluster-switch port accounting and the
 * shipped topologies.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "smartio/topology.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static char err[512];

static struct topo *load_ok(const char *yaml)
{
	struct topo *t = NULL;
	int rc = topo_load_string(yaml, strlen(yaml), "t.yaml", &t, err, sizeof(err));

	if (rc)
		fail_msg("unexpected error %d: %s\n--- input ---\n%s", rc, err, yaml);
	assert_non_null(t);
	return t;
}

/* The load fails with -EINVAL and a "t.yaml:LINE: ...WANT..." message. */
static void load_bad(const char *yaml, int line, const char *want)
{
	struct topo *t = (struct topo *)1;
	char prefix[32];
	int rc = topo_load_string(yaml, strlen(yaml), "t.yaml", &t, err, sizeof(err));

	if (rc != -EINVAL)
		fail_msg("expected -EINVAL, got %d (%s)\n--- input ---\n%s", rc, err, yaml);
	assert_null(t);
	snprintf(prefix, sizeof(prefix), "t.yaml:%d: ", line);
	if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, want))
		fail_msg("message '%s'\n  wanted prefix '%s' and '%s'\n--- input ---\n%s",
			 err, prefix, want, yaml);
	assert_null(strchr(err, '\n'));
}

static void test_default(void **state)
{
	struct topo *t = NULL;
	const struct topo_host *h;
	const struct topo_switch *sw;
	const struct topo_ntb *ntb;

	assert_non_null(topo_default_yaml());
	assert_int_equal(topo_load_default(&t, err, sizeof(err)), 0);
	assert_string_equal(t->name, "default");
	assert_string_equal(t->source, "<default>");
	assert_int_equal(t->nhosts, 3);
	assert_int_equal(t->ncswitches, 1);
	assert_int_equal(t->ncascades, 0);
	assert_string_equal(t->cswitches[0].name, "mxs0");
	assert_string_equal(t->cswitches[0].chip, "PM8536");
	assert_int_equal(t->cswitches[0].latency_ns, 170);
	assert_int_equal(t->cswitches[0].ports, 24);
	assert_int_equal(t->cswitches[0].port_width, 4);
	assert_int_equal(t->cswitches[0].used_ports, 6);   /* three x8 cables */

	h = &t->hosts[0];
	assert_string_equal(h->name, "borrower");
	assert_int_equal(h->id, 0);
	assert_int_equal(h->node_id, 4);
	assert_true(h->iommu);
	assert_int_equal(h->ram_size, 4 * GiB);
	assert_int_equal(h->nports, 1);

	h = &t->hosts[1];
	assert_string_equal(h->name, "lender-a");
	assert_int_equal(h->node_id, 8);
	assert_false(h->iommu);
	assert_int_equal(h->nports, 2);
	assert_int_equal(h->ports[1].kind, TOPO_SLOT_SWITCH);
	assert_int_equal(h->ports[1].link.width, 16);
	sw = &h->ports[1].sw;
	assert_string_equal(sw->name, "chassis");
	assert_string_equal(sw->chip, "PEX8796");
	assert_int_equal(sw->latency_ns, 150);
	assert_int_equal(sw->nports, 3);
	assert_string_equal(sw->ports[0].dev.name, "nvme0");
	assert_string_equal(sw->ports[0].dev.model, "nvme");
	assert_int_equal(sw->ports[0].link.gen, 3);
	assert_int_equal(sw->ports[0].link.width, 4);
	assert_string_equal(sw->ports[1].dev.name, "gpu0");
	assert_string_equal(sw->ports[2].dev.model, "accel");
	assert_int_equal(sw->ports[2].link.width, 16);
	assert_true(sw->ports[2].dev.lendable);

	h = &t->hosts[2];
	assert_string_equal(h->name, "lender-b");
	assert_true(h->iommu);
	assert_int_equal(h->nports, 3);
	assert_int_equal(h->ports[1].kind, TOPO_SLOT_DEVICE);
	assert_string_equal(h->ports[1].dev.model, "nvme");
	assert_int_equal(h->ports[1].link.width, 4);
	assert_string_equal(h->ports[2].dev.name, "gpu0");

	/* Every host: one NTB cabled to mxs0, two ports each, in host order. */
	for (uint32_t i = 0; i < 3; i++) {
		ntb = topo_host_ntb(&t->hosts[i], 0);
		assert_non_null(ntb);
		assert_null(topo_host_ntb(&t->hosts[i], 1));
		assert_string_equal(ntb->model, "PXH830");
		assert_int_equal(ntb->peer_kind, TOPO_PEER_CSWITCH);
		assert_int_equal(ntb->peer_cswitch, 0);
		assert_int_equal(ntb->peer_port, 2 * i);
	}
	topo_free(t);
}

static void test_timing_mode(void **state)
{
	struct topo *t = NULL;
	const char *y = "version: 1\ntiming: faithful\nhosts:\n  - ports: [{}]\n";

	assert_int_equal(topo_load_string(y, strlen(y), "f.yaml", &t, err, sizeof(err)), 0);
	assert_true(t->timing_faithful);
	topo_free(t);
	y = "version: 1\ntiming: fast\nhosts:\n  - ports: [{}]\n";
	assert_int_equal(topo_load_string(y, strlen(y), "f.yaml", &t, err, sizeof(err)), 0);
	assert_false(t->timing_faithful);
	topo_free(t);
}

static void test_minimal_defaults(void **state)
{
	struct topo *t = NULL;
	const char *y = "version: 1\nhosts:\n  - ports: [{}]\n  - ports:\n    - ntb: {}\n";
	const struct topo_host *h;
	const struct topo_ntb *n;

	assert_int_equal(topo_load_string(y, strlen(y), "some/dir/my-lab.yaml", &t, err,
					  sizeof(err)), 0);
	assert_string_equal(t->name, "my-lab");
	assert_string_equal(t->source, "some/dir/my-lab.yaml");
	assert_false(t->timing_faithful);       /* fast unless the topology asks */
	h = &t->hosts[0];
	assert_int_equal(h->id, 0);
	assert_int_equal(h->node_id, 4);
	assert_string_equal(h->name, "host0");
	assert_int_equal(h->ram_size, 4 * GiB);
	assert_false(h->iommu);
	assert_true(h->rc_p2p);
	assert_int_equal(h->rc_latency_ns, 150);
	assert_int_equal(h->mmio32_base, 0xC0000000ull);
	assert_int_equal(h->mmio32_size, 0x3EC00000ull);
	assert_int_equal(h->mmio64_base, 512 * GiB);
	assert_int_equal(h->mmio64_size, 512 * GiB);
	assert_int_equal(h->line, 3);
	assert_int_equal(h->ports[0].kind, TOPO_SLOT_EMPTY);
	assert_int_equal(h->ports[0].link.gen, 3);
	assert_int_equal(h->ports[0].link.width, 16);
	assert_int_equal(t->hosts[1].id, 1);
	assert_int_equal(t->hosts[1].node_id, 8);
	assert_string_equal(t->hosts[1].name, "host1");
	n = &t->hosts[1].ports[0].ntb;
	assert_int_equal(t->hosts[1].ports[0].line, 5);
	assert_string_equal(n->name, "ntb0");
	assert_string_equal(n->model, "PXH830");
	assert_int_equal(n->bar_size, 8 * GiB);
	assert_int_equal(n->lut_entries, 64);
	assert_int_equal(n->rid_entries, 32);
	assert_int_equal(n->doorbells, 16);
	assert_int_equal(n->scratchpads, 8);
	assert_int_equal(n->dma_channels, 1);
	assert_int_equal(n->latency_ns, 110);
	assert_int_equal(n->cable.gen, 3);
	assert_int_equal(n->cable.width, 8);
	assert_int_equal(n->peer_kind, TOPO_PEER_NONE);
	assert_string_equal(n->connect, "");
	topo_free(t);

	/* Big RAM moves the default 64-bit window above it. */
	t = load_ok("version: 1\nhosts:\n  - {ram: 600G, ports: [{}]}\n");
	assert_int_equal(t->hosts[0].mmio64_base, 1024 * GiB);
	topo_free(t);
	/* Small RAM: all below 4G. */
	t = load_ok("version: 1\nname: x\nhosts:\n  - {ram: 64M, mmio32: {base: 0x4000000, size: 1G},"
		    " mmio64: {base: 4G, size: 1G}, ports: [{}]}\n");
	assert_string_equal(t->name, "x");
	assert_int_equal(t->hosts[0].mmio32_base, 64 * MiB);
	topo_free(t);
}

static void test_device_fields(void **state)
{
	struct topo *t = load_ok(
		"version: 1\n"
		"hosts:\n"
		"  - id: 7\n"
		"    node_id: 100\n"
		"    name: box\n"
		"    ram: 8GiB\n"
		"    iommu: True\n"
		"    root_complex: {latency_ns: 90, p2p: false}\n"
		"    ports:\n"
		"      - link: {gen: 4, width: 8}\n"
		"        device:\n"
		"          model: test\n"
		"          lendable: false\n"
		"          vendor_id: 0x1234\n"
		"          device_id: 4660\n"
		"          bars:\n"
		"            - {index: 0, size: 16K}\n"
		"            - {index: 2, size: 1G, bits: 64, prefetchable: true}\n"
		"            - {index: 4, size: 16, bits: 32}\n"
		"          params: {queues: 32, ns_size: 1G, label: \"a b\"}\n"
		"      - device: {model: test}\n"
		"      - device: {model: nvme}\n");
	const struct topo_host *h = &t->hosts[0];
	const struct topo_device *d = &h->ports[0].dev;

	assert_int_equal(h->id, 7);
	assert_int_equal(h->node_id, 100);
	assert_int_equal(h->ram_size, 8 * GiB);
	assert_true(h->iommu);
	assert_false(h->rc_p2p);
	assert_int_equal(h->rc_latency_ns, 90);
	assert_int_equal(h->ports[0].link.gen, 4);
	assert_int_equal(h->ports[0].link.width, 8);
	assert_string_equal(d->name, "test0");
	assert_false(d->lendable);
	assert_int_equal(d->vendor_id, 0x1234);
	assert_int_equal(d->device_id, 0x1234);
	assert_int_equal(d->nbars, 3);
	assert_int_equal(d->bars[0].size, 16384);
	assert_false(d->bars[0].is64);
	assert_int_equal(d->bars[1].index, 2);
	assert_true(d->bars[1].is64);
	assert_true(d->bars[1].prefetch);
	assert_int_equal(d->bars[1].size, GiB);
	assert_int_equal(d->bars[2].size, 16);
	assert_int_equal(d->nparams, 3);
	assert_string_equal(d->params[0].key, "queues");
	assert_string_equal(d->params[0].value, "32");
	assert_string_equal(d->params[1].value, "1G");
	assert_string_equal(d->params[2].value, "a b");
	/* Default names count devices of the same model. */
	assert_string_equal(h->ports[1].dev.name, "test1");
	assert_string_equal(h->ports[2].dev.name, "nvme0");
	assert_int_equal(h->ports[2].dev.nbars, 0);
	assert_int_equal(h->ports[2].line, 22);
	topo_free(t);
}

static void test_parse_size(void **state)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "4G", 4 * GiB }, { "4GiB", 4 * GiB },
		{ "4GB", 4 * GiB }, { "4Gi", 4 * GiB }, { "512M", 512 * MiB }, { "16K", 16384 },
		{ "1T", 1ull << 40 }, { "2g", 2 * GiB }, { "100B", 100 }, { "0x1000", 4096 },
		{ "0X3EC00000", 0x3EC00000 }, { "16777215T", 16777215ull << 40 },
	};
	static const char *const bad[] = {
		"", "G", "4X", "4GiBB", "4iB", "-1", " 4G", "4 G", "0x", "0x1G", "4.5G",
		"1.0", "99999999999999999999", "16777216T", "4Gx",
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 1;
		if (topo_parse_size(ok[i].s, &v) || v != ok[i].v)
			fail_msg("'%s' -> %llu", ok[i].s, (unsigned long long)v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (topo_parse_size(bad[i], &v) >= 0)
			fail_msg("'%s' accepted", bad[i]);
	assert_int_equal(topo_parse_size("99999999999999999999", &v), -ERANGE);
	assert_int_equal(topo_parse_size(NULL, &v), -EINVAL);
}

#define H "version: 1\nhosts:\n"   /* the two lines before a host list */

static void test_errors_top(void **state)
{
	load_bad("", 1, "empty topology");
	load_bad("# only a comment\n", 1, "empty topology");
	load_bad("hosts:\n  - ports: [{}]\n", 1, "'version: 1' is required");
	load_bad("version: 2\nhosts:\n  - ports: [{}]\n", 1, "version 2 is out of range (1..1)");
	load_bad("version: 1\n", 1, "'hosts' is required");
	load_bad("version: 1\nhosts: []\n", 2, "'hosts' has 0 entries; it needs 1..256");
	load_bad("version: 1\nhosts: {a: 1}\n", 2, "'hosts' must be a list");
	load_bad("version: 1\nhost:\n  - ports: [{}]\n", 2,
		 "topology: unknown key 'host' (expected one of: version, name, timing, "
		 "cluster_switches, hosts)");
	load_bad("- 1\n- 2\n", 1, "topology: expected a mapping");
	load_bad("version: one\n", 1, "'version' must be a number, not 'one'");
	load_bad("version: \"1\"\n", 1, "'version' must be a number");
	load_bad("version: 1\nname: [a]\n", 2, "'name' must be a string, not a list");
	load_bad("version: 1\ntiming: exact\nhosts:\n  - ports: [{}]\n", 2,
		 "topology: timing must be 'fast' (the default) or 'faithful', not 'exact'");
}

static void test_errors_yaml(void **state)
{
	struct topo *t = (struct topo *)1;
	int fd, saved;
	char path[] = "/tmp/test_topo_stderrXXXXXX";
	struct stat st;

	load_bad(H "  - ports: [{}\n", 4, "YAML syntax error");
	load_bad(H "  - ports: [{}]\n    ports: [{}]\n", 4, "YAML syntax error: duplicate key");
	load_bad(H "  - {ports: [{}], ram: &r 4G}\n  - {ports: [{}], ram: *r}\n", 4,
		 "aliases (*name) are not supported");
	load_bad(H "  - ports: [{}]\n---\nversion: 1\n", 5, "second YAML document");
	load_bad(H "\t- ports: [{}]\n", 3, "YAML syntax error");
	/* Not text: refused before libfyaml sees it (it loops on "%\xaf"). */
	load_bad("%\xaf\n", 1, "not UTF-8 text (byte 0xaf at offset 1)");
	load_bad(H "  - name: \xc3\xa9\xc0\xaf\n", 3, "not UTF-8 text (byte 0xc0");
	load_bad(H "  - name: \xed\xa0\x80\n", 3, "not UTF-8 text (byte 0xed");
	assert_int_equal(topo_load_string("version: 1\0\n", 12, "z", &t, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "z:1: not UTF-8 text (byte 0x00 at offset 10); "
			    "expected a YAML text file");
	load_bad(H "  - name: \xc3\xa9\n    ports: [{}]\n", 3,
		 "may only contain letters, digits and '_-'");

	/* libfyaml must not print anything itself: the message is ours to give. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	assert_int_equal(topo_load_string("a: [\n", 5, "x", &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(topo_load_string("a: 1\na: 2\n", 10, "x", &t, err, sizeof(err)),
			 -EINVAL);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	close(fd);
	unlink(path);
	assert_null(t);

	/* A counted terminator is ignored. */
	t = NULL;
	assert_int_equal(topo_load_string(H "  - ports: [{}]\n", sizeof(H "  - ports: [{}]\n"),
					  "z", &t, err, sizeof(err)), 0);
	topo_free(t);

	/* Small error buffers are fine; NULL ones too. */
	assert_int_equal(topo_load_string("x", 1, "s", &t, err, 4), -EINVAL);
	assert_string_equal(err, "s:1");
	assert_int_equal(topo_load_string("x", 1, "s", &t, NULL, 0), -EINVAL);
}

static void test_errors_host(void **state)
{
	load_bad(H "  - name: lender-a\n    iomu: true\n    ports: [{}]\n", 4,
		 "host 'lender-a': unknown key 'iomu' (expected one of: id, node_id, name, "
		 "ram, iommu, root_complex, mmio32, mmio64, ports)");
	load_bad(H "  - ram: 4G\n", 3, "hosts[0]: 'ports' is required (a list)");
	load_bad(H "  - ports: []\n", 3, "'ports' has 0 entries; it needs 1..31");
	load_bad(H "  - ports: [{}]\n  - {id: 0, ports: [{}]}\n", 4,
		 "hosts[1]: id 0 is already used by host 'host0' (line 3)");
	load_bad(H "  - ports: [{}]\n  - {name: host0, id: 5, ports: [{}]}\n", 4,
		 "host 'host0': name 'host0' is already used by the host on line 3");
	load_bad(H "  - ports: [{}]\n  - {node_id: 4, ports: [{}]}\n", 4,
		 "node_id 4 is already used by host 'host0'");
	load_bad(H "  - {node_id: 6, ports: [{}]}\n", 3, "node_id 6 must be a multiple of 4");
	load_bad(H "  - {node_id: 0, ports: [{}]}\n", 3, "node_id 0 is out of range (4..65532)");
	load_bad(H "  - {id: 16383, ports: [{}]}\n", 3, "id 16383 is out of range");
	load_bad(H "  - {name: \"a b\", ports: [{}]}\n", 3,
		 "name 'a b' may only contain letters, digits and '_-'");
	load_bad(H "  - {name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, ports: [{}]}\n", 3,
		 "is too long (at most 31 characters)");
	load_bad(H "  - {name: \"\", ports: [{}]}\n", 3, "'name' must not be empty");
	load_bad(H "  - {name: ~, ports: [{}]}\n", 3, "'name' needs a value");
	load_bad(H "  - ram: 32M\n    ports: [{}]\n", 3, "ram 32M is out of range (64M..1T)");
	load_bad(H "  - ram: lots\n    ports: [{}]\n", 3,
		 "'ram' must be a size such as 4G, 512M or 0x1000, not 'lots'");
	load_bad(H "  - ram: [4G]\n    ports: [{}]\n", 3, "'ram' must be a size such as 4G, not a list");
	load_bad(H "  - iommu: yes\n    ports: [{}]\n", 3, "'iommu' must be true or false, not 'yes'");
	load_bad(H "  - ports: [{}]\n    root_complex: {latency: 3}\n", 4,
		 "hosts[0] root_complex: unknown key 'latency'");
	load_bad(H "  - ports: [{}]\n    mmio32: {base: 0x80000000, size: 512M}\n", 4,
		 "mmio32 window at 0x80000000 overlaps RAM below 4G (0..0xbfffffff)");
	load_bad(H "  - ports: [{}]\n    mmio32: {base: 0xF0000000, size: 512M}\n", 4,
		 "mmio32 window must end at or below 4G");
	load_bad(H "  - ports: [{}]\n    mmio32: {base: 0xC0000001}\n", 4,
		 "mmio32 base and size must be multiples of 1M");
	load_bad(H "  - ram: 8G\n    ports: [{}]\n    mmio64:\n      base: 6G\n", 6,
		 "mmio64 window at 6G overlaps RAM or lies below 4G; RAM ends at 9G");
	load_bad(H "  - ports: [{}]\n    mmio64: {base: 255T, size: 2T}\n", 4,
		 "mmio64 window must end at or below 256T");
	load_bad(H "  - ports:\n    - link: {gen: 6}\n", 4, "gen 6 is out of range (1..5)");
	load_bad(H "  - ports:\n    - link: {width: 3}\n", 4,
		 "width 3 is not a PCIe link width (1, 2, 4, 8, 12, 16, 32)");
	load_bad(H "  - ports:\n    - link: {speed: 3}\n", 4,
		 "hosts[0] port 0 link: unknown key 'speed' (expected one of: gen, width)");
	load_bad(H "  - ports:\n    - foo\n", 4, "hosts[0] port 0: expected a mapping");
}

static void test_errors_slots(void **state)
{
	load_bad(H "  - ports:\n    - {}\n    - device: {model: nvme}\n      ntb: {}\n", 5,
		 "hosts[0] port 1: give exactly one of 'device', 'switch' or 'ntb'");
	load_bad(H "  - ports:\n    - device: {name: x}\n", 4, "device 'x': 'model' is required");
	load_bad(H "  - ports:\n    - device:\n        model: nvmf\n", 5,
		 "unknown model 'nvmf' (expected one of: test, nvme, accel)");
	load_bad(H "  - ports:\n    - device: {model: nvme, colour: red}\n", 4,
		 "hosts[0] port 0 device: unknown key 'colour' (expected one of: name, model, "
		 "lendable, vendor_id, device_id, bars, params, sriov, functions)");
	load_bad(H "  - ports:\n    - device: {model: nvme, vendor_id: 0x10000}\n", 4,
		 "vendor_id 65536 is out of range (0..65535)");
	/* Names: one name space for devices, switches and NTBs of a host. */
	load_bad(H "  - ports:\n    - device: {model: nvme, name: a}\n    - ntb: {name: a}\n", 5,
		 "ntb 'a': name 'a' is already used in this host (line 4)");
	load_bad(H "  - ports:\n    - device: {model: nvme, name: nvme1}\n    - {}\n"
		 "    - device: {model: nvme}\n    - device: {model: nvme}\n", 6,
		 "device: its default name 'nvme1' is already used in this host (line 4); "
		 "devices, switches and NTBs of a host need distinct names: give it a 'name'");
	/* Same names on different hosts are fine. */
	topo_free(load_ok(H "  - ports: [{device: {model: nvme}}]\n"
			  "  - ports: [{device: {model: nvme}}]\n"));
	/* BARs. */
	load_bad(H "  - ports:\n    - device:\n        model: test\n        bars:\n"
		 "          - {index: 5, size: 4K, bits: 64}\n", 7,
		 "a 64-bit BAR takes index and index+1; index 5 has no partner");
	load_bad(H "  - ports:\n    - device:\n        model: test\n        bars:\n"
		 "          - {index: 0, size: 4K, bits: 64}\n          - {index: 1, size: 4K}\n",
		 8, "bar #1: BAR 1 overlaps an earlier BAR");
	load_bad(H "  - ports:\n    - device:\n        model: test\n        bars:\n"
		 "          - {index: 0, size: 3K}\n", 7, "size must be a power of two");
	load_bad(H "  - ports:\n    - device:\n        model: test\n        bars:\n"
		 "          - {index: 0, size: 8}\n", 7, "size 8 is out of range (16..2G)");
	load_bad(H "  - ports:\n    - device:\n        model: test\n        bars:\n"
		 "          - {index: 0, size: 4K, bits: 16}\n", 7, "bits 16 is out of range");
	load_bad(H "  - ports:\n    - device:\n        model: test\n        bars:\n"
		 "          - {size: 4K}\n", 7, "bar #0: 'index' is required");
	load_bad(H "  - ports:\n    - device:\n        model: test\n        bars: []\n", 6,
		 "'bars' has 0 entries; it needs 1..6");
	/* Params. */
	load_bad(H "  - ports:\n    - device:\n        model: test\n        params:\n"
		 "          a: 1\n          b: [1]\n", 8, "param 'b': 'value' must be a string, not a list");
}

static void test_errors_params_more(void **state)
{
	char y[2048];
	int n;

	load_bad(H "  - ports:\n    - device:\n        model: test\n        params:\n"
		 "          aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: 1\n", 7,
		 "is too long (at most 31 characters)");
	load_bad(H "  - ports:\n    - device:\n        model: test\n        params: [1]\n", 6,
		 "'params' must be a mapping");
	n = snprintf(y, sizeof(y), H "  - ports:\n    - device:\n        model: test\n"
		     "        params:\n");
	for (int i = 0; i < 17; i++)
		n += snprintf(y + n, sizeof(y) - (size_t)n, "          p%d: %d\n", i, i);
	load_bad(y, 23, "at most 16 params");
}

static void test_errors_switch_ntb(void **state)
{
	char y[4096];
	int n;

	load_bad(H "  - ports:\n    - switch: {name: s}\n", 4, "switch 's': 'ports' is required");
	load_bad(H "  - ports:\n    - switch: {ports: [{}], acs: true}\n", 4,
		 "unknown key 'acs' (expected one of: name, chip, latency_ns, "
		 "acs_p2p_redirect, ports)");
	/* Nine switches deep is one too many. */
	n = snprintf(y, sizeof(y), H "  - ports:\n");
	for (int d = 0; d < 9; d++)
		n += snprintf(y + n, sizeof(y) - (size_t)n, "%*s- switch:\n%*sports:\n",
			      4 + 6 * d, "", 8 + 6 * d, "");
	n += snprintf(y + n, sizeof(y) - (size_t)n, "%*s- {}\n", 4 + 6 * 9, "");
	load_bad(y, 4 + 2 * 8, "switches nest 9 deep; at most 8 levels");
	/* Eight is fine. */
	n = snprintf(y, sizeof(y), H "  - ports:\n");
	for (int d = 0; d < 8; d++)
		n += snprintf(y + n, sizeof(y) - (size_t)n, "%*s- switch:\n%*sports:\n",
			      4 + 6 * d, "", 8 + 6 * d, "");
	snprintf(y + n, sizeof(y) - (size_t)n, "%*s- ntb: {}\n", 4 + 6 * 8, "");
	topo_free(load_ok(y));

	load_bad(H "  - ports:\n    - ntb: {lut_entries: 3}\n", 4,
		 "window size bar_size / lut_entries = 8G / 3 must be a power of two");
	load_bad(H "  - ports:\n    - ntb: {bar_size: 1M, lut_entries: 32}\n", 4,
		 "must be a power of two of at least 64K");
	load_bad(H "  - ports:\n    - ntb: {bar_size: 3G}\n", 4, "bar_size must be a power of two");
	load_bad(H "  - ports:\n    - ntb: {doorbells: 33}\n", 4, "doorbells 33 is out of range (1..32)");
	load_bad(H "  - ports:\n    - ntb: {lut_entries: 5000}\n", 4, "lut_entries 5000 is out of range");
	load_bad(H "  - ports:\n    - ntb: {requesters: 0}\n", 4, "requesters 0 is out of range (1..1024)");
	load_bad(H "  - ports:\n    - ntb: {scratchpads: 65}\n", 4, "scratchpads 65 is out of range");
	load_bad(H "  - ports:\n    - ntb: {dma_channels: 17}\n", 4, "dma_channels 17 is out of range");
	load_bad(H "  - ports:\n    - ntb: {cable: {width: 5}}\n", 4, "ntb cable: width 5 is not");
	load_bad(H "  - ports:\n    - ntb: {lut_entries: \"64\"}\n", 4,
		 "'lut_entries' must be a number, not '64'");
	load_bad(H "  - ports:\n    - ntb:\n        name: n\n        connect: \"a b\"\n", 6,
		 "ntb 'n': connect 'a b' may only contain letters, digits and '_-.:'");
}

static const char b2b[] =
	"version: 1\n"                                  /* 1 */
	"hosts:\n"                                      /* 2 */
	"  - name: a\n"                                 /* 3 */
	"    ports:\n"                                  /* 4 */
	"      - ntb: {name: n0, connect: b.n1}\n"      /* 5 */
	"      - switch:\n"                             /* 6 */
	"          ports:\n"                            /* 7 */
	"            - ntb: {name: n1, connect: 2.x}\n" /* 8 */
	"  - name: b\n"                                 /* 9 */
	"    ports:\n"                                  /* 10 */
	"      - ntb: {name: n0}\n"                     /* 11 */
	"      - ntb: {name: n1}\n"                     /* 12 */
	"  - name: c\n"                                 /* 13 */
	"    ports:\n"                                  /* 14 */
	"      - ntb: {name: x, connect: a.n1}\n";      /* 15 */

static void test_ntb_connect(void **state)
{
	struct topo *t = load_ok(b2b);
	const struct topo_ntb *n;

	/* a.n0 -> b.n1 (b.n1 filled in), a.n1 <-> c.x (both name each other). */
	n = topo_host_ntb(&t->hosts[0], 0);
	assert_int_equal(n->peer_kind, TOPO_PEER_NTB);
	assert_int_equal(n->peer_host, 1);
	assert_int_equal(n->peer_ntb, 1);
	n = topo_host_ntb(&t->hosts[1], 1);
	assert_string_equal(n->name, "n1");
	assert_int_equal(n->peer_kind, TOPO_PEER_NTB);
	assert_int_equal(n->peer_host, 0);
	assert_int_equal(n->peer_ntb, 0);
	assert_string_equal(n->connect, "");
	assert_int_equal(topo_host_ntb(&t->hosts[1], 0)->peer_kind, TOPO_PEER_NONE);
	n = topo_host_ntb(&t->hosts[0], 1);
	assert_string_equal(n->name, "n1");         /* behind the switch */
	assert_int_equal(n->peer_host, 2);
	assert_int_equal(n->peer_ntb, 0);
	n = topo_host_ntb(&t->hosts[2], 0);
	assert_int_equal(n->peer_host, 0);
	assert_int_equal(n->peer_ntb, 1);
	assert_string_equal(n->connect, "a.n1");
	topo_free(t);

	load_bad(H "  - ports: [{ntb: {connect: nobody.ntb0}}]\n", 3,
		 "host 'host0' ntb 'ntb0': connect 'nobody.ntb0': no host named 'nobody'");
	load_bad(H "  - ports: [{ntb: {}}]\n  - ports: [{ntb: {connect: host0.ntb5}}]\n", 4,
		 "connect 'host0.ntb5': host 'host0' has no NTB named 'ntb5'");
	load_bad(H "  - ports: [{device: {model: nvme}}]\n"
		 "  - ports: [{ntb: {connect: 0.nvme0}}]\n", 4, "host 'host0' has no NTB named 'nvme0'");
	load_bad(H "  - ports:\n    - ntb: {}\n    - ntb:\n        connect: host0.ntb0\n", 6,
		 "connect 'host0.ntb0' cables the host to itself");
	load_bad(H "  - ports: [{ntb: {connect: host1.ntb0}}]\n"
		 "  - ports: [{ntb: {connect: host2.ntb0}}]\n"
		 "  - ports: [{ntb: {}}]\n", 3,
		 "host 'host0' ntb 'ntb0': connect 'host1.ntb0', but host 'host1' ntb 'ntb0' is "
		 "cabled to 'host2.ntb0' (line 4)");
	load_bad(H "  - ports: [{ntb: {connect: host2.ntb0}}]\n"
		 "  - ports: [{ntb: {connect: host2.ntb0}}]\n"
		 "  - ports: [{ntb: {}}]\n", 4,
		 "but host 'host2' ntb 'ntb0' is already cabled to the NTB connected on line 3");
	load_bad("version: 1\ncluster_switches: [{name: s}]\nhosts:\n"
		 "  - ports: [{ntb: {connect: host1.ntb0}}]\n"
		 "  - ports: [{ntb: {connect: s}}]\n", 4, "is cabled to 's' (line 5)");
	load_bad(H "  - ports: [{ntb: {connect: a.b.c}}]\n", 3, "connect 'a.b.c' is not 'HOST.NTB'");
	load_bad(H "  - ports: [{ntb: {connect: .x}}]\n", 3, "is not 'HOST.NTB'");
	load_bad(H "  - ports: [{ntb: {connect: mxs0}}]\n", 3,
		 "connect 'mxs0': no cluster switch named 'mxs0'");
}

static void test_cswitch_ports(void **state)
{
	struct topo *t = load_ok(
		"version: 1\n"
		"cluster_switches:\n"
		"  - name: top\n"
		"  - name: s1\n"
		"    ports: 8\n"
		"    port_width: 8\n"
		"    cascade: [top, {to: s2, width: 8, gen: 4}]\n"
		"  - {name: s2, chip: PM8532, latency_ns: 100, cascade: [{to: s1, gen: 4, width: 8}]}\n"
		"hosts:\n"
		"  - ports: [{ntb: {connect: \"s1:6\", cable: {width: 16}}}]\n"
		"  - ports: [{ntb: {connect: s1}}]\n"
		"  - ports: [{ntb: {connect: top, cable: {width: 16}}}]\n"
		"  - ports: [{ntb: {connect: s2, cable: {width: 1}}}]\n");
	const struct topo_cswitch *top = &t->cswitches[0], *s1 = &t->cswitches[1];

	assert_int_equal(t->ncascades, 2);
	assert_int_equal(t->cascades[0].a, 1);
	assert_int_equal(t->cascades[0].b, 0);
	assert_int_equal(t->cascades[0].link.width, 16);
	assert_int_equal(t->cascades[0].line, 7);
	assert_int_equal(t->cascades[1].b, 2);
	assert_int_equal(t->cascades[1].link.gen, 4);
	assert_int_equal(t->cascades[1].link.width, 8);
	assert_string_equal(t->cswitches[2].chip, "PM8532");
	assert_int_equal(t->cswitches[2].latency_ns, 100);
	assert_int_equal(t->cswitches[2].line, 8);
	/* s1 (x8 ports): explicit 6-7, cascade top 0-1, cascade s2 2, host1 3. */
	assert_int_equal(topo_host_ntb(&t->hosts[0], 0)->peer_port, 6);
	assert_int_equal(topo_host_ntb(&t->hosts[1], 0)->peer_port, 3);
	assert_int_equal(topo_host_ntb(&t->hosts[1], 0)->peer_cswitch, 1);
	assert_int_equal(s1->used_ports, 6);
	/* top (x4 ports): cascade 0-3, host2 4-7. */
	assert_int_equal(topo_host_ntb(&t->hosts[2], 0)->peer_port, 4);
	assert_int_equal(top->used_ports, 8);
	/* s2: cascade from s1 x8 = 2 ports, host3 x1 = 1 port. */
	assert_int_equal(t->cswitches[2].used_ports, 3);
	assert_int_equal(topo_host_ntb(&t->hosts[3], 0)->peer_port, 2);
	topo_free(t);

	load_bad("version: 1\ncluster_switches:\n  - {name: s, ports: 4}\nhosts:\n"
		 "  - ports: [{ntb: {connect: s}}]\n"
		 "  - ports: [{ntb: {connect: s}}]\n"
		 "  - ports: [{ntb: {connect: s}}]\n", 7,
		 "host 'host2' ntb 'ntb0': cluster switch 's' is out of ports: it has 4 ports "
		 "of x4, 4 in use, and this link needs 2 adjacent free port(s)");
	load_bad("version: 1\ncluster_switches:\n  - {name: s, ports: 4}\nhosts:\n"
		 "  - ports: [{ntb: {connect: \"s:3\"}}]\n", 5,
		 "ports 3..4 of cluster switch 's' do not exist (it has ports 0..3)");
	load_bad("version: 1\ncluster_switches:\n  - {name: s}\nhosts:\n"
		 "  - ports: [{ntb: {connect: \"s:2\"}}]\n"
		 "  - ports: [{ntb: {connect: \"s:3\"}}]\n", 6,
		 "port 3 of cluster switch 's' is already taken by the link on line 5");
	load_bad("version: 1\ncluster_switches:\n  - {name: s}\nhosts:\n"
		 "  - ports: [{ntb: {connect: \"s:x\"}}]\n", 5, "connect 's:x': 'x' is not a port number");
	load_bad("version: 1\ncluster_switches:\n  - {name: s, cascade: [t]}\nhosts:\n"
		 "  - ports: [{}]\n", 3, "cluster switch 's' cascade to 't': no cluster switch named 't'");
	load_bad("version: 1\ncluster_switches:\n  - name: s\n    cascade:\n      - s\n"
		 "hosts:\n  - ports: [{}]\n", 5, "a switch cannot be cascaded to itself");
	load_bad("version: 1\ncluster_switches:\n  - {name: s, cascade: [t, t]}\n  - name: t\n"
		 "hosts:\n  - ports: [{}]\n", 3, "listed twice (first on line 3)");
	load_bad("version: 1\ncluster_switches:\n  - {name: s, cascade: [t]}\n"
		 "  - {name: t, cascade: [{to: s, width: 8}]}\nhosts:\n  - ports: [{}]\n", 4,
		 "gen3 x8 here but gen3 x16 on line 3");
	load_bad("version: 1\ncluster_switches:\n  - {name: s, cascade: [{gen: 3}]}\n"
		 "hosts:\n  - ports: [{}]\n", 3, "cascade #0: 'to' is required");
	load_bad("version: 1\ncluster_switches:\n  - {name: s}\n  - {name: s}\n"
		 "hosts:\n  - ports: [{}]\n", 4,
		 "cluster switch 's': name 's' is already used by the cluster switch on line 3");
	load_bad("version: 1\ncluster_switches:\n  - {chip: x}\nhosts:\n  - ports: [{}]\n", 3,
		 "cluster_switches[0]: 'name' is required");
	load_bad("version: 1\ncluster_switches:\n  - {name: s, port_width: 3}\n"
		 "hosts:\n  - ports: [{}]\n", 3, "port_width must be 1, 2, 4, 8 or 16 lanes");
	load_bad("version: 1\ncluster_switches:\n  - {name: s, ports: 200}\n"
		 "hosts:\n  - ports: [{}]\n", 3, "ports 200 is out of range (1..128)");
	/* Two cascades from one switch exhaust a small one. */
	load_bad("version: 1\ncluster_switches:\n  - {name: s, ports: 6, cascade: [a, b]}\n"
		 "  - {name: a}\n  - {name: b}\nhosts:\n  - ports: [{}]\n", 3,
		 "cluster switch 's' is out of ports");
}

struct visit {
	int count;
	int stop_at;
	char names[8][TOPO_NAME_MAX];
};

static int visit_fn(const struct topo_host *h, const struct topo_ntb *ntb, uint32_t index,
		    void *arg)
{
	struct visit *v = arg;

	assert_int_equal(index, (uint32_t)v->count);
	snprintf(v->names[v->count], TOPO_NAME_MAX, "%s", ntb->name);
	if (++v->count == v->stop_at)
		return 42;
	return 0;
}

static void test_for_each_ntb(void **state)
{
	struct topo *t = load_ok(H
		"  - ports:\n"
		"      - ntb: {name: r0}\n"
		"      - switch:\n"
		"          ports:\n"
		"            - ntb: {name: s0}\n"
		"            - switch: {ports: [{}, {ntb: {name: s1}}]}\n"
		"            - device: {model: nvme}\n"
		"      - ntb: {}\n");
	struct visit v = { 0 };

	assert_int_equal(topo_for_each_ntb(&t->hosts[0], visit_fn, &v), 0);
	assert_int_equal(v.count, 4);
	assert_string_equal(v.names[0], "r0");
	assert_string_equal(v.names[1], "s0");
	assert_string_equal(v.names[2], "s1");
	assert_string_equal(v.names[3], "ntb3");   /* default name = its index */
	assert_string_equal(topo_host_ntb(&t->hosts[0], 2)->name, "s1");
	assert_null(topo_host_ntb(&t->hosts[0], 4));
	memset(&v, 0, sizeof(v));
	v.stop_at = 2;
	assert_int_equal(topo_for_each_ntb(&t->hosts[0], visit_fn, &v), 42);
	assert_int_equal(v.count, 2);
	assert_int_equal(topo_host_index(t, 0), 0);
	assert_int_equal(topo_host_index(t, 1), -1);
	assert_int_equal(topo_host_by_node(t, t->hosts[0].node_id), 0);
	assert_int_equal(topo_host_by_node(t, t->hosts[0].node_id + 4), -1);
	assert_string_equal(t->hosts[0].ports[1].sw.name, "switch0");
	assert_string_equal(t->hosts[0].ports[1].sw.ports[1].sw.name, "switch1");
	assert_int_equal(t->hosts[0].ports[1].sw.ports[1].line, 8);
	topo_free(t);
}

static void path_of(char *buf, size_t cap, const char *rel)
{
	const char *dir = getenv("SMARTIO_SOURCE_DIR");

	snprintf(buf, cap, "%s/%s", dir && *dir ? dir : ".", rel);
}

static void test_shipped(void **state)
{
	struct topo *t = NULL;
	const struct topo_host *h;
	const struct topo_device *d;
	char path[512];
	uint32_t per_sw[8] = { 0 };

	path_of(path, sizeof(path), "topologies/back-to-back.yaml");
	if (topo_load_file(path, &t, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(t->name, "back-to-back");
	assert_int_equal(t->nhosts, 2);
	assert_int_equal(t->ncswitches, 0);
	assert_int_equal(topo_host_ntb(&t->hosts[0], 0)->peer_kind, TOPO_PEER_NTB);
	assert_int_equal(topo_host_ntb(&t->hosts[0], 0)->peer_host, 1);
	assert_int_equal(topo_host_ntb(&t->hosts[1], 0)->peer_kind, TOPO_PEER_NTB);
	assert_int_equal(topo_host_ntb(&t->hosts[1], 0)->peer_host, 0);
	assert_int_equal(t->hosts[1].nports, 3);
	assert_string_equal(t->hosts[1].ports[1].dev.model, "nvme");
	assert_string_equal(t->hosts[1].ports[2].dev.model, "accel");
	topo_free(t);

	/* Two fabrics: every host has ntb0 on mxs-a and ntb1 on mxs-b, nothing between. */
	path_of(path, sizeof(path), "topologies/multipath.yaml");
	if (topo_load_file(path, &t, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(t->name, "multipath");
	assert_int_equal(t->nhosts, 5);
	assert_int_equal(t->ncswitches, 2);
	assert_int_equal(t->ncascades, 0);
	for (uint32_t i = 0; i < 5; i++)
		for (uint32_t k = 0; k < 2; k++) {
			const struct topo_ntb *n = topo_host_ntb(&t->hosts[i], k);

			assert_non_null(n);
			assert_int_equal(n->peer_kind, TOPO_PEER_CSWITCH);
			assert_int_equal(n->peer_cswitch, k);
		}
	assert_null(topo_host_ntb(&t->hosts[0], 2));
	topo_free(t);

	path_of(path, sizeof(path), "topologies/cluster-60.yaml");
	if (topo_load_file(path, &t, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(t->name, "cluster-60");
	assert_int_equal(t->nhosts, 60);
	assert_int_equal(t->ncswitches, 7);
	assert_int_equal(t->ncascades, 6);
	for (uint32_t i = 0; i < 7; i++) {
		assert_string_equal(t->cswitches[i].chip, "PM8536");
		assert_int_equal(t->cswitches[i].used_ports, 24);
		assert_int_equal(t->cswitches[i].ports, 24);
	}
	for (uint32_t i = 0; i < 6; i++) {
		assert_int_equal(t->cascades[i].b, 0);
		assert_int_equal(t->cascades[i].link.width, 16);
	}
	for (uint32_t i = 0; i < 60; i++) {
		const struct topo_ntb *n = topo_host_ntb(&t->hosts[i], 0);

		assert_int_equal(t->hosts[i].id, i);
		assert_non_null(n);
		assert_null(topo_host_ntb(&t->hosts[i], 1));
		assert_int_equal(n->peer_kind, TOPO_PEER_CSWITCH);
		assert_int_equal(n->cable.width, 8);
		per_sw[n->peer_cswitch]++;
		if (i)
			assert_int_equal(t->hosts[i].ram_size, 256 * MiB);
	}
	assert_int_equal(per_sw[0], 0);
	for (int s = 1; s <= 6; s++)
		assert_int_equal(per_sw[s], 10);
	h = &t->hosts[0];
	assert_string_equal(h->name, "lender");
	assert_int_equal(h->ports[0].kind, TOPO_SLOT_SWITCH);
	assert_string_equal(h->ports[0].sw.chip, "PEX8796");
	d = &h->ports[0].sw.ports[1].dev;
	assert_string_equal(d->model, "nvme");
	assert_int_equal(d->nparams, 1);
	assert_string_equal(d->params[0].key, "queues");
	assert_string_equal(d->params[0].value, "32");
	topo_free(t);
}

static void test_load_file_errors(void **state)
{
	struct topo *t = (struct topo *)1;
	char path[] = "/tmp/test_topoXXXXXX";
	int fd;

	assert_int_equal(topo_load_file("/nonexistent/x.yaml", &t, err, sizeof(err)), -ENOENT);
	assert_null(t);
	assert_string_equal(err, "/nonexistent/x.yaml: cannot read the topology: "
			    "No such file or directory");
	assert_int_equal(topo_load_file("/", &t, err, sizeof(err)), -EISDIR);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "version: 1\nhosts:\n  - {ram: 1}\n", 31), 31);
	close(fd);
	assert_int_equal(topo_load_file(path, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":3: hosts[0]: ram 1 is out of range"));
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	unlink(path);

	topo_free(NULL);
	assert_int_equal(topo_load_string(NULL, 0, "x", &t, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_timing_mode),
		cmocka_unit_test(test_device_fields),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_errors_top),
		cmocka_unit_test(test_errors_yaml),
		cmocka_unit_test(test_errors_host),
		cmocka_unit_test(test_errors_slots),
		cmocka_unit_test(test_errors_params_more),
		cmocka_unit_test(test_errors_switch_ntb),
		cmocka_unit_test(test_ntb_connect),
		cmocka_unit_test(test_cswitch_ports),
		cmocka_unit_test(test_for_each_ntb),
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_load_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
