// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pci_regs.h>

#include "enum.h"
#include "fabric/ntb.h"
#include "ntb_drv.h"

#define MAX_DEVS   FAB_MAX_FUNCS
#define WIN_ALIGN  (1ull << 20)    /* bridge memory windows: 1 MiB granularity */

enum { RES_MEM32, RES_PREF64, RES_TYPES };

struct pdev;

struct res {
	struct pdev *dev;
	int bar;                   /* BAR index, or -1 for a bridge window */
	uint64_t size, align;
};

struct pdev {
	uint16_t bdf;
	bool bridge;
	struct pdev *parent;
	struct pdev *child[32 * 8];
	unsigned nchild;
	/* BARs 0..5, then 6..11: the SR-IOV capability's VF BARs (TotalVFs each) */
	uint64_t bar_size[12];
	bool bar64[12], barpref[12];
	uint16_t sriov;            /* config offset of the SR-IOV capability, 0: none */
	uint16_t total_vfs;
	/* bridges: required windows and what was assigned */
	uint64_t win_size[RES_TYPES], win_align[RES_TYPES], win_base[RES_TYPES];
	struct res res[RES_TYPES][6 * 32 + 64];
	unsigned nres[RES_TYPES];
};

struct enum_ctx {
	struct fab_host *h;
	struct pdev *devs;
	unsigned ndev;
	unsigned next_bus;
	char *err;
	size_t errlen;
};

static uint32_t rd(struct enum_ctx *c, uint16_t bdf, uint32_t off, uint32_t size)
{
	uint32_t v = 0xffffffffu;

	fab_cfg_access_read(c->h, bdf, off, size, &v);
	return v;
}

static int wr(struct enum_ctx *c, uint16_t bdf, uint32_t off, uint32_t size, uint32_t v)
{
	return fab_cfg_access_write(c->h, bdf, off, size, v);
}

static void bdf_str(uint16_t bdf, char *buf, size_t n)
{
	snprintf(buf, n, "%02x:%02x.%x", FAB_BDF_BUS(bdf), FAB_BDF_DEV(bdf), FAB_BDF_FN(bdf));
}

/* Config offset of BAR i: 0..5 in the header, 6..11 the VF BARs. */
static uint32_t bar_reg(const struct pdev *d, unsigned i)
{
	return i < 6 ? PCI_BASE_ADDRESS_0 + 4 * i : d->sriov + PCI_SRIOV_BAR + 4 * (i - 6);
}

/* Walk the extended capability list through config cycles. */
static uint16_t find_ecap(struct enum_ctx *c, uint16_t bdf, uint16_t id)
{
	uint32_t off = PCI_CFG_SPACE_SIZE;

	for (int n = 0; off >= PCI_CFG_SPACE_SIZE && n < 960; n++) {
		uint32_t h = rd(c, bdf, off, 4);

		if (h == 0 || h == 0xffffffffu)
			return 0;
		if ((h & 0xffff) == id)
			return (uint16_t)off;
		off = h >> 20;
	}
	return 0;
}

