// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The expected body text, searched as the body arrives (hc_body.h). */
#include <string.h>

#include "health/hc_body.h"
#include "health/hc_udp.h"

void hc_body_init(struct hc_body *b, const char *escaped)
{
	char why[96];
	int n;

	memset(b, 0, offsetof(struct hc_body, window));
	n = hc_udp_decode(escaped, b->want, sizeof(b->want), why, sizeof(why));
	b->want_len = n > 0 ? (size_t)n : 0;
}

/* The window keeps the last want_len - 1 bytes across calls, so a text
 * split between two reads is found too.
 */
bool hc_body_feed(struct hc_body *b, const char *data, size_t n)
{
	size_t keep = b->want_len - 1;

	if (!b->want_len)
		return true;
	while (n && !b->found && b->scanned < HC_BODY_SCAN_MAX) {
		size_t take = sizeof(b->window) - b->held;

		if (take > n)
			take = n;
		if (take > HC_BODY_SCAN_MAX - b->scanned)
			take = HC_BODY_SCAN_MAX - b->scanned;
		memcpy(b->window + b->held, data, take);
		b->held += take;
		b->scanned += take;
		data += take;
		n -= take;
		if (memmem(b->window, b->held, b->want, b->want_len))
			b->found = true;
		else if (b->held > keep) {
			memmove(b->window, b->window + b->held - keep, keep);
			b->held = keep;
		}
	}
	return b->found || b->scanned >= HC_BODY_SCAN_MAX;
}
