// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Flow-hash attacks (issue 7): an attacker who knows the algorithm and the
 * seed can aim flows at one backend; without the seed he cannot.
 *
 * The pick computed here is the datapath's: maglev_flow_hash_v4/_v6 from
 * include/maglev_hash.h over the 5-tuple words as the XDP program loads them,
 * maglev_slot() into a MAGLEV_TABLE_SIZE table built by maglev_table_build()
 * with the same seed (selftests/xdp/xdp_conn_test.c checks that the XDP
 * program picks exactly this for 10,000 flows).
 *
 * 1. Under a KNOWN seed (the documented default one: a cluster that never set
 *    `seed`), a brute-force search over source ports and addresses of one /24
 *    (IPv4) or one /120 (IPv6) finds WANT tuples that all land on one chosen
 *    backend of a 100-backend VIP, in about 100 * WANT hashes.
 * 2. The same tuples under fresh random seeds spread over all 100 backends
 *    as independent uniform picks would: chi-square, largest share, the
 *    target's share and the number of distinct table slots, with thresholds
 *    a correct hash misses with probability < 1e-9.
 * 3. A tuple's slot or hash under one seed says nothing about another: slot
 *    agreement ~1/M, backend agreement ~1/N, half the hash bits differ; also
 *    for each of the 128 seeds one bit away from the known one (both seed
 *    words are used, and every key bit diffuses).
 * 4. The connection-table hash (maglev_conn_hash in include/maglev_conn.h)
 *    on structured keys, the kind a multiply-only hash fails under every
 *    seed: pairs differing in the top bit of two bytes must not collide in
 *    bucket and tag, and 65,536 keys varying in two bytes must hash apart.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include "maglev_conn.h"
#include "maglev_hash.h"
#include "maglev_maps.h"
#include "maglev_table.h"
#include "kselftest_harness.h"

#define M	   MAGLEV_TABLE_SIZE
#define NBE	   100
#define TARGET	   42	   /* the backend the attacker aims at */
#define WANT	   10000   /* tuples the attacker wants on it */
#define SEARCH_MAX 3000000 /* ~100 * WANT expected; 3x headroom */
#define SEEDS_B	   5	   /* random seeds each attack set is replayed under */

/* Thresholds for WANT tuples over NBE equally weighted backends (100 each
 * expected). chi-square with 99 degrees of freedom exceeds 220 with
 * probability 3.5e-11; a Poisson(100) count above 200 has probability
 * < 1e-18; the target keeps ~100 (1 %) of the tuples; WANT uniform slots
 * of M hit 9,275 distinct ones (sd ~30). A flow hash that ignored the seed
 * keeps the tuples on the ~655 slots they were found on: clumps of ~15
 * tuples, chi-square ~1,500, at most ~655 distinct slots.
 */
#define CHI2_MAX      220.0
#define BIN_MAX	      200
#define TARGET_MAX    200
#define DISTINCT_MIN  9000
#define DISTINCT_WANT 9275

/* A figure for the log; the harness forks per test and the child _exit()s,
 * so flush.
 */
#define note(...)                            \
	do {                                 \
		ksft_print_msg(__VA_ARGS__); \
		fflush(stdout);              \
	} while (0)

struct tuple {
	__u32 src[4]; /* as loaded from the packet (network order) */
	__u16 sport;  /* network order */
};

/* VIP 192.0.2.10:443/tcp and [2001:db8::10]:443/tcp; attackers in
 * 203.0.113.0/24 and 2001:db8:a77a::/120.
 */
static __u32 vip4, vip6[4], net4, net6[4];
static const __u16 VPORT = 443;

static struct maglev_backend_spec spec[NBE];
static uint32_t table_a[M], table_b[M];
static struct tuple found[WANT];
static const struct maglev_seed seed_a = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};

