// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control requests that change the registry (vip and backend add, set,
 * del, flush, batch). Each runs on a clone of the live registry, validated
 * completely before requests.c commits it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "model/admit.h"
#include "model/balance.h"
#include "model/hot_threshold.h"
#include "placement.h"
#include "ctl/req.h"

#define BATCH_MAX	 200000
#define GUE_DEFAULT_PORT 6080

/*
 * "placement" and "vnodes" of vip.add and vip.set, applied to v only when
 * both are valid: vnodes belongs to the ring, so it is refused for another
 * placement instead of being kept silently.
 */
static int set_placement(json_object *req, struct vip *v, struct req_err *e)
{
	enum maglev_placement kind = v->placement;
	bool has_vn;
	int64_t vn = v->vnodes;
	const char *s;

	if (req_get_str(req, "placement", false, &s, e) ||
	    req_get_int(req, "vnodes", 1, MAGLEV_VNODES_MAX, &vn, &has_vn, e))
		return -EINVAL;
	if (s && maglev_placement_parse(s, &kind))
		return req_fail(e, "unknown placement '%.40s' (maglev, ring or rendezvous)", s);
	if (has_vn && kind != MAGLEV_PLACEMENT_RING)
		return req_fail(e, "vnodes applies to the ring placement only (this VIP's is %s)",
				maglev_placement_name(kind));
	if (kind != v->placement || (uint32_t)vn != v->vnodes)
		v->dirty = true;
	v->placement = kind;
	v->vnodes = (uint32_t)vn;
	return 0;
}

/* "balance_factor" of vip.add and vip.set: bounded loads' C, or off. */
static int set_balance(json_object *req, struct vip *v, struct req_err *e)
{
	uint32_t milli;
	const char *s;

	if (req_get_str(req, "balance_factor", false, &s, e))
		return -EINVAL;
	if (!s)
		return 0;
	if (balance_parse(s, &milli))
		return req_fail(e,
				"balance factor '%.40s' is not a number from 1.01 to 10 (or off): "
				"the cap is that many times the mean load",
				s);
	v->balance_milli = milli;
	return 0;
}

/*
 * "slow_start_ms" of vip.add and vip.set: this VIP's ramp in ms, or
 * "default" (or -1): the config's. maglevctl sends what was typed, a string.
 */
static int set_slow_start(json_object *req, struct vip *v, struct req_err *e)
{
	json_object *m;
	uint64_t u;
	int64_t ms;
	bool has;
	char why[120];

	if (!json_object_object_get_ex(req, "slow_start_ms", &m))
		return 0;
	if (json_object_is_type(m, json_type_string)) {
		const char *s = json_object_get_string(m);

		if (!strcmp(s, "default")) {
			v->slow_start_ms = -1;
			return 0;
		}
		if (ctl_parse_uint(s, "slow_start_ms", 0, 86400000, &u, why, sizeof(why)))
			return req_fail(e, "%s (or default: the config's slow_start_ms)", why);
		v->slow_start_ms = (int64_t)u;
		return 0;
	}
	if (req_get_int(req, "slow_start_ms", -1, 86400000, &ms, &has, e))
		return -EINVAL;
	v->slow_start_ms = ms;
	return 0;
}

/* "hot_threshold" of vip.add and vip.set (model/hot_threshold.h). */
static int set_hot_threshold(json_object *req, struct vip *v, struct req_err *e)
{
	const char *s;

	if (req_get_str(req, "hot_threshold", false, &s, e))
		return -EINVAL;
	if (s && hot_threshold_parse(s, &v->hot_threshold))
		return req_fail(e,
				"hot threshold '%.40s' is not a percent from 1 to 100, off or "
				"default",
				s);
	return 0;
}

/* The keys of vip.add besides the health-check overrides (hc_fields[].req,
 * which req_check_keys_hc allows); vip.set takes the same but port_any (it
 * would make another VIP): the list from its second entry on.
 */
static const char *const vip_add_keys[] = {
	"port_any", "vip",	     "encap",	       "gue_port",	"placement",
	"vnodes",   "second_chance", "balance_factor", "check_default", "slow_start_ms", "hot_threshold",
	NULL};

