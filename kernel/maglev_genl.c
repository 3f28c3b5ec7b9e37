// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "maglev" generic netlink family (include/maglev_genl.h): maglevd
 * configures VIPs, backends, the seed and tables through it and reads
 * counters. One policy (and, for family and protocol values, the pre_doit
 * hook) validates every attribute before a handler runs, so handlers only
 * check presence and cross-attribute rules; a rejected request changes
 * nothing.
 */
#include <linux/in.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/ipv6.h>
#include <net/netlink.h>

#include "maglev.h"

static struct genl_family maglev_genl_family;

/*
 * The values of FAMILY and PROTO, for every command that carries them, before
 * its handler. Not validation functions in the policy: when an attribute
 * fails its length check the ACK carries its policy (NLMSGERR_ATTR_POLICY),
 * and 6.1's policy dump reads the range of an integer policy from the union
 * that holds a validation function's pointer, which trips the WARN_ON_ONCE
 * in nla_get_range_unsigned() for any sender. (Validation functions on
 * NLA_BINARY attributes are dumped without a range.)
 */
static int maglev_pre_doit(const struct genl_ops *ops, struct sk_buff *skb,
			   struct genl_info *info)
{
	struct nlattr *family = info->attrs[MAGLEV_A_FAMILY];
	struct nlattr *proto = info->attrs[MAGLEV_A_PROTO];

	if (family && nla_get_u8(family) != MAGLEV_AF_INET &&
	    nla_get_u8(family) != MAGLEV_AF_INET6) {
		NL_SET_ERR_MSG_ATTR(info->extack, family, "family must be AF_INET or AF_INET6");
		return -EINVAL;
	}
	if (proto && nla_get_u8(proto) != IPPROTO_TCP && nla_get_u8(proto) != IPPROTO_UDP) {
		NL_SET_ERR_MSG_ATTR(info->extack, proto, "protocol must be TCP or UDP");
		return -EINVAL;
	}
	return 0;
}

static int maglev_validate_addr(const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	if (nla_len(attr) == 4 || nla_len(attr) == 16)
		return 0;
	NL_SET_ERR_MSG_ATTR(extack, attr, "address must be 4 or 16 bytes");
	return -EINVAL;
}

static int maglev_validate_entries(const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	const u32 *e = nla_data(attr);
	int i, n = nla_len(attr) / sizeof(u32);

	if (!n || nla_len(attr) % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "entries must be a non-empty array of u32");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (e[i] > MAGLEV_GENL_BACKEND_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "entry is not a valid backend index");
			return -ERANGE;
		}
	}
	return 0;
}

/* Bounded-load marks: whole u32 words; index 0 is "no backend". */
static int maglev_validate_overcap(const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	const u32 *w = nla_data(attr);

	if (nla_len(attr) % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "over-cap marks must be an array of u32 words");
		return -EINVAL;
	}
	if (nla_len(attr) && (w[0] & 1)) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "backend index 0 cannot be marked over cap");
		return -EINVAL;
	}
	return 0;
}

static struct netlink_range_validation maglev_backend_range = {
	.min = 1,
	.max = MAGLEV_GENL_BACKEND_MAX,
};

static struct netlink_range_validation maglev_size_range = {
	.min = MAGLEV_GENL_TABLE_MIN,
	.max = MAGLEV_GENL_TABLE_MAX,
};

static struct netlink_range_validation maglev_offset_range = {
	.min = 0,
	.max = MAGLEV_GENL_TABLE_MAX - 1,
};

