// SPDX-License-Identifier: MIT
/*
 * Namespaces: their backing store (a sparse memfd, or a sparse file
 * PREFIX.nsN), identifiers derived deterministically from the device name,
 * and the Identify Namespace data.
 *
 * SR-IOV: a PF with TotalVFs T splits each namespace's media into T + 1
 * equal slices (page multiples): the PF's namespace is slice 0, VF n's is
 * slice n. The media are the PF's: a file is shared by its path, a memfd
 * through the registry below (PF and VFs are separate instances in one
 * process, found by their common topology device).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctrl.h"

#define IO_CHUNK        (1u << 20)      /* pread/pwrite/zero-fill at most this per call */
#define MAP_MAX         (256ull << 30)  /* namespaces up to this size are mapped */
#define WPAGE_SHIFT     12              /* granule of the written-page bitmap */

static const uint8_t zeroes[NVME_MAX_XFER];

/* Memfd media shared by a PF and its VFs, by (topology device, NSID). */
struct media {
	const void *key;
	uint32_t nsid;
	int fd;
	unsigned refs;
	struct media *next;
};

static pthread_mutex_t media_lock = PTHREAD_MUTEX_INITIALIZER;
static struct media *media_list;

/* A descriptor of the media (created at size on first use), or -errno. */
static int media_get(const void *key, uint32_t nsid, const char *name, uint64_t size)
{
	struct media *m;
	int fd = -ENOMEM;

	pthread_mutex_lock(&media_lock);
	for (m = media_list; m && (m->key != key || m->nsid != nsid); m = m->next)
		;
	if (!m && (m = calloc(1, sizeof(*m)))) {
		char nm[96];

		snprintf(nm, sizeof(nm), "smartio-nvme-%s-ns%u", name, nsid);
		m->fd = memfd_create(nm, MFD_CLOEXEC);
		if (m->fd < 0 || ftruncate(m->fd, (off_t)size) < 0) {
			fd = -errno;
			if (m->fd >= 0)
				close(m->fd);
			free(m);
			m = NULL;
		} else {
			m->key = key;
			m->nsid = nsid;
			m->next = media_list;
			media_list = m;
		}
	}
	if (m) {
		fd = dup(m->fd);
		if (fd < 0)
			fd = -errno;
		else
			m->refs++;
	}
	pthread_mutex_unlock(&media_lock);
	return fd;
}

static void media_put(const void *key, uint32_t nsid)
{
	struct media **pp, *m;

	pthread_mutex_lock(&media_lock);
	for (pp = &media_list; (m = *pp) && (m->key != key || m->nsid != nsid); pp = &m->next)
		;
	if (m && !--m->refs) {
		*pp = m->next;
		close(m->fd);
		free(m);
	}
	pthread_mutex_unlock(&media_lock);
}

/* Map a memfd namespace for reads; without the mapping, pread serves them. */
static void ns_map(struct nvme_ns *ns)
{
	uint64_t pages = (ns->bytes + (1u << WPAGE_SHIFT) - 1) >> WPAGE_SHIFT;
	void *m;

	if (ns->bytes > MAP_MAX)
		return;
	ns->written = calloc((pages + 63) / 64, sizeof(uint64_t));
	if (!ns->written)
		return;
	m = mmap(NULL, ns->bytes, PROT_READ, MAP_SHARED | MAP_NORESERVE, ns->fd,
		 (off_t)ns->base);
	if (m == MAP_FAILED) {
		free(ns->written);
		ns->written = NULL;
		return;
	}
	ns->map = m;
}

/* Mark [off, off+len) written (any page it touches), or clear the pages it covers wholly. */
static void ns_mark(struct nvme_ns *ns, uint64_t off, uint64_t len, bool written)
{
	uint64_t first, end;

	if (!ns->written || !len)
		return;
	if (written) {
		first = off >> WPAGE_SHIFT;
		end = (off + len - 1) >> WPAGE_SHIFT;
		end++;
	} else {
		first = (off + (1u << WPAGE_SHIFT) - 1) >> WPAGE_SHIFT;
		end = (off + len) >> WPAGE_SHIFT;
	}
	for (uint64_t p = first; p < end; p++) {
		if (written)
			ns->written[p / 64] |= 1ull << (p % 64);
		else
			ns->written[p / 64] &= ~(1ull << (p % 64));
	}
}

