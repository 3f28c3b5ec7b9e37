/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What balancers of one group compare to see that they agree: a digest of
 * each VIP's table by backend address, one over all of them, and a
 * fingerprint of the seed.
 */
#ifndef MAGLEVD_DRIFT_H
#define MAGLEVD_DRIFT_H

#include <stdint.h>

#include "maglev_hash.h"
#include "model/registry.h"

/* Hex of a 64-bit digest: 16 digits and the NUL. */
#define DRIFT_HEX_LEN 17

/* The digest of table by the addresses of v's backends. */
uint64_t drift_table_digest(const struct vip *v, const uint32_t *table);
/* The same by addr_of[backend index] (MAGLEV_MAX_BACKENDS entries, NULL: none). */
uint64_t drift_slots_digest(const uint32_t *table, const struct ctl_addr *const *addr_of);
uint64_t drift_vips_digest(const struct registry *r);
uint64_t drift_seed_fingerprint(const struct maglev_seed *seed);
void drift_hex(uint64_t h, char *buf);

#endif
