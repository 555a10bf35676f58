// SPDX-License-Identifier: MIT
/*
 * Timing-model parameters: the built-in defaults and the calibration file
 * (topologies/timing.yaml, docs/timing-model.md). The defaults are the file's
 * values, so the model works without it; a test checks that they agree.
 *
 * The file is read like a topology: every key is known, every value has its
 * range, and the first problem is reported as "FILE:LINE: what is wrong".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libfyaml.h>

#include "yaml.h"

#include "smartio/timing.h"

#define PARAMS_FILE_MAX (1u << 20)
#define NS_MAX          1000000u
#define CZODIAC_NS      80      /* cZodiac: one CPUPort pass (see timing.yaml) */

void timing_params_default(struct timing_params *p)
{
	memset(p, 0, sizeof(*p));
	p->mps = 256;
	p->mrrs = 512;
	p->rcb = 64;
	p->address_bits = 64;
	p->ecrc = false;
	p->cable_ns = 10;
	p->nchips = 5;
	p->chips[0] = (struct timing_chip){ "PEX8733", 110 };
	p->chips[1] = (struct timing_chip){ "PEX8796", 150 };
	p->chips[2] = (struct timing_chip){ "PM8536", 170 };
	p->chips[3] = (struct timing_chip){ "PXH830", 110 };
	p->chips[4] = (struct timing_chip){ "cZodiac", CZODIAC_NS };
	snprintf(p->default_switch, sizeof(p->default_switch), "PEX8796");
	snprintf(p->default_ntb, sizeof(p->default_ntb), "PXH830");
	snprintf(p->default_cswitch, sizeof(p->default_cswitch), "PM8536");
	p->nrcs = 1;
	p->rcs[0] = (struct timing_rc){ .name = "xeon", .latency_ns = 120, .outstanding = 40,
					.iommu_read_split = 64, .completion_bytes = 64 };
	p->default_rc = 0;
	p->iotlb_hit_ns = 20;
	p->iotlb_miss_ns = 330;
	p->iommu_page = 4096;
	p->dram_read_ns = 200;
	p->dram_write_ns = 80;
	p->devmem_read_ns = 250;
	p->devmem_write_ns = 50;
	p->reg_read_ns = 150;
	p->reg_write_ns = 20;
	p->tags = 32;
	p->cpu_outstanding = 1;
	p->cpu_tlp_bytes = 64;
	p->cpu_copy_mbs = 5000;
	p->nvme_media_read_ns = 8000;
	p->nvme_sqe_bytes = 64;
	p->nvme_cqe_bytes = 16;
}

bool timing_params_equal(const struct timing_params *a, const struct timing_params *b)
{
	if (a->mps != b->mps || a->mrrs != b->mrrs || a->rcb != b->rcb ||
	    a->address_bits != b->address_bits || a->ecrc != b->ecrc ||
	    a->cable_ns != b->cable_ns || a->nchips != b->nchips || a->nrcs != b->nrcs ||
	    a->default_rc != b->default_rc || a->nhostmap != b->nhostmap ||
	    strcmp(a->default_switch, b->default_switch) || strcmp(a->default_ntb, b->default_ntb) ||
	    strcmp(a->default_cswitch, b->default_cswitch) ||
	    a->iotlb_hit_ns != b->iotlb_hit_ns || a->iotlb_miss_ns != b->iotlb_miss_ns ||
	    a->iommu_page != b->iommu_page || a->dram_read_ns != b->dram_read_ns ||
	    a->dram_write_ns != b->dram_write_ns || a->devmem_read_ns != b->devmem_read_ns ||
	    a->devmem_write_ns != b->devmem_write_ns || a->reg_read_ns != b->reg_read_ns ||
	    a->reg_write_ns != b->reg_write_ns || a->tags != b->tags ||
	    a->cpu_outstanding != b->cpu_outstanding || a->cpu_tlp_bytes != b->cpu_tlp_bytes ||
	    a->cpu_copy_mbs != b->cpu_copy_mbs ||
	    a->nvme_media_read_ns != b->nvme_media_read_ns ||
	    a->nvme_sqe_bytes != b->nvme_sqe_bytes || a->nvme_cqe_bytes != b->nvme_cqe_bytes)
		return false;
	for (uint32_t i = 0; i < a->nchips && i < TIMING_MAX_CHIPS; i++)
		if (strcmp(a->chips[i].name, b->chips[i].name) ||
		    a->chips[i].latency_ns != b->chips[i].latency_ns)
			return false;
	for (uint32_t i = 0; i < a->nrcs && i < TIMING_MAX_RCS; i++)
		if (strcmp(a->rcs[i].name, b->rcs[i].name) ||
		    a->rcs[i].latency_ns != b->rcs[i].latency_ns ||
		    a->rcs[i].outstanding != b->rcs[i].outstanding ||
		    a->rcs[i].iommu_read_split != b->rcs[i].iommu_read_split ||
		    a->rcs[i].completion_bytes != b->rcs[i].completion_bytes)
			return false;
	for (uint32_t i = 0; i < a->nhostmap && i < TIMING_MAX_HOSTMAP; i++)
		if (a->hostmap[i].host != b->hostmap[i].host || a->hostmap[i].rc != b->hostmap[i].rc)
			return false;
	return true;
}

