// SPDX-License-Identifier: MIT
/*
 * bench_ctl: the operations, each as an application would issue it, over
 * CLIENT connections only (HELLO.host = the host whose socket it is), so the
 * benchmark needs no privilege the daemons might check (SO_PEERCRED).
 *
 *  route   one SMIO_ROUTE from the home host's CPU to an address in its NTB
 *          window that a segment connection has programmed: the walk crosses
 *          the NTB and ends in the partner host's RAM (a PEER_STEP to the
 *          partner's daemon unless --route-cached lets the route cache answer)
 *  lspci   SMIO_FUNC_LIST, then SMIO_CFG_DUMP of every function (tools/smartio/lspci.c)
 *  seg     SEG_CREATE + SEG_AVAILABLE on the partner, SEG_CONNECT from the home
 *          host, SEG_DISCONNECT, SEG_REMOVE (what SISCI's create/connect/remove do)
 *  borrow  DEV_LIST (the cluster's pool), DEV_BORROW shared, DEV_RETURN
 *
 * Every wire call is timed as well, so a composite op can be broken down.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_ctl.h"

uint64_t ctl_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int ctl_recs_add(struct ctl_recs *rs, uint64_t t0, uint64_t t1, uint16_t what)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 4096;
		struct ctl_rec *r = realloc(rs->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		rs->r = r;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct ctl_rec){ .t0 = t0, .t1 = t1, .what = what };
	return 0;
}

int ctl_fail(struct ctl_client *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!c->nerr++) {
		va_start(ap, fmt);
		vsnprintf(c->err, sizeof(c->err), fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* ---------- connections ---------- */

