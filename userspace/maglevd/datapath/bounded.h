/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bounded loads (per VIP --balance-factor C): every tick, each such VIP's
 * backends in the table get a load (live connection-table entries: the
 * latest census, flow_count.c, plus the new flows the datapath counted for
 * the backend since), cap = ceil(C * mean load), and those at or over cap
 * are marked in the datapath's maglev_overcap map, which makes new flows
 * probe past them (include/maglev_maps.h). docs/maglev-table.md has why.
 */
#ifndef MAGLEVD_BOUNDED_H
#define MAGLEVD_BOUNDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/daemon.h"
#include "model/balance.h"

/* Recompute loads and marks (the event loop's tick, and at once after a
 * health commit: a backend held down is marked in the same loop turn).
 * Backends held in their slots while down are marked too (model/admit.h).
 */
void bounded_tick(struct daemon *d);
/* Whether any VIP has a balance factor: the census then runs as often as
 * its cost allows instead of every 2 s.
 */
bool bounded_active(void);
/* The cap last computed for VIP id (0: none yet or off). */
uint64_t bounded_cap(uint32_t vip_id);
/* The marks written to the datapath, over cap or held, by backend index
 * (MAGLEV_MAX_BACKENDS).
 */
const uint8_t *bounded_marks(void);
/* Backend idx is marked over cap; its load at the last tick. */
bool bounded_marked(uint32_t idx);
uint64_t bounded_load(uint32_t idx);

#endif /* MAGLEVD_BOUNDED_H */
