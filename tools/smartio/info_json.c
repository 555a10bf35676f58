// SPDX-License-Identifier: MIT
/*
 * --json of 'smartio ntb [info]' and 'smartio iommu [faults]': the same
 * facts as their text, in the JSON conventions of docs/cli.md (addresses
 * and sizes as "0x..." strings, BDFs as "BB:DD.F").
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

static int add_bdf(struct json_object *o, const char *key, uint16_t bdf)
{
	char b[16];

	snprintf(b, sizeof(b), "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
	return smio_json_add_str(o, key, b);
}

int cli_ntb_info_json(uint32_t host, const struct smio_ntb_info *ni)
{
	static const char *const peer[] = { "none", "ntb", "switch" };
	struct json_object *o = json_object_new_object();
	int rc = -ENOMEM;

	if (o && !smio_json_add_uint(o, "host", host) && !smio_json_add_uint(o, "ntb", ni->ntb) &&
	    !smio_json_add_str(o, "name", ni->name) && !add_bdf(o, "bdf", ni->bdf) &&
	    !add_hex(o, "bar_addr", ni->bar_addr) && !add_hex(o, "bar_size", ni->bar_size) &&
	    !add_hex(o, "window_size", ni->win_size) &&
	    !smio_json_add_uint(o, "lut_entries", ni->lut_entries) &&
	    !smio_json_add_uint(o, "lut_used", ni->lut_used) &&
	    !smio_json_add_uint(o, "rid_entries", ni->rid_entries) &&
	    !smio_json_add_uint(o, "rid_used", ni->rid_used) &&
	    !smio_json_add_bool(o, "link_up", ni->link_up) &&
	    !smio_json_add_str(o, "cable", ni->peer_kind < 3 ? peer[ni->peer_kind] : "?") &&
	    !smio_json_add_uint(o, "doorbells", ni->doorbells) &&
	    !add_hex(o, "doorbells_pending", ni->db_pending) &&
	    !smio_json_add_uint(o, "scratchpads", ni->scratchpads) &&
	    !smio_json_add_uint(o, "dma_channels", ni->dma_channels))
		rc = cli_json_print(o);
	else
		cli_err("out of memory");
	json_object_put(o);
	return rc;
}

int cli_iommu_faults_json(uint32_t host, const struct smio_iommu_faults *f)
{
	static const char *const why[] = { "?", "no domain", "not present", "read denied",
					   "write denied", "address width" };
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	int rc = -ENOMEM;

	if (!o || !arr || smio_json_add_uint(o, "host", host) ||
	    smio_json_add_uint(o, "total", f->total))
		goto out;
	for (uint32_t i = 0; i < f->n; i++) {
		const struct smio_iommu_fault *x = &f->f[i];
		struct json_object *e = json_object_new_object();

		if (!e || smio_json_add_uint(e, "seq", x->seq) || add_bdf(e, "requester", x->rid) ||
		    smio_json_add_str(e, "access", x->write ? "write" : "read") ||
		    add_hex(e, "iova", x->iova) || smio_json_add_uint(e, "domain", x->domain) ||
		    smio_json_add_str(e, "reason", x->reason < 6 ? why[x->reason] : "?")) {
			json_object_put(e);
			goto out;
		}
		if (smio_json_push(arr, e))
			goto out;
	}
	rc = smio_json_add(o, "recent", arr);
	arr = NULL;                 /* o holds it, or it was released */
	if (!rc)
		rc = cli_json_print(o);
out:
	if (rc == -ENOMEM)
		cli_err("out of memory");
	json_object_put(arr);
	json_object_put(o);
	return rc;
}
