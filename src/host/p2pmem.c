// SPDX-License-Identifier: MIT
/*
 * Peer-to-peer memory (after Linux's drivers/pci/p2pdma.c): a provider's
 * driver gives a range of a memory BAR to the PCI core
 * (pci_p2pdma_add_resource) and may publish it (pci_p2pmem_publish) for
 * others to find; drivers allocate from it (pci_alloc_p2pmem) and tell a
 * client device the address at which it reaches the allocation
 * (pci_p2pmem_map). The distances and the orchestrator are in p2p.c.
 *
 * The pool is a page-granular first-fit extent set over BAR offsets, the
 * same one that backs host RAM and the IOVA allocators (physmem.h), as
 * Linux's p2pdma uses a gen_pool of pages. The CPU addresses are the
 * provider's own BAR mapping (pci_iomap), so a CPU store goes to the device
 * and a frozen channel reads all-ones like any other MMIO.
 *
 * All calls with the host lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pci_priv.h"
#include "util/log.h"

#define P2P_PAGE  4096ull

static void pool_destroy(struct pci_p2p_pool *pool)
{
	if (pool->own_map)
		pci_iomap_free(&pool->map);
	pm_ranges_fini(&pool->free);
	free(pool);
}

/* Take the pool out of the host's list and free it. */
static void pool_drop(struct pci_host *ph, unsigned i)
{
	struct pci_p2p_pool *pool = ph->p2p[i];

	memmove(&ph->p2p[i], &ph->p2p[i + 1], (ph->np2p - i - 1) * sizeof(ph->p2p[0]));
	ph->np2p--;
	pool_destroy(pool);
}

int pci_p2pdma_add_resource(struct pci_dev *provider, unsigned bar, uint64_t size,
			    uint64_t offset)
{
	struct pci_p2p_pool *pool;
	struct pci_host *ph;
	uint8_t *cpu;

	if (!provider || bar > 5 || !provider->bar_size[bar] ||
	    offset >= provider->bar_size[bar] || (offset & (P2P_PAGE - 1)))
		return -EINVAL;
	if (!size)
		size = provider->bar_size[bar] - offset;
	size &= ~(P2P_PAGE - 1);
	if (!size || size > provider->bar_size[bar] - offset)
		return -EINVAL;
	ph = provider->host;
	for (unsigned i = 0; i < ph->np2p; i++)
		if (ph->p2p[i]->provider == provider && ph->p2p[i]->bar == bar)
			return -EEXIST;
	if (ph->np2p >= PCI_P2P_MAX)
		return -ENOSPC;
	cpu = pci_iomap(provider, bar);
	if (!cpu)
		return -ENOMEM;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pm_ranges_init(&pool->free);
	if (pm_ranges_add(&pool->free, offset, offset + size)) {
		pool_destroy(pool);
		return -ENOMEM;
	}
	pool->provider = provider;
	pool->bar = bar;
	pool->off = offset;
	pool->size = size;
	pool->cpu = cpu + offset;
	ph->p2p[ph->np2p++] = pool;
	return 0;
}

void pci_p2pmem_publish(struct pci_dev *provider, bool publish)
{
	struct pci_host *ph = provider ? provider->host : NULL;

	for (unsigned i = 0; ph && i < ph->np2p; i++)
		if (ph->p2p[i]->provider == provider)
			ph->p2p[i]->published = publish;
}

void pci_p2pdma_release(struct pci_dev *pdev)
{
	struct pci_host *ph = pdev->host;

	for (unsigned i = 0; ph && i < ph->np2p;) {
		struct pci_p2p_pool *pool = ph->p2p[i];

		if (pool->provider != pdev) {
			i++;
			continue;
		}
		if (!pool->nallocs) {
			pool_drop(ph, i);
			continue;
		}
		/*
		 * Allocations outstanding: Linux's unbind waits until their
		 * users free them. We may not wait here (the host lock is
		 * held, the users may need it), so the pool outlives its
		 * provider instead: unpublished, allocating nothing, and
		 * owning the BAR mapping its users still write through.
		 */
		smio_warn("p2pmem: %s BAR%u leaves with %u allocation(s) (%llu bytes) "
			  "outstanding; its memory stays mapped until they are freed",
			  pdev->name, pool->bar, pool->nallocs,
			  (unsigned long long)pool->allocated);
		pool->map = to_priv(pdev)->iomap[pool->bar];
		memset(&to_priv(pdev)->iomap[pool->bar], 0, sizeof(pool->map));
		pool->own_map = true;
		pool->provider = NULL;
		pool->published = false;
		i++;
	}
}

void pci_p2pdma_host_fini(struct pci_host *ph)
{
	while (ph->np2p)
		pool_drop(ph, ph->np2p - 1);
}

