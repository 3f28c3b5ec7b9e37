// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The per-interface MACs (maglev_ifl2) and the config word that lets the
 * datapath skip them (maglev_config.if_l2_differs). The invariant: while the
 * word is 0, every entry holds the config's own pair, so skipping the
 * lookup sends each frame with the MACs the lookup would give. A write that
 * breaks it sets the word first; one that may restore it clears the word
 * after.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "dp_priv.h"

static int ifl2_fd(struct maglev_dp *dp)
{
	return map_fd(dp->skel->maps.maglev_ifl2);
}

static bool pair_differs(const struct maglev_if_l2 *l2, const struct maglev_config *cfg)
{
	return memcmp(l2->nexthop_mac, cfg->nexthop_mac, 6) || memcmp(l2->src_mac, cfg->src_mac, 6);
}

bool dp_if_l2_differs(struct maglev_dp *dp, const struct maglev_config *cfg)
{
	struct maglev_if_l2 l2;
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(ifl2_fd(dp), prev, &next)) {
		/* An entry that cannot be read is taken to differ: the
		 * lookup then decides, as it always did.
		 */
		if (bpf_map_lookup_elem(ifl2_fd(dp), &next, &l2) || pair_differs(&l2, cfg))
			return true;
		key = next;
		prev = &key;
	}
	return false;
}

/* The config with if_l2_differs set to differs, if it is not already. */
static int set_differs(struct maglev_dp *dp, bool differs)
{
	struct maglev_config cfg;
	__u32 zero = 0;
	int r = maglev_dp_get_config(dp, &cfg);

	if (r || !cfg.if_l2_differs == !differs)
		return r;
	cfg.if_l2_differs = differs;
	return ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_cfg), &zero, &cfg, 0));
}

int maglev_dp_if_l2_set(struct maglev_dp *dp, uint32_t ifindex, const struct maglev_if_l2 *l2)
{
	struct maglev_config cfg;
	int r = maglev_dp_get_config(dp, &cfg);

	if (!r && pair_differs(l2, &cfg))
		r = set_differs(dp, true);
	if (!r)
		r = ret_errno(bpf_map_update_elem(ifl2_fd(dp), &ifindex, l2, 0));
	/* This entry may have been the last that differed. */
	if (!r && !pair_differs(l2, &cfg) && !dp_if_l2_differs(dp, &cfg))
		r = set_differs(dp, false);
	return r;
}

int maglev_dp_if_l2_delete(struct maglev_dp *dp, uint32_t ifindex)
{
	struct maglev_config cfg;
	int r = ret_errno(bpf_map_delete_elem(ifl2_fd(dp), &ifindex));

	if (!r)
		r = maglev_dp_get_config(dp, &cfg);
	if (!r && !dp_if_l2_differs(dp, &cfg))
		r = set_differs(dp, false);
	return r;
}