const void *nvme_ns_peek(const struct nvme_ns *ns, uint64_t off, size_t len)
{
	uint64_t first = off >> WPAGE_SHIFT, last = (off + len - 1) >> WPAGE_SHIFT, set = 0;

	if (!ns->map || !len || len > sizeof(zeroes) || off > ns->bytes || len > ns->bytes - off)
		return NULL;
	for (uint64_t p = first; p <= last; p++)
		set += (ns->written[p / 64] >> (p % 64)) & 1;
	if (set == last - first + 1)
		return ns->map + off;
	return set ? NULL : zeroes;
}

/* FNV-1a: stable identifiers from the device name and NSID. */
static uint64_t fnv1a(const char *s, uint32_t salt)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	for (int i = 0; i < 4; i++)
		h = (h ^ ((salt >> (8 * i)) & 0xff)) * 0x100000001b3ull;
	return h;
}

static void ns_ids(struct nvme_ns *ns, const char *name)
{
	uint64_t a = fnv1a(name, ns->nsid), b = fnv1a(name, ns->nsid | 0x80000000u);

	/* EUI-64 under the Intel OUI 5C:D2:E4, then the name hash */
	ns->eui64[0] = 0x5c;
	ns->eui64[1] = 0xd2;
	ns->eui64[2] = 0xe4;
	for (int i = 0; i < 5; i++)
		ns->eui64[3 + i] = (uint8_t)(a >> (8 * i));
	memcpy(ns->nguid, &a, 8);
	memcpy(ns->nguid + 8, &b, 8);
	memcpy(ns->uuid, &b, 8);
	memcpy(ns->uuid + 8, &a, 8);
	ns->uuid[6] = (uint8_t)((ns->uuid[6] & 0x0f) | 0x50);   /* RFC 4122 version 5 (name) */
	ns->uuid[8] = (uint8_t)((ns->uuid[8] & 0x3f) | 0x80);   /* variant */
}

int nvme_ns_init(struct nvme_ctrl *c, char *err, size_t errlen)
{
	struct dev_instance *d = c->d;
	const char *name = d->fn.td ? d->fn.td->name : "nvme";
	const char *backing = dev_param(d, "backing");
	bool memory = !backing || !strcmp(backing, "memory");
	uint64_t n, size, lba, slice, align;
	char idname[TOPO_NAME_MAX + 8];
	int rc;

	if ((rc = dev_param_u64(d, "namespaces", 1, &n, err, errlen)))
		return rc;
	if ((rc = dev_param_u64(d, "ns_size", 1ull << 30, &size, err, errlen)))
		return rc;
	if ((rc = dev_param_u64(d, "lba", 512, &lba, err, errlen)))
		return rc;
	if (n < 1 || n > NVME_MAX_NS) {
		snprintf(err, errlen, "device %s: namespaces must be 1..%u", name, NVME_MAX_NS);
		return -EINVAL;
	}
	if (lba != 512 && lba != 4096) {
		snprintf(err, errlen, "device %s: lba must be 512 or 4096", name);
		return -EINVAL;
	}
	if (size < lba || size % lba || size > (1ull << 50)) {
		snprintf(err, errlen, "device %s: ns_size must be a multiple of the LBA size "
			 "(%llu) up to 1P", name, (unsigned long long)lba);
		return -EINVAL;
	}
	/* SR-IOV: this function's slice of each namespace's media (page multiples). */
	slice = size;
	if (d->fn.total_vfs) {
		align = lba > 4096 ? lba : 4096;
		slice = size / (d->fn.total_vfs + 1u) / align * align;
		if (!slice) {
			snprintf(err, errlen, "device %s: ns_size %llu is too small to give each of "
				 "the PF and its %u VFs a slice of %llu bytes", name,
				 (unsigned long long)size, d->fn.total_vfs,
				 (unsigned long long)align);
			return -EINVAL;
		}
	}
	snprintf(idname, sizeof(idname), "%s%s%.0u", name, d->fn.vf_index ? "-vf" : "",
		 d->fn.vf_index);
	c->ns = calloc(n, sizeof(*c->ns));
	if (!c->ns)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		c->ns[i].fd = -1;
	c->nns = (uint32_t)n;
	for (uint32_t i = 0; i < n; i++) {
		struct nvme_ns *ns = &c->ns[i];
		char path[4096];

		ns->nsid = i + 1;
		ns->lba_shift = lba == 512 ? 9 : 12;
		ns->nsze = slice / lba;
		ns->base = slice * d->fn.vf_index;
		ns_ids(ns, idname);
		if (memory && d->fn.total_vfs) {
			snprintf(path, sizeof(path), "(memory shared with the VFs)");
			ns->fd = media_get(d->fn.td, ns->nsid, name, size);
			if (ns->fd < 0) {
				errno = -ns->fd;
				ns->fd = -1;
			} else {
				ns->shared_media = true;
			}
		} else if (memory) {
			snprintf(path, sizeof(path), "smartio-nvme-%s-ns%u", name, ns->nsid);
			ns->fd = memfd_create(path, MFD_CLOEXEC);
		} else {
			/* A disk keeps its data: an existing file is reused, sized below. */
			snprintf(path, sizeof(path), "%s.ns%u", backing, ns->nsid);
			ns->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		}
		if (ns->fd < 0 || ftruncate(ns->fd, (off_t)size) < 0) {
			rc = -errno;
			snprintf(err, errlen, "device %s: namespace %u backing %s: %s", name,
				 ns->nsid, path, strerror(errno));
			return rc;
		}
		ns->bytes = slice;
		if (memory)
			ns_map(ns);
	}
	return 0;
}

