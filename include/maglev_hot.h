/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Hot flows (issue 35): heavy hitters per VIP, by flow (5-tuple) and by
 * source address, found in the XDP program and read by maglevd.
 *
 * Structure: per CPU and per VIP, a HeavyKeeper (Yang et al., 2018) of
 * MAGLEV_HOT_ROWS rows of MAGLEV_HOT_COLS buckets for flows and the same for
 * sources. A bucket holds one key (the whole key, so maglevd can name it)
 * and a count. A sampled packet goes to one bucket per row: its own key
 * counts up; another key's count decays by one with probability
 * 2^-(count / MAGLEV_HOT_DECAY_STEP) (about 1.08^-count), and at zero the
 * packet's key takes the bucket. A heavy flow's count grows until
 * collisions no longer dent it; mice churn the rest. Measured against a
 * count-min sketch with a candidate table and against a one-row majority
 * vote: docs/benchmarks.md "Hot flows".
 *
 * Only one packet in maglev_hot_cfg.sample_every is sampled, counted per
 * CPU and per VIP (the countdown in struct maglev_hot_vip), so the cost per
 * packet is a countdown; the count of a bucket is in sampled packets.
 *
 * The update is here, plain C, so the XDP program and the offline accuracy
 * program (userspace/bench/hot_accuracy.c) run the same code.
 */
#ifndef MAGLEV_HOT_H
#define MAGLEV_HOT_H

#include <linux/types.h>
#include "maglev_maps.h"

#define MAGLEV_HOT_ROWS 2
#ifndef MAGLEV_HOT_COLS	   /* the accuracy program tries other widths */
#define MAGLEV_HOT_COLS 64 /* a power of two */
#endif
#define MAGLEV_HOT_BUCKETS    (MAGLEV_HOT_ROWS * MAGLEV_HOT_COLS)
#define MAGLEV_HOT_DECAY_STEP 9 /* 2^(1/9) = 1.080: HeavyKeeper's b */
/* maglevd's default sample_every when hot flows are on (docs/benchmarks.md). */
#define MAGLEV_HOT_SAMPLE_DEFAULT 16

/* A flow's bucket: its key as in the connection table. */
struct maglev_hot_flow {
	struct maglev_flow_key key;
	__u32 count;	   /* sampled packets, HeavyKeeper count (decays) */
	__u32 backend_idx; /* the backend of its last sampled packet */
	__u64 bytes;	   /* sampled bytes since this key took the bucket */
};

/* A source's bucket: the client address (family in key.family). */
struct maglev_hot_src {
	__u32 addr[4];
	__u8 family;
	__u8 pad[3];
	__u32 count;
	__u32 backend_idx; /* the backend of its last sampled packet */
	__u32 pad2;
	__u64 bytes;
};

/* One VIP's trackers on one CPU: the value of maglev_hot, by vip_id. */
struct maglev_hot_vip {
	__u32 countdown; /* packets until the next sample */
	__u32 pad;
	__u64 samples; /* sampled packets, all time */
	struct maglev_hot_flow flow[MAGLEV_HOT_BUCKETS];
	struct maglev_hot_src src[MAGLEV_HOT_BUCKETS];
};

/* maglev_hotcfg's one element, written by maglevd. */
struct maglev_hot_cfg {
	__u32 sample_every; /* 0: off; 1: every packet */
	__u32 pad;
};

/* Whether a bucket of count loses one to another key: probability
 * 2^-(count / MAGLEV_HOT_DECAY_STEP), from one random word.
 */
static inline int maglev_hot_decays(__u32 count, __u32 rnd)
{
	__u32 shift = count / MAGLEV_HOT_DECAY_STEP;

	if (shift >= 32)
		return 0;
	return (rnd & ((1U << shift) - 1)) == 0;
}

static inline int maglev_hot_flow_eq(const struct maglev_flow_key *a,
				     const struct maglev_flow_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;
	__u32 d = 0;
	int i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < (int)(sizeof(*a) / 4); i++)
		d |= x[i] ^ y[i];
	return !d;
}

/* The bucket index of row 0 and row 1 from one 64-bit hash. */
static inline __u32 maglev_hot_col(__u64 h, int row)
{
	return (__u32)(h >> (row * 32)) & (MAGLEV_HOT_COLS - 1);
}

/* A seeded hash of a source address (the flow's comes from the connection
 * table's hash): a multiply-xorshift, cheap; the seed keeps placement
 * unpredictable from outside.
 */
static inline __u64 maglev_hot_src_hash(const __u32 a[4], __u64 seed)
{
	__u64 h = (((__u64)(a[0] ^ a[2]) << 32) | (a[1] ^ a[3])) ^ seed;

	h *= 0x9e3779b97f4a7c15ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return h;
}

/* One packet into bucket b: same says b holds its key, take writes its key
 * in; rnd_expr is evaluated only when b holds another key.
 */
#define MAGLEV_HOT_ADD(b, same, take, len, be, rnd_expr)                             \
	do {                                                                         \
		if ((b)->count && (same)) {                                          \
			(b)->count++;                                                \
			(b)->bytes += (len);                                         \
			(b)->backend_idx = (be);                                     \
		} else if (!(b)->count || maglev_hot_decays((b)->count, rnd_expr)) { \
			if ((b)->count > 1) {                                        \
				(b)->count--;                                        \
			} else {                                                     \
				take;                                                \
				(b)->count = 1;                                      \
				(b)->bytes = (len);                                  \
				(b)->backend_idx = (be);                             \
			}                                                            \
		}                                                                    \
	} while (0)

static inline void maglev_hot_flow_add(struct maglev_hot_flow *b, const struct maglev_flow_key *k,
				       __u32 len, __u32 be, __u32 rnd)
{
	MAGLEV_HOT_ADD(b, maglev_hot_flow_eq(&b->key, k), __builtin_memcpy(&b->key, k, sizeof(*k)),
		       len, be, rnd);
}

static inline void maglev_hot_src_add(struct maglev_hot_src *b, const __u32 a[4], __u8 family,
				      __u32 len, __u32 be, __u32 rnd)
{
	MAGLEV_HOT_ADD(b,
		       b->family == family && !((b->addr[0] ^ a[0]) | (b->addr[1] ^ a[1]) |
						(b->addr[2] ^ a[2]) | (b->addr[3] ^ a[3])),
		       (__builtin_memcpy(b->addr, a, 16), b->family = family), len, be, rnd);
}

static inline __u32 maglev_hot_rot(__u32 x, int n)
{
	return n ? (x << n) | (x >> (32 - n)) : x;
}

/* One sampled packet of flow k (flow hash fh, source hash sh) into v. rnd:
 * one random word; each bucket reads its own rotation of it (a decay
 * decision reads its low count / MAGLEV_HOT_DECAY_STEP bits).
 */
static inline void maglev_hot_sample(struct maglev_hot_vip *v, const struct maglev_flow_key *k,
				     __u64 fh, __u64 sh, __u32 len, __u32 be, __u32 rnd)
{
	int r;

	v->samples++;
#ifdef __clang__
#pragma unroll
#endif
	for (r = 0; r < MAGLEV_HOT_ROWS; r++) {
		maglev_hot_flow_add(&v->flow[r * MAGLEV_HOT_COLS + maglev_hot_col(fh, r)], k, len,
				    be, maglev_hot_rot(rnd, 16 * r));
		maglev_hot_src_add(&v->src[r * MAGLEV_HOT_COLS + maglev_hot_col(sh, r)], k->src,
				   k->family, len, be, maglev_hot_rot(rnd, 16 * r + 8));
	}
}

#endif /* MAGLEV_HOT_H */
