/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Layouts of the BPF maps that the XDP program, maglevd and maglevctl share.
 * All addresses and ports are in network byte order, as in the packet, so
 * the datapath never converts. IPv4 addresses live in addr[0], the rest 0.
 */
#ifndef MAGLEV_MAPS_H
#define MAGLEV_MAPS_H

#include <linux/types.h>

/* Lookup table size of every VIP in the datapath (prime). */
#define MAGLEV_TABLE_SIZE 65537
#define MAGLEV_MAX_VIPS	  512
/* Backend slots, shared by all VIPs. Index 0 is never used: 0 means "none". */
#define MAGLEV_MAX_BACKENDS 65536
/* Default connection-table size; maglevd may size it at load time. */
#define MAGLEV_CONN_TABLE_SIZE (1 << 20)

/* Where maglevd pins the maps and links, so a restarted daemon adopts them. */
#define MAGLEV_PIN_DIR "/sys/fs/bpf/maglev"

/* Ethernet family numbers (AF_INET, AF_INET6) without pulling in libc. */
#define MAGLEV_AF_INET	2
#define MAGLEV_AF_INET6 10

struct maglev_vip_key {
	__u32 addr[4];
	__u16 port;  /* 0: the "all ports" VIP of that address and protocol */
	__u8 proto;  /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 family; /* MAGLEV_AF_INET or MAGLEV_AF_INET6 */
};

enum maglev_encap {
	MAGLEV_ENCAP_IPIP = 0, /* IPIP / IPv6-in-IPv6 / the mixed pairs, by backend family */
	MAGLEV_ENCAP_GUE = 1,  /* UDP + GUE header, then the inner IP packet */
};

struct maglev_vip_info {
	__u32 vip_id; /* index into maglev_tables and maglev_vip_stats */
	__u8 encap;   /* enum maglev_encap */
	__u8 flags;
	__u16 gue_port; /* GUE destination port, network order */
};

/* Backend usable for new flows (it is in the table) or only for flows it
 * already has (draining). A backend that is down or deleted has neither bit
 * and its established flows are re-picked.
 */
#define MAGLEV_BACKEND_F_UP    (1 << 0)
#define MAGLEV_BACKEND_F_DRAIN (1 << 1)

struct maglev_backend {
	__u32 addr[4];
	__u8 family;
	__u8 flags; /* MAGLEV_BACKEND_F_* */
#ifdef MAGLEV_LAYOUT_VARIANT
	__u16 spare; /* the upgrade test's other layout: same size, other BTF */
#else
	__u16 pad;
#endif
	/* Bumped every time this index is given to a different backend, so a
	 * connection-table entry recorded for the old one is never reused.
	 */
	__u32 gen;
};

/* Connection-table key: the client's 5-tuple toward the VIP. */
struct maglev_flow_key {
	__u32 src[4];
	__u32 dst[4];
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 family;
	__u16 pad;
};

struct maglev_conn {
	__u32 backend_idx;
	__u32 backend_gen;
	__u64 last_seen_ns; /* bpf_ktime_get_ns() of a recent packet; UDP idle expiry */
};

/* The least mtu an IPv6 VIP works with: its clients cannot take a
 * packet-too-big below IPv6's minimum MTU (1280, RFC 8200), and the outer
 * headers add up to 52 bytes (IPv6 40 + UDP 8 + GUE 4).
 */
#define MAGLEV_MTU_MIN_IPV6 (1280 + 40 + 8 + 4)

/* maglevd's default new_flow_limit (inserts per second per CPU): Katran's
 * figure, a few times what one CPU records at full load here (a new flow
 * costs 300-700 ns), far above a legitimate peak per CPU; above it a flood
 * is still forwarded, unrecorded, and cannot churn the table faster than
 * this per CPU (docs/operations.md).
 */
#define MAGLEV_NEW_FLOW_LIMIT_DEFAULT 125000