/*
 * "check_default": the check options (hc_fields[].req names) whose per-VIP
 * override is dropped, so that the VIP follows the configured default again
 * (maglevctl vip set VIP --check-interval default).
 */
static int check_default(json_object *req, uint32_t *hc_set, bool *any_given, struct req_err *e)
{
	json_object *defs;
	size_t i, n;

	if (!json_object_object_get_ex(req, "check_default", &defs))
		return 0;
	if (!json_object_is_type(defs, json_type_array))
		return req_fail(e, "check_default: want an array of check option names");
	n = json_object_array_length(defs);
	for (i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(defs, i));
		const struct hc_field *f = s ? hc_field_by_req(s) : NULL;

		if (!f)
			return req_fail(e, "check_default: '%.40s' is not a check option",
					s ? s : "");
		if (json_object_object_get_ex(req, f->req, NULL))
			return req_fail(e, "%s given a value and set back to the default at once",
					f->req);
		*hc_set &= ~f->bit;
		*any_given = true;
	}
	return 0;
}

/* The options vip add and vip set share: encapsulation and health-check
 * overrides, applied over *encap, *gue, *hc and *hc_set (a VIP's current
 * values for set). *any_given tells whether one was there.
 */
static int vip_opts(json_object *req, uint8_t *encap, uint16_t *gue, bool *sc, struct hc_params *hc,
		    uint32_t *hc_set, bool *any_given, struct req_err *e)
{
	const char *encap_s, *s;
	int64_t v, port = *gue;
	bool has, gue_given, sc_given;
	size_t i;
	int r;

	if (req_get_str(req, "encap", false, &encap_s, e))
		return -EINVAL;
	if (encap_s && !strcmp(encap_s, "gue")) {
		if (*encap != MAGLEV_ENCAP_GUE)
			port = GUE_DEFAULT_PORT;
		*encap = MAGLEV_ENCAP_GUE;
	} else if (encap_s && !strcmp(encap_s, "ipip")) {
		*encap = MAGLEV_ENCAP_IPIP;
		port = 0;
	} else if (encap_s) {
		return req_fail(e, "unknown encap '%.40s' (ipip or gue)", encap_s);
	}
	if (req_get_int(req, "gue_port", 1, 65535, &port, &gue_given, e))
		return -EINVAL;
	if (gue_given && *encap != MAGLEV_ENCAP_GUE)
		return req_fail(e, "gue_port given but encap is not gue");
	*gue = (uint16_t)port;
	if (req_get_bool(req, "second_chance", sc, &sc_given, e))
		return -EINVAL;
	if (*sc && *encap != MAGLEV_ENCAP_GUE)
		return req_fail(e,
				"second_chance needs encap gue: IPIP has no room to carry the "
				"previous owner%s",
				sc_given ? "" : " (this VIP has second chance: turn it off first)");
	*any_given = encap_s || gue_given || sc_given;
	for (i = 0; i < HC_NFIELDS; i++) {
		const struct hc_field *f = hc_field_at(HC_ORDER_REQUEST, i);

		if (f->kind == HCK_UINT) {
			if (req_get_int(req, f->req, f->req_lo, f->hi, &v, &has, e))
				return -EINVAL;
			if (!has)
				continue;
			hc_field_set_uint(hc, f, (uint32_t)v);
		} else {
			if (req_get_str(req, f->req, false, &s, e))
				return -EINVAL;
			if (!s)
				continue;
			r = hc_field_set_str(hc, f, s);
			if (r == -EINVAL)
				return req_fail(e, "unknown %s '%.40s' (%s)", f->req, s,
						f->choices);
			if (r && f->short_too_long)
				return req_fail(e, "%s too long", f->req);
			if (r)
				return req_fail(e, "%s too long (at most %zu bytes)", f->req,
						f->size - 1);
		}
		*hc_set |= f->bit;
		*any_given = true;
	}
	return check_default(req, hc_set, any_given, e);
}

