/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Maglev lookup-table builder (Eisenbud et al., NSDI 2016, section 3.4).
 *
 * The table depends only on the seed, the table size and the set of
 * (backend, weight) pairs: never on the order of the input array.
 */
#ifndef MAGLEV_TABLE_H
#define MAGLEV_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "maglev_hash.h"

#define MAGLEV_M_MIN	  251
#define MAGLEV_M_MAX	  1048573
#define MAGLEV_M_DEFAULT  65537
#define MAGLEV_WEIGHT_MAX 65535

struct maglev_backend_spec {
	uint8_t family;	  /* AF_INET or AF_INET6 */
	uint16_t port;	  /* host order; 0 when the backend is address-only */
	uint32_t addr[4]; /* network order, IPv4 in addr[0] */
	uint32_t weight;  /* 0..MAGLEV_WEIGHT_MAX; 0 = in no slot */
};

struct maglev_err {
	char msg[160];
};

/*
 * Fill out[0..m-1] with indices into be[0..n-1]. Each backend owns
 * floor(m*w/W) or ceil(m*w/W) slots (largest remainder), weight 0 none; see
 * docs/maglev-table.md. Returns 0, or a negative errno with err->msg (err
 * may be NULL) naming what was wrong, out untouched:
 *   -EINVAL  m not a prime in [MAGLEV_M_MIN, MAGLEV_M_MAX], weight > max,
 *            bad family, no backend with a positive weight, NULL seed/out
 *   -EEXIST  the same backend (family, addr, port) twice
 *   -E2BIG   more backends than m
 *   -ENOMEM  allocation failed
 */
int maglev_table_build(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
		       size_t n, uint32_t m, uint32_t *out, struct maglev_err *err);

/* 1 if m is prime and within [MAGLEV_M_MIN, MAGLEV_M_MAX], else 0. */
int maglev_m_valid(uint32_t m);

/*
 * The permutation hashes of one backend: h1 picks its offset, h2 its skip.
 * Each is SipHash-2-4, keyed with the seed, over a 32-byte message: an 8-byte
 * domain tag ("maglevh1" or "maglevh2"), then the backend's canonical id
 * (IP version, 0, port big-endian, 4 zero bytes, 16 address bytes with IPv4
 * zero-padded). Fixed width, so no two ids share a message. Backends take
 * their turns in the byte order of their canonical ids. Returns 0, or
 * -EINVAL for a family other than AF_INET/AF_INET6.
 */
#define MAGLEV_HASH_TAG_H1 0x316876656c67616dULL /* "maglevh1" as a little-endian word */
#define MAGLEV_HASH_TAG_H2 0x326876656c67616dULL /* "maglevh2" */
int maglev_backend_hash(const struct maglev_seed *seed, const struct maglev_backend_spec *b,
			uint64_t *h1, uint64_t *h2);

#endif /* MAGLEV_TABLE_H */
