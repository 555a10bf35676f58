// SPDX-License-Identifier: MIT
/*
 * smartio topo --json: the topology as one JSON object, the tree of the
 * text form (hosts, their root ports and what is plugged in, recursively;
 * cluster switches; cascades) in the conventions of docs/cli.md: sizes as
 * "0x..." strings, a link as {"gen":3,"width":8}, null for nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static int add_hex(struct json_object *o, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return smio_json_add_str(o, key, buf);
}

static int add_link(struct json_object *o, struct topo_link l)
{
	struct json_object *x = json_object_new_object();

	if (!x || smio_json_add_uint(x, "gen", l.gen) || smio_json_add_uint(x, "width", l.width)) {
		json_object_put(x);
		return -ENOMEM;
	}
	return smio_json_add(o, "link", x);
}

static struct json_object *slot_json(const struct topo *t, const struct topo_port *p);

static int ntb_json(const struct topo *t, struct json_object *o, const struct topo_ntb *n)
{
	struct json_object *peer = NULL;
	int rc;

	if (smio_json_add_str(o, "name", n->name) || smio_json_add_str(o, "model", n->model) ||
	    add_hex(o, "bar_size", n->bar_size) ||
	    smio_json_add_uint(o, "lut_entries", n->lut_entries) ||
	    smio_json_add_uint(o, "rid_entries", n->rid_entries) ||
	    smio_json_add_uint(o, "dma_channels", n->dma_channels))
		return -ENOMEM;
	if (n->peer_kind == TOPO_PEER_NONE)
		return smio_json_add_null(o, "cable");
	peer = json_object_new_object();
	if (!peer)
		return -ENOMEM;
	if (n->peer_kind == TOPO_PEER_NTB)
		rc = smio_json_add_str(peer, "to", "ntb") ||
		     smio_json_add_uint(peer, "host", t->hosts[n->peer_host].id) ||
		     smio_json_add_uint(peer, "ntb", n->peer_ntb);
	else
		rc = smio_json_add_str(peer, "to", "cswitch") ||
		     smio_json_add_str(peer, "cswitch", t->cswitches[n->peer_cswitch].name) ||
		     smio_json_add_uint(peer, "port", n->peer_port);
	if (rc || add_link(peer, n->cable)) {
		json_object_put(peer);
		return -ENOMEM;
	}
	return smio_json_add(o, "cable", peer);
}

static struct json_object *slot_json(const struct topo *t, const struct topo_port *p)
{
	static const char *const kind[] = { "empty", "device", "switch", "ntb" };
	struct json_object *o = json_object_new_object(), *ports = NULL;
	int rc;

	if (!o || smio_json_add_str(o, "kind", kind[p->kind]) ||
	    (p->kind != TOPO_SLOT_EMPTY && add_link(o, p->link)))
		goto fail;
	switch (p->kind) {
	case TOPO_SLOT_EMPTY:
		break;
	case TOPO_SLOT_DEVICE:
		if (smio_json_add_str(o, "name", p->dev.name) ||
		    smio_json_add_str(o, "model", p->dev.model) ||
		    smio_json_add_bool(o, "lendable", p->dev.lendable))
			goto fail;
		break;
	case TOPO_SLOT_SWITCH:
		ports = json_object_new_array();
		if (!ports || smio_json_add_str(o, "name", p->sw.name) ||
		    smio_json_add_str(o, "chip", p->sw.chip))
			goto fail;
		for (uint32_t i = 0; i < p->sw.nports; i++)
			if (smio_json_push(ports, slot_json(t, &p->sw.ports[i])))
				goto fail;
		rc = smio_json_add(o, "ports", ports);
		ports = NULL;
		if (rc)
			goto fail;
		break;
	case TOPO_SLOT_NTB:
		if (ntb_json(t, o, &p->ntb))
			goto fail;
		break;
	}
	return o;
fail:
	json_object_put(ports);
	json_object_put(o);
	return NULL;
}

static struct json_object *host_json(const struct topo *t, const struct topo_host *h)
{
	struct json_object *o = json_object_new_object(), *ports = json_object_new_array();
	int rc;

	if (!o || !ports || smio_json_add_uint(o, "id", h->id) ||
	    smio_json_add_uint(o, "node_id", h->node_id) || smio_json_add_str(o, "name", h->name) ||
	    add_hex(o, "ram", h->ram_size) || smio_json_add_bool(o, "iommu", h->iommu))
		goto fail;
	for (uint32_t i = 0; i < h->nports; i++)
		if (smio_json_push(ports, slot_json(t, &h->ports[i])))
			goto fail;
	rc = smio_json_add(o, "ports", ports);
	ports = NULL;
	if (rc)
		goto fail;
	return o;
fail:
	json_object_put(ports);
	json_object_put(o);
	return NULL;
}

int cli_topo_json(const struct topo *t)
{
	struct json_object *o = json_object_new_object(), *hosts = json_object_new_array(),
			   *cs = json_object_new_array(), *cas = json_object_new_array();
	int rc = -ENOMEM;

	if (!o || !hosts || !cs || !cas || smio_json_add_str(o, "name", t->name) ||
	    smio_json_add_str(o, "source", t->source))
		goto out;
	for (uint32_t i = 0; i < t->nhosts; i++)
		if (smio_json_push(hosts, host_json(t, &t->hosts[i])))
			goto out;
	for (uint32_t i = 0; i < t->ncswitches; i++) {
		const struct topo_cswitch *c = &t->cswitches[i];
		struct json_object *x = json_object_new_object();

		if (!x || smio_json_add_str(x, "name", c->name) ||
		    smio_json_add_str(x, "chip", c->chip) || smio_json_add_uint(x, "ports", c->ports) ||
		    smio_json_add_uint(x, "port_width", c->port_width) ||
		    smio_json_add_uint(x, "used_ports", c->used_ports)) {
			json_object_put(x);
			goto out;
		}
		if (smio_json_push(cs, x))
			goto out;
	}
	for (uint32_t i = 0; i < t->ncascades; i++) {
		const struct topo_cascade *c = &t->cascades[i];
		struct json_object *x = json_object_new_object();

		if (!x || smio_json_add_str(x, "a", t->cswitches[c->a].name) ||
		    smio_json_add_str(x, "b", t->cswitches[c->b].name) || add_link(x, c->link)) {
			json_object_put(x);
			goto out;
		}
		if (smio_json_push(cas, x))
			goto out;
	}
	rc = smio_json_add(o, "hosts", hosts);
	hosts = NULL;
	if (!rc)
		rc = smio_json_add(o, "cswitches", cs);
	cs = NULL;
	if (!rc)
		rc = smio_json_add(o, "cascades", cas);
	cas = NULL;
	if (!rc)
		rc = cli_json_print(o);
out:
	if (rc == -ENOMEM)
		cli_err("topo: out of memory");
	json_object_put(cas);
	json_object_put(cs);
	json_object_put(hosts);
	json_object_put(o);
	return rc;
}
