// SPDX-License-Identifier: MIT
/*
 * Wire protocol tests: header and payload validation for every type and
 * direction, framing over socketpairs (fd passing, resync, drain, timeouts,
 * EOF), smio_call against a scripted server thread, and the cluster
 * directory / environment helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "cluster_harness.h"    /* count_fds() */
#include "proto_samples.h"
#include "smartio/proto.h"
#include "util/smio_time.h"

#define BUFSZ	(SMIO_MAX_PAYLOAD + 64)

/* ---- helpers ---- */

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void close_pair(int sv[2])
{
	close(sv[0]);
	close(sv[1]);
}

static void write_all(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

static struct smio_hdr mkhdr(uint16_t type, uint32_t len, uint32_t seq, uint32_t flags)
{
	struct smio_hdr h = {
		.magic = SMIO_MAGIC, .version = SMIO_VERSION, .type = type,
		.len = len, .seq = seq, .flags = flags,
	};
	return h;
}

/* Valid sample payloads, one per type and direction: proto_samples.h. */

/* Numbers that are no message: the ends of the range (gaps are walked in full). */
static const uint16_t unknown_types[] = { 0, SMIO_TYPE_MAX, 0xffff };
#define NUNKNOWN (sizeof(unknown_types) / sizeof(unknown_types[0]))

/* Is there a row for this number? Asked of the list walk, not of the codec. */
static bool in_list(uint16_t type)
{
	for (size_t i = 0; i < smio_msg_count(); i++)
		if (smio_msg_at(i)->type == type)
			return true;
	return false;
}

/* Check a request payload given as a struct lvalue. */
#define REQ(type, v)	smio_payload_check(type, false, &(v), sizeof(v))
#define REP(type, v)	smio_payload_check(type, true, &(v), sizeof(v))

/* ---- the message list (smartio/proto/msgs.h) ---- */

/*
 * The list expanded here, apart from the codec: the enum's values, names,
 * families, roles, flags and payload columns must be what the codec's rows
 * say. The validator column is dropped unexpanded (validators are private).
 */
#define T_PL_KIND_(kind, size, check)	(kind)
#define T_PL_SIZE_(kind, size, check)	(size)
#define T_PL_KIND(spec)			T_PL_KIND_ spec
#define T_PL_SIZE(spec)			T_PL_SIZE_ spec

struct row {
	const char *name;
	uint16_t type, num;
	int family;
	uint32_t roles, flags;
	uint32_t req_kind, req_size, rep_kind, rep_size;
};

#define T_ROW(name, num, fam, roles, flags, req, rep)					\
	{ #name, SMIO_##name, (num), SMIO_FAM_##fam, (roles), (flags),			\
	  T_PL_KIND(req), (uint32_t)T_PL_SIZE(req), T_PL_KIND(rep), (uint32_t)T_PL_SIZE(rep) },

static const struct row rows[] = { SMIO_MSG_LIST(T_ROW) };
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void test_msg_list(void **state)
{
	size_t i, c;

	assert_int_equal(smio_msg_count(), NROWS);
	assert_null(smio_msg_at(NROWS));
	assert_null(smio_msg_at(SIZE_MAX));
	for (i = 0; i < NROWS; i++) {
		const struct smio_msg_desc *d = smio_msg_at(i);
		const struct row *w = &rows[i];

		assert_non_null(d);
		/* The enum is the number column; the codec holds the row as written. */
		assert_int_equal(w->type, w->num);
		assert_int_equal(d->type, w->num);
		assert_string_equal(d->name, w->name);
		assert_int_equal(d->family, w->family);
		assert_int_equal(d->roles, w->roles);
		assert_int_equal(d->flags, w->flags);
		assert_int_equal(d->req.kind, w->req_kind);
		assert_int_equal(d->req.size, w->req_size);
		assert_int_equal(d->rep.kind, w->rep_kind);
		assert_int_equal(d->rep.size, w->rep_size);

		/* A name of capitals, digits and '_', as smio_type_name() gives it. */
		assert_true(d->name[0] >= 'A' && d->name[0] <= 'Z');
		for (c = 0; d->name[c]; c++)
			assert_true((d->name[c] >= 'A' && d->name[c] <= 'Z') ||
				    (d->name[c] >= '0' && d->name[c] <= '9') || d->name[c] == '_');
		assert_string_equal(smio_type_name(d->type), d->name);

		/* Numbers: never 0, increasing (so unique), below SMIO_TYPE_MAX. */
		assert_true(d->type > 0 && d->type < SMIO_TYPE_MAX);
		if (i)
			assert_true(d->type > smio_msg_at(i - 1)->type);
		assert_ptr_equal(smio_msg_desc(d->type), d);

		/* Someone may send it, and only known roles and flags. */
		assert_int_not_equal(d->roles, 0);
		assert_int_equal(d->roles & ~SMIO_R_ANY, 0);
		assert_int_equal(d->flags & ~SMIO_MSG_F_KNOWN, 0);
		assert_int_equal(smio_msg_roles(d->type), d->roles);
		assert_int_equal(smio_msg_flags(d->type), d->flags);
		assert_true(d->family > 0 && d->family < SMIO_FAM_COUNT);
		assert_int_equal(smio_msg_family(d->type), d->family);
		assert_string_not_equal(smio_family_name(d->family), "UNKNOWN");

		/* Every request has a payload rule; a reply has one unless one-way. */
		assert_true(d->req.kind >= SMIO_PAYLOAD_EMPTY && d->req.kind <= SMIO_PAYLOAD_VAR);
		assert_true(d->rep.kind <= SMIO_PAYLOAD_VAR);
		assert_int_equal(d->rep.kind == SMIO_PAYLOAD_NONE,
				 !!(d->flags & SMIO_MSG_F_NO_REPLY));
		assert_true(d->req.kind == SMIO_PAYLOAD_EMPTY ? d->req.size == 0 :
			    d->req.size > 0 && d->req.size <= SMIO_MAX_PAYLOAD);
		assert_true(d->rep.kind <= SMIO_PAYLOAD_EMPTY ? d->rep.size == 0 :
			    d->rep.size > 0 && d->rep.size <= SMIO_MAX_PAYLOAD);
	}
	/* SMIO_TYPE_MAX is one past the highest number. */
	assert_int_equal(SMIO_TYPE_MAX, rows[NROWS - 1].num + 1);
	/* Queries about numbers without a row. */
	for (i = 0; i < NUNKNOWN; i++) {
		assert_null(smio_msg_desc(unknown_types[i]));
		assert_int_equal(smio_msg_roles(unknown_types[i]), 0);
		assert_int_equal(smio_msg_flags(unknown_types[i]), 0);
		assert_int_equal(smio_msg_family(unknown_types[i]), -EPROTO);
	}
	assert_string_equal(smio_family_name(0), "UNKNOWN");
	assert_string_equal(smio_family_name(SMIO_FAM_COUNT), "UNKNOWN");
	assert_string_equal(smio_family_name(SMIO_FAM_LEND), "LEND");
	/* Spot checks of rows the daemon depends on. */
	assert_int_equal(smio_msg_roles(SMIO_SHUTDOWN), SMIO_R_ADMIN);
	assert_int_equal(smio_msg_roles(SMIO_PEER_STEP), SMIO_R_PEER);
	assert_int_equal(smio_msg_roles(SMIO_SEG_CREATE), SMIO_R_LOCAL);
	assert_int_equal(smio_msg_flags(SMIO_PEER_INVALIDATE), SMIO_MSG_F_NO_REPLY);
	assert_int_equal(smio_msg_flags(SMIO_PEER_SEG_GONE), SMIO_MSG_F_NO_REPLY);
	assert_int_equal(smio_msg_family(SMIO_PEER_LEND_HOPS), SMIO_FAM_LEND);
}

/* Every number without a row is unknown to every part of the codec. */
static void test_unlisted_numbers(void **state)
{
	struct smio_hdr h;
	uint32_t t;

	for (t = 0; t <= 0xffff; t++) {
		if (in_list((uint16_t)t))
			continue;
		h = mkhdr((uint16_t)t, 0, 1, 0);
		assert_int_equal(smio_hdr_check(&h), -EPROTO);
		assert_string_equal(smio_type_name((uint16_t)t), "UNKNOWN");
		assert_null(smio_msg_desc((uint16_t)t));
		assert_int_equal(smio_payload_check((uint16_t)t, false, NULL, 0), -EPROTO);
		assert_int_equal(smio_payload_check((uint16_t)t, true, NULL, 0), -EPROTO);
	}
}

/* ---- header ---- */

static void test_hdr_valid(void **state)
{
	struct smio_hdr h;
	size_t i;

	for (i = 0; i < smio_msg_count(); i++) {
		h = mkhdr(smio_msg_at(i)->type, 0, 1, 0);
		assert_int_equal(smio_hdr_check(&h), 0);
		h.flags = SMIO_F_REPLY | SMIO_F_FD;
		h.status = -ENOENT;
		assert_int_equal(smio_hdr_check(&h), 0);
	}
	h = mkhdr(SMIO_STATUS, SMIO_MAX_PAYLOAD, 7, 0);
	assert_int_equal(smio_hdr_check(&h), 0);
}

static void test_hdr_invalid(void **state)
{
	struct smio_hdr h;
	size_t i;

	h = mkhdr(SMIO_STATUS, 0, 1, 0);
	h.magic = 0x534d494f;			/* byte-swapped magic */
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h = mkhdr(SMIO_STATUS, 0, 1, 0);
	h.version = 0;
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h.version = SMIO_VERSION + 1;
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	for (i = 0; i < NUNKNOWN; i++) {
		h = mkhdr(unknown_types[i], 0, 1, 0);
		assert_int_equal(smio_hdr_check(&h), -EPROTO);
	}
	h = mkhdr(SMIO_STATUS, SMIO_MAX_PAYLOAD + 1, 1, 0);
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h = mkhdr(SMIO_STATUS, UINT32_MAX, 1, 0);
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h = mkhdr(SMIO_STATUS, 0, 1, 0x4);	/* unknown flag */
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h = mkhdr(SMIO_STATUS, 0, 1, 0);
	h.status = -EINVAL;			/* requests carry no status */
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h.flags = SMIO_F_REPLY;
	h.status = 1;				/* statuses are 0 or -errno */
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h.status = -4096;
	assert_int_equal(smio_hdr_check(&h), -EPROTO);
	h.status = -4095;
	assert_int_equal(smio_hdr_check(&h), 0);
	assert_int_equal(smio_hdr_check(NULL), -EINVAL);
}

static void test_type_names(void **state)
{
	size_t i;

	for (i = 0; i < smio_msg_count(); i++)
		assert_string_not_equal(smio_type_name(smio_msg_at(i)->type), "UNKNOWN");
	for (i = 0; i < NUNKNOWN; i++)
		assert_string_equal(smio_type_name(unknown_types[i]), "UNKNOWN");
	assert_string_equal(smio_type_name(SMIO_HELLO), "HELLO");
	assert_string_equal(smio_type_name(SMIO_PEER_INVALIDATE), "PEER_INVALIDATE");
}

/* ---- payloads: every type, both directions ---- */

/*
 * Every message has a valid sample of each direction it has (NO_DIR for the
 * reply of a one-way message), and the sample fits the row's length rule.
 */
static void test_all_valid(void **state)
{
	static uint8_t buf[BUFSZ];
	size_t i, n;
	int r;

	for (i = 0; i < smio_msg_count(); i++) {
		const struct smio_msg_desc *d = smio_msg_at(i);

		for (r = 0; r < 2; r++) {
			const struct smio_payload_desc *pd = r ? &d->rep : &d->req;

			n = sample(d->type, r, buf);
			if (pd->kind == SMIO_PAYLOAD_NONE) {
				assert_true(n == NO_DIR);
				continue;
			}
			if (n == NO_DIR)
				fail_msg("no %s sample for %s", r ? "reply" : "request", d->name);
			if (pd->kind == SMIO_PAYLOAD_VAR)
				assert_true(n >= pd->size);
			else
				assert_int_equal(n, pd->size);
			assert_int_equal(smio_payload_check(d->type, r, buf, (uint32_t)n), 0);
		}
	}
}

/* Every sample is exact: one byte more or less is rejected. */
static void test_all_wrong_length(void **state)
{
	static uint8_t buf[BUFSZ];
	size_t i, n;
	int r;

	for (i = 0; i < smio_msg_count(); i++) {
		for (r = 0; r < 2; r++) {
			uint16_t t = smio_msg_at(i)->type;

			n = sample(t, r, buf);
			if (n == NO_DIR)
				continue;
			buf[n] = 0;
			assert_int_equal(smio_payload_check(t, r, buf, (uint32_t)n + 1), -EINVAL);
			if (n)
				assert_int_equal(smio_payload_check(t, r, buf, (uint32_t)n - 1),
						 -EINVAL);
			assert_int_equal(smio_payload_check(t, r, buf, SMIO_MAX_PAYLOAD + 1),
					 -EINVAL);
		}
	}
}

/* A truncated variable payload: shorter than even its fixed head. */
static void test_truncated_variable(void **state)
{
	static uint8_t buf[BUFSZ];
	uint32_t k;

	fill_func_list(buf, 1);
	for (k = 0; k < sizeof(struct smio_func_list); k++)
		assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, k), -EINVAL);
	fill_route_reply(buf, 1, false);
	for (k = 0; k < sizeof(struct smio_route_reply); k += 7)
		assert_int_equal(smio_payload_check(SMIO_ROUTE, true, buf, k), -EINVAL);
	fill_faults(buf, 1, 1);
	for (k = 0; k < sizeof(struct smio_iommu_faults); k++)
		assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, k), -EINVAL);
}

