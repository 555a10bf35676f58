// SPDX-License-Identifier: MIT
/*
 * A host's contents in a topology: its memory, PCIe ports, switches,
 * devices (functions, SR-IOV, parameters) and NTB adapters.
 *
 * topo_parse.c reads the YAML tree and the top-level lists; each host's
 * mapping comes here and is read with the typed accessors of topo_priv.h,
 * every rule checked where its value is read.  Once all hosts are read,
 * topo_check() (topo_check.c) resolves what crosses hosts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "topo_priv.h"

/* Per-host state while its port tree is read. */
struct hostctx {
	struct topo_build *b;
	uint32_t host;
	uint32_t nntb, nswitch, nmodel[3];
	struct { const char *name; int line; } *names;
	size_t nnames, cap;
};

static const char *const dev_models[] = { "test", "nvme", "accel" };

/* Devices, switches and NTBs of a host share one name space. */
static int add_name(struct hostctx *hc, const struct tp_obj *o, const char *name)
{
	bool given = tp_has(o, "name");

	for (size_t i = 0; i < hc->nnames; i++)
		if (!strcmp(hc->names[i].name, name))
			return topo_err(hc->b, tp_vline(o, "name"),
					"%s: %s '%s' is already used in this host (line %d); "
					"devices, switches and NTBs of a host need distinct names%s",
					o->what, given ? "name" : "its default name", name,
					hc->names[i].line, given ? "" : ": give it a 'name'");
	if (hc->nnames == hc->cap) {
		size_t cap = hc->cap ? 2 * hc->cap : 16;
		void *p = realloc(hc->names, cap * sizeof(*hc->names));

		if (!p)
			return tp_oom(hc->b);
		hc->names = p;
		hc->cap = cap;
	}
	hc->names[hc->nnames].name = name;
	hc->names[hc->nnames++].line = tp_vline(o, "name");
	return 0;
}

static const char *const bar_keys[] = { "index", "size", "bits", "prefetchable", NULL };

static int parse_bars(struct tp_obj *dev, struct topo_device *d)
{
	struct fy_node *seq, *item;
	unsigned used = 0;
	void *it = NULL;
	size_t n;
	int rc;

	if (!tp_has(dev, "bars"))
		return 0;
	rc = tp_seq(dev, "bars", &seq, &n, 1, TOPO_MAX_BARS);
	for (uint32_t k = 0; !rc && seq && (item = fy_node_sequence_iterate(seq, &it)); k++) {
		struct topo_bar *bar = &d->bars[k];
		uint32_t index, bits;
		unsigned mask;
		struct tp_obj o;

		rc = tp_open(&o, dev->b, item, dev->line, bar_keys, "%s bar #%u", dev->what, k);
		if (!rc && !tp_has(&o, "index"))
			rc = topo_err(o.b, o.line, "%s: 'index' is required (0..5)", o.what);
		if (!rc && !tp_has(&o, "size"))
			rc = topo_err(o.b, o.line, "%s: 'size' is required", o.what);
		if (!rc)
			rc = tp_u32(&o, "index", &index, 0, 0, 5);
		if (!rc)
			rc = tp_u32(&o, "bits", &bits, 32, 32, 64);
		if (!rc && bits != 32 && bits != 64)
			rc = topo_err(o.b, tp_vline(&o, "bits"), "%s: bits must be 32 or 64",
				      o.what);
		if (!rc)
			rc = tp_size(&o, "size", &bar->size, 0, 16,
				      bits == 64 ? (1ull << 62) : 2 * GiB);
		if (!rc && !tp_is_pow2(bar->size))
			rc = topo_err(o.b, tp_vline(&o, "size"),
				      "%s: size must be a power of two", o.what);
		if (!rc)
			rc = tp_bool(&o, "prefetchable", &bar->prefetch, false);
		if (rc)
			return rc;
		if (bits == 64 && index == 5)
			return topo_err(o.b, tp_vline(&o, "index"),
					"%s: a 64-bit BAR takes index and index+1; index 5 has no "
					"partner (use 0..4)", o.what);
		mask = (bits == 64 ? 3u : 1u) << index;
		if (used & mask)
			return topo_err(o.b, tp_vline(&o, "index"),
					"%s: BAR %u overlaps an earlier BAR (a 64-bit BAR also "
					"takes the next index)", o.what, index);
		used |= mask;
		bar->index = (uint8_t)index;
		bar->is64 = bits == 64;
		d->nbars = k + 1;
	}
	return rc;
}

