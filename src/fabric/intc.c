// SPDX-License-Identifier: MIT
#include <errno.h>
#include <unistd.h>

#include "intc.h"

void fab_intc_init(struct fab_intc *c)
{
	for (unsigned i = 0; i < FAB_INTC_VECTORS; i++) {
		c->efd[i] = -1;
		c->count[i] = 0;
	}
	c->spurious = 0;
}

int fab_intc_alloc(struct fab_intc *c, int efd, uint64_t *addr, uint32_t *data)
{
	if (efd < 0)
		return -EINVAL;
	/* Vector 0 is never handed out: a zeroed MSI-X entry is not a valid message. */
	for (unsigned i = 1; i < FAB_INTC_VECTORS; i++) {
		if (c->efd[i] >= 0)
			continue;
		c->efd[i] = efd;
		c->count[i] = 0;
		*addr = FAB_MSI_BASE;
		*data = i;
		return (int)i;
	}
	return -ENOSPC;
}

int fab_intc_free(struct fab_intc *c, uint32_t data)
{
	if (data == 0 || data >= FAB_INTC_VECTORS || c->efd[data] < 0)
		return -ENOENT;
	c->efd[data] = -1;
	return 0;
}

int fab_intc_deliver(struct fab_intc *c, uint64_t addr, uint32_t data)
{
	uint64_t one = 1;

	if (!fab_msi_addr(addr, 4) || data == 0 || data >= FAB_INTC_VECTORS || c->efd[data] < 0) {
		c->spurious++;
		return -ENOENT;
	}
	c->count[data]++;
	/* An eventfd counter only saturates after 2^64-2 signals; EAGAIN cannot
	 * lose an interrupt that is already pending. */
	if (write(c->efd[data], &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}
