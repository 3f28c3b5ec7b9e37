/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shared by the table and placement tests: an independent transcription of
 * the hash specification (byte-oriented SipHash-2-4, the canonical id built
 * byte by byte), backend sets, and the table digest.
 */
#ifndef TABLE_REF_H
#define TABLE_REF_H

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "maglev_table.h"

static const struct maglev_seed default_seed = {MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1};

/* ---- independent SipHash-2-4, bytes in, as in the SipHash paper ---- */

static inline uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void sipround(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13);
	v[1] ^= v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17);
	v[1] ^= v[2];
	v[2] = rotl(v[2], 32);
}

static inline uint64_t ref_siphash24(const uint8_t key[16], const uint8_t *msg, size_t len)
{
	uint64_t k0 = le64(key), k1 = le64(key + 8), m, v[4];
	size_t i, end = len - len % 8;

	v[0] = 0x736f6d6570736575ULL ^ k0;
	v[1] = 0x646f72616e646f6dULL ^ k1;
	v[2] = 0x6c7967656e657261ULL ^ k0;
	v[3] = 0x7465646279746573ULL ^ k1;
	for (i = 0; i <= end; i += 8) {
		if (i < end) {
			m = le64(msg + i);
		} else {
			m = (uint64_t)len << 56;
			for (size_t j = 0; j < len % 8; j++)
				m |= (uint64_t)msg[end + j] << (8 * j);
		}
		v[3] ^= m;
		sipround(v);
		sipround(v);
		v[0] ^= m;
	}
	v[2] ^= 0xff;
	for (i = 0; i < 4; i++)
		sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static inline void seed_key(const struct maglev_seed *seed, uint8_t key[16])
{
	int i;

	for (i = 0; i < 8; i++) {
		key[i] = seed->k0 >> (8 * i);
		key[8 + i] = seed->k1 >> (8 * i);
	}
}

/* The documented canonical id: version, 0, port (big-endian), 4 zero bytes,
 * 16 address bytes (IPv4 zero-padded).
 */
static inline void canon_id(const struct maglev_backend_spec *b, uint8_t id[24])
{
	memset(id, 0, 24);
	id[0] = b->family == AF_INET ? 4 : 6;
	id[2] = b->port >> 8;
	id[3] = b->port & 0xff;
	memcpy(id + 8, b->addr, b->family == AF_INET ? 4 : 16);
}

static inline uint64_t ref_hash(const struct maglev_seed *seed, const struct maglev_backend_spec *b,
				int which)
{
	uint8_t key[16], msg[32];

	seed_key(seed, key);
	memcpy(msg, which == 1 ? "maglevh1" : "maglevh2", 8);
	canon_id(b, msg + 8);
	return ref_siphash24(key, msg, sizeof(msg));
}

/* ---- backend sets ---- */

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static inline struct maglev_backend_spec v4(uint32_t host_addr, uint16_t port, uint32_t weight)
{
	struct maglev_backend_spec b = {.family = AF_INET, .port = port, .weight = weight};

	b.addr[0] = htonl(host_addr);
	return b;
}

static inline struct maglev_backend_spec v6(uint32_t low, uint16_t port, uint32_t weight)
{
	struct maglev_backend_spec b = {.family = AF_INET6, .port = port, .weight = weight};

	b.addr[0] = htonl(0x20010db8);
	b.addr[3] = htonl(low);
	return b;
}

enum mix { EQUAL, RANDOM, WITH_ZEROS, EXTREME };

/* n distinct backends (IPv4 in 198.51.100.0/24 and IPv6 in 2001:db8::/32,
 * ports varied), weights by mix.
 */
static inline struct maglev_backend_spec *fleet(size_t n, enum mix mix, uint64_t rng)
{
	struct maglev_backend_spec *be = calloc(n, sizeof(*be));
	size_t i;

	rng_state = rng | 1;
	for (i = 0; i < n; i++) {
		uint32_t w = 1;

		switch (mix) {
		case EQUAL:
			w = 7;
			break;
		case RANDOM:
			w = 1 + rnd() % MAGLEV_WEIGHT_MAX;
			break;
		case WITH_ZEROS:
			w = i % 3 == 0 ? 0 : 1 + rnd() % 100;
			break;
		case EXTREME:
			w = i % 2 ? MAGLEV_WEIGHT_MAX : 1;
			break;
		}
		if (i % 2)
			be[i] = v6(i + 1, 443, w);
		else
			be[i] = v4(0xc6336400 | ((i / 2) % 254 + 1), 8000 + i / 508, w);
	}
	if (mix == WITH_ZEROS && n == 1)
		be[0].weight = 1;
	return be;
}

static inline int same_backend(const struct maglev_backend_spec *a,
			       const struct maglev_backend_spec *b)
{
	uint8_t x[24], y[24];

	canon_id(a, x);
	canon_id(b, y);
	return !memcmp(x, y, 24);
}

static const struct maglev_seed seeds[] = {
	{MAGLEV_DEFAULT_SEED_K0, MAGLEV_DEFAULT_SEED_K1},
	{0, 0},
	{0x0123456789abcdefULL, 0xfedcba9876543210ULL},
	{0xffffffffffffffffULL, 1},
};

/* FNV-1a over the table, entries as 4 little-endian bytes. */
static inline uint64_t digest(const uint32_t *t, uint32_t m)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t i;
	int k;

	for (i = 0; i < m; i++) {
		for (k = 0; k < 4; k++) {
			h ^= (t[i] >> (8 * k)) & 0xff;
			h *= 0x100000001b3ULL;
		}
	}
	return h;
}

/* Owners compared by identity, as indices depend on the input order. */
static inline size_t changed(const uint32_t *a, const struct maglev_backend_spec *bea,
			     const uint32_t *b, const struct maglev_backend_spec *beb, uint32_t m)
{
	size_t c = 0;
	uint32_t i;

	for (i = 0; i < m; i++)
		c += !same_backend(&bea[a[i]], &beb[b[i]]);
	return c;
}

#endif /* TABLE_REF_H */
