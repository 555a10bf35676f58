// SPDX-License-Identifier: MIT
/* The Device Lending messages' codec checks (src/proto/proto_lend.c). */
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

static void test_cfg(void **state)
{
	struct smio_peer_lend_cfg m = { .bdf = 0x0500, .size = 4, .off = 0x10 };

	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m)), 0);
	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m) - 1), -EINVAL);
	m.size = 3;
	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m)), -EINVAL);
	m.size = 2;
	m.off = 0x11;                    /* unaligned */
	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m)), -EINVAL);
	m.off = 4096;
	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m)), -EINVAL);
	m.off = 4;
	m.write = 2;
	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m)), -EINVAL);
	m.write = 1;
	m.value = 0x10000;               /* beyond a 2-byte access */
	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m)), -EINVAL);
	m.value = 0x406;
	assert_int_equal(req(SMIO_PEER_LEND_CFG, &m, sizeof(m)), 0);
	m.pad = 1;
	assert_int_equal(rep(SMIO_PEER_LEND_CFG, &m, sizeof(m)), -EINVAL);
}

static void test_setup_grant(void **state)
{
	struct smio_peer_lend_setup s = { .bdf = 0x0400, .dma_target = 1ull << 46,
					  .dma_size = 256 << 20 };
	struct smio_lend_grant g;

	assert_int_equal(req(SMIO_PEER_LEND_SETUP, &s, sizeof(s)), 0);
	s.flags = SMIO_LEND_SETUP_VM;    /* a VM's device */
	assert_int_equal(req(SMIO_PEER_LEND_SETUP, &s, sizeof(s)), 0);
	s.flags = 2;                     /* unknown */
	assert_int_equal(req(SMIO_PEER_LEND_SETUP, &s, sizeof(s)), -EINVAL);
	s.flags = 0;
	s.dma_size = 0;
	assert_int_equal(req(SMIO_PEER_LEND_SETUP, &s, sizeof(s)), -EINVAL);
	s.dma_size = 4096;
	s.dma_target = UINT64_MAX - 10;  /* wraps */
	assert_int_equal(req(SMIO_PEER_LEND_SETUP, &s, sizeof(s)), -EINVAL);
	memset(&g, 0, sizeof(g));
	g.dma_size = 4096;
	g.bar_size[0] = 0x4000;
	strcpy(g.name, "nvme0");
	strcpy(g.model, "nvme");
	assert_int_equal(rep(SMIO_PEER_LEND_SETUP, &g, sizeof(g)), 0);
	g.bar_size[0] = 0x3000;          /* not a power of two */
	assert_int_equal(rep(SMIO_PEER_LEND_SETUP, &g, sizeof(g)), -EINVAL);
	g.bar_size[0] = 0x4000;
	memset(g.name, 'x', sizeof(g.name));   /* unterminated */
	assert_int_equal(rep(SMIO_PEER_LEND_SETUP, &g, sizeof(g)), -EINVAL);
	strcpy(g.name, "nvme0");
	g.class = 0x1000000;
	assert_int_equal(rep(SMIO_PEER_LEND_SETUP, &g, sizeof(g)), -EINVAL);
}

/* VM_ATTACH: the RAM's low part (the rest at 4 GiB) is 2 MiB-aligned, < size, <= 4 GiB. */
static void test_vm_attach_low(void **state)
{
	struct smio_vm_attach a = { .fdid = 0x000c0200, .phys = 1ull << 30, .size = 512 << 20 };

	(void)state;
	assert_int_equal(req(SMIO_VM_ATTACH, &a, sizeof(a)), 0);          /* all low */
	a.low_mib = 256;
	assert_int_equal(req(SMIO_VM_ATTACH, &a, sizeof(a)), 0);
	a.low_mib = 257;                 /* not on 2 MiB */
	assert_int_equal(req(SMIO_VM_ATTACH, &a, sizeof(a)), -EINVAL);
	a.low_mib = 512;                 /* nothing left for 4 GiB */
	assert_int_equal(req(SMIO_VM_ATTACH, &a, sizeof(a)), -EINVAL);
	a.size = 8ull << 30;
	a.low_mib = 4098;                /* beyond 4 GiB */
	assert_int_equal(req(SMIO_VM_ATTACH, &a, sizeof(a)), -EINVAL);
}

