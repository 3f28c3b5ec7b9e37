/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Client of the maglev slow-path kernel module's generic netlink family
 * (include/maglev_genl.h), on libmnl. One handle = one netlink socket in the
 * caller's network namespace; not thread-safe (one handle per thread).
 *
 * Every function returns 0 or a negative errno. On failure,
 * slowpath_nl_errmsg() gives a one-line reason: the kernel's extended ACK
 * message when it sent one. slowpath_nl_open() returns -ENOENT when the
 * module is not loaded: callers treat the module as optional.
 */
#ifndef SLOWPATH_NL_H
#define SLOWPATH_NL_H

#include <stddef.h>
#include <stdint.h>
#include "maglev_genl.h"
#include "maglev_hash.h"
#include "maglev_maps.h"

struct slowpath_nl;

struct slowpath_config {
	struct maglev_seed seed;
	uint32_t src4;	  /* outer IPv4 source, network order; 0: route's choice */
	uint32_t src6[4]; /* outer IPv6 source; all-zero: route's choice */
	/* Prefix lengths of src4/src6 (0: the whole address, /32 or /128).
	 * Shorter: per-flow sources inside the prefix, as the XDP program's
	 * src4_prefix/src4_plen and src6_prefix/src6_plen.
	 */
	uint8_t src4_plen;
	uint8_t src6_plen;
};

struct slowpath_vip_state {
	struct maglev_vip_key key;
	uint8_t encap;	   /* enum maglev_encap */
	uint16_t gue_port; /* network order; 0 unless GUE */
	int has_table;	   /* 0: no committed table yet (gen/size unset) */
	uint64_t table_gen;
	uint32_t table_size;
	uint64_t packets; /* forwarded by the module for this VIP */
	uint64_t bytes;
	uint64_t drops; /* lost after the pick (no route, too big, TTL, ...) */
};

struct slowpath_lookup {
	uint32_t backend_idx; /* 0: the slot is empty */
	uint32_t slot;
	uint64_t table_gen;
	uint32_t prev_idx; /* the slot's previous owner (second chance), 0: none */
};

/* Counters indexed by enum maglev_genl_stat. */
struct slowpath_stats {
	uint64_t cnt[MAGLEV_STAT_MAX + 1];
};

int slowpath_nl_open(struct slowpath_nl **nl);
void slowpath_nl_close(struct slowpath_nl *nl);
const char *slowpath_nl_errmsg(const struct slowpath_nl *nl);

int slowpath_nl_config_set(struct slowpath_nl *nl, const struct slowpath_config *cfg);
int slowpath_nl_config_get(struct slowpath_nl *nl, struct slowpath_config *cfg);

/* Create or update a VIP. info->vip_id and info->flags are not used by the
 * module; info->gue_port (network order) must be non-zero for GUE.
 */
int slowpath_nl_vip_set(struct slowpath_nl *nl, const struct maglev_vip_key *key,
			const struct maglev_vip_info *info);
int slowpath_nl_vip_del(struct slowpath_nl *nl, const struct maglev_vip_key *key);
int slowpath_nl_vip_get(struct slowpath_nl *nl, const struct maglev_vip_key *key,
			struct slowpath_vip_state *out);
/* Every VIP: fills out[0..max-1], returns the count (which may exceed max). */
int slowpath_nl_vip_list(struct slowpath_nl *nl, struct slowpath_vip_state *out, size_t max);

/* Backends by index 1..MAGLEV_GENL_BACKEND_MAX (b->flags and b->gen unused). */
int slowpath_nl_backend_set(struct slowpath_nl *nl, uint32_t idx, const struct maglev_backend *b);
int slowpath_nl_backend_del(struct slowpath_nl *nl, uint32_t idx);
int slowpath_nl_backend_get(struct slowpath_nl *nl, uint32_t idx, struct maglev_backend *b);

/*
 * Replace a VIP's table: TABLE_BEGIN, TABLE_CHUNKs of up to
 * MAGLEV_GENL_CHUNK_MAX entries, TABLE_COMMIT, all with generation gen.
 * Packets see the old table until the commit, then the new one. On failure
 * the live table is unchanged.
 */
int slowpath_nl_table_push(struct slowpath_nl *nl, const struct maglev_vip_key *key, uint64_t gen,
			   const uint32_t *table, uint32_t size);
/* The same with each slot's previous owner (second chance, 0: none) in
 * prev[size], sent beside the owners in every chunk; prev NULL: none.
 */
int slowpath_nl_table_push_prev(struct slowpath_nl *nl, const struct maglev_vip_key *key,
				uint64_t gen, const uint32_t *table, const uint32_t *prev,
				uint32_t size);

/*
 * Replace the module's bounded-load marks: backend index i is over cap when
 * marked[i] is non-zero, for i < n (n at most MAGLEV_GENL_BACKEND_MAX + 1;
 * indices from n on are unmarked). Sent as OVERCAP, the bitmap up to the
 * highest marked index; no attribute when none is. -EINVAL (nothing sent)
 * for marked[0] or a larger n.
 */
int slowpath_nl_overcap_set(struct slowpath_nl *nl, const uint8_t *marked, uint32_t n);

/* What the module would pick for a flow (key->family, addresses, ports, proto). */
int slowpath_nl_lookup(struct slowpath_nl *nl, const struct maglev_flow_key *flow,
		       struct slowpath_lookup *out);

int slowpath_nl_stats(struct slowpath_nl *nl, struct slowpath_stats *out);
/* Stable name of a counter ("forwarded", "no_route", ...); NULL for unused indices. */
const char *slowpath_nl_stat_name(unsigned int stat);

/*
 * Low level, for tests and tools: the family id, and a raw request. msg is a
 * complete netlink message (header included); the library fills in
 * nlmsg_seq and NLM_F_ACK and waits for the acknowledgement.
 */
uint16_t slowpath_nl_family_id(const struct slowpath_nl *nl);
int slowpath_nl_request_raw(struct slowpath_nl *nl, void *msg);

#endif /* SLOWPATH_NL_H */
