// SPDX-License-Identifier: MIT
/*
 * smartio nvme copy: blocks from one controller of the host to another
 * through its NVMe driver (NVME_COPY), with --buffer p2pmem through p2pmem
 * that P2PDMA's orchestrator picks near both, so the data never passes the
 * host's RAM (as Linux's nvmet serves its transfers from `p2pmem`).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "nvme_copy.h"
#include "util/json_out.h"

#define COPY_TIMEOUT_MS  120000

static void bdf_fmt(char *s, size_t n, uint16_t bdf)
{
	snprintf(s, n, "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
}

int nvme_copy_run(int fd, const struct smio_nvme_copy *m, bool json)
{
	struct smio_nvme_copy_result r;
	char prov[16] = "", src[16], dst[16];
	uint32_t rlen = 0;
	int rc;

	rc = smio_call(fd, SMIO_NVME_COPY, m, sizeof(*m), &r, sizeof(r), &rlen, NULL,
		       COPY_TIMEOUT_MS);
	if (rc) {
		cli_err("nvme copy: %s%s", cli_strerror(rc),
			rc == -ENODEV && (m->flags & SMIO_NVME_COPY_F_P2PMEM) ?
			" (no published p2pmem is reachable by both controllers, or one has no "
			"NVMe driver; --buffer p2pmem,fallback copies through host memory then)" :
			"");
		return rc;
	}
	bdf_fmt(src, sizeof(src), m->src_bdf);
	bdf_fmt(dst, sizeof(dst), m->dst_bdf);
	if (r.provider)
		snprintf(prov, sizeof(prov), "0x%08x", r.provider);
	if (json) {
		struct json_object *o = json_object_new_object(), *p = NULL;
		int bad;

		bad = !o || smio_json_add_str(o, "from", src) || smio_json_add_str(o, "to", dst) ||
		      smio_json_add_uint(o, "bytes", r.bytes) ||
		      smio_json_add_double(o, "seconds", (double)r.elapsed_ns / 1e9, "%.6f") ||
		      smio_json_add_uint(o, "status", r.status);
		if (!bad && r.provider) {
			p = json_object_new_object();
			bad = !p || smio_json_add_str(p, "provider", prov) ||
			      smio_json_add_uint(p, "bar", r.bar) ||
			      smio_json_add_uint(p, "hops", r.hops);
			if (bad)
				json_object_put(p);
			else
				bad = smio_json_add(o, "p2pmem", p);
		} else if (!bad) {
			bad = smio_json_add_null(o, "p2pmem");
		}
		rc = bad ? -ENOMEM : cli_json_print(o);
		json_object_put(o);
		if (rc)
			return rc;
	} else {
		if (r.provider)
			printf("copied %" PRIu64 " bytes from %s to %s in %.3f s through p2pmem of "
			       "%s BAR%u (%u hops)\n", r.bytes, src, dst,
			       (double)r.elapsed_ns / 1e9, prov, r.bar, r.hops);
		else
			printf("copied %" PRIu64 " bytes from %s to %s in %.3f s through host "
			       "memory\n", r.bytes, src, dst, (double)r.elapsed_ns / 1e9);
	}
	if (r.status) {
		cli_err("nvme copy: NVMe status 0x%x after %" PRIu64 " bytes", r.status, r.bytes);
		return -EIO;
	}
	return 0;
}
