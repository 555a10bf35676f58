/* SPDX-License-Identifier: MIT */
/*
 * The accelerator's programming interface: BAR0 register layout, the DMA
 * descriptor format and the status codes. Shared by the device model
 * (src/devices/accel), the host's in-kernel driver and programs that borrow
 * the device through libsisci and map its BARs, so it is a public header
 * (installed as <smartio/accel_regs.h>), header-only, and depends on nothing
 * but the C library. docs/devices.md ("Accelerator") explains every
 * register; the comments here say what each field is for.
 *
 * All registers are little-endian, naturally aligned, 32 or 64 bits wide.
 * BAR memory is shared memory, so the device cannot see individual stores:
 *   - RO registers are written by the device; stores by software are
 *     overwritten and never read back by the device.
 *   - RW registers are read by the device when it acts on them.
 *   - Command registers (CTRL.RESET, *_ACK, PROG_CTRL) are consumed by the
 *     device, which clears the bits it took. Software sets bits with an
 *     atomic OR, or writes one command and waits for it to read back 0.
 */
#ifndef SMARTIO_ACCEL_REGS_H
#define SMARTIO_ACCEL_REGS_H

#include <stddef.h>
#include <stdint.h>

#define ACCEL_BAR_REGS          0        /* registers, MSI-X table 0x8000, PBA 0x9000 */
#define ACCEL_BAR_MEM           2        /* device memory, 64-bit prefetchable */
#define ACCEL_REGS_SIZE         0x8000u  /* register space below the MSI-X table */

/* Fixed parameters of this implementation (also readable from registers). */
#define ACCEL_DMA_BITS_DEFAULT  40       /* like the GPUs in the papers */
#define ACCEL_DMA_BITS_MIN      32
#define ACCEL_DMA_BITS_MAX      64       /* 64: no limit */
#define ACCEL_RING_MAX          65536u   /* descriptors in one ring */
#define ACCEL_RING_ALIGN        64u      /* ring base alignment = descriptor size */
#define ACCEL_CHUNK             (256u << 10) /* bytes moved per engine pass */

/* MSI-X vectors. */
#define ACCEL_VEC_RING          0        /* descriptor with ACCEL_DF_IRQ completed */
#define ACCEL_VEC_PROG          1        /* device program finished (any status) */
#define ACCEL_VEC_ERROR         2        /* ERROR gained a bit */
#define ACCEL_NR_VECTORS        3

/* ---- Identification (RO) ---- */
#define ACCEL_REG_MAGIC         0x000    /* 32: ACCEL_MAGIC */
#define  ACCEL_MAGIC            0x4c454341u /* "ACEL" in memory order */
#define ACCEL_REG_VERSION       0x004    /* 32: major << 16 | minor */
#define  ACCEL_VERSION          0x00010000u
#define  ACCEL_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define  ACCEL_VERSION_MINOR(v) ((uint32_t)(v) & 0xffffu)
#define ACCEL_REG_MEM_SIZE      0x008    /* 64: bytes of device memory (BAR2) */
#define ACCEL_REG_DMA_BITS      0x010    /* 32: addresses must be < 2^DMA_BITS */
#define ACCEL_REG_CAPS          0x014    /* 32: supported operations, see below */
#define  ACCEL_CAPS_OP(op)      (1u << (op))          /* ring op ACCEL_OP_* */
#define  ACCEL_CAPS_PROG(p)     (1u << (16 + (p)))    /* program ACCEL_PROG_* */
#define ACCEL_REG_RING_MAX      0x018    /* 32: largest RING_SIZE */
#define ACCEL_REG_CHUNK         0x01c    /* 32: bytes moved per engine pass */

