// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <math.h>

#include "core/daemon.h"
#include "core/log.h"
#include "health/damping.h"

uint32_t damping_penalty(const struct maglevd_config *cfg, const struct be *b, uint64_t now)
{
	double age;

	if (!b->penalty || !cfg->damping_half_life_ms)
		return b->penalty;
	age = now > b->penalty_ms ? (double)(now - b->penalty_ms) : 0;
	return (uint32_t)(b->penalty * exp2(-age / (double)cfg->damping_half_life_ms));
}

bool damping_flap(const struct maglevd_config *cfg, struct be *b, uint64_t now)
{
	uint64_t p;

	if (!cfg->damping_penalty)
		return false;
	p = (uint64_t)damping_penalty(cfg, b, now) + cfg->damping_penalty;
	if (p > 4ULL * cfg->damping_suppress)
		p = 4ULL * cfg->damping_suppress;
	b->penalty = (uint32_t)p;
	b->penalty_ms = now;
	if (b->suppressed || p < cfg->damping_suppress)
		return false;
	b->suppressed = true;
	return true;
}

bool damping_reuse(const struct maglevd_config *cfg, struct be *b, uint64_t now)
{
	if (!b->suppressed || damping_penalty(cfg, b, now) >= cfg->damping_reuse)
		return false;
	b->suppressed = false;
	return true;
}

void damping_log(const struct daemon *d, const struct vip *v, const struct be *b, const char *what,
		 uint64_t now)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];

	ctl_format_vip(&v->key, vname, sizeof(vname));
	ctl_format_addr(&b->addr, bname, sizeof(bname));
	log_info("damping: backend %s of %s %s: penalty %u, suppressed at %u until below %u "
		 "(half-life %llu ms)",
		 bname, vname, what, damping_penalty(&d->cfg, b, now), d->cfg.damping_suppress,
		 d->cfg.damping_reuse, (unsigned long long)d->cfg.damping_half_life_ms);
}
