// SPDX-License-Identifier: MIT
/*
 * Peer-to-peer DMA between devices (after Linux's P2PDMA, and SmartIO sec.
 * 4.4): providers publish device memory, a client's view of it is resolved
 * in advance, and an orchestrator picks the provider closest to all clients.
 *
 * A device of this host reaches a provider at the provider's bus address as
 * this host sees it (for a borrowed provider: our NTB window onto it). A
 * borrowed (shadow) client sits at its lender: its PCI core ops ask the
 * lender for the address (same lender: the provider's own bus address;
 * borrower-local provider or another lender: a window of the lender's NTB on
 * the path), so the data never passes through the borrower unless the
 * provider is there.
 */
#include <errno.h>
#include <stdlib.h>

#include "fabric/route.h"
#include "pci_priv.h"

int pci_p2pdma_bus(struct pci_dev *client, struct pci_dev *provider, unsigned bar,
		   uint64_t *bus)
{
	if (!client || !provider || !bus || bar > 5 || !provider->bar_size[bar] ||
	    client->host != provider->host)
		return -EINVAL;
	if (client->ops && client->ops->p2p_bus)
		return client->ops->p2p_bus(client, provider, bar, bus);
	*bus = provider->bar_addr[bar];
	return 0;
}

int pci_p2pdma_distance(struct pci_dev *provider, unsigned bar, struct pci_dev *client)
{
	struct fab_route *r;
	uint64_t bus;
	unsigned hops = 0;
	int rc = pci_p2pdma_bus(client, provider, bar, &bus);

	if (rc)
		return rc;
	/* A device reaches its own BAR without a trip through the fabric (Linux: 0). */
	if (client == provider)
		return 0;
	if (client->ops && client->ops->route_hops) {
		rc = client->ops->route_hops(client, bus, &hops);
		return rc ? rc : (int)hops;
	}
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	fab_host_lock(client->host->h);
	rc = fab_route_resolve_uncached(client->host->h, client->bdf, bus, 4, true, r);
	if (!rc && r->status != FAB_OK)
		rc = -EHOSTUNREACH;
	hops = r->nhops;
	fab_host_unlock(client->host->h);
	free(r);
	return rc ? rc : (int)hops;
}

struct pci_dev *pci_p2pmem_find(struct pci_host *ph, struct pci_dev *const *clients,
				unsigned n, unsigned *bar)
{
	struct pci_dev *best = NULL;
	long best_d = -1;

	if (!ph || !clients || !n)
		return NULL;
	for (unsigned i = 0; i < ph->np2p; i++) {
		const struct pci_p2p_pool *pool = ph->p2p[i];
		long sum = 0;

		/* Only published memory: a provider may keep a resource to itself. */
		if (!pool->provider || !pool->published)
			continue;
		for (unsigned c = 0; c < n && sum >= 0; c++) {
			int d = pci_p2pdma_distance(pool->provider, pool->bar, clients[c]);

			sum = d < 0 ? -1 : sum + d;
		}
		/* The least total; the first published on a tie (deterministic). */
		if (sum >= 0 && (best_d < 0 || sum < best_d)) {
			best_d = sum;
			best = pool->provider;
			if (bar)
				*bar = pool->bar;
		}
	}
	return best;
}
