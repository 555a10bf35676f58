/* SPDX-License-Identifier: MIT */
/*
 * The daemon_load suite's cases that live outside test_daemon_load.c:
 * load_flood.c (half-open connections, a client flood) and load_roles.c
 * (role claims, and this binary's helper mode for them).
 */
#ifndef SMARTIO_TESTS_LOAD_CASES_H
#define SMARTIO_TESTS_LOAD_CASES_H

#define NHALF		10000     /* half-open connections of case 3 */
#define NOFILE_WANT	(NHALF + 1024)

void test_half_open(void **state);
void test_half_open_storm(void **state);
void test_flood_isolation(void **state);
void test_role_claims(void **state);
/* `--claim-helper DIR`: run by test_role_claims under smartio exec. */
int claim_helper(const char *dir);

#endif