static void test_unknown_and_oneway(void **state)
{
	struct smio_invalidate inv = { .origin_host = 1 };
	size_t i;

	for (i = 0; i < NUNKNOWN; i++) {
		assert_int_equal(smio_payload_check(unknown_types[i], false, NULL, 0), -EPROTO);
		assert_int_equal(smio_payload_check(unknown_types[i], true, NULL, 0), -EPROTO);
	}
	assert_int_equal(REQ(SMIO_PEER_INVALIDATE, inv), 0);
	assert_int_equal(REP(SMIO_PEER_INVALIDATE, inv), -EPROTO);
	assert_int_equal(smio_payload_check(SMIO_PEER_INVALIDATE, true, NULL, 0), -EPROTO);
	/* Every one-way message refuses any reply, even an empty one. */
	for (i = 0; i < smio_msg_count(); i++)
		if (smio_msg_at(i)->flags & SMIO_MSG_F_NO_REPLY)
			assert_int_equal(smio_payload_check(smio_msg_at(i)->type, true, NULL, 0),
					 -EPROTO);
	/* A length with no buffer is a caller bug, not a crash. */
	assert_int_equal(smio_payload_check(SMIO_CFG_READ, false, NULL, 12), -EINVAL);
}

/* Payloads need not be aligned: the checker copies before reading fields. */
static void test_unaligned(void **state)
{
	static uint8_t buf[BUFSZ + 8];
	size_t i, n;
	int r;

	for (i = 0; i < smio_msg_count(); i++) {
		for (r = 0; r < 2; r++) {
			uint16_t t = smio_msg_at(i)->type;

			n = sample(t, r, buf + 1);
			if (n == NO_DIR)
				continue;
			assert_int_equal(smio_payload_check(t, r, buf + 1, (uint32_t)n), 0);
		}
	}
}

static void test_empty_payloads(void **state)
{
	uint8_t one = 0;

	assert_int_equal(smio_payload_check(SMIO_STATUS, false, NULL, 0), 0);
	assert_int_equal(smio_payload_check(SMIO_STATUS, false, &one, 1), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_SHUTDOWN, true, &one, 1), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_CFG_WRITE, true, &one, 1), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, false, &one, 1), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, false, &one, 1), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_IOMMU_MAP, true, &one, 1), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_PEER_DB, true, &one, 1), -EINVAL);
}

/* ---- field ranges ---- */

static void test_hello_fields(void **state)
{
	struct smio_hello h = { SMIO_ROLE_ADMIN, 0, 1, SMIO_VERSION };
	struct smio_hello_reply r = { .version = SMIO_VERSION };

	assert_int_equal(REQ(SMIO_HELLO, h), 0);
	h.role = SMIO_ROLE_PEER;
	assert_int_equal(REQ(SMIO_HELLO, h), 0);
	h.role = 0;
	assert_int_equal(REQ(SMIO_HELLO, h), -EINVAL);
	h.role = SMIO_ROLE_ADMIN + 1;
	assert_int_equal(REQ(SMIO_HELLO, h), -EINVAL);
	h.role = SMIO_ROLE_CLIENT;
	/* Another version is the daemon's to refuse (-EPROTONOSUPPORT). */
	h.version = SMIO_VERSION + 1;
	assert_int_equal(REQ(SMIO_HELLO, h), 0);
	h.version = 0;
	assert_int_equal(REQ(SMIO_HELLO, h), 0);

	assert_int_equal(REP(SMIO_HELLO, r), 0);
	r.pad = 1;
	assert_int_equal(REP(SMIO_HELLO, r), -EINVAL);
	r.pad = 0;
	r.version = 2;
	assert_int_equal(REP(SMIO_HELLO, r), -EINVAL);
}

static void test_status_fields(void **state)
{
	struct smio_status s = { .iommu = 0, .name = "x" };

	assert_int_equal(REP(SMIO_STATUS, s), 0);
	s.iommu = 2;
	assert_int_equal(REP(SMIO_STATUS, s), -EINVAL);
	s.iommu = 1;
	memset(s.name, 'a', sizeof(s.name));	/* not NUL-terminated */
	assert_int_equal(REP(SMIO_STATUS, s), -EINVAL);
}

static void test_cfg_fields(void **state)
{
	static const uint16_t types[] = { SMIO_CFG_READ, SMIO_CFG_WRITE };
	struct smio_cfg c;
	size_t i;

	for (i = 0; i < 2; i++) {
		uint16_t t = types[i];

		c = (struct smio_cfg){ .off = 4095, .size = 1, .value = 0xff };
		assert_int_equal(REQ(t, c), 0);
		c = (struct smio_cfg){ .off = 4094, .size = 2, .value = 0xffff };
		assert_int_equal(REQ(t, c), 0);
		c = (struct smio_cfg){ .off = 4092, .size = 4, .value = UINT32_MAX };
		assert_int_equal(REQ(t, c), 0);

		c = (struct smio_cfg){ .off = 0, .size = 0 };
		assert_int_equal(REQ(t, c), -EINVAL);
		c.size = 3;
		assert_int_equal(REQ(t, c), -EINVAL);
		c.size = 8;
		assert_int_equal(REQ(t, c), -EINVAL);
		c = (struct smio_cfg){ .off = 4096, .size = 1 };
		assert_int_equal(REQ(t, c), -EINVAL);
		c.off = 0xffff;
		assert_int_equal(REQ(t, c), -EINVAL);
		c = (struct smio_cfg){ .off = 1, .size = 2 };
		assert_int_equal(REQ(t, c), -EINVAL);
		c = (struct smio_cfg){ .off = 2, .size = 4 };
		assert_int_equal(REQ(t, c), -EINVAL);
		c = (struct smio_cfg){ .off = 0, .size = 4, .pad = { 0, 0, 1 } };
		assert_int_equal(REQ(t, c), -EINVAL);
		c = (struct smio_cfg){ .off = 0, .size = 1, .value = 0x100 };
		assert_int_equal(REQ(t, c), -EINVAL);
		c = (struct smio_cfg){ .off = 0, .size = 2, .value = 0x10000 };
		assert_int_equal(REQ(t, c), -EINVAL);
	}
	/* The read reply is checked the same way. */
	c = (struct smio_cfg){ .off = 2, .size = 4 };
	assert_int_equal(REP(SMIO_CFG_READ, c), -EINVAL);
}

static void test_cfg_dump_fields(void **state)
{
	static uint8_t buf[SMIO_CFG_SPACE + 1];
	struct smio_bdf b = { .bdf = 0xffff };

	assert_int_equal(REQ(SMIO_CFG_DUMP, b), 0);
	b.pad = 1;
	assert_int_equal(REQ(SMIO_CFG_DUMP, b), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_CFG_DUMP, true, buf, 4096), 0);
	assert_int_equal(smio_payload_check(SMIO_CFG_DUMP, true, buf, 4095), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_CFG_DUMP, true, buf, 4097), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_CFG_DUMP, true, NULL, 0), -EINVAL);
}

static void test_route_req_fields(void **state)
{
	static const uint16_t types[] = { SMIO_ROUTE, SMIO_MAP };
	struct smio_route_req r;
	size_t i;

	for (i = 0; i < 2; i++) {
		uint16_t t = types[i];

		r = (struct smio_route_req){ .write = 1, .nocache = 1, .len = 1 };
		assert_int_equal(REQ(t, r), 0);
		r.len = 1ull << 40;
		assert_int_equal(REQ(t, r), 0);
		r.addr = UINT64_MAX - r.len + 1;	/* ends exactly at 2^64: ok */
		assert_int_equal(REQ(t, r), 0);

		r = (struct smio_route_req){ .write = 2, .len = 1 };
		assert_int_equal(REQ(t, r), -EINVAL);
		r = (struct smio_route_req){ .nocache = 2, .len = 1 };
		assert_int_equal(REQ(t, r), -EINVAL);
		r = (struct smio_route_req){ .pad = 1, .len = 1 };
		assert_int_equal(REQ(t, r), -EINVAL);
		r = (struct smio_route_req){ .len = 0 };
		assert_int_equal(REQ(t, r), -EINVAL);
		r = (struct smio_route_req){ .len = (1ull << 40) + 1 };
		assert_int_equal(REQ(t, r), -EINVAL);
		r = (struct smio_route_req){ .addr = UINT64_MAX - 1, .len = 3 };
		assert_int_equal(REQ(t, r), -EINVAL);
	}
}

