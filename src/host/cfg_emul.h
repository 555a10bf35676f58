/* SPDX-License-Identifier: MIT */
/*
 * Config-space emulation shared by the devices that stand for a function
 * elsewhere (the Device Lending shadow, shadow.c; cZodiac's logic
 * full-function device, czodiac_dev.c): sub-dword access helpers and the
 * emulated BARs and expansion ROM. The header's BARs are the stand-in's
 * addresses (NTB windows, UBARs), so sizing and restores act on registers
 * kept here and never reach the real function's; the ROM is absent.
 */
#ifndef SMARTIO_HOST_CFG_EMUL_H
#define SMARTIO_HOST_CFG_EMUL_H

#include <stdbool.h>
#include <stdint.h>

struct cfg_bars {
	uint32_t reg[6], mask[6], flags[6];
};

/* A config access of size bytes at off is well formed (1, 2, 4; aligned; < 4 KiB). */
bool cfg_args_ok(uint32_t off, uint32_t size);
/* The size bytes at off (any offset) out of the dword holding them. */
uint32_t cfg_extract(uint32_t dw, uint32_t off, uint32_t size);
/* dword old with the size bytes at off replaced by val. */
uint32_t cfg_merge(uint32_t old, uint32_t off, uint32_t size, uint32_t val);

/* The registers of BARs at addr[] with size[] (0: none) and flags[] (memory type bits). */
void cfg_bars_init(struct cfg_bars *b, const uint64_t addr[6], const uint64_t size[6],
		   const uint32_t flags[6]);
/* A read of a BAR or the ROM: true with *val; false: not theirs. */
bool cfg_bars_read(const struct cfg_bars *b, uint32_t off, uint32_t size, uint32_t *val);
/* A write to a BAR (sizing, restores) or the ROM (dropped): true; false: not theirs. */
bool cfg_bars_write(struct cfg_bars *b, uint32_t off, uint32_t size, uint32_t val);

#endif
