// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control requests that answer from the registry and the datapath (list,
 * show, stats, health, table, lookup, dump, status), and reload and announce,
 * which act on the daemon rather than on the registry.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "health/damping.h"
#include "model/admit.h"
#include "model/be_state.h"
#include "datapath/drift.h"
#include "datapath/bounded.h"
#include "datapath/flow_count.h"
#include "datapath/readback.h"
#include "datapath/second_chance.h"
#include "fleet/fleet.h"
#include "placement.h"
#include "datapath/slowpath.h"
#include "slowpath_nl.h"
#include "model/state.h"
#include "metrics/status.h"
#include "hot/hot_flows.h"
#include "model/hot_threshold.h"
#include "version.h"
#include "ctl/req.h"

/* Connection-table entries the backend holds (flow_count.c); null before the first count. */
static json_object *flows_json(const struct be *b)
{
	uint64_t n;

	return flow_count_backend(b->idx, &n) ? json_object_new_uint64(n) : NULL;
}

static json_object *be_json(struct daemon *d, const struct vip *v, const struct be *b)
{
	json_object *o = json_object_new_object(), *fl = json_object_new_array();
	char name[CTL_ADDR_STRLEN];
	struct maglev_backend mb;
	bool marked = false;

	ctl_format_vip(&v->key, name, sizeof(name));
	json_object_object_add(o, "vip", json_object_new_string(name));
	ctl_format_addr(&b->addr, name, sizeof(name));
	json_object_object_add(o, "backend", json_object_new_string(name));
	json_object_object_add(o, "weight", json_object_new_int64(b->weight));
	json_object_object_add(o, "drain", json_object_new_boolean(b->drain));
	json_object_object_add(o, "state", json_object_new_string(be_state_name(b)));
	json_object_object_add(o, "index", json_object_new_int64(b->idx));
	json_object_object_add(o, "gen", json_object_new_int64(b->gen));
	/* What the live datapath map says, not what we think it says. */
	if (!maglev_dp_backend_get(d->dp, b->idx, &mb)) {
		if (mb.flags & MAGLEV_BACKEND_F_UP)
			json_object_array_add(fl, json_object_new_string("UP"));
		if (mb.flags & MAGLEV_BACKEND_F_DRAIN)
			json_object_array_add(fl, json_object_new_string("DRAIN"));
		json_object_object_add(o, "dp_gen", json_object_new_int64(mb.gen));
	}
	/* Marked in the datapath (over cap, or held down): new flows go past it.
	 * Read back, as the flags are.
	 */
	if (!maglev_dp_overcap_get(d->dp, b->idx, &marked) && marked)
		json_object_array_add(fl, json_object_new_string("MARKED"));
	json_object_object_add(o, "dp_flags", fl);
	json_object_object_add(o, "flows", flows_json(b));
	if (b->held && !b->up) {
		uint64_t now = mono_ms();

		json_object_object_add(
			o, "settle_ms_left",
			json_object_new_uint64(b->held_until > now ? b->held_until - now : 0));
	}
	if (d->cfg.damping_penalty) {
		json_object_object_add(
			o, "penalty",
			json_object_new_int64(damping_penalty(&d->cfg, b, mono_ms())));
		json_object_object_add(o, "suppressed", json_object_new_boolean(b->suppressed));
	}
	if (b->ramp_step) {
		json_object_object_add(o, "ramp_step", json_object_new_int64(b->ramp_step));
		json_object_object_add(o, "ramp_steps", json_object_new_int64(ADMIT_RAMP_STEPS));
	}
	if (v->balance_milli) {
		json_object_object_add(o, "load", json_object_new_uint64(bounded_load(b->idx)));
		json_object_object_add(o, "over_cap",
				       json_object_new_boolean(bounded_marked(b->idx)));
	}
	return o;
}

