// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hot flows' maps (include/maglev_hot.h, bpf/xdp_hot.h): the sampling rate,
 * and each VIP's per-CPU trackers for maglevd to merge.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "datapath.h"
#include "maglev_conn.h"
#include "maglev_second.h"
#include "dp_priv.h"

int maglev_dp_hot_set(struct maglev_dp *dp, uint32_t sample_every)
{
	struct maglev_hot_cfg c = {.sample_every = sample_every};
	uint32_t zero = 0;

	if (sample_every && bpf_map__max_entries(dp->skel->maps.maglev_hot) < MAGLEV_MAX_VIPS)
		return -ENOSPC;
	return ret_errno(bpf_map_update_elem(map_fd(dp->skel->maps.maglev_hotcfg), &zero, &c, 0));
}

int maglev_dp_hot_read(struct maglev_dp *dp, uint32_t vip_id, struct maglev_hot_vip *out)
{
	if (vip_id >= bpf_map__max_entries(dp->skel->maps.maglev_hot))
		return -ENOENT;
	/* A per-CPU value is rounded up to 8 bytes per CPU: so is this one. */
	_Static_assert(sizeof(struct maglev_hot_vip) % 8 == 0, "hot value is 8-byte sized");
	return ret_errno(bpf_map_lookup_elem(map_fd(dp->skel->maps.maglev_hot), &vip_id, out));
}

int maglev_dp_ncpus(const struct maglev_dp *dp)
{
	return dp->ncpus;
}
