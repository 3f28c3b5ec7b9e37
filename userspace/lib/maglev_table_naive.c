// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The paper's population pseudocode (NSDI 2016, section 3.4, "Pseudocode 1"),
 * transcribed plainly: a precomputed permutation[i][j] array (O(m*n) memory)
 * and a modulo per entry. Only the benchmark (speed ratio) and the tests
 * (the fast builder must produce the same bytes) use it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "maglev_table_naive.h"
#include "maglev_table_plan.h"

int maglev_table_build_naive(const struct maglev_seed *seed, const struct maglev_backend_spec *be,
			     size_t n, uint32_t m, uint32_t *out, struct maglev_err *err)
{
	uint32_t *permutation, *next, *count;
	int64_t *entry;
	struct maglev_plan p;
	uint32_t i, j, filled = 0;
	int ret;

	ret = maglev_plan_make(&p, seed, be, n, m, out, err);
	if (ret)
		return ret;
	permutation = malloc(sizeof(*permutation) * (size_t)p.n * m);
	next = calloc(p.n, sizeof(*next));
	count = calloc(p.n, sizeof(*count));
	entry = malloc(sizeof(*entry) * m);
	if (!permutation || !next || !count || !entry) {
		if (err)
			strcpy(err->msg, "out of memory for the permutation array");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p.n; i++)
		for (j = 0; j < m; j++)
			permutation[(size_t)i * m + j] =
				((uint64_t)p.e[i].offset + (uint64_t)j * p.e[i].skip) % m;
	for (j = 0; j < m; j++)
		entry[j] = -1;
	/* Weighted turns: a backend that owns its quota sits the rest out. */
	for (;;) {
		for (i = 0; i < p.n; i++) {
			uint32_t c;

			if (count[i] == p.e[i].quota)
				continue;
			c = permutation[(size_t)i * m + next[i]];
			while (entry[c] >= 0) {
				next[i] = next[i] + 1;
				c = permutation[(size_t)i * m + next[i]];
			}
			entry[c] = i;
			next[i] = next[i] + 1;
			count[i]++;
			filled++;
			if (filled == m)
				goto done;
		}
	}
done:
	for (j = 0; j < m; j++)
		out[j] = p.e[entry[j]].idx;
out:
	free(permutation);
	free(next);
	free(count);
	free(entry);
	maglev_plan_free(&p);
	return ret;
}
