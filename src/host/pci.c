// SPDX-License-Identifier: MIT
/*
 * The per-host PCI core: the device list, the driver model, config accessors
 * and BAR mappings.
 *
 * The device list is built the way a kernel builds it after firmware has
 * enumerated: a depth-first walk of the bus numbers firmware programmed,
 * with identity, class and BARs read (BARs sized) through configuration
 * cycles. Nothing is read from the fabric's own structures except a
 * function's name (for messages) and whether smartio registered it for
 * lending.
 *
 * Lendable devices: a function the topology marks `lendable: true`
 * (fab_func.lendable, the default) is registered with smartio for Device
 * Lending and owned by it, so no local driver is ever bound to it; it stays
 * in the device list (as lspci shows it). Only `lendable: false` devices, and
 * hot-added ones (borrowed shadow devices), get local drivers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "fabric/route.h"
#include "pci_priv.h"

static uint32_t rd(struct fab_host *h, uint16_t bdf, uint32_t off, uint32_t size)
{
	uint32_t v = 0xffffffffu;

	if (fab_cfg_access_read(h, bdf, off, size, &v))
		v = size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
	return v;
}

/* ---------- discovering a function through config cycles ---------- */

/*
 * Size the BARs by writing all-ones, with memory decoding off meanwhile so
 * that the transient addresses never decode (as Linux's __pci_read_base).
 */
static void read_bars(struct fab_host *h, struct pci_dev *pdev, unsigned nbar)
{
	uint16_t bdf = pdev->bdf;
	uint16_t cmd = (uint16_t)rd(h, bdf, PCI_COMMAND, 2);

	if (cmd & PCI_COMMAND_MEMORY)
		fab_cfg_access_write(h, bdf, PCI_COMMAND, 2, cmd & ~PCI_COMMAND_MEMORY);
	for (unsigned i = 0; i < nbar; i++) {
		uint32_t off = PCI_BASE_ADDRESS_0 + 4 * i, orig = rd(h, bdf, off, 4), lo, hi = 0;
		uint32_t ohi = 0;
		bool is64;
		uint64_t mask;

		if (orig & PCI_BASE_ADDRESS_SPACE_IO)
			continue;   /* these hosts have no I/O space */
		fab_cfg_access_write(h, bdf, off, 4, 0xffffffffu);
		lo = rd(h, bdf, off, 4);
		fab_cfg_access_write(h, bdf, off, 4, orig);
		is64 = (lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64 &&
		       i + 1 < nbar;
		if (is64) {
			ohi = rd(h, bdf, off + 4, 4);
			fab_cfg_access_write(h, bdf, off + 4, 4, 0xffffffffu);
			hi = rd(h, bdf, off + 4, 4);
			fab_cfg_access_write(h, bdf, off + 4, 4, ohi);
		}
		mask = ((uint64_t)hi << 32) | (lo & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK);
		if (!is64)
			mask |= 0xffffffff00000000ull;
		if ((lo & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK) || hi) {
			pdev->bar_size[i] = ~mask + 1;
			pdev->bar_addr[i] = ((uint64_t)ohi << 32) |
					    (orig & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK);
		}
		if (is64)
			i++;   /* the upper half is not a BAR of its own */
	}
	if (cmd & PCI_COMMAND_MEMORY)
		fab_cfg_access_write(h, bdf, PCI_COMMAND, 2, cmd);
}

static int new_dev(struct pci_host *ph, uint16_t bdf, struct pci_dev **out)
{
	struct fab_host *h = ph->h;
	uint32_t id = rd(h, bdf, PCI_VENDOR_ID, 4);
	uint8_t hdr = (uint8_t)rd(h, bdf, PCI_HEADER_TYPE, 1) & 0x7f;
	struct pci_dev_priv *p;
	struct pci_dev *pdev;

	if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0)
		return -ENODEV;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pdev = &p->pub;
	pdev->host = ph;
	pdev->hw = fab_func_by_bdf(h, bdf);
	pdev->bdf = bdf;
	pdev->vendor = (uint16_t)id;
	pdev->device = (uint16_t)(id >> 16);
	pdev->class = rd(h, bdf, PCI_CLASS_REVISION, 4) >> 8;
	pdev->dma_mask = UINT64_MAX;
	pdev->error_state = pci_channel_io_normal;
	for (unsigned v = 0; v < PCI_MAX_VECTORS; v++)
		pdev->vec_efd[v] = -1;
	if (pdev->hw) {
		snprintf(pdev->name, sizeof(pdev->name), "%s", pdev->hw->name);
		/* Registration for lending is smartio's state, not hardware's. */
		pdev->is_lendable = pdev->hw->kind == FAB_FN_ENDPOINT && pdev->hw->lendable;
	}
	pm_ranges_init(&p->iova);
	read_bars(h, pdev, hdr == PCI_HEADER_TYPE_NORMAL ? 6 :
			   hdr == PCI_HEADER_TYPE_BRIDGE ? 2 : 0);
	*out = pdev;
	return 0;
}

