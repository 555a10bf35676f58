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
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fabric/ntb.h"
#include "host/drivers/nvme_drv.h"
#include "host/pci.h"
#include "util/log.h"
#include "util/smio_time.h"

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

/*
 * NVME_COPY: blocks from one controller to another through a buffer, which
 * with F_P2PMEM is p2pmem near both (nvmet's p2pmem for its transfers): the
 * driver points each command's PRPs at it, so no byte of data is in RAM.
 */
static int nvme_copy(struct smd *d, const struct smio_nvme_copy *m,
		     struct smio_nvme_copy_result *r)
{
	struct pci_dev *clients[2], *prov = NULL;
	struct nvme_drv_ns sns, dns;
	struct nvme_drv_cpl cpl = { 0 };
	uint32_t per, done = 0;
	uint64_t t0 = smio_now_ns();
	unsigned bar = 0;
	bool p2p = false;
	uint8_t *buf;
	int rc;

	memset(r, 0, sizeof(*r));
	clients[0] = pci_get_dev(d->pci, m->src_bdf);
	clients[1] = pci_get_dev(d->pci, m->dst_bdf);
	if (!nvme_drv_bound(clients[0]) || !nvme_drv_bound(clients[1]))
		return -ENODEV;
	if (nvme_drv_ns_info(clients[0], m->src_nsid, &sns) ||
	    nvme_drv_ns_info(clients[1], m->dst_nsid, &dns))
		return -ENXIO;
	if (sns.lba_shift != dns.lba_shift)
		return -EINVAL;
	if (m->src_slba >= sns.nsze || m->nlb > sns.nsze - m->src_slba ||
	    m->dst_slba >= dns.nsze || m->nlb > dns.nsze - m->dst_slba)
		return -ERANGE;
	per = SMIO_NVME_COPY_CHUNK >> sns.lba_shift;
	buf = NULL;
	if (m->flags & SMIO_NVME_COPY_F_P2PMEM) {
		buf = pci_p2pmem_alloc_near(d->pci, clients, 2, SMIO_NVME_COPY_CHUNK, &prov);
		if (!buf && !(m->flags & SMIO_NVME_COPY_F_FALLBACK)) {
			smio_info("nvme copy: no p2pmem reachable by %s and %s", clients[0]->name,
				  clients[1]->name);
			return pci_p2pmem_find(d->pci, clients, 2, NULL) ? -ENOMEM : -ENODEV;
		}
		p2p = buf != NULL;
	}
	if (p2p) {
		pci_p2pmem_provider(d->pci, buf, &bar);
		r->provider = SMIO_FDID(own_node(d), prov->bdf);
		r->bar = bar;
		for (unsigned i = 0; i < 2; i++) {
			int h = pci_p2pdma_distance(prov, bar, clients[i]);

			r->hops += h > 0 ? (uint32_t)h : 0;
		}
	} else {
		buf = malloc(SMIO_NVME_COPY_CHUNK);     /* the driver bounces through RAM */
		if (!buf)
			return -ENOMEM;
	}
	rc = 0;
	while (done < m->nlb) {
		uint32_t n = m->nlb - done < per ? m->nlb - done : per;

		rc = nvme_drv_io(clients[0], m->src_nsid, NVME_DRV_READ, m->src_slba + done, n,
				 buf, &cpl);
		if (!rc && !cpl.status)
			rc = nvme_drv_io(clients[1], m->dst_nsid, NVME_DRV_WRITE,
					 m->dst_slba + done, n, buf, &cpl);
		if (rc || cpl.status)
			break;
		done += n;
	}
	if (p2p)
		pci_free_p2pmem(d->pci, buf, SMIO_NVME_COPY_CHUNK);
	else
		free(buf);
	r->bytes = (uint64_t)done << sns.lba_shift;
	r->status = cpl.status & 0x7fff;
	r->elapsed_ns = smio_now_ns() - t0;
	return rc;
}

int smd_h_nvme_copy(struct smd *d, const void *p, void *out, uint32_t *outlen)
{
	int rc;

	if (!d->pci)
		return -ENODEV;
	fab_host_lock(d->host);
	rc = nvme_copy(d, p, out);
	fab_host_unlock(d->host);
	if (!rc)
		*outlen = sizeof(struct smio_nvme_copy_result);
	return rc;
}