static json_object *vip_summary(struct daemon *d_for_json, const struct vip *v)
{
	const struct hc_params *defaults = &d_for_json->cfg.hc;
	json_object *o = json_object_new_object(), *chk = json_object_new_object();
	char name[CTL_ADDR_STRLEN], hex[DRIFT_HEX_LEN];
	struct hc_params hc;
	uint32_t i, up = 0;

	ctl_format_vip(&v->key, name, sizeof(name));
	json_object_object_add(o, "vip", json_object_new_string(name));
	json_object_object_add(o, "id", json_object_new_int64(v->id));
	json_object_object_add(
		o, "encap", json_object_new_string(v->encap == MAGLEV_ENCAP_GUE ? "gue" : "ipip"));
	if (v->encap == MAGLEV_ENCAP_GUE)
		json_object_object_add(o, "gue_port", json_object_new_int64(v->gue_port));
	json_object_object_add(o, "second_chance", json_object_new_boolean(v->second_chance));
	json_object_object_add(o, "placement",
			       json_object_new_string(maglev_placement_name(v->placement)));
	if (v->placement == MAGLEV_PLACEMENT_RING)
		json_object_object_add(o, "vnodes", json_object_new_int64(v->vnodes));
	if (v->hot_threshold != HOT_THRESHOLD_DEFAULT) {
		char ht[8];

		hot_threshold_format(v->hot_threshold, ht, sizeof(ht));
		json_object_object_add(o, "hot_threshold", json_object_new_string(ht));
	}
	if (v->balance_milli) {
		uint64_t sp = 0;

		json_object_object_add(o, "balance_factor",
				       json_object_new_double(v->balance_milli / 1000.0));
		json_object_object_add(o, "load_cap", json_object_new_uint64(bounded_cap(v->id)));
		maglev_dp_vip_spilled(d_for_json->dp, v->id, &sp);
		json_object_object_add(o, "new_flow_spilled",
				       json_object_new_uint64(sp - v->spill_base));
	}
	for (i = 0; i < v->nbe; i++)
		up += v->bes[i].up && !v->bes[i].drain && v->bes[i].weight;
	json_object_object_add(o, "backends", json_object_new_int64(v->nbe));
	if (v->slow_start_ms >= 0)
		json_object_object_add(o, "slow_start_ms", json_object_new_int64(v->slow_start_ms));
	json_object_object_add(o, "in_table", json_object_new_int64(up));
	json_object_object_add(o, "table_gen", json_object_new_uint64(v->table_gen));
	json_object_object_add(o, "rebuild_ms", json_object_new_double(v->rebuild_ms));
	drift_hex(v->digest, hex);
	json_object_object_add(o, "digest", json_object_new_string(hex));
	vip_hc(v, defaults, &hc);
	for (i = 0; i < HC_NFIELDS; i++) {
		const struct hc_field *f = hc_field_at(HC_ORDER_STATUS, i);

		if (f->shown_for & HC_TYPE_BIT(hc.type))
			json_object_object_add(chk, f->key, hc_field_json(&hc, f));
	}
	json_object_object_add(o, "check", chk);
	return o;
}

/* Read-only requests may name a VIP; NULL vip means all. */
static int opt_vip(struct daemon *d, json_object *req, const struct vip **v, struct req_err *e)
{
	const char *s;
	struct vip *found;

	*v = NULL;
	if (req_get_str(req, "vip", false, &s, e))
		return -EINVAL;
	if (!s)
		return 0;
	if (req_get_vip(d, d->reg, req, &found, e))
		return -EINVAL;
	*v = found;
	return 0;
}

static json_object *do_vip_list(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};
	json_object *o, *arr;
	uint32_t i;

	if (req_check_keys(req, keys, e))
		return NULL;
	o = req_ok_reply();
	arr = json_object_new_array();
	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (d->reg->vips[i])
			json_object_array_add(arr, vip_summary(d, d->reg->vips[i]));
	json_object_object_add(o, "vips", arr);
	return o;
}

static json_object *do_vip_show(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", NULL};
	json_object *o, *vo, *arr;
	struct vip *v;
	uint32_t i;

	if (req_check_keys(req, keys, e) || req_get_vip(d, d->reg, req, &v, e))
		return NULL;
	o = req_ok_reply();
	vo = vip_summary(d, v);
	arr = json_object_new_array();
	for (i = 0; i < v->nbe; i++)
		json_object_array_add(arr, be_json(d, v, &v->bes[i]));
	json_object_object_add(vo, "backend_list", arr);
	json_object_object_add(o, "vip", vo);
	return o;
}

