// SPDX-License-Identifier: MIT
/*
 * smartio devices | borrow | return: Device Lending (docs/lending.md).
 *
 * devices  the cluster-wide pool (LEND_POOL, gathered by the host's daemon)
 * borrow   hot-add a lender's device into host N's PCI tree as a shadow device
 *          (LEND_BORROW); the in-kernel driver binds to it
 * return   give it back (LEND_RETURN); refused while a driver is bound
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "lease_path.h"

static const char *const state_names[] = { "available", "lent", "sisci", "reserved", "shared" };

static void usage(FILE *f, const char *cmd)
{
	if (!strcmp(cmd, "devices"))
		fprintf(f,
			"usage: smartio devices [--host N] [--json] [--verbose] [--dir DIR]\n"
			"       smartio devices --p2p CLIENT PROVIDER [--bar B] --host N\n\n"
			"The cluster-wide pool of devices registered for lending (lendable: true):\n"
			"fabric device id (FDID = lender node id << 16 | BDF), lender host, class,\n"
			"state (available | lent | sisci: borrowed through SISCI | shared: with\n"
			"the USER host in BORROWER through cZodiac's IOPort, PATH 'IOPort SWITCH',\n"
			"neither lent nor borrowed meanwhile) and borrower.\n"
			"Any host's daemon answers for the whole cluster: --host N or\n"
			"$SMARTIO_HOST asks that one (an error if it is down), else the first\n"
			"host whose daemon answers (--verbose: say which on stderr).\n"
			"--json: ids as hex strings (\"fdid\":\"0x00010300\"), borrower null\n"
			"when nobody borrows it, ioport the cZodiac switch of a shared one (else\n"
			"null).\n"
			"--p2p: CLIENT borrowed by host N, PROVIDER borrowed too or host N's own\n"
			"device (its node id << 16 | BDF): the bus address at which\n"
			"CLIENT's device reaches BAR B (default 2) of PROVIDER, resolved in advance\n"
			"at CLIENT's lender (same lender, another lender through its NTB, ...),\n"
			"and the hops of that route; 'smartio route --host LENDER --from DEV ADDR'\n"
			"shows it.\n");
	else
		fprintf(f,
			"usage: smartio %s DEVICE --host N%s [--dir DIR]\n%s\n"
			"%s\n"
			"DEVICE: its FDID as 'smartio devices' shows it (0x... or decimal), its\n"
			"NAME (nvme0) if one lender has it, or LENDER:NAME (lender-a:nvme0, 1:nvme0).\n",
			cmd, !strcmp(cmd, "return") ? " [--unbind | --force]" : "",
			!strcmp(cmd, "borrow") ? "       smartio borrow --best nvme|accel --host N "
			"[--for WORKLOAD] [--dir DIR]\n" : "",
			!strcmp(cmd, "borrow") ?
			"Borrow device FDID for host N (Device Lending): the lender sets up its\n"
			"DMA and MSI windows through its NTB, host N hot-adds a shadow device\n"
			"behind its NTB ('smartio lspci --host N' shows it on bus f0) and its\n"
			"in-kernel driver binds to it. One borrower at a time; a device borrowed\n"
			"through SISCI or shared through cZodiac is busy (the error says which\n"
			"share). The borrow lasts as long as host N's daemon: if\n"
			"it dies, the lender reclaims and resets the device.\n"
			"--best: borrow what 'smartio plan --need CLASS --for WORKLOAD' ranks\n"
			"first (default workload: nvme-qd1 for nvme, bandwidth for accel)." :
			"Return DEVICE borrowed by host N. Refused while a process holds it (a\n"
			"live 'smartio mount' serving it: the error names the mount and its pid)\n"
			"and, without --unbind, while its driver is bound. --unbind unbinds the\n"
			"driver first (its remove runs: queues deleted, device reset); --force\n"
			"returns it even while held (the holder's I/O then fails, as on a\n"
			"surprise removal). The lender then resets the device.");
}

static int open_host(const char *host_opt, const char *dir_opt, uint32_t role, uint32_t *host)
{
	char dir[PATH_MAX];

	return cli_open_host(host_opt, dir_opt, role, host, dir, sizeof(dir));
}

static void bdf_str(char *buf, size_t len, uint16_t bdf)
{
	snprintf(buf, len, "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
}

/* What `devices` knows of the links: the topology and every host's STATS (NULL: not asked). */
struct paths {
	struct topo *t;
	struct json_object **stats;
};

