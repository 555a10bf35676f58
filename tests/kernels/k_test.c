// SPDX-License-Identifier: MIT
/*
 * A test kernel for the accelerator (tests/accel_kernel_test.sh). argv[1]
 * picks what it does; numbers are C literals (0x hex):
 *   fill OFF LEN BYTE   set LEN bytes of device memory at OFF; returns LEN
 *   peek OFF            returns the 64-bit word at OFF of device memory
 *   store BUS VALUE     a 64-bit DMA write; returns its status word (0: done)
 *   load BUS            a 64-bit DMA read; returns the value, or -(status word)
 *   copyin BUS OFF LEN  DMA read of LEN bytes into device memory at OFF; returns
 *                       the status word
 *   crash               dereferences NULL
 *   spin                never returns (until aborted)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "smartio/accel_kernel.h"

int64_t accel_kernel_main(struct accel_kctx *k, int argc, char **argv);

#ifdef K_TEST_BIG
/* k_big.so: the same kernel with 96 KiB of data, larger than one request. */
static const uint8_t big[96 << 10] = { 1, 2, 3 };
#endif

static uint64_t num(int argc, char **argv, int i)
{
	return i < argc ? strtoull(argv[i], NULL, 0) : 0;
}

int64_t accel_kernel_main(struct accel_kctx *k, int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	uint64_t v = 0;
	uint32_t st;

	if (k->abi != ACCEL_KERNEL_ABI)
		return -1;
	if (!strcmp(op, "fill")) {
		uint64_t off = num(argc, argv, 2), len = num(argc, argv, 3);

		if (off > k->mem_size || len > k->mem_size - off)
			return -2;
		memset(k->mem + off, (int)num(argc, argv, 4), len);
		return (int64_t)len;
	}
	if (!strcmp(op, "peek")) {
		uint64_t off = num(argc, argv, 2);

		if (off > k->mem_size - 8)
			return -2;
		memcpy(&v, k->mem + off, 8);
		return (int64_t)v;
	}
	if (!strcmp(op, "store"))
		return accel_k_st64(k, num(argc, argv, 2), num(argc, argv, 3));
	if (!strcmp(op, "load")) {
		st = accel_k_ld64(k, num(argc, argv, 2), &v);
		return st ? -(int64_t)st : (int64_t)v;
	}
	if (!strcmp(op, "copyin")) {
		uint64_t off = num(argc, argv, 3), len = num(argc, argv, 4);

		if (off > k->mem_size || len > k->mem_size - off)
			return -2;
		return k->read(k, num(argc, argv, 2), k->mem + off, len);
	}
#ifdef K_TEST_BIG
	if (!strcmp(op, "big"))
		return big[0] + big[1] + big[2] + big[sizeof(big) - 1];
#endif
	if (!strcmp(op, "crash"))
		*(volatile int *)(uintptr_t)argc = 1;   /* argc is a tiny address: SIGSEGV */
	if (!strcmp(op, "spin"))
		for (;;)
			(void)k->now_ns();
	return -3;
}
