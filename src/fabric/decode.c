// SPDX-License-Identifier: MIT
/*
 * Config cycles and address decode on one host, as software programmed the
 * registers: bus numbers route config cycles, BARs and bridge windows decode
 * memory addresses. Shared by software (config access) and the router.
 */
#include <errno.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "fabric.h"
#include "pcidev.h"
#include "sriov.h"

bool fab_bridge_bus_range(const struct fab_func *br, uint8_t *sec, uint8_t *sub)
{
	*sec = fab_cfg_get8(&br->cfg, PCI_SECONDARY_BUS);
	*sub = fab_cfg_get8(&br->cfg, PCI_SUBORDINATE_BUS);
	return *sec != 0 && *sec <= *sub;
}

uint16_t fab_func_bdf(const struct fab_func *fn)
{
	uint8_t bus = 0;

	if (fn->pf)
		return fab_sriov_vf_rid(fn->pf, fn->vf_index);

	if (fn->parent)
		bus = fab_cfg_get8(&fn->parent->cfg, PCI_SECONDARY_BUS);
	return FAB_BDF(bus, fn->dev, fn->fn);
}

static bool is_bridge(const struct fab_func *fn)
{
	return fn->kind == FAB_FN_ROOTPORT || fn->kind == FAB_FN_SW_UP ||
	       fn->kind == FAB_FN_SW_DOWN;
}

static struct fab_func *find_below(struct fab_func *br, unsigned bus, unsigned dev,
				   unsigned fnum, unsigned depth)
{
	uint8_t sec, sub;

	if (depth > 2 * TOPO_MAX_DEPTH + 2 || !fab_bridge_bus_range(br, &sec, &sub) ||
	    bus < sec || bus > sub)
		return NULL;
	for (uint32_t i = 0; i < br->nchildren; i++) {
		struct fab_func *c = br->children[i];

		if (c->pf) {
			/* A VF: at its routing ID while enabled (it may sit past bus sec). */
			if (fab_vf_present(c) && fab_func_bdf(c) == FAB_BDF(bus, dev, fnum))
				return c;
		} else if (bus == sec) {
			if (c->dev == dev && c->fn == fnum)
				return c;
		} else if (is_bridge(c)) {
			struct fab_func *f = find_below(c, bus, dev, fnum, depth + 1);

			if (f)
				return f;
		}
	}
	return NULL;
}

struct fab_func *fab_func_by_bdf(struct fab_host *h, uint16_t bdf)
{
	unsigned bus = FAB_BDF_BUS(bdf), dev = FAB_BDF_DEV(bdf), fnum = FAB_BDF_FN(bdf);

	for (uint32_t i = 0; i < h->nfuncs; i++) {
		struct fab_func *f = h->funcs[i];

		if (f->parent)
			continue;
		if (bus == 0) {
			if (f->dev == dev && f->fn == fnum)
				return f;
		} else if (is_bridge(f)) {
			struct fab_func *r = find_below(f, bus, dev, fnum, 0);

			if (r)
				return r;
		}
	}
	return NULL;
}

struct fab_func *fab_func_by_name(struct fab_host *h, const char *name)
{
	for (uint32_t i = 0; i < h->nfuncs; i++)
		if (!strcmp(h->funcs[i]->name, name))
			return h->funcs[i];
	return NULL;
}

static bool bar_reg_affects_routing(uint32_t off, uint32_t size)
{
	/* Command, BARs, bus numbers, windows: anything the router decodes. */
	return (off < 0x40) || (off + size > 0x100);
}

int fab_cfg_access_read(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t size,
			uint32_t *val)
{
	struct fab_func *fn = fab_func_by_bdf(h, bdf);
	int rc = fab_cfg_check(off, size);

	if (rc)
		return rc;
	if (!fn) {
		/* Master abort: all-ones, as a root complex returns. */
		*val = size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
		return -ENODEV;
	}
	return fab_cfg_read(&fn->cfg, off, size, val);
}

bool fab_func_present(const struct fab_func *fn)
{
	return !fn->pf || fab_vf_present(fn);
}

int fab_cfg_access_write(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t size,
			 uint32_t val)
{
	struct fab_func *fn = fab_func_by_bdf(h, bdf);
	uint16_t sriov_ctrl;
	bool flr;
	int rc;

	if (!fn)
		return fab_cfg_check(off, size) ? -EINVAL : -ENODEV;
	flr = fab_cfg_write_is_flr(fn, off, size, val);
	sriov_ctrl = fab_sriov_ctrl(fn);
	rc = fab_cfg_write(&fn->cfg, off, size, val);
	if (!rc && fab_sriov_write_hits(fn, off, size))
		fab_sriov_written(fn, sriov_ctrl);   /* NumVFs lock, VF Enable changes */
	if (!rc && flr)
		fab_func_flr(fn);       /* flr.c; it tells the tables itself */
	else if (!rc && bar_reg_affects_routing(off, size))
		fab_host_tables_changed(h);
	return rc;
}

bool fab_func_mem_enabled(const struct fab_func *fn)
{
	if (fn->pf)
		return fab_vf_mem_enabled(fn);   /* VF MSE, not the VF's Command */
	return fab_cfg_get16(&fn->cfg, PCI_COMMAND) & PCI_COMMAND_MEMORY;
}

bool fab_func_bus_master(const struct fab_func *fn)
{
	return fab_cfg_get16(&fn->cfg, PCI_COMMAND) & PCI_COMMAND_MASTER;
}

uint64_t fab_func_bar_addr(const struct fab_func *fn, unsigned bar)
{
	uint32_t off;
	uint64_t a;

	if (fn->pf)
		return fab_vf_bar_addr(fn, bar);
	if (bar > 5 || !fn->bars[bar].present)
		return 0;
	off = PCI_BASE_ADDRESS_0 + 4 * bar;
	a = fab_cfg_get32(&fn->cfg, off) & ~0xfull;
	if (fn->bars[bar].is64)
		a |= (uint64_t)fab_cfg_get32(&fn->cfg, off + 4) << 32;
	return a;
}

void fab_bridge_windows(const struct fab_func *br, struct fab_window *mem,
			struct fab_window *pref)
{
	const struct fab_cfg *c = &br->cfg;

	mem->base = (uint64_t)(fab_cfg_get16(c, PCI_MEMORY_BASE) & 0xfff0) << 16;
	mem->limit = ((uint64_t)(fab_cfg_get16(c, PCI_MEMORY_LIMIT) & 0xfff0) << 16) | 0xfffff;
	pref->base = ((uint64_t)(fab_cfg_get16(c, PCI_PREF_MEMORY_BASE) & 0xfff0) << 16) |
		     ((uint64_t)fab_cfg_get32(c, PCI_PREF_BASE_UPPER32) << 32);
	pref->limit = ((uint64_t)(fab_cfg_get16(c, PCI_PREF_MEMORY_LIMIT) & 0xfff0) << 16) |
		      0xfffff | ((uint64_t)fab_cfg_get32(c, PCI_PREF_LIMIT_UPPER32) << 32);
	if (!fab_func_mem_enabled(br)) {
		mem->base = pref->base = 1;
		mem->limit = pref->limit = 0;
	}
}
