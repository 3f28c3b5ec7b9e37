#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What hot flows (issue 35) cost the established path, off and on, against
# the same tree built without the hot-flow call site (-DMAGLEV_HOT_NO_CALL,
# build/hot-nocall): the call site must cost nothing while hot flows are off
# at load (the default). Per round, alternately: that build, this build
# loaded off (XDP_BENCH_NO_HOT=1), this build loaded on (the 1-in-16 cases
# of xdp_bench), ROUNDS rounds (machine noise hits all alike); the medians
# of the net figures and the ratios to OUT.json.
# Usage: userspace/bench/hot_callsite.sh OUT.json [ROUNDS]   (part of make bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
rounds=${2:-5}
tmp=$(mktemp -d /tmp/maglev-hotcall.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
build=$root/build
nocall=$build/hot-nocall

make -C "$root" -s --no-print-directory build/bench/xdp_bench
make -C "$root" -s --no-print-directory BUILD=build/hot-nocall \
	BPF_EXTRA_CFLAGS=-DMAGLEV_HOT_NO_CALL KSRC=build/ksrc build/hot-nocall/bench/xdp_bench \
	>"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }

# binary, hot flows loaded (on/off), file: appends one line of net ns,
# "v4 v6" (off) or "v4 v6 v4_hot v6_hot" (on: the same program loaded with
# hot flows, sampling 0 for v4 and v6, then 1 in 16).
run() {
	local env=(XDP_BENCH_ONLY=established_v) q='"\(.xdp_ns_established_v4_net) \(.xdp_ns_established_v6_net)'
	if [ "$2" = on ]; then
		q+=' \(.xdp_ns_established_v4_hot_net) \(.xdp_ns_established_v6_hot_net)'
	else
		env+=(XDP_BENCH_NO_HOT=1)
	fi
	env "${env[@]}" "$1" "$tmp/run.json" >"$tmp/run.txt" 2>&1 ||
		{ cat "$tmp/run.txt" >&2; exit 1; }
	jq -er "$q\"" "$tmp/run.json" >>"$3"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$tmp/nocall" && : >"$tmp/off" && : >"$tmp/on"
for _ in $(seq "$rounds"); do
	run "$nocall/bench/xdp_bench" off "$tmp/nocall"
	run "$build/bench/xdp_bench" off "$tmp/off"
	run "$build/bench/xdp_bench" on "$tmp/on"
done

json='{}'
# file column json-key label
row() {
	local v m
	v=$(cut -d' ' -f"$2" "$1" | paste -sd' ')
	m=$(cut -d' ' -f"$2" "$1" | median)
	printf '  %-44s %6.1f   (%s)\n' "$4" "$m" "$v"
	json=$(jq -n --argjson j "$json" --argjson m "$m" --arg k "$3" '$j + {($k): $m}')
}
for fam in v4 v6; do
	col=$([ "$fam" = v4 ] && echo 1 || echo 2)
	echo "established $fam, net ns, $rounds alternating runs each (median):"
	row "$tmp/nocall" "$col" "xdp_ns_established_${fam}_net_nocall" "built without the call site"
	row "$tmp/off" "$col" "xdp_ns_established_${fam}_net_hot_off" "hot flows off at load"
	row "$tmp/on" "$col" "xdp_ns_established_${fam}_net_hot_on0" "hot flows on, sampling 0"
	row "$tmp/on" $((col + 2)) "xdp_ns_established_${fam}_net_hot_on" "hot flows on, 1 in 16"
	json=$(jq -n --argjson j "$json" --arg f "$fam" \
		'$j + {("ratio_established_\($f)_hot_off_vs_nocall"):
			($j["xdp_ns_established_\($f)_net_hot_off"] / $j["xdp_ns_established_\($f)_net_nocall"]),
		       ("xdp_ns_hot_cost_\($f)_vs_nocall"):
			($j["xdp_ns_established_\($f)_net_hot_on"] - $j["xdp_ns_established_\($f)_net_nocall"])}')
done
echo "$json" | jq -r 'to_entries[] | select(.key | test("^ratio|_vs_nocall$")) | "  \(.key) \(.value)"'
echo "$json" >"$out"
