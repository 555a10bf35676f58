// SPDX-License-Identifier: MIT
/*
 * libczodiac (cZodiac's DAP, NAP, RDMA PUT/GET) against real daemons: the
 * default cluster started with the smartio CLI. The test process is an
 * endpoint of host 1 (node 8); a forked child is the peer endpoint on host 0
 * (node 4), driven step by step over a pipe. Every byte that crosses is
 * checked: DAP stores read back by the peer, NAP messages in order across
 * ring wraps (immediate and indirect), PUT and GET data by checksum.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sisci_harness.h"
#include "czodiac/cz_priv.h"    /* the ring's layout: the forged message */
#include "smartio/czodiac.h"

#define NODE_HOST0 4
#define JOB        0x2c
#define MEM        (4u << 20)
#define RING       8u          /* small: every batch below wraps it */
#define PIPE_MS    20000
#define WAIT_MS    20000

enum cmd { C_QUIT = 1, C_ECHO, C_DAP_CHECK, C_ACCEPT, C_SERVE, C_FILL, C_FORGE };

static struct child peer = { .pid = -1, .to = -1, .from = -1 };
static struct cz_ep *ep;
static struct cz_qp *qp;

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static uint32_t checksum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static struct cz_config config(void)
{
	return (struct cz_config){ .job = JOB, .mem_size = MEM, .ring_entries = RING,
				   .timeout_ms = WAIT_MS };
}

/* ---------- the peer (host 0) ---------- */

/*
 * Open QP 1 and, bypassing the library, write one message with a wrong magic
 * number into the test's ring of that QP (white box: the ring's layout). The
 * library's QP 1 never sends: its first message would reuse the slot.
 */
static int peer_forge(struct cz_ep *e)
{
	unsigned int id = (JOB << 12) | (CZ_SUB_RING + NODE_HOST0 * CZ_MAX_QPS + 1);
	sci_remote_segment_t seg;
	volatile uint8_t *ring, *ent;
	struct cz_msg m = { .kind = CZ_K_NAP, .len = 4 };
	struct cz_qp *q1;
	sci_desc_t sd;
	sci_map_t map;
	sci_error_t err;

	if (cz_qp_open(e, 8, 1, &q1))
		return __LINE__;
	SCIOpen(&sd, 0, &err);
	if (err)
		return __LINE__;
	SCIConnectSegment(sd, &seg, 8, id, 0, NULL, NULL, WAIT_MS, 0, &err);
	if (err)
		return __LINE__;
	ring = SCIMapRemoteSegment(seg, &map, 0, CZ_RING_HDR + CZ_NAP_ENTRY, NULL, 0, &err);
	if (err)
		return __LINE__;
	m.magic = *(volatile uint32_t *)(ring + CZ_RING_MAGIC_OFF) ^ 0x5a5a;
	ent = ring + CZ_RING_HDR;
	memcpy((void *)(ent + 4), (const uint8_t *)&m + 4, sizeof(m) - 4);
	memcpy((void *)(ent + CZ_NAP_HDR), "evil", 4);
	__atomic_store_n((uint32_t *)(void *)ent, 1u, __ATOMIC_RELEASE);
	SCIFlush(NULL, 0);
	SCIUnmapSegment(map, 0, &err);
	SCIDisconnectSegment(seg, 0, &err);
	SCIClose(sd, 0, &err);
	/* QP 1 stays open until the end (cz_close): the test may still be connecting. */
	return 0;
}

/* Echo n messages back, each as it came (length and bytes). */
static int peer_echo(struct cz_qp *q, uint32_t n)
{
	static uint8_t buf[CZ_NAP_MAX];

	for (uint32_t i = 0; i < n; i++) {
		int len = cz_nap_recv(q, buf, sizeof(buf), WAIT_MS);

		if (len < 0 || cz_nap_send(q, buf, (size_t)len))
			return __LINE__;
	}
	return 0;
}

