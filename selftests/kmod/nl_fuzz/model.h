/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A model of the module's table staging (TABLE_BEGIN / CHUNK / COMMIT) per
 * VIP: what is live, what is staged, and the errno each request must get.
 */
#ifndef NL_FUZZ_MODEL_H
#define NL_FUZZ_MODEL_H

#include <stdint.h>
#include "fixture.h"

#define FZ_MODEL_VIPS 4

struct fz_model_vip {
	struct maglev_vip_key key;
	int exists;
	int live;
	uint64_t live_gen;
	uint32_t live_size;
	uint32_t live_tab[FZ_STAGE_MAX_SIZE];
	int staged;
	uint64_t st_gen;
	uint32_t st_size, st_filled; /* contents kept only up to FZ_STAGE_MAX_SIZE */
	uint32_t st_tab[FZ_STAGE_MAX_SIZE];
};

struct fz_model_stats {
	unsigned int begin, chunk, commit, recreate, accepted, commits, slots;
};

int fz_model_verify(FIXTURE_DATA(fz) * self, const struct fz_model_vip *mv,
		    struct fz_model_stats *ms);
int fz_model_step(FIXTURE_DATA(fz) * self, struct fz_model_vip *mv, int nvips,
		  struct fz_model_stats *ms, unsigned int idx);

#endif /* NL_FUZZ_MODEL_H */
