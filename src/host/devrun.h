/* SPDX-License-Identifier: MIT */
/*
 * Running device models: one thread per endpoint function that has a model,
 * polling its registers. The thread spins while the model reports work and
 * backs off to sleeping (up to DEVRUN_IDLE_MAX_NS between polls) when idle,
 * so an idle cluster costs almost no CPU. A model reaches the bus through
 * this host's fabric: DMA is fab_access() as the function's requester ID
 * under the host lock, MSI-X is a DMA write that the fabric turns into an
 * interrupt.
 */
#ifndef SMARTIO_HOST_DEVRUN_H
#define SMARTIO_HOST_DEVRUN_H

#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define DEVRUN_SPIN_NS      200000ull      /* keep polling this long after the last work */
#define DEVRUN_SPIN_CHECK   64u            /* quiet passes between clock reads */
#define DEVRUN_SPIN_YIELD   1024u          /* quiet passes between yields of the CPU */
#define DEVRUN_IDLE_MIN_NS  50000ull
#define DEVRUN_IDLE_MAX_NS  8000000ull
/* Work due later (dev_instance.wake_ns: faithful mode, an NVMe latency_us) is waited for
 * by sleeping in slices of at most DEVRUN_WAKE_SLICE_NS (so other queues'
 * new work is still seen), then spinning for the last DEVRUN_WAKE_SPIN_NS. */
#define DEVRUN_WAKE_SPIN_NS  20000ull
#define DEVRUN_WAKE_SLICE_NS 100000ull
#define DEVRUN_TIMER_SLACK_NS 1000ul   /* timed work: wake on time, not 50 us late */

struct devrun_set;
struct dev_instance;

/*
 * A device's DMA may need what a device thread cannot do (a route step on
 * another host, another host's memory mapped). access is then called on the
 * device's thread with no lock held: a daemon worker resolves the route,
 * maps what it ends in and moves the bytes itself, in one go, so no table
 * change can come between the resolution and the access (a retry on the
 * device's thread could find the route invalidated again and again while
 * other hosts' tables churn). Returns 0, or the enum fab_status (> 0) / -errno
 * the access ends in. NULL: none (the access fails as it did on the device's
 * thread).
 */
struct devrun_ops {
	int (*access)(void *arg, uint16_t rid, uint64_t addr, void *buf, uint64_t len,
		      bool write);
	void *arg;
	/* Timing-faithful mode: the calibration the models answer by (copied);
	 * NULL: the default, as fast as the emulation goes. */
	const struct timing_params *timing;
};

/* Create every model instance of host h and start its thread. ops may be NULL. */
int devrun_start(struct fab_host *h, const struct devrun_ops *ops, struct devrun_set **out,
		 char *err, size_t errlen);
/* Stop and join every thread, destroy the instances. NULL is fine. */
void devrun_stop(struct devrun_set *s);
/* The instance running function fn, or NULL (tests, statistics). */
struct dev_instance *devrun_instance(struct devrun_set *s, const struct fab_func *fn);
/* Total poll passes so far (idle-backoff checks). */
uint64_t devrun_polls(const struct devrun_set *s);

#endif