static int peer_body(int in, int out, void *arg)
{
	struct cz_config c = config();
	struct cz_ep *e;
	struct cz_qp *q;
	uint8_t *mem;
	uint32_t cmd, v;
	int rc;

	(void)arg;
	if (cz_open(&c, &e))
		return __LINE__;
	mem = cz_mem(e, NULL);
	rc = cz_qp_open(e, 8, 0, &q);
	if (put(out, (uint32_t)rc) || rc)
		return __LINE__;
	for (;;) {
		if (get(in, &cmd, PIPE_MS) || get(in, &v, PIPE_MS))
			return __LINE__;
		switch (cmd) {
		case C_QUIT:
			cz_close(e);
			return 0;
		case C_ECHO:
			rc = peer_echo(q, v);
			break;
		case C_DAP_CHECK: {      /* v bytes at 0 must be pattern 7 */
			static uint8_t want[65536];

			fill(want, v, 7);
			rc = memcmp(mem, want, v) ? __LINE__ : 0;
			break;
		}
		case C_ACCEPT: {         /* a PUT of tag v into 0x10000, up to 1 MiB */
			long n = cz_put_accept(q, 0x10000, 1u << 20, v, WAIT_MS);

			if (n < 0) {
				rc = n == -EMSGSIZE ? 0 : __LINE__;
				put(out, rc ? (uint32_t)rc : 0xffffffffu);
				continue;
			}
			put(out, checksum(mem + 0x10000, (size_t)n));
			continue;
		}
		case C_FILL:             /* pattern v over the region's second MiB */
			fill(mem + (1u << 20), 1u << 20, v);
			rc = 0;
			break;
		case C_FORGE:
			rc = peer_forge(e);
			break;
		case C_SERVE: {          /* serve GETs until a 4-byte "done" NAP */
			uint32_t done = 0;
			int n = cz_nap_recv(q, &done, sizeof(done), WAIT_MS);

			rc = n == 4 && done == v ? 0 : __LINE__;
			break;
		}
		default:
			return __LINE__;
		}
		if (put(out, (uint32_t)rc))
			return __LINE__;
	}
}

/* Tell the peer cmd(v); its answer. */
static uint32_t ask(enum cmd cmd, uint32_t v)
{
	uint32_t r = 0xdead;

	assert_int_equal(put(peer.to, cmd), 0);
	assert_int_equal(put(peer.to, v), 0);
	assert_int_equal(get(peer.from, &r, PIPE_MS), 0);
	return r;
}

static void send_cmd(enum cmd cmd, uint32_t v)
{
	assert_int_equal(put(peer.to, cmd), 0);
	assert_int_equal(put(peer.to, v), 0);
}

static int group_setup(void **state)
{
	struct cz_config c = config();
	uint32_t r;

	(void)state;
	if (sh_up("czodiac", "1", false))
		return -1;
	start_child(&peer, "0", peer_body, NULL);
	if (cz_open(&c, &ep) || cz_qp_open(ep, NODE_HOST0, 0, &qp))
		return -1;
	return get(peer.from, &r, PIPE_MS) || r ? -1 : 0;
}

static int group_teardown(void **state)
{
	int st = -1, rc;

	(void)state;
	/* Both sides close at once: each removes its rings as the other disconnects. */
	if (peer.pid > 0) {
		put(peer.to, C_QUIT);
		put(peer.to, 0);
	}
	cz_close(ep);
	if (peer.pid > 0)
		st = end_child(&peer);
	rc = sh_down();
	return rc == 0 && st == 0 ? 0 : -1;
}

/* ---------- tests ---------- */

/* DAP: stores through the global address table land in the peer's region. */
static void test_dap(void **state)
{
	uint8_t buf[4096] = { 0 }, back[4096];
	uint64_t g = CZ_GADDR(NODE_HOST0, 0);

	(void)state;
	assert_int_equal(cz_dap_store(ep, CZ_GADDR(2, 0), buf, 4), -ENOENT);
	assert_int_equal(cz_gat_attach(ep, NODE_HOST0), 0);
	fill(buf, sizeof(buf), 7);
	assert_int_equal(cz_dap_store(ep, g, buf, sizeof(buf)), 0);
	assert_int_equal(ask(C_DAP_CHECK, sizeof(buf)), 0);
	assert_int_equal(cz_dap_load(ep, g, back, sizeof(back)), 0);
	assert_memory_equal(back, buf, sizeof(buf));
	/* One word through the pointer, and the region's bounds. */
	*(volatile uint32_t *)cz_dap_ptr(ep, g + 64, 4) = 0x11223344;
	assert_int_equal(cz_dap_load(ep, g + 64, back, 4), 0);
	assert_int_equal(*(uint32_t *)back, 0x11223344);
	assert_null(cz_dap_ptr(ep, g + MEM - 2, 4));
	assert_int_equal(cz_dap_store(ep, g + MEM, buf, 1), -ERANGE);
	/* My own region is in the table too. */
	assert_int_equal(cz_gat_attach(ep, cz_node(ep)), 0);
	assert_ptr_equal(cz_dap_ptr(ep, CZ_GADDR(cz_node(ep), 0), 1), cz_mem(ep, NULL));
}