static int do_vip_add(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	struct vip probe = {.placement = MAGLEV_PLACEMENT_MAGLEV, .vnodes = MAGLEV_VNODES_DEFAULT};
	struct maglev_vip_key key;
	struct hc_params hc = {0};
	uint32_t hc_set = 0;
	const char *s;
	bool any, port_any = false, has, given;
	uint8_t encap = MAGLEV_ENCAP_IPIP;
	uint16_t gue = 0;
	bool sc = false;
	int ret;

	if (req_check_keys_hc(req, vip_add_keys, e) || req_get_str(req, "vip", true, &s, e) ||
	    ctl_parse_vip(s, &key, &any, e->msg, sizeof(e->msg)))
		return -EINVAL;
	if (req_addr_unusable(key.family, key.addr))
		return req_fail(e, "VIP %.60s: %s cannot be a VIP", s,
				req_addr_unusable(key.family, key.addr));
	if (req_get_bool(req, "port_any", &port_any, &has, e))
		return -EINVAL;
	if (port_any && key.port) {
		/* The given port stays meaningful: health checks go to it. */
		hc.port = ntohs(key.port);
		hc_set |= HCF_PORT;
		key.port = 0;
	}
	if (vip_opts(req, &encap, &gue, &sc, &hc, &hc_set, &given, e))
		return -EINVAL;
	/* Checked on a stand-in first: a bad value must not leave a VIP behind. */
	if (set_placement(req, &probe, e) || set_balance(req, &probe, e) ||
	    set_slow_start(req, &probe, e) ||
	    set_hot_threshold(req, &probe, e))
		return -EINVAL;
	if (key.family == MAGLEV_AF_INET6) {
		struct maglev_config mc;

		if (!maglev_dp_get_config(d->dp, &mc) && mc.mtu && mc.mtu < MAGLEV_MTU_MIN_IPV6)
			return req_fail(
				e,
				"VIP %.60s: the datapath mtu %u is below %u, the least an IPv6 "
				"VIP works with (its clients cannot take a packet-too-big under "
				"1280, and the outer headers take up to 52 bytes): raise mtu or "
				"the interface MTU",
				s, mc.mtu, MAGLEV_MTU_MIN_IPV6);
	}
	ret = registry_vip_add(r, &d->ctx, &key, encap, (uint16_t)gue, &hc, hc_set, -1, e->msg,
			       sizeof(e->msg));
	if (ret)
		return ret;
	registry_find_vip(r, &key)->second_chance = sc;
	if (set_placement(req, registry_find_vip(r, &key), e) ||
	    set_slow_start(req, registry_find_vip(r, &key), e) ||
	    set_hot_threshold(req, registry_find_vip(r, &key), e))
		return -EINVAL;
	return set_balance(req, registry_find_vip(r, &key), e);
}

/* vip set: placement, encapsulation and health-check overrides of a VIP,
 * in place: its backends, their indices and its connection entries stay.
 */
static int do_vip_set(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	struct hc_params hc;
	uint32_t hc_set;
	uint8_t encap;
	uint16_t gue;
	json_object *m;
	struct vip *v;
	bool given, sc;

	if (req_check_keys_hc(req, vip_add_keys + 1, e) || req_get_vip(d, r, req, &v, e))
		return -EINVAL;
	hc = v->hc;
	hc_set = v->hc_set;
	encap = v->encap;
	gue = v->gue_port;
	sc = v->second_chance;
	if (vip_opts(req, &encap, &gue, &sc, &hc, &hc_set, &given, e))
		return -EINVAL;
	if (!given && !json_object_object_get_ex(req, "placement", &m) &&
	    !json_object_object_get_ex(req, "vnodes", &m) &&
	    !json_object_object_get_ex(req, "balance_factor", &m) &&
	    !json_object_object_get_ex(req, "slow_start_ms", &m) &&
	    !json_object_object_get_ex(req, "hot_threshold", &m))
		return req_fail(e,
				"nothing to set: give placement, vnodes, balance_factor, "
				"slow_start_ms, hot_threshold, encap, gue_port, second_chance or a check option");
	if (set_placement(req, v, e) || set_balance(req, v, e) || set_slow_start(req, v, e) ||
	    set_hot_threshold(req, v, e))
		return -EINVAL;
	if (encap != v->encap || gue != v->gue_port || sc != v->second_chance)
		v->info_dirty = true;
	{
		struct hc_params before, after;
		struct vip probe = *v;

		/* A new on_fail rewrites the failed backends' flags. */
		vip_hc(v, &d->cfg.hc, &before);
		probe.hc = hc;
		probe.hc_set = hc_set;
		vip_hc(&probe, &d->cfg.hc, &after);
		if (before.on_fail != after.on_fail)
			v->dirty = true;
	}
	v->encap = encap;
	v->gue_port = gue;
	v->second_chance = sc;
	v->hc = hc;
	v->hc_set = hc_set;
	/* The transaction is dropped on error: nothing of this stays. */
	return registry_vip_hc_check(v, &d->ctx, e->msg, sizeof(e->msg));
}

