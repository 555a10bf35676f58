/* SPDX-License-Identifier: MIT */
/*
 * A bench for device models without a cluster: BARs in malloc'd memory, host
 * RAM as a flat buffer at bus addresses [0, ram_size), a config space with
 * bus mastering and MSI-X enabled, and MSI writes (to 0xFEE00000..) counted
 * per message data. Tests call the model's poll() themselves: deterministic.
 */
#ifndef SMARTIO_TESTS_DEV_HARNESS_H
#define SMARTIO_TESTS_DEV_HARNESS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "devices/dev.h"

#define H_MSI_BASE   0xfee00000ull
#define H_MSI_VECS   2048

struct harness {
	struct dev_instance d;
	struct topo_device td;
	uint8_t *ram;
	uint64_t ram_size;
	uint8_t cfg[4096];
	uint64_t msi[H_MSI_VECS];  /* messages received, by data value */
	uint64_t dma_reads, dma_writes, dma_faults;
	uint64_t fault_addr;       /* DMA outside RAM fails like an unsupported request */
	/* RAM that does not answer for now, as behind a link that is down: [lo, hi) */
	uint64_t down_lo, down_hi;
};

static inline bool h_in_ram(struct harness *h, uint64_t a, size_t len)
{
	if (a < h->down_hi && a + len > h->down_lo)
		return false;
	return a < h->ram_size && len <= h->ram_size - a;
}

static inline int h_dma_read(void *ctx, uint64_t a, void *buf, size_t len)
{
	struct harness *h = ctx;

	h->dma_reads++;
	if (!h_in_ram(h, a, len)) {
		h->dma_faults++;
		h->fault_addr = a;
		memset(buf, 0xff, len);
		return 1;   /* FAB_UR */
	}
	memcpy(buf, h->ram + a, len);
	return 0;
}

static inline int h_dma_write(void *ctx, uint64_t a, const void *buf, size_t len)
{
	struct harness *h = ctx;

	h->dma_writes++;
	if (a >= H_MSI_BASE && a < H_MSI_BASE + 0x100000 && len == 4) {
		uint32_t data;

		memcpy(&data, buf, 4);
		if (data < H_MSI_VECS)
			h->msi[data]++;
		return 0;
	}
	if (!h_in_ram(h, a, len)) {
		h->dma_faults++;
		h->fault_addr = a;
		return 1;
	}
	memcpy(h->ram + a, buf, len);
	return 0;
}

static inline uint32_t h_cfg_read(void *ctx, uint32_t off, uint32_t size)
{
	struct harness *h = ctx;
	uint32_t v = 0;

	if (off + size > sizeof(h->cfg))
		return 0xffffffffu;
	memcpy(&v, h->cfg + off, size);
	return v;
}

static const struct dev_bus_ops h_bus_ops = {
	.dma_read = h_dma_read, .dma_write = h_dma_write, .cfg_read = h_cfg_read,
};

/* Add a model parameter; call before h_setup(). */
static inline void h_param(struct harness *h, const char *k, const char *v)
{
	struct topo_param *p = &h->td.params[h->td.nparams++];

	snprintf(p->key, sizeof(p->key), "%s", k);
	snprintf(p->value, sizeof(p->value), "%s", v);
}

/*
 * Set up a model in a zeroed harness (static, or memset by the caller; add
 * parameters with h_param() first): bars[i] = size (0: absent). MSI-X, when msix_vectors > 0,
 * has its table at table_off in BAR table_bir and its PBA at pba_off in the
 * same BAR; every entry is programmed to address H_MSI_BASE with data = vector
 * and left unmasked, and MSI-X is enabled. Returns the model's create() result.
 */
static inline int h_setup(struct harness *h, const char *model, const uint64_t bars[6],
			  unsigned msix_vectors, unsigned table_bir, uint32_t table_off,
			  uint32_t pba_off, uint64_t ram_size, char *err, size_t errlen)
{
	snprintf(h->td.name, sizeof(h->td.name), "%s0", model);
	snprintf(h->td.model, sizeof(h->td.model), "%s", model);
	h->ram_size = ram_size;
	h->ram = calloc(1, ram_size);
	if (!h->ram)
		return -ENOMEM;
	for (int i = 0; i < 6; i++) {
		if (!bars[i])
			continue;
		h->d.fn.bar[i] = aligned_alloc(4096, bars[i] < 4096 ? 4096 : bars[i]);
		if (!h->d.fn.bar[i])
			return -ENOMEM;
		memset(h->d.fn.bar[i], 0, bars[i]);
		h->d.fn.bar_size[i] = bars[i];
	}
	h->cfg[PCI_COMMAND] = PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	if (msix_vectors) {
		uint16_t ctrl = (uint16_t)((msix_vectors - 1) | PCI_MSIX_FLAGS_ENABLE);
		uint32_t t = table_off | table_bir, p = pba_off | table_bir;

		h->d.fn.msix_cap = 0x70;
		h->cfg[0x70] = PCI_CAP_ID_MSIX;
		memcpy(h->cfg + 0x70 + PCI_MSIX_FLAGS, &ctrl, 2);
		memcpy(h->cfg + 0x70 + PCI_MSIX_TABLE, &t, 4);
		memcpy(h->cfg + 0x70 + PCI_MSIX_PBA, &p, 4);
		for (unsigned v = 0; v < msix_vectors; v++) {
			uint8_t *e = h->d.fn.bar[table_bir] + table_off + 16 * v;
			uint32_t lo = (uint32_t)H_MSI_BASE, hi = 0, data = v, vctl = 0;

			memcpy(e, &lo, 4);
			memcpy(e + 4, &hi, 4);
			memcpy(e + 8, &data, 4);
			memcpy(e + 12, &vctl, 4);
		}
	}
	h->d.fn.td = &h->td;
	h->d.fn.bus = &h_bus_ops;
	h->d.fn.bus_ctx = h;
	h->d.ops = dev_model_ops_find(model);
	if (!h->d.ops)
		return -ENOENT;
	return h->d.ops->create(&h->d, err, errlen);
}

/* Run poll() until idle (bounded). Returns the number of busy passes. */
static inline int h_run(struct harness *h, int max_passes)
{
	int busy = 0;

	for (int i = 0; i < max_passes; i++) {
		if (h->d.ops->poll(&h->d) <= 0)
			break;
		busy++;
	}
	return busy;
}

static inline void h_teardown(struct harness *h)
{
	if (h->d.ops && h->d.state)
		h->d.ops->destroy(&h->d);
	for (int i = 0; i < 6; i++)
		free(h->d.fn.bar[i]);
	free(h->ram);
}

#endif
