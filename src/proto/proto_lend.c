// SPDX-License-Identifier: MIT
/* Codec checks of the Device Lending messages: every field a daemon acts on. */
#include <errno.h>
#include <string.h>

#include "proto_priv.h"
#include "smartio/proto.h"

_Static_assert(sizeof(struct smio_lend_entry) == 64, "lend_entry layout");
_Static_assert(sizeof(struct smio_lend_info) == 176, "lend_info layout");
_Static_assert(sizeof(struct smio_lend_grant) == 232, "lend_grant layout");
_Static_assert(sizeof(struct smio_peer_lend_cfg) == 16, "peer_lend_cfg layout");
_Static_assert(sizeof(struct smio_peer_lend_p2p) == 40, "peer_lend_p2p layout");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_lend_pool) +
	       SMIO_MAX_DEVS * sizeof(struct smio_lend_entry), "pool fits");

static int bars_ok(const uint64_t *addr, const uint64_t *size)
{
	for (unsigned i = 0; i < SMIO_DEV_BARS; i++) {
		if (size[i] & (size[i] - 1))
			return 0;                   /* BARs are powers of two */
		if (size[i] && addr[i] + size[i] < addr[i])
			return 0;
	}
	return 1;
}

int smio_check_lend_pool(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_lend_pool m;
	struct smio_lend_entry e;

	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_MAX_DEVS || m.pad || len != sizeof(m) + (size_t)m.n * sizeof(e))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		memcpy(&e, b + sizeof(m) + (size_t)i * sizeof(e), sizeof(e));
		if ((e.cswitch && e.state != SMIO_LEND_SHARED) || e.class > 0xffffff ||
		    e.state > SMIO_LEND_SHARED ||
		    SMIO_FDID_BDF(e.fdid) != e.bdf || !str_ok(e.name, sizeof(e.name)))
			return -EINVAL;
		if ((e.state == SMIO_LEND_LENT || e.state == SMIO_LEND_RESERVED ||
		     e.state == SMIO_LEND_SHARED) !=
		    (e.borrower != SMIO_LEND_NOBODY))
			return -EINVAL;
	}
	return 0;
}

int smio_check_lend_req(const void *p, uint32_t len)
{
	struct smio_lend_req m;

	memcpy(&m, p, sizeof(m));
	return m.flags & ~(SMIO_LEND_F_UNBIND | SMIO_LEND_F_FORCE) ? -EINVAL : 0;
}

int smio_check_lend_info(const void *p, uint32_t len)
{
	struct smio_lend_info m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || m.bound > 1 || !bars_ok(m.bar_addr, m.bar_size) ||
	    !str_ok(m.name, sizeof(m.name)) || !str_ok(m.driver, sizeof(m.driver)))
		return -EINVAL;
	return 0;
}

int smio_check_peer_lend_setup(const void *p, uint32_t len)
{
	struct smio_peer_lend_setup m;

	memcpy(&m, p, sizeof(m));
	if ((m.flags & ~SMIO_LEND_SETUP_VM) || m.pad2 || !m.dma_size || m.dma_target + m.dma_size < m.dma_target ||
	    m.dma_size > SMIO_MAX_LEN * 64)
		return -EINVAL;
	return 0;
}

int smio_check_lend_grant(const void *p, uint32_t len)
{
	struct smio_lend_grant m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || m.pad2 || m.class > 0xffffff || !bars_ok(m.bar_addr, m.bar_size) ||
	    !str_ok(m.name, sizeof(m.name)) || !str_ok(m.model, sizeof(m.model)) || !m.dma_size ||
	    m.dma_bus + m.dma_size < m.dma_bus || m.dma_target + m.dma_size < m.dma_target)
		return -EINVAL;
	return 0;
}

int smio_check_peer_lend_ref(const void *p, uint32_t len)
{
	struct smio_peer_lend_ref m;

	memcpy(&m, p, sizeof(m));
	return m.pad || m.pad2 ? -EINVAL : 0;
}

int smio_check_peer_lend_cfg(const void *p, uint32_t len)
{
	struct smio_peer_lend_cfg m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || m.write > 1 || (m.size != 1 && m.size != 2 && m.size != 4) ||
	    m.off >= SMIO_CFG_SPACE || m.off % m.size)
		return -EINVAL;
	if (m.size < 4 && m.value >> (8 * m.size))
		return -EINVAL;
	return 0;
}

int smio_check_peer_lend_p2p(const void *p, uint32_t len)
{
	struct smio_peer_lend_p2p m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || m.pad2 || m.addr + m.size < m.addr || m.size > SMIO_MAX_LEN)
		return -EINVAL;
	return 0;
}

int smio_check_lend_p2p(const void *p, uint32_t len)
{
	struct smio_lend_p2p m;

	memcpy(&m, p, sizeof(m));
	return m.bar >= SMIO_DEV_BARS ? -EINVAL : 0;
}

int smio_check_lend_hold(const void *p, uint32_t len)
{
	struct smio_lend_hold m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.pad || m.pad2 || !str_ok(m.what, sizeof(m.what)) ? -EINVAL : 0;
}

int smio_check_lend_holders(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_lend_holders m;
	struct smio_lend_holder h;

	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_HOLDERS_MAX || m.pad || len != sizeof(m) + (size_t)m.n * sizeof(h))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		memcpy(&h, b + sizeof(m) + i * sizeof(h), sizeof(h));
		if (h.pad || !str_ok(h.what, sizeof(h.what)))
			return -EINVAL;
	}
	return 0;
}

