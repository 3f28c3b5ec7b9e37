// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The oracles shared by the control-input fuzzers (see ctl_fuzz.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_fuzz.h"

char *ctl_fuzz_render(const struct registry *r)
{
	size_t len;
	char *t = state_render(r, &len);

	if (!t)
		ctl_fuzz_die("state_render failed");
	return t;
}

void ctl_fuzz_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "ctl_fuzz oracle: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

/* The bookkeeping every registry must keep, whatever built it. */
void ctl_fuzz_check_registry(const struct registry *r, const struct maglevd_config *cfg)
{
	uint32_t i, j, k, nv = 0, nb = 0;

	for (i = 0; i < MAGLEV_MAX_VIPS; i++) {
		const struct vip *v = r->vips[i];

		if (!v)
			continue;
		nv++;
		if (v->id != i)
			ctl_fuzz_die("VIP in slot %u has id %u", i, v->id);
		if (v->nbe > v->cap || v->nbe > cfg->max_backends_per_vip)
			ctl_fuzz_die("VIP %u: %u backends (cap %u, limit %u)", i, v->nbe, v->cap,
				     cfg->max_backends_per_vip);
		for (j = 0; j < v->nbe; j++) {
			const struct be *b = &v->bes[j];

			nb++;
			if (!b->idx || b->idx >= MAGLEV_MAX_BACKENDS || r->idx_used[b->idx] != 1)
				ctl_fuzz_die("VIP %u backend %u: index %u not marked used", i, j,
					     b->idx);
			if (b->weight > MAGLEV_WEIGHT_MAX)
				ctl_fuzz_die("VIP %u backend %u: weight %u", i, j, b->weight);
			for (k = 0; k < j; k++)
				if (!memcmp(&v->bes[k].addr, &b->addr, sizeof(b->addr)))
					ctl_fuzz_die("VIP %u: backend listed twice", i);
		}
		for (k = 0; k < i; k++)
			if (r->vips[k] && !memcmp(&r->vips[k]->key, &v->key, sizeof(v->key)))
				ctl_fuzz_die("VIP %u and %u have the same key", k, i);
	}
	if (nv != r->nvips || nb != r->nbackends || nv > cfg->max_vips)
		ctl_fuzz_die("counts: %u/%u VIPs, %u/%u backends", nv, r->nvips, nb, r->nbackends);
}

/*
 * Render r, parse the rendering, render again: the two renderings must be
 * equal, and the state file the daemon writes must be one it can read
 * (a daemon that accepts a change and then cannot restart is a bug).
 */
void ctl_fuzz_roundtrip(const struct registry *r, const struct maglevd_config *cfg)
{
	const struct registry_ctx ctx = {.dp = NULL, .cfg = cfg};
	struct registry *r2 = NULL;
	char *t1 = ctl_fuzz_render(r), *t2, err[400];

	ctl_fuzz_check_registry(r, cfg);
	if (state_parse(t1, strlen(t1), &ctx, &r2, err, sizeof(err)))
		ctl_fuzz_die("the state written for an accepted registry does not load: %s\n%s",
			     err, t1);
	ctl_fuzz_check_registry(r2, cfg);
	t2 = ctl_fuzz_render(r2);
	if (strcmp(t1, t2))
		ctl_fuzz_die("state round trip differs:\n%s\n---\n%s", t1, t2);
	free(t1);
	free(t2);
	registry_free(r2);
}
