// SPDX-License-Identifier: MIT
/*
 * smartio mount, the I/O layer: byte-granular reads and writes of a host's
 * NVMe namespaces through its in-kernel NVMe driver (SMIO_NVME_ADMIN /
 * SMIO_NVME_IO), whether the controller is local or borrowed.
 *
 * Each FUSE worker thread has its own connection to the daemon (one call in
 * flight per socket), opened on first use and reopened after a transport
 * failure, so a mount outlives a daemon restart. Transfers are cut into
 * SMIO_NVME_MAX_DATA messages; partial blocks are read, modified and written
 * back under the namespace's lock held exclusively, so that no concurrent
 * write to the same block is lost.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvme/types.h>

#include "cli.h"
#include "mount.h"

#define NVME_CLASS         0x010802u
#define MIO_TIMEOUT_MS     35000        /* the daemon's own bound is 30 s */
#define MIO_ZEROES_MAX     65536u       /* blocks per Write Zeroes (protocol limit) */

struct mio_conn {
	int fd;
	uint8_t *req, *rep, *bounce;
};

static void conn_free(void *p)
{
	struct mio_conn *c = p;

	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->req);
	free(c->rep);
	free(c->bounce);
	free(c);
}

int mio_init(struct mnt_ctx *m)
{
	int rc = pthread_key_create(&m->key, conn_free);

	if (rc)
		return -rc;
	m->key_ok = true;
	return 0;
}

void mio_drop_conn(struct mnt_ctx *m)
{
	if (!m->key_ok)
		return;
	conn_free(pthread_getspecific(m->key));
	pthread_setspecific(m->key, NULL);
}

void mio_fini(struct mnt_ctx *m)
{
	if (m->key_ok) {
		mio_drop_conn(m);
		pthread_key_delete(m->key);
		m->key_ok = false;
	}
	for (unsigned i = 0; i < m->nns; i++)
		pthread_rwlock_destroy(&m->ns[i].lock);
	free(m->ns);
	m->ns = NULL;
	m->nns = 0;
}

/* The calling thread's buffers (allocated on first use), or NULL. */
static struct mio_conn *thr_get(struct mnt_ctx *m)
{
	struct mio_conn *c = pthread_getspecific(m->key);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fd = -1;
	c->req = malloc(SMIO_MAX_PAYLOAD);
	c->rep = malloc(SMIO_MAX_PAYLOAD);
	c->bounce = malloc(SMIO_NVME_MAX_DATA);
	if (!c->req || !c->rep || !c->bounce || pthread_setspecific(m->key, c)) {
		conn_free(c);
		return NULL;
	}
	return c;
}

static bool transport_error(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -EPROTO || rc == -EPIPE ||
	       rc == -EMSGSIZE || rc == -ENOTCONN;
}

/*
 * One request on the thread's connection, connecting first if needed. After
 * a transport error the connection is dropped; if it was an old one (the
 * daemon may have restarted since), the request is sent once more on a new
 * one: every request here is idempotent. A timeout is not retried.
 */
static int call(struct mnt_ctx *m, struct mio_conn *c, uint16_t type, uint32_t reqlen)
{
	bool fresh = false;
	uint32_t rlen;
	int rc;

	for (;;) {
		if (c->fd < 0) {
			rc = cli_connect(m->dir, m->host, SMIO_ROLE_CLIENT);
			if (rc < 0)
				return rc;
			c->fd = rc;
			fresh = true;
		}
		rc = smio_call(c->fd, type, c->req, reqlen, c->rep, SMIO_MAX_PAYLOAD, &rlen, NULL,
			       MIO_TIMEOUT_MS);
		if (!transport_error(rc))
			return rc;
		close(c->fd);
		c->fd = -1;
		if (fresh || rc == -ETIMEDOUT)
			return rc;
	}
}

static const char *err_text(int rc)
{
	switch (rc) {
	case -ENODEV:
		return "no NVMe driver is bound to the controller";
	case -ENXIO:
		return "no such namespace";
	case -ETIMEDOUT:
		return "the command timed out";
	case -ENOENT:
	case -ECONNREFUSED:
	case -ECONNRESET:
		return "no daemon answers (is the cluster up?)";
	default:
		return cli_strerror(rc);
	}
}

/*
 * One SMIO_NVME_IO on the thread's connection. WRITE sends nlb blocks from
 * wdata; READ copies nlb blocks to rdata. Returns 0 or -errno; a device or
 * transport error is logged and becomes -EIO.
 */
