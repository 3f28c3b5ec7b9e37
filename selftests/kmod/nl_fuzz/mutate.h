/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Malformed messages: header-level garbage around a random request, and
 * byte-level mutations of a captured client request, in the fixture's
 * buffer.
 */
#ifndef NL_FUZZ_MUTATE_H
#define NL_FUZZ_MUTATE_H

#include <stddef.h>
#include "fixture.h"

size_t fz_bad_header(FIXTURE_DATA(fz) * self);
size_t fz_mutate(FIXTURE_DATA(fz) * self, size_t len);

#endif /* NL_FUZZ_MUTATE_H */
