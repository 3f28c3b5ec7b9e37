/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Snapshots of everything a client can read back from the module, and the
 * reset to the baseline that is checked against them.
 */
#ifndef NL_FUZZ_SNAP_H
#define NL_FUZZ_SNAP_H

#include <stdint.h>
#include <linux/netlink.h>
#include "kmod_util.h"
#include "base.h"
#include "sock.h"

#define FZ_MAX_VIPS 64
#define FZ_MAX_BES  64

struct fz_vip {
	struct maglev_vip_key key;
	uint8_t encap;
	uint16_t gue_port;
	uint8_t has_table;
	uint64_t gen;
	uint32_t size;
	uint64_t packets, bytes, drops;
};

struct fz_be {
	uint32_t idx;
	uint8_t family;
	uint32_t addr[4];
};

struct fz_snap {
	uint64_t k0, k1;
	uint32_t src4, src6[4];
	uint8_t src4_plen, src6_plen;
	int nvips, nbes;
	struct fz_vip vips[FZ_MAX_VIPS];
	struct fz_be bes[FZ_MAX_BES];
	int look_err[FZ_PROBES];
	struct slowpath_lookup look[FZ_PROBES];
};

int fz_vips_cb(const struct nlmsghdr *nlh, void *data);
void fz_put_key(struct nlmsghdr *nlh, const struct maglev_vip_key *k);
int fz_lookup(struct fz_sock *s, const struct maglev_flow_key *f, struct slowpath_lookup *out);
int fz_snapshot(struct fz_sock *s, const struct fz_base *b, struct fz_snap *snap);
void fz_snap_diff(const struct fz_snap *a, const struct fz_snap *b);
int fz_reset(struct fz_sock *s, struct slowpath_nl *nl, const struct fz_base *b);
int fz_check_base_lookups(struct fz_sock *s, const struct fz_base *b);

#endif /* NL_FUZZ_SNAP_H */
