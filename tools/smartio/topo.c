// SPDX-License-Identifier: MIT
/* smartio topo: a topology as an indented tree or as a Graphviz digraph. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define ID_MAX 96

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smartio topo [TOPOLOGY.yaml] [--dir DIR] [--dot | --json]\n\n"
		"Shows a topology: TOPOLOGY.yaml if given, else the running cluster's\n"
		"DIR/topology.yaml, else the built-in default cluster.\n"
		"  --dot   print a Graphviz digraph instead (smartio topo --dot | dot -Tsvg > t.svg)\n"
		"  --json  print the tree as one JSON object instead\n");
}

static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (u < 4 && v >= 1024 && !(v % 1024)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)v, unit[u]);
}

/* Cluster-switch ports a cable of this width occupies. */
static uint32_t cs_ports(const struct topo_cswitch *cs, struct topo_link l)
{
	uint32_t pw = cs->port_width ? cs->port_width : 4;

	return (l.width + pw - 1) / pw;
}

static void ntb_peer_text(const struct topo *t, const struct topo_ntb *n, char *buf, size_t len)
{
	const struct topo_host *ph;
	const struct topo_ntb *pn;
	const struct topo_cswitch *cs;
	uint32_t k;

	switch (n->peer_kind) {
	case TOPO_PEER_NTB:
		ph = &t->hosts[n->peer_host];
		pn = topo_host_ntb(ph, n->peer_ntb);
		snprintf(buf, len, "host %u (%s) %s", ph->id, ph->name, pn ? pn->name : "?");
		break;
	case TOPO_PEER_CSWITCH:
		cs = &t->cswitches[n->peer_cswitch];
		k = cs_ports(cs, n->cable);
		if (k > 1)
			snprintf(buf, len, "%s ports %u-%u", cs->name, n->peer_port,
				 n->peer_port + k - 1);
		else
			snprintf(buf, len, "%s port %u", cs->name, n->peer_port);
		break;
	default:
		snprintf(buf, len, "not connected");
	}
}

/* ---------- text ---------- */

static void text_slot(const struct topo *t, const struct topo_port *p, int depth);

static void text_ntb(const struct topo *t, const struct topo_ntb *n, int ind)
{
	char bar[32], win[32], peer[128];

	fmt_size(bar, sizeof(bar), n->bar_size);
	fmt_size(win, sizeof(win), n->lut_entries ? n->bar_size / n->lut_entries : 0);
	ntb_peer_text(t, n, peer, sizeof(peer));
	printf("%*sntb %s (%s): BAR2 %s, LUT %u x %s, RID table %u, %u doorbells, "
	       "%u scratchpads, DMA channels: %u, %u ns\n", ind, "", n->name, n->model, bar,
	       n->lut_entries, win, n->rid_entries, n->doorbells, n->scratchpads,
	       n->dma_channels, n->latency_ns);
	printf("%*scable Gen%u x%u -> %s\n", ind + 2, "", n->cable.gen, n->cable.width, peer);
}

static void text_slot(const struct topo *t, const struct topo_port *p, int ind)
{
	const struct topo_switch *sw = &p->sw;

	switch (p->kind) {
	case TOPO_SLOT_DEVICE:
		printf("%*sdevice %s (model %s%s)\n", ind, "", p->dev.name, p->dev.model,
		       p->dev.lendable ? ", lendable" : "");
		break;
	case TOPO_SLOT_SWITCH:
		printf("%*sswitch %s (chip %s, %u ns%s): %u downstream ports\n", ind, "",
		       sw->name, sw->chip, sw->latency_ns,
		       sw->acs_p2p_redirect ? ", ACS P2P redirect" : "", sw->nports);
		for (uint32_t i = 0; i < sw->nports; i++) {
			printf("%*sdownstream port %u: Gen%u x%u\n", ind + 2, "", i,
			       sw->ports[i].link.gen, sw->ports[i].link.width);
			text_slot(t, &sw->ports[i], ind + 4);
		}
		break;
	case TOPO_SLOT_NTB:
		text_ntb(t, &p->ntb, ind);
		break;
	default:
		printf("%*s(empty slot)\n", ind, "");
	}
}

static void text_host(const struct topo *t, const struct topo_host *h)
{
	char ram[32];

	fmt_size(ram, sizeof(ram), h->ram_size);
	printf("host %u \"%s\": node id %u, RAM %s, IOMMU %s\n", h->id, h->name, h->node_id,
	       ram, h->iommu ? "on" : "off");
	printf("  root complex: P2P between root ports %s, %u ns\n",
	       h->rc_p2p ? "forwarded" : "not forwarded", h->rc_latency_ns);
	for (uint32_t i = 0; i < h->nports; i++) {
		printf("    root port %u: Gen%u x%u\n", i, h->ports[i].link.gen,
		       h->ports[i].link.width);
		text_slot(t, &h->ports[i], 6);
	}
}