/* maglevd's default slow_path_limit (packets per second per CPU sent up to
 * the slow path: fragments, options, extension headers, too big without DF;
 * bpf/xdp_slowpath_budget.h). Legitimate traffic of that kind is rare (well
 * under 1 % of a CPU's 1-3 Mpps); each costs the stack a few microseconds
 * (reassembly, the module's hook, its encapsulation), so 20,000 per CPU
 * caps a flood at roughly a tenth of each CPU while leaving a tenfold
 * margin over 1 % of a busy CPU's packets (docs/operations.md).
 */
#define MAGLEV_SLOW_PATH_LIMIT_DEFAULT 20000

/* Global configuration, one element of an array map written by maglevd. */
struct maglev_config {
	__u64 seed_k0;
	__u64 seed_k1;
	__u8 nexthop_mac[6]; /* destination MAC of every encapsulated frame */
	__u8 src_mac[6];     /* the interface's own MAC */
	__u32 src4_prefix;   /* outer IPv4 source prefix, network order */
	__u32 src4_plen;
	__u32 src6_prefix[4]; /* outer IPv6 source prefix */
	__u32 src6_plen;
	__u32 mtu;	       /* largest outer IP packet (L3 bytes) the path carries */
	__u32 new_flow_limit;  /* new-flow inserts per second per CPU; 0: unlimited */
	__u64 udp_idle_ns;     /* a UDP flow idle this long is re-picked */
	__u32 slow_path_limit; /* slow-path packets per second per CPU; 0: unlimited */
	/* Nonzero: some maglev_ifl2 entry holds a pair other than
	 * nexthop_mac/src_mac, so a frame's interface must be looked up; 0:
	 * every entry says what this config says, and the datapath skips the
	 * hash lookup (the hot path's largest single cost). Kept by the library
	 * (maglev_dp_set_config, maglev_dp_if_l2_set/_delete), whatever the
	 * caller passes.
	 */
	__u32 if_l2_differs;
};

/*
 * Ethernet addresses of the frames leaving one interface, keyed by its
 * ifindex (maglev_ifl2, written by maglevd for every interface it attaches
 * to): the XDP program sends a frame back out of the interface it came in
 * on, the health checks' TC program out of the one the route chose, each
 * with that interface's own MAC and its own next hop. An interface without
 * an entry uses maglev_config's pair (the first interface's), and so does
 * every interface while maglev_config.if_l2_differs is 0.
 */
struct maglev_if_l2 {
	__u8 nexthop_mac[6];
	__u8 src_mac[6];
};

#define MAGLEV_MAX_IFACES 64

struct maglev_vip_stats {
	__u64 packets;
	__u64 bytes;
	__u64 new_flows;
};

struct maglev_backend_stats {
	__u64 packets;
	__u64 bytes;
	__u64 new_flows; /* flows this backend was picked for */
};

/*
 * What happened to a packet: every packet the balancer sees ends in exactly
 * one of these, counted per CPU in the reason map (index = enum value).
 * PASS_* go up the stack untouched, DROP_* are dropped, TX_* leave with
 * XDP_TX. X-macro so the enum and the names table cannot drift apart; the
 * first column is the reason's group. The action follows from the enum
 * order (TX, then PASS, then DROP: maglev_reason_action()), and a static
 * assertion per entry keeps each reason inside its group.
 */
