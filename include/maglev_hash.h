/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The keyed hashes maglev-lb shares between the XDP program, the kernel
 * module and userspace. One definition, compiled into all three, so a flow
 * hashes to the same slot wherever it is looked at.
 *
 * Both hashes are SipHash (Aumasson & Bernstein) keyed with the 128-bit
 * cluster seed: SipHash-1-3 for the per-packet flow hash (cheap, and what the
 * kernel's hsiphash uses on 64-bit), SipHash-2-4 for the backend permutation
 * hashes of the table builder (run once per backend per rebuild).
 */
#ifndef MAGLEV_HASH_H
#define MAGLEV_HASH_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* The cluster seed. Every balancer given the same seed and backend set
 * builds byte-identical tables and picks the same backend for a flow.
 */
struct maglev_seed {
	__u64 k0;
	__u64 k1;
};

/* Documented default (ASCII "maglev-lb seed 1"): see docs/maglev-table.md. */
#define MAGLEV_DEFAULT_SEED_K0 0x6d61676c65762d6cULL
#define MAGLEV_DEFAULT_SEED_K1 0x6220736565642031ULL

#define MAGLEV_ROTL64(x, b) (__u64)(((x) << (b)) | ((x) >> (64 - (b))))

#define MAGLEV_SIPROUND(v0, v1, v2, v3)                                                            \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = MAGLEV_ROTL64(v1, 13);                                                        \
		v1 ^= v0;                                                                          \
		v0 = MAGLEV_ROTL64(v0, 32);                                                        \
		v2 += v3;                                                                          \
		v3 = MAGLEV_ROTL64(v3, 16);                                                        \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = MAGLEV_ROTL64(v3, 21);                                                        \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = MAGLEV_ROTL64(v1, 17);                                                        \
		v1 ^= v2;                                                                          \
		v2 = MAGLEV_ROTL64(v2, 32);                                                        \
	} while (0)

struct maglev_sip {
	__u64 v0, v1, v2, v3;
};

static __always_inline void maglev_sip_init(struct maglev_sip *s, const struct maglev_seed *seed)
{
	s->v0 = 0x736f6d6570736575ULL ^ seed->k0;
	s->v1 = 0x646f72616e646f6dULL ^ seed->k1;
	s->v2 = 0x6c7967656e657261ULL ^ seed->k0;
	s->v3 = 0x7465646279746573ULL ^ seed->k1;
}

/* Absorb one 64-bit message word with c compression rounds. */
static __always_inline void maglev_sip_word(struct maglev_sip *s, __u64 m, int c)
{
	__u64 v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;
	int i;

	v3 ^= m;
	for (i = 0; i < c; i++)
		MAGLEV_SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	s->v0 = v0;
	s->v1 = v1;
	s->v2 = v2;
	s->v3 = v3;
}

/* Final length word, then d finalisation rounds. len_bytes is the message
 * length; messages here are always whole words.
 */