void *pci_alloc_p2pmem(struct pci_dev *provider, size_t size)
{
	struct pci_host *ph = provider ? provider->host : NULL;
	uint64_t len = ((uint64_t)size + P2P_PAGE - 1) & ~(P2P_PAGE - 1);

	if (!ph || !size || len < size)
		return NULL;
	for (unsigned i = 0; i < ph->np2p; i++) {
		struct pci_p2p_pool *pool = ph->p2p[i];
		uint64_t off;

		if (pool->provider != provider ||
		    pm_ranges_alloc(&pool->free, len, P2P_PAGE, UINT64_MAX, &off))
			continue;
		pool->nallocs++;
		pool->allocated += len;
		return pool->cpu + (off - pool->off);
	}
	return NULL;
}

/* The pool holding [addr, addr + len), live or released. */
static struct pci_p2p_pool *pool_of(struct pci_host *ph, const void *addr, uint64_t len)
{
	const uint8_t *p = addr;

	for (unsigned i = 0; ph && p && i < ph->np2p; i++) {
		struct pci_p2p_pool *pool = ph->p2p[i];

		if (p >= pool->cpu && (uint64_t)(p - pool->cpu) < pool->size &&
		    len <= pool->size - (uint64_t)(p - pool->cpu))
			return pool;
	}
	return NULL;
}

int pci_free_p2pmem(struct pci_host *ph, void *addr, size_t size)
{
	uint64_t len = ((uint64_t)size + P2P_PAGE - 1) & ~(P2P_PAGE - 1);
	struct pci_p2p_pool *pool = pool_of(ph, addr, len);
	uint64_t off;

	if (!pool || !size || ((uint8_t *)addr - pool->cpu) % P2P_PAGE)
		return -EINVAL;
	off = pool->off + (uint64_t)((uint8_t *)addr - pool->cpu);
	if (pm_ranges_add(&pool->free, off, off + len))
		return -EINVAL;     /* not allocated: a double free */
	pool->nallocs--;
	pool->allocated -= len;
	if (!pool->provider && !pool->nallocs) {
		for (unsigned i = 0; i < ph->np2p; i++)
			if (ph->p2p[i] == pool) {
				pool_drop(ph, i);
				break;
			}
	}
	return 0;
}

bool pci_is_p2pmem(struct pci_host *ph, const void *addr, size_t len)
{
	return pool_of(ph, addr, len ? len : 1) != NULL;
}

int pci_p2pmem_map(struct pci_dev *client, const void *addr, size_t len, uint64_t *bus)
{
	struct pci_p2p_pool *pool;
	uint64_t base;
	int rc;

	if (!client || !bus || !len)
		return -EINVAL;
	pool = pool_of(client->host, addr, len);
	if (!pool)
		return -ENOENT;
	if (!pool->provider)
		return -ENODEV;    /* the provider left: nothing decodes there any more */
	rc = pci_p2pdma_bus(client, pool->provider, pool->bar, &base);
	if (rc)
		return rc;
	*bus = base + pool->off + (uint64_t)((const uint8_t *)addr - pool->cpu);
	return 0;
}

uint64_t pci_p2pmem_virt_to_bus(struct pci_host *ph, const void *addr)
{
	struct pci_p2p_pool *pool = pool_of(ph, addr, 1);

	if (!pool || !pool->provider)
		return 0;
	return pool->provider->bar_addr[pool->bar] + pool->off +
	       (uint64_t)((const uint8_t *)addr - pool->cpu);
}

struct pci_dev *pci_p2pmem_provider(struct pci_host *ph, const void *addr, unsigned *bar)
{
	struct pci_p2p_pool *pool = pool_of(ph, addr, 1);

	if (!pool || !pool->provider)
		return NULL;
	if (bar)
		*bar = pool->bar;
	return pool->provider;
}

int pci_p2pmem_stat(struct pci_dev *provider, struct pci_p2pmem_stat *st)
{
	struct pci_host *ph = provider ? provider->host : NULL;

	if (!ph || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (unsigned i = 0; i < ph->np2p; i++) {
		const struct pci_p2p_pool *pool = ph->p2p[i];

		if (pool->provider != provider)
			continue;
		st->size += pool->size;
		st->allocated += pool->allocated;
		st->nallocs += pool->nallocs;
		st->published |= pool->published;
		st->bar = pool->bar;
		st->resources++;
	}
	return st->resources ? 0 : -ENOENT;
}

void *pci_p2pmem_alloc_near(struct pci_host *ph, struct pci_dev *const *clients, unsigned n,
			    size_t size, struct pci_dev **provider)
{
	struct pci_dev *p = pci_p2pmem_find(ph, clients, n, NULL);
	void *mem = p ? pci_alloc_p2pmem(p, size) : NULL;

	if (provider)
		*provider = mem ? p : NULL;
	return mem;
}
