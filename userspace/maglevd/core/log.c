// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

static enum log_level cur_level = LOG_INFO;
static int journal;

void log_init(void)
{
	journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_set_level(enum log_level level)
{
	cur_level = level;
}

int log_parse_level(const char *s)
{
	if (!strcmp(s, "err") || !strcmp(s, "error"))
		return LOG_ERR;
	if (!strcmp(s, "warn") || !strcmp(s, "warning"))
		return LOG_WARN;
	if (!strcmp(s, "info"))
		return LOG_INFO;
	if (!strcmp(s, "debug"))
		return LOG_DEBUG;
	return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const names[] = {[LOG_ERR] = "error",
					    [LOG_WARN] = "warning",
					    [LOG_INFO] = "info",
					    [LOG_DEBUG] = "debug"};
	char line[1024];
	va_list ap;

	if (level > cur_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (journal)
		fprintf(stderr, "<%d>%s\n", level, line);
	else
		fprintf(stderr, "maglevd: %s: %s\n", names[level], line);
}