static void test_route_reply_fields(void **state)
{
	static const uint16_t types[] = { SMIO_ROUTE, SMIO_PEER_STEP };
	static uint8_t buf[BUFSZ];
	const size_t hop0 = sizeof(struct smio_route_reply);
	struct smio_route_reply *r = (struct smio_route_reply *)buf;
	struct smio_hop *h0 = (struct smio_hop *)(buf + hop0);
	size_t i, n;

	for (i = 0; i < 2; i++) {
		uint16_t t = types[i];

		n = fill_route_reply(buf, 0, false);
		assert_int_equal(smio_payload_check(t, true, buf, n), 0);
		n = fill_route_reply(buf, SMIO_MAX_HOPS, true);
		assert_int_equal(smio_payload_check(t, true, buf, n), 0);

		/* nhops over the bound, with a length that matches it */
		n = fill_route_reply(buf, SMIO_MAX_HOPS + 1, false);
		assert_int_equal(smio_payload_check(t, true, buf, n), -EINVAL);
		/* nhops that disagrees with the length */
		n = fill_route_reply(buf, 3, false);
		r->nhops = 2;
		assert_int_equal(smio_payload_check(t, true, buf, n), -EINVAL);
		r->nhops = 4;
		assert_int_equal(smio_payload_check(t, true, buf, n), -EINVAL);

#define BAD(stmt) do { \
		n = fill_route_reply(buf, 3, false); \
		stmt; \
		assert_int_equal(smio_payload_check(t, true, buf, n), -EINVAL); \
	} while (0)
		BAD(h0->kind = 0);
		BAD(h0[2].kind = 10);
		BAD(h0[1].pad = 1);
		BAD(memset(h0[1].name, 'x', sizeof(h0->name)));
		BAD(memset(r->reason, 'x', sizeof(r->reason)));
		BAD(r->pad = 1);
		BAD(r->tgt.pad = 1);
		BAD(r->cached = 2);
		BAD(r->forward = 2);
		BAD(r->status = -1);
		BAD(r->pad2[2] = 1);
		BAD(r->next_cz = 3);
		BAD(r->next_cz = 1);                     /* a remap, but no forward */
		BAD((r->forward = 1, r->next_cz = 1, r->next_rid = 0x100));  /* a UID to the OWNER */
		BAD((r->forward = 1, r->next_rid = 0x100));  /* a UID, no IOPort */
		n = fill_route_reply(buf, 3, true);
		r->next_cz = 2;
		r->next_rid = 0xe000;                     /* to the USER as its UID */
		assert_int_equal(smio_payload_check(t, true, buf, n), 0);
		r->next_cz = 1;
		r->next_rid = 0;                          /* to the OWNER */
		assert_int_equal(smio_payload_check(t, true, buf, n), 0);
#undef BAD
	}
}

static void test_map_reply_fields(void **state)
{
	struct smio_map_reply m = { .offset = 0, .len = 4096, .fd_size = 4096 };

	assert_int_equal(REP(SMIO_MAP, m), 0);
	m.pad = 1;
	assert_int_equal(REP(SMIO_MAP, m), -EINVAL);
	m = (struct smio_map_reply){ .offset = 1, .len = 4096, .fd_size = 4096 };
	assert_int_equal(REP(SMIO_MAP, m), -EINVAL);
	m = (struct smio_map_reply){ .offset = 8192, .len = 0, .fd_size = 4096 };
	assert_int_equal(REP(SMIO_MAP, m), -EINVAL);
	m = (struct smio_map_reply){ .offset = UINT64_MAX, .len = 2, .fd_size = UINT64_MAX };
	assert_int_equal(REP(SMIO_MAP, m), -EINVAL);
	m = (struct smio_map_reply){ .status = -1 };
	assert_int_equal(REP(SMIO_MAP, m), -EINVAL);
}

static void test_func_list_fields(void **state)
{
	static uint8_t buf[BUFSZ];
	const size_t f0 = sizeof(struct smio_func_list);
	struct smio_func_list *l = (struct smio_func_list *)buf;
	struct smio_func_info *f = (struct smio_func_info *)(buf + f0);
	size_t n;

	n = fill_func_list(buf, 0);
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), 0);
	n = fill_func_list(buf, SMIO_MAX_FUNCS);
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), 0);
	n = fill_func_list(buf, SMIO_MAX_FUNCS + 1);
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);

	n = fill_func_list(buf, 2);
	l->n = 3;
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);
	l->n = UINT32_MAX;	/* n * size must not wrap into a match */
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);
	n = fill_func_list(buf, 2);
	l->pad = 1;
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);
	n = fill_func_list(buf, 2);
	memset(f[1].name, 'n', sizeof(f->name));
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);
	n = fill_func_list(buf, 2);
	memset(f[0].model, 'm', sizeof(f->model));
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);
	n = fill_func_list(buf, 2);
	f[0].pad = 1;
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);
	n = fill_func_list(buf, 2);
	f[1].lendable = 2;
	assert_int_equal(smio_payload_check(SMIO_FUNC_LIST, true, buf, n), -EINVAL);
}

static void test_ntb_fields(void **state)
{
	struct smio_ntb_ref ref = { .pad = 1 };
	struct smio_ntb_info ni = { .lut_entries = 4, .lut_used = 4, .name = "n" };
	struct smio_ntb_lut lut = { .entry = 1 };
	struct smio_ntb_rid rid = { .rid = 0x100 };
	struct smio_ntb_link link = { .up = 0 };
	struct smio_ntb_spad sp = { .write = 0 };

	assert_int_equal(REQ(SMIO_NTB_INFO, ref), -EINVAL);
	assert_int_equal(REP(SMIO_NTB_INFO, ni), 0);
	ni.lut_used = 5;
	assert_int_equal(REP(SMIO_NTB_INFO, ni), -EINVAL);
	ni.lut_used = 0;
	ni.rid_used = 1;
	assert_int_equal(REP(SMIO_NTB_INFO, ni), -EINVAL);
	ni.rid_used = 0;
	ni.link_up = 2;
	assert_int_equal(REP(SMIO_NTB_INFO, ni), -EINVAL);
	ni.link_up = 0;
	memset(ni.name, 'q', sizeof(ni.name));
	assert_int_equal(REP(SMIO_NTB_INFO, ni), -EINVAL);

	assert_int_equal(REQ(SMIO_NTB_LUT_SET, lut), 0);
	assert_int_equal(REQ(SMIO_NTB_LUT_CLEAR, lut), 0);
	lut.pad = 1;
	assert_int_equal(REQ(SMIO_NTB_LUT_SET, lut), -EINVAL);
	assert_int_equal(REQ(SMIO_NTB_LUT_CLEAR, lut), -EINVAL);
	lut.pad = 0;
	lut.entry = UINT32_MAX;		/* allocate-first-free is LUT_SET only */
	assert_int_equal(REQ(SMIO_NTB_LUT_SET, lut), 0);
	assert_int_equal(REQ(SMIO_NTB_LUT_CLEAR, lut), -EINVAL);

	assert_int_equal(REQ(SMIO_NTB_RID_ADD, rid), 0);
	rid.pad = 1;
	assert_int_equal(REQ(SMIO_NTB_RID_ADD, rid), -EINVAL);
	assert_int_equal(REQ(SMIO_NTB_RID_DEL, rid), -EINVAL);

	assert_int_equal(REQ(SMIO_NTB_LINK, link), 0);
	link.up = 2;
	assert_int_equal(REQ(SMIO_NTB_LINK, link), -EINVAL);

	assert_int_equal(REQ(SMIO_NTB_SPAD, sp), 0);
	sp.write = 2;
	assert_int_equal(REQ(SMIO_NTB_SPAD, sp), -EINVAL);
	assert_int_equal(REP(SMIO_NTB_SPAD, sp), -EINVAL);
	assert_int_equal(REQ(SMIO_PEER_SPAD, sp), -EINVAL);
	assert_int_equal(REP(SMIO_PEER_SPAD, sp), -EINVAL);
}

static void test_iommu_fields(void **state)
{
	struct smio_iommu io = { .op = SMIO_IOMMU_FREE };
	struct smio_iommu_map m;
	static const uint16_t maps[] = { SMIO_IOMMU_MAP, SMIO_IOMMU_UNMAP };
	size_t i;

	assert_int_equal(REQ(SMIO_IOMMU_DOMAIN, io), 0);
	io.op = SMIO_IOMMU_DETACH;
	assert_int_equal(REP(SMIO_IOMMU_DOMAIN, io), 0);
	io.op = 0;
	assert_int_equal(REQ(SMIO_IOMMU_DOMAIN, io), -EINVAL);
	io.op = SMIO_IOMMU_DETACH + 1;
	assert_int_equal(REQ(SMIO_IOMMU_DOMAIN, io), -EINVAL);
	io.op = SMIO_IOMMU_ALLOC;
	io.pad[2] = 1;
	assert_int_equal(REQ(SMIO_IOMMU_DOMAIN, io), -EINVAL);

	for (i = 0; i < 2; i++) {
		uint16_t t = maps[i];

#define MAP(...) (m = (struct smio_iommu_map){ __VA_ARGS__ }, REQ(t, m))
		assert_int_equal(MAP(.prot = 1, .size = 4096), 0);
		assert_int_equal(MAP(.prot = 2, .size = 4096), 0);
		/* The last page of the address space is fine; one past it is not. */
		assert_int_equal(MAP(.prot = 3, .iova = UINT64_MAX - 4095, .size = 4096), 0);
		assert_int_equal(MAP(.prot = 3, .iova = UINT64_MAX - 4095, .size = 8192),
				 -EINVAL);
		assert_int_equal(MAP(.prot = 0, .size = 4096), -EINVAL);
		assert_int_equal(MAP(.prot = 4, .size = 4096), -EINVAL);
		assert_int_equal(MAP(.prot = 1, .size = 0), -EINVAL);
		assert_int_equal(MAP(.prot = 1, .size = 4095), -EINVAL);
		assert_int_equal(MAP(.prot = 1, .size = 4096, .iova = 0x800), -EINVAL);
		assert_int_equal(MAP(.prot = 1, .size = 4096, .paddr = 1), -EINVAL);
		assert_int_equal(MAP(.prot = 1, .size = 1ull << 63, .iova = 1ull << 63), 0);
		assert_int_equal(MAP(.prot = 1, .size = 1ull << 63, .iova = (1ull << 63) + 4096),
				 -EINVAL);
		assert_int_equal(MAP(.prot = 1, .size = 1ull << 63,
				     .paddr = (1ull << 63) + 4096), -EINVAL);
#undef MAP
	}
}

static void test_faults_fields(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_iommu_faults *fs = (struct smio_iommu_faults *)buf;
	struct smio_iommu_fault *f = (struct smio_iommu_fault *)(buf + sizeof(*fs));
	size_t n;

	n = fill_faults(buf, 0, 0);
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, n), 0);
	n = fill_faults(buf, SMIO_MAX_FAULTS, 1000);
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, n), 0);
	n = fill_faults(buf, SMIO_MAX_FAULTS + 1, 1000);
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, n), -EINVAL);
	n = fill_faults(buf, 2, 5);
	fs->n = 1;
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, n), -EINVAL);
	n = fill_faults(buf, 2, 5);
	fs->pad = 1;
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, n), -EINVAL);
	n = fill_faults(buf, 2, 1);	/* fewer faults in total than listed */
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, n), -EINVAL);
	n = fill_faults(buf, 2, 5);
	f[1].write = 2;
	assert_int_equal(smio_payload_check(SMIO_IOMMU_FAULTS, true, buf, n), -EINVAL);
}