/* A reply whose "backends" holds one object per backend of every VIP (or
 * of the one the request's optional "vip" names), in VIP id order.
 */
static json_object *backends_reply(struct daemon *d, json_object *req, struct req_err *e,
				   json_object *(*one)(struct daemon *, const struct vip *,
						       const struct be *))
{
	static const char *const keys[] = {"vip", NULL};
	const struct vip *only;
	json_object *o, *arr;
	uint32_t i, j;

	if (req_check_keys(req, keys, e) || opt_vip(d, req, &only, e))
		return NULL;
	arr = json_object_new_array();
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		if (!v || (only && v != only))
			continue;
		for (j = 0; j < v->nbe; j++)
			json_object_array_add(arr, one(d, v, &v->bes[j]));
	}
	o = req_ok_reply();
	json_object_object_add(o, "backends", arr);
	return o;
}

static json_object *do_backend_list(struct daemon *d, json_object *req, struct req_err *e)
{
	json_object *o = backends_reply(d, req, e, be_json);
	uint64_t slots, entries, live;
	double age;

	/* How old the "flows" counts are: the census runs every few seconds. */
	if (o && flow_count_table(&slots, &entries, &live, &age))
		json_object_object_add(o, "flows_age_s", json_object_new_double(age));
	return o;
}

/* The kernel module's counters, or null when it is not loaded. */
static json_object *slowpath_json(void)
{
	uint64_t cnt[MAGLEV_STAT_MAX + 1];
	json_object *so;
	unsigned int i;

	if (!slowpath_counters(cnt))
		return NULL;
	so = json_object_new_object();
	for (i = 0; i <= MAGLEV_STAT_MAX; i++)
		if (slowpath_nl_stat_name(i))
			json_object_object_add(so, slowpath_nl_stat_name(i),
					       json_object_new_uint64(cnt[i]));
	return so;
}

/* Counters by name (the names the metrics use); nothing if reading failed. */
static json_object *named_counts(int read_ret, const uint64_t *counts, uint32_t n,
				 const char *(*name)(uint32_t))
{
	json_object *o = json_object_new_object();
	uint32_t i;

	for (i = 0; !read_ret && i < n; i++)
		json_object_object_add(o, name(i), json_object_new_uint64(counts[i]));
	return o;
}

/* Which sample the rates are from and the seconds they span: pps x window_s
 * is what that window counted.
 */
static json_object *rates_window(const struct daemon *d)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "sample", json_object_new_uint64(d->rate_samples));
	json_object_object_add(o, "window_s", json_object_new_double(d->rate_window_s));
	return o;
}

