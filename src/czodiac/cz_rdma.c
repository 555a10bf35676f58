// SPDX-License-Identifier: MIT
/*
 * libczodiac: RDMA PUT and GET (docs/czodiac.md).
 *
 * PUT (fig. 4(c)): the sender asks with a NAP (RTS: tag, length), the
 * receiver answers with the destination (CTS), the sender's DMA engine
 * writes its region into the receiver's and a last NAP (FIN) says so. The
 * destination is the receiver's registered region: "pinned" for as long as
 * the endpoint lives.
 *
 * GET (fig. 4(d)): the requester sends the GET descriptor as a NAP (source
 * in the peer's region, destination in its own, length); the peer turns it
 * into a PUT of its own, no handshake needed, and answers GETDONE. Every
 * transfer on the fabric is therefore a posted write.
 */
#include <errno.h>

#include "cz_priv.h"

static bool in_region(const struct cz_ep *ep, size_t off, size_t len)
{
	return off <= ep->cfg.mem_size && len <= ep->cfg.mem_size - off;
}

static bool in_peer(struct cz_qp *qp, size_t off, size_t len)
{
	struct cz_gat_entry *g = cz_gat(qp->ep, qp->peer);

	return g && off <= g->size && len <= g->size - off;
}

int cz_dma_put(struct cz_qp *qp, size_t off, size_t len, size_t roff)
{
	struct cz_ep *ep = qp->ep;
	struct cz_gat_entry *g = cz_gat(ep, qp->peer);
	sci_error_t e;

	if (!g || !in_region(ep, off, len) || !in_peer(qp, roff, len))
		return -ERANGE;
	if (!len)
		return 0;
	SCIStartDmaTransfer(ep->dq, ep->mem_seg, g->seg, off, len, roff, NULL, NULL,
			    SCI_FLAG_DMA_WAIT, &e);
	return cz_err(e);
}

int cz_put(struct cz_qp *qp, size_t src_off, size_t len, uint32_t tag)
{
	struct cz_msg m;
	int rc;

	if (!qp)
		return -EINVAL;
	if (!in_region(qp->ep, src_off, len))
		return -ERANGE;
	rc = cz_send_msg(qp, CZ_K_RTS, tag, len, 0, 0, NULL, 0);
	if (!rc)
		rc = cz_wait_msg(qp, CZ_K_CTS, tag, false, &m, NULL, 0, qp->ep->cfg.timeout_ms);
	if (rc)
		return rc;
	if (m.a != len)
		return -ECONNREFUSED;
	rc = cz_dma_put(qp, src_off, len, m.b);
	if (rc)
		return rc;
	rc = cz_send_msg(qp, CZ_K_FIN, tag, len, m.b, 0, NULL, 0);
	if (!rc)
		qp->ep->st.puts++;
	return rc;
}

long cz_put_accept(struct cz_qp *qp, size_t dst_off, size_t cap, uint32_t tag,
		   unsigned int timeout_ms)
{
	struct cz_msg m;
	bool fits;
	int rc;

	if (!qp)
		return -EINVAL;
	if (!in_region(qp->ep, dst_off, cap))
		return -ERANGE;
	rc = cz_wait_msg(qp, CZ_K_RTS, tag, false, &m, NULL, 0, timeout_ms);
	if (rc)
		return rc;
	fits = m.a <= cap;
	rc = cz_send_msg(qp, CZ_K_CTS, tag, fits ? m.a : 0, dst_off, 0, NULL, 0);
	if (rc)
		return rc;
	if (!fits)
		return -EMSGSIZE;
	rc = cz_wait_msg(qp, CZ_K_FIN, tag, false, &m, NULL, 0, qp->ep->cfg.timeout_ms);
	if (rc)
		return rc;
	qp->ep->st.puts_accepted++;
	return (long)m.a;
}

void cz_serve_get(struct cz_qp *qp, const struct cz_msg *m)
{
	int rc = cz_dma_put(qp, m->a, m->c, m->b);

	/* An answer that cannot be sent leaves the requester to time out. */
	(void)cz_send_msg(qp, CZ_K_GETDONE, m->tag, (uint64_t)(int64_t)rc, 0, 0, NULL, 0);
	if (!rc)
		qp->ep->st.gets_served++;
}

int cz_get(struct cz_qp *qp, size_t dst_off, size_t src_off, size_t len)
{
	struct cz_msg m;
	uint32_t tag;
	int rc;

	if (!qp)
		return -EINVAL;
	if (!in_region(qp->ep, dst_off, len) || !in_peer(qp, src_off, len))
		return -ERANGE;
	tag = qp->next_tag++;
	rc = cz_send_msg(qp, CZ_K_GET, tag, src_off, dst_off, len, NULL, 0);
	if (!rc)
		rc = cz_wait_msg(qp, CZ_K_GETDONE, tag, false, &m, NULL, 0,
				 qp->ep->cfg.timeout_ms);
	if (rc)
		return rc;
	if (m.a)
		return (int)(int64_t)m.a;
	qp->ep->st.gets++;
	return 0;
}
