/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Connection table layout, shared by the XDP program (bpf/) and the datapath
 * library (userspace/lib/dp_conns.c, and conn_census.c, which counts it);
 * nobody else reads the table directly (maglev_dp_conn_lookup / _delete /
 * _flush / maglev_conn_census are the API).
 *
 * The table is a set-associative array: an ARRAY map of buckets, each
 * holding MAGLEV_CONN_WAYS flows. Every lookup, insert and refresh is an
 * array access that the verifier inlines: no helper call, no kernel
 * function, no lock. A flow lives in bucket (hash & mask); its way is found
 * by a 32-bit tag and then the full key. Replacement within the bucket is
 * "not recently used" over two reference bits per way: an empty way first,
 * else a closed connection's past tcp_closed_ns, else a flow never used
 * since it was written, else one not used since the bits were last
 * cleared (bpf/xdp_conn.h).
 *
 * The table is shared by all CPUs without locks. Two CPUs writing the same
 * way at once (two new flows in one bucket in the same instant) could leave
 * a torn slot; every slot therefore carries a check word over its hash and
 * value. A reader copies a slot's value once, takes it only if the copy's
 * check matches, and uses nothing but the copy: a torn slot, or one refilled
 * by another flow while it is being read, is a miss (re-picked), never a
 * wrong backend, VIP or encapsulation. A slot with the flow's key that fails
 * its check is never written over (it may be another CPU rewriting it).
 * Revalidating a cached VIP writes vip_gen alone, which the check leaves
 * out, so a reader never sees that rewrite half done (docs/datapath.md).
 */
#ifndef MAGLEV_CONN_H
#define MAGLEV_CONN_H

#include <linux/types.h>
#include "maglev_maps.h"

#define MAGLEV_CONN_WAYS 4

/* The key is read as 32-bit words (and as 64-bit ones, five loads instead
 * of ten per side on the hot path): tell the compiler they alias it. The
 * key is only 4-byte aligned.
 */
typedef __u32 __attribute__((__may_alias__)) maglev_conn_word;
typedef __u64 __attribute__((__may_alias__, __aligned__(4))) maglev_conn_dword;

struct maglev_conn_slot {
	struct maglev_flow_key key;
	struct maglev_conn conn; /* last_seen_ns: UDP only, not in check */
	__u32 vip_id;
	__u32 vip_gen; /* VIP generation when vip_id/encap/gue_port were cached; not in check */
	__u8 encap;
	__u8 flags; /* MAGLEV_CONN_F_*; not in check */
	__u16 gue_port;
	__u32 check; /* maglev_conn_check() */
};

/* What a reader copies: conn .. check, as 64-bit words. vip_id and vip_gen
 * share one aligned word, encap, flags, gue_port and check another, each
 * rewritten with one compare-and-swap.
 */
#define MAGLEV_CONN_VALUE_WORDS \
	((sizeof(struct maglev_conn_slot) - __builtin_offsetof(struct maglev_conn_slot, conn)) / 8)
_Static_assert(sizeof(struct maglev_conn_slot) % 8 == 0 &&
		       __builtin_offsetof(struct maglev_conn_slot, conn) % 8 == 0 &&
		       __builtin_offsetof(struct maglev_conn_slot, vip_id) % 8 == 0 &&
		       __builtin_offsetof(struct maglev_conn_slot, encap) % 8 == 0,
	       "slot value words");

/* The client sent a FIN or an RST (or someone spoofed one): the connection
 * may be closing. Its packets keep the backend and refresh last_seen_ns
 * (then the time of the last of them); a SYN within tcp_closed_ns of it
 * keeps the backend too, and it or client data clears the mark. A SYN
 * later is a new connection on the tuple (re-picked), and the way is the
 * first a new flow of its bucket takes (bpf/maglev_xdp.bpf.c,
 * maglev_syn_keeps and maglev_conn_usable; docs/datapath.md).
 */
#define MAGLEV_CONN_F_CLOSING 0x01

/* How long after its last packet a closing entry still keeps its backend
 * for a SYN, and is not evicted first: the default of
 * maglev_dp_opts.tcp_closed_ns.
 */
#define MAGLEV_TCP_CLOSED_NS_DEFAULT (10 * 1000000000ULL)

