// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: one control-socket request line through the daemon's
 * real ctl_handle() (JSON parsing, command dispatch, field validation,
 * registry changes on a clone), against a live registry holding a few VIPs
 * and backends so the validation paths that look things up run too.
 *
 * Oracles, besides ASan/UBSan/LSan:
 *  - every answer is a JSON object with a boolean "ok", a one-line ASCII
 *    "error" string when false, and serialises to one line;
 *  - the live registry is unchanged after every request (rejections and
 *    queries change nothing; accepted changes only reach daemon_commit);
 *  - an accepted request holds no null and no string with a NUL character
 *    (both are wrong types or values for every field of every command);
 *  - every change the daemon would commit gives a registry whose state file
 *    loads again and renders identically (ctl_fuzz_roundtrip).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_fuzz.h"
#include "core/log.h"

/* The live state the requests run against (parsed with the daemon's parser). */
static const char baseline_state[] =
	"{\"version\":1,\"vips\":["
	"{\"vip\":\"192.0.2.10:80/tcp\",\"id\":0,\"encap\":\"ipip\",\"check\":{},"
	"\"backends\":[{\"addr\":\"198.51.100.1\",\"idx\":1,\"gen\":1,\"weight\":1},"
	"{\"addr\":\"198.51.100.2\",\"idx\":2,\"gen\":1,\"weight\":3,\"drain\":true},"
	"{\"addr\":\"198.51.100.3\",\"idx\":3,\"gen\":4,\"weight\":0}]},"
	"{\"vip\":\"[2001:db8::10]:443/tcp\",\"id\":3,\"encap\":\"gue\",\"gue_port\":6080,"
	"\"check\":{\"type\":\"http\",\"path\":\"/healthz\",\"status\":204,"
	"\"interval_ms\":500,\"timeout_ms\":100,\"rise\":1,\"fall\":2},"
	"\"backends\":[{\"addr\":\"2001:db8:1::1\",\"idx\":5,\"gen\":2,\"weight\":10},"
	"{\"addr\":\"2001:db8:1::2\",\"idx\":6,\"gen\":1,\"weight\":1}]},"
	"{\"vip\":\"192.0.2.20:*/udp\",\"id\":7,\"encap\":\"ipip\",\"check\":{\"port\":53},"
	"\"backends\":[{\"addr\":\"198.51.100.9\",\"idx\":9,\"gen\":1,\"weight\":1}]}]}";

static struct daemon d;
static char *baseline_text;
static unsigned long commits;

/*
 * The daemon's commit writes next to the datapath and the state file and
 * makes it live. Here: check what would be written, and drop it, so every
 * input runs against the same live registry.
 */
int daemon_commit_then(struct daemon *dd, struct registry *next, enum commit_source src,
		       commit_done_fn done, void *arg, char *err, size_t errlen)
{
	ctl_fuzz_roundtrip(next, &dd->cfg);
	registry_free(next);
	commits++;
	if (done)
		done(dd, arg, 0, NULL); /* the datapath is the harness's: written at once */
	return 0;
}

int daemon_commit(struct daemon *dd, struct registry *next, enum commit_source src, char *err,
		  size_t errlen)
{
	return daemon_commit_then(dd, next, src, NULL, NULL, err, errlen);
}

bool daemon_commit_busy(void)
{
	return false;
}

/* Commits here are written at once: the newest registry is the datapath's. */
const struct registry *daemon_applied(const struct daemon *d)
{
	return d->reg;
}

void daemon_commit_barrier(struct daemon *d, commit_done_fn done, void *arg)
{
	done(d, arg, 0, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct registry_ctx boot = {.dp = NULL, .cfg = &d.cfg};
	char err[400];

	log_init();
	log_set_level(LOG_ERR);
	config_defaults(&d.cfg);
	/* Low limits, so that requests can reach them. */
	d.cfg.max_vips = 6;
	d.cfg.max_backends_per_vip = 6;
	d.ctx.dp = ctl_fuzz_dp;
	d.ctx.cfg = &d.cfg;
	if (state_parse(baseline_state, strlen(baseline_state), &boot, &d.reg, err, sizeof(err)))
		ctl_fuzz_die("baseline state: %s", err);
	baseline_text = ctl_fuzz_render(d.reg);
	return 0;
}

static void check_answer(json_object *resp)
{
	json_object *ok, *e;
	const char *text, *c;

	if (!json_object_is_type(resp, json_type_object) ||
	    !json_object_object_get_ex(resp, "ok", &ok) ||
	    !json_object_is_type(ok, json_type_boolean))
		ctl_fuzz_die("answer without a boolean 'ok'");
	if (!json_object_get_boolean(ok)) {
		if (!json_object_object_get_ex(resp, "error", &e) ||
		    !json_object_is_type(e, json_type_string) || !json_object_get_string_len(e))
			ctl_fuzz_die("rejection without an 'error' reason");
		for (c = json_object_get_string(e); *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
				ctl_fuzz_die("error reason holds byte 0x%02x",
					     (unsigned int)(unsigned char)*c);
	}
	/* What ctl_server sends: it must be one line. */
	text = json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text || strchr(text, '\n'))
		ctl_fuzz_die("answer is not one line");
}

/* Whether o, or anything inside it, is null or a string holding a NUL. */
static bool has_null_or_nul(json_object *o, int depth)
{
	size_t i;

	if (!o)
		return true;
	if (depth > 64)
		return false;
	switch (json_object_get_type(o)) {
	case json_type_string:
		return strlen(json_object_get_string(o)) != (size_t)json_object_get_string_len(o);
	case json_type_array:
		for (i = 0; i < json_object_array_length(o); i++)
			if (has_null_or_nul(json_object_array_get_idx(o, i), depth + 1))
				return true;
		return false;
	case json_type_object: {
		json_object_object_foreach(o, k, v)
		{
			(void)k;
			if (has_null_or_nul(v, depth + 1))
				return true;
		}
		return false;
	}
	default:
		return false;
	}
}

/* The request as json-c reads it, for the oracle (the daemon parses its own). */
static void check_accepted(const uint8_t *data, size_t size)
{
	json_tokener *tok = json_tokener_new();
	json_object *req = json_tokener_parse_ex(tok, (const char *)data, (int)size);

	if (req && has_null_or_nul(req, 0))
		ctl_fuzz_die("accepted a request holding a null or a NUL character");
	json_object_put(req);
	json_tokener_free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *resp, *ok;
	char *now;

	resp = ctl_handle(&d, (const char *)data, size);
	check_answer(resp);
	if (json_object_object_get_ex(resp, "ok", &ok) && json_object_get_boolean(ok))
		check_accepted(data, size);
	json_object_put(resp);
	now = ctl_fuzz_render(d.reg);
	if (strcmp(now, baseline_text))
		ctl_fuzz_die("the live registry changed:\n%s", now);
	free(now);
	return 0;
}
