/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Generic netlink interface of the maglev slow-path kernel module: the one
 * definition shared by the module (kernel/) and its userspace client
 * (userspace/lib/slowpath_nl.c). Configuration is per network namespace.
 *
 * All addresses are in network byte order, as in the packet (IPv4: 4 bytes,
 * IPv6: 16 bytes); ports are NLA_U16 in network byte order; generation
 * numbers and seeds are host-order NLA_U64.
 *
 * Every command that changes state needs CAP_NET_ADMIN. A rejected request
 * changes nothing and its extended ACK names the attribute that was wrong.
 */
#ifndef MAGLEV_GENL_H
#define MAGLEV_GENL_H

#include <linux/types.h>

#define MAGLEV_GENL_NAME    "maglev"
#define MAGLEV_GENL_VERSION 1

/* Limits the module's attribute policies enforce. */
#define MAGLEV_GENL_MAX_VIPS	512   /* VIPs per namespace (MAGLEV_MAX_VIPS) */
#define MAGLEV_GENL_BACKEND_MAX 65535 /* backend indices 1..this; 0 = none */
#define MAGLEV_GENL_TABLE_MIN	1
#define MAGLEV_GENL_TABLE_MAX	1048573 /* MAGLEV_M_MAX of the table builder */
#define MAGLEV_GENL_CHUNK_MAX	8192	/* table entries per TABLE_CHUNK (32 KiB) */
/* Bytes of OVERCAP: one bit for every backend index 0..BACKEND_MAX. */
#define MAGLEV_GENL_OVERCAP_MAX ((MAGLEV_GENL_BACKEND_MAX + 1) / 8)

enum maglev_genl_cmd {
	MAGLEV_CMD_UNSPEC,
	MAGLEV_CMD_CONFIG_SET,	 /* SEED_K0, SEED_K1 (both), optional SRC4 (+ SRC4_PLEN),
				  * SRC6 (+ SRC6_PLEN)
				  */
	MAGLEV_CMD_CONFIG_GET,	 /* reply: SEED_K0, SEED_K1, SRC4? + SRC4_PLEN, SRC6? +
				  * SRC6_PLEN
				  */
	MAGLEV_CMD_VIP_SET,	 /* VIP key + ENCAP, GUE_PORT (GUE only): create/update */
	MAGLEV_CMD_VIP_DEL,	 /* VIP key; its table and staged table go too */
	MAGLEV_CMD_VIP_GET,	 /* VIP key -> VIP key, ENCAP, GUE_PORT, TABLE_GEN,
				  * TABLE_SIZE, PACKETS, BYTES, DROPS; dump: every VIP
				  */
	MAGLEV_CMD_BACKEND_SET,	 /* BACKEND_IDX, FAMILY, ADDR */
	MAGLEV_CMD_BACKEND_DEL,	 /* BACKEND_IDX */
	MAGLEV_CMD_BACKEND_GET,	 /* BACKEND_IDX -> BACKEND_IDX, FAMILY, ADDR; dump: all */
	MAGLEV_CMD_TABLE_BEGIN,	 /* VIP key, GEN, TABLE_SIZE: stage a new table */
	MAGLEV_CMD_TABLE_CHUNK,	 /* VIP key, GEN, OFFSET, ENTRIES, PREV_ENTRIES?: in order */
	MAGLEV_CMD_TABLE_COMMIT, /* VIP key, GEN: swap the complete staged table in */
	MAGLEV_CMD_LOOKUP,	 /* flow: FAMILY, SADDR, ADDR, SPORT, PORT, PROTO ->
				  * BACKEND_IDX, SLOT, TABLE_GEN, PREV_IDX (what the
				  * hook would pick for the flow's first packet: a
				  * SYN for TCP)
				  */
	MAGLEV_CMD_STATS_GET,	 /* reply: the MAGLEV_STAT_* counters, nested in STATS */
	/* Added later (appended, numbering above unchanged): */
	MAGLEV_CMD_OVERCAP_SET, /* OVERCAP (absent: none): replace the namespace's
				 * bounded-load marks as a whole
				 */
	__MAGLEV_CMD_MAX,
};

#define MAGLEV_CMD_MAX (__MAGLEV_CMD_MAX - 1)

