/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Mirror into the optional slow-path kernel module (slowpath.c). Every
 * function is a no-op while the module is not loaded or out of sync.
 */
#ifndef MAGLEVD_SLOWPATH_H
#define MAGLEVD_SLOWPATH_H

#include "core/daemon.h"
#include "model/registry.h"
#include "maglev_genl.h"

/* Look for the module (every few seconds while absent) and push everything. */
void slowpath_tick(struct daemon *d);
void slowpath_close(void);
/* Whether the module is loaded and holds what the datapath holds. */
bool slowpath_in_sync(void);
void slowpath_config(const struct maglev_config *mc);
void slowpath_backend_set(const struct be *b);
void slowpath_backend_del(uint32_t idx);
/* The VIP (encapsulation) and its new table, with the XDP table's generation;
 * prev: each slot's previous owner while second chance keeps them, or NULL.
 */
void slowpath_table(const struct vip *v, const uint32_t *table, const uint32_t *prev);
void slowpath_vip_del(const struct vip *v);
/* Bounded loads: the over-cap marks by backend index (MAGLEV_MAX_BACKENDS
 * of them, bounded.c), replacing the module's as a whole.
 */
void slowpath_overcap(const uint8_t *marked);
/* The module's counters by name into out[name]; false when it is not loaded. */
bool slowpath_counters(uint64_t out[MAGLEV_STAT_MAX + 1]);

#endif /* MAGLEVD_SLOWPATH_H */
