/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Inside the XDP datapath library (datapath.h is its API): the handle, and
 * what its files share. dp_load.c opens, loads and closes; dp_attach.c
 * attaches; dp_vips.c writes VIPs and backends; dp_tables.c the tables;
 * dp_stats.c reads the counters; dp_conns.c the connection table;
 * dp_if_l2.c the per-interface MACs.
 */
#ifndef MAGLEV_DP_PRIV_H
#define MAGLEV_DP_PRIV_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/libbpf.h>

#include "datapath.h"
#include "dp_layout.h"
#include "maglev_xdp.skel.h"

#define MAGLEV_DP_MAX_LINKS 64

#define MAGLEV_DP_MAX_LINKS 64

struct maglev_dp {
	struct maglev_xdp *skel;
	char pin_dir[PATH_MAX - 64];
	bool pin;
	bool mounted_bpffs; /* this open mounted the bpffs at MAGLEV_BPFFS_ROOT */
	int ncpus;
	/* Unpinned links (pin_dir ""): closing the fd detaches. */
	int link_fd[MAGLEV_DP_MAX_LINKS];
	int link_ifindex[MAGLEV_DP_MAX_LINKS];
	/* Pinned maps this object could not adopt (an upgrade that changed
	 * their layout): unpinned until maglev_dp_layout_commit.
	 */
	struct maglev_layout_plan layout;
};

static inline int map_fd(const struct bpf_map *map)
{
	return bpf_map__fd(map);
}

static inline int ret_errno(int r)
{
	return r ? -errno : 0;
}

/* Format err (if any) and return ret (dp_load.c). */
int dp_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Whether some maglev_ifl2 entry holds a pair other than cfg's (dp_if_l2.c). */
bool dp_if_l2_differs(struct maglev_dp *dp, const struct maglev_config *cfg);

/* Rebuild the VIP address index from the VIP map (dp_vips.c; open uses it). */
int dp_vip_index_rebuild(struct maglev_dp *dp);

#endif /* MAGLEV_DP_PRIV_H */