/* ---- Control and status ---- */
#define ACCEL_REG_CTRL          0x040    /* 32 RW */
#define  ACCEL_CTRL_ENABLE      (1u << 0) /* level: DMA ring engine runs (0->1 latches ring) */
#define  ACCEL_CTRL_RESET       (1u << 1) /* command: device reset; reads 0 when done */
#define ACCEL_REG_STATUS        0x044    /* 32 RO */
#define  ACCEL_STS_READY        (1u << 0) /* ring engine enabled with a valid ring */
#define  ACCEL_STS_RING_BUSY    (1u << 1) /* descriptors pending or in progress */
#define  ACCEL_STS_PROG_BUSY    (1u << 2) /* a device program is running */
#define  ACCEL_STS_HALTED       (1u << 3) /* ring engine stopped on an error until re-enabled */
#define  ACCEL_STS_NO_MASTER    (1u << 4) /* ring stalled: bus mastering is off */
#define ACCEL_REG_ERROR         0x048    /* 32 RO, sticky until acknowledged */
#define  ACCEL_ERR_RING_CFG     (1u << 0) /* bad RING_BASE/RING_SIZE at enable, or TAIL >= SIZE */
#define  ACCEL_ERR_FETCH        (1u << 1) /* descriptor fetch failed: engine halted */
#define  ACCEL_ERR_WRITEBACK    (1u << 2) /* completion write failed: engine halted */
#define  ACCEL_ERR_DESC         (1u << 3) /* a descriptor completed with an error status */
#define  ACCEL_ERR_NO_MASTER    (1u << 4) /* the ring needed DMA while bus mastering was off */
#define  ACCEL_ERR_PROG         (1u << 5) /* a device program ended with an error */
#define ACCEL_REG_ERR_ACK       0x04c    /* 32 command: bits to clear in ERROR */
#define ACCEL_REG_INT_STATUS    0x050    /* 32 RO, sticky until acknowledged */
#define  ACCEL_INT_RING         (1u << 0) /* -> vector ACCEL_VEC_RING */
#define  ACCEL_INT_PROG         (1u << 1) /* -> vector ACCEL_VEC_PROG */
#define  ACCEL_INT_ERROR        (1u << 2) /* -> vector ACCEL_VEC_ERROR */
#define  ACCEL_INT_ALL          0x7u
#define ACCEL_REG_INT_MASK      0x054    /* 32 RW: 1 = cause sends no MSI-X message */
#define ACCEL_REG_INT_ACK       0x058    /* 32 command: bits to clear in INT_STATUS */
#define ACCEL_REG_ERR_CODE      0x05c    /* 32 RO: status (ACCEL_ST_*) of the last failure */
#define ACCEL_REG_ERR_ADDR      0x060    /* 64 RO: bus address (or offset) of the last failure */

/* ---- DMA descriptor ring ---- */
#define ACCEL_REG_RING_BASE     0x100    /* 64 RW: bus address, ACCEL_RING_ALIGN aligned */
#define ACCEL_REG_RING_SIZE     0x108    /* 32 RW: entries, 2..ACCEL_RING_MAX */
#define ACCEL_REG_RING_TAIL     0x10c    /* 32 RW doorbell: next slot software will fill */
#define ACCEL_REG_RING_HEAD     0x110    /* 32 RO: next slot the device will execute */
#define ACCEL_REG_RING_DONE     0x114    /* 32 RO: descriptors completed since enable */
#define ACCEL_REG_RING_FAILED   0x118    /* 32 RO: of those, completed with an error */