static int do_vip_del(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", NULL};
	struct vip *v;

	if (req_check_keys(req, keys, e) || req_get_vip(d, r, req, &v, e))
		return -EINVAL;
	return registry_vip_del(r, &v->key, e->msg, sizeof(e->msg));
}

/*
 * A new backend of a VIP with checks starts down, up at its first passing
 * check: up at once, a mistyped address took new flows until `fall` checks
 * had failed. One the live registry already has (a restore deletes and adds
 * it back) keeps its health, and so do the backends a restart adopts.
 */
static bool starts_down(const struct daemon *d, const struct vip *v, const struct ctl_addr *a)
{
	const struct vip *live = registry_find_vip(d->reg, &v->key);
	const struct be *b = live ? vip_find_be(live, a) : NULL;
	struct hc_params p;

	if (b)
		return b->start_down; /* one still waiting for its first pass goes on waiting */
	vip_hc(v, &d->cfg.hc, &p);
	return p.type != HC_NONE;
}

static int do_backend_add(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", "backend", "weight", "drain", "start_down", NULL};
	struct ctl_addr a;
	int64_t weight = 1;
	bool has, has_sd, drain = false, start_down = false;
	struct vip *v;
	int ret;

	if (req_check_keys(req, keys, e) || req_get_vip(d, r, req, &v, e) ||
	    req_get_backend(req, &a, e) ||
	    req_get_int(req, "weight", 0, MAGLEV_WEIGHT_MAX, &weight, &has, e) ||
	    req_get_bool(req, "drain", &drain, &has, e) ||
	    req_get_bool(req, "start_down", &start_down, &has_sd, e))
		return -EINVAL;
	if (!has_sd)
		start_down = starts_down(d, v, &a);
	if (req_addr_unusable(a.family, a.addr)) {
		char bname[CTL_ADDR_STRLEN];

		ctl_format_addr(&a, bname, sizeof(bname));
		return req_fail(e, "backend %s: %s cannot be a backend", bname,
				req_addr_unusable(a.family, a.addr));
	}
	ret = registry_be_add(r, &d->ctx, v, &a, (uint32_t)weight, drain, -1, 0, e->msg,
			      sizeof(e->msg));
	/* No traffic before a check has passed (health.c brings it up). */
	if (!ret && start_down) {
		struct be *b = &v->bes[v->nbe - 1];

		b->up = false;
		b->start_down = true;
	} else if (!ret) {
		struct be *b = &v->bes[v->nbe - 1];
		const struct vip *ov = registry_find_vip(d->reg, &v->key);
		const struct be *ob = ov ? vip_find_be(ov, &a) : NULL;

		/* A new backend ramps (slow_start_ms); one deleted and re-added in
		 * this transaction (a restore) keeps what it had.
		 */
		if (ob && ob->gen == b->gen) {
			b->ramp_start = ob->ramp_start;
			b->ramp_step = ob->ramp_step;
		} else if (admit_serving(ov)) {
			/* Judged on the live VIP: a restore's new VIP ramps none. */
			admit_ramp_start(v, b, admit_slow_start_ms(v, &d->cfg), mono_ms());
		}
	}
	return ret;
}

