// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "yaml.h"

/* libfyaml's own printing goes nowhere: errors are collected and reported once. */
static void diag_drop(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
}

static int fail(int *line, int l, char *msg, size_t msglen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(int *line, int l, char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	*line = l;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* UTF-8 without NUL bytes; on failure the line and offending byte. */
static bool utf8_ok(const char *s, size_t len, int *line, size_t *at)
{
	int l = 1;

	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i], c1 = i + 1 < len ? (unsigned char)s[i + 1] : 0;
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 :
			   c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		bool ok = c && n && i + n <= len;

		/* No overlong forms, surrogates or code points above U+10FFFF. */
		if (ok && ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) ||
			   (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f)))
			ok = false;
		for (size_t k = 1; ok && k < n; k++)
			ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
		if (!ok) {
			*line = l;
			*at = i;
			return false;
		}
		l += c == '\n';
		i += n;
	}
	return true;
}

static int syntax_error(struct fy_diag *diag, int *line, char *msg, size_t msglen)
{
	struct fy_diag_error *e;
	void *it = NULL;

	while ((e = fy_diag_errors_iterate(diag, &it)))
		if (e->type >= FYET_ERROR)
			return fail(line, e->line, msg, msglen, "YAML syntax error: %s (column %d)",
				    e->msg ? e->msg : "?", e->column);
	return fail(line, 1, msg, msglen, "YAML syntax error");
}

int yaml_load(const char *text, size_t len, const char *empty_msg, struct yaml_doc *out,
	      int *line, char *msg, size_t msglen)
{
	struct fy_parse_cfg pcfg = { .flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG };
	struct fy_document *extra;
	struct fy_diag_cfg dcfg;
	size_t at;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	/* Tolerate callers that count the string's terminator. */
	if (len && !text[len - 1])
		len--;
	if (!utf8_ok(text, len, line, &at))
		return fail(line, *line, msg, msglen, "not UTF-8 text (byte 0x%02x at offset %zu); "
			    "expected a YAML text file", (unsigned char)text[at], at);
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = diag_drop;
	dcfg.colorize = false;
	pcfg.diag = out->diag = fy_diag_create(&dcfg);
	if (!pcfg.diag)
		return -ENOMEM;
	fy_diag_set_collect_errors(pcfg.diag, true);
	out->fyp = fy_parser_create(&pcfg);
	if (!out->fyp) {
		rc = -ENOMEM;
		goto out;
	}
	if (!len || fy_parser_set_string(out->fyp, text, len)) {
		rc = fail(line, 1, msg, msglen, "%s", empty_msg);
		goto out;
	}
	out->doc = fy_parse_load_document(out->fyp);
	if (!out->doc || fy_diag_got_error(pcfg.diag)) {
		rc = fy_diag_got_error(pcfg.diag) ? syntax_error(pcfg.diag, line, msg, msglen) :
			fail(line, 1, msg, msglen, "%s", empty_msg);
		goto out;
	}
	extra = fy_parse_load_document(out->fyp);
	if (extra) {
		rc = fail(line, yaml_line(fy_document_root(extra), 1), msg, msglen,
			  "a second YAML document ('---'); only one is allowed");
		fy_parse_document_destroy(out->fyp, extra);
		goto out;
	}
	if (fy_diag_got_error(pcfg.diag)) {
		rc = syntax_error(pcfg.diag, line, msg, msglen);
		goto out;
	}
	out->root = fy_document_root(out->doc);
	if (!out->root)
		rc = fail(line, 1, msg, msglen, "%s", empty_msg);
out:
	if (rc)
		yaml_free(out);
	return rc;
}

void yaml_free(struct yaml_doc *d)
{
	if (d->doc)
		fy_parse_document_destroy(d->fyp, d->doc);
	if (d->fyp)
		fy_parser_destroy(d->fyp);
	if (d->diag)
		fy_diag_destroy(d->diag);
	memset(d, 0, sizeof(*d));
}

int yaml_line(struct fy_node *n, int fallback)
{
	/* libfyaml 0.7 keeps marks on tokens only: descend to the first scalar. */
	for (int depth = 0; n && depth < 64; depth++) {
		void *it = NULL;
		struct fy_node_pair *p;
		struct fy_token *tok;
		const struct fy_mark *m;

		switch (fy_node_get_type(n)) {
		case FYNT_SCALAR:
			tok = fy_node_get_scalar_token(n);
			m = tok ? fy_token_start_mark(tok) : NULL;
			return m ? m->line + 1 : fallback;
		case FYNT_MAPPING:
			p = fy_node_mapping_iterate(n, &it);
			n = p ? fy_node_pair_key(p) : NULL;
			break;
		case FYNT_SEQUENCE:
			n = fy_node_sequence_iterate(n, &it);
			break;
		default:
			return fallback;
		}
	}
	return fallback;
}