static void size_bars(struct enum_ctx *c, struct pdev *d)
{
	unsigned nbar = d->bridge ? 2 : 6;

	if (!d->bridge) {
		/* SR-IOV: room for every VF's BARs, as Linux's sriov_init reserves it. */
		d->sriov = find_ecap(c, d->bdf, PCI_EXT_CAP_ID_SRIOV);
		if (d->sriov) {
			d->total_vfs = (uint16_t)rd(c, d->bdf, d->sriov + PCI_SRIOV_TOTAL_VF, 2);
			nbar = 12;
		}
	}
	for (unsigned i = 0; i < nbar; i++) {
		uint32_t off = bar_reg(d, i), orig = rd(c, d->bdf, off, 4), lo, hi = 0;
		uint64_t mask;

		if (orig & PCI_BASE_ADDRESS_SPACE_IO)
			continue;   /* no I/O space on these hosts */
		wr(c, d->bdf, off, 4, 0xffffffffu);
		lo = rd(c, d->bdf, off, 4);
		wr(c, d->bdf, off, 4, orig);
		if ((lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64 &&
		    i != 5 && i != 11) {
			uint32_t ohi = rd(c, d->bdf, off + 4, 4);

			wr(c, d->bdf, off + 4, 4, 0xffffffffu);
			hi = rd(c, d->bdf, off + 4, 4);
			wr(c, d->bdf, off + 4, 4, ohi);
			d->bar64[i] = true;
		}
		mask = ((uint64_t)hi << 32) | (lo & ~0xfu);
		if (!d->bar64[i])
			mask |= 0xffffffff00000000ull;
		if (!(lo & ~0xfu) && !hi)
			continue;   /* not implemented */
		d->bar_size[i] = ~mask + 1;
		if (i >= 6)
			d->bar_size[i] *= d->total_vfs;   /* VF n at VF BAR + (n-1) * size */
		d->barpref[i] = lo & PCI_BASE_ADDRESS_MEM_PREFETCH;
		if (d->bar64[i])
			i++;
	}
}

static int scan_bus(struct enum_ctx *c, unsigned bus, struct pdev *parent, unsigned depth);

static int found(struct enum_ctx *c, uint16_t bdf, struct pdev *parent, unsigned depth)
{
	uint8_t hdr = (uint8_t)rd(c, bdf, PCI_HEADER_TYPE, 1);
	struct pdev *d;
	int rc;

	if (c->ndev >= MAX_DEVS)
		return -ENOSPC;
	d = &c->devs[c->ndev++];
	d->bdf = bdf;
	d->parent = parent;
	d->bridge = (hdr & 0x7f) == PCI_HEADER_TYPE_BRIDGE;
	if (parent && parent->nchild < sizeof(parent->child) / sizeof(parent->child[0]))
		parent->child[parent->nchild++] = d;
	size_bars(c, d);
	if (!d->bridge)
		return 0;
	if (c->next_bus > 255) {
		snprintf(c->err, c->errlen, "host %u: out of bus numbers", c->h->id);
		return -ENOSPC;
	}
	/* Open the subordinate range fully while scanning below, then close it. */
	wr(c, bdf, PCI_PRIMARY_BUS, 1, FAB_BDF_BUS(bdf));
	wr(c, bdf, PCI_SECONDARY_BUS, 1, c->next_bus);
	wr(c, bdf, PCI_SUBORDINATE_BUS, 1, 0xff);
	rc = scan_bus(c, c->next_bus++, d, depth + 1);
	wr(c, bdf, PCI_SUBORDINATE_BUS, 1, c->next_bus - 1);
	return rc;
}

static int scan_bus(struct enum_ctx *c, unsigned bus, struct pdev *parent, unsigned depth)
{
	if (depth > 2 * TOPO_MAX_DEPTH + 2)
		return -ELOOP;
	for (unsigned dev = 0; dev < 32; dev++) {
		for (unsigned fn = 0; fn < 8; fn++) {
			uint16_t bdf = FAB_BDF(bus, dev, fn);
			uint16_t vendor = (uint16_t)rd(c, bdf, PCI_VENDOR_ID, 2);
			int rc;

			if (vendor == 0xffff) {
				if (fn == 0)
					break;
				continue;
			}
			rc = found(c, bdf, parent, depth);
			if (rc)
				return rc;
			if (fn == 0 && !(rd(c, bdf, PCI_HEADER_TYPE, 1) & 0x80))
				break;   /* single-function device */
		}
	}
	return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static void add_res(struct pdev *br, int type, struct pdev *d, int bar, uint64_t size,
		    uint64_t align)
{
	unsigned n = br->nres[type];

	if (n >= sizeof(br->res[0]) / sizeof(br->res[0][0]))
		return;
	br->res[type][n] = (struct res){ d, bar, size, align };
	br->nres[type] = n + 1;
}

static int by_align_desc(const void *a, const void *b)
{
	const struct res *x = a, *y = b;

	if (x->align != y->align)
		return x->align < y->align ? 1 : -1;
	return x->size < y->size ? 1 : (x->size > y->size ? -1 : 0);
}

/* Bottom-up: what each bridge's windows must hold. */
static void size_windows(struct pdev *br)
{
	for (unsigned i = 0; i < br->nchild; i++) {
		struct pdev *d = br->child[i];

		if (d->bridge) {
			size_windows(d);
			for (int t = 0; t < RES_TYPES; t++)
				if (d->win_size[t])
					add_res(br, t, d, -1, d->win_size[t], d->win_align[t]);
		}
		for (int b = 0; b < 12; b++) {
			uint64_t al = d->bar_size[b];

			if (!d->bar_size[b])
				continue;
			if (b >= 6)
				al /= d->total_vfs;   /* a VF BAR aligns to one VF's size */
			/* 64-bit prefetchable BARs may live above 4 GiB; all
			 * others must be reachable with 32-bit addresses. */
			add_res(br, d->bar64[b] && d->barpref[b] ? RES_PREF64 : RES_MEM32, d, b,
				d->bar_size[b], al);
		}
	}
	for (int t = 0; t < RES_TYPES; t++) {
		uint64_t off = 0, al = WIN_ALIGN;

		qsort(br->res[t], br->nres[t], sizeof(struct res), by_align_desc);
		for (unsigned i = 0; i < br->nres[t]; i++) {
			off = align_up(off, br->res[t][i].align) + br->res[t][i].size;
			if (br->res[t][i].align > al)
				al = br->res[t][i].align;
		}
		br->win_size[t] = off ? align_up(off, WIN_ALIGN) : 0;
		br->win_align[t] = al;
	}
}

static const char *type_name(int t)
{
	return t == RES_MEM32 ? "32-bit memory" : "64-bit prefetchable";
}

/* The largest BAR inside a bridge's window of type t, to name in errors. */
static const struct res *largest_bar(const struct pdev *br, int t, unsigned depth)
{
	for (unsigned i = 0; i < br->nres[t] && depth < 32; i++) {
		const struct res *r = &br->res[t][i];

		if (r->bar >= 0)
			return r;
		r = largest_bar(r->dev, t, depth + 1);
		if (r)
			return r;
	}
	return NULL;
}

static void human(uint64_t v, char *buf, size_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (u < 4 && v >= 1024 && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	snprintf(buf, n, "%" PRIu64 " %s", v, unit[u]);
}

static int fail_room(struct enum_ctx *c, const struct res *r, int t, uint64_t base,
		     uint64_t end)
{
	char b[16], sz[24], inner[96] = "";
	struct fab_func *fn;
	const struct res *big;

	bdf_str(r->dev->bdf, b, sizeof(b));
	fn = fab_func_by_bdf(c->h, r->dev->bdf);
	human(r->size, sz, sizeof(sz));
	if (r->bar >= 0) {
		snprintf(c->err, c->errlen, "host %u: no room for %sBAR%d of %s (%s, %s) in the %s "
			 "window [0x%" PRIx64 "-0x%" PRIx64 "]: enlarge the host's mmio%s in the "
			 "topology or make the BAR smaller", c->h->id, r->bar >= 6 ? "VF " : "",
			 r->bar % 6, fn ? fn->name : "?",
			 b, sz, type_name(t), base, end - 1, t == RES_MEM32 ? "32" : "64");
		return -ENOSPC;
	}
	big = largest_bar(r->dev, t, 0);
	if (big) {
		struct fab_func *bf = fab_func_by_bdf(c->h, big->dev->bdf);
		char bsz[24];

		human(big->size, bsz, sizeof(bsz));
		snprintf(inner, sizeof(inner), ", largest inside: BAR%d of %s, %s", big->bar,
			 bf ? bf->name : "?", bsz);
	}
	snprintf(c->err, c->errlen, "host %u: no room for the %s window of bridge %s (%s, %s%s) "
		 "in [0x%" PRIx64 "-0x%" PRIx64 "]: enlarge the host's mmio%s in the topology",
		 c->h->id, type_name(t), fn ? fn->name : "?", b, sz, inner, base, end - 1,
		 t == RES_MEM32 ? "32" : "64");
	return -ENOSPC;
}

static int program_bar(struct enum_ctx *c, struct pdev *d, int bar, uint64_t addr)
{
	uint32_t off = bar_reg(d, (unsigned)bar);
	uint32_t lo = rd(c, d->bdf, off, 4) & 0xf;
	int rc = wr(c, d->bdf, off, 4, (uint32_t)addr | lo);

	if (!rc && d->bar64[bar])
		rc = wr(c, d->bdf, off + 4, 4, (uint32_t)(addr >> 32));
	return rc;
}

static void program_windows(struct enum_ctx *c, struct pdev *br)
{
	uint64_t b32 = br->win_base[RES_MEM32], s32 = br->win_size[RES_MEM32];
	uint64_t b64 = br->win_base[RES_PREF64], s64 = br->win_size[RES_PREF64];

	wr(c, br->bdf, PCI_IO_BASE, 1, 0xf0);   /* no I/O space: closed */
	wr(c, br->bdf, PCI_IO_LIMIT, 1, 0x00);
	if (s32) {
		wr(c, br->bdf, PCI_MEMORY_BASE, 2, (uint32_t)(b32 >> 16) & 0xfff0);
		wr(c, br->bdf, PCI_MEMORY_LIMIT, 2, (uint32_t)((b32 + s32 - 1) >> 16) & 0xfff0);
	} else {
		wr(c, br->bdf, PCI_MEMORY_BASE, 2, 0xfff0);   /* base > limit: closed */
		wr(c, br->bdf, PCI_MEMORY_LIMIT, 2, 0);
	}
	if (s64) {
		uint64_t lim = b64 + s64 - 1;

		wr(c, br->bdf, PCI_PREF_MEMORY_BASE, 2, (uint32_t)(b64 >> 16) & 0xfff0);
		wr(c, br->bdf, PCI_PREF_MEMORY_LIMIT, 2, (uint32_t)(lim >> 16) & 0xfff0);
		wr(c, br->bdf, PCI_PREF_BASE_UPPER32, 4, (uint32_t)(b64 >> 32));
		wr(c, br->bdf, PCI_PREF_LIMIT_UPPER32, 4, (uint32_t)(lim >> 32));
	} else {
		wr(c, br->bdf, PCI_PREF_MEMORY_BASE, 2, 0xfff0);
		wr(c, br->bdf, PCI_PREF_MEMORY_LIMIT, 2, 0);
		wr(c, br->bdf, PCI_PREF_BASE_UPPER32, 4, 0);
		wr(c, br->bdf, PCI_PREF_LIMIT_UPPER32, 4, 0);
	}
}

/* Top-down: place each resource of br inside [base, end) of its type. */
static int assign(struct enum_ctx *c, struct pdev *br, const uint64_t base[RES_TYPES],
		  const uint64_t end[RES_TYPES])
{
	for (int t = 0; t < RES_TYPES; t++) {
		uint64_t cur = base[t];

		for (unsigned i = 0; i < br->nres[t]; i++) {
			struct res *r = &br->res[t][i];
			uint64_t a = align_up(cur, r->align);

			if (a < cur || a + r->size > end[t] || a + r->size < a)
				return fail_room(c, r, t, base[t], end[t]);
			if (r->bar >= 0) {
				int rc = program_bar(c, r->dev, r->bar, a);

				if (rc)
					return rc;
			} else {
				r->dev->win_base[t] = a;
			}
			cur = a + r->size;
		}
	}
	for (unsigned i = 0; i < br->nchild; i++) {
		struct pdev *d = br->child[i];
		uint16_t cmd = (uint16_t)rd(c, d->bdf, PCI_COMMAND, 2);
		bool has_bars = false;

		for (int b = 0; b < 6; b++)
			has_bars |= d->bar_size[b] != 0;
		if (d->bridge) {
			uint64_t nb[RES_TYPES], ne[RES_TYPES];
			int rc;

			program_windows(c, d);
			for (int t = 0; t < RES_TYPES; t++) {
				nb[t] = d->win_base[t];
				ne[t] = d->win_base[t] + d->win_size[t];
			}
			rc = assign(c, d, nb, ne);
			if (rc)
				return rc;
			/* Bridges forward memory both ways once enabled. */
			cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
		} else if (has_bars) {
			cmd |= PCI_COMMAND_MEMORY;
		}
		wr(c, d->bdf, PCI_COMMAND, 2, cmd);
	}
	return 0;
}

int host_enumerate(struct fab_host *h, char *err, size_t errlen)
{
	struct enum_ctx c = { .h = h, .next_bus = 1, .err = err, .errlen = errlen };
	const struct topo_host *t = h->t;
	struct pdev *root;
	uint64_t base[RES_TYPES] = { t->mmio32_base, t->mmio64_base };
	uint64_t end[RES_TYPES] = { t->mmio32_base + t->mmio32_size,
				    t->mmio64_base + t->mmio64_size };
	int rc;

	if (errlen)
		err[0] = '\0';
	/* The root complex is the virtual bridge above bus 0. */
	c.devs = calloc(MAX_DEVS + 1, sizeof(*c.devs));
	if (!c.devs)
		return -ENOMEM;
	root = &c.devs[MAX_DEVS];
	root->bridge = true;
	rc = scan_bus(&c, 0, root, 0);
	if (rc) {
		if (!err[0])
			snprintf(err, errlen, "host %u: bus scan failed: %s", h->id, strerror(-rc));
		goto out;
	}
	size_windows(root);
	rc = assign(&c, root, base, end);
out:
	free(c.devs);
	return rc;
}

int host_ntb_init(struct fab_host *h, char *err, size_t errlen)
{
	int rc = ntb_drv_probe(h);

	if (rc) {
		snprintf(err, errlen, "host %u: cannot bind the NTB drivers: %s", h->id,
			 strerror(-rc));
		return rc;
	}
	/* The CPU reaches other hosts through every adapter: it holds a reference for good. */
	for (uint32_t i = 0; i < h->nntbs; i++) {
		rc = ntb_rid_get(ntb_drv_of(h, i), FAB_RID_CPU);
		if (rc) {
			snprintf(err, errlen, "host %u: %s: cannot register the CPU requester: %s",
				 h->id, h->ntbs[i]->fn->name, strerror(-rc));
			return rc;
		}
	}
	return 0;
}
