/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * main() of the module's tests on topo.sh's topology (after
 * kselftest_harness.h): the set-up runs once before the tests fork, and the
 * namespaces go away however the run ends (exit, SIGINT, SIGTERM), taken
 * down by the harness's main process only, never by a test's child.
 * MAGLEV_KEEP_TOPOLOGY set: left for inspection.
 */
#ifndef KMOD_TOPO_H
#define KMOD_TOPO_H

#include <signal.h>
#include "kmod_pkt.h"

/* Set by the set-up once topo.sh ran (kmod_lb_setup() does). */
static int kmod_topology_up;
static pid_t kmod_main_pid;
/* Namespaces of the test's own to delete first (ip netns names), or NULL. */
static const char *kmod_extra_netns;

static void kmod_topology_down(void)
{
	char cmd[128];

	if (!kmod_topology_up || getpid() != kmod_main_pid || getenv("MAGLEV_KEEP_TOPOLOGY"))
		return;
	kmod_topology_up = 0;
	if (kmod_extra_netns) {
		snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null", kmod_extra_netns);
		if (system(cmd))
			fprintf(stderr, "# ip netns del %s failed\n", kmod_extra_netns);
	}
	if (system("selftests/kmod/topo.sh down"))
		fprintf(stderr, "# topo.sh down failed\n");
}

static void kmod_on_signal(int sig)
{
	kmod_topology_down();
	_exit(128 + sig);
}

static void __attribute__((constructor)) __constructor_order_last(void)
{
	if (!__constructor_order)
		__constructor_order = _CONSTRUCTOR_ORDER_BACKWARD;
}

/* setup(): 0, -ENOENT (module not loaded: skip all) or another -errno. */
static inline int kmod_topology_main(int argc, char **argv, int (*setup)(void))
{
	int err;

	kmod_main_pid = getpid();
	atexit(kmod_topology_down);
	signal(SIGINT, kmod_on_signal);
	signal(SIGTERM, kmod_on_signal);
	err = setup();
	if (err == -ENOENT) {
		printf("1..0 # SKIP maglev genetlink family not registered (module not loaded)\n");
		return KSFT_SKIP;
	}
	if (err) {
		printf("1..0 # setup failed: %s\n", strerror(-err));
		return KSFT_FAIL;
	}
	return test_harness_run(argc, argv);
}

#endif /* KMOD_TOPO_H */
