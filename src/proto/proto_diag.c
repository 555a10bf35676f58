// SPDX-License-Identifier: MIT
/* Codec checks of the diagnostics messages: STATS, STATS_CLEAR, EVENTS (diag.h). */
#include <errno.h>
#include <string.h>

#include "proto_priv.h"
#include "smartio/proto.h"

_Static_assert(sizeof(struct smio_stats_req) == 8, "stats_req layout");
_Static_assert(sizeof(struct smio_stats) == 8, "stats layout");
_Static_assert(sizeof(struct smio_event) == 40 + SMIO_EVENT_TEXT, "event layout");
_Static_assert(sizeof(struct smio_events_req) == 16, "events_req layout");
_Static_assert(sizeof(struct smio_events) == 32, "events layout");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_events) +
	       SMIO_EVENTS_MAX * sizeof(struct smio_event), "event list fits");

int smio_check_stats_req(const void *p, uint32_t len)
{
	struct smio_stats_req m;

	if (len != sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	return m.flags || m.pad ? -EINVAL : 0;
}

/* The text is all there is after the head, and holds no NUL. */
int smio_check_stats(const void *p, uint32_t len)
{
	const char *b = p;
	struct smio_stats m;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.pad || !m.len || m.len != len - sizeof(m))
		return -EINVAL;
	return memchr(b + sizeof(m), '\0', m.len) ? -EINVAL : 0;
}

int smio_check_events_req(const void *p, uint32_t len)
{
	struct smio_events_req m;

	if (len != sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	return !m.max || m.max > SMIO_EVENTS_MAX || m.pad ? -EINVAL : 0;
}

int smio_check_events(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_events m;
	struct smio_event e;
	uint64_t prev = 0;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_EVENTS_MAX || m.pad || len != sizeof(m) + (size_t)m.n * sizeof(e) ||
	    m.first > m.last || (!m.last && m.first))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		memcpy(&e, b + sizeof(m) + (size_t)i * sizeof(e), sizeof(e));
		if (e.seq <= prev || e.seq < m.first || e.seq > m.last || !e.kind ||
		    e.kind >= SMIO_EV_KIND_END || e.host > 65535 ||
		    !str_ok(e.text, sizeof(e.text)))
			return -EINVAL;
		prev = e.seq;
	}
	/* next is where the list ended: its last event, or the request's since. */
	return m.n && m.next != prev ? -EINVAL : 0;
}
