// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/daemon.h"
#include "model/admit.h"
#include "model/vip_sync.h"

/*
 * A VIP's backends by address (open addressing, slot = index + 1): a VIP
 * may hold tens of thousands, and a search per backend would be quadratic.
 */
struct be_index {
	uint32_t *slot;
	uint32_t mask;
};

static uint32_t addr_hash(const struct ctl_addr *a)
{
	const uint8_t *p = (const uint8_t *)a->addr;
	uint32_t h = 2166136261u ^ a->family;
	size_t i;

	for (i = 0; i < sizeof(a->addr); i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int be_index_build(struct be_index *x, const struct vip *v)
{
	uint32_t n = 16, i, s;

	while (n < 2 * v->nbe)
		n *= 2;
	x->slot = calloc(n, sizeof(*x->slot));
	if (!x->slot)
		return -ENOMEM;
	x->mask = n - 1;
	for (i = 0; i < v->nbe; i++) {
		for (s = addr_hash(&v->bes[i].addr) & x->mask; x->slot[s]; s = (s + 1) & x->mask)
			;
		x->slot[s] = i + 1;
	}
	return 0;
}

static struct be *be_index_find(const struct be_index *x, const struct vip *v,
				const struct ctl_addr *a)
{
	uint32_t s;

	for (s = addr_hash(a) & x->mask; x->slot[s]; s = (s + 1) & x->mask) {
		struct be *b = &v->bes[x->slot[s] - 1];

		if (b->addr.family == a->family && !memcmp(b->addr.addr, a->addr, sizeof(a->addr)))
			return b;
	}
	return NULL;
}

/* v's health-check overrides with what is not set zeroed: equal overrides
 * compare equal whatever the unset fields hold.
 */
static void hc_overrides(const struct vip *v, struct hc_params *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < HC_NFIELDS; i++)
		if (v->hc_set & hc_fields[i].bit)
			hc_field_copy(out, &v->hc, &hc_fields[i]);
}

/* v's settings made w's, marked as vip.set marks them; true if any differed. */
static bool sync_settings(struct vip *v, const struct vip *w, const struct registry_ctx *ctx)
{
	struct hc_params a, b;
	bool changed = false;

	if (v->encap != w->encap || v->gue_port != w->gue_port ||
	    v->second_chance != w->second_chance) {
		v->info_dirty = true;
		changed = true;
	}
	if (v->placement != w->placement || v->vnodes != w->vnodes) {
		v->dirty = true;
		changed = true;
	}
	changed |= v->balance_milli != w->balance_milli;
	changed |= v->slow_start_ms != w->slow_start_ms;
	changed |= v->hot_threshold != w->hot_threshold;
	hc_overrides(v, &a);
	hc_overrides(w, &b);
	if (v->hc_set != w->hc_set || memcmp(&a, &b, sizeof(a))) {
		vip_hc(v, &ctx->cfg->hc, &a);
		vip_hc(w, &ctx->cfg->hc, &b);
		/* A new on_fail rewrites the failed backends' flags. */
		if (a.on_fail != b.on_fail)
			v->dirty = true;
		changed = true;
	}
	v->encap = w->encap;
	v->gue_port = w->gue_port;
	v->second_chance = w->second_chance;
	v->placement = w->placement;
	v->vnodes = w->vnodes;
	v->balance_milli = w->balance_milli;
	v->slow_start_ms = w->slow_start_ms;
	v->hot_threshold = w->hot_threshold;
	v->hc = w->hc;
	v->hc_set = w->hc_set;
	return changed;
}

/* v's backends made w's: those gone deleted, new ones added (down if w's
 * were added with start_down), weight and drain set. True in *changed if
 * any differed.
 */
static int sync_backends(struct registry *r, const struct registry_ctx *ctx, struct vip *v,
			 const struct vip *w, bool *changed, char *err, size_t errlen)
{
	bool serving = admit_serving(v); /* before this sync: slow start, admit.h */
	struct be_index x;
	uint32_t i;
	int ret;

	if (be_index_build(&x, w))
		goto oom;
	for (i = 0; i < v->nbe;) {
		struct ctl_addr a = v->bes[i].addr;

		if (be_index_find(&x, w, &a)) {
			i++;
			continue;
		}
		/* The last backend moves to i: look at i again. */
		ret = registry_be_del(r, v, &a, err, errlen);
		if (ret) {
			free(x.slot);
			return ret;
		}
		*changed = true;
	}
	free(x.slot);
	if (be_index_build(&x, v))
		goto oom;
	for (i = 0, ret = 0; i < w->nbe && !ret; i++) {
		const struct be *wb = &w->bes[i];
		struct be *b = be_index_find(&x, v, &wb->addr);

		if (b) {
			if (b->weight != wb->weight || b->drain != wb->drain) {
				b->weight = wb->weight;
				b->drain = wb->drain;
				v->dirty = true;
				*changed = true;
			}
			continue;
		}
		ret = registry_be_add(r, ctx, v, &wb->addr, wb->weight, wb->drain, -1, 0, err,
				      errlen);
		if (!ret && wb->start_down) {
			b = &v->bes[v->nbe - 1];
			b->up = false;
			b->start_down = true;
		} else if (!ret && serving) {
			/* Every balancer applies the same revision: the same steps. */
			admit_ramp_start(v, &v->bes[v->nbe - 1], admit_slow_start_ms(v, ctx->cfg),
					 mono_ms());
		}
		*changed = true;
	}
	free(x.slot);
	return ret;
oom:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int registry_sync(struct registry *r, const struct registry_ctx *ctx, const struct registry *want,
		  char *err, size_t errlen)
{
	int n = 0, ret;
	uint32_t i;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = r->vips[i];

		if (v && !registry_find_vip(want, &v->key)) {
			ret = registry_vip_del(r, &v->key, err, errlen);
			if (ret)
				return ret;
			n++;
		}
	}
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *w = want->vips[i];
		struct vip *v;
		bool changed = false;

		if (!w)
			continue;
		v = registry_find_vip(r, &w->key);
		if (!v) {
			ret = registry_vip_add(r, ctx, &w->key, w->encap, w->gue_port, &w->hc,
					       w->hc_set, -1, err, errlen);
			if (ret)
				return ret;
			v = registry_find_vip(r, &w->key);
			changed = true;
		}
		changed |= sync_settings(v, w, ctx);
		ret = sync_backends(r, ctx, v, w, &changed, err, errlen);
		if (ret)
			return ret;
		n += changed;
	}
	return n;
}
