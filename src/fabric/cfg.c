// SPDX-License-Identifier: MIT
/* Config space storage with PCI read-only / read-write / RW1C semantics. */
#include <errno.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "cfg.h"

int fab_cfg_check(uint32_t off, uint32_t size)
{
	if (size != 1 && size != 2 && size != 4)
		return -EINVAL;
	if (off >= FAB_CFG_SIZE || off + size > FAB_CFG_SIZE || (off & (size - 1)))
		return -EINVAL;
	return 0;
}

int fab_cfg_read(const struct fab_cfg *c, uint32_t off, uint32_t size, uint32_t *val)
{
	uint32_t v = 0;
	int rc = fab_cfg_check(off, size);

	if (rc)
		return rc;
	for (uint32_t i = 0; i < size; i++)
		v |= (uint32_t)c->data[off + i] << (8 * i);
	*val = v;
	return 0;
}

int fab_cfg_write(struct fab_cfg *c, uint32_t off, uint32_t size, uint32_t val)
{
	int rc = fab_cfg_check(off, size);

	if (rc)
		return rc;
	for (uint32_t i = 0; i < size; i++) {
		uint8_t b = (uint8_t)(val >> (8 * i));
		uint8_t wm = c->wmask[off + i], w1c = c->w1cmask[off + i];
		uint8_t cur = c->data[off + i];

		cur = (uint8_t)((cur & ~wm) | (b & wm));
		cur = (uint8_t)(cur & ~(b & w1c));
		c->data[off + i] = cur;
	}
	return 0;
}

void fab_cfg_init(struct fab_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->next_cap = FAB_CFG_CAP_START;
	c->next_ecap = FAB_CFG_LEGACY;
}

void fab_cfg_set8(struct fab_cfg *c, uint32_t off, uint8_t v)
{
	if (off < FAB_CFG_SIZE)
		c->data[off] = v;
}

void fab_cfg_set16(struct fab_cfg *c, uint32_t off, uint16_t v)
{
	fab_cfg_set8(c, off, (uint8_t)v);
	fab_cfg_set8(c, off + 1, (uint8_t)(v >> 8));
}

void fab_cfg_set32(struct fab_cfg *c, uint32_t off, uint32_t v)
{
	fab_cfg_set16(c, off, (uint16_t)v);
	fab_cfg_set16(c, off + 2, (uint16_t)(v >> 16));
}

uint8_t fab_cfg_get8(const struct fab_cfg *c, uint32_t off)
{
	return off < FAB_CFG_SIZE ? c->data[off] : 0xff;
}

uint16_t fab_cfg_get16(const struct fab_cfg *c, uint32_t off)
{
	return (uint16_t)(fab_cfg_get8(c, off) | (fab_cfg_get8(c, off + 1) << 8));
}

uint32_t fab_cfg_get32(const struct fab_cfg *c, uint32_t off)
{
	return fab_cfg_get16(c, off) | ((uint32_t)fab_cfg_get16(c, off + 2) << 16);
}

static void mask_bytes(uint8_t *m, uint32_t off, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n && off + i < FAB_CFG_SIZE; i++)
		m[off + i] = (uint8_t)(v >> (8 * i));
}

void fab_cfg_wmask16(struct fab_cfg *c, uint32_t off, uint16_t m)
{
	mask_bytes(c->wmask, off, m, 2);
}

void fab_cfg_wmask32(struct fab_cfg *c, uint32_t off, uint32_t m)
{
	mask_bytes(c->wmask, off, m, 4);
}

void fab_cfg_w1c16(struct fab_cfg *c, uint32_t off, uint16_t m)
{
	mask_bytes(c->w1cmask, off, m, 2);
}

uint16_t fab_cfg_add_cap(struct fab_cfg *c, uint8_t id, uint16_t size)
{
	uint16_t off = (uint16_t)((c->next_cap + 3) & ~3u);

	if (size < 2 || off + size > FAB_CFG_LEGACY)
		return 0;
	c->data[off] = id;
	c->data[off + 1] = 0;
	if (c->last_cap)
		c->data[c->last_cap + 1] = (uint8_t)off;
	else
		c->data[PCI_CAPABILITY_LIST] = (uint8_t)off;
	fab_cfg_set16(c, PCI_STATUS, fab_cfg_get16(c, PCI_STATUS) | PCI_STATUS_CAP_LIST);
	c->last_cap = off;
	c->next_cap = (uint16_t)(off + size);
	return off;
}

uint16_t fab_cfg_add_ecap(struct fab_cfg *c, uint16_t id, uint8_t ver, uint16_t size)
{
	uint16_t off = (uint16_t)((c->next_ecap + 3) & ~3u);

	if (size < 4 || off + size > FAB_CFG_SIZE)
		return 0;
	/* Header: ID[15:0], version[19:16], next[31:20]. */
	fab_cfg_set32(c, off, (uint32_t)id | ((uint32_t)(ver & 0xf) << 16));
	if (c->last_ecap) {
		uint32_t h = fab_cfg_get32(c, c->last_ecap);

		fab_cfg_set32(c, c->last_ecap, (h & 0x000fffffu) | ((uint32_t)off << 20));
	}
	c->last_ecap = off;
	c->next_ecap = (uint16_t)(off + size);
	return off;
}

uint16_t fab_cfg_find_cap(const struct fab_cfg *c, uint8_t id)
{
	uint8_t off = c->data[PCI_CAPABILITY_LIST];

	/* At most 48 capabilities fit in the legacy space: bound the walk. */
	for (int n = 0; off >= FAB_CFG_CAP_START && n < 48; n++) {
		if (c->data[off] == id)
			return off;
		off = c->data[off + 1];
	}
	return 0;
}

uint16_t fab_cfg_find_ecap(const struct fab_cfg *c, uint16_t id)
{
	uint16_t off = FAB_CFG_LEGACY;

	for (int n = 0; off >= FAB_CFG_LEGACY && n < 960; n++) {
		uint32_t h = fab_cfg_get32(c, off);

		if (h == 0 || h == 0xffffffffu)
			return 0;
		if ((h & 0xffff) == id)
			return off;
		off = (uint16_t)(h >> 20);
	}
	return 0;
}
