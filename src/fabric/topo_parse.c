// SPDX-License-Identifier: MIT
/*
 * Topology description: YAML text -> struct topo (docs/topology.md).
 *
 * libfyaml builds the document tree; this file walks it and fills the plain
 * structs of <smartio/topology.h>, checking every value where it is read so
 * that each message names the line it came from.  This file holds the YAML
 * side (document, typed value reads, top-level lists, loading and freeing);
 * a host's contents are in topo_host.c, the cluster switches in
 * topo_cswitch.c, the whole-cluster checks in topo_check.c.
 *
 * The rules: every key is known, every value has the right type and range,
 * and the first problem found is the one reported, as
 * "SOURCE:LINE: what is wrong and what to do".  Nothing is half-built: on any
 * error the partly filled topology is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libfyaml.h>

#include "topo_priv.h"
#include "yaml.h"

#define TOPO_FILE_MAX   (16u << 20)   /* refuse bigger files: surely a mistake */

int topo_err(struct topo_build *b, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed || !b->err || !b->errlen) {
		b->failed = true;
		return -EINVAL;
	}
	b->failed = true;
	n = snprintf(b->err, b->errlen, "%s:%d: ", b->source, line);
	if (n >= 0 && (size_t)n < b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int tp_oom(struct topo_build *b)
{
	topo_err(b, 0, "out of memory");
	return -ENOMEM;
}

int tp_line(struct fy_node *n, int fallback)
{
	return yaml_line(n, fallback);
}

/* Copy untrusted text for a message: bounded, control bytes tp_shown as '?'. */
const char *tp_shown(char *dst, size_t cap, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < cap && s; i++)
		dst[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	dst[i] = '\0';
	return dst;
}

static bool is_null(struct fy_node *n)
{
	const char *s;
	size_t len;

	if (!n)
		return true;
	if (fy_node_get_type(n) != FYNT_SCALAR || fy_node_get_style(n) != FYNS_PLAIN)
		return false;
	s = fy_node_get_scalar(n, &len);
	if (!s || !len)
		return true;
	return (len == 1 && s[0] == '~') ||
	       (len == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) ||
			     !memcmp(s, "NULL", 4)));
}

/* Aliases are refused: resolving them invites exponential documents. */
int tp_no_alias(struct topo_build *b, struct fy_node *n, int line, const char *what)
{
	if (n && fy_node_is_alias(n))
		return topo_err(b, tp_line(n, line),
				"%s: YAML aliases (*name) are not supported; write the value out", what);
	return 0;
}

/* " 'NAME'" if mapping @n has a scalar 'name', for labels; else "". */
const char *tp_peek_name(struct fy_node *n, char *buf, size_t cap)
{
	char tmp[TOPO_NAME_MAX];
	const char *s = NULL;
	size_t len = 0;

	buf[0] = '\0';
	if (n && fy_node_get_type(n) == FYNT_MAPPING)
		s = fy_node_mapping_lookup_scalar_by_simple_key(n, &len, "name", 4);
	if (s && len)
		snprintf(buf, cap, " '%s'", tp_shown(tmp, sizeof(tmp), s, len));
	return buf;
}

