// SPDX-License-Identifier: MIT
/*
 * What `smartio cluster status` shows beyond each daemon's state: every NTB
 * adapter's link (from each live host's STATS), whether a host is isolated
 * (it has adapters and none has a working link), and the devices lent by
 * Device Lending (lender -> borrower, from a live host's LEND_POOL, and the
 * state of the lease's path, lease_path.h).
 *
 * A back-to-back cable works only when both ends' links are up, so an
 * adapter whose far end is down counts as down for its host too ("down at
 * host N"). A cable to a cluster switch has one end that a daemon knows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cluster_view.h"
#include "lease_path.h"
#include "stats.h"

static struct json_object *field(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Adapter idx of the host with id host, from its STATS (NULL: unknown). */
static struct json_object *adapter_of(const struct topo *t, struct json_object **stats,
				      uint64_t host, uint64_t idx)
{
	int hi = host <= UINT32_MAX ? topo_host_index(t, (uint32_t)host) : -1;
	struct json_object *ads = hi >= 0 ? field(stats[hi], "adapters") : NULL;

	return ads && idx < json_object_array_length(ads) ?
	       json_object_array_get_idx(ads, idx) : NULL;
}

static bool is_up(struct json_object *a)
{
	struct json_object *l = field(a, "link");

	return l && !strcmp(json_object_get_string(l), "up");
}

/* The adapter of a back-to-back cable's far end, by the topology. */
static struct json_object *far_end(const struct topo *t, struct json_object **stats,
				   uint32_t hi, uint64_t idx)
{
	const struct topo_ntb *n = topo_host_ntb(&t->hosts[hi], (uint32_t)idx);

	if (!n || n->peer_kind != TOPO_PEER_NTB)
		return NULL;
	return adapter_of(t, stats, t->hosts[n->peer_host].id, n->peer_ntb);
}

struct json_object *cluster_view_stats(const char *dir, uint32_t host)
{
	struct json_object *o = NULL;
	int fd = cli_connect(dir, host, SMIO_ROLE_ADMIN);

	if (fd < 0)
		return NULL;
	if (cli_stats_fetch(fd, &o))
		o = NULL;
	close(fd);
	return o;
}

int cluster_view_links(const struct topo *t, struct json_object **stats,
		       struct json_object **hosts_json)
{
	bool header = false, isolated[t->nhosts ? t->nhosts : 1];

	for (uint32_t hi = 0; hi < t->nhosts; hi++) {
		struct json_object *ads = field(stats[hi], "adapters"), *out = NULL;
		size_t na = ads ? json_object_array_length(ads) : 0, up = 0;

		if (hosts_json && hosts_json[hi]) {
			out = json_object_new_array();
			if (!out)
				return -ENOMEM;
		}
		for (size_t i = 0; i < na; i++) {
			struct json_object *a = json_object_array_get_idx(ads, i), *o;
			struct json_object *f = far_end(t, stats, hi, i), *p = field(a, "peer_host");
			bool here = is_up(a), there = !f || is_up(f);
			const char *state = here && there ? "up" : "down";
			char where[32] = "", peer[16] = "switch";

			up += here && there;
			if (here && !there && p)
				snprintf(where, sizeof(where), " (down at host %" PRIu64 ")",
					 (uint64_t)json_object_get_uint64(p));
			if (p)
				snprintf(peer, sizeof(peer), "host %" PRIu64,
					 (uint64_t)json_object_get_uint64(p));
			if (!out) {
				if (!header)
					printf("\n%-5s %-8s %-8s %-8s %-5s %s\n", "HOST", "ADAPTER",
					       "BDF", "PEER", "LINK", "LINK-ERRS");
				header = true;
				printf("%-5u %-8s %-8s %-8s %-5s %" PRIu64 "%s\n", t->hosts[hi].id,
				       json_object_get_string(field(a, "name")),
				       json_object_get_string(field(a, "bdf")), peer, state,
				       (uint64_t)json_object_get_uint64(field(a, "link_errors")), where);
				continue;
			}
			o = json_object_new_object();
			if (!o || smio_json_add(o, "name", json_object_get(field(a, "name"))) ||
			    smio_json_add(o, "bdf", json_object_get(field(a, "bdf"))) ||
			    (p ? smio_json_add(o, "peer_host", json_object_get(p)) :
			     smio_json_add_null(o, "peer_host")) ||
			    smio_json_add_str(o, "link", state) ||
			    smio_json_add_str(o, "link_here", here ? "up" : "down") ||
			    smio_json_add(o, "link_errors",
					  json_object_get(field(a, "link_errors"))) ||
			    smio_json_push(out, o)) {
				json_object_put(o);
				json_object_put(out);
				return -ENOMEM;
			}
		}
		if (out) {
			if (smio_json_add(hosts_json[hi], "adapters", out) ||
			    (stats[hi] ? smio_json_add_bool(hosts_json[hi], "isolated", na && !up) :
			     smio_json_add_null(hosts_json[hi], "isolated")))
				return -ENOMEM;
		}
		isolated[hi] = stats[hi] && na && !up;
	}
	for (uint32_t hi = 0; !hosts_json && hi < t->nhosts; hi++)
		if (isolated[hi])
			printf("host %u (%s) is isolated: none of its NTB links is up\n",
			       t->hosts[hi].id, t->hosts[hi].name);
	return 0;
}

