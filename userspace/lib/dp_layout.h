/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The pinned map layout across upgrades (dp_layout.c): which pinned maps a
 * new object can adopt, which it must renew, and the switch to the renewed
 * ones once the new program has taken over. Used by dp_load.c.
 */
#ifndef MAGLEV_DP_LAYOUT_H
#define MAGLEV_DP_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;

#define MAGLEV_LAYOUT_MAX_MAPS 32

struct maglev_layout_map {
	char name[64];
	bool pinned; /* a pin exists at the map's path */
	bool fresh;  /* ... that this object cannot adopt: created anew, pinned at commit */
	char why[96];
};

struct maglev_layout_plan {
	struct maglev_layout_map maps[MAGLEV_LAYOUT_MAX_MAPS];
	int n, nfresh;
};

/* Compare every map of obj (opened, not loaded) with its pin in dir.
 * any_size_map: the map whose entry count follows the pin (the connection
 * table). 0 or -errno with err set.
 */
int maglev_layout_plan(struct bpf_object *obj, const char *dir, const char *any_size_map,
		       struct maglev_layout_plan *p, char *err, size_t errlen);
/* "name (why), ..." of the maps to renew into buf; returns their count. */
int maglev_layout_describe(const struct maglev_layout_plan *p, char *buf, size_t len);
/* After the new program took over: every pinned XDP link in dir to prog_fd,
 * then the renewed maps replace the old pins. 0 or -errno with err set.
 */
int maglev_layout_commit(struct bpf_object *obj, const char *dir, int prog_fd,
			 struct maglev_layout_plan *p, char *err, size_t errlen);

#endif