static const struct nla_policy maglev_policy[MAGLEV_A_MAX + 1] = {
	[MAGLEV_A_FAMILY] = { .type = NLA_U8 }, /* value: maglev_pre_doit() */
	[MAGLEV_A_ADDR] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, maglev_validate_addr, 16),
	[MAGLEV_A_PORT] = { .type = NLA_BE16 },
	[MAGLEV_A_PROTO] = { .type = NLA_U8 }, /* value: maglev_pre_doit() */
	[MAGLEV_A_ENCAP] = NLA_POLICY_MAX(NLA_U8, MAGLEV_ENCAP_GUE),
	[MAGLEV_A_GUE_PORT] = NLA_POLICY_MIN(NLA_BE16, 1),
	[MAGLEV_A_BACKEND_IDX] = NLA_POLICY_FULL_RANGE(NLA_U32, &maglev_backend_range),
	[MAGLEV_A_GEN] = { .type = NLA_U64 },
	[MAGLEV_A_TABLE_SIZE] = NLA_POLICY_FULL_RANGE(NLA_U32, &maglev_size_range),
	[MAGLEV_A_OFFSET] = NLA_POLICY_FULL_RANGE(NLA_U32, &maglev_offset_range),
	[MAGLEV_A_ENTRIES] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, maglev_validate_entries,
						    MAGLEV_GENL_CHUNK_MAX * sizeof(u32)),
	[MAGLEV_A_SEED_K0] = { .type = NLA_U64 },
	[MAGLEV_A_SEED_K1] = { .type = NLA_U64 },
	[MAGLEV_A_SRC4] = NLA_POLICY_EXACT_LEN(4),
	[MAGLEV_A_SRC6] = NLA_POLICY_EXACT_LEN(16),
	[MAGLEV_A_SADDR] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, maglev_validate_addr, 16),
	[MAGLEV_A_SPORT] = { .type = NLA_BE16 },
	/* Reply-only attributes are refused in requests. */
	[MAGLEV_A_TABLE_GEN] = { .type = NLA_REJECT },
	[MAGLEV_A_SLOT] = { .type = NLA_REJECT },
	[MAGLEV_A_PACKETS] = { .type = NLA_REJECT },
	[MAGLEV_A_BYTES] = { .type = NLA_REJECT },
	[MAGLEV_A_STATS] = { .type = NLA_REJECT },
	[MAGLEV_A_PAD] = { .type = NLA_REJECT },
	[MAGLEV_A_SRC4_PLEN] = NLA_POLICY_RANGE(NLA_U8, 1, 32),
	[MAGLEV_A_SRC6_PLEN] = NLA_POLICY_RANGE(NLA_U8, 1, 128),
	[MAGLEV_A_DROPS] = { .type = NLA_REJECT },
	[MAGLEV_A_PREV_ENTRIES] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, maglev_validate_entries,
							 MAGLEV_GENL_CHUNK_MAX * sizeof(u32)),
	[MAGLEV_A_PREV_IDX] = { .type = NLA_REJECT },
	[MAGLEV_A_OVERCAP] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, maglev_validate_overcap,
						    MAGLEV_GENL_OVERCAP_MAX),
};

static int maglev_get_addr(struct genl_info *info, int attrtype, u8 family,
			   union maglev_addr *addr)
{
	struct nlattr *attr = info->attrs[attrtype];
	int len = family == MAGLEV_AF_INET ? 4 : 16;

	if (nla_len(attr) != len) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "address length does not match family");
		return -EINVAL;
	}
	memset(addr, 0, sizeof(*addr));
	memcpy(addr, nla_data(attr), len);
	return 0;
}

static int maglev_get_vip_key(struct genl_info *info, struct maglev_vip_key *key)
{
	union maglev_addr addr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_FAMILY) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_ADDR) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_PROTO))
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	key->family = nla_get_u8(info->attrs[MAGLEV_A_FAMILY]);
	err = maglev_get_addr(info, MAGLEV_A_ADDR, key->family, &addr);
	if (err)
		return err;
	memcpy(key->addr, addr.words, sizeof(key->addr));
	key->proto = nla_get_u8(info->attrs[MAGLEV_A_PROTO]);
	if (info->attrs[MAGLEV_A_PORT])
		key->port = nla_get_be16(info->attrs[MAGLEV_A_PORT]);
	return 0;
}

