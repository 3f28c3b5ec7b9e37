/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A census of the pinned connection table: how many entries it holds and
 * how many of them each backend holds, so "is this drained backend idle
 * yet" has an answer. Reads the table through its mmap (as the datapath
 * does, include/maglev_conn.h) and the backend map with one batch lookup;
 * touches nothing. Safe to run in a thread of its own.
 */
#ifndef MAGLEV_CONN_CENSUS_H
#define MAGLEV_CONN_CENSUS_H

#include <stdint.h>

#include "datapath.h"

struct conn_census {
	uint64_t slots;	  /* capacity: buckets x ways */
	uint64_t entries; /* slots holding an intact entry */
	/*
	 * Entries the datapath would still follow: their backend's generation
	 * is current and it is up or draining, (UDP) not idle past the
	 * datapath's udp_idle_ns, and (TCP) not closed by the client longer
	 * than tcp_closed_ns ago. per_backend[idx] counts them by backend index.
	 */
	uint64_t live;
	uint32_t per_backend[MAGLEV_MAX_BACKENDS];
};

/* Fill c (caller-allocated: it is 256 KiB). Returns 0 or -errno. */
int maglev_conn_census(struct maglev_dp *dp, struct conn_census *c);

#endif /* MAGLEV_CONN_CENSUS_H */
