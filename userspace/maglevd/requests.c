// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control requests. Each is validated completely (unknown fields, types,
 * ranges, addresses) before anything changes; changes run on a clone of the
 * live registry and are committed only when every part of them succeeded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "be_state.h"
#include "daemon.h"
#include "drift.h"
#include "bounded.h"
#include "flow_count.h"
#include "fleet.h"
#include "log.h"
#include "maglev_hash.h"
#include "maglev_table.h"
#include "placement.h"
#include "slowpath.h"
#include "slowpath_nl.h"
#include "state.h"
#include "status.h"
#include "version.h"

#define BATCH_MAX	 200000
#define GUE_DEFAULT_PORT 6080

struct req_err {
	char msg[300];
	bool deferred; /* no answer yet: fleet.c gives it */
};

static int fail(struct req_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct req_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Reject members other than the allowed ones ("cmd" always allowed). */
static int check_keys(json_object *req, const char *const *allowed, struct req_err *e)
{
	json_object_object_foreach(req, key, val)
	{
		const char *const *a;

		(void)val;
		if (!strcmp(key, "cmd"))
			continue;
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a)
			return fail(e, "unknown field '%.40s'", key);
	}
	return 0;
}

static int get_str(json_object *req, const char *key, bool required, const char **out,
		   struct req_err *e)
{
	json_object *m;

	*out = NULL;
	/* An explicit null is a wrong type, not an absent field. */
	if (!json_object_object_get_ex(req, key, &m)) {
		if (required)
			return fail(e, "missing '%s'", key);
		return 0;
	}
	if (!m || !json_object_is_type(m, json_type_string))
		return fail(e, "'%s' must be a string", key);
	*out = json_object_get_string(m);
	if (strlen(*out) != (size_t)json_object_get_string_len(m))
		return fail(e, "'%s' holds a NUL byte", key);
	return 0;
}

/* An optional integer in [min, max]; *present says whether it was given. */
static int get_int(json_object *req, const char *key, int64_t min, int64_t max, int64_t *out,
		   bool *present, struct req_err *e)
{
	json_object *m;
	int64_t v;

	*present = false;
	if (!json_object_object_get_ex(req, key, &m))
		return 0;
	if (!m || !json_object_is_type(m, json_type_int))
		return fail(e, "'%s' must be an integer", key);
	errno = 0;
	v = json_object_get_int64(m);
	if (v == INT64_MAX || v < min || v > max)
		return fail(e, "%s %s out of range %lld..%lld", key, json_object_to_json_string(m),
			    (long long)min, (long long)max);
	*out = v;
	*present = true;
	return 0;
}

static int get_bool(json_object *req, const char *key, bool *out, bool *present, struct req_err *e)
{
	json_object *m;

	*present = false;
	if (!json_object_object_get_ex(req, key, &m))
		return 0;
	if (!m || !json_object_is_type(m, json_type_boolean))
		return fail(e, "'%s' must be true or false", key);
	*out = json_object_get_boolean(m);
	*present = true;
	return 0;
}

/* What makes an address unusable as a VIP or a backend, or NULL. */
static const char *addr_unusable(uint8_t family, const uint32_t *addr)
{
	const struct in6_addr *a6 = (const struct in6_addr *)addr;
	uint32_t h = ntohl(addr[0]);

	if (family == MAGLEV_AF_INET) {
		if (!h)
			return "the unspecified address";
		if (h == 0xffffffffu)
			return "the broadcast address";
		if ((h >> 28) == 0xe)
			return "a multicast address";
		if ((h >> 24) == 127)
			return "a loopback address";
		return NULL;
	}
	if (IN6_IS_ADDR_UNSPECIFIED(a6))
		return "the unspecified address";
	if (IN6_IS_ADDR_MULTICAST(a6))
		return "a multicast address";
	if (IN6_IS_ADDR_LOOPBACK(a6) || IN6_IS_ADDR_V4MAPPED(a6))
		return "a loopback or IPv4-mapped address";
	return NULL;
}

