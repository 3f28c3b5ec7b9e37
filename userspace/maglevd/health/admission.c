// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>

#include "health/admission.h"
#include "health/damping.h"
#include "model/admit.h"

bool admission_changes(const struct be *b, bool up)
{
	return up != (b->up || b->damped_up);
}

bool admission_apply(const struct daemon *d, const struct vip *v, struct be *b, bool up,
		     bool serving, uint64_t now, char *note, size_t notelen)
{
	snprintf(note, notelen, "%s", "");
	/* A new backend's first pass (it started down, waiting for one) is
	 * its admission, not a flap.
	 */
	if (!(up && b->start_down) && damping_flap(&d->cfg, b, now))
		damping_log(d, v, b, "suppressed", now);
	if (!up && b->damped_up) {
		/* Down again while damping kept it down: nothing to apply. */
		b->damped_up = false;
		return false;
	}
	if (up && b->suppressed) {
		b->damped_up = true;
		damping_log(d, v, b, "passes its checks but stays down", now);
		return false;
	}
	if (!up && admit_in_table(b) && d->cfg.settle_ms) {
		/* Marked at once, its slots kept until settle_ms. */
		b->held = true;
		b->held_until = now + d->cfg.settle_ms;
		snprintf(note, notelen, "; held in its slots for %llu ms",
			 (unsigned long long)d->cfg.settle_ms);
	} else if (up && b->held) {
		b->held = false;
		snprintf(note, notelen, "; back within settle_ms: no slot moved");
	} else if (up && serving) {
		admit_ramp_start(v, b, admit_slow_start_ms(v, &d->cfg), now);
	}
	b->up = up;
	b->start_down = false;
	return true;
}
