// SPDX-License-Identifier: MIT
/*
 * libsisci against real daemons: the default cluster is started with the
 * smartio CLI, and the test process belongs to host 1 (SMARTIO_HOST=1), as a
 * SISCI program on lender A would.
 */
#include <errno.h>
#include <stdio.h>

#include "sisci_harness.h"

/* The pid of host's daemon, from the cluster directory. */
static pid_t daemon_pid(unsigned host)
{
	char path[PATH_MAX + 32];
	long pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/host-%u.pid", sh_dir, host);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = -1;
	fclose(f);
	return (pid_t)pid;
}

/* The tests choose the host and initialise the library themselves. */
static int group_setup(void **state)
{
	return sh_up("sisci", NULL, false);
}

static int group_teardown(void **state)
{
	return sh_down();
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

/*
 * What the library knows of the cluster comes from its own daemon: it reads
 * no topology file, talks to no other host, and asks about links anew.
 */
static void test_probe_failures(void **state)
{
	char yaml[PATH_MAX + 32], aside[PATH_MAX + 32];
	unsigned int v = 0;
	sci_query_adapter_t q = { .localAdapterNo = 0, .data = &v };
	sci_error_t err;
	sci_desc_t sd;
	pid_t pid;

	/* Initialised without the cluster's topology file. */
	snprintf(yaml, sizeof(yaml), "%s/topology.yaml", sh_dir);
	snprintf(aside, sizeof(aside), "%s/topology.aside", sh_dir);
	assert_int_equal(rename(yaml, aside), 0);
	setenv("SMARTIO_HOST", "1", 1);
	SCIInitialize(0, &err);
	assert_int_equal(rename(aside, yaml), 0);
	assert_int_equal(err, SCI_ERR_OK);
	SCIOpen(&sd, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	q.subcommand = SCI_Q_ADAPTER_LINK_SPEED;
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(v, 3);                    /* the default cable: Gen3 x8 */

	/* The adapter's link down: no node but this one answers over it. */
	assert_int_equal(sh_ntb_link("1", "down"), 0);
	assert_int_equal(SCIProbeNode(sd, 0, 4, 0, &err), 0);
	assert_int_equal(err, SCI_ERR_NO_LINK_ACCESS);
	assert_int_equal(SCIProbeNode(sd, 0, 8, 0, &err), 1);      /* ourselves */
	q.subcommand = SCI_Q_ADAPTER_LINK_OPERATIONAL;
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(err, SCI_ERR_OK);
	assert_int_equal(v, 0);
	assert_int_equal(sh_ntb_link("1", "up"), 0);
	SCIQuery(SCI_Q_ADAPTER, &q, 0, &err);
	assert_int_equal(v, 1);

	/* A node whose daemon (its kernel) hangs does not answer. */
	pid = daemon_pid(2);
	assert_true(pid > 0);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	v = (unsigned int)SCIProbeNode(sd, 0, 12, 0, &err);
	kill(pid, SIGCONT);               /* first: a failed assertion must not leave it stopped */
	assert_int_equal(v, 0);
	assert_int_equal(err, SCI_ERR_NODE_NOT_RESPONDING);
	assert_int_equal(SCIProbeNode(sd, 0, 12, 0, &err), 1);
	assert_int_equal(err, SCI_ERR_OK);

	SCIClose(sd, 0, &err);
	SCITerminate();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_initialized),
		cmocka_unit_test(test_open_node_probe),
		cmocka_unit_test(test_probe_failures),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
