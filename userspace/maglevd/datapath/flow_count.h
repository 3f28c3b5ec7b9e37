/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Flows per backend: a thread of its own counts the connection table's
 * entries (userspace/lib/conn_census.h) every few seconds, off the event
 * loop, and keeps the latest count for `backend list` and the metrics.
 * While fast (bounded loads), every FLOW_COUNT_FAST_MS between two counts
 * it looks again at the entries the last count saw ending by then and
 * takes those that did off its counts (maglev_conn_recheck).
 */
#ifndef MAGLEVD_FLOW_COUNT_H
#define MAGLEVD_FLOW_COUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/daemon.h"

/* At least this long between two counts; longer for a table slow to scan
 * (20x the last count's CPU time: under 5% of a CPU).
 */
#define FLOW_COUNT_INTERVAL_MS 2000

/* With bounded loads on (bounded.c): as often as this, cost permitting. */
#define FLOW_COUNT_FAST_MS 100

int flow_count_start(struct daemon *d);
/* Count every FLOW_COUNT_FAST_MS (still under 5% of a CPU) instead, with
 * the new-flow counts of backend indices below `below` (those of the
 * bounded VIPs) read just before each count.
 */
void flow_count_fast(bool fast, uint32_t below);
/* Backend idx's live entries in the latest count and the datapath's
 * new-flow count read just before it (taken only while fast, idx below
 * `below`); false if that count has none.
 */
bool flow_count_backend_load(uint32_t idx, uint64_t *n, uint64_t *nf);
/* When the latest count was published (its identity); false before the first. */
bool flow_count_epoch(uint64_t *ms);
void flow_count_stop(void);
/* Live entries of backend idx in the latest count; false before the first. */
bool flow_count_backend(uint32_t idx, uint64_t *n);
/* The table as a whole: capacity, intact entries, live ones; age of the count. */
bool flow_count_table(uint64_t *slots, uint64_t *entries, uint64_t *live, double *age_s);

#endif /* MAGLEVD_FLOW_COUNT_H */