struct cs_visit {
	const struct topo *t;
	const struct topo_host *h;
	uint32_t cs;
};

static int cs_user(const struct topo_host *h, const struct topo_ntb *n, uint32_t idx, void *arg)
{
	struct cs_visit *v = arg;
	char peer[128];

	if (n->peer_kind != TOPO_PEER_CSWITCH || n->peer_cswitch != v->cs)
		return 0;
	ntb_peer_text(v->t, n, peer, sizeof(peer));
	printf("    %s <- host %u (%s) %s, Gen%u x%u\n", peer, h->id, h->name, n->name,
	       n->cable.gen, n->cable.width);
	return 0;
}

static void text_topo(const struct topo *t)
{
	printf("cluster '%s' (%s): %u host%s, %u cluster switch%s\n\n", t->name, t->source,
	       t->nhosts, t->nhosts == 1 ? "" : "s", t->ncswitches,
	       t->ncswitches == 1 ? "" : "es");
	for (uint32_t i = 0; i < t->nhosts; i++) {
		text_host(t, &t->hosts[i]);
		putchar('\n');
	}
	for (uint32_t i = 0; i < t->ncswitches; i++) {
		const struct topo_cswitch *cs = &t->cswitches[i];
		struct cs_visit v = { .t = t, .cs = i };

		printf("cluster switch %s (chip %s, %u ns): %u of %u ports used (x%u each)\n",
		       cs->name, cs->chip, cs->latency_ns, cs->used_ports, cs->ports,
		       cs->port_width);
		if (cs->mc_groups)
			printf("    multicast: %u groups of %" PRIu64 " KiB at 0x%" PRIx64 "\n",
			       cs->mc_groups, cs->mc_group_size >> 10, cs->mc_base);
		for (uint32_t h = 0; h < t->nhosts; h++)
			topo_for_each_ntb(&t->hosts[h], cs_user, &v);
	}
	for (uint32_t i = 0; i < t->ncascades; i++) {
		const struct topo_cascade *c = &t->cascades[i];

		printf("cascade %s <-> %s: Gen%u x%u\n", t->cswitches[c->a].name,
		       t->cswitches[c->b].name, c->link.gen, c->link.width);
	}
}

/* ---------- Graphviz ---------- */

/* Print a string as a DOT quoted-string body. */
static void dot_str(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s >= ' ')
			putchar(*s);
	}
}

static void dot_edge(const char *a, const char *b, struct topo_link l, const char *extra)
{
	printf("  %s -> %s [label=\"Gen%u x%u\"%s];\n", a, b, l.gen, l.width, extra);
}

struct ntb_visit {
	const struct topo *t;
	uint32_t hidx;
};

static void ntb_node_id(char *buf, size_t len, uint32_t hidx, uint32_t nidx)
{
	snprintf(buf, len, "h%u_ntb%u", hidx, nidx);
}

static void dot_slot(const struct topo *t, uint32_t hidx, const struct topo_port *p,
		     const char *parent, const char *id, uint32_t *ntbs)
{
	const struct topo_switch *sw = &p->sw;
	char cid[ID_MAX];

	switch (p->kind) {
	case TOPO_SLOT_DEVICE:
		printf("  %s [label=\"", id);
		dot_str(p->dev.name);
		printf("\\n");
		dot_str(p->dev.model);
		printf("\", shape=box, style=rounded];\n");
		break;
	case TOPO_SLOT_SWITCH:
		printf("  %s [label=\"", id);
		dot_str(sw->name);
		printf("\\n");
		dot_str(sw->chip);
		printf(", %u ns\", shape=trapezium];\n", sw->latency_ns);
		for (uint32_t i = 0; i < sw->nports; i++) {
			snprintf(cid, sizeof(cid), "%s_%u", id, i);
			dot_slot(t, hidx, &sw->ports[i], id, cid, ntbs);
		}
		break;
	case TOPO_SLOT_NTB:
		ntb_node_id(cid, sizeof(cid), hidx, (*ntbs)++);
		id = cid;
		printf("  %s [label=\"", id);
		dot_str(p->ntb.name);
		printf("\\n");
		dot_str(p->ntb.model);
		printf("\", shape=hexagon];\n");
		break;
	default:
		return;
	}
	dot_edge(parent, id, p->link, "");
}

