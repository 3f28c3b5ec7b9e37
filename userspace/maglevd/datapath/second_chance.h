/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Second chance, the daemon's half (include/maglev_second.h has the
 * datapath's): when a second-chance VIP's table is rebuilt, each slot whose
 * owner changes keeps the owner it had as its previous owner, in the same
 * table value, swapped in with it. After second_chance_ms without a further
 * change the table is swapped again without previous owners, so packets
 * stop carrying them.
 */
#ifndef MAGLEVD_SECOND_CHANCE_H
#define MAGLEVD_SECOND_CHANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/registry.h"

struct daemon;

/*
 * The previous owners for v's new table owner[] into prev[]: the live
 * table's owner where it differs, else a previous owner still in its
 * window. Returns prev, or NULL when v has no second chance or no slot has
 * a previous owner (v->sc_until_ms is set to match).
 */
const uint32_t *second_chance_prev(struct vip *v, const struct registry_ctx *ctx,
				   const uint32_t *owner, uint32_t *prev);

/*
 * At start, before the first commit rewrites the tables: a second-chance
 * VIP whose live table carries previous owners (a change shortly before
 * maglevd stopped) gets a window again, so the rewrite keeps them. When the
 * change was is not known: the window runs a full second_chance_ms from now.
 */
void second_chance_adopt(struct daemon *d);
/* v's commit is live (every swap returned): a window its build started runs
 * from now, so that a swap held past second_chance_ms still keeps its
 * previous owners for the whole window.
 */
void second_chance_live(struct vip *v, const struct registry_ctx *ctx);

/* The ms left before v's previous owners are dropped (0: none kept). */
uint64_t second_chance_left_ms(const struct vip *v);

/* Swap in tables without previous owners for VIPs whose window ended. */
void second_chance_tick(struct daemon *d);

#endif /* MAGLEVD_SECOND_CHANCE_H */
