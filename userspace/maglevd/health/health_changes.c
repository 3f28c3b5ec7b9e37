// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Backend state changes, logged when their commit is decided
 * (health_changes.h): logged when queued, a change the datapath then
 * refused read in the log as done.
 */
#include <stdio.h>
#include <stdlib.h>

#include "health/health_changes.h"
#include "core/log.h"

struct health_change {
	char vip[CTL_ADDR_STRLEN], be[CTL_ADDR_STRLEN];
	bool up;
	char why[192];
};

struct health_changes {
	uint32_t n, cap;
	struct health_change *c;
};

struct health_changes *health_changes_new(void)
{
	return calloc(1, sizeof(struct health_changes));
}

void health_changes_add(struct health_changes *cs, const struct vip *v, const struct be *b, bool up,
			const char *why)
{
	struct health_change *c;

	if (!cs)
		return;
	if (cs->n == cs->cap) {
		uint32_t cap = cs->cap ? cs->cap * 2 : 8;

		c = realloc(cs->c, cap * sizeof(*c));
		if (!c)
			return;
		cs->c = c;
		cs->cap = cap;
	}
	c = &cs->c[cs->n++];
	ctl_format_vip(&v->key, c->vip, sizeof(c->vip));
	ctl_format_addr(&b->addr, c->be, sizeof(c->be));
	c->up = up;
	snprintf(c->why, sizeof(c->why), "%s", why);
}

void health_changes_free(struct health_changes *cs)
{
	if (cs)
		free(cs->c);
	free(cs);
}

static void decided(struct daemon *d, void *arg, int r, const char *err)
{
	struct health_changes *cs = arg;
	uint32_t i;

	for (i = 0; cs && i < cs->n; i++) {
		const struct health_change *c = &cs->c[i];
		const char *s = c->up ? "up" : "down";

		if (!r)
			log_info("health: backend %s of %s is %s %s", c->be, c->vip, s, c->why);
		else
			log_err("health: backend %s of %s stays %s: the change to %s %s was not "
				"applied: %s",
				c->be, c->vip, c->up ? "down" : "up", s, c->why, err);
	}
	health_changes_free(cs);
}

int health_changes_commit(struct daemon *d, struct registry *next, enum commit_source src,
			  struct health_changes *cs, char *err, size_t errlen)
{
	int r = daemon_commit_then(d, next, src, decided, cs, err, errlen);

	if (r) /* refused at once: no callback comes */
		decided(d, cs, r, err);
	return r;
}
