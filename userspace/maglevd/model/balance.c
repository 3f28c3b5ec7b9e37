// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/balance.h"

int balance_parse(const char *s, uint32_t *milli)
{
	char *end;
	double c;

	if (!strcmp(s, "off") || !strcmp(s, "0")) {
		*milli = 0;
		return 0;
	}
	errno = 0;
	c = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(c) || c * 1000 < BALANCE_MILLI_MIN - 0.5 ||
	    c * 1000 > BALANCE_MILLI_MAX + 0.5)
		return -EINVAL;
	*milli = (uint32_t)lround(c * 1000);
	return 0;
}

void balance_format(uint32_t milli, char *buf, size_t len)
{
	size_t n;

	snprintf(buf, len, "%u.%03u", milli / 1000, milli % 1000);
	/* "1.250" -> "1.25", "2.000" -> "2.0" */
	n = strlen(buf);
	while (n > 3 && buf[n - 1] == '0' && buf[n - 2] != '.')
		buf[--n] = '\0';
}
