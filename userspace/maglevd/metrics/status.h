/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What `maglevctl status` and the metrics report about the daemon beyond
 * its counters: each interface's XDP attachment, the next hop, whether the
 * public default seed is in use, the slow-path module's state and the last
 * reload's result.
 */
#ifndef MAGLEVD_STATUS_H
#define MAGLEVD_STATUS_H

#include <stdint.h>
#include <json-c/json.h>

#include "core/daemon.h"

/* How an interface has an XDP program: one of status_xdp_modes. */
const char *status_xdp_mode(const char *ifname, uint32_t *prog_id);
/* Every answer of status_xdp_mode(), NULL-terminated (the metrics emit each one 0 or 1). */
extern const char *const status_xdp_modes[];
/* "in sync", "loaded, not in sync" (maglevd retries) or "not loaded". */
const char *status_slowpath(void);
/* Record a reload's outcome (daemon_reload()): err NULL on success. */
void status_reload_done(struct daemon *d, const char *err);
/* The keys the last reload changed that wait for a restart, as a JSON array. */
json_object *status_restart_pending(const struct daemon *d);
/* Add the fields above to a status answer. */
void status_json(struct daemon *d, json_object *o);

#endif /* MAGLEVD_STATUS_H */
