/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An http or https check's expected body text (check_body), looked for in
 * the body as it arrives, however it is split between reads: the built-in
 * http client (health.c) and the https one on libcurl (hc_https.c) both
 * feed it. The body is searched this far (HC_BODY_SCAN_MAX), no further.
 */
#ifndef MAGLEVD_HC_BODY_H
#define MAGLEVD_HC_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hc_fields.h"

#define HC_BODY_SCAN_MAX (64 * 1024)
#define HC_BODY_MAX	 sizeof(((struct hc_params *)0)->body)

struct hc_body {
	uint8_t want[HC_BODY_MAX];
	size_t want_len, held, scanned;
	bool found;
	char window[2 * HC_BODY_MAX];
};

/* Set b to look for the escaped text (hc_udp.h's escapes); "" expects
 * nothing. The text was checked when configured, so a bad one here counts
 * as expecting nothing.
 */
void hc_body_init(struct hc_body *b, const char *escaped);
/* Feed n bytes of the body: true once the search is over (the text found,
 * or HC_BODY_SCAN_MAX bytes seen without it; b->found tells which).
 */
bool hc_body_feed(struct hc_body *b, const char *data, size_t n);

#endif /* MAGLEVD_HC_BODY_H */