static void test_peer_fields(void **state)
{
	struct smio_step s;
	struct smio_invalidate inv = { .origin_host = 3, .epoch = 1 };

	s = (struct smio_step){ .write = 1, .len = 1ull << 40 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), 0);
	s = (struct smio_step){ .write = 2, .len = 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);
	s = (struct smio_step){ .pad = 1, .len = 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);
	s = (struct smio_step){ .pad2 = { 1 }, .len = 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);
	/* The cZodiac remap: a direction, and a requester only towards the USER. */
	s = (struct smio_step){ .cz = 2, .rid = 0xe000, .len = 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), 0);
	s = (struct smio_step){ .cz = 1, .len = 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), 0);
	s = (struct smio_step){ .cz = 1, .rid = 0xe000, .len = 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);
	s = (struct smio_step){ .cz = 3, .len = 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);
	s = (struct smio_step){ .len = 0 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);
	s = (struct smio_step){ .len = (1ull << 40) + 1 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);
	s = (struct smio_step){ .addr = UINT64_MAX, .len = 2 };
	assert_int_equal(REQ(SMIO_PEER_STEP, s), -EINVAL);

	assert_int_equal(REQ(SMIO_PEER_INVALIDATE, inv), 0);
	inv.link_gen = 7;
	assert_int_equal(REQ(SMIO_PEER_INVALIDATE, inv), 0);
	inv.origin_host = 0x10000;
	assert_int_equal(REQ(SMIO_PEER_INVALIDATE, inv), -EINVAL);
}

static void test_segment_fields(void **state)
{
	struct smio_seg_create c;
	struct smio_seg_info i;
	struct smio_seg_id id;
	struct smio_seg_avail av;
	struct smio_seg_connect cn;
	struct smio_seg_conn sc;
	struct smio_seg_map m;
	struct smio_peer_seg ps;
	struct smio_peer_seg_where pw;
	struct smio_seg_conn_p2p cp;
	struct smio_peer_memfd pm;

	c = (struct smio_seg_create){ .segid = 1, .size = 1, .flags = SMIO_SEG_F_EMPTY };
	assert_int_equal(REQ(SMIO_SEG_CREATE, c), 0);
	c.size = 1ull << 40;
	assert_int_equal(REQ(SMIO_SEG_CREATE, c), 0);
	c.size = (1ull << 40) + 1;
	assert_int_equal(REQ(SMIO_SEG_CREATE, c), -EINVAL);
	c.size = 0;
	assert_int_equal(REQ(SMIO_SEG_CREATE, c), -EINVAL);
	c = (struct smio_seg_create){ .size = 1, .flags = 2 };
	assert_int_equal(REQ(SMIO_SEG_CREATE, c), -EINVAL);

	i = (struct smio_seg_info){ .segid = 1, .flags = SMIO_SEG_F_EMPTY, .size = 4096 };
	assert_int_equal(REP(SMIO_SEG_CREATE, i), 0);
	i.addr = 4096;          /* an empty segment has no address */
	assert_int_equal(REP(SMIO_SEG_CREATE, i), -EINVAL);
	i = (struct smio_seg_info){ .segid = 1, .addr = 4096, .size = 4097 };
	assert_int_equal(REP(SMIO_SEG_CREATE, i), -EINVAL);
	i = (struct smio_seg_info){ .segid = 1, .addr = 100, .size = 4096 };
	assert_int_equal(REP(SMIO_SEG_CREATE, i), -EINVAL);
	i = (struct smio_seg_info){ .segid = SMIO_SEGID_AUTO, .addr = 4096, .size = 4096 };
	assert_int_equal(REP(SMIO_SEG_CREATE, i), -EINVAL);
	i = (struct smio_seg_info){ .segid = 1, .addr = UINT64_MAX - 4095, .size = 8192 };
	assert_int_equal(REP(SMIO_SEG_CREATE, i), -EINVAL);

	id = (struct smio_seg_id){ .segid = 1, .pad = 1 };
	assert_int_equal(REQ(SMIO_SEG_REMOVE, id), -EINVAL);
	id = (struct smio_seg_id){ .segid = SMIO_SEGID_AUTO };
	assert_int_equal(REQ(SMIO_SEG_MAP_LOCAL, id), -EINVAL);
	assert_int_equal(REQ(SMIO_PEER_SEG_LOOKUP, id), -EINVAL);
	av = (struct smio_seg_avail){ .segid = 1, .available = 2 };
	assert_int_equal(REQ(SMIO_SEG_AVAILABLE, av), -EINVAL);
	cn = (struct smio_seg_connect){ .segid = 1, .pad = 1 };
	assert_int_equal(REQ(SMIO_SEG_CONNECT, cn), -EINVAL);

	sc = (struct smio_seg_conn){ .size = 4096, .win_addr = UINT64_MAX - 8191,
				     .offset = 4096 };
	assert_int_equal(REP(SMIO_SEG_CONNECT, sc), 0);
	sc.offset = 8192;       /* would wrap */
	assert_int_equal(REP(SMIO_SEG_CONNECT, sc), -EINVAL);
	sc = (struct smio_seg_conn){ .size = 0 };
	assert_int_equal(REP(SMIO_SEG_CONNECT, sc), -EINVAL);
	sc = (struct smio_seg_conn){ .size = 4096, .lut_first = UINT32_MAX, .lut_count = 1 };
	assert_int_equal(REP(SMIO_SEG_CONNECT, sc), -EINVAL);

	m = (struct smio_seg_map){ .conn = 1, .size = 0 };
	assert_int_equal(REQ(SMIO_SEG_MAP_REMOTE, m), -EINVAL);
	m = (struct smio_seg_map){ .conn = 1, .offset = UINT64_MAX, .size = 2 };
	assert_int_equal(REQ(SMIO_SEG_MAP_REMOTE, m), -EINVAL);
	m = (struct smio_seg_map){ .conn = 1, .pad = 1, .size = 2 };
	assert_int_equal(REQ(SMIO_SEG_MAP_REMOTE, m), -EINVAL);

	ps = (struct smio_peer_seg){ .segid = 1, .addr = 4096, .size = 0 };
	assert_int_equal(REP(SMIO_PEER_SEG_LOOKUP, ps), -EINVAL);
	/* PEER_SEG_WHERE's answer: a known flag, a page-aligned extent. */
	pw = (struct smio_peer_seg_where){ .host = 1, .addr = 4096, .size = 4096 };
	assert_int_equal(REP(SMIO_PEER_SEG_WHERE, pw), 0);
	pw.flags = 2;
	assert_int_equal(REP(SMIO_PEER_SEG_WHERE, pw), -EINVAL);
	pw = (struct smio_peer_seg_where){ .host = 1, .addr = 4097, .size = 4096 };
	assert_int_equal(REP(SMIO_PEER_SEG_WHERE, pw), -EINVAL);
	pw = (struct smio_peer_seg_where){ .host = 1, .addr = 4096, .size = 0 };
	assert_int_equal(REP(SMIO_PEER_SEG_WHERE, pw), -EINVAL);
	/* SEG_CONN_P2P: no bus in the request, one in the reply, pad 0. */
	cp = (struct smio_seg_conn_p2p){ .conn = 1, .bdf = 0x100, .bus = 4096 };
	assert_int_equal(REQ(SMIO_SEG_CONN_P2P, cp), -EINVAL);
	assert_int_equal(REP(SMIO_SEG_CONN_P2P, cp), 0);
	cp.pad = 1;
	assert_int_equal(REP(SMIO_SEG_CONN_P2P, cp), -EINVAL);
	cp = (struct smio_seg_conn_p2p){ .conn = 1, .bdf = 0x100 };
	assert_int_equal(REQ(SMIO_SEG_CONN_P2P, cp), 0);
	assert_int_equal(REP(SMIO_SEG_CONN_P2P, cp), -EINVAL);
	pm = (struct smio_peer_memfd){ .mem = 0, .size = 4096 };
	assert_int_equal(REQ(SMIO_PEER_MEMFD, pm), -EINVAL);   /* the request has no size */
	assert_int_equal(REP(SMIO_PEER_MEMFD, pm), 0);
	pm.size = 0;
	assert_int_equal(REP(SMIO_PEER_MEMFD, pm), -EINVAL);
	pm = (struct smio_peer_memfd){ .pad = 1, .size = 4096 };
	assert_int_equal(REP(SMIO_PEER_MEMFD, pm), -EINVAL);
}

static void test_dma_fields(void **state)
{
	static uint8_t buf[sizeof(struct smio_dma_start) +
			   (SMIO_DMA_MAX_VEC + 1) * sizeof(struct smio_dma_entry)];
	struct smio_dma_queue_create c = { .max_entries = 0 };
	struct smio_dma_queue q = { .queue = 1, .max_entries = 1, .channels = 0 };
	struct smio_dma_queue_ref r = { .queue = 0 };
	struct smio_dma_state st = { .queue = 1, .state = 1 };
	struct smio_dma_start m = { .queue = 1, .n = SMIO_DMA_MAX_VEC };
	struct smio_dma_entry e = { .size = 1 };
	size_t full = sizeof(m) + SMIO_DMA_MAX_VEC * sizeof(e);

	assert_int_equal(REQ(SMIO_DMA_QUEUE_CREATE, c), -EINVAL);
	c.max_entries = SMIO_DMA_MAX_VEC + 1;
	assert_int_equal(REQ(SMIO_DMA_QUEUE_CREATE, c), -EINVAL);
	c.max_entries = SMIO_DMA_MAX_VEC;
	assert_int_equal(REQ(SMIO_DMA_QUEUE_CREATE, c), 0);
	/* A queue on an adapter without channels cannot exist. */
	assert_int_equal(REP(SMIO_DMA_QUEUE_CREATE, q), -EINVAL);
	assert_int_equal(REQ(SMIO_DMA_QUEUE_REMOVE, r), -EINVAL);
	r = (struct smio_dma_queue_ref){ .queue = 1, .pad = 1 };
	assert_int_equal(REQ(SMIO_DMA_STATE, r), -EINVAL);
	/* GATHER is never reported; bytes never exceed the total. */
	assert_int_equal(REP(SMIO_DMA_STATE, st), -EINVAL);
	st = (struct smio_dma_state){ .queue = 1, .state = SMIO_DMA_ERROR, .error = -5,
				      .bytes = 2, .total = 1 };
	assert_int_equal(REP(SMIO_DMA_STATE, st), -EINVAL);
	st.bytes = 1;
	assert_int_equal(REP(SMIO_DMA_STATE, st), 0);
	st.error = 5;
	assert_int_equal(REP(SMIO_DMA_STATE, st), -EINVAL);

	/* Vectors: n and the payload agree, 1..256 entries, none empty. */
	memcpy(buf, &m, sizeof(m));
	for (unsigned i = 0; i <= SMIO_DMA_MAX_VEC; i++)
		memcpy(buf + sizeof(m) + i * sizeof(e), &e, sizeof(e));
	assert_int_equal(smio_payload_check(SMIO_DMA_START, false, buf, full), 0);
	assert_int_equal(smio_payload_check(SMIO_DMA_START, false, buf, full - 1), -EINVAL);
	m.n = SMIO_DMA_MAX_VEC + 1;
	memcpy(buf, &m, sizeof(m));
	assert_int_equal(smio_payload_check(SMIO_DMA_START, false, buf, full + sizeof(e)),
			 -EINVAL);
	m.n = 0;
	memcpy(buf, &m, sizeof(m));
	assert_int_equal(smio_payload_check(SMIO_DMA_START, false, buf, sizeof(m)), -EINVAL);
	m = (struct smio_dma_start){ .queue = 1, .n = 1, .flags = 2 };
	memcpy(buf, &m, sizeof(m));
	assert_int_equal(smio_payload_check(SMIO_DMA_START, false, buf, sizeof(m) + sizeof(e)),
			 -EINVAL);
	m.flags = SMIO_DMA_F_READ;
	memcpy(buf, &m, sizeof(m));
	assert_int_equal(smio_payload_check(SMIO_DMA_START, false, buf, sizeof(m) + sizeof(e)),
			 0);
	e.size = 0;
	memcpy(buf + sizeof(m), &e, sizeof(e));
	assert_int_equal(smio_payload_check(SMIO_DMA_START, false, buf, sizeof(m) + sizeof(e)),
			 -EINVAL);
}

