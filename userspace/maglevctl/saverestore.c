// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * save prints the configuration as maglevctl commands (like ipvsadm-save);
 * restore turns such a file into one batch request, which the daemon
 * applies all or nothing.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_proto.h"
#include "maglevctl.h"

#define RESTORE_MAX_ARGS  32
#define RESTORE_MAX_LINES 200000

static void print_check(json_object *chk)
{
	static const struct {
		const char *key, *opt;
	} ints[] = {{"port", "--check-port"},
		    {"status", "--check-status"},
		    {"interval_ms", "--check-interval"},
		    {"timeout_ms", "--check-timeout"},
		    {"rise", "--rise"},
		    {"fall", "--fall"}};
	json_object *m;
	size_t i;

	if (!chk)
		return;
	if (jstr(chk, "type"))
		printf(" --check %s", jstr(chk, "type"));
	if (jstr(chk, "path"))
		printf(" --check-path %s", jstr(chk, "path"));
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (json_object_object_get_ex(chk, ints[i].key, &m))
			printf(" %s %" PRId64, ints[i].opt, json_object_get_int64(m));
}

int cmd_save(const struct ctl_opts *o, int argc, char **argv)
{
	json_object *req, *resp, *vips;
	time_t now = time(NULL);
	size_t i, j, n;
	char when[64];
	int rc;

	if (argc && is_help(argv[0])) {
		help_topic(stdout, "save", NULL);
		return EXIT_OK;
	}
	if (argc) {
		fprintf(stderr, "maglevctl: save takes no arguments\n");
		help_topic(stderr, "save", NULL);
		return EXIT_USAGE;
	}
	req = json_object_new_object();
	json_object_object_add(req, "cmd", json_object_new_string("dump"));
	resp = call(o, req, &rc);
	if (!resp)
		return rc;
	if (o->json) {
		printf("%s\n",
		       json_object_to_json_string_ext(
			       resp, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(resp);
		return EXIT_OK;
	}
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	printf("# maglevctl save, %s\n# replay with: maglevctl restore FILE\n", when);
	json_object_object_get_ex(resp, "vips", &vips);
	n = vips ? json_object_array_length(vips) : 0;
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(vips, i), *chk = NULL, *bes = NULL;
		const char *name = jstr(v, "vip");

		printf("vip add %s", name);
		if (!strcmp(jstr(v, "encap") ? jstr(v, "encap") : "", "gue"))
			printf(" --encap gue --gue-port %" PRId64, jint(v, "gue_port"));
		json_object_object_get_ex(v, "check", &chk);
		print_check(chk);
		printf("\n");
		json_object_object_get_ex(v, "backends", &bes);
		for (j = 0; bes && j < json_object_array_length(bes); j++) {
			json_object *b = json_object_array_get_idx(bes, j);

			printf("backend add %s %s --weight %" PRId64 "%s\n", name, jstr(b, "addr"),
			       jint(b, "weight"), jbool(b, "drain") ? " --drain" : "");
		}
	}
	json_object_put(resp);
	return EXIT_OK;
}

/* A rejection before anything was sent: EXIT_REJECTED. */
static int restore_fail(const struct ctl_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int restore_fail(const struct ctl_opts *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report_error(o, msg);
	return EXIT_REJECTED;
}

/* Split line into whitespace-separated words; '#' starts a comment. */
static int split(char *line, char **argv, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max)
			return -1;
		argv[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

int cmd_restore(const struct ctl_opts *o, int argc, char **argv)
{
	json_object *batch, *list = NULL, *req, *resp;
	const char *path = NULL;
	int *lines = NULL, nlines = 0;
	bool flush = true;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int i, lineno = 0, rc;
	FILE *f;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i])) {
			help_topic(stdout, "restore", NULL);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "--no-flush")) {
			flush = false;
		} else if (!path && (argv[i][0] != '-' || !strcmp(argv[i], "-"))) {
			path = argv[i];
		} else {
			fprintf(stderr, "maglevctl: restore: unexpected argument '%s'\n", argv[i]);
			help_topic(stderr, "restore", NULL);
			return EXIT_USAGE;
		}
	}
	if (!path || !strcmp(path, "-")) {
		f = stdin;
		path = "(stdin)";
	} else {
		f = fopen(path, "re");
		if (!f) {
			return restore_fail(o, "%s: %s", path, strerror(errno));
		}
	}
	list = json_object_new_array();
	lines = calloc(RESTORE_MAX_LINES, sizeof(*lines));
	if (!lines) {
		rc = EXIT_REJECTED;
		goto out;
	}
	if (flush) {
		req = json_object_new_object();
		json_object_object_add(req, "cmd", json_object_new_string("flush"));
		json_object_array_add(list, req);
		lines[nlines++] = 0;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		char *words[RESTORE_MAX_ARGS];
		struct build_err e;
		int n;

		lineno++;
		/* The words would end at the NUL and silently lose the rest. */
		if (memchr(line, '\0', (size_t)len)) {
			rc = restore_fail(o, "%s:%d: holds a NUL byte", path, lineno);
			goto out;
		}
		n = split(line, words, RESTORE_MAX_ARGS);
		if (n == 0)
			continue;
		if (n < 0 || (strcmp(words[0], "vip") && strcmp(words[0], "backend")) || n < 2 ||
		    !strcmp(words[1], "list") || !strcmp(words[1], "show")) {
			rc = restore_fail(o, "%s:%d: not a vip or backend add/del/set command",
					  path, lineno);
			goto out;
		}
		req = build_change(words[0], n - 1, words + 1, &e);
		if (!req) {
			rc = restore_fail(o, "%s:%d: %s", path, lineno, e.msg);
			goto out;
		}
		json_object_array_add(list, req);
		if (nlines == RESTORE_MAX_LINES) {
			rc = restore_fail(o, "%s: more than %d lines", path, RESTORE_MAX_LINES);
			goto out;
		}
		lines[nlines++] = lineno;
	}
	if (ferror(f)) {
		rc = restore_fail(o, "reading %s: %s", path, strerror(errno));
		goto out;
	}
	batch = json_object_new_object();
	json_object_object_add(batch, "cmd", json_object_new_string("batch"));
	json_object_object_add(batch, "requests", json_object_get(list));
	{
		char err[300];
		const char *e;
		bool sent;
		int n;

		if (ctl_call_ex(ctl_socket_path(o->socket), batch, &resp, &sent, err,
				sizeof(err))) {
			json_object_put(batch);
			rc = call_failed(o, err, sent);
			goto out;
		}
		json_object_put(batch);
		if (o->json)
			printf("%s\n", json_object_to_json_string(resp));
		rc = EXIT_OK;
		if (!jbool(resp, "ok")) {
			rc = EXIT_REJECTED;
			e = jstr(resp, "error");
			/* "batch request N (...): why" -> "FILE:LINE: why" */
			if (e && sscanf(e, "batch request %d", &n) == 1 && n >= 1 &&
			    n <= (int)json_object_array_length(list) && lines[n - 1] &&
			    strstr(e, "): "))
				fprintf(stderr, "maglevctl: %s:%d: %s (nothing applied)\n", path,
					lines[n - 1], strstr(e, "): ") + 3);
			else
				fprintf(stderr, "maglevctl: %s (nothing applied)\n",
					e ? e : "rejected");
		}
		json_object_put(resp);
	}
out:
	json_object_put(list);
	free(lines);
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}