#define MAGLEV_REASONS(X)                                                                          \
	X(TX, TX_FORWARD, "tx_forward")		  /* encapsulated toward the backend */            \
	X(TX, TX_ICMP_FORWARD, "tx_icmp_forward") /* ICMP error of a VIP flow, to its backend */   \
	X(TX, TX_ECHO_REPLY, "tx_echo_reply")	  /* echo request to a VIP answered */             \
	X(TX, TX_TOO_BIG, "tx_too_big")	      /* frag-needed / packet-too-big sent to client */    \
	X(PASS, PASS_NOT_IP, "pass_not_ip")   /* not IPv4/IPv6 (ARP, LLDP, ...) */                 \
	X(PASS, PASS_NOT_VIP, "pass_not_vip") /* destination is no VIP */                          \
	X(PASS, PASS_VLAN_DEPTH, "pass_vlan_depth") /* more than two VLAN tags */                  \
	X(PASS, PASS_L4_PROTO, "pass_l4_proto")	    /* VIP address, protocol we do not balance */  \
	X(PASS, PASS_IP_FRAG, "pass_ip_frag")	    /* IPv4 fragment: kernel slow path */          \
	X(PASS, PASS_IP_OPTIONS, "pass_ip_options") /* ICMP with IPv4 options: slow path */        \
	X(PASS, PASS_IPV6_FRAG, "pass_ipv6_frag")   /* IPv6 fragment header: kernel slow path */   \
	X(PASS, PASS_IPV6_EXT, "pass_ipv6_ext")	  /* routing hdr, long chain, ICMPv6: slow path */ \
	X(PASS, PASS_NEED_FRAG, "pass_need_frag") /* too big after encap, no DF/options: kernel */ \
	X(PASS, PASS_ICMP, "pass_icmp")		  /* ICMP to a VIP address we do not handle */     \
	X(DROP, DROP_L2_TRUNC, "drop_l2_trunc")	  /* truncated Ethernet or VLAN header */          \
	X(DROP, DROP_L3_TRUNC, "drop_l3_trunc")	  /* truncated IPv4/IPv6 header */                 \
	X(DROP, DROP_L3_BAD, "drop_l3_bad")	  /* bad version, IHL or length fields */          \
	X(DROP, DROP_L4_TRUNC, "drop_l4_trunc")	  /* truncated TCP/UDP/ICMP header */              \
	X(DROP, DROP_L4_BAD, "drop_l4_bad")	  /* bad TCP data offset or UDP length */          \
	X(DROP, DROP_TTL, "drop_ttl")		  /* TTL / hop limit would reach 0 */              \
	X(DROP, DROP_NO_TABLE, "drop_no_table")	  /* VIP without a lookup table */                 \
	X(DROP, DROP_NO_BACKEND,                                                                   \
	  "drop_no_backend") /* empty slot or backend neither up nor draining */                   \
	X(DROP, DROP_ICMP_BAD,                                                                     \
	  "drop_icmp_bad")		    /* ICMP error with a truncated or bad inner header */  \
	X(DROP, DROP_ADJUST, "drop_adjust") /* bpf_xdp_adjust_head/tail refused */                 \
	X(DROP, DROP_SLOW_PATH, "drop_slow_path") /* slow-path packet over slow_path_limit */

#define MAGLEV_REASON_ENUM_(kind, name, str) MAGLEV_REASON_##name,
enum maglev_reason { MAGLEV_REASONS(MAGLEV_REASON_ENUM_) MAGLEV_REASON_MAX };
/* static const char *const names[MAGLEV_REASON_MAX] = MAGLEV_REASON_NAMES; */
#define MAGLEV_REASON_NAME_(kind, name, str) [MAGLEV_REASON_##name] = str,
#define MAGLEV_REASON_NAMES                         \
	{                                           \
		MAGLEV_REASONS(MAGLEV_REASON_NAME_) \
	}

/* The groups' bounds, and the action of a reason from its place. */
#define MAGLEV_REASON_FIRST_TX	 MAGLEV_REASON_TX_FORWARD
#define MAGLEV_REASON_FIRST_PASS MAGLEV_REASON_PASS_NOT_IP
#define MAGLEV_REASON_FIRST_DROP MAGLEV_REASON_DROP_L2_TRUNC
#define MAGLEV_REASON_END_TX	 MAGLEV_REASON_FIRST_PASS
#define MAGLEV_REASON_END_PASS	 MAGLEV_REASON_FIRST_DROP
#define MAGLEV_REASON_END_DROP	 MAGLEV_REASON_MAX
#define MAGLEV_REASON_IN_GROUP_(kind, name, str)                                \
	_Static_assert(MAGLEV_REASON_##name >= MAGLEV_REASON_FIRST_##kind &&    \
			       MAGLEV_REASON_##name < MAGLEV_REASON_END_##kind, \
		       #name ": a " #kind " reason outside the " #kind          \
			     " group of enum maglev_reason");
MAGLEV_REASONS(MAGLEV_REASON_IN_GROUP_)
_Static_assert(MAGLEV_REASON_FIRST_TX == 0, "TX reasons come first");

/* XDP_TX (3), XDP_PASS (2) or XDP_DROP (1) of a reason (the numbers of
 * enum xdp_action, which this header does not include).
 */
