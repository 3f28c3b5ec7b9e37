// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>

#include "datapath/slowpath.h"
#include "health/damping.h"
#include "model/be_state.h"
#include "metrics/status.h"

/* The slow-path module's name (kernel/Kbuild): present here once loaded. */
#define SLOWPATH_SYSFS "/sys/module/maglev_slowpath"

enum { MODE_NATIVE, MODE_GENERIC, MODE_OFFLOAD, MODE_NONE, MODE_MISSING };
const char *const status_xdp_modes[] = {
	[MODE_NATIVE] = "native", [MODE_GENERIC] = "generic", [MODE_OFFLOAD] = "offload",
	[MODE_NONE] = "none",	  [MODE_MISSING] = "missing", NULL};

const char *status_xdp_mode(const char *ifname, uint32_t *prog_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ifindex = (int)if_nametoindex(ifname);

	*prog_id = 0;
	if (!ifindex)
		return status_xdp_modes[MODE_MISSING];
	/* Ask the kernel rather than trust the config: the truth after a crash. */
	if (bpf_xdp_query(ifindex, 0, &q))
		return status_xdp_modes[MODE_NONE];
	*prog_id = q.prog_id;
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		return status_xdp_modes[MODE_NATIVE];
	case XDP_ATTACHED_SKB:
		return status_xdp_modes[MODE_GENERIC];
	case XDP_ATTACHED_HW:
		return status_xdp_modes[MODE_OFFLOAD];
	case XDP_ATTACHED_MULTI:
		*prog_id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		return status_xdp_modes[q.drv_prog_id ? MODE_NATIVE : MODE_GENERIC];
	default:
		return status_xdp_modes[MODE_NONE];
	}
}

const char *status_slowpath(void)
{
	if (slowpath_in_sync())
		return "in sync";
	return access(SLOWPATH_SYSFS, F_OK) ? "not loaded" : "loaded, not in sync";
}

json_object *status_restart_pending(const struct daemon *d)
{
	json_object *arr = json_object_new_array();
	char buf[sizeof(d->restart_pending)], *save, *k;

	snprintf(buf, sizeof(buf), "%s", d->restart_pending);
	for (k = strtok_r(buf, " ", &save); k; k = strtok_r(NULL, " ", &save))
		json_object_array_add(arr, json_object_new_string(k));
	return arr;
}

void status_reload_done(struct daemon *d, const char *err)
{
	d->last_reload_time = time(NULL);
	if (err) {
		d->reload_failures++;
		snprintf(d->reload_error, sizeof(d->reload_error), "%s", err);
	} else {
		d->reloads++;
		d->reload_error[0] = '\0';
	}
}

/*
 * Backends kept from their table or weight by settle, damping or slow start,
 * counted over every VIP, and the highest flap penalty now.
 */
static json_object *admission_json(const struct daemon *d)
{
	json_object *o = json_object_new_object();
	uint32_t i, j, n[BE_STATE_MAX] = {0}, maxp = 0, p;
	uint64_t now = mono_ms();

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = d->reg->vips[i];

		for (j = 0; v && j < v->nbe; j++) {
			n[be_state(&v->bes[j])]++;
			p = damping_penalty(&d->cfg, &v->bes[j], now);
			if (p > maxp)
				maxp = p;
		}
	}
	json_object_object_add(o, "held", json_object_new_int64(n[BE_HELD]));
	json_object_object_add(o, "suppressed", json_object_new_int64(n[BE_SUPPRESSED]));
	json_object_object_add(o, "ramping", json_object_new_int64(n[BE_RAMPING]));
	json_object_object_add(o, "max_penalty", json_object_new_int64(maxp));
	json_object_object_add(o, "settle_ms", json_object_new_uint64(d->cfg.settle_ms));
	json_object_object_add(o, "slow_start_ms", json_object_new_uint64(d->cfg.slow_start_ms));
	json_object_object_add(o, "damping_penalty", json_object_new_int64(d->cfg.damping_penalty));
	return o;
}

