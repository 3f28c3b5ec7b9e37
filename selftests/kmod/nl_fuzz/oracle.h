/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The oracle of the fuzz loop: one message sent and judged, the summary of a
 * test, and the checks at its end.
 */
#ifndef NL_FUZZ_ORACLE_H
#define NL_FUZZ_ORACLE_H

#include <stddef.h>
#include <stdint.h>
#include "fixture.h"

void fz_hexdump(const uint8_t *p, size_t len);
double fz_elapsed(FIXTURE_DATA(fz) * self);
int fz_one(FIXTURE_DATA(fz) * self, uint8_t *msg, size_t len, unsigned int idx);
void fz_report(FIXTURE_DATA(fz) * self, const char *what, unsigned int n);
int fz_finish(FIXTURE_DATA(fz) * self);

#endif /* NL_FUZZ_ORACLE_H */
