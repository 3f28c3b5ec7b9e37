// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/balance.h"
#include "model/hot_threshold.h"
#include "json_get.h"
#include "core/daemon.h"
#include "core/durable.h"
#include "core/log.h"
#include "maglev_table.h"
#include "placement.h"
#include "model/state.h"

#define STATE_MAX_FILE (64u << 20)

static json_object *backend_stats_json(const struct maglev_backend_stats *s)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "packets", json_object_new_uint64(s->packets));
	json_object_object_add(o, "bytes", json_object_new_uint64(s->bytes));
	json_object_object_add(o, "new_flows", json_object_new_uint64(s->new_flows));
	return o;
}

json_object *hc_field_json(const struct hc_params *p, const struct hc_field *f)
{
	if (f->kind == HCK_UINT)
		return json_object_new_int64(hc_field_uint(p, f));
	return json_object_new_string(hc_field_str(p, f));
}

/*
 * What settle, slow start and damping hold of b (CLOCK_MONOTONIC ms now),
 * as wall-clock ms: a restart's monotonic clock has another base, and a
 * restart must not end a hold, a ramp or a penalty early.
 */
static void admission_json(json_object *bo, const struct be *b, uint64_t now, uint64_t rnow)
{
	if (b->held)
		json_object_object_add(bo, "held_until_rt",
				       json_object_new_uint64(b->held_until - now + rnow));
	if (b->ramp_start && b->ramp_step)
		json_object_object_add(bo, "ramp_start_rt",
				       json_object_new_uint64(b->ramp_start - now + rnow));
	if (!b->penalty)
		return;
	json_object_object_add(bo, "penalty", json_object_new_uint64(b->penalty));
	json_object_object_add(bo, "penalty_rt",
			       json_object_new_uint64(b->penalty_ms - now + rnow));
	if (b->suppressed)
		json_object_object_add(bo, "suppressed", json_object_new_boolean(1));
	if (b->suppressed && b->damped_up)
		json_object_object_add(bo, "damped_up", json_object_new_boolean(1));
}

json_object *state_vip_json(const struct vip *v, bool with_ids)
{
	json_object *o = json_object_new_object(), *bes = json_object_new_array(), *chk;
	uint64_t now = with_ids ? mono_ms() : 0, rnow = with_ids ? now + real_offset_ms() : 0;
	char name[CTL_ADDR_STRLEN];
	uint32_t i;

	ctl_format_vip(&v->key, name, sizeof(name));
	json_object_object_add(o, "vip", json_object_new_string(name));
	if (with_ids)
		json_object_object_add(o, "id", json_object_new_int64(v->id));
	json_object_object_add(
		o, "encap", json_object_new_string(v->encap == MAGLEV_ENCAP_GUE ? "gue" : "ipip"));
	if (v->encap == MAGLEV_ENCAP_GUE)
		json_object_object_add(o, "gue_port", json_object_new_int64(v->gue_port));
	if (v->second_chance)
		json_object_object_add(o, "second_chance", json_object_new_boolean(1));
	json_object_object_add(o, "placement",
			       json_object_new_string(maglev_placement_name(v->placement)));
	if (v->placement == MAGLEV_PLACEMENT_RING)
		json_object_object_add(o, "vnodes", json_object_new_int64(v->vnodes));
	if (v->balance_milli) {
		char bf[16];

		balance_format(v->balance_milli, bf, sizeof(bf));
		json_object_object_add(o, "balance_factor", json_object_new_string(bf));
	}
	if (v->slow_start_ms >= 0)
		json_object_object_add(o, "slow_start_ms", json_object_new_int64(v->slow_start_ms));
	if (v->hot_threshold != HOT_THRESHOLD_DEFAULT) {
		char ht[8];

		hot_threshold_format(v->hot_threshold, ht, sizeof(ht));
		json_object_object_add(o, "hot_threshold", json_object_new_string(ht));
	}
	chk = json_object_new_object();
	for (i = 0; i < HC_NFIELDS; i++) {
		const struct hc_field *f = hc_field_at(HC_ORDER_STATE, i);

		if (v->hc_set & f->bit)
			json_object_object_add(chk, f->key, hc_field_json(&v->hc, f));
	}
	json_object_object_add(o, "check", chk);
	if (with_ids) {
		json_object *base = json_object_new_object();

		json_object_object_add(base, "packets", json_object_new_uint64(v->base.packets));
		json_object_object_add(base, "bytes", json_object_new_uint64(v->base.bytes));
		json_object_object_add(base, "new_flows",
				       json_object_new_uint64(v->base.new_flows));
		json_object_object_add(o, "base", base);
	}
	for (i = 0; i < v->nbe; i++) {
		const struct be *b = &v->bes[i];
		json_object *bo = json_object_new_object();

		ctl_format_addr(&b->addr, name, sizeof(name));
		json_object_object_add(bo, "addr", json_object_new_string(name));
		if (with_ids) {
			json_object_object_add(bo, "idx", json_object_new_int64(b->idx));
			json_object_object_add(bo, "gen", json_object_new_int64(b->gen));
		}
		json_object_object_add(bo, "weight", json_object_new_int64(b->weight));
		json_object_object_add(bo, "drain", json_object_new_boolean(b->drain));
		if (with_ids) {
			json_object_object_add(bo, "base", backend_stats_json(&b->base));
			admission_json(bo, b, now, rnow);
		}
		json_object_array_add(bes, bo);
	}
	json_object_object_add(o, "backends", bes);
	return o;
}

