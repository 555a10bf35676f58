// SPDX-License-Identifier: MIT
/*
 * CRC32C for the checksum operations. Hardware CRCs run at memory speed, so
 * the model uses the SSE4.2 instruction where the CPU has it and a
 * slicing-by-8 table otherwise; both give the same result.
 */
#include <string.h>

#include "devices/accel/accel_priv.h"

#define CRC32C_POLY 0x82f63b78u   /* reflected Castagnoli polynomial */

static uint32_t crc_tab[8][256];
static bool crc_hw_ok;

/* Tables are built before main() so model threads only ever read them. */
__attribute__((constructor)) static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
	crc_hw_ok = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t n)
{
	while (n >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		    crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
		    crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
		    crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xff];
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t c64;

	while (n && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi(c, *p++);
		n--;
	}
	c64 = c;
	while (n >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t accel_crc32c(uint32_t crc, const void *buf, size_t len)
{
	uint32_t c = ~crc;

#if defined(__x86_64__)
	if (crc_hw_ok)
		return ~crc_hw(c, buf, len);
#endif
	return ~crc_sw(c, buf, len);
}