static int get_vip(struct daemon *d, struct registry *r, json_object *req, struct vip **v,
		   struct req_err *e)
{
	struct maglev_vip_key key;
	const char *s;
	bool any;

	if (get_str(req, "vip", true, &s, e))
		return -EINVAL;
	if (ctl_parse_vip(s, &key, &any, e->msg, sizeof(e->msg)))
		return -EINVAL;
	*v = registry_find_vip(r, &key);
	if (!*v)
		return fail(e, "no VIP %s", s);
	return 0;
}

static int get_backend(json_object *req, struct ctl_addr *a, struct req_err *e)
{
	const char *s;

	if (get_str(req, "backend", true, &s, e))
		return -EINVAL;
	return ctl_parse_addr(s, a, e->msg, sizeof(e->msg));
}

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

	if (get_str(req, "placement", false, &s, e) ||
	    get_int(req, "vnodes", 1, MAGLEV_VNODES_MAX, &vn, &has_vn, e))
		return -EINVAL;
	if (s && maglev_placement_parse(s, &kind))
		return fail(e, "unknown placement '%.40s' (maglev, ring or rendezvous)", s);
	if (has_vn && kind != MAGLEV_PLACEMENT_RING)
		return fail(e, "vnodes applies to the ring placement only (this VIP's is %s)",
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

	if (get_str(req, "balance_factor", false, &s, e))
		return -EINVAL;
	if (!s)
		return 0;
	if (balance_parse(s, &milli))
		return fail(e,
			    "balance factor '%.40s' is not a number from 1.01 to 10 (or off): "
			    "the cap is that many times the mean load",
			    s);
	v->balance_milli = milli;
	return 0;
}

/* The keys of vip.add; vip.set takes the same but port_any (it would make
 * another VIP): the list from its second entry on.
 */
static const char *const vip_add_keys[] = {"port_any",
					   "vip",
					   "encap",
					   "gue_port",
					   "check",
					   "check_port",
					   "check_path",
					   "check_status",
					   "check_rise",
					   "check_fall",
					   "check_interval_ms",
					   "check_timeout_ms",
					   "check_on_fail",
					   "check_payload",
					   "check_expect",
					   "check_dns_name",
					   "placement",
					   "vnodes",
					   "second_chance",
					   "balance_factor",
					   NULL};

/* The options vip add and vip set share: encapsulation and health-check
 * overrides, applied over *encap, *gue, *hc and *hc_set (a VIP's current
 * values for set). *any_given tells whether one was there.
 */