static int maglev_put_vip_key(struct sk_buff *msg, const struct maglev_vip_key *key)
{
	int len = key->family == MAGLEV_AF_INET ? 4 : 16;

	if (nla_put_u8(msg, MAGLEV_A_FAMILY, key->family) ||
	    nla_put(msg, MAGLEV_A_ADDR, len, key->addr) ||
	    nla_put_be16(msg, MAGLEV_A_PORT, key->port) ||
	    nla_put_u8(msg, MAGLEV_A_PROTO, key->proto))
		return -EMSGSIZE;
	return 0;
}

/* Look up the VIP a request names; NULL with extack and *err set if absent. */
static struct maglev_vip *maglev_req_vip(struct maglev_net *mn, struct genl_info *info, int *err)
{
	struct maglev_vip_key key;
	struct maglev_vip *vip;

	*err = maglev_get_vip_key(info, &key);
	if (*err)
		return NULL;
	vip = maglev_sp_vip_find(mn, &key);
	if (!vip) {
		NL_SET_ERR_MSG(info->extack, "no such VIP");
		*err = -ENOENT;
	}
	return vip;
}

static int maglev_cmd_config_set(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	struct maglev_settings cfg = {};
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_SEED_K0) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_SEED_K1))
		return -EINVAL;
	cfg.seed.k0 = nla_get_u64(info->attrs[MAGLEV_A_SEED_K0]);
	cfg.seed.k1 = nla_get_u64(info->attrs[MAGLEV_A_SEED_K1]);
	cfg.src4_plen = 32;
	cfg.src6_plen = 128;
	if (info->attrs[MAGLEV_A_SRC4])
		cfg.src4 = nla_get_in_addr(info->attrs[MAGLEV_A_SRC4]);
	if (info->attrs[MAGLEV_A_SRC6])
		cfg.src6 = nla_get_in6_addr(info->attrs[MAGLEV_A_SRC6]);
	/* A prefix length only qualifies a source address given with it. */
	if (info->attrs[MAGLEV_A_SRC4_PLEN]) {
		if (!cfg.src4) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MAGLEV_A_SRC4_PLEN],
					    "SRC4_PLEN needs a non-zero SRC4");
			return -EINVAL;
		}
		cfg.src4_plen = nla_get_u8(info->attrs[MAGLEV_A_SRC4_PLEN]);
	}
	if (info->attrs[MAGLEV_A_SRC6_PLEN]) {
		if (ipv6_addr_any(&cfg.src6)) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MAGLEV_A_SRC6_PLEN],
					    "SRC6_PLEN needs a non-zero SRC6");
			return -EINVAL;
		}
		cfg.src6_plen = nla_get_u8(info->attrs[MAGLEV_A_SRC6_PLEN]);
	}
	mutex_lock(&mn->lock);
	err = maglev_config_set(mn, &cfg);
	mutex_unlock(&mn->lock);
	return err;
}

