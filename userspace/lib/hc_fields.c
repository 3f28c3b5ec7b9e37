// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The health-check fields, one row each (see hc_fields.h). */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "hc_fields.h"

_Static_assert(sizeof(enum hc_type) == sizeof(int) && sizeof(enum hc_on_fail) == sizeof(int) &&
		       sizeof(enum hc_tls_verify) == sizeof(int),
	       "HCK_ENUM fields are stored as int");

static const char *const type_names[] = {"none", "tcp", "http", "udp", "dns", "https", NULL};
static const char *const on_fail_names[] = {"repick", "drain", NULL};
static const char *const tls_verify_names[] = {"on", "off", NULL};

#define HTTP_BITS (HC_TYPE_BIT(HC_HTTP) | HC_TYPE_BIT(HC_HTTPS))

#define AT(field) offsetof(struct hc_params, field), sizeof(((struct hc_params *)0)->field)

/* rank: {state file, maglevctl save, request, status} */
const struct hc_field hc_fields[HC_NFIELDS] = {
	{.bit = HCF_TYPE,
	 .key = "type",
	 .req = "check",
	 .opt = "check",
	 .conf = "health_check",
	 .kind = HCK_ENUM,
	 AT(type),
	 .names = type_names,
	 .choices = "tcp, http, https, udp, dns or none",
	 .shown_for = HC_TYPES_ALL,
	 .rank = {0, 0, 0, 0}},
	{.bit = HCF_PORT,
	 .key = "port",
	 .req = "check_port",
	 .opt = "check-port",
	 .conf = "health_port",
	 .kind = HCK_UINT,
	 AT(port),
	 .req_lo = 1,
	 .conf_lo = 0,
	 .hi = 65535,
	 .shown_for = HC_TYPES_CHECKED,
	 .rank = {1, 6, 6, 1}},
	{.bit = HCF_PATH,
	 .key = "path",
	 .req = "check_path",
	 .opt = "check-path",
	 .conf = "health_http_path",
	 .kind = HCK_STR,
	 AT(path),
	 .conf_ok = hc_http_path_ok,
	 .conf_want = "want a path starting with '/', without spaces or control characters",
	 .short_too_long = true,
	 .shown_for = HTTP_BITS,
	 .rank = {2, 5, 1, 10}},
	{.bit = HCF_STATUS,
	 .key = "status",
	 .req = "check_status",
	 .opt = "check-status",
	 .conf = "health_http_status",
	 .kind = HCK_UINT,
	 AT(status),
	 .req_lo = 100,
	 .conf_lo = 100,
	 .hi = 599,
	 .shown_for = HTTP_BITS,
	 .rank = {3, 7, 7, 11}},
	{.bit = HCF_INTERVAL,
	 .key = "interval_ms",
	 .req = "check_interval_ms",
	 .opt = "check-interval",
	 .conf = "health_interval_ms",
	 .kind = HCK_UINT,
	 AT(interval_ms),
	 .req_lo = 100,
	 .conf_lo = 100,
	 .hi = 3600000,
	 .shown_for = HC_TYPES_CHECKED,
	 .show = "interval",
	 .unit = "ms",
	 .rank = {4, 8, 10, 2}},
	{.bit = HCF_TIMEOUT,
	 .key = "timeout_ms",
	 .req = "check_timeout_ms",
	 .opt = "check-timeout",
	 .conf = "health_timeout_ms",
	 .kind = HCK_UINT,
	 AT(timeout_ms),
	 .req_lo = 10,
	 .conf_lo = 10,
	 .hi = 3600000,
	 .shown_for = HC_TYPES_CHECKED,
	 .show = "timeout",
	 .unit = "ms",
	 .rank = {5, 9, 11, 3}},
	{.bit = HCF_RISE,
	 .key = "rise",
	 .req = "check_rise",
	 .opt = "rise",
	 .conf = "health_rise",
	 .kind = HCK_UINT,
	 AT(rise),
	 .req_lo = 1,
	 .conf_lo = 1,
	 .hi = 100,
	 .shown_for = HC_TYPES_CHECKED,
	 .show = "rise",
	 .unit = "",
	 .rank = {6, 10, 8, 4}},
	{.bit = HCF_FALL,
	 .key = "fall",
	 .req = "check_fall",
	 .opt = "fall",
	 .conf = "health_fall",
	 .kind = HCK_UINT,
	 AT(fall),
	 .req_lo = 1,
	 .conf_lo = 1,
	 .hi = 100,
	 .shown_for = HC_TYPES_CHECKED,
	 .show = "fall",
	 .unit = "",
	 .rank = {7, 11, 9, 5}},
	{.bit = HCF_ON_FAIL,
	 .key = "on_fail",
	 .req = "check_on_fail",
	 .opt = "on-fail",
	 .conf = "health_on_fail",
	 .kind = HCK_ENUM,
	 AT(on_fail),
	 .names = on_fail_names,
	 .choices = "repick or drain",
	 .shown_for = HC_TYPES_CHECKED,
	 .rank = {11, 4, 5, 6}},
	{.bit = HCF_PAYLOAD,
	 .key = "payload",
	 .req = "check_payload",
	 .opt = "check-payload",
	 .conf = "health_udp_payload",
	 .kind = HCK_STR,
	 AT(payload),
	 .escaped = true,
	 .shown_for = HC_TYPE_BIT(HC_UDP),
	 .rank = {8, 1, 2, 7}},
	{.bit = HCF_EXPECT,
	 .key = "expect",
	 .req = "check_expect",
	 .opt = "check-expect",
	 .conf = "health_udp_expect",
	 .kind = HCK_STR,
	 AT(expect),
	 .escaped = true,
	 .shown_for = HC_TYPE_BIT(HC_UDP),
	 .rank = {9, 2, 3, 8}},
	{.bit = HCF_DNS_NAME,
	 .key = "dns_name",
	 .req = "check_dns_name",
	 .opt = "check-dns-name",
	 .conf = "health_dns_name",
	 .kind = HCK_STR,
	 AT(dns_name),
	 .shown_for = HC_TYPE_BIT(HC_DNS),
	 .rank = {10, 3, 4, 9}},
	{.bit = HCF_HOST,
	 .key = "host",
	 .req = "check_host",
	 .opt = "check-host",
	 .conf = "health_http_host",
	 .kind = HCK_STR,
	 AT(host),
	 .conf_ok = hc_http_host_ok,
	 .conf_want = "want a host name: dotted labels of letters, digits, '-' and '_'",
	 .shown_for = HTTP_BITS,
	 .rank = {12, 12, 12, 12}},
	{.bit = HCF_BODY,
	 .key = "body",
	 .req = "check_body",
	 .opt = "check-body",
	 .conf = "health_http_body",
	 .kind = HCK_STR,
	 AT(body),
	 .escaped = true,
	 .shown_for = HTTP_BITS,
	 .rank = {13, 13, 13, 13}},
	{.bit = HCF_CA_FILE,
	 .key = "ca_file",
	 .req = "check_ca_file",
	 .opt = "check-ca-file",
	 .conf = "health_tls_ca_file",
	 .kind = HCK_STR,
	 AT(ca_file),
	 .conf_ok = hc_ca_file_ok,
	 .conf_want = "want an absolute path",
	 .shown_for = HC_TYPE_BIT(HC_HTTPS),
	 .rank = {14, 14, 14, 14}},
	{.bit = HCF_TLS_VERIFY,
	 .key = "tls_verify",
	 .req = "check_tls_verify",
	 .opt = "check-tls-verify",
	 .conf = "health_tls_verify",
	 .kind = HCK_ENUM,
	 AT(tls_verify),
	 .names = tls_verify_names,
	 .choices = "on or off",
	 .shown_for = HC_TYPE_BIT(HC_HTTPS),
	 .rank = {15, 15, 15, 15}},
};