static int vip_opts(json_object *req, uint8_t *encap, uint16_t *gue, bool *sc, struct hc_params *hc,
		    uint32_t *hc_set, bool *any_given, struct req_err *e)
{
	const char *encap_s, *check_s, *path_s, *fail_s;
	int64_t v, port = *gue;
	bool has, gue_given, sc_given;

	if (get_str(req, "encap", false, &encap_s, e))
		return -EINVAL;
	if (encap_s && !strcmp(encap_s, "gue")) {
		if (*encap != MAGLEV_ENCAP_GUE)
			port = GUE_DEFAULT_PORT;
		*encap = MAGLEV_ENCAP_GUE;
	} else if (encap_s && !strcmp(encap_s, "ipip")) {
		*encap = MAGLEV_ENCAP_IPIP;
		port = 0;
	} else if (encap_s) {
		return fail(e, "unknown encap '%.40s' (ipip or gue)", encap_s);
	}
	if (get_int(req, "gue_port", 1, 65535, &port, &gue_given, e))
		return -EINVAL;
	if (gue_given && *encap != MAGLEV_ENCAP_GUE)
		return fail(e, "gue_port given but encap is not gue");
	*gue = (uint16_t)port;
	if (get_bool(req, "second_chance", sc, &sc_given, e))
		return -EINVAL;
	if (*sc && *encap != MAGLEV_ENCAP_GUE)
		return fail(e,
			    "second_chance needs encap gue: IPIP has no room to carry the "
			    "previous owner%s",
			    sc_given ? "" : " (this VIP has second chance: turn it off first)");
	*any_given = encap_s || gue_given || sc_given;
	if (get_str(req, "check", false, &check_s, e))
		return -EINVAL;
	if (check_s) {
		if (hc_type_parse(check_s, &hc->type))
			return fail(e, "unknown check '%.40s' (tcp, http, udp, dns or none)",
				    check_s);
		*hc_set |= HCF_TYPE;
		*any_given = true;
	}
	if (get_str(req, "check_path", false, &path_s, e))
		return -EINVAL;
	if (path_s) {
		if (strlen(path_s) >= sizeof(hc->path))
			return fail(e, "check_path too long");
		strcpy(hc->path, path_s);
		*hc_set |= HCF_PATH;
		*any_given = true;
	}
#define OPT_STR(name, field, bit)                                            \
	if (get_str(req, name, false, &path_s, e))                           \
		return -EINVAL;                                              \
	if (path_s) {                                                        \
		if (strlen(path_s) >= sizeof(hc->field))                     \
			return fail(e, name " too long (at most %zu bytes)", \
				    sizeof(hc->field) - 1);                  \
		strcpy(hc->field, path_s);                                   \
		*hc_set |= bit;                                              \
		*any_given = true;                                           \
	}
	OPT_STR("check_payload", payload, HCF_PAYLOAD)
	OPT_STR("check_expect", expect, HCF_EXPECT)
	OPT_STR("check_dns_name", dns_name, HCF_DNS_NAME)
#undef OPT_STR
	if (get_str(req, "check_on_fail", false, &fail_s, e))
		return -EINVAL;
	if (fail_s) {
		if (hc_on_fail_parse(fail_s, &hc->on_fail))
			return fail(e, "unknown check_on_fail '%.40s' (repick or drain)", fail_s);
		*hc_set |= HCF_ON_FAIL;
		*any_given = true;
	}
#define OPT_INT(name, field, bit, lo, hi)            \
	if (get_int(req, name, lo, hi, &v, &has, e)) \
		return -EINVAL;                      \
	if (has) {                                   \
		hc->field = v;                       \
		*hc_set |= bit;                      \
		*any_given = true;                   \
	}
	OPT_INT("check_port", port, HCF_PORT, 1, 65535)
	OPT_INT("check_status", status, HCF_STATUS, 100, 599)
	OPT_INT("check_rise", rise, HCF_RISE, 1, 100)
	OPT_INT("check_fall", fall, HCF_FALL, 1, 100)
	OPT_INT("check_interval_ms", interval_ms, HCF_INTERVAL, 100, 3600000)
	OPT_INT("check_timeout_ms", timeout_ms, HCF_TIMEOUT, 10, 3600000)
#undef OPT_INT
	return 0;
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

	if (check_keys(req, vip_add_keys, e) || get_str(req, "vip", true, &s, e) ||
	    ctl_parse_vip(s, &key, &any, e->msg, sizeof(e->msg)))
		return -EINVAL;
	if (addr_unusable(key.family, key.addr))
		return fail(e, "VIP %.60s: %s cannot be a VIP", s,
			    addr_unusable(key.family, key.addr));
	if (get_bool(req, "port_any", &port_any, &has, e))
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
	if (set_placement(req, &probe, e) || set_balance(req, &probe, e))
		return -EINVAL;
	if (key.family == MAGLEV_AF_INET6) {
		struct maglev_config mc;

		if (!maglev_dp_get_config(d->dp, &mc) && mc.mtu && mc.mtu < MAGLEV_MTU_MIN_IPV6)
			return fail(
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
	if (set_placement(req, registry_find_vip(r, &key), e))
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

	if (check_keys(req, vip_add_keys + 1, e) || get_vip(d, r, req, &v, e))
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
	    !json_object_object_get_ex(req, "balance_factor", &m))
		return fail(e, "nothing to set: give placement, vnodes, balance_factor, encap, "
			       "gue_port, second_chance or a check option");
	if (set_placement(req, v, e) || set_balance(req, v, e))
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

	if (check_keys(req, keys, e) || get_vip(d, r, req, &v, e))
		return -EINVAL;
	return registry_vip_del(r, &v->key, e->msg, sizeof(e->msg));
}

static int do_backend_add(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", "backend", "weight", "drain", "start_down", NULL};
	struct ctl_addr a;
	int64_t weight = 1;
	bool has, drain = false, start_down = false;
	struct vip *v;
	int ret;

	if (check_keys(req, keys, e) || get_vip(d, r, req, &v, e) || get_backend(req, &a, e) ||
	    get_int(req, "weight", 0, MAGLEV_WEIGHT_MAX, &weight, &has, e) ||
	    get_bool(req, "drain", &drain, &has, e) ||
	    get_bool(req, "start_down", &start_down, &has, e))
		return -EINVAL;
	if (addr_unusable(a.family, a.addr)) {
		char bname[CTL_ADDR_STRLEN];

		ctl_format_addr(&a, bname, sizeof(bname));
		return fail(e, "backend %s: %s cannot be a backend", bname,
			    addr_unusable(a.family, a.addr));
	}
	ret = registry_be_add(r, &d->ctx, v, &a, (uint32_t)weight, drain, -1, 0, e->msg,
			      sizeof(e->msg));
	/* No traffic before a check has passed (health.c brings it up). */
	if (!ret && start_down) {
		struct be *b = &v->bes[v->nbe - 1];

		b->up = false;
		b->start_down = true;
	}
	return ret;
}

static int do_backend_del(struct daemon *d, struct registry *r, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", "backend", NULL};
	struct ctl_addr a;
	struct vip *v;

	if (check_keys(req, keys, e) || get_vip(d, r, req, &v, e) || get_backend(req, &a, e))
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

	if (check_keys(req, keys, e) || get_vip(d, r, req, &v, e) || get_backend(req, &a, e) ||
	    get_int(req, "weight", 0, MAGLEV_WEIGHT_MAX, &weight, &has_w, e) ||
	    get_bool(req, "drain", &drain, &has_d, e))
		return -EINVAL;
	if (!has_w && !has_d)
		return fail(e, "nothing to set: give weight or drain");
	b = vip_find_be(v, &a);
	if (!b) {
		ctl_format_addr(&a, bname, sizeof(bname));
		return fail(e, "no backend %s in that VIP", bname);
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

	if (check_keys(req, keys, e))
		return -EINVAL;
	registry_flush(r);
	return 0;
}

typedef int (*mut_fn)(struct daemon *d, struct registry *r, json_object *req, struct req_err *e);

static const struct {
	const char *cmd;
	mut_fn fn;
} mutations[] = {
	{"vip.add", do_vip_add},
	{"vip.del", do_vip_del},
	{"vip.set", do_vip_set},
	{"backend.add", do_backend_add},
	{"backend.del", do_backend_del},
	{"backend.set", do_backend_set},
	{"flush", do_flush},
};

static mut_fn find_mutation(const char *cmd)
{
	size_t i;

	for (i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++)
		if (!strcmp(mutations[i].cmd, cmd))
			return mutations[i].fn;
	return NULL;
}

static const char *req_cmd(json_object *req)
{
	json_object *c;

	if (!json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "cmd", &c) || !json_object_is_type(c, json_type_string))
		return NULL;
	/* "flush\u0000junk" is not "flush". */
	if (strlen(json_object_get_string(c)) != (size_t)json_object_get_string_len(c))
		return NULL;
	return json_object_get_string(c);
}

/* Apply a single change or a batch to the clone r. */
static int apply_mutation(struct daemon *d, struct registry *r, const char *cmd, json_object *req,
			  struct req_err *e)
{
	json_object *list;
	size_t i, n;

	if (strcmp(cmd, "batch"))
		return find_mutation(cmd)(d, r, req, e);
	{
		static const char *const keys[] = {"requests", "dry_run", NULL};

		if (check_keys(req, keys, e))
			return -EINVAL;
	}
	if (!json_object_object_get_ex(req, "requests", &list) ||
	    !json_object_is_type(list, json_type_array))
		return fail(e, "batch needs a 'requests' array");
	n = json_object_array_length(list);
	if (n > BATCH_MAX)
		return fail(e, "batch of %zu requests: the limit is %d", n, BATCH_MAX);
	for (i = 0; i < n; i++) {
		json_object *sub = json_object_array_get_idx(list, i);
		const char *sc = req_cmd(sub);
		struct req_err se;
		mut_fn fn;

		if (!sc)
			return fail(e, "batch request %zu: not an object with a 'cmd' string",
				    i + 1);
		fn = find_mutation(sc);
		if (!fn)
			return fail(e, "batch request %zu: '%.40s' is not a change", i + 1, sc);
		if (fn(d, r, sub, &se))
			return fail(e, "batch request %zu (%s): %s", i + 1, sc, se.msg);
	}
	return 0;
}

static json_object *ok_reply(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static json_object *err_reply(const char *msg)
{
	json_object *o = json_object_new_object();
	char clean[sizeof(((struct req_err *)0)->msg)];
	size_t i;

	/* Reasons quote the input; keep the answer valid UTF-8 and one line. */
	for (i = 0; msg[i] && i + 1 < sizeof(clean); i++)
		clean[i] = (unsigned char)msg[i] >= 0x20 && (unsigned char)msg[i] < 0x7f ? msg[i]
											 : '?';
	clean[i] = '\0';
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(clean));
	return o;
}

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
	json_object_object_add(o, "dp_flags", fl);
	json_object_object_add(o, "flows", flows_json(b));
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
	json_object_object_add(o, "in_table", json_object_new_int64(up));
	json_object_object_add(o, "table_gen", json_object_new_uint64(v->table_gen));
	json_object_object_add(o, "rebuild_ms", json_object_new_double(v->rebuild_ms));
	drift_hex(v->digest, hex);
	json_object_object_add(o, "digest", json_object_new_string(hex));
	vip_hc(v, defaults, &hc);
	json_object_object_add(chk, "type", json_object_new_string(hc_type_name(hc.type)));
	if (hc.type != HC_NONE) {
		json_object_object_add(chk, "port", json_object_new_int64(hc.port));
		json_object_object_add(chk, "interval_ms", json_object_new_int64(hc.interval_ms));
		json_object_object_add(chk, "timeout_ms", json_object_new_int64(hc.timeout_ms));
		json_object_object_add(chk, "rise", json_object_new_int64(hc.rise));
		json_object_object_add(chk, "fall", json_object_new_int64(hc.fall));
		json_object_object_add(chk, "on_fail",
				       json_object_new_string(hc_on_fail_name(hc.on_fail)));
		if (hc.type == HC_UDP) {
			json_object_object_add(chk, "payload", json_object_new_string(hc.payload));
			json_object_object_add(chk, "expect", json_object_new_string(hc.expect));
		}
		if (hc.type == HC_DNS)
			json_object_object_add(chk, "dns_name",
					       json_object_new_string(hc.dns_name));
		if (hc.type == HC_HTTP) {
			json_object_object_add(chk, "path", json_object_new_string(hc.path));
			json_object_object_add(chk, "status", json_object_new_int64(hc.status));
		}
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
	if (get_str(req, "vip", false, &s, e))
		return -EINVAL;
	if (!s)
		return 0;
	if (get_vip(d, d->reg, req, &found, e))
		return -EINVAL;
	*v = found;
	return 0;
}

static json_object *do_vip_list(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};
	json_object *o, *arr;
	uint32_t i;

	if (check_keys(req, keys, e))
		return NULL;
	o = ok_reply();
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

	if (check_keys(req, keys, e) || get_vip(d, d->reg, req, &v, e))
		return NULL;
	o = ok_reply();
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

	if (check_keys(req, keys, e) || opt_vip(d, req, &only, e))
		return NULL;
	arr = json_object_new_array();
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		if (!v || (only && v != only))
			continue;
		for (j = 0; j < v->nbe; j++)
			json_object_array_add(arr, one(d, v, &v->bes[j]));
	}
	o = ok_reply();
	json_object_object_add(o, "backends", arr);
	return o;
}