/* Only when a device is lent: the path of its lease is then worth the calls. */
static void paths_load(const char *dir_opt, const struct smio_lend_pool *p, struct paths *ps)
{
	char dir[PATH_MAX];
	bool lent = false;

	for (uint32_t i = 0; i < p->n; i++)
		lent |= p->e[i].state == SMIO_LEND_LENT || p->e[i].state == SMIO_LEND_SHARED;
	if (!lent || cli_cluster_dir(dir_opt, dir, sizeof(dir)) || cli_cluster_topo(dir, &ps->t))
		return;
	ps->stats = lease_path_stats(dir, ps->t);
}

static void paths_free(struct paths *ps)
{
	if (ps->t) {
		lease_path_stats_free(ps->t, ps->stats);
		topo_free(ps->t);
	}
}

/* A shared function's IOPort: its czodiac switch's name ("switch N" without the topology). */
static void ioport_name(const struct topo *t, const struct smio_lend_entry *e, char *buf,
			size_t len)
{
	if (t && e->cswitch < t->ncswitches)
		snprintf(buf, len, "%s", t->cswitches[e->cswitch].name);
	else
		snprintf(buf, len, "switch %u", e->cswitch);
}

static bool leased(const struct smio_lend_entry *e)
{
	return e->state == SMIO_LEND_LENT || e->state == SMIO_LEND_SHARED;
}

/* The path of e's lease or share (LEASE_PATH_NONE: neither, or nothing known). */
static enum lease_path_state path_of(const struct paths *ps, const struct smio_lend_entry *e,
				     char *via, size_t vialen)
{
	int bi = ps->stats ? topo_host_index(ps->t, e->borrower) : -1;
	int li = ps->stats ? topo_host_index(ps->t, e->lender) : -1;

	via[0] = 0;
	if (!leased(e) || bi < 0 || li < 0)
		return LEASE_PATH_NONE;
	return lease_path(ps->t, ps->stats, (uint32_t)bi, (uint32_t)li, via, vialen);
}