const struct hc_field *hc_field_at(enum hc_order o, size_t i)
{
	size_t k;

	for (k = 0; k < HC_NFIELDS; k++)
		if (hc_fields[k].rank[o] == i)
			return &hc_fields[k];
	return NULL;
}

const struct hc_field *hc_field_by_conf(const char *key)
{
	size_t k;

	for (k = 0; k < HC_NFIELDS; k++)
		if (!strcmp(hc_fields[k].conf, key))
			return &hc_fields[k];
	return NULL;
}

const struct hc_field *hc_field_by_req(const char *member)
{
	size_t k;

	for (k = 0; k < HC_NFIELDS; k++)
		if (!strcmp(hc_fields[k].req, member))
			return &hc_fields[k];
	return NULL;
}

uint32_t hc_field_uint(const struct hc_params *p, const struct hc_field *f)
{
	const char *at = (const char *)p + f->off;
	uint16_t v16;
	uint32_t v32;

	if (f->size == sizeof(v16)) {
		memcpy(&v16, at, sizeof(v16));
		return v16;
	}
	memcpy(&v32, at, sizeof(v32));
	return v32;
}

void hc_field_set_uint(struct hc_params *p, const struct hc_field *f, uint32_t v)
{
	char *at = (char *)p + f->off;
	uint16_t v16 = (uint16_t)v;

	if (f->size == sizeof(v16))
		memcpy(at, &v16, sizeof(v16));
	else
		memcpy(at, &v, sizeof(v));
}

