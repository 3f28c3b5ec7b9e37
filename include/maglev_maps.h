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
#define MAGLEV_MAX_VIPS 512
/* Backend slots, shared by all VIPs. Index 0 is never used: 0 means "none". */
#define MAGLEV_MAX_BACKENDS 65536
/* Default connection-table size; maglevd may size it at load time. */
#define MAGLEV_CONN_TABLE_SIZE (1 << 20)

/* Where maglevd pins the maps and links, so a restarted daemon adopts them. */
#define MAGLEV_PIN_DIR "/sys/fs/bpf/maglev"

/* Ethernet family numbers (AF_INET, AF_INET6) without pulling in libc. */
#define MAGLEV_AF_INET 2
#define MAGLEV_AF_INET6 10

struct maglev_vip_key {
	__u32 addr[4];
	__u16 port; /* 0: the "all ports" VIP of that address and protocol */
	__u8 proto; /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 family; /* MAGLEV_AF_INET or MAGLEV_AF_INET6 */
};

enum maglev_encap {
	MAGLEV_ENCAP_IPIP = 0, /* IPIP / IPv6-in-IPv6 / the mixed pairs, by backend family */
	MAGLEV_ENCAP_GUE = 1, /* UDP + GUE header, then the inner IP packet */
};

struct maglev_vip_info {
	__u32 vip_id; /* index into maglev_tables and maglev_vip_stats */
	__u8 encap; /* enum maglev_encap */
	__u8 flags;
	__u16 gue_port; /* GUE destination port, network order */
};

/* Backend usable for new flows (it is in the table) or only for flows it
 * already has (draining). A backend that is down or deleted has neither bit
 * and its established flows are re-picked.
 */
#define MAGLEV_BACKEND_F_UP (1 << 0)
#define MAGLEV_BACKEND_F_DRAIN (1 << 1)

struct maglev_backend {
	__u32 addr[4];
	__u8 family;
	__u8 flags; /* MAGLEV_BACKEND_F_* */
	__u16 pad;
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

/* Global configuration, one element of an array map written by maglevd. */
struct maglev_config {
	__u64 seed_k0;
	__u64 seed_k1;
	__u8 nexthop_mac[6]; /* destination MAC of every encapsulated frame */
	__u8 src_mac[6]; /* the interface's own MAC */
	__u32 src4_prefix; /* outer IPv4 source prefix, network order */
	__u32 src4_plen;
	__u32 src6_prefix[4]; /* outer IPv6 source prefix */
	__u32 src6_plen;
	__u32 mtu; /* largest outer IP packet (L3 bytes) the path carries */
	__u32 new_flow_limit; /* new-flow inserts per second per CPU; 0: unlimited */
	__u64 udp_idle_ns; /* a UDP flow idle this long is re-picked */
};

struct maglev_vip_stats {
	__u64 packets;
	__u64 bytes;
	__u64 new_flows;
};

struct maglev_backend_stats {
	__u64 packets;
	__u64 bytes;
};

#endif /* MAGLEV_MAPS_H */