static int io(struct mnt_ctx *m, struct mnt_ns *ns, uint8_t op, uint64_t slba, uint32_t nlb,
	      const void *wdata, void *rdata)
{
	static const char *const opname[] = { "?", "read", "write", "flush", "write zeroes",
					      "deallocate" };
	struct mio_conn *c = thr_get(m);
	struct smio_nvme_cpl *r;
	uint32_t wlen = op == SMIO_NVME_WRITE ? nlb << ns->shift : 0;
	int rc;

	if (!c)
		return -ENOMEM;
	r = (void *)c->rep;
	rc = call(m, c, SMIO_NVME_IO,
		  nvme_msg_io(c->req, ns->bdf, op, ns->nsid, slba, nlb, wdata, wlen));
	if (rc || r->status) {
		char what[96], why[64];

		if (op == SMIO_NVME_FLUSH)
			snprintf(what, sizeof(what), "flush");
		else
			snprintf(what, sizeof(what), "%s of %u blocks at LBA %" PRIu64, opname[op],
				 nlb, slba);
		if (!rc)
			snprintf(why, sizeof(why), "NVMe status 0x%03x (SCT %u, SC 0x%02x)",
				 r->status, (r->status >> 8) & 7u, r->status & 0xffu);
		mnt_log("%s: %s: %s -> EIO", ns->name, what, rc ? err_text(rc) : why);
		return rc == -ENOMEM ? rc : -EIO;
	}
	if (op == SMIO_NVME_READ) {
		if (r->data_len != nlb << ns->shift) {
			mnt_log("%s: read of %u blocks at LBA %" PRIu64 ": %u bytes came back -> EIO",
				ns->name, nlb, slba, r->data_len);
			return -EIO;
		}
		memcpy(rdata, r->data, r->data_len);
	}
	return 0;
}

/* ---------- reads and writes ---------- */

/* How much of [off, off + len) lies inside the namespace. */
static uint64_t clip(const struct mnt_ns *ns, size_t len, uint64_t off)
{
	if (off >= ns->bytes)
		return 0;
	return len < ns->bytes - off ? len : ns->bytes - off;
}

/*
 * The next message of a transfer at pos with want bytes left: its first
 * block, block count, the offset of pos in the first block and the bytes of
 * the transfer it carries.
 */
struct chunk {
	uint64_t lba, skip, take;
	uint32_t nlb;
};

static void next_chunk(const struct mnt_ns *ns, uint64_t pos, uint64_t want, struct chunk *k)
{
	uint64_t bs = 1ull << ns->shift, blocks, per = SMIO_NVME_MAX_DATA >> ns->shift;

	k->lba = pos >> ns->shift;
	k->skip = pos & (bs - 1);
	blocks = (k->skip + want + bs - 1) >> ns->shift;
	k->nlb = (uint32_t)(blocks < per ? blocks : per);
	k->take = ((uint64_t)k->nlb << ns->shift) - k->skip;
	if (k->take > want)
		k->take = want;
}

ssize_t mio_read(struct mnt_ctx *m, struct mnt_ns *ns, void *buf, size_t len, uint64_t off)
{
	struct mio_conn *c = thr_get(m);
	uint64_t n = clip(ns, len, off), done = 0;

	if (!c)
		return -ENOMEM;
	while (done < n) {
		uint8_t *dst = (uint8_t *)buf + done;
		struct chunk k;
		bool whole;
		int rc;

		next_chunk(ns, off + done, n - done, &k);
		/* Whole blocks straight into the caller's buffer, edges through the bounce. */
		whole = !k.skip && k.take == (uint64_t)k.nlb << ns->shift;
		rc = io(m, ns, SMIO_NVME_READ, k.lba, k.nlb, NULL, whole ? dst : c->bounce);
		if (rc)
			return done ? (ssize_t)done : rc;
		if (!whole)
			memcpy(dst, c->bounce + k.skip, (size_t)k.take);
		done += k.take;
	}
	return (ssize_t)done;
}

