// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control requests' envelope: parse a line, dispatch it to a query
 * (req_queries.c) or a change (req_changes.c), commit a change or send it to
 * etcd, and answer.
 */
#include <stdio.h>
#include <string.h>

#include "ctl/audit.h"
#include "fleet/fleet.h"
#include "core/log.h"
#include "model/vip_sync.h"
#include "ctl/req.h"

json_object *req_ok_reply(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static json_object *err_reply(const char *msg)
{
	json_object *o = json_object_new_object();
	char clean[sizeof(((struct req_err *)0)->msg)];
	size_t i;

	/* Reasons quote the input; keep the answer valid UTF-8 and one line. */
	for (i = 0; msg[i] && i + 1 < sizeof(clean); i++)
		clean[i] = (unsigned char)msg[i] >= 0x20 && (unsigned char)msg[i] < 0x7f ? msg[i]
											 : '?';
	clean[i] = '\0';
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(clean));
	return o;
}

int ctl_apply_desired(struct daemon *d, json_object *reqs, uint64_t rev, bool keep_same, char *err,
		      size_t errlen)
{
	json_object *batch = json_object_new_object();
	struct registry *want = registry_new(), *next = registry_clone(d->reg);
	struct req_err e = {"", false};
	int r = -1, n;

	json_object_object_add(batch, "requests", json_object_get(reqs));
	if (!want || !next) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* The desired VIPs built by their requests on a registry of their own
	 * (validated as a batch is), then the live one changed only where it
	 * differs: what did not change is not rebuilt (model/vip_sync.h).
	 */
	{
		/* Without the datapath: want's VIPs and backends take no counters
		 * or generations from it (registry_sync reads those of what it
		 * adds), which would cost map reads for every backend each time.
		 */
		struct maglev_dp *dp = d->ctx.dp;
		int bad;

		d->ctx.dp = NULL;
		bad = req_apply_change(d, want, "batch", batch, &e);
		d->ctx.dp = dp;
		if (bad) {
			snprintf(err, errlen, "%s", e.msg);
			goto out;
		}
	}
	n = registry_sync(next, &d->ctx, want, err, errlen);
	if (n < 0 || registry_check_placements(next, err, errlen))
		goto out;
	if (!n && keep_same && d->reg->fleet_rev) {
		r = 1;
		goto out;
	}
	next->fleet_rev = rev;
	r = daemon_commit(d, next, COMMIT_SRC_FLEET, err, errlen);
	next = NULL; /* the commit's now */
out:
	registry_free(want);
	registry_free(next);
	json_object_put(batch);
	return r;
}

static json_object *handle(struct daemon *d, const struct ctl_peer *peer, json_object *req,
			   struct req_err *e)
{
	struct registry *next;
	const char *cmd = req_cmd(req);
	const struct req_query *q;
	int64_t expect = -1;
	int r;

	if (!cmd) {
		req_fail(e, "request must be a JSON object with a 'cmd' string");
		return NULL;
	}
	q = req_find_query(cmd);
	if (q) {
		json_object *o = q->fn(d, req, e);

		if (o && q->is_change && q->is_change(req))
			audit_accepted(peer, cmd, req);
		return o;
	}
	if (strcmp(cmd, "batch") && !req_find_change(cmd)) {
		req_fail(e, "unknown command '%.40s'", cmd);
		return NULL;
	}
	/* In fleet mode a change goes to etcd (fleet_write below), optionally
	 * only if etcd's desired state is still at the revision the operator saw.
	 */
	if (json_object_object_get_ex(req, "expect_revision", NULL)) {
		bool has;

		if (!fleet_enabled(d)) {
			req_fail(e, "expect_revision: only in fleet mode (fleet_etcd is not set)");
			return NULL;
		}
		if (req_get_int(req, "expect_revision", 0, INT64_MAX - 1, &expect, &has, e))
			return NULL;
		json_object_object_del(req, "expect_revision");
	}
	next = registry_clone(d->reg);
	if (!next) {
		req_fail(e, "out of memory");
		return NULL;
	}
	if (req_apply_change(d, next, cmd, req, e) ||
	    registry_check_placements(next, e->msg, sizeof(e->msg))) {
		registry_free(next);
		return NULL;
	}
	/* Before a dry run too: it answers what the change itself would. */
	{
		bool force = false, has;

		if (req_get_bool(req, "force", &force, &has, e) ||
		    (!force && req_guard_flows(d, next, e))) {
			registry_free(next);
			return NULL;
		}
	}
	/* A dry run (restore --dry-run): validated whole, answered with the
	 * state it would give, never committed.
	 */
	if (!strcmp(cmd, "batch")) {
		bool dry = false, has;
		json_object *o;

		if (req_get_bool(req, "dry_run", &dry, &has, e)) {
			registry_free(next);
			return NULL;
		}
		if (dry) {
			o = req_dump_reply(next);
			registry_free(next);
			return o;
		}
	}
	if (fleet_enabled(d)) {
		/* Applied here when the watch brings the revision back. */
		r = fleet_write(d, next, expect, e->msg, sizeof(e->msg));
		registry_free(next);
		if (r < 0)
			return NULL;
		audit_accepted(peer, cmd, req);
		if (!r)
			e->deferred = true; /* fleet.c answers */
		if (!r)
			return NULL;
		return req_ok_reply();
	}
	/* Answered when the datapath holds the change (ctl_commit.c). */
	r = ctl_commit(d, next, peer, cmd, e->msg, sizeof(e->msg));
	if (r < 0)
		return NULL;
	audit_accepted(peer, cmd, req);
	e->deferred = r > 0;
	return r > 0 ? NULL : req_ok_reply();
}

json_object *ctl_handle(struct daemon *d, const char *line, size_t len)
{
	return ctl_handle_peer(d, NULL, line, len);
}

json_object *ctl_handle_peer(struct daemon *d, const struct ctl_peer *peer, const char *line,
			     size_t len)
{
	json_tokener *tok = json_tokener_new();
	struct req_err e = {"", false};
	json_object *req, *resp;

	d->ctl_requests++;
	/* json-c cuts object keys at an escaped NUL ("vip\u0000x" would be
	 * "vip"); no field of any request can hold one, so refuse them up front.
	 */
	if (memmem(line, len, "\\u0000", 6)) {
		json_tokener_free(tok);
		d->ctl_rejected++;
		return err_reply("request holds a NUL character (\\u0000)");
	}
	if (!tok)
		return err_reply("out of memory");
	req = json_tokener_parse_ex(tok, line, (int)len);
	if (!req || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset < (int)len) {
		/* Only whitespace may follow the object. */
		size_t i = req ? (size_t)tok->char_offset : 0;

		while (req && i < len &&
		       (line[i] == ' ' || line[i] == '\r' || line[i] == '\n' || line[i] == '\t'))
			i++;
		if (!req || i < len || json_tokener_get_error(tok) != json_tokener_success) {
			json_object_put(req);
			json_tokener_free(tok);
			d->ctl_rejected++;
			return err_reply("request is not valid JSON");
		}
	}
	json_tokener_free(tok);
	resp = handle(d, peer, req, &e);
	json_object_put(req);
	if (!resp && e.deferred)
		return NULL;
	if (!resp) {
		d->ctl_rejected++;
		log_debug("rejected request: %s", e.msg);
		return err_reply(e.msg[0] ? e.msg : "rejected");
	}
	return resp;
}
