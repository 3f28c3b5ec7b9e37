// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_pass: an XDP program that passes every frame, for the router's side of
 * each balancer's veth in the end-to-end topology. The veth driver delivers
 * frames a peer sends with XDP_TX (the balancer's encapsulated packets) only
 * when the receiving veth has an XDP program: with GRO alone they are queued
 * but its NAPI is not scheduled (drivers/net/veth.c, veth_xdp_flush), so they
 * would wait for the next ordinary packet.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
