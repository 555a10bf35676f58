// SPDX-License-Identifier: MIT
/*
 * Topology description, the cluster switches (docs/topology.md, "Cluster
 * switches"): one `cluster_switches` entry - chip, ports, cascades to other
 * cluster switches, multicast groups and the switch's mode (NTB or
 * cZodiac) - read and checked as topo_parse.c reads everything, each
 * message naming its line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "topo_priv.h"
#include "yaml.h"

static const char *const csw_keys[] = {
	"name", "chip", "latency_ns", "ports", "port_width", "cascade", "multicast", "mode",
	NULL
};
static const char *const mc_keys[] = { "groups", "group_size", "base", NULL };
static const char *const cascade_keys[] = { "to", "gen", "width", NULL };

static int add_cascref(struct topo_build *b, uint32_t from, struct tp_obj *o, int line)
{
	struct topo_cascref *c;
	int rc;

	if (b->ncas == b->cascap) {
		size_t cap = b->cascap ? 2 * b->cascap : 16;
		void *p = realloc(b->cas, cap * sizeof(*b->cas));

		if (!p)
			return tp_oom(b);
		b->cas = p;
		b->cascap = cap;
	}
	c = &b->cas[b->ncas];
	memset(c, 0, sizeof(*c));
	c->from = from;
	c->line = line;
	rc = tp_str(o, "to", c->to, sizeof(c->to), NULL, NAME_CHARS);
	if (!rc)
		rc = tp_read_link(o, &c->link, 3, 16);
	if (!rc)
		b->ncas++;
	return rc;
}

/* 'cascade: [a, {to: b, width: 8}]': names or link objects. */
static int parse_cascade(struct tp_obj *cso, uint32_t from)
{
	struct fy_node *seq, *item;
	void *it = NULL;
	size_t n;
	int rc;

	rc = tp_seq(cso, "cascade", &seq, &n, 0, TOPO_MAX_CSW);
	for (uint32_t k = 0; !rc && seq && (item = fy_node_sequence_iterate(seq, &it)); k++) {
		int line = tp_line(item, cso->line);
		struct tp_obj o;

		if (item && fy_node_get_type(item) == FYNT_SCALAR && !fy_node_is_alias(item)) {
			/* A bare name: read it as {to: NAME} with default link. */
			memset(&o, 0, sizeof(o));
			o.b = cso->b;
			o.line = line;
			o.keys = cascade_keys;
			o.val[0] = item;
			o.kline[0] = line;
			snprintf(o.what, sizeof(o.what), "%.160s cascade #%u", cso->what, k);
		} else {
			rc = tp_open(&o, cso->b, item, line, cascade_keys, "%s cascade #%u",
				      cso->what, k);
		}
		if (!rc)
			rc = add_cascref(cso->b, from, &o, line);
	}
	return rc;
}

/*
 * 'multicast: {groups: 64, group_size: 1M, base: 0x3f0000000000}': the
 * switch's Multicast capability. Absent: no groups (multicast off).
 */
static int parse_multicast(struct tp_obj *cso, struct topo_cswitch *cs)
{
	struct tp_obj o;
	int i = tp_idx(cso, "multicast");
	int rc;

	cs->mc_groups = 0;
	cs->mc_group_size = 1ull << 20;
	cs->mc_base = 0x3f0000000000ull;
	if (i < 0 || !cso->kline[i])
		return 0;
	rc = tp_open(&o, cso->b, cso->val[i], cso->kline[i], mc_keys, "%s multicast", cso->what);
	if (!rc)
		rc = tp_u32(&o, "groups", &cs->mc_groups, 64, 1, TOPO_MC_MAX_GROUPS);
	if (!rc)
		rc = tp_size(&o, "group_size", &cs->mc_group_size, 1ull << 20, 4096, 1ull << 32);
	if (!rc && !tp_is_pow2(cs->mc_group_size))
		rc = topo_err(cso->b, tp_vline(&o, "group_size"),
			      "%s: group_size must be a power of two (2^MC_Index_Position)", o.what);
	if (!rc)
		rc = tp_size(&o, "base", &cs->mc_base, 0x3f0000000000ull, 0, 1ull << 48);
	if (!rc && (cs->mc_base & (cs->mc_group_size * cs->mc_groups - 1)))
		rc = topo_err(cso->b, tp_vline(&o, "base"),
			      "%s: base must be aligned to the range (groups x group_size)", o.what);
	if (!rc && cs->mc_base + cs->mc_group_size * cs->mc_groups > (1ull << 48))
		rc = topo_err(cso->b, tp_vline(&o, "base"),
			      "%s: the range must end at or below 256T (48-bit addresses)", o.what);
	return rc;
}

/* mode: ntb (the default: NTB look-up-table windows) or czodiac (IOPorts). */
static int parse_csw_mode(struct tp_obj *o, struct topo_cswitch *cs)
{
	char mode[16];
	int rc = tp_str(o, "mode", mode, sizeof(mode), "ntb", NAME_CHARS);

	if (rc)
		return rc;
	cs->czodiac = !strcmp(mode, "czodiac");
	if (!cs->czodiac && strcmp(mode, "ntb"))
		return topo_err(o->b, tp_vline(o, "mode"), "%s: mode must be ntb or czodiac, "
				"not '%s'", o->what, mode);
	if (cs->czodiac && cs->mc_groups)
		return topo_err(o->b, tp_vline(o, "mode"), "%s: a czodiac switch has no "
				"multicast groups", o->what);
	return 0;
}

int tp_parse_cswitch(struct topo_build *b, struct fy_node *n, int line, uint32_t idx)
{
	struct topo_cswitch *cs = &b->t->cswitches[idx];
	struct tp_obj o;
	char nm[48];
	int rc;

	if (*tp_peek_name(n, nm, sizeof(nm)))
		rc = tp_open(&o, b, n, line, csw_keys, "cluster switch%s", nm);
	else
		rc = tp_open(&o, b, n, line, csw_keys, "cluster_switches[%u]", idx);
	if (rc)
		return rc;
	cs->line = o.line;
	rc = tp_str(&o, "name", cs->name, sizeof(cs->name), NULL, NAME_CHARS);
	for (uint32_t i = 0; !rc && i < idx; i++)
		if (!strcmp(b->t->cswitches[i].name, cs->name))
			rc = topo_err(b, tp_vline(&o, "name"),
				      "%s: name '%s' is already used by the cluster switch on "
				      "line %d", o.what, cs->name, b->t->cswitches[i].line);
	if (!rc)
		rc = tp_str(&o, "chip", cs->chip, sizeof(cs->chip), "PM8536", NAME_CHARS);
	if (!rc)
		rc = tp_u32(&o, "latency_ns", &cs->latency_ns, 170, 0, LATENCY_MAX);
	if (!rc)
		rc = tp_u32(&o, "ports", &cs->ports, 24, 1, TOPO_CSW_MAX_PORTS);
	if (!rc)
		rc = tp_u32(&o, "port_width", &cs->port_width, 4, 1, 16);
	if (!rc && !tp_is_pow2(cs->port_width))
		rc = topo_err(b, tp_vline(&o, "port_width"),
			      "%s: port_width must be 1, 2, 4, 8 or 16 lanes", o.what);
	if (!rc)
		rc = parse_cascade(&o, idx);
	if (!rc)
		rc = parse_multicast(&o, cs);
	if (!rc)
		rc = parse_csw_mode(&o, cs);
	return rc;
}