/*
 * NAP: 5 x RING messages of every size class (empty, immediate, the
 * immediate limit, indirect, the largest) echoed back in order: the rings
 * wrap five times, and the sender waits for credits on the way.
 */
static void test_nap_order_wrap(void **state)
{
	static const size_t sizes[] = { 0, 1, 8, CZ_NAP_IMM_MAX, CZ_NAP_IMM_MAX + 1, 700,
					CZ_NAP_MAX };
	const uint32_t n = 5 * RING;
	static uint8_t out[CZ_NAP_MAX + 1], in[CZ_NAP_MAX];
	uint32_t st = 0xdead;
	struct cz_stats s0, s1;
	uint64_t imm = 0;

	(void)state;
	cz_stats(ep, &s0);
	send_cmd(C_ECHO, n);
	/* Half a ring ahead of the echoes, so both rings carry several at once. */
	for (uint32_t i = 0, r = 0; r < n;) {
		if (i < n && i - r < RING / 2) {
			size_t len = sizes[i % 7];

			fill(out, len, 100 + i);
			assert_int_equal(cz_nap_send(qp, out, len), 0);
			imm += len <= CZ_NAP_IMM_MAX;
			i++;
			continue;
		}
		size_t len = sizes[r % 7];
		int got = cz_nap_recv(qp, in, sizeof(in), WAIT_MS);

		assert_int_equal(got, (int)len);
		fill(out, len, 100 + r);
		if (len)
			assert_memory_equal(in, out, len);
		r++;
	}
	assert_int_equal(get(peer.from, &st, PIPE_MS), 0);
	assert_int_equal(st, 0);
	cz_stats(ep, &s1);
	assert_int_equal(s1.nap_imm - s0.nap_imm, imm);
	assert_int_equal(s1.nap_indirect - s0.nap_indirect, n - imm);
	assert_int_equal(s1.nap_received - s0.nap_received, n);
	assert_int_equal(s1.bad_magic, 0);
	/* Too large; nothing waiting. */
	assert_int_equal(cz_nap_send(qp, out, CZ_NAP_MAX + 1), -EMSGSIZE);
	assert_int_equal(cz_nap_recv(qp, in, sizeof(in), 0), -ETIMEDOUT);
}

/* A message larger than the receive buffer is dropped with -EMSGSIZE; the next is whole. */
static void test_nap_too_small(void **state)
{
	uint8_t out[300], in[300];

	(void)state;
	send_cmd(C_ECHO, 2);
	fill(out, sizeof(out), 5);
	assert_int_equal(cz_nap_send(qp, out, 200), 0);
	assert_int_equal(cz_nap_send(qp, out, 300), 0);
	assert_int_equal(cz_nap_recv(qp, in, 100, WAIT_MS), -EMSGSIZE);
	assert_int_equal(cz_nap_recv(qp, in, sizeof(in), WAIT_MS), 300);
	assert_memory_equal(in, out, 300);
	assert_int_equal(get(peer.from, (uint32_t *)in, PIPE_MS), 0);
	assert_int_equal(*(uint32_t *)in, 0);
}

/*
 * RING + 4 messages sent before reading any echo: the sender runs out of
 * credits and waits until the peer has consumed; nothing is lost or reordered.
 */
static void test_nap_credit(void **state)
{
	const uint32_t n = RING + 4;
	struct cz_stats s0, s1;
	uint32_t v, st = 0xdead;

	(void)state;
	cz_stats(ep, &s0);
	send_cmd(C_ECHO, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(cz_nap_send(qp, &i, sizeof(i)), 0);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(cz_nap_recv(qp, &v, sizeof(v), WAIT_MS), (int)sizeof(v));
		assert_int_equal(v, i);
	}
	assert_int_equal(get(peer.from, &st, PIPE_MS), 0);
	assert_int_equal(st, 0);
	cz_stats(ep, &s1);
	assert_true(s1.credit_waits > s0.credit_waits);
}

