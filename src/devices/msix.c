// SPDX-License-Identifier: MIT
/* MSI-X as a function implements it: table and PBA in BAR memory. */
#include <errno.h>
#include <linux/pci_regs.h>

#include "dev.h"

struct msix_loc {
	unsigned nvec;
	uint8_t *table, *pba;
};

static int locate(const struct dev_instance *d, struct msix_loc *l)
{
	const struct dev_func *f = &d->fn;
	uint32_t tbl, pba;
	unsigned tbir, pbir;

	if (!f->msix_cap)
		return -ENOENT;
	l->nvec = (f->bus->cfg_read(f->bus_ctx, f->msix_cap + PCI_MSIX_FLAGS, 2) &
		   PCI_MSIX_FLAGS_QSIZE) + 1;
	tbl = f->bus->cfg_read(f->bus_ctx, f->msix_cap + PCI_MSIX_TABLE, 4);
	pba = f->bus->cfg_read(f->bus_ctx, f->msix_cap + PCI_MSIX_PBA, 4);
	tbir = tbl & PCI_MSIX_TABLE_BIR;
	pbir = pba & PCI_MSIX_PBA_BIR;
	tbl &= PCI_MSIX_TABLE_OFFSET;
	pba &= PCI_MSIX_PBA_OFFSET;
	if (tbir > 5 || pbir > 5 || !f->bar[tbir] || !f->bar[pbir] ||
	    tbl + (uint64_t)l->nvec * PCI_MSIX_ENTRY_SIZE > f->bar_size[tbir] ||
	    pba + (l->nvec + 63) / 64 * 8 > f->bar_size[pbir])
		return -ENOENT;
	l->table = f->bar[tbir] + tbl;
	l->pba = f->bar[pbir] + pba;
	return 0;
}

static bool pending(const struct msix_loc *l, unsigned v)
{
	uint64_t w = __atomic_load_n((uint64_t *)(l->pba + 8 * (v / 64)), __ATOMIC_ACQUIRE);

	return w & (1ull << (v % 64));
}

static void set_pending(struct msix_loc *l, unsigned v, bool on)
{
	uint64_t *w = (uint64_t *)(l->pba + 8 * (v / 64));

	if (on)
		__atomic_fetch_or(w, 1ull << (v % 64), __ATOMIC_ACQ_REL);
	else
		__atomic_fetch_and(w, ~(1ull << (v % 64)), __ATOMIC_ACQ_REL);
}

/* Deliver or latch vector v; the entry is read when the message is sent. */
static int fire(struct dev_instance *d, struct msix_loc *l, unsigned v, uint16_t ctrl)
{
	uint8_t *e = l->table + (size_t)v * PCI_MSIX_ENTRY_SIZE;
	uint32_t lo = __atomic_load_n((uint32_t *)(e + PCI_MSIX_ENTRY_LOWER_ADDR), __ATOMIC_ACQUIRE);
	uint32_t hi = __atomic_load_n((uint32_t *)(e + PCI_MSIX_ENTRY_UPPER_ADDR), __ATOMIC_ACQUIRE);
	uint32_t data = __atomic_load_n((uint32_t *)(e + PCI_MSIX_ENTRY_DATA), __ATOMIC_ACQUIRE);
	uint32_t vctl = __atomic_load_n((uint32_t *)(e + PCI_MSIX_ENTRY_VECTOR_CTRL),
					__ATOMIC_ACQUIRE);
	uint64_t addr = ((uint64_t)hi << 32) | (lo & ~3u);

	if ((ctrl & PCI_MSIX_FLAGS_MASKALL) || (vctl & PCI_MSIX_ENTRY_CTRL_MASKBIT)) {
		set_pending(l, v, true);
		return 0;
	}
	set_pending(l, v, false);
	__atomic_fetch_add(v < DEV_STATS_VECS ? &d->stats.irq[v] : &d->stats.irq_other, 1,
			   __ATOMIC_RELAXED);
	return dev_dma_write(d, addr, &data, sizeof(data));
}

int dev_msix_notify(struct dev_instance *d, unsigned v)
{
	struct msix_loc l;
	uint16_t ctrl;

	if (locate(d, &l))
		return -ENOENT;
	if (v >= l.nvec)
		return -ENOENT;
	ctrl = (uint16_t)d->fn.bus->cfg_read(d->fn.bus_ctx, d->fn.msix_cap + PCI_MSIX_FLAGS, 2);
	if (!(ctrl & PCI_MSIX_FLAGS_ENABLE))
		return -EPERM;
	return fire(d, &l, v, ctrl);
}

int dev_msix_poll_pending(struct dev_instance *d)
{
	struct msix_loc l;
	uint16_t ctrl;
	int sent = 0;

	if (locate(d, &l))
		return 0;
	ctrl = (uint16_t)d->fn.bus->cfg_read(d->fn.bus_ctx, d->fn.msix_cap + PCI_MSIX_FLAGS, 2);
	if (!(ctrl & PCI_MSIX_FLAGS_ENABLE) || (ctrl & PCI_MSIX_FLAGS_MASKALL))
		return 0;
	for (unsigned v = 0; v < l.nvec; v++) {
		if (!pending(&l, v))
			continue;
		if (!fire(d, &l, v, ctrl) && !pending(&l, v))
			sent++;
	}
	return sent;
}