static void init_addrs(void)
{
	int i;

	inet_pton(AF_INET, "192.0.2.10", &vip4);
	inet_pton(AF_INET6, "2001:db8::10", vip6);
	inet_pton(AF_INET, "203.0.113.0", &net4);
	inet_pton(AF_INET6, "2001:db8:a77a::", net6);
	memset(spec, 0, sizeof(spec));
	for (i = 0; i < NBE; i++) {
		spec[i].family = AF_INET;
		spec[i].addr[0] = htonl(0xc6336400 | (uint32_t)(i + 1)); /* 198.51.100.x */
		spec[i].weight = 1;
	}
}

static int build(const struct maglev_seed *s, uint32_t *out)
{
	struct maglev_err err;

	return maglev_table_build(s, spec, NBE, M, out, &err);
}

static __u64 flow_hash(const struct maglev_seed *s, int family, const struct tuple *t)
{
	if (family == AF_INET)
		return maglev_flow_hash_v4(s, t->src[0], vip4, t->sport, htons(VPORT), IPPROTO_TCP);
	return maglev_flow_hash_v6(s, t->src, vip6, t->sport, htons(VPORT), IPPROTO_TCP);
}

/* The i-th tuple of the attacker's space: host byte (low 8 bits of the
 * address) fastest, then source port from 1024 up.
 */