/* ---- Device program ---- */
#define ACCEL_REG_PROG_OP       0x200    /* 32 RW: ACCEL_PROG_* */
#define ACCEL_REG_PROG_CTRL     0x204    /* 32 command */
#define  ACCEL_PCTL_START       (1u << 0) /* latch parameters and run (taken when idle) */
#define  ACCEL_PCTL_ABORT       (1u << 1) /* stop the running program: status ABORTED */
#define ACCEL_REG_PROG_STATUS   0x208    /* 32 RO: ACCEL_ST_* | ACCEL_PST_RUNNING */
#define  ACCEL_PST_RUNNING      (1u << 30)
#define ACCEL_REG_PROG_ROLE     0x20c    /* 32 RW: ping-pong ACCEL_ROLE_* */
#define ACCEL_REG_PROG_SRC      0x210    /* 64 RW: device-memory offset (MEMCPY, CHECKSUM) */
#define ACCEL_REG_PROG_DST      0x218    /* 64 RW: device-memory offset (MEMCPY, MEMSET) */
#define ACCEL_REG_PROG_LEN      0x220    /* 64 RW: bytes */
#define ACCEL_REG_PROG_PATTERN  0x228    /* 64 RW: MEMSET pattern, CHECKSUM seed */
#define ACCEL_REG_PROG_PEER     0x230    /* 64 RW: ping-pong: bus address written to */
#define ACCEL_REG_PROG_WATCH    0x238    /* 64 RW: ping-pong: watched device-memory offset */
#define ACCEL_REG_PROG_ITERS    0x240    /* 64 RW: ping-pong: iterations */
#define ACCEL_REG_PROG_RESULT   0x248    /* 64 RO: CHECKSUM result; bytes done otherwise */
#define ACCEL_REG_PROG_DONE_ITERS 0x250  /* 64 RO: ping-pong iterations completed */
#define ACCEL_REG_PROG_ELAPSED  0x258    /* 64 RO: ns from START to the end (CLOCK_MONOTONIC) */
#define ACCEL_REG_PROG_AVG_NS   0x260    /* 64 RO: ELAPSED / DONE_ITERS (ping-pong) */
#define ACCEL_REG_PROG_SEQ      0x268    /* 64 RO: programs finished since reset */

/* Programs. */
#define ACCEL_PROG_MEMCPY       1
#define ACCEL_PROG_MEMSET       2
#define ACCEL_PROG_CHECKSUM     3        /* CRC32C, like ACCEL_OP_CHECKSUM */
#define ACCEL_PROG_PINGPONG     4
#define ACCEL_PROG_KERNEL       5        /* user code: <smartio/accel_kernel.h> */

/* KERNEL's parameters, in the PROG_* registers (docs/devices.md "Kernels"). */
#define ACCEL_REG_KERN_IMAGE     ACCEL_REG_PROG_SRC   /* device-memory offset of the ELF .so */
#define ACCEL_REG_KERN_IMAGE_LEN ACCEL_REG_PROG_LEN   /* its bytes */
#define ACCEL_REG_KERN_ARGS      ACCEL_REG_PROG_DST   /* offset of the arguments: NUL-ended strings */
#define ACCEL_REG_KERN_ARGS_LEN  ACCEL_REG_PROG_ITERS /* their bytes, 0 .. ACCEL_KERN_ARGS_MAX */
#define ACCEL_KERN_IMAGE_MAX    (64u << 20)
#define ACCEL_KERN_ARGS_MAX     4096u
#define ACCEL_ROLE_INITIATOR    0
#define ACCEL_ROLE_RESPONDER    1

/* ---- Descriptors ---- */
#define ACCEL_OP_COPY           1        /* len bytes src -> dst */
#define ACCEL_OP_FILL           2        /* dst gets the 8-byte pattern repeated */
#define ACCEL_OP_CHECKSUM       3        /* result = CRC32C(seed = pattern, src, len) */
#define ACCEL_OP_NOP            4        /* completes, nothing else */
#define ACCEL_OP_FENCE          5        /* after all earlier work: if dst, write pattern (8 B) */
#define ACCEL_OP_MAX            5

#define ACCEL_DF_IRQ            (1u << 0) /* completion raises ACCEL_VEC_RING */
#define ACCEL_DF_VALID_MASK     ACCEL_DF_IRQ

/*
 * One ring entry, 64 bytes. Software fills op..user and zeroes status; the
 * device writes result, then status (with ACCEL_ST_DONE) last, so a status
 * with DONE means result is valid. Addresses are bus addresses; the device
 * serves its own BAR2 range from its memory without a bus transaction.
 */
