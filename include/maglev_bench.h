/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The wrapper's packet and cycle (maglev_bench_pkt, maglev_bench_vary), and
 * the flow-table slot of the benchmark's minimal forwarder (maglev_bench_floor
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

/* Most flows one cycle of the wrapper (maglev_bench_vary) holds. */
#define MAGLEV_BENCH_VARY_MAX (1 << 21)

#define MAGLEV_BENCH_RESTORE 80 /* covers Ethernet + IPv6 + TCP, all we rewrite */

/* Value of maglev_bench_pkt: the frame the wrapper restores every iteration. */
struct maglev_bench_pkt {
	__u32 len;	/* frame length */
	__u32 vary_off; /* offset of a 32-bit word to make unique per iteration; 0: none */
	/* Nonzero: the word at vary_off is xored with maglev_bench_vary[i %
	 * vary_n] instead, i this CPU's iteration count: a cycle through a
	 * fixed set of flows (the large established cases).
	 */
	__u32 vary_n;
	__u32 pad;
	__u64 data[MAGLEV_BENCH_RESTORE / 8];
};

#endif /* MAGLEV_BENCH_H */
