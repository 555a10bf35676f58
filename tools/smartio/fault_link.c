// SPDX-License-Identifier: MIT
/*
 * smartio fault link: an NTB cable pulled and put back. A cable's ends are
 * NTB adapters; each end's daemon trains or drops its adapter's link (the
 * admin's NTB_LINK). A back-to-back cable has an adapter at both ends, a
 * cable to a cluster switch has one (the switch port has no daemon: the
 * adapter's link is the port's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"

/* "HOST.NTB": host id or name, adapter name or index. */
static int parse_adapter(const struct topo *t, const char *s, struct fault_end *e)
{
	const char *dot = strrchr(s, '.');
	char host[TOPO_NAME_MAX];
	const struct topo_host *h = NULL;
	uint64_t v;

	if (!dot || dot == s || !dot[1] || (size_t)(dot - s) >= sizeof(host)) {
		cli_err("'%s' is not an adapter: write HOST.NTB, e.g. lender-a.ntb0 or 1.0 "
			"('smartio topo' names them)", s);
		return -EINVAL;
	}
	memcpy(host, s, (size_t)(dot - s));
	host[dot - s] = '\0';
	for (uint32_t i = 0; i < t->nhosts && !h; i++)
		if (!strcmp(t->hosts[i].name, host) ||
		    (!cli_parse_u64(host, &v) && v == t->hosts[i].id))
			h = &t->hosts[i];
	if (!h) {
		cli_err("the cluster has no host '%s' ('smartio cluster status' lists them)", host);
		return -ENOENT;
	}
	e->host_index = (uint32_t)(h - t->hosts);
	e->host_id = h->id;
	for (uint32_t i = 0;; i++) {
		const struct topo_ntb *n = topo_host_ntb(h, i);

		if (!n)
			break;
		if (!strcmp(n->name, dot + 1) || (!cli_parse_u64(dot + 1, &v) && v == i)) {
			e->ntb = i;
			snprintf(e->name, sizeof(e->name), "%.30s.%.30s", h->name, n->name);
			return 0;
		}
	}
	cli_err("host %u (%s) has no NTB adapter '%s' ('smartio topo' names them)", h->id,
		h->name, dot + 1);
	return -ENOENT;
}

static void end_of(const struct topo *t, uint32_t hi, uint32_t ni, struct fault_end *e)
{
	const struct topo_host *h = &t->hosts[hi];

	e->host_index = hi;
	e->host_id = h->id;
	e->ntb = ni;
	snprintf(e->name, sizeof(e->name), "%.30s.%.30s", h->name, topo_host_ntb(h, ni)->name);
}

/* "SWITCH:PORT": the adapter whose cable is plugged into that port. */
static int parse_port(const struct topo *t, const char *s, struct fault_end *e)
{
	const char *colon = strrchr(s, ':');
	char name[TOPO_NAME_MAX];
	uint64_t port, v;
	int sw = -1;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(name) ||
	    cli_parse_u64(colon + 1, &port)) {
		cli_err("'%s' is not a cluster-switch port: write SWITCH:PORT, e.g. mxs0:2", s);
		return -EINVAL;
	}
	memcpy(name, s, (size_t)(colon - s));
	name[colon - s] = '\0';
	for (uint32_t i = 0; i < t->ncswitches && sw < 0; i++)
		if (!strcmp(t->cswitches[i].name, name) || (!cli_parse_u64(name, &v) && v == i))
			sw = (int)i;
	if (sw < 0) {
		cli_err("the cluster has no cluster switch '%s' ('smartio topo' lists them)", name);
		return -ENOENT;
	}
	for (uint32_t hi = 0; hi < t->nhosts; hi++)
		for (uint32_t ni = 0;; ni++) {
			const struct topo_ntb *n = topo_host_ntb(&t->hosts[hi], ni);
			uint32_t pw = t->cswitches[sw].port_width ? t->cswitches[sw].port_width : 4;
			uint32_t used;

			if (!n)
				break;
			used = (n->cable.width + pw - 1) / pw;
			if (n->peer_kind == TOPO_PEER_CSWITCH && n->peer_cswitch == (uint32_t)sw &&
			    port >= n->peer_port && port < n->peer_port + (used ? used : 1)) {
				end_of(t, hi, ni, e);
				return 0;
			}
		}
	cli_err("port %llu of %s has no NTB adapter's cable ('smartio topo' shows the ports "
		"in use; cascade ports cannot be pulled)", (unsigned long long)port, name);
	return -ENOENT;
}

/* The adapters a link fault acts on; *n of them. */
static int resolve(const struct topo *t, const char *what, const char *arg,
		   struct fault_end *e, uint32_t *n)
{
	int rc;