static json_object *do_stats(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", NULL};
	uint64_t reasons[MAGLEV_REASON_MAX], ctrs[MAGLEV_CTR_MAX];
	json_object *o, *arr;
	char name[CTL_ADDR_STRLEN];
	const struct vip *only;
	uint32_t i, j;

	if (req_check_keys(req, keys, e) || opt_vip(d, req, &only, e))
		return NULL;
	o = req_ok_reply();
	arr = json_object_new_array();
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		struct maglev_vip_stats vs = {0};
		json_object *vo, *bes;

		if (!v || (only && v != only))
			continue;
		maglev_dp_vip_stats(d->dp, v->id, &vs);
		vo = json_object_new_object();
		ctl_format_vip(&v->key, name, sizeof(name));
		json_object_object_add(vo, "vip", json_object_new_string(name));
		json_object_object_add(vo, "packets",
				       json_object_new_uint64(vs.packets - v->base.packets));
		json_object_object_add(vo, "bytes",
				       json_object_new_uint64(vs.bytes - v->base.bytes));
		json_object_object_add(vo, "new_flows",
				       json_object_new_uint64(vs.new_flows - v->base.new_flows));
		json_object_object_add(vo, "pps", json_object_new_double(v->pps));
		json_object_object_add(vo, "bps", json_object_new_double(v->bps));
		json_object_object_add(vo, "new_flows_per_s", json_object_new_double(v->fps));
		{
			uint64_t sp = 0;

			maglev_dp_vip_spilled(d->dp, v->id, &sp);
			json_object_object_add(vo, "new_flow_spilled",
					       json_object_new_uint64(sp - v->spill_base));
		}
		bes = json_object_new_array();
		for (j = 0; j < v->nbe; j++) {
			const struct be *b = &v->bes[j];
			struct maglev_backend_stats bs = {0};
			json_object *bo = json_object_new_object();

			maglev_dp_backend_stats(d->dp, b->idx, &bs);
			ctl_format_addr(&b->addr, name, sizeof(name));
			json_object_object_add(bo, "backend", json_object_new_string(name));
			json_object_object_add(bo, "state",
					       json_object_new_string(be_state_name(b)));
			json_object_object_add(
				bo, "packets",
				json_object_new_uint64(bs.packets - b->base.packets));
			json_object_object_add(bo, "bytes",
					       json_object_new_uint64(bs.bytes - b->base.bytes));
			json_object_object_add(
				bo, "new_flows",
				json_object_new_uint64(bs.new_flows - b->base.new_flows));
			json_object_object_add(bo, "pps", json_object_new_double(b->pps));
			json_object_object_add(bo, "bps", json_object_new_double(b->bps));
			json_object_array_add(bes, bo);
		}
		json_object_object_add(vo, "backends", bes);
		json_object_array_add(arr, vo);
	}
	json_object_object_add(o, "vips", arr);
	json_object_object_add(o, "rates", rates_window(d));
	json_object_object_add(o, "reasons",
			       named_counts(maglev_dp_reason_stats(d->dp, reasons), reasons,
					    MAGLEV_REASON_MAX, maglev_dp_reason_name));
	json_object_object_add(o, "conn",
			       named_counts(maglev_dp_counter_stats(d->dp, ctrs), ctrs,
					    MAGLEV_CTR_MAX, maglev_dp_counter_name));
	json_object_object_add(o, "slowpath", slowpath_json());
	return o;
}

static json_object *be_health_json(struct daemon *d, const struct vip *v, const struct be *b)
{
	json_object *bo = json_object_new_object();
	char name[CTL_ADDR_STRLEN];

	ctl_format_vip(&v->key, name, sizeof(name));
	json_object_object_add(bo, "vip", json_object_new_string(name));
	ctl_format_addr(&b->addr, name, sizeof(name));
	json_object_object_add(bo, "backend", json_object_new_string(name));
	json_object_object_add(bo, "state", json_object_new_string(be_state_name(b)));
	health_json(d, v, b, bo);
	return bo;
}

static json_object *do_health(struct daemon *d, json_object *req, struct req_err *e)
{
	return backends_reply(d, req, e, be_health_json);
}

static uint32_t live_table[MAGLEV_TABLE_SIZE], live_prev[MAGLEV_TABLE_SIZE];
static uint32_t slot_count[MAGLEV_MAX_BACKENDS], prev_count[MAGLEV_MAX_BACKENDS];
/* Backend by datapath index, filled by index_bes(v, true) and emptied again
 * by index_bes(v, false): a search per slot would be O(slots x backends).
 */
static const struct be *be_of_idx[MAGLEV_MAX_BACKENDS];

static void index_bes(const struct vip *v, bool fill)
{
	uint32_t i;

	for (i = 0; i < v->nbe; i++)
		be_of_idx[v->bes[i].idx] = fill ? &v->bes[i] : NULL;
}

/*
 * The live table as runs of consecutive slots with the same backend, like
 * `cilium bpf lb maglev list`: [{"first","last","backend"}], backend null for
 * a slot naming no backend of v. skip_zero leaves out runs of index 0: the
 * second-chance column, where 0 means no previous owner.
 */
