// SPDX-License-Identifier: MIT
/*
 * smartio czodiac: cZodiac's multi-root sharing in a running cluster
 * (docs/czodiac.md, "In a running cluster"). share: the OWNER's IOPort
 * tables bind a function for the USER host, which hot-adds it through its
 * virtual hot-plug slot as a logic full-function device; unshare: the
 * attention button withdraws it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/cli_conv.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio czodiac share DEV --host N [--dir DIR] [--json]\n"
		"       smartio czodiac unshare DEV --host N [--dir DIR] [--json]\n"
		"\n"
		"cZodiac's multi-root sharing through a switch with 'mode: czodiac'\n"
		"(docs/czodiac.md). DEV is a device of the pool (an FDID, NAME or\n"
		"LENDER:NAME, as for borrow): its host is the OWNER, host N the USER.\n"
		"  share     the OWNER's IOPort maps the function's requester ID and BARs\n"
		"            into host N's space; host N's virtual hot-plug slot reports\n"
		"            presence (an MSI) and its PCI core adds the logic full-function\n"
		"            device, to which its drivers bind\n"
		"  unshare   the slot's attention button (an MSI): host N's hot-plug driver\n"
		"            unbinds the driver, removes the device and powers the slot off,\n"
		"            and the OWNER withdraws the function (stop I/O on it first)\n"
		"  --json    one JSON object: fdid, owner, user, uid, oid, present, driver\n"
		"            (null: none), msis, ubars\n");
}

static void bdf_str(char *b, size_t n, unsigned bdf)
{
	snprintf(b, n, "%02x:%02x.%x", (bdf >> 8) & 0xff, (bdf >> 3) & 0x1f, bdf & 7);
}

static int print_json(uint32_t user, const struct smio_cz_info *o)
{
	struct json_object *j = json_object_new_object(), *bars = json_object_new_array();
	char b[24];
	int rc = 0;

	if (!j || !bars) {
		json_object_put(j);
		json_object_put(bars);
		return -ENOMEM;
	}
	snprintf(b, sizeof(b), "0x%08x", o->fdid);
	rc |= smio_json_add_str(j, "fdid", b);
	rc |= smio_json_add_uint(j, "owner", o->owner);
	rc |= smio_json_add_uint(j, "user", user);
	bdf_str(b, sizeof(b), o->uid);
	rc |= smio_json_add_str(j, "uid", b);
	bdf_str(b, sizeof(b), o->oid);
	rc |= smio_json_add_str(j, "oid", b);
	rc |= smio_json_add_bool(j, "present", o->present);
	rc |= o->bound ? smio_json_add_str(j, "driver", o->driver) : smio_json_add_null(j, "driver");
	rc |= smio_json_add_uint(j, "msis", o->msis);
	for (unsigned i = 0; i < SMIO_DEV_BARS; i++) {
		struct json_object *e;

		if (!o->bar_size[i])
			continue;
		e = json_object_new_object();
		if (!e) {
			rc = -ENOMEM;
			break;
		}
		rc |= smio_json_add_uint(e, "bar", i);
		snprintf(b, sizeof(b), "0x%llx", (unsigned long long)o->bar_addr[i]);
		rc |= smio_json_add_str(e, "addr", b);
		rc |= smio_json_add_uint(e, "size", o->bar_size[i]);
		rc |= smio_json_push(bars, e);
	}
	rc |= smio_json_add(j, "ubars", bars);
	if (!rc)
		rc = cli_json_print(j);
	json_object_put(j);
	return rc ? -EIO : 0;
}

static void say_error(bool share, const char *dev, uint32_t user, int rc)
{
	const char *what = share ? "share" : "unshare";

	if (rc == -EOPNOTSUPP)
		cli_err("czodiac %s: host %u is on no cZodiac switch (the topology's "
			"'mode: czodiac', docs/topology.md)", what, user);
	else if (rc == -EHOSTUNREACH)
		cli_err("czodiac %s: host %u and the owner of %s are not on one cZodiac switch",
			what, user, dev);
	else if (rc == -EINVAL)
		cli_err("czodiac %s: %s is a device of host %u itself", what, dev, user);
	else if (rc == -EALREADY)
		cli_err("czodiac share: %s is shared with host %u already", dev, user);
	else if (rc == -EBUSY)
		cli_err("czodiac share: %s is lent, borrowed or shared already ('smartio "
			"devices' shows who has it)", dev);
	else if (rc == -ENOENT && !share)
		cli_err("czodiac unshare: %s is not shared with host %u", dev, user);
	else if (rc == -ENOSPC)
		cli_err("czodiac share: no room for %s at host %u (its port window, the "
			"IOPort's tables or its virtual slots are full)", dev, user);
	else
		cli_err("czodiac %s of %s at host %u: %s", what, dev, user, cli_strerror(rc));
}

int cmd_czodiac(int argc, char **argv)
{
	static const char *const subs[] = { "share", "unshare" };
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 } };
	const char *host_opt = NULL, *dir_opt = NULL;
	struct smio_cz_share q = { 0 };
	struct smio_cz_info o;
	char dir[PATH_MAX], ub[16], ob[16];
	uint32_t host, rlen;
	bool json = false, share;
	int ch, fd, rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "share") && strcmp(argv[1], "unshare")) {
		smio_unknown("smartio czodiac", "command", argv[1], subs,
			     sizeof(subs) / sizeof(subs[0]), "share, unshare");
		return 2;
	}
	share = !strcmp(argv[1], "share");
	optind = 2;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'H': host_opt = optarg; break;
		case 'd': dir_opt = optarg; break;
		case 'j': json = true; break;
		case 'h': return usage(stdout), 0;
		default: return usage(stderr), 2;
		}
	}
	if (optind + 1 != argc)
		return cli_err("czodiac %s needs one device (an FDID or a name)", argv[1]), 2;
	if (!host_opt && !getenv("SMARTIO_HOST"))
		return cli_err("czodiac %s: which USER host? give --host N", argv[1]), 2;
	if (cli_host_arg(host_opt, &host))
		return 2;
	rc = cli_resolve_fdid(argv[optind], dir_opt, -1, &q.fdid);
	if (rc)
		return rc == -EINVAL ? 2 : 1;
	fd = cli_open_host(host_opt, dir_opt, SMIO_ROLE_ADMIN, &host, dir, sizeof(dir));
	if (fd < 0)
		return fd == -EINVAL ? 2 : 1;
	rc = smio_call(fd, share ? SMIO_CZ_SHARE : SMIO_CZ_UNSHARE, &q, sizeof(q), &o, sizeof(o),
		       &rlen, NULL, CLI_TIMEOUT_MS);
	close(fd);
	if (!rc && rlen != sizeof(o))
		rc = -EPROTO;
	if (rc) {
		say_error(share, argv[optind], host, rc);
		return 1;
	}
	if (json)
		return print_json(host, &o) ? 1 : 0;
	bdf_str(ub, sizeof(ub), o.uid);
	bdf_str(ob, sizeof(ob), o.oid);
	if (!share) {
		printf("%s (%s of host %u) withdrawn from host %u's slot; %llu hot-plug MSIs\n",
		       o.name, ob, o.owner, host, (unsigned long long)o.msis);
		return 0;
	}
	printf("%s (%s of host %u) is %s at host %u, driver %s; %llu hot-plug MSI\n", o.name, ob,
	       o.owner, ub, host, o.bound ? o.driver : "none", (unsigned long long)o.msis);
	for (unsigned i = 0; i < SMIO_DEV_BARS; i++)
		if (o.bar_size[i])
			printf("  UBAR%u 0x%llx +0x%llx\n", i, (unsigned long long)o.bar_addr[i],
			       (unsigned long long)o.bar_size[i]);
	return 0;
}