static void test_intr_fields(void **state)
{
	static uint8_t buf[sizeof(struct smio_peer_intr_fire) + SMIO_INTR_MAX_DATA + 1];
	struct smio_intr_create c;
	struct smio_intr_id id;
	struct smio_intr_connect cn;
	struct smio_intr_conn cc;
	struct smio_intr_conn_ref cr;
	struct smio_intr_trigger t;
	struct smio_intr_data dt;
	struct smio_peer_intr pi;
	struct smio_peer_intr_fire f;

	c = (struct smio_intr_create){ .intno = 3, .data = 0 };
	assert_int_equal(REQ(SMIO_INTR_CREATE, c), 0);
	c.data = 2;
	assert_int_equal(REQ(SMIO_INTR_CREATE, c), -EINVAL);
	/* A reply names a real number. */
	id = (struct smio_intr_id){ .intno = SMIO_INTNO_AUTO };
	assert_int_equal(REP(SMIO_INTR_CREATE, id), -EINVAL);
	assert_int_equal(REQ(SMIO_INTR_REMOVE, id), -EINVAL);
	assert_int_equal(REQ(SMIO_PEER_INTR_LOOKUP, id), -EINVAL);
	id = (struct smio_intr_id){ .intno = 1, .data = 3 };
	assert_int_equal(REQ(SMIO_INTR_REMOVE, id), -EINVAL);
	/* Only data interrupts have messages to receive. */
	id = (struct smio_intr_id){ .intno = 1, .data = 0 };
	assert_int_equal(REQ(SMIO_INTR_RECEIVE, id), -EINVAL);
	id.data = 1;
	assert_int_equal(REQ(SMIO_INTR_RECEIVE, id), 0);

	cn = (struct smio_intr_connect){ .node_id = 4, .intno = SMIO_INTNO_AUTO };
	assert_int_equal(REQ(SMIO_INTR_CONNECT, cn), -EINVAL);
	cn = (struct smio_intr_connect){ .node_id = 4, .intno = 1, .data = 2 };
	assert_int_equal(REQ(SMIO_INTR_CONNECT, cn), -EINVAL);
	cc = (struct smio_intr_conn){ .handle = 0 };
	assert_int_equal(REP(SMIO_INTR_CONNECT, cc), -EINVAL);
	cr = (struct smio_intr_conn_ref){ .handle = 1, .pad = 1 };
	assert_int_equal(REQ(SMIO_INTR_DISCONNECT, cr), -EINVAL);
	cr = (struct smio_intr_conn_ref){ .handle = 0 };
	assert_int_equal(REQ(SMIO_INTR_DISCONNECT, cr), -EINVAL);

	/* Messages: the length field and the payload agree, up to 4 KiB. */
	t = (struct smio_intr_trigger){ .handle = 1, .len = SMIO_INTR_MAX_DATA };
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &t, sizeof(t));
	assert_int_equal(smio_payload_check(SMIO_INTR_TRIGGER, false, buf,
					    sizeof(t) + SMIO_INTR_MAX_DATA), 0);
	t.len = SMIO_INTR_MAX_DATA + 1;
	memcpy(buf, &t, sizeof(t));
	assert_int_equal(smio_payload_check(SMIO_INTR_TRIGGER, false, buf,
					    sizeof(t) + SMIO_INTR_MAX_DATA + 1), -EINVAL);
	t = (struct smio_intr_trigger){ .handle = 1, .len = 0 };
	assert_int_equal(REQ(SMIO_INTR_TRIGGER, t), 0);
	assert_int_equal(smio_payload_check(SMIO_INTR_TRIGGER, false, buf, 4), -EINVAL);
	dt = (struct smio_intr_data){ .intno = SMIO_INTNO_AUTO, .len = 0 };
	assert_int_equal(REP(SMIO_INTR_RECEIVE, dt), -EINVAL);
	dt = (struct smio_intr_data){ .intno = 1, .len = 0 };
	assert_int_equal(REP(SMIO_INTR_RECEIVE, dt), 0);
	dt.len = 1;              /* promised a byte, none follow */
	assert_int_equal(REP(SMIO_INTR_RECEIVE, dt), -EINVAL);

	pi = (struct smio_peer_intr){ .intno = 1, .serial = 0 };
	assert_int_equal(REP(SMIO_PEER_INTR_LOOKUP, pi), -EINVAL);
	pi = (struct smio_peer_intr){ .intno = 1, .serial = 1, .pad = 1 };
	assert_int_equal(REP(SMIO_PEER_INTR_LOOKUP, pi), -EINVAL);
	pi = (struct smio_peer_intr){ .intno = 1, .serial = 1, .data = 2 };
	assert_int_equal(REP(SMIO_PEER_INTR_LOOKUP, pi), -EINVAL);

	f = (struct smio_peer_intr_fire){ .intno = 1, .serial = 1 };
	assert_int_equal(REQ(SMIO_PEER_INTR_FIRE, f), 0);
	f.serial = 0;
	assert_int_equal(REQ(SMIO_PEER_INTR_FIRE, f), -EINVAL);
	f = (struct smio_peer_intr_fire){ .intno = SMIO_INTNO_AUTO, .serial = 1 };
	assert_int_equal(REQ(SMIO_PEER_INTR_FIRE, f), -EINVAL);
	/* A plain interrupt carries no message. */
	f = (struct smio_peer_intr_fire){ .intno = 1, .serial = 1, .data = 0, .len = 2 };
	memcpy(buf, &f, sizeof(f));
	assert_int_equal(smio_payload_check(SMIO_PEER_INTR_FIRE, false, buf, sizeof(f) + 2),
			 -EINVAL);
	f.data = 1;
	memcpy(buf, &f, sizeof(f));
	assert_int_equal(smio_payload_check(SMIO_PEER_INTR_FIRE, false, buf, sizeof(f) + 2), 0);
	f.len = SMIO_INTR_MAX_DATA + 1;
	memcpy(buf, &f, sizeof(f));
	assert_int_equal(smio_payload_check(SMIO_PEER_INTR_FIRE, false, buf,
					    sizeof(f) + SMIO_INTR_MAX_DATA + 1), -EINVAL);
}

/* ---- framing over a socketpair ---- */

static void test_send_recv_roundtrip(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_cfg c = { .bdf = 0x100, .off = 0x10, .size = 4, .value = 0xfeedf00d };
	struct smio_hdr h;
	int sv[2], fd;

	pair(sv);
	assert_int_equal(smio_send(sv[0], SMIO_CFG_READ, 5, 0, 0, &c, sizeof(c), -1), 0);
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 6, 0, 0, NULL, 0, -1), 0);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, &fd, 1000), 0);
	assert_int_equal(h.type, SMIO_CFG_READ);
	assert_int_equal(h.seq, 5);
	assert_int_equal(h.len, sizeof(c));
	assert_int_equal(h.flags, 0);
	assert_int_equal(fd, -1);
	assert_memory_equal(buf, &c, sizeof(c));
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), 0);
	assert_int_equal(h.type, SMIO_STATUS);
	assert_int_equal(h.seq, 6);
	assert_int_equal(h.len, 0);

	/* An error reply may come without payload, even for a type with one. */
	assert_int_equal(smio_send(sv[1], SMIO_STATUS, 6, -ENODEV, SMIO_F_REPLY, NULL, 0, -1),
			 0);
	assert_int_equal(smio_recv(sv[0], &h, buf, BUFSZ, NULL, 1000), 0);
	assert_int_equal(h.status, -ENODEV);
	assert_true(h.flags & SMIO_F_REPLY);
	close_pair(sv);
}

static void test_send_args(void **state)
{
	uint8_t big = 0;
	int sv[2];

	pair(sv);
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 1, 0, SMIO_F_FD, NULL, 0, -1), -EINVAL);
	assert_int_equal(smio_send(sv[0], 0, 1, 0, 0, NULL, 0, -1), -EINVAL);
	assert_int_equal(smio_send(sv[0], SMIO_TYPE_MAX, 1, 0, 0, NULL, 0, -1), -EINVAL);
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 1, 0, 0, NULL, 4, -1), -EINVAL);
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 1, 0, 0, &big,
				   SMIO_MAX_PAYLOAD + 1, -1), -EINVAL);
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 1, 0, 0x80, NULL, 0, -1), -EINVAL);
	assert_int_equal(smio_send(-1, SMIO_STATUS, 1, 0, 0, NULL, 0, -1), -EINVAL);
	close_pair(sv);
}

static void test_fd_passing(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_map_reply m = { .host = 1, .offset = 0, .len = 4096, .fd_size = 4096 };
	struct smio_hdr h;
	char text[16] = { 0 };
	int sv[2], mfd, rfd, before;
	void *p;

	before = count_fds(getpid());
	pair(sv);
	mfd = memfd_create("smio-test", MFD_CLOEXEC);
	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, 4096), 0);
	assert_int_equal(pwrite(mfd, "hello", 5, 0), 5);

	assert_int_equal(smio_send(sv[0], SMIO_MAP, 9, 0, SMIO_F_REPLY, &m, sizeof(m), mfd), 0);
	close(mfd);	/* the receiver's copy must keep the memory alive */
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, &rfd, 1000), 0);
	assert_true(h.flags & SMIO_F_FD);
	assert_true(rfd >= 0);
	assert_true(fcntl(rfd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(pread(rfd, text, 5, 0), 5);
	assert_string_equal(text, "hello");
	/* It is the same object: a shared mapping sees and makes changes. */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	assert_true(p != MAP_FAILED);
	assert_memory_equal(p, "hello", 5);
	memcpy(p, "HELLO", 5);
	munmap(p, 4096);
	assert_int_equal(pread(rfd, text, 5, 0), 5);
	assert_string_equal(text, "HELLO");
	close(rfd);

	/* Sent again but received with fd == NULL: it must be closed, not leaked. */
	mfd = memfd_create("smio-test", MFD_CLOEXEC);
	assert_int_equal(ftruncate(mfd, 4096), 0);
	assert_int_equal(smio_send(sv[0], SMIO_MAP, 10, 0, SMIO_F_REPLY, &m, sizeof(m), mfd), 0);
	close(mfd);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), 0);
	close_pair(sv);
	assert_int_equal(count_fds(getpid()), before);
}