static int maglev_cmd_config_get(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	const struct maglev_settings *cfg;
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &maglev_genl_family, 0, MAGLEV_CMD_CONFIG_GET);
	if (!hdr)
		goto nospace;
	mutex_lock(&mn->lock);
	cfg = rcu_dereference_protected(mn->cfg, lockdep_is_held(&mn->lock));
	if (nla_put_u64_64bit(msg, MAGLEV_A_SEED_K0, cfg->seed.k0, MAGLEV_A_PAD) ||
	    nla_put_u64_64bit(msg, MAGLEV_A_SEED_K1, cfg->seed.k1, MAGLEV_A_PAD) ||
	    (cfg->src4 && (nla_put_in_addr(msg, MAGLEV_A_SRC4, cfg->src4) ||
			   nla_put_u8(msg, MAGLEV_A_SRC4_PLEN, cfg->src4_plen))) ||
	    (!ipv6_addr_any(&cfg->src6) &&
	     (nla_put_in6_addr(msg, MAGLEV_A_SRC6, &cfg->src6) ||
	      nla_put_u8(msg, MAGLEV_A_SRC6_PLEN, cfg->src6_plen)))) {
		mutex_unlock(&mn->lock);
		goto nospace;
	}
	mutex_unlock(&mn->lock);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int maglev_cmd_vip_set(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct maglev_net *mn = maglev_pernet(net);
	struct maglev_vip_key key;
	u32 params;
	u8 encap;
	int err;

	err = maglev_get_vip_key(info, &key);
	if (err)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_ENCAP))
		return -EINVAL;
	encap = nla_get_u8(info->attrs[MAGLEV_A_ENCAP]);
	params = encap;
	if (encap == MAGLEV_ENCAP_GUE) {
		if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_GUE_PORT))
			return -EINVAL;
		params |= (u32)ntohs(nla_get_be16(info->attrs[MAGLEV_A_GUE_PORT])) << 16;
	} else if (info->attrs[MAGLEV_A_GUE_PORT]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MAGLEV_A_GUE_PORT],
				    "GUE port given for an IPIP VIP");
		return -EINVAL;
	}
	mutex_lock(&mn->lock);
	err = maglev_vip_set(net, &key, params, info->extack);
	mutex_unlock(&mn->lock);
	return err;
}

static int maglev_cmd_vip_del(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct maglev_net *mn = maglev_pernet(net);
	struct maglev_vip_key key;
	int err;

	err = maglev_get_vip_key(info, &key);
	if (err)
		return err;
	mutex_lock(&mn->lock);
	err = maglev_vip_del(net, &key);
	mutex_unlock(&mn->lock);
	if (err == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "no such VIP");
	return err;
}

static int maglev_fill_vip(struct sk_buff *msg, u32 portid, u32 seq, int flags,
			   const struct maglev_vip *vip)
{
	const struct maglev_table *t;
	u64 packets = 0, bytes = 0, drops = 0;
	void *hdr;
	int cpu;

	hdr = genlmsg_put(msg, portid, seq, &maglev_genl_family, flags, MAGLEV_CMD_VIP_GET);
	if (!hdr)
		return -EMSGSIZE;
	for_each_possible_cpu(cpu) {
		const struct maglev_vip_pcpu *s = per_cpu_ptr(vip->stats, cpu);

		packets += READ_ONCE(s->packets);
		bytes += READ_ONCE(s->bytes);
		drops += READ_ONCE(s->drops);
	}
	t = rcu_dereference_protected(vip->table, true);
	if (maglev_put_vip_key(msg, &vip->key) ||
	    nla_put_u8(msg, MAGLEV_A_ENCAP, maglev_vip_encap(vip->params)) ||
	    (maglev_vip_encap(vip->params) == MAGLEV_ENCAP_GUE &&
	     nla_put_be16(msg, MAGLEV_A_GUE_PORT, maglev_vip_gue_port(vip->params))) ||
	    (t && (nla_put_u64_64bit(msg, MAGLEV_A_TABLE_GEN, t->gen, MAGLEV_A_PAD) ||
		   nla_put_u32(msg, MAGLEV_A_TABLE_SIZE, t->size))) ||
	    nla_put_u64_64bit(msg, MAGLEV_A_PACKETS, packets, MAGLEV_A_PAD) ||
	    nla_put_u64_64bit(msg, MAGLEV_A_BYTES, bytes, MAGLEV_A_PAD) ||
	    nla_put_u64_64bit(msg, MAGLEV_A_DROPS, drops, MAGLEV_A_PAD)) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static int maglev_cmd_vip_get(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	struct maglev_vip *vip;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&mn->lock);
	vip = maglev_req_vip(mn, info, &err);
	if (vip)
		err = maglev_fill_vip(msg, info->snd_portid, info->snd_seq, 0, vip);
	mutex_unlock(&mn->lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* cb->args[0]: hash bucket, cb->args[1]: entries of it already sent. */
static int maglev_dump_vips(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct maglev_net *mn = maglev_pernet(sock_net(skb->sk));
	unsigned long bucket, skip, i;
	struct maglev_vip *vip;

	mutex_lock(&mn->lock);
	for (bucket = cb->args[0]; bucket < ARRAY_SIZE(mn->vips); bucket++) {
		skip = bucket == cb->args[0] ? cb->args[1] : 0;
		i = 0;
		hlist_for_each_entry(vip, &mn->vips[bucket], node) {
			if (i++ < skip)
				continue;
			if (maglev_fill_vip(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
					    NLM_F_MULTI, vip)) {
				cb->args[0] = bucket;
				cb->args[1] = i - 1;
				goto out;
			}
		}
	}
	cb->args[0] = bucket;
	cb->args[1] = 0;
out:
	mutex_unlock(&mn->lock);
	return skb->len;
}

static int maglev_cmd_backend_set(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	union maglev_addr addr;
	u8 family;
	u32 idx;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_BACKEND_IDX) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_FAMILY) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_ADDR))
		return -EINVAL;
	idx = nla_get_u32(info->attrs[MAGLEV_A_BACKEND_IDX]);
	family = nla_get_u8(info->attrs[MAGLEV_A_FAMILY]);
	err = maglev_get_addr(info, MAGLEV_A_ADDR, family, &addr);
	if (err)
		return err;
	mutex_lock(&mn->lock);
	err = maglev_backend_set(mn, idx, family, &addr);
	mutex_unlock(&mn->lock);
	return err;
}