static json_object *mac_json(const uint8_t *m)
{
	char buf[18];

	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
		 m[5]);
	return json_object_new_string(buf);
}

/* Commits applied and failed (by source), the last failure with its time. */
static void status_commits_json(struct daemon *d, json_object *o)
{
	json_object *c = json_object_new_object(), *by = json_object_new_object(), *lf;
	uint64_t all = 0;
	int i;

	for (i = 0; i < COMMIT_SOURCES; i++) {
		json_object_object_add(by, commit_source_name((enum commit_source)i),
				       json_object_new_uint64(d->commit_failures[i]));
		all += d->commit_failures[i];
	}
	json_object_object_add(c, "applied", json_object_new_uint64(d->commits));
	json_object_object_add(c, "failed", json_object_new_uint64(all));
	json_object_object_add(c, "failed_by_source", by);
	if (d->last_commit_failure_time) {
		char when[32];

		lf = json_object_new_object();
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ",
			 gmtime(&d->last_commit_failure_time));
		json_object_object_add(lf, "time", json_object_new_string(when));
		json_object_object_add(lf, "source",
				       json_object_new_string(commit_source_name(
					       (enum commit_source)d->last_commit_failure_source)));
		json_object_object_add(lf, "error", json_object_new_string(d->last_commit_error));
		json_object_object_add(c, "last_failure", lf);
	}
	json_object_object_add(o, "commits", c);
}

void status_json(struct daemon *d, json_object *o)
{
	json_object *arr = json_object_new_array(), *rl;
	struct maglev_config mc;
	bool have_mc = !maglev_dp_get_config(d->dp, &mc);
	int i;

	for (i = 0; i < d->cfg.n_ifaces; i++) {
		json_object *io = json_object_new_object();
		uint32_t prog = 0;
		const char *mode = status_xdp_mode(d->cfg.ifaces[i], &prog);

		json_object_object_add(io, "name", json_object_new_string(d->cfg.ifaces[i]));
		json_object_object_add(io, "xdp", json_object_new_string(mode));
		json_object_object_add(io, "prog_id", json_object_new_int64(prog));
		/* One next hop for every interface: the datapath's, as it is now. */
		json_object_object_add(io, "nexthop_mac",
				       have_mc ? mac_json(mc.nexthop_mac) : NULL);
		json_object_array_add(arr, io);
	}
	json_object_object_add(o, "interface_state", arr);
	json_object_object_add(o, "nexthop",
			       json_object_new_string(d->cfg.nexthop_auto ? "auto" : "static"));
	json_object_object_add(o, "default_seed", json_object_new_boolean(d->cfg.seed_default));
	json_object_object_add(o, "slowpath", json_object_new_string(status_slowpath()));
	json_object_object_add(o, "backend_admission", admission_json(d));
	/* The last reload, one record (status_reload_done()) in two shapes:
	 * the flat counters and error of "maglevctl reload", and last_reload
	 * with its time.
	 */
	json_object_object_add(o, "reloads", json_object_new_uint64(d->reloads));
	json_object_object_add(o, "reload_failures", json_object_new_uint64(d->reload_failures));
	if (d->reload_error[0])
		json_object_object_add(o, "last_reload_error",
				       json_object_new_string(d->reload_error));
	status_commits_json(d, o);
	rl = json_object_new_object();
	json_object_object_add(rl, "count", json_object_new_uint64(d->reloads));
	json_object_object_add(rl, "failures", json_object_new_uint64(d->reload_failures));
	if (d->last_reload_time) {
		char when[32];

		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&d->last_reload_time));
		json_object_object_add(rl, "time", json_object_new_string(when));
		json_object_object_add(rl, "ok", json_object_new_boolean(!d->reload_error[0]));
		if (d->reload_error[0])
			json_object_object_add(rl, "error",
					       json_object_new_string(d->reload_error));
	}
	json_object_object_add(rl, "restart_pending", status_restart_pending(d));
	json_object_object_add(o, "last_reload", rl);
	json_object_object_add(o, "restart_pending", status_restart_pending(d));
}