int cluster_view_lent(const char *dir, const struct topo *t, struct json_object **stats,
		      struct json_object *root)
{
	struct smio_lend_pool *p = NULL;
	struct json_object *arr = NULL;
	uint32_t rlen = 0, n = 0;
	int rc = -EHOSTDOWN;

	/* Any live daemon gathers the pool from the others. */
	for (uint32_t hi = 0; hi < t->nhosts && rc; hi++) {
		int fd;

		if (!stats[hi])
			continue;
		fd = cli_connect(dir, t->hosts[hi].id, SMIO_ROLE_ADMIN);
		if (fd < 0)
			continue;
		if (!p)
			p = malloc(SMIO_MAX_PAYLOAD);
		rc = p ? smio_call(fd, SMIO_LEND_POOL, NULL, 0, p, SMIO_MAX_PAYLOAD, &rlen, NULL,
				   CLI_TIMEOUT_MS) : -ENOMEM;
		close(fd);
	}
	if (root) {
		arr = rc ? NULL : json_object_new_array();
		if (rc ? smio_json_add_null(root, "lent") : !arr || smio_json_add(root, "lent", arr)) {
			free(p);
			return -ENOMEM;
		}
	} else if (rc) {
		printf("\nlent devices: unknown (%s)\n", cli_strerror(rc));
	}
	for (uint32_t i = 0; !rc && i < p->n; i++) {
		const struct smio_lend_entry *e = &p->e[i];
		int bi = topo_host_index(t, e->borrower), li = topo_host_index(t, e->lender);
		char bdf[16], fdid[16], via[2 * TOPO_NAME_MAX + 2] = "";
		enum lease_path_state ps = LEASE_PATH_NONE;
		struct json_object *o;

		if (e->state != SMIO_LEND_LENT)
			continue;
		if (bi >= 0 && li >= 0)
			ps = lease_path(t, stats, (uint32_t)bi, (uint32_t)li, via, sizeof(via));
		snprintf(bdf, sizeof(bdf), "%02x:%02x.%x", e->bdf >> 8, (e->bdf >> 3) & 0x1f,
			 e->bdf & 7);
		snprintf(fdid, sizeof(fdid), "0x%08x", e->fdid);
		if (!arr) {
			if (!n)
				printf("\n%-10s %-10s %-16s    %-10s %s\n", "FDID", "DEVICE",
				       "LENDER", "BORROWER", "PATH");
			printf("%-10s %-10s host %-3u %-8s -> host %-3u %s%s\n", fdid, e->name,
			       e->lender, bdf, e->borrower,
			       ps == LEASE_PATH_UP ? "up" : ps == LEASE_PATH_DOWN ? "down via " :
			       "unknown", via);
			n++;
			continue;
		}
		o = json_object_new_object();
		if (!o || smio_json_add_str(o, "fdid", fdid) || smio_json_add_str(o, "name", e->name) ||
		    smio_json_add_uint(o, "lender", e->lender) || smio_json_add_str(o, "bdf", bdf) ||
		    smio_json_add_uint(o, "borrower", e->borrower) ||
		    smio_json_add_str(o, "path_state", lease_path_word(ps) ? lease_path_word(ps)
									 : "unknown") ||
		    smio_json_add_str(o, "path_down_at", ps == LEASE_PATH_DOWN ? via : NULL) ||
		    smio_json_push(arr, o)) {
			json_object_put(o);
			free(p);
			return -ENOMEM;
		}
	}
	if (!rc && !arr && !n)
		printf("\nno devices lent\n");
	free(p);
	return 0;
}
