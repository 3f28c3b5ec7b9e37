// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "maglevctl.h"
#include "version.h"

bool is_help(const char *s)
{
	return !strcmp(s, "--help") || !strcmp(s, "-h") || !strcmp(s, "help");
}

void report_error(const struct ctl_opts *o, const char *msg)
{
	if (o->json) {
		json_object *r = json_object_new_object();

		json_object_object_add(r, "ok", json_object_new_boolean(0));
		json_object_object_add(r, "error", json_object_new_string(msg));
		printf("%s\n", json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
		json_object_put(r);
	}
	fprintf(stderr, "maglevctl: %s\n", msg);
}

int call_failed(const struct ctl_opts *o, const char *err, bool sent)
{
	char msg[400];

	if (!sent) {
		report_error(o, err);
		return EXIT_NO_DAEMON;
	}
	/* The daemon may or may not have acted: say so, a script must check. */
	snprintf(msg, sizeof(msg), "%s; the request was sent, its outcome is unknown", err);
	report_error(o, msg);
	return EXIT_UNKNOWN;
}

void add_expect(const struct ctl_opts *o, json_object *req)
{
	if (o->expect_rev >= 0)
		json_object_object_add(req, "expect_revision",
				       json_object_new_int64(o->expect_rev));
}

json_object *call(const struct ctl_opts *o, json_object *req, int *rc)
{
	json_object *resp = NULL;
	char err[300];
	bool sent;

	add_expect(o, req);
	if (ctl_call_ex(ctl_socket_path(o->socket), req, &resp, &sent, err, sizeof(err))) {
		json_object_put(req);
		*rc = call_failed(o, err, sent);
		return NULL;
	}
	json_object_put(req);
	if (!jbool(resp, "ok")) {
		const char *e = jstr(resp, "error");

		if (o->json)
			printf("%s\n",
			       json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
		fprintf(stderr, "maglevctl: %s\n", e ? e : "rejected");
		json_object_put(resp);
		*rc = EXIT_REJECTED;
		return NULL;
	}
	*rc = EXIT_OK;
	return resp;
}

/* run_request, the exit status taken from the answer by rc_of (NULL: 0). */
static int run_request_rc(const struct ctl_opts *o, json_object *req,
			  void (*print)(const struct ctl_opts *o, json_object *resp),
			  int (*rc_of)(json_object *resp))
{
	json_object *resp;
	int rc;

	resp = call(o, req, &rc);
	if (!resp)
		return rc;
	if (o->json)
		printf("%s\n",
		       json_object_to_json_string_ext(
			       resp, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		print(o, resp);
	rc = rc_of ? rc_of(resp) : EXIT_OK;
	json_object_put(resp);
	fflush(stdout);
	return rc;
}

int run_request(const struct ctl_opts *o, json_object *req,
		void (*print)(const struct ctl_opts *o, json_object *resp))
{
	return run_request_rc(o, req, print, NULL);
}

static int usage_error(const char *msg, const char *object, const char *verb)
{
	fprintf(stderr, "maglevctl: %s\n", msg);
	if (!object || !help_topic(stderr, object, verb))
		fprintf(stderr, "Try 'maglevctl --help'.\n");
	return EXIT_USAGE;
}

/* "unknown option '--frob'": the word itself, so a typo shows at once. */
static const char *named(const char *what, const char *word)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s '%.60s'", what, word);
	return buf;
}

static int top_usage(const char *msg)
{
	return usage_error(msg, "top", NULL);
}

static json_object *simple_req(const char *cmd)
{
	json_object *req = json_object_new_object();

	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	return req;
}

/*
 * Query commands: "CMD [VIP]" or "CMD VIP" (need_vip), plus extra
 * positional arguments named in extra.
 */
static int query(const struct ctl_opts *o, const char *object, const char *cmd, int argc,
		 char **argv, int min_pos, const char *const *names, int max_pos,
		 void (*print)(const struct ctl_opts *o, json_object *resp))
{
	json_object *req;
	int i;

	for (i = 0; i < argc; i++)
		if (is_help(argv[i])) {
			help_topic(stdout, object, NULL);
			return EXIT_OK;
		}
	if (argc < min_pos)
		return usage_error("missing argument", object, NULL);
	if (argc > max_pos)
		return usage_error("too many arguments", object, NULL);
	req = simple_req(cmd);
	for (i = 0; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			return json_object_put(req),
			       usage_error(named("unknown option", argv[i]), object, NULL);
		json_object_object_add(req, names[i], json_object_new_string(argv[i]));
	}
	return run_request(o, req, print);
}

static int cmd_stats(const struct ctl_opts *o, int argc, char **argv)
{
	static const char *const names[] = {"vip"};
	char *pos[1];
	bool watch = false;
	int i, n = 0, rc;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i])) {
			help_topic(stdout, "stats", NULL);
			return EXIT_OK;
		}
		if (!strcmp(argv[i], "-w") || !strcmp(argv[i], "--watch"))
			watch = true;
		else if (argv[i][0] == '-')
			return usage_error(named("stats: unknown option", argv[i]), "stats", NULL);
		else if (n < 1)
			pos[n++] = argv[i];
		else
			return usage_error("stats: too many arguments", "stats", NULL);
	}
	do {
		if (watch && !o->json && isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		rc = query(o, "stats", "stats", n, pos, 0, names, 1, print_stats);
		if (rc || !watch)
			return rc;
		rc = watch_pause();
	} while (rc < 0);
	return rc;
}

