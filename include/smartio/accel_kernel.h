/* SPDX-License-Identifier: MIT */
/*
 * The accelerator's kernel ABI: what user-supplied device code sees when the
 * accelerator runs it (program ACCEL_PROG_KERNEL, docs/devices.md "Kernels").
 *
 * A kernel is an ELF shared object (cc -shared -fPIC) that defines
 *
 *     int64_t accel_kernel_main(struct accel_kctx *k, int argc, char **argv);
 *
 * The device runs it in a device context of its own: a separate process
 * whose address space holds the accelerator's memory (k->mem) and nothing of
 * the daemon, so a buggy kernel can only hurt itself and the device's memory.
 * Everything else is reached as the device's DMA reaches it: k->read and
 * k->write go to bus addresses through the fabric (the device's requester
 * ID, the IOMMU, switches and NTB windows, the DMA limit, Bus Master Enable),
 * exactly like a descriptor's COPY would. Its own BAR2 range is served from
 * its memory, as everywhere on this device.
 *
 * The return value lands in PROG_RESULT with status OK. A kernel that
 * crashes ends with KERNEL_FAULT (PROG_RESULT = the signal), one that does
 * not load with NO_KERNEL, one that is aborted with ABORTED.
 *
 * Header-only and C-library-only, like accel_regs.h and nvme_queue.h, which
 * kernels may include too (a kernel can drive an NVMe queue pair with the
 * same code the CPU drivers use).
 */
#ifndef SMARTIO_ACCEL_KERNEL_H
#define SMARTIO_ACCEL_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#define ACCEL_KERNEL_ABI        1
#define ACCEL_KERNEL_ENTRY      "accel_kernel_main"
/* Bytes one read or write request moves at most; larger ones are split. */
#define ACCEL_KERNEL_XFER_MAX   (64u << 10)

struct accel_kctx {
	uint32_t abi;            /* ACCEL_KERNEL_ABI */
	uint32_t dma_bits;       /* the device's DMA address limit */
	uint8_t *mem;            /* the device's memory (BAR2), mapped */
	uint64_t mem_size;
	uint64_t mem_bus;        /* BAR2's bus address: how peers name k->mem */
	/*
	 * DMA at bus addresses. Return 0, or the failure as a status word
	 * (ACCEL_ST_* of accel_regs.h: code in bits 7:0, fabric status in
	 * 15:8). Synchronous: a write has reached its target when it returns,
	 * so a write after a write is ordered, and a doorbell written after
	 * stores to k->mem sees them.
	 */
	uint32_t (*read)(struct accel_kctx *k, uint64_t bus, void *buf, size_t len);
	uint32_t (*write)(struct accel_kctx *k, uint64_t bus, const void *buf, size_t len);
	uint64_t (*now_ns)(void);        /* CLOCK_MONOTONIC */
	void *priv;                      /* the device context's own */
};

typedef int64_t accel_kernel_fn(struct accel_kctx *k, int argc, char **argv);

/* One 32- or 64-bit access (a doorbell, a register). */
static inline uint32_t accel_k_st32(struct accel_kctx *k, uint64_t bus, uint32_t v)
{
	return k->write(k, bus, &v, sizeof(v));
}

static inline uint32_t accel_k_st64(struct accel_kctx *k, uint64_t bus, uint64_t v)
{
	return k->write(k, bus, &v, sizeof(v));
}

static inline uint32_t accel_k_ld32(struct accel_kctx *k, uint64_t bus, uint32_t *v)
{
	return k->read(k, bus, v, sizeof(*v));
}

static inline uint32_t accel_k_ld64(struct accel_kctx *k, uint64_t bus, uint64_t *v)
{
	return k->read(k, bus, v, sizeof(*v));
}

/*
 * The value of a KEY=VALUE argument, or NULL. The host adds such arguments
 * when it hands the kernel resources, e.g. an NVMe queue pair
 * (nvme.qid=..., docs/devices.md "Device-resident NVMe queues").
 */
static inline const char *accel_k_arg(int argc, char **argv, const char *key)
{
	size_t n = 0;

	while (key[n])
		n++;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t j = 0;

		while (j < n && a[j] == key[j])
			j++;
		if (j == n && a[n] == '=')
			return a + n + 1;
	}
	return NULL;
}

/* The bus address of k->mem + off, for handing to peers (PRPs, queue bases). */
static inline uint64_t accel_k_bus(const struct accel_kctx *k, uint64_t off)
{
	return k->mem_bus + off;
}

#endif
