/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * systemd's watchdog (WatchdogSec= in the unit): WATCHDOG=1 from the event
 * loop at half the interval, so a loop stuck for longer gets maglevd
 * restarted (forwarding goes on meanwhile: the program is pinned).
 */
#ifndef MAGLEVD_WATCHDOG_H
#define MAGLEVD_WATCHDOG_H

#include <stdint.h>

/* Read the interval systemd asks for (nothing to do without one). */
void watchdog_init(void);
/* From the event loop's timer: ping when half the interval has passed. */
void watchdog_tick(uint64_t now_ms);

#endif /* MAGLEVD_WATCHDOG_H */
