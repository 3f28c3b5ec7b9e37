// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "model/registry.h"

struct registry *registry_new(void)
{
	struct registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->idx_used = calloc(MAGLEV_MAX_BACKENDS, 1);
	if (!r->idx_used) {
		free(r);
		return NULL;
	}
	r->idx_used[0] = 1; /* index 0 means "none" in the datapath */
	r->next_idx = 1;
	r->refs = 1;
	return r;
}

struct registry *registry_get(struct registry *r)
{
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
	return r;
}

void registry_rdv_put(struct rdv_memo *m)
{
	if (m && !__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL)) {
		free(m->specs);
		free(m);
	}
}

static void vip_free(struct vip *v)
{
	if (v) {
		registry_rdv_put(v->rdv);
		free(v->bes);
		free(v);
	}
}

void registry_free(struct registry *r)
{
	uint32_t i;

	if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		vip_free(r->vips[i]);
	free(r->idx_used);
	free(r->fvips);
	free(r->fbes);
	free(r->fbe_chain);
	free(r);
}

/* Grow *arr (of elem bytes) to hold n + 1; false when out of memory. */
static bool grow(void **arr, uint32_t *cap, uint32_t n, size_t elem)
{
	void *na;
	uint32_t nc;

	if (n < *cap)
		return true;
	nc = *cap ? *cap * 2 : 16;
	na = realloc(*arr, nc * elem);
	if (!na)
		return false;
	*arr = na;
	*cap = nc;
	return true;
}

static struct vip *vip_clone(const struct vip *v)
{
	struct vip *n = malloc(sizeof(*n));

	if (!n)
		return NULL;
	*n = *v;
	n->bes = NULL;
	if (v->cap) {
		n->bes = malloc(v->cap * sizeof(*n->bes));
		if (!n->bes) {
			free(n);
			return NULL;
		}
		memcpy(n->bes, v->bes, v->nbe * sizeof(*n->bes));
	}
	if (n->rdv)
		__atomic_add_fetch(&n->rdv->refs, 1, __ATOMIC_RELAXED);
	n->dirty = false;
	n->table_forced = false;
	n->info_dirty = false;
	return n;
}

struct registry *registry_clone(const struct registry *r)
{
	struct registry *n = registry_new();
	uint32_t i;

	if (!n)
		return NULL;
	memcpy(n->idx_used, r->idx_used, MAGLEV_MAX_BACKENDS);
	n->next_idx = r->next_idx;
	n->nvips = r->nvips;
	n->nbackends = r->nbackends;
	n->fleet_rev = r->fleet_rev;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		if (!r->vips[i])
			continue;
		n->vips[i] = vip_clone(r->vips[i]);
		if (!n->vips[i]) {
			registry_free(n);
			return NULL;
		}
	}
	return n;
}

const struct vip *registry_first_ipv6_vip(const struct registry *r)
{
	uint32_t i;

	for (i = 0; r && i < MAGLEV_MAX_VIPS; i++)
		if (r->vips[i] && r->vips[i]->key.family == MAGLEV_AF_INET6)
			return r->vips[i];
	return NULL;
}

struct vip *registry_find_vip(const struct registry *r, const struct maglev_vip_key *key)
{
	uint32_t i;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = r->vips[i];

		if (v && !memcmp(&v->key, key, sizeof(*key)))
			return r->vips[i];
	}
	return NULL;
}

struct be *vip_find_be(const struct vip *v, const struct ctl_addr *a)
{
	uint32_t i;

	for (i = 0; i < v->nbe; i++)
		if (v->bes[i].addr.family == a->family &&
		    !memcmp(v->bes[i].addr.addr, a->addr, sizeof(a->addr)))
			return &v->bes[i];
	return NULL;
}

void vip_hc(const struct vip *v, const struct hc_params *d, struct hc_params *out)
{
	size_t i;

	*out = *d;
	for (i = 0; i < HC_NFIELDS; i++)
		if (v->hc_set & hc_fields[i].bit)
			hc_field_copy(out, &v->hc, &hc_fields[i]);
	if (!out->port)
		out->port = ntohs(v->key.port);
}

