// SPDX-License-Identifier: MIT
/* Whether a lease's NTB path works (lease_path.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hostproc.h"
#include "lease_path.h"
#include "stats.h"

/* 1 up, 0 down, -1 unknown: adapter ntb of host index hi by its STATS. */
static int link_of(struct json_object **stats, uint32_t hi, uint32_t ntb)
{
	struct json_object *ads, *a, *l;

	if (!stats[hi] || !json_object_object_get_ex(stats[hi], "adapters", &ads) ||
	    !json_object_is_type(ads, json_type_array) || ntb >= json_object_array_length(ads))
		return -1;
	a = json_object_array_get_idx(ads, ntb);
	if (!json_object_object_get_ex(a, "link", &l) || !json_object_is_type(l, json_type_string))
		return -1;
	return !strcmp(json_object_get_string(l), "up");
}

static bool cascaded(const struct topo *t, uint32_t x, uint32_t y)
{
	for (uint32_t i = 0; i < t->ncascades; i++)
		if ((t->cascades[i].a == x && t->cascades[i].b == y) ||
		    (t->cascades[i].a == y && t->cascades[i].b == x))
			return true;
	return false;
}

/* The state of the path through adapters (bi, i) and (li, j); *via set when down. */
static enum lease_path_state two_ends(const struct topo *t, struct json_object **stats,
				      uint32_t bi, uint32_t i, uint32_t li, uint32_t j, char *via,
				      size_t vialen)
{
	int a = link_of(stats, bi, i), b = link_of(stats, li, j);

	if (a == 0 || b == 0) {
		uint32_t h = a == 0 ? bi : li, n = a == 0 ? i : j;

		snprintf(via, vialen, "%s.%s", t->hosts[h].name, topo_host_ntb(&t->hosts[h], n)->name);
		return LEASE_PATH_DOWN;
	}
	return a == 1 && b == 1 ? LEASE_PATH_UP : LEASE_PATH_UNKNOWN;
}

enum lease_path_state lease_path(const struct topo *t, struct json_object **stats, uint32_t bi,
				 uint32_t li, char *via, size_t vialen)
{
	enum lease_path_state best = LEASE_PATH_NONE, s;
	char v[2 * TOPO_NAME_MAX + 2], bv[sizeof(v)] = "";
	const struct topo_ntb *x, *y;

	for (uint32_t i = 0; (x = topo_host_ntb(&t->hosts[bi], i)) && best != LEASE_PATH_UP; i++)
		for (uint32_t j = 0; (y = topo_host_ntb(&t->hosts[li], j)); j++) {
			if (x->peer_kind == TOPO_PEER_NTB) {
				if (x->peer_host != li || x->peer_ntb != j)
					continue;
			} else if (x->peer_kind != TOPO_PEER_CSWITCH ||
				   y->peer_kind != TOPO_PEER_CSWITCH ||
				   (x->peer_cswitch != y->peer_cswitch &&
				    !cascaded(t, x->peer_cswitch, y->peer_cswitch))) {
				continue;
			}
			v[0] = 0;
			s = two_ends(t, stats, bi, i, li, j, v, sizeof(v));
			if (best == LEASE_PATH_NONE || s == LEASE_PATH_UP) {
				best = s;
				snprintf(bv, sizeof(bv), "%s", v);
			}
			if (s == LEASE_PATH_UP)
				break;
		}
	if (via && vialen)
		snprintf(via, vialen, "%s", best == LEASE_PATH_DOWN ? bv : "");
	return best;
}

const char *lease_path_word(enum lease_path_state s)
{
	return s == LEASE_PATH_UP ? "up" : s == LEASE_PATH_DOWN ? "down" :
	       s == LEASE_PATH_UNKNOWN ? "unknown" : NULL;
}

struct json_object **lease_path_stats(const char *dir, const struct topo *t)
{
	struct json_object **stats = calloc(t->nhosts ? t->nhosts : 1, sizeof(*stats));

	for (uint32_t i = 0; stats && i < t->nhosts; i++) {
		pid_t pid = cli_daemon_alive(dir, t->hosts[i].id);
		int fd;

		/* A stopped daemon (fault hang) would cost a timeout: its paths read unknown. */
		if (!pid || cli_proc_state(pid) == 'T')
			continue;
		fd = cli_connect(dir, t->hosts[i].id, SMIO_ROLE_CLIENT);
		if (fd < 0)
			continue;
		if (cli_stats_fetch(fd, &stats[i]))
			stats[i] = NULL;
		close(fd);
	}
	return stats;
}

void lease_path_stats_free(const struct topo *t, struct json_object **stats)
{
	for (uint32_t i = 0; stats && i < t->nhosts; i++)
		json_object_put(stats[i]);
	free(stats);
}