static json_object *do_backend_list(struct daemon *d, json_object *req, struct req_err *e)
{
	return backends_reply(d, req, e, be_json);
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

static json_object *do_stats(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {"vip", NULL};
	uint64_t reasons[MAGLEV_REASON_MAX], ctrs[MAGLEV_CTR_MAX];
	json_object *o, *arr;
	char name[CTL_ADDR_STRLEN];
	const struct vip *only;
	uint32_t i, j;

	if (check_keys(req, keys, e) || opt_vip(d, req, &only, e))
		return NULL;
	o = ok_reply();
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
 * a slot naming no backend of v.
 */
static json_object *table_ranges(const struct vip *v, const uint32_t *table)
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

	if (check_keys(req, keys, e) || get_vip(d, d->reg, req, &v, e) ||
	    get_bool(req, "dump", &dump, &has, e))
		return NULL;
	r = maglev_dp_table_read_prev(d->dp, v->id, live_table, live_prev);
	if (r) {
		fail(e, "reading the live table: %s", strerror(-r));
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
	o = ok_reply();
	if (dump)
		json_object_object_add(o, "ranges", table_ranges(v, live_table));
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
	char name[CTL_ADDR_STRLEN];
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

	if (check_keys(req, keys, e) || get_str(req, "vip", true, &s, e) ||
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
		fail(e, "no VIP %s", s);
		return NULL;
	}
	if (get_str(req, "src", true, &s, e) ||
	    ctl_parse_endpoint(s, &src, &sport, e->msg, sizeof(e->msg)))
		return NULL;
	if (src.family != v->key.family) {
		fail(e, "source and VIP are of different address families");
		return NULL;
	}
	if (!dport) {
		fail(e, "lookup on an all-ports VIP needs the destination port: give the VIP "
			"as ADDR:PORT/PROTO");
		return NULL;
	}
	r = maglev_dp_get_config(d->dp, &mc);
	if (r) {
		fail(e, "reading the datapath config: %s", strerror(-r));
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
		fail(e, "reading the live table: %s", strerror(-r));
		return NULL;
	}
	tb = find_be_idx(v, live_table[slot]);
	o = ok_reply();
	json_object_object_add(o, "hash", json_object_new_uint64(h));
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
static json_object *dump_reply(const struct registry *r)
{
	json_object *o = ok_reply(), *arr = json_object_new_array();
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

	if (check_keys(req, keys, e))
		return NULL;
	return dump_reply(d->reg);
}

static json_object *do_status(struct daemon *d, json_object *req, struct req_err *e)
{
	static const char *const keys[] = {NULL};
	char hex[DRIFT_HEX_LEN];
	json_object *o, *ifs;
	int i;

	if (check_keys(req, keys, e))
		return NULL;
	o = ok_reply();
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

	if (check_keys(req, keys, e))
		return NULL;
	if (!fleet_enabled(d)) {
		fail(e, "not in fleet mode (fleet_etcd is not set in maglevd's config)");
		return NULL;
	}
	o = ok_reply();
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

	if (check_keys(req, keys, e))
		return NULL;
	if (daemon_reload(d, err, sizeof(err))) {
		fail(e, "%s", err);
		return NULL;
	}
	o = ok_reply();
	json_object_object_add(o, "config", json_object_new_string(d->config_path));
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

	if (check_keys(req, keys, e) || get_str(req, "state", false, &s, e))
		return NULL;
	if (s && strcmp(s, "on") && strcmp(s, "off")) {
		fail(e, "announce state '%.20s': want on or off", s);
		return NULL;
	}
	if (s && announce_set(d, !strcmp(s, "on"), e->msg, sizeof(e->msg)))
		return NULL;
	o = ok_reply();
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

static const struct {
	const char *cmd;
	json_object *(*fn)(struct daemon *d, json_object *req, struct req_err *e);
	bool (*is_change)(json_object *req); /* NULL: a query only */
} queries[] = {
	{"vip.list", do_vip_list, NULL},
	{"vip.show", do_vip_show, NULL},
	{"backend.list", do_backend_list, NULL},
	{"stats", do_stats, NULL},
	{"health", do_health, NULL},
	{"table", do_table, NULL},
	{"lookup", do_lookup, NULL},
	{"dump", do_dump, NULL},
	{"status", do_status, NULL},
	{"fleet.status", do_fleet_status, NULL},
	{"reload", do_reload, always_a_change},
	{"announce", do_announce, sets_state},
};

/* Whether a and b hold the same VIPs with the same settings and backends. */
static bool same_config(const struct registry *a, const struct registry *b)
{
	uint32_t i;

	if (a->nvips != b->nvips || a->nbackends != b->nbackends)
		return false;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = a->vips[i], *w;
		json_object *x, *y;
		bool same;

		if (!v)
			continue;
		w = registry_find_vip(b, &v->key);
		if (!w)
			return false;
		x = state_vip_json(v, false);
		y = state_vip_json(w, false);
		same = !strcmp(json_object_to_json_string(x), json_object_to_json_string(y));
		json_object_put(x);
		json_object_put(y);
		if (!same)
			return false;
	}
	return true;
}

int ctl_apply_desired(struct daemon *d, json_object *reqs, uint64_t rev, bool keep_same, char *err,
		      size_t errlen)
{
	json_object *flush = json_object_new_object(), *batch = json_object_new_object(),
		    *list = json_object_new_array();
	struct registry *next = registry_clone(d->reg);
	struct req_err e = {"", false};
	size_t i, n = json_object_array_length(reqs);
	int r = -1;

	json_object_object_add(flush, "cmd", json_object_new_string("flush"));
	json_object_array_add(list, flush);
	for (i = 0; i < n; i++)
		json_object_array_add(list, json_object_get(json_object_array_get_idx(reqs, i)));
	json_object_object_add(batch, "requests", list);
	if (!next) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* The restore path: flush, then every VIP, validated whole on a clone. */
	if (apply_mutation(d, next, "batch", batch, &e) ||
	    registry_check_placements(next, e.msg, sizeof(e.msg))) {
		snprintf(err, errlen, "%s", e.msg);
		registry_free(next);
		goto out;
	}
	if (keep_same && d->reg->fleet_rev && same_config(d->reg, next)) {
		registry_free(next);
		r = 1;
		goto out;
	}
	next->fleet_rev = rev;
	r = daemon_commit(d, next, err, errlen);
out:
	json_object_put(batch);
	return r;
}

static json_object *handle(struct daemon *d, const struct ctl_peer *peer, json_object *req,
			   struct req_err *e)
{
	struct registry *next;
	const char *cmd = req_cmd(req);
	int64_t expect = -1;
	size_t i;
	int r;

	if (!cmd) {
		fail(e, "request must be a JSON object with a 'cmd' string");
		return NULL;
	}
	for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
		json_object *o;

		if (strcmp(queries[i].cmd, cmd))
			continue;
		o = queries[i].fn(d, req, e);
		if (o && queries[i].is_change && queries[i].is_change(req))
			audit_accepted(peer, cmd, req);
		return o;
	}
	if (strcmp(cmd, "batch") && !find_mutation(cmd)) {
		fail(e, "unknown command '%.40s'", cmd);
		return NULL;
	}
	/* In fleet mode a change goes to etcd (fleet_write below), optionally
	 * only if etcd's desired state is still at the revision the operator saw.
	 */
	if (json_object_object_get_ex(req, "expect_revision", NULL)) {
		bool has;

		if (!fleet_enabled(d)) {
			fail(e, "expect_revision: only in fleet mode (fleet_etcd is not set)");
			return NULL;
		}
		if (get_int(req, "expect_revision", 0, INT64_MAX - 1, &expect, &has, e))
			return NULL;
		json_object_object_del(req, "expect_revision");
	}
	next = registry_clone(d->reg);
	if (!next) {
		fail(e, "out of memory");
		return NULL;
	}
	if (apply_mutation(d, next, cmd, req, e) ||
	    registry_check_placements(next, e->msg, sizeof(e->msg))) {
		registry_free(next);
		return NULL;
	}
	/* A dry run (restore --dry-run): validated whole, answered with the
	 * state it would give, never committed.
	 */
	if (!strcmp(cmd, "batch")) {
		bool dry = false, has;
		json_object *o;

		if (get_bool(req, "dry_run", &dry, &has, e)) {
			registry_free(next);
			return NULL;
		}
		if (dry) {
			o = dump_reply(next);
			registry_free(next);
			return o;
		}
	}
	if (fleet_enabled(d)) {
		/* Applied here when the watch brings the revision back. */
		r = fleet_write(d, next, expect, e->msg, sizeof(e->msg));
		registry_free(next);
		if (r < 0)
			return NULL;
		audit_accepted(peer, cmd, req);
		if (!r)
			e->deferred = true; /* fleet.c answers */
		if (!r)
			return NULL;
		return ok_reply();
	}
	/* Answered when the datapath holds the change (ctl_commit.c). */
	r = ctl_commit(d, next, e->msg, sizeof(e->msg));
	if (r < 0)
		return NULL;
	audit_accepted(peer, cmd, req);
	e->deferred = r > 0;
	return r > 0 ? NULL : ok_reply();
}

json_object *ctl_handle(struct daemon *d, const char *line, size_t len)
{
	return ctl_handle_peer(d, NULL, line, len);
}

json_object *ctl_handle_peer(struct daemon *d, const struct ctl_peer *peer, const char *line,
			     size_t len)
{
	json_tokener *tok = json_tokener_new();
	struct req_err e = {"", false};
	json_object *req, *resp;

	d->ctl_requests++;
	/* json-c cuts object keys at an escaped NUL ("vip\u0000x" would be
	 * "vip"); no field of any request can hold one, so refuse them up front.
	 */
	if (memmem(line, len, "\\u0000", 6)) {
		json_tokener_free(tok);
		d->ctl_rejected++;
		return err_reply("request holds a NUL character (\\u0000)");
	}
	if (!tok)
		return err_reply("out of memory");
	req = json_tokener_parse_ex(tok, line, (int)len);
	if (!req || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset < (int)len) {
		/* Only whitespace may follow the object. */
		size_t i = req ? (size_t)tok->char_offset : 0;

		while (req && i < len &&
		       (line[i] == ' ' || line[i] == '\r' || line[i] == '\n' || line[i] == '\t'))
			i++;
		if (!req || i < len || json_tokener_get_error(tok) != json_tokener_success) {
			json_object_put(req);
			json_tokener_free(tok);
			d->ctl_rejected++;
			return err_reply("request is not valid JSON");
		}
	}
	json_tokener_free(tok);
	resp = handle(d, peer, req, &e);
	json_object_put(req);
	if (!resp && e.deferred)
		return NULL;
	if (!resp) {
		d->ctl_rejected++;
		log_debug("rejected request: %s", e.msg);
		return err_reply(e.msg[0] ? e.msg : "rejected");
	}
	return resp;
}