	*n = 1;
	if (!strcmp(what, "adapter"))
		return parse_adapter(t, arg, &e[0]);
	if (!strcmp(what, "port"))
		return parse_port(t, arg, &e[0]);
	if (strcmp(what, "cable")) {
		cli_err("link faults act on a cable, an adapter or a port, not '%s'", what);
		return -EINVAL;
	}
	rc = parse_adapter(t, arg, &e[0]);
	if (rc)
		return rc;
	{
		const struct topo_ntb *nt = topo_host_ntb(&t->hosts[e[0].host_index], e[0].ntb);

		if (nt->peer_kind == TOPO_PEER_NONE) {
			cli_err("%s has no cable (connect: in the topology)", e[0].name);
			return -ENOTCONN;
		}
		if (nt->peer_kind == TOPO_PEER_NTB) {
			end_of(t, nt->peer_host, nt->peer_ntb, &e[1]);
			*n = 2;
		}
	}
	return 0;
}

/* Set the link of every end; connections first, so the ends change together. */
static int set_links(const struct fault_opts *o, const char *target, const struct fault_end *e,
		     uint32_t n, bool up, const char *how)
{
	struct fault_ev ev = { .kind = up ? "link-up" : "link-down", .pid_old = -1,
			       .pid_new = -1 };
	int fd[FAULT_MAX_ENDS] = { -1, -1 }, rc = 0, status = 0;
	size_t len = 0;

	for (uint32_t i = 0; i < n; i++) {
		fd[i] = cli_connect(o->dir, e[i].host_id, SMIO_ROLE_ADMIN);
		if (fd[i] < 0) {
			cli_err("host %u (end %s): %s", e[i].host_id, e[i].name,
				cli_strerror(fd[i]));
			status = 1;
			goto out;
		}
	}
	snprintf(ev.target, sizeof(ev.target), "%s", target);
	fault_stamp(&ev);
	for (uint32_t i = 0; i < n; i++) {
		struct smio_ntb_link q = { .ntb = e[i].ntb, .up = up };
		uint32_t rlen;

		rc = smio_call(fd[i], SMIO_NTB_LINK, &q, sizeof(q), NULL, 0, &rlen, NULL,
			       CLI_TIMEOUT_MS);
		if (rc) {
			cli_err("host %u ntb %u (%s): link %s: %s", e[i].host_id, e[i].ntb,
				e[i].name, up ? "up" : "down",
				rc == -ENOENT ? "no such adapter" : cli_strerror(rc));
			status = 1;
			continue;
		}
		ev.hosts[ev.nhosts++] = e[i].host_id;
		len += (size_t)snprintf(ev.detail + len, sizeof(ev.detail) - len, "%shost %u ntb %u",
					len ? ", " : "", e[i].host_id, e[i].ntb);
	}
	if (ev.nhosts) {
		snprintf(ev.detail + len, sizeof(ev.detail) - len, " %s%s", up ? "up" : "down", how);
		status |= fault_record(o, &ev);
	}
out:
	for (uint32_t i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return status;
}

int fault_link(const struct fault_opts *o, int argc, char **argv)
{
	struct fault_end e[FAULT_MAX_ENDS];
	char target[96], how[48] = "";
	struct topo *t;
	uint32_t n;
	bool up, flap;
	int rc;

	if (argc != 3) {
		cli_err("usage: smartio fault link down|up|flap cable|adapter|port WHAT "
			"(see 'smartio fault --help')");
		return 2;
	}
	flap = !strcmp(argv[0], "flap");
	up = !strcmp(argv[0], "up");
	if (!flap && !up && strcmp(argv[0], "down")) {
		cli_err("link faults are down, up or flap, not '%s'", argv[0]);
		return 2;
	}
	if (flap && !o->for_ns)
		return cli_err("link flap needs --for DURATION (how long the link stays down)"), 2;
	if (up && o->for_ns)
		return cli_err("--for goes with link down or flap (the time it stays down)"), 2;
	if (cli_cluster_topo(o->dir, &t))
		return 1;
	rc = resolve(t, argv[1], argv[2], e, &n);
	topo_free(t);
	if (rc)
		return rc == -EINVAL ? 2 : 1;
	snprintf(target, sizeof(target), "%s %s", argv[1], argv[2]);
	if (o->for_ns)
		snprintf(how, sizeof(how), " (flap, %.3f s)", (double)o->for_ns / 1e9);
	rc = set_links(o, target, e, n, up, how);
	if (rc || !o->for_ns)
		return rc;
	fault_wait_ns(o->for_ns, "link up");
	return set_links(o, target, e, n, true, o->for_ns ? " (end of flap)" : "");
}
