/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * maglev slow path: state shared by the netfilter hook, the encapsulation
 * code and the generic netlink handlers. Everything lives per network
 * namespace; readers (the hook, LOOKUP) use RCU, writers hold mn->lock.
 */
#ifndef MAGLEV_SLOWPATH_H
#define MAGLEV_SLOWPATH_H

#include <linux/bitmap.h>
#include <linux/in6.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "maglev_bounded.h"
#include "maglev_genl.h"
#include "maglev_hash.h"
#include "maglev_maps.h"

#define MAGLEV_VIP_HASH_BITS 8

/*
 * A Maglev lookup table: slot -> backend index (0: none). prev: each slot's
 * previous owner (second chance, 0: none), or NULL when no chunk carried
 * any; allocated with the first chunk that does.
 */
struct maglev_table {
	struct rcu_head rcu;
	u64 gen;
	u32 size;
	u32 filled; /* entries written so far while staged */
	u32 *prev;
	u32 entries[];
};

union maglev_addr {
	__be32 v4;
	struct in6_addr v6;
	u32 words[4];
};

struct maglev_backend_entry {
	struct rcu_head rcu;
	u8 family;
	union maglev_addr addr;
};

/* packets/bytes: handed to the stack successfully; drops: lost after the pick. */
struct maglev_vip_pcpu {
	u64 packets;
	u64 bytes;
	u64 drops;
};

struct maglev_vip {
	struct hlist_node node;
	struct rcu_head rcu;
	struct maglev_vip_key key;
	/* encap in the low byte, GUE port (host order) above: one word so
	 * the hook never sees a torn update.
	 */
	u32 params;
	struct maglev_table __rcu *table;
	struct maglev_table *staged; /* under maglev_net.lock, never read by the hook */
	struct maglev_vip_pcpu __percpu *stats;
};

static inline u8 maglev_vip_encap(u32 params)
{
	return params & 0xff;
}

static inline __be16 maglev_vip_gue_port(u32 params)
{
	return htons(params >> 16);
}

struct maglev_settings {
	struct rcu_head rcu;
	struct maglev_seed seed;
	__be32 src4; /* 0: the route's source; else a prefix of src4_plen bits */
	struct in6_addr src6; /* any: the route's source; else a prefix */
	u8 src4_plen; /* 32: src4 itself; shorter: host bits from the flow fold */
	u8 src6_plen; /* 128: src6 itself; shorter: low 32 bits from the fold */
};

/*
 * Bounded loads: the backends maglevd marked over their VIP's cap, by index
 * (OVERCAP_SET). Replaced whole under RCU, so a pick sees one set of marks.
 */
struct maglev_overcap {
	struct rcu_head rcu;
	DECLARE_BITMAP(marked, MAGLEV_GENL_BACKEND_MAX + 1);
};

struct maglev_pcpu_stats {
	u64 cnt[__MAGLEV_STAT_MAX];
};

struct maglev_net {
	struct mutex lock; /* serialises configuration changes */
	struct hlist_head vips[1 << MAGLEV_VIP_HASH_BITS];
	unsigned int nr_vips;
	struct xarray backends; /* index -> struct maglev_backend_entry */
	struct maglev_settings __rcu *cfg;
	struct maglev_overcap __rcu *overcap; /* NULL: no backend marked */
	struct maglev_pcpu_stats __percpu *stats;
	bool hooks_on;
};

/* A parsed flow, addresses and ports in network order. */
struct maglev_flow {
	union maglev_addr saddr;
	union maglev_addr daddr;
	__be16 sport;
	__be16 dport;
	u8 proto;
	u8 family;
	bool icmp; /* an ICMP error about this flow, not the flow's own packet */
	bool syn;  /* a TCP SYN: never carries a previous owner */
};

/* The result of a pick: everything the hook and LOOKUP report or use. */
struct maglev_sp_pick {
	struct maglev_vip *vip;
	const struct maglev_settings *cfg;
	const struct maglev_backend_entry *be;
	/* Second chance: the slot's previous owner to carry in GUE, or NULL. */
	const struct maglev_backend_entry *prev;
	u64 hash;
	u64 gen;
	u32 slot;
	u32 idx;
	u32 prev_idx; /* the slot's previous owner in the table, 0: none */
	bool spilled; /* bounded loads: idx is a probe's, the slot's owner is marked */
};

extern unsigned int maglev_net_id;

static inline struct maglev_net *maglev_pernet(const struct net *net)
{
	return net_generic(net, maglev_net_id);
}

static inline void maglev_sp_count(struct maglev_net *mn, enum maglev_genl_stat s, u64 n)
{
	this_cpu_add(mn->stats->cnt[s], n);
}

/* maglev_state.c: configuration objects and their RCU lifetimes. */
int maglev_net_setup(struct maglev_net *mn);
void maglev_net_teardown(struct maglev_net *mn);
struct maglev_vip *maglev_sp_vip_find(struct maglev_net *mn, const struct maglev_vip_key *key);
struct maglev_vip *maglev_vip_match(struct maglev_net *mn, const struct maglev_flow *fl);
int maglev_vip_set(struct net *net, const struct maglev_vip_key *key, u32 params,
		   struct netlink_ext_ack *extack);
int maglev_vip_del(struct net *net, const struct maglev_vip_key *key);
int maglev_backend_set(struct maglev_net *mn, u32 idx, u8 family, const union maglev_addr *addr);
int maglev_backend_del(struct maglev_net *mn, u32 idx);
int maglev_config_set(struct maglev_net *mn, const struct maglev_settings *cfg);
int maglev_overcap_set(struct maglev_net *mn, const u32 *words, u32 n);
int maglev_table_begin(struct maglev_vip *vip, u64 gen, u32 size);
int maglev_table_chunk(struct maglev_vip *vip, u64 gen, u32 offset, const void *entries,
		       const void *prev, u32 n, struct netlink_ext_ack *extack);
void maglev_table_free(struct maglev_table *t);
int maglev_table_commit(struct maglev_vip *vip, u64 gen, struct netlink_ext_ack *extack);
u64 maglev_flow_hash(const struct maglev_settings *cfg, const struct maglev_flow *fl);
int maglev_sp_pick(struct maglev_net *mn, const struct maglev_flow *fl, struct maglev_sp_pick *p);

/* maglev_hook.c: the netfilter hooks, registered on a namespace's first VIP. */
int maglev_hooks_enable(struct net *net);
void maglev_hooks_disable(struct net *net);

/* maglev_encap.c: encapsulate toward the picked backend and send; consumes
 * skb and accounts for it (per VIP and per namespace).
 */
void maglev_xmit(struct net *net, struct maglev_net *mn, const struct maglev_sp_pick *p,
		 const struct maglev_flow *fl, struct sk_buff *skb);

/* maglev_genl.c */
int maglev_genl_register(void);
void maglev_genl_unregister(void);

#endif /* MAGLEV_SLOWPATH_H */
