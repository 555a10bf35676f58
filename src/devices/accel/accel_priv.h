/* SPDX-License-Identifier: MIT */
/* The accelerator model's internal state, shared by accel.c and accel_prog.c. */
#ifndef SMARTIO_DEVICES_ACCEL_PRIV_H
#define SMARTIO_DEVICES_ACCEL_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/dev.h"
#include "smartio/accel_regs.h"
#include "smartio/timing.h"

/* Descriptors started per poll at most, so tiny descriptors stay bounded too. */
#define ACCEL_DESC_PER_POLL     64
/* Ping-pong: watched-word checks per poll before returning to the runner. */
#define ACCEL_PP_SPIN           32
/* Ping-pong: iterations per poll at most (each is a DMA write and a check). */
#define ACCEL_PP_STEPS          256

/*
 * Where an address range lives: in the device's own memory (local, no bus
 * transaction) or out on the bus (addr, reached by DMA).
 */
struct accel_span {
	uint8_t *local;
	uint64_t addr;
};

struct accel_prog {
	bool running;
	uint32_t op, role;
	uint64_t src, dst, len, pattern, watch, iters;
	struct accel_span peer;
	uint64_t off;             /* bytes done (memcpy/memset/checksum) */
	uint64_t n;               /* ping-pong: the counter value of this iteration */
	bool pp_send;             /* ping-pong: next step writes the peer (else waits) */
	uint32_t crc;
	uint64_t t0;              /* CLOCK_MONOTONIC ns at START */
	/* what the PROG_* RO registers show */
	uint32_t status;
	uint64_t result, done_iters, elapsed, avg, seq;
};

/* A kernel's device context (accel_kern.c): a process and its channel. */
struct accel_kern {
	int pid;                  /* running context, 0: none */
	int reap_pid;             /* a finished context not waited for yet, 0: none */
	int chan;                 /* our end of the request channel, -1: none */
	int64_t value;            /* what the kernel returned */
	uint8_t *buf;             /* one request or reply */
};

/* Timing-faithful mode: a route's hops, kept while the route epoch holds. */
#define ACCEL_TIMING_PATHS      4
struct accel_path {
	bool valid, write;
	uint64_t key;             /* address >> 21: the same 2 MiB takes the same route */
	uint64_t epoch;
	unsigned n;
	struct timing_hop h[TIMING_MAX_HOPS];
};

struct accel {
	struct dev_instance *d;
	uint8_t *mem;             /* BAR2 backing */
	uint64_t mem_size;
	unsigned dma_bits;
	uint64_t dma_limit;       /* 2^dma_bits; 0: no limit (64 bits) */
	uint8_t *bounce;          /* ACCEL_CHUNK bytes for bus-to-bus work */

	bool en_seen;             /* CTRL.ENABLE as last observed */
	uint32_t error, int_status, err_code;
	uint64_t err_addr;
	uint64_t fail_addr;       /* address of the access that failed last */

	/* descriptor ring */
	bool ring_on, halted, stalled;
	uint64_t ring_base;
	uint32_t ring_size, head, done, failed;
	struct accel_span ring;
	/* the descriptor in progress */
	bool cur_valid;
	struct accel_desc cur;
	struct accel_span cur_src, cur_dst;
	uint64_t cur_off;
	uint32_t cur_crc;

	struct accel_prog prog;
	struct accel_kern kern;

	/* timing-faithful mode (accel_timing.c) */
	uint64_t desc_t0;         /* when the descriptor in progress was fetched */
	uint64_t hold_until;      /* its completion is held until then; 0: none */
	struct accel_path *paths; /* ACCEL_TIMING_PATHS; NULL in the default mode */
	unsigned path_next;
};

/* accel_timing.c: what the current descriptor takes on real hardware (ns). */
uint64_t accel_desc_cost_ns(struct accel *a);

/* accel.c */
uint64_t accel_bar2_base(struct accel *a);
uint32_t accel_resolve(struct accel *a, uint64_t addr, uint64_t len, struct accel_span *sp);
uint32_t accel_rd(struct accel *a, const struct accel_span *sp, uint64_t off, void *buf,
		  size_t len);
uint32_t accel_wr(struct accel *a, const struct accel_span *sp, uint64_t off, const void *buf,
		  size_t len);
void accel_fill(uint8_t *p, size_t n, uint64_t pattern, uint64_t off);
void accel_raise(struct accel *a, uint32_t cause);
void accel_error(struct accel *a, uint32_t bit, uint32_t status, uint64_t addr);
void accel_publish(struct accel *a);

/* accel_prog.c */
int accel_prog_poll(struct accel *a);
void accel_prog_reset(struct accel *a);

/* accel_kern.c: program KERNEL. start returns 0 or an ACCEL_SC_* code; poll
 * serves the context's requests and ends the program when the context ends;
 * stop kills a running context (abort, reset, destroy). */
int accel_kern_init(struct accel *a);
uint32_t accel_kern_start(struct accel *a);
int accel_kern_poll(struct accel *a);
void accel_kern_stop(struct accel *a);
void accel_kern_fini(struct accel *a);
/* accel_prog.c: end the running program with status sc. */
void accel_prog_finish(struct accel *a, uint32_t sc);

/* accel_crc.c: CRC32C (Castagnoli), chainable: crc(crc(0, a), b) == crc(0, a || b). */
uint32_t accel_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
