/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Whether the datapath holds what the registry says it holds: each VIP's
 * entry, table and backend entries read back from the pinned maps. The
 * digests (drift.h) are computed from the registry, so they stay equal on
 * every balancer however its maps differ; this read-back sees the maps.
 */
#ifndef MAGLEVD_READBACK_H
#define MAGLEVD_READBACK_H

#include <stdio.h>
#include <json-c/json.h>

#include "core/daemon.h"

/* A full pass over the VIPs takes this long, a few VIPs each tick, but no
 * more than READBACK_MAX_PER_TICK: with more than 40 VIPs, longer (each
 * costs about 3 ms of the loop: its 64K slots read and hashed).
 */
#define READBACK_PASS_MS      2000
#define READBACK_MAX_PER_TICK 2

/* Every tick: read back the next VIPs, unless a commit or swap is under way. */
void readback_tick(struct daemon *d);
/* VIPs whose datapath differs from the registry, as last read back. */
uint32_t readback_drift_vips(const struct daemon *d);
/* What differs in v's datapath ("" if nothing, NULL if not read back yet). */
const char *readback_vip(const struct vip *v);
/* status's "datapath" member; the metrics (on the loop). */
json_object *readback_json(const struct daemon *d);
void readback_metrics(const struct daemon *d, FILE *f);

#endif
