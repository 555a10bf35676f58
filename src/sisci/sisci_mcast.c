// SPDX-License-Identifier: MIT
/*
 * libsisci: multicast ("broadcast") segments, as Dolphin's SISCI exposes the
 * cluster switches' multicast groups (docs/sisci.md, "Multicast"):
 *
 *  - a receiver creates a local segment with SCI_FLAG_BROADCAST; its segment
 *    id is the group, and SCIPrepareSegment on an adapter subscribes its
 *    memory to that group there (MC_JOIN); SCIRemoveSegment leaves;
 *  - a sender connects with SCI_FLAG_BROADCAST (node DIS_BROADCAST_NODEID_GROUP_ALL,
 *    segment id = group): its daemon opens a window onto the group
 *    (MC_CONNECT). What it writes — SCIMemCpy, stores through a map (pushed
 *    at SCIFlush / SCIStoreBarrier), SCIStartDmaTransfer — the switches copy
 *    into every subscriber's memory.
 *
 * Deviation: a CPU store cannot be replicated by the emulator's shared
 * memory, so a multicast map is a private buffer whose contents are written
 * to the group at the sequence's flush or barrier (and at once by SCIMemCpy).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sisci_seg.h"

/* What one MC_WRITE carries. */
#define MC_CHUNK (SMIO_MAX_PAYLOAD - sizeof(struct smio_mc_write))

static sci_error_t mc_errno(int rc)
{
	switch (rc) {
	case -EOPNOTSUPP: return SCI_ERR_NOT_SUPPORTED;   /* the switch has no groups */
	case -ERANGE: return SCI_ERR_OUT_OF_RANGE;        /* no such group */
	case -EBUSY: return SCI_ERR_SEGMENTID_USED;       /* a segment of this host is joined */
	case -EFBIG: return SCI_ERR_SIZE_ALIGNMENT;       /* larger than a group */
	default: return sisci_seg_errno(rc);
	}
}

sci_error_t sisci_mc_join(struct sci_local_segment *s, unsigned int adapter)
{
	struct smio_mc_join m = { .segid = s->id, .group = s->id, .adapter = adapter };
	int rc;

	if (adapter >= 64)
		return SCI_ERR_ILLEGAL_ADAPTERNO;
	if (s->mc_joined & (1ull << adapter))
		return SCI_ERR_OK;
	rc = sisci_call(s->sd, SMIO_MC_JOIN, &m, sizeof(m), NULL, 0, NULL, NULL);
	if (rc)
		return mc_errno(rc);
	s->mc_joined |= 1ull << adapter;
	return SCI_ERR_OK;
}

void sisci_mc_leave_all(struct sci_local_segment *s)
{
	for (unsigned int a = 0; a < 64 && s->mc_joined; a++) {
		struct smio_mc_join m = { .segid = s->id, .group = s->id, .adapter = a };

		if (!(s->mc_joined & (1ull << a)))
			continue;
		sisci_call(s->sd, SMIO_MC_LEAVE, &m, sizeof(m), NULL, 0, NULL, NULL);
		s->mc_joined &= ~(1ull << a);
	}
}

sci_error_t sisci_mc_connect(sci_desc_t sd, unsigned int group, unsigned int adapter,
			     struct sci_remote_segment **out)
{
	struct smio_mc_connect m = { .group = group, .adapter = adapter };
	struct smio_mc_conn c;
	struct sci_remote_segment *r;
	uint32_t rlen = 0;
	int rc;

