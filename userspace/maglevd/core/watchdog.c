// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <systemd/sd-daemon.h>

#include "core/log.h"
#include "core/watchdog.h"

static uint64_t half_ms, last_ms;

void watchdog_init(void)
{
	uint64_t usec = 0;

	if (sd_watchdog_enabled(0, &usec) <= 0 || !usec)
		return;
	half_ms = usec / 2000;
	if (!half_ms)
		half_ms = 1;
	log_info("systemd watchdog: %llu ms, pinged every %llu ms from the event loop",
		 (unsigned long long)(usec / 1000), (unsigned long long)half_ms);
}

void watchdog_tick(uint64_t now_ms)
{
	if (!half_ms || now_ms - last_ms < half_ms)
		return;
	last_ms = now_ms;
	sd_notify(0, "WATCHDOG=1");
}
