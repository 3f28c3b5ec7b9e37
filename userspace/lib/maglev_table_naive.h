/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The paper's pseudocode, unoptimised: same arguments, errors and output as
 * maglev_table_build(), but O(m*n) memory. For benchmarks and tests only.
 */
#ifndef MAGLEV_TABLE_NAIVE_H
#define MAGLEV_TABLE_NAIVE_H

#include "maglev_table.h"

int maglev_table_build_naive(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
			     size_t n, uint32_t m, uint32_t *out, struct maglev_err *err);

#endif /* MAGLEV_TABLE_NAIVE_H */
