/* SPDX-License-Identifier: MIT */
/*
 * The DMA engines of a host's NTB adapters (PXH830-like): SISCI DMA queues.
 *
 * Every NTB whose topology gives it dma_channels > 0 has one engine thread.
 * A queue belongs to one adapter and to an owner (an opaque non-zero token;
 * the daemon uses connection ids) and carries one submission at a time: up
 * to max_entries transfers, executed in order. The engine moves the bytes as
 * the NTB function's requester: fab_access() with the NTB's requester ID,
 * under the host lock, in chunks of at most NTBDMA_CHUNK bytes (so the lock
 * is never held long), through a bounce buffer that models the engine's
 * FIFO. A write to a remote segment therefore really goes through the LUT,
 * the cable and the far host's IOMMU; a failure anywhere (unsupported
 * request, IOMMU fault, link down, host down) ends the submission in the
 * error state with the first failure's errno.
 *
 * Accesses that need another host's help (a route step on the far side, the
 * far host's memory mapped into this process) cannot be made by an engine
 * thread on its own: such an access fails, and the engine asks ops->prepare
 * (without the host lock) to make it possible - a daemon worker resolves
 * the route, which fills the route cache, and maps the memory - then tries
 * again (at most NTBDMA_RETRIES times).
 *
 * Completion (done, error or aborted) adds 1 to the queue's eventfd; the
 * queue's owner holds a copy and waits on it with poll().
 *
 * Locking: the engine has its own lock and takes the host lock only to move
 * bytes (never while holding its own). Callers may hold the host lock.
 * An idle engine thread blocks on a condition variable: no CPU.
 */
#ifndef SMARTIO_HOST_NTBDMA_H
#define SMARTIO_HOST_NTBDMA_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define NTBDMA_CHUNK        (256u << 10)   /* bytes moved per host-lock hold */
#define NTBDMA_MAX_QUEUES   256u           /* queues per host */
#define NTBDMA_MAX_ENTRIES  256u           /* transfers per submission */
#define NTBDMA_RETRIES      4

/* Queue states: sci_dma_queue_state_t's numbers. */
enum ntbdma_state {
	NTBDMA_IDLE = 0,
	NTBDMA_POSTED = 2,
	NTBDMA_DONE = 3,
	NTBDMA_ABORTED = 4,
	NTBDMA_ERROR = 5,
};

struct ntbdma_xfer {
	uint64_t local;              /* bus address in this host's RAM */
	uint64_t remote;             /* bus address reaching the other segment (NTB window) */
	uint64_t size;               /* > 0 */
};

struct ntbdma_status {
	uint32_t state;              /* enum ntbdma_state */
	int32_t error;               /* 0 or negative errno */
	uint32_t submissions;
	uint64_t bytes, total;
};

struct ntbdma_ops {
	/*
	 * Called on an engine thread without any lock: make an access of the
	 * engine (rid, addr, len, write) possible from that thread. Returns 0,
	 * an enum fab_status (> 0) the access would end in, or -errno.
	 */
	int (*prepare)(void *arg, uint16_t rid, uint64_t addr, uint64_t len, bool write);
	void *arg;
};

struct ntbdma;

/* Start an engine thread for every NTB of h with DMA channels. */
int ntbdma_create(struct fab_host *h, const struct ntbdma_ops *ops, struct ntbdma **out);
/* Abort everything, stop and join the threads, free the queues. NULL is fine.
 * Must not be called with the host lock held. */
void ntbdma_destroy(struct ntbdma *e);
/* DMA channels of NTB adapter (0: none, or no such adapter). */
uint32_t ntbdma_channels(const struct ntbdma *e, uint32_t adapter);

/*
 * A queue on adapter for owner: -EINVAL owner 0 or max_entries out of
 * 1..NTBDMA_MAX_ENTRIES, -ENODEV no such adapter, -EOPNOTSUPP no DMA engine
 * on it, -ENOSPC too many queues, -EMFILE/-ENOMEM. *efd stays the engine's.
 */
int ntbdma_queue_create(struct ntbdma *e, uint32_t owner, uint32_t adapter,
			uint32_t max_entries, uint32_t *id, int *efd);
/* -ENOENT unknown, -EPERM not the owner, -EBUSY a submission is running. */
int ntbdma_queue_remove(struct ntbdma *e, uint32_t owner, uint32_t id);
/* The queue's adapter; -ENOENT, -EPERM. */
int ntbdma_queue_adapter(struct ntbdma *e, uint32_t owner, uint32_t id, uint32_t *adapter);
/*
 * Submit n transfers (read: remote -> local). -ENOENT, -EPERM, -E2BIG n >
 * max_entries, -EINVAL n 0 or an empty transfer, -EBUSY one is running.
 */
int ntbdma_post(struct ntbdma *e, uint32_t owner, uint32_t id, bool read,
		const struct ntbdma_xfer *x, uint32_t n, struct ntbdma_status *st);
int ntbdma_status(struct ntbdma *e, uint32_t owner, uint32_t id, struct ntbdma_status *st);
/*
 * Abort the queue's submission, if one is posted: its engine stops at the next
 * chunk (one not started yet never moves a byte), the state becomes ABORTED
 * and the eventfd is signalled as for any completion. The queue takes the next
 * submission after that. A queue with nothing posted is left as it is.
 * -ENOENT, -EPERM. *st: the state after the request (POSTED until it stops).
 */
int ntbdma_abort(struct ntbdma *e, uint32_t owner, uint32_t id, struct ntbdma_status *st);
/* The owner is gone: abort and free its queues (running ones when they stop). */
unsigned ntbdma_owner_gone(struct ntbdma *e, uint32_t owner);
/* Does a posted submission touch local RAM [addr, addr + size)? */
bool ntbdma_busy_range(struct ntbdma *e, uint64_t addr, uint64_t size);
/* Queues that exist (statistics, tests). */
unsigned ntbdma_queue_count(struct ntbdma *e);

/* Is the calling thread an engine thread (which must not wait for peers)? */
bool ntbdma_in_engine(void);

#endif