	if (group >= 256)
		return SCI_ERR_OUT_OF_RANGE;
	r = calloc(1, sizeof(*r));
	if (!r)
		return SCI_ERR_NOSPC;
	rc = sisci_call(sd, SMIO_MC_CONNECT, &m, sizeof(m), &c, sizeof(c), &rlen, NULL);
	if (!rc && rlen != sizeof(c))
		rc = -EPROTO;
	if (rc) {
		free(r);
		return mc_errno(rc);
	}
	sisci_rseg_init(r);
	r->sd = sd;
	r->conn = c.conn;
	r->host = sisci.host;
	r->node_id = DIS_BROADCAST_NODEID_GROUP_ALL;
	r->segid = group;
	r->adapter = adapter;
	r->size = c.size;
	r->ioaddr = c.bus;
	r->mcast = true;
	*out = r;
	return SCI_ERR_OK;
}

int sisci_mc_disconnect(struct sci_remote_segment *r)
{
	struct smio_seg_conn_ref m = { .conn = r->conn };

	return sisci_call(r->sd, SMIO_MC_DISCONNECT, &m, sizeof(m), NULL, 0, NULL, NULL);
}

/* A multicast map: a private buffer (see the top of the file). */
sci_error_t sisci_mc_map(struct sci_map *m, void *addr)
{
	void *p = mmap(addr, m->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (addr ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED)
		return addr ? SCI_ERR_ILLEGAL_ADDRESS : SCI_ERR_NOSPC;
	m->base = p;
	m->maplen = m->size;
	m->addr = p;
	m->host = sisci.host;
	m->mcast = true;
	return SCI_ERR_OK;
}

/* Write [off, off + n) of the group (the map's offset added) from src. */
sci_error_t sisci_mc_write(struct sci_desc *sd, uint32_t conn, uint64_t off, const void *src,
			   size_t n)
{
	struct smio_mc_write *w = malloc(SMIO_MAX_PAYLOAD);
	struct smio_mc_written res;
	sci_error_t e = SCI_ERR_OK;

	if (!w)
		return SCI_ERR_NOSPC;
	for (size_t done = 0; !e && done < n;) {
		size_t k = n - done < MC_CHUNK ? n - done : MC_CHUNK;
		uint32_t rlen = 0;
		int rc;

		*w = (struct smio_mc_write){ .conn = conn, .offset = off + done, .len = k };
		memcpy(w + 1, (const uint8_t *)src + done, k);
		rc = sisci_call(sd, SMIO_MC_WRITE, w, (uint32_t)(sizeof(*w) + k), &res, sizeof(res),
				&rlen, NULL);
		if (!rc && rlen != sizeof(res))
			rc = -EPROTO;
		if (rc)
			e = mc_errno(rc);
		done += k;
	}
	free(w);
	return e;
}

/* SCIFlush / SCIStoreBarrier on a multicast map: its buffer goes to the group. */
sci_error_t sisci_mc_flush(struct sci_map *m)
{
	sci_desc_t sd;
	uint32_t conn;
	uint64_t off;
	const void *p;
	size_t n;

	sisci_lock();
	if (!sisci_obj_valid(m, SISCI_OBJ_MAP) || !m->mcast) {
		sisci_unlock();
		return SCI_ERR_ILLEGAL_PARAMETER;
	}
	sd = m->sd;
	conn = m->rseg->conn;
	off = m->offset;
	p = (const void *)m->addr;
	n = m->size;
	sisci_unlock();
	return sisci_mc_write(sd, conn, off, p, n);
}

/* SCIStartDmaTransfer to a multicast segment: the adapter's engine, done before return. */
sci_error_t sisci_mc_dma(struct sci_desc *sd, uint32_t conn, uint32_t segid,
			 const dis_dma_vec_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct smio_mc_write m = { .conn = conn, .segid = segid,
					   .offset = v[i].remote_offset, .len = v[i].size,
					   .seg_offset = v[i].local_offset };
		struct smio_mc_written res;
		uint32_t rlen = 0;
		int rc = sisci_call(sd, SMIO_MC_DMA, &m, sizeof(m), &res, sizeof(res), &rlen, NULL);

		if (!rc && rlen != sizeof(res))
			rc = -EPROTO;
		if (rc)
			return mc_errno(rc);
	}
	return SCI_ERR_OK;
}
