// SPDX-License-Identifier: GPL-2.0-only
/*
 * Netfilter PRE_ROUTING hooks for IPv4 and IPv6. They run right after the
 * kernel's defragmentation (nf_defrag_ipv4/ipv6, enabled for the namespace
 * with the hooks), so every packet seen here is whole and has its ports:
 * the case an XDP program cannot handle. A packet to a configured VIP is
 * hashed with the XDP program's flow hash, looked up in the same Maglev
 * table, encapsulated and sent; so is an ICMP error about a VIP flow, to
 * the backend of that flow. Anything else is left alone.
 */
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/netfilter/ipv4/nf_defrag_ipv4.h>
#include <net/netfilter/ipv6/nf_defrag_ipv6.h>

#include "maglev.h"

/* SYN without ACK, as the XDP program's maglev_is_syn(). */
static bool maglev_tcp_syn(const struct sk_buff *skb, int thoff)
{
	const struct tcphdr *th;
	struct tcphdr _th;

	th = skb_header_pointer(skb, thoff, sizeof(_th), &_th);
	return th && th->syn && !th->ack;
}

static unsigned int maglev_forward(struct net *net, struct maglev_net *mn, struct sk_buff *skb,
				   const struct maglev_flow *fl)
{
	struct maglev_sp_pick p;
	int err;

	err = maglev_sp_pick(mn, fl, &p);
	if (err == -ENOENT)
		return NF_ACCEPT;
	if (err) {
		maglev_sp_count(mn, err == -ENODATA ? MAGLEV_STAT_NO_TABLE :
			     MAGLEV_STAT_NO_BACKEND, 1);
		this_cpu_inc(p.vip->stats->drops);
		return NF_DROP;
	}
	maglev_xmit(net, mn, &p, fl, skb);
	return NF_STOLEN;
}

/*
 * An ICMP error whose quote is a VIP's packet toward a client (the backend's
 * DSR reply): the quoted tuple reversed is the client's flow, which goes to
 * the backend that holds the connection, as in the XDP program's
 * maglev_icmp4/6. The error must be addressed to the VIP it quotes.
 */
static unsigned int maglev_icmp_forward(struct net *net, struct maglev_net *mn,
					struct sk_buff *skb, struct maglev_flow *fl, int qoff,
					u8 qproto)
{
	__be16 _ports[2];
	const __be16 *ports;

	if (qproto != IPPROTO_TCP && qproto != IPPROTO_UDP)
		return NF_ACCEPT;
	ports = skb_header_pointer(skb, qoff, sizeof(_ports), _ports);
	if (!ports)
		return NF_ACCEPT;
	fl->sport = ports[1];
	fl->dport = ports[0];
	fl->proto = qproto;
	fl->icmp = true;
	return maglev_forward(net, mn, skb, fl);
}

static unsigned int maglev_icmp4(struct net *net, struct maglev_net *mn, struct sk_buff *skb)
{
	struct maglev_flow fl = { .family = MAGLEV_AF_INET };
	const struct iphdr *iph = ip_hdr(skb), *q;
	const struct icmphdr *ic;
	struct icmphdr _ic;
	struct iphdr _q;
	int off;

	off = ip_hdrlen(skb);
	ic = skb_header_pointer(skb, off, sizeof(_ic), &_ic);
	if (!ic || (ic->type != ICMP_DEST_UNREACH && ic->type != ICMP_TIME_EXCEEDED))
		return NF_ACCEPT;
	off += sizeof(_ic);
	q = skb_header_pointer(skb, off, sizeof(_q), &_q);
	/* Options in the quote are skipped; a non-first fragment has no ports. */
	if (!q || q->version != 4 || q->ihl < 5 || q->saddr != iph->daddr ||
	    (q->frag_off & htons(IP_OFFSET)))
		return NF_ACCEPT;
	fl.saddr.v4 = q->daddr;
	fl.daddr.v4 = q->saddr;
	return maglev_icmp_forward(net, mn, skb, &fl, off + q->ihl * 4, q->protocol);
}

static unsigned int maglev_icmp6(struct net *net, struct maglev_net *mn, struct sk_buff *skb,
				 int off)
{
	struct maglev_flow fl = { .family = MAGLEV_AF_INET6 };
	const struct ipv6hdr *ip6h = ipv6_hdr(skb), *q;
	const struct icmp6hdr *ic;
	struct icmp6hdr _ic;
	struct ipv6hdr _q;
	__be16 frag_off;
	u8 nexthdr;
	int qoff;

	ic = skb_header_pointer(skb, off, sizeof(_ic), &_ic);
	if (!ic || (ic->icmp6_type != ICMPV6_DEST_UNREACH &&
		    ic->icmp6_type != ICMPV6_PKT_TOOBIG && ic->icmp6_type != ICMPV6_TIME_EXCEED))
		return NF_ACCEPT;
	off += sizeof(_ic);
	q = skb_header_pointer(skb, off, sizeof(_q), &_q);
	if (!q || q->version != 6 || !ipv6_addr_equal(&q->saddr, &ip6h->daddr))
		return NF_ACCEPT;
	/* Extension headers in the quote are walked, as for a packet. */
	nexthdr = q->nexthdr;
	qoff = ipv6_skip_exthdr(skb, off + sizeof(_q), &nexthdr, &frag_off);
	if (qoff < 0 || (frag_off & htons(IP6_OFFSET)))
		return NF_ACCEPT;
	fl.saddr.v6 = q->daddr;
	fl.daddr.v6 = q->saddr;
	return maglev_icmp_forward(net, mn, skb, &fl, qoff, nexthdr);
}

