// SPDX-License-Identifier: MIT
/* Emulated BARs and ROM of stand-in devices (cfg_emul.h). */
#include <linux/pci_regs.h>

#include "cfg_emul.h"

bool cfg_args_ok(uint32_t off, uint32_t size)
{
	return (size == 1 || size == 2 || size == 4) && !(off % size) && off < 4096;
}

uint32_t cfg_extract(uint32_t dw, uint32_t off, uint32_t size)
{
	dw >>= (off & 3) * 8;
	return size == 4 ? dw : dw & ((1u << (8 * size)) - 1);
}

uint32_t cfg_merge(uint32_t old, uint32_t off, uint32_t size, uint32_t val)
{
	unsigned shift = (off & 3) * 8;
	uint32_t m = size == 4 ? 0xffffffffu : ((1u << (8 * size)) - 1) << shift;

	return (old & ~m) | ((val << shift) & m);
}

void cfg_bars_init(struct cfg_bars *b, const uint64_t addr[6], const uint64_t size[6],
		   const uint32_t flags[6])
{
	*b = (struct cfg_bars){ 0 };
	for (unsigned i = 0; i < 6; i++) {
		uint64_t mask = ~(size[i] - 1);
		bool is64 = (flags[i] & PCI_BASE_ADDRESS_MEM_TYPE_MASK) ==
			    PCI_BASE_ADDRESS_MEM_TYPE_64;

		if (!size[i])
			continue;
		b->flags[i] = flags[i];
		b->mask[i] = (uint32_t)mask & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK;
		b->reg[i] = (uint32_t)addr[i] | b->flags[i];
		if (is64 && i < 5) {
			/* The upper half: all its bits are address bits. */
			b->mask[i + 1] = (uint32_t)(mask >> 32);
			b->reg[i + 1] = (uint32_t)(addr[i] >> 32);
			i++;
		}
	}
}

bool cfg_bars_read(const struct cfg_bars *b, uint32_t off, uint32_t size, uint32_t *val)
{
	uint32_t dw = off & ~3u;

	if (dw >= PCI_BASE_ADDRESS_0 && dw <= PCI_BASE_ADDRESS_5) {
		*val = cfg_extract(b->reg[(dw - PCI_BASE_ADDRESS_0) / 4], off, size);
		return true;
	}
	if (dw == PCI_ROM_ADDRESS) {
		*val = 0;                  /* absent */
		return true;
	}
	return false;
}

bool cfg_bars_write(struct cfg_bars *b, uint32_t off, uint32_t size, uint32_t val)
{
	uint32_t dw = off & ~3u;

	if (dw >= PCI_BASE_ADDRESS_0 && dw <= PCI_BASE_ADDRESS_5) {
		unsigned i = (dw - PCI_BASE_ADDRESS_0) / 4;

		/* Sizing and restores on the emulated register; the real one stays. */
		b->reg[i] = (cfg_merge(b->reg[i], off, size, val) & b->mask[i]) | b->flags[i];
		return true;
	}
	return dw == PCI_ROM_ADDRESS;     /* a ROM write is dropped */
}
