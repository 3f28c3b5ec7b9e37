// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The datapath writer: what a commit writes to the BPF maps (and mirrors to
 * the slow-path module) to take the datapath from one registry to the next.
 * The registry itself, the data model, is registry.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/admit.h"
#include "datapath/drift.h"
#include "core/log.h"
#include "placement.h"
#include "model/registry.h"
#include "datapath/second_chance.h"
#include "datapath/slowpath.h"
#include "datapath/table_swap.h"

/* In the table, draining, or neither. A failed backend of an on_fail drain
 * VIP keeps its established flows: draining, not gone.
 */
uint8_t registry_be_flags(const struct be *b, enum hc_on_fail on_fail)
{
	if (!b->up)
		return on_fail == HC_ON_FAIL_DRAIN && !b->start_down ? MAGLEV_BACKEND_F_DRAIN : 0;
	/* Weight 0 takes no new flows but keeps its own, like drain. */
	if (b->drain || !b->weight)
		return MAGLEV_BACKEND_F_DRAIN;
	return MAGLEV_BACKEND_F_UP;
}

static int write_backend(const struct registry_ctx *ctx, const struct be *b, uint8_t flags,
			 char *err, size_t errlen)
{
	struct maglev_backend mb;
	int r;

	memset(&mb, 0, sizeof(mb));
	memcpy(mb.addr, b->addr.addr, sizeof(mb.addr));
	mb.family = b->addr.family;
	mb.flags = flags;
	mb.gen = b->gen;
	r = maglev_dp_backend_set(ctx->dp, b->idx, &mb);
	if (r)
		snprintf(err, errlen, "datapath: writing backend %u: %s", b->idx, strerror(-r));
	return r;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Scratch space for one table build (one daemon thread). */
static uint32_t tbl_pos[MAGLEV_TABLE_SIZE];
static uint32_t tbl_idx[MAGLEV_TABLE_SIZE];
static uint32_t tbl_prev[MAGLEV_TABLE_SIZE];
static const struct be *old_by_idx[MAGLEV_MAX_BACKENDS];

/* Keep a rendezvous VIP's build for the next one (taking *specs); any other
 * VIP keeps none. Without memory the next build is a full one, nothing worse.
 */
static void remember_rendezvous(struct vip *v, const struct registry_ctx *ctx,
				struct maglev_backend_spec **specs, uint32_t n)
{
	struct rdv_memo *m = NULL;

	if (v->placement == MAGLEV_PLACEMENT_RENDEZVOUS && n)
		m = malloc(sizeof(*m));
	if (m) {
		m->refs = 1;
		m->seed = ctx->cfg->seed;
		m->n = n;
		m->specs = *specs;
		*specs = NULL;
		memcpy(m->table, tbl_pos, sizeof(m->table));
	}
	registry_rdv_put(v->rdv);
	v->rdv = m;
}

static int rebuild_table(struct vip *v, const struct registry_ctx *ctx, char *err, size_t errlen)
{
	struct maglev_backend_spec *specs;
	uint32_t *map, n = 0, i;
	const uint32_t *prev;
	struct maglev_err merr;
	double t0 = now_ms(), t1;
	bool scaled = admit_scaled(v);
	int r = 0;

	specs = calloc(v->nbe ? v->nbe : 1, sizeof(*specs));
	map = calloc(v->nbe ? v->nbe : 1, sizeof(*map));
	if (!specs || !map) {
		free(specs);
		free(map);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < v->nbe; i++) {
		const struct be *b = &v->bes[i];

		/* Held (down within settle_ms) stays in: its mark steers new flows. */
		if (!admit_in_table(b))
			continue;
		specs[n].family = b->addr.family;
		memcpy(specs[n].addr, b->addr.addr, sizeof(specs[n].addr));
		specs[n].weight = admit_table_weight(b, scaled);
		map[n] = b->idx;
		n++;
	}
	if (n) {
		struct maglev_placement_cfg pc = {.kind = v->placement, .vnodes = v->vnodes};
		const struct rdv_memo *m = v->rdv;

		if (v->placement == MAGLEV_PLACEMENT_RENDEZVOUS && m &&
		    !memcmp(&m->seed, &ctx->cfg->seed, sizeof(m->seed)))
			r = maglev_rendezvous_update(&ctx->cfg->seed, m->specs, m->n, m->table,
						     specs, n, MAGLEV_TABLE_SIZE, tbl_pos, &merr);
		else
			r = maglev_placement_build(&ctx->cfg->seed, &pc, specs, n,
						   MAGLEV_TABLE_SIZE, tbl_pos, &merr);
		if (r) {
			snprintf(err, errlen, "table build: %s", merr.msg);
			goto out;
		}
		for (i = 0; i < MAGLEV_TABLE_SIZE; i++)
			tbl_idx[i] = map[tbl_pos[i]];
	} else {
		/* No usable backend: every slot says "none" and the datapath drops. */
		memset(tbl_idx, 0, sizeof(tbl_idx));
	}
	t1 = now_ms();
	/* Queued: registry_commit_finish() runs once every swap has returned. */
	prev = second_chance_prev(v, ctx, tbl_idx, tbl_prev);
	table_swap_submit(ctx->dp, v->id, tbl_idx, prev, true);
	log_debug("table of VIP %u: build %.3f ms, queued in %.3f ms", v->id, t1 - t0,
		  now_ms() - t1);
	v->table_gen++;
	v->built_seed = ctx->cfg->seed;
	v->table_slots_used = n;
	v->digest = drift_table_digest(v, tbl_idx);
	remember_rendezvous(v, ctx, &specs, n);
	slowpath_table(v, tbl_idx, prev);
	v->rebuild_ms = now_ms() - t0;
out:
	free(specs);
	free(map);
	return r;
}

static int write_vip_info(const struct vip *v, const struct registry_ctx *ctx, char *err,
			  size_t errlen)
{
	struct maglev_vip_info info = {
		.vip_id = v->id,
		.encap = v->encap,
		.flags = v->second_chance ? MAGLEV_VIP_F_SECOND_CHANCE : 0,
		.gue_port = htons(v->gue_port),
	};
	int r = maglev_dp_vip_set(ctx->dp, &v->key, &info);

	if (r)
		snprintf(err, errlen, "datapath: writing VIP: %s", strerror(-r));
	return r;
}

static void index_old(const struct vip *old, bool fill)
{
	uint32_t i;

	for (i = 0; old && i < old->nbe; i++)
		old_by_idx[old->bes[i].idx] = fill ? &old->bes[i] : NULL;
}

/*
 * The table old holds is the one v would build: same placement, seed and
 * (backend, generation, table weight) in the same order. A change of flags
 * only (a backend held down for settle_ms, or back within it) then swaps no
 * table: no slot moves, and a flapping backend costs no rebuild.
 */
static bool table_same(const struct vip *old, const struct vip *v, const struct registry_ctx *ctx)
{
	bool so, sv;
	uint32_t i, j;

	if (!old || v->table_forced || !v->table_gen || old->placement != v->placement ||
	    old->vnodes != v->vnodes || old->second_chance != v->second_chance ||
	    memcmp(&v->built_seed, &ctx->cfg->seed, sizeof(v->built_seed)))
		return false;
	so = admit_scaled(old);
	sv = admit_scaled(v);
	for (i = 0, j = 0;; i++, j++) {
		while (i < old->nbe && !admit_in_table(&old->bes[i]))
			i++;
		while (j < v->nbe && !admit_in_table(&v->bes[j]))
			j++;
		if (i == old->nbe || j == v->nbe)
			return i == old->nbe && j == v->nbe;
		if (old->bes[i].idx != v->bes[j].idx || old->bes[i].gen != v->bes[j].gen ||
		    admit_table_weight(&old->bes[i], so) != admit_table_weight(&v->bes[j], sv))
			return false;
	}
}

/* The first half of a VIP's change: whatever may come before its new table. */
static int commit_vip_build(const struct vip *old, struct vip *v, const struct registry_ctx *ctx,
			    char *err, size_t errlen)
{
	struct hc_params hc;
	uint32_t i;
	int r = 0;

	vip_hc(v, &ctx->cfg->hc, &hc);
	index_old(old, true);
	/* Backends that can take new flows first, so the new table never
	 * names an index the datapath does not know yet.
	 */
	for (i = 0; i < v->nbe && !r; i++) {
		struct be *b = &v->bes[i];
		const struct be *o = old_by_idx[b->idx];
		uint8_t f = registry_be_flags(b, hc.on_fail);

		if (f == MAGLEV_BACKEND_F_UP && (!o || o->dp_flags != f || o->gen != b->gen))
			r = write_backend(ctx, b, f, err, errlen);
		if (!r && (!o || o->gen != b->gen))
			slowpath_backend_set(b);
		b->dp_flags = f;
	}
	index_old(old, false);
	if (!r && !table_same(old, v, ctx))
		r = rebuild_table(v, ctx, err, errlen);
	v->dirty = false;
	v->table_forced = false;
	return r;
}

/* The second half, once the new table is live (the swap returned). */
static int commit_vip_finish(const struct vip *old, struct vip *v, bool info,
			     const struct registry_ctx *ctx, char *err, size_t errlen)
{
	uint32_t i;
	int r = 0;

	if (info)
		r = write_vip_info(v, ctx, err, errlen);
	index_old(old, true);
	/* Then the ones that left the table: draining, down, or deleted. */
	for (i = 0; i < v->nbe && !r; i++) {
		struct be *b = &v->bes[i];
		const struct be *o = old_by_idx[b->idx];

		if (b->dp_flags != MAGLEV_BACKEND_F_UP &&
		    (!o || o->dp_flags != b->dp_flags || o->gen != b->gen))
			r = write_backend(ctx, b, b->dp_flags, err, errlen);
	}
	index_old(old, false);
	for (i = 0; old && i < old->nbe && !r; i++) {
		const struct be *o = &old->bes[i];

		if (!vip_find_be(v, &o->addr)) {
			r = write_backend(ctx, o, 0, err, errlen);
			slowpath_backend_del(o->idx);
		}
	}
	return r;
}

/* A deleted VIP: out of the VIP map now, its table deleted off the loop. */
static int remove_vip_build(const struct vip *old, const struct registry_ctx *ctx, char *err,
			    size_t errlen)
{
	int r = maglev_dp_vip_del(ctx->dp, &old->key);

	if (r && r != -ENOENT) {
		snprintf(err, errlen, "datapath: deleting VIP: %s", strerror(-r));
		return r;
	}
	table_swap_submit(ctx->dp, old->id, NULL, NULL, true);
	return 0;
}

static int remove_vip_finish(const struct vip *old, const struct registry_ctx *ctx, char *err,
			     size_t errlen)
{
	uint32_t i;
	int r;

	for (i = 0; i < old->nbe; i++) {
		r = write_backend(ctx, &old->bes[i], 0, err, errlen);
		if (r)
			return r;
	}
	slowpath_vip_del(old);
	return 0;
}

/*
 * next was cloned from the newest registry, which may have been queued and
 * not yet written: its table generation, digest, second-chance window,
 * rendezvous build and backend flags are then that registry's intentions,
 * or older. Take them from old, which the datapath holds, before anything
 * is compared or built against them.
 */
static void take_from_datapath(const struct vip *o, struct vip *n)
{
	uint32_t i;

	n->table_gen = o->table_gen;
	n->built_seed = o->built_seed;
	n->table_slots_used = o->table_slots_used;
	n->digest = o->digest;
	n->sc_until_ms = o->sc_until_ms;
	n->sc_from_live = o->sc_from_live;
	n->rebuild_ms = o->rebuild_ms;
	if (n->rdv != o->rdv) {
		registry_rdv_put(n->rdv);
		n->rdv = o->rdv;
		if (n->rdv)
			__atomic_add_fetch(&n->rdv->refs, 1, __ATOMIC_RELAXED);
	}
	index_old(o, true);
	for (i = 0; i < n->nbe; i++) {
		const struct be *ob = old_by_idx[n->bes[i].idx];

		n->bes[i].dp_flags = ob && ob->gen == n->bes[i].gen ? ob->dp_flags : 0;
	}
	index_old(o, false);
}

int registry_commit_build(const struct registry *old, struct registry *next,
			  const struct registry_ctx *ctx, struct registry_pending *p, char *err,
			  size_t errlen)
{
	uint32_t i;
	int r;

	memset(p, 0, sizeof(*p));
	/* All first: a build that fails part-way leaves next true for a rollback. */
	for (i = 0; old && i < MAGLEV_MAX_VIPS; i++)
		if (old->vips[i] && next->vips[i] &&
		    !memcmp(&old->vips[i]->key, &next->vips[i]->key, sizeof(next->vips[i]->key)))
			take_from_datapath(old->vips[i], next->vips[i]);
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *o = old ? old->vips[i] : NULL;
		struct vip *n = next->vips[i];

		/* Same id, different key: the old VIP was deleted and the id reused
		 * in one batch; remove the old one before the new one appears.
		 */
		if (o && (!n || memcmp(&o->key, &n->key, sizeof(n->key)))) {
			r = remove_vip_build(o, ctx, err, errlen);
			if (r)
				return r;
			p->what[i] |= REGISTRY_PEND_REMOVED;
			o = NULL;
			if (n)
				n->dirty = n->info_dirty = true;
		}
		if (n && (n->dirty || n->info_dirty || !o)) {
			p->what[i] |= REGISTRY_PEND_CHANGED;
			if (n->info_dirty || !o)
				p->what[i] |= REGISTRY_PEND_INFO;
			n->info_dirty = false;
			r = commit_vip_build(o, n, ctx, err, errlen);
			if (r)
				return r;
		}
	}
	/* Bookkeeping of this batch's model, done with once it is written. */
	for (i = 0; i < MAGLEV_MAX_BACKENDS; i++)
		if (next->idx_used[i] == 2)
			next->idx_used[i] = 0;
	if (next->nfbes)
		memset(next->fbe_chain, 0, REGISTRY_FBE_CHAINS * sizeof(uint32_t));
	next->nfvips = next->nfbes = 0;
	return 0;
}

