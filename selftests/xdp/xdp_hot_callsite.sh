#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The hot-flow call site (bpf/xdp_hot.h) must not change how clang compiles
# the rest of the balancer: a pointer to the packet's parse result (pkt) or
# to the destination (d) passed to a call kept both structs in memory
# through the whole program, every field stored and read back, even with hot
# flows off and the call dropped by the verifier (1,387 more instructions
# loaded, the IPv6 hit 3-8 ns slower: docs/benchmarks.md "Hot flows"). So:
# the balancer compiled to LLVM IR with and without the call site
# (-DMAGLEV_HOT_NO_CALL) keeps the same structs on its stack, but for the
# flow key the sampled branch copies.
. "$(dirname "$0")/../packaging/lib.sh"
tmp=$(mktemp -d /tmp/maglev-hot-callsite.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# bpf/bpf.mk's BPF_CFLAGS, as IR.
cflags=(-target bpf -O2 -Wall -Werror -I"$ROOT/include" -I"$ROOT/bpf"
	-I"/usr/include/$(gcc -print-multiarch)" -S -emit-llvm)

# IR file -> the struct types maglev_xdp allocates on its stack, one a line.
structs() {
	awk '/^define .*@maglev_xdp\(/ { f = 1 } f && /^}/ { exit } f' "$1" |
		grep -o 'alloca %struct\.[a-z0-9_]*' | sed 's/alloca %struct\.//' | sort -u
}
check "the balancer compiles to IR with the call site" \
	clang "${cflags[@]}" -o "$tmp/call.ll" "$ROOT/bpf/maglev_xdp.bpf.c"
check "and without it" \
	clang "${cflags[@]}" -DMAGLEV_HOT_NO_CALL -o "$tmp/nocall.ll" "$ROOT/bpf/maglev_xdp.bpf.c"
structs "$tmp/call.ll" >"$tmp/call"
structs "$tmp/nocall.ll" >"$tmp/nocall"
diag "on the stack with the call site: $(paste -sd' ' "$tmp/call")"
diag "without it: $(paste -sd' ' "$tmp/nocall")"
check "the parse result and the destination are not on the stack without the call site" \
	bash -c "! grep -qxE 'maglev_pkt|maglev_dest' '$tmp/nocall'"
check "the call site puts no struct on the stack but the sampled key's copy" \
	bash -c "[ -z \"\$(comm -23 '$tmp/call' '$tmp/nocall' | grep -vx maglev_flow_key)\" ]"
t_done