int registry_vip_hc_check(const struct vip *v, const struct registry_ctx *ctx, char *err,
			  size_t errlen)
{
	char name[CTL_ADDR_STRLEN], e[160];
	struct hc_params eff;

	ctl_format_vip(&v->key, name, sizeof(name));
	vip_hc(v, &ctx->cfg->hc, &eff);
	if (hc_params_check(&eff, e, sizeof(e))) {
		snprintf(err, errlen, "VIP %s: %s", name, e);
		return -EINVAL;
	}
	if (eff.type != HC_NONE && !eff.port) {
		snprintf(err, errlen,
			 "VIP %s: an all-ports VIP needs a health-check port (--check-port N "
			 "or --check none)",
			 name);
		return -EINVAL;
	}
	return 0;
}

int registry_vip_add(struct registry *r, const struct registry_ctx *ctx,
		     const struct maglev_vip_key *key, uint8_t encap, uint16_t gue_port,
		     const struct hc_params *hc, uint32_t hc_set, int32_t want_id, char *err,
		     size_t errlen)
{
	char name[CTL_ADDR_STRLEN];
	struct freed_vip *fv = NULL;
	struct vip *v;
	uint32_t id, i;

	ctl_format_vip(key, name, sizeof(name));
	if (registry_find_vip(r, key)) {
		snprintf(err, errlen, "VIP %s already exists", name);
		return -EEXIST;
	}
	if (r->nvips >= ctx->cfg->max_vips) {
		snprintf(err, errlen, "too many VIPs: the limit is %u (max_vips)",
			 ctx->cfg->max_vips);
		return -ENOSPC;
	}
	if (want_id >= 0) {
		if (want_id >= MAGLEV_MAX_VIPS || r->vips[want_id]) {
			snprintf(err, errlen, "VIP id %d unusable", want_id);
			return -EINVAL;
		}
		id = (uint32_t)want_id;
	} else {
		for (id = 0; id < MAGLEV_MAX_VIPS && r->vips[id]; id++)
			;
		if (id == MAGLEV_MAX_VIPS) {
			snprintf(err, errlen, "no free VIP id");
			return -ENOSPC;
		}
		for (i = 0; i < r->nfvips; i++)
			if (!memcmp(&r->fvips[i].key, key, sizeof(*key)) &&
			    !r->vips[r->fvips[i].id])
				fv = &r->fvips[i];
		if (fv)
			id = fv->id;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	v->id = id;
	v->key = *key;
	v->encap = encap;
	v->gue_port = gue_port;
	v->placement = MAGLEV_PLACEMENT_MAGLEV;
	v->vnodes = MAGLEV_VNODES_DEFAULT;
	v->slow_start_ms = -1;
	v->hc = *hc;
	v->hc_set = hc_set;
	if (registry_vip_hc_check(v, ctx, err, errlen)) {
		free(v);
		return -EINVAL;
	}
	v->dirty = true;
	v->info_dirty = true;
	if (fv) {
		/* Deleted and re-added in one transaction: the same VIP goes on. */
		v->base = fv->base;
		v->spill_base = fv->spill_base;
		v->table_gen = fv->table_gen;
	} else if (ctx->dp) {
		/* Counters of a reused id start from what the datapath holds now. */
		maglev_dp_vip_stats(ctx->dp, id, &v->base);
		maglev_dp_vip_spilled(ctx->dp, id, &v->spill_base);
	}
	v->last = v->base;
	r->vips[id] = v;
	r->nvips++;
	return 0;
}

/* Chain of a freed backend: FNV-1a over the VIP key and the address. */
static uint32_t fbe_chain_of(const struct maglev_vip_key *key, const struct ctl_addr *a)
{
	const uint8_t *p[2] = {(const uint8_t *)key, (const uint8_t *)a->addr};
	size_t len[2] = {sizeof(*key), sizeof(a->addr)};
	uint32_t h = 2166136261u ^ a->family;
	size_t i, j;

	for (j = 0; j < 2; j++)
		for (i = 0; i < len[j]; i++)
			h = (h ^ p[j][i]) * 16777619u;
	return h % REGISTRY_FBE_CHAINS;
}

static void be_release(struct registry *r, const struct vip *v, const struct be *b)
{
	struct freed_be *f;
	uint32_t c;

	r->idx_used[b->idx] = 2;
	r->nbackends--;
	/* Without the record the index is still freed; only a re-add in this
	 * transaction then counts as a new backend.
	 */
	if (!r->fbe_chain && !(r->fbe_chain = calloc(REGISTRY_FBE_CHAINS, sizeof(uint32_t))))
		return;
	if (!grow((void **)&r->fbes, &r->cap_fbes, r->nfbes, sizeof(*r->fbes)))
		return;
	f = &r->fbes[r->nfbes];
	f->key = v->key;
	f->addr = b->addr;
	f->idx = b->idx;
	f->gen = b->gen;
	f->up = b->up;
	f->base = b->base;
	c = fbe_chain_of(&v->key, &b->addr);
	f->next = r->fbe_chain[c];
	r->fbe_chain[c] = ++r->nfbes;
}

/* The latest backend a of VIP key freed in this transaction, if any. */
static struct freed_be *fbe_find(struct registry *r, const struct maglev_vip_key *key,
				 const struct ctl_addr *a)
{
	uint32_t n;

	if (!r->fbe_chain)
		return NULL;
	for (n = r->fbe_chain[fbe_chain_of(key, a)]; n; n = r->fbes[n - 1].next) {
		struct freed_be *f = &r->fbes[n - 1];

		if (r->idx_used[f->idx] == 2 && !memcmp(&f->key, key, sizeof(f->key)) &&
		    f->addr.family == a->family && !memcmp(f->addr.addr, a->addr, sizeof(a->addr)))
			return f;
	}
	return NULL;
}

int registry_vip_del(struct registry *r, const struct maglev_vip_key *key, char *err, size_t errlen)
{
	struct vip *v = registry_find_vip(r, key);
	char name[CTL_ADDR_STRLEN];
	uint32_t i;

	if (!v) {
		ctl_format_vip(key, name, sizeof(name));
		snprintf(err, errlen, "no VIP %s", name);
		return -ENOENT;
	}
	for (i = 0; i < v->nbe; i++)
		be_release(r, v, &v->bes[i]);
	if (grow((void **)&r->fvips, &r->cap_fvips, r->nfvips, sizeof(*r->fvips))) {
		struct freed_vip *f = &r->fvips[r->nfvips++];

		f->key = v->key;
		f->id = v->id;
		f->table_gen = v->table_gen;
		f->base = v->base;
		f->spill_base = v->spill_base;
	}
	r->vips[v->id] = NULL;
	r->nvips--;
	vip_free(v);
	return 0;
}

void registry_flush(struct registry *r)
{
	uint32_t i;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		if (r->vips[i]) {
			char e[8];

			registry_vip_del(r, &r->vips[i]->key, e, sizeof(e));
		}
	}
}