static int maglev_cmd_backend_del(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_BACKEND_IDX))
		return -EINVAL;
	mutex_lock(&mn->lock);
	err = maglev_backend_del(mn, nla_get_u32(info->attrs[MAGLEV_A_BACKEND_IDX]));
	mutex_unlock(&mn->lock);
	if (err == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "no such backend");
	return err;
}

static int maglev_fill_backend(struct sk_buff *msg, u32 portid, u32 seq, int flags, u32 idx,
			       const struct maglev_backend_entry *be)
{
	void *hdr;

	hdr = genlmsg_put(msg, portid, seq, &maglev_genl_family, flags, MAGLEV_CMD_BACKEND_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(msg, MAGLEV_A_BACKEND_IDX, idx) ||
	    nla_put_u8(msg, MAGLEV_A_FAMILY, be->family) ||
	    nla_put(msg, MAGLEV_A_ADDR, be->family == MAGLEV_AF_INET ? 4 : 16, &be->addr)) {
		genlmsg_cancel(msg, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return 0;
}

static int maglev_cmd_backend_get(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	const struct maglev_backend_entry *be;
	struct sk_buff *msg;
	u32 idx;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_BACKEND_IDX))
		return -EINVAL;
	idx = nla_get_u32(info->attrs[MAGLEV_A_BACKEND_IDX]);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&mn->lock);
	be = xa_load(&mn->backends, idx);
	if (be) {
		err = maglev_fill_backend(msg, info->snd_portid, info->snd_seq, 0, idx, be);
	} else {
		NL_SET_ERR_MSG(info->extack, "no such backend");
		err = -ENOENT;
	}
	mutex_unlock(&mn->lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/* cb->args[0]: the next backend index to send. */
static int maglev_dump_backends(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct maglev_net *mn = maglev_pernet(sock_net(skb->sk));
	const struct maglev_backend_entry *be;
	unsigned long idx;

	mutex_lock(&mn->lock);
	xa_for_each_start(&mn->backends, idx, be, cb->args[0]) {
		if (maglev_fill_backend(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
					NLM_F_MULTI, idx, be))
			break;
		cb->args[0] = idx + 1;
	}
	mutex_unlock(&mn->lock);
	return skb->len;
}

static int maglev_cmd_table_begin(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	struct maglev_vip *vip;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_GEN) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_TABLE_SIZE))
		return -EINVAL;
	mutex_lock(&mn->lock);
	vip = maglev_req_vip(mn, info, &err);
	if (vip)
		err = maglev_table_begin(vip, nla_get_u64(info->attrs[MAGLEV_A_GEN]),
					 nla_get_u32(info->attrs[MAGLEV_A_TABLE_SIZE]));
	mutex_unlock(&mn->lock);
	return err;
}