/* Write n bytes at off (inside the namespace) with ns->lock held as the caller needs. */
static ssize_t write_locked(struct mnt_ctx *m, struct mnt_ns *ns, const uint8_t *src,
			    uint64_t n, uint64_t off)
{
	struct mio_conn *c = thr_get(m);
	uint64_t done = 0, bs = 1ull << ns->shift;

	if (!c)
		return -ENOMEM;
	while (done < n) {
		struct chunk k;
		uint64_t end;
		int rc = 0;

		next_chunk(ns, off + done, n - done, &k);
		end = k.skip + k.take;
		if (!k.skip && end == (uint64_t)k.nlb << ns->shift) {
			rc = io(m, ns, SMIO_NVME_WRITE, k.lba, k.nlb, src + done, NULL);
		} else {
			/* Read the partial first and last blocks, merge, write the run. */
			if (k.skip)
				rc = io(m, ns, SMIO_NVME_READ, k.lba, 1, NULL, c->bounce);
			if (!rc && (end & (bs - 1)) && (k.nlb > 1 || !k.skip))
				rc = io(m, ns, SMIO_NVME_READ, k.lba + k.nlb - 1, 1, NULL,
					c->bounce + ((uint64_t)(k.nlb - 1) << ns->shift));
			if (!rc) {
				memcpy(c->bounce + k.skip, src + done, (size_t)k.take);
				rc = io(m, ns, SMIO_NVME_WRITE, k.lba, k.nlb, c->bounce, NULL);
			}
		}
		if (rc)
			return done ? (ssize_t)done : rc;
		done += k.take;
	}
	return (ssize_t)done;
}

static bool partial(const struct mnt_ns *ns, uint64_t off, uint64_t n)
{
	uint64_t mask = (1ull << ns->shift) - 1;

	return (off & mask) || ((off + n) & mask);
}

ssize_t mio_write(struct mnt_ctx *m, struct mnt_ns *ns, const void *buf, size_t len,
		  uint64_t off)
{
	uint64_t n = clip(ns, len, off);
	bool rmw = partial(ns, off, n);
	ssize_t rc;

	if (!n)
		return len ? -ENOSPC : 0;
	if (rmw)
		pthread_rwlock_wrlock(&ns->lock);
	else
		pthread_rwlock_rdlock(&ns->lock);
	rc = write_locked(m, ns, buf, n, off);
	pthread_rwlock_unlock(&ns->lock);
	return rc;
}

int mio_zero(struct mnt_ctx *m, struct mnt_ns *ns, uint64_t off, uint64_t len)
{
	static const uint8_t zeroes[4096];
	uint64_t n = clip(ns, len, off), bs = 1ull << ns->shift, head, lba, end;
	ssize_t w = 0;
	int rc = 0;

	if (!n)
		return 0;
	pthread_rwlock_wrlock(&ns->lock);
	/* The partial block at the start, whole blocks, then the partial block at the end. */
	head = (bs - (off & (bs - 1))) & (bs - 1);
	if (head > n)
		head = n;
	if (head)
		w = write_locked(m, ns, zeroes, head, off);
	lba = (off + head) >> ns->shift;
	end = (off + n) >> ns->shift;
	while (w >= 0 && !rc && lba < end) {
		uint32_t nlb = end - lba < MIO_ZEROES_MAX ? (uint32_t)(end - lba) : MIO_ZEROES_MAX;

		rc = io(m, ns, SMIO_NVME_WRITE_ZEROES, lba, nlb, NULL, NULL);
		lba += nlb;
	}
	if (w >= 0 && !rc && off + head < off + n && ((off + n) & (bs - 1)))
		w = write_locked(m, ns, zeroes, (off + n) & (bs - 1), end << ns->shift);
	pthread_rwlock_unlock(&ns->lock);
	return w < 0 ? (int)w : rc;
}

int mio_flush(struct mnt_ctx *m, struct mnt_ns *ns)
{
	return io(m, ns, SMIO_NVME_FLUSH, 0, 0, NULL, NULL);
}

/* ---------- discovery ---------- */

/* An admin command reading len bytes; 0, 1 (NVMe status) or -errno. */
static int admin_in(struct mnt_ctx *m, uint16_t bdf, uint8_t opcode, uint32_t nsid,
		    uint32_t cdw10, void *data, uint32_t len)
{
	struct mio_conn *c = thr_get(m);
	struct smio_nvme_cpl *r;
	int rc;

	if (!c)
		return -ENOMEM;
	r = (void *)c->rep;
	rc = call(m, c, SMIO_NVME_ADMIN, nvme_msg_admin(c->req, bdf, opcode, nsid, cdw10, len));
	if (rc)
		return rc;
	if (r->status)
		return 1;
	memcpy(data, r->data, r->data_len < len ? r->data_len : len);
	return 0;
}

/* A small request/reply on the thread's connection. */
static int simple_call(struct mnt_ctx *m, uint16_t type, const void *req, uint32_t len,
		       void *rep, uint32_t cap)
{
	struct mio_conn *c = thr_get(m);
	int rc;

	if (!c)
		return -ENOMEM;
	if (len)
		memcpy(c->req, req, len);
	rc = call(m, c, type, len);
	if (!rc)
		memcpy(rep, c->rep, cap);
	return rc;
}

/* Add the active namespaces of the controller at bdf as nvme<k>n<nsid>. */
static int add_ctrl(struct mnt_ctx *m, uint16_t bdf, unsigned k, uint32_t *list,
		    struct nvme_id_ns *id)
{
	char b[16];
	int rc;