static int parse_params(struct tp_obj *dev, struct topo_device *d)
{
	int i = tp_idx(dev, "params");
	struct fy_node_pair *p;
	struct fy_node *map;
	void *it = NULL;
	char tmp[80];

	if (i < 0 || !dev->kline[i])
		return 0;
	map = dev->val[i];
	if (!map || fy_node_get_type(map) != FYNT_MAPPING)
		return topo_err(dev->b, dev->kline[i],
				"%s: 'params' must be a mapping such as {queues: 32}", dev->what);
	while ((p = fy_node_mapping_iterate(map, &it))) {
		struct fy_node *k = fy_node_pair_key(p), *v = fy_node_pair_value(p);
		int line = tp_line(k, dev->kline[i]);
		struct topo_param *par = &d->params[d->nparams];
		const char *ks = NULL;
		size_t klen = 0;
		struct tp_obj po;

		if (d->nparams == TOPO_MAX_PARAMS)
			return topo_err(dev->b, line, "%s: at most %d params", dev->what,
					TOPO_MAX_PARAMS);
		if (k && fy_node_get_type(k) == FYNT_SCALAR && !fy_node_is_alias(k))
			ks = fy_node_get_scalar(k, &klen);
		if (!ks || !klen)
			return topo_err(dev->b, line, "%s: params keys must be plain words",
					dev->what);
		/* Reuse tp_str's checks with a one-key object. */
		memset(&po, 0, sizeof(po));
		po.b = dev->b;
		po.line = line;
		po.keys = (const char *const[]){ "param", "value", NULL };
		po.val[0] = k;
		po.val[1] = v;
		po.kline[0] = po.kline[1] = line;
		snprintf(po.what, sizeof(po.what), "%.160s param '%s'", dev->what,
			 tp_shown(tmp, sizeof(tmp), ks, klen));
		if (v && fy_node_is_alias(v))
			return tp_no_alias(dev->b, v, line, po.what);
		if (tp_str(&po, "param", par->key, sizeof(par->key), NULL, "_") ||
		    tp_str(&po, "value", par->value, sizeof(par->value), NULL, NULL))
			return -EINVAL;
		d->nparams++;
	}
	return 0;
}

static const char *const dev_keys[] = {
	"name", "model", "lendable", "vendor_id", "device_id", "bars", "params", "sriov",
	"functions", NULL
};

static const char *const sriov_keys[] = { "vfs", "device_id", NULL };

/* sriov: {vfs: N, device_id: X}: the SR-IOV capability's TotalVFs and VF Device ID. */
static int parse_sriov(struct tp_obj *dev, struct topo_device *d)
{
	int i = tp_idx(dev, "sriov"), rc;
	uint32_t vfs, did;
	struct tp_obj o;

	if (i < 0 || !dev->kline[i])
		return 0;
	rc = tp_open(&o, dev->b, dev->val[i], dev->kline[i], sriov_keys, "%s sriov", dev->what);
	if (!rc && !tp_has(&o, "vfs"))
		rc = topo_err(o.b, o.line, "%s: 'vfs' (TotalVFs, 1..%d) is required", o.what,
			      TOPO_MAX_VFS);
	if (!rc)
		rc = tp_u32(&o, "vfs", &vfs, 0, 1, TOPO_MAX_VFS);
	if (!rc)
		rc = tp_u32(&o, "device_id", &did, 0, 0, 0xffff);
	if (rc)
		return rc;
	if (strcmp(d->model, "nvme") && strcmp(d->model, "test"))
		return topo_err(o.b, o.line, "%s: model '%s' has no virtual functions (nvme and "
				"test have)", o.what, d->model);
	d->sriov_vfs = (uint16_t)vfs;
	d->vf_device_id = (uint16_t)did;
	return 0;
}

