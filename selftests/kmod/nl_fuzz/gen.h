/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The random request generator: its PRNG stream and helpers, and whole
 * requests for a command with random attribute sets.
 */
#ifndef NL_FUZZ_GEN_H
#define NL_FUZZ_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>
#include "kmod_util.h"

#define FZ_BUF 65536 /* the largest request: a 32 KiB chunk and 30 more attributes */

struct fz_gen {
	uint64_t rs;
	struct maglev_vip_key key; /* the VIP this request is about */
	int valid;		   /* plausible values are also valid ones */
};

uint64_t fz_r(struct fz_gen *g, uint64_t n);
int fz_pct(struct fz_gen *g, int pct);
uint64_t fz_pick64(struct fz_gen *g, const uint64_t *v, size_t n);

#define FZ_PICK(g, ...)                               \
	fz_pick64(g, (const uint64_t[]){__VA_ARGS__}, \
		  sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

void fz_rand_bytes(struct fz_gen *g, uint8_t *p, size_t n);
struct nlmsghdr *fz_random_request(struct fz_gen *g, void *buf, uint16_t family, uint8_t cmd);

#endif /* NL_FUZZ_GEN_H */
