/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The mutation corpus: requests the real client (userspace/lib/slowpath_nl.c)
 * builds, captured while they are sent.
 */
#ifndef NL_FUZZ_CAPTURE_H
#define NL_FUZZ_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "slowpath_nl.h"
#include "base.h"

#define FZ_CAPTURE_MAX 64

struct fz_capture {
	int on;
	unsigned int n;
	size_t len[FZ_CAPTURE_MAX];
	uint8_t *msg[FZ_CAPTURE_MAX];
};

extern struct fz_capture g_cap;

void fz_capture_reads(struct slowpath_nl *nl, const struct fz_base *b);

#endif /* NL_FUZZ_CAPTURE_H */