static int do_backend_del(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	/* "force" is for requests.c (flows_guard.c), the request as a whole. */
	static const char *const keys[] = {"vip", "backend", "force", NULL};
	struct ctl_addr a;
	struct vip *v;

	if (req_check_keys(req, keys, e) || req_get_vip(d, r, req, &v, e) ||
	    req_get_backend(req, &a, e))
		return -EINVAL;
	return registry_be_del(r, v, &a, e->msg, sizeof(e->msg));
}

static int do_backend_set(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", "backend", "weight", "drain", NULL};
	bool has_w, has_d, drain = false;
	char bname[CTL_ADDR_STRLEN];
	struct ctl_addr a;
	int64_t weight = 0;
	struct vip *v;
	struct be *b;

	if (req_check_keys(req, keys, e) || req_get_vip(d, r, req, &v, e) ||
	    req_get_backend(req, &a, e) ||
	    req_get_int(req, "weight", 0, MAGLEV_WEIGHT_MAX, &weight, &has_w, e) ||
	    req_get_bool(req, "drain", &drain, &has_d, e))
		return -EINVAL;
	if (!has_w && !has_d)
		return req_fail(e, "nothing to set: give weight or drain");
	b = vip_find_be(v, &a);
	if (!b) {
		ctl_format_addr(&a, bname, sizeof(bname));
		return req_fail(e, "no backend %s in that VIP", bname);
	}
	if (has_w)
		b->weight = (uint32_t)weight;
	if (has_d)
		b->drain = drain;
	v->dirty = true;
	return 0;
}

static int do_flush(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};

	if (req_check_keys(req, keys, e))
		return -EINVAL;
	registry_flush(r);
	return 0;
}

static const struct {
	const char *cmd;
	req_change_fn fn;
} mutations[] = {
	{"vip.add", do_vip_add},
	{"vip.del", do_vip_del},
	{"vip.set", do_vip_set},
	{"backend.add", do_backend_add},
	{"backend.del", do_backend_del},
	{"backend.set", do_backend_set},
	{"flush", do_flush},
};

req_change_fn req_find_change(const char *cmd)
{
	size_t i;

	for (i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++)
		if (!strcmp(mutations[i].cmd, cmd))
			return mutations[i].fn;
	return NULL;
}

/* Apply a single change or a batch to the clone r. */
int req_apply_change(struct daemon *d, struct registry *r, const char *cmd, json_object *req,
		     struct req_err *e)
{
	json_object *list;
	size_t i, n;

	if (strcmp(cmd, "batch"))
		return req_find_change(cmd)(d, r, req, e);
	{
		static const char *const keys[] = {"requests", "dry_run", "force", NULL};

		if (req_check_keys(req, keys, e))
			return -EINVAL;
	}
	if (!json_object_object_get_ex(req, "requests", &list) ||
	    !json_object_is_type(list, json_type_array))
		return req_fail(e, "batch needs a 'requests' array");
	n = json_object_array_length(list);
	if (n > BATCH_MAX)
		return req_fail(e, "batch of %zu requests: the limit is %d", n, BATCH_MAX);
	for (i = 0; i < n; i++) {
		json_object *sub = json_object_array_get_idx(list, i);
		const char *sc = req_cmd(sub);
		struct req_err se;
		req_change_fn fn;

		if (!sc)
			return req_fail(e, "batch request %zu: not an object with a 'cmd' string",
					i + 1);
		fn = req_find_change(sc);
		if (!fn)
			return req_fail(e, "batch request %zu: '%.40s' is not a change", i + 1, sc);
		if (json_object_object_get_ex(sub, "force", NULL))
			return req_fail(e,
					"batch request %zu: force is the whole batch's (give it "
					"beside requests)",
					i + 1);
		if (fn(d, r, sub, &se))
			return req_fail(e, "batch request %zu (%s): %s", i + 1, sc, se.msg);
	}
	return 0;
}
