// SPDX-License-Identifier: MIT
/*
 * NVMe controller model: topology parameters, feature defaults, asynchronous
 * events and the error log.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctrl.h"
#include "devices/ids.h"
#include "smartio/timing.h"

void nvme_features_default(struct nvme_ctrl *c)
{
	memset(&c->feat, 0, sizeof(c->feat));
	c->feat.arb = 3;                        /* burst 8, all weights 1 */
	c->feat.tmpth_over = 343;               /* 70 C, == WCTEMP */
	c->feat.tmpth_under = 0;
	c->feat.vwc = 1;                        /* write cache enabled */
	memset(c->iv_cd, 0, c->nvec);
	c->alloc_nsq = c->nqueues;
	c->alloc_ncq = c->nqueues;
}

/*
 * Queue an asynchronous event. Like real controllers, once an event of a type
 * is reported that type is masked until the host reads the associated log
 * page; events meanwhile wait here (a repeat of a waiting event is dropped).
 */
void nvme_aen(struct nvme_ctrl *c, unsigned type, unsigned info, unsigned lid)
{
	uint32_t dw0 = nvme_aen_dw0(type, info, lid);

	for (unsigned i = 0; i < c->naen; i++)
		if (c->aen[i] == dw0)
			return;
	if (c->naen < NVME_AEN_QUEUE)
		c->aen[c->naen++] = dw0;
}

void nvme_log_error(struct nvme_ctrl *c, uint16_t sqid, uint16_t cid, uint16_t st, uint32_t nsid,
		    uint64_t lba)
{
	struct nvme_error_log_page *e;

	/* newest first: shift the ring down by one entry */
	memmove(&c->errlog[1], &c->errlog[0], sizeof(c->errlog) - sizeof(c->errlog[0]));
	e = &c->errlog[0];
	memset(e, 0, sizeof(*e));
	e->error_count = ++c->err_count;
	e->sqid = sqid;
	e->cmdid = cid;
	e->status_field = (uint16_t)(st << 1);
	e->parm_error_location = 0xffff;
	e->lba = lba;
	e->nsid = nsid;
}

/* ---- Topology parameters ---- */

static int param_u64(struct dev_instance *d, const char *key, uint64_t def, uint64_t min,
		     uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	int rc = dev_param_u64(d, key, def, out, err, errlen);

	if (rc)
		return rc;
	if (*out < min || *out > max) {
		snprintf(err, errlen, "device %s: parameter %s must be %llu..%llu, not %llu",
			 d->fn.td ? d->fn.td->name : "?", key, (unsigned long long)min,
			 (unsigned long long)max, (unsigned long long)*out);
		return -EINVAL;
	}
	return 0;
}

int nvme_parse_params(struct nvme_ctrl *c, char *err, size_t errlen)
{
	struct dev_instance *d = c->d;
	const char *name = d->fn.td ? d->fn.td->name : "nvme";
	const char *serial = dev_param(d, "serial");
	uint64_t v;
	int rc;

	if ((rc = param_u64(d, "queues", 32, 1, 1024, &v, err, errlen)))
		return rc;
	c->nqueues = (uint32_t)v;
	c->nvec = c->nqueues + 1;
	if ((rc = param_u64(d, "mqes", 1023, 1, 65535, &v, err, errlen)))
		return rc;
	c->mqes = (uint32_t)v;
	if ((rc = param_u64(d, "dstrd", 0, 0, 15, &v, err, errlen)))
		return rc;
	c->dstrd = (unsigned)v;
	if (!d->fn.bar[0] || d->fn.bar_size[0] < nvme_db_end(c->nqueues + 1, c->dstrd)) {
		snprintf(err, errlen,
			 "device %s: doorbells of %u queue pairs with stride %u end at 0x%llx, "
			 "beyond BAR0 (%llu bytes): lower queues or dstrd",
			 name, c->nqueues + 1, 4u << c->dstrd,
			 (unsigned long long)nvme_db_end(c->nqueues + 1, c->dstrd),
			 (unsigned long long)d->fn.bar_size[0]);
		return -EINVAL;
	}
	if ((rc = param_u64(d, "latency_us", 0, 0, 10000000, &v, err, errlen)))
		return rc;
	c->latency_ns = v * 1000;
	if ((rc = param_u64(d, "bandwidth_mbps", 0, 0, 1000000, &c->bw_mbps, err, errlen)))
		return rc;
	c->timed = c->latency_ns || c->bw_mbps || d->fn.timing;
	/* Faithful mode's media time: the calibration's read (an Optane-class
	 * drive, docs/timing-model.md), unless latency_us or these say otherwise. */
	v = d->fn.timing ? d->fn.timing->nvme_media_read_ns : 0;
	if (c->latency_ns)
		v = c->latency_ns;
	if ((rc = param_u64(d, "media_read_ns", v, 0, 1000000000ull, &c->media_read_ns, err,
			    errlen)))
		return rc;
	if ((rc = param_u64(d, "media_write_ns", c->media_read_ns, 0, 1000000000ull,
			    &c->media_write_ns, err, errlen)))
		return rc;
	if ((rc = param_u64(d, "wrr", 1, 0, 1, &v, err, errlen)))
		return rc;
	c->wrr = v;
	if ((rc = param_u64(d, "slots", 0, 0, NVME_PENDING_MAX, &v, err, errlen)))
		return rc;
	c->slots = (uint32_t)v;
	if ((rc = param_u64(d, "cmb", 0, 0, 1ull << 40, &c->cmb_size, err, errlen)))
		return rc;
	if (d->fn.vf_index)
		c->cmb_size = 0;   /* the CMB is the PF's alone (VFs have no BAR2) */
	/* Data (PRP targets) in the CMB: CMBSZ.RDS and WDS, what makes it p2pmem. */
	if ((rc = param_u64(d, "cmb_data", 0, 0, 1, &v, err, errlen)))
		return rc;
	c->cmb_data = v && c->cmb_size;
	if (c->cmb_size) {
		if (c->cmb_size < 4096 || (c->cmb_size & (c->cmb_size - 1)) || !d->fn.bar[2] ||
		    d->fn.bar_size[2] < c->cmb_size) {
			snprintf(err, errlen, "device %s: cmb must be a power of two >= 4K that fits "
				 "BAR2 (BAR2 %s)", name, d->fn.bar[2] ? "too small" : "absent");
			return -EINVAL;
		}
	}
	if (serial && strlen(serial) > 20) {
		snprintf(err, errlen, "device %s: serial '%s' is longer than 20 characters",
			 name, serial);
		return -EINVAL;
	}
	snprintf(c->serial, sizeof(c->serial), "%s", serial ? serial : "");
	if (d->fn.vf_index && serial)   /* each VF is a controller of its own */
		snprintf(c->serial, sizeof(c->serial), "%.14s-VF%u", serial, d->fn.vf_index);
	else if (d->fn.vf_index)
		snprintf(c->serial, sizeof(c->serial), "SMARTIO-%.6s-VF%u", name, d->fn.vf_index);
	else if (!serial)
		snprintf(c->serial, sizeof(c->serial), "SMARTIO-%.12s", name);
	c->vid = d->fn.td && d->fn.td->vendor_id ? d->fn.td->vendor_id : SMARTIO_PCI_VENDOR;
	return 0;
}
