// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Health verdicts wait here for the end of the tick, then reach the
 * registry in one commit: a VIP's table is rebuilt once for all of its
 * backends that changed, however many died at once. One commit per verdict
 * rebuilt the table 300 times when 300 backends died together, and verdicts
 * found inside the tick (timeouts) landed one per tick, 30 s for 300.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "core/daemon.h"
#include "fleet/fleet_health.h"
#include "health/health_changes.h"
#include "core/log.h"
#include "health/admission.h"
#include "model/admit.h"

struct verdict {
	uint32_t vip_id, idx, gen;
	bool up;
	char why[96];
};

static struct verdict *q;
static uint32_t nq, capq;
/* 1 + position in q of the verdict waiting for a backend index; 0: none. */
static uint32_t pos[MAGLEV_MAX_BACKENDS];

bool health_verdict_pending(uint32_t idx, uint32_t gen, bool *up)
{
	const struct verdict *w = pos[idx] ? &q[pos[idx] - 1] : NULL;

	if (!w || w->gen != gen)
		return false;
	*up = w->up;
	return true;
}

void health_verdict(uint32_t vip_id, uint32_t idx, uint32_t gen, bool up, const char *why)
{
	struct verdict *w;

	if (!pos[idx]) {
		if (nq == capq) {
			uint32_t cap = capq ? capq * 2 : 64;

			w = realloc(q, cap * sizeof(*q));
			if (!w) {
				log_err("health: out of memory queueing a state change");
				return;
			}
			q = w;
			capq = cap;
		}
		pos[idx] = ++nq;
	}
	/* A later verdict for the same backend replaces the earlier one. */
	w = &q[pos[idx] - 1];
	w->vip_id = vip_id;
	w->idx = idx;
	w->gen = gen;
	w->up = up;
	snprintf(w->why, sizeof(w->why), "%s", why);
}

/* Flip the backends of v that have a verdict, each noted in cs for the log;
 * returns how many changed.
 */
static uint32_t apply_vip(const struct daemon *d, struct vip *v, struct health_changes *cs)
{
	char why[sizeof(q->why) + 72], note[64];
	uint64_t now = mono_ms();
	uint32_t i, n = 0;
	/* Judged before this batch: one VIP's backends returning together to an
	 * empty table ramp none.
	 */
	bool serving = admit_serving(v);

	for (i = 0; i < v->nbe; i++) {
		struct be *b = &v->bes[i];
		const struct verdict *w = pos[b->idx] ? &q[pos[b->idx] - 1] : NULL;

		/* A verdict for an index since given to another backend is stale;
		 * one that is its checks' state already is no change.
		 */
		if (!w || w->gen != b->gen || w->vip_id != v->id || !admission_changes(b, w->up))
			continue;
		n++;
		if (!admission_apply(d, v, b, w->up, serving, now, NULL, note, sizeof(note)))
			continue;
		snprintf(why, sizeof(why), "(%s%s)", w->why, note);
		health_changes_add(cs, v, b, w->up, why);
	}
	if (n)
		v->dirty = true;
	return n;
}

/*
 * Every backend of a VIP down: when they all fail, the cause is more often on
 * this balancer's side than on each backend's, so the log names where to look
 * (the outer source prefix the backends' strict decap must allow first: a
 * changed src4_prefix silently blackholed every VIP).
 */
static void all_down_hint(const struct daemon *d, const struct vip *v)
{
	char name[CTL_ADDR_STRLEN];
	uint32_t i;

	if (v->nbe < 2)
		return;
	for (i = 0; i < v->nbe; i++)
		if (v->bes[i].up)
			return;
	ctl_format_vip(&v->key, name, sizeof(name));
	log_warn("health: every backend of %s failed its checks (%u of %u): when all fail, look at "
		 "this "
		 "balancer first: the backends' decap must allow its outer sources (src4_prefix, "
		 "src6_prefix; maglev-decap show: drop_src rising), the next hop and MTU "
		 "(maglevctl status), health_via_encap",
		 name, v->nbe, v->nbe);
}

/* health_scope fleet: the verdicts are this balancer's vote, not the table's input. */
static void vote(struct daemon *d)
{
	uint32_t i, j;

	for (i = 0; i < nq; i++) {
		const struct vip *v = d->reg->vips[q[i].vip_id];

		for (j = 0; v && j < v->nbe; j++)
			if (v->bes[j].idx == q[i].idx && v->bes[j].gen == q[i].gen)
				fleet_health_local(v, &v->bes[j], q[i].up, q[i].why);
	}
}

void health_verdicts_apply(struct daemon *d)
{
	static bool seen[MAGLEV_MAX_VIPS];
	struct health_changes *cs;
	struct registry *next;
	uint32_t i, n = 0, nvips = 0;
	char err[300];

	if (!nq)
		return;
	if (fleet_health_on(d)) {
		vote(d);
		goto out;
	}
	next = registry_clone(d->reg);
	if (!next) {
		log_err("health: out of memory applying %u state changes", nq);
		goto out;
	}
	cs = health_changes_new();
	for (i = 0; i < nq; i++) {
		struct vip *v = next->vips[q[i].vip_id];
		uint32_t c;

		if (!v || seen[v->id])
			continue;
		seen[v->id] = true;
		c = apply_vip(d, v, cs);
		n += c;
		nvips += c > 0;
		if (c)
			all_down_hint(d, v);
	}
	if (!n) {
		health_changes_free(cs);
		registry_free(next);
		goto out;
	}
	if (health_changes_commit(d, next, COMMIT_SRC_HEALTH, cs, err, sizeof(err)))
		log_err("health: applying %u state changes: %s", n, err);
	else if (n > 1)
		log_info("health: %u state changes in one commit (%u VIP table%s rebuilt)", n,
			 nvips, nvips == 1 ? "" : "s");
out:
	for (i = 0; i < nq; i++) {
		seen[q[i].vip_id] = false;
		pos[q[i].idx] = 0;
	}
	nq = 0;
}
