/* SPDX-License-Identifier: MIT */
/*
 * The placement planner's view of a composition that is not borrowed yet
 * (docs/timing-model.md, "How plans are priced").
 *
 * A running cluster can only tell the route of what is borrowed (LEND_P2P
 * needs both devices borrowed and gives a hop count, not the hops). So the
 * planner builds an in-process copy of the cluster from the same topology
 * file (fab_cluster_create, the enumeration and NTB bring-up every daemon
 * runs), borrows the candidates there with the very Device Lending code the
 * daemons use (lend_local_borrow: lender windows, shadow device, IOMMU
 * domains), asks the PCI core where one device reaches another
 * (pci_p2pdma_bus, as LEND_P2P does) or the borrower's RAM (dma_map_single,
 * as a driver does), and resolves that address from the device's real place
 * with the fabric's route resolver. No device thread runs and nothing is
 * sent to the cluster.
 */
#ifndef SMARTIO_CLI_PLAN_MODEL_H
#define SMARTIO_CLI_PLAN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/route.h"
#include "smartio/topology.h"

struct plan_world;
struct plan_dev;

/* The cluster of t as host `borrower` sees it; 0 or -errno with err said. */
int plan_world_open(const struct topo *t, uint32_t borrower, struct plan_world **out,
		    char *err, size_t errlen);
void plan_world_close(struct plan_world *w);

/* The model name ("nvme", "accel") of endpoint bdf of host; NULL if there is none. */
const char *plan_world_model(struct plan_world *w, uint32_t host, uint16_t bdf);
/* The i-th endpoint of host (bdf, model, name); false past the last. */
bool plan_world_endpoint(struct plan_world *w, uint32_t host, unsigned i, uint16_t *bdf,
			 const char **model, const char **name);

/*
 * Device (host, bdf) as the borrower would use it: borrowed (in-process)
 * when it is another host's, its own otherwise. Kept until close.
 */
int plan_world_dev(struct plan_world *w, uint32_t host, uint16_t bdf, struct plan_dev **out);

/* Size of BAR bar of the device as the borrower sees it (0: none). */
uint64_t plan_dev_bar_size(const struct plan_dev *d, unsigned bar);

/* Routes, resolved from where the requester really is; 0 or -errno (r->status too). */
int plan_route_p2p(struct plan_world *w, struct plan_dev *client, struct plan_dev *provider,
		   unsigned bar, uint64_t len, bool write, struct fab_route *r);
int plan_route_ram(struct plan_world *w, struct plan_dev *dev, uint64_t len, bool write,
		   struct fab_route *r);
int plan_route_cpu(struct plan_world *w, struct plan_dev *dev, unsigned bar, uint64_t len,
		   bool write, struct fab_route *r);

#endif