static void dot_host(const struct topo *t, uint32_t hidx)
{
	const struct topo_host *h = &t->hosts[hidx];
	char rc[ID_MAX], rp[ID_MAX], id[ID_MAX];
	uint32_t ntbs = 0;

	printf(" subgraph cluster_h%u {\n  label=\"host %u: ", hidx, h->id);
	dot_str(h->name);
	printf("\\nnode %u, IOMMU %s\";\n", h->node_id, h->iommu ? "on" : "off");
	snprintf(rc, sizeof(rc), "h%u_rc", hidx);
	printf("  %s [label=\"root complex\", shape=box3d];\n", rc);
	for (uint32_t i = 0; i < h->nports; i++) {
		snprintf(rp, sizeof(rp), "h%u_rp%u", hidx, i);
		snprintf(id, sizeof(id), "h%u_p%u", hidx, i);
		printf("  %s [label=\"root port %u\", shape=invtrapezium];\n", rp, i);
		printf("  %s -> %s;\n", rc, rp);
		dot_slot(t, hidx, &h->ports[i], rp, id, &ntbs);
	}
	printf(" }\n");
}

static int dot_cable(const struct topo_host *h, const struct topo_ntb *n, uint32_t idx,
		     void *arg)
{
	const struct ntb_visit *v = arg;
	char a[ID_MAX], b[ID_MAX];

	ntb_node_id(a, sizeof(a), v->hidx, idx);
	if (n->peer_kind == TOPO_PEER_CSWITCH) {
		snprintf(b, sizeof(b), "cs%u", n->peer_cswitch);
	} else if (n->peer_kind == TOPO_PEER_NTB) {
		/* Draw each back-to-back cable once, from its lower end. */
		if (n->peer_host < v->hidx || (n->peer_host == v->hidx && n->peer_ntb < idx))
			return 0;
		ntb_node_id(b, sizeof(b), n->peer_host, n->peer_ntb);
	} else {
		return 0;
	}
	dot_edge(a, b, n->cable, ", style=bold, dir=both");
	return 0;
}

static void dot_topo(const struct topo *t)
{
	printf("digraph \"");
	dot_str(t->name);
	printf("\" {\n  rankdir=TB;\n  compound=true;\n  node [fontname=\"Helvetica\"];\n"
	       "  edge [fontname=\"Helvetica\", fontsize=10];\n");
	for (uint32_t i = 0; i < t->nhosts; i++)
		dot_host(t, i);
	for (uint32_t i = 0; i < t->ncswitches; i++) {
		const struct topo_cswitch *cs = &t->cswitches[i];

		printf("  cs%u [label=\"", i);
		dot_str(cs->name);
		printf("\\n");
		dot_str(cs->chip);
		printf(", %u/%u ports\", shape=octagon, style=filled, fillcolor=lightgrey];\n",
		       cs->used_ports, cs->ports);
	}
	for (uint32_t i = 0; i < t->nhosts; i++) {
		struct ntb_visit v = { .t = t, .hidx = i };

		topo_for_each_ntb(&t->hosts[i], dot_cable, &v);
	}
	for (uint32_t i = 0; i < t->ncascades; i++) {
		char a[ID_MAX], b[ID_MAX];

		snprintf(a, sizeof(a), "cs%u", t->cascades[i].a);
		snprintf(b, sizeof(b), "cs%u", t->cascades[i].b);
		dot_edge(a, b, t->cascades[i].link, ", style=bold, dir=both");
	}
	printf("}\n");
}

/* ---------- command ---------- */

static int load(const char *file, const char *dir_opt, struct topo **t)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], err[512] = "";
	int rc;

	if (!file) {
		if (cli_cluster_dir(dir_opt, dir, sizeof(dir)))
			return cli_err("cluster directory path too long"), -ENAMETOOLONG;
		snprintf(path, sizeof(path), "%s/topology.yaml", dir);
		if (!access(path, R_OK))
			file = path;
		else if (dir_opt)
			return cli_err("no cluster in %s (no topology.yaml there)", dir), -ENOENT;
	}
	if (file)
		rc = topo_load_file(file, t, err, sizeof(err));
	else
		rc = topo_load_default(t, err, sizeof(err));
	if (rc)
		cli_err("%s", err[0] ? err : strerror(-rc));
	return rc;
}

int cmd_topo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' }, { "dot", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' }, { "json", no_argument, NULL, 'j' }, { 0 } };
	const char *dir_opt = NULL, *file = NULL;
	struct topo *t;
	bool dot = false, json = false;
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			dir_opt = optarg;
		else if (c == 'D')
			dot = true;
		else if (c == 'j')
			json = true;
		else if (c == 'h')
			return usage(stdout), 0;
		else
			return usage(stderr), 2;
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc) {
		cli_err("topo takes one topology file, not '%s'", argv[optind]);
		return 2;
	}
	if (dot && json)
		return cli_err("topo: --dot or --json, not both"), 2;
	if (load(file, dir_opt, &t))
		return 1;
	if (json)
		rc = cli_topo_json(t);
	else if (dot)
		dot_topo(t);
	else
		text_topo(t);
	topo_free(t);
	return rc || fflush(stdout) ? 1 : 0;
}
