// SPDX-License-Identifier: MIT
/*
 * Accelerator copy bandwidth through the driver, against a plain memcpy of
 * the same sizes in the same run: RAM -> device memory (the engine reading
 * host RAM by DMA) and device -> device (peer-to-peer under a switch), for
 * 4 KiB .. 16 MiB. In-process: one host, its device models on their own
 * threads (devrun), the PCI core and accel_pci_driver, as in smartiod, but
 * without the daemon's messages.
 *
 * Each size runs a batch of descriptors (one interrupt per batch, as the
 * driver does), repeated until at least 64 MiB have moved; the result is
 * bytes / wall time around the submissions. memcpy copies between two
 * 16 MiB buffers the same number of times.
 *
 * usage: bench_accel [--json]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/models.h"
#include "fabric/route.h"
#include "host/devrun.h"
#include "host/drivers/accel_drv.h"
#include "host/enum.h"
#include "host/pci.h"
#include "util/json_out.h"
#include "util/smio_time.h"

static const char yaml[] =
	"version: 1\n"
	"hosts:\n"
	"  - id: 0\n"
	"    ram: 2G\n"
	"    ports:\n"
	"      - switch:\n"
	"          name: sw0\n"
	"          ports:\n"
	"            - device: {name: acc0, model: accel, lendable: false, params: {memory: 64M}}\n"
	"            - device: {name: acc1, model: accel, lendable: false, params: {memory: 64M}}\n";

#define TOTAL      (64ull << 20)     /* bytes moved per measurement, at least */
#define MAX_SIZE   (16u << 20)

static void die(const char *what, const char *err)
{
	fprintf(stderr, "bench_accel: %s: %s\n", what, err);
	exit(1);
}

/* GB/s of copies src -> dst of sz bytes by the engine, batched. */
static double engine(struct pci_dev *p, uint64_t src, uint64_t dst, uint64_t sz)
{
	static struct accel_desc d[64];
	uint64_t reps = TOTAL / sz ? TOTAL / sz : 1, done = 0;
	unsigned batch = reps < 64 ? (unsigned)reps : 64;
	double t0;

	/* One warm-up pass: first touch of RAM pages and a device woken from idle. */
	for (int warm = 1; warm >= 0; warm--) {
		done = 0;
		t0 = smio_now_ns();
		while (done < (warm ? 1 : reps)) {
			unsigned n = warm ? 1 : batch;

			for (unsigned i = 0; i < n; i++)
				d[i] = (struct accel_desc){ .op = ACCEL_OP_COPY, .src = src, .dst = dst,
							    .len = sz };
			if (accel_drv_submit_batch(p, d, n, accel_drv_timeout_ms(sz * n)))
				die("submit", "failed");
			for (unsigned i = 0; i < n; i++)
				if (d[i].status != ACCEL_ST_MAKE(ACCEL_SC_OK, 0))
					die("copy", "device status not ok");
			done += n;
		}
	}
	return (double)(sz * done) / (smio_now_ns() - t0);
}

