/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A scrape in two halves, so that the event loop is not held while 65,535
 * backends are formatted: metrics_snap_take() copies, on the loop, what only
 * the loop may touch (the registry, health and announce state, the daemon's
 * own counters); metrics_snap_render() then reads the datapath's counters
 * and formats the Prometheus text from that copy alone, on any thread.
 */
#ifndef MAGLEVD_METRICS_SNAP_H
#define MAGLEVD_METRICS_SNAP_H

#include <stddef.h>

#include "core/daemon.h"

struct metrics_snap;

/* On the event loop; NULL when out of memory. */
struct metrics_snap *metrics_snap_take(struct daemon *d);
/* Off the loop: the exposition text (malloc'ed, *len bytes), NULL on failure. */
char *metrics_snap_render(const struct metrics_snap *s, struct maglev_dp *dp, size_t *len);
void metrics_snap_free(struct metrics_snap *s);

#endif /* MAGLEVD_METRICS_SNAP_H */