/* Reference bits of a way: used since the bits were last cleared, and used
 * at all since the flow was written (0: a flow that has sent one packet).
 */
#define MAGLEV_CONN_REF_RECENT 0x01
#define MAGLEV_CONN_REF_SEEN   0x02
#define MAGLEV_CONN_REF_USED   (MAGLEV_CONN_REF_RECENT | MAGLEV_CONN_REF_SEEN)

/* A flow is proven, and evicted only after every unproven one of its
 * bucket, once it has sent in a later time slot than its first packet: a
 * TCP entry older than this that has sent twice, a UDP entry with a packet
 * this long after its last recorded time (SEEN is set only then). Two
 * packets in a row, what a spoofer sends cheaply, do not prove a flow; to
 * be proven its entry must outlive this long the churn of the flood it is
 * part of (bpf/xdp_conn.h, docs/datapath.md).
 */
#define MAGLEV_CONN_PROVEN_NS (1000000000ULL)

/* A SYN for an entry that has seen only its first packet keeps the entry's
 * backend this long after it was written: a SYN retransmit (after 1 s with
 * Linux's and RFC 6298's initial RTO, 3 s with older stacks' one) goes
 * where the first SYN went (bpf/maglev_xdp.bpf.c, maglev_syn_keeps).
 */
#define MAGLEV_CONN_SYN_KEEP_NS (5 * 1000000000ULL)

struct maglev_conn_bucket {
	__u32 tag[MAGLEV_CONN_WAYS]; /* 0: empty way */
	__u8 ref[MAGLEV_CONN_WAYS];  /* MAGLEV_CONN_REF_* */
	__u32 pad;
	struct maglev_conn_slot slot[MAGLEV_CONN_WAYS];
};

_Static_assert(__builtin_offsetof(struct maglev_conn_bucket, slot) % 8 == 0, "slot alignment");

/* Value of the one-element maglev_connkey map, written by the library. */
struct maglev_conn_params {
	__u64 seed; /* random, chosen when the table is created */
	__u32 mask; /* buckets - 1 (power of two) */
	__u32 pad;
};

/* Key words i and i+1 as one 64-bit word, word i in the low half: one load
 * on a little-endian host, the same value (and so the same buckets for
 * entries an older build wrote) as the two 32-bit loads it replaced.
 */
static inline __u64 maglev_conn_le64(__u64 v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return v << 32 | v >> 32;
#else
	return v;
#endif
}

/*
 * One 64-bit key word, keyed: multiply, fold the high half into the low
 * (xorshift), multiply again. A multiply alone is linear in addition, so
 * flipping a word's top bit flipped only bit 63 of its product and two such
 * flips cancelled under every seed; the fold makes the difference after the
 * second multiply depend on the seeded value (issue 14 item 6). Odd
 * multipliers and the fold are bijective: keys differing in one word never
 * collide.
 */
static inline __u64 maglev_conn_mix(__u64 x, __u64 a, __u64 b)
{
	x *= a;
	x ^= x >> 32;
	return x * b;
}

/*
 * Keyed 64-bit hash of a flow key: bucket from the low bits, tag from the
 * high. Each 64-bit half-key word is offset by the seed and mixed on its
 * own (maglev_conn_mix, its own pair of odd constants): five independent
 * chains that run in parallel, summed, then one murmur3-style finalizer.
 * Summed, not xored: a top-bit flip leaves each word's sum differing by
 * 2^63 +- 2^31 * b, and distinct b never cancel. Not cryptographic (neither
 * is the kernel hash table's seeded jhash; SipHash-1-3 cost 23-46 ns per
 * packet here); the seed keeps bucket placement unpredictable from outside,
 * and selftests/hardening/hash_attack_test checks structured keys.
 */
static inline __u64 maglev_conn_hash(const struct maglev_flow_key *k, __u64 seed)
{
	const maglev_conn_dword *w = (const maglev_conn_dword *)k;
	__u64 h;

	h = maglev_conn_mix(maglev_conn_le64(w[0]) + seed, 0x9e3779b97f4a7c15ULL,
			    0xbf58476d1ce4e5b9ULL);
	h += maglev_conn_mix(maglev_conn_le64(w[1]) ^ seed, 0xc2b2ae3d27d4eb4fULL,
			     0x94d049bb133111ebULL);
	h += maglev_conn_mix(maglev_conn_le64(w[2]) + seed, 0x165667b19e3779f9ULL,
			     0xa0761d6478bd642fULL);
	h += maglev_conn_mix(maglev_conn_le64(w[3]) ^ seed, 0xd6e8feb86659fd93ULL,
			     0xe7037ed1a0b428dbULL);
	h += maglev_conn_mix(maglev_conn_le64(w[4]) + seed, 0xff51afd7ed558ccdULL,
			     0x8ebc6af09c88c6e3ULL);
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	return h;
}