enum maglev_genl_attr {
	MAGLEV_A_UNSPEC,
	MAGLEV_A_FAMILY,      /* u8: MAGLEV_AF_INET or MAGLEV_AF_INET6 */
	MAGLEV_A_ADDR,	      /* binary 4 or 16: VIP or backend address */
	MAGLEV_A_PORT,	      /* u16 (be): VIP port, 0 = every port */
	MAGLEV_A_PROTO,	      /* u8: IPPROTO_TCP or IPPROTO_UDP */
	MAGLEV_A_ENCAP,	      /* u8: enum maglev_encap */
	MAGLEV_A_GUE_PORT,    /* u16 (be), non-zero: GUE destination port */
	MAGLEV_A_BACKEND_IDX, /* u32: 1..MAGLEV_GENL_BACKEND_MAX */
	MAGLEV_A_GEN,	      /* u64: table generation */
	MAGLEV_A_TABLE_SIZE,  /* u32: MAGLEV_GENL_TABLE_MIN..MAGLEV_GENL_TABLE_MAX */
	MAGLEV_A_OFFSET,      /* u32: first table slot of a chunk */
	MAGLEV_A_ENTRIES,     /* binary: host-order u32 backend indices, 1..CHUNK_MAX */
	MAGLEV_A_SEED_K0,     /* u64 */
	MAGLEV_A_SEED_K1,     /* u64 */
	MAGLEV_A_SRC4,	      /* binary 4: outer IPv4 source (prefix); 0.0.0.0 = route's */
	MAGLEV_A_SRC6,	      /* binary 16: outer IPv6 source (prefix); :: = route's */
	MAGLEV_A_SADDR,	      /* binary 4 or 16: client address (LOOKUP) */
	MAGLEV_A_SPORT,	      /* u16 (be): client port (LOOKUP) */
	MAGLEV_A_TABLE_GEN,   /* u64 (reply): generation of the live table */
	MAGLEV_A_SLOT,	      /* u32 (reply): table slot of a LOOKUP */
	MAGLEV_A_PACKETS,     /* u64 (reply) */
	MAGLEV_A_BYTES,	      /* u64 (reply) */
	MAGLEV_A_STATS,	      /* nested (reply): MAGLEV_STAT_* u64 attributes */
	MAGLEV_A_PAD,
	/* Added later (appended, numbering above unchanged): */
	MAGLEV_A_SRC4_PLEN,    /* u8 1..32, with SRC4: per-flow source inside SRC4/len
				* (host bits from the XDP program's flow fold); absent: 32
				*/
	MAGLEV_A_SRC6_PLEN,    /* u8 1..128, with SRC6: the same for IPv6 (only the low
				* 32 bits vary, as in XDP); absent: 128
				*/
	MAGLEV_A_DROPS,	       /* u64 (reply, VIP_GET): packets of the VIP dropped after
				* the pick (no backend, no route, too big, TTL, tx error)
				*/
	MAGLEV_A_PREV_ENTRIES, /* binary, as ENTRIES and of its length (TABLE_CHUNK):
				* each slot's previous owner, 0: none. Second
				* chance: on a GUE VIP a TCP packet that is no SYN
				* and whose slot has one carries it in GUE
				* (include/maglev_gue.h). maglevd sends them only
				* for --second-chance VIPs, during the window.
				* Absent in every chunk: no previous owners.
				*/
	MAGLEV_A_PREV_IDX,     /* u32 (reply, LOOKUP): the slot's previous owner, 0: none */
	MAGLEV_A_OVERCAP,      /* binary, host-order u32 words, 0..OVERCAP_MAX bytes
				* (OVERCAP_SET): bit i % 32 of word i / 32 set =
				* backend index i is over its VIP's cap (bounded
				* loads, include/maglev_maps.h; bit 0 must be clear,
				* indices past the last word are unmarked). A packet
				* that opens a flow (a TCP SYN, any UDP packet; no
				* ICMP error), whose pick is marked, goes to the
				* first unmarked backend of the flow's probe
				* sequence (include/maglev_bounded.h), as in XDP;
				* other TCP packets go to the pick. LOOKUP's
				* BACKEND_IDX is that backend, SLOT still the flow's
				* own slot.
				*/
	__MAGLEV_A_MAX,
};

#define MAGLEV_A_MAX (__MAGLEV_A_MAX - 1)

/* Per-namespace counters (u64 each, summed over CPUs) in MAGLEV_A_STATS. */
enum maglev_genl_stat {
	MAGLEV_STAT_UNSPEC,
	MAGLEV_STAT_FORWARDED,	     /* packets encapsulated and handed to the stack */
	MAGLEV_STAT_FORWARDED_BYTES, /* their inner (client) bytes */
	MAGLEV_STAT_NO_TABLE,	     /* dropped: the VIP has no committed table */
	MAGLEV_STAT_NO_BACKEND,	     /* dropped: table slot names no configured backend */
	MAGLEV_STAT_NO_ROUTE,	     /* dropped: no route to the backend */
	MAGLEV_STAT_ENCAP_ERROR,     /* dropped: headroom, segmentation or checksum failure */
	MAGLEV_STAT_TX_ERROR,	     /* the stack refused the outer packet */
	MAGLEV_STAT_TTL_EXPIRED,     /* dropped: inner TTL / hop limit would reach 0 */
	MAGLEV_STAT_PAD,
	/* Added later (appended): */
	MAGLEV_STAT_TOO_BIG,	    /* dropped: outer length field would overflow */
	MAGLEV_STAT_ICMP_FORWARDED, /* of FORWARDED: ICMP errors about a VIP flow */
	MAGLEV_STAT_SC_CARRIED,	    /* of FORWARDED: carried a previous owner in GUE */
	MAGLEV_STAT_SPILLED,	    /* of FORWARDED: a probe's backend, the pick over cap */
	__MAGLEV_STAT_MAX,
};

#define MAGLEV_STAT_MAX (__MAGLEV_STAT_MAX - 1)

#endif /* MAGLEV_GENL_H */
