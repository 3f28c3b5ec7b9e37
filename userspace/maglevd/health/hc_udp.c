// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "health/hc_udp.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hc_udp_decode(const char *s, uint8_t *out, size_t cap, char *err, size_t errlen)
{
	size_t n = 0;

	for (; *s; s++) {
		int c = (unsigned char)*s;

		if (c == '\\') {
			switch (*++s) {
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			case '0':
				c = 0;
				break;
			case '\\':
				c = '\\';
				break;
			case 'x':
				if (hexval(s[1]) < 0 || hexval(s[2]) < 0) {
					snprintf(err, errlen, "\\x needs two hex digits");
					return -1;
				}
				c = hexval(s[1]) * 16 + hexval(s[2]);
				s += 2;
				break;
			default:
				snprintf(err, errlen,
					 "unknown escape (\\n \\r \\t \\0 \\\\ and \\xNN only)");
				return -1;
			}
		}
		if (n == cap) {
			snprintf(err, errlen, "longer than %zu bytes", cap);
			return -1;
		}
		out[n++] = (uint8_t)c;
	}
	return (int)n;
}

bool hc_dns_name_ok(const char *name)
{
	size_t len = strlen(name), label = 0, i;

	if (!strcmp(name, "."))
		return true;
	if (!len || len > 254 || (len == 254 && name[253] != '.') || name[0] == '.')
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (c == '.') {
			if (!label)
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return true;
}

size_t hc_dns_query(const char *name, uint16_t id, uint8_t *out)
{
	size_t n = 12;
	const char *p = name;

	memset(out, 0, 12);
	out[0] = id >> 8;
	out[1] = id & 0xff;
	out[2] = 0x01; /* RD */
	out[5] = 1;    /* QDCOUNT */
	while (*p && strcmp(p, ".")) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);

		out[n++] = (uint8_t)l;
		memcpy(out + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = 1; /* QTYPE A */
	out[n++] = 0;
	out[n++] = 1; /* QCLASS IN */
	return n;
}

int hc_dns_judge(const uint8_t *buf, size_t len, uint16_t id, char *why, size_t whylen)
{
	static const char *const rcodes[] = {"NOERROR",	 "FORMERR", "SERVFAIL",
					     "NXDOMAIN", "NOTIMP",  "REFUSED"};
	unsigned int rcode;

	if (len < 12 || buf[0] != (id >> 8) || buf[1] != (id & 0xff) || !(buf[2] & 0x80))
		return -1;
	rcode = buf[3] & 0x0f;
	if (!rcode)
		return 1;
	snprintf(why, whylen, "dns: rcode %u%s%s", rcode, rcode < 6 ? " " : "",
		 rcode < 6 ? rcodes[rcode] : "");
	return 0;
}