int watch_pause(void)
{
	/* SIGPIPE is ignored: a reader that went away ("stats -w | head")
	 * shows as a failed write, which ends the watch.
	 */
	if (fflush(stdout) == EOF || ferror(stdout))
		return errno == EPIPE ? EXIT_OK : EXIT_UNKNOWN;
	sleep(1);
	return -1;
}

/* reload: exit 5 when keys that take effect on restart only changed. */
static int reload_rc(json_object *resp)
{
	json_object *pending = NULL;

	json_object_object_get_ex(resp, "restart_pending", &pending);
	return json_object_is_type(pending, json_type_array) && json_object_array_length(pending)
		       ? EXIT_RESTART
		       : EXIT_OK;
}

static int cmd_reload(const struct ctl_opts *o, int argc, char **argv)
{
	if (argc && is_help(argv[0])) {
		help_topic(stdout, "reload", NULL);
		return EXIT_OK;
	}
	if (argc)
		return usage_error("reload takes no arguments", "reload", NULL);
	return run_request_rc(o, simple_req("reload"), print_reload, reload_rc);
}

/* table VIP [--dump] */
static int cmd_table(const struct ctl_opts *o, int argc, char **argv)
{
	const char *vip = NULL;
	bool dump = false;
	json_object *req;
	int i;

	for (i = 0; i < argc; i++) {
		if (is_help(argv[i])) {
			help_topic(stdout, "table", NULL);
			return EXIT_OK;
		}
		if (!strcmp(argv[i], "--dump"))
			dump = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return usage_error(named("table: unknown option", argv[i]), "table", NULL);
		else if (!vip)
			vip = argv[i];
		else
			return usage_error("table: too many arguments", "table", NULL);
	}
	if (!vip)
		return usage_error("table: missing VIP", "table", NULL);
	req = simple_req("table");
	json_object_object_add(req, "vip", json_object_new_string(vip));
	if (dump)
		json_object_object_add(req, "dump", json_object_new_boolean(1));
	return run_request(o, req, print_table);
}

