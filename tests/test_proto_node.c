// SPDX-License-Identifier: MIT
/*
 * The codec checks of what a daemon tells libsisci about the cluster
 * (src/proto/proto_node.c): NODE_LIST, ADAPTER_INFO and PROBE_NODE.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "smartio/proto.h"

static int req(uint16_t type, const void *p, uint32_t len)
{
	return smio_payload_check(type, false, p, len);
}

static int rep(uint16_t type, const void *p, uint32_t len)
{
	return smio_payload_check(type, true, p, len);
}

static void test_rows(void **state)
{
	/* Numbers are the wire's: never to change. */
	assert_int_equal(SMIO_NODE_LIST, 4);
	assert_int_equal(SMIO_ADAPTER_INFO, 38);
	assert_int_equal(SMIO_PROBE_NODE, 39);
	assert_int_equal(smio_msg_family(SMIO_NODE_LIST), SMIO_FAM_CORE);
	assert_int_equal(smio_msg_family(SMIO_PROBE_NODE), SMIO_FAM_NTB);
	/* Processes of this host ask; peers have their own messages. */
	assert_int_equal(smio_msg_roles(SMIO_NODE_LIST), SMIO_R_LOCAL);
	assert_int_equal(smio_msg_roles(SMIO_ADAPTER_INFO), SMIO_R_LOCAL);
	assert_int_equal(smio_msg_roles(SMIO_PROBE_NODE), SMIO_R_LOCAL);
	assert_string_equal(smio_type_name(SMIO_ADAPTER_INFO), "ADAPTER_INFO");
}

static void test_node_list(void **state)
{
	uint8_t buf[sizeof(struct smio_node_list) + 2 * sizeof(struct smio_node)];
	struct smio_node_list *l = (void *)buf;

	memset(buf, 0, sizeof(buf));
	l->n = 2;
	for (uint32_t i = 0; i < 2; i++) {
		l->node[i].host = i;
		l->node[i].node_id = 4 * (i + 1);
		strcpy(l->node[i].name, "h");
	}
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), 0);
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf) - 1), -EINVAL);
	assert_int_equal(req(SMIO_NODE_LIST, buf, 8), -EINVAL);     /* the request is empty */
	l->node[1].node_id = 6;                                     /* not a multiple of 4 */
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), -EINVAL);
	l->node[1].node_id = 0;
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), -EINVAL);
	l->node[1].node_id = 65536;
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), -EINVAL);
	l->node[1].node_id = 8;
	l->node[1].host = 65536;                                    /* beyond SMARTIO_HOST */
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), -EINVAL);
	l->node[1].host = 1;
	memset(l->node[1].name, 'x', sizeof(l->node[1].name));      /* unterminated */
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), -EINVAL);
	strcpy(l->node[1].name, "h");
	l->pad = 1;
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), -EINVAL);
	l->pad = 0;
	l->n = SMIO_MAX_NODES + 1;
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(buf)), -EINVAL);
	l->n = 0;
	assert_int_equal(rep(SMIO_NODE_LIST, buf, sizeof(*l)), 0);
}

static void test_adapter_list(void **state)
{
	uint8_t buf[sizeof(struct smio_adapter_list) + 2 * sizeof(struct smio_adapter)];
	struct smio_adapter_list *l = (void *)buf;
	struct smio_adapter *a = l->a;

	memset(buf, 0, sizeof(buf));
	l->n = 2;
	a[0] = (struct smio_adapter){ .ntb = 0, .link_up = 1, .peer_kind = SMIO_PEER_NTB,
				      .peer_host = 2, .link_gen = 3, .link_width = 8 };
	a[1] = (struct smio_adapter){ .ntb = 1, .peer_kind = SMIO_PEER_NONE,
				      .peer_host = SMIO_HOST_NONE, .link_gen = 5,
				      .link_width = 32 };
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), 0);
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf) + 1), -EINVAL);
	a[1].ntb = 0;                     /* out of order: the index is the adapter number */
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[1].ntb = 1;
	a[1].link_up = 2;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[1].link_up = 0;
	a[1].peer_kind = 3;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[1].peer_kind = SMIO_PEER_CSWITCH;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), 0);
	a[1].peer_host = 1;               /* a switch has no single far host */
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[1].peer_host = SMIO_HOST_NONE;
	a[0].peer_host = SMIO_HOST_NONE;  /* back-to-back names its far host */
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[0].peer_host = 2;
	a[0].link_gen = 6;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[0].link_gen = 3;
	a[0].link_width = 12;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[0].link_width = 0;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[0].link_width = 8;
	a[0].pad = 1;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
	a[0].pad = 0;
	l->n = SMIO_MAX_ADAPTERS + 1;
	assert_int_equal(rep(SMIO_ADAPTER_INFO, buf, sizeof(buf)), -EINVAL);
}

static void test_probe_node(void **state)
{
	struct smio_probe_node m = { .adapter = 0, .node_id = 12 };

	assert_int_equal(req(SMIO_PROBE_NODE, &m, sizeof(m)), 0);
	assert_int_equal(req(SMIO_PROBE_NODE, &m, sizeof(m) - 1), -EINVAL);
	assert_int_equal(rep(SMIO_PROBE_NODE, &m, sizeof(m)), -EINVAL);   /* the reply is empty */
	assert_int_equal(rep(SMIO_PROBE_NODE, NULL, 0), 0);
	m.node_id = 13;
	assert_int_equal(req(SMIO_PROBE_NODE, &m, sizeof(m)), -EINVAL);
	/* Any adapter number: whether it exists is the daemon's to say (-ENODEV). */
	m.node_id = 12;
	m.adapter = 1000;
	assert_int_equal(req(SMIO_PROBE_NODE, &m, sizeof(m)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_node_list),
		cmocka_unit_test(test_adapter_list),
		cmocka_unit_test(test_probe_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
