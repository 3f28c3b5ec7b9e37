/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A VIP's balance factor C (--balance-factor, bounded loads), as the control
 * requests and the state file spell it. Kept in thousandths; 0: off.
 * datapath/bounded.c applies it.
 */
#ifndef MAGLEVD_BALANCE_H
#define MAGLEVD_BALANCE_H

#include <stddef.h>
#include <stdint.h>

#define BALANCE_MILLI_MIN 1010
#define BALANCE_MILLI_MAX 10000

/* "1.25" -> 1250, "off" -> 0; -EINVAL outside 1.01..10 or not a number. */
int balance_parse(const char *s, uint32_t *milli);
/* 1250 -> "1.25" (buf of at least 16). */
void balance_format(uint32_t milli, char *buf, size_t len);

#endif
