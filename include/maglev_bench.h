/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Flow-table slot of the benchmark's minimal forwarder (maglev_bench_floor
 * in bpf/maglev_bench.bpf.c), shared with userspace/bench/xdp_bench.c, which
 * fills it.
 */
#ifndef MAGLEV_BENCH_H
#define MAGLEV_BENCH_H

#include <linux/types.h>

struct maglev_bench_flow {
	__be32 saddr, daddr;
	__u32 ports; /* source and destination port as loaded from the TCP header */
	__be32 backend;
};

#define MAGLEV_BENCH_FLOWS 4096

#endif /* MAGLEV_BENCH_H */
