/* SPDX-License-Identifier: MIT */
/* Shared helpers for the in-process fabric tests. */
#ifndef SMARTIO_TESTS_FABRIC_UTIL_H
#define SMARTIO_TESTS_FABRIC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "devices/models.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "fabric/route.h"
#include "host/enum.h"

struct tcluster {
	struct topo *topo;
	struct fab_cluster *c;
};

/* Parse yaml, build every host, enumerate and bring up NTBs; asserts success. */
static inline void tc_up(struct tcluster *tc, const char *yaml)
{
	char err[512] = "";
	int rc = yaml ? topo_load_string(yaml, strlen(yaml), "test.yaml", &tc->topo, err,
					 sizeof(err))
		      : topo_load_default(&tc->topo, err, sizeof(err));

	if (rc)
		fail_msg("topology: %s", err);
	rc = fab_cluster_create(tc->topo, dev_endpoint_init, &tc->c, err, sizeof(err));
	if (rc)
		fail_msg("cluster: %s", err);
	for (uint32_t i = 0; i < tc->c->nhosts; i++) {
		rc = host_enumerate(tc->c->hosts[i], err, sizeof(err));
		if (!rc)
			rc = host_ntb_init(tc->c->hosts[i], err, sizeof(err));
		if (rc)
			fail_msg("host %u: %s", i, err);
	}
}

static inline void tc_down(struct tcluster *tc)
{
	fab_cluster_destroy(tc->c);
	topo_free(tc->topo);
}

static inline struct fab_host *tc_host(struct tcluster *tc, uint32_t id)
{
	struct fab_host *h = fab_cluster_host(tc->c, id);

	assert_non_null(h);
	return h;
}

static inline struct fab_func *tc_fn(struct tcluster *tc, uint32_t host, const char *name)
{
	struct fab_func *f = fab_func_by_name(tc_host(tc, host), name);

	if (!f)
		fail_msg("no function %s on host %u", name, host);
	return f;
}

static inline bool route_has(const struct fab_route *r, int kind, const char *substr)
{
	for (uint32_t i = 0; i < r->nhops; i++)
		if (r->hops[i].kind == kind && (!substr || strstr(r->hops[i].name, substr)))
			return true;
	return false;
}

#endif
