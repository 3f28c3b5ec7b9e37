#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The established-flow case of xdp_bench, side by side with the balancer
# stripped of most of what its hit path does (stripped.patch lists what), to
# show how far the 40 ns target is from the program's skeleton. The two
# builds run alternately ROUNDS times (machine noise hits both alike); the
# medians of their net figures go to OUT.json.
# Usage: userspace/bench/stripped_bench.sh OUT.json [ROUNDS]   (part of make bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
rounds=${2:-3}
tmp=$(mktemp -d /tmp/maglev-stripped.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

make -C "$root" -s --no-print-directory build/bench/xdp_bench
"$root/userspace/bench/stripped_tree.sh" "$tmp"
make -C "$tmp" -s --no-print-directory build/bench/xdp_bench >"$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log" >&2; exit 1; }

run() { # binary -> net ns of the established v4 case
	XDP_BENCH_ONLY=established_v4 "$1" "$tmp/run.json" >"$tmp/run.txt" 2>&1 ||
		{ cat "$tmp/run.txt" >&2; exit 1; }
	jq -e '.xdp_ns_established_v4_net' "$tmp/run.json"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$tmp/product" && : >"$tmp/stripped"
for _ in $(seq "$rounds"); do
	run "$root/build/bench/xdp_bench" >>"$tmp/product"
	run "$tmp/build/bench/xdp_bench" >>"$tmp/stripped"
done
p=$(median <"$tmp/product")
s=$(median <"$tmp/stripped")
echo "established flow v4, net ns, $rounds alternating runs each (median):"
printf '  %-44s %6s   (%s)\n' "balancer" "$p" "$(paste -sd' ' "$tmp/product")"
printf '  %-44s %6s   (%s)\n' "stripped (userspace/bench/stripped.patch)" "$s" \
	"$(paste -sd' ' "$tmp/stripped")"
jq -n --argjson p "$p" --argjson s "$s" \
	'{xdp_ns_established_v4_net_sidebyside: $p, xdp_ns_established_v4_net_stripped: $s}' >"$out"
