// SPDX-License-Identifier: MIT
/*
 * libsisci against real daemons: the default cluster is started with the
 * smartio CLI, and the test process belongs to host 1 (SMARTIO_HOST=1), as a
 * SISCI program on lender A would.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "sisci_api.h"

extern char **environ;

static char dir[PATH_MAX], cli[PATH_MAX];

static int run_cli(const char *a1, const char *a2)
{
	char *argv[] = { cli, (char *)"cluster", (char *)a1, (char *)a2, NULL };
	pid_t pid;
	int st;

	if (posix_spawn(&pid, cli, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int group_setup(void **state)
{
	const char *b = getenv("SMARTIO_BUILD_DIR");
	char tmpl[] = "/tmp/smartio-sisci-XXXXXX";

	snprintf(cli, sizeof(cli), "%s/tools/smartio/smartio", b ? b : "./build");
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(dir, sizeof(dir), "%s/c", tmpl);
	setenv("SMARTIO_CLUSTER", dir, 1);
	return run_cli("up", NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	char parent[PATH_MAX];
	int rc = run_cli("down", NULL);

	snprintf(parent, sizeof(parent), "%s", dir);
	*strrchr(parent, '/') = '\0';
	rmdir(parent);
	return rc == 0 ? 0 : -1;
}

static void test_not_initialized(void **state)
{
	sci_error_t err;
	sci_desc_t sd;
	unsigned int node;

	/* A process that belongs to no host cannot initialise... */
	unsetenv("SMARTIO_HOST");
	SCIInitialize(0, &err);
	assert_int_equal(err, SCI_ERR_NOT_INITIALIZED);
	/* ...and nothing works before SCIInitialize. */
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_NOT_INITIALIZED);
	SCIGetLocalNodeId(0, &node, 0, &err);
	assert_int_equal(err, SCI_ERR_NOT_INITIALIZED);
	setenv("SMARTIO_HOST", "99", 1);
	SCIInitialize(0, &err);
	assert_int_equal(err, SCI_ERR_NOT_INITIALIZED);
	SCIInitialize(1, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);
}

static void test_open_node_probe(void **state)
{
	sci_error_t err;
	sci_desc_t sd;
	unsigned int node = 0, v = 0;
	sci_query_adapter_t q = { .localAdapterNo = 0, .data = &v };

	setenv("SMARTIO_HOST", "1", 1);
	SCIInitialize(0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIInitialize(0, &err);                   /* idempotent */
	assert_int_equal(err, SCI_ERR_OK);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCIOpen(&sd, 0x80000000u, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_FLAG);

	/* Lender A is host 1: node ID 8 (4 * (id + 1)), one adapter. */
	SCIGetLocalNodeId(0, &node, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(node, 8);
	SCIGetLocalNodeId(1, &node, 0, &err);
	assert_int_equal(err, SCI_ERR_NO_SUCH_ADAPTERNO);

	/* The borrower (node 4) and lender B (node 12) share the cluster switch. */
	assert_int_equal(SCIProbeNode(sd, 0, 4, 0, &err), 1);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(SCIProbeNode(sd, 0, 12, 0, &err), 1);
	assert_int_equal(SCIProbeNode(sd, 0, 8, 0, &err), 1);      /* ourselves */
	assert_int_equal(SCIProbeNode(sd, 0, 40, 0, &err), 0);
	assert_int_equal(err, SCI_ERR_NO_SUCH_NODEID);
	assert_int_equal(SCIProbeNode(sd, 3, 4, 0, &err), 0);
	assert_int_equal(err, SCI_ERR_NO_SUCH_ADAPTERNO);

	q.subcommand = SCI_Q_ADAPTER_NODEID;
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(v, 8);
	q.subcommand = SCI_Q_ADAPTER_LINK_OPERATIONAL;
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(v, 1);
	q.subcommand = SCI_Q_ADAPTER_LINK_WIDTH;
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(v, 8);
	q.subcommand = SCI_Q_ADAPTER_NUMBER;
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(v, 1);
	q.subcommand = 0x7777;
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_QUERY);
	SCIQuery(SCI_Q_ADAPTER, NULL, 0, &err);
	assert_int_equal(err, SCI_ERR_ILLEGAL_PARAMETER);

	assert_string_equal(SCIGetErrorString(SCI_ERR_OK), "no error");
	assert_non_null(strstr(SCIGetErrorString(SCI_ERR_NO_SUCH_NODEID), "node"));
	assert_non_null(SCIGetErrorString((sci_error_t)0x12345));

	SCIClose(sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	SCITerminate();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_initialized),
		cmocka_unit_test(test_open_node_probe),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