struct pci_dev_priv *pci_dev_alloc(struct pci_host *ph)
{
	struct pci_dev_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pub.host = ph;
	p->pub.dma_mask = UINT64_MAX;
	p->pub.error_state = pci_channel_io_normal;
	for (unsigned v = 0; v < PCI_MAX_VECTORS; v++)
		p->pub.vec_efd[v] = -1;
	pm_ranges_init(&p->iova);
	return p;
}

static void free_dev(struct pci_dev *pdev)
{
	struct pci_dev_priv *p = to_priv(pdev);

	pci_p2pdma_release(pdev);
	for (unsigned b = 0; b < 6; b++)
		pci_iomap_free(&p->iomap[b]);
	if (pdev->ops && pdev->ops->release)
		pdev->ops->release(pdev);

	pm_ranges_fini(&p->iova);
	free(p->recs);
	free(p);
}

/* Insert keeping the list sorted by BDF (lspci order). */
static int list_insert(struct pci_host *ph, struct pci_dev *pdev)
{
	unsigned i = 0;

	if (ph->ndevs == ph->capdevs) {
		unsigned cap = ph->capdevs ? ph->capdevs * 2 : 32;
		struct pci_dev **d = realloc(ph->devs, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		ph->devs = d;
		ph->capdevs = cap;
	}
	while (i < ph->ndevs && ph->devs[i]->bdf < pdev->bdf)
		i++;
	memmove(&ph->devs[i + 1], &ph->devs[i], (ph->ndevs - i) * sizeof(ph->devs[0]));
	ph->devs[i] = pdev;
	ph->ndevs++;
	return 0;
}

static int list_index(const struct pci_host *ph, const struct pci_dev *pdev)
{
	for (unsigned i = 0; i < ph->ndevs; i++)
		if (ph->devs[i] == pdev)
			return (int)i;
	return -1;
}

static int scan_bus(struct pci_host *ph, unsigned bus, unsigned depth, uint8_t *seen)
{
	if (depth > 2 * TOPO_MAX_DEPTH + 4 || bus > 255 || seen[bus])
		return 0;   /* a bus reached twice would be a programming loop */
	seen[bus] = 1;
	for (unsigned dev = 0; dev < 32; dev++) {
		for (unsigned fn = 0; fn < 8; fn++) {
			uint16_t bdf = FAB_BDF(bus, dev, fn);
			uint8_t hdr;
			struct pci_dev *pdev;
			int rc;

			if ((uint16_t)rd(ph->h, bdf, PCI_VENDOR_ID, 2) == 0xffff) {
				if (fn == 0)
					break;
				continue;
			}
			hdr = (uint8_t)rd(ph->h, bdf, PCI_HEADER_TYPE, 1);
			rc = new_dev(ph, bdf, &pdev);
			if (!rc) {
				rc = list_insert(ph, pdev);
				if (rc)
					free_dev(pdev);
			}
			if (rc)
				return rc;
			if ((hdr & 0x7f) == PCI_HEADER_TYPE_BRIDGE) {
				unsigned sec = rd(ph->h, bdf, PCI_SECONDARY_BUS, 1);

				if (sec > bus) {
					rc = scan_bus(ph, sec, depth + 1, seen);
					if (rc)
						return rc;
				}
			}
			if (fn == 0 && !(hdr & 0x80))
				break;   /* single-function device */
		}
	}
	return 0;
}

/* ---------- driver binding ---------- */

const struct pci_device_id *pci_match_id(const struct pci_device_id *ids,
					 const struct pci_dev *pdev)
{
	if (!ids || !pdev)
		return NULL;
	/* The table ends with an all-zero entry; bounded like any table walk. */
	for (unsigned i = 0; i < 4096; i++) {
		const struct pci_device_id *id = &ids[i];

		if (!id->vendor && !id->device && !id->class && !id->class_mask)
			return NULL;
		if ((id->vendor == PCI_ANY_ID || id->vendor == pdev->vendor) &&
		    (id->device == PCI_ANY_ID || id->device == pdev->device) &&
		    !((id->class ^ pdev->class) & id->class_mask))
			return id;
	}
	return NULL;
}

/*
 * What a driver left behind on a device is undone when it lets go (devres).
 * Bus mastering goes off first, so no DMA reaches buffers being freed; it is
 * left alone on functions nobody used for DMA (bridges must keep forwarding).
 */
static void release_driver_state(struct pci_dev *pdev)
{
	struct pci_dev_priv *p = to_priv(pdev);

	pci_free_irq_vectors(pdev);
	if (pdev->driver || p->nrecs || pdev->domain)
		pci_clear_master(pdev);
	pci_dma_release(pdev);
	/* Its p2pmem goes with the driver (Linux's p2pdma devres), before the
	 * mappings that outstanding allocations may still need. */
	pci_p2pdma_release(pdev);
	/* Its BAR mappings go with the driver (pcim_iomap's devres). */
	for (unsigned b = 0; b < 6; b++)
		pci_iomap_free(&p->iomap[b]);
	pdev->drvdata = NULL;
}

static int try_bind(struct pci_dev *pdev, const struct pci_driver *drv)
{
	const struct pci_device_id *id;
	int rc;

	if (pdev->driver || pdev->is_lendable)
		return -EBUSY;
	id = pci_match_id(drv->id_table, pdev);
	if (!id)
		return -ENODEV;
	pdev->driver = drv;
	rc = drv->probe(pdev, id);
	if (rc) {
		release_driver_state(pdev);
		pdev->driver = NULL;
	}
	return rc;
}

/* Offer a device to every registered driver in registration order. */
static void bind_any(struct pci_host *ph, struct pci_dev *pdev)
{
	for (unsigned i = 0; i < ph->ndrivers && !pdev->driver; i++)
		try_bind(pdev, ph->drivers[i]);
}

static void unbind(struct pci_dev *pdev)
{
	const struct pci_driver *drv = pdev->driver;

	if (!drv)
		return;
	if (drv->remove)
		drv->remove(pdev);
	release_driver_state(pdev);
	pdev->driver = NULL;
}

int pci_register_driver(struct pci_host *ph, const struct pci_driver *drv)
{
	if (!ph || !drv || !drv->probe || !drv->id_table)
		return -EINVAL;
	for (unsigned i = 0; i < ph->ndrivers; i++)
		if (ph->drivers[i] == drv)
			return -EEXIST;
	if (ph->ndrivers >= PCI_MAX_DRIVERS)
		return -ENOSPC;
	ph->drivers[ph->ndrivers++] = drv;
	/* A probe may hot-add or hot-remove: re-read the bound each time. */
	for (unsigned i = 0; i < ph->ndevs; i++)
		try_bind(ph->devs[i], drv);
	return 0;
}

void pci_unregister_driver(struct pci_host *ph, const struct pci_driver *drv)
{
	unsigned i;

	if (!ph || !drv)
		return;
	for (i = 0; i < ph->ndrivers && ph->drivers[i] != drv; i++)
		;
	if (i == ph->ndrivers)
		return;
	for (unsigned d = 0; d < ph->ndevs; d++)
		if (ph->devs[d]->driver == drv)
			unbind(ph->devs[d]);
	memmove(&ph->drivers[i], &ph->drivers[i + 1],
		(ph->ndrivers - i - 1) * sizeof(ph->drivers[0]));
	ph->ndrivers--;
}

/* ---------- host ---------- */

int pci_host_create(struct fab_host *h, struct pci_host **out, char *err, size_t errlen)
{
	struct pci_host *ph;
	uint8_t seen[256] = { 0 };
	int rc;

	if (errlen)
		err[0] = '\0';
	if (!h || !out)
		return -EINVAL;
	ph = calloc(1, sizeof(*ph));
	if (!ph) {
		snprintf(err, errlen, "host %u: out of memory", h->id);
		return -ENOMEM;
	}
	ph->h = h;
	pci_iomap_init();
	rc = physmem_create(h, &ph->pm);
	if (rc) {
		snprintf(err, errlen, "host %u: physical memory allocator: %s", h->id,
			 strerror(-rc));
		free(ph);
		return rc;
	}
	fab_host_lock(h);
	rc = scan_bus(ph, 0, 0, seen);
	fab_host_unlock(h);
	if (rc) {
		snprintf(err, errlen, "host %u: PCI bus scan failed: %s", h->id, strerror(-rc));
		pci_host_destroy(ph);
		return rc;
	}
	*out = ph;
	return 0;
}

void pci_host_destroy(struct pci_host *ph)
{
	if (!ph)
		return;
	/* Drivers go first (newest first), so every remove runs against a whole list. */
	while (ph->ndrivers)
		pci_unregister_driver(ph, ph->drivers[ph->ndrivers - 1]);
	for (unsigned i = 0; i < ph->ndevs; i++) {
		release_driver_state(ph->devs[i]);
		free_dev(ph->devs[i]);
	}
	free(ph->devs);
	pci_p2pdma_host_fini(ph);
	physmem_destroy(ph->pm);
	free(ph);
}

struct fab_host *pci_host_fab(struct pci_host *ph)
{
	return ph ? ph->h : NULL;
}

unsigned pci_host_ndevs(const struct pci_host *ph)
{
	return ph ? ph->ndevs : 0;
}

struct pci_dev *pci_host_dev(struct pci_host *ph, unsigned i)
{
	return ph && i < ph->ndevs ? ph->devs[i] : NULL;
}

struct pci_dev *pci_get_dev(struct pci_host *ph, uint16_t bdf)
{
	for (unsigned i = 0; ph && i < ph->ndevs; i++)
		if (ph->devs[i]->bdf == bdf)
			return ph->devs[i];
	return NULL;
}

struct physmem *pci_host_physmem(struct pci_host *ph)
{
	return ph ? ph->pm : NULL;
}

/* ---------- hot-plug ---------- */

int pci_hot_add(struct pci_host *ph, struct fab_func *fn, struct pci_dev **out)
{
	struct pci_dev *pdev;
	uint16_t bdf;
	int rc;

	if (!ph || !fn || fn->host != ph->h)
		return -EINVAL;
	bdf = fab_func_bdf(fn);
	/* It must answer config cycles at its BDF: that is all a driver will use. */
	if (fab_func_by_bdf(ph->h, bdf) != fn)
		return -ENODEV;
	if (pci_get_dev(ph, bdf))
		return -EEXIST;
	rc = new_dev(ph, bdf, &pdev);
	if (rc)
		return rc;
	rc = list_insert(ph, pdev);
	if (rc) {
		free_dev(pdev);
		return rc;
	}
	bind_any(ph, pdev);
	if (out)
		*out = pdev;
	return 0;
}

void pci_dev_free(struct pci_dev *pdev)
{
	if (pdev)
		free_dev(pdev);
}

/* A device built by its creator (a shadow device): list it and offer it to drivers. */
int pci_hot_add_dev(struct pci_host *ph, struct pci_dev *pdev)
{
	int rc;

	if (!ph || !pdev || pdev->host != ph)
		return -EINVAL;
	if (pci_get_dev(ph, pdev->bdf))
		return -EEXIST;
	rc = list_insert(ph, pdev);
	if (rc)
		return rc;
	bind_any(ph, pdev);
	return 0;
}

int pci_hot_remove(struct pci_host *ph, struct pci_dev *pdev)
{
	int i;

	if (!ph || !pdev)
		return -EINVAL;
	i = list_index(ph, pdev);
	if (i < 0)
		return -ENOENT;
	unbind(pdev);
	release_driver_state(pdev);
	memmove(&ph->devs[i], &ph->devs[i + 1],
		(ph->ndevs - (unsigned)i - 1) * sizeof(ph->devs[0]));
	ph->ndevs--;
	free_dev(pdev);
	return 0;
}

/* ---------- configuration space ---------- */

int pci_read_config(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t *val)
{
	if (!pdev || !val)
		return -EINVAL;
	if (pdev->ops)
		return pdev->ops->read_config(pdev, off, size, val);
	return fab_cfg_access_read(pdev->host->h, pdev->bdf, off, size, val);
}

int pci_write_config(struct pci_dev *pdev, uint32_t off, uint32_t size, uint32_t val)
{
	if (!pdev)
		return -EINVAL;
	if (pdev->ops)
		return pdev->ops->write_config(pdev, off, size, val);
	return fab_cfg_access_write(pdev->host->h, pdev->bdf, off, size, val);
}

static int update_command(struct pci_dev *pdev, uint16_t set, uint16_t clear)
{
	uint32_t cmd;
	int rc = pci_read_config(pdev, PCI_COMMAND, 2, &cmd);

	if (rc)
		return rc;
	if (((cmd | set) & ~clear) == cmd)
		return 0;
	return pci_write_config(pdev, PCI_COMMAND, 2, (cmd | set) & ~(uint32_t)clear);
}

int pci_enable_device(struct pci_dev *pdev)
{
	uint32_t cmd;
	int rc = update_command(pdev, PCI_COMMAND_MEMORY, 0);

	if (rc)
		return rc;
	/* A function without memory BARs has a read-only Memory Space bit. */
	rc = pci_read_config(pdev, PCI_COMMAND, 2, &cmd);
	if (rc)
		return rc;
	/* A VF's BARs decode by its PF's VF MSE; its own bit reads 0 (iov.c). */
	for (unsigned i = 0; i < 6 && !pdev->physfn; i++)
		if (pdev->bar_size[i] && !(cmd & PCI_COMMAND_MEMORY))
			return -EIO;
	return 0;
}

void pci_set_master(struct pci_dev *pdev)
{
	if (pdev)
		update_command(pdev, PCI_COMMAND_MASTER, 0);
}

void pci_clear_master(struct pci_dev *pdev)
{
	if (pdev)
		update_command(pdev, 0, PCI_COMMAND_MASTER);
}

/* ---------- BAR mapping ---------- */

/*
 * The CPU's view of the BAR must be one memory object, contiguous: a BAR
 * behind an NTB may take several LUT windows, each resolved separately, so
 * every piece is checked to continue the first.
 */
void *pci_iomap(struct pci_dev *pdev, unsigned bar)
{
	struct fab_host *h;
	struct fab_route *r;
	struct fab_target first = { 0 };
	struct pci_iomap *m;
	uint64_t addr, size, done = 0, msize = 0;
	uint8_t *base = NULL;

	if (!pdev || bar > 5 || !pdev->bar_size[bar] || !pdev->bar_addr[bar])
		return NULL;
	m = &to_priv(pdev)->iomap[bar];
	if (m->pub)
		return m->pub + m->pgoff;   /* one per BAR, as long as the driver holds it */
	h = pdev->host->h;
	addr = pdev->bar_addr[bar];
	size = pdev->bar_size[bar];
	r = malloc(sizeof(*r));   /* a route is ~2 KiB: keep it off small stacks */
	if (!r)
		return NULL;
	fab_host_lock(h);
	for (unsigned i = 0; i < 65536 && done < size; i++) {
		const struct fab_target *t = &r->tgt;

		if (fab_route_resolve(h, FAB_RID_CPU, addr + done, size - done, false, r) ||
		    r->status != FAB_OK || (t->kind != FAB_TGT_BAR && t->kind != FAB_TGT_RAM) ||
		    !t->len)
			goto fail;
		if (!done) {
			first = *t;
		} else if (t->host != first.host || t->mem != first.mem ||
			   t->offset != first.offset + done) {
			goto fail;
		}
		done += t->len;
	}
	if (done < size)
		goto fail;
	base = fab_target_map(h, &first, &msize);
	if (base && (first.offset > msize || size > msize - first.offset))
		base = NULL;
	if (base)
		base += first.offset;
	/* The driver's own view of those pages, so that it can be fenced alone. */
	if (base && pci_iomap_make(m, base, size, pci_channel_offline(pdev)))
		base = NULL;
	else if (base)
		base = m->pub + m->pgoff;
fail:
	fab_host_unlock(h);
	free(r);
	return base;
}

/* ---------- channel state (error recovery, surprise removal) ---------- */

void pci_channel_set(struct pci_dev *pdev, enum pci_channel_state state)
{
	struct pci_dev_priv *p;
	const struct pci_error_handlers *eh;
	int old;

	if (!pdev)
		return;
	p = to_priv(pdev);
	old = pdev->error_state;
	/* A failed device stays failed; nothing changes for a repeated state. */
	if (old == (int)state || old == pci_channel_io_perm_failure)
		return;
	/* Fence before anyone is told, restore before resume: a driver that
	 * looks after the call sees the path as it is. */
	for (unsigned b = 0; b < 6; b++)
		pci_iomap_fence(&p->iomap[b], state != pci_channel_io_normal);
	__atomic_store_n(&pdev->error_state, (int)state, __ATOMIC_RELEASE);
	eh = pdev->driver ? pdev->driver->err_handler : NULL;
	if (!eh)
		return;
	if (state == pci_channel_io_normal) {
		if (eh->resume)
			eh->resume(pdev);
	} else if (eh->error_detected) {
		eh->error_detected(pdev, state);
	}
}
