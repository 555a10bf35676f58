/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, the host's in-kernel drivers for its applications
 * (like ioctls): NVME_ADMIN, NVME_IO, ACCEL_OP.
 */
#ifndef SMARTIO_PROTO_DRIVER_H
#define SMARTIO_PROTO_DRIVER_H

#include <stdint.h>

#include "wire.h"

/* Data carried in one NVMe message, either way (a multiple of 512). */
#define SMIO_NVME_MAX_DATA  (32u * 1024u)

enum smio_dir {
	SMIO_DIR_NONE = 0,
	SMIO_DIR_TO_DEV = 1,       /* data follows the request */
	SMIO_DIR_FROM_DEV = 2,     /* data follows the completion */
};

/*
 * An admin command for the NVMe controller at bdf, passed through the host's
 * driver (what NVME_IOCTL_ADMIN_CMD does). The driver supplies the data
 * pointers (PRP1/PRP2 of sqe are ignored) and refuses commands that would
 * take the controller from it: queue creation/deletion, format, firmware,
 * security, and anything with an SGL.
 */
struct smio_nvme_admin {
	uint16_t bdf;
	uint8_t dir;               /* enum smio_dir */
	uint8_t pad;
	uint32_t data_len;         /* <= SMIO_NVME_MAX_DATA; with TO_DEV, that many bytes follow */
	uint32_t timeout_ms;       /* 0: the driver's default */
	uint32_t pad2;
	uint8_t sqe[64];           /* opcode, nsid, cdw10..15 are used */
	uint8_t data[];
};

enum smio_nvme_op {
	SMIO_NVME_READ = 1, SMIO_NVME_WRITE, SMIO_NVME_FLUSH, SMIO_NVME_WRITE_ZEROES,
	SMIO_NVME_DEALLOCATE,
};

/* Block I/O through the host's NVMe driver. Data: nlb blocks (read: returned). */
struct smio_nvme_io {
	uint16_t bdf;
	uint8_t op;                /* enum smio_nvme_op */
	uint8_t pad;
	uint32_t nsid;
	uint64_t slba;
	uint32_t nlb;              /* blocks, 1-based; 0 for FLUSH */
	uint32_t data_len;         /* WRITE: bytes that follow (= nlb * block size) */
	uint8_t data[];
};

struct smio_nvme_cpl {
	uint32_t result;           /* completion dword 0 */
	uint16_t status;           /* NVMe status field (SCT << 8 | SC, DNR bit 14), no phase */
	uint16_t pad;
	uint32_t data_len;         /* bytes that follow */
	uint32_t pad2;
	uint8_t data[];
};

enum smio_accel_kind {
	SMIO_ACCEL_COPY = 1,       /* src -> dst, len (bus addresses, or offsets by flags) */
	SMIO_ACCEL_FILL,           /* dst, len, pattern */
	SMIO_ACCEL_CHECKSUM,       /* src, len, pattern = seed -> result */
	SMIO_ACCEL_PINGPONG,       /* with the accelerator at peer_bdf, iters round trips */
	SMIO_ACCEL_INFO,           /* -> result = device memory size, bus = BAR2 address */
};

#define SMIO_ACCEL_F_SRC_DEV  0x1  /* src is an offset in the accelerator's memory */
#define SMIO_ACCEL_F_DST_DEV  0x2  /* dst is an offset in the accelerator's memory */
#define SMIO_ACCEL_F_SRC_RAM  0x4  /* src is an offset in a driver-owned RAM buffer */
#define SMIO_ACCEL_F_DST_RAM  0x8  /* dst is an offset in a driver-owned RAM buffer */

struct smio_accel_op {
	uint16_t bdf;
	uint16_t peer_bdf;         /* PINGPONG */
	uint32_t kind;             /* enum smio_accel_kind */
	uint32_t flags;            /* SMIO_ACCEL_F_* */
	uint32_t pad;
	uint64_t src, dst, len;
	uint64_t pattern;
	uint64_t iters;            /* PINGPONG round trips (1 .. 10^7); a repeat count otherwise */
};

struct smio_accel_result {
	uint32_t status;           /* the device's completion status word */
	uint32_t pad;
	uint64_t result;           /* checksum, bytes done, or memory size */
	uint64_t bus;              /* INFO: BAR2 bus address */
	uint64_t elapsed_ns;
	uint64_t iters_done;
	uint64_t avg_ns;
};

/*
 * ACCEL_LAUNCH: run a kernel (an ELF .so, <smartio/accel_kernel.h>) on the
 * accelerator. The image and then the argument block (NUL-ended strings)
 * follow. Reply: smio_accel_result with status (PROG_STATUS), result (the
 * kernel's return value, or the signal it died of), bus = where the image
 * went in device memory (an offset), elapsed_ns.
 */
#define SMIO_ACCEL_CODE_TOP   UINT64_MAX  /* code_off: as high in memory as it fits */
#define SMIO_ACCEL_LAUNCH_MAX_MS (24u * 3600u * 1000u)

