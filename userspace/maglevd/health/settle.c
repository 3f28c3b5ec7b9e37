// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>

#include "core/log.h"
#include "health/damping.h"
#include "health/settle.h"
#include "model/admit.h"

/* Whether b of v has a timed change due at now; do it if apply. */
static bool due(const struct daemon *d, const struct vip *v, struct be *b, uint64_t now, bool apply)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	uint32_t step;

	if (b->suppressed && damping_penalty(&d->cfg, b, now) < d->cfg.damping_reuse) {
		if (!apply)
			return true;
		damping_reuse(&d->cfg, b, now);
		damping_log(d, v, b, "reused", now);
		if (!b->damped_up)
			return true;
		/* Its checks pass: up now, with its slots if it is still held. */
		b->damped_up = false;
		b->up = true;
		if (b->held)
			b->held = false;
		else
			admit_ramp_start(v, b, admit_slow_start_ms(v, &d->cfg), now);
		return true;
	}
	if (b->held && !b->up && now >= b->held_until) {
		if (!apply)
			return true;
		b->held = false;
		ctl_format_vip(&v->key, vname, sizeof(vname));
		ctl_format_addr(&b->addr, bname, sizeof(bname));
		log_info("settle: backend %s of %s down for settle_ms %llu: its slots are "
			 "reassigned",
			 bname, vname, (unsigned long long)d->cfg.settle_ms);
		return true;
	}
	if (!b->ramp_start)
		return false;
	step = admit_ramp_step(b, admit_slow_start_ms(v, &d->cfg), now);
	if (step == b->ramp_step && step)
		return false;
	if (!apply)
		return true;
	b->ramp_step = step;
	if (!step)
		b->ramp_start = 0;
	ctl_format_vip(&v->key, vname, sizeof(vname));
	ctl_format_addr(&b->addr, bname, sizeof(bname));
	log_info("slow start: backend %s of %s at step %u of %u (weight %u)", bname, vname,
		 step ? step : ADMIT_RAMP_STEPS, ADMIT_RAMP_STEPS, b->weight);
	return true;
}

void settle_tick(struct daemon *d)
{
	struct registry *next = NULL;
	uint64_t now = mono_ms();
	uint32_t id, i, n = 0;
	char err[300];

	for (id = 0; id < MAGLEV_MAX_VIPS; id++) {
		struct vip *v = d->reg->vips[id], *nv;

		for (i = 0; v && i < v->nbe; i++) {
			if (!due(d, v, &v->bes[i], now, false))
				continue;
			if (!next)
				next = registry_clone(d->reg);
			if (!next) {
				log_err("settle: out of memory");
				return;
			}
			nv = next->vips[id];
			due(d, nv, &nv->bes[i], now, true);
			nv->dirty = true;
			n++;
		}
	}
	if (next && daemon_commit(d, next, COMMIT_SRC_HEALTH, err, sizeof(err)))
		log_err("settle: applying %u timed changes: %s", n, err);
}
