/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Hot flows (issue 35): the top flows and sources of each VIP, estimated
 * from the datapath's sampled heavy-hitter trackers (include/maglev_hot.h).
 */
#ifndef MAGLEVD_HOT_FLOWS_H
#define MAGLEVD_HOT_FLOWS_H

#include <stdio.h>
#include <json-c/json.h>

#include "core/daemon.h"

enum hot_by { HOT_BY_FLOW, HOT_BY_SOURCE, HOT_BY_MAX };

/* Writes the sampling rate (config hot_flows, hot_flows_sample) to the
 * datapath; at start and after a reload. 0 or a negative errno.
 */
int hot_flows_apply(struct daemon *d, char *err, size_t errlen);
/* Once a second or so (a shorter call returns at once): read, merge, decay. */
void hot_flows_tick(struct daemon *d);
/* The top k of VIP v (NULL: every VIP) by flow or by source, as the
 * "top" request answers it ("vips": [...]).
 */
json_object *hot_flows_json(struct daemon *d, const struct vip *v, enum hot_by by, int k);
/* The maglev_hot_* series (on the event loop, into the scrape's snapshot). */
void hot_flows_metrics(struct daemon *d, FILE *f);
#endif /* MAGLEVD_HOT_FLOWS_H */
