// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * health_scope fleet (fleet_health.h). Voters: the live balancers (a status
 * key under a lease) that publish verdicts. A voter that has not published
 * a verdict for a backend yet counts as seeing it up, so that a balancer
 * starting up, or a backend just added, takes nothing out: removal needs a
 * majority that saw it fail. A backend is down exactly when more than half
 * of the voters see it down, with no memory of the previous verdict: an
 * in-between band kept "as it was" would make the table depend on history,
 * and a balancer that restarted would build another one. Each balancer's
 * rise/fall already damps its own flapping.
 */
#include <stdio.h>
#include <string.h>

#include "fleet/fleet_health.h"
#include "health/admission.h"
#include "model/admit.h"
#include "health/health_changes.h"
#include "core/log.h"

static struct {
	uint32_t gen;
	bool set, up;
} local[MAGLEV_MAX_BACKENDS];
static bool changed, changed_local;

bool health_local_up(const struct daemon *d, const struct be *b)
{
	/* Damping keeps a passing backend down: its checks' state is up. */
	if (!fleet_health_on(d))
		return b->up || b->damped_up;
	if (local[b->idx].set && local[b->idx].gen == b->gen)
		return local[b->idx].up;
	return !b->start_down;
}

void fleet_health_local(const struct vip *v, const struct be *b, bool up, const char *why)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	bool was = local[b->idx].set && local[b->idx].gen == b->gen ? local[b->idx].up
								    : !b->start_down;

	local[b->idx].gen = b->gen;
	local[b->idx].set = true;
	local[b->idx].up = up;
	changed = changed_local = true;
	if (was == up)
		return;
	ctl_format_vip(&v->key, vname, sizeof(vname));
	ctl_format_addr(&b->addr, bname, sizeof(bname));
	log_info("health: backend %s of %s is %s here (%s); the fleet's quorum decides", bname,
		 vname, up ? "up" : "down", why[0] ? why : "checks pass");
}

bool fleet_health_changed_local(void)
{
	bool c = changed_local;

	changed_local = false;
	return c;
}

bool fleet_health_changed(void)
{
	bool c = changed;

	changed = false;
	return c;
}

json_object *fleet_health_publish(const struct daemon *d, size_t budget, bool *truncated)
{
	json_object *o = json_object_new_object();
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	size_t used = 2;
	uint32_t i, j;

	/* Every backend "up" made the status grow with the backends (65,536
	 * of them passed etcd's 1.5 MiB request limit) and change with each
	 * one added: only what counts against a backend is named.
	 */
	*truncated = false;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		json_object *m = NULL;

		if (!v)
			continue;
		ctl_format_vip(&v->key, vname, sizeof(vname));
		for (j = 0; j < v->nbe; j++) {
			if (health_local_up(d, &v->bes[j]))
				continue;
			ctl_format_addr(&v->bes[j].addr, bname, sizeof(bname));
			/* "addr":"down", and the VIP's own "name":{} once. */
			used += strlen(bname) + 10 + (m ? 0 : strlen(vname) + 6);
			if (used > budget) {
				*truncated = true;
				return o;
			}
			if (!m) {
				m = json_object_new_object();
				json_object_object_add(o, vname, m);
			}
			json_object_object_add(m, bname, json_object_new_string("down"));
		}
	}
	return o;
}

/*
 * A voter's view of a backend: 1 up, 0 down, -1 none published. A balancer
 * that names its down verdicts only sees the rest up, once its status is of
 * revision min_rev or later: one of an older revision may not have had the
 * backend yet (a new one would be named down until its first pass).
 */
static int view(json_object *node, const char *vname, const char *bname, uint64_t min_rev)
{
	json_object *h, *m, *s;

	if (!json_object_object_get_ex(node, "health", &h) ||
	    !json_object_object_get_ex(h, vname, &m) || !json_object_object_get_ex(m, bname, &s)) {
		if (!json_object_object_get_ex(node, "health_down_only", &s) ||
		    !json_object_get_boolean(s))
			return -1;
		return !min_rev || (json_object_object_get_ex(node, "revision", &s) &&
				    (uint64_t)json_object_get_int64(s) >= min_rev)
			       ? 1
			       : -1;
	}
	return strcmp(json_object_get_string(s), "down") != 0;
}

static bool voter(json_object *node)
{
	json_object *s;

	return json_object_object_get_ex(node, "health_scope", &s) &&
	       !strcmp(json_object_get_string(s), "fleet");
}

/* The fleet's verdict of a backend; counts in *down and *voters. A voter
 * that has published nothing for a backend still waiting for its first
 * passing check (start_down) counts as seeing it down: otherwise the first
 * balancer to publish up would bring a new backend in before a majority did.
 */