static json_object *table_ranges(const struct vip *v, const uint32_t *table, bool skip_zero)
{
	json_object *arr = json_object_new_array();
	char name[CTL_ADDR_STRLEN];
	uint32_t i, first = 0;

	index_bes(v, true);
	for (i = 1; i <= MAGLEV_TABLE_SIZE; i++) {
		const struct be *b;
		json_object *ro;

		if (i < MAGLEV_TABLE_SIZE && table[i] == table[first])
			continue;
		if (skip_zero && !table[first]) {
			first = i;
			continue;
		}
		b = be_of_idx[table[first]];
		ro = json_object_new_object();
		json_object_object_add(ro, "first", json_object_new_int64(first));
		json_object_object_add(ro, "last", json_object_new_int64(i - 1));
		if (b)
			ctl_format_addr(&b->addr, name, sizeof(name));
		json_object_object_add(ro, "backend", b ? json_object_new_string(name) : NULL);
		json_object_array_add(arr, ro);
		first = i;
	}
	index_bes(v, false);
	return arr;
}

static json_object *do_table(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", "dump", NULL};
	json_object *o, *arr;
	char name[CTL_ADDR_STRLEN];
	uint32_t i, other = 0, nprev = 0;
	bool dump = false, has;
	struct vip *v;
	int r;

	if (req_check_keys(req, keys, e) || req_get_vip(d, d->reg, req, &v, e) ||
	    req_get_bool(req, "dump", &dump, &has, e))
		return NULL;
	r = maglev_dp_table_read_prev(d->dp, v->id, live_table, live_prev);
	if (r) {
		req_fail(e, "reading the live table: %s", strerror(-r));
		return NULL;
	}
	/* The datapath refuses indices past the backend map; be safe anyway. */
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		if (live_table[i] >= MAGLEV_MAX_BACKENDS)
			live_table[i] = 0;
		if (live_prev[i] >= MAGLEV_MAX_BACKENDS)
			live_prev[i] = 0;
	}
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		slot_count[live_table[i]]++;
		/* Second chance: slots that carry a previous owner now. */
		if (live_prev[i]) {
			prev_count[live_prev[i]]++;
			nprev++;
		}
	}
	o = req_ok_reply();
	if (dump) {
		json_object_object_add(o, "ranges", table_ranges(v, live_table, false));
		/* Who keeps a slot's flows for the second-chance window. */
		json_object_object_add(o, "prev_ranges", table_ranges(v, live_prev, true));
	}
	ctl_format_vip(&v->key, name, sizeof(name));
	json_object_object_add(o, "vip", json_object_new_string(name));
	json_object_object_add(o, "size", json_object_new_int64(MAGLEV_TABLE_SIZE));
	json_object_object_add(o, "table_gen", json_object_new_uint64(v->table_gen));
	json_object_object_add(o, "rebuild_ms", json_object_new_double(v->rebuild_ms));
	json_object_object_add(o, "placement",
			       json_object_new_string(maglev_placement_name(v->placement)));
	drift_hex(drift_table_digest(v, live_table), name);
	json_object_object_add(o, "digest", json_object_new_string(name));
	arr = json_object_new_array();
	for (i = 0; i < v->nbe; i++) {
		const struct be *b = &v->bes[i];
		json_object *bo = json_object_new_object();

		ctl_format_addr(&b->addr, name, sizeof(name));
		json_object_object_add(bo, "backend", json_object_new_string(name));
		json_object_object_add(bo, "index", json_object_new_int64(b->idx));
		json_object_object_add(bo, "weight", json_object_new_int64(b->weight));
		json_object_object_add(bo, "state", json_object_new_string(be_state_name(b)));
		json_object_object_add(bo, "slots", json_object_new_int64(slot_count[b->idx]));
		json_object_object_add(bo, "prev_slots", json_object_new_int64(prev_count[b->idx]));
		json_object_object_add(
			bo, "share",
			json_object_new_double((double)slot_count[b->idx] / MAGLEV_TABLE_SIZE));
		json_object_array_add(arr, bo);
		slot_count[b->idx] = 0;
	}
	memset(prev_count, 0, sizeof(prev_count));
	/* Slots naming no backend of this VIP (empty, or stale): should be 0. */
	for (i = 0; i < MAGLEV_TABLE_SIZE; i++) {
		if (slot_count[live_table[i]]) {
			other += slot_count[live_table[i]];
			slot_count[live_table[i]] = 0;
		}
	}
	json_object_object_add(o, "backends", arr);
	json_object_object_add(o, "other_slots", json_object_new_int64(other));
	json_object_object_add(o, "prev_slots", json_object_new_int64(nprev));
	/* When the previous owners go: a flow carried by them (no entry on
	 * its balancer) breaks then.
	 */
	json_object_object_add(o, "prev_window_ms",
			       json_object_new_uint64(nprev ? second_chance_left_ms(v) : 0));
	return o;
}

