/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The audit trail of the control socket: every accepted change is logged
 * once, at info level, with the client's uid and pid (SO_PEERCRED) and what
 * it changed, so "who drained this backend" has an answer in the journal;
 * an accepted change that fails later (its tables refused by the datapath)
 * gets a second line, "failed". Rejected requests and queries are not
 * logged here.
 */
#ifndef MAGLEVD_AUDIT_H
#define MAGLEVD_AUDIT_H

#include <sys/types.h>
#include <json-c/json.h>

struct ctl_peer {
	uid_t uid; /* (uid_t)-1 when unknown */
	pid_t pid; /* 0 when unknown */
};

/* Log the accepted change req (a single command or a batch) from peer (may be NULL). */
void audit_accepted(const struct ctl_peer *peer, const char *cmd, json_object *req);
/* Log that an accepted change was not applied after all (its commit failed
 * once accepted: a table swap refused), with why: its second and last line.
 */
void audit_failed(const struct ctl_peer *peer, const char *cmd, const char *err);

#endif /* MAGLEVD_AUDIT_H */
