/* SPDX-License-Identifier: MIT */
/*
 * Monotonic time and deadlines, in one place for every process of the
 * cluster (daemon, libraries, tools, tests, benchmarks).
 *
 * Everything reads CLOCK_MONOTONIC: timeouts and elapsed times must not jump
 * with the wall clock. CLOCK_MONOTONIC cannot fail on Linux with a valid
 * pointer, so the helpers return plain values.
 *
 * A deadline is an absolute CLOCK_MONOTONIC time in milliseconds, or
 * SMIO_NO_DEADLINE (-1) for "wait forever"; smio_ms_left() turns it into the
 * timeout poll() and friends take.
 */
#ifndef SMARTIO_UTIL_SMIO_TIME_H
#define SMARTIO_UTIL_SMIO_TIME_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define SMIO_NO_DEADLINE ((int64_t)-1)

/* Nanoseconds on clock c (CLOCK_REALTIME for wall time in logs). */
static inline uint64_t smio_clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t smio_now_ns(void)
{
	return smio_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t smio_now_ms(void)
{
	return smio_now_ns() / 1000000ull;
}

/* Seconds as a double, for elapsed times shown to people. */
static inline double smio_now_s(void)
{
	return (double)smio_now_ns() / 1e9;
}

/* The deadline timeout_ms from now; a negative timeout: SMIO_NO_DEADLINE. */
static inline int64_t smio_deadline(int64_t timeout_ms)
{
	return timeout_ms < 0 ? SMIO_NO_DEADLINE : (int64_t)smio_now_ms() + timeout_ms;
}

/*
 * Milliseconds left until deadline, as poll() wants them: -1 for
 * SMIO_NO_DEADLINE, 0 once it has passed, at most INT_MAX.
 */
static inline int smio_ms_left(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - (int64_t)smio_now_ms();
	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* Whether deadline has passed (never for SMIO_NO_DEADLINE). */
static inline bool smio_expired(int64_t deadline)
{
	return deadline >= 0 && (int64_t)smio_now_ms() >= deadline;
}

#endif
