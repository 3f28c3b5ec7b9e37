/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The timed half of model/admit.h: a backend held down past settle_ms
 * leaves its table, and a ramping backend's weight takes its next slow-start
 * step. One commit per tick for all of them; each rebuilds only the VIPs
 * concerned.
 */
#ifndef MAGLEVD_SETTLE_H
#define MAGLEVD_SETTLE_H

#include "core/daemon.h"

/* The event loop's tick. */
void settle_tick(struct daemon *d);

#endif /* MAGLEVD_SETTLE_H */
