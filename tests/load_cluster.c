// SPDX-License-Identifier: MIT
/*
 * The daemon_load suite's tools on the cluster (load_cluster.h); the cluster
 * itself, its barrier and its fd check are tests/cluster_harness.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>

#include "load_cluster.h"
#include "util/smio_time.h"

/* ---------- calls ---------- */

int route(int fd, uint64_t addr, bool nocache)
{
	struct smio_route_req rt = { .addr = addr, .len = 64, .nocache = nocache };
	uint32_t rlen;

	assert_int_equal(smio_call(fd, SMIO_ROUTE, &rt, sizeof(rt), rbuf.b, sizeof(rbuf.b),
				   &rlen, NULL, 4 * SMD_PEER_TIMEOUT), 0);
	assert_true(rlen >= sizeof(struct smio_route_reply));
	return rbuf.rr.status;
}

uint32_t seg_new(int fd, uint64_t size)
{
	struct smio_seg_create cr = { .segid = SMIO_SEGID_AUTO, .size = size };
	struct smio_seg_avail av = { .available = 1 };

	assert_int_equal(call(fd, SMIO_SEG_CREATE, &cr, sizeof(cr), NULL), 0);
	av.segid = rbuf.si.segid;
	assert_int_equal(call(fd, SMIO_SEG_AVAILABLE, &av, sizeof(av), NULL), 0);
	return av.segid;
}

int seg_connect(int fd, uint32_t owner, uint32_t segid)
{
	struct smio_seg_connect m = { .node_id = g.d[owner].node_id, .segid = segid,
				      .adapter = 0 };

	return call(fd, SMIO_SEG_CONNECT, &m, sizeof(m), NULL);
}

int seg_disconnect(int fd, uint32_t conn)
{
	struct smio_seg_conn_ref m = { .conn = conn };

	return call(fd, SMIO_SEG_DISCONNECT, &m, sizeof(m), NULL);
}

/* ---------- probes: what a well-behaved application asks ---------- */

/* What `smartio lspci` asks: FUNC_LIST, then CFG_DUMP of every function. */
void lspci(int fd, struct lat *l)
{
	uint16_t bdf[SMIO_MAX_FUNCS];
	uint32_t n, rlen;

	TIMED(l, assert_int_equal(call(fd, SMIO_FUNC_LIST, NULL, 0, &rlen), 0));
	n = rbuf.fl.n;
	assert_true(n > 0 && n <= SMIO_MAX_FUNCS);
	for (uint32_t i = 0; i < n; i++)
		bdf[i] = rbuf.fl.f[i].bdf;
	for (uint32_t i = 0; i < n; i++) {
		struct smio_bdf q = { .bdf = bdf[i] };

		TIMED(l, assert_int_equal(call(fd, SMIO_CFG_DUMP, &q, sizeof(q), &rlen), 0));
		assert_int_equal(rlen, SMIO_CFG_SPACE);
	}
}

void probe_init(struct probe *p, const char *what)
{
	static char names[3][3][64];
	static unsigned k;
	char (*nm)[64] = names[k++ % 3];

	snprintf(nm[0], 64, "%s connect+HELLO", what);
	snprintf(nm[1], 64, "%s STATUS", what);
	snprintf(nm[2], 64, "%s lspci requests", what);
	lat_init(&p->conn, nm[0], 1 << 14);
	lat_init(&p->status, nm[1], 1 << 14);
	lat_init(&p->lspci, nm[2], 1 << 16);
}

/* A new application on host: HELLO, STATUS, lspci; each request timed. */
void probe_round(uint32_t host, struct probe *p)
{
	uint64_t t0 = smio_now_ns();
	int fd = open_conn(host, SMIO_ROLE_CLIENT, host);

	lat_add(&p->conn, smio_now_ns() - t0);
	TIMED(&p->status, assert_int_equal(status(fd), 0));
	assert_int_equal(rbuf.st.host, host);
	lspci(fd, &p->lspci);
	close(fd);
}

void probe_print(const struct probe *p)
{
	lat_print(&p->conn);
	lat_print(&p->status);
	lat_print(&p->lspci);
}

void probe_check(const struct probe *p)
{
	lat_check(&p->conn, FAST_MS, STALL_MS);
	lat_check(&p->status, FAST_MS, STALL_MS);
	lat_check(&p->lspci, FAST_MS, STALL_MS);
}

void probe_free(struct probe *p)
{
	lat_free(&p->conn);
	lat_free(&p->status);
	lat_free(&p->lspci);
}

/* ---------- latency samples ---------- */

void lat_init(struct lat *l, const char *name, unsigned cap)
{
	l->name = name;
	l->n = 0;
	l->cap = cap;
	l->ns = calloc(cap, sizeof(*l->ns));
	assert_non_null(l->ns);
}

void lat_add(struct lat *l, uint64_t ns)
{
	if (l->n < l->cap)
		l->ns[l->n++] = ns;
}

uint64_t lat_max(const struct lat *l)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < l->n; i++)
		if (l->ns[i] > m)
			m = l->ns[i];
	return m;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t lat_pct(const struct lat *l, unsigned pct)
{
	uint64_t *v, r;
	unsigned k;

	if (!l->n)
		return 0;
	v = malloc(l->n * sizeof(*v));
	assert_non_null(v);
	memcpy(v, l->ns, l->n * sizeof(*v));
	qsort(v, l->n, sizeof(*v), cmp_u64);
	k = (unsigned)(((uint64_t)pct * l->n + 99) / 100);    /* nearest rank */
	r = v[k ? k - 1 : 0];
	free(v);
	return r;
}

void lat_print(const struct lat *l)
{
	print_message("[   INFO   ] %-38s n=%-5u p50=%7.3f ms  p99=%7.3f ms  max=%7.3f ms\n",
		      l->name, l->n, MS(lat_pct(l, 50)), MS(lat_pct(l, 99)), MS(lat_max(l)));
}

void lat_check(const struct lat *l, unsigned p99_ms, unsigned max_ms)
{
	double p99 = MS(lat_pct(l, 99)), max = MS(lat_max(l));

	if (p99 >= p99_ms || max >= max_ms)
		fail_msg("%s: p99 %.3f ms (bound %u ms), max %.3f ms (bound %u ms)", l->name, p99,
			 p99_ms, max, max_ms);
}

void lat_free(struct lat *l)
{
	free(l->ns);
	l->ns = NULL;
	l->n = l->cap = 0;
}
