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

#define MAGLEV_M_MIN 251
#define MAGLEV_M_MAX 1048573
#define MAGLEV_M_DEFAULT 65537
#define MAGLEV_WEIGHT_MAX 65535

struct maglev_backend_spec {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint16_t port; /* host order; 0 when the backend is address-only */
	uint32_t addr[4]; /* network order, IPv4 in addr[0] */
	uint32_t weight; /* 0..MAGLEV_WEIGHT_MAX; 0 = in no slot */
};

struct maglev_err {
	char msg[160];
};

/*
 * Fill out[0..m-1] with indices into be[0..n-1]. Returns 0, or a negative
 * errno with err->msg naming what was wrong (out untouched):
 *   -EINVAL  m not a prime in [MAGLEV_M_MIN, MAGLEV_M_MAX], weight > max,
 *            bad family, or no backend with a positive weight
 *   -EEXIST  the same backend (family, addr, port) twice
 *   -E2BIG   more backends than m
 *   -ENOMEM  allocation failed
 */
int maglev_table_build(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
		       size_t n, uint32_t m, uint32_t *out, struct maglev_err *err);

/* 1 if m is prime and within [MAGLEV_M_MIN, MAGLEV_M_MAX], else 0. */
int maglev_m_valid(uint32_t m);

#endif /* MAGLEV_TABLE_H */
