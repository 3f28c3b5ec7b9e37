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
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet_health.h"
#include "health/admission.h"
#include "model/admit.h"
#include "health/health_changes.h"
#include "core/log.h"

/* down_rt, up_rt: CLOCK_REALTIME ms this balancer saw the backend down
 * since, and up again since (0: not since that down).
 */
static struct {
	uint32_t gen;
	bool set, up;
	uint64_t down_rt, up_rt;
} local[MAGLEV_MAX_BACKENDS];

/* How long past slow_start_ms a voter names a backend it saw return: the
 * others' statuses must still tell when it came back while they ramp it,
 * and a margin for their clocks and the watch.
 */
#define FLEET_RETURN_KEEP_MS 5000

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

	if (local[b->idx].gen != b->gen)
		local[b->idx].down_rt = local[b->idx].up_rt = 0;
	local[b->idx].gen = b->gen;
	local[b->idx].set = true;
	local[b->idx].up = up;
	changed = changed_local = true;
	if (was == up)
		return;
	/* The voters' times are what the fleet's hold and ramp count from. */
	if (!up) {
		local[b->idx].down_rt = real_ms();
		local[b->idx].up_rt = 0;
	} else if (local[b->idx].down_rt) {
		local[b->idx].up_rt = real_ms();
	}
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

/*
 * The times of b's verdict here while the fleet may count from them: down
 * since (up_rt 0), or seen up again within slow_start_ms and a margin. None
 * where nothing counts from them (settle_ms, slow_start_ms and damping
 * off: the status is as it was, and a return's end puts nothing).
 */
static bool local_times(const struct daemon *d, const struct vip *v, const struct be *b,
			uint64_t rnow, uint64_t *down_rt, uint64_t *up_rt)
{
	uint64_t ss = admit_slow_start_ms(v, &d->cfg);

	if (!local[b->idx].set || local[b->idx].gen != b->gen || !local[b->idx].down_rt)
		return false;
	*down_rt = local[b->idx].down_rt;
	*up_rt = local[b->idx].up ? local[b->idx].up_rt : 0;
	if (local[b->idx].up && !*up_rt)
		return false;
	if (!*up_rt)
		return d->cfg.settle_ms || ss || d->cfg.damping_penalty;
	return (ss || d->cfg.damping_penalty) && rnow - *up_rt < ss + FLEET_RETURN_KEEP_MS;
}

json_object *fleet_health_publish(const struct daemon *d, size_t budget, bool *truncated,
				  json_object **times_out)
{
	json_object *o = json_object_new_object(), *times = json_object_new_object();
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN];
	uint64_t rnow = real_ms(), dn, upt;
	size_t used = 2;
	uint32_t i, j;

	/* Every backend "up" made the status grow with the backends (65,536
	 * of them passed etcd's 1.5 MiB request limit) and change with each
	 * one added: only what counts against a backend is named.
	 */
	*truncated = false;
	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];
		json_object *m = NULL, *tm = NULL;

		if (!v)
			continue;
		ctl_format_vip(&v->key, vname, sizeof(vname));
		for (j = 0; j < v->nbe; j++) {
			bool up = health_local_up(d, &v->bes[j]),
			     timed = local_times(d, v, &v->bes[j], rnow, &dn, &upt);
			json_object *a;

			if (up && !timed)
				continue;
			ctl_format_addr(&v->bes[j].addr, bname, sizeof(bname));
			/* "addr":"down", the times "addr":[d,u], and the
			 * VIP's own "name":{} once in each.
			 */
			used += (up ? 0 : strlen(bname) + 10 + (m ? 0 : strlen(vname) + 6)) +
				(timed ? strlen(bname) + 34 + (tm ? 0 : strlen(vname) + 6) : 0);
			if (used > budget) {
				*truncated = true;
				break;
			}
			if (!up && !m) {
				m = json_object_new_object();
				json_object_object_add(o, vname, m);
			}
			if (!up)
				json_object_object_add(m, bname, json_object_new_string("down"));
			if (!timed)
				continue;
			if (!tm) {
				tm = json_object_new_object();
				json_object_object_add(times, vname, tm);
			}
			a = json_object_new_array();
			json_object_array_add(a, json_object_new_uint64(dn));
			json_object_array_add(a, json_object_new_uint64(upt));
			json_object_object_add(tm, bname, a);
		}
		if (*truncated)
			break;
	}
	*times_out = times;
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

