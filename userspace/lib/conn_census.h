/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A census of the pinned connection table: how many entries it holds and
 * how many of them each backend holds, so "is this drained backend idle
 * yet" has an answer. Reads the table through its mmap (as the datapath
 * does, include/maglev_conn.h) and a backend's entry the first time one
 * names it; touches nothing. Safe to run in a thread of its own.
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
	/*
	 * Optional, the caller's (watch NULL: none): the live entries that
	 * will stop being live before watch_until (ns, CLOCK_MONOTONIC)
	 * unless their flow sends again (UDP idle, a closed TCP connection's
	 * tcp_closed_ns), up to watch_cap of them; watch_missed counts those
	 * that did not fit (they stay counted until the next census).
	 */
	struct conn_watch *watch;
	uint32_t watch_cap, nwatch;
	uint64_t watch_until, watch_missed;
};

/* A watched entry: where it is, which it is, when to look again. */
struct conn_watch {
	uint64_t due;	      /* CLOCK_MONOTONIC ns: not live after this unless it sent */
	uint32_t pos;	      /* bucket * MAGLEV_CONN_WAYS + way */
	uint32_t check;	      /* its check word: the same flow, backend and VIP */
	uint32_t backend_idx; /* whose count it is in */
	uint32_t pad;
};

/* The table mapped once, for a reader that counts again and again (the
 * mapping of a 1M-entry table alone costs ~2.5 ms to make and undo).
 */
struct conn_map {
	const struct maglev_conn_bucket *m;
	size_t len;
	uint32_t buckets;
};

int maglev_conn_map_open(struct maglev_dp *dp, struct conn_map *cm);
void maglev_conn_map_close(struct conn_map *cm);

/* Fill c (caller-allocated: it is 256 KiB). Returns 0 or -errno. */
int maglev_conn_census(struct maglev_dp *dp, struct conn_census *c);
/* The same through a mapping kept open. */
int maglev_conn_census_mapped(struct maglev_dp *dp, const struct conn_map *cm,
			      struct conn_census *c);
/*
 * Look again at c's watched entries that are due at now_ns: one that is no
 * longer live (its time is up, or its way holds another entry now) leaves
 * the list and its backend index is written to gone[] (at most gone_cap;
 * the rest wait for the next call); one whose flow sent since stays, due
 * later. The caller takes gone[] off c's counts (under its own lock: c is
 * not changed here but for its watch list). Returns how many are gone, or
 * -errno. A census and this are what maglevd's bounded loads count from.
 */
long maglev_conn_recheck(struct maglev_dp *dp, const struct conn_map *cm, struct conn_census *c,
			 uint64_t now_ns, uint32_t *gone, uint32_t gone_cap);

#endif /* MAGLEV_CONN_CENSUS_H */
