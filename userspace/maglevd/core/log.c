// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

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

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	static const char *const names[] = {[LOG_ERR] = "error",
					    [LOG_WARN] = "warning",
					    [LOG_INFO] = "info",
					    [LOG_DEBUG] = "debug"};
	char line[1024];
	size_t n;

	if (level > cur_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* libbpf's lines end in a newline of their own. */
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	if (journal)
		fprintf(stderr, "<%d>%s\n", level, line);
	else
		fprintf(stderr, "maglevd: %s: %s\n", names[level], line);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

/*
 * libbpf's messages at the daemon's levels and priorities. Its info lines
 * describe loading, so they go to debug. The kernel's "Exclusivity flag on"
 * answer to creating the clsact qdisc that a previous run left is expected
 * (hc_encap_attach takes EEXIST as success): dropped, not shown as a warning
 * at every restart.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (strstr(line, "Exclusivity flag on"))
		return 0;
	log_msg(level == LIBBPF_WARN ? LOG_WARN : LOG_DEBUG, "%s", line);
	return 0;
}

void log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