/* Send raw header+payload bytes with nfds copies of an fd attached. */
static void raw_send_fds(int sock, const void *p, size_t n, int fd, int nfds)
{
	union {
		char b[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	int fds[4] = { fd, fd, fd, fd };
	struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	memset(&cbuf, 0, sizeof(cbuf));
	mh.msg_control = cbuf.b;
	mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	assert_int_equal(sendmsg(sock, &mh, 0), (ssize_t)n);
}

static void test_fd_mismatch(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_hdr h;
	int sv[2], rfd, before, nfd;

	before = count_fds(getpid());
	pair(sv);
	nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(nfd >= 0);

	/* SMIO_F_FD but no fd: the message is consumed, then refused. */
	h = mkhdr(SMIO_STATUS, 0, 1, SMIO_F_FD);
	write_all(sv[0], &h, sizeof(h));
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, &rfd, 1000), -EPROTO);
	assert_int_equal(rfd, -1);

	/* An fd without SMIO_F_FD: refused, and the fd closed. */
	h = mkhdr(SMIO_STATUS, 0, 2, 0);
	raw_send_fds(sv[0], &h, sizeof(h), nfd, 1);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, &rfd, 1000), -EPROTO);
	assert_int_equal(rfd, -1);

	/* Several fds on one message: refused, all closed. */
	h = mkhdr(SMIO_STATUS, 0, 3, SMIO_F_FD);
	raw_send_fds(sv[0], &h, sizeof(h), nfd, 3);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, &rfd, 1000), -EPROTO);
	assert_int_equal(rfd, -1);

	/* An fd on a message with a bad payload: closed too. */
	{
		struct smio_cfg c = { .size = 3 };
		uint8_t raw[sizeof(h) + sizeof(c)];

		h = mkhdr(SMIO_CFG_READ, sizeof(c), 4, SMIO_F_FD);
		memcpy(raw, &h, sizeof(h));
		memcpy(raw + sizeof(h), &c, sizeof(c));
		raw_send_fds(sv[0], raw, sizeof(raw), nfd, 1);
		assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, &rfd, 1000), -EINVAL);
		assert_int_equal(rfd, -1);
	}

	close(nfd);
	close_pair(sv);
	assert_int_equal(count_fds(getpid()), before);
}

/*
 * Garbage on the stream: the header check fails and smio_recv returns -EPROTO
 * without reading further. A message boundary cannot be found again in a
 * byte stream, so the daemon closes such a connection; the valid message sent
 * after the garbage is never seen as one.
 */
static void test_garbage_then_valid(void **state)
{
	static uint8_t buf[BUFSZ];
	uint8_t junk[40];
	struct smio_hdr h;
	int sv[2];

	pair(sv);
	memset(junk, 0xa5, sizeof(junk));
	write_all(sv[0], junk, sizeof(junk));
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 1, 0, 0, NULL, 0, -1), 0);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), -EPROTO);
	close_pair(sv);

	/* A valid header whose version is foreign: same, -EPROTO. */
	pair(sv);
	h = mkhdr(SMIO_STATUS, 0, 1, 0);
	h.version = 2;
	write_all(sv[0], &h, sizeof(h));
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), -EPROTO);
	close_pair(sv);
}

/* A bad payload behind a good header is consumed: the next message is fine. */
static void test_bad_payload_keeps_sync(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_cfg bad = { .off = 3, .size = 4 };
	struct smio_route_req rr = { .len = 8 };
	struct smio_hdr h;
	int sv[2];

	pair(sv);
	assert_int_equal(smio_send(sv[0], SMIO_CFG_READ, 11, 0, 0, &bad, sizeof(bad), -1), 0);
	assert_int_equal(smio_send(sv[0], SMIO_CFG_READ, 12, 0, 0, &rr, sizeof(rr), -1), 0);
	assert_int_equal(smio_send(sv[0], SMIO_ROUTE, 13, 0, 0, &rr, sizeof(rr), -1), 0);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), -EINVAL);
	assert_int_equal(h.seq, 11);	/* the daemon can answer it */
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), -EINVAL);
	assert_int_equal(h.seq, 12);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), 0);
	assert_int_equal(h.seq, 13);
	assert_memory_equal(buf, &rr, sizeof(rr));

	/* A reply to a one-way message cannot exist. */
	{
		struct smio_invalidate inv = { 0 };

		assert_int_equal(smio_send(sv[0], SMIO_PEER_INVALIDATE, 14, 0, SMIO_F_REPLY,
					   &inv, sizeof(inv), -1), 0);
		assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), -EPROTO);
	}
	close_pair(sv);
}

static void test_oversize_drained(void **state)
{
	static uint8_t big[BUFSZ];
	uint8_t small[16];
	struct smio_hdr h;
	size_t n;
	int sv[2];

	pair(sv);
	n = fill_func_list(big, SMIO_MAX_FUNCS);
	assert_int_equal(smio_send(sv[0], SMIO_FUNC_LIST, 1, 0, SMIO_F_REPLY, big, n, -1), 0);
	assert_int_equal(smio_send(sv[0], SMIO_FUNC_LIST, 2, 0, SMIO_F_REPLY, big, n, -1), 0);
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 3, 0, 0, NULL, 0, -1), 0);
	assert_int_equal(smio_recv(sv[1], &h, small, sizeof(small), NULL, 1000), -EMSGSIZE);
	assert_int_equal(h.seq, 1);
	assert_int_equal(h.len, n);
	/* No buffer at all: drained through a scratch buffer. */
	assert_int_equal(smio_recv(sv[1], &h, NULL, 0, NULL, 1000), -EMSGSIZE);
	assert_int_equal(h.seq, 2);
	assert_int_equal(smio_recv(sv[1], &h, small, sizeof(small), NULL, 1000), 0);
	assert_int_equal(h.seq, 3);
	close_pair(sv);
}

static void test_recv_timeout(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_hdr h;
	int64_t t0, dt;
	int sv[2];

	pair(sv);
	t0 = smio_now_ms();
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 60), -ETIMEDOUT);
	dt = smio_now_ms() - t0;
	assert_true(dt >= 55 && dt < 1000);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 0), -ETIMEDOUT);
	/* Still intact after a clean timeout. */
	assert_int_equal(smio_send(sv[0], SMIO_STATUS, 4, 0, 0, NULL, 0, -1), 0);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 0), 0);
	assert_int_equal(h.seq, 4);

	/*
	 * Half a header, then silence: the deadline covers the whole message
	 * and, with part of it consumed, framing is lost: -EPROTO.
	 */
	h = mkhdr(SMIO_STATUS, 0, 5, 0);
	write_all(sv[0], &h, 10);
	t0 = smio_now_ms();
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 60), -EPROTO);
	dt = smio_now_ms() - t0;
	assert_true(dt >= 55 && dt < 1000);
	close_pair(sv);
}

/* A message that trickles in: the deadline is for the message, not per read. */
struct trickle {
	int sock;
	int chunks;
	int gap_ms;
	uint8_t raw[sizeof(struct smio_hdr) + sizeof(struct smio_route_req)];
};

static size_t trickle_step(const struct trickle *t)
{
	return sizeof(t->raw) / t->chunks;
}

/* Chunks 1..n-1; the test writes chunk 0 itself so the clock starts fairly. */
static void *trickle_thread(void *arg)
{
	struct trickle *t = arg;
	size_t step = trickle_step(t), off = step;
	int i;

	for (i = 1; i < t->chunks; i++) {
		size_t n = i == t->chunks - 1 ? sizeof(t->raw) - off : step;

		poll(NULL, 0, t->gap_ms);
		if (write(t->sock, t->raw + off, n) != (ssize_t)n)
			break;
		off += n;
	}
	return NULL;
}

static void trickle_start(struct trickle *t, int sock, pthread_t *th)
{
	struct smio_route_req rr = { .len = 8 };
	struct smio_hdr h = mkhdr(SMIO_ROUTE, sizeof(rr), 1, 0);

	t->sock = sock;
	memcpy(t->raw, &h, sizeof(h));
	memcpy(t->raw + sizeof(h), &rr, sizeof(rr));
	write_all(sock, t->raw, trickle_step(t));
	assert_int_equal(pthread_create(th, NULL, trickle_thread, t), 0);
}

static void test_recv_overall_deadline(void **state)
{
	static uint8_t buf[BUFSZ];
	struct trickle t = { .chunks = 8, .gap_ms = 30 };
	struct smio_hdr h;
	pthread_t th;
	int sv[2];

	/* 8 chunks 30 ms apart: each read would be in time, the message is not. */
	pair(sv);
	trickle_start(&t, sv[0], &th);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 100), -EPROTO);
	pthread_join(th, NULL);
	close_pair(sv);

	/* With enough time, the same trickle is received whole. */
	pair(sv);
	t.gap_ms = 5;
	trickle_start(&t, sv[0], &th);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 5000), 0);
	assert_int_equal(h.type, SMIO_ROUTE);
	pthread_join(th, NULL);
	close_pair(sv);
}

static void test_peer_close(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_cfg c = { .size = 4 };
	struct smio_hdr h;
	int sv[2];

	pair(sv);
	close(sv[0]);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), -ECONNRESET);
	/* Sending into a closed peer: an error, not SIGPIPE. */
	assert_int_equal(smio_send(sv[1], SMIO_STATUS, 1, 0, 0, NULL, 0, -1), -ECONNRESET);
	close(sv[1]);

	/* Closed in the middle of a payload. */
	pair(sv);
	h = mkhdr(SMIO_CFG_READ, sizeof(c), 1, 0);
	write_all(sv[0], &h, sizeof(h));
	write_all(sv[0], &c, 5);
	close(sv[0]);
	assert_int_equal(smio_recv(sv[1], &h, buf, BUFSZ, NULL, 1000), -ECONNRESET);
	close(sv[1]);
}

/* A big message through a tiny socket buffer: short writes on both sides. */
struct bulk {
	int sock;
	uint8_t *p;
	size_t n;
	int fd;
	int ret;
};

static void *bulk_sender(void *arg)
{
	struct bulk *b = arg;

	b->ret = smio_send(b->sock, SMIO_FUNC_LIST, 77, 0, SMIO_F_REPLY, b->p, b->n, b->fd);
	return NULL;
}

