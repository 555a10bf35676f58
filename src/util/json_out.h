/* SPDX-License-Identifier: MIT */
/*
 * JSON output of the tools and benchmarks, on Debian's json-c.
 *
 * json-c builds the document and does the escaping; these helpers add what
 * every caller needs on top:
 *  - one output style: compact (no spaces, as the tools always printed, which
 *    scripts grep), '/' not escaped (paths stay readable), a newline after;
 *  - numbers with a chosen printf format ("%.3f"), so a field keeps the
 *    precision it is documented with; NaN and infinities, which JSON cannot
 *    spell, become null;
 *  - failure reporting: json-c signals a failed allocation by a NULL object
 *    or a negative return; every adder here returns 0 or -ENOMEM (releasing
 *    what it was given), so a caller chains them with || and prints nothing
 *    rather than a document with a field missing.
 */
#ifndef SMARTIO_UTIL_JSON_OUT_H
#define SMARTIO_UTIL_JSON_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/*
 * obj[key] = val. val becomes the callee's in every case, released on failure:
 * never put it after the call. val NULL (a constructor failed): -ENOMEM.
 */
int smio_json_add(struct json_object *obj, const char *key, struct json_object *val);
int smio_json_add_null(struct json_object *obj, const char *key);
/* s NULL: null. Not UTF-8 checked: callers pass ASCII names and messages. */
int smio_json_add_str(struct json_object *obj, const char *key, const char *s);
int smio_json_add_int(struct json_object *obj, const char *key, int64_t v);
int smio_json_add_uint(struct json_object *obj, const char *key, uint64_t v);
int smio_json_add_bool(struct json_object *obj, const char *key, bool v);
/* v printed with fmt (one floating conversion, e.g. "%.3f"); not finite: null. */
int smio_json_add_double(struct json_object *obj, const char *key, double v, const char *fmt);

/* Append val to the array arr; val is taken as by smio_json_add. */
int smio_json_push(struct json_object *arr, struct json_object *val);
int smio_json_push_double(struct json_object *arr, double v, const char *fmt);

/* Print obj and a newline on f (one line). 0, -ENOMEM, or -EIO when f failed. */
int smio_json_print(FILE *f, struct json_object *obj);

#endif
