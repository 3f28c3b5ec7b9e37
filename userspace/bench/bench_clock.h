/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The benchmarks' clock: monotonic, in milliseconds or nanoseconds. */
#ifndef MAGLEV_BENCH_CLOCK_H
#define MAGLEV_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static inline double now_ms(void)
{
	return now_ns() / 1e6;
}

#endif /* MAGLEV_BENCH_CLOCK_H */
