// SPDX-License-Identifier: MIT
/*
 * The borrower's shadow devices as the daemon's own queries see them
 * (docs/lending.md): in FUNC_LIST (lspci), and their config space through
 * the PCI core, with the interception of shadow.c applied; their device
 * memory as other devices reach it (smd_lend_shadow_mem).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "daemon.h"
#include "fabric/ntb.h"
#include "host/ntb_drv.h"
#include "dev_priv.h"
#include "lend_priv.h"

static struct smd_borrowed *brw_by_bdf(struct smd *d, uint16_t bdf)
{
	struct smd_lend *l = d->lend;

	for (unsigned i = 0; l && i < SMD_LEND_MAX; i++)
		if (l->brw[i].used && l->brw[i].pdev && l->brw[i].pdev->bdf == bdf)
			return &l->brw[i];
	return NULL;
}

/* A shadow, or a cZodiac logic device (h_czodiac.c): config cycles go elsewhere. */
static struct pci_dev *stand_in(struct smd *d, uint16_t bdf)
{
	struct smd_borrowed *b = brw_by_bdf(d, bdf);

	return b ? b->pdev : smd_cz_logic_dev(d, bdf);
}

void smd_lend_func_list(struct smd *d, struct smio_func_list *o)
{
	struct smd_lend *l = d->lend;

	for (unsigned i = 0; l && i < SMD_LEND_MAX && o->n < SMIO_MAX_FUNCS; i++) {
		struct smd_borrowed *b = &l->brw[i];
		struct ntb_drv *ntb;
		struct smio_func_info *fi;

		if (!b->used || !b->pdev)
			continue;
		ntb = ntb_drv_to(d->host, b->lender);
		fi = &o->f[o->n++];
		memset(fi, 0, sizeof(*fi));
		fi->bdf = b->pdev->bdf;
		fi->kind = FAB_FN_ENDPOINT;
		fi->parent_bdf = ntb ? fab_func_bdf(ntb_drv_hw(ntb)->fn) : 0xffff;   /* behind the NTB */
		snprintf(fi->name, sizeof(fi->name), "%s", b->pdev->name);
		snprintf(fi->model, sizeof(fi->model), "%s", shadow_grant(b->pdev)->model);
	}
	smd_cz_func_list(d, o);
}

int smd_lend_shadow_cfg(struct smd *d, uint16_t bdf, uint32_t off, uint32_t size,
			uint32_t *val)
{
	struct pci_dev *p = stand_in(d, bdf);

	return p ? pci_read_config(p, off, size, val) : -ENODEV;
}

int smd_lend_shadow_dump(struct smd *d, uint16_t bdf, void *out)
{
	struct pci_dev *p = stand_in(d, bdf);
	uint32_t *w = out;

	if (!p)
		return -ENODEV;
	/* As the borrower sees it: forwarded, with the interception applied. */
	for (uint32_t off = 0; off < SMIO_CFG_SPACE; off += 4)
		if (pci_read_config(p, off, 4, &w[off / 4]))
			w[off / 4] = 0xffffffffu;
	return 0;
}

bool smd_lend_is_shadow(struct smd *d, uint16_t bdf)
{
	return stand_in(d, bdf) != NULL;
}

/*
 * Is [addr, addr + size) inside a prefetchable memory BAR (device memory, not
 * registers) of a device this host borrowed? Then *lender and *laddr: where
 * the range is at the lender, the provider's own bus address there. Device
 * Lending's P2P rule (pci_p2pdma_bus, shadow.c) starts from it: a device of
 * the same lender reaches it at that address, another lender's device
 * through a window of its own NTB onto it, neither through the borrower.
 */
bool smd_lend_shadow_mem(struct smd *d, uint64_t addr, uint64_t size, uint32_t *lender,
			 uint64_t *laddr)
{
	struct smd_lend *l = d->lend;

	for (unsigned i = 0; l && i < SMD_LEND_MAX; i++) {
		const struct smd_borrowed *b = &l->brw[i];
		const struct lend_grant *g;

		if (!b->used || !b->pdev || b->lost || !(g = shadow_grant(b->pdev)))
			continue;
		for (unsigned k = 0; k < 6; k++) {
			uint64_t base = b->pdev->bar_addr[k], len = b->pdev->bar_size[k];

			if (!len || !g->bar_addr[k] ||
			    (g->bar_flags[k] & PCI_BASE_ADDRESS_SPACE_IO) ||
			    !(g->bar_flags[k] & PCI_BASE_ADDRESS_MEM_PREFETCH) ||
			    addr < base || size > len || addr - base > len - size)
				continue;
			*lender = b->lender;
			*laddr = g->bar_addr[k] + (addr - base);
			return true;
		}
	}
	return false;
}