static int hello(int fd, uint32_t host, int timeout_ms, uint32_t *node_id)
{
	struct smio_hello h = { .role = SMIO_ROLE_CLIENT, .host = host,
				.pid = (uint32_t)getpid(), .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	uint32_t rlen;
	int rc = smio_call(fd, SMIO_HELLO, &h, sizeof(h), &hr, sizeof(hr), &rlen, NULL,
			   timeout_ms);

	if (!rc && rlen != sizeof(hr))
		rc = -EPROTO;
	if (!rc && node_id)
		*node_id = hr.node_id;
	return rc;
}

int ctl_connect(const struct ctl_cfg *cfg, uint32_t host, uint32_t *node_id)
{
	int fd = smio_connect(cfg->dir, host, cfg->timeout_ms), rc;

	if (fd < 0)
		return fd;
	rc = hello(fd, host, cfg->timeout_ms, node_id);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* ---------- one timed call ---------- */

/* A call on fd with the reply in c->buf; recorded under its message type. */
static int call(struct ctl_client *c, int fd, uint16_t type, const void *req, uint32_t len,
		uint32_t *rlen)
{
	uint64_t t0 = ctl_now_ns();
	uint32_t n = 0;
	int rc = smio_call(fd, type, req, len, c->buf, SMIO_MAX_PAYLOAD, &n, NULL,
			   c->cfg->timeout_ms);
	uint64_t t1 = ctl_now_ns();

	if (ctl_recs_add(&c->calls, t0, t1, type))
		return -ENOMEM;
	if (rlen)
		*rlen = n;
	return rc;
}

/* A call whose reply must be exactly want bytes. */
static int call_fixed(struct ctl_client *c, int fd, uint16_t type, const void *req,
		      uint32_t len, uint32_t want)
{
	uint32_t n;
	int rc = call(c, fd, type, req, len, &n);

	if (rc)
		return ctl_fail(c, rc, "%s on host %u: %s", smio_type_name(type),
				fd == c->fd_home ? c->home : c->partner, strerror(-rc));
	if (n != want)
		return ctl_fail(c, -EPROTO, "%s: reply of %u bytes, expected %u",
				smio_type_name(type), n, want);
	return 0;
}

/* ---------- route targets (set-up, not timed) ---------- */

int ctl_target_setup(const struct ctl_cfg *cfg, struct ctl_target *t, char *err, size_t len)
{
	struct smio_seg_create cr = { .segid = SMIO_SEGID_AUTO, .size = cfg->seg_size };
	struct smio_seg_info si;
	struct smio_seg_avail av = { .available = 1 };
	struct smio_seg_connect cn = { .adapter = 0 };
	struct smio_seg_conn sc;
	uint32_t rlen;
	int rc;

	t->fd_owner = ctl_connect(cfg, t->partner, &cn.node_id);
	if (t->fd_owner < 0) {
		rc = t->fd_owner;
		snprintf(err, len, "connect to host %u: %s", t->partner, strerror(-rc));
		return rc;
	}
	t->fd_importer = ctl_connect(cfg, t->home, NULL);
	if (t->fd_importer < 0) {
		rc = t->fd_importer;
		snprintf(err, len, "connect to host %u: %s", t->home, strerror(-rc));
		goto close_owner;
	}
	rc = smio_call(t->fd_owner, SMIO_SEG_CREATE, &cr, sizeof(cr), &si, sizeof(si), &rlen,
		       NULL, cfg->timeout_ms);
	if (rc) {
		snprintf(err, len, "SEG_CREATE on host %u: %s", t->partner, strerror(-rc));
		goto close_importer;
	}
	av.segid = si.segid;
	rc = smio_call(t->fd_owner, SMIO_SEG_AVAILABLE, &av, sizeof(av), NULL, 0, NULL, NULL,
		       cfg->timeout_ms);
	if (rc) {
		snprintf(err, len, "SEG_AVAILABLE on host %u: %s", t->partner, strerror(-rc));
		goto close_importer;
	}
	cn.segid = si.segid;
	rc = smio_call(t->fd_importer, SMIO_SEG_CONNECT, &cn, sizeof(cn), &sc, sizeof(sc),
		       &rlen, NULL, cfg->timeout_ms);
	if (rc) {
		snprintf(err, len, "SEG_CONNECT host %u -> host %u: %s", t->home, t->partner,
			 strerror(-rc));
		goto close_importer;
	}
	t->addr = sc.win_addr + sc.offset;
	t->size = sc.size;
	return 0;
	/* Closing the connections drops the segment and the connection with them. */
close_importer:
	close(t->fd_importer);
close_owner:
	close(t->fd_owner);
	t->fd_owner = t->fd_importer = -1;
	return rc;
}

void ctl_target_close(struct ctl_target *t)
{
	if (t->fd_importer >= 0)
		close(t->fd_importer);
	if (t->fd_owner >= 0)
		close(t->fd_owner);
	t->fd_owner = t->fd_importer = -1;
}

/* ---------- the ops ---------- */

static int op_route(struct ctl_client *c)
{
	const struct ctl_target *t = c->tgt;
	struct smio_route_req q = { .rid = 0, .write = 1, .nocache = !c->cfg->route_cached,
				    .len = 64 };
	const struct smio_route_reply *r = c->buf;
	uint32_t n;
	int rc;

	/* A different line each time, within the segment. */
	q.addr = t->addr + (c->iter * 64) % (t->size & ~63ull);
	rc = call(c, c->fd_home, SMIO_ROUTE, &q, sizeof(q), &n);
	if (rc)
		return ctl_fail(c, rc, "ROUTE on host %u: %s", c->home, strerror(-rc));
	if (n < sizeof(*r))
		return ctl_fail(c, -EPROTO, "ROUTE: short reply (%u bytes)", n);
	if (r->status)
		return ctl_fail(c, -EHOSTUNREACH, "ROUTE host %u -> 0x%" PRIx64 ": status %d: %.120s",
				c->home, q.addr, r->status, r->reason);
	if (r->tgt.host != t->partner)
		return ctl_fail(c, -EPROTO, "ROUTE host %u -> 0x%" PRIx64 " ended on host %u, not %u",
				c->home, q.addr, r->tgt.host, t->partner);
	return 0;
}

static int op_lspci(struct ctl_client *c)
{
	const struct smio_func_list *fl = c->buf;
	uint16_t bdf[SMIO_MAX_FUNCS];
	uint32_t n, nf;
	int rc;

	rc = call(c, c->fd_home, SMIO_FUNC_LIST, NULL, 0, &n);
	if (rc)
		return ctl_fail(c, rc, "FUNC_LIST on host %u: %s", c->home, strerror(-rc));
	if (n < sizeof(*fl) || fl->n > SMIO_MAX_FUNCS || n != sizeof(*fl) + fl->n * sizeof(fl->f[0]))
		return ctl_fail(c, -EPROTO, "FUNC_LIST: malformed reply");
	nf = fl->n;
	for (uint32_t i = 0; i < nf; i++)
		bdf[i] = fl->f[i].bdf;
	for (uint32_t i = 0; i < nf; i++) {
		struct smio_bdf q = { .bdf = bdf[i] };

		rc = call_fixed(c, c->fd_home, SMIO_CFG_DUMP, &q, sizeof(q), SMIO_CFG_SPACE);
		if (rc)
			return rc;
	}
	return 0;
}

static int op_seg(struct ctl_client *c)
{
	struct smio_seg_create cr = { .segid = SMIO_SEGID_AUTO, .size = c->cfg->seg_size };
	struct smio_seg_connect cn = { .node_id = c->partner_node, .adapter = 0 };
	struct smio_seg_avail av = { .available = 1 };
	struct smio_seg_conn_ref dr;
	struct smio_seg_id rm;
	int rc;

	rc = call_fixed(c, c->fd_partner, SMIO_SEG_CREATE, &cr, sizeof(cr),
			sizeof(struct smio_seg_info));
	if (rc)
		return rc;
	rm.segid = av.segid = cn.segid = ((const struct smio_seg_info *)c->buf)->segid;
	rm.pad = 0;
	rc = call_fixed(c, c->fd_partner, SMIO_SEG_AVAILABLE, &av, sizeof(av), 0);
	if (rc)
		goto remove;
	rc = call_fixed(c, c->fd_home, SMIO_SEG_CONNECT, &cn, sizeof(cn),
			sizeof(struct smio_seg_conn));
	if (rc)
		goto remove;
	dr = (struct smio_seg_conn_ref){ .conn = ((const struct smio_seg_conn *)c->buf)->conn };
	rc = call_fixed(c, c->fd_home, SMIO_SEG_DISCONNECT, &dr, sizeof(dr), 0);
remove:
	/* Always try: a failed op must not leave a segment behind. */
	{
		int rc2 = call_fixed(c, c->fd_partner, SMIO_SEG_REMOVE, &rm, sizeof(rm), 0);

		return rc ? rc : rc2;
	}
}

static int op_borrow(struct ctl_client *c)
{
	const struct smio_dev_list *l = c->buf;
	struct smio_dev_borrow b = { .flags = 0 };   /* shared */
	struct smio_dev_ref r = { .pad = 0 };
	uint32_t n;
	int rc;

	rc = call(c, c->fd_home, SMIO_DEV_LIST, NULL, 0, &n);
	if (rc)
		return ctl_fail(c, rc, "DEV_LIST on host %u: %s", c->home, strerror(-rc));
	if (n < sizeof(*l) || l->n > SMIO_MAX_DEVS || n != sizeof(*l) + l->n * sizeof(l->d[0]))
		return ctl_fail(c, -EPROTO, "DEV_LIST: malformed reply");
	if (!l->n)
		return ctl_fail(c, -ENODEV, "DEV_LIST on host %u: the pool is empty", c->home);
	/* Clients spread over the pool, and each walks through it. */
	b.fdid = l->d[(c->idx + c->iter) % l->n].fdid;
	rc = call_fixed(c, c->fd_home, SMIO_DEV_BORROW, &b, sizeof(b),
			sizeof(struct smio_dev_borrowed));
	if (rc)
		return rc;
	r.handle = ((const struct smio_dev_borrowed *)c->buf)->handle;
	return call_fixed(c, c->fd_home, SMIO_DEV_RETURN, &r, sizeof(r), 0);
}

int ctl_op_run(struct ctl_client *c, enum ctl_op k)
{
	uint64_t t0 = ctl_now_ns();
	int rc;

	switch (k) {
	case OP_ROUTE: rc = op_route(c); break;
	case OP_LSPCI: rc = op_lspci(c); break;
	case OP_SEG: rc = op_seg(c); break;
	case OP_BORROW: rc = op_borrow(c); break;
	default: return -EINVAL;
	}
	c->iter++;
	/* Failed ops are counted as errors, not timed. */
	if (!rc && ctl_recs_add(&c->ops, t0, ctl_now_ns(), (uint16_t)k))
		return -ENOMEM;
	return rc;
}
