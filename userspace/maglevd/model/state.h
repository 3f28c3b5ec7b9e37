/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The state file: VIPs, their ids, settings and backends (index, generation,
 * weight, drain; a hold's end, a ramp's start and a damping penalty as
 * wall-clock ms), as JSON. Written to a temporary file in the same
 * directory, fsync'ed, renamed over the old one and the directory fsync'ed,
 * so after a crash at any moment the file holds the old or the new state.
 */
#ifndef MAGLEVD_STATE_H
#define MAGLEVD_STATE_H

#include <json-c/json.h>

#include "model/registry.h"

#define STATE_VERSION 1

int state_save(const char *path, const struct registry *r, char *err, size_t errlen);
/* The two halves of state_save: JSON text of r (malloc'ed), and the
 * temp + fsync + rename + fsync(dir) write of a text.
 */
char *state_render(const struct registry *r, size_t *len);
int state_write(const char *path, const char *text, size_t len, char *err, size_t errlen);

/*
 * Background writer (state_writer.c): the event loop hands over a reference
 * to each new live registry (the writer puts it) and goes on;
 * a thread renders and writes it. Snapshots that arrive while a write is in
 * progress are coalesced: only the newest is written next.
 */
int state_writer_start(const char *path);
void state_writer_submit(struct registry *snap);
/* Wait until everything submitted is on disk; returns failures so far. */
uint64_t state_writer_flush(void);
uint64_t state_writer_failures(void);
/* Load path into a new registry (*out). A missing file gives an empty one
 * and sets *missing (the caller decides whether empty is believable).
 */
int state_load(const char *path, const struct registry_ctx *ctx, struct registry **out,
	       bool *missing, char *err, size_t errlen);
/* Parse state JSON text (for state_load and tests). */
int state_parse(const char *text, size_t len, const struct registry_ctx *ctx, struct registry **out,
		char *err, size_t errlen);

/*
 * Whether the state file of r would load under cfg (limits, health-check
 * settings), as the next start will check it: 0, or -EINVAL with err
 * naming the VIP and the problem.
 */
int state_check_config(const struct registry *r, const struct maglevd_config *cfg, char *err,
		       size_t errlen);

/* JSON of one VIP's settings (shared with the control protocol's "dump"). */
json_object *state_vip_json(const struct vip *v, bool with_ids);
/* A health-check field's value as the state file and status write it. */
json_object *hc_field_json(const struct hc_params *p, const struct hc_field *f);

#endif /* MAGLEVD_STATE_H */