static __always_inline __u64 maglev_sip_final(struct maglev_sip *s, __u64 len_bytes, int c, int d)
{
	__u64 v0, v1, v2, v3;
	int i;

	maglev_sip_word(s, len_bytes << 56, c);
	v0 = s->v0;
	v1 = s->v1;
	v2 = s->v2 ^ 0xff;
	v3 = s->v3;
	for (i = 0; i < d; i++)
		MAGLEV_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * Flow hash over a 5-tuple. Addresses are in network byte order as they sit
 * in the packet (IPv4: one __u32; IPv6: four). Ports are network order too;
 * proto is the IP protocol number. The words are built from the raw 32-bit
 * loads so every user (BPF, kernel, userspace, any endianness of the loads'
 * interpretation aside) feeds identical bits. IPv4 and IPv6 differ in length,
 * and the length is part of SipHash's input, so they never collide by layout.
 */
static __always_inline __u64 maglev_flow_hash_v4(const struct maglev_seed *seed, __u32 saddr,
						 __u32 daddr, __u16 sport, __u16 dport, __u8 proto)
{
	struct maglev_sip s;

	maglev_sip_init(&s, seed);
	maglev_sip_word(&s, ((__u64)saddr << 32) | daddr, 1);
	maglev_sip_word(&s, ((__u64)sport << 32) | ((__u64)dport << 16) | proto, 1);
	return maglev_sip_final(&s, 16, 1, 3);
}

static __always_inline __u64 maglev_flow_hash_v6(const struct maglev_seed *seed,
						 const __u32 saddr[4], const __u32 daddr[4],
						 __u16 sport, __u16 dport, __u8 proto)
{
	struct maglev_sip s;

	maglev_sip_init(&s, seed);
	maglev_sip_word(&s, ((__u64)saddr[0] << 32) | saddr[1], 1);
	maglev_sip_word(&s, ((__u64)saddr[2] << 32) | saddr[3], 1);
	maglev_sip_word(&s, ((__u64)daddr[0] << 32) | daddr[1], 1);
	maglev_sip_word(&s, ((__u64)daddr[2] << 32) | daddr[3], 1);
	maglev_sip_word(&s, ((__u64)sport << 32) | ((__u64)dport << 16) | proto, 1);
	return maglev_sip_final(&s, 40, 1, 3);
}

/* The slot a flow hash selects in a table of m entries. */
static __always_inline __u32 maglev_slot(__u64 hash, __u32 m)
{
	return (__u32)(hash % m);
}

/*
 * Bounded loads' probe i (1..) of a flow: a keyed hash of the flow hash and
 * the probe index, so a flow's probe sequence is fixed by the seed (every
 * balancer probes the same slots) and two flows sharing a slot probe
 * different ones (no cascade onto the neighbour, as linear probing would).
 */
static __always_inline __u64 maglev_probe_hash(const struct maglev_seed *seed, __u64 flow_hash,
					       __u32 i)
{
	struct maglev_sip s;

	maglev_sip_init(&s, seed);
	maglev_sip_word(&s, flow_hash, 1);
	maglev_sip_word(&s, i, 1);
	return maglev_sip_final(&s, 16, 1, 3);
}

/*
 * Per-flow 32-bit fold for the outer source address and the GUE source port:
 * murmur3's fmix32 over the client's address words and ports, as loaded
 * (network order). Cheap enough for the established path, stable for a
 * flow, so a backend's RSS keeps each flow on one queue and spreads flows.
 * The XDP program, the TC health-check program and the kernel module all use
 * it, so a flow's outer headers do not depend on which path sent it.
 */
static __always_inline __u32 maglev_outer_fold(const __u32 src[4], __u16 sport, __u16 dport)
{
	__u32 x = src[0] ^ src[1] ^ src[2] ^ src[3] ^ (((__u32)sport << 16) | dport);

	x ^= x >> 16;
	x *= 0x85ebca6b;
	x ^= x >> 13;
	x *= 0xc2b2ae35;
	x ^= x >> 16;
	return x;
}

/*
 * The outer source: the configured prefix with its host bits from the fold.
 * Only the last 32-bit word of the address varies (IPv6 prefixes shorter
 * than /96 vary all of word 3). maglev_outer_host_mask(plen, start): the host
 * bits, host order, of the word that starts at bit `start` (0 for IPv4, 96
 * for IPv6's last word) of a prefix of length plen. maglev_outer_src_word
 * takes its three words in one byte order, whichever: XDP and the health
 * check pass network order, the module host order.
 */
static __always_inline __u32 maglev_outer_host_mask(__u32 plen, __u32 start)
{
	if (plen <= start)
		return 0xffffffffU;
	if (plen - start >= 32)
		return 0;
	return 0xffffffffU >> (plen - start);
}

static __always_inline __u32 maglev_outer_src_word(__u32 prefix, __u32 fold, __u32 mask)
{
	return (prefix & ~mask) | (fold & mask);
}

#endif /* MAGLEV_HASH_H */
