// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The open-file limit maglevd needs: every backend with a check may have a
 * socket open at once, with the control and metrics clients on top. The
 * usual soft limit of 1024 ran checks out of sockets (EMFILE) with a few
 * hundred backends; such checks are "unknown" (health.c), but they are
 * checks not made, so the soft limit is raised as far as the hard one allows.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "core/daemon.h"
#include "core/log.h"

/* The daemon's own: maps, programs, BTF, netlink, epoll, timers, threads. */
#define FD_OWN 512

void fd_limit_raise(const struct maglevd_config *cfg)
{
	uint64_t checks = (uint64_t)cfg->max_vips * cfg->max_backends_per_vip;
	struct rlimit rl;
	rlim_t need;

	if (checks > MAGLEV_MAX_BACKENDS - 1)
		checks = MAGLEV_MAX_BACKENDS - 1;
	need = (rlim_t)checks + CTL_MAX_CLIENTS + METRICS_MAX_CLIENTS + FD_OWN;
	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		log_warn("open-file limit: %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur >= need)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		/* Info, not a warning: the need is for max_vips x max_backends_per_vip
		 * checks at once, which few sites come near; a check that does find
		 * no socket is warned about when it happens (health.c, unknown).
		 */
		log_info("open-file limit: the hard limit %llu is below the %llu that max_vips x "
			 "max_backends_per_vip checks at once would need; checks beyond it are "
			 "counted as unknown",
			 (unsigned long long)rl.rlim_max, (unsigned long long)need);
		need = rl.rlim_max;
		if (rl.rlim_cur >= need)
			return;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		log_warn("open-file limit: raising to %llu: %s", (unsigned long long)need,
			 strerror(errno));
		return;
	}
	log_info("open-file limit raised to %llu", (unsigned long long)need);
}
