// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One log line per accepted change:
 *   accepted backend.set from uid 0 pid 4242: vip=192.0.2.10:80/tcp
 *   backend=198.51.100.5 drain=true
 * and a second one if it fails once accepted (its tables refused):
 *   failed backend.set from uid 0 pid 4242: "datapath: table swap of ..."
 * Values are printed bare when they are plain words and as JSON strings
 * otherwise, so a value cannot forge a second line or field.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctl/audit.h"
#include "core/log.h"

/* Log lines are cut at about 1 KiB (log.c); a batch is summarised. */
#define AUDIT_LINE 900

static bool plain_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(".:/[]*_-", *s)))
			return false;
	return true;
}

/* Append " key=value" for every member but "cmd". */
static void args_text(json_object *req, char *buf, size_t len)
{
	size_t off = strlen(buf);

	json_object_object_foreach(req, key, val)
	{
		const char *v;
		int n;

		if (!strcmp(key, "cmd"))
			continue;
		if (json_object_is_type(val, json_type_string) &&
		    plain_word(json_object_get_string(val)))
			v = json_object_get_string(val);
		else
			v = json_object_to_json_string_ext(
				val, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		n = snprintf(buf + off, len - off, " %s=%s", key, v);
		if (n < 0 || (size_t)n >= len - off) {
			/* Say it was cut rather than log half a value silently. */
			if (len > 4)
				strcpy(buf + len - 4, "...");
			return;
		}
		off += (size_t)n;
	}
}

/* "N changes: vip.add x2, backend.add x5" in order of first appearance. */
static void batch_text(json_object *req, char *buf, size_t len)
{
	json_object *list = NULL;
	size_t i, j, n, off;
	const char *seen[16];
	size_t count[16], nseen = 0, other = 0;

	json_object_object_get_ex(req, "requests", &list);
	n = list ? json_object_array_length(list) : 0;
	for (i = 0; i < n; i++) {
		json_object *c = NULL;
		const char *cmd;

		json_object_object_get_ex(json_object_array_get_idx(list, i), "cmd", &c);
		cmd = json_object_get_string(c);
		for (j = 0; j < nseen && strcmp(seen[j], cmd); j++)
			;
		if (j == nseen) {
			if (nseen == sizeof(seen) / sizeof(seen[0])) {
				other++;
				continue;
			}
			seen[nseen] = cmd;
			count[nseen++] = 0;
		}
		count[j]++;
	}
	off = strlen(buf);
	off += (size_t)snprintf(buf + off, len - off, " %zu change%s", n, n == 1 ? "" : "s");
	for (j = 0; j < nseen && off < len; j++)
		off += (size_t)snprintf(buf + off, len - off, "%s %s x%zu", j ? "," : ":", seen[j],
					count[j]);
	if (other && off < len)
		snprintf(buf + off, len - off, ", other x%zu", other);
	/* A batch of one change (a restore of one line) names its arguments too. */
	if (n == 1)
		args_text(json_object_array_get_idx(list, 0), buf, len);
}

/* "WHAT CMD from uid U pid P:" or "WHAT CMD from an unknown peer:". */
static void line_head(char *line, size_t len, const char *what, const struct ctl_peer *peer,
		      const char *cmd)
{
	if (peer && peer->uid != (uid_t)-1)
		snprintf(line, len, "%s %s from uid %u pid %d:", what, cmd, (unsigned int)peer->uid,
			 (int)peer->pid);
	else
		snprintf(line, len, "%s %s from an unknown peer:", what, cmd);
}

void audit_failed(const struct ctl_peer *peer, const char *cmd, const char *err)
{
	char line[AUDIT_LINE];
	json_object *e = json_object_new_string(err);

	line_head(line, sizeof(line), "failed", peer, cmd);
	/* The error JSON-quoted unless plain: it cannot forge a line either. */
	log_info("%s %s", line,
		 plain_word(err)
			 ? err
			 : json_object_to_json_string_ext(
				   e, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(e);
}

void audit_accepted(const struct ctl_peer *peer, const char *cmd, json_object *req)
{
	char line[AUDIT_LINE];
	size_t n;

	line_head(line, sizeof(line), "accepted", peer, cmd);
	if (!strcmp(cmd, "batch"))
		batch_text(req, line, sizeof(line));
	else
		args_text(req, line, sizeof(line));
	/* A change without arguments (reload): no dangling colon. */
	n = strlen(line);
	if (n && line[n - 1] == ':')
		line[n - 1] = '\0';
	log_info("%s", line);
}
