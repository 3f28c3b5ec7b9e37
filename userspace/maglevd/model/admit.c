// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "model/admit.h"
#include "placement.h"

bool admit_in_table(const struct be *b)
{
	return (b->up || b->held) && !b->drain && b->weight;
}

bool admit_marked(const struct be *b)
{
	return b->held && !b->up;
}

bool admit_scaled(const struct vip *v)
{
	uint32_t i, maxw = 0;
	bool ramp = false;

	if (v->placement == MAGLEV_PLACEMENT_RING)
		return false;
	for (i = 0; i < v->nbe; i++) {
		if (!admit_in_table(&v->bes[i]))
			continue;
		ramp |= v->bes[i].ramp_step > 0;
		if (v->bes[i].weight > maxw)
			maxw = v->bes[i].weight;
	}
	return ramp && (uint64_t)maxw * ADMIT_RAMP_STEPS <= MAGLEV_WEIGHT_MAX;
}

uint32_t admit_table_weight(const struct be *b, bool scaled)
{
	uint32_t w;

	if (!admit_in_table(b))
		return 0;
	if (scaled)
		return b->weight * (b->ramp_step ? b->ramp_step : ADMIT_RAMP_STEPS);
	if (!b->ramp_step)
		return b->weight;
	w = (uint32_t)((uint64_t)b->weight * b->ramp_step / ADMIT_RAMP_STEPS);
	return w ? w : 1;
}

uint64_t admit_slow_start_ms(const struct vip *v, const struct maglevd_config *cfg)
{
	return v->slow_start_ms >= 0 ? (uint64_t)v->slow_start_ms : cfg->slow_start_ms;
}

uint32_t admit_ramp_step_at(uint64_t start, uint64_t slow_start_ms, uint64_t now)
{
	uint64_t step;

	if (!start || !slow_start_ms)
		return 0;
	if (now < start)
		return 1;
	step = 1 + (now - start) * ADMIT_RAMP_STEPS / slow_start_ms;
	return step >= ADMIT_RAMP_STEPS ? 0 : (uint32_t)step;
}

uint32_t admit_ramp_step(const struct be *b, uint64_t slow_start_ms, uint64_t now)
{
	return admit_ramp_step_at(b->ramp_start, slow_start_ms, now);
}

bool admit_serving(const struct vip *v)
{
	uint32_t i;

	for (i = 0; v && i < v->nbe; i++)
		if (admit_in_table(&v->bes[i]))
			return true;
	return false;
}

bool admit_ramp_other(const struct vip *v, const struct be *b)
{
	uint32_t i;

	for (i = 0; i < v->nbe; i++)
		if (&v->bes[i] != b && admit_in_table(&v->bes[i]) && !v->bes[i].ramp_step)
			return true;
	return false;
}

void admit_ramp_start(const struct vip *v, struct be *b, uint64_t slow_start_ms, uint64_t now)
{
	b->ramp_start = 0;
	b->ramp_step = 0;
	if (!slow_start_ms || !admit_ramp_other(v, b))
		return;
	b->ramp_start = now ? now : 1;
	b->ramp_step = 1;
}

void admit_ramp_from(const struct vip *v, struct be *b, uint64_t slow_start_ms, uint64_t start,
		     uint64_t now)
{
	admit_ramp_start(v, b, slow_start_ms, start);
	if (!b->ramp_start)
		return;
	b->ramp_step = admit_ramp_step(b, slow_start_ms, now);
	if (!b->ramp_step)
		b->ramp_start = 0;
}
