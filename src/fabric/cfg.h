/* SPDX-License-Identifier: MIT */
/*
 * PCI configuration space of one function: 4 KiB (PCIe extended space) with
 * per-bit write and write-1-to-clear masks, so that software sees exactly the
 * read-only / read-write / RW1C behaviour the PCI spec gives each register.
 * BAR sizing falls out of the write mask: the address bits below the BAR's
 * size are read-only zero, so writing all-ones reads back ~(size - 1).
 */
#ifndef SMARTIO_FABRIC_CFG_H
#define SMARTIO_FABRIC_CFG_H

#include <stdbool.h>
#include <stdint.h>

#define FAB_CFG_SIZE      4096
#define FAB_CFG_LEGACY    256
#define FAB_CFG_CAP_START 0x40

struct fab_cfg {
	uint8_t data[FAB_CFG_SIZE];
	uint8_t wmask[FAB_CFG_SIZE];   /* 1 = writable */
	uint8_t w1cmask[FAB_CFG_SIZE]; /* 1 = write 1 to clear */
	uint16_t next_cap;             /* allocation cursor, legacy caps */
	uint16_t last_cap;             /* offset of the last legacy cap (0: none) */
	uint16_t next_ecap;            /* allocation cursor, extended caps */
	uint16_t last_ecap;            /* offset of the last extended cap (0: none) */
};

/* Validate an access: size 1, 2 or 4, naturally aligned, inside the space. */
int fab_cfg_check(uint32_t off, uint32_t size);
/* Software accesses (honour masks). Return 0 or -EINVAL. */
int fab_cfg_read(const struct fab_cfg *c, uint32_t off, uint32_t size, uint32_t *val);
int fab_cfg_write(struct fab_cfg *c, uint32_t off, uint32_t size, uint32_t val);

/* Hardware-side setup: raw stores and masks, no checks beyond bounds. */
void fab_cfg_init(struct fab_cfg *c);
void fab_cfg_set8(struct fab_cfg *c, uint32_t off, uint8_t v);
void fab_cfg_set16(struct fab_cfg *c, uint32_t off, uint16_t v);
void fab_cfg_set32(struct fab_cfg *c, uint32_t off, uint32_t v);
uint8_t fab_cfg_get8(const struct fab_cfg *c, uint32_t off);
uint16_t fab_cfg_get16(const struct fab_cfg *c, uint32_t off);
uint32_t fab_cfg_get32(const struct fab_cfg *c, uint32_t off);
void fab_cfg_wmask16(struct fab_cfg *c, uint32_t off, uint16_t m);
void fab_cfg_wmask32(struct fab_cfg *c, uint32_t off, uint32_t m);
void fab_cfg_w1c16(struct fab_cfg *c, uint32_t off, uint16_t m);

/* Append a capability to the legacy list / extended list; return its offset or 0 if full. */
uint16_t fab_cfg_add_cap(struct fab_cfg *c, uint8_t id, uint16_t size);
uint16_t fab_cfg_add_ecap(struct fab_cfg *c, uint16_t id, uint8_t ver, uint16_t size);
/* Find a capability; 0 if absent. */
uint16_t fab_cfg_find_cap(const struct fab_cfg *c, uint8_t id);
uint16_t fab_cfg_find_ecap(const struct fab_cfg *c, uint16_t id);

#endif