static void nth_tuple(int family, uint32_t i, struct tuple *t)
{
	memset(t, 0, sizeof(*t));
	if (family == AF_INET) {
		t->src[0] = net4 | htonl(i & 0xff);
	} else {
		memcpy(t->src, net6, 16);
		t->src[3] |= htonl(i & 0xff);
	}
	t->sport = htons((__u16)(1024 + i / 256));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void random_seed(struct maglev_seed *s)
{
	do {
		if (getrandom(s, sizeof(*s), 0) != sizeof(*s))
			abort();
	} while (s->k0 == seed_a.k0 && s->k1 == seed_a.k1);
}

/* Known seed: collect WANT tuples that seed_a's table sends to TARGET. */
static void attack(struct __test_metadata *_metadata, int family)
{
	uint32_t i, n = 0;
	double t0, dt;
	struct tuple t;

	ASSERT_EQ(0, build(&seed_a, table_a));
	t0 = now_s();
	for (i = 0; i < SEARCH_MAX && n < WANT; i++) {
		nth_tuple(family, i, &t);
		if (table_a[maglev_slot(flow_hash(&seed_a, family, &t), M)] == TARGET)
			found[n++] = t;
	}
	dt = now_s() - t0;
	note("%s, known seed: %u tuples on backend %d found in %u tried, %.3f s "
	     "(%.0f found/s, %.1f M hashes/s)\n",
	     family == AF_INET ? "IPv4" : "IPv6", n, TARGET, i, dt, n / dt, i / dt / 1e6);
	ASSERT_EQ(WANT, n);
	/* Sanity: the set really is all one backend under the known seed. */
	for (i = 0; i < WANT; i++)
		ASSERT_EQ(TARGET, table_a[maglev_slot(flow_hash(&seed_a, family, &found[i]), M)]);
}

/* The attack set replayed under SEEDS_B random seeds. */
static void replay(struct __test_metadata *_metadata, int family)
{
	static uint8_t slot_seen[M];
	struct maglev_seed sb;
	int k, i;

	for (k = 0; k < SEEDS_B; k++) {
		uint32_t hist[NBE] = {0}, distinct = 0, maxbin = 0;
		double chi2 = 0, e = (double)WANT / NBE;

		random_seed(&sb);
		ASSERT_EQ(0, build(&sb, table_b));
		memset(slot_seen, 0, sizeof(slot_seen));
		for (i = 0; i < WANT; i++) {
			uint32_t slot = maglev_slot(flow_hash(&sb, family, &found[i]), M);

			distinct += !slot_seen[slot];
			slot_seen[slot] = 1;
			hist[table_b[slot]]++;
		}
		for (i = 0; i < NBE; i++) {
			chi2 += (hist[i] - e) * (hist[i] - e) / e;
			if (hist[i] > maxbin)
				maxbin = hist[i];
		}
		note("%s, random seed %d: chi2 %.1f (99 dof; limit %.0f), largest "
		     "backend %u (limit %d), target %u (expect ~%d), %u distinct slots "
		     "(expect ~%d)\n",
		     family == AF_INET ? "IPv4" : "IPv6", k, chi2, CHI2_MAX, maxbin, BIN_MAX,
		     hist[TARGET], WANT / NBE, distinct, DISTINCT_WANT);
		EXPECT_GT(CHI2_MAX, chi2);
		EXPECT_GE(BIN_MAX, maxbin);
		EXPECT_GE(TARGET_MAX, hist[TARGET]);
		EXPECT_LE(DISTINCT_MIN, distinct);
		/* Every backend gets some: none is starved either. */
		for (i = 0; i < NBE; i++)
			EXPECT_LT(30, hist[i]);
	}
}

TEST(collide_v4_known_seed_spread_unknown)
{
	init_addrs();
	attack(_metadata, AF_INET);
	replay(_metadata, AF_INET);
}

TEST(collide_v6_known_seed_spread_unknown)
{
	init_addrs();
	attack(_metadata, AF_INET6);
	replay(_metadata, AF_INET6);
}

static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void random_tuple(int family, struct tuple *t)
{
	nth_tuple(family, (uint32_t)(xorshift() % (256u * 64512u)), t);
}

/*
 * Seed A's hash does not predict seed B's: over 1M tuples of the attacker's
 * space, the slot agrees ~1/M of the time (15 expected; > 60 has
 * probability < 1e-16), the backend ~1/N (10,000 +- 100; bound +-800),
 * and the hashes differ in 32 of 64 bits on average (sd of the mean 0.004).
 */
TEST(seed_a_does_not_predict_seed_b)
{
	const uint32_t n = 1000000;
	uint32_t i, same_slot = 0, same_be = 0;
	double bits = 0;
	struct maglev_seed sb;
	struct tuple t;
	int fam;

	init_addrs();
	ASSERT_EQ(0, build(&seed_a, table_a));
	random_seed(&sb);
	ASSERT_EQ(0, build(&sb, table_b));
	for (fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;

		same_slot = same_be = 0;
		bits = 0;
		for (i = 0; i < n; i++) {
			__u64 ha, hb;
			uint32_t sa, sl;

			random_tuple(family, &t);
			ha = flow_hash(&seed_a, family, &t);
			hb = flow_hash(&sb, family, &t);
			sa = maglev_slot(ha, M);
			sl = maglev_slot(hb, M);
			same_slot += sa == sl;
			same_be += table_a[sa] == table_b[sl];
			bits += __builtin_popcountll(ha ^ hb);
		}
		note("%s, %u tuples, seed A vs random seed B: slot agrees %u times "
		     "(expect %.1f), backend %u times (expect %u), %.3f of 64 hash bits "
		     "differ\n",
		     fam ? "IPv6" : "IPv4", n, same_slot, (double)n / M, same_be, n / NBE,
		     bits / n);
		EXPECT_GE(60, same_slot);
		EXPECT_LE(n / NBE - 800, same_be);
		EXPECT_GE(n / NBE + 800, same_be);
		EXPECT_GT(0.05, fabs(bits / n - 32.0));
	}
}

/*
 * Related keys: each of the 128 seeds one bit away from the known seed.
 * Over 4096 tuples per seed, the hashes differ in 32 +- 0.5 bits on average
 * (8 sd) and slots agree at most 5 times (0.06 expected). A hash that
 * ignored either seed word, or some of its bits, fails for those bits.
 */
TEST(every_seed_bit_matters)
{
	const int n = 4096;
	int bit, i, fam, worst_bit = -1;
	double worst = 32.0;

	init_addrs();
	for (fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;

		for (bit = 0; bit < 128; bit++) {
			struct maglev_seed sb = seed_a;
			int same_slot = 0;
			double bits = 0;
			struct tuple t;

			if (bit < 64)
				sb.k0 ^= 1ULL << bit;
			else
				sb.k1 ^= 1ULL << (bit - 64);
			for (i = 0; i < n; i++) {
				__u64 ha, hb;

				random_tuple(family, &t);
				ha = flow_hash(&seed_a, family, &t);
				hb = flow_hash(&sb, family, &t);
				same_slot += maglev_slot(ha, M) == maglev_slot(hb, M);
				bits += __builtin_popcountll(ha ^ hb);
			}
			bits /= n;
			if (fabs(bits - 32.0) > fabs(worst - 32.0)) {
				worst = bits;
				worst_bit = bit;
			}
			EXPECT_GT(0.5, fabs(bits - 32.0))
			{
				TH_LOG("%s, seed bit %d: %.3f hash bits differ on average",
				       fam ? "IPv6" : "IPv4", bit, bits);
			}
			EXPECT_GE(5, same_slot);
		}
	}
	note("128 one-bit seed changes x 2 families: worst mean Hamming distance "
	     "%.3f (seed bit %d)\n",
	     worst, worst_bit);
}

/*
 * Connection-table hash, random seeds, pairs of keys differing only in the
 * top bit of two bytes (x + 2^63 times an odd constant flips only bit 63:
 * a hash built from per-word multiplies and xors cancels two such flips
 * under every seed). Every pair of the bytes a sender chooses (IPv6: both
 * addresses and ports, 630 pairs; IPv4: the two addresses and ports, 66),
 * PAIR_TRIALS random seeds and bases each: 44,544 pairs, each colliding in
 * bucket (16 bits) and tag (31 bits) with probability 2^-47 for a random
 * function: any collision has probability < 1e-9. Bucket alone: 0.7
 * expected, > 20 has probability < 1e-20.
 */
#define CONN_MASK   0xffffu
#define PAIR_TRIALS 64
#define KEY_BYTES   36 /* src, dst, sport, dport: what a sender chooses */

/* An IPv4 key carries only src[0], dst[0] and the ports. */
static int key_byte_used(int family, unsigned int i)
{
	return family == MAGLEV_AF_INET6 || i < 4 || (i >= 16 && i < 20) || i >= 32;
}

static void random_key(struct maglev_flow_key *k, int family)
{
	if (getrandom(k, sizeof(*k), 0) != sizeof(*k))
		abort();
	if (family == MAGLEV_AF_INET)
		memset(&k->src[1], 0, 12), memset(&k->dst[1], 0, 12);
	k->proto = IPPROTO_TCP;
	k->family = (__u8)family;
	k->pad = 0;
}

static __u64 random_u64(void)
{
	__u64 x;

	if (getrandom(&x, sizeof(x), 0) != sizeof(x))
		abort();
	return x;
}

static int conn_same_place(__u64 a, __u64 b)
{
	return (a & CONN_MASK) == (b & CONN_MASK) && maglev_conn_tag(a) == maglev_conn_tag(b);
}

TEST(conn_hash_top_bit_pairs_apart)
{
	unsigned int both = 0, bucket = 0, pairs = 0, fam, i, j, t;

	for (fam = 0; fam < 2; fam++) {
		int family = fam ? MAGLEV_AF_INET6 : MAGLEV_AF_INET;

		for (i = 0; i < KEY_BYTES; i++) {
			for (j = i + 1; j < KEY_BYTES; j++) {
				if (!key_byte_used(family, i) || !key_byte_used(family, j))
					continue;
				for (t = 0; t < PAIR_TRIALS; t++) {
					struct maglev_flow_key a, b;
					__u64 seed = random_u64(), ha, hb;

					random_key(&a, family);
					b = a;
					((__u8 *)&b)[i] ^= 0x80;
					((__u8 *)&b)[j] ^= 0x80;
					ha = maglev_conn_hash(&a, seed);
					hb = maglev_conn_hash(&b, seed);
					pairs++;
					both += conn_same_place(ha, hb);
					bucket += (ha & CONN_MASK) == (hb & CONN_MASK);
				}
			}
		}
	}
	note("conn hash, %u pairs differing in the top bit of two bytes: %u share "
	     "bucket and tag (expect 0), %u the bucket (expect %.1f)\n",
	     pairs, both, bucket, pairs / 65536.0);
	EXPECT_EQ(0, both);
	EXPECT_GE(20, bucket);
}

/*
 * 65,536 keys of one flow varying only in two bytes, under a random seed:
 * IPv6 source bytes 7 and 15 (the top bytes of two hash words), a source
 * byte and a destination byte, IPv4 source first and last octet, source
 * and destination port, both source-port bytes, source octet and port.
 * A random 64-bit function collides among them with probability 1.2e-10
 * (all distinct); over 65,536 buckets they fill 41,427 (sd 80; bounds
 * 40,000 and 43,000: fewer is clumping, more is structure a random function
 * would not keep, e.g. a bijection on the low bits) with the fullest holding about 8 (P(>= 16
 * anywhere) < 1e-8).
 */
struct byte_pair {
	int family;
	int a, b; /* byte offsets in struct maglev_flow_key */
	const char *what;
};

static const struct byte_pair structured[] = {
	{MAGLEV_AF_INET6, 7, 15, "IPv6 source bytes 7 and 15"},
	{MAGLEV_AF_INET6, 7, 23, "IPv6 source byte 7, destination byte 7"},
	{MAGLEV_AF_INET6, 14, 15, "IPv6 source bytes 14 and 15"},
	{MAGLEV_AF_INET6, 15, 33, "IPv6 source byte 15, source port low byte"},
	{MAGLEV_AF_INET, 0, 3, "IPv4 source first and last octet"},
	{MAGLEV_AF_INET, 0, 16, "IPv4 source and destination first octet"},
	{MAGLEV_AF_INET, 32, 33, "IPv4 source port"},
	{MAGLEV_AF_INET, 32, 34, "IPv4 source and destination port high bytes"},
	{MAGLEV_AF_INET, 3, 32, "IPv4 source last octet, source port high byte"},
};

static int cmp_u64(const void *x, const void *y)
{
	__u64 a = *(const __u64 *)x, b = *(const __u64 *)y;

	return a < b ? -1 : a > b;
}

TEST(conn_hash_structured_sets_distinct)
{
	static __u64 h[65536];
	static uint8_t load[CONN_MASK + 1];
	unsigned int s, i;

	for (s = 0; s < sizeof(structured) / sizeof(structured[0]); s++) {
		const struct byte_pair *p = &structured[s];
		unsigned int distinct = 1, buckets = 0, maxload = 0;
		struct maglev_flow_key base, k;
		__u64 seed = random_u64();

		random_key(&base, p->family);
		memset(load, 0, sizeof(load));
		for (i = 0; i < 65536; i++) {
			uint32_t bk;

			k = base;
			((__u8 *)&k)[p->a] = (__u8)(i >> 8);
			((__u8 *)&k)[p->b] = (__u8)i;
			h[i] = maglev_conn_hash(&k, seed);
			bk = (uint32_t)h[i] & CONN_MASK;
			buckets += !load[bk];
			if (load[bk] < 255)
				load[bk]++;
			if (load[bk] > maxload)
				maxload = load[bk];
		}
		qsort(h, 65536, sizeof(h[0]), cmp_u64);
		for (i = 1; i < 65536; i++)
			distinct += h[i] != h[i - 1];
		note("conn hash, 65536 keys varying %s: %u distinct hashes (expect 65536), "
		     "%u buckets (expect ~41427), fullest %u (expect ~8)\n",
		     p->what, distinct, buckets, maxload);
		EXPECT_EQ(65536, distinct);
		EXPECT_LE(40000, buckets);
		EXPECT_GE(43000, buckets);
		EXPECT_GE(15, maxload);
	}
}

TEST_HARNESS_MAIN