static void test_short_writes(void **state)
{
	static uint8_t out[BUFSZ], in[BUFSZ];
	struct bulk b = { .p = out };
	struct smio_hdr h;
	int sv[2], sz = 4096, rfd, before;
	pthread_t th;

	before = count_fds(getpid());
	pair(sv);
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
	assert_int_equal(setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)), 0);
	b.sock = sv[0];
	b.n = fill_func_list(out, SMIO_MAX_FUNCS);
	b.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(b.fd >= 0);
	assert_int_equal(pthread_create(&th, NULL, bulk_sender, &b), 0);
	assert_int_equal(smio_recv(sv[1], &h, in, BUFSZ, &rfd, 5000), 0);
	pthread_join(th, NULL);
	assert_int_equal(b.ret, 0);
	assert_int_equal(h.len, b.n);
	assert_memory_equal(in, out, b.n);
	assert_true(rfd >= 0);
	close(rfd);
	close(b.fd);
	close_pair(sv);
	assert_int_equal(count_fds(getpid()), before);
}

/* ---- smio_call against a scripted server thread ---- */

enum script {
	SRV_OK,		/* a valid STATUS reply */
	SRV_ERROR,	/* reply status -ENODEV */
	SRV_STALE,	/* an old reply (with an fd), then the right one */
	SRV_REQUEST,	/* a request instead of a reply */
	SRV_WRONG_TYPE,	/* the right seq, another type */
	SRV_BAD_PAYLOAD,/* the right seq and type, invalid payload */
	SRV_SILENT,	/* never answers */
	SRV_FD,		/* MAP reply with a memfd */
	SRV_CLOSE,	/* closes the connection */
};

struct server {
	int sock;
	enum script script;
	int ret;
};

static void *server_thread(void *arg)
{
	static uint8_t req[BUFSZ];
	struct server *s = arg;
	struct smio_status st = { .host = 3, .iommu = 1, .name = "h3" };
	struct smio_map_reply mr = { .len = 4096, .fd_size = 4096 };
	struct smio_hdr h;
	int ret, mfd;

	ret = smio_recv(s->sock, &h, req, BUFSZ, NULL, 5000);
	if (ret) {
		s->ret = ret;
		return NULL;
	}
	switch (s->script) {
	case SRV_OK:
		ret = smio_send(s->sock, h.type, h.seq, 0, SMIO_F_REPLY, &st, sizeof(st), -1);
		break;
	case SRV_ERROR:
		ret = smio_send(s->sock, h.type, h.seq, -ENODEV, SMIO_F_REPLY, NULL, 0, -1);
		break;
	case SRV_STALE:
		mfd = memfd_create("stale", MFD_CLOEXEC);
		ret = smio_send(s->sock, h.type, h.seq - 1, 0, SMIO_F_REPLY, &st, sizeof(st),
				mfd);
		close(mfd);
		if (!ret)
			ret = smio_send(s->sock, h.type, h.seq, 0, SMIO_F_REPLY, &st,
					sizeof(st), -1);
		break;
	case SRV_REQUEST:
		ret = smio_send(s->sock, SMIO_STATUS, h.seq, 0, 0, NULL, 0, -1);
		break;
	case SRV_WRONG_TYPE:
		ret = smio_send(s->sock, SMIO_SHUTDOWN, h.seq, 0, SMIO_F_REPLY, NULL, 0, -1);
		break;
	case SRV_BAD_PAYLOAD:
		st.iommu = 7;
		ret = smio_send(s->sock, h.type, h.seq, 0, SMIO_F_REPLY, &st, sizeof(st), -1);
		break;
	case SRV_SILENT:
		break;
	case SRV_FD:
		mfd = memfd_create("map", MFD_CLOEXEC);
		if (ftruncate(mfd, 4096) || pwrite(mfd, "mapped", 6, 0) != 6)
			ret = -EIO;
		else
			ret = smio_send(s->sock, h.type, h.seq, 0, SMIO_F_REPLY, &mr,
					sizeof(mr), mfd);
		close(mfd);
		break;
	case SRV_CLOSE:
		shutdown(s->sock, SHUT_RDWR);
		break;
	}
	s->ret = ret;
	return NULL;
}

/* Run one smio_call of type against a server following script. */
static int call_with(enum script script, uint16_t type, const void *req, uint32_t reqlen,
		     void *buf, uint32_t rcap, uint32_t *rlen, int *fd, int timeout_ms)
{
	struct server s = { .script = script };
	pthread_t th;
	int sv[2], ret;

	pair(sv);
	s.sock = sv[1];
	assert_int_equal(pthread_create(&th, NULL, server_thread, &s), 0);
	ret = smio_call(sv[0], type, req, reqlen, buf, rcap, rlen, fd, timeout_ms);
	pthread_join(th, NULL);
	assert_int_equal(s.ret, 0);
	close_pair(sv);
	return ret;
}

static void test_call(void **state)
{
	static uint8_t buf[BUFSZ];
	struct smio_status *st = (struct smio_status *)buf;
	struct smio_route_req rr = { .len = 4096 };
	uint32_t rlen = 0;
	int fd, before = count_fds(getpid());
	char text[8] = { 0 };

	assert_int_equal(call_with(SRV_OK, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen, &fd, 2000),
			 0);
	assert_int_equal(rlen, sizeof(*st));
	assert_int_equal(st->host, 3);
	assert_string_equal(st->name, "h3");
	assert_int_equal(fd, -1);

	assert_int_equal(call_with(SRV_ERROR, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen, NULL,
				   2000), -ENODEV);
	assert_int_equal(call_with(SRV_STALE, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen, &fd,
				   2000), 0);
	assert_int_equal(fd, -1);	/* the stale reply's fd was closed */
	assert_int_equal(st->host, 3);
	assert_int_equal(call_with(SRV_REQUEST, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen, NULL,
				   2000), -EPROTO);
	assert_int_equal(call_with(SRV_WRONG_TYPE, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen,
				   NULL, 2000), -EPROTO);
	assert_int_equal(call_with(SRV_BAD_PAYLOAD, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen,
				   NULL, 2000), -EPROTO);
	assert_int_equal(call_with(SRV_SILENT, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen, NULL,
				   50), -ETIMEDOUT);
	assert_int_equal(call_with(SRV_CLOSE, SMIO_STATUS, NULL, 0, buf, BUFSZ, &rlen, NULL,
				   2000), -ECONNRESET);
	/* Reply larger than the caller's buffer. */
	assert_int_equal(call_with(SRV_OK, SMIO_STATUS, NULL, 0, buf, 8, &rlen, NULL, 2000),
			 -EMSGSIZE);

	assert_int_equal(call_with(SRV_FD, SMIO_MAP, &rr, sizeof(rr), buf, BUFSZ, &rlen, &fd,
				   2000), 0);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, text, 6, 0), 6);
	assert_string_equal(text, "mapped");
	close(fd);
	/* fd not wanted: closed by smio_call. */
	assert_int_equal(call_with(SRV_FD, SMIO_MAP, &rr, sizeof(rr), buf, BUFSZ, &rlen, NULL,
				   2000), 0);
	assert_int_equal(count_fds(getpid()), before);

	/* Bad arguments: nothing is sent. */
	assert_int_equal(smio_call(-1, SMIO_STATUS, NULL, 0, NULL, 0, NULL, NULL, 10), -EINVAL);
}

/* Sequence numbers differ between calls. */
static void test_call_seq(void **state)
{
	static uint8_t req[BUFSZ];
	struct smio_hdr h1, h2;
	int sv[2];

	pair(sv);
	/* Nobody answers: both calls time out, but their requests are visible. */
	assert_int_equal(smio_call(sv[0], SMIO_STATUS, NULL, 0, NULL, 0, NULL, NULL, 0),
			 -ETIMEDOUT);
	assert_int_equal(smio_call(sv[0], SMIO_STATUS, NULL, 0, NULL, 0, NULL, NULL, 0),
			 -ETIMEDOUT);
	assert_int_equal(smio_recv(sv[1], &h1, req, BUFSZ, NULL, 100), 0);
	assert_int_equal(smio_recv(sv[1], &h2, req, BUFSZ, NULL, 100), 0);
	assert_int_not_equal(h1.seq, h2.seq);
	assert_false(h1.flags & SMIO_F_REPLY);
	close_pair(sv);
}

/* ---- connect ---- */

struct late_listener {
	char path[108];
	int delay_ms;
	int lfd;
};