void nvme_ns_fini(struct nvme_ctrl *c)
{
	for (uint32_t i = 0; c->ns && i < c->nns; i++) {
		if (c->ns[i].map)
			munmap((void *)c->ns[i].map, c->ns[i].bytes);
		free(c->ns[i].written);
		if (c->ns[i].fd >= 0)
			close(c->ns[i].fd);
		if (c->ns[i].shared_media)
			media_put(c->d->fn.td, c->ns[i].nsid);
	}
	free(c->ns);
	c->ns = NULL;
}

struct nvme_ns *nvme_ns_get(struct nvme_ctrl *c, uint32_t nsid)
{
	return nsid >= 1 && nsid <= c->nns ? &c->ns[nsid - 1] : NULL;
}

void nvme_ns_identify(struct nvme_ctrl *c, const struct nvme_ns *ns, struct nvme_id_ns *id)
{
	uint64_t bytes = ns->nsze << ns->lba_shift;

	memset(id, 0, sizeof(*id));
	id->nsze = ns->nsze;
	id->ncap = ns->nsze;
	id->nuse = ns->nsze;
	id->nsfeat = 0;
	id->nlbaf = 0;                  /* one format (0-based) */
	id->flbas = 0;
	/* DLFEAT: deallocated blocks read as zeroes; Write Zeroes may deallocate */
	id->dlfeat = 0x01 | 0x08;
	memcpy(id->nvmcap, &bytes, sizeof(bytes));
	memcpy(id->nguid, ns->nguid, sizeof(id->nguid));
	memcpy(id->eui64, ns->eui64, sizeof(id->eui64));
	id->lbaf[0].ms = 0;
	id->lbaf[0].ds = (uint8_t)ns->lba_shift;
	id->lbaf[0].rp = 0;             /* best performance */
	(void)c;
}

int nvme_ns_read(struct nvme_ns *ns, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		size_t n = len < IO_CHUNK ? len : IO_CHUNK;
		ssize_t r = pread(ns->fd, p, n, (off_t)(ns->base + off));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) {
			memset(p, 0, len);      /* beyond EOF reads as zero */
			return 0;
		}
		p += r;
		off += (uint64_t)r;
		len -= (size_t)r;
	}
	return 0;
}

int nvme_ns_write(struct nvme_ns *ns, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		size_t n = len < IO_CHUNK ? len : IO_CHUNK;
		ssize_t r = pwrite(ns->fd, p, n, (off_t)(ns->base + off));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		ns_mark(ns, off, (uint64_t)r, true);
		p += r;
		off += (uint64_t)r;
		len -= (size_t)r;
	}
	return 0;
}

/* Zero a range by punching a hole (sparse again); write zeroes where unsupported. */
int nvme_ns_zero(struct nvme_ns *ns, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	if (!fallocate(ns->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)(ns->base + off), (off_t)len)) {
		ns_mark(ns, off, len, false);
		return 0;
	}
	while (len) {
		size_t n = len < sizeof(zeroes) ? (size_t)len : sizeof(zeroes);
		int rc = nvme_ns_write(ns, zeroes, n, off);

		if (rc)
			return rc;
		off += n;
		len -= n;
	}
	return 0;
}

int nvme_ns_flush(struct nvme_ns *ns)
{
	return fdatasync(ns->fd) < 0 && errno != EINVAL ? -errno : 0;
}