static double cpu_memcpy(uint8_t *dst, const uint8_t *src, uint64_t sz)
{
	uint64_t reps = TOTAL / sz ? TOTAL / sz : 1;
	double t0;

	memcpy(dst, src, sz);    /* warm-up, as for the engine */
	t0 = smio_now_ns();
	for (uint64_t i = 0; i < reps; i++) {
		memcpy(dst, src, sz);
		/* Keep the compiler from merging the copies. */
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	return (double)(sz * reps) / (smio_now_ns() - t0);
}

/* One size's row; dies on a failed allocation, as on every other failure here. */
static void result_json(struct json_object *arr, uint64_t sz, double mc, double r2d, double d2d)
{
	struct json_object *o = json_object_new_object();

	if (!o || smio_json_add_uint(o, "size", sz) ||
	    smio_json_add_double(o, "memcpy_gbps", mc, "%.3f") ||
	    smio_json_add_double(o, "ram_to_dev_gbps", r2d, "%.3f") ||
	    smio_json_add_double(o, "dev_to_dev_gbps", d2d, "%.3f") ||
	    smio_json_add_double(o, "ratio_ram_to_dev", r2d / mc, "%.3f") ||
	    smio_json_add_double(o, "ratio_dev_to_dev", d2d / mc, "%.3f") || smio_json_push(arr, o))
		die("JSON output", "out of memory");
}

int main(int argc, char **argv)
{
	struct topo *t;
	struct fab_cluster *c = NULL;
	struct fab_host *h;
	struct devrun_set *devs;
	struct pci_host *ph;
	struct pci_dev *a, *b;
	struct accel_drv_info ia, ib;
	struct json_object *root = NULL, *arr = NULL;
	uint8_t *m1, *m2;
	char err[512];
	bool json = argc > 1 && !strcmp(argv[1], "--json");

	if (argc > 2 || (argc == 2 && !json)) {
		fprintf(stderr, "usage: bench_accel [--json]\n");
		return 2;
	}
	if (topo_load_string(yaml, strlen(yaml), "bench.yaml", &t, err, sizeof(err)) ||
	    fab_cluster_create(t, dev_endpoint_init, &c, err, sizeof(err)))
		die("cluster", err);
	h = fab_cluster_host(c, 0);
	if (host_enumerate(h, err, sizeof(err)) || devrun_start(h, NULL, &devs, err, sizeof(err)))
		die("host", err);
	fab_host_lock(h);
	if (pci_host_create(h, &ph, err, sizeof(err)))
		die("pci", err);
	if (pci_register_driver(ph, &accel_pci_driver))
		die("driver", "registration failed");
	a = pci_get_dev(ph, fab_func_bdf(fab_func_by_name(h, "acc0")));
	b = pci_get_dev(ph, fab_func_bdf(fab_func_by_name(h, "acc1")));
	if (accel_drv_get_info(a, &ia) || accel_drv_get_info(b, &ib))
		die("driver", "accelerators not bound");
	m1 = malloc(MAX_SIZE);
	m2 = malloc(MAX_SIZE);
	if (!m1 || !m2)
		die("memory", "out of memory");
	memset(m1, 0x5a, MAX_SIZE);
	memset(m2, 0, MAX_SIZE);
	memset(ia.buf, 0xa5, MAX_SIZE);

	if (json) {
		root = json_object_new_object();
		arr = json_object_new_array();
		if (!root || !arr || smio_json_add_str(root, "benchmark", "accel"))
			die("JSON output", "out of memory");
	} else {
		printf("%-9s %12s %12s %12s %10s %10s\n", "size", "memcpy GB/s", "RAM->dev",
		       "dev->dev", "ratio r2d", "ratio d2d");
	}
	for (uint64_t sz = 4096; sz <= MAX_SIZE; sz *= 4) {
		double mc = cpu_memcpy(m2, m1, sz);
		double r2d = engine(a, ia.buf_bus, ia.mem_bus, sz);
		double d2d = engine(a, ia.mem_bus, ib.mem_bus + (16u << 20), sz);

		if (json)
			result_json(arr, sz, mc, r2d, d2d);
		else
			printf("%-9" PRIu64 " %12.2f %12.2f %12.2f %10.2f %10.2f\n", sz, mc, r2d,
			       d2d, r2d / mc, d2d / mc);
	}
	if (json) {
		int rc = smio_json_add(root, "results", arr);

		if (rc || (rc = smio_json_print(stdout, root)))
			die("JSON output", strerror(-rc));
		json_object_put(root);
	}
	free(m1);
	free(m2);
	pci_host_destroy(ph);
	fab_host_unlock(h);
	devrun_stop(devs);
	fab_cluster_destroy(c);
	topo_free(t);
	return 0;
}
