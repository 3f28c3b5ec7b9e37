// SPDX-License-Identifier: GPL-2.0-only
/*
 * Configuration state of one network namespace: VIPs (hash list), backends
 * (xarray), the seed and outer source addresses, and each VIP's live and
 * staged Maglev tables. Writers hold mn->lock; the hook reads under RCU, so
 * everything a reader may still see is freed only after a grace period.
 */
#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/netlink.h>

#include "maglev.h"

static u32 maglev_vip_bucket(const struct maglev_vip_key *key)
{
	return jhash2(key->addr, 4, ((u32)key->port << 16) | ((u32)key->proto << 8) |
		      key->family) >> (32 - MAGLEV_VIP_HASH_BITS);
}

static bool maglev_vip_key_eq(const struct maglev_vip_key *a, const struct maglev_vip_key *b)
{
	return !memcmp(a, b, sizeof(*a));
}

struct maglev_vip *maglev_sp_vip_find(struct maglev_net *mn, const struct maglev_vip_key *key)
{
	struct maglev_vip *vip;

	hlist_for_each_entry_rcu(vip, &mn->vips[maglev_vip_bucket(key)], node,
				 lockdep_is_held(&mn->lock))
		if (maglev_vip_key_eq(&vip->key, key))
			return vip;
	return NULL;
}

/* The VIP of a flow: its exact port first, then the all-ports VIP. */
struct maglev_vip *maglev_vip_match(struct maglev_net *mn, const struct maglev_flow *fl)
{
	struct maglev_vip_key key = {
		.port = fl->dport,
		.proto = fl->proto,
		.family = fl->family,
	};
	struct maglev_vip *vip;

	memcpy(key.addr, fl->daddr.words, sizeof(key.addr));
	vip = maglev_sp_vip_find(mn, &key);
	if (vip)
		return vip;
	key.port = 0;
	return maglev_sp_vip_find(mn, &key);
}

u64 maglev_flow_hash(const struct maglev_settings *cfg, const struct maglev_flow *fl)
{
	if (fl->family == MAGLEV_AF_INET)
		return maglev_flow_hash_v4(&cfg->seed, fl->saddr.v4, fl->daddr.v4,
					   fl->sport, fl->dport, fl->proto);
	return maglev_flow_hash_v6(&cfg->seed, fl->saddr.words, fl->daddr.words,
				   fl->sport, fl->dport, fl->proto);
}

/*
 * Second chance, as the XDP program's maglev_second_chance(): a TCP packet
 * that is no SYN, on a GUE VIP, whose slot has a previous owner other than
 * the current one, may belong to a connection that owner holds; it carries
 * that owner in GUE and the current owner's decap sends it on if no local
 * socket claims it. The previous owner must exist and be of the current
 * owner's family (the decap program rewrites the outer addresses in place).
 * The module keeps no connection table, so every such packet is a miss.
 */
static const struct maglev_backend_entry *
maglev_second_chance(struct maglev_net *mn, const struct maglev_flow *fl,
		     const struct maglev_sp_pick *p)
{
	const struct maglev_backend_entry *pb;

	if (!p->prev_idx || p->prev_idx == p->idx || fl->syn || fl->icmp ||
	    fl->proto != IPPROTO_TCP ||
	    maglev_vip_encap(READ_ONCE(p->vip->params)) != MAGLEV_ENCAP_GUE)
		return NULL;
	pb = xa_load(&mn->backends, p->prev_idx);
	if (!pb || pb->family != p->be->family)
		return NULL;
	return pb;
}

/* maglev_bounded_probe()'s mark test; ctx: the namespace's maglev_overcap. */
static int maglev_overcap_marked(const void *ctx, u32 idx)
{
	const struct maglev_overcap *ov = ctx;

	return idx <= MAGLEV_GENL_BACKEND_MAX && test_bit(idx, ov->marked);
}

/*
 * A packet that opens a flow honours the over-cap marks, as in XDP
 * (maglev_lb): a TCP SYN, or UDP, whose flow is its connection entry there.
 * Any other TCP packet may belong to a connection its pick holds (the
 * module keeps no entries): a probe's backend would reset it.
 */