void registry_mark_all(struct registry *r)
{
	uint32_t i;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (r->vips[i])
			r->vips[i]->dirty = r->vips[i]->table_forced = true;
}

static int alloc_idx(struct registry *r, uint32_t *idx)
{
	uint32_t i, n;

	for (n = 0; n < MAGLEV_MAX_BACKENDS; n++) {
		i = (r->next_idx + n) % MAGLEV_MAX_BACKENDS;
		if (!r->idx_used[i]) {
			*idx = i;
			r->next_idx = (i + 1) % MAGLEV_MAX_BACKENDS;
			return 0;
		}
	}
	return -ENOSPC;
}

int registry_be_add(struct registry *r, const struct registry_ctx *ctx, struct vip *v,
		    const struct ctl_addr *a, uint32_t weight, bool drain, int64_t want_idx,
		    uint32_t want_gen, char *err, size_t errlen)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	struct freed_be *fb = NULL;
	struct maglev_backend cur;
	struct be *b;
	uint32_t idx;

	ctl_format_vip(&v->key, vname, sizeof(vname));
	ctl_format_addr(a, bname, sizeof(bname));
	if (vip_find_be(v, a)) {
		snprintf(err, errlen, "backend %s already in VIP %s", bname, vname);
		return -EEXIST;
	}
	if (weight > MAGLEV_WEIGHT_MAX) {
		snprintf(err, errlen, "weight %u out of range 0..%u", weight, MAGLEV_WEIGHT_MAX);
		return -ERANGE;
	}
	if (v->nbe >= ctx->cfg->max_backends_per_vip) {
		snprintf(err, errlen,
			 "too many backends in VIP %s: the limit is %u "
			 "(max_backends_per_vip)",
			 vname, ctx->cfg->max_backends_per_vip);
		return -ENOSPC;
	}
	if (want_idx >= 0) {
		if (want_idx == 0 || want_idx >= MAGLEV_MAX_BACKENDS || r->idx_used[want_idx]) {
			snprintf(err, errlen, "backend index %lld unusable", (long long)want_idx);
			return -EINVAL;
		}
		idx = (uint32_t)want_idx;
	} else {
		fb = fbe_find(r, &v->key, a);
		if (fb) {
			idx = fb->idx;
		} else if (alloc_idx(r, &idx)) {
			snprintf(err, errlen,
				 "too many backends: all %u datapath backend slots are in use (%u "
				 "backends in all VIPs)",
				 MAGLEV_MAX_BACKENDS - 1, r->nbackends);
			return -ENOSPC;
		}
	}
	if (v->nbe == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 8;
		struct be *nb = realloc(v->bes, cap * sizeof(*nb));

		if (!nb) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		v->bes = nb;
		v->cap = cap;
	}
	b = &v->bes[v->nbe++];
	memset(b, 0, sizeof(*b));
	b->idx = idx;
	b->addr = *a;
	b->weight = weight;
	b->drain = drain;
	b->up = true;
	if (want_idx >= 0) {
		b->gen = want_gen;
	} else if (fb) {
		/* The same backend, deleted and re-added in one transaction. */
		b->gen = fb->gen;
		b->up = fb->up;
	} else {
		/* A new owner of this index: bump its generation past whatever the
		 * datapath remembers, so connection entries of the previous owner
		 * are never taken for this backend's.
		 */
		b->gen = 1;
		if (ctx->dp && !maglev_dp_backend_get(ctx->dp, idx, &cur))
			b->gen = cur.gen + 1;
		if (!b->gen)
			b->gen = 1;
	}
	if (fb)
		b->base = fb->base;
	else if (ctx->dp)
		maglev_dp_backend_stats(ctx->dp, idx, &b->base);
	b->last = b->base;
	r->idx_used[idx] = 1;
	r->nbackends++;
	v->dirty = true;
	return 0;
}

int registry_be_del(struct registry *r, struct vip *v, const struct ctl_addr *a, char *err,
		    size_t errlen)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	struct be *b = vip_find_be(v, a);

	if (!b) {
		ctl_format_vip(&v->key, vname, sizeof(vname));
		ctl_format_addr(a, bname, sizeof(bname));
		snprintf(err, errlen, "no backend %s in VIP %s", bname, vname);
		return -ENOENT;
	}
	be_release(r, v, b);
	*b = v->bes[--v->nbe];
	v->dirty = true;
	return 0;
}

int registry_check_placements(const struct registry *r, char *err, size_t errlen)
{
	char name[CTL_ADDR_STRLEN];
	struct maglev_err merr;
	uint64_t w;
	uint32_t i, j;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = r->vips[i];

		if (!v || !v->dirty || v->placement != MAGLEV_PLACEMENT_RING)
			continue;
		for (j = 0, w = 0; j < v->nbe; j++)
			w += v->bes[j].weight;
		if (maglev_ring_fits(v->vnodes, w, &merr)) {
			ctl_format_vip(&v->key, name, sizeof(name));
			snprintf(err, errlen, "VIP %s: %s", name, merr.msg);
			return -EINVAL;
		}
	}
	return 0;
}
