// SPDX-License-Identifier: MIT
/*
 * A device of the lending pool named as people name it: its FDID (0x10300
 * or decimal, as 'smartio devices' shows it), its function name at the
 * lender (nvme0, accel1) when only one lender has that name, or a
 * lender-qualified name: LENDER:NAME with the lender's host id or name
 * (1:nvme0, lender-a:nvme0). Names are looked up in the pool, which any
 * live host's daemon answers. For a device a host gives back, a name that
 * several lenders have means the one that host borrowed, if only one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The pool from any live host; *p malloc'ed. 0 or -errno (said). */
int cli_lend_pool(const char *host_opt, const char *dir_opt, bool verbose,
		  struct smio_lend_pool **p)
{
	char dir[PATH_MAX];
	uint32_t host, rlen;
	int fd, rc;

	*p = malloc(SMIO_MAX_PAYLOAD);
	if (!*p)
		return -ENOMEM;
	fd = cli_open_any(host_opt, dir_opt, SMIO_ROLE_CLIENT, verbose, &host, dir, sizeof(dir));
	if (fd < 0) {
		rc = fd;
		goto fail;
	}
	rc = smio_call(fd, SMIO_LEND_POOL, NULL, 0, *p, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	close(fd);
	if (!rc)
		return 0;
	cli_err("devices: host %u: %s", host, cli_strerror(rc));
fail:
	free(*p);
	*p = NULL;
	return rc;
}

/* LENDER (a host id or name) to a host id; -ENOENT if the topology has none. */
static int lender_id(const char *dir_opt, const char *s, uint32_t *id)
{
	char dir[PATH_MAX];
	struct topo *t;
	uint64_t v;
	int rc = -ENOENT;

	if (!cli_parse_u64(s, &v) && v <= UINT32_MAX) {
		*id = (uint32_t)v;
		return 0;
	}
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)) || cli_cluster_topo(dir, &t))
		return -ENOENT;
	for (uint32_t i = 0; i < t->nhosts; i++)
		if (!strcmp(t->hosts[i].name, s)) {
			*id = t->hosts[i].id;
			rc = 0;
		}
	topo_free(t);
	return rc;
}

int cli_resolve_fdid(const char *arg, const char *dir_opt, int borrower, uint32_t *fdid)
{
	struct smio_lend_pool *p;
	const char *colon = strchr(arg, ':'), *name = colon ? colon + 1 : arg;
	char lender[SMIO_NAME_MAX];
	uint32_t lid = 0, hits = 0, mine = 0, mine_fdid = 0;
	uint64_t v;
	int rc;

	if (!cli_parse_u64(arg, &v)) {
		if (v > UINT32_MAX) {
			cli_err("'%s' is not a fabric device id (FDID, 32 bits)", arg);
			return -EINVAL;
		}
		*fdid = (uint32_t)v;
		return 0;
	}
	if (colon) {
		if ((size_t)(colon - arg) >= sizeof(lender)) {
			cli_err("'%s': lender name too long", arg);
			return -EINVAL;
		}
		memcpy(lender, arg, (size_t)(colon - arg));
		lender[colon - arg] = '\0';
		if (lender_id(dir_opt, lender, &lid)) {
			cli_err("'%s': the cluster has no host '%s' ('smartio cluster status' "
				"lists them)", arg, lender);
			return -EINVAL;
		}
	}
	rc = cli_lend_pool(NULL, dir_opt, false, &p);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct smio_lend_entry *e = &p->e[i];

		if (strcmp(e->name, name) || (colon && e->lender != lid))
			continue;
		if (!hits++)
			*fdid = e->fdid;
		if (borrower >= 0 && e->state == SMIO_LEND_LENT && e->borrower == (uint32_t)borrower &&
		    !mine++)
			mine_fdid = e->fdid;
	}
	if (hits > 1 && mine == 1) {
		*fdid = mine_fdid;
	} else if (hits > 1) {
		cli_err("'%s' names devices of more than one lender: say which, as LENDER:%s "
			"(see 'smartio devices')", arg, name);
		rc = -EINVAL;
	} else if (!hits) {
		cli_err("no device '%s' in the pool (see 'smartio devices'; a device is named by "
			"its FDID, its NAME or LENDER:NAME)", arg);
		rc = -EINVAL;
	}
	free(p);
	return rc;
}