static const struct be *find_be_idx(const struct vip *v, uint32_t idx)
{
	uint32_t i;

	for (i = 0; i < v->nbe; i++)
		if (v->bes[i].idx == idx)
			return &v->bes[i];
	return NULL;
}

static json_object *do_lookup(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", "src", NULL};
	struct maglev_flow_key fk;
	struct maglev_config mc;
	struct maglev_conn conn;
	struct maglev_backend mb;
	struct maglev_seed seed;
	char name[CTL_ADDR_STRLEN], hs[24];
	const struct be *tb, *cb = NULL;
	struct maglev_vip_key vk;
	struct ctl_addr src;
	json_object *o;
	uint16_t sport, dport;
	const char *s;
	uint32_t slot;
	uint64_t h;
	struct vip *v;
	bool conn_ok = false, any;
	int r;

	if (req_check_keys(req, keys, e) || req_get_str(req, "vip", true, &s, e) ||
	    ctl_parse_vip(s, &vk, &any, e->msg, sizeof(e->msg)))
		return NULL;
	/* As the datapath: the exact VIP, else the all-ports one of that
	 * address, with the given port as the flow's destination port.
	 */
	dport = vk.port;
	v = registry_find_vip(d->reg, &vk);
	if (!v && dport) {
		vk.port = 0;
		v = registry_find_vip(d->reg, &vk);
	}
	if (!v) {
		req_fail(e, "no VIP %s", s);
		return NULL;
	}
	if (req_get_str(req, "src", true, &s, e) ||
	    ctl_parse_endpoint(s, &src, &sport, e->msg, sizeof(e->msg)))
		return NULL;
	if (src.family != v->key.family) {
		req_fail(e, "source and VIP are of different address families");
		return NULL;
	}
	if (!dport) {
		req_fail(e, "lookup on an all-ports VIP needs the destination port: give the VIP "
			    "as ADDR:PORT/PROTO");
		return NULL;
	}
	r = maglev_dp_get_config(d->dp, &mc);
	if (r) {
		req_fail(e, "reading the datapath config: %s", strerror(-r));
		return NULL;
	}
	seed.k0 = mc.seed_k0;
	seed.k1 = mc.seed_k1;
	memset(&fk, 0, sizeof(fk));
	memcpy(fk.src, src.addr, sizeof(fk.src));
	memcpy(fk.dst, v->key.addr, sizeof(fk.dst));
	fk.sport = htons(sport);
	fk.dport = dport;
	fk.proto = v->key.proto;
	fk.family = v->key.family;
	if (v->key.family == MAGLEV_AF_INET)
		h = maglev_flow_hash_v4(&seed, fk.src[0], fk.dst[0], fk.sport, fk.dport, fk.proto);
	else
		h = maglev_flow_hash_v6(&seed, fk.src, fk.dst, fk.sport, fk.dport, fk.proto);
	slot = maglev_slot(h, MAGLEV_TABLE_SIZE);
	r = maglev_dp_table_read(d->dp, v->id, live_table);
	if (r) {
		req_fail(e, "reading the live table: %s", strerror(-r));
		return NULL;
	}
	tb = find_be_idx(v, live_table[slot]);
	o = req_ok_reply();
	/* A string: a 64-bit hash as a JSON number loses digits in jq and JavaScript. */
	snprintf(hs, sizeof(hs), "%" PRIu64, h);
	json_object_object_add(o, "hash", json_object_new_string(hs));
	json_object_object_add(o, "slot", json_object_new_int64(slot));
	if (tb) {
		ctl_format_addr(&tb->addr, name, sizeof(name));
		json_object_object_add(o, "table_backend", json_object_new_string(name));
	} else {
		json_object_object_add(o, "table_backend", NULL);
	}
	r = maglev_dp_conn_lookup(d->dp, &fk, &conn);
	if (!r) {
		json_object *co = json_object_new_object();

		cb = find_be_idx(v, conn.backend_idx);
		/* Usable exactly when the datapath would keep the flow on it. */
		conn_ok = !maglev_dp_backend_get(d->dp, conn.backend_idx, &mb) &&
			  mb.gen == conn.backend_gen &&
			  (mb.flags & (MAGLEV_BACKEND_F_UP | MAGLEV_BACKEND_F_DRAIN));
		json_object_object_add(co, "index", json_object_new_int64(conn.backend_idx));
		json_object_object_add(co, "gen", json_object_new_int64(conn.backend_gen));
		if (cb) {
			ctl_format_addr(&cb->addr, name, sizeof(name));
			json_object_object_add(co, "backend", json_object_new_string(name));
		}
		json_object_object_add(co, "usable", json_object_new_boolean(conn_ok));
		json_object_object_add(o, "conn", co);
	}
	if (conn_ok && cb) {
		ctl_format_addr(&cb->addr, name, sizeof(name));
		json_object_object_add(o, "backend", json_object_new_string(name));
		json_object_object_add(o, "source", json_object_new_string("conn"));
	} else if (tb) {
		ctl_format_addr(&tb->addr, name, sizeof(name));
		json_object_object_add(o, "backend", json_object_new_string(name));
		json_object_object_add(o, "source", json_object_new_string("table"));
	} else {
		json_object_object_add(o, "backend", NULL);
		json_object_object_add(o, "source", json_object_new_string("none"));
	}
	return o;
}

