// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A control client's change, answered once the datapath holds it: the
 * commit's table swaps run off the event loop (commit_queue.c), and the
 * client's answer is deferred until they have returned.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/audit.h"
#include "core/daemon.h"
#include "model/registry.h"
#include "core/stream.h"

/* The longest a client waits for its change to be written. */
#define CTL_COMMIT_TIMEOUT_MS 60000

struct commit_wait {
	uint64_t stream_id; /* 0: not deferred (yet) */
	bool fired, orphan;
	int r;
	char err[300];
	char *ok_text; /* the answer on success; NULL: {"ok":true} */
	/* Who asked and what, for the audit line of a change that fails once
	 * accepted; cmd[0] '\0': no change (ctl_answer_after_commits()).
	 */
	struct ctl_peer peer;
	bool have_peer;
	char cmd[48];
};

static char *json_line(json_object *o, size_t *len)
{
	const char *text = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(text);
	char *out = malloc(n + 2);

	if (out) {
		memcpy(out, text, n);
		out[n] = '\n';
		out[n + 1] = '\0'; /* answered() takes ok_text's length with strlen */
		*len = n + 1;
	}
	return out;
}

static char *answer_text(int r, const char *err, size_t *len)
{
	json_object *o = json_object_new_object();
	char clean[300], *out;
	size_t i;

	json_object_object_add(o, "ok", json_object_new_boolean(!r));
	if (r) {
		/* One line of printable ASCII, as every other answer. */
		for (i = 0; err[i] && i + 1 < sizeof(clean); i++)
			clean[i] = (unsigned char)err[i] >= 0x20 && (unsigned char)err[i] < 0x7f
					   ? err[i]
					   : '?';
		clean[i] = '\0';
		json_object_object_add(o, "error", json_object_new_string(clean));
	}
	out = json_line(o, len);
	json_object_put(o);
	return out;
}

static void answered(struct daemon *d, void *arg, int r, const char *err)
{
	struct commit_wait *w = arg;
	size_t len = 0;
	char *out;

	if (!w->stream_id && !w->orphan) {
		/* Finished before ctl_commit() returned: it answers. */
		w->fired = true;
		w->r = r;
		snprintf(w->err, sizeof(w->err), "%s", r ? err : "");
		return;
	}
	/* Accepted and audit-logged when deferred: say it did not happen. */
	if (r && w->cmd[0])
		audit_failed(w->have_peer ? &w->peer : NULL, w->cmd, err);
	if (!w->orphan) {
		if (r)
			d->ctl_rejected++;
		if (!r && w->ok_text) {
			out = w->ok_text;
			len = strlen(out);
			w->ok_text = NULL;
		} else {
			out = answer_text(r, r ? err : "", &len);
		}
		if (out)
			stream_answer_id(d, w->stream_id, out, len);
	}
	free(w->ok_text);
	free(w);
}

int ctl_commit(struct daemon *d, struct registry *next, const struct ctl_peer *peer,
	       const char *cmd, char *err, size_t errlen)
{
	struct commit_wait *w = calloc(1, sizeof(*w));
	int r;

	if (!w) {
		registry_free(next);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (peer) {
		w->peer = *peer;
		w->have_peer = true;
	}
	snprintf(w->cmd, sizeof(w->cmd), "%s", cmd);
	r = daemon_commit_then(d, next, COMMIT_SRC_CTL, answered, w, err, errlen);
	if (r) {
		free(w);
		return r;
	}
	if (w->fired) {
		r = w->r;
		if (r)
			snprintf(err, errlen, "%s", w->err);
		free(w);
		return r;
	}
	w->stream_id = stream_defer_id(d, CTL_COMMIT_TIMEOUT_MS);
	if (!w->stream_id) {
		w->orphan = true; /* no client to answer (ctl_handle()) */
		return 0;
	}
	return 1;
}

int ctl_answer_after_commits(struct daemon *d, json_object *ok)
{
	struct commit_wait *w;
	size_t len;

	if (!daemon_commit_busy())
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return 0; /* answer now: the commits are accepted, only not written yet */
	w->stream_id = stream_defer_id(d, CTL_COMMIT_TIMEOUT_MS);
	if (!w->stream_id) {
		free(w);
		return 0;
	}
	w->ok_text = json_line(ok, &len);
	json_object_put(ok);
	daemon_commit_barrier(d, answered, w);
	return 1;
}