char *state_render(const struct registry *r, size_t *len)
{
	json_object *root = json_object_new_object(), *vips = json_object_new_array();
	char *text;
	uint32_t i;

	json_object_object_add(root, "version", json_object_new_int(STATE_VERSION));
	for (i = 0; i < MAGLEV_MAX_VIPS; i++)
		if (r->vips[i])
			json_object_array_add(vips, state_vip_json(r->vips[i], true));
	json_object_object_add(root, "vips", vips);
	if (r->fleet_rev)
		json_object_object_add(root, "fleet_revision",
				       json_object_new_uint64(r->fleet_rev));
	text = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	if (text)
		*len = strlen(text);
	return text;
}

int state_write(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd, ret = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, errlen, "state file path too long");
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "state file %s: %s", tmp, strerror(errno));
		return ret;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		off += (size_t)n;
	}
	if (!ret && (write(fd, "\n", 1) != 1 || fsync(fd)))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "writing %s: %s", tmp, strerror(-ret));
		unlink(tmp);
		return ret;
	}
	if (rename(tmp, path)) {
		ret = -errno;
		snprintf(err, errlen, "renaming %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return ret;
	}
	/* The rename is durable only once the directory is. */
	ret = durable_dir_of(path);
	/* (a directory that cannot be opened for it was never fsynced before either) */
	if (ret == -EACCES || ret == -ENOENT)
		ret = 0;
	if (ret)
		snprintf(err, errlen, "fsync of state directory: %s", strerror(-ret));
	return ret;
}

/* state_render, with err set when it fails. */
static char *render(const struct registry *r, size_t *len, char *err, size_t errlen)
{
	char *text = state_render(r, len);

	if (!text)
		snprintf(err, errlen, "out of memory");
	return text;
}

int state_save(const char *path, const struct registry *r, char *err, size_t errlen)
{
	size_t len = 0;
	char *text = render(r, &len, err, errlen);
	int ret;

	if (!text)
		return -ENOMEM;
	ret = state_write(path, text, len, err, errlen);
	free(text);
	return ret;
}

/* The state file's getters: json_get.h in its state-file wording. */
static int get_member(json_object *o, const char *key, json_type type, bool required,
		      json_object **out, char *err, size_t errlen)
{
	const struct json_get g = {JSON_GET_STATE, err, errlen};

	return json_get_member(&g, o, key, type, required, out);
}

static int get_uint(json_object *o, const char *key, bool required, uint64_t max, uint64_t *out,
		    char *err, size_t errlen)
{
	const struct json_get g = {JSON_GET_STATE, err, errlen};

	return json_get_uint(&g, o, key, required, max, out);
}

/* The "check" object, read in maglevctl save's order: of several bad
 * members, the same one is named as before the table.
 */
