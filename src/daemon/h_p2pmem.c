// SPDX-License-Identifier: MIT
/*
 * P2PMEM_ALLOC and P2PMEM_FREE: the P2PDMA orchestrator for applications
 * (issue 14; docs/protocol.md). A program that will have a device move data
 * (the distributed NVMe driver's `dd --buffer p2pmem`) asks for a buffer in
 * the published p2pmem closest to that device, as Linux's nvmet asks
 * pci_p2pmem_find for the memory closest to its NVMe and its RDMA NIC.
 *
 * The client: a function of this host or one it borrowed is itself the
 * client; a device of another host reaches this host's memory through this
 * host's NTB adapter, so the adapter (the first whose link is up) is where
 * its route here begins and is the client.
 *
 * The buffers belong to the connection that asked: freed by P2PMEM_FREE or
 * when it closes. Run on a worker, with the host lock held (taken again
 * here: it is recursive), like every PCI core call.
 */
#include <errno.h>
#include <string.h>

#include "daemon.h"
#include "fabric/ntb.h"
#include "host/pci.h"
#include "util/log.h"

#define P2PMEM_MAX_GRANTS  64

/* The buffers handed out, by connection (all daemons of the process). */
static struct grant {
	struct smd *d;
	uint32_t cid;
	void *mem;
	uint64_t size, bus;
} grants[P2PMEM_MAX_GRANTS];

static uint32_t own_node(struct smd *d)
{
	for (uint32_t i = 0; i < d->topo->nhosts; i++)
		if (d->topo->hosts[i].id == d->host_id)
			return d->topo->hosts[i].node_id;
	return 0;
}

static struct pci_dev *client_dev(struct smd *d, uint32_t fdid)
{
	int bdf;

	if (SMIO_FDID_NODE(fdid) == own_node(d))
		return pci_get_dev(d->pci, SMIO_FDID_BDF(fdid));
	bdf = smd_lend_shadow_bdf(d, fdid);
	if (bdf >= 0)
		return pci_get_dev(d->pci, (uint16_t)bdf);
	for (uint32_t i = 0; i < d->host->nntbs; i++)
		if (d->host->ntbs[i]->link_up)
			return pci_get_dev(d->pci, fab_func_bdf(d->host->ntbs[i]->fn));
	return NULL;
}

static int p2pmem_alloc(struct smd *d, struct smd_conn *c, const struct smio_p2pmem_req *m,
			struct smio_p2pmem_grant *g)
{
	struct pci_dev *client, *prov = NULL;
	struct grant *slot = NULL;
	unsigned bar = 0;
	void *mem;
	int hops;

	memset(g, 0, sizeof(*g));
	for (unsigned i = 0; i < P2PMEM_MAX_GRANTS && !slot; i++)
		if (!grants[i].mem)
			slot = &grants[i];
	if (!slot)
		return -ENOSPC;
	client = client_dev(d, m->client);
	if (!client)
		return -ENOENT;
	prov = pci_p2pmem_find(d->pci, &client, 1, &bar);
	if (!prov) {
		smio_info("p2pmem: no published provider reachable from %s%s", client->name,
			  m->flags & SMIO_P2PMEM_F_FALLBACK ? ": host memory instead" : "");
		return m->flags & SMIO_P2PMEM_F_FALLBACK ? 0 : -ENODEV;
	}
	hops = pci_p2pdma_distance(prov, bar, client);
	mem = pci_alloc_p2pmem(prov, (size_t)m->size);
	if (!mem)
		return -ENOMEM;
	*slot = (struct grant){ .d = d, .cid = c->cid, .mem = mem,
				.size = (m->size + 4095) & ~4095ull,
				.bus = pci_p2pmem_virt_to_bus(d->pci, mem) };
	*g = (struct smio_p2pmem_grant){ .bus = slot->bus, .size = slot->size,
					 .provider = SMIO_FDID(own_node(d), prov->bdf),
					 .bar = bar, .hops = hops < 0 ? 0 : (uint32_t)hops };
	smio_info("p2pmem: %llu bytes of %s BAR%u at 0x%llx for %s (%d hops)",
		  (unsigned long long)slot->size, prov->name, bar,
		  (unsigned long long)slot->bus, client->name, hops);
	return 0;
}

static void grant_free(struct smd *d, struct grant *g)
{
	if (pci_free_p2pmem(d->pci, g->mem, (size_t)g->size))
		smio_warn("p2pmem: the buffer at 0x%llx was not allocated",
			  (unsigned long long)g->bus);
	memset(g, 0, sizeof(*g));
}

int smd_h_p2pmem(struct smd *d, struct smd_conn *c, uint16_t type, const void *p, void *out,
		 uint32_t *outlen)
{
	int rc = -ENOENT;

	if (!d->pci)
		return -ENODEV;
	fab_host_lock(d->host);
	if (type == SMIO_P2PMEM_ALLOC) {
		rc = p2pmem_alloc(d, c, p, out);
		if (!rc)
			*outlen = sizeof(struct smio_p2pmem_grant);
	} else {
		const struct smio_p2pmem_free *m = p;

		for (unsigned i = 0; i < P2PMEM_MAX_GRANTS; i++)
			if (grants[i].mem && grants[i].d == d && grants[i].cid == c->cid &&
			    grants[i].bus == m->bus) {
				grant_free(d, &grants[i]);
				rc = 0;
				break;
			}
	}
	fab_host_unlock(d->host);
	return rc;
}

void smd_p2pmem_conn_closed(struct smd *d, struct smd_conn *c)
{
	if (!d->pci || !c->cid)
		return;
	fab_host_lock(d->host);
	for (unsigned i = 0; i < P2PMEM_MAX_GRANTS; i++)
		if (grants[i].mem && grants[i].d == d && grants[i].cid == c->cid)
			grant_free(d, &grants[i]);
	fab_host_unlock(d->host);
}
