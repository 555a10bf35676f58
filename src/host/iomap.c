// SPDX-License-Identifier: MIT
/*
 * A device's own CPU mappings of its BARs (pci_iomap), and how they fail as
 * PCIe does.
 *
 * A BAR's memory object is mapped once per process (fab_target_map), and that
 * mapping is shared by everyone: device threads, DMA, other drivers. A
 * driver's iomap is therefore a mapping of its own of the same pages, made
 * by mremap() with old_size 0 (a shareable mapping duplicated: same pages,
 * a separate VMA), so that it can be replaced in place without touching
 * anybody else's view:
 *
 *  - fenced (the channel is frozen or failed): the range is replaced
 *    (MAP_FIXED) by a MAP_PRIVATE mapping of a process-wide memfd full of
 *    0xff bytes: loads read all-ones, stores land in private copies and never
 *    reach the device;
 *  - restored (the channel is back): a duplicate of a second, hidden mapping
 *    of the device's pages (kept from the start, so that the object's shared
 *    mapping may go away meanwhile) is moved back over the same range.
 *
 * A concurrent load or store either sees the old mapping or the new one
 * (the kernel swaps VMAs under its mmap lock). The residual difference from
 * hardware: a store to a fenced page is read back by a later load of the
 * same page until the channel returns (a private copy), where a real
 * device would keep answering all-ones.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "pci_priv.h"
#include "util/allones.h"

#ifdef PCI_IO_TSAN
#include <sanitizer/tsan_interface.h>

/* Live iomaps, so that an access through one can be named by its shared address. */
#define IOMAP_TSAN_MAX 1024
static struct { const uint8_t *pub, *src; size_t len; } tsan_maps[IOMAP_TSAN_MAX];
static pthread_mutex_t tsan_mu = PTHREAD_MUTEX_INITIALIZER;

static void tsan_track(const struct pci_iomap *m, bool add)
{
	pthread_mutex_lock(&tsan_mu);
	for (unsigned i = 0; i < IOMAP_TSAN_MAX; i++) {
		if (add && !tsan_maps[i].pub) {
			tsan_maps[i].pub = m->pub;
			tsan_maps[i].src = m->src;
			tsan_maps[i].len = m->len;
			break;
		}
		if (!add && tsan_maps[i].pub == m->pub) {
			tsan_maps[i].pub = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&tsan_mu);
}

static const void *tsan_name(const volatile void *addr)
{
	const uint8_t *a = (const uint8_t *)addr, *r = a;

	pthread_mutex_lock(&tsan_mu);
	for (unsigned i = 0; i < IOMAP_TSAN_MAX; i++)
		if (tsan_maps[i].pub && a >= tsan_maps[i].pub &&
		    a < tsan_maps[i].pub + tsan_maps[i].len) {
			r = tsan_maps[i].src + (a - tsan_maps[i].pub);
			break;
		}
	pthread_mutex_unlock(&tsan_mu);
	return r;
}

void pci_io_release(const volatile void *addr)
{
	__tsan_release((void *)tsan_name(addr));
}

void pci_io_acquire(const volatile void *addr)
{
	__tsan_acquire((void *)tsan_name(addr));
}
#else
static void tsan_track(const struct pci_iomap *m, bool add)
{
	(void)m;
	(void)add;
}
#endif

/*
 * Opened with the first PCI core of the process, so that a daemon's
 * descriptors do not change when a link first goes down (its content grows
 * with the largest BAR fenced).
 */
void pci_iomap_init(void)
{
	(void)smio_allones_fd(0);
}

/* ---------- one iomap ---------- */

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

int pci_iomap_make(struct pci_iomap *m, uint8_t *src, uint64_t size, bool fenced)
{
	size_t pg = page_size();
	uintptr_t a = (uintptr_t)src, start = a & ~(uintptr_t)(pg - 1);
	void *keep, *pub;

	memset(m, 0, sizeof(*m));
	m->pgoff = a - start;
	m->len = (m->pgoff + size + pg - 1) & ~(pg - 1);
	keep = mremap((void *)start, 0, m->len, MREMAP_MAYMOVE);
	if (keep == MAP_FAILED)
		return -errno;
	pub = mremap(keep, 0, m->len, MREMAP_MAYMOVE);
	if (pub == MAP_FAILED) {
		int rc = -errno;

		munmap(keep, m->len);
		return rc;
	}
	m->keep = keep;
	m->pub = pub;
	m->src = (const uint8_t *)start;
	tsan_track(m, true);
	if (fenced)
		pci_iomap_fence(m, true);
	return 0;
}

void pci_iomap_fence(struct pci_iomap *m, bool down)
{
	void *p;
	int fd;

	if (!m->pub || m->fenced == down)
		return;
	if (down) {
		fd = smio_allones_fd(m->len);
		p = fd < 0 ? MAP_FAILED
			   : mmap(m->pub, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
				  fd, 0);
		if (p == MAP_FAILED) {
			/* No all-ones object: private memory filled with them (costs len). */
			p = mmap(m->pub, m->len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (p != MAP_FAILED)
				memset(p, 0xff, m->len);
		}
	} else {
		p = mremap(m->keep, 0, m->len, MREMAP_MAYMOVE | MREMAP_FIXED, m->pub);
	}
	if (p != MAP_FAILED)
		m->fenced = down;
}

void pci_iomap_free(struct pci_iomap *m)
{
	if (m->pub) {
		tsan_track(m, false);
		munmap(m->pub, m->len);
	}
	if (m->keep)
		munmap(m->keep, m->len);
	memset(m, 0, sizeof(*m));
}
