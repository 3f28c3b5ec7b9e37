/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Table swaps that return as soon as the new table is live.
 *
 * Replacing an inner map of a map-in-map from userspace makes the kernel wait
 * for an RCU grace period before the syscall returns (so that no program
 * still holds the old table), 5-20 ms on a small VM; the new table is live
 * from the moment the outer slot changes, at the start of that wait. A
 * thread makes the call; the event loop watches the outer slot (it holds
 * the inner map's id) and goes on once it names the new map.
 */
#ifndef MAGLEVD_TABLE_SWAP_H
#define MAGLEVD_TABLE_SWAP_H

#include <stddef.h>
#include <stdint.h>

#include "datapath.h"

/* prev: each slot's previous owner (second chance), or NULL for none. */
int table_swap_live(struct maglev_dp *dp, uint32_t vip_id, const uint32_t *table,
		    const uint32_t *prev, char *err, size_t errlen);
/* Wait for the swaps in their grace period to finish (before exit). */
void table_swap_quiesce(void);

#endif /* MAGLEVD_TABLE_SWAP_H */
