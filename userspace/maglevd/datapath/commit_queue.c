// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Commits without waiting on the event loop. A commit is built (backends
 * written, tables built and queued for their swap), then finished once
 * every swap has returned (VIP entries, backends that left a table, the
 * state file); its caller hears the result then. One commit is written at
 * a time: those made meanwhile queue behind it, each the difference to the
 * one before. d->reg is always the newest registry, so requests see (and
 * build on) every accepted change; "applied" is what the datapath holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/daemon.h"
#include "core/log.h"
#include "model/registry.h"
#include "model/state.h"
#include "datapath/table_swap.h"

struct commit {
	struct commit *next;
	struct registry *reg; /* owned; NULL: a barrier (daemon_commit_barrier) */
	enum commit_source src;
	commit_done_fn done;
	void *arg;
	uint64_t t0_us;
};

/* A commit not applied: counted by source, the last one kept for status. */
static void count_failure(struct daemon *d, enum commit_source src, const char *err)
{
	d->commit_failures[src]++;
	d->last_commit_failure_source = (int)src;
	d->last_commit_failure_time = time(NULL);
	snprintf(d->last_commit_error, sizeof(d->last_commit_error), "%s", err);
}

static struct commit *head, **tail = &head;
/* While commits are queued: the registry the datapath holds (owned). */
static struct registry *applied;
static struct registry_pending pend; /* of head, once built */
static bool head_built;

bool daemon_commit_busy(void)
{
	return head != NULL;
}

const struct registry *daemon_applied(const struct daemon *d)
{
	return head ? applied : d->reg;
}

/* Put the datapath back to what it held before head, and drop every queued
 * commit: each was the difference to one before it.
 */
static void fail_all(struct daemon *d, int r, const char *err, bool call_head)
{
	char e2[300];
	struct commit *c, *next;

	log_err("datapath: %s commit: %s", commit_source_name(head->src), err);
	/* A change that could not be applied whole is not applied at all. */
	registry_mark_all(applied);
	if (registry_commit(head->reg, applied, &d->ctx, e2, sizeof(e2)))
		log_err("datapath: rolling back: %s", e2);
	d->reg = applied;
	applied = NULL;
	for (c = head; c; c = next) {
		next = c->next;
		/* Every commit dropped counts, each under its own source. */
		if (c->reg)
			count_failure(d, c->src, c == head ? err : "an earlier change failed");
		if (c->done && (c != head || call_head))
			c->done(d, c->arg, r,
				c == head || !c->reg ? err : "an earlier change failed");
		registry_free(c->reg);
		free(c);
	}
	head = NULL;
	tail = &head;
	head_built = false;
}

static int build_head(struct daemon *d, char *err, size_t errlen)
{
	int r = registry_commit_build(applied, head->reg, &d->ctx, &pend, err, errlen);

	head_built = true;
	if (r)
		table_swap_wait(); /* what it did queue, before the rollback */
	return r;
}

/* Finish head once its new tables are live, then build the next; repeat. */
static void advance(struct daemon *d)
{
	char err[300];
	struct commit *c;
	int r;

	while (head && head_built && !table_swap_unlive()) {
		c = head;
		r = table_swap_take_error(err, sizeof(err));
		if (!r)
			r = registry_commit_finish(applied, c->reg, &d->ctx, &pend, err,
						   sizeof(err));
		if (r) {
			fail_all(d, r, err, true);
			return;
		}
		registry_free(applied);
		applied = c->reg;
		d->commits++;
		state_writer_submit(registry_get(applied));
		log_debug("commit done in %llu us", (unsigned long long)(mono_us() - c->t0_us));
		head = c->next;
		if (!head)
			tail = &head;
		head_built = false;
		if (c->done)
			c->done(d, c->arg, 0, NULL);
		free(c);
		/* Barriers: everything before them is written now. */
		while (head && !head->reg) {
			c = head;
			head = c->next;
			if (!head)
				tail = &head;
			c->done(d, c->arg, 0, NULL);
			free(c);
		}
		if (!head) {
			applied = NULL; /* d->reg is what the datapath holds */
			return;
		}
		r = build_head(d, err, sizeof(err));
		if (r) {
			fail_all(d, r, err, true);
			return;
		}
	}
}

int daemon_commit_then(struct daemon *d, struct registry *next, enum commit_source src,
		       commit_done_fn done, void *arg, char *err, size_t errlen)
{
	struct commit *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		registry_free(next);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->reg = next;
	c->src = src;
	c->done = done;
	c->arg = arg;
	c->t0_us = mono_us();
	*tail = c;
	tail = &c->next;
	if (head != c) {
		d->reg = next; /* built when the ones before it are done */
		return 0;
	}
	applied = d->reg;
	d->reg = next;
	r = build_head(d, err, errlen);
	if (r) {
		fail_all(d, r, err, false);
		return r;
	}
	advance(d); /* nothing to swap: done at once */
	return 0;
}

void daemon_commit_barrier(struct daemon *d, commit_done_fn done, void *arg)
{
	struct commit *c;

	if (!head || !(c = calloc(1, sizeof(*c)))) {
		/* Nothing queued (or no memory: say so now rather than never). */
		done(d, arg, head ? -ENOMEM : 0, "out of memory");
		return;
	}
	c->done = done;
	c->arg = arg;
	*tail = c;
	tail = &c->next;
}

int daemon_commit(struct daemon *d, struct registry *next, enum commit_source src, char *err,
		  size_t errlen)
{
	return daemon_commit_then(d, next, src, NULL, NULL, err, errlen);
}

int commit_queue_start(struct daemon *d)
{
	return table_swap_init(d, advance);
}

void commit_queue_drain(struct daemon *d)
{
	while (head) {
		table_swap_wait();
		advance(d);
	}
}
