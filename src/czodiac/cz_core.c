// SPDX-License-Identifier: MIT
/*
 * libczodiac: the endpoint, its exposed region and the global address table
 * that DAP loads and stores go through (docs/czodiac.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cz_priv.h"

#define DEF_RING_ENTRIES 64u
#define DEF_TIMEOUT_MS   10000u
#define PAGE             4096u

int cz_err(sci_error_t e)
{
	switch (e) {
	case SCI_ERR_OK: return 0;
	case SCI_ERR_TIMEOUT: return -ETIMEDOUT;
	case SCI_ERR_NO_SUCH_SEGMENT: return -ENOENT;
	case SCI_ERR_SEGMENTID_USED: return -EEXIST;
	case SCI_ERR_OUT_OF_RANGE: return -ERANGE;
	case SCI_ERR_NOSPC: return -ENOSPC;
	case SCI_ERR_BUSY: return -EBUSY;
	case SCI_ERR_NODE_NOT_RESPONDING: return -EHOSTDOWN;
	case SCI_ERR_ILLEGAL_PARAMETER: return -EINVAL;
	default: return -EIO;
	}
}

static bool valid_config(const struct cz_config *c)
{
	unsigned int n = c->ring_entries;

	if (!c->job || c->job > 0xffff || !c->mem_size || c->mem_size % PAGE)
		return false;
	return n == 0 || (n >= 2 && n <= 1024 && !(n & (n - 1)));
}

/* Undo the first `stage` steps of cz_open, last first. */
static void open_undo(struct cz_ep *ep, int stage)
{
	sci_error_t e;

	if (stage >= 5)
		SCIRemoveDMAQueue(ep->dq, 0, &e);
	if (stage >= 4)
		SCIUnmapSegment(ep->mem_map, 0, &e);
	if (stage >= 3)
		SCIRemoveSegment(ep->mem_seg, 0, &e);
	if (stage >= 2)
		SCIClose(ep->sd, 0, &e);
	free(ep);
}

int cz_open(const struct cz_config *cfg, struct cz_ep **out)
{
	struct cz_ep *ep;
	sci_error_t e;
	int stage = 0;

	if (!cfg || !out || !valid_config(cfg))
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->cfg = *cfg;
	if (!ep->cfg.ring_entries)
		ep->cfg.ring_entries = DEF_RING_ENTRIES;
	if (!ep->cfg.timeout_ms)
		ep->cfg.timeout_ms = DEF_TIMEOUT_MS;
	/* Idempotent; the library is the program's: it calls SCITerminate at its end. */
	SCIInitialize(0, &e);
	if (e)
		goto fail;
	stage = 1;
	SCIOpen(&ep->sd, 0, &e);
	if (e)
		goto fail;
	stage = 2;
	SCIGetLocalNodeId(cfg->adapter, &ep->node, 0, &e);
	if (!e && ep->node > CZ_MAX_NODE)
		e = SCI_ERR_ILLEGAL_PARAMETER;
	if (!e)
		SCICreateSegment(ep->sd, &ep->mem_seg, cz_seg_id(ep, CZ_SUB_MEM), cfg->mem_size,
				 NULL, NULL, 0, &e);
	if (e)
		goto fail;
	stage = 3;
	SCIPrepareSegment(ep->mem_seg, cfg->adapter, 0, &e);
	if (!e)
		ep->mem = SCIMapLocalSegment(ep->mem_seg, &ep->mem_map, 0, cfg->mem_size, NULL, 0,
					     &e);
	if (e)
		goto fail;
	stage = 4;
	SCICreateDMAQueue(ep->sd, &ep->dq, cfg->adapter, 1, 0, &e);
	if (e)
		goto fail;
	stage = 5;
	SCISetSegmentAvailable(ep->mem_seg, cfg->adapter, 0, &e);
	if (e)
		goto fail;
	*out = ep;
	return 0;

fail:
	open_undo(ep, stage);
	return cz_err(e) ? cz_err(e) : -EIO;
}

void cz_close(struct cz_ep *ep)
{
	sci_error_t e;

	if (!ep)
		return;
	for (unsigned int n = 0; n <= CZ_MAX_NODE; n++)
		for (unsigned int q = 0; q < CZ_MAX_QPS; q++)
			cz_qp_close(ep->qps[n][q]);
	for (unsigned int n = 0; n <= CZ_MAX_NODE; n++) {
		struct cz_gat_entry *g = &ep->gat[n];

		if (!g->used || n == ep->node)
			continue;
		SCIUnmapSegment(g->map, 0, &e);
		SCIDisconnectSegment(g->seg, 0, &e);
	}
	SCISetSegmentUnavailable(ep->mem_seg, ep->cfg.adapter, 0, &e);
	SCIRemoveDMAQueue(ep->dq, 0, &e);
	SCIUnmapSegment(ep->mem_map, 0, &e);
	cz_remove_segment(ep->mem_seg);
	SCIClose(ep->sd, 0, &e);
	free(ep);
}