static int parse_check(json_object *c, struct hc_params *hc, uint32_t *set, char *err,
		       size_t errlen)
{
	size_t i;

	memset(hc, 0, sizeof(*hc));
	*set = 0;
	for (i = 0; i < HC_NFIELDS; i++) {
		const struct hc_field *f = hc_field_at(HC_ORDER_SAVE, i);
		uint64_t u = UINT64_MAX;
		json_object *m;

		if (f->kind == HCK_UINT) {
			if (get_uint(c, f->key, false, f->hi, &u, err, errlen))
				return -EINVAL;
			if (u == UINT64_MAX)
				continue;
			hc_field_set_uint(hc, f, (uint32_t)u);
		} else {
			if (get_member(c, f->key, json_type_string, false, &m, err, errlen))
				return -EINVAL;
			if (!m)
				continue;
			if (f->kind == HCK_STR && json_object_get_string_len(m) >= (int)f->size) {
				snprintf(err, errlen, "check %s too long", f->key);
				return -EINVAL;
			}
			if (hc_field_set_str(hc, f, json_object_get_string(m))) {
				snprintf(err, errlen, "bad check %s", f->key);
				return -EINVAL;
			}
		}
		*set |= f->bit;
	}
	return 0;
}

/*
 * admission_json's members back into b, on this start's CLOCK_MONOTONIC
 * base, as they were written (absent in files from before them: none).
 * Whether they still hold, admission_restore decides at the start.
 */
static int parse_admission(json_object *bo, struct be *b, char *err, size_t errlen)
{
	uint64_t now = mono_ms(), rnow = now + real_offset_ms(), held = 0, ramp = 0, pen = 0,
		 pen_rt = 0;
	json_object *sup, *dup;

	if (get_uint(bo, "held_until_rt", false, INT64_MAX, &held, err, errlen) ||
	    get_uint(bo, "ramp_start_rt", false, INT64_MAX, &ramp, err, errlen) ||
	    get_uint(bo, "penalty", false, UINT32_MAX, &pen, err, errlen) ||
	    get_uint(bo, "penalty_rt", false, INT64_MAX, &pen_rt, err, errlen) ||
	    get_member(bo, "suppressed", json_type_boolean, false, &sup, err, errlen) ||
	    get_member(bo, "damped_up", json_type_boolean, false, &dup, err, errlen))
		return -EINVAL;
	if (held) {
		b->held = true;
		b->held_until = mono_of_real(held, now, rnow);
	}
	if (ramp) {
		b->ramp_start = mono_of_real(ramp, now, rnow);
		b->ramp_step = 1; /* which one: admission_restore */
	}
	if (pen) {
		b->penalty = (uint32_t)pen;
		b->penalty_ms = pen_rt ? mono_of_real(pen_rt, now, rnow) : now;
		b->suppressed = sup && json_object_get_boolean(sup);
		b->damped_up = b->suppressed && dup && json_object_get_boolean(dup);
	}
	return 0;
}