#define SMIO_ACCEL_LAUNCH_F_NVMEQ 0x1  /* lend the kernel a queue pair of nvme_bdf */
#define SMIO_ACCEL_LAUNCH_F_LOADED 0x2 /* the image is in device memory at code_off
					  (ACCEL_LOAD): only the arguments follow */
#define SMIO_ACCEL_QDEPTH_MAX 1024u

struct smio_accel_launch {
	uint16_t bdf;
	uint16_t nvme_bdf;         /* F_NVMEQ: the NVMe whose queue pair the kernel drives */
	uint32_t image_len;
	uint32_t args_len;
	uint32_t timeout_ms;       /* 1 .. SMIO_ACCEL_LAUNCH_MAX_MS */
	uint64_t code_off;         /* device-memory offset of the image, or SMIO_ACCEL_CODE_TOP */
	uint32_t flags;            /* SMIO_ACCEL_LAUNCH_F_* */
	uint16_t qdepth;           /* F_NVMEQ: entries per queue, 2..SMIO_ACCEL_QDEPTH_MAX */
	uint16_t pad;
	uint32_t nsid;             /* F_NVMEQ: the namespace the kernel is told about */
	uint32_t pad2;
	uint8_t data[];            /* image (unless F_LOADED), then arguments */
};

/*
 * ACCEL_LOAD: len bytes into the accelerator's memory at off, by the driver's
 * stores to BAR2: how an image too large for one ACCEL_LAUNCH gets there.
 * The reply is empty.
 */
struct smio_accel_load {
	uint16_t bdf;
	uint16_t pad;
	uint32_t len;
	uint64_t off;
	uint8_t data[];
};

/* Where a launch puts an image by default (SMIO_ACCEL_CODE_TOP): as high as it fits
 * with its arguments, 4 KiB aligned, below the last 64 bytes; 0 if it cannot fit. */
static inline uint64_t smio_accel_code_top(uint64_t mem_size, uint64_t image_len,
					   uint64_t args_len)
{
	uint64_t need = ((image_len + 7) & ~7ull) + args_len;

	if (need + 64 > mem_size)
		return 0;
	return (mem_size - 64 - need) & ~4095ull;
}

/*
 * P2PMEM_ALLOC (issue 14): a data buffer in peer-to-peer memory for a
 * transfer by device `client` (FDID: a function of this host, a device it
 * borrowed, or another host's device, which reaches this host through its
 * NTB adapter), from the published provider the orchestrator finds closest
 * by hop count (pci_p2pmem_find). size is rounded up to pages. No provider
 * reachable: -ENODEV, or with F_FALLBACK an empty grant (bus 0) meaning
 * "use host memory". The allocation is the connection's: P2PMEM_FREE (its
 * bus address) or the connection's end frees it.
 */
#define SMIO_P2PMEM_F_FALLBACK  0x1u
struct smio_p2pmem_req {
	uint64_t size;
	uint32_t client;           /* FDID */
	uint32_t flags;            /* SMIO_P2PMEM_F_* */
};

struct smio_p2pmem_grant {
	uint64_t bus;              /* on this host (what the CPU and SISCI attach name); 0: none */
	uint64_t size;
	uint32_t provider;         /* FDID of the provider */
	uint32_t bar;
	uint32_t hops;             /* the client's distance to it */
	uint32_t pad;
};

struct smio_p2pmem_free {
	uint64_t bus;
};

/*
 * NVME_COPY: nlb blocks from one NVMe namespace to another (or the same),
 * both controllers bound to this host's driver, through a buffer of
 * SMIO_NVME_COPY_CHUNK bytes. F_P2PMEM: the buffer is p2pmem from the
 * provider closest to both controllers (pci_p2pmem_find), so the data never
 * passes host RAM, as nvmet's p2pmem does for its transfers; none reachable:
 * -ENODEV, or with F_FALLBACK the driver's buffers in host RAM. Without
 * F_P2PMEM: host RAM. The block sizes must be equal.
 */
#define SMIO_NVME_COPY_CHUNK       (1u << 20)
#define SMIO_NVME_COPY_MAX_NLB     (1u << 24)
#define SMIO_NVME_COPY_F_P2PMEM    0x1u
#define SMIO_NVME_COPY_F_FALLBACK  0x2u
struct smio_nvme_copy {
	uint16_t src_bdf, dst_bdf;
	uint32_t flags;            /* SMIO_NVME_COPY_F_* */
	uint32_t src_nsid, dst_nsid;
	uint64_t src_slba, dst_slba;
	uint32_t nlb;              /* 1 .. SMIO_NVME_COPY_MAX_NLB */
	uint32_t pad;
};

struct smio_nvme_copy_result {
	uint64_t bytes;            /* copied */
	uint64_t elapsed_ns;
	uint32_t provider;         /* FDID of the p2pmem's provider; 0: host RAM */
	uint32_t bar;
	uint32_t hops;             /* the sum of both controllers' distances to it */
	uint16_t status;           /* the first failing NVMe status, 0 */
	uint16_t pad;
};

#endif