static bool fleet_up(const struct daemon *d, json_object *nodes, const char *vname,
		     const char *bname, bool start_down, uint32_t *down, uint32_t *voters)
{
	size_t k, n = json_object_array_length(nodes);
	uint64_t min_rev = start_down ? d->reg->fleet_rev : 0;

	*down = *voters = 0;
	for (k = 0; k < n; k++) {
		json_object *node = json_object_array_get_idx(nodes, k);
		int w;

		if (!voter(node))
			continue;
		(*voters)++;
		w = view(node, vname, bname, min_rev);
		*down += w == 0 || (w < 0 && start_down);
	}
	return 2 * *down <= *voters;
}

void fleet_health_apply(struct daemon *d, json_object *nodes, bool own)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN], err[300], why[160], note[64];
	struct health_changes *cs = NULL;
	struct registry *next = NULL;
	uint32_t i, j, n = 0, down, voters;
	uint64_t now = mono_ms();
	bool serving;

	if (!fleet_health_on(d) || (!nodes && !own))
		return;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		struct vip *v = d->reg->vips[i];

		if (!v)
			continue;
		ctl_format_vip(&v->key, vname, sizeof(vname));
		serving = admit_serving(v);
		for (j = 0; j < v->nbe; j++) {
			const struct be *b = &v->bes[j];
			struct be *nb;
			bool up;

			ctl_format_addr(&b->addr, bname, sizeof(bname));
			if (own) {
				up = health_local_up(d, b);
				voters = 1;
			} else {
				up = fleet_up(d, nodes, vname, bname, b->start_down, &down,
					      &voters);
			}
			if (!voters || !admission_changes(b, up))
				continue;
			if (!next && !(next = registry_clone(d->reg))) {
				log_err("health: out of memory applying the fleet's verdicts");
				return;
			}
			if (!cs)
				cs = health_changes_new();
			nb = &next->vips[i]->bes[j];
			next->vips[i]->dirty = true;
			n++;
			if (!admission_apply(d, next->vips[i], nb, up, serving, now, note,
					     sizeof(note)))
				continue;
			if (own)
				snprintf(why, sizeof(why),
					 "by this balancer's own checks (the fleet's verdicts are "
					 "too old%s)",
					 note);
			else
				snprintf(why, sizeof(why),
					 "by the fleet (%u of %u balancers see it down%s)", down,
					 voters, note);
			health_changes_add(cs, v, nb, up, why);
		}
	}
	if (next && health_changes_commit(d, next, COMMIT_SRC_FLEET_HEALTH, cs, err, sizeof(err)))
		log_err("health: applying %u verdicts%s: %s", n,
			own ? " of this balancer's own checks" : " of the fleet", err);
}

json_object *fleet_health_json(const struct daemon *d, json_object *nodes)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	json_object *arr = json_object_new_array();
	size_t k, nn = nodes ? json_object_array_length(nodes) : 0;
	uint32_t i, j, down, voters;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		if (!v)
			continue;
		ctl_format_vip(&v->key, vname, sizeof(vname));
		for (j = 0; j < v->nbe; j++) {
			json_object *o = json_object_new_object(),
				    *views = json_object_new_object();

			ctl_format_addr(&v->bes[j].addr, bname, sizeof(bname));
			json_object_object_add(o, "vip", json_object_new_string(vname));
			json_object_object_add(o, "backend", json_object_new_string(bname));
			for (k = 0; k < nn; k++) {
				json_object *node = json_object_array_get_idx(nodes, k), *nm;
				int w = view(node, vname, bname,
					     v->bes[j].start_down ? d->reg->fleet_rev : 0);

				if (!json_object_object_get_ex(node, "node", &nm))
					continue;
				json_object_object_add(
					views, json_object_get_string(nm),
					json_object_new_string(!voter(node) ? "local-scope"
							       : w < 0	    ? "none"
							       : w	    ? "up"
									    : "down"));
			}
			json_object_object_add(o, "views", views);
			if (nodes) {
				bool up = fleet_up(d, nodes, vname, bname, v->bes[j].start_down,
						   &down, &voters);

				json_object_object_add(o, "voters", json_object_new_int64(voters));
				json_object_object_add(o, "down_votes",
						       json_object_new_int64(down));
				json_object_object_add(o, "fleet",
						       json_object_new_string(!voters ? "none"
									      : up    ? "up"
										      : "down"));
			}
			json_object_object_add(o, "local",
					       json_object_new_string(health_local_up(d, &v->bes[j])
									      ? "up"
									      : "down"));
			json_object_object_add(
				o, "applied", json_object_new_string(v->bes[j].up ? "up" : "down"));
			json_object_array_add(arr, o);
		}
	}
	return arr;
}