int smio_check_vm_mem(const void *p, uint32_t len)
{
	struct smio_vm_mem m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return !m.size || m.size % SMIO_VM_MEM_ALIGN || m.size > SMIO_VM_MEM_MAX ? -EINVAL : 0;
}

int smio_check_vm_mem_reply(const void *p, uint32_t len)
{
	struct smio_vm_mem_reply m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return !m.size || m.size % SMIO_VM_MEM_ALIGN || m.size > SMIO_VM_MEM_MAX ||
	       m.offset % SMIO_VM_MEM_ALIGN || m.phys % SMIO_VM_MEM_ALIGN ? -EINVAL : 0;
}

int smio_check_vm_attach(const void *p, uint32_t len)
{
	struct smio_vm_attach m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return !m.size || m.size % SMIO_VM_MEM_ALIGN || m.size > SMIO_VM_MEM_MAX ||
	       m.phys % SMIO_VM_MEM_ALIGN || ((uint64_t)m.low_mib << 20) >= m.size ||
	       ((uint64_t)m.low_mib << 20) > (4ull << 30) ||
	       ((uint64_t)m.low_mib << 20) % SMIO_VM_MEM_ALIGN ? -EINVAL : 0;
}

int smio_check_vm_attach_reply(const void *p, uint32_t len)
{
	struct smio_vm_attach_reply m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.pad || m.nvec > 2048 || smio_check_lend_info(&m.info, sizeof(m.info)) ?
	       -EINVAL : 0;
}

int smio_check_vm_irq(const void *p, uint32_t len)
{
	struct smio_vm_irq m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.vector >= 2048 ? -EINVAL : 0;
}

int smio_check_peer_vm_dma(const void *p, uint32_t len)
{
	struct smio_peer_vm_dma m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.pad || m.pad2 || !m.size || m.iova + m.size < m.iova ? -EINVAL : 0;
}

int smio_check_vm_bar(const void *p, uint32_t len)
{
	struct smio_vm_bar m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.bar >= SMIO_DEV_BARS ? -EINVAL : 0;
}

int smio_check_vm_bar_reply(const void *p, uint32_t len)
{
	struct smio_vm_bar_reply m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return !m.len || m.offset + m.len < m.offset ? -EINVAL : 0;
}

int smio_check_vm_stats(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_vm_stats m;
	struct smio_vm_stat e;

	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_VM_STATS_MAX || m.pad || len != sizeof(m) + (size_t)m.n * sizeof(e))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		memcpy(&e, b + sizeof(m) + i * sizeof(e), sizeof(e));
		if (e.nbars > SMIO_DEV_BARS || e.state > SMIO_VM_BORROWED)
			return -EINVAL;
	}
	return 0;
}

int smio_check_cz_share(const void *p, uint32_t len)
{
	struct smio_cz_share m;

	memcpy(&m, p, sizeof(m));
	return m.flags ? -EINVAL : 0;
}

int smio_check_cz_info(const void *p, uint32_t len)
{
	struct smio_cz_info m;

	memcpy(&m, p, sizeof(m));
	if (m.bound > 1 || m.present > 1 || !bars_ok(m.bar_addr, m.bar_size) ||
	    !str_ok(m.name, sizeof(m.name)) || !str_ok(m.driver, sizeof(m.driver)))
		return -EINVAL;
	return 0;
}

int smio_check_peer_cz_bind(const void *p, uint32_t len)
{
	struct smio_peer_cz_bind m;

	memcpy(&m, p, sizeof(m));
	if (!m.ubar_size || m.ubar + m.ubar_size < m.ubar)
		return -EINVAL;
	return 0;
}

int smio_check_cz_grant(const void *p, uint32_t len)
{
	struct smio_cz_grant m;

	memcpy(&m, p, sizeof(m));
	if (m.pad || m.pad2 || m.class > 0xffffff || !bars_ok(m.bar_addr, m.bar_size) ||
	    !str_ok(m.name, sizeof(m.name)) || !str_ok(m.model, sizeof(m.model)))
		return -EINVAL;
	return 0;
}

int smio_check_vm_cmd(const void *p, uint32_t len)
{
	struct smio_vm_cmd m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.flags & ~SMIO_VM_CMD_RESET ? -EINVAL : 0;
}

int smio_check_vm_cmd_reply(const void *p, uint32_t len)
{
	struct smio_vm_cmd_reply m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.state > SMIO_VM_BORROWED || m.nvec > 2048 ? -EINVAL : 0;
}

int smio_check_peer_vm_resv(const void *p, uint32_t len)
{
	struct smio_peer_vm_resv m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	return m.pad || m.flags & ~SMIO_VM_RESV_HOLD ? -EINVAL : 0;
}

int smio_check_peer_vm_resv_reply(const void *p, uint32_t len)
{
	struct smio_peer_vm_resv_reply m;

	(void)len;
	memcpy(&m, p, sizeof(m));
	for (unsigned i = 0; i < SMIO_DEV_BARS; i++)
		if (m.bar_size[i] & (m.bar_size[i] - 1))
			return -EINVAL;     /* a BAR is a power of two */
	return 0;
}