static unsigned int maglev_hook_v4(void *priv, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	struct maglev_net *mn = maglev_pernet(state->net);
	struct maglev_flow fl = { .family = MAGLEV_AF_INET };
	const struct iphdr *iph;
	__be16 _ports[2];
	const __be16 *ports;

	if (!READ_ONCE(mn->nr_vips))
		return NF_ACCEPT;
	iph = ip_hdr(skb);
	/* Defragmentation ran before us; a fragment here was not reassembled. */
	if (ip_is_fragment(iph))
		return NF_ACCEPT;
	if (iph->protocol == IPPROTO_ICMP)
		return maglev_icmp4(state->net, mn, skb);
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return NF_ACCEPT;
	/* ip_rcv validated ihl and tot_len; options are simply skipped. */
	ports = skb_header_pointer(skb, ip_hdrlen(skb), sizeof(_ports), _ports);
	if (!ports)
		return NF_ACCEPT;
	fl.saddr.v4 = iph->saddr;
	fl.daddr.v4 = iph->daddr;
	fl.sport = ports[0];
	fl.dport = ports[1];
	fl.proto = iph->protocol;
	fl.syn = fl.proto == IPPROTO_TCP && maglev_tcp_syn(skb, ip_hdrlen(skb));
	return maglev_forward(state->net, mn, skb, &fl);
}

static unsigned int maglev_hook_v6(void *priv, struct sk_buff *skb,
				   const struct nf_hook_state *state)
{
	struct maglev_net *mn = maglev_pernet(state->net);
	struct maglev_flow fl = { .family = MAGLEV_AF_INET6 };
	const struct ipv6hdr *ip6h;
	__be16 _ports[2], frag_off;
	const __be16 *ports;
	u8 nexthdr;
	int thoff;

	if (!READ_ONCE(mn->nr_vips))
		return NF_ACCEPT;
	ip6h = ipv6_hdr(skb);
	nexthdr = ip6h->nexthdr;
	/*
	 * Walk hop-by-hop, routing and destination-options headers. A fragment
	 * header left here (other than an atomic fragment) means reassembly
	 * did not happen: leave that packet to the stack.
	 */
	thoff = ipv6_skip_exthdr(skb, sizeof(*ip6h), &nexthdr, &frag_off);
	if (thoff < 0 || (frag_off & htons(IP6_OFFSET | IP6_MF)))
		return NF_ACCEPT;
	if (nexthdr == IPPROTO_ICMPV6)
		return maglev_icmp6(state->net, mn, skb, thoff);
	if (nexthdr != IPPROTO_TCP && nexthdr != IPPROTO_UDP)
		return NF_ACCEPT;
	ports = skb_header_pointer(skb, thoff, sizeof(_ports), _ports);
	if (!ports)
		return NF_ACCEPT;
	fl.saddr.v6 = ip6h->saddr;
	fl.daddr.v6 = ip6h->daddr;
	fl.sport = ports[0];
	fl.dport = ports[1];
	fl.proto = nexthdr;
	fl.syn = fl.proto == IPPROTO_TCP && maglev_tcp_syn(skb, thoff);
	return maglev_forward(state->net, mn, skb, &fl);
}

static const struct nf_hook_ops maglev_nf_ops[] = {
	{
		.hook = maglev_hook_v4,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP_PRI_CONNTRACK_DEFRAG + 1,
	},
	{
		.hook = maglev_hook_v6,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP6_PRI_CONNTRACK_DEFRAG + 1,
	},
};

int maglev_hooks_enable(struct net *net)
{
	int err;

	err = nf_defrag_ipv4_enable(net);
	if (err)
		return err;
	err = nf_defrag_ipv6_enable(net);
	if (err)
		goto err_v4;
	err = nf_register_net_hooks(net, maglev_nf_ops, ARRAY_SIZE(maglev_nf_ops));
	if (err)
		goto err_v6;
	return 0;

err_v6:
	nf_defrag_ipv6_disable(net);
err_v4:
	nf_defrag_ipv4_disable(net);
	return err;
}

/* Hooks first; the caller waits for a grace period before freeing state. */
void maglev_hooks_disable(struct net *net)
{
	nf_unregister_net_hooks(net, maglev_nf_ops, ARRAY_SIZE(maglev_nf_ops));
	nf_defrag_ipv6_disable(net);
	nf_defrag_ipv4_disable(net);
}