/* RDMA PUT after the NAP handshake: sizes from a byte to 1 MiB, unaligned source. */
static void test_put(void **state)
{
	static const size_t sizes[] = { 1, 100, 4096, 65536 + 3, 1u << 20 };
	uint8_t *mem = cz_mem(ep, NULL);
	struct cz_stats s0, s1;

	(void)state;
	cz_stats(ep, &s0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], off = 4096 * 3 + i;
		uint32_t sum, got = 0;

		fill(mem + off, n, 40 + i);
		sum = checksum(mem + off, n);
		send_cmd(C_ACCEPT, (uint32_t)(1000 + i));
		assert_int_equal(cz_put(qp, off, n, (uint32_t)(1000 + i)), 0);
		assert_int_equal(get(peer.from, &got, PIPE_MS), 0);
		assert_int_equal(got, sum);
	}
	cz_stats(ep, &s1);
	assert_int_equal(s1.puts - s0.puts, 5);
}

/* A PUT larger than the receiver accepts is refused on both sides; the QP goes on. */
static void test_put_refused(void **state)
{
	uint32_t got = 0;

	(void)state;
	send_cmd(C_ACCEPT, 77);
	assert_int_equal(cz_put(qp, 0, (1u << 20) + 1, 77), -ECONNREFUSED);
	assert_int_equal(get(peer.from, &got, PIPE_MS), 0);
	assert_int_equal(got, 0xffffffffu);
	assert_int_equal(cz_put(qp, MEM - 4, 8, 78), -ERANGE);
}

/*
 * RDMA GET: the peer fills its second MiB and serves; GETs of several sizes
 * and offsets arrive intact, also while a user message waits in the ring.
 */
static void test_get(void **state)
{
	static uint8_t want[1u << 20];
	uint8_t *mem = cz_mem(ep, NULL);
	static const size_t sizes[] = { 1, 333, 4096, 100000, 1u << 20 };
	uint32_t done = 0x90d, st = 0xdead;
	struct cz_stats s0, s1;

	(void)state;
	assert_int_equal(ask(C_FILL, 61), 0);
	fill(want, sizeof(want), 61);
	cz_stats(ep, &s0);
	send_cmd(C_SERVE, done);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i], src = i ? (1u << 20) + 17 * i : (1u << 20);

		if (src + n > (2u << 20))
			src = 1u << 20;
		memset(mem + 0x200000, 0, n);
		assert_int_equal(cz_get(qp, 0x200000, src, n), 0);
		assert_memory_equal(mem + 0x200000, want + (src - (1u << 20)), n);
	}
	assert_int_equal(cz_get(qp, 0, MEM - 1, 2), -ERANGE);
	assert_int_equal(cz_nap_send(qp, &done, sizeof(done)), 0);
	assert_int_equal(get(peer.from, &st, PIPE_MS), 0);
	assert_int_equal(st, 0);
	cz_stats(ep, &s1);
	assert_int_equal(s1.gets - s0.gets, 5);
}

/* A message whose magic number does not match the ring's is dropped and counted. */
static void test_bad_magic(void **state)
{
	struct cz_qp *q1;
	struct cz_stats s0, s1;
	uint32_t st = 0xdead;
	uint8_t buf[16];

	(void)state;
	cz_stats(ep, &s0);
	send_cmd(C_FORGE, 0);
	assert_int_equal(cz_qp_open(ep, NODE_HOST0, 1, &q1), 0);
	assert_int_equal(get(peer.from, &st, PIPE_MS), 0);
	assert_int_equal(st, 0);
	assert_int_equal(cz_nap_recv(q1, buf, sizeof(buf), 200), -ETIMEDOUT);
	cz_stats(ep, &s1);
	assert_int_equal(s1.bad_magic - s0.bad_magic, 1);
	assert_int_equal(s1.nap_received, s0.nap_received);
	/* QP 1 is closed by cz_close at the end, after the peer's. */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dap),
		cmocka_unit_test(test_nap_order_wrap),
		cmocka_unit_test(test_nap_too_small),
		cmocka_unit_test(test_nap_credit),
		cmocka_unit_test(test_put),
		cmocka_unit_test(test_put_refused),
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_bad_magic),
	};

	return cmocka_run_group_tests_name("czodiac", tests, group_setup, group_teardown);
}
