// SPDX-License-Identifier: MIT
/*
 * libsmartio-nvme-shim.so: an LD_PRELOAD library that lets unmodified NVMe
 * tools (nvme-cli) talk to a smartio host's NVMe controller as if it were
 * /dev/nvmeN. Opening /dev/smartio-nvme<K> (or /dev/smartio-nvme<K>n<N>, a
 * namespace) connects to the daemon of host $SMARTIO_HOST in
 * $SMARTIO_CLUSTER; that socket is the file descriptor the tool gets back.
 * fstat/stat on it report a character device (block device for n<N>), and
 * the NVMe ioctls are forwarded:
 *
 *   NVME_IOCTL_ADMIN_CMD, NVME_IOCTL_ADMIN64_CMD  -> SMIO_NVME_ADMIN
 *   NVME_IOCTL_IO_CMD, NVME_IOCTL_IO64_CMD        -> SMIO_NVME_IO (read, write,
 *   NVME_IOCTL_SUBMIT_IO                             flush, write zeroes)
 *   NVME_IOCTL_ID                                 -> N of n<N>, else ENOTTY
 *
 * <K> is the K-th NVMe function (class 010802) of the host in BDF order;
 * SMARTIO_NVME_DEV=BDF|NAME names the function instead. Everything else goes
 * to libc untouched. Like the kernel, an ioctl returns the NVMe status
 * (> 0) when the command completed with an error, and -1 with errno when
 * it could not be run.
 */
/*
 * Both the plain and the 64-bit stat/open entry points are interposed, so
 * neither may be renamed to the other by the headers.
 */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/nvme_ioctl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "smartio/proto.h"

#define SHIM_PREFIX      "/dev/smartio-nvme"
#define SHIM_MAX_FDS     64
#define SHIM_TIMEOUT_MS  35000
#define SHIM_MAJOR       250   /* what a dynamic nvme major typically is */
#define NVME_CLASS       0x010802u

struct shim_fd {
	int fd;                  /* the daemon socket handed to the tool; -1: free */
	uint16_t bdf;
	uint32_t nsid;           /* n<N> path: a namespace (block) node */
	unsigned index;          /* K */
};

static struct shim_fd fds[SHIM_MAX_FDS] = { [0 ... SHIM_MAX_FDS - 1] = { .fd = -1 } };
static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------- the real functions ---------- */

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* glibc's internal, non-declared entry points. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);

/* ---------- our device nodes ---------- */

/* /dev/smartio-nvme<K>[n<N>]: 1 and K (and N, 0 if none), else 0. */
static int parse_path(const char *path, unsigned *k, uint32_t *nsid)
{
	const char *p;
	char *end;
	unsigned long v, n = 0;

	if (!path || strncmp(path, SHIM_PREFIX, strlen(SHIM_PREFIX)))
		return 0;
	p = path + strlen(SHIM_PREFIX);
	if (*p < '0' || *p > '9')
		return 0;
	v = strtoul(p, &end, 10);
	if (*end == 'n') {
		p = end + 1;
		if (*p < '1' || *p > '9')
			return 0;
		n = strtoul(p, &end, 10);
	}
	if (*end || v > 255 || n > 0xfffffffeul)
		return 0;
	*k = (unsigned)v;
	*nsid = (uint32_t)n;
	return 1;
}

static struct shim_fd *lookup(int fd)
{
	struct shim_fd *s = NULL;

	if (fd < 0)
		return NULL;
	pthread_mutex_lock(&fds_lock);
	for (unsigned i = 0; i < SHIM_MAX_FDS; i++)
		if (fds[i].fd == fd)
			s = &fds[i];
	pthread_mutex_unlock(&fds_lock);
	return s;
}

static void fake_stat(struct stat *st, unsigned k, uint32_t nsid)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = (nsid ? S_IFBLK : S_IFCHR) | 0600;
	st->st_rdev = makedev(SHIM_MAJOR, k * 16 + nsid);
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_uid = getuid();
	st->st_gid = getgid();
}

static void fake_stat64(struct stat64 *st, unsigned k, uint32_t nsid)
{
	struct stat s;

	fake_stat(&s, k, nsid);
	memset(st, 0, sizeof(*st));
	st->st_mode = s.st_mode;
	st->st_rdev = s.st_rdev;
	st->st_nlink = s.st_nlink;
	st->st_blksize = s.st_blksize;
	st->st_uid = s.st_uid;
	st->st_gid = s.st_gid;
}