/* An ok answer whose "vips" holds every VIP of r as "dump" shows them. */
json_object *req_dump_reply(const struct registry *r)
{
	json_object *o = req_ok_reply(), *arr = json_object_new_array();
	uint32_t i;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (r->vips[i])
			json_object_array_add(arr, state_vip_json(r->vips[i], false));
	json_object_object_add(o, "vips", arr);
	return o;
}

static json_object *do_dump(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};

	if (req_check_keys(req, keys, e))
		return NULL;
	return req_dump_reply(d->reg);
}

/* Hot flows: {"vip": optional, "by": "flow" | "source", "k": 1..100}. */
static json_object *do_top(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", "by", "k", NULL};
	const char *by = "flow";
	enum hot_by b = HOT_BY_FLOW;
	struct vip *v = NULL;
	int64_t k = 10;
	bool has_k;
	json_object *o, *t;

	if (req_check_keys(req, keys, e) || req_get_str(req, "by", false, &by, e) ||
	    req_get_int(req, "k", 1, 100, &k, &has_k, e))
		return NULL;
	if (!by || !strcmp(by, "flow"))
		b = HOT_BY_FLOW;
	else if (!strcmp(by, "source"))
		b = HOT_BY_SOURCE;
	else {
		req_fail(e, "by: '%s' is neither flow nor source", by);
		return NULL;
	}
	if (json_object_object_get_ex(req, "vip", NULL) && req_get_vip(d, d->reg, req, &v, e))
		return NULL;
	o = req_ok_reply();
	t = hot_flows_json(d, v, b, (int)k);
	json_object_object_foreach(t, key, val)
	{
		json_object_object_add(o, key, json_object_get(val));
	}
	json_object_put(t);
	return o;
}