static int maglev_cmd_table_chunk(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	struct nlattr *ents, *prev;
	struct maglev_vip *vip;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_GEN) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_OFFSET) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_ENTRIES))
		return -EINVAL;
	ents = info->attrs[MAGLEV_A_ENTRIES];
	prev = info->attrs[MAGLEV_A_PREV_ENTRIES];
	/* One previous owner per slot of the chunk. */
	if (prev && nla_len(prev) != nla_len(ents)) {
		NL_SET_ERR_MSG_ATTR(info->extack, prev,
				    "previous owners must be as many as the entries");
		return -EINVAL;
	}
	mutex_lock(&mn->lock);
	vip = maglev_req_vip(mn, info, &err);
	if (vip)
		err = maglev_table_chunk(vip, nla_get_u64(info->attrs[MAGLEV_A_GEN]),
					 nla_get_u32(info->attrs[MAGLEV_A_OFFSET]),
					 nla_data(ents), prev ? nla_data(prev) : NULL,
					 nla_len(ents) / sizeof(u32), info->extack);
	mutex_unlock(&mn->lock);
	return err;
}

static int maglev_cmd_table_commit(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	struct maglev_vip *vip;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_GEN))
		return -EINVAL;
	mutex_lock(&mn->lock);
	vip = maglev_req_vip(mn, info, &err);
	if (vip)
		err = maglev_table_commit(vip, nla_get_u64(info->attrs[MAGLEV_A_GEN]),
					  info->extack);
	mutex_unlock(&mn->lock);
	return err;
}

/* Replace the namespace's bounded-load marks; no OVERCAP: none marked. */
static int maglev_cmd_overcap_set(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	struct nlattr *marks = info->attrs[MAGLEV_A_OVERCAP];
	int err;

	mutex_lock(&mn->lock);
	err = maglev_overcap_set(mn, marks ? nla_data(marks) : NULL,
				 marks ? nla_len(marks) / sizeof(u32) : 0);
	mutex_unlock(&mn->lock);
	return err;
}

