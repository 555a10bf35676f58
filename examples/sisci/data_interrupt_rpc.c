// SPDX-License-Identifier: MIT
/*
 * A remote procedure call between two hosts with SISCI data interrupts.
 *
 * The server owns data interrupt RPC_INTNO. A client creates a data
 * interrupt of its own for the answers, then sends requests to the server's:
 * each request names the client's node and answer interrupt, so the server
 * connects back (once per client) and answers there. No shared memory, no
 * daemon in either wait: the messages travel as data interrupts.
 *
 *   smartio cluster up
 *   smartio exec --host 1 -- ./data_interrupt_rpc server &
 *   smartio exec --host 0 -- ./data_interrupt_rpc client 8 1000
 *
 * The client prints the mean round trip; "client NODE N" sends N requests
 * (default 100) to the server on node NODE and then tells it to stop. The
 * server gives up after 30 s without a request.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sisci_api.h>

#define RPC_INTNO   0x5250u     /* the server's data interrupt */
#define ADAPTER     0
#define MAX_MSG     4096u       /* smartio's data-interrupt limit */
#define IDLE_MS     30000u
#define OP_UPPER    1u          /* answer: the text in upper case */
#define OP_QUIT     2u

struct rpc_hdr {
	uint32_t node;              /* the client's node ... */
	uint32_t intno;             /* ... and its answer interrupt */
	uint32_t seq;
	uint32_t op;
};

#define MAX_TEXT (MAX_MSG - sizeof(struct rpc_hdr))

struct rpc_msg {
	struct rpc_hdr h;
	char text[MAX_TEXT];
};

static int fail(const char *what, sci_error_t err)
{
	fprintf(stderr, "data_interrupt_rpc: %s: %s\n", what, SCIGetErrorString(err));
	return 1;
}

static int server(sci_desc_t sd)
{
	sci_local_data_interrupt_t in;
	sci_remote_data_interrupt_t out = NULL;
	uint32_t out_node = 0, out_intno = 0;
	unsigned int intno = RPC_INTNO, len, served = 0;
	struct rpc_msg m;
	sci_error_t err;

	SCICreateDataInterrupt(sd, &in, ADAPTER, &intno, NULL, NULL, SCI_FLAG_FIXED_INTNO, &err);
	if (err)
		return fail("create", err);
	printf("server: data interrupt %#x\n", intno);
	fflush(stdout);
	for (;;) {
		len = sizeof(m);
		SCIWaitForDataInterrupt(in, &m, &len, IDLE_MS, 0, &err);
		if (err)
			break;
		if (len < sizeof(m.h))
			continue;               /* not ours */
		if (m.h.op == OP_QUIT)
			break;
		/* Connect back to whoever asked (the last client is kept). */
		if (!out || out_node != m.h.node || out_intno != m.h.intno) {
			if (out)
				SCIDisconnectDataInterrupt(out, 0, &err);
			out = NULL;
			SCIConnectDataInterrupt(sd, &out, m.h.node, ADAPTER, m.h.intno, 1000, 0, &err);
			if (err) {
				out = NULL;
				fail("connect back", err);
				continue;
			}
			out_node = m.h.node;
			out_intno = m.h.intno;
		}
		for (unsigned int i = 0; i < len - sizeof(m.h); i++)
			if (m.text[i] >= 'a' && m.text[i] <= 'z')
				m.text[i] = (char)(m.text[i] - 'a' + 'A');
		SCITriggerDataInterrupt(out, &m, len, 0, &err);
		if (err)
			fail("answer", err);
		served++;
	}
	printf("server: %u requests served%s\n", served,
	       err == SCI_ERR_TIMEOUT ? " (idle: stopping)" : "");
	if (out)
		SCIDisconnectDataInterrupt(out, 0, &err);
	SCIRemoveDataInterrupt(in, 0, &err);
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int client(sci_desc_t sd, unsigned int node, unsigned int n)
{
	static const char text[] = "hello from the other side of the fabric";
	sci_local_data_interrupt_t answers;
	sci_remote_data_interrupt_t srv;
	unsigned int intno = 0, local, len;
	struct rpc_msg m, a = { .text = "" };
	sci_error_t err;
	double t0, total = 0;
	int rc = 0;

	SCIGetLocalNodeId(ADAPTER, &local, 0, &err);
	if (err)
		return fail("node id", err);
	SCICreateDataInterrupt(sd, &answers, ADAPTER, &intno, NULL, NULL, 0, &err);
	if (err)
		return fail("create", err);
	SCIConnectDataInterrupt(sd, &srv, node, ADAPTER, RPC_INTNO, 5000, 0, &err);
	if (err) {
		SCIRemoveDataInterrupt(answers, 0, &err);
		return fail("connect to the server", err);
	}
	m.h = (struct rpc_hdr){ .node = local, .intno = intno, .op = OP_UPPER };
	memcpy(m.text, text, sizeof(text));
	for (unsigned int i = 0; i < n && !rc; i++) {
		m.h.seq = i;
		t0 = now_us();
		SCITriggerDataInterrupt(srv, &m, sizeof(m.h) + sizeof(text), 0, &err);
		if (err) {
			rc = fail("request", err);
			break;
		}
		len = sizeof(a);
		SCIWaitForDataInterrupt(answers, &a, &len, 5000, 0, &err);
		if (err) {
			rc = fail("answer", err);
			break;
		}
		total += now_us() - t0;
		if (len != sizeof(m.h) + sizeof(text) || a.h.seq != i ||
		    strncmp(a.text, "HELLO FROM", 10)) {
			fprintf(stderr, "data_interrupt_rpc: wrong answer to request %u\n", i);
			rc = 1;
		}
	}
	if (!rc) {
		printf("client: %u round trips to node %u, mean %.1f us: \"%s\"\n", n, node,
		       n ? total / n : 0.0, a.text);
	}
	m.h.op = OP_QUIT;
	SCITriggerDataInterrupt(srv, &m, sizeof(m.h), 0, &err);
	SCIDisconnectDataInterrupt(srv, 0, &err);
	SCIRemoveDataInterrupt(answers, 0, &err);
	return rc;
}

int main(int argc, char **argv)
{
	sci_desc_t sd;
	sci_error_t err;
	int rc;

	if (argc < 2 || (strcmp(argv[1], "server") && (strcmp(argv[1], "client") || argc < 3))) {
		fprintf(stderr, "usage: %s server | client NODE [N]\n", argv[0]);
		return 2;
	}
	SCIInitialize(0, &err);
	if (err)
		return fail("initialize", err);
	SCIOpen(&sd, 0, &err);
	if (err)
		return fail("open", err);
	if (!strcmp(argv[1], "server"))
		rc = server(sd);
	else
		rc = client(sd, (unsigned int)strtoul(argv[2], NULL, 0),
			    argc > 3 ? (unsigned int)strtoul(argv[3], NULL, 0) : 100);
	SCIClose(sd, 0, &err);
	SCITerminate();
	return rc;
}
