/* SPDX-License-Identifier: MIT */
/*
 * The state of a lease's path (lease_path.c): whether the NTB links between
 * a borrower and its lender work, for `smartio devices` and `cluster status`
 * (the live view, observe.c, applies the same rule to the same links).
 */
#ifndef SMARTIO_CLI_LEASE_PATH_H
#define SMARTIO_CLI_LEASE_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "smartio/topology.h"
#include "util/json_out.h"

enum lease_path_state { LEASE_PATH_NONE, LEASE_PATH_UP, LEASE_PATH_DOWN, LEASE_PATH_UNKNOWN };

/*
 * The path between host indices bi (borrower) and li (lender): a
 * back-to-back cable, or each host's cable to one cluster switch (or two
 * cascaded ones); each adapter's link as its host's STATS says (stats[i],
 * NULL: unknown). A path is up when every adapter on it is up, down when
 * one is down (*via: the first such, "HOSTNAME.NTB", the borrower's side
 * first), else unknown; of several paths, the first that is up, else the
 * first. LEASE_PATH_NONE: no cable joins them.
 */
enum lease_path_state lease_path(const struct topo *t, struct json_object **stats, uint32_t bi,
				 uint32_t li, char *via, size_t vialen);
/* "up", "down", "unknown", or NULL for LEASE_PATH_NONE. */
const char *lease_path_word(enum lease_path_state s);
/* Every host's STATS (NULL for a host that does not answer); the array is calloc'ed. */
struct json_object **lease_path_stats(const char *dir, const struct topo *t);
void lease_path_stats_free(const struct topo *t, struct json_object **stats);

#endif