static void test_pool_req_p2p(void **state)
{
	uint8_t buf[sizeof(struct smio_lend_pool) + 2 * sizeof(struct smio_lend_entry)];
	struct smio_lend_pool *p = (void *)buf;
	struct smio_lend_req r = { .fdid = 0x80400, .flags = SMIO_LEND_F_UNBIND };
	struct smio_lend_p2p q = { .client = 1, .provider = 2, .bar = 2 };
	struct smio_peer_lend_p2p pp = { .bdf = 1, .host = 2, .addr = 0x1000, .size = 0x1000 };

	memset(buf, 0, sizeof(buf));
	p->n = 2;
	for (int i = 0; i < 2; i++) {
		p->e[i].fdid = 0x80400 + (uint32_t)i;
		p->e[i].bdf = (uint16_t)(0x400 + i);
		p->e[i].borrower = SMIO_LEND_NOBODY;
		strcpy(p->e[i].name, "d");
	}
	assert_int_equal(rep(SMIO_LEND_POOL, buf, sizeof(buf)), 0);
	assert_int_equal(rep(SMIO_LEND_POOL, buf, sizeof(buf) - 1), -EINVAL);
	p->e[1].state = SMIO_LEND_LENT;  /* lent, but to nobody */
	assert_int_equal(rep(SMIO_PEER_LEND_POOL, buf, sizeof(buf)), -EINVAL);
	p->e[1].borrower = 0;
	assert_int_equal(rep(SMIO_PEER_LEND_POOL, buf, sizeof(buf)), 0);
	p->e[1].cswitch = 1;             /* a czodiac switch, but not shared */
	assert_int_equal(rep(SMIO_PEER_LEND_POOL, buf, sizeof(buf)), -EINVAL);
	p->e[1].state = SMIO_LEND_SHARED;  /* shared with host 0 through cswitch 1 */
	assert_int_equal(rep(SMIO_PEER_LEND_POOL, buf, sizeof(buf)), 0);
	p->e[1].borrower = SMIO_LEND_NOBODY;  /* shared, but with nobody */
	assert_int_equal(rep(SMIO_PEER_LEND_POOL, buf, sizeof(buf)), -EINVAL);
	p->e[1].borrower = 0;
	p->e[1].state = 7;
	assert_int_equal(rep(SMIO_PEER_LEND_POOL, buf, sizeof(buf)), -EINVAL);
	p->n = SMIO_MAX_DEVS + 1;
	assert_int_equal(rep(SMIO_LEND_POOL, buf, sizeof(buf)), -EINVAL);

	assert_int_equal(req(SMIO_LEND_RETURN, &r, sizeof(r)), 0);
	r.flags = SMIO_LEND_F_FORCE;
	assert_int_equal(req(SMIO_LEND_RETURN, &r, sizeof(r)), 0);
	r.flags = 4;
	assert_int_equal(req(SMIO_LEND_BORROW, &r, sizeof(r)), -EINVAL);
	assert_int_equal(req(SMIO_LEND_P2P, &q, sizeof(q)), 0);
	q.bar = 6;
	assert_int_equal(req(SMIO_LEND_P2P, &q, sizeof(q)), -EINVAL);
	assert_int_equal(req(SMIO_PEER_LEND_P2P, &pp, sizeof(pp)), 0);
	pp.addr = UINT64_MAX;            /* wraps */
	assert_int_equal(req(SMIO_PEER_LEND_P2P, &pp, sizeof(pp)), -EINVAL);
	/* No LEND type takes a request payload where none is defined. */
	assert_int_equal(req(SMIO_LEND_POOL, buf, 4), -EINVAL);
	assert_string_equal(smio_type_name(SMIO_PEER_LEND_SETUP), "PEER_LEND_SETUP");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfg),
		cmocka_unit_test(test_setup_grant),
		cmocka_unit_test(test_pool_req_p2p),
		cmocka_unit_test(test_vm_attach_low),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
