/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Levelled logging to stderr. Under systemd (JOURNAL_STREAM set) each line
 * carries a "<N>" syslog priority prefix, which journald turns into the
 * entry's priority; on a terminal the level is spelled out.
 */
#ifndef MAGLEVD_LOG_H
#define MAGLEVD_LOG_H

enum log_level { LOG_ERR = 3, LOG_WARN = 4, LOG_INFO = 6, LOG_DEBUG = 7 };

void log_init(void);
void log_set_level(enum log_level level);
/* "err", "warn", "info", "debug"; returns -1 if unknown. */
int log_parse_level(const char *s);
/* Route libbpf's messages through log_msg (levels, journald priorities). */
void log_libbpf(void);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* MAGLEVD_LOG_H */
