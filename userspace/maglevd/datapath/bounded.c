// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/bounded.h"
#include "datapath/flow_count.h"
#include "core/log.h"
#include "model/admit.h"
#include "model/registry.h"
#include "datapath/slowpath.h"

/*
 * By backend index (indices are per VIP): the mark written to the datapath,
 * the one this tick wants, whether it is over cap, and the load computed.
 * A backend held in its slots while down (settle_ms, model/admit.h) is
 * marked the same way: one map, so XDP and the module honour both alike.
 */
static uint8_t marked[MAGLEV_MAX_BACKENDS], want[MAGLEV_MAX_BACKENDS], over[MAGLEV_MAX_BACKENDS];
static uint64_t load[MAGLEV_MAX_BACKENDS];
static uint64_t caps[MAGLEV_MAX_VIPS];
static bool active, read_back;

static bool in_table(const struct be *b)
{
	return b->up && !b->drain && b->weight;
}

/*
 * Loads of v's backends in the table: the latest census plus the flows the
 * datapath picked the backend for since that census began (entries that
 * ended since are dropped at the next census: between two, a load can only
 * be high, never low). cap = ceil(C * mean); marks. No census with the
 * counts yet: no marks.
 */
static void vip_marks(struct daemon *d, struct vip *v)
{
	uint64_t total = 0, n = 0, cap;
	uint32_t i;

	for (i = 0; i < v->nbe; i++) {
		const struct be *b = &v->bes[i];
		struct maglev_backend_stats s;
		uint64_t c, nf0, nf = 0;

		if (!in_table(b))
			continue;
		if (!flow_count_backend_load(b->idx, &c, &nf0))
			return;
		if (!maglev_dp_backend_stats(d->dp, b->idx, &s))
			nf = s.new_flows;
		load[b->idx] = c + (nf > nf0 ? nf - nf0 : 0);
		total += load[b->idx];
		n++;
	}
	if (!n || !total)
		return;
	/* ceil(milli * total / (1000 * n)) in integers. */
	cap = ((uint64_t)v->balance_milli * total + 1000 * n - 1) / (1000 * n);
	caps[v->id] = cap;
	for (i = 0; i < v->nbe; i++) {
		const struct be *b = &v->bes[i];

		if (in_table(b) && load[b->idx] >= cap)
			want[b->idx] = over[b->idx] = 1;
	}
}

void bounded_tick(struct daemon *d)
{
	struct registry *r = d->reg;
	bool any = false, changed = false;
	uint32_t id, i, below = 0;

	/* The map is pinned: it outlives a maglevd killed with marks set.
	 * Start from what it holds, not from "none", so that a mark no backend
	 * wants any more is cleared (one left on a healthy backend sent its new
	 * flows past it for good). An unreadable entry counts as marked: it is
	 * then written either way.
	 */
	if (!read_back) {
		for (i = 1; i < MAGLEV_MAX_BACKENDS; i++) {
			bool m = true;

			maglev_dp_overcap_get(d->dp, i, &m);
			marked[i] = m;
		}
		read_back = true;
		changed = true; /* the module gets the set read back */
	}
	memset(want, 0, sizeof(want));
	memset(over, 0, sizeof(over));
	memset(caps, 0, sizeof(caps));
	for (id = 0; r && id < MAGLEV_MAX_VIPS; id++) {
		struct vip *v = r->vips[id];

		for (i = 0; v && i < v->nbe; i++)
			if (admit_marked(&v->bes[i]))
				want[v->bes[i].idx] = 1;
		if (!v || !v->balance_milli)
			continue;
		any = true;
		for (i = 0; i < v->nbe; i++)
			if (v->bes[i].idx >= below)
				below = v->bes[i].idx + 1;
		vip_marks(d, v);
	}
	/* Only changes are written; a failed write is retried next tick. */
	for (i = 1; i < MAGLEV_MAX_BACKENDS; i++) {
		if (want[i] == marked[i])
			continue;
		if (!maglev_dp_overcap_set(d->dp, i, want[i])) {
			marked[i] = want[i];
			changed = true;
			log_debug("marks: backend index %u %s (load %llu)", i,
				  want[i] ? (over[i] ? "over cap" : "held down") : "unmarked again",
				  (unsigned long long)load[i]);
		}
	}
	/* The slow-path module gets the marks XDP now holds, as one set. */
	if (changed)
		slowpath_overcap(marked);
	active = any;
	flow_count_fast(any, below);
}

bool bounded_active(void)
{
	return active;
}

uint64_t bounded_cap(uint32_t vip_id)
{
	return vip_id < MAGLEV_MAX_VIPS ? caps[vip_id] : 0;
}

const uint8_t *bounded_marks(void)
{
	return marked;
}

bool bounded_marked(uint32_t idx)
{
	return idx < MAGLEV_MAX_BACKENDS && marked[idx] && over[idx];
}

uint64_t bounded_load(uint32_t idx)
{
	return idx < MAGLEV_MAX_BACKENDS ? load[idx] : 0;
}