/* ---------- the calibration file ---------- */

struct pb {
	const char *source;
	char *err;
	size_t errlen;
	bool failed;
};

static int perr(struct pb *b, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct pb *b, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed || !b->err || !b->errlen)
		return b->failed = true, -EINVAL;
	b->failed = true;
	n = snprintf(b->err, b->errlen, "%s:%d: ", b->source, line);
	if (n >= 0 && (size_t)n < b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int line_of(struct fy_node *n, int fallback)
{
	return yaml_line(n, fallback);
}

/* A scalar's text, NUL-terminated into buf; false if not a short scalar. */
static bool scalar(struct fy_node *n, char *buf, size_t cap)
{
	const char *s;
	size_t len;

	if (!n || fy_node_is_alias(n) || fy_node_get_type(n) != FYNT_SCALAR)
		return false;
	s = fy_node_get_scalar(n, &len);
	if (!s || len + 1 > cap)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return true;
}

static int get_u32(struct pb *b, struct fy_node *v, const char *key, uint32_t lo, uint32_t hi,
		   uint32_t *out)
{
	char buf[32], *end;
	unsigned long long x;

	if (!scalar(v, buf, sizeof(buf)) || !buf[0] || buf[0] == '-')
		return perr(b, line_of(v, 1), "'%s' must be a number from %u to %u", key, lo, hi);
	errno = 0;
	x = strtoull(buf, &end, 0);
	if (errno || *end || x < lo || x > hi)
		return perr(b, line_of(v, 1), "'%s' must be a number from %u to %u, not '%s'", key,
			    lo, hi, buf);
	*out = (uint32_t)x;
	return 0;
}

static int get_pow2(struct pb *b, struct fy_node *v, const char *key, uint32_t lo, uint32_t hi,
		    uint32_t *out)
{
	int rc = get_u32(b, v, key, lo, hi, out);

	if (!rc && (*out & (*out - 1)))
		return perr(b, line_of(v, 1), "'%s' must be a power of two from %u to %u", key, lo,
			    hi);
	return rc;
}

static int get_bool(struct pb *b, struct fy_node *v, const char *key, bool *out)
{
	char buf[8];

	if (scalar(v, buf, sizeof(buf)) && (!strcmp(buf, "true") || !strcmp(buf, "false"))) {
		*out = buf[0] == 't';
		return 0;
	}
	return perr(b, line_of(v, 1), "'%s' must be true or false", key);
}

static int get_name(struct pb *b, struct fy_node *v, const char *key, char *out, size_t cap)
{
	if (!scalar(v, out, cap) || !out[0])
		return perr(b, line_of(v, 1), "'%s' must be a name of 1 to %zu characters", key,
			    cap - 1);
	return 0;
}

/* Iterate a mapping: every key must be a plain scalar. */
static int want_map(struct pb *b, struct fy_node *n, const char *what)
{
	if (!n || fy_node_is_alias(n) || fy_node_get_type(n) != FYNT_MAPPING)
		return perr(b, line_of(n, 1), "%s must be a mapping", what);
	return 0;
}

static int key_of(struct pb *b, struct fy_node_pair *pr, char *buf, size_t cap)
{
	struct fy_node *k = fy_node_pair_key(pr);

	if (!scalar(k, buf, cap))
		return perr(b, line_of(k, 1), "a key must be a short plain name");
	return 0;
}

static int unknown(struct pb *b, struct fy_node_pair *pr, const char *key, const char *sect,
		   const char *known)
{
	return perr(b, line_of(fy_node_pair_key(pr), 1), "unknown key '%s' in %s (expected one of: %s)",
		    key, sect, known);
}

struct u32key {
	const char *key;
	size_t off;
	uint32_t lo, hi;
	bool pow2;
};

#define F(k, field, lo, hi, p2) { k, offsetof(struct timing_params, field), lo, hi, p2 }

static const struct u32key link_keys[] = {
	F("mps", mps, 128, 4096, true), F("mrrs", mrrs, 128, 4096, true),
	F("rcb", rcb, 64, 128, true), F("cable_ns", cable_ns, 0, NS_MAX, false), { 0 } };
static const struct u32key iommu_keys[] = {
	F("iotlb_hit_ns", iotlb_hit_ns, 0, NS_MAX, false),
	F("iotlb_miss_ns", iotlb_miss_ns, 0, NS_MAX, false),
	F("page_size", iommu_page, 4096, 1u << 30, true), { 0 } };
static const struct u32key cpl_keys[] = {
	F("dram_read_ns", dram_read_ns, 0, NS_MAX, false),
	F("dram_write_ns", dram_write_ns, 0, NS_MAX, false),
	F("devmem_read_ns", devmem_read_ns, 0, NS_MAX, false),
	F("devmem_write_ns", devmem_write_ns, 0, NS_MAX, false),
	F("reg_read_ns", reg_read_ns, 0, NS_MAX, false),
	F("reg_write_ns", reg_write_ns, 0, NS_MAX, false), { 0 } };
static const struct u32key req_keys[] = {
	F("tags", tags, 1, 1024, false), F("cpu_outstanding", cpu_outstanding, 1, 1024, false),
	F("cpu_tlp_bytes", cpu_tlp_bytes, 4, 4096, true),
	F("cpu_copy_mbs", cpu_copy_mbs, 100, 1000000, false), { 0 } };
static const struct u32key nvme_keys[] = {
	F("media_read_ns", nvme_media_read_ns, 0, 100 * NS_MAX, false),
	F("sqe_bytes", nvme_sqe_bytes, 16, 256, true),
	F("cqe_bytes", nvme_cqe_bytes, 4, 64, true), { 0 } };

static int u32_section(struct pb *b, struct fy_node *n, const char *sect,
		       const struct u32key *keys, const char *known, struct timing_params *p,
		       bool (*extra)(struct pb *, const char *, struct fy_node *,
				     struct timing_params *, int *))
{
	struct fy_node_pair *pr;
	void *it = NULL;
	char key[40];
	int rc = want_map(b, n, sect);

	while (!rc && (pr = fy_node_mapping_iterate(n, &it))) {
		const struct u32key *k;
		struct fy_node *v = fy_node_pair_value(pr);

		rc = key_of(b, pr, key, sizeof(key));
		if (rc)
			break;
		for (k = keys; k->key && strcmp(k->key, key); k++)
			;
		if (k->key) {
			uint32_t *f = (uint32_t *)(void *)((char *)p + k->off);

			rc = k->pow2 ? get_pow2(b, v, key, k->lo, k->hi, f) :
				       get_u32(b, v, key, k->lo, k->hi, f);
		} else if (!extra || !extra(b, key, v, p, &rc)) {
			rc = unknown(b, pr, key, sect, known);
		}
	}
	return rc;
}

static bool link_extra(struct pb *b, const char *key, struct fy_node *v,
		       struct timing_params *p, int *rc)
{
	if (!strcmp(key, "ecrc")) {
		*rc = get_bool(b, v, key, &p->ecrc);
		return true;
	}
	if (!strcmp(key, "address_bits")) {
		*rc = get_u32(b, v, key, 32, 64, &p->address_bits);
		if (!*rc && p->address_bits != 32 && p->address_bits != 64)
			*rc = perr(b, line_of(v, 1), "'address_bits' must be 32 or 64");
		return true;
	}
	return false;
}

static int parse_chips(struct pb *b, struct fy_node *n, struct timing_params *p)
{
	struct fy_node_pair *pr;
	void *it = NULL;
	int rc = want_map(b, n, "'chips'");

	p->nchips = 0;
	while (!rc && (pr = fy_node_mapping_iterate(n, &it))) {
		struct timing_chip *c = &p->chips[p->nchips];

		if (p->nchips == TIMING_MAX_CHIPS)
			return perr(b, line_of(fy_node_pair_key(pr), 1), "more than %d chips",
				    TIMING_MAX_CHIPS);
		rc = key_of(b, pr, c->name, sizeof(c->name));
		if (!rc)
			rc = get_u32(b, fy_node_pair_value(pr), c->name, 0, NS_MAX, &c->latency_ns);
		for (uint32_t i = 0; !rc && i < p->nchips; i++)
			if (!strcmp(p->chips[i].name, c->name))
				rc = perr(b, line_of(fy_node_pair_key(pr), 1), "chip '%s' listed twice",
					  c->name);
		p->nchips++;
	}
	return rc;
}

static int parse_rcs(struct pb *b, struct fy_node *n, struct timing_params *p)
{
	static const char known[] = "latency_ns, outstanding, iommu_read_split, completion_bytes";
	struct fy_node_pair *pr, *q;
	void *it = NULL;
	char key[40];
	int rc = want_map(b, n, "'root_complexes'");

	p->nrcs = 0;
	while (!rc && (pr = fy_node_mapping_iterate(n, &it))) {
		struct timing_rc *r = &p->rcs[p->nrcs];
		struct fy_node *m = fy_node_pair_value(pr);
		void *it2 = NULL;

		if (p->nrcs == TIMING_MAX_RCS)
			return perr(b, line_of(fy_node_pair_key(pr), 1),
				    "more than %d root-complex profiles", TIMING_MAX_RCS);
		memset(r, 0, sizeof(*r));
		rc = key_of(b, pr, r->name, sizeof(r->name));
		if (!rc)
			rc = want_map(b, m, "a root-complex profile");
		while (!rc && (q = fy_node_mapping_iterate(m, &it2))) {
			struct fy_node *v = fy_node_pair_value(q);

			rc = key_of(b, q, key, sizeof(key));
			if (rc)
				break;
			if (!strcmp(key, "latency_ns"))
				rc = get_u32(b, v, key, 0, NS_MAX, &r->latency_ns);
			else if (!strcmp(key, "outstanding"))
				rc = get_u32(b, v, key, 1, 4096, &r->outstanding);
			else if (!strcmp(key, "iommu_read_split"))
				rc = get_u32(b, v, key, 0, 4096, &r->iommu_read_split);
			else if (!strcmp(key, "completion_bytes"))
				rc = get_u32(b, v, key, 0, 4096, &r->completion_bytes);
			else
				rc = unknown(b, q, key, "a root-complex profile", known);
		}
		if (!rc && !r->outstanding)
			rc = perr(b, line_of(m, 1), "root complex '%s' needs 'outstanding'", r->name);
		p->nrcs++;
	}
	if (!rc && !p->nrcs)
		rc = perr(b, line_of(n, 1), "'root_complexes' needs at least one profile");
	return rc;
}

static int rc_index(const struct timing_params *p, const char *name)
{
	for (uint32_t i = 0; i < p->nrcs; i++)
		if (!strcmp(p->rcs[i].name, name))
			return (int)i;
	return -1;
}

static int parse_hostmap(struct pb *b, struct fy_node *n, struct timing_params *p)
{
	struct fy_node_pair *pr;
	void *it = NULL;
	char name[TIMING_CHIP_MAX];
	int rc = want_map(b, n, "'host_root_complex'");

	p->nhostmap = 0;
	while (!rc && (pr = fy_node_mapping_iterate(n, &it))) {
		int idx;

		if (p->nhostmap == TIMING_MAX_HOSTMAP)
			return perr(b, line_of(fy_node_pair_key(pr), 1), "more than %d hosts",
				    TIMING_MAX_HOSTMAP);
		rc = get_u32(b, fy_node_pair_key(pr), "host id", 0, 65535,
			     &p->hostmap[p->nhostmap].host);
		if (!rc)
			rc = get_name(b, fy_node_pair_value(pr), "root complex", name, sizeof(name));
		if (rc)
			break;
		idx = rc_index(p, name);
		if (idx < 0)
			return perr(b, line_of(fy_node_pair_value(pr), 1),
				    "no root-complex profile '%s' (root_complexes: must come first)",
				    name);
		p->hostmap[p->nhostmap++].rc = (uint32_t)idx;
	}
	return rc;
}

static int parse_defaults(struct pb *b, struct fy_node *n, struct timing_params *p)
{
	struct fy_node_pair *pr;
	void *it = NULL;
	char key[40];
	int rc = want_map(b, n, "'defaults'");

	while (!rc && (pr = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *v = fy_node_pair_value(pr);
		char *dst;
		uint32_t ns;

		rc = key_of(b, pr, key, sizeof(key));
		if (rc)
			break;
		dst = !strcmp(key, "switch") ? p->default_switch :
		      !strcmp(key, "ntb") ? p->default_ntb :
		      !strcmp(key, "cluster_switch") ? p->default_cswitch : NULL;
		if (!dst)
			return unknown(b, pr, key, "'defaults'", "switch, ntb, cluster_switch");
		rc = get_name(b, v, key, dst, TIMING_CHIP_MAX);
		if (!rc && timing_chip_ns(p, dst, &ns))
			rc = perr(b, line_of(v, 1), "'%s' is not in 'chips' (chips: must come first)",
				  dst);
	}
	return rc;
}

static int parse_root(struct pb *b, struct fy_node *root, struct timing_params *p)
{
	static const char known[] = "version, link, chips, defaults, root_complexes, "
		"default_root_complex, host_root_complex, iommu, completer, requester, nvme";
	struct fy_node_pair *pr;
	void *it = NULL;
	char key[40], name[TIMING_CHIP_MAX];
	bool version = false;
	int rc = want_map(b, root, "the calibration file");

	while (!rc && (pr = fy_node_mapping_iterate(root, &it))) {
		struct fy_node *v = fy_node_pair_value(pr);
		uint32_t ver;

		rc = key_of(b, pr, key, sizeof(key));
		if (rc)
			break;
		if (!strcmp(key, "version")) {
			rc = get_u32(b, v, key, 1, 1, &ver);
			version = true;
		} else if (!strcmp(key, "link")) {
			rc = u32_section(b, v, "'link'", link_keys,
					 "mps, mrrs, rcb, address_bits, ecrc, cable_ns", p, link_extra);
		} else if (!strcmp(key, "chips")) {
			rc = parse_chips(b, v, p);
		} else if (!strcmp(key, "defaults")) {
			rc = parse_defaults(b, v, p);
		} else if (!strcmp(key, "root_complexes")) {
			rc = parse_rcs(b, v, p);
			p->default_rc = 0;
		} else if (!strcmp(key, "default_root_complex")) {
			rc = get_name(b, v, key, name, sizeof(name));
			if (!rc && rc_index(p, name) < 0)
				rc = perr(b, line_of(v, 1), "no root-complex profile '%s'", name);
			if (!rc)
				p->default_rc = (uint32_t)rc_index(p, name);
		} else if (!strcmp(key, "host_root_complex")) {
			rc = parse_hostmap(b, v, p);
		} else if (!strcmp(key, "iommu")) {
			rc = u32_section(b, v, "'iommu'", iommu_keys,
					 "iotlb_hit_ns, iotlb_miss_ns, page_size", p, NULL);
		} else if (!strcmp(key, "completer")) {
			rc = u32_section(b, v, "'completer'", cpl_keys, "dram_read_ns, "
					 "dram_write_ns, devmem_read_ns, devmem_write_ns, "
					 "reg_read_ns, reg_write_ns", p, NULL);
		} else if (!strcmp(key, "requester")) {
			rc = u32_section(b, v, "'requester'", req_keys,
					 "tags, cpu_outstanding, cpu_tlp_bytes, cpu_copy_mbs", p, NULL);
		} else if (!strcmp(key, "nvme")) {
			rc = u32_section(b, v, "'nvme'", nvme_keys,
					 "media_read_ns, sqe_bytes, cqe_bytes", p, NULL);
		} else {
			rc = unknown(b, pr, key, "the calibration file", known);
		}
	}
	if (!rc && !version)
		rc = perr(b, 1, "missing 'version: 1'");
	return rc;
}

int timing_params_load_string(const char *yaml, size_t len, const char *source,
			      struct timing_params *p, char *err, size_t errlen)
{
	struct pb b = { .source = source ? source : "<string>", .err = err, .errlen = errlen };
	struct timing_params tmp;
	struct yaml_doc d;
	char msg[256];
	int line = 1, rc;

	if (!yaml || !p)
		return -EINVAL;
	rc = yaml_load(yaml, len, "empty calibration file; it needs at least 'version: 1'", &d,
		       &line, msg, sizeof(msg));
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return perr(&b, line, "%s", msg);
	timing_params_default(&tmp);
	rc = parse_root(&b, d.root, &tmp);
	if (!rc)
		*p = tmp;
	yaml_free(&d);
	return rc;
}

int timing_params_load_file(const char *path, struct timing_params *p, char *err,
			    size_t errlen)
{
	struct stat st;
	char *buf;
	ssize_t got;
	size_t off = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > PARAMS_FILE_MAX) {
		rc = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		snprintf(err, errlen, "%s: not a regular file under 1 MiB", path);
		close(fd);
		return rc;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)st.st_size) {
		got = read(fd, buf + off, (size_t)st.st_size - off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		off += (size_t)got;
	}
	close(fd);
	buf[off] = '\0';
	rc = timing_params_load_string(buf, off, path, p, err, errlen);
	free(buf);
	return rc;
}