/* The hook's choice for a flow, from the hook's own maglev_sp_pick(). */
static int maglev_cmd_lookup(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	struct maglev_flow fl = {};
	struct maglev_sp_pick p;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MAGLEV_A_FAMILY) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_SADDR) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_ADDR) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_SPORT) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_PORT) ||
	    GENL_REQ_ATTR_CHECK(info, MAGLEV_A_PROTO))
		return -EINVAL;
	fl.family = nla_get_u8(info->attrs[MAGLEV_A_FAMILY]);
	err = maglev_get_addr(info, MAGLEV_A_SADDR, fl.family, &fl.saddr);
	if (!err)
		err = maglev_get_addr(info, MAGLEV_A_ADDR, fl.family, &fl.daddr);
	if (err)
		return err;
	fl.sport = nla_get_be16(info->attrs[MAGLEV_A_SPORT]);
	fl.dport = nla_get_be16(info->attrs[MAGLEV_A_PORT]);
	fl.proto = nla_get_u8(info->attrs[MAGLEV_A_PROTO]);
	/* The answer for the packet that opens the flow (a TCP SYN). */
	fl.syn = fl.proto == IPPROTO_TCP;

	rcu_read_lock();
	err = maglev_sp_pick(mn, &fl, &p);
	rcu_read_unlock();
	/* p holds only plain values now; an empty slot still has an answer. */
	if (err == -ENOENT) {
		NL_SET_ERR_MSG(info->extack, "no VIP matches the flow");
		return err;
	}
	if (err == -ENODATA) {
		NL_SET_ERR_MSG(info->extack, "VIP has no table");
		return err;
	}

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &maglev_genl_family, 0, MAGLEV_CMD_LOOKUP);
	if (!hdr || nla_put_u32(msg, MAGLEV_A_BACKEND_IDX, p.idx) ||
	    nla_put_u32(msg, MAGLEV_A_SLOT, p.slot) ||
	    nla_put_u64_64bit(msg, MAGLEV_A_TABLE_GEN, p.gen, MAGLEV_A_PAD) ||
	    nla_put_u32(msg, MAGLEV_A_PREV_IDX, p.prev_idx)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int maglev_cmd_stats_get(struct sk_buff *skb, struct genl_info *info)
{
	struct maglev_net *mn = maglev_pernet(genl_info_net(info));
	u64 sum[__MAGLEV_STAT_MAX] = {};
	struct nlattr *nest;
	struct sk_buff *msg;
	int cpu, i;
	void *hdr;

	for_each_possible_cpu(cpu) {
		const struct maglev_pcpu_stats *s = per_cpu_ptr(mn->stats, cpu);

		for (i = 0; i < __MAGLEV_STAT_MAX; i++)
			sum[i] += READ_ONCE(s->cnt[i]);
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &maglev_genl_family, 0, MAGLEV_CMD_STATS_GET);
	if (!hdr)
		goto nospace;
	nest = nla_nest_start(msg, MAGLEV_A_STATS);
	if (!nest)
		goto nospace;
	for (i = MAGLEV_STAT_UNSPEC + 1; i < __MAGLEV_STAT_MAX; i++) {
		if (i == MAGLEV_STAT_PAD)
			continue;
		if (nla_put_u64_64bit(msg, i, sum[i], MAGLEV_STAT_PAD))
			goto nospace;
	}
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct genl_ops maglev_genl_ops[] = {
	{
		.cmd = MAGLEV_CMD_CONFIG_SET,
		.doit = maglev_cmd_config_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		/* The seed keys the flow hash: not for unprivileged eyes. */
		.cmd = MAGLEV_CMD_CONFIG_GET,
		.doit = maglev_cmd_config_get,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_VIP_SET,
		.doit = maglev_cmd_vip_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_VIP_DEL,
		.doit = maglev_cmd_vip_del,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_VIP_GET,
		.doit = maglev_cmd_vip_get,
		.dumpit = maglev_dump_vips,
	},
	{
		.cmd = MAGLEV_CMD_BACKEND_SET,
		.doit = maglev_cmd_backend_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_BACKEND_DEL,
		.doit = maglev_cmd_backend_del,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_BACKEND_GET,
		.doit = maglev_cmd_backend_get,
		.dumpit = maglev_dump_backends,
	},
	{
		.cmd = MAGLEV_CMD_TABLE_BEGIN,
		.doit = maglev_cmd_table_begin,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_TABLE_CHUNK,
		.doit = maglev_cmd_table_chunk,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_TABLE_COMMIT,
		.doit = maglev_cmd_table_commit,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_LOOKUP,
		.doit = maglev_cmd_lookup,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = MAGLEV_CMD_STATS_GET,
		.doit = maglev_cmd_stats_get,
	},
	{
		.cmd = MAGLEV_CMD_OVERCAP_SET,
		.doit = maglev_cmd_overcap_set,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family maglev_genl_family __ro_after_init = {
	.name = MAGLEV_GENL_NAME,
	.version = MAGLEV_GENL_VERSION,
	.maxattr = MAGLEV_A_MAX,
	.policy = maglev_policy,
	.pre_doit = maglev_pre_doit,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = maglev_genl_ops,
	.n_ops = ARRAY_SIZE(maglev_genl_ops),
	/* Strict checks (reserved header field, policies) for every command. */
	.resv_start_op = MAGLEV_CMD_CONFIG_SET,
};

int maglev_genl_register(void)
{
	return genl_register_family(&maglev_genl_family);
}

void maglev_genl_unregister(void)
{
	genl_unregister_family(&maglev_genl_family);
}