static inline __u32 maglev_reason_action(__u32 reason)
{
	return reason >= MAGLEV_REASON_FIRST_DROP ? 1 : reason >= MAGLEV_REASON_FIRST_PASS ? 2 : 3;
}

/* Connection-table and flow events, per CPU, beside the reasons. */
#define MAGLEV_COUNTERS(X)                                                                \
	X(CONN_HIT, "conn_hit")		/* established flow found its usable backend */   \
	X(CONN_MISS, "conn_miss")	/* no entry (or SYN): Maglev pick */              \
	X(CONN_REPICK, "conn_repick")	/* entry's backend unusable (flags/generation) */ \
	X(CONN_EXPIRED, "conn_expired") /* UDP entry idle longer than udp_idle_ns */      \
	X(CONN_INSERT, "conn_insert")	/* entry written */                               \
	X(CONN_INSERT_SKIP,                                                               \
	  "conn_insert_skip")	    /* above new_flow_limit: forwarded, not recorded */   \
	X(CONN_EVICT, "conn_evict") /* insert replaced another live flow */               \
	X(SC_CARRIED, "sc_carried") /* miss, not a SYN: previous owner carried in GUE */

#define MAGLEV_COUNTER_ENUM_(name, str) MAGLEV_CTR_##name,
enum maglev_counter { MAGLEV_COUNTERS(MAGLEV_COUNTER_ENUM_) MAGLEV_CTR_MAX };

#define MAGLEV_COUNTER_NAME_(name, str) [MAGLEV_CTR_##name] = str,
#define MAGLEV_COUNTER_NAMES                          \
	{                                             \
		MAGLEV_COUNTERS(MAGLEV_COUNTER_NAME_) \
	}

/*
 * VIP address filter, maintained by userspace/lib/dp_vips.c next to the VIP
 * map: an array of MAGLEV_VIP_FILTER_SIZE slots indexed by
 * maglev_vip_filter_slot(); each slot counts the VIP keys whose address maps
 * there. An array lookup is inlined by the verifier, so a packet whose slot
 * is empty (all non-VIP traffic but rare collisions) goes up the stack
 * without a single hash lookup, and the counts tell which of the
 * exact-port / all-ports lookups can hit.
 */
struct maglev_vip_addr {
	__u16 tcp_ports; /* TCP VIP keys with a port */
	__u16 udp_ports;
	__u8 tcp_any; /* TCP all-ports keys */
	__u8 udp_any;
	__u16 pad;
};

#define MAGLEV_VIP_FILTER_SIZE 65536

static inline __u32 maglev_vip_filter_slot(const __u32 addr[4], __u8 family)
{
	__u32 x = addr[0] ^ addr[1] ^ addr[2] ^ addr[3] ^ family;

	/* Fibonacci hashing: the top 16 bits of x * 2^32/phi. */
	return (x * 0x9e3779b1U) >> 16;
}

/*
 * Bounded loads (per VIP --balance-factor): maglevd marks, by backend index,
 * the backends whose live flows exceed ceil(C * mean) of their VIP (array
 * maglev_overcap, value MAGLEV_OVERCAP or 0; indices are per VIP, so one
 * mark is one VIP's). A new flow whose pick is marked probes up to
 * MAGLEV_BOUNDED_PROBES further slots of the same table, slot i from
 * maglev_probe_hash(seed, flow hash, i), and takes the first unmarked
 * backend; none: the original pick. Spills are counted per VIP, per CPU, in
 * maglev_vipspill (__u64 by vip_id). maglevd marks a backend held in its
 * slots while down (settle_ms) the same way; such a pick is also not usable,
 * and any packet re-picked there takes the probe sequence.
 */
#define MAGLEV_OVERCAP	      1
#define MAGLEV_BOUNDED_PROBES 8

/* VIP keys (address, port, protocol) the VIP map holds; several keys may
 * share one vip_id (table).
 */
#define MAGLEV_VIP_KEYS 4096
/* GUE destination port the decap program listens on unless told otherwise. */
#define MAGLEV_GUE_PORT_DEFAULT 6080

#endif /* MAGLEV_MAPS_H */
