// SPDX-License-Identifier: MIT
/* JSON output helpers over json-c (see json_out.h). */
#include <errno.h>
#include <math.h>

#include "json_out.h"

int smio_json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

int smio_json_add_null(struct json_object *obj, const char *key)
{
	/* json-c stores a NULL member as JSON null. */
	return json_object_object_add(obj, key, NULL) ? -ENOMEM : 0;
}

int smio_json_add_str(struct json_object *obj, const char *key, const char *s)
{
	return s ? smio_json_add(obj, key, json_object_new_string(s))
		 : smio_json_add_null(obj, key);
}

int smio_json_add_int(struct json_object *obj, const char *key, int64_t v)
{
	return smio_json_add(obj, key, json_object_new_int64(v));
}

int smio_json_add_uint(struct json_object *obj, const char *key, uint64_t v)
{
	return smio_json_add(obj, key, json_object_new_uint64(v));
}

int smio_json_add_bool(struct json_object *obj, const char *key, bool v)
{
	return smio_json_add(obj, key, json_object_new_boolean(v));
}

/* A number that serialises as fmt gives it; NULL with *null for NaN/inf. */
static struct json_object *number(double v, const char *fmt, bool *null)
{
	char buf[64];
	int n;

	*null = !isfinite(v);
	if (*null)
		return NULL;
	n = snprintf(buf, sizeof(buf), fmt, v);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return json_object_new_double(v);        /* json-c's own spelling */
	return json_object_new_double_s(v, buf);
}

int smio_json_add_double(struct json_object *obj, const char *key, double v, const char *fmt)
{
	bool null;
	struct json_object *o = number(v, fmt, &null);

	return null ? smio_json_add_null(obj, key) : smio_json_add(obj, key, o);
}

int smio_json_push(struct json_object *arr, struct json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(arr, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

int smio_json_push_double(struct json_object *arr, double v, const char *fmt)
{
	bool null;
	struct json_object *o = number(v, fmt, &null);

	if (null)
		return json_object_array_add(arr, NULL) ? -ENOMEM : 0;
	return smio_json_push(arr, o);
}

int smio_json_print(FILE *f, struct json_object *obj)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!s)
		return -ENOMEM;
	if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}