static bool maglev_opens_flow(const struct maglev_flow *fl)
{
	return !fl->icmp && (fl->syn || fl->proto == IPPROTO_UDP);
}

/*
 * The one pick of the module, used by the hooks and by LOOKUP alike: VIP
 * (exact port, then all ports), flow hash, table slot, backend (or, if
 * that one is over cap and the packet opens a flow, the flow's probe
 * sequence's). Call under
 * rcu_read_lock(). Returns 0 with p filled, -ENOENT (no VIP: not ours),
 * -ENODATA (the VIP has no table; p->vip set) or -EHOSTUNREACH (the slot
 * names no configured backend; p->vip, slot, idx and gen set).
 */
int maglev_sp_pick(struct maglev_net *mn, const struct maglev_flow *fl, struct maglev_sp_pick *p)
{
	const struct maglev_overcap *ov;
	const struct maglev_table *t;

	memset(p, 0, sizeof(*p));
	p->vip = maglev_vip_match(mn, fl);
	if (!p->vip)
		return -ENOENT;
	t = rcu_dereference(p->vip->table);
	if (!t)
		return -ENODATA;
	p->cfg = rcu_dereference(mn->cfg);
	p->hash = maglev_flow_hash(p->cfg, fl);
	p->slot = maglev_slot(p->hash, t->size);
	p->idx = t->entries[p->slot];
	p->gen = t->gen;
	/* Every packet here is a connection-table miss (the module keeps
	 * none), so it is placed as XDP places a miss; an ICMP error follows
	 * the pick, as in XDP.
	 */
	ov = rcu_dereference(mn->overcap);
	if (ov && p->idx && maglev_opens_flow(fl) && maglev_overcap_marked(ov, p->idx)) {
		u32 j = maglev_bounded_probe(&p->cfg->seed, p->hash, t->entries, t->size,
					     maglev_overcap_marked, ov);

		if (j) {
			p->idx = j;
			p->spilled = true;
		}
	}
	p->be = p->idx ? xa_load(&mn->backends, p->idx) : NULL;
	if (t->prev)
		p->prev_idx = t->prev[p->slot];
	if (!p->be)
		return -EHOSTUNREACH;
	p->prev = maglev_second_chance(mn, fl, p);
	return 0;
}

void maglev_table_free(struct maglev_table *t)
{
	if (!t)
		return;
	kvfree(t->prev);
	kvfree(t);
}

static void maglev_table_free_rcu(struct rcu_head *head)
{
	maglev_table_free(container_of(head, struct maglev_table, rcu));
}

static void maglev_vip_free_rcu(struct rcu_head *head)
{
	struct maglev_vip *vip = container_of(head, struct maglev_vip, rcu);

	maglev_table_free(rcu_access_pointer(vip->table));
	free_percpu(vip->stats);
	kfree(vip);
}

int maglev_vip_set(struct net *net, const struct maglev_vip_key *key, u32 params,
		   struct netlink_ext_ack *extack)
{
	struct maglev_net *mn = maglev_pernet(net);
	struct maglev_vip *vip;
	int err;

	lockdep_assert_held(&mn->lock);
	vip = maglev_sp_vip_find(mn, key);
	if (vip) {
		WRITE_ONCE(vip->params, params);
		return 0;
	}
	if (mn->nr_vips >= MAGLEV_GENL_MAX_VIPS) {
		NL_SET_ERR_MSG(extack, "VIP limit reached");
		return -ENOSPC;
	}
	if (!mn->hooks_on) {
		err = maglev_hooks_enable(net);
		if (err) {
			NL_SET_ERR_MSG(extack, "cannot register netfilter hooks");
			return err;
		}
		mn->hooks_on = true;
	}
	vip = kzalloc(sizeof(*vip), GFP_KERNEL);
	if (!vip)
		return -ENOMEM;
	vip->stats = alloc_percpu(struct maglev_vip_pcpu);
	if (!vip->stats) {
		kfree(vip);
		return -ENOMEM;
	}
	vip->key = *key;
	vip->params = params;
	hlist_add_head_rcu(&vip->node, &mn->vips[maglev_vip_bucket(key)]);
	WRITE_ONCE(mn->nr_vips, mn->nr_vips + 1);
	return 0;
}