/* names[v], or names[0] for a value out of range. */
static const char *enum_name(const char *const *names, int v)
{
	int n = 0;

	while (names[n])
		n++;
	return v >= 0 && v < n ? names[v] : names[0];
}

/* *v := the value s names; -EINVAL when it names none. */
static int enum_parse(const char *const *names, const char *s, int *v)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(names[i], s)) {
			*v = i;
			return 0;
		}
	return -EINVAL;
}

const char *hc_field_str(const struct hc_params *p, const struct hc_field *f)
{
	const char *at = (const char *)p + f->off;
	int v;

	if (f->kind == HCK_STR)
		return at;
	memcpy(&v, at, sizeof(v));
	return enum_name(f->names, v);
}

int hc_field_set_str(struct hc_params *p, const struct hc_field *f, const char *s)
{
	char *at = (char *)p + f->off;
	int v;

	if (f->kind == HCK_STR) {
		if (strlen(s) >= f->size)
			return -ENAMETOOLONG;
		strcpy(at, s);
		return 0;
	}
	if (enum_parse(f->names, s, &v))
		return -EINVAL;
	memcpy(at, &v, sizeof(v));
	return 0;
}

void hc_field_copy(struct hc_params *dst, const struct hc_params *src, const struct hc_field *f)
{
	memcpy((char *)dst + f->off, (const char *)src + f->off, f->size);
}

const char *hc_type_name(enum hc_type t)
{
	return enum_name(type_names, (int)t);
}

int hc_type_parse(const char *s, enum hc_type *t)
{
	int v;

	if (enum_parse(type_names, s, &v))
		return -EINVAL;
	*t = (enum hc_type)v;
	return 0;
}

const char *hc_on_fail_name(enum hc_on_fail f)
{
	return enum_name(on_fail_names, (int)f);
}

int hc_on_fail_parse(const char *s, enum hc_on_fail *f)
{
	int v;

	if (enum_parse(on_fail_names, s, &v))
		return -EINVAL;
	*f = (enum hc_on_fail)v;
	return 0;
}

bool hc_http_path_ok(const char *path)
{
	const unsigned char *c = (const unsigned char *)path;

	if (*c != '/')
		return false;
	for (; *c; c++)
		if (*c <= ' ' || *c >= 0x7f)
			return false;
	return true;
}

bool hc_http_host_ok(const char *host)
{
	const unsigned char *c = (const unsigned char *)host;
	size_t label = 0;

	if (!*c || strlen(host) > 253)
		return false;
	for (; *c; c++) {
		if (*c == '.') {
			if (!label)
				return false;
			label = 0;
		} else if (isalnum(*c) || *c == '-' || *c == '_') {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return true;
}

bool hc_ca_file_ok(const char *path)
{
	return path[0] == '/';
}