/* A voter's times of a backend (fleet_health_publish); false: none. */
static bool voter_times(json_object *node, const char *vname, const char *bname, uint64_t *dn,
			uint64_t *upt)
{
	json_object *h, *m, *a;

	if (!json_object_object_get_ex(node, "health_since", &h) ||
	    !json_object_object_get_ex(h, vname, &m) || !json_object_object_get_ex(m, bname, &a) ||
	    !json_object_is_type(a, json_type_array) || json_object_array_length(a) != 2)
		return false;
	*dn = (uint64_t)json_object_get_int64(json_object_array_get_idx(a, 0));
	*upt = (uint64_t)json_object_get_int64(json_object_array_get_idx(a, 1));
	return *dn != 0;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * When the fleet's verdict of a backend began (CLOCK_REALTIME ms), from the
 * voters' times alone, so the same on every balancer that holds the same
 * statuses, whichever revisions its watch coalesced; 0: they do not tell
 * (fewer than need voters name when they saw it down, a voter still down
 * names no time for a return, or a return no voter names any more).
 * need = voters / 2 + 1 down votes make the verdict down.
 * Down: the need-th earliest "down since" of the voters that see it down and
 * say since when, when the need-th of them saw it.
 * Up: the voters that saw it come back (their [down, up] times), by return
 * time. Before the j-th of them returned, the down ones were the ones still
 * down and the returners from the j-th on: need of them exactly, for
 * j = down + returners - need + 1; the verdict turned up at the j-th
 * return. The down verdict before it began at the latest "down since" of
 * those need voters; *left: it lasted settle_ms (the backend left its
 * table), 1 or 0 (-1: not known).
 */
static uint64_t fleet_since(const struct daemon *d, json_object *nodes, const char *vname,
			    const char *bname, bool start_down, bool up, uint32_t down,
			    uint32_t voters, int *left)
{
	size_t k, n = json_object_array_length(nodes);
	/* The voters' times: on the stack for a fleet of up to 64. */
	uint64_t dnb[64], retb[128], *dn = dnb, *ret = retb;
	uint64_t min_rev = start_down ? d->reg->fleet_rev : 0, t0 = 0, t1 = 0, at = 0, dmax = 0;
	uint32_t nd = 0, nr = 0, need = voters / 2 + 1, j, i;
	bool unknown = false;

	*left = -1;
	if (n > 64) {
		dn = calloc(n, sizeof(*dn));
		ret = calloc(2 * n, sizeof(*ret));
		if (!dn || !ret)
			goto out;
	}
	for (k = 0; k < n; k++) {
		json_object *node = json_object_array_get_idx(nodes, k);
		bool has;
		int w;

		if (!voter(node))
			continue;
		has = voter_times(node, vname, bname, &t0, &t1);
		/* No down vote and no times: nothing to look at (most backends). */
		if (!has && !down)
			continue;
		w = view(node, vname, bname, min_rev);
		if (w < 0 && start_down) {
			/* Counted down, with no times: a down verdict counts
			 * from the ones that name it, a return cannot tell.
			 */
			unknown |= up;
		} else if (w == 0) {
			/* A down vote without times (a balancer that just
			 * started, an older one): a down verdict counts from
			 * the ones that have them, a return cannot tell.
			 */
			if (has && !t1)
				dn[nd++] = t0;
			else
				unknown |= up;
		} else if (w > 0 && has && t1) {
			/* Sorted by return time: the return first, then its down. */
			ret[2 * nr] = t1;
			ret[2 * nr + 1] = t0;
			nr++;
		}
	}
	if (!up) {
		if (nd >= need) {
			qsort(dn, nd, sizeof(*dn), by_u64);
			at = dn[need - 1];
		}
		goto out;
	}
	if (unknown || nd + nr < need)
		goto out;
	j = nd + nr - need + 1;
	qsort(ret, nr, 2 * sizeof(*ret), by_u64);
	at = ret[2 * (j - 1)];
	for (i = 0; i < nd; i++)
		dmax = dn[i] > dmax ? dn[i] : dmax;
	for (i = j - 1; i < nr; i++)
		dmax = ret[2 * i + 1] > dmax ? ret[2 * i + 1] : dmax;
	*left = at >= dmax + d->cfg.settle_ms;
out:
	if (dn != dnb)
		free(dn);
	if (ret != retb)
		free(ret);
	return at;
}

void fleet_health_apply(struct daemon *d, json_object *nodes, bool own)
{
	char vname[CTL_ADDR_STRLEN], bname[CTL_ADDR_STRLEN], err[300], why[160], note[64];
	struct health_changes *cs = NULL;
	struct registry *next = NULL;
	uint32_t i, j, n = 0, down, voters;
	uint64_t now = mono_ms(), rnow = real_ms(), since = 0;
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
			struct be *b = &v->bes[j], *nb;
			struct admission_at fa = {0, -1};
			bool up, changes;

			ctl_format_addr(&b->addr, bname, sizeof(bname));
			if (own) {
				up = health_local_up(d, b);
				voters = 1;
			} else {
				up = fleet_up(d, nodes, vname, bname, b->start_down, &down,
					      &voters);
				since = voters ? fleet_since(d, nodes, vname, bname, b->start_down,
							     up, down, voters, &fa.left)
					       : 0;
				fa.at = since ? mono_of_real(since, now, rnow) : 0;
			}
			if (!voters)
				continue;
			changes = admission_changes(b, up);
			/* Checks only: b is not changed. */
			if (!changes && (own || !admission_sync(d, v, b, up, now, &fa, false)))
				continue;
			if (!next && !(next = registry_clone(d->reg))) {
				log_err("health: out of memory applying the fleet's verdicts");
				return;
			}
			nb = &next->vips[i]->bes[j];
			next->vips[i]->dirty = true;
			n++;
			if (!changes) {
				admission_sync(d, next->vips[i], nb, up, now, &fa, true);
				log_info("health: backend %s of %s follows the fleet's times (%s "
					 "since %llu ms): held %s, step %u of %u",
					 bname, vname, up ? "up" : "down",
					 (unsigned long long)since, nb->held ? "yes" : "no",
					 nb->ramp_step ? nb->ramp_step : ADMIT_RAMP_STEPS,
					 ADMIT_RAMP_STEPS);
				continue;
			}
			if (!cs)
				cs = health_changes_new();
			if (!admission_apply(d, next->vips[i], nb, up, serving, now,
					     own ? NULL : &fa, note, sizeof(note)))
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
				int left;
				uint64_t since = voters ? fleet_since(d, nodes, vname, bname,
								      v->bes[j].start_down, up,
								      down, voters, &left)
							: 0;

				/* When the verdict began, by the voters' clocks. */
				if (since)
					json_object_object_add(o, "since_ms",
							       json_object_new_uint64(since));
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
