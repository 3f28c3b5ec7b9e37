/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * maglevctl: the operator's CLI for maglevd. Commands build one JSON
 * request each (restore builds a batch of them), send it over the control
 * socket, and print the answer as text or, with -j, as JSON.
 *
 * Exit status (maglevctl(8) EXIT STATUS): 0 done, 1 rejected (nothing
 * changed; one-line reason on stderr), 2 usage error, 3 no daemon (nothing
 * was sent), 4 outcome unknown (the request was sent but no answer came).
 */
#ifndef MAGLEVCTL_H
#define MAGLEVCTL_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

#include "json_get.h"

enum {
	EXIT_OK = 0,
	EXIT_REJECTED = 1,
	EXIT_USAGE = 2,
	EXIT_NO_DAEMON = 3,
	EXIT_UNKNOWN = 4,
	EXIT_RESTART = 5, /* reloaded; keys that need a restart changed and wait */
};

struct ctl_opts {
	bool json;
	const char *socket;
	int64_t expect_rev; /* --expect-revision (fleet mode); -1: not given */
};

/* The expect_revision member of a change request, when given. */
void add_expect(const struct ctl_opts *o, json_object *req);

/* Result of turning argv into a request. */
struct build_err {
	int code;   /* EXIT_USAGE or EXIT_REJECTED */
	bool value; /* a bad value (address, number): one line, no help text */
	char msg[256];
};

/*
 * Build the request of a change command ("vip add|del", "backend
 * add|del|set"); argv starts after the object word (argv[0] = "add", ...).
 * Returns the request, or NULL with e filled. Used by the CLI and restore.
 */
json_object *build_change(const char *object, int argc, char **argv, struct build_err *e);

/* Help texts (help.c). */
void help_main(FILE *f);
/* Returns true if topic ("vip", "vip add", ...) has a help text. */
bool help_topic(FILE *f, const char *object, const char *verb);

/* Send req (consumed), print the answer; returns the exit status. */
int run_request(const struct ctl_opts *o, json_object *req,
		void (*print)(const struct ctl_opts *o, json_object *resp));
/* Send req (consumed) and hand back the answer; NULL and an exit status in *rc on failure. */
json_object *call(const struct ctl_opts *o, json_object *req, int *rc);
/* Report a ctl_call_ex() failure; EXIT_NO_DAEMON if nothing was sent, else EXIT_UNKNOWN. */
int call_failed(const struct ctl_opts *o, const char *err, bool sent);

/* Printers for text output (print.c). */
void print_ok(const struct ctl_opts *o, json_object *resp);
/* A rejection: one line on stderr, and with -j a {"ok":false,...} answer on stdout. */
void report_error(const struct ctl_opts *o, const char *msg);
void print_vip_list(const struct ctl_opts *o, json_object *resp);
void print_vip_show(const struct ctl_opts *o, json_object *resp);
void print_backend_list(const struct ctl_opts *o, json_object *resp);
void print_stats(const struct ctl_opts *o, json_object *resp);
void print_health(const struct ctl_opts *o, json_object *resp);
void print_table(const struct ctl_opts *o, json_object *resp);
void print_lookup(const struct ctl_opts *o, json_object *resp);
void print_status(const struct ctl_opts *o, json_object *resp);
void print_reload(const struct ctl_opts *o, json_object *resp);
void print_announce(const struct ctl_opts *o, json_object *resp);

/* save / restore (saverestore.c). */
int cmd_save(const struct ctl_opts *o, int argc, char **argv);
int cmd_restore(const struct ctl_opts *o, int argc, char **argv);
/* top (top.c); usage prints a usage error and returns its exit status. */
int cmd_top(const struct ctl_opts *o, int argc, char **argv, int (*usage)(const char *msg));
/* fleet status (fleet.c). */
int cmd_fleet(const struct ctl_opts *o, int argc, char **argv);

/* Small helpers shared by the files (and jstr, jint, jdbl, jbool: json_get.h). */
bool is_help(const char *s);
/* Between two refreshes of a watching command: flush, wait a second; -1 to
 * go on, or the exit status (the reader went away, or a write failed).
 */
int watch_pause(void);

#endif /* MAGLEVCTL_H */
