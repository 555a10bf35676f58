// SPDX-License-Identifier: MIT
/*
 * STATS, STATS_CLEAR and EVENTS (diag.h): this host's counters as one JSON
 * object, their zero point moved, and the event log. Counters are read as
 * they stand (relaxed loads, no lock on the devices' data path); the
 * schema is docs/protocol.md's "Diagnostics".
 *
 * Clearing: the devices' own counters are set to zero; counters that other
 * parts of the daemon report elsewhere (the IOMMU's fault count, an adapter's
 * doorbells and link errors) keep running, and a zero point is remembered
 * instead, which STATS subtracts.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "devices/dev.h"
#include "diag.h"
#include "fabric/iommu.h"
#include "fabric/ntb.h"
#include "host/pci.h"
#include "lend_priv.h"
#include "util/json_out.h"

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void bdf_str(uint16_t bdf, char *s, size_t n)
{
	snprintf(s, n, "%02x:%02x.%x", FAB_BDF_BUS(bdf), FAB_BDF_DEV(bdf), FAB_BDF_FN(bdf));
}

static int adapter_json(struct smd *d, uint32_t i, struct json_object *arr)
{
	struct fab_ntb *n = d->host->ntbs[i];
	const uint64_t *base = smd_diag_base(d)->ntb + 3 * i;
	struct json_object *o = json_object_new_object();
	char bdf[16];
	int rc;

	if (!o)
		return -ENOMEM;
	bdf_str(fab_func_bdf(n->fn), bdf, sizeof(bdf));
	rc = smio_json_add_uint(o, "index", i) || smio_json_add_str(o, "name", n->fn->name) ||
	     smio_json_add_str(o, "bdf", bdf) ||
	     smio_json_add_str(o, "link", n->link_up ? "up" : "down") ||
	     (n->t->peer_kind == TOPO_PEER_NTB ?
	      smio_json_add_uint(o, "peer_host", d->topo->hosts[n->t->peer_host].id) :
	      smio_json_add_null(o, "peer_host")) ||
	     smio_json_add_str(o, "cable", n->t->peer_kind == TOPO_PEER_NTB ? "ntb" :
			       n->t->peer_kind == TOPO_PEER_CSWITCH ? "switch" : "none") ||
	     smio_json_add_uint(o, "link_errors", n->link_downs - base[1]) ||
	     smio_json_add_uint(o, "link_drops", ld(&n->link_drops) - base[2]) ||
	     smio_json_add_uint(o, "doorbells", n->db_rung - base[0]) ||
	     smio_json_add_uint(o, "lut_used", ntb_lut_used(n)) ||
	     smio_json_add_uint(o, "lut_total", n->nlut) ||
	     smio_json_add_uint(o, "rid_used", ntb_rid_used(n)) ||
	     smio_json_add_uint(o, "rid_total", n->nrid);
	if (rc) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

/* Interrupts per vector, up to the last vector that fired. */
static int irq_json(const struct dev_stats *s, struct json_object *o, uint64_t *total)
{
	struct json_object *arr = json_object_new_array();
	unsigned last = 0;

	*total = ld(&s->irq_other);
	for (unsigned v = 0; v < DEV_STATS_VECS; v++)
		if (ld(&s->irq[v])) {
			last = v + 1;
			*total += ld(&s->irq[v]);
		}
	if (!arr)
		return -ENOMEM;
	for (unsigned v = 0; v < last; v++)
		if (json_object_array_add(arr, json_object_new_uint64(ld(&s->irq[v])))) {
			json_object_put(arr);
			return -ENOMEM;
		}
	if (smio_json_add(o, "irqs", arr) || smio_json_add_uint(o, "irqs_other",
								 ld(&s->irq_other)))
		return -ENOMEM;
	return 0;
}

/* Bytes of fn's memory BARs read by DMA routed on this host (fab_mem.dma_reads):
 * peer-to-peer reads by other devices, e.g. an NVMe fetching an SQ placed there. */
static uint64_t bar_reads(const struct fab_func *fn)
{
	uint64_t n = 0;

	for (unsigned b = 0; b < sizeof(fn->bars) / sizeof(fn->bars[0]); b++)
		if (fn->bars[b].present && fn->bars[b].mem >= 0)
			n += ld(&fn->host->mems[fn->bars[b].mem].dma_reads);
	return n;
}