static int dispatch(const struct ctl_opts *o, int argc, char **argv)
{
	static const char *const vip_n[] = {"vip"};
	static const char *const lookup_n[] = {"vip", "src"};
	const char *object = argv[0];

	if (!strcmp(object, "vip") || !strcmp(object, "backend")) {
		const char *verb = argc > 1 ? argv[1] : NULL;
		struct build_err e;
		json_object *req;
		int i;

		if (!verb || is_help(verb)) {
			help_topic(verb ? stdout : stderr, object, NULL);
			return verb ? EXIT_OK : EXIT_USAGE;
		}
		for (i = 2; i < argc; i++)
			if (is_help(argv[i])) {
				if (!help_topic(stdout, object, verb))
					return usage_error("unknown command", object, NULL);
				return EXIT_OK;
			}
		if (!strcmp(verb, "list") || !strcmp(verb, "show")) {
			bool is_vip = !strcmp(object, "vip");

			if (is_vip && !strcmp(verb, "list"))
				return query(o, object, "vip.list", argc - 2, argv + 2, 0, vip_n, 0,
					     print_vip_list);
			if (is_vip)
				return query(o, object, "vip.show", argc - 2, argv + 2, 1, vip_n, 1,
					     print_vip_show);
			if (!strcmp(verb, "list"))
				return query(o, object, "backend.list", argc - 2, argv + 2, 0,
					     vip_n, 1, print_backend_list);
		}
		req = build_change(object, argc - 1, argv + 1, &e);
		if (!req) {
			/* A bad value: its one line says all; -j answers on stdout too. */
			if (e.code == EXIT_USAGE && (o->json || e.value)) {
				report_error(o, e.msg);
				return EXIT_USAGE;
			}
			if (e.code == EXIT_USAGE)
				return usage_error(e.msg, object, verb);
			report_error(o, e.msg);
			return e.code;
		}
		return run_request(o, req, print_ok);
	}
	if (!strcmp(object, "stats"))
		return cmd_stats(o, argc - 1, argv + 1);
	if (!strcmp(object, "top"))
		return cmd_top(o, argc - 1, argv + 1, top_usage);
	if (!strcmp(object, "health"))
		return query(o, object, "health", argc - 1, argv + 1, 0, vip_n, 1, print_health);
	if (!strcmp(object, "table"))
		return cmd_table(o, argc - 1, argv + 1);
	if (!strcmp(object, "lookup"))
		return query(o, object, "lookup", argc - 1, argv + 1, 2, lookup_n, 2, print_lookup);
	if (!strcmp(object, "status"))
		return query(o, object, "status", argc - 1, argv + 1, 0, vip_n, 0, print_status);
	if (!strcmp(object, "reload"))
		return cmd_reload(o, argc - 1, argv + 1);
	if (!strcmp(object, "announce")) {
		static const char *const state_n[] = {"state"};

		if (argc > 1 && strcmp(argv[1], "on") && strcmp(argv[1], "off") &&
		    !is_help(argv[1]))
			return usage_error("announce: want on or off", object, NULL);
		return query(o, object, "announce", argc - 1, argv + 1, 0, state_n, 1,
			     print_announce);
	}
	if (!strcmp(object, "save"))
		return cmd_save(o, argc - 1, argv + 1);
	if (!strcmp(object, "restore"))
		return cmd_restore(o, argc - 1, argv + 1);
	if (!strcmp(object, "fleet"))
		return cmd_fleet(o, argc - 1, argv + 1);
	if (is_help(object)) {
		help_main(stdout);
		return EXIT_OK;
	}
	return usage_error(named("unknown object", object), NULL, NULL);
}

int main(int argc, char **argv)
{
	struct ctl_opts o = {.expect_rev = -1};
	int i = 1;

	signal(SIGPIPE, SIG_IGN);
	/* -j works anywhere on the line, as with ip(8). */
	{
		int r, w;

		for (r = w = 1; r < argc; r++) {
			if (!strcmp(argv[r], "-j") || !strcmp(argv[r], "--json"))
				o.json = true;
			else
				argv[w++] = argv[r];
		}
		argc = w;
	}
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "-s") || !strcmp(a, "--socket")) {
			if (++i == argc)
				return usage_error("--socket needs a path", NULL, NULL);
			o.socket = argv[i];
		} else if (!strncmp(a, "--socket=", 9)) {
			o.socket = a + 9;
		} else if (!strcmp(a, "--expect-revision") ||
			   !strncmp(a, "--expect-revision=", 18)) {
			const char *v = a[17] == '=' ? a + 18 : (++i < argc ? argv[i] : NULL);
			char *end;
			long long n;

			if (!v)
				return usage_error("--expect-revision needs a revision", NULL,
						   NULL);
			errno = 0;
			n = strtoll(v, &end, 10);
			if (errno || *end || end == v || n < 0)
				return usage_error("--expect-revision: not a revision (0 or more)",
						   NULL, NULL);
			o.expect_rev = n;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("maglevctl %s\n", MAGLEV_VERSION);
			return EXIT_OK;
		} else if (is_help(a)) {
			help_main(stdout);
			return EXIT_OK;
		} else {
			return usage_error(named("unknown option", a), NULL, NULL);
		}
	}
	if (i == argc) {
		help_main(stderr);
		return EXIT_USAGE;
	}
	return dispatch(&o, argc - i, argv + i);
}
