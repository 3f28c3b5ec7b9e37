#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The established-flow cases of xdp_bench side by side with the same cases
# built from an older commit (issue 14: "the established path no slower than
# today in the same run"). The two builds run alternately ROUNDS times
# (machine noise hits both alike); the medians of their net figures and
# their ratio go to OUT.json. REF: MAGLEV_BENCH_REF, default b4d9d2c, the
# last commit before the issue 14 work ("today" in that issue). Not a git checkout, or REF unknown: says so and
# writes no figures.
# Usage: userspace/bench/established_vs_ref.sh OUT.json [ROUNDS]   (part of make bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
rounds=${2:-3}
ref=${MAGLEV_BENCH_REF:-b4d9d2c}
tmp=$(mktemp -d /tmp/maglev-ref.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if ! git -C "$root" rev-parse -q --verify "$ref^{commit}" >/dev/null 2>&1; then
	echo "established vs $ref: no such commit here (not a git checkout?), skipped"
	echo '{}' >"$out"
	exit 0
fi
make -C "$root" -s --no-print-directory build/bench/xdp_bench
git -C "$root" archive "$ref" | tar -C "$tmp" -xf -
make -C "$tmp" -s --no-print-directory build/bench/xdp_bench >"$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log" >&2; exit 1; }

# One run of each build per round covers both cases ("established_v"
# matches established_v4 and _v6, not the large cases).
run() { # binary -> "v4 v6" net ns; hot flows off at load, as by default
	XDP_BENCH_NO_HOT=1 XDP_BENCH_ONLY=established_v "$1" "$tmp/run.json" >"$tmp/run.txt" 2>&1 ||
		{ cat "$tmp/run.txt" >&2; exit 1; }
	jq -er '"\(.xdp_ns_established_v4_net) \(.xdp_ns_established_v6_net)"' "$tmp/run.json"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$tmp/now" && : >"$tmp/ref"
for _ in $(seq "$rounds"); do
	run "$root/build/bench/xdp_bench" >>"$tmp/now"
	run "$tmp/build/bench/xdp_bench" >>"$tmp/ref"
done
json='{}'
for col in 1 2; do
	c=$([ "$col" = 1 ] && echo established_v4 || echo established_v6)
	n=$(cut -d' ' -f"$col" "$tmp/now" | median)
	r=$(cut -d' ' -f"$col" "$tmp/ref" | median)
	echo "$c, net ns, $rounds alternating runs each (median):"
	printf '  %-28s %6s   (%s)\n' "this tree" "$n" "$(cut -d' ' -f"$col" "$tmp/now" | paste -sd' ')"
	printf '  %-28s %6s   (%s)\n' "$ref" "$r" "$(cut -d' ' -f"$col" "$tmp/ref" | paste -sd' ')"
	json=$(jq -n --argjson j "$json" --argjson n "$n" --argjson r "$r" --arg c "$c" \
		'$j + {("xdp_ns_\($c)_net_now"): $n, ("xdp_ns_\($c)_net_ref"): $r,
		       ("ratio_\($c)_now_vs_ref"): ($n / $r)}')
done
echo "$json" >"$out"
