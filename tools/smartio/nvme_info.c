// SPDX-License-Identifier: MIT
/*
 * smartio nvme identify and list: the controller and namespace summary
 * (Identify through SMIO_NVME_ADMIN, as nvme-cli's id-ctrl/id-ns would give
 * it) and the host's NVMe functions with their driver state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "nvme_priv.h"
#include "util/cli_conv.h"
#include "util/json_out.h"

/* ---------- identify ---------- */

static void trim(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n && (dst[n - 1] == ' ' || dst[n - 1] == '\0'))
		dst[--n] = '\0';
}

unsigned nvme_ns_lba_shift(const struct nvme_id_ns *ns)
{
	unsigned f = ns->flbas & 0xf;

	return f <= ns->nlbaf ? ns->lbaf[f].ds : 0;
}

static void size_str(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;
	double v = (double)bytes;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

int nvme_get_ns(struct nconn *c, uint32_t nsid, struct nvme_id_ns *ns)
{
	uint16_t st = 0;
	int rc = nvme_admin(c, nvme_admin_identify, nsid, NVME_IDENTIFY_CNS_NS, ns, sizeof(*ns),
		       &st);

	if (rc > 0)
		cli_err("Identify Namespace %u: NVMe status 0x%03x", nsid, st);
	else if (rc < 0)
		cli_err("Identify Namespace %u: %s", nsid, nvme_errstr(rc));
	return rc;
}

static int ns_json(struct json_object *arr, uint32_t nsid, const struct nvme_id_ns *ns,
		   unsigned shift)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_uint(o, "nsid", nsid) || smio_json_add_uint(o, "nsze", ns->nsze) ||
	    smio_json_add_uint(o, "ncap", ns->ncap) ||
	    smio_json_add_uint(o, "lba_size", 1u << shift) ||
	    smio_json_add_uint(o, "bytes", (uint64_t)ns->nsze << shift)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

static struct json_object *ctrl_json(const struct nconn *c, const struct nvme_id_ctrl *id,
				     const char *b, const char *mn, const char *sn, const char *fr)
{
	struct json_object *o = json_object_new_object();

	if (o && (smio_json_add_uint(o, "host", c->host) || smio_json_add_str(o, "bdf", b) ||
		  smio_json_add_uint(o, "vid", id->vid) || smio_json_add_str(o, "model", mn) ||
		  smio_json_add_str(o, "serial", sn) || smio_json_add_str(o, "firmware", fr) ||
		  smio_json_add_uint(o, "mdts", id->mdts) ||
		  smio_json_add_uint(o, "max_transfer", id->mdts ? 4096u << id->mdts : 0) ||
		  smio_json_add_uint(o, "nn", id->nn))) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

int nvme_do_identify(struct nconn *c, uint32_t only_ns, bool json)
{
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	struct nvme_id_ns *ns = calloc(1, sizeof(*ns));
	uint32_t *list = calloc(1, 4096);
	struct json_object *jo = NULL, *jns = NULL;
	char mn[41], sn[21], fr[9], b[16], sz[32];
	unsigned n = 0;
	uint16_t st = 0;
	int rc = -ENOMEM;

	if (!id || !ns || !list)
		goto out;
	rc = nvme_admin(c, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, id, sizeof(*id), &st);
	if (!rc)
		rc = nvme_admin(c, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, list,
			   4096, &st);
	if (rc) {
		if (rc > 0)
			cli_err("Identify: NVMe status 0x%03x", st);
		else
			cli_err("%s: %s", c->dev_opt ? c->dev_opt : "nvme", nvme_errstr(rc));
		goto out;
	}
	trim(mn, id->mn, sizeof(id->mn));
	trim(sn, id->sn, sizeof(id->sn));
	trim(fr, id->fr, sizeof(id->fr));
	nvme_bdf_str(b, sizeof(b), c->bdf);
	if (json) {
		rc = -ENOMEM;
		jo = ctrl_json(c, id, b, mn, sn, fr);
		jns = json_object_new_array();
		if (!jo || !jns)
			goto oom;
	} else {
		printf("%s on host %u\n", b, c->host);
		printf("  model            %s\n", mn);
		printf("  serial           %s\n", sn);
		printf("  firmware         %s\n", fr);
		printf("  vendor           %04x\n", id->vid);
		if (id->mdts)
			printf("  max transfer     %u KiB (MDTS %u)\n", (4096u << id->mdts) / 1024,
			       id->mdts);
		else
			printf("  max transfer     unlimited (MDTS 0)\n");
		printf("  namespaces       %u (NN)\n", id->nn);
	}
	for (unsigned i = 0; i < 1024 && list[i]; i++) {
		unsigned shift;

		if (only_ns && list[i] != only_ns)
			continue;
		rc = nvme_get_ns(c, list[i], ns);
		if (rc)
			goto out;
		shift = nvme_ns_lba_shift(ns);
		size_str(sz, sizeof(sz), ns->nsze << shift);
		if (json) {
			rc = ns_json(jns, list[i], ns, shift);
			if (rc)
				goto oom;
		} else {
			printf("  ns %-4u          %s, %" PRIu64 " blocks of %u bytes (LBA format %u)\n",
			       list[i], sz, (uint64_t)ns->nsze, 1u << shift, ns->flbas & 0xf);
		}
		n++;
	}
	if (only_ns && !n) {
		cli_err("namespace %u is not active on %s", only_ns, b);
		rc = -ENXIO;
		goto out;
	}
	rc = 0;
	if (json) {
		rc = smio_json_add(jo, "namespaces", jns);
		jns = NULL;                      /* jo holds it, or it was released */
		if (rc)
			goto oom;
		rc = cli_json_print(jo);
	}
	goto out;
oom:
	cli_err("identify: out of memory");
out:
	json_object_put(jns);
	json_object_put(jo);
	free(id);
	free(ns);
	free(list);
	return rc;
}

/* ---------- list ---------- */

static int func_json(struct json_object *arr, const char *b, const char *name, bool driver,
		     bool lendable, const char *sn, const char *mn)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (smio_json_add_str(o, "bdf", b) || smio_json_add_str(o, "name", name) ||
	    smio_json_add_str(o, "driver", driver ? "nvme" : NULL) ||
	    smio_json_add_bool(o, "lendable", lendable) || smio_json_add_str(o, "serial", sn) ||
	    smio_json_add_str(o, "model", mn)) {
		json_object_put(o);
		return -ENOMEM;
	}
	return smio_json_push(arr, o);
}

int nvme_do_list(struct nconn *c, bool json)
{
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	struct json_object *arr = NULL;
	struct smio_func_list *l = NULL;
	unsigned shown = 0;
	int rc;

	if (!id)
		return -ENOMEM;
	rc = nvme_func_list(c, &l);
	if (rc) {
		cli_err("host %u: %s", c->host, cli_strerror(rc));
		free(id);
		return rc;
	}
	if (json) {
		arr = json_object_new_array();
		if (!arr)
			goto oom;
	} else {
		printf("%-8s %-10s %-22s %-20s %s\n", "BDF", "NAME", "DRIVER", "SERIAL", "MODEL");
	}
	for (uint32_t i = 0; i < l->n; i++) {
		char b[16], mn[41] = "", sn[21] = "";
		const char *state;
		uint16_t st = 0;
		uint32_t cls;

		if (nvme_func_class(c, l->f[i].bdf, &cls) || cls != NVME_CLASS)
			continue;
		c->bdf = l->f[i].bdf;
		rc = nvme_admin(c, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, id, sizeof(*id),
			   &st);
		if (!rc) {
			state = "nvme";
			trim(mn, id->mn, sizeof(id->mn));
			trim(sn, id->sn, sizeof(id->sn));
		} else if (rc == -ENODEV) {
			state = l->f[i].lendable ? "none (lendable)" : "none";
		} else {
			state = "nvme (not answering)";
		}
		nvme_bdf_str(b, sizeof(b), l->f[i].bdf);
		if (json) {
			if (func_json(arr, b, l->f[i].name, !rc, l->f[i].lendable, sn, mn))
				goto oom;
		} else {
			printf("%-8s %-10s %-22s %-20s %s\n", b, l->f[i].name, state, sn[0] ? sn : "-",
			       mn[0] ? mn : "-");
		}
		shown++;
	}
	rc = 0;
	if (json)
		rc = cli_json_print(arr);
	else if (!shown)
		printf("(no NVMe functions on host %u)\n", c->host);
	goto out;
oom:
	cli_err("list: out of memory");
	rc = -ENOMEM;
out:
	json_object_put(arr);
	free(l);
	free(id);
	return rc;
}
