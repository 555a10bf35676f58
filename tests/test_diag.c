// SPDX-License-Identifier: MIT
/*
 * The diagnostics messages against real daemons (docs/protocol.md,
 * "Diagnostics"): STATS is a JSON object with the documented fields;
 * malformed STATS and EVENTS requests are -EINVAL; EVENTS with a huge since
 * returns nothing and says where the log ends; a link taken down is a link
 * error in STATS and one event with a sane timestamp; STATS_CLEAR is
 * refused to a client (-EPERM) and zeroes the counters for the owner.
 * The default 3-host topology (tests/cluster_harness.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "cluster_harness.h"
#include "smartio/proto.h"

static struct json_object *stats(int fd)
{
	struct smio_stats_req q = { 0 };
	const struct smio_stats *h = (const struct smio_stats *)rbuf.b;
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;
	uint32_t rlen = 0;

	assert_non_null(tok);
	assert_int_equal(call(fd, SMIO_STATS, &q, sizeof(q), &rlen), 0);
	assert_int_equal(rlen, sizeof(*h) + h->len);
	o = json_tokener_parse_ex(tok, (const char *)(h + 1), (int)h->len);
	assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
	json_tokener_free(tok);
	assert_non_null(o);
	assert_true(json_object_is_type(o, json_type_object));
	return o;
}

static uint64_t num(struct json_object *o, const char *key)
{
	struct json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return (uint64_t)json_object_get_uint64(v);
}

static struct json_object *adapter0(struct json_object *s)
{
	struct json_object *a;

	assert_true(json_object_object_get_ex(s, "adapters", &a));
	assert_int_equal(json_object_array_length(a), 1);
	return json_object_array_get_idx(a, 0);
}

static const struct smio_events *events(int fd, uint64_t since, uint32_t max)
{
	struct smio_events_req q = { .since = since, .max = max };

	assert_int_equal(call(fd, SMIO_EVENTS, &q, sizeof(q), NULL), 0);
	return (const struct smio_events *)rbuf.b;
}

static void test_stats_fields(void **state)
{
	int cli = open_conn(0, SMIO_ROLE_CLIENT, 0);
	struct json_object *s, *v;

	(void)state;
	s = stats(cli);
	assert_int_equal(num(s, "host"), 0);
	assert_true(json_object_object_get_ex(s, "devices", &v) &&
		    json_object_is_type(v, json_type_array));
	assert_string_equal(json_object_get_string(json_object_object_get(adapter0(s), "link")),
			    "up");
	assert_int_equal(num(adapter0(s), "rid_total"), 32);
	json_object_put(s);
	close(cli);
}

static void test_malformed(void **state)
{
	int cli = open_conn(0, SMIO_ROLE_CLIENT, 0);
	struct smio_stats_req sq = { .flags = 1 };
	struct smio_events_req eq = { .since = 0, .max = 0 };
	uint8_t short_req[4] = { 0 };

	(void)state;
	assert_int_equal(call(cli, SMIO_STATS, &sq, sizeof(sq), NULL), -EINVAL);
	sq = (struct smio_stats_req){ .pad = 1 };
	assert_int_equal(call(cli, SMIO_STATS, &sq, sizeof(sq), NULL), -EINVAL);
	assert_int_equal(call(cli, SMIO_STATS, short_req, sizeof(short_req), NULL), -EINVAL);
	assert_int_equal(call(cli, SMIO_STATS, NULL, 0, NULL), -EINVAL);
	assert_int_equal(call(cli, SMIO_EVENTS, &eq, sizeof(eq), NULL), -EINVAL);
	eq.max = SMIO_EVENTS_MAX + 1;
	assert_int_equal(call(cli, SMIO_EVENTS, &eq, sizeof(eq), NULL), -EINVAL);
	eq = (struct smio_events_req){ .max = 1, .pad = 7 };
	assert_int_equal(call(cli, SMIO_EVENTS, &eq, sizeof(eq), NULL), -EINVAL);
	assert_int_equal(call(cli, SMIO_EVENTS, short_req, sizeof(short_req), NULL), -EINVAL);
	assert_int_equal(call(cli, SMIO_STATS_CLEAR, short_req, sizeof(short_req), NULL), -EINVAL);
	/* The connection is still in sync. */
	assert_int_equal(status(cli), 0);
	close(cli);
}

