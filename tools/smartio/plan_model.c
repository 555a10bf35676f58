// SPDX-License-Identifier: MIT
/*
 * The planner's in-process cluster (plan_model.h): compositions borrowed
 * with the daemons' own Device Lending code, routes from the fabric's
 * resolver. Single-threaded: the borrower's lock is held for the world's
 * life, other hosts' locks are taken (recursively, on this thread) by the
 * code that needs them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/models.h"
#include "host/enum.h"
#include "host/lend.h"
#include "host/pci.h"
#include "plan_model.h"

#define PLAN_MAX_DEVS 64
#define RAM_PHYS (1ull << 20)   /* a borrower RAM address for DMA (what a buffer would be) */

struct plan_dev {
	uint32_t host;
	uint16_t bdf;
	struct pci_dev *pdev;       /* at the borrower: its own, or the shadow */
	struct lend_local *l;       /* borrowed in-process, else NULL */
	struct fab_host *at;        /* where its requests start */
	uint16_t rid;               /* its requester ID there */
};

struct plan_world {
	struct fab_cluster *c;
	struct fab_host *bh;
	struct pci_host *ph;
	struct plan_dev devs[PLAN_MAX_DEVS];
	unsigned ndevs;
};

int plan_world_open(const struct topo *t, uint32_t borrower, struct plan_world **out,
		    char *err, size_t errlen)
{
	struct plan_world *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	rc = fab_cluster_create(t, dev_endpoint_init, &w->c, err, errlen);
	for (uint32_t i = 0; !rc && i < w->c->nhosts; i++) {
		rc = host_enumerate(w->c->hosts[i], err, errlen);
		if (!rc)
			rc = host_ntb_init(w->c->hosts[i], err, errlen);
	}
	if (!rc) {
		w->bh = fab_cluster_host(w->c, borrower);
		if (!w->bh) {
			snprintf(err, errlen, "no host %u in the topology", borrower);
			rc = -ENOENT;
		}
	}
	if (!rc) {
		fab_host_lock(w->bh);
		rc = pci_host_create(w->bh, &w->ph, err, errlen);
		if (rc) {
			fab_host_unlock(w->bh);
			w->bh = NULL;
		}
	}
	if (rc) {
		plan_world_close(w);
		return rc < 0 ? rc : -EINVAL;
	}
	*out = w;
	return 0;
}

void plan_world_close(struct plan_world *w)
{
	if (!w)
		return;
	if (w->bh) {
		/* Shadows go with the PCI host; then the lenders' halves. */
		pci_host_destroy(w->ph);
		for (unsigned i = w->ndevs; i-- > 0;)
			if (w->devs[i].l)
				lend_local_return(w->devs[i].l, true);
		fab_host_unlock(w->bh);
	}
	if (w->c)
		fab_cluster_destroy(w->c);
	free(w);
}

static struct fab_func *endpoint(struct plan_world *w, uint32_t host, uint16_t bdf)
{
	struct fab_host *h = fab_cluster_host(w->c, host);
	struct fab_func *fn = h ? fab_func_by_bdf(h, bdf) : NULL;

	return fn && fn->kind == FAB_FN_ENDPOINT ? fn : NULL;
}

const char *plan_world_model(struct plan_world *w, uint32_t host, uint16_t bdf)
{
	struct fab_func *fn = endpoint(w, host, bdf);

	return fn ? fn->model : NULL;
}

bool plan_world_endpoint(struct plan_world *w, uint32_t host, unsigned i, uint16_t *bdf,
			 const char **model, const char **name)
{
	struct fab_host *h = fab_cluster_host(w->c, host);

	for (uint32_t k = 0; h && k < h->nfuncs; k++) {
		struct fab_func *fn = h->funcs[k];

		if (fn->kind != FAB_FN_ENDPOINT || !fab_func_present(fn) || i--)
			continue;
		*bdf = fab_func_bdf(fn);
		*model = fn->model;
		*name = fn->name;
		return true;
	}
	return false;
}

int plan_world_dev(struct plan_world *w, uint32_t host, uint16_t bdf, struct plan_dev **out)
{
	struct plan_dev *d;
	struct fab_host *lender;
	int rc;

	for (unsigned i = 0; i < w->ndevs; i++)
		if (w->devs[i].host == host && w->devs[i].bdf == bdf) {
			*out = &w->devs[i];
			return 0;
		}
	if (w->ndevs == PLAN_MAX_DEVS)
		return -ENOSPC;
	if (!endpoint(w, host, bdf))
		return -ENODEV;
	d = &w->devs[w->ndevs];
	*d = (struct plan_dev){ .host = host, .bdf = bdf };
	if (host == w->bh->id) {
		d->pdev = pci_get_dev(w->ph, bdf);
		if (!d->pdev)
			return -ENODEV;
		d->at = w->bh;
		d->rid = bdf;
	} else {
		lender = fab_cluster_host(w->c, host);
		rc = lend_local_borrow(lender, bdf, w->ph, &d->l, &d->pdev);
		if (rc)
			return rc;
		d->at = lender;
		d->rid = bdf;     /* a lent device issues its requests at the lender */
	}
	w->ndevs++;
	*out = d;
	return 0;
}

uint64_t plan_dev_bar_size(const struct plan_dev *d, unsigned bar)
{
	return bar < 6 ? d->pdev->bar_size[bar] : 0;
}

static int resolve(struct fab_host *h, uint16_t rid, uint64_t bus, uint64_t len, bool write,
		   struct fab_route *r)
{
	int rc;

	fab_host_lock(h);
	rc = fab_route_resolve_uncached(h, rid, bus, len, write, r);
	fab_host_unlock(h);
	if (!rc && r->status != FAB_OK)
		rc = -EHOSTUNREACH;
	return rc;
}

int plan_route_p2p(struct plan_world *w, struct plan_dev *client, struct plan_dev *provider,
		   unsigned bar, uint64_t len, bool write, struct fab_route *r)
{
	uint64_t bus;
	int rc;

	(void)w;
	if (client == provider || bar > 5 || !provider->pdev->bar_size[bar])
		return -EINVAL;
	if (len > provider->pdev->bar_size[bar])
		len = provider->pdev->bar_size[bar];
	rc = pci_p2pdma_bus(client->pdev, provider->pdev, bar, &bus);
	return rc ? rc : resolve(client->at, client->rid, bus, len, write, r);
}

int plan_route_ram(struct plan_world *w, struct plan_dev *dev, uint64_t len, bool write,
		   struct fab_route *r)
{
	uint64_t bus;
	int err = 0, rc;

	if (len > (1ull << 30))
		len = 1ull << 30;
	bus = dma_map_single(dev->pdev, RAM_PHYS, len, &err);
	if (err)
		return err < 0 ? err : -EIO;
	rc = resolve(dev->at, dev->rid, bus, len, write, r);
	dma_unmap_single(dev->pdev, bus, len);
	(void)w;
	return rc;
}

int plan_route_cpu(struct plan_world *w, struct plan_dev *dev, unsigned bar, uint64_t len,
		   bool write, struct fab_route *r)
{
	if (bar > 5 || !dev->pdev->bar_size[bar])
		return -EINVAL;
	/* The borrower's CPU (00:00.0) at the BAR as its PCI core enumerated it. */
	return resolve(w->bh, 0, dev->pdev->bar_addr[bar], len, write, r);
}
