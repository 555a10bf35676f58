/* SPDX-License-Identifier: MIT */
/*
 * The accelerator's in-kernel driver (accel_drv.c): binds to the GPU-like
 * accelerator model (534d:0002, class 120000; devices/ids.h), owns its descriptor ring, a
 * DMA buffer in host RAM and its MSI-X vectors, and offers the rest of the
 * host (the daemon's request handlers, tests, benchmarks) synchronous
 * descriptor submission and device programs.
 *
 * Locking: every call is made with the host lock held exactly once (as the
 * PCI core's callers do). Calls that wait for the device drop the lock while
 * they wait, because the device model takes it for every DMA; the device
 * must not be removed meanwhile (the daemon is single-threaded, so it is
 * not). A second caller arriving while one waits gets -EBUSY.
 */
#ifndef SMARTIO_HOST_DRIVERS_ACCEL_DRV_H
#define SMARTIO_HOST_DRIVERS_ACCEL_DRV_H

#include <stdbool.h>
#include <stdint.h>

#include "host/pci.h"
#include "smartio/accel_regs.h"

#define ACCEL_DRV_RING_SIZE   256u             /* descriptors; at most SIZE - 1 in flight */
#define ACCEL_DRV_BUF_SIZE    (16u << 20)      /* driver-owned RAM buffer for *_RAM ops */
#define ACCEL_DRV_PP_MAILBOX  64u              /* ping-pong word: the last 64 B of memory */

struct accel_drv_info {
	uint64_t mem_size;       /* device memory (BAR2) bytes */
	uint64_t mem_bus;        /* BAR2 bus address: what descriptors name device memory by */
	uint64_t buf_size;       /* the driver's RAM buffer */
	uint64_t buf_bus;        /* its bus address (an IOVA when the IOMMU is on) */
	uint32_t dma_bits;
	uint32_t caps;
	uint8_t *mem;            /* CPU mapping of device memory */
	uint8_t *buf;            /* CPU pointer of the RAM buffer */
};

/* Device-program parameters (registers PROG_*). */
struct accel_prog_args {
	uint32_t op;             /* ACCEL_PROG_* */
	uint32_t role;           /* ping-pong ACCEL_ROLE_* */
	uint64_t src, dst, len;  /* device-memory offsets */
	uint64_t pattern;
	uint64_t peer;           /* ping-pong: bus address written to */
	uint64_t watch;          /* ping-pong: watched device-memory offset */
	uint64_t iters;
};

struct accel_prog_res {
	uint32_t status;         /* PROG_STATUS (ACCEL_ST_*) */
	uint64_t result;
	uint64_t iters_done;
	uint64_t elapsed_ns;
	uint64_t avg_ns;
};

extern const struct pci_driver accel_pci_driver;

/* Is pdev bound to this driver (and so usable by the calls below)? */
bool accel_drv_bound(const struct pci_dev *pdev);
int accel_drv_get_info(struct pci_dev *pdev, struct accel_drv_info *info);

/*
 * Peer-to-peer memory for the engine (Linux's pci_p2pmem_alloc_sgl in a
 * driver): size bytes from the published provider closest to this device
 * and its n peers (the other devices of the transfer, e.g. the NVMe that
 * fills it), by hop distance. Returns the CPU address (pci_free_p2pmem
 * frees it) and in *bus the address the engine's descriptors name it by;
 * NULL when no provider is reachable by all or none has room (the caller may
 * fall back to host memory). The provider may be this device itself.
 */
#define ACCEL_DRV_P2P_PEERS  7
void *accel_drv_alloc_p2pmem(struct pci_dev *pdev, struct pci_dev *const *peers, unsigned n,
			     size_t size, uint64_t *bus, struct pci_dev **provider);

/*
 * A bounded wait for len bytes of engine work: a base plus a generous
 * per-byte allowance, so a stuck device is detected but a big copy is not.
 */
int accel_drv_timeout_ms(uint64_t len);

/*
 * Run descriptors and wait for all of them. The driver sets flags (IRQ on
 * the last) and zeroes status; on return each descriptor's result and
 * status are what the device wrote. Returns 0 when all completed (check
 * each status), -ETIMEDOUT (the ring is reset, in-flight work aborted),
 * -EIO (engine halted: fetch/write-back failure), -EINVAL, -EBUSY.
 */
int accel_drv_submit_batch(struct pci_dev *pdev, struct accel_desc *descs, unsigned n,
			   int timeout_ms);
/* One descriptor with a timeout derived from its length. */
int accel_drv_submit(struct pci_dev *pdev, struct accel_desc *desc);

/* Device programs: start, wait for the end, or both; abort a running one. */
int accel_drv_prog_start(struct pci_dev *pdev, const struct accel_prog_args *args);
int accel_drv_prog_wait(struct pci_dev *pdev, int timeout_ms, struct accel_prog_res *res);
void accel_drv_prog_abort(struct pci_dev *pdev);
int accel_drv_program(struct pci_dev *pdev, const struct accel_prog_args *args, int timeout_ms,
		      struct accel_prog_res *res);

/*
 * The papers' ping-pong between two bound accelerators of this host: each
 * is pointed at the other's mailbox word by its BAR2 bus address (so the
 * counters go peer-to-peer, under a switch or through the root complex),
 * the responder starts first. res is the initiator's (avg_ns: round trip).
 * The mailboxes are saved and restored. Returns 0 (check res->status),
 * -ETIMEDOUT (both programs aborted), -EINVAL, -EBUSY.
 */
int accel_drv_pingpong(struct pci_dev *init, struct pci_dev *resp, uint64_t iters,
		       int timeout_ms, struct accel_prog_res *res);
/* A bounded wait for iters round trips. */
int accel_drv_pingpong_timeout_ms(uint64_t iters);

/*
 * Run a kernel (an ELF .so defining accel_kernel_main, <smartio/accel_kernel.h>)
 * on the device: copy image and the argument block (NUL-ended strings) into
 * device memory at code_off (ACCEL_DRV_KERNEL_TOP: the top of memory below
 * the mailbox; *placed tells where) and wait up to timeout_ms. image NULL:
 * the image is at code_off already (not with ACCEL_DRV_KERNEL_TOP). res->result is
 * what the kernel returned (status OK), or the signal it died of (KERNEL_FAULT).
 */
#define ACCEL_DRV_KERNEL_TOP  UINT64_MAX
/* Where ACCEL_DRV_KERNEL_TOP puts an image (0 if it cannot fit). */
static inline uint64_t accel_drv_kernel_top(uint64_t mem_size, uint64_t image_len,
					    uint64_t args_len)
{
	uint64_t need = ((image_len + 7) & ~7ull) + args_len;

	if (need + ACCEL_DRV_PP_MAILBOX > mem_size)
		return 0;
	return (mem_size - ACCEL_DRV_PP_MAILBOX - need) & ~4095ull;
}
int accel_drv_kernel(struct pci_dev *pdev, const void *image, size_t image_len,
		     const void *args, size_t args_len, uint64_t code_off, int timeout_ms,
		     struct accel_prog_res *res, uint64_t *placed);

#endif