static void *listen_later(void *arg)
{
	struct late_listener *l = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	poll(NULL, 0, l->delay_ms);
	l->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", l->path);
	if (bind(l->lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(l->lfd, 4)) {
		close(l->lfd);
		l->lfd = -1;
	}
	return NULL;
}

static void test_connect(void **state)
{
	char dir[] = "/tmp/smio-test-XXXXXX";
	struct late_listener l = { .delay_ms = 40, .lfd = -1 };
	char longdir[200];
	pthread_t th;
	int64_t t0;
	int fd;

	assert_non_null(mkdtemp(dir));
	/* No daemon: a single attempt, then a bounded retry. */
	assert_int_equal(smio_connect(dir, 7, 0), -ENOENT);
	t0 = smio_now_ms();
	assert_int_equal(smio_connect(dir, 7, 80), -ENOENT);
	assert_true(smio_now_ms() - t0 >= 75);

	/* A daemon that starts while we retry. */
	assert_int_equal(smio_sock_path(dir, 7, l.path, sizeof(l.path)), 0);
	assert_int_equal(pthread_create(&th, NULL, listen_later, &l), 0);
	fd = smio_connect(dir, 7, 3000);
	pthread_join(th, NULL);
	assert_true(l.lfd >= 0);
	assert_true(fd >= 0);
	close(fd);
	/* Already there: immediate. */
	fd = smio_connect(dir, 7, 0);
	assert_true(fd >= 0);
	close(fd);
	close(l.lfd);
	unlink(l.path);
	rmdir(dir);

	memset(longdir, 'd', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = 0;
	assert_int_equal(smio_connect(longdir, 0, 0), -ENAMETOOLONG);
	assert_int_equal(smio_connect(NULL, 0, 0), -EINVAL);
}

/* ---- cluster dir and environment ---- */

static void test_cluster_dir(void **state)
{
	char buf[256], want[64];
	char xdg[] = "/tmp/smio-xdg-XXXXXX";

	assert_int_equal(setenv("SMARTIO_CLUSTER", "/some/where", 1), 0);
	assert_int_equal(smio_cluster_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/some/where");
	assert_int_equal(smio_cluster_dir(buf, 5), -ENAMETOOLONG);
	assert_int_equal(smio_cluster_dir(buf, 12), 0);

	unsetenv("SMARTIO_CLUSTER");
	assert_non_null(mkdtemp(xdg));
	assert_int_equal(setenv("XDG_RUNTIME_DIR", xdg, 1), 0);
	assert_int_equal(smio_cluster_dir(buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/smartio", xdg);
	assert_string_equal(buf, want);
	rmdir(xdg);

	/* XDG_RUNTIME_DIR that is not a directory: fall back to /tmp. */
	snprintf(want, sizeof(want), "/tmp/smartio-%u", (unsigned)getuid());
	assert_int_equal(smio_cluster_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
	unsetenv("XDG_RUNTIME_DIR");
	assert_int_equal(smio_cluster_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
	assert_int_equal(smio_cluster_dir(buf, 0), -ENAMETOOLONG);
}

static void test_sock_path(void **state)
{
	char buf[256], longdir[120];

	assert_int_equal(smio_sock_path("/run/x", 12, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/x/host-12.sock");
	assert_int_equal(smio_sock_path("/run/x", 12, buf, 19), -ENAMETOOLONG);
	assert_int_equal(smio_sock_path("/run/x", 12, buf, 20), 0);
	/* Fits the caller's buffer but not a sockaddr_un. */
	memset(longdir, 'a', sizeof(longdir) - 1);
	longdir[sizeof(longdir) - 1] = 0;
	assert_int_equal(smio_sock_path(longdir, 0, buf, sizeof(buf)), -ENAMETOOLONG);
	assert_int_equal(smio_sock_path(NULL, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(smio_sock_path("", 0, buf, sizeof(buf)), -EINVAL);
}

/* The drivers' messages: data lengths tie to direction and op. */
static void test_driver_messages(void **state)
{
	static uint8_t b[sizeof(struct smio_nvme_admin) + SMIO_NVME_MAX_DATA + 512];
	struct smio_nvme_admin *a = (void *)b;
	struct smio_nvme_io *io = (void *)b;
	struct smio_nvme_cpl *c = (void *)b;
	struct smio_accel_op op = { .kind = SMIO_ACCEL_COPY, .len = 4096 };
	struct smio_accel_result res = { 0 };

	memset(b, 0, sizeof(b));
	a->dir = SMIO_DIR_FROM_DEV;
	a->data_len = 4096;
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a)), 0);
	/* Reading: nothing follows the request; writing: exactly data_len. */
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a) + 4096), -EINVAL);
	a->dir = SMIO_DIR_TO_DEV;
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a)), -EINVAL);
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a) + 4096), 0);
	a->dir = SMIO_DIR_NONE;
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a)), -EINVAL);
	a->data_len = 0;
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a)), 0);
	a->dir = 3;
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a)), -EINVAL);
	a->dir = SMIO_DIR_FROM_DEV;
	a->data_len = SMIO_NVME_MAX_DATA + 512;
	assert_int_equal(smio_payload_check(SMIO_NVME_ADMIN, false, a, sizeof(*a)), -EINVAL);

	memset(b, 0, sizeof(b));
	io->op = SMIO_NVME_WRITE;
	io->nsid = 1;
	io->nlb = 8;
	io->data_len = 4096;
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io) + 4096), 0);
	io->data_len = 100;      /* not a multiple of 512 */
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io) + 100), -EINVAL);
	io->op = SMIO_NVME_READ;
	io->data_len = 0;
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io)), 0);
	io->nsid = 0;
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io)), -EINVAL);
	io->nsid = 1;
	io->op = SMIO_NVME_FLUSH;   /* flush names no blocks */
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io)), -EINVAL);
	io->nlb = 0;
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io)), 0);
	io->op = 9;
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io)), -EINVAL);
	io->op = SMIO_NVME_READ;
	io->nlb = 1;
	io->slba = UINT64_MAX;      /* wraps */
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, false, io, sizeof(*io)), -EINVAL);

	memset(b, 0, sizeof(b));
	c->data_len = 512;
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, true, c, sizeof(*c) + 512), 0);
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, true, c, sizeof(*c)), -EINVAL);
	c->status = 0x8000;         /* the phase bit never travels */
	assert_int_equal(smio_payload_check(SMIO_NVME_IO, true, c, sizeof(*c) + 512), -EINVAL);

	assert_int_equal(REQ(SMIO_ACCEL_OP, op), 0);
	op.flags = SMIO_ACCEL_F_SRC_DEV | SMIO_ACCEL_F_SRC_RAM;
	assert_int_equal(REQ(SMIO_ACCEL_OP, op), -EINVAL);
	op.flags = 0x10;
	assert_int_equal(REQ(SMIO_ACCEL_OP, op), -EINVAL);
	op.flags = 0;
	op.kind = SMIO_ACCEL_PINGPONG;   /* needs iterations */
	assert_int_equal(REQ(SMIO_ACCEL_OP, op), -EINVAL);
	op.iters = 1000;
	assert_int_equal(REQ(SMIO_ACCEL_OP, op), 0);
	op.kind = 6;
	assert_int_equal(REQ(SMIO_ACCEL_OP, op), -EINVAL);
	assert_int_equal(REP(SMIO_ACCEL_OP, res), 0);
	res.pad = 1;
	assert_int_equal(REP(SMIO_ACCEL_OP, res), -EINVAL);
}

static void test_env_host(void **state)
{
	static const char *bad[] = {
		"", "-1", "+1", " 1", "1 ", "0x10", "1.0", "65536", "99999999999999999999",
		"4294967297", "12a",
	};
	uint32_t host = 99;
	size_t i;

	unsetenv("SMARTIO_HOST");
	assert_int_equal(smio_env_host(&host), -ENOENT);
	setenv("SMARTIO_HOST", "0", 1);
	assert_int_equal(smio_env_host(&host), 0);
	assert_int_equal(host, 0);
	setenv("SMARTIO_HOST", "12", 1);
	assert_int_equal(smio_env_host(&host), 0);
	assert_int_equal(host, 12);
	setenv("SMARTIO_HOST", "65535", 1);
	assert_int_equal(smio_env_host(&host), 0);
	assert_int_equal(host, 65535);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		host = 99;
		setenv("SMARTIO_HOST", bad[i], 1);
		assert_int_equal(smio_env_host(&host), -EINVAL);
		assert_int_equal(host, 99);	/* untouched on error */
	}
	unsetenv("SMARTIO_HOST");
}

/* Device segments: DEV_SEG_CREATE, PEER_DEV_SEG_*, DEV_SEG_CONNECT's memtypes. */
static void test_dev_seg_messages(void **state)
{
	struct smio_dev_seg_create c = { .handle = 1, .segid = 7, .size = 4096,
		.memtype = SMIO_DEV_MEMTYPE_SHARED, .place = SMIO_DEV_PLACE_LENDER };
	struct smio_dev_seg r = { .host = 1, .segid = 9, .place = SMIO_DEV_PLACE_LENDER,
				  .size = 4096 };
	struct smio_peer_dev_seg q = { .bdf = 0x100, .ref = 3, .devsegid = 7,
				       .memtype = SMIO_DEV_MEMTYPE_PRIVATE };
	struct smio_dev_seg_connect k = { .handle = 1, .segid = 77,
					  .memtype = SMIO_DEV_MEMTYPE_SHARED };

	assert_int_equal(REQ(SMIO_DEV_SEG_CREATE, c), 0);
	c.memtype = SMIO_DEV_MEMTYPE_BAR;
	assert_int_equal(REQ(SMIO_DEV_SEG_CREATE, c), -EINVAL);
	c.memtype = SMIO_DEV_MEMTYPE_PRIVATE;
	c.place = 0;
	assert_int_equal(REQ(SMIO_DEV_SEG_CREATE, c), -EINVAL);
	c.place = SMIO_DEV_PLACE_BORROWER;
	c.size = 0;
	assert_int_equal(REQ(SMIO_DEV_SEG_CREATE, c), -EINVAL);
	assert_int_equal(REP(SMIO_DEV_SEG_CREATE, r), 0);
	r.pad = 1;
	assert_int_equal(REP(SMIO_DEV_SEG_CREATE, r), -EINVAL);
	/* A lookup names no placement; the answer does. */
	assert_int_equal(REQ(SMIO_PEER_DEV_SEG_LOOKUP, q), 0);
	q.place = SMIO_DEV_PLACE_BORROWER;
	assert_int_equal(REP(SMIO_PEER_DEV_SEG_LOOKUP, q), 0);
	assert_int_equal(REQ(SMIO_PEER_DEV_SEG_CREATE, q), 0);
	q.place = SMIO_DEV_PLACE_DEVICE + 1;   /* 3 is DEVICE (near the device) */
	assert_int_equal(REQ(SMIO_PEER_DEV_SEG_CREATE, q), -EINVAL);
	q.place = 0;
	q.ref = 0;
	assert_int_equal(REQ(SMIO_PEER_DEV_SEG_LOOKUP, q), -EINVAL);
	q.ref = 3;
	q.memtype = 0;
	assert_int_equal(REQ(SMIO_PEER_DEV_SEG_LOOKUP, q), -EINVAL);
	/* Any id for a device segment, a BAR number for a BAR. */
	assert_int_equal(REQ(SMIO_DEV_SEG_CONNECT, k), 0);
	k.memtype = SMIO_DEV_MEMTYPE_BAR;
	assert_int_equal(REQ(SMIO_DEV_SEG_CONNECT, k), -EINVAL);
	k.segid = 2;
	assert_int_equal(REQ(SMIO_DEV_SEG_CONNECT, k), 0);
	k.memtype = 3;
	assert_int_equal(REQ(SMIO_DEV_SEG_CONNECT, k), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_list),
		cmocka_unit_test(test_unlisted_numbers),
		cmocka_unit_test(test_hdr_valid),
		cmocka_unit_test(test_hdr_invalid),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_all_valid),
		cmocka_unit_test(test_all_wrong_length),
		cmocka_unit_test(test_truncated_variable),
		cmocka_unit_test(test_unknown_and_oneway),
		cmocka_unit_test(test_unaligned),
		cmocka_unit_test(test_empty_payloads),
		cmocka_unit_test(test_hello_fields),
		cmocka_unit_test(test_status_fields),
		cmocka_unit_test(test_cfg_fields),
		cmocka_unit_test(test_cfg_dump_fields),
		cmocka_unit_test(test_route_req_fields),
		cmocka_unit_test(test_route_reply_fields),
		cmocka_unit_test(test_map_reply_fields),
		cmocka_unit_test(test_func_list_fields),
		cmocka_unit_test(test_ntb_fields),
		cmocka_unit_test(test_iommu_fields),
		cmocka_unit_test(test_faults_fields),
		cmocka_unit_test(test_peer_fields),
		cmocka_unit_test(test_segment_fields),
		cmocka_unit_test(test_intr_fields),
		cmocka_unit_test(test_dma_fields),
		cmocka_unit_test(test_send_recv_roundtrip),
		cmocka_unit_test(test_send_args),
		cmocka_unit_test(test_fd_passing),
		cmocka_unit_test(test_fd_mismatch),
		cmocka_unit_test(test_garbage_then_valid),
		cmocka_unit_test(test_bad_payload_keeps_sync),
		cmocka_unit_test(test_oversize_drained),
		cmocka_unit_test(test_recv_timeout),
		cmocka_unit_test(test_recv_overall_deadline),
		cmocka_unit_test(test_peer_close),
		cmocka_unit_test(test_short_writes),
		cmocka_unit_test(test_call),
		cmocka_unit_test(test_call_seq),
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_cluster_dir),
		cmocka_unit_test(test_sock_path),
		cmocka_unit_test(test_env_host),
		cmocka_unit_test(test_driver_messages),
		cmocka_unit_test(test_dev_seg_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