struct accel_desc {
	uint32_t op;            /* 0x00 ACCEL_OP_* */
	uint32_t flags;         /* 0x04 ACCEL_DF_* */
	uint64_t src;           /* 0x08 COPY, CHECKSUM */
	uint64_t dst;           /* 0x10 COPY, FILL, FENCE */
	uint64_t len;           /* 0x18 bytes; 0 is a valid no-op */
	uint64_t pattern;       /* 0x20 FILL pattern, CHECKSUM seed, FENCE value */
	uint64_t user;          /* 0x28 software's, never touched */
	uint64_t result;        /* 0x30 device: CRC (CHECKSUM) or bytes done */
	uint32_t status;        /* 0x38 device: ACCEL_ST_* */
	uint32_t rsvd;          /* 0x3c */
};

#define ACCEL_DESC_SIZE         64u
#define ACCEL_DESC_RESULT       0x30u
#define ACCEL_DESC_STATUS       0x38u

_Static_assert(sizeof(struct accel_desc) == ACCEL_DESC_SIZE, "descriptor is 64 bytes");
_Static_assert(offsetof(struct accel_desc, src) == 0x08, "src at 0x08");
_Static_assert(offsetof(struct accel_desc, dst) == 0x10, "dst at 0x10");
_Static_assert(offsetof(struct accel_desc, len) == 0x18, "len at 0x18");
_Static_assert(offsetof(struct accel_desc, pattern) == 0x20, "pattern at 0x20");
_Static_assert(offsetof(struct accel_desc, result) == ACCEL_DESC_RESULT, "result offset");
_Static_assert(offsetof(struct accel_desc, status) == ACCEL_DESC_STATUS, "status offset");
_Static_assert(ACCEL_DESC_SIZE == ACCEL_RING_ALIGN, "ring alignment is one descriptor");

/* Ring slot i's bus address, and the index after i. */
#define ACCEL_RING_SLOT(base, i)  ((uint64_t)(base) + (uint64_t)(i) * ACCEL_DESC_SIZE)
#define ACCEL_RING_NEXT(i, size)  (((uint32_t)(i) + 1u) % (uint32_t)(size))

/*
 * Completion status (descriptor status, PROG_STATUS, ERR_CODE):
 * bit 31 DONE, bits 15:8 the fabric status of a failed DMA (1 unsupported
 * request, 2 IOMMU fault, 3 link down, ...; 0xff internal error), bits 7:0
 * the code.
 */
#define ACCEL_ST_DONE           (1u << 31)
#define ACCEL_ST_CODE(s)        ((uint32_t)(s) & 0xffu)
#define ACCEL_ST_FAB(s)         (((uint32_t)(s) >> 8) & 0xffu)
#define ACCEL_ST_MAKE(code, fab) (ACCEL_ST_DONE | ((uint32_t)((fab) & 0xffu) << 8) | \
				  ((uint32_t)(code) & 0xffu))

#define ACCEL_SC_OK             0
#define ACCEL_SC_BAD_OP         1        /* unknown op / program */
#define ACCEL_SC_BAD_FIELD      2        /* reserved flag, bad role, misaligned watch */
#define ACCEL_SC_DMA_LIMIT      3        /* an address range reaches 2^DMA_BITS */
#define ACCEL_SC_READ_FAULT     4        /* a DMA read failed (fabric status in 15:8) */
#define ACCEL_SC_WRITE_FAULT    5        /* a DMA write failed (fabric status in 15:8) */
#define ACCEL_SC_NO_MASTER      6        /* DMA needed while bus mastering was off */
#define ACCEL_SC_RANGE          7        /* device-memory range outside the memory */
#define ACCEL_SC_ABORTED        8        /* stopped by ABORT, disable or reset */
#define ACCEL_SC_NO_KERNEL      9        /* KERNEL: the image would not load (no entry, ABI) */
#define ACCEL_SC_KERNEL_FAULT   10       /* KERNEL: the kernel crashed; PROG_RESULT = signal */

#endif