static int device_json(struct fab_func *fn, struct dev_instance *in, struct json_object *arr,
		       uint64_t *dma_faults, const struct pci_p2pmem_stat *pm)
{
	const struct dev_stats *s = &in->stats;
	const uint64_t *v = s->v;
	struct json_object *o = json_object_new_object();
	bool nvme = !strcmp(in->ops->name, "nvme");
	uint64_t irqs = 0;
	char bdf[16];
	int rc;

	if (!o)
		return -ENOMEM;
	bdf_str(fab_func_bdf(fn), bdf, sizeof(bdf));
	rc = smio_json_add_str(o, "bdf", bdf) || smio_json_add_str(o, "name", fn->name) ||
	     smio_json_add_str(o, "model", in->ops->name);
	if (!rc && nvme)
		rc = smio_json_add_uint(o, "admin", ld(&v[DEV_ST_ADMIN])) ||
		     smio_json_add_uint(o, "read", ld(&v[DEV_ST_READ])) ||
		     smio_json_add_uint(o, "write", ld(&v[DEV_ST_WRITE])) ||
		     smio_json_add_uint(o, "other", ld(&v[DEV_ST_OTHER])) ||
		     smio_json_add_uint(o, "bytes_read", ld(&v[DEV_ST_BYTES_READ])) ||
		     smio_json_add_uint(o, "bytes_written", ld(&v[DEV_ST_BYTES_WRITTEN]));
	else if (!rc)
		rc = smio_json_add_uint(o, "ops", ld(&v[DEV_ST_OPS])) ||
		     smio_json_add_uint(o, "bytes", ld(&v[DEV_ST_BYTES_READ]));
	if (!rc)
		rc = smio_json_add_uint(o, "bar_reads", bar_reads(fn)) ||
		     smio_json_add_uint(o, "errors", ld(&v[DEV_ST_ERRORS])) ||
		     smio_json_add_uint(o, "dma_faults", ld(&v[DEV_ST_DMA_FAULTS])) ||
		     smio_json_add_uint(o, "flrs", ld(&v[DEV_ST_FLRS])) ||
		     irq_json(s, o, &irqs) || smio_json_add_uint(o, "interrupts", irqs);
	/* A P2PDMA provider's memory, as Linux's sysfs p2pmem/ shows it. */
	if (!rc && pm) {
		struct json_object *p = json_object_new_object();

		rc = !p || smio_json_add_bool(p, "published", pm->published) ||
		     smio_json_add_uint(p, "size", pm->size) ||
		     smio_json_add_uint(p, "available", pm->size - pm->allocated);
		if (rc)
			json_object_put(p);       /* NULL-safe */
		else
			rc = smio_json_add(o, "p2pmem", p);   /* takes p either way */
	}
	if (rc) {
		json_object_put(o);
		return -ENOMEM;
	}
	*dma_faults += ld(&v[DEV_ST_DMA_FAULTS]);
	return smio_json_push(arr, o);
}

/* DMA to or from each host's RAM by this host's devices: hosts with bytes only. */
static int ram_dma_json(struct smd *d, struct json_object *arr)
{
	int rc = 0;

	for (uint32_t i = 0; !rc && i < d->topo->nhosts && i < TOPO_MAX_HOSTS; i++) {
		uint64_t n = ld(&d->host->ram_dma[i]);
		struct json_object *o;

		if (!n)
			continue;
		o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		if (smio_json_add_uint(o, "host", d->topo->hosts[i].id) ||
		    smio_json_add_uint(o, "bytes", n)) {
			json_object_put(o);
			return -ENOMEM;
		}
		rc = smio_json_push(arr, o);
	}
	return rc;
}

static struct json_object *stats_json(struct smd *d)
{
	struct json_object *o = json_object_new_object(), *ads = json_object_new_array(),
			   *devs = json_object_new_array(), *brw = json_object_new_array(),
			   *ram = json_object_new_array();
	struct smd_diag_base *b = smd_diag_base(d);
	uint64_t dma_faults = 0, first, last;
	struct timespec now;
	int rc = !o || !ads || !devs || !brw || !ram || !b;