static int obj_unknown(struct tp_obj *o, int line, const char *s, size_t len)
{
	char list[256] = "", key[40];
	size_t used = 0;

	for (int i = 0; o->keys[i] && used < sizeof(list); i++) {
		int n = snprintf(list + used, sizeof(list) - used, "%s%s",
				 i ? ", " : "", o->keys[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return topo_err(o->b, line, "%s: unknown key '%s' (expected one of: %s)",
			o->what, tp_shown(key, sizeof(key), s, len), list);
}

/* Start reading mapping @n: record known keys, refuse unknown ones. */
int tp_open(struct tp_obj *o, struct topo_build *b, struct fy_node *n, int line,
	    const char *const *keys, const char *fmt, ...)
{
	struct fy_node *parent;
	struct fy_node_pair *p;
	void *it = NULL;
	va_list ap;
	int rc;

	memset(o, 0, sizeof(*o));
	o->b = b;
	o->keys = keys;
	/*
	 * A key's value is reported at its key ("switch:" rather than the line
	 * of its first entry below); a list item at its first entry.
	 */
	parent = n ? fy_node_get_parent(n) : NULL;
	if (parent && fy_node_get_type(parent) == FYNT_MAPPING)
		o->line = line;
	else
		o->line = tp_line(n, line);
	va_start(ap, fmt);
	vsnprintf(o->what, sizeof(o->what), fmt, ap);
	va_end(ap);

	rc = tp_no_alias(b, n, line, o->what);
	if (rc)
		return rc;
	if (!n || fy_node_get_type(n) != FYNT_MAPPING)
		return topo_err(b, o->line, "%s: expected a mapping of 'key: value' entries",
				o->what);

	while ((p = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *k = fy_node_pair_key(p);
		int kl = tp_line(k, o->line), i;
		const char *s = NULL;
		size_t len = 0;

		if (k && fy_node_get_type(k) == FYNT_SCALAR && !fy_node_is_alias(k))
			s = fy_node_get_scalar(k, &len);
		if (!s)
			return topo_err(b, kl, "%s: keys must be plain words", o->what);
		for (i = 0; keys[i]; i++)
			if (strlen(keys[i]) == len && !memcmp(keys[i], s, len))
				break;
		if (!keys[i])
			return obj_unknown(o, kl, s, len);
		o->val[i] = fy_node_pair_value(p);
		o->kline[i] = kl;
		rc = tp_no_alias(b, o->val[i], kl, o->what);
		if (rc)
			return rc;
	}
	return 0;
}

/* Index of @key in the object's key list; keys are compile-time constants. */
int tp_idx(const struct tp_obj *o, const char *key)
{
	for (int i = 0; o->keys[i]; i++)
		if (!strcmp(o->keys[i], key))
			return i;
	return -1;
}

bool tp_has(const struct tp_obj *o, const char *key)
{
	int i = tp_idx(o, key);

	return i >= 0 && o->kline[i] > 0;
}

/* Line of @key's value, or of the object when the key is absent. */
int tp_vline(const struct tp_obj *o, const char *key)
{
	int i = tp_idx(o, key);

	if (i < 0 || !o->kline[i])
		return o->line;
	return tp_line(o->val[i], o->kline[i]);
}

/* The scalar text of present key @i, or an error naming the wanted @type. */
static int obj_scalar(struct tp_obj *o, int i, const char *type, const char **s, size_t *len)
{
	struct fy_node *v = o->val[i];

	if (is_null(v))
		return topo_err(o->b, o->kline[i], "%s: '%s' needs a value (%s)",
				o->what, o->keys[i], type);
	if (fy_node_get_type(v) != FYNT_SCALAR)
		return topo_err(o->b, o->kline[i], "%s: '%s' must be %s, not a %s",
				o->what, o->keys[i], type,
				fy_node_get_type(v) == FYNT_MAPPING ? "mapping" : "list");
	*s = fy_node_get_scalar(v, len);
	if (!*s)
		return topo_err(o->b, o->kline[i], "%s: '%s' must be %s",
				o->what, o->keys[i], type);
	return 0;
}

/* Decimal, 0x hex or 0o octal; no sign, no spaces. */
int tp_uint(const char *s, size_t len, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (len > 2 && s[0] == '0' && s[1] == 'o') {
		base = 8;
		i = 2;
	}
	if (i >= len)
		return -EINVAL;
	for (; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		if (d >= base)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

int topo_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	uint64_t v, mul = 1;
	const char *u;
	size_t n;
	int rc;

	if (!s || !out)
		return -EINVAL;
	/* Hex has no suffix: 'B' would be a digit. */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return tp_uint(s, strlen(s), out);
	n = strspn(s, "0123456789");
	rc = n ? tp_uint(s, n, &v) : -EINVAL;
	if (rc)
		return rc;
	s += n;
	if (*s && (u = strchr(units, *s & ~0x20))) {
		mul = 1ull << (10 * (u - units + 1));
		s++;
		if (*s == 'i')
			s++;
	}
	if (*s == 'B' || *s == 'b')
		s++;
	if (*s)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

/* "4G", "0x3ec00000": the shortest exact way to write @v, for messages. */
const char *tp_fmt_size(char *buf, size_t cap, uint64_t v)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && v && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, cap, "%" PRIu64, v);
	else
		snprintf(buf, cap, "%" PRIu64 "%c", v, units[u]);
	return buf;
}

static int get_u64(struct tp_obj *o, const char *key, uint64_t *out, uint64_t def,
		   uint64_t min, uint64_t max)
{
	int i = tp_idx(o, key), rc;
	const char *s;
	size_t len;
	char tmp[40];

	if (i < 0 || !o->kline[i]) {
		*out = def;
		return 0;
	}
	rc = obj_scalar(o, i, "a number", &s, &len);
	if (rc)
		return rc;
	if (fy_node_get_style(o->val[i]) != FYNS_PLAIN || tp_uint(s, len, out))
		return topo_err(o->b, tp_vline(o, key), "%s: '%s' must be a number, not '%s'",
				o->what, key, tp_shown(tmp, sizeof(tmp), s, len));
	if (*out < min || *out > max)
		return topo_err(o->b, tp_vline(o, key),
				"%s: %s %" PRIu64 " is out of range (%" PRIu64 "..%" PRIu64 ")",
				o->what, key, *out, min, max);
	return 0;
}

int tp_u32(struct tp_obj *o, const char *key, uint32_t *out, uint32_t def,
	   uint32_t min, uint32_t max)
{
	uint64_t v;
	int rc = get_u64(o, key, &v, def, min, max);

	if (!rc)
		*out = (uint32_t)v;
	return rc;
}

int tp_size(struct tp_obj *o, const char *key, uint64_t *out, uint64_t def,
	    uint64_t min, uint64_t max)
{
	int i = tp_idx(o, key), rc;
	char tmp[40], a[24], b[24];
	const char *s;
	size_t len;

	if (i < 0 || !o->kline[i]) {
		*out = def;
		return 0;
	}
	rc = obj_scalar(o, i, "a size such as 4G", &s, &len);
	if (rc)
		return rc;
	tp_shown(tmp, sizeof(tmp), s, len);
	if (len >= sizeof(tmp) || topo_parse_size(tmp, out))
		return topo_err(o->b, tp_vline(o, key),
				"%s: '%s' must be a size such as 4G, 512M or 0x1000, not '%s'",
				o->what, key, tmp);
	if (*out < min || *out > max)
		return topo_err(o->b, tp_vline(o, key), "%s: %s %s is out of range (%s..%s)",
				o->what, key, tmp, tp_fmt_size(a, sizeof(a), min),
				tp_fmt_size(b, sizeof(b), max));
	return 0;
}

int tp_bool(struct tp_obj *o, const char *key, bool *out, bool def)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };
	int i = tp_idx(o, key), rc;
	const char *s;
	size_t len;
	char tmp[40];

	*out = def;
	if (i < 0 || !o->kline[i])
		return 0;
	rc = obj_scalar(o, i, "true or false", &s, &len);
	if (rc)
		return rc;
	for (int k = 0; k < 3 && fy_node_get_style(o->val[i]) == FYNS_PLAIN; k++) {
		if (len == strlen(yes[k]) && !memcmp(s, yes[k], len)) {
			*out = true;
			return 0;
		}
		if (len == strlen(no[k]) && !memcmp(s, no[k], len)) {
			*out = false;
			return 0;
		}
	}
	return topo_err(o->b, tp_vline(o, key), "%s: '%s' must be true or false, not '%s'",
			o->what, key, tp_shown(tmp, sizeof(tmp), s, len));
}

/*
 * A string of at most @cap - 1 characters: letters, digits and @extra, or any
 * printable character when @extra is NULL.  @def NULL: the key is required.
 */
int tp_str(struct tp_obj *o, const char *key, char *out, size_t cap,
	   const char *def, const char *extra)
{
	int i = tp_idx(o, key), rc;
	const char *s;
	size_t len;
	char tmp[80];

	if (i < 0 || !o->kline[i]) {
		if (!def)
			return topo_err(o->b, o->line, "%s: '%s' is required", o->what, key);
		snprintf(out, cap, "%s", def);
		return 0;
	}
	rc = obj_scalar(o, i, "a string", &s, &len);
	if (rc)
		return rc;
	if (!len)
		return topo_err(o->b, tp_vline(o, key), "%s: '%s' must not be empty",
				o->what, key);
	if (len >= cap)
		return topo_err(o->b, tp_vline(o, key),
				"%s: %s '%s' is too long (at most %zu characters)",
				o->what, key, tp_shown(tmp, sizeof(tmp), s, len), cap - 1);
	for (size_t k = 0; k < len; k++) {
		char c = s[k];
		bool ok = extra ? ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				   (c >= '0' && c <= '9') || (c && strchr(extra, c)))
				: (c >= 0x20 && c < 0x7f);

		if (!ok)
			return topo_err(o->b, tp_vline(o, key),
					"%s: %s '%s' may only contain letters, digits and '%s'",
					o->what, key, tp_shown(tmp, sizeof(tmp), s, len),
					extra ? extra : " ");
	}
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

/* The list under @key: item count in [min, max].  Absent: *seq = NULL. */
int tp_seq(struct tp_obj *o, const char *key, struct fy_node **seq, size_t *n,
	   size_t min, size_t max)
{
	int i = tp_idx(o, key);

	*seq = NULL;
	*n = 0;
	if (i < 0 || !o->kline[i]) {
		if (min)
			return topo_err(o->b, o->line, "%s: '%s' is required (a list)",
					o->what, key);
		return 0;
	}
	*seq = o->val[i];
	if (!*seq || fy_node_get_type(*seq) != FYNT_SEQUENCE)
		return topo_err(o->b, o->kline[i], "%s: '%s' must be a list", o->what, key);
	*n = (size_t)fy_node_sequence_item_count(*seq);
	if (*n < min || *n > max)
		return topo_err(o->b, o->kline[i],
				"%s: '%s' has %zu entries; it needs %zu..%zu",
				o->what, key, *n, min, max);
	return 0;
}

static const char *const link_keys[] = { "gen", "width", NULL };

/* 'gen' and 'width' of an already opened object (a link or a cascade entry). */
int tp_read_link(struct tp_obj *o, struct topo_link *l, uint8_t gen, uint8_t width)
{
	uint32_t g, w;
	int rc;

	rc = tp_u32(o, "gen", &g, gen, 1, 5);
	if (!rc)
		rc = tp_u32(o, "width", &w, width, 1, 32);
	if (rc)
		return rc;
	if (w != 1 && w != 2 && w != 4 && w != 8 && w != 12 && w != 16 && w != 32)
		return topo_err(o->b, tp_vline(o, "width"),
				"%s: width %u is not a PCIe link width (1, 2, 4, 8, 12, 16, 32)",
				o->what, w);
	l->gen = (uint8_t)g;
	l->width = (uint8_t)w;
	return 0;
}

int tp_link(struct tp_obj *o, const char *key, struct topo_link *l,
	    uint8_t gen, uint8_t width)
{
	int i = tp_idx(o, key), rc;
	struct tp_obj lo;

	l->gen = gen;
	l->width = width;
	if (i < 0 || !o->kline[i])
		return 0;
	rc = tp_open(&lo, o->b, o->val[i], o->kline[i], link_keys, "%s %s", o->what, key);
	return rc ? rc : tp_read_link(&lo, l, gen, width);
}

static const char *const top_keys[] = { "version", "name", "timing", "cluster_switches", "hosts",
					 NULL };

/* "topologies/cluster-60.yaml" -> "cluster-60" */
static void default_name(char *out, size_t cap, const char *source)
{
	const char *base = strrchr(source, '/');
	size_t len;

	base = base ? base + 1 : source;
	len = strlen(base);
	if (len > 5 && !strcmp(base + len - 5, ".yaml"))
		len -= 5;
	else if (len > 4 && !strcmp(base + len - 4, ".yml"))
		len -= 4;
	if (len >= cap)
		len = cap - 1;
	memcpy(out, base, len);
	out[len] = '\0';
}

static int parse_root(struct topo_build *b, struct fy_node *root)
{
	struct topo *t = b->t;
	struct fy_node *seq, *item;
	char def[sizeof(t->name)], mode[16] = "fast";
	uint32_t version;
	void *it = NULL;
	struct tp_obj o;
	size_t n;
	int rc;

	rc = tp_open(&o, b, root, 1, top_keys, "topology");
	if (rc)
		return rc;
	if (!tp_has(&o, "version"))
		return topo_err(b, o.line, "topology: 'version: 1' is required");
	rc = tp_u32(&o, "version", &version, 1, 1, 1);
	if (rc)
		return rc;
	default_name(def, sizeof(def), b->source);
	rc = tp_str(&o, "name", t->name, sizeof(t->name), def, NULL);
	if (!rc)
		rc = tp_str(&o, "timing", mode, sizeof(mode), "fast", NULL);
	if (!rc && strcmp(mode, "fast") && strcmp(mode, "faithful"))
		rc = topo_err(b, tp_vline(&o, "timing"), "topology: timing must be 'fast' (the "
			      "default) or 'faithful', not '%s'", mode);
	t->timing_faithful = !strcmp(mode, "faithful");
	if (!rc)
		rc = tp_seq(&o, "cluster_switches", &seq, &n, 0, TOPO_MAX_CSW);
	if (rc)
		return rc;
	if (n) {
		t->cswitches = calloc(n, sizeof(*t->cswitches));
		if (!t->cswitches)
			return tp_oom(b);
		t->ncswitches = (uint32_t)n;
	}
	for (uint32_t i = 0; i < n && (item = fy_node_sequence_iterate(seq, &it)); i++) {
		rc = tp_parse_cswitch(b, item, o.line, i);
		if (rc)
			return rc;
	}

	rc = tp_seq(&o, "hosts", &seq, &n, 1, TOPO_MAX_HOSTS);
	if (rc)
		return rc;
	t->hosts = calloc(n, sizeof(*t->hosts));
	if (!t->hosts)
		return tp_oom(b);
	t->nhosts = (uint32_t)n;
	it = NULL;
	for (uint32_t i = 0; i < n && (item = fy_node_sequence_iterate(seq, &it)); i++) {
		rc = topo_parse_host(b, item, o.line, i);
		if (rc)
			return rc;
	}
	return topo_check(b);
}

/* Parse one YAML document and walk it. */
static int load_doc(struct topo_build *b, const char *yaml, size_t len)
{
	struct yaml_doc d;
	char msg[256];
	int line = 1, rc;

	rc = yaml_load(yaml, len, "empty topology; it needs at least 'version: 1' and 'hosts:'",
		       &d, &line, msg, sizeof(msg));
	if (rc == -ENOMEM)
		return tp_oom(b);
	if (rc)
		return topo_err(b, line, "%s", msg);
	rc = parse_root(b, d.root);
	yaml_free(&d);
	return rc;
}

int topo_load_string(const char *yaml, size_t len, const char *source,
		     struct topo **out, char *err, size_t errlen)
{
	struct topo_build b = {
		.source = source ? source : "<string>", .err = err, .errlen = errlen,
	};
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!yaml)
		return topo_err(&b, 0, "no topology text");
	b.t = calloc(1, sizeof(*b.t));
	if (!b.t)
		return tp_oom(&b);
	snprintf(b.t->source, sizeof(b.t->source), "%s", b.source);
	rc = load_doc(&b, yaml, len);
	free(b.ntbs);
	free(b.cas);
	if (rc) {
		topo_free(b.t);
		return rc;
	}
	*out = b.t;
	return 0;
}

/* Read a whole (bounded) file; errors as "PATH: what". */
static int read_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	size_t cap = 0, n = 0;
	struct stat st;
	char *p = NULL;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		goto fail;
	}
	for (;;) {
		ssize_t got;

		if (n == cap) {
			void *q;

			if (cap >= TOPO_FILE_MAX) {
				rc = -EFBIG;
				goto fail;
			}
			cap = cap ? 2 * cap : 64 * KiB;
			q = realloc(p, cap);
			if (!q) {
				rc = -ENOMEM;
				goto fail;
			}
			p = q;
		}
		got = read(fd, p + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			goto fail;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	close(fd);
	*buf = p;
	*len = n;
	return 0;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s: cannot read the topology: %s%s", path, strerror(-rc),
			 rc == -EFBIG ? " (limit 16 MiB)" : "");
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

int topo_load_file(const char *path, struct topo **out, char *err, size_t errlen)
{
	size_t len = 0;
	char *buf = NULL;
	int rc;

	if (!out || !path)
		return -EINVAL;
	*out = NULL;
	rc = read_file(path, &buf, &len, err, errlen);
	if (rc)
		return rc;
	rc = topo_load_string(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}

/* Recursion is bounded: the parser refuses deeper than TOPO_MAX_DEPTH. */
static void free_ports(struct topo_port *ports, uint32_t n)
{
	for (uint32_t i = 0; ports && i < n; i++) {
		if (ports[i].kind == TOPO_SLOT_SWITCH)
			free_ports(ports[i].sw.ports, ports[i].sw.nports);
		if (ports[i].kind == TOPO_SLOT_DEVICE)
			free(ports[i].dev.funcs);
	}
	free(ports);
}

void topo_free(struct topo *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->hosts && i < t->nhosts; i++)
		free_ports(t->hosts[i].ports, t->hosts[i].nports);
	free(t->hosts);
	free(t->cswitches);
	free(t->cascades);
	free(t);
}