int registry_commit_finish(const struct registry *old, struct registry *next,
			   const struct registry_ctx *ctx, const struct registry_pending *p,
			   char *err, size_t errlen)
{
	uint32_t i;
	int r;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *o = old ? old->vips[i] : NULL;

		if (p->what[i] & REGISTRY_PEND_REMOVED) {
			r = remove_vip_finish(o, ctx, err, errlen);
			if (r)
				return r;
			o = NULL;
		}
		if (p->what[i] & REGISTRY_PEND_CHANGED) {
			r = commit_vip_finish(o, next->vips[i], p->what[i] & REGISTRY_PEND_INFO,
					      ctx, err, errlen);
			if (r)
				return r;
			second_chance_live(next->vips[i], ctx);
		}
	}
	return 0;
}

int registry_commit(const struct registry *old, struct registry *next,
		    const struct registry_ctx *ctx, char *err, size_t errlen)
{
	struct registry_pending *p = malloc(sizeof(*p));
	int r;

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = registry_commit_build(old, next, ctx, p, err, errlen);
	table_swap_wait();
	if (!r)
		r = table_swap_take_error(err, errlen);
	else
		table_swap_take_error(NULL, 0);
	if (!r)
		r = registry_commit_finish(old, next, ctx, p, err, errlen);
	free(p);
	return r;
}
