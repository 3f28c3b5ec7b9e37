/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * health_scope fleet: the table follows the fleet's verdict, not this
 * balancer's checks. Each balancer publishes its own verdicts (per VIP, by
 * backend address) in its status key under its lease (fleet.c); every
 * balancer reads all live status keys and takes a backend out of the table
 * when a strict majority of the voters (live balancers with health_scope
 * fleet) see it down. The verdict is a function of etcd's content alone,
 * so balancers holding the same revision build the same tables; so are the
 * times its hold, slow-start steps and damping count from (each voter
 * publishes when it saw a backend down, and back), so they step alike.
 */
#ifndef MAGLEVD_FLEET_HEALTH_H
#define MAGLEVD_FLEET_HEALTH_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "core/daemon.h"

static inline bool fleet_health_on(const struct daemon *d)
{
	return d->cfg.health_fleet;
}

/* This balancer's own verdict of b: what its checks are judged against. */
bool health_local_up(const struct daemon *d, const struct be *b);
/* Record a verdict of this balancer's checks (fleet scope: no commit). */
void fleet_health_local(const struct vip *v, const struct be *b, bool up, const char *why);
/* True once since the last call when a local verdict changed (publish soon). */
bool fleet_health_changed(void);
/*
 * This balancer's verdicts as published: {"VIP": {"backend": "down"}}, the
 * backends it sees down only (up is what a voter that names no verdict
 * counts as), within about budget bytes of JSON: past it, the rest is left
 * out (counted as up) and *truncated set. *times: when it saw them,
 * {"VIP": {"backend": [down_since, up_since]}} in CLOCK_REALTIME ms
 * (up_since 0: still down), for the backends it sees down and those it saw
 * come back within slow_start_ms and a few seconds: what every balancer
 * counts the fleet's hold, ramp and damping from.
 */
json_object *fleet_health_publish(const struct daemon *d, size_t budget, bool *truncated,
				  json_object **times);
/*
 * Apply the fleet's verdicts computed from nodes (every live balancer's
 * status, as read from etcd) to the live registry: one commit for all that
 * changed. Nothing changes while no status was read (nodes NULL). own: this
 * balancer's own verdicts instead (the fleet's input is too old).
 */
void fleet_health_apply(struct daemon *d, json_object *nodes, bool own);
/* True once since the last call when a local verdict changed (apply soon). */
bool fleet_health_changed_local(void);
/* Each backend's view by balancer and the fleet's verdict (fleet status, status -j). */
json_object *fleet_health_json(const struct daemon *d, json_object *nodes);

#endif /* MAGLEVD_FLEET_HEALTH_H */
