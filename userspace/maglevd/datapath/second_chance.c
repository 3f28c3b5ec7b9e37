// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <time.h>

#include "core/daemon.h"
#include "core/log.h"
#include "maglev_second.h"
#include "datapath/second_chance.h"
#include "datapath/slowpath.h"
#include "datapath/table_swap.h"

/* The live table, read back (one daemon thread uses these). */
static uint32_t live_owner[MAGLEV_TABLE_SIZE], live_prev[MAGLEV_TABLE_SIZE];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const uint32_t *second_chance_prev(struct vip *v, const struct registry_ctx *ctx,
				   const uint32_t *owner, uint32_t *prev)
{
	double now = now_ms();
	bool keep_old = v->sc_until_ms > now, any = false, changed = false;
	uint32_t i;

	if (!v->second_chance || v->encap != MAGLEV_ENCAP_GUE) {
		v->sc_until_ms = 0;
		return NULL;
	}
	/* A VIP's first table: nothing had an owner before. */
	if (maglev_dp_table_read_prev(ctx->dp, v->id, live_owner, live_prev)) {
		v->sc_until_ms = 0;
		return NULL;
	}
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		uint32_t p = 0;

		if (live_owner[i] && live_owner[i] != owner[i]) {
			p = live_owner[i];
			changed = true;
		} else if (keep_old && live_prev[i] != owner[i])
			p = live_prev[i];
		prev[i] = p;
		any |= p != 0;
	}
	if (!any) {
		v->sc_until_ms = 0;
		return NULL;
	}
	/* The window runs from the last change of an owner: from now, and
	 * again once the table is live (second_chance_live).
	 */
	if (changed) {
		v->sc_until_ms = now + (double)ctx->cfg->second_chance_ms;
		v->sc_from_live = true;
	}
	return prev;
}

void second_chance_live(struct vip *v, const struct registry_ctx *ctx)
{
	if (!v || !v->sc_from_live)
		return;
	v->sc_from_live = false;
	if (v->sc_until_ms)
		v->sc_until_ms = now_ms() + (double)ctx->cfg->second_chance_ms;
}

void second_chance_adopt(struct daemon *d)
{
	double now = now_ms();
	uint32_t i, j, n;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		struct vip *v = d->reg->vips[i];

		if (!v || !v->second_chance || v->encap != MAGLEV_ENCAP_GUE ||
		    maglev_dp_table_read_prev(d->dp, v->id, live_owner, live_prev))
			continue;
		for (j = n = 0; j < MAGLEV_TABLE_SIZE; j++)
			n += live_prev[j] != 0;
		if (!n)
			continue;
		v->sc_until_ms = now + (double)d->cfg.second_chance_ms;
		log_info("second chance: VIP %u's live table carries %u previous owners: kept for "
			 "another %llu ms",
			 v->id, n, (unsigned long long)d->cfg.second_chance_ms);
	}
}

uint64_t second_chance_left_ms(const struct vip *v)
{
	double left = v->sc_until_ms - now_ms();

	return v->sc_until_ms && left > 0 ? (uint64_t)left : 0;
}

void second_chance_tick(struct daemon *d)
{
	double now = now_ms();
	uint32_t i;
	int r;

	/* A table read now could be one a queued swap is about to replace. */
	if (!d->reg || daemon_commit_busy() || table_swap_pending())
		return;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		struct vip *v = d->reg->vips[i];

		if (!v || !v->sc_until_ms || v->sc_until_ms > now)
			continue;
		/* Bookkeeping only: the owners stay what the registry built. */
		v->sc_until_ms = 0;
		r = maglev_dp_table_read(d->dp, v->id, live_owner);
		if (r) {
			log_warn("second chance: reading the table of VIP %u: %s", v->id,
				 strerror(-r));
			continue;
		}
		/* Off the loop; an error is logged when the swap returns. */
		table_swap_submit(d->dp, v->id, live_owner, NULL, false);
		log_debug("second chance: VIP %u: previous owners dropped", v->id);
		/* The module's copy too (same generation: only prev changed). */
		slowpath_table(v, live_owner, NULL);
	}
}