static json_object *do_status(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};
	char hex[DRIFT_HEX_LEN];
	json_object *o, *ifs;
	int i;

	if (req_check_keys(req, keys, e))
		return NULL;
	o = req_ok_reply();
	json_object_object_add(o, "version", json_object_new_string(MAGLEV_VERSION));
	json_object_object_add(o, "pid", json_object_new_int64(getpid()));
	json_object_object_add(o, "uptime_s",
			       json_object_new_int64((int64_t)(mono_ms() - d->start_ms) / 1000));
	json_object_object_add(o, "vips", json_object_new_int64(d->reg->nvips));
	json_object_object_add(o, "backends", json_object_new_int64(d->reg->nbackends));
	drift_hex(drift_vips_digest(d->reg), hex);
	json_object_object_add(o, "vips_digest", json_object_new_string(hex));
	drift_hex(drift_seed_fingerprint(&d->cfg.seed), hex);
	json_object_object_add(o, "seed_fingerprint", json_object_new_string(hex));
	json_object_object_add(o, "datapath", readback_json(d));
	ifs = json_object_new_array();
	for (i = 0; i < d->cfg.n_ifaces; i++)
		json_object_array_add(ifs, json_object_new_string(d->cfg.ifaces[i]));
	json_object_object_add(o, "interfaces", ifs);
	json_object_object_add(o, "xdp_mode",
			       json_object_new_string(d->cfg.xdp_generic ? "generic" : "native"));
	json_object_object_add(o, "pin_dir", json_object_new_string(d->cfg.pin_dir));
	json_object_object_add(o, "state_file", json_object_new_string(d->cfg.state_file));
	status_json(d, o);
	json_object_object_add(o, "health_checks_unknown",
			       json_object_new_uint64(health_unknown_total()));
	json_object_object_add(o, "announce", announce_json(d));
	json_object_object_add(o, "fleet", fleet_json(d));
	return o;
}

/* Every live balancer of the fleet (maglevctl fleet status). */
static json_object *do_fleet_status(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};
	json_object *o, *n;

	if (req_check_keys(req, keys, e))
		return NULL;
	if (!fleet_enabled(d)) {
		req_fail(e, "not in fleet mode (fleet_etcd is not set in maglevd's config)");
		return NULL;
	}
	o = req_ok_reply();
	n = fleet_nodes_json(d);
	json_object_object_foreach(n, k, v) json_object_object_add(o, k, json_object_get(v));
	json_object_put(n);
	return o;
}

/* Reload the config file and answer with the result (systemctl reload). */
static json_object *do_reload(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};
	char err[512];
	json_object *o;

	if (req_check_keys(req, keys, e))
		return NULL;
	if (daemon_reload(d, err, sizeof(err))) {
		req_fail(e, "%s", err);
		return NULL;
	}
	o = req_ok_reply();
	json_object_object_add(o, "config", json_object_new_string(d->config_path));
	json_object_object_add(o, "restart_pending", status_restart_pending(d));
	if (d->reload_warning[0])
		json_object_object_add(o, "warning", json_object_new_string(d->reload_warning));
	/* A new seed's tables: answered once they are in the datapath. */
	e->deferred = ctl_answer_after_commits(d, o) > 0;
	return e->deferred ? NULL : o;
}

/* {"cmd":"announce"} shows, {"cmd":"announce","state":"on"|"off"} sets too. */
static json_object *do_announce(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"state", NULL};
	json_object *o;
	const char *s;

	if (req_check_keys(req, keys, e) || req_get_str(req, "state", false, &s, e))
		return NULL;
	if (s && strcmp(s, "on") && strcmp(s, "off")) {
		req_fail(e, "announce state '%.20s': want on or off", s);
		return NULL;
	}
	if (s && announce_set(d, !strcmp(s, "on"), e->msg, sizeof(e->msg)))
		return NULL;
	o = req_ok_reply();
	json_object_object_add(o, "announce", announce_json(d));
	return o;
}

/* Whether an answered request changed something (audit.h): reload always,
 * announce when it sets a state.
 */
static bool always_a_change(json_object *req)
{
	(void)req;
	return true;
}

static bool sets_state(json_object *req)
{
	return json_object_object_get_ex(req, "state", NULL);
}

static const struct req_query queries[] = {
	{"vip.list", do_vip_list, NULL},
	{"vip.show", do_vip_show, NULL},
	{"backend.list", do_backend_list, NULL},
	{"stats", do_stats, NULL},
	{"health", do_health, NULL},
	{"table", do_table, NULL},
	{"lookup", do_lookup, NULL},
	{"dump", do_dump, NULL},
	{"status", do_status, NULL},
	{"top", do_top, NULL},
	{"fleet.status", do_fleet_status, NULL},
	{"reload", do_reload, always_a_change},
	{"announce", do_announce, sets_state},
};

const struct req_query *req_find_query(const char *cmd)
{
	size_t i;

	for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		if (!strcmp(queries[i].cmd, cmd))
			return &queries[i];
	return NULL;
}
