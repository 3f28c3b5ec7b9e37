/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A VIP's hot-flow threshold (--hot-threshold, hot/hot_flows.c), as the
 * control requests and the state file spell it: "default" (the
 * configuration's hot_flows_threshold), "off", or a percent from 1 to 100.
 * Kept in a byte: 0 default, 1..100, HOT_THRESHOLD_OFF.
 */
#ifndef MAGLEVD_HOT_THRESHOLD_H
#define MAGLEVD_HOT_THRESHOLD_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOT_THRESHOLD_DEFAULT 0
#define HOT_THRESHOLD_OFF     255

/* -EINVAL for anything else than default, off or 1..100. */
static inline int hot_threshold_parse(const char *s, uint8_t *out)
{
	char *end;
	long v;

	if (!strcmp(s, "default")) {
		*out = HOT_THRESHOLD_DEFAULT;
		return 0;
	}
	if (!strcmp(s, "off")) {
		*out = HOT_THRESHOLD_OFF;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtol(s, &end, 10);
	if (*end || v < 1 || v > 100)
		return -EINVAL;
	*out = (uint8_t)v;
	return 0;
}

/* "off" or the percent (buf of at least 8); only for a value not default. */
static inline void hot_threshold_format(uint8_t t, char *buf, size_t len)
{
	if (t == HOT_THRESHOLD_OFF)
		snprintf(buf, len, "off");
	else
		snprintf(buf, len, "%u", (unsigned)t);
}

/* The percent in force for a VIP of threshold t; 0: none. */
static inline unsigned hot_threshold_pct(uint8_t t, unsigned configured)
{
	return t == HOT_THRESHOLD_OFF ? 0 : t ? t : configured;
}

#endif