static int parse_vip(json_object *vo, struct registry *r, const struct registry_ctx *ctx, char *err,
		     size_t errlen)
{
	json_object *m, *bes, *base;
	struct maglev_vip_key key;
	uint64_t id, gue = 0, u;
	struct hc_params hc = {0};
	uint32_t hc_set = 0;
	uint8_t encap = MAGLEV_ENCAP_IPIP;
	enum maglev_placement pk;
	uint64_t vn = MAGLEV_VNODES_DEFAULT;
	bool any;
	struct vip *v;
	size_t i, n;

	if (!json_object_is_type(vo, json_type_object)) {
		snprintf(err, errlen, "VIP entry is not an object");
		return -EINVAL;
	}
	if (get_member(vo, "vip", json_type_string, true, &m, err, errlen) ||
	    ctl_parse_vip(json_object_get_string(m), &key, &any, err, errlen))
		return -EINVAL;
	if (get_uint(vo, "id", true, MAGLEV_MAX_VIPS - 1, &id, err, errlen))
		return -EINVAL;
	if (get_member(vo, "encap", json_type_string, false, &m, err, errlen))
		return -EINVAL;
	if (m && !strcmp(json_object_get_string(m), "gue"))
		encap = MAGLEV_ENCAP_GUE;
	else if (m && strcmp(json_object_get_string(m), "ipip")) {
		snprintf(err, errlen, "bad encap");
		return -EINVAL;
	}
	if (get_uint(vo, "gue_port", false, 65535, &gue, err, errlen))
		return -EINVAL;
	if (get_member(vo, "check", json_type_object, false, &m, err, errlen))
		return -EINVAL;
	if (m && parse_check(m, &hc, &hc_set, err, errlen))
		return -EINVAL;
	if (registry_vip_add(r, ctx, &key, encap, (uint16_t)gue, &hc, hc_set, (int32_t)id, err,
			     errlen))
		return -EINVAL;
	v = r->vips[id];
	if (get_member(vo, "second_chance", json_type_boolean, false, &m, err, errlen))
		return -EINVAL;
	v->second_chance = m && json_object_get_boolean(m);
	if (v->second_chance && v->encap != MAGLEV_ENCAP_GUE) {
		snprintf(err, errlen, "second_chance needs encap gue");
		return -EINVAL;
	}
	/* Absent in files from before placements: maglev, as then. */
	if (get_member(vo, "placement", json_type_string, false, &m, err, errlen))
		return -EINVAL;
	if (m && maglev_placement_parse(json_object_get_string(m), &pk)) {
		snprintf(err, errlen, "unknown placement '%.40s'", json_object_get_string(m));
		return -EINVAL;
	}
	v->placement = m ? pk : MAGLEV_PLACEMENT_MAGLEV;
	if (get_uint(vo, "vnodes", false, MAGLEV_VNODES_MAX, &vn, err, errlen))
		return -EINVAL;
	if (!vn) {
		snprintf(err, errlen, "'vnodes' out of range");
		return -EINVAL;
	}
	v->vnodes = (uint32_t)vn;
	/* Absent: off (files from before bounded loads too). */
	if (get_member(vo, "balance_factor", json_type_string, false, &m, err, errlen))
		return -EINVAL;
	if (m && balance_parse(json_object_get_string(m), &v->balance_milli)) {
		snprintf(err, errlen, "'balance_factor' '%.40s' is not 1.01..10 or off",
			 json_object_get_string(m));
		return -EINVAL;
	}
	/* Absent: the config's (files from before slow start too). */
	if (get_member(vo, "slow_start_ms", json_type_int, false, &m, err, errlen))
		return -EINVAL;
	if (m && (json_object_get_int64(m) < 0 || json_object_get_int64(m) > 86400000)) {
		snprintf(err, errlen, "'slow_start_ms' %lld out of range 0..86400000",
			 (long long)json_object_get_int64(m));
		return -EINVAL;
	}
	v->slow_start_ms = m ? json_object_get_int64(m) : -1;
	/* Absent: the configured one (files from before hot flows too). */
	if (get_member(vo, "hot_threshold", json_type_string, false, &m, err, errlen))
		return -EINVAL;
	if (m && hot_threshold_parse(json_object_get_string(m), &v->hot_threshold)) {
		snprintf(err, errlen, "'hot_threshold' '%.40s' is not 1..100, off or default",
			 json_object_get_string(m));
		return -EINVAL;
	}
	if (get_member(vo, "base", json_type_object, false, &base, err, errlen))
		return -EINVAL;
	if (base) {
		u = 0; /* absent: 0, not what the last read left */
		if (get_uint(base, "packets", false, UINT64_MAX - 1, &u, err, errlen))
			return -EINVAL;
		v->base.packets = v->last.packets = u;
		u = 0;
		if (get_uint(base, "bytes", false, UINT64_MAX - 1, &u, err, errlen))
			return -EINVAL;
		v->base.bytes = v->last.bytes = u;
		u = 0;
		if (get_uint(base, "new_flows", false, UINT64_MAX - 1, &u, err, errlen))
			return -EINVAL;
		v->base.new_flows = v->last.new_flows = u;
	}
	if (get_member(vo, "backends", json_type_array, false, &bes, err, errlen))
		return -EINVAL;
	n = bes ? json_object_array_length(bes) : 0;
	for (i = 0; i < n; i++) {
		json_object *bo = json_object_array_get_idx(bes, i), *d, *bb;
		uint64_t idx, gen, weight = 1;
		struct ctl_addr a;
		struct be *b;

		if (!json_object_is_type(bo, json_type_object)) {
			snprintf(err, errlen, "backend entry is not an object");
			return -EINVAL;
		}
		if (get_member(bo, "addr", json_type_string, true, &m, err, errlen) ||
		    ctl_parse_addr(json_object_get_string(m), &a, err, errlen) ||
		    get_uint(bo, "idx", true, MAGLEV_MAX_BACKENDS - 1, &idx, err, errlen) ||
		    get_uint(bo, "gen", true, UINT32_MAX, &gen, err, errlen) ||
		    get_uint(bo, "weight", false, MAGLEV_WEIGHT_MAX, &weight, err, errlen) ||
		    get_member(bo, "drain", json_type_boolean, false, &d, err, errlen))
			return -EINVAL;
		if (registry_be_add(r, ctx, v, &a, (uint32_t)weight,
				    d && json_object_get_boolean(d), (int64_t)idx, (uint32_t)gen,
				    err, errlen))
			return -EINVAL;
		b = &v->bes[v->nbe - 1];
		if (get_member(bo, "base", json_type_object, false, &bb, err, errlen) ||
		    parse_admission(bo, b, err, errlen))
			return -EINVAL;
		if (bb) {
			u = 0;
			if (get_uint(bb, "packets", false, UINT64_MAX - 1, &u, err, errlen))
				return -EINVAL;
			b->base.packets = b->last.packets = u;
			u = 0;
			if (get_uint(bb, "bytes", false, UINT64_MAX - 1, &u, err, errlen))
				return -EINVAL;
			b->base.bytes = b->last.bytes = u;
			u = 0;
			if (get_uint(bb, "new_flows", false, UINT64_MAX - 1, &u, err, errlen))
				return -EINVAL;
			b->base.new_flows = b->last.new_flows = u;
		}
	}
	return 0;
}

