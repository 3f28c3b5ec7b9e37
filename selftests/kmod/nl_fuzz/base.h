/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The known-good baseline every test starts from and returns to: its VIPs,
 * backends and tables, and client flows aimed at them.
 */
#ifndef NL_FUZZ_BASE_H
#define NL_FUZZ_BASE_H

#include <stdint.h>
#include "kmod_util.h"

#define FZ_PROBES	  3
#define FZ_STAGE_MAX_SIZE 31

#define FZ_NBASE_VIPS 3
#define FZ_NBASE_BES  4

struct fz_base_vip {
	int family;
	const char *addr;
	uint16_t port;
	uint8_t proto;
	uint8_t encap;
	uint16_t gue_port;
	uint32_t size; /* 0: no table */
	uint64_t gen;
};

struct fz_base_be {
	uint32_t idx;
	int family;
	const char *addr;
};

extern const struct fz_base_vip fz_base_vips[FZ_NBASE_VIPS];
extern const struct fz_base_be fz_base_bes[FZ_NBASE_BES];

struct fz_base {
	struct maglev_seed seed;
	uint32_t tables[FZ_NBASE_VIPS][FZ_STAGE_MAX_SIZE];
	struct maglev_flow_key slot_flows[FZ_NBASE_VIPS][FZ_STAGE_MAX_SIZE];
	struct maglev_flow_key probes[FZ_PROBES];
};

struct maglev_vip_key fz_key(int family, const char *addr, uint16_t port, uint8_t proto);
struct maglev_vip_key fz_base_key(int i);
struct maglev_flow_key fz_flow(const struct maglev_vip_key *k, uint64_t *rs);
int fz_slot_flows(const struct maglev_seed *seed, const struct maglev_vip_key *k, uint32_t size,
		  uint64_t *rs, struct maglev_flow_key *flows);
int fz_base_apply(struct slowpath_nl *nl, const struct fz_base *b);

#endif /* NL_FUZZ_BASE_H */
