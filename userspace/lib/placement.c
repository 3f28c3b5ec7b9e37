// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Which builder fills a VIP's table, by name. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "placement.h"

static const char *const names[] = {
	[MAGLEV_PLACEMENT_MAGLEV] = "maglev",
	[MAGLEV_PLACEMENT_RING] = "ring",
	[MAGLEV_PLACEMENT_RENDEZVOUS] = "rendezvous",
};

const char *maglev_placement_name(enum maglev_placement kind)
{
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}

int maglev_placement_parse(const char *name, enum maglev_placement *kind)
{
	unsigned i;

	for (i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(names[i], name)) {
			*kind = (enum maglev_placement)i;
			return 0;
		}
	}
	return -EINVAL;
}

int maglev_placement_build(const struct maglev_seed *seed, const struct maglev_placement_cfg *cfg,
			   const struct maglev_backend_spec *be, size_t n, uint32_t m,
			   uint32_t *out, struct maglev_err *err)
{
	switch (cfg ? cfg->kind : MAGLEV_PLACEMENT_MAGLEV) {
	case MAGLEV_PLACEMENT_MAGLEV:
		return maglev_table_build(seed, be, n, m, out, err);
	case MAGLEV_PLACEMENT_RING:
		return maglev_ring_build(seed, cfg->vnodes, be, n, m, out, err);
	case MAGLEV_PLACEMENT_RENDEZVOUS:
		return maglev_rendezvous_build(seed, be, n, m, out, err);
	}
	if (err)
		snprintf(err->msg, sizeof(err->msg), "unknown placement %d", (int)cfg->kind);
	return -EINVAL;
}