int state_parse(const char *text, size_t len, const struct registry_ctx *ctx, struct registry **out,
		char *err, size_t errlen)
{
	json_tokener *tok = json_tokener_new();
	json_object *root, *vips;
	struct registry *r = NULL;
	char e[200] = "";
	uint64_t ver;
	size_t i, n;

	*out = NULL;
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(err, errlen, "not valid JSON: %s",
			 json_tokener_error_desc(json_tokener_get_error(tok)));
		json_object_put(root);
		json_tokener_free(tok);
		return -EINVAL;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(root, json_type_object) ||
	    get_uint(root, "version", true, 1000, &ver, e, sizeof(e))) {
		snprintf(err, errlen, "not a maglevd state file %s", e);
		goto bad;
	}
	if (ver != STATE_VERSION) {
		snprintf(err, errlen, "state file version %llu, this maglevd reads %d",
			 (unsigned long long)ver, STATE_VERSION);
		goto bad;
	}
	if (get_member(root, "vips", json_type_array, true, &vips, e, sizeof(e))) {
		snprintf(err, errlen, "%s", e);
		goto bad;
	}
	r = registry_new();
	if (!r) {
		snprintf(err, errlen, "out of memory");
		goto bad;
	}
	if (get_uint(root, "fleet_revision", false, INT64_MAX, &r->fleet_rev, e, sizeof(e))) {
		snprintf(err, errlen, "%s", e);
		goto bad;
	}
	n = json_object_array_length(vips);
	for (i = 0; i < n; i++) {
		if (parse_vip(json_object_array_get_idx(vips, i), r, ctx, e, sizeof(e))) {
			snprintf(err, errlen, "VIP entry %zu: %s", i, e);
			goto bad;
		}
	}
	/* What a request would refuse, a state file may not smuggle in. */
	if (registry_check_placements(r, e, sizeof(e))) {
		snprintf(err, errlen, "%s", e);
		goto bad;
	}
	json_object_put(root);
	*out = r;
	return 0;
bad:
	registry_free(r);
	json_object_put(root);
	return -EINVAL;
}

int state_check_config(const struct registry *r, const struct maglevd_config *cfg, char *err,
		       size_t errlen)
{
	/* No datapath: the parse only validates; ids and indices come from r. */
	const struct registry_ctx ctx = {.dp = NULL, .cfg = cfg};
	struct registry *check = NULL;
	size_t len = 0;
	char *text = render(r, &len, err, errlen);
	int ret;

	if (!text)
		return -ENOMEM;
	/* The same parser as the start: what it refuses, a reload refuses. */
	ret = state_parse(text, len, &ctx, &check, err, errlen);
	registry_free(check);
	free(text);
	return ret;
}

int state_load(const char *path, const struct registry_ctx *ctx, struct registry **out,
	       bool *missing, char *err, size_t errlen)
{
	struct stat st;
	char *buf;
	size_t off = 0;
	ssize_t n;
	int fd, r;

	*missing = false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			*missing = true;
			*out = registry_new();
			return *out ? 0 : -ENOMEM;
		}
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) || st.st_size > STATE_MAX_FILE) {
		close(fd);
		snprintf(err, errlen, "%s: unreadable or too large", path);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (off < (size_t)st.st_size && (n = read(fd, buf + off, (size_t)st.st_size - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	r = state_parse(buf, off, ctx, out, err, errlen);
	if (r) {
		char e[300];

		snprintf(e, sizeof(e), "%s: %s", path, err);
		snprintf(err, errlen, "%s", e);
	}
	free(buf);
	return r;
}
