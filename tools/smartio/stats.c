// SPDX-License-Identifier: MIT
/* Fetching a host's counters and events as JSON (stats.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "stats.h"

int cli_stats_fetch(int fd, struct json_object **out)
{
	struct smio_stats_req q = { 0 };
	struct json_tokener *tok;
	struct smio_stats *r;
	struct json_object *o;
	uint32_t rlen = 0;
	int rc;

	*out = NULL;
	r = malloc(SMIO_MAX_PAYLOAD);
	if (!r)
		return -ENOMEM;
	rc = smio_call(fd, SMIO_STATS, &q, sizeof(q), r, SMIO_MAX_PAYLOAD, &rlen, NULL,
		       CLI_TIMEOUT_MS);
	if (rc) {
		free(r);
		return rc;
	}
	/* The codec checked that len bytes of text without a NUL follow. */
	tok = json_tokener_new();
	o = tok ? json_tokener_parse_ex(tok, (const char *)(r + 1), (int)r->len) : NULL;
	if (o && (json_tokener_get_error(tok) != json_tokener_success ||
		  !json_object_is_type(o, json_type_object))) {
		json_object_put(o);
		o = NULL;
	}
	rc = !tok ? -ENOMEM : o ? 0 : -EPROTO;
	if (tok)
		json_tokener_free(tok);
	free(r);
	*out = o;
	return rc;
}

const char *cli_event_kind_name(uint32_t kind)
{
	static const char *const names[SMIO_EV_KIND_END] = {
		[SMIO_EV_START] = "start", [SMIO_EV_BORROW] = "borrow",
		[SMIO_EV_RETURN] = "return", [SMIO_EV_RECLAIM] = "reclaim",
		[SMIO_EV_LINK_UP] = "link-up", [SMIO_EV_LINK_DOWN] = "link-down",
		[SMIO_EV_IOMMU_FAULT] = "iommu-fault", [SMIO_EV_DEV_FAULT] = "device-fault",
	};

	return kind < SMIO_EV_KIND_END && names[kind] ? names[kind] : "?";
}

static int add_bdf(struct json_object *o, const char *key, uint64_t bdf)
{
	char s[16];

	snprintf(s, sizeof(s), "%02x:%02x.%x", (unsigned)(bdf >> 8) & 0xff,
		 (unsigned)(bdf >> 3) & 0x1f, (unsigned)bdf & 7);
	return smio_json_add_str(o, key, s);
}

static int add_hex(struct json_object *o, const char *key, uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%" PRIx64, v);
	return smio_json_add_str(o, key, s);
}

/* The kind's own names for the fields a and b (smartio/proto/diag.h). */
static int fields_json(struct json_object *o, const struct smio_event *e)
{
	switch (e->kind) {
	case SMIO_EV_START:
		return smio_json_add_uint(o, "pid", e->a);
	case SMIO_EV_BORROW:
	case SMIO_EV_RETURN:
	case SMIO_EV_RECLAIM:
		return add_bdf(o, "bdf", e->a) || smio_json_add_uint(o, "peer_host", e->b);
	case SMIO_EV_LINK_UP:
	case SMIO_EV_LINK_DOWN:
		return smio_json_add_uint(o, "adapter", e->a) ||
		       (e->kind == SMIO_EV_LINK_DOWN && smio_json_add_uint(o, "link_errors", e->b));
	case SMIO_EV_IOMMU_FAULT:
		return add_bdf(o, "rid", e->a) || add_hex(o, "addr", e->b);
	case SMIO_EV_DEV_FAULT:
		return add_bdf(o, "bdf", e->a);
	}
	return 0;
}

static struct json_object *event_json(const struct smio_event *e)
{
	struct json_object *o = json_object_new_object();
	time_t sec = (time_t)(e->time_ns / 1000000000ull);
	char when[64];
	struct tm tm;

	if (!o)
		return NULL;
	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%06uZ",
		 (unsigned)(e->time_ns % 1000000000ull / 1000));
	if (smio_json_add_uint(o, "seq", e->seq) || smio_json_add_uint(o, "time_ns", e->time_ns) ||
	    smio_json_add_str(o, "time", when) ||
	    smio_json_add_str(o, "kind", cli_event_kind_name(e->kind)) ||
	    smio_json_add_uint(o, "host", e->host) || fields_json(o, e) ||
	    smio_json_add_str(o, "text", e->text)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int events_call(int fd, uint64_t since, struct smio_events *r)
{
	struct smio_events_req q = { .since = since, .max = SMIO_EVENTS_MAX };
	uint32_t rlen = 0;

	return smio_call(fd, SMIO_EVENTS, &q, sizeof(q), r, SMIO_MAX_PAYLOAD, &rlen, NULL,
			 CLI_TIMEOUT_MS);
}

int cli_events_fetch(int fd, uint64_t since, struct json_object **out, uint64_t *next)
{
	struct smio_events *r = malloc(SMIO_MAX_PAYLOAD);
	const struct smio_event *ev = (const struct smio_event *)(r + 1);
	struct json_object *arr = NULL;
	int rc;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	rc = events_call(fd, since, r);
	arr = rc ? NULL : json_object_new_array();
	if (!rc && !arr)
		rc = -ENOMEM;
	for (uint32_t i = 0; !rc && i < r->n; i++)
		rc = smio_json_push(arr, event_json(&ev[i]));
	if (!rc) {
		/* A restarted daemon numbers from 1 again: 0 says start over. */
		*next = r->last < since ? 0 : r->next;
		*out = arr;
	} else {
		json_object_put(arr);
	}
	free(r);
	return rc;
}
