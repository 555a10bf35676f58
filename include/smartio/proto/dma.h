/* SPDX-License-Identifier: MIT */
/*
 * smartio wire protocol, SISCI DMA queues executed by an NTB adapter's DMA
 * engine: DMA_*.
 */
#ifndef SMARTIO_PROTO_DMA_H
#define SMARTIO_PROTO_DMA_H

#include <stdint.h>

#include "wire.h"

#define SMIO_DMA_MAX_VEC     256u        /* entries in one DMA_START (DIS_DMA_MAX_VECLEN) */
#define SMIO_DMA_F_READ      0x1u        /* DMA_START: remote -> local (else local -> remote) */

/* Queue states; the numbers are sci_dma_queue_state_t's. */
enum smio_dma_qstate {
	SMIO_DMA_IDLE    = 0,
	SMIO_DMA_POSTED  = 2,
	SMIO_DMA_DONE    = 3,
	SMIO_DMA_ABORTED = 4,
	SMIO_DMA_ERROR   = 5,
};

struct smio_dma_queue_create {
	uint32_t adapter;          /* local NTB index */
	uint32_t max_entries;      /* 1..SMIO_DMA_MAX_VEC: entries one DMA_START may carry */
};

/* Reply to DMA_QUEUE_CREATE; an eventfd signalled on every completion travels with it. */
struct smio_dma_queue {
	uint32_t queue;            /* never 0 */
	uint32_t adapter;
	uint32_t max_entries;
	uint32_t channels;         /* the adapter's DMA channels (> 0) */
};

struct smio_dma_queue_ref {
	uint32_t queue;            /* never 0 */
	uint32_t pad;
};

/* One transfer: size bytes between local_offset in the local segment and
 * remote_offset in the connected segment. */
struct smio_dma_entry {
	uint64_t local_offset;
	uint64_t remote_offset;
	uint64_t size;             /* > 0 */
};

/* DMA_START: n entries follow, executed in order as one submission. */
struct smio_dma_start {
	uint32_t queue;            /* never 0 */
	uint32_t segid;            /* a local segment of the caller */
	uint32_t conn;             /* the caller's SEG_CONNECT handle */
	uint32_t flags;            /* SMIO_DMA_F_* */
	uint32_t n;                /* 1..SMIO_DMA_MAX_VEC; payload = 24 + 24 * n */
	uint32_t pad;
	struct smio_dma_entry e[];
};

struct smio_dma_state {
	uint32_t queue;
	uint32_t state;            /* enum smio_dma_qstate */
	int32_t error;             /* 0, or the failure's negative errno (ERROR/ABORTED) */
	uint32_t submissions;      /* DMA_STARTs accepted over the queue's life */
	uint64_t bytes;            /* moved by the current (last) submission */
	uint64_t total;            /* bytes the current (last) submission asked for */
};

#endif