	snprintf(b, sizeof(b), "%02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
	rc = admin_in(m, bdf, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, list, 4096);
	if (rc) {
		cli_err("%s: active namespace list: %s", b, rc > 0 ? "NVMe error" : err_text(rc));
		return rc > 0 ? -EIO : rc;
	}
	for (unsigned i = 0; i < 1024 && list[i]; i++) {
		struct mnt_ns *ns, *grown;
		unsigned f;

		rc = admin_in(m, bdf, nvme_admin_identify, list[i], NVME_IDENTIFY_CNS_NS, id,
			      sizeof(*id));
		if (rc) {
			cli_err("%s: Identify Namespace %u: %s", b, list[i],
				rc > 0 ? "NVMe error" : err_text(rc));
			return rc > 0 ? -EIO : rc;
		}
		f = id->flbas & 0xf;
		if (!id->nsze || f > id->nlbaf || id->lbaf[f].ms || id->lbaf[f].ds < 9 ||
		    id->lbaf[f].ds > 12) {
			cli_err("%s: namespace %u: no usable LBA format (skipped)", b, list[i]);
			continue;
		}
		grown = realloc(m->ns, (m->nns + 1) * sizeof(*m->ns));
		if (!grown)
			return -ENOMEM;
		m->ns = grown;
		ns = &m->ns[m->nns];
		memset(ns, 0, sizeof(*ns));
		snprintf(ns->name, sizeof(ns->name), "nvme%un%u", k, list[i]);
		ns->bdf = bdf;
		ns->nsid = list[i];
		ns->shift = id->lbaf[f].ds;
		ns->nsze = id->nsze;
		ns->bytes = id->nsze << ns->shift;
		rc = pthread_rwlock_init(&ns->lock, NULL);
		if (rc)
			return -rc;
		m->nns++;
	}
	return 0;
}

/* The controllers named on the command line, in that order. */
static int discover_devs(struct mnt_ctx *m, const uint16_t *bdfs, unsigned ndev,
			 struct nvme_id_ctrl *idc, uint32_t *list, struct nvme_id_ns *idn)
{
	int rc = 0;

	for (unsigned i = 0; i < ndev && !rc; i++) {
		rc = admin_in(m, bdfs[i], nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, idc,
			      sizeof(*idc));
		if (rc) {
			cli_err("%02x:%02x.%x: %s", bdfs[i] >> 8, (bdfs[i] >> 3) & 0x1f, bdfs[i] & 7,
				rc > 0 ? "Identify Controller failed (NVMe error)" :
				rc == -ENODEV ? "no NVMe driver bound (no such function, or one "
						"registered for lending)" : err_text(rc));
			return rc > 0 ? -EIO : rc;
		}
		rc = add_ctrl(m, bdfs[i], i, list, idn);
	}
	return rc;
}

int mio_discover(struct mnt_ctx *m, const uint16_t *bdfs, unsigned ndev)
{
	struct smio_func_list *l = malloc(SMIO_MAX_PAYLOAD);
	struct nvme_id_ctrl *idc = malloc(sizeof(*idc));
	struct nvme_id_ns *idn = malloc(sizeof(*idn));
	uint32_t *list = malloc(4096);
	unsigned k = 0;
	int rc = -ENOMEM;

	if (!l || !idc || !idn || !list)
		goto out;
	if (ndev) {
		rc = discover_devs(m, bdfs, ndev, idc, list, idn);
		goto out;
	}
	rc = simple_call(m, SMIO_FUNC_LIST, NULL, 0, l, SMIO_MAX_PAYLOAD);
	if (rc) {
		cli_err("host %u: %s", m->host, cli_strerror(rc));
		goto out;
	}
	for (uint32_t i = 0; i < l->n && !rc; i++) {
		struct smio_cfg q = { .bdf = l->f[i].bdf, .off = 8, .size = 4 }, cr;

		if (simple_call(m, SMIO_CFG_READ, &q, sizeof(q), &cr, sizeof(cr)) ||
		    cr.value >> 8 != NVME_CLASS)
			continue;
		/* Controllers without the host's driver (e.g. lendable ones) are not ours. */
		if (admin_in(m, l->f[i].bdf, nvme_admin_identify, 0, NVME_IDENTIFY_CNS_CTRL, idc,
			     sizeof(*idc)))
			continue;
		rc = add_ctrl(m, l->f[i].bdf, k++, list, idn);
	}
out:
	free(l);
	free(idc);
	free(idn);
	free(list);
	return rc;
}