static void maglev_vip_unlink(struct maglev_net *mn, struct maglev_vip *vip)
{
	hlist_del_rcu(&vip->node);
	WRITE_ONCE(mn->nr_vips, mn->nr_vips - 1);
	maglev_table_free(vip->staged);
	vip->staged = NULL;
	call_rcu(&vip->rcu, maglev_vip_free_rcu);
}

/*
 * The namespace's last VIP takes its hooks and defragmentation with it, so
 * a namespace without VIPs pays nothing again; the next VIP_SET re-enables
 * them. nf_unregister_net_hooks waits for hooks still running.
 */
int maglev_vip_del(struct net *net, const struct maglev_vip_key *key)
{
	struct maglev_net *mn = maglev_pernet(net);
	struct maglev_vip *vip;

	lockdep_assert_held(&mn->lock);
	vip = maglev_sp_vip_find(mn, key);
	if (!vip)
		return -ENOENT;
	maglev_vip_unlink(mn, vip);
	if (!mn->nr_vips && mn->hooks_on) {
		maglev_hooks_disable(net);
		mn->hooks_on = false;
	}
	return 0;
}

int maglev_backend_set(struct maglev_net *mn, u32 idx, u8 family, const union maglev_addr *addr)
{
	struct maglev_backend_entry *be, *old;

	lockdep_assert_held(&mn->lock);
	be = kzalloc(sizeof(*be), GFP_KERNEL);
	if (!be)
		return -ENOMEM;
	be->family = family;
	be->addr = *addr;
	old = xa_store(&mn->backends, idx, be, GFP_KERNEL);
	if (xa_is_err(old)) {
		kfree(be);
		return xa_err(old);
	}
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

int maglev_backend_del(struct maglev_net *mn, u32 idx)
{
	struct maglev_backend_entry *old;

	lockdep_assert_held(&mn->lock);
	old = xa_erase(&mn->backends, idx);
	if (!old)
		return -ENOENT;
	kfree_rcu(old, rcu);
	return 0;
}

int maglev_config_set(struct maglev_net *mn, const struct maglev_settings *cfg)
{
	struct maglev_settings *new, *old;

	lockdep_assert_held(&mn->lock);
	new = kmemdup(cfg, sizeof(*cfg), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	old = rcu_replace_pointer(mn->cfg, new, lockdep_is_held(&mn->lock));
	kfree_rcu(old, rcu);
	return 0;
}

/*
 * Replace the bounded-load marks: n host-order u32 words, bit i % 32 of
 * word i / 32 for backend index i (the policy checked the length and that
 * bit 0 is clear). No bit set: no marks, the pick's fast path.
 */
int maglev_overcap_set(struct maglev_net *mn, const u32 *words, u32 n)
{
	struct maglev_overcap *new = NULL, *old;

	lockdep_assert_held(&mn->lock);
	if (n && memchr_inv(words, 0, n * sizeof(u32))) {
		new = kzalloc(sizeof(*new), GFP_KERNEL);
		if (!new)
			return -ENOMEM;
		bitmap_from_arr32(new->marked, words, n * 32);
	}
	old = rcu_replace_pointer(mn->overcap, new, lockdep_is_held(&mn->lock));
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

/* Stage an empty table; a previous unfinished staging is discarded. */
int maglev_table_begin(struct maglev_vip *vip, u64 gen, u32 size)
{
	struct maglev_table *t;

	t = kvzalloc(struct_size(t, entries, size), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->gen = gen;
	t->size = size;
	maglev_table_free(vip->staged);
	vip->staged = t;
	return 0;
}

/*
 * Chunks must arrive in order, so "complete" is a single counter. The policy
 * already checked every entry's range; a rejected chunk writes nothing.
 * prev (or NULL): the chunk's previous owners, n of them.
 */
int maglev_table_chunk(struct maglev_vip *vip, u64 gen, u32 offset, const void *entries,
		       const void *prev, u32 n, struct netlink_ext_ack *extack)
{
	struct maglev_table *t = vip->staged;

	if (!t) {
		NL_SET_ERR_MSG(extack, "no table staged for this VIP (TABLE_BEGIN first)");
		return -ENOENT;
	}
	if (t->gen != gen) {
		NL_SET_ERR_MSG(extack, "generation does not match the staged table");
		return -ESTALE;
	}
	if (offset != t->filled) {
		NL_SET_ERR_MSG(extack, "chunk offset is not the next unfilled slot");
		return -EINVAL;
	}
	if (n > t->size - offset) {
		NL_SET_ERR_MSG(extack, "chunk runs past the end of the table");
		return -ERANGE;
	}
	if (prev && !t->prev) {
		t->prev = kvcalloc(t->size, sizeof(u32), GFP_KERNEL);
		if (!t->prev)
			return -ENOMEM;
	}
	memcpy(&t->entries[offset], entries, n * sizeof(u32));
	if (prev)
		memcpy(&t->prev[offset], prev, n * sizeof(u32));
	t->filled += n;
	return 0;
}

int maglev_table_commit(struct maglev_vip *vip, u64 gen, struct netlink_ext_ack *extack)
{
	struct maglev_table *t = vip->staged, *old;

	if (!t) {
		NL_SET_ERR_MSG(extack, "no table staged for this VIP");
		return -ENOENT;
	}
	if (t->gen != gen) {
		NL_SET_ERR_MSG(extack, "generation does not match the staged table");
		return -ESTALE;
	}
	if (t->filled != t->size) {
		NL_SET_ERR_MSG(extack, "staged table is incomplete");
		return -EINVAL;
	}
	vip->staged = NULL;
	/* The only point where the hook's view changes: old or new, never a mix. */
	old = rcu_replace_pointer(vip->table, t, true);
	if (old)
		call_rcu(&old->rcu, maglev_table_free_rcu);
	return 0;
}

int maglev_net_setup(struct maglev_net *mn)
{
	struct maglev_settings *cfg;
	int i;

	mutex_init(&mn->lock);
	for (i = 0; i < ARRAY_SIZE(mn->vips); i++)
		INIT_HLIST_HEAD(&mn->vips[i]);
	xa_init(&mn->backends);
	mn->stats = alloc_percpu(struct maglev_pcpu_stats);
	if (!mn->stats)
		return -ENOMEM;
	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg) {
		free_percpu(mn->stats);
		return -ENOMEM;
	}
	cfg->seed.k0 = MAGLEV_DEFAULT_SEED_K0;
	cfg->seed.k1 = MAGLEV_DEFAULT_SEED_K1;
	cfg->src4_plen = 32;
	cfg->src6_plen = 128;
	RCU_INIT_POINTER(mn->cfg, cfg);
	return 0;
}

/* Called once the hooks are gone and a grace period has passed. */
void maglev_net_teardown(struct maglev_net *mn)
{
	struct maglev_backend_entry *be;
	struct maglev_settings *cfg;
	struct maglev_overcap *ov;
	struct hlist_node *tmp;
	struct maglev_vip *vip;
	unsigned long idx;
	int i;

	mutex_lock(&mn->lock);
	for (i = 0; i < ARRAY_SIZE(mn->vips); i++)
		hlist_for_each_entry_safe(vip, tmp, &mn->vips[i], node)
			maglev_vip_unlink(mn, vip);
	xa_for_each(&mn->backends, idx, be)
		kfree_rcu(be, rcu);
	xa_destroy(&mn->backends);
	cfg = rcu_replace_pointer(mn->cfg, NULL, true);
	ov = rcu_replace_pointer(mn->overcap, NULL, true);
	mutex_unlock(&mn->lock);
	kfree_rcu(cfg, rcu);
	if (ov)
		kfree_rcu(ov, rcu);
	free_percpu(mn->stats);
}
