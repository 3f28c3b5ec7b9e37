// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>

#include "core/log.h"

#include "health/admission.h"
#include "health/damping.h"
#include "model/admit.h"

bool admission_changes(const struct be *b, bool up)
{
	return up != (b->up || b->damped_up);
}

bool admission_apply(const struct daemon *d, const struct vip *v, struct be *b, bool up,
		     bool serving, uint64_t now, const struct admission_at *fa, char *note,
		     size_t notelen)
{
	uint64_t at = fa && fa->at ? fa->at : now, until = at + d->cfg.settle_ms;
	uint64_t ss = admit_slow_start_ms(v, &d->cfg);
	int left = fa && fa->at ? fa->left : -1;

	snprintf(note, notelen, "%s", "");
	/* A new backend's first pass (it started down, waiting for one) is
	 * its admission, not a flap. A fleet's flap counts from the fleet's
	 * time of it, so that the penalty decays alike everywhere.
	 */
	if (!(up && b->start_down) && damping_flap(&d->cfg, b, at))
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
	if (!up && admit_in_table(b) && d->cfg.settle_ms && until > now) {
		/* Marked at once, its slots kept until settle_ms. */
		b->held = true;
		b->held_until = until;
		snprintf(note, notelen, "; held in its slots for %llu ms",
			 (unsigned long long)(until - now));
	} else if (!up && admit_in_table(b) && d->cfg.settle_ms) {
		snprintf(note, notelen, "; down for settle_ms already by the fleet's times");
	} else if (up && (left == 0 || (left < 0 && b->held))) {
		/* Back within settle_ms: its slots (by the fleet's times also
		 * where this balancer had reassigned them: at full weight).
		 */
		if (!b->held) {
			b->ramp_start = 0;
			b->ramp_step = 0;
		}
		b->held = false;
		snprintf(note, notelen, "; back within settle_ms: no slot moved");
	} else if (up && (serving || b->held)) {
		b->held = false;
		admit_ramp_from(v, b, ss, at, now);
	}
	b->up = up;
	b->start_down = false;
	return true;
}

/* Fleet times that differ by less than this are the same (ms rounding). */
#define SYNC_SLACK_MS 20

static bool apart(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) > SYNC_SLACK_MS;
}

bool admission_sync(const struct daemon *d, const struct vip *v, struct be *b, bool up,
		    uint64_t now, const struct admission_at *fa, bool apply)
{
	uint64_t ss = admit_slow_start_ms(v, &d->cfg), until;

	if (!fa || !fa->at)
		return false;
	if (!up) {
		until = fa->at + d->cfg.settle_ms;
		if (!b->held && !b->up && !b->suppressed && b->weight && !b->drain && until > now) {
			/* Started (restarted: down as the datapath had it, or
			 * waiting for a first pass) while the others hold it:
			 * it is in their tables, so it is held in this one too.
			 */
			if (apply) {
				b->held = true;
				b->held_until = until;
				b->start_down = false;
			}
			return true;
		}
		if (!b->held || b->up || !apart(until, b->held_until))
			return false;
		if (apply)
			b->held_until = until;
		return true;
	}
	if (!b->up || fa->left < 0)
		return false;
	if (!fa->left || !admit_ramp_step_at(fa->at, ss, now)) {
		/* No ramp by the fleet's times: one of this balancer's ends. */
		if (!b->ramp_start)
			return false;
		if (apply) {
			b->ramp_start = 0;
			b->ramp_step = 0;
		}
		return true;
	}
	if (b->ramp_start ? !apart(b->ramp_start, fa->at) : !admit_ramp_other(v, b))
		return false;
	if (apply)
		admit_ramp_from(v, b, ss, fa->at, now);
	return true;
}

void admission_restore(struct daemon *d)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN], what[160];
	uint64_t now = mono_ms();
	uint32_t id, i;
	int n;

	for (id = 0; id < MAGLEV_MAX_VIPS; id++) {
		struct vip *v = d->reg->vips[id];

		for (i = 0; v && i < v->nbe; i++) {
			struct be *b = &v->bes[i];

			n = 0;
			if (b->held && (b->up || now >= b->held_until || !d->cfg.settle_ms))
				b->held = false;
			if (b->held)
				n += snprintf(what + n, sizeof(what) - n,
					      "; held in its slots for %llu ms more",
					      (unsigned long long)(b->held_until - now));
			if (b->ramp_start) {
				b->ramp_step =
					admit_ramp_step(b, admit_slow_start_ms(v, &d->cfg), now);
				if (!b->ramp_step)
					b->ramp_start = 0;
			}
			if (b->ramp_start)
				n += snprintf(what + n, sizeof(what) - n,
					      "; ramping at step %u of %u", b->ramp_step,
					      ADMIT_RAMP_STEPS);
			/* A suppressed one decayed under reuse meanwhile: reused at
			 * the first tick (settle.c), logged as such.
			 */
			if (!d->cfg.damping_penalty ||
			    (!b->suppressed && !damping_penalty(&d->cfg, b, now)))
				b->penalty = 0;
			if (!b->penalty)
				b->suppressed = false;
			if (!b->suppressed || b->up)
				b->damped_up = false;
			if (b->penalty)
				n += snprintf(what + n, sizeof(what) - n, "; penalty %u%s",
					      damping_penalty(&d->cfg, b, now),
					      b->suppressed ? ", suppressed" : "");
			if (!n)
				continue;
			ctl_format_vip(&v->key, vname, sizeof(vname));
			ctl_format_addr(&b->addr, bname, sizeof(bname));
			log_info("restart: backend %s of %s goes on from the state file: %s", bname,
				 vname, what + 2);
		}
	}
}
