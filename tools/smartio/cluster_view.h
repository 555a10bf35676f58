/* SPDX-License-Identifier: MIT */
/* cluster status: links, isolated hosts and lent devices (cluster_view.c). */
#ifndef SMARTIO_CLI_CLUSTER_VIEW_H
#define SMARTIO_CLI_CLUSTER_VIEW_H

#include "smartio/topology.h"
#include "util/json_out.h"

/*
 * stats[i]: host index i's STATS object (stats.h), NULL unless it is up.
 * Links: printed, or with hosts_json (per host index, NULL to skip) each
 * host object gets "adapters" and "isolated". Lent devices: printed, or
 * "lent" added to root. 0 or -ENOMEM.
 */
/* Host's STATS as an object, or NULL when it cannot be had. */
struct json_object *cluster_view_stats(const char *dir, uint32_t host);
int cluster_view_links(const struct topo *t, struct json_object **stats,
		       struct json_object **hosts_json);
int cluster_view_lent(const char *dir, const struct topo *t, struct json_object **stats,
		      struct json_object *root);

#endif