static int device_json(struct json_object *arr, const struct smio_lend_entry *e,
		       const struct paths *ps)
{
	struct json_object *o = json_object_new_object();
	char via[2 * TOPO_NAME_MAX + 2];
	enum lease_path_state path = path_of(ps, e, via, sizeof(via));
	char b[16], cls[8], id[16], iop[TOPO_NAME_MAX + 16];

	if (!o)
		return -ENOMEM;
	ioport_name(ps->t, e, iop, sizeof(iop));
	bdf_str(b, sizeof(b), e->bdf);
	snprintf(cls, sizeof(cls), "%06x", e->class & 0xffffffu);
	snprintf(id, sizeof(id), "0x%08x", e->fdid);
	if (smio_json_add_str(o, "fdid", id) || smio_json_add_uint(o, "lender", e->lender) ||
	    smio_json_add_str(o, "bdf", b) || smio_json_add_str(o, "name", e->name) ||
	    smio_json_add_str(o, "class", cls) ||
	    smio_json_add_str(o, "state", state_names[e->state]) ||
	    (leased(e) || e->state == SMIO_LEND_RESERVED ?
	     smio_json_add_uint(o, "borrower", e->borrower) : smio_json_add_null(o, "borrower")) ||
	    smio_json_add_uint(o, "sisci_borrows", e->sisci_borrows) ||
	    smio_json_add_str(o, "path_state", leased(e) ?
			      (lease_path_word(path) ? lease_path_word(path) : "unknown") : NULL) ||
	    smio_json_add_str(o, "path_down_at", path == LEASE_PATH_DOWN ? via : NULL) ||
	    smio_json_add_str(o, "ioport", e->state == SMIO_LEND_SHARED ? iop : NULL)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

/* The pool as a JSON array; 0 or -errno (said). */
static int devices_json(const struct smio_lend_pool *p, const struct paths *ps)
{
	struct json_object *arr = json_object_new_array();
	int rc = arr ? 0 : -ENOMEM;

	for (uint32_t i = 0; i < p->n && !rc; i++)
		rc = device_json(arr, &p->e[i], ps);
	if (rc)
		cli_err("devices: out of memory");
	else
		rc = cli_json_print(arr);
	json_object_put(arr);
	return rc;
}

static int do_devices(const char *host_opt, const char *dir_opt, bool json, bool verbose)
{
	struct smio_lend_pool *p;
	struct paths ps = { 0 };
	int rc = cli_lend_pool(host_opt, dir_opt, verbose, &p);

	if (rc)
		return rc;
	paths_load(dir_opt, p, &ps);
	if (json) {
		rc = devices_json(p, &ps);
		paths_free(&ps);
		free(p);
		return rc;
	}
	printf("%-10s %-6s %-8s %-10s %-8s %-10s %-10s %s\n", "FDID", "LENDER", "BDF", "NAME",
	       "CLASS", "STATE", "BORROWER", "PATH");
	for (uint32_t i = 0; i < p->n; i++) {
		const struct smio_lend_entry *e = &p->e[i];
		char b[16], who[16] = "-", via[2 * TOPO_NAME_MAX + 2], path[sizeof(via) + 64];
		enum lease_path_state s = path_of(&ps, e, via, sizeof(via));

		bdf_str(b, sizeof(b), e->bdf);
		char iop[TOPO_NAME_MAX + 16], pre[sizeof(iop) + 8] = "";

		if (leased(e))
			snprintf(who, sizeof(who), "host %u", e->borrower);
		else if (e->state == SMIO_LEND_SISCI)
			snprintf(who, sizeof(who), "%u sisci", e->sisci_borrows);
		else if (e->state == SMIO_LEND_RESERVED)     /* for a VM there (docs/vm.md) */
			snprintf(who, sizeof(who), "vm@host %u", e->borrower);
		/* A share's path is the IOPort of its switch, not an NTB window. */
		if (e->state == SMIO_LEND_SHARED) {
			ioport_name(ps.t, e, iop, sizeof(iop));
			snprintf(pre, sizeof(pre), "IOPort %s, ", iop);
		}
		if (!leased(e))
			snprintf(path, sizeof(path), "-");
		else if (s == LEASE_PATH_DOWN)
			snprintf(path, sizeof(path), "%sdown via %s", pre, via);
		else
			snprintf(path, sizeof(path), "%s%s", pre, s == LEASE_PATH_UP ? "up" : "unknown");
		printf("0x%08x %-6u %-8s %-10s %06x   %-10s %-10s %s\n", e->fdid, e->lender, b,
		       e->name, e->class, state_names[e->state], who, path);
	}
	if (!p->n)
		printf("(no devices registered for lending)\n");
	paths_free(&ps);
	free(p);
	return 0;
}

static int do_p2p(const char *host_opt, const char *dir_opt, uint32_t client,
		  uint32_t provider, uint32_t bar)
{
	struct smio_lend_p2p q = { .client = client, .provider = provider, .bar = bar }, r;
	uint32_t host, rlen;
	int fd = open_host(host_opt, dir_opt, SMIO_ROLE_CLIENT, &host), rc;

	if (fd < 0)
		return fd;
	rc = smio_call(fd, SMIO_LEND_P2P, &q, sizeof(q), &r, sizeof(r), &rlen, NULL,
		       CLI_TIMEOUT_MS);
	close(fd);
	if (rc) {
		cli_err("devices --p2p: %s", rc == -ENOENT ? "both must be borrowed by this host" :
			cli_strerror(rc));
		return rc;
	}
	printf("0x%08x reaches BAR%u of 0x%08x at bus address 0x%" PRIx64 " (%u hops)\n",
	       client, bar, provider, r.bus, r.hops);
	return 0;
}

/* After a return refused because processes hold the device: who they are. */
static void say_holders(int fd, uint32_t host, uint32_t fdid)
{
	struct smio_lend_req q = { .fdid = fdid };
	struct smio_lend_holders *h = malloc(SMIO_MAX_PAYLOAD);
	uint32_t rlen;

	if (h && !smio_call(fd, SMIO_LEND_HOLDERS, &q, sizeof(q), h, SMIO_MAX_PAYLOAD, &rlen,
			    NULL, CLI_TIMEOUT_MS))
		for (uint32_t i = 0; i < h->n; i++)
			cli_err("  held by %s (pid %u): stop it first, or return with --force",
				h->h[i].what, h->h[i].pid);
	else
		cli_err("  held by a process of host %u; --force returns it anyway", host);
	free(h);
}

/*
 * A borrow refused as busy: if cZodiac shares the function, which share
 * (its USER, the switch) and how to end it; 0 when it said so.
 */
static int say_shared(const char *host_opt, const char *dir_opt, uint32_t fdid)
{
	struct smio_lend_pool *p;
	char dir[PATH_MAX], iop[TOPO_NAME_MAX + 16];
	struct topo *t = NULL;
	int rc = -ENOENT;

	if (cli_lend_pool(host_opt, dir_opt, false, &p))
		return rc;
	if (cli_cluster_dir(dir_opt, dir, sizeof(dir)) || cli_cluster_topo(dir, &t))
		t = NULL;
	for (uint32_t i = 0; i < p->n && rc; i++) {
		const struct smio_lend_entry *e = &p->e[i];

		if (e->fdid != fdid || e->state != SMIO_LEND_SHARED)
			continue;
		ioport_name(t, e, iop, sizeof(iop));
		cli_err("borrow 0x%08x: busy: %s is shared with host %u through cZodiac's IOPort "
			"on %s ('smartio czodiac unshare %s --host %u' ends the share)", fdid,
			e->name, e->borrower, iop, e->name, e->borrower);
		rc = 0;
	}
	if (t)
		topo_free(t);
	free(p);
	return rc;
}

static int do_borrow(const char *cmd, uint32_t fdid, const char *host_opt, const char *dir_opt,
		     uint32_t flags)
{
	struct smio_lend_req q = { .fdid = fdid, .flags = flags };
	struct smio_lend_info r;
	uint32_t host, rlen;
	int fd, rc;
	bool borrow = !strcmp(cmd, "borrow");

	fd = open_host(host_opt, dir_opt, SMIO_ROLE_ADMIN, &host);
	if (fd < 0)
		return fd;
	rc = smio_call(fd, borrow ? SMIO_LEND_BORROW : SMIO_LEND_RETURN, &q, sizeof(q), &r,
		       sizeof(r), &rlen, NULL, 3 * CLI_TIMEOUT_MS);
	if (rc == -ETXTBSY && !borrow) {
		cli_err("return 0x%08x: refused: in use on host %u", fdid, host);
		say_holders(fd, host, fdid);
	}
	close(fd);
	if (rc == -ETXTBSY && !borrow)
		return rc;
	if (rc == -EBUSY && borrow && !say_shared(host_opt, dir_opt, fdid))
		return rc;
	if (rc) {
		cli_err("%s 0x%08x: %s", cmd, fdid,
			rc == -EBUSY ? (borrow ? "busy: lent to another host, borrowed "
				       "through SISCI or reserved for a VM (see 'smartio devices')" :
				       "busy: its driver is bound (--unbind "
				       "unbinds it first)") :
			rc == -ENODEV ? "no such device (see 'smartio devices')" :
			rc == -ENOENT ? "not borrowed by this host" :
			rc == -EALREADY ? "already borrowed by this host" :
			rc == -EINVAL ? "a host cannot borrow its own device" :
			cli_strerror(rc));
		return rc;
	}
	if (borrow) {
		char b[16];

		bdf_str(b, sizeof(b), r.bdf);
		printf("host %u: %s from host %u is %s, driver %s\n", host, r.name, r.lender, b,
		       r.bound ? r.driver : "none");
	} else {
		printf("host %u: returned 0x%08x\n", host, fdid);
	}
	return 0;
}

int cmd_lend(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "host", required_argument, NULL, 'H' }, { "dir", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ "unbind", no_argument, NULL, 'u' }, { "p2p", no_argument, NULL, 'p' },
		{ "bar", required_argument, NULL, 'b' }, { "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "best", required_argument, NULL, 'B' }, { "for", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 } };
	const char *cmd = argv[0], *host_opt = NULL, *dir_opt = NULL, *best = NULL, *work = NULL;
	bool json = false, unbind = false, p2p = false, force = false, verbose = false;
	uint64_t bar = 2;
	uint32_t fdid, prov, host;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "hv", lo, NULL)) != -1) {
		switch (c) {
		case 'H':
			host_opt = optarg;
			break;
		case 'D':
			dir_opt = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'u':
			unbind = true;
			break;
		case 'p':
			p2p = true;
			break;
		case 'f':
			force = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'b':
			if (cli_parse_u64(optarg, &bar) || bar > 5) {
				usage(stderr, cmd);
				return 2;
			}
			break;
		case 'B':
			best = optarg;
			break;
		case 'F':
			work = optarg;
			break;
		case 'h':
			usage(stdout, cmd);
			return 0;
		default:
			usage(stderr, cmd);
			return 2;
		}
	}
	if (strcmp(cmd, "devices") && (json || p2p || verbose)) {
		cli_err("%s: --json, --p2p and --verbose are options of 'smartio devices'", cmd);
		return 2;
	}
	if ((unbind || force) && strcmp(cmd, "return")) {
		cli_err("%s: --unbind and --force are options of 'smartio return'", cmd);
		return 2;
	}
	if (!strcmp(cmd, "devices") && p2p) {
		if (optind + 2 != argc) {
			usage(stderr, cmd);
			return 2;
		}
		rc = cli_resolve_fdid(argv[optind], dir_opt, -1, &fdid);
		if (!rc)
			rc = cli_resolve_fdid(argv[optind + 1], dir_opt, -1, &prov);
		if (rc)
			return rc == -EINVAL ? 2 : 1;
		return do_p2p(host_opt, dir_opt, fdid, prov, (uint32_t)bar) ? 1 : 0;
	}
	if (!strcmp(cmd, "devices")) {
		if (optind != argc) {
			cli_err("devices: unexpected argument '%s'", argv[optind]);
			return 2;
		}
		return do_devices(host_opt, dir_opt, json, verbose) ? 1 : 0;
	}
	if (best || work) {
		/* borrow --best CLASS: the planner's top choice (plan.c) */
		if (strcmp(cmd, "borrow") || !best || optind != argc) {
			usage(stderr, cmd);
			return 2;
		}
		rc = cli_plan_best(best, work, host_opt, dir_opt, &fdid);
		if (rc)
			return rc == CLI_BEST_NOTHING ? 0 : rc;
		return do_borrow(cmd, fdid, host_opt, dir_opt, 0) ? 1 : 0;
	}
	if (optind + 1 != argc) {
		usage(stderr, cmd);
		return 2;
	}
	if (!host_opt && !getenv("SMARTIO_HOST")) {
		cli_err("%s: which host? give --host N (or set SMARTIO_HOST)", cmd);
		return 2;
	}
	if (cli_host_arg(host_opt, &host))
		return 2;
	rc = cli_resolve_fdid(argv[optind], dir_opt, strcmp(cmd, "return") ? -1 : (int)host,
			      &fdid);
	if (rc)
		return rc == -EINVAL ? 2 : 1;
	return do_borrow(cmd, fdid, host_opt, dir_opt,
			 (unbind ? SMIO_LEND_F_UNBIND : 0) | (force ? SMIO_LEND_F_FORCE : 0)) ? 1 : 0;
}
