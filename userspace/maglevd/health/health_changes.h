/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Backend state changes of one commit, logged once the commit is decided:
 * "is down" only once the datapath holds it, and a commit the datapath
 * refused (rolled back) says which changes did not happen.
 */
#ifndef MAGLEVD_HEALTH_CHANGES_H
#define MAGLEVD_HEALTH_CHANGES_H

#include "core/daemon.h"

struct health_changes;

/* An empty list; NULL without memory (its changes then go unlogged). */
struct health_changes *health_changes_new(void);
/* Backend b of v goes up or down; why: what follows "is down", e.g. "(timeout)". */
void health_changes_add(struct health_changes *cs, const struct vip *v, const struct be *b, bool up,
			const char *why);
/* Drop them unlogged (no commit made). */
void health_changes_free(struct health_changes *cs);
/* Commit with them: logged (and freed) when the datapath has taken or refused it. */
int health_changes_commit(struct daemon *d, struct registry *next, enum commit_source src,
			  struct health_changes *cs, char *err, size_t errlen);

#endif /* MAGLEVD_HEALTH_CHANGES_H */
