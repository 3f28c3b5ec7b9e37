// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Benchmark wrapper for BPF_PROG_TEST_RUN with repeat: the kernel reruns the
 * program on the same buffer without restoring it, so a balancer that
 * encapsulates would see its own output on the next iteration. This program
 * puts the original head position and header bytes back, optionally gives
 * every iteration a new client address, and tail-calls the program under
 * test (slot 0 of maglev_bench_next).
 */
#include "xdp_consts.h"
#include "maglev_bench.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct maglev_bench_pkt);
} maglev_bench_pkt SEC(".maps");

/* Shared (not per-CPU): successive runs may land on different CPUs and
 * must still never repeat a client address.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} maglev_bench_iter SEC(".maps");

/* The flows of a cycle (values to xor in, network order), written by the
 * benchmark, which chooses them so that each has a way of its own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAGLEV_BENCH_VARY_MAX);
	__type(key, __u32);
	__type(value, __u32);
} maglev_bench_vary SEC(".maps");

/* Per CPU: two CPUs cycling at once share no written line here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} maglev_bench_cycle SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} maglev_bench_next SEC(".maps");

SEC("xdp")
int maglev_bench(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct maglev_bench_pkt *p;
	__u32 zero = 0, off;
	__u64 *iter;
	int len, i;

	p = bpf_map_lookup_elem(&maglev_bench_pkt, &zero);
	if (!p)
		return XDP_ABORTED;
	/* The programs under test only move the head (encapsulation). The
	 * call is made every iteration, also when the head did not move (the
	 * baseline, non-VIP): the wrapper then costs the same in every case
	 * and the baseline subtracts all of it.
	 */
	len = data_end - data;
	if (bpf_xdp_adjust_head(ctx, len - (int)p->len))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + MAGLEV_BENCH_RESTORE > data_end)
		return XDP_ABORTED;
		/* Word copies: a byte-wise memcpy would cost as much as the balancer. */
#pragma unroll
	for (i = 0; i < MAGLEV_BENCH_RESTORE / 8; i++)
		((__u64 *)data)[i] = ((__u64 *)p->data)[i];
	off = p->vary_off;
	if (off) {
		__u32 *w, *v, n = p->vary_n, k;

		if (off > MAGLEV_BENCH_RESTORE - 4)
			return XDP_ABORTED;
		w = data + off;
		if ((void *)(w + 1) > data_end)
			return XDP_ABORTED;
		if (n) {
			iter = bpf_map_lookup_elem(&maglev_bench_cycle, &zero);
			if (!iter)
				return XDP_ABORTED;
			k = (__u32)(*iter % n);
			*iter += 1;
			v = bpf_map_lookup_elem(&maglev_bench_vary, &k);
			if (!v)
				return XDP_ABORTED;
			*w ^= *v;
		} else {
			iter = bpf_map_lookup_elem(&maglev_bench_iter, &zero);
			if (!iter)
				return XDP_ABORTED;
			*iter += 1;
			*w ^= bpf_htonl((__u32)*iter);
		}
	}
	bpf_tail_call(ctx, &maglev_bench_next, 0);
	return XDP_ABORTED;
}

/* Baseline: what the wrapper itself costs (restore + tail call). */
SEC("xdp")
int maglev_bench_noop(struct xdp_md *ctx)
{
	return XDP_TX;
}

/* Floor of any encapsulating program: one bpf_xdp_adjust_head for a
 * 20-byte outer IPv4 header, nothing else.
 */
SEC("xdp")
int maglev_bench_adjust(struct xdp_md *ctx)
{
	if (bpf_xdp_adjust_head(ctx, -20))
		return XDP_ABORTED;
	return XDP_TX;
}

/* Floor of a balancer's established path, for scale: what any IPv4/TCP
 * forwarder must do, and nothing more. Ethernet (no VLAN), IPv4 without
 * options, TCP ports; one flow-table read keyed by a one-multiply hash of
 * the addresses and ports, compared in full; a 20-byte IPIP header with its
 * checksum; XDP_TX. No counters, no backend state, no VIP, no IPv6, no TTL
 * or MTU check. The benchmark fills every slot with its flow, so every
 * iteration matches (XDP_TX; a mismatch would return XDP_DROP).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAGLEV_BENCH_FLOWS);
	__type(key, __u32);
	__type(value, struct maglev_bench_flow);
} maglev_bench_flows SEC(".maps");

SEC("xdp")
int maglev_bench_floor(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct maglev_bench_flow *f;
	struct iphdr *iph, *o;
	__u32 idx, ports, sum;
	__u16 tot;

	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) + 4 > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    *(__u8 *)iph != 0x45 || iph->protocol != IPPROTO_TCP)
		return XDP_PASS;
	ports = *(__u32 *)(iph + 1);
	idx = ((iph->saddr ^ iph->daddr ^ ports) * 0x9e3779b1U) >> 20;
	f = bpf_map_lookup_elem(&maglev_bench_flows, &idx);
	if (!f || f->saddr != iph->saddr || f->daddr != iph->daddr || f->ports != ports)
		return XDP_DROP;
	tot = bpf_ntohs(iph->tot_len) + sizeof(*iph);
	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(*iph)))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	o = (void *)(eth + 1);
	if ((void *)(o + 1) + sizeof(*eth) > data_end)
		return XDP_DROP;
	/* The MACs move with the frame: the old Ethernet header is 20 bytes on. */
	__builtin_memcpy(eth, (void *)eth + sizeof(*iph), sizeof(*eth));
	o->version = 4;
	o->ihl = 5;
	o->tos = 0;
	o->tot_len = bpf_htons(tot);
	o->id = 0;
	o->frag_off = bpf_htons(0x4000);
	o->ttl = 64;
	o->protocol = IPPROTO_IPIP;
	o->check = 0;
	o->saddr = f->daddr;
	o->daddr = f->backend;
	sum = maglev_csum_iph(o);
	o->check = maglev_csum_fold(sum);
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
