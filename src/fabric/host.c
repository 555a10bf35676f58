// SPDX-License-Identifier: MIT
/*
 * Building one host's hardware from its topology. The config-cycle and
 * address-decode primitives that software and the router use are in decode.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "fabric.h"
#include "iommu.h"
#include "ntb.h"
#include "pcidev.h"
#include "route.h"

#define RC_VENDOR   0x8086   /* Intel: Xeon Scalable host bridge and root ports */
#define RC_DEVICE   0x2020
#define RP_DEVICE   0x2030
#define PLX_VENDOR  0x10b5

/* ---------- memory objects ---------- */

int fab_mem_create(struct fab_host *h, const char *name, uint64_t size, bool is_ram)
{
	struct fab_mem *m;
	int fd;

	if (h->nmems >= FAB_MAX_MEMS)
		return -ENOSPC;
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Sparse: pages materialise only when something touches them. */
	if (ftruncate(fd, (off_t)size) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	m = &h->mems[h->nmems];
	m->fd = fd;
	m->size = size;
	m->is_ram = is_ram;
	snprintf(m->name, sizeof(m->name), "%s", name);
	return (int)h->nmems++;
}

void *fab_mem_map(struct fab_host *h, uint32_t mem)
{
	struct fab_mem *m;
	void *p, *expect = NULL;

	if (mem >= h->nmems)
		return NULL;
	m = &h->mems[mem];
	p = __atomic_load_n(&m->map, __ATOMIC_ACQUIRE);
	if (p)
		return p;
	p = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Two threads may race to map: one mapping wins, the other is undone. */
	if (!__atomic_compare_exchange_n(&m->map, &expect, p, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap(p, m->size);
		return expect;
	}
	return p;
}

bool fab_ram_offset(const struct fab_host *h, uint64_t paddr, uint64_t *off, uint64_t *contig)
{
	const uint64_t four_g = 1ull << 32;

	if (paddr < h->low_ram) {
		*off = paddr;
		*contig = h->low_ram - paddr;
		return true;
	}
	if (paddr >= four_g && paddr - four_g < h->high_ram) {
		*off = h->low_ram + (paddr - four_g);
		*contig = h->high_ram - (paddr - four_g);
		return true;
	}
	return false;
}

/* ---------- functions and their config headers ---------- */

struct fab_func *fab_func_alloc(struct fab_host *h, enum fab_func_kind kind,
				const char *name, struct fab_func *parent,
				uint8_t dev, uint8_t fnum)
{
	struct fab_func *fn;

	if (h->nfuncs >= FAB_MAX_FUNCS)
		return NULL;
	fn = calloc(1, sizeof(*fn));
	if (!fn)
		return NULL;
	if (parent) {
		struct fab_func **c = realloc(parent->children,
					      (parent->nchildren + 1) * sizeof(*c));
		if (!c) {
			free(fn);
			return NULL;
		}
		parent->children = c;
		c[parent->nchildren++] = fn;
	}
	fn->host = h;
	fn->kind = kind;
	fn->dev = dev;
	fn->fn = fnum;
	fn->parent = parent;
	fn->index = h->nfuncs;
	for (int i = 0; i < 6; i++)
		fn->bars[i].mem = -1;
	snprintf(fn->name, sizeof(fn->name), "%s", name ? name : "");
	fab_cfg_init(&fn->cfg);
	h->funcs[h->nfuncs++] = fn;
	return fn;
}

static void common_header(struct fab_func *fn, uint16_t vendor, uint16_t device, uint8_t rev)
{
	struct fab_cfg *c = &fn->cfg;

	fab_cfg_set16(c, PCI_VENDOR_ID, vendor);
	fab_cfg_set16(c, PCI_DEVICE_ID, device);
	fab_cfg_set8(c, PCI_REVISION_ID, rev);
	/* I/O, memory, bus master, parity, SERR, INTx disable. */
	fab_cfg_wmask16(c, PCI_COMMAND, PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
			PCI_COMMAND_MASTER | PCI_COMMAND_PARITY | PCI_COMMAND_SERR |
			PCI_COMMAND_INTX_DISABLE);
	fab_cfg_w1c16(c, PCI_STATUS, PCI_STATUS_DETECTED_PARITY | PCI_STATUS_SIG_SYSTEM_ERROR |
		      PCI_STATUS_REC_MASTER_ABORT | PCI_STATUS_REC_TARGET_ABORT |
		      PCI_STATUS_SIG_TARGET_ABORT | PCI_STATUS_PARITY);
	fab_cfg_set8(c, PCI_CACHE_LINE_SIZE, 0);
	c->wmask[PCI_CACHE_LINE_SIZE] = 0xff;
	c->wmask[PCI_LATENCY_TIMER] = 0;
	c->wmask[PCI_INTERRUPT_LINE] = 0xff;
}

void fab_func_type0(struct fab_func *fn, uint16_t vendor, uint16_t device, uint32_t class24,
		    uint8_t rev, uint16_t ss_vendor, uint16_t ss_device)
{
	struct fab_cfg *c = &fn->cfg;

	common_header(fn, vendor, device, rev);
	fab_cfg_set8(c, PCI_CLASS_PROG, (uint8_t)class24);
	fab_cfg_set16(c, PCI_CLASS_DEVICE, (uint16_t)(class24 >> 8));
	fab_cfg_set8(c, PCI_HEADER_TYPE, PCI_HEADER_TYPE_NORMAL);
	fab_cfg_set16(c, PCI_SUBSYSTEM_VENDOR_ID, ss_vendor);
	fab_cfg_set16(c, PCI_SUBSYSTEM_ID, ss_device);
	/* Legacy interrupt pin INTA; drivers here use MSI-X, INTx stays unrouted. */
	fab_cfg_set8(c, PCI_INTERRUPT_PIN, 1);
}

void fab_func_type1(struct fab_func *fn, uint16_t vendor, uint16_t device, uint8_t rev)
{
	struct fab_cfg *c = &fn->cfg;

	common_header(fn, vendor, device, rev);
	fab_cfg_set16(c, PCI_CLASS_DEVICE, 0x0604);
	fab_cfg_set8(c, PCI_HEADER_TYPE, PCI_HEADER_TYPE_BRIDGE);
	c->wmask[PCI_PRIMARY_BUS] = 0xff;
	c->wmask[PCI_SECONDARY_BUS] = 0xff;
	c->wmask[PCI_SUBORDINATE_BUS] = 0xff;
	/* 16-bit I/O window registers; these hosts have no I/O space, and
	 * enumeration closes the window (base > limit). */
	c->wmask[PCI_IO_BASE] = 0xf0;
	c->wmask[PCI_IO_LIMIT] = 0xf0;
	fab_cfg_wmask16(c, PCI_MEMORY_BASE, 0xfff0);
	fab_cfg_wmask16(c, PCI_MEMORY_LIMIT, 0xfff0);
	/* 64-bit prefetchable window (low nibble 1 = 64-bit decode). */
	fab_cfg_set16(c, PCI_PREF_MEMORY_BASE, PCI_PREF_RANGE_TYPE_64);
	fab_cfg_set16(c, PCI_PREF_MEMORY_LIMIT, PCI_PREF_RANGE_TYPE_64);
	fab_cfg_wmask16(c, PCI_PREF_MEMORY_BASE, 0xfff0);
	fab_cfg_wmask16(c, PCI_PREF_MEMORY_LIMIT, 0xfff0);
	fab_cfg_wmask32(c, PCI_PREF_BASE_UPPER32, 0xffffffffu);
	fab_cfg_wmask32(c, PCI_PREF_LIMIT_UPPER32, 0xffffffffu);
	fab_cfg_wmask16(c, PCI_BRIDGE_CONTROL, PCI_BRIDGE_CTL_PARITY | PCI_BRIDGE_CTL_SERR |
			PCI_BRIDGE_CTL_BUS_RESET);
	fab_cfg_w1c16(c, PCI_SEC_STATUS, 0xf900);
}

int fab_func_add_bar(struct fab_func *fn, unsigned idx, uint64_t size, bool is64,
		     bool prefetch, bool backed)
{
	struct fab_cfg *c = &fn->cfg;
	uint32_t off, low;
	uint64_t mask;

	if (idx > 5 || (is64 && idx > 4) || size < 16 || (size & (size - 1)))
		return -EINVAL;
	if (!is64 && size > (1ull << 31))
		return -EINVAL;
	if (fn->bars[idx].present || (is64 && fn->bars[idx + 1].present))
		return -EEXIST;
	off = PCI_BASE_ADDRESS_0 + 4 * idx;
	low = (is64 ? PCI_BASE_ADDRESS_MEM_TYPE_64 : 0) |
	      (prefetch ? PCI_BASE_ADDRESS_MEM_PREFETCH : 0);
	mask = ~(size - 1);
	fab_cfg_set32(c, off, low);
	fab_cfg_wmask32(c, off, (uint32_t)mask & ~0xfu);
	if (is64) {
		fab_cfg_set32(c, off + 4, 0);
		fab_cfg_wmask32(c, off + 4, (uint32_t)(mask >> 32));
	}
	fn->bars[idx] = (struct fab_bar){ .present = true, .is64 = is64,
					  .prefetch = prefetch, .size = size, .mem = -1 };
	if (backed) {
		char name[48];
		int m;

		snprintf(name, sizeof(name), "%s-bar%u", fn->name, idx);
		m = fab_mem_create(fn->host, name, size, false);
		if (m < 0)
			return m;
		fn->host->mems[m].owner_bdf_index = (uint16_t)fn->index;
		fn->host->mems[m].bar = (uint8_t)idx;
		fn->bars[idx].mem = m;
	}
	return 0;
}

static uint16_t speeds_vector(unsigned gen)
{
	uint16_t v = 0;

	for (unsigned g = 1; g <= gen && g <= 7; g++)
		v |= (uint16_t)(1u << g);
	return v;
}

uint16_t fab_cap_pcie(struct fab_func *fn, unsigned type, struct topo_link link,
		      unsigned port_no)
{
	struct fab_cfg *c = &fn->cfg;
	bool port = type == FAB_PCIE_ROOT_PORT || type == FAB_PCIE_DOWNSTREAM;
	uint16_t off = fab_cfg_add_cap(c, PCI_CAP_ID_EXP, PCI_CAP_EXP_ENDPOINT_SIZEOF_V2);
	uint32_t lnkcap;

	if (!off)
		return 0;
	fab_cfg_set16(c, off + PCI_EXP_FLAGS, (uint16_t)(2 | (type << 4) |
		      (port ? PCI_EXP_FLAGS_SLOT : 0)));
	/* 256-byte max payload supported, extended tags, role-based errors. */
	fab_cfg_set32(c, off + PCI_EXP_DEVCAP, 1 | PCI_EXP_DEVCAP_EXT_TAG | PCI_EXP_DEVCAP_RBER);
	/* MPS 128, MRRS 512, extended tags enabled: what firmware leaves. */
	fab_cfg_set16(c, off + PCI_EXP_DEVCTL, (2 << 12) | PCI_EXP_DEVCTL_EXT_TAG);
	fab_cfg_wmask16(c, off + PCI_EXP_DEVCTL, 0x7fff);
	fab_cfg_w1c16(c, off + PCI_EXP_DEVSTA, 0x000f);
	lnkcap = (link.gen & 0xf) | ((uint32_t)(link.width & 0x3f) << 4) |
		 ((uint32_t)port_no << 24);
	if (port)
		lnkcap |= PCI_EXP_LNKCAP_DLLLARC;
	fab_cfg_set32(c, off + PCI_EXP_LNKCAP, lnkcap);
	fab_cfg_wmask16(c, off + PCI_EXP_LNKCTL, 0x0fc3);
	fab_cfg_set16(c, off + PCI_EXP_LNKSTA, (uint16_t)((link.gen & 0xf) |
		      ((link.width & 0x3f) << 4) | (port ? PCI_EXP_LNKSTA_DLLLA : 0)));
	if (port) {
		fab_cfg_set32(c, off + PCI_EXP_SLTCAP, (uint32_t)port_no << 19);
		fab_cfg_set16(c, off + PCI_EXP_SLTSTA, PCI_EXP_SLTSTA_PDS);
	}
	if (type == FAB_PCIE_ROOT_PORT)
		fab_cfg_wmask16(c, off + PCI_EXP_RTCTL, 0x001f);
	fab_cfg_set32(c, off + PCI_EXP_LNKCAP2, speeds_vector(link.gen));
	fab_cfg_set16(c, off + PCI_EXP_LNKCTL2, (uint16_t)(link.gen & 0xf));
	fab_cfg_wmask16(c, off + PCI_EXP_LNKCTL2, 0x000f);
	return off;
}

uint16_t fab_cap_msix(struct fab_func *fn, unsigned vectors, unsigned bir,
		      uint32_t table_off, uint32_t pba_off)
{
	struct fab_cfg *c = &fn->cfg;
	uint16_t off;

	if (vectors == 0 || vectors > 2048 || bir > 5)
		return 0;
	off = fab_cfg_add_cap(c, PCI_CAP_ID_MSIX, PCI_CAP_MSIX_SIZEOF);
	if (!off)
		return 0;
	fab_cfg_set16(c, off + PCI_MSIX_FLAGS, (uint16_t)(vectors - 1));
	fab_cfg_wmask16(c, off + PCI_MSIX_FLAGS, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	fab_cfg_set32(c, off + PCI_MSIX_TABLE, (table_off & ~7u) | bir);
	fab_cfg_set32(c, off + PCI_MSIX_PBA, (pba_off & ~7u) | bir);
	return off;
}

int fab_msix_reset_table(struct fab_func *fn)
{
	uint16_t cap = fab_cfg_find_cap(&fn->cfg, PCI_CAP_ID_MSIX);
	uint32_t tbl, n, bir, one = PCI_MSIX_ENTRY_CTRL_MASKBIT;
	const struct fab_bar *b;

	if (!cap)
		return 0;
	n = (fab_cfg_get16(&fn->cfg, cap + PCI_MSIX_FLAGS) & PCI_MSIX_FLAGS_QSIZE) + 1u;
	tbl = fab_cfg_get32(&fn->cfg, cap + PCI_MSIX_TABLE);
	bir = tbl & PCI_MSIX_TABLE_BIR;
	tbl &= PCI_MSIX_TABLE_OFFSET;
	b = bir < 6 ? &fn->bars[bir] : NULL;
	if (!b || !b->present || b->mem < 0 || tbl + (uint64_t)n * PCI_MSIX_ENTRY_SIZE > b->size)
		return -EINVAL;
	/* Entries come out of reset masked (PCIe spec, MSI-X Vector Control). */
	for (uint32_t v = 0; v < n; v++)
		if (pwrite(fn->host->mems[b->mem].fd, &one, sizeof(one),
			   tbl + v * PCI_MSIX_ENTRY_SIZE + PCI_MSIX_ENTRY_VECTOR_CTRL) != sizeof(one))
			return -EIO;
	return 0;
}

uint16_t fab_cap_msi(struct fab_func *fn, unsigned log2_vectors)
{
	struct fab_cfg *c = &fn->cfg;
	uint16_t off = fab_cfg_add_cap(c, PCI_CAP_ID_MSI, 24);

	if (!off)
		return 0;
	/* 64-bit address, per-vector masking. */
	fab_cfg_set16(c, off + PCI_MSI_FLAGS, (uint16_t)(PCI_MSI_FLAGS_64BIT |
		      PCI_MSI_FLAGS_MASKBIT | ((log2_vectors & 7) << 1)));
	fab_cfg_wmask16(c, off + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE | PCI_MSI_FLAGS_QSIZE);
	fab_cfg_wmask32(c, off + PCI_MSI_ADDRESS_LO, 0xfffffffcu);
	fab_cfg_wmask32(c, off + PCI_MSI_ADDRESS_HI, 0xffffffffu);
	fab_cfg_wmask16(c, off + PCI_MSI_DATA_64, 0xffff);
	fab_cfg_wmask32(c, off + PCI_MSI_MASK_64, (1u << (1u << (log2_vectors & 7))) - 1);
	return off;
}

uint16_t fab_cap_pm(struct fab_func *fn)
{
	struct fab_cfg *c = &fn->cfg;
	uint16_t off = fab_cfg_add_cap(c, PCI_CAP_ID_PM, PCI_PM_SIZEOF);

	if (!off)
		return 0;
	fab_cfg_set16(c, off + PCI_PM_PMC, 3);            /* PM spec 1.2 */
	fab_cfg_set16(c, off + PCI_PM_CTRL, PCI_PM_CTRL_NO_SOFT_RESET);
	fab_cfg_wmask16(c, off + PCI_PM_CTRL, PCI_PM_CTRL_STATE_MASK);
	return off;
}

uint16_t fab_ecap_acs(struct fab_func *fn, uint16_t caps, uint16_t ctrl)
{
	struct fab_cfg *c = &fn->cfg;
	uint16_t off = fab_cfg_add_ecap(c, PCI_EXT_CAP_ID_ACS, 1, 8);

	if (!off)
		return 0;
	fab_cfg_set16(c, off + PCI_ACS_CAP, caps);
	fab_cfg_set16(c, off + PCI_ACS_CTRL, ctrl & caps);
	fab_cfg_wmask16(c, off + PCI_ACS_CTRL, caps);
	return off;
}

/* ---------- building the tree ---------- */

struct build_ctx {
	struct fab_host *h;
	fab_endpoint_init_fn ep_init;
	char *err;
	size_t errlen;
	uint32_t ntb_count;
};

static int build_port_slot(struct build_ctx *b, const struct topo_port *p,
			   struct fab_func *port_fn, unsigned depth);

static int build_switch(struct build_ctx *b, const struct topo_port *p,
			struct fab_func *port_fn, unsigned depth)
{
	const struct topo_switch *sw = &p->sw;
	uint16_t devid = 0x8796;
	struct fab_func *up;

	if (sscanf(sw->chip, "PEX%hx", &devid) != 1)
		devid = 0x8796;
	up = fab_func_alloc(b->h, FAB_FN_SW_UP, sw->name, port_fn, 0, 0);
	if (!up)
		return -ENOMEM;
	up->link = p->link;
	up->latency_ns = sw->latency_ns;
	snprintf(up->model, sizeof(up->model), "%s", sw->chip);
	fab_func_type1(up, PLX_VENDOR, devid, 0xab);
	fab_cap_pm(up);
	fab_cap_msi(up, 0);
	fab_cap_pcie(up, FAB_PCIE_UPSTREAM, p->link, 0);
	for (uint32_t i = 0; i < sw->nports; i++) {
		char name[TOPO_NAME_MAX];
		struct fab_func *dp;
		int rc;

		snprintf(name, sizeof(name), "%.24s.p%u", sw->name, i);
		dp = fab_func_alloc(b->h, FAB_FN_SW_DOWN, name, up, (uint8_t)i, 0);
		if (!dp)
			return -ENOMEM;
		dp->latency_ns = sw->latency_ns;
		dp->link = sw->ports[i].link;
		snprintf(dp->model, sizeof(dp->model), "%s", sw->chip);
		fab_func_type1(dp, PLX_VENDOR, devid, 0xab);
		fab_cap_pm(dp);
		fab_cap_msi(dp, 0);
		fab_cap_pcie(dp, FAB_PCIE_DOWNSTREAM, sw->ports[i].link, i + 1);
		/* Source validation, translation blocking, P2P request and
		 * completion redirect, upstream forwarding. */
		fab_ecap_acs(dp, PCI_ACS_SV | PCI_ACS_TB | PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF,
			     sw->acs_p2p_redirect ? (PCI_ACS_RR | PCI_ACS_CR) : 0);
		rc = build_port_slot(b, &sw->ports[i], dp, depth + 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int build_ntb(struct build_ctx *b, const struct topo_port *p, struct fab_func *port_fn)
{
	struct fab_func *fn = fab_func_alloc(b->h, FAB_FN_NTB, p->ntb.name, port_fn, 0, 0);
	struct fab_ntb *ntb;
	int rc;

	if (!fn)
		return -ENOMEM;
	fn->link = p->link;
	fn->latency_ns = p->ntb.latency_ns;
	snprintf(fn->model, sizeof(fn->model), "%s", p->ntb.model);
	/* Dolphin PXH830: a PEX8733 NT port presented by Dolphin's vendor ID. */
	fab_func_type0(fn, 0x11c8, 0x0830, 0x068000, 0x01, 0x11c8, 0x0830);
	rc = fab_func_add_bar(fn, NTB_BAR_REGS, NTB_REGS_SIZE, false, false, true);
	if (!rc)
		rc = fab_func_add_bar(fn, NTB_BAR_LUT, p->ntb.bar_size, true, true, false);
	if (rc) {
		snprintf(b->err, b->errlen, "%s: NTB %s: BAR setup failed: %s",
			 b->h->t->name, p->ntb.name, strerror(-rc));
		return rc;
	}
	fab_cap_pm(fn);
	fab_cap_msi(fn, 0);
	fab_cap_pcie(fn, FAB_PCIE_ENDPOINT, p->link, 0);
	fab_cap_msix(fn, p->ntb.doorbells ? p->ntb.doorbells : 1, NTB_BAR_REGS,
		     NTB_MSIX_TABLE, NTB_MSIX_PBA);
	rc = fab_msix_reset_table(fn);
	if (rc)
		return rc;
	rc = ntb_create(b->h, fn, &p->ntb, b->ntb_count, &ntb);
	if (rc)
		return rc;
	b->h->ntbs[b->ntb_count++] = ntb;
	fn->ntb = ntb;
	return 0;
}

/*
 * An endpoint: function 0 from the port's device, functions 1..7 from its
 * 'functions' (then function 0's Header Type has the Multi-Function bit).
 * Without ARI, each PF's VFs take the routing IDs after all physical
 * functions and the VFs of the PFs before it (First VF Offset, stride 1).
 */
static int build_device(struct build_ctx *b, const struct topo_port *p, struct fab_func *port_fn)
{
	const struct topo_device *td = &p->dev;
	unsigned nphys = 1 + td->nfuncs, vfs_before = 0;
	struct fab_func *fn0 = NULL;

	for (unsigned f = 0; f < nphys; f++) {
		const struct topo_device *d = f ? &td->funcs[f - 1] : td;
		struct fab_func *fn = fab_func_alloc(b->h, FAB_FN_ENDPOINT, d->name, port_fn, 0,
						     (uint8_t)f);
		int rc;

		if (!fn)
			return -ENOMEM;
		fn->link = p->link;
		fn->tdev = d;
		fn->lendable = d->lendable;
		fn->sriov_first_off = (uint16_t)(nphys - f + vfs_before);
		vfs_before += d->sriov_vfs;
		snprintf(fn->model, sizeof(fn->model), "%s", d->model);
		rc = b->ep_init ? b->ep_init(fn, d, b->err, b->errlen) : -ENOTSUP;
		if (rc)
			return rc;
		if (!f)
			fn0 = fn;
	}
	if (nphys > 1)
		fab_cfg_set8(&fn0->cfg, PCI_HEADER_TYPE,
			     fab_cfg_get8(&fn0->cfg, PCI_HEADER_TYPE) | 0x80);
	return 0;
}

static int build_port_slot(struct build_ctx *b, const struct topo_port *p,
			   struct fab_func *port_fn, unsigned depth)
{
	if (depth > TOPO_MAX_DEPTH)
		return -ELOOP;
	switch (p->kind) {
	case TOPO_SLOT_EMPTY:
		/* No presence: clear Presence Detect State. */
		return 0;
	case TOPO_SLOT_SWITCH:
		return build_switch(b, p, port_fn, depth);
	case TOPO_SLOT_NTB:
		return build_ntb(b, p, port_fn);
	case TOPO_SLOT_DEVICE:
		return build_device(b, p, port_fn);
	}
	return -EINVAL;
}

static void clear_presence(struct fab_func *port)
{
	uint16_t off = fab_cfg_find_cap(&port->cfg, PCI_CAP_ID_EXP);

	if (off && port->nchildren == 0) {
		fab_cfg_set16(&port->cfg, off + PCI_EXP_SLTSTA, 0);
		fab_cfg_set16(&port->cfg, off + PCI_EXP_LNKSTA,
			      fab_cfg_get16(&port->cfg, off + PCI_EXP_LNKSTA) &
			      (uint16_t)~PCI_EXP_LNKSTA_DLLLA);
	}
}

static int count_ntbs(const struct topo_host *h, const struct topo_ntb *n, uint32_t i,
		      void *arg)
{
	(*(uint32_t *)arg)++;
	return 0;
}

static int build_host(struct build_ctx *b)
{
	struct fab_host *h = b->h;
	const struct topo_host *t = h->t;
	struct fab_func *rc;
	uint32_t n = 0;
	int m;

	h->low_ram = t->ram_size < (3ull << 30) ? t->ram_size : (3ull << 30);
	h->high_ram = t->ram_size - h->low_ram;
	m = fab_mem_create(h, "ram", t->ram_size, true);
	if (m < 0) {
		snprintf(b->err, b->errlen, "host %u: cannot create RAM memfd: %s", t->id,
			 strerror(-m));
		return m;
	}
	topo_for_each_ntb(t, count_ntbs, &n);
	h->ntbs = calloc(n ? n : 1, sizeof(*h->ntbs));
	if (!h->ntbs)
		return -ENOMEM;

	rc = fab_func_alloc(h, FAB_FN_HOSTBRIDGE, "host-bridge", NULL, 0, 0);
	if (!rc)
		return -ENOMEM;
	rc->latency_ns = t->rc_latency_ns;
	snprintf(rc->model, sizeof(rc->model), "root-complex");
	fab_func_type0(rc, RC_VENDOR, RC_DEVICE, 0x060000, 0x04, RC_VENDOR, RC_DEVICE);
	fab_cfg_set8(&rc->cfg, PCI_INTERRUPT_PIN, 0);
	fab_cap_pcie(rc, FAB_PCIE_RC_INTEGRATED, (struct topo_link){ 3, 16 }, 0);
	h->rc = rc;

	for (uint32_t i = 0; i < t->nports; i++) {
		char name[TOPO_NAME_MAX];
		struct fab_func *rp;
		int e;

		snprintf(name, sizeof(name), "root-port%u", i);
		rp = fab_func_alloc(h, FAB_FN_ROOTPORT, name, NULL, (uint8_t)(i + 1), 0);
		if (!rp)
			return -ENOMEM;
		rp->link = t->ports[i].link;
		/* The root complex's latency is counted once, at its own hop. */
		rp->latency_ns = 0;
		snprintf(rp->model, sizeof(rp->model), "root-port");
		fab_func_type1(rp, RC_VENDOR, RP_DEVICE, 0x04);
		fab_cap_pm(rp);
		fab_cap_msi(rp, 0);
		fab_cap_pcie(rp, FAB_PCIE_ROOT_PORT, t->ports[i].link, i + 1);
		fab_ecap_acs(rp, PCI_ACS_SV | PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF, 0);
		e = build_port_slot(b, &t->ports[i], rp, 0);
		if (e) {
			if (!b->err[0])
				snprintf(b->err, b->errlen, "host %u root port %u: %s", t->id, i,
					 strerror(-e));
			return e;
		}
	}
	for (uint32_t i = 0; i < h->nfuncs; i++)
		if (h->funcs[i]->kind == FAB_FN_ROOTPORT || h->funcs[i]->kind == FAB_FN_SW_DOWN)
			clear_presence(h->funcs[i]);
	h->nntbs = b->ntb_count;
	return 0;
}

static void host_iommu_changed(void *arg)
{
	fab_host_tables_changed(arg);
}

int fab_host_create(struct fab_world *w, const struct topo *t, uint32_t host_index,
		    fab_endpoint_init_fn ep_init, struct fab_host **out,
		    char *err, size_t errlen)
{
	struct build_ctx b = { .ep_init = ep_init, .err = err, .errlen = errlen };
	struct fab_host *h;
	int rc;

	if (errlen)
		err[0] = '\0';
	if (host_index >= t->nhosts)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->world = w;
	h->topo = t;
	fab_intc_init(&h->intc);
	{
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&h->lock, &a);
		pthread_mutexattr_destroy(&a);
	}
	h->t = &t->hosts[host_index];
	h->id = h->t->id;
	h->index = host_index;
	b.h = h;
	h->iommu = iommu_create(h->t->iommu, host_iommu_changed, h);
	h->cache = fab_route_cache_create(4096);
	if (!h->iommu || !h->cache) {
		fab_host_destroy(h);
		return -ENOMEM;
	}
	rc = build_host(&b);
	if (rc) {
		fab_host_destroy(h);
		return rc;
	}
	*out = h;
	return 0;
}

void fab_host_destroy(struct fab_host *h)
{
	if (!h)
		return;
	/* The drivers go before the adapters they are bound to. */
	if (h->ntb_os && h->ntb_release)
		h->ntb_release(h->ntb_os);
	h->ntb_os = NULL;
	for (uint32_t i = 0; i < h->nntbs; i++)
		ntb_destroy(h->ntbs[i]);
	free(h->ntbs);
	for (uint32_t i = 0; i < h->nfuncs; i++) {
		free(h->funcs[i]->children);
		free(h->funcs[i]->vfs);
		free(h->funcs[i]);
	}
	for (uint32_t i = 0; i < h->nmems; i++) {
		if (h->mems[i].map)
			munmap(h->mems[i].map, h->mems[i].size);
		close(h->mems[i].fd);
	}
	pthread_mutex_destroy(&h->lock);
	iommu_destroy(h->iommu);
	fab_route_cache_destroy(h->cache);
	free(h);
}

void fab_host_tables_changed(struct fab_host *h)
{
	if (h->world) {
		__atomic_fetch_add(&h->world->epoch, 1, __ATOMIC_ACQ_REL);
		if (h->world->ops && h->world->ops->invalidate)
			h->world->ops->invalidate(h->world, h->id);
	}
}
