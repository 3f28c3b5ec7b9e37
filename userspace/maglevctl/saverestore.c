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
#include "hc_fields.h"
#include "maglevctl.h"

#define RESTORE_MAX_ARGS  32
#define RESTORE_MAX_LINES 200000
/* A save starts with SAVE_HEADER and ends with SAVE_END: restore refuses
 * such a file without its end line (cut short; lines added after the end
 * line are the operator's own). Saves of older versions ("# maglevctl
 * save, ...") have no end line and are not checked.
 */
#define SAVE_HEADER "# maglevctl save v2"
#define SAVE_END    "# end of maglevctl save"

/* An escaped-text value (hc_udp.h) as one word of a save line: restore
 * splits at whitespace and '#' starts a comment, so those go as \xNN, which
 * the daemon decodes to the same bytes.
 */
static void print_word(FILE *f, const char *opt, const char *s)
{
	fprintf(f, " --%s ", opt);
	for (; *s; s++) {
		if (isspace((unsigned char)*s) || *s == '#')
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

/* A VIP's health-check overrides as options, in the order saves have had. */
static void print_check(FILE *f, json_object *chk)
{
	json_object *m;
	size_t i;

	if (!chk)
		return;
	for (i = 0; i < HC_NFIELDS; i++) {
		const struct hc_field *hf = hc_field_at(HC_ORDER_SAVE, i);
		const char *s = jstr(chk, hf->key);

		if (hf->kind == HCK_UINT) {
			if (json_object_object_get_ex(chk, hf->key, &m))
				fprintf(f, " --%s %" PRId64, hf->opt, json_object_get_int64(m));
		} else if (s && hf->escaped) {
			print_word(f, hf->opt, s);
		} else if (s) {
			fprintf(f, " --%s %s", hf->opt, s);
		}
	}
}

/* json-c array comparators: the canonical orders of ctl_cmp_vip() and
 * ctl_cmp_addr() by the "vip" and "addr" members (unparsable ones last).
 */
static int cmp_vip_json(const void *a, const void *b)
{
	const char *x = jstr(*(json_object *const *)a, "vip");
	const char *y = jstr(*(json_object *const *)b, "vip");
	struct maglev_vip_key kx, ky;
	char err[8];
	bool any;
	int bx = !x || ctl_parse_vip(x, &kx, &any, err, sizeof(err));
	int by = !y || ctl_parse_vip(y, &ky, &any, err, sizeof(err));

	return bx || by ? bx - by : ctl_cmp_vip(&kx, &ky);
}

static int cmp_addr_json(const void *a, const void *b)
{
	const char *x = jstr(*(json_object *const *)a, "addr");
	const char *y = jstr(*(json_object *const *)b, "addr");
	struct ctl_addr ax, ay;
	char err[8];
	int bx = !x || ctl_parse_addr(x, &ax, err, sizeof(err));
	int by = !y || ctl_parse_addr(y, &ay, err, sizeof(err));

	return bx || by ? bx - by : ctl_cmp_addr(&ax, &ay);
}

/* A "dump" answer's VIPs, and each one's backends, in canonical order. */
static void canonical_order(json_object *resp)
{
	json_object *vips = NULL, *bes;
	size_t i, n;

	json_object_object_get_ex(resp, "vips", &vips);
	n = json_object_is_type(vips, json_type_array) ? json_object_array_length(vips) : 0;
	if (!n)
		return;
	json_object_array_sort(vips, cmp_vip_json);
	for (i = 0; i < n; i++)
		if (json_object_object_get_ex(json_object_array_get_idx(vips, i), "backends",
					      &bes) &&
		    json_object_is_type(bes, json_type_array) && json_object_array_length(bes))
			json_object_array_sort(bes, cmp_addr_json);
}

/* The save lines of a "dump" answer's VIPs ("vip add", then its "backend
 * add"s), in canonical order: balancers holding the same set save the same
 * lines. Returns the number of VIPs, and of backends in *nbe.
 */
static size_t print_vips(FILE *f, json_object *resp, size_t *nbe)
{
	json_object *vips = NULL;
	size_t i, j, n;

	*nbe = 0;
	json_object_object_get_ex(resp, "vips", &vips);
	canonical_order(resp);
	n = vips ? json_object_array_length(vips) : 0;
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(vips, i), *chk = NULL, *bes = NULL;
		const char *name = jstr(v, "vip");

		fprintf(f, "vip add %s", name);
		if (!strcmp(jstr(v, "encap") ? jstr(v, "encap") : "", "gue"))
			fprintf(f, " --encap gue --gue-port %" PRId64, jint(v, "gue_port"));
		if (jbool(v, "second_chance"))
			fprintf(f, " --second-chance");
		if (jstr(v, "placement") && strcmp(jstr(v, "placement"), "maglev"))
			fprintf(f, " --placement %s", jstr(v, "placement"));
		if (jint(v, "vnodes"))
			fprintf(f, " --vnodes %" PRId64, jint(v, "vnodes"));
		if (jstr(v, "balance_factor"))
			fprintf(f, " --balance-factor %s", jstr(v, "balance_factor"));
		if (json_object_object_get_ex(v, "slow_start_ms", NULL))
			fprintf(f, " --slow-start %" PRId64, jint(v, "slow_start_ms"));
		if (jstr(v, "hot_threshold"))
			fprintf(f, " --hot-threshold %s", jstr(v, "hot_threshold"));
		json_object_object_get_ex(v, "check", &chk);
		print_check(f, chk);
		fprintf(f, "\n");
		json_object_object_get_ex(v, "backends", &bes);
		for (j = 0; bes && j < json_object_array_length(bes); j++) {
			json_object *b = json_object_array_get_idx(bes, j);

			fprintf(f, "backend add %s %s --weight %" PRId64 "%s\n", name,
				jstr(b, "addr"), jint(b, "weight"),
				jbool(b, "drain") ? " --drain" : "");
			(*nbe)++;
		}
	}
	return n;
}

int cmd_save(const struct ctl_opts *o, int argc, char **argv)
{
	json_object *req, *resp;
	time_t now = time(NULL);
	size_t nvips, nbe;
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
		canonical_order(resp);
		printf("%s\n",
		       json_object_to_json_string_ext(
			       resp, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(resp);
		return EXIT_OK;
	}
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	printf(SAVE_HEADER ", %s\n# replay with: maglevctl restore FILE\n", when);
	nvips = print_vips(stdout, resp, &nbe);
	printf(SAVE_END " (%zu VIP%s, %zu backend%s)\n", nvips, nvips == 1 ? "" : "s", nbe,
	       nbe == 1 ? "" : "s");
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

/* The save lines of a "dump" answer, in a buffer *buf cut into *n lines. */
static char **save_lines(json_object *resp, char **buf, size_t *n)
{
	size_t len = 0, cap = 0, nbe;
	char **v = NULL, *p, *nl;
	FILE *f = open_memstream(buf, &len);

	*n = 0;
	if (!f)
		return NULL;
	print_vips(f, resp, &nbe);
	fclose(f);
	for (p = *buf; (nl = strchr(p, '\n')); p = nl + 1) {
		if (*n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		*nl = '\0';
		v[(*n)++] = p;
	}
	return v;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of a (in order) that b (sorted) lacks: printed with sign, or
 * added to arr with -j. Returns how many.
 */
static size_t lines_missing(char **a, size_t na, char **b_sorted, size_t nb, char sign,
			    json_object *arr)
{
	size_t i, n = 0;

	for (i = 0; i < na; i++) {
		if (nb && bsearch(&a[i], b_sorted, nb, sizeof(*b_sorted), cmp_line))
			continue;
		if (arr)
			json_object_array_add(arr, json_object_new_string(a[i]));
		else
			printf("%c%s\n", sign, a[i]);
		n++;
	}
	return n;
}

/*
 * restore --dry-run: the difference between the running configuration (cur)
 * and the one the restore would give (next), as save lines: '-' those it
 * would remove, '+' those it would add.
 */
static int print_diff(const struct ctl_opts *o, const char *path, json_object *cur,
		      json_object *next)
{
	char *bc = NULL, *bn = NULL, **lc, **ln, **sc, **sn;
	size_t nc, nn, removed, added;
	json_object *rm = NULL, *add = NULL;
	int rc = EXIT_OK;

	lc = save_lines(cur, &bc, &nc);
	ln = save_lines(next, &bn, &nn);
	sc = malloc((nc + 1) * sizeof(*sc));
	sn = malloc((nn + 1) * sizeof(*sn));
	if ((nc && !lc) || (nn && !ln) || !sc || !sn) {
		report_error(o, "out of memory");
		rc = EXIT_REJECTED;
		goto out;
	}
	memcpy(sc, lc, nc * sizeof(*sc));
	memcpy(sn, ln, nn * sizeof(*sn));
	qsort(sc, nc, sizeof(*sc), cmp_line);
	qsort(sn, nn, sizeof(*sn), cmp_line);
	if (o->json) {
		rm = json_object_new_array();
		add = json_object_new_array();
	} else {
		printf("--- running\n+++ %s\n", path);
	}
	removed = lines_missing(lc, nc, sn, nn, '-', rm);
	added = lines_missing(ln, nn, sc, nc, '+', add);
	if (o->json) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "ok", json_object_new_boolean(1));
		json_object_object_add(r, "dry_run", json_object_new_boolean(1));
		json_object_object_add(r, "removed", rm);
		json_object_object_add(r, "added", add);
		printf("%s\n",
		       json_object_to_json_string_ext(r, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(r);
	}
	fprintf(stderr, "maglevctl: dry run: %zu lines removed, %zu added; nothing applied\n",
		removed, added);
out:
	free(lc);
	free(ln);
	free(sc);
	free(sn);
	free(bc);
	free(bn);
	return rc;
}

int cmd_restore(const struct ctl_opts *o, int argc, char **argv)
{
	json_object *batch, *list = NULL, *req, *resp, *cur = NULL;
	const char *path = NULL;
	int *lines = NULL, nlines = 0;
	bool flush = true, dry_run = false, allow_empty = false, is_save = false, ended = false;
	bool force = false;
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
		} else if (!strcmp(argv[i], "--dry-run")) {
			dry_run = true;
		} else if (!strcmp(argv[i], "--allow-empty")) {
			allow_empty = true;
		} else if (!strcmp(argv[i], "--force")) {
			force = true;
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
		if (lineno == 1 && !strncmp(line, SAVE_HEADER, strlen(SAVE_HEADER)))
			is_save = true;
		if (!strncmp(line, SAVE_END, strlen(SAVE_END)))
			ended = true;
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
	/* An empty or truncated file would flush everything: only on request. */
	if (flush && nlines == 1 && !allow_empty) {
		if (!dry_run) {
			rc = restore_fail(o,
					  "%s holds no vip or backend line: restoring it would "
					  "delete every VIP (is it empty, or cut short?); give "
					  "--allow-empty to do that",
					  path);
			goto out;
		}
		fprintf(stderr,
			"maglevctl: %s holds no vip or backend line: restore refuses it "
			"without --allow-empty\n",
			path);
	}
	if (is_save && !ended) {
		if (!dry_run) {
			rc = restore_fail(o,
					  "%s: a save without its last line ('" SAVE_END
					  " ...'): cut short? Nothing applied; if the file is "
					  "complete, end it with that line",
					  path);
			goto out;
		}
		fprintf(stderr,
			"maglevctl: %s: a save without its last line ('" SAVE_END
			" ...'): restore refuses it\n",
			path);
	}
	if (dry_run) {
		req = json_object_new_object();
		json_object_object_add(req, "cmd", json_object_new_string("dump"));
		cur = call(o, req, &rc);
		if (!cur)
			goto out;
	}
	batch = json_object_new_object();
	json_object_object_add(batch, "cmd", json_object_new_string("batch"));
	json_object_object_add(batch, "requests", json_object_get(list));
	if (force)
		json_object_object_add(batch, "force", json_object_new_boolean(1));
	if (dry_run)
		json_object_object_add(batch, "dry_run", json_object_new_boolean(1));
	else
		add_expect(o, batch);
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
		if (!jbool(resp, "ok")) {
			char where[600];

			rc = EXIT_REJECTED;
			e = jstr(resp, "error");
			/* "batch request N (...): why" -> "FILE:LINE: why" */
			if (e && sscanf(e, "batch request %d", &n) == 1 && n >= 1 &&
			    n <= (int)json_object_array_length(list) && lines[n - 1] &&
			    strstr(e, "): ")) {
				snprintf(where, sizeof(where), "%s:%d: %s (nothing applied)", path,
					 lines[n - 1], strstr(e, "): ") + 3);
				json_object_object_add(resp, "file", json_object_new_string(path));
				json_object_object_add(resp, "line",
						       json_object_new_int(lines[n - 1]));
			} else {
				snprintf(where, sizeof(where), "%s (nothing applied)",
					 e ? e : "rejected");
			}
			/* -j: the same words as without, the daemon's own in daemon_error. */
			if (o->json) {
				if (e)
					json_object_object_add(resp, "daemon_error",
							       json_object_new_string(e));
				json_object_object_add(resp, "error",
						       json_object_new_string(where));
				printf("%s\n", json_object_to_json_string(resp));
			}
			fprintf(stderr, "maglevctl: %s\n", where);
		} else if (o->json && !dry_run) {
			printf("%s\n", json_object_to_json_string(resp));
			rc = EXIT_OK;
		} else if (!dry_run) {
			rc = EXIT_OK;
		} else {
			rc = print_diff(o, path, cur, resp);
		}
		json_object_put(resp);
	}
out:
	json_object_put(cur);
	json_object_put(list);
	free(lines);
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}