static int parse_one_device(struct hostctx *hc, struct fy_node *n, int line, const char *parent,
			    struct topo_device *d, bool fn0);

/* functions: [device, ...]: functions 1..7 of a multi-function endpoint. */
static int parse_functions(struct hostctx *hc, struct tp_obj *dev, struct topo_device *d)
{
	struct fy_node *seq, *item;
	void *it = NULL;
	size_t n;
	int rc;

	if (!tp_has(dev, "functions"))
		return 0;
	rc = tp_seq(dev, "functions", &seq, &n, 1, TOPO_MAX_FUNCS - 1);
	if (rc || !seq)
		return rc;
	d->funcs = calloc(n, sizeof(*d->funcs));
	if (!d->funcs)
		return tp_oom(hc->b);
	for (uint32_t k = 0; (item = fy_node_sequence_iterate(seq, &it)); k++) {
		char what[LABEL_MAX];

		snprintf(what, sizeof(what), "%.150s function %u", dev->what, k + 1);
		rc = parse_one_device(hc, item, tp_line(item, dev->line), what, &d->funcs[k],
				      false);
		d->nfuncs = k + 1;
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_one_device(struct hostctx *hc, struct fy_node *n, int line, const char *parent,
			    struct topo_device *d, bool fn0)
{
	char nm[48], def[TOPO_NAME_MAX];
	uint32_t vid, did;
	struct tp_obj o;
	size_t m;
	int rc;

	rc = tp_open(&o, hc->b, n, line, dev_keys, "%s device%s", parent,
		      tp_peek_name(n, nm, sizeof(nm)));
	if (!rc)
		rc = tp_str(&o, "model", d->model, sizeof(d->model), NULL, NAME_CHARS);
	if (rc)
		return rc;
	for (m = 0; m < 3 && strcmp(d->model, dev_models[m]); m++)
		;
	if (m == 3)
		return topo_err(hc->b, tp_vline(&o, "model"),
				"%s: unknown model '%s' (expected one of: test, nvme, accel)",
				o.what, d->model);
	/* Like Linux naming: nvme0, nvme1 ... in the order they appear. */
	snprintf(def, sizeof(def), "%s%u", d->model, hc->nmodel[m]++);
	rc = tp_str(&o, "name", d->name, sizeof(d->name), def, NAME_CHARS);
	if (!rc)
		rc = add_name(hc, &o, d->name);
	if (!rc)
		rc = tp_bool(&o, "lendable", &d->lendable, true);
	if (!rc)
		rc = tp_u32(&o, "vendor_id", &vid, 0, 0, 0xffff);
	if (!rc)
		rc = tp_u32(&o, "device_id", &did, 0, 0, 0xffff);
	if (!rc)
		rc = parse_bars(&o, d);
	if (!rc)
		rc = parse_params(&o, d);
	if (!rc)
		rc = parse_sriov(&o, d);
	if (!rc && !fn0 && tp_has(&o, "functions"))
		rc = topo_err(hc->b, tp_vline(&o, "functions"), "%s: only function 0 lists "
			      "'functions'", o.what);
	if (!rc)
		rc = parse_functions(hc, &o, d);
	if (rc)
		return rc;
	/* Without ARI a PF's VFs take the device's function numbers after the PFs. */
	if (fn0) {
		uint32_t nvf = d->sriov_vfs, nphys = 1 + d->nfuncs;

		for (uint32_t k = 0; k < d->nfuncs; k++)
			nvf += d->funcs[k].sriov_vfs;
		if (nvf && nphys > 1 && nvf + nphys > 256)
			return topo_err(hc->b, o.line, "%s: %u functions and %u VFs do not fit "
					"256 routing IDs", o.what, nphys, nvf);
	}
	d->vendor_id = (uint16_t)vid;
	d->device_id = (uint16_t)did;
	return 0;
}

static int parse_device(struct hostctx *hc, struct fy_node *n, int line, const char *parent,
			struct topo_port *p)
{
	return parse_one_device(hc, n, line, parent, &p->dev, true);
}

static int add_ntbref(struct topo_build *b, struct topo_ntb *ntb, uint32_t host,
		      uint32_t idx, int line)
{
	if (b->nntbs == b->ntbcap) {
		size_t cap = b->ntbcap ? 2 * b->ntbcap : 64;
		void *p = realloc(b->ntbs, cap * sizeof(*b->ntbs));

		if (!p)
			return tp_oom(b);
		b->ntbs = p;
		b->ntbcap = cap;
	}
	b->ntbs[b->nntbs++] = (struct topo_ntbref){
		.ntb = ntb, .host = host, .idx = idx, .line = line, .peer = -1,
	};
	return 0;
}

static const char *const ntb_keys[] = {
	"name", "model", "bar_size", "lut_entries", "requesters", "doorbells",
	"scratchpads", "dma_channels", "latency_ns", "cable", "connect", NULL
};

static int parse_ntb(struct hostctx *hc, struct fy_node *n, int line, const char *parent,
		     struct topo_port *p)
{
	struct topo_ntb *ntb = &p->ntb;
	char nm[48], def[TOPO_NAME_MAX], a[24];
	uint64_t win;
	struct tp_obj o;
	int rc;

	rc = tp_open(&o, hc->b, n, line, ntb_keys, "%s ntb%s", parent,
		      tp_peek_name(n, nm, sizeof(nm)));
	if (rc)
		return rc;
	snprintf(def, sizeof(def), "ntb%u", hc->nntb);
	rc = tp_str(&o, "name", ntb->name, sizeof(ntb->name), def, NAME_CHARS);
	if (!rc)
		rc = add_name(hc, &o, ntb->name);
	if (!rc)
		rc = tp_str(&o, "model", ntb->model, sizeof(ntb->model), "PXH830", NAME_CHARS);
	if (!rc)
		rc = tp_size(&o, "bar_size", &ntb->bar_size, 8 * GiB, 64 * KiB, TiB);
	if (!rc && !tp_is_pow2(ntb->bar_size))
		rc = topo_err(hc->b, tp_vline(&o, "bar_size"),
			      "%s: bar_size must be a power of two", o.what);
	if (!rc)
		rc = tp_u32(&o, "lut_entries", &ntb->lut_entries, 64, 1, 4096);
	if (rc)
		return rc;
	/* Each LUT entry maps one window: a power of two, at least one 64K page. */
	win = ntb->bar_size / ntb->lut_entries;
	if (ntb->bar_size % ntb->lut_entries || !tp_is_pow2(win) || win < 64 * KiB)
		return topo_err(hc->b, tp_vline(&o, "lut_entries"),
				"%s: window size bar_size / lut_entries = %s / %u must be a "
				"power of two of at least 64K; use a power-of-two lut_entries "
				"or a bigger bar_size", o.what,
				tp_fmt_size(a, sizeof(a), ntb->bar_size), ntb->lut_entries);
	rc = tp_u32(&o, "requesters", &ntb->rid_entries, 32, 1, 1024);
	if (!rc)
		rc = tp_u32(&o, "doorbells", &ntb->doorbells, 16, 1, 32);
	if (!rc)
		rc = tp_u32(&o, "scratchpads", &ntb->scratchpads, 8, 0, 64);
	if (!rc)
		rc = tp_u32(&o, "dma_channels", &ntb->dma_channels, 1, 0, 16);
	if (!rc)
		rc = tp_u32(&o, "latency_ns", &ntb->latency_ns, 110, 0, LATENCY_MAX);
	if (!rc)
		rc = tp_link(&o, "cable", &ntb->cable, 3, 8);
	if (!rc && tp_has(&o, "connect"))
		rc = tp_str(&o, "connect", ntb->connect, sizeof(ntb->connect), NULL, "_-.:");
	if (!rc)
		rc = add_ntbref(hc->b, ntb, hc->host, hc->nntb++, tp_vline(&o, "connect"));
	return rc;
}

static int parse_port(struct hostctx *hc, struct fy_node *n, int line, const char *parent,
		      uint32_t idx, unsigned depth, struct topo_port *p);

static int parse_ports(struct hostctx *hc, struct tp_obj *o, size_t max, unsigned depth,
		       struct topo_port **out, uint32_t *nout)
{
	struct fy_node *seq, *item;
	void *it = NULL;
	size_t n;
	int rc;

	rc = tp_seq(o, "ports", &seq, &n, 1, max);
	if (rc)
		return rc;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return tp_oom(o->b);
	/* Count them now so that topo_free() finds whatever gets built. */
	*nout = (uint32_t)n;
	for (uint32_t i = 0; i < n && (item = fy_node_sequence_iterate(seq, &it)); i++) {
		rc = parse_port(hc, item, o->line, o->what, i, depth, &(*out)[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static const char *const switch_keys[] = {
	"name", "chip", "latency_ns", "acs_p2p_redirect", "ports", NULL
};

static int parse_switch(struct hostctx *hc, struct fy_node *n, int line, const char *parent,
			unsigned depth, struct topo_port *p)
{
	struct topo_switch *sw = &p->sw;
	char nm[48], def[TOPO_NAME_MAX];
	struct tp_obj o;
	int rc;

	rc = tp_open(&o, hc->b, n, line, switch_keys, "%s switch%s", parent,
		      tp_peek_name(n, nm, sizeof(nm)));
	if (rc)
		return rc;
	if (depth > TOPO_MAX_DEPTH)
		return topo_err(hc->b, o.line,
				"%s: switches nest %u deep; at most %d levels of switches "
				"below a root port", o.what, depth, TOPO_MAX_DEPTH);
	snprintf(def, sizeof(def), "switch%u", hc->nswitch++);
	rc = tp_str(&o, "name", sw->name, sizeof(sw->name), def, NAME_CHARS);
	if (!rc)
		rc = add_name(hc, &o, sw->name);
	if (!rc)
		rc = tp_str(&o, "chip", sw->chip, sizeof(sw->chip), "PEX8796", NAME_CHARS);
	if (!rc)
		rc = tp_u32(&o, "latency_ns", &sw->latency_ns, 150, 0, LATENCY_MAX);
	if (!rc)
		rc = tp_bool(&o, "acs_p2p_redirect", &sw->acs_p2p_redirect, false);
	if (!rc)
		rc = parse_ports(hc, &o, 32, depth, &sw->ports, &sw->nports);
	return rc;
}

static const char *const port_keys[] = { "link", "device", "switch", "ntb", NULL };

/* @depth: switches above this port (0 for a root port). */
static int parse_port(struct hostctx *hc, struct fy_node *n, int line, const char *parent,
		      uint32_t idx, unsigned depth, struct topo_port *p)
{
	int dev, sw, ntb, rc;
	struct tp_obj o;

	rc = tp_open(&o, hc->b, n, line, port_keys, "%s port %u", parent, idx);
	if (rc)
		return rc;
	p->line = o.line;
	rc = tp_link(&o, "link", &p->link, 3, 16);
	if (rc)
		return rc;
	dev = tp_idx(&o, "device");
	sw = tp_idx(&o, "switch");
	ntb = tp_idx(&o, "ntb");
	if (!!o.kline[dev] + !!o.kline[sw] + !!o.kline[ntb] > 1)
		return topo_err(hc->b, o.line,
				"%s: give exactly one of 'device', 'switch' or 'ntb' "
				"(or none for an empty slot)", o.what);
	if (o.kline[dev]) {
		p->kind = TOPO_SLOT_DEVICE;
		return parse_device(hc, o.val[dev], o.kline[dev], o.what, p);
	}
	if (o.kline[sw]) {
		p->kind = TOPO_SLOT_SWITCH;
		return parse_switch(hc, o.val[sw], o.kline[sw], o.what, depth + 1, p);
	}
	if (o.kline[ntb]) {
		p->kind = TOPO_SLOT_NTB;
		return parse_ntb(hc, o.val[ntb], o.kline[ntb], o.what, p);
	}
	p->kind = TOPO_SLOT_EMPTY;
	return 0;
}

static const char *const window_keys[] = { "base", "size", NULL };

static int get_window(struct tp_obj *o, const char *key, uint64_t *base, uint64_t *size,
		      uint64_t defbase, uint64_t defsize)
{
	int i = tp_idx(o, key), rc;
	struct tp_obj w;

	*base = defbase;
	*size = defsize;
	if (!o->kline[i])
		return 0;
	rc = tp_open(&w, o->b, o->val[i], o->kline[i], window_keys, "%s %s", o->what, key);
	if (!rc)
		rc = tp_size(&w, "base", base, defbase, 0, UINT64_MAX);
	if (!rc)
		rc = tp_size(&w, "size", size, defsize, MiB, UINT64_MAX);
	if (rc)
		return rc;
	/* PCI bridge memory windows have 1 MiB granularity. */
	if ((*base | *size) & (MiB - 1))
		return topo_err(o->b, o->kline[i],
				"%s: %s base and size must be multiples of 1M", o->what, key);
	if (*base + *size < *base)
		return topo_err(o->b, o->kline[i], "%s: %s runs past the end of the "
				"address space", o->what, key);
	return 0;
}

/*
 * RAM sits at 0 up to 3G; the rest is remapped above 4G, as on a PC.  The
 * MMIO windows must miss it and each other.
 */
static int check_memory(struct tp_obj *o, struct topo_host *h)
{
	uint64_t low = h->ram_size < 3 * GiB ? h->ram_size : 3 * GiB;
	uint64_t top = h->ram_size > low ? 4 * GiB + (h->ram_size - low) : low;
	char a[24], b[24];

	if (h->mmio32_base + h->mmio32_size > 4 * GiB)
		return topo_err(o->b, tp_vline(o, "mmio32"),
				"%s: mmio32 window must end at or below 4G", o->what);
	if (h->mmio32_base < low)
		return topo_err(o->b, tp_vline(o, "mmio32"),
				"%s: mmio32 window at 0x%" PRIx64 " overlaps RAM below 4G "
				"(0..0x%" PRIx64 "); move its base to 0x%" PRIx64 " or above",
				o->what, h->mmio32_base, low - 1, low);
	if (h->mmio64_base < 4 * GiB || h->mmio64_base < top)
		return topo_err(o->b, tp_vline(o, "mmio64"),
				"%s: mmio64 window at %s overlaps RAM or lies below 4G; "
				"RAM ends at %s, move its base there or above", o->what,
				tp_fmt_size(a, sizeof(a), h->mmio64_base),
				tp_fmt_size(b, sizeof(b), top > 4 * GiB ? top : 4 * GiB));
	if (h->mmio64_base + h->mmio64_size > (1ull << 48))
		return topo_err(o->b, tp_vline(o, "mmio64"),
				"%s: mmio64 window must end at or below 256T (48-bit "
				"addresses)", o->what);
	return 0;
}

static const char *const rc_keys[] = { "latency_ns", "p2p", NULL };

static const char *const host_keys[] = {
	"id", "node_id", "name", "ram", "iommu", "root_complex", "mmio32", "mmio64",
	"ports", NULL
};

/* Ids, node ids and names are unique across the cluster. */
static int check_host_unique(struct tp_obj *o, const struct topo *t, uint32_t idx)
{
	const struct topo_host *h = &t->hosts[idx];

	for (uint32_t i = 0; i < idx; i++) {
		const struct topo_host *p = &t->hosts[i];

		if (p->id == h->id)
			return topo_err(o->b, tp_vline(o, "id"),
					"%s: id %u is already used by host '%s' (line %d)",
					o->what, h->id, p->name, p->line);
		if (p->node_id == h->node_id)
			return topo_err(o->b, tp_vline(o, "node_id"),
					"%s: node_id %u is already used by host '%s' (line %d)",
					o->what, h->node_id, p->name, p->line);
		if (!strcmp(p->name, h->name))
			return topo_err(o->b, tp_vline(o, "name"),
					"%s: name '%s' is already used by the host on line %d",
					o->what, h->name, p->line);
	}
	return 0;
}

int topo_parse_host(struct topo_build *b, struct fy_node *n, int line, uint32_t idx)
{
	struct topo_host *h = &b->t->hosts[idx];
	struct hostctx hc = { .b = b, .host = idx };
	uint64_t top, defbase;
	char nm[48], def[TOPO_NAME_MAX];
	struct tp_obj o, rco;
	int rc;

	if (*tp_peek_name(n, nm, sizeof(nm)))
		rc = tp_open(&o, b, n, line, host_keys, "host%s", nm);
	else
		rc = tp_open(&o, b, n, line, host_keys, "hosts[%u]", idx);
	if (rc)
		return rc;
	h->line = o.line;
	/* 16382 keeps the default node_id 4 * (id + 1) within SISCI's 65532. */
	rc = tp_u32(&o, "id", &h->id, idx, 0, 16382);
	if (!rc)
		rc = tp_u32(&o, "node_id", &h->node_id, 4 * (h->id + 1), 4, 65532);
	if (!rc && h->node_id % 4)
		rc = topo_err(b, tp_vline(&o, "node_id"),
			      "%s: node_id %u must be a multiple of 4 (SISCI node ids)",
			      o.what, h->node_id);
	snprintf(def, sizeof(def), "host%u", h->id);
	if (!rc)
		rc = tp_str(&o, "name", h->name, sizeof(h->name), def, NAME_CHARS);
	if (!rc)
		rc = check_host_unique(&o, b->t, idx);
	if (!rc)
		rc = tp_size(&o, "ram", &h->ram_size, 4 * GiB, 64 * MiB, TiB);
	if (!rc)
		rc = tp_bool(&o, "iommu", &h->iommu, false);
	h->rc_latency_ns = 150;
	h->rc_p2p = true;
	if (!rc && tp_has(&o, "root_complex")) {
		int i = tp_idx(&o, "root_complex");

		rc = tp_open(&rco, b, o.val[i], o.kline[i], rc_keys, "%s root_complex", o.what);
		if (!rc)
			rc = tp_u32(&rco, "latency_ns", &h->rc_latency_ns, 150, 0, LATENCY_MAX);
		if (!rc)
			rc = tp_bool(&rco, "p2p", &h->rc_p2p, true);
	}
	if (rc)
		return rc;
	/* Default 64-bit window at 512G, or the next 512G boundary above RAM. */
	top = h->ram_size > 3 * GiB ? h->ram_size + GiB : h->ram_size;
	defbase = top <= 512 * GiB ? 512 * GiB : (top + 512 * GiB - 1) & ~(512 * GiB - 1);
	rc = get_window(&o, "mmio32", &h->mmio32_base, &h->mmio32_size,
			0xC0000000ull, 0x3EC00000ull);
	if (!rc)
		rc = get_window(&o, "mmio64", &h->mmio64_base, &h->mmio64_size,
				defbase, 512 * GiB);
	if (!rc)
		rc = check_memory(&o, h);
	if (!rc)
		rc = parse_ports(&hc, &o, 31, 0, &h->ports, &h->nports);
	free(hc.names);
	return rc;
}