static inline __u32 maglev_conn_tag(__u64 h)
{
	return (__u32)(h >> 32) | 1;
}

/* Check word of a slot: the key's hash and every field a reader uses but
 * vip_gen, each through its own multiplier (independent, so cheap), so that
 * a slot mixing the fields of two writes matches with probability about
 * 2^-32. vip_gen only says whether the cached VIP needs a lookup; leaving it
 * out lets a revalidation rewrite it alone, with no moment at which the slot
 * fails its check.
 */
static inline __u32 maglev_conn_check(__u64 h, const struct maglev_conn_slot *s)
{
	__u64 x = h ^ (__u64)s->conn.backend_idx * 0x9e3779b97f4a7c15ULL ^
		  (__u64)s->conn.backend_gen * 0xc2b2ae3d27d4eb4fULL ^
		  (__u64)s->vip_id * 0x165667b19e3779f9ULL ^
		  (__u64)((__u32)s->encap << 16 | s->gue_port) * 0xff51afd7ed558ccdULL;

	return (__u32)(x >> 32) ^ (__u32)x;
}

static inline int maglev_conn_key_eq(const struct maglev_flow_key *a,
				     const struct maglev_flow_key *b)
{
	const maglev_conn_dword *x = (const maglev_conn_dword *)a,
				*y = (const maglev_conn_dword *)b;

	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) | (x[4] ^ y[4])) == 0;
}

/*
 * VIP cache: an ARRAY (MAGLEV_VIP_CACHE_SIZE slots, inlined lookups) in
 * front of the VIP hash map, so a new flow finds its VIP without a hash-map
 * call. The library writes a slot after every VIP change (invalidating it
 * first, so a slot never names an outdated VIP); a key whose slot holds
 * another key, or a slot whose check word does not match (torn by a
 * concurrent write), falls back to the hash map, which stays authoritative.
 */
#define MAGLEV_VIP_CACHE_SIZE 4096

struct maglev_vip_cache_slot {
	struct maglev_vip_key key;
	struct maglev_vip_info info;
	__u32 check; /* maglev_vip_cache_check(key, info) */
};

static inline __u32 maglev_vip_cache_index(const struct maglev_vip_key *k)
{
	__u32 x = k->addr[0] ^ k->addr[1] ^ k->addr[2] ^ k->addr[3] ^
		  ((__u32)k->port << 16 | (__u32)k->proto << 8 | k->family);

	return (x * 0x9e3779b1U) >> (32 - 12);
}

static inline __u32 maglev_vip_cache_check(const struct maglev_vip_key *k,
					   const struct maglev_vip_info *v)
{
	const maglev_conn_word *w = (const maglev_conn_word *)k;
	const maglev_conn_word *i = (const maglev_conn_word *)v;
	__u64 x = (__u64)w[0] * 0x9e3779b97f4a7c15ULL ^ (__u64)w[1] * 0xc2b2ae3d27d4eb4fULL ^
		  (__u64)w[2] * 0x165667b19e3779f9ULL ^ (__u64)w[3] * 0xd6e8feb86659fd93ULL ^
		  (__u64)w[4] * 0xff51afd7ed558ccdULL ^ (__u64)i[0] * 0xc4ceb9fe1a85ec53ULL ^
		  (__u64)i[1] * 0x27d4eb2f165667c5ULL;

	return ((__u32)(x >> 32) ^ (__u32)x) | 1;
}

static inline int maglev_vip_key_eq(const struct maglev_vip_key *a, const struct maglev_vip_key *b)
{
	const maglev_conn_word *x = (const maglev_conn_word *)a, *y = (const maglev_conn_word *)b;

	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) | (x[4] ^ y[4])) == 0;
}

#endif /* MAGLEV_CONN_H */
