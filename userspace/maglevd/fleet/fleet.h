/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet mode (fleet_etcd set): the desired state (VIPs, their options,
 * backends, weights, drain flags) lives in etcd under fleet_prefix, one key
 * per VIP (PREFIX vips/VIP, holding that VIP's control requests as a JSON
 * array: its vip.add, then one backend.add per backend). A thread reads the
 * prefix at a revision and watches it from the next one (etcd_client.c);
 * each revision it sees is handed to the event loop as a whole desired
 * state, applied there as one transaction (as a difference to what is live:
 * model/vip_sync.h) that a refusal leaves unapplied. The revision applied goes into the state file,
 * so a restart without etcd forwards with the last state.
 */
#ifndef MAGLEVD_FLEET_H
#define MAGLEVD_FLEET_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

#include "core/daemon.h"

#define FLEET_VIPS "vips/"
/* PREFIX nodes/NODE: each balancer's status, under a lease (gone when it is). */
#define FLEET_NODES "nodes/"
/* PREFIX changed: written by every maglevctl change (its id), so that
 * --expect-revision sees a delete; PREFIX writes/NODE: this balancer's last
 * write's id, so that a write sent again after a lost answer is not applied
 * twice (fleet_write).
 */
#define FLEET_CHANGED "changed"
#define FLEET_WRITES  "writes/"

bool fleet_enabled(const struct daemon *d);
/* Start the etcd thread (nothing when fleet_etcd is unset). */
int fleet_start(struct daemon *d, char *err, size_t errlen);
void fleet_stop(struct daemon *d);
/* Refresh this balancer's published status (every tick; rate-limited). */
void fleet_tick(struct daemon *d);
/* Every live balancer's status and whether they agree (maglevctl fleet status). */
json_object *fleet_nodes_json(struct daemon *d);
/* The "fleet" member of status. */
json_object *fleet_json(struct daemon *d);
void fleet_metrics(struct daemon *d, FILE *f);
/* How old the desired state is: since the last linearizable read that
 * confirmed it (a full read, or the watched member's probe), or since the
 * start if none.
 */
uint64_t fleet_input_age_ms(const struct daemon *d);
/* The same for the balancers' statuses (health_scope fleet). */
uint64_t fleet_health_age_ms(const struct daemon *d);

/*
 * A change made with maglevctl in fleet mode (requests.c): next is the
 * validated result of applying it to the live registry. The VIPs it
 * changes go to etcd as one txn (puts and deletes of their keys; with
 * expect_rev >= 0, only if nothing under the prefix changed after that
 * revision, deletes included). The client's answer is deferred until the
 * txn committed and this balancer applied its revision (with expect_rev
 * and nothing to write: until etcd checked the revision). 1: nothing to
 * write (no VIP changed); 0: deferred; -1 with err.
 */
int fleet_write(struct daemon *d, const struct registry *next, int64_t expect_rev, char *err,
		size_t errlen);

/*
 * Apply a whole desired state (requests.c): reqs, an array of vip.add and
 * backend.add requests, replaces every VIP in one transaction recorded as
 * revision rev, applied as a difference to what is live (model/vip_sync.h):
 * only the VIPs that differ are changed and rebuilt. keep_same: if that
 * holds what is live already, change nothing, not even the revision (1).
 * 0, or -1 with err saying why (nothing changed).
 */
int ctl_apply_desired(struct daemon *d, json_object *reqs, uint64_t rev, bool keep_same, char *err,
		      size_t errlen);

#endif /* MAGLEVD_FLEET_H */