static int call(int fd, uint16_t type, const void *req, uint32_t len, void *rep)
{
	uint32_t rlen;

	return smio_call(fd, type, req, len, rep, SMIO_MAX_PAYLOAD, &rlen, NULL, SHIM_TIMEOUT_MS);
}

static int parse_bdf(const char *s, uint16_t *bdf)
{
	unsigned b, d, f;
	char c;

	if (sscanf(s, "%x:%x.%x%c", &b, &d, &f, &c) != 3 || b > 255 || d > 31 || f > 7)
		return -EINVAL;
	*bdf = (uint16_t)(b << 8 | d << 3 | f);
	return 0;
}

/* The function SMARTIO_NVME_DEV names, or the host's K-th NVMe function. */
static int find_dev(int sock, unsigned k, uint16_t *bdf)
{
	const char *want = getenv("SMARTIO_NVME_DEV");
	struct smio_func_list *l;
	unsigned seen = 0;
	int rc;

	if (want && !parse_bdf(want, bdf))
		return 0;
	l = malloc(SMIO_MAX_PAYLOAD);
	if (!l)
		return -ENOMEM;
	rc = call(sock, SMIO_FUNC_LIST, NULL, 0, l);
	if (rc)
		goto out;
	rc = -ENODEV;
	for (uint32_t i = 0; i < l->n && rc; i++) {
		struct smio_cfg q = { .bdf = l->f[i].bdf, .off = 8, .size = 4 }, r;
		uint32_t rlen;

		if (want) {
			if (!strcmp(l->f[i].name, want)) {
				*bdf = l->f[i].bdf;
				rc = 0;
			}
			continue;
		}
		if (smio_call(sock, SMIO_CFG_READ, &q, sizeof(q), &r, sizeof(r), &rlen, NULL,
			      SHIM_TIMEOUT_MS) || (r.value >> 8) != NVME_CLASS)
			continue;
		if (seen++ == k) {
			*bdf = l->f[i].bdf;
			rc = 0;
		}
	}
out:
	free(l);
	return rc;
}

