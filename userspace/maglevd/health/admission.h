/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What a health verdict does to a backend, whoever made it (this
 * balancer's checks, health_verdicts.c, or the fleet's vote,
 * fleet_health.c): flap damping first (damping.h), then down is held in its
 * slots for settle_ms, up within it clears the hold, up after it ramps
 * (model/admit.h).
 */
#ifndef MAGLEVD_ADMISSION_H
#define MAGLEVD_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/daemon.h"

/*
 * Whether verdict up changes b's checks' state (b->up, or a passing state
 * damping keeps down): if not, nothing to do.
 */
bool admission_changes(const struct be *b, bool up);
/*
 * Apply verdict up to b of v at CLOCK_MONOTONIC ms now; serving: v had a
 * backend in its table before this batch. True: b->up changed, log it with
 * note (what follows the verdict's own reason, "" or "; held ..."); false:
 * damping keeps it down (logged here), b->up unchanged.
 */
bool admission_apply(const struct daemon *d, const struct vip *v, struct be *b, bool up,
		     bool serving, uint64_t now, char *note, size_t notelen);

#endif /* MAGLEVD_ADMISSION_H */
