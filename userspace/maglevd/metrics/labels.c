// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Shared label text; see labels.h. */
#include <stdio.h>
#include <string.h>

#include "metrics/labels.h"

void metrics_vip_labels(const struct maglev_vip_key *k, char *buf, size_t len)
{
	char host[CTL_ADDR_STRLEN], port[8];
	const char *proto = ctl_vip_parts(k, host, port);

	snprintf(buf, len, "address=\"%s\",port=\"%s\",protocol=\"%s\"", host, port, proto);
}

void metrics_label_escape(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	for (; *s && o + 2 < len; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n') {
			buf[o++] = '\\';
			buf[o++] = *s == '\n' ? 'n' : *s;
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
}