/* Open our node: a HELLO'd connection to the host's daemon. */
static int shim_open(unsigned k, uint32_t nsid)
{
	char dir[PATH_MAX];
	struct smio_hello hello = { .role = SMIO_ROLE_CLIENT, .pid = (uint32_t)getpid(),
				    .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	uint32_t host, rlen;
	uint16_t bdf = 0;
	int sock, rc;

	if (smio_cluster_dir(dir, sizeof(dir)) || smio_env_host(&host)) {
		/* No cluster or host: the node does not exist, as with no driver. */
		errno = ENOENT;
		return -1;
	}
	sock = smio_connect(dir, host, 0);
	if (sock < 0) {
		errno = ENXIO;
		return -1;
	}
	hello.host = host;
	rc = smio_call(sock, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen, NULL,
		       SHIM_TIMEOUT_MS);
	if (!rc)
		rc = find_dev(sock, k, &bdf);
	if (rc) {
		close(sock);
		errno = rc == -ENODEV ? ENOENT : -rc;
		return -1;
	}
	pthread_mutex_lock(&fds_lock);
	rc = -EMFILE;
	for (unsigned i = 0; i < SHIM_MAX_FDS; i++) {
		if (fds[i].fd < 0) {
			fds[i] = (struct shim_fd){ .fd = sock, .bdf = bdf, .nsid = nsid, .index = k };
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&fds_lock);
	if (rc) {
		close(sock);
		errno = EMFILE;
		return -1;
	}
	return sock;
}

/* ---------- ioctls ---------- */

static int admin_cmd(struct shim_fd *s, struct nvme_passthru_cmd64 *c, uint64_t *result)
{
	uint8_t *req = malloc(SMIO_MAX_PAYLOAD), *rep = malloc(SMIO_MAX_PAYLOAD);
	struct smio_nvme_admin *m = (void *)req;
	struct smio_nvme_cpl *r = (void *)rep;
	unsigned dir = c->opcode & 3;   /* bit 0: host to controller, bit 1: back */
	int rc;

	if (!req || !rep) {
		rc = -ENOMEM;
		goto out;
	}
	if (dir == 3 || c->data_len > SMIO_NVME_MAX_DATA || (c->data_len && !c->addr) ||
	    c->metadata_len) {
		rc = -EINVAL;
		goto out;
	}
	memset(m, 0, sizeof(*m));
	m->bdf = s->bdf;
	m->dir = !c->data_len ? SMIO_DIR_NONE : dir == 1 ? SMIO_DIR_TO_DEV : SMIO_DIR_FROM_DEV;
	m->data_len = c->data_len;
	m->timeout_ms = c->timeout_ms;
	/* The SQE as the controller reads it; pointers are the driver's business. */
	m->sqe[0] = c->opcode;
	m->sqe[1] = c->flags;
	memcpy(m->sqe + 4, &c->nsid, 4);
	memcpy(m->sqe + 8, &c->cdw2, 4);
	memcpy(m->sqe + 12, &c->cdw3, 4);
	memcpy(m->sqe + 40, &c->cdw10, 24);
	if (m->dir == SMIO_DIR_TO_DEV)
		memcpy(m->data, (const void *)(uintptr_t)c->addr, c->data_len);
	rc = call(s->fd, SMIO_NVME_ADMIN, m,
		  (uint32_t)sizeof(*m) + (m->dir == SMIO_DIR_TO_DEV ? c->data_len : 0), r);
	if (rc)
		goto out;
	if (m->dir == SMIO_DIR_FROM_DEV)
		memcpy((void *)(uintptr_t)c->addr, r->data,
		       r->data_len < c->data_len ? r->data_len : c->data_len);
	*result = r->result;
	rc = r->status;
out:
	free(req);
	free(rep);
	return rc;
}

static int io_cmd(struct shim_fd *s, struct nvme_passthru_cmd64 *c, uint64_t *result)
{
	uint8_t *req = malloc(SMIO_MAX_PAYLOAD), *rep = malloc(SMIO_MAX_PAYLOAD);
	struct smio_nvme_io *m = (void *)req;
	struct smio_nvme_cpl *r = (void *)rep;
	int rc = 0;

	if (!req || !rep) {
		rc = -ENOMEM;
		goto out;
	}
	memset(m, 0, sizeof(*m));
	m->bdf = s->bdf;
	m->nsid = c->nsid;
	m->slba = (uint64_t)c->cdw11 << 32 | c->cdw10;
	m->nlb = (c->cdw12 & 0xffff) + 1;
	switch (c->opcode) {
	case 0x00: m->op = SMIO_NVME_FLUSH; m->nlb = 0; m->slba = 0; break;
	case 0x01: m->op = SMIO_NVME_WRITE; break;
	case 0x02: m->op = SMIO_NVME_READ; break;
	case 0x08: m->op = SMIO_NVME_WRITE_ZEROES; break;
	default: rc = -EINVAL; break;
	}
	if (rc || c->data_len > SMIO_NVME_MAX_DATA || c->metadata_len ||
	    ((m->op == SMIO_NVME_READ || m->op == SMIO_NVME_WRITE) && !c->addr)) {
		rc = -EINVAL;
		goto out;
	}
	if (m->op == SMIO_NVME_WRITE) {
		m->data_len = c->data_len;
		memcpy(m->data, (const void *)(uintptr_t)c->addr, c->data_len);
	}
	rc = call(s->fd, SMIO_NVME_IO, m, (uint32_t)sizeof(*m) + m->data_len, r);
	if (rc)
		goto out;
	if (m->op == SMIO_NVME_READ && !r->status)
		memcpy((void *)(uintptr_t)c->addr, r->data,
		       r->data_len < c->data_len ? r->data_len : c->data_len);
	*result = r->result;
	rc = r->status;
out:
	free(req);
	free(rep);
	return rc;
}

static int shim_ioctl(struct shim_fd *s, unsigned long req, void *arg)
{
	struct nvme_passthru_cmd64 c;
	uint64_t result = 0;
	int rc;

	switch (req) {
	case NVME_IOCTL_ID:
		if (!s->nsid) {
			errno = ENOTTY;   /* as the kernel's controller node */
			return -1;
		}
		return (int)s->nsid;
	case NVME_IOCTL_ADMIN_CMD:
	case NVME_IOCTL_IO_CMD: {
		struct nvme_passthru_cmd *p = arg;

		/* The 32-bit form is the 64-bit one with a short result. */
		memset(&c, 0, sizeof(c));
		memcpy(&c, p, offsetof(struct nvme_passthru_cmd, result));
		rc = req == NVME_IOCTL_ADMIN_CMD ? admin_cmd(s, &c, &result) : io_cmd(s, &c, &result);
		if (rc >= 0)
			p->result = (uint32_t)result;
		break;
	}
	case NVME_IOCTL_ADMIN64_CMD:
	case NVME_IOCTL_IO64_CMD: {
		struct nvme_passthru_cmd64 *p = arg;

		c = *p;
		rc = req == NVME_IOCTL_ADMIN64_CMD ? admin_cmd(s, &c, &result)
						   : io_cmd(s, &c, &result);
		if (rc >= 0)
			p->result = result;
		break;
	}
	case NVME_IOCTL_SUBMIT_IO: {
		struct nvme_user_io *u = arg;
		uint32_t nsid = s->nsid ? s->nsid : 1;

		memset(&c, 0, sizeof(c));
		c.opcode = u->opcode;
		c.nsid = nsid;
		c.addr = u->addr;
		c.cdw10 = (uint32_t)u->slba;
		c.cdw11 = (uint32_t)(u->slba >> 32);
		c.cdw12 = u->nblocks;
		/* The block size is the daemon's to check: it refuses a mismatch. */
		c.data_len = SMIO_NVME_MAX_DATA;
		rc = -EINVAL;
		if (u->opcode == 0x01 || u->opcode == 0x02) {
			/* Without the block size here, ask the namespace once. */
			struct nvme_passthru_cmd64 id = { .opcode = 0x06, .nsid = nsid,
							  .data_len = 4096 };
			uint8_t *buf = malloc(4096);
			uint64_t r2;

			if (buf) {
				id.addr = (uintptr_t)buf;
				if (!admin_cmd(s, &id, &r2)) {
					unsigned f = buf[26] & 0xf, ds = buf[128 + 4 * f + 2];

					c.data_len = ((uint32_t)u->nblocks + 1) << ds;
					rc = io_cmd(s, &c, &result);
				}
				free(buf);
			} else {
				rc = -ENOMEM;
			}
		}
		break;
	}
	default:
		errno = ENOTTY;
		return -1;
	}
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return rc;
}

/* ---------- interposed libc entry points ---------- */

int open(const char *path, int flags, ...);
int open64(const char *path, int flags, ...);
int openat(int dirfd, const char *path, int flags, ...);
int openat64(int dirfd, const char *path, int flags, ...);

#define OPEN_BODY(realcall)                                 \
	unsigned k;                                         \
	uint32_t nsid;                                      \
	mode_t mode = 0;                                    \
	if (flags & (O_CREAT | __O_TMPFILE)) {              \
		va_list ap;                                 \
		va_start(ap, flags);                        \
		mode = va_arg(ap, mode_t);                  \
		va_end(ap);                                 \
	}                                                   \
	if (parse_path(path, &k, &nsid))                    \
		return shim_open(k, nsid);                  \
	return realcall

int open(const char *path, int flags, ...)
{
	REAL(open);
	OPEN_BODY(real_open(path, flags, mode));
}

int open64(const char *path, int flags, ...)
{
	REAL(open64);
	OPEN_BODY(real_open64(path, flags, mode));
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(openat);
	OPEN_BODY(real_openat(dirfd, path, flags, mode));
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(openat64);
	OPEN_BODY(real_openat64(dirfd, path, flags, mode));
}

/* _FORTIFY_SOURCE's checked variants (nvme-cli is built with them). */
int __open_2(const char *path, int flags)
{
	unsigned k;
	uint32_t nsid;
	REAL(__open_2);

	return parse_path(path, &k, &nsid) ? shim_open(k, nsid) : real___open_2(path, flags);
}

int __open64_2(const char *path, int flags)
{
	unsigned k;
	uint32_t nsid;
	REAL(__open64_2);

	return parse_path(path, &k, &nsid) ? shim_open(k, nsid) : real___open64_2(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	unsigned k;
	uint32_t nsid;
	REAL(__openat_2);

	return parse_path(path, &k, &nsid) ? shim_open(k, nsid)
					   : real___openat_2(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	unsigned k;
	uint32_t nsid;
	REAL(__openat64_2);

	return parse_path(path, &k, &nsid) ? shim_open(k, nsid)
					   : real___openat64_2(dirfd, path, flags);
}

int close(int fd)
{
	struct shim_fd *s = lookup(fd);
	REAL(close);

	if (s) {
		pthread_mutex_lock(&fds_lock);
		s->fd = -1;
		pthread_mutex_unlock(&fds_lock);
	}
	return real_close(fd);
}

int ioctl(int fd, unsigned long req, ...)
{
	struct shim_fd *s = lookup(fd);
	va_list ap;
	void *arg;
	REAL(ioctl);

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (s)
		return shim_ioctl(s, req, arg);
	return real_ioctl(fd, req, arg);
}

int fstat(int fd, struct stat *st)
{
	struct shim_fd *s = lookup(fd);
	REAL(fstat);

	if (!s)
		return real_fstat(fd, st);
	fake_stat(st, s->index, s->nsid);
	return 0;
}

int fstat64(int fd, struct stat64 *st)
{
	struct shim_fd *s = lookup(fd);
	REAL(fstat64);

	if (!s)
		return real_fstat64(fd, st);
	fake_stat64(st, s->index, s->nsid);
	return 0;
}

int __fxstat(int ver, int fd, struct stat *st)
{
	struct shim_fd *s = lookup(fd);
	REAL(__fxstat);

	if (!s)
		return real___fxstat(ver, fd, st);
	fake_stat(st, s->index, s->nsid);
	return 0;
}

int __fxstat64(int ver, int fd, struct stat64 *st)
{
	struct shim_fd *s = lookup(fd);
	REAL(__fxstat64);

	if (!s)
		return real___fxstat64(ver, fd, st);
	fake_stat64(st, s->index, s->nsid);
	return 0;
}

#define STAT_PATH(fn, type, faker, ...)                       \
	int fn(const char *path, type *st)                    \
	{                                                     \
		unsigned k;                                   \
		uint32_t nsid;                                \
		REAL(fn);                                     \
		if (!parse_path(path, &k, &nsid))             \
			return real_##fn(path, st);           \
		faker(st, k, nsid);                           \
		return 0;                                     \
	}

STAT_PATH(stat, struct stat, fake_stat)
STAT_PATH(stat64, struct stat64, fake_stat64)
STAT_PATH(lstat, struct stat, fake_stat)
STAT_PATH(lstat64, struct stat64, fake_stat64)

int __xstat(int ver, const char *path, struct stat *st)
{
	unsigned k;
	uint32_t nsid;
	REAL(__xstat);

	if (!parse_path(path, &k, &nsid))
		return real___xstat(ver, path, st);
	fake_stat(st, k, nsid);
	return 0;
}

int __xstat64(int ver, const char *path, struct stat64 *st)
{
	unsigned k;
	uint32_t nsid;
	REAL(__xstat64);

	if (!parse_path(path, &k, &nsid))
		return real___xstat64(ver, path, st);
	fake_stat64(st, k, nsid);
	return 0;
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	struct shim_fd *s = (flags & AT_EMPTY_PATH) && !*path ? lookup(dirfd) : NULL;
	unsigned k;
	uint32_t nsid;
	REAL(fstatat);

	if (s) {
		fake_stat(st, s->index, s->nsid);
		return 0;
	}
	if (parse_path(path, &k, &nsid)) {
		fake_stat(st, k, nsid);
		return 0;
	}
	return real_fstatat(dirfd, path, st, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	struct shim_fd *s = (flags & AT_EMPTY_PATH) && !*path ? lookup(dirfd) : NULL;
	unsigned k;
	uint32_t nsid;
	REAL(fstatat64);

	if (s) {
		fake_stat64(st, s->index, s->nsid);
		return 0;
	}
	if (parse_path(path, &k, &nsid)) {
		fake_stat64(st, k, nsid);
		return 0;
	}
	return real_fstatat64(dirfd, path, st, flags);
}

int access(const char *path, int mode)
{
	unsigned k;
	uint32_t nsid;
	REAL(access);

	if (parse_path(path, &k, &nsid))
		return 0;
	return real_access(path, mode);
}
