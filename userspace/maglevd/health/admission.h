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
 * The fleet's times of its verdict (fleet/fleet_health.c), derived from
 * what every balancer reads in etcd, so that each one holds, steps and
 * damps at the same instant: at, when the verdict began, in this
 * balancer's CLOCK_MONOTONIC ms (0: not known, the verdict counts from
 * now); left, for an up verdict: whether the down one before it lasted
 * settle_ms, so the backend left its table and ramps (1), came back within
 * it (0), or not known (-1: this balancer's own state decides).
 */
struct admission_at {
	uint64_t at;
	int left;
};

/*
 * Whether verdict up changes b's checks' state (b->up, or a passing state
 * damping keeps down): if not, nothing to do.
 */
bool admission_changes(const struct be *b, bool up);
/*
 * Apply verdict up to b of v at CLOCK_MONOTONIC ms now; serving: v had a
 * backend in its table before this batch; fa: the fleet's times (NULL: a
 * verdict of this balancer's own, which begins now). True: b->up changed,
 * log it with note (what follows the verdict's own reason, "" or "; held
 * ..."); false: damping keeps it down (logged here), b->up unchanged.
 */
bool admission_apply(const struct daemon *d, const struct vip *v, struct be *b, bool up,
		     bool serving, uint64_t now, const struct admission_at *fa, char *note,
		     size_t notelen);
/*
 * A fleet's verdict b has already: bring its hold's end and its ramp to the
 * fleet's times fa (they move when the voters' do, and a balancer that
 * started late or restarted takes them up here). True if b changes; only
 * with apply is it changed.
 */
bool admission_sync(const struct daemon *d, const struct vip *v, struct be *b, bool up,
		    uint64_t now, const struct admission_at *fa, bool apply);
/*
 * At the start, after the datapath said which backends are down: the holds,
 * ramps and penalties the state file kept (model/state.c) go on where they
 * are still due (a hold of a backend that is down, a ramp not yet at full
 * weight, a penalty with damping on), each logged; the others are dropped.
 */
void admission_restore(struct daemon *d);

#endif /* MAGLEVD_ADMISSION_H */
