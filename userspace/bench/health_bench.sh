#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# CPU of maglevd's health checks (issue 37): 10,000 HTTP checks a second on
# this tree's built-in client side by side with REF's (the same client before
# https came, so the two should match), in one run; then this tree's HTTPS
# (libcurl, certificate verified) and HTTP side by side at 1,000 a second,
# which is what a check costs over TLS. maglevd
# runs in a namespace of its own with no interface attached; 1,000 backends
# (4 VIPs x 250 addresses on lo, health_via_encap no, interval 100 ms, rise and
# fall 100 so that no state changes and no table is rebuilt in the window)
# answer through hc_bench_server. Each case: 3 s to settle, then maglevd's user+system
# CPU (/proc/PID/stat) and its count of checks over WINDOW seconds. The builds
# alternate ROUNDS times; medians go to OUT.json, with the share of checks
# that passed (a check slower than its timeout fails). REF:
# MAGLEV_HC_BENCH_REF, default 77c2b5f (the last commit before https).
# Usage: userspace/bench/health_bench.sh OUT.json [ROUNDS] [WINDOW]   (part of make bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
rounds=${2:-2}
window=${3:-10}
ref=${MAGLEV_HC_BENCH_REF:-77c2b5f}
tmp=$(mktemp -d /tmp/maglev-hcbench.XXXXXX)
ns=mghc-$$-$RANDOM
pin=/sys/fs/bpf/maglev-hcbench-$$-$RANDOM
pids=
dpid=
cleanup() {
	[ -n "$dpid" ] && kill -9 "$dpid" 2>/dev/null
	# shellcheck disable=SC2086 # words
	[ -n "$pids" ] && pkill -9 -P "${pids// /,}" 2>/dev/null
	# shellcheck disable=SC2086
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$pin" "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

make -C "$root" -s --no-print-directory build/maglevd build/maglevctl build/bench/hc_bench_server
# MAGLEV_HC_BENCH_REF_MAGLEVD: REF's maglevd already built (skips the build).
refd=${MAGLEV_HC_BENCH_REF_MAGLEVD:-}
if [ -n "$refd" ]; then
	:
elif git -C "$root" rev-parse -q --verify "$ref^{commit}" >/dev/null 2>&1; then
	mkdir -p "$tmp/ref"
	git -C "$root" archive "$ref" | tar -C "$tmp/ref" -xf -
	make -C "$tmp/ref" -s --no-print-directory build/maglevd >"$tmp/build.log" 2>&1 ||
		{ cat "$tmp/build.log" >&2; exit 1; }
	refd=$tmp/ref/build/maglevd
else
	echo "health checks vs $ref: no such commit here (not a git checkout?), this tree only"
fi
ctl() { "$root/build/maglevctl" -s "$tmp/ctl.sock" "$@"; }

ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
for i in $(seq 250); do echo "address add 198.51.100.$i/32 dev lo"; done >"$tmp/addrs"
ip -n "$ns" -b "$tmp/addrs"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-keyout "$tmp/key.pem" -out "$tmp/cert.pem" -subj /CN=backend.example \
	-addext subjectAltName=DNS:backend.example >/dev/null 2>&1
ip netns exec "$ns" "$root/build/bench/hc_bench_server" 8080 32 &
pids="$pids $!"
ip netns exec "$ns" "$root/build/bench/hc_bench_server" 8443 32 "$tmp/cert.pem" "$tmp/key.pem" &
pids="$pids $!"

# run_case NAME MAGLEVD CHECK-OPTIONS VIPS INTERVAL -> "cpu_ticks checks passed" on stdout
run_case() {
	local d=$2 opts=$3 nvips=$4 ival=$5 v i t0 t1 c0 c1 o0 o1
	rm -rf "$pin"
	cat >"$tmp/conf" <<-EOF
		pin_dir $pin
		state_file $tmp/state.json
		control_socket $tmp/ctl.sock
		metrics_listen off
		health_via_encap no
		health_check none
		seed 0123456789abcdef0123456789abcdef
	EOF
	rm -f "$tmp/state.json"
	nsenter --net="/run/netns/$ns" "$d" -c "$tmp/conf" >"$tmp/maglevd-$1.log" 2>&1 &
	dpid=$!
	for _ in $(seq 100); do ctl status >/dev/null 2>&1 && break; sleep 0.05; done
	: >"$tmp/restore"
	for v in $(seq "$nvips"); do
		echo "vip add 192.0.2.$v:$((8000 + v))/tcp $opts --check-interval $ival --check-timeout $((ival - 10)) --rise 100 --fall 100"
		for i in $(seq 250); do echo "backend add 192.0.2.$v:$((8000 + v))/tcp 198.51.100.$i"; done
	done >>"$tmp/restore"
	ctl restore --no-flush "$tmp/restore" >/dev/null
	sleep 3
	checks() { # "all passed": the checks made and those that passed, from one reading per VIP
		local v
		for v in $(seq "$nvips"); do
			ctl -j health "192.0.2.$v:$((8000 + v))/tcp" |
				jq -r '[.backends[] | (.checks_ok // 0) + (.checks_failed // 0) +
					(.checks_unknown // 0)] as $a | [.backends[] | .checks_ok // 0] as $o |
					"\($a | add) \($o | add)"'
		done | awk '{ a += $1; o += $2 } END { print a, o }'
	}
	cpu() { awk '{ print $14 + $15 }' "/proc/$dpid/stat"; }
	read -r c0 o0 < <(checks)
	t0=$(cpu)
	sleep "$window"
	t1=$(cpu)
	read -r c1 o1 < <(checks)
	# the commonest reasons of the last failures (a check slower than its
	# timeout under load shows here)
	for v in $(seq "$nvips"); do ctl -j health "192.0.2.$v:$((8000 + v))/tcp"; done |
		jq -rs '[.[].backends[] | select(.last_result != "ok") | "\(.last_result) \(.last_error)"] | group_by(.) | map("\(length) x \(.[0])") | .[]' |
		sort -rn | head -3 | sed "s/^/# $1: /" >&2
	kill -TERM "$dpid"
	wait "$dpid" 2>/dev/null || true
	dpid=
	echo "$((t1 - t0)) $((c1 - c0)) $((o1 - o0))"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
hz=$(getconf CLK_TCK)
cases="http_now http_ref http_now_1k https_now"
for c in $cases; do : >"$tmp/$c"; done
for _ in $(seq "$rounds"); do
	run_case http_now "$root/build/maglevd" "--check http --check-port 8080" 4 100 >>"$tmp/http_now"
	[ -n "$refd" ] && run_case http_ref "$refd" "--check http --check-port 8080" 4 100 >>"$tmp/http_ref"
	run_case http_now_1k "$root/build/maglevd" "--check http --check-port 8080" 1 250 \
		>>"$tmp/http_now_1k"
	run_case https_now "$root/build/maglevd" \
		"--check https --check-port 8443 --check-host backend.example --check-ca-file $tmp/cert.pem" \
		1 250 >>"$tmp/https_now"
done
# per case: checks/s, CPU % of one core, µs of CPU per check, % passed (medians)
json='{}'
for c in $cases; do
	[ -s "$tmp/$c" ] || continue
	rate=$(awk -v w="$window" '{ print int($2 / w) }' "$tmp/$c" | median)
	pct=$(awk -v w="$window" -v hz="$hz" '{ printf "%.1f\n", 100 * $1 / hz / w }' "$tmp/$c" | median)
	us=$(awk -v hz="$hz" '{ printf "%.1f\n", $2 ? 1e6 * $1 / hz / $2 : 0 }' "$tmp/$c" | median)
	okp=$(awk '{ printf "%.1f\n", $2 ? 100 * $3 / $2 : 0 }' "$tmp/$c" | median)
	printf '%-11s %6s checks/s  %5s%% CPU  %6s us/check  %5s%% ok   (runs: %s)\n' "$c" "$rate" \
		"$pct" "$us" "$okp" "$(awk '{ printf "%s ticks/%s checks/%s ok; ", $1, $2, $3 }' "$tmp/$c")"
	json=$(jq -n --argjson j "$json" --arg c "$c" --argjson r "$rate" --argjson p "$pct" --argjson u "$us" \
		--argjson o "$okp" \
		'$j + {("hc_\($c)_checks_per_s"): $r, ("hc_\($c)_cpu_pct"): $p, ("hc_\($c)_cpu_us_per_check"): $u, ("hc_\($c)_ok_pct"): $o}')
done
echo "$json" >"$out"
