// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The arguments of a control request: typed getters that name the field and
 * what was wrong with it, and the checks every request shares.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_get.h"
#include "ctl/req.h"

int req_fail(struct req_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Reject members other than the allowed ones ("cmd" always allowed). */
static int check_keys(json_object *req, const char *const *allowed, bool hc, struct req_err *e)
{
	json_object_object_foreach(req, key, val)
	{
		const char *const *a;

		(void)val;
		if (!strcmp(key, "cmd") || (hc && hc_field_by_req(key)))
			continue;
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a)
			return req_fail(e, "unknown field '%.40s'", key);
	}
	return 0;
}

int req_check_keys(json_object *req, const char *const *allowed, struct req_err *e)
{
	return check_keys(req, allowed, false, e);
}

int req_check_keys_hc(json_object *req, const char *const *allowed, struct req_err *e)
{
	return check_keys(req, allowed, true, e);
}

/* The request's getters: json_get.h in its control-request wording. */
#define REQ_GET(e) (&(const struct json_get){JSON_GET_REQUEST, (e)->msg, sizeof((e)->msg)})

int req_get_str(json_object *req, const char *key, bool required, const char **out,
		struct req_err *e)
{
	return json_get_str(REQ_GET(e), req, key, required, out);
}

int req_get_int(json_object *req, const char *key, int64_t min, int64_t max, int64_t *out,
		bool *present, struct req_err *e)
{
	return json_get_int(REQ_GET(e), req, key, min, max, out, present);
}

int req_get_bool(json_object *req, const char *key, bool *out, bool *present, struct req_err *e)
{
	return json_get_bool(REQ_GET(e), req, key, out, present);
}

/* What makes an address unusable as a VIP or a backend, or NULL. */
const char *req_addr_unusable(uint8_t family, const uint32_t *addr)
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

int req_get_vip(struct daemon *d, struct registry *r, json_object *req, struct vip **v,
		struct req_err *e)
{
	struct maglev_vip_key key;
	const char *s;
	bool any;

	if (req_get_str(req, "vip", true, &s, e))
		return -EINVAL;
	if (ctl_parse_vip(s, &key, &any, e->msg, sizeof(e->msg)))
		return -EINVAL;
	*v = registry_find_vip(r, &key);
	if (!*v)
		return req_fail(e, "no VIP %s", s);
	return 0;
}

int req_get_backend(json_object *req, struct ctl_addr *a, struct req_err *e)
{
	const char *s;

	if (req_get_str(req, "backend", true, &s, e))
		return -EINVAL;
	return ctl_parse_addr(s, a, e->msg, sizeof(e->msg));
}

const char *req_cmd(json_object *req)
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
