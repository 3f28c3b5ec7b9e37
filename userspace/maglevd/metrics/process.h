/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The process_* metrics every Prometheus client library exports (CPU time,
 * memory, file descriptors, start time), read from /proc/self: the same
 * names, so dashboards and alerts written for any exporter work here.
 */
#ifndef MAGLEVD_METRICS_PROCESS_H
#define MAGLEVD_METRICS_PROCESS_H

#include <stdio.h>

/* Reads /proc only: safe off the event loop. A value it cannot read is left out. */
void process_metrics(FILE *f);

#endif /* MAGLEVD_METRICS_PROCESS_H */
