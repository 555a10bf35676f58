/* SPDX-License-Identifier: MIT */
/*
 * Loading YAML safely with libfyaml, for every file smartio reads (the
 * topology, the timing calibration): exactly one document, nothing printed,
 * errors with a line number, and text that is not UTF-8 (or holds NUL bytes)
 * refused before libfyaml sees it — its 0.7 scanner loops forever on some
 * invalid UTF-8.
 */
#ifndef SMARTIO_FABRIC_YAML_H
#define SMARTIO_FABRIC_YAML_H

#include <stddef.h>
#include <libfyaml.h>

struct yaml_doc {
	struct fy_diag *diag;
	struct fy_parser *fyp;
	struct fy_document *doc;
	struct fy_node *root;
};

/*
 * Parse text (a trailing NUL is tolerated). On failure returns -EINVAL with
 * *line (1-based) and msg set — the message has no "FILE:LINE:" prefix; the
 * caller adds its own — or -ENOMEM. empty_msg is the message for a document
 * with nothing in it. On success the caller walks out->root and calls
 * yaml_free().
 */
int yaml_load(const char *text, size_t len, const char *empty_msg, struct yaml_doc *out,
	      int *line, char *msg, size_t msglen);
void yaml_free(struct yaml_doc *d);
/* 1-based line of a node (a collection: its first scalar's), or fallback. */
int yaml_line(struct fy_node *n, int fallback);

#endif
