/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Table swaps off the event loop.
 *
 * Replacing (or deleting) an inner map of a map-in-map from userspace makes
 * the kernel wait for an RCU grace period before the syscall returns (so
 * that no program still holds the old table), 5-20 ms on a small VM; the
 * new table is live from the moment the outer slot changes, at the start of
 * that wait. A pool of worker threads makes those calls; the event loop only
 * queues them, and learns that they are live from a timerfd (every 1 ms
 * while swaps are under way it reads the outer slots, which hold the inner
 * maps' ids) and that they failed or returned from an eventfd. A swap of a
 * VIP starts only once the one queued before it is live, so the newest
 * table is the one left live.
 */
#ifndef MAGLEVD_TABLE_SWAP_H
#define MAGLEVD_TABLE_SWAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/daemon.h"
#include "datapath.h"

/*
 * Register the eventfd and timerfd with the event loop: idle(d) runs on the
 * loop each time no commit swap is left that is not live. Before this (at start) swaps are
 * waited for with table_swap_wait().
 */
int table_swap_init(struct daemon *d, void (*idle)(struct daemon *d));
/*
 * Queue a swap of vip_id's table (NULL: delete it); prev is each slot's
 * previous owner (second chance) or NULL. Copies both. commit: its error is
 * kept for table_swap_take_error(); any other's is logged.
 */
void table_swap_submit(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
		       const uint32_t *prev, bool commit);
/* Swaps queued or under way (maybe live, waiting out the grace period). */
unsigned int table_swap_pending(void);
/* Commit swaps whose table is not live yet (queued, or before the slot changed). */
unsigned int table_swap_unlive(void);
/* The first commit swap error since the last call: -errno with err set, or 0. */
int table_swap_take_error(char *err, size_t errlen);
/* Block until every queued swap has returned (start, rollback and exit only). */
void table_swap_wait(void);
/* At exit: wait, then stop the workers. */
void table_swap_quiesce(void);

#endif /* MAGLEVD_TABLE_SWAP_H */
