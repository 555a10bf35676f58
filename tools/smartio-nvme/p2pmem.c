// SPDX-License-Identifier: MIT
/*
 * --buffer p2pmem: the data buffer from the daemon's P2PDMA orchestrator
 * (P2PMEM_ALLOC): published device memory of this host closest to the
 * controller by hops, held on a connection of our own for as long as the
 * tool runs (its end frees the buffer), as nvmet takes its data buffers from
 * pci_p2pmem_find's choice.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "p2pmem.h"
#include "smartio/proto/core.h"
#include "smartio/proto/driver.h"
#include "smartio/proto/msgs.h"

#define P2PMEM_TIMEOUT_MS  5000

int tool_p2pmem_alloc(uint32_t client, uint64_t size, bool fallback, struct tool_p2pmem *p)
{
	struct smio_p2pmem_req q = { .size = size, .client = client,
				     .flags = fallback ? SMIO_P2PMEM_F_FALLBACK : 0 };
	struct smio_hello hello = { .role = SMIO_ROLE_CLIENT, .pid = (uint32_t)getpid(),
				    .version = SMIO_VERSION };
	struct smio_hello_reply hr;
	char dir[256];
	uint32_t rlen;
	int rc;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (smio_env_host(&hello.host) || smio_cluster_dir(dir, sizeof(dir)))
		return -EINVAL;
	p->fd = smio_connect(dir, hello.host, P2PMEM_TIMEOUT_MS);
	if (p->fd < 0)
		return p->fd;
	rc = smio_call(p->fd, SMIO_HELLO, &hello, sizeof(hello), &hr, sizeof(hr), &rlen, NULL,
		       P2PMEM_TIMEOUT_MS);
	if (!rc)
		rc = smio_call(p->fd, SMIO_P2PMEM_ALLOC, &q, sizeof(q), &p->g, sizeof(p->g), &rlen,
			       NULL, P2PMEM_TIMEOUT_MS);
	if (rc) {
		tool_p2pmem_close(p);
		return rc;
	}
	return 0;
}

void tool_p2pmem_close(struct tool_p2pmem *p)
{
	if (p->fd >= 0)
		close(p->fd);      /* the daemon frees the buffer with the connection */
	p->fd = -1;
}