	for (uint32_t i = 0; !rc && i < d->host->nntbs; i++)
		rc = adapter_json(d, i, ads);
	fab_host_lock(d->host);     /* the PCI core's p2pmem, for a moment */
	for (uint32_t i = 0; !rc && i < d->host->nfuncs; i++) {
		struct fab_func *fn = d->host->funcs[i];
		struct dev_instance *in = fn->kind == FAB_FN_ENDPOINT ?
					  devrun_instance(d->devs, fn) : NULL;

		struct pci_dev *pd = in ? pci_get_dev(d->pci, fab_func_bdf(fn)) : NULL;
		struct pci_p2pmem_stat pm;

		if (in)
			rc = device_json(fn, in, devs, &dma_faults,
					 pd && !pci_p2pmem_stat(pd, &pm) ? &pm : NULL);
	}
	fab_host_unlock(d->host);
	if (!rc)
		rc = smd_lend_borrowed_json(d, brw);
	if (!rc)
		rc = ram_dma_json(d, ram);
	smd_events_copy(d, UINT64_MAX, 1, NULL, &first, &last);
	clock_gettime(CLOCK_MONOTONIC, &now);
	rc = rc || smio_json_add_uint(o, "host", d->host_id) ||
	     smio_json_add_str(o, "name", d->host->t->name) ||
	     smio_json_add_double(o, "uptime_s", (double)(now.tv_sec - d->started.tv_sec) +
				  (double)(now.tv_nsec - d->started.tv_nsec) / 1e9, "%.3f") ||
	     smio_json_add_bool(o, "iommu", d->host->iommu && iommu_enabled(d->host->iommu)) ||
	     smio_json_add_uint(o, "iommu_faults", (d->host->iommu ?
					iommu_fault_count(d->host->iommu) : 0) - b->iommu_faults) ||
	     smio_json_add_uint(o, "dma_faults", dma_faults) ||
	     smio_json_add_uint(o, "events_last", last);
	if (!rc) {
		rc = smio_json_add(o, "adapters", ads);
		ads = NULL;
	}
	if (!rc) {
		rc = smio_json_add(o, "devices", devs);
		devs = NULL;
	}
	if (!rc) {
		rc = smio_json_add(o, "borrowed", brw);
		brw = NULL;
	}
	if (!rc) {
		rc = smio_json_add(o, "ram_dma", ram);
		ram = NULL;
	}
	json_object_put(ads);
	json_object_put(devs);
	json_object_put(brw);
	json_object_put(ram);
	if (rc) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int h_stats(struct smd_req *r)
{
	struct smio_stats *h = r->out;
	struct json_object *o = stats_json(r->d);
	const char *s;
	size_t n;
	int rc = 0;

	if (!o)
		return -ENOMEM;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	n = s ? strlen(s) : 0;
	if (!n)
		rc = -ENOMEM;
	else if (n > SMIO_MAX_PAYLOAD - sizeof(*h))
		rc = -EMSGSIZE;      /* bounded by the protocol: no such host exists today */
	if (!rc) {
		*h = (struct smio_stats){ .len = (uint32_t)n };
		memcpy((uint8_t *)r->out + sizeof(*h), s, n);
		r->outlen = (uint32_t)(sizeof(*h) + n);
	}
	json_object_put(o);
	return rc;
}

int h_stats_clear(struct smd_req *r)
{
	struct smd *d = r->d;
	struct smd_diag_base *b = smd_diag_base(d);

	if (!b)
		return -ENODEV;
	for (uint32_t i = 0; i < d->host->nfuncs; i++) {
		struct fab_func *fn = d->host->funcs[i];
		struct dev_instance *in = fn->kind == FAB_FN_ENDPOINT ?
					  devrun_instance(d->devs, fn) : NULL;
		uint64_t *p;

		if (!in)
			continue;
		for (unsigned k = 0; k < sizeof(fn->bars) / sizeof(fn->bars[0]); k++)
			if (fn->bars[k].present && fn->bars[k].mem >= 0)
				__atomic_store_n(&d->host->mems[fn->bars[k].mem].dma_reads, 0,
						 __ATOMIC_RELAXED);
		p = (uint64_t *)&in->stats;
		for (size_t k = 0; k < sizeof(in->stats) / sizeof(uint64_t); k++)
			__atomic_store_n(&p[k], 0, __ATOMIC_RELAXED);
	}
	for (uint32_t i = 0; i < TOPO_MAX_HOSTS; i++)
		__atomic_store_n(&d->host->ram_dma[i], 0, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < d->host->nntbs; i++) {
		struct fab_ntb *n = d->host->ntbs[i];

		b->ntb[3 * i] = n->db_rung;
		b->ntb[3 * i + 1] = n->link_downs;
		b->ntb[3 * i + 2] = ld(&n->link_drops);
	}
	b->iommu_faults = d->host->iommu ? iommu_fault_count(d->host->iommu) : 0;
	return 0;
}

int h_events(struct smd_req *r)
{
	const struct smio_events_req *m = r->p;
	struct smio_events *o = r->out;
	struct smio_event *ev = (struct smio_event *)(o + 1);
	uint64_t first, last;
	uint32_t n;

	n = smd_events_copy(r->d, m->since, m->max, ev, &first, &last);
	*o = (struct smio_events){ .next = n ? ev[n - 1].seq : m->since, .first = first,
				   .last = last, .n = n };
	r->outlen = (uint32_t)(sizeof(*o) + (size_t)n * sizeof(*ev));
	return 0;
}
