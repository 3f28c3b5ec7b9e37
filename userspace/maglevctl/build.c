// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * argv of the change commands -> JSON request. Only the shape is checked
 * here (arguments present, options known, numbers numeric); the daemon
 * validates the values, so a direct JSON client gets the same answers.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl_proto.h"
#include "hc_fields.h"
#include "maglevctl.h"

/* OPT_CONST: a flag that sets its field to the string value. */
enum opt_kind { OPT_FLAG, OPT_STR, OPT_INT, OPT_CONST };

struct opt_def {
	const char *name; /* without "--" */
	enum opt_kind kind;
	const char *field; /* request member */
	bool flag_value;   /* for OPT_FLAG: the boolean it sets */
	const char *value; /* for OPT_CONST: the string it sets */
};

#define HC_NOPTS (HC_NFIELDS + 1) /* the fields and --check-insecure */

static json_object *usage(struct build_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static json_object *usage(struct build_err *e, const char *fmt, ...)
{
	va_list ap;

	e->code = EXIT_USAGE;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return NULL;
}

/* The health-check overrides (hc_fields.h) as options; d ends with a NULL name. */
static void hc_opt_defs(struct opt_def d[HC_NOPTS + 1])
{
	size_t i;

	for (i = 0; i < HC_NFIELDS; i++)
		d[i] = (struct opt_def){hc_fields[i].opt,
					hc_fields[i].kind == HCK_UINT ? OPT_INT : OPT_STR,
					hc_fields[i].req, false, NULL};
	/* The short way to turn verification off: --check-tls-verify off. */
	d[HC_NFIELDS] =
		(struct opt_def){"check-insecure", OPT_CONST, "check_tls_verify", false, "off"};
	d[HC_NOPTS] = (struct opt_def){NULL, 0, NULL, false, NULL};
}

/* The option called name in opts, then in more (NULL: none), or NULL. */
static const struct opt_def *find_opt(const struct opt_def *opts, const struct opt_def *more,
				      const char *name)
{
	const struct opt_def *o;

	for (o = opts; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	for (o = more; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/*
 * A VIP or backend address the daemon could not parse either (the same
 * parsers, userspace/lib/ctl_proto.c): a usage error before anything is sent.
 */
static int check_pos(const char *name, const char *val, struct build_err *e)
{
	struct maglev_vip_key key;
	struct ctl_addr addr;
	char why[160];
	bool any;
	int r = 0;

	if (!strcmp(name, "vip"))
		r = ctl_parse_vip(val, &key, &any, why, sizeof(why));
	else if (!strcmp(name, "backend"))
		r = ctl_parse_addr(val, &addr, why, sizeof(why));
	if (r) {
		usage(e, "%s", why);
		e->value = true;
	}
	return r;
}

/*
 * Parse argv against opts and more; positional arguments go to pos[] (npos
 * exactly). Options may come before, between or after the positional ones,
 * as "--name value" or "--name=value".
 */
static json_object *parse_args(const char *cmd, int argc, char **argv, const struct opt_def *opts,
			       const struct opt_def *more, const char *const *pos_names, int npos,
			       struct build_err *e)
{
	json_object *req = json_object_new_object();
	const struct opt_def *seen[32];
	int i, k, n = 0, nseen = 0;

	json_object_object_add(req, "cmd", json_object_new_string(cmd));
	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		const struct opt_def *o;
		char name[48];

		if (strncmp(a, "--", 2) || !a[2]) {
			if (n == npos) {
				json_object_put(req);
				return usage(e, "%s: unexpected argument '%.60s'", cmd, a);
			}
			if (check_pos(pos_names[n], a, e)) {
				json_object_put(req);
				return NULL;
			}
			json_object_object_add(req, pos_names[n++], json_object_new_string(a));
			continue;
		}
		eq = strchr(a + 2, '=');
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a - 2) : (int)strlen(a + 2),
			 a + 2);
		o = find_opt(opts, more, name);
		if (!o) {
			json_object_put(req);
			return usage(e, "%s: unknown option '--%.40s'", cmd, name);
		}
		/* One value per setting: "--drain --undrain" or a repeated option
		 * would otherwise be decided silently by the order on the line.
		 */
		for (k = 0; k < nseen; k++) {
			if (strcmp(seen[k]->field, o->field))
				continue;
			json_object_put(req);
			if (seen[k] == o)
				return usage(e, "%s: --%s given twice", cmd, o->name);
			return usage(e, "%s: --%s and --%s contradict each other; give one", cmd,
				     seen[k]->name, o->name);
		}
		if (nseen < (int)(sizeof(seen) / sizeof(seen[0])))
			seen[nseen++] = o;
		if (o->kind == OPT_FLAG || o->kind == OPT_CONST) {
			if (eq) {
				json_object_put(req);
				return usage(e, "%s: --%s takes no value", cmd, name);
			}
			json_object_object_add(req, o->field,
					       o->kind == OPT_CONST
						       ? json_object_new_string(o->value)
						       : json_object_new_boolean(o->flag_value));
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			json_object_put(req);
			return usage(e, "%s: --%s needs a value", cmd, name);
		}
		/* A check override set back to the configured default. */
		if (!strcmp(val, "default") && hc_field_by_req(o->field)) {
			json_object *defs;

			if (!json_object_object_get_ex(req, "check_default", &defs)) {
				defs = json_object_new_array();
				json_object_object_add(req, "check_default", defs);
			}
			json_object_array_add(defs, json_object_new_string(o->field));
		} else if (o->kind == OPT_STR) {
			json_object_object_add(req, o->field, json_object_new_string(val));
		} else {
			uint64_t v;

			/* Nothing is sent: a usage error, as the man page says. */
			if (ctl_parse_uint(val, name, 0, INT32_MAX, &v, e->msg, sizeof(e->msg))) {
				e->code = EXIT_USAGE;
				e->value = true;
				json_object_put(req);
				return NULL;
			}
			json_object_object_add(req, o->field, json_object_new_int64((int64_t)v));
		}
	}
	if (n < npos) {
		json_object_put(req);
		return usage(e, "%s: missing %s", cmd, pos_names[n]);
	}
	return req;
}

json_object *build_change(const char *object, int argc, char **argv, struct build_err *e)
{
	/* vip set takes every option of vip add but --port-any (which makes it
	 * another VIP): the list from its second entry on. Both take the
	 * health-check overrides of hc_fields[] too (hc_opts).
	 */
	static const struct opt_def vip_add_opts[] = {
		{"port-any", OPT_FLAG, "port_any", true, NULL},
		{"encap", OPT_STR, "encap", false, NULL},
		{"gue-port", OPT_INT, "gue_port", false, NULL},
		{"second-chance", OPT_FLAG, "second_chance", true, NULL},
		{"no-second-chance", OPT_FLAG, "second_chance", false, NULL},
		{"placement", OPT_STR, "placement", false, NULL},
		{"vnodes", OPT_INT, "vnodes", false, NULL},
		{"balance-factor", OPT_STR, "balance_factor", false, NULL},
		{"slow-start", OPT_STR, "slow_start_ms", false, NULL},
		{"hot-threshold", OPT_STR, "hot_threshold", false, NULL},
		{NULL, 0, NULL, false, NULL},
	};
	const struct opt_def *vip_set_opts = &vip_add_opts[1];
	struct opt_def hc_opts[HC_NOPTS + 1];
	static const struct opt_def be_add_opts[] = {
		{"weight", OPT_INT, "weight", false, NULL},
		{"drain", OPT_FLAG, "drain", true, NULL},
		{"start-down", OPT_FLAG, "start_down", true, NULL},
		{NULL, 0, NULL, false, NULL},
	};
	static const struct opt_def be_set_opts[] = {
		{"weight", OPT_INT, "weight", false, NULL},
		{"drain", OPT_FLAG, "drain", true, NULL},
		{"undrain", OPT_FLAG, "drain", false, NULL},
		{NULL, 0, NULL, false, NULL},
	};
	static const struct opt_def be_del_opts[] = {
		{"force", OPT_FLAG, "force", true, NULL},
		{NULL, 0, NULL, false, NULL},
	};
	static const struct opt_def none[] = {{NULL, 0, NULL, false, NULL}};
	static const char *const vip_pos[] = {"vip"};
	static const char *const be_pos[] = {"vip", "backend"};
	const char *verb = argc ? argv[0] : "";

	e->code = EXIT_USAGE;
	e->value = false;
	e->msg[0] = '\0';
	hc_opt_defs(hc_opts);
	if (!strcmp(object, "vip")) {
		if (!strcmp(verb, "add"))
			return parse_args("vip.add", argc - 1, argv + 1, vip_add_opts, hc_opts,
					  vip_pos, 1, e);
		if (!strcmp(verb, "del"))
			return parse_args("vip.del", argc - 1, argv + 1, none, NULL, vip_pos, 1, e);
		if (!strcmp(verb, "set")) {
			json_object *req = parse_args("vip.set", argc - 1, argv + 1, vip_set_opts,
						      hc_opts, vip_pos, 1, e);

			/* "cmd" and "vip" alone: nothing to set. */
			if (req && json_object_object_length(req) <= 2) {
				json_object_put(req);
				return usage(e, "vip set: give an option to change (see "
						"maglevctl vip set --help)");
			}
			return req;
		}
	} else if (!strcmp(object, "backend")) {
		if (!strcmp(verb, "add"))
			return parse_args("backend.add", argc - 1, argv + 1, be_add_opts, NULL,
					  be_pos, 2, e);
		if (!strcmp(verb, "del"))
			return parse_args("backend.del", argc - 1, argv + 1, be_del_opts, NULL,
					  be_pos, 2, e);
		if (!strcmp(verb, "set")) {
			json_object *req = parse_args("backend.set", argc - 1, argv + 1,
						      be_set_opts, NULL, be_pos, 2, e);
			json_object *m;

			if (req && !json_object_object_get_ex(req, "weight", &m) &&
			    !json_object_object_get_ex(req, "drain", &m)) {
				json_object_put(req);
				return usage(e,
					     "backend set: give --weight N, --drain or --undrain");
			}
			return req;
		}
	}
	return usage(e, "unknown command '%.20s %.20s'", object, verb);
}