void cz_remove_segment(sci_local_segment_t seg)
{
	sci_error_t e;

	/* SCIRemoveSegment is BUSY while a peer is still connected: the peer
	 * disconnects on its own schedule (its cz_close), and SISCI has no event
	 * for "the last connection went", so retry, bounded (2 s). */
	for (int i = 0; i < 200; i++) {
		SCIRemoveSegment(seg, 0, &e);
		if (e != SCI_ERR_BUSY)
			return;
		nanosleep(&(struct timespec){ 0, 10 * 1000000 }, NULL);
	}
}

unsigned int cz_node(const struct cz_ep *ep)
{
	return ep->node;
}

void *cz_mem(struct cz_ep *ep, size_t *size)
{
	if (size)
		*size = ep->cfg.mem_size;
	return ep->mem;
}

void cz_stats(const struct cz_ep *ep, struct cz_stats *out)
{
	*out = ep->st;
}

/* ---------- the global address table ---------- */

int cz_gat_attach(struct cz_ep *ep, unsigned int node)
{
	struct cz_gat_entry *g;
	sci_error_t e;

	if (!ep || node > CZ_MAX_NODE)
		return -EINVAL;
	g = &ep->gat[node];
	if (g->used)
		return 0;
	if (node == ep->node) {
		g->base = ep->mem;
		g->size = ep->cfg.mem_size;
		g->used = true;
		return 0;
	}
	SCIConnectSegment(ep->sd, &g->seg, node, cz_seg_id(ep, CZ_SUB_MEM), ep->cfg.adapter, NULL,
			  NULL, ep->cfg.timeout_ms, 0, &e);
	if (e)
		return cz_err(e);
	g->size = SCIGetRemoteSegmentSize(g->seg);
	g->base = SCIMapRemoteSegment(g->seg, &g->map, 0, g->size, NULL, 0, &e);
	if (e) {
		int rc = cz_err(e);

		SCIDisconnectSegment(g->seg, 0, &e);
		return rc;
	}
	g->used = true;
	return 0;
}

struct cz_gat_entry *cz_gat(struct cz_ep *ep, unsigned int node)
{
	return node <= CZ_MAX_NODE && ep->gat[node].used ? &ep->gat[node] : NULL;
}

volatile void *cz_dap_ptr(struct cz_ep *ep, uint64_t gaddr, size_t len)
{
	uint64_t node = gaddr >> CZ_GADDR_SHIFT, off = gaddr & ((1ull << CZ_GADDR_SHIFT) - 1);
	struct cz_gat_entry *g;

	if (!ep || node > CZ_MAX_NODE)
		return NULL;
	g = cz_gat(ep, (unsigned int)node);
	if (!g || off > g->size || len > g->size - off)
		return NULL;
	return g->base + off;
}

static int dap_check(struct cz_ep *ep, uint64_t gaddr, size_t len)
{
	uint64_t node = gaddr >> CZ_GADDR_SHIFT;

	if (!ep || node > CZ_MAX_NODE)
		return -EINVAL;
	return cz_gat(ep, (unsigned int)node) ? -ERANGE : -ENOENT;
}

int cz_dap_store(struct cz_ep *ep, uint64_t gaddr, const void *src, size_t len)
{
	volatile uint8_t *d = cz_dap_ptr(ep, gaddr, len);
	const uint8_t *s = src;

	if (!d)
		return dap_check(ep, gaddr, len);
	/* Byte stores through a volatile pointer: the stores the CPU issues, in order. */
	for (size_t i = 0; i < len; i++)
		d[i] = s[i];
	SCIFlush(NULL, 0);
	ep->st.dap_stores++;
	return 0;
}

int cz_dap_load(struct cz_ep *ep, uint64_t gaddr, void *dst, size_t len)
{
	const volatile uint8_t *s = cz_dap_ptr(ep, gaddr, len);
	uint8_t *d = dst;

	if (!s)
		return dap_check(ep, gaddr, len);
	for (size_t i = 0; i < len; i++)
		d[i] = s[i];
	ep->st.dap_loads++;
	return 0;
}
