// SPDX-License-Identifier: MIT
/* Moving bytes along resolved routes, with PCIe's failure semantics. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ntb.h"
#include "mcast.h"
#include "route.h"

/*
 * The bytes of a DMA land in memory that another thread (a CPU polling a
 * completion entry, say) may be reading at that moment. PCIe delivers a
 * posted write's data in address order, and completion protocols publish
 * through their last word (an NVMe CQE's phase tag, a descriptor's status):
 * so the bulk is copied plainly and the final word is a release store, which
 * makes everything before it visible to whoever acquires that word.
 */
/* Word by word, each a release store: for small writes, which are how
 * devices publish (counters, completion entries, status words). */
static void store_words(uint8_t *dst, const uint8_t *src, uint64_t n)
{
	while (n && ((uintptr_t)dst & 7)) {
		__atomic_store_n(dst++, *src++, __ATOMIC_RELEASE);
		n--;
	}
	for (; n >= 8; n -= 8, dst += 8, src += 8) {
		uint64_t w;

		memcpy(&w, src, 8);
		__atomic_store_n((uint64_t *)dst, w, __ATOMIC_RELEASE);
	}
	while (n--)
		__atomic_store_n(dst++, *src++, __ATOMIC_RELEASE);
}

void fab_copy_to_mem(void *dstv, const void *srcv, uint64_t n)
{
	uint8_t *dst = dstv;
	const uint8_t *src = srcv;

	if (n <= 64) {
		store_words(dst, src, n);
		return;
	}
	/* Bulk data: plain copy, then the last cache line published in order. */
	memcpy(dst, src, n - 64);
	store_words(dst + n - 64, src + n - 64, 64);
}

/* Reads see everything published before the doorbell or status they follow. */
void fab_copy_from_mem(void *dst, const void *src, uint64_t n)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(dst, src, n);
}

void *fab_target_map(struct fab_host *h, const struct fab_target *t, uint64_t *size)
{
	struct fab_world *w = h->world;

	if (t->host == h->id) {
		if (t->mem >= h->nmems)
			return NULL;
		*size = h->mems[t->mem].size;
		return fab_mem_map(h, t->mem);
	}
	if (!w || !w->ops || !w->ops->mem_map)
		return NULL;
	return w->ops->mem_map(w, t->host, t->mem, size);
}

static int deliver_msi(struct fab_host *h, const struct fab_target *t, const void *buf,
		       uint64_t len)
{
	struct fab_world *w = h->world;
	uint32_t data;

	/* A message is one naturally aligned dword write. */
	if (len != 4 || (t->addr & 3))
		return FAB_UR;
	memcpy(&data, buf, 4);
	if (t->host == h->id)
		return fab_intc_deliver(&h->intc, t->addr, data) ? FAB_UR : 0;
	if (!w || !w->ops || !w->ops->msi)
		return -EREMOTE;
	return w->ops->msi(w, t->host, t->addr, data);
}

/*
 * A request lost to a down link is counted at the adapter that dropped it,
 * for smartio diag: the walk's last hop is that adapter when it is this
 * host's (one on another host counts nothing here).
 */
static void count_link_drop(struct fab_host *h, const struct fab_route *r)
{
	const struct fab_hop *last;

	if (!r->nhops)
		return;
	last = &r->hops[r->nhops - 1];
	if (last->kind != FAB_HOP_NTB || last->host != h->id)
		return;
	for (uint32_t i = 0; i < h->nntbs; i++)
		if (fab_func_bdf(h->ntbs[i]->fn) == last->bdf)
			__atomic_fetch_add(&h->ntbs[i]->link_drops, 1, __ATOMIC_RELAXED);
}

int fab_access(struct fab_host *h, uint16_t rid, uint64_t addr, void *buf, uint64_t len,
	       bool write)
{
	struct fab_route r;
	uint8_t *p = buf;
	int first = 0;

	while (len) {
		uint64_t n, size = 0;
		uint8_t *m;
		int rc;

		rc = fab_route_resolve(h, rid, addr, len, write, &r);
		if (rc)
			return rc;
		if (r.status == FAB_OK && r.tgt.kind == FAB_TGT_MSI)
			return deliver_msi(h, &r.tgt, buf, len);
		if (r.status == FAB_OK && r.tgt.kind == FAB_TGT_MCAST) {
			/* Posted, replicated by the switches (mcast.c). */
			n = r.tgt.len < len ? r.tgt.len : len;
			rc = fab_mc_write(h, r.tgt.mem, r.tgt.addr, p, n, NULL);
			if (rc < 0)
				return rc;
			if (rc && !first)
				first = rc;
			p += n;
			addr += n;
			len -= n;
			continue;
		}
		if (r.status != FAB_OK) {
			/* Nothing decodes: this request (to the next page) is lost. */
			n = FAB_PAGE_SIZE - (addr & (FAB_PAGE_SIZE - 1));
			n = n < len ? n : len;
			if (!write)
				memset(p, 0xff, n);
			if (!first)
				first = r.status;
			if (r.status == FAB_LINK_DOWN)
				count_link_drop(h, &r);
		} else {
			n = r.tgt.len < len ? r.tgt.len : len;
			m = fab_target_map(h, &r.tgt, &size);
			if (!m)
				return -EREMOTE;
			if (r.tgt.offset > size || n > size - r.tgt.offset)
				return -EFAULT;
			if (rid != FAB_RID_CPU && r.tgt.kind == FAB_TGT_RAM)
				__atomic_fetch_add(&h->dma_ram_bytes, n, __ATOMIC_RELAXED);
			/* The data path: a copy to or from shared memory, nothing more. */
			if (write)
				fab_copy_to_mem(m + r.tgt.offset, p, n);
			else
				fab_copy_from_mem(p, m + r.tgt.offset, n);
		}
		p += n;
		addr += n;
		len -= n;
	}
	return first;
}

int fab_access_map(struct fab_host *h, uint16_t rid, uint64_t addr, uint64_t len, bool write,
		   uint8_t **ptr, uint64_t *n, uint8_t *kind)
{
	struct fab_route r;
	uint64_t size = 0;
	uint8_t *m;
	int rc;

	if (!len)
		return -EINVAL;
	rc = fab_route_resolve(h, rid, addr, len, write, &r);
	if (rc)
		return rc;
	if (r.status != FAB_OK)
		return r.status;
	if (r.tgt.kind != FAB_TGT_RAM && r.tgt.kind != FAB_TGT_BAR)
		return -ENOTSUP;
	m = fab_target_map(h, &r.tgt, &size);
	if (!m)
		return -EREMOTE;
	if (r.tgt.offset > size || r.tgt.len > size - r.tgt.offset)
		return -EFAULT;
	*ptr = m + r.tgt.offset;
	*n = r.tgt.len < len ? r.tgt.len : len;
	if (kind)
		*kind = r.tgt.kind;
	return 0;
}