static void test_events_since(void **state)
{
	int cli = open_conn(1, SMIO_ROLE_CLIENT, 1);
	const struct smio_events *e;
	const struct smio_event *ev;
	uint64_t now = (uint64_t)time(NULL) * 1000000000ull, last;

	(void)state;
	e = events(cli, 0, SMIO_EVENTS_MAX);
	ev = (const struct smio_event *)(e + 1);
	assert_true(e->n >= 1 && e->first == 1 && e->last >= e->n);
	assert_int_equal(ev[0].seq, 1);
	assert_int_equal(ev[0].kind, SMIO_EV_START);
	assert_int_equal(ev[0].host, 1);
	assert_true(ev[0].time_ns <= now + 2000000000ull && ev[0].time_ns + 600e9 >= now);
	assert_int_equal(e->next, ev[e->n - 1].seq);
	last = e->last;
	e = events(cli, UINT64_MAX, SMIO_EVENTS_MAX);
	assert_int_equal(e->n, 0);
	assert_int_equal(e->next, UINT64_MAX);
	assert_int_equal(e->last, last);
	e = events(cli, last, 1);
	assert_int_equal(e->n, 0);
	assert_int_equal(e->next, last);
	close(cli);
}

static void test_link_down_and_clear(void **state)
{
	int cli = open_conn(0, SMIO_ROLE_CLIENT, 0), ctl = g.d[0].ctl;
	struct smio_ntb_link down = { .ntb = 0, .up = 0 }, up = { .ntb = 0, .up = 1 };
	struct json_object *s;
	const struct smio_events *e;
	const struct smio_event *ev;
	uint64_t t0, t1, since;

	(void)state;
	assert_int_equal(call(cli, SMIO_STATS_CLEAR, NULL, 0, NULL), -EPERM);
	assert_int_equal(call(ctl, SMIO_STATS_CLEAR, NULL, 0, NULL), 0);
	s = stats(cli);
	assert_int_equal(num(adapter0(s), "link_errors"), 0);
	json_object_put(s);
	since = events(cli, UINT64_MAX, 1)->last;

	t0 = (uint64_t)time(NULL) * 1000000000ull;
	assert_int_equal(call(ctl, SMIO_NTB_LINK, &down, sizeof(down), NULL), 0);
	t1 = (uint64_t)(time(NULL) + 1) * 1000000000ull;
	s = stats(cli);
	assert_string_equal(json_object_get_string(json_object_object_get(adapter0(s), "link")),
			    "down");
	assert_int_equal(num(adapter0(s), "link_errors"), 1);
	json_object_put(s);
	e = events(cli, since, SMIO_EVENTS_MAX);
	ev = (const struct smio_event *)(e + 1);
	assert_int_equal(e->n, 1);
	assert_int_equal(ev[0].kind, SMIO_EV_LINK_DOWN);
	assert_int_equal(ev[0].a, 0);
	assert_int_equal(ev[0].b, 1);
	assert_true(ev[0].time_ns >= t0 && ev[0].time_ns <= t1);
	assert_int_equal(call(ctl, SMIO_NTB_LINK, &up, sizeof(up), NULL), 0);
	e = events(cli, e->next, SMIO_EVENTS_MAX);
	assert_int_equal(e->n, 1);
	assert_int_equal(((const struct smio_event *)(e + 1))->kind, SMIO_EV_LINK_UP);

	/* Cleared: the link error is gone from STATS, the log keeps its events. */
	assert_int_equal(call(ctl, SMIO_STATS_CLEAR, NULL, 0, NULL), 0);
	s = stats(cli);
	assert_int_equal(num(adapter0(s), "link_errors"), 0);
	assert_int_equal(num(s, "iommu_faults"), 0);
	json_object_put(s);
	assert_true(events(cli, since, SMIO_EVENTS_MAX)->n == 2);
	close(cli);
}

static int group_setup(void **state)
{
	(void)state;
	return cluster_setup("diag", 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stats_fields, cluster_test_setup,
						cluster_test_teardown),
		cmocka_unit_test_setup_teardown(test_malformed, cluster_test_setup,
						cluster_test_teardown),
		cmocka_unit_test_setup_teardown(test_events_since, cluster_test_setup,
						cluster_test_teardown),
		cmocka_unit_test_setup_teardown(test_link_down_and_clear, cluster_test_setup,
						cluster_test_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, cluster_teardown);
}
