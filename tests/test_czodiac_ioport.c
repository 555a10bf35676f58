// SPDX-License-Identifier: MIT
/*
 * cZodiac's IOPort remapping tables (src/fabric/czodiac_ioport.c): the
 * paper's fig. 6 scenario, an SR-IOV device owned by the OWNER (OIDs from
 * 0x0300, OBARs in its space) whose VFs two USERs see at their own RIDs and
 * addresses; requests and completions remapped both ways.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fabric/czodiac_ioport.h"

#define OID0 0x0300
#define USER_A 1
#define USER_B 2

static struct cz_iop t;

static void setup_tables(void)
{
	cz_iop_init(&t, OID0);
	/* VF1 -> user A as 02:00.0, VF2 -> user B as 02:00.0 too (different spaces). */
	assert_int_equal(cz_iop_bind(&t, OID0 + 1, 0x0200, USER_A), 0);
	assert_int_equal(cz_iop_bind(&t, OID0 + 2, 0x0200, USER_B), 0);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 1, 0, 0xf0104000, 0xa0000000, 0x4000), 0);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 2, 0, 0xf0108000, 0xa0000000, 0x4000), 0);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 1, 2, 0xf8000000, 0xb0000000, 0x100000), 0);
}

/* USER -> device: RID and MMIO address both translated (fig. 6, blue lines). */
static void test_user_to_device(void **state)
{
	uint16_t oid;
	uint64_t a;

	(void)state;
	setup_tables();
	assert_int_equal(cz_iop_user_request(&t, USER_A, 0x0200, 0xa0000010, &oid, &a), 0);
	assert_int_equal(oid, OID0 + 1);
	assert_int_equal(a, 0xf0104010);
	/* The same UID and address of user B reach VF2. */
	assert_int_equal(cz_iop_user_request(&t, USER_B, 0x0200, 0xa0003ffc, &oid, &a), 0);
	assert_int_equal(oid, OID0 + 2);
	assert_int_equal(a, 0xf010bffc);
	assert_int_equal(cz_iop_user_request(&t, USER_A, 0x0200, 0xb00ffff0, &oid, &a), 0);
	assert_int_equal(a, 0xf80ffff0);
	/* Outside every UBAR, an unknown UID, another USER's function: no match. */
	assert_int_equal(cz_iop_user_request(&t, USER_A, 0x0200, 0xa0004000, &oid, &a), -ENOENT);
	assert_int_equal(cz_iop_user_request(&t, USER_A, 0x0201, 0xa0000000, &oid, &a), -ENOENT);
	assert_int_equal(cz_iop_user_request(&t, 3, 0x0200, 0xa0000000, &oid, &a), -ENOENT);
	/* A completion the USER returns to the device (its DMA read). */
	assert_int_equal(cz_iop_user_completion(&t, USER_B, 0x0200, &oid), 0);
	assert_int_equal(oid, OID0 + 2);
}

/* Device -> USER: only the RID (fig. 6, green lines), and which USER. */
static void test_device_to_user(void **state)
{
	uint16_t uid, user;

	(void)state;
	setup_tables();
	assert_int_equal(cz_iop_device_to_user(&t, OID0 + 2, &uid, &user), 0);
	assert_int_equal(uid, 0x0200);
	assert_int_equal(user, USER_B);
	/* The PF stays with the OWNER: no USER entry. */
	assert_int_equal(cz_iop_device_to_user(&t, OID0, &uid, &user), -ENOENT);
	assert_int_equal(cz_iop_device_to_user(&t, OID0 + CZ_IOP_FUNCS, &uid, &user), -ENOENT);
}

static void test_bind_rules(void **state)
{
	uint16_t uid, user;

	(void)state;
	setup_tables();
	assert_int_equal(cz_iop_bind(&t, OID0 + 1, 0x0300, USER_A), -EEXIST);
	assert_int_equal(cz_iop_bind(&t, OID0 + 3, 0x0200, USER_A), -EEXIST);
	assert_int_equal(cz_iop_bind(&t, OID0 - 1, 0x0300, USER_A), -ERANGE);
	assert_int_equal(cz_iop_bind(&t, OID0 + 3, 0x0201, USER_A), 0);
	/* BARs: power-of-two, aligned, no overlap in one USER's space. */
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 3, 0, 0xf0110000, 0xa0002000, 0x4000),
			 -EINVAL);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 3, 0, 0xf0110000, 0xa0000000, 0x3000),
			 -EINVAL);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 3, 0, 0xf0110000, 0xa0000000, 0x4000),
			 -EEXIST);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 3, 0, 0xf0110000, 0xa0004000, 0x4000), 0);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 3, 6, 0, 0, 0x1000), -EINVAL);
	assert_int_equal(cz_iop_set_bar(&t, OID0 + 9, 0, 0, 0, 0x1000), -ENOENT);
	/* Withdrawn: gone both ways, and the UID is free again. */
	assert_int_equal(cz_iop_unbind(&t, OID0 + 1), 0);
	assert_int_equal(cz_iop_device_to_user(&t, OID0 + 1, &uid, &user), -ENOENT);
	assert_int_equal(cz_iop_user_completion(&t, USER_A, 0x0200, &uid), -ENOENT);
	assert_int_equal(cz_iop_unbind(&t, OID0 + 1), -ENOENT);
	assert_int_equal(cz_iop_bind(&t, OID0 + 4, 0x0200, USER_A), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_to_device),
		cmocka_unit_test(test_device_to_user),
		cmocka_unit_test(test_bind_rules),
	};

	return cmocka_run_group_tests_name("czodiac_ioport", tests, NULL, NULL);
}
