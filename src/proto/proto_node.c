// SPDX-License-Identifier: MIT
/*
 * Codec checks of what a host's daemon tells libsisci about the cluster in
 * place of the topology file: its hosts (NODE_LIST), this host's adapters
 * (ADAPTER_INFO) and whether a node answers over one (PROBE_NODE).
 */
#include <errno.h>
#include <string.h>

#include "proto_priv.h"
#include "smartio/proto.h"

_Static_assert(sizeof(struct smio_node) == 40, "node layout");
_Static_assert(sizeof(struct smio_node_list) == 8, "node_list layout");
_Static_assert(sizeof(struct smio_adapter) == 16, "adapter layout");
_Static_assert(sizeof(struct smio_adapter_list) == 8, "adapter_list layout");
_Static_assert(sizeof(struct smio_probe_node) == 8, "probe_node layout");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_node_list) +
	       SMIO_MAX_NODES * sizeof(struct smio_node), "node list fits");
_Static_assert(SMIO_MAX_PAYLOAD >= sizeof(struct smio_adapter_list) +
	       SMIO_MAX_ADAPTERS * sizeof(struct smio_adapter), "adapter list fits");

/* SISCI node IDs are non-zero multiples of 4 below 65536 (docs/topology.md). */
static bool node_id_ok(uint32_t node_id)
{
	return node_id && node_id <= 65532 && !(node_id % 4);
}

int smio_check_node_list(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_node_list m;
	struct smio_node e;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_MAX_NODES || m.pad || len != sizeof(m) + (size_t)m.n * sizeof(e))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		memcpy(&e, b + sizeof(m) + (size_t)i * sizeof(e), sizeof(e));
		if (e.host > 65535 || !node_id_ok(e.node_id) || !str_ok(e.name, sizeof(e.name)))
			return -EINVAL;
	}
	return 0;
}

static bool width_ok(uint8_t w)
{
	return w && w <= 32 && !(w & (w - 1));
}

int smio_check_adapter_list(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	struct smio_adapter_list m;
	struct smio_adapter a;

	if (len < sizeof(m))
		return -EINVAL;
	memcpy(&m, p, sizeof(m));
	if (m.n > SMIO_MAX_ADAPTERS || m.pad || len != sizeof(m) + (size_t)m.n * sizeof(a))
		return -EINVAL;
	for (uint32_t i = 0; i < m.n; i++) {
		memcpy(&a, b + sizeof(m) + (size_t)i * sizeof(a), sizeof(a));
		/* In adapter order, so a's index is its SISCI adapter number. */
		if (a.ntb != i || !is_bool(a.link_up) || a.pad)
			return -EINVAL;
		if (a.peer_kind > SMIO_PEER_CSWITCH ||
		    (a.peer_kind == SMIO_PEER_NTB) != (a.peer_host != SMIO_HOST_NONE))
			return -EINVAL;
		if (a.link_gen < 1 || a.link_gen > 5 || !width_ok(a.link_width))
			return -EINVAL;
	}
	return 0;
}

int smio_check_probe_node(const void *p, uint32_t len)
{
	struct smio_probe_node m;

	memcpy(&m, p, sizeof(m));
	return node_id_ok(m.node_id) ? 0 : -EINVAL;
}
