#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Measurement, not a test of the suite (docs/benchmarks.md, "Flapping and
# returning backends"): three real backends (lib_backends.sh), real TCP
# clients (longconn: 32 connections of 5 requests 50 ms apart, each reopened
# at once on a new port, so new flows arrive all the time), backend 1's check
# flapping every 2 s (1 s failing, 1 s passing) for FLAP_S seconds, under
# each configuration of CONFS. Prints per configuration: table rebuilds,
# health verdicts (what health_scope fleet writes to etcd, one status put
# each), connections reset or failed, answers from another backend.
# Then a returning backend's share of new flows, 0.5 s apart, without and
# with slow_start_ms. Usage: selftests/daemon/flap_bench.sh [FLAP_S]
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"

FLAP_S=${1:-20}
trap 'backends_cleanup; cleanup' EXIT
setup_net || skip_all "cannot create namespaces/veth"
V=192.0.2.40:8080/tcp
backends_up 3 192.0.2.40
CONFS=("before (settle_ms 0, no damping)|"
	"settle_ms 5000|settle_ms 5000"
	"settle_ms 5000 + damping|settle_ms 5000;damping_penalty 1000"
	"before, health_on_fail drain|health_on_fail drain"
	"settle_ms 5000, health_on_fail drain|settle_ms 5000;health_on_fail drain")

# run_conf LINES: maglevd with the ';'-separated LINES, the VIP, 3 backends up.
run_conf() {
	local lines=()
	IFS=';' read -r -a lines <<<"$1"
	stop_daemon
	echo '{"version":1,"vips":[]}' >"$STATE"
	: >"$DLOG"
	write_conf "health_via_encap yes" "src4_prefix 198.51.100.192/27" "${lines[@]}"
	start_daemon || return 1
	ctl vip add $V --check tcp --check-port 8081 --check-interval 200 --check-timeout 150 \
		--rise 1 --fall 1 >/dev/null
	for b in 1 2 3; do ctl backend add $V 198.51.100.4$b >/dev/null; done
	for b in 1 2 3; do
		wait_state $V 198.51.100.4$b up 15 || {
			diag "backend $b: $(ctl -j backend list $V | jq -c .backends)"
			return 1
		}
	done
}
gen() { ctl -j vip show $V | jq -r .vip.table_gen; }

for c in "${CONFS[@]}"; do
	[ -n "${SHARE_ONLY:-}" ] && break
	name=${c%%|*}
	run_conf "${c#*|}" || { nok "$name: maglevd and backends up"; continue; }
	g0=$(gen)
	clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 32 -i 50 --requests 5 --reopen 0 \
		-T $((FLAP_S + 2)) >"$TDIR/l.out" 2>&1 &
	L=$!
	sleep 1
	end=$((SECONDS + FLAP_S))
	while [ $SECONDS -lt $end ]; do
		check_off 1 192.0.2.40
		sleep 1
		check_on 1 192.0.2.40
		sleep 1
	done
	wait $L
	verdicts=$(grep -cE 'health: backend .* is (up|down)' "$DLOG")
	line=$(grep '^conns' "$TDIR/l.out")
	diag "$name: rebuilds $(($(gen) - g0)), verdicts $verdicts, $line"
	ok "$name: measured over $FLAP_S s"
done

# A returning backend's share of new flows (backend 1 down long enough to
# leave the table, then back): new_flows per backend every 0.5 s.
share() {
	ctl -j stats $V | jq -r '[.vips[0].backends[] | {(.backend): .new_flows}] | add | [.["198.51.100.41"], ([.[]] | add)] | @tsv'
}
for c in "slow_start_ms 0|" "slow_start_ms 8000|slow_start_ms 8000"; do
	name=${c%%|*}
	run_conf "${c#*|}" || { nok "$name: maglevd and backends up"; continue; }
	check_off 1 192.0.2.40
	wait_state $V 198.51.100.41 down 3 || nok "$name: backend 1 down before its return"
	clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 32 -i 50 --requests 5 --reopen 0 \
		-T 14 >"$TDIR/l.out" 2>&1 &
	L=$!
	sleep 1
	check_on 1 192.0.2.40
	read -r p0 t0 <<<"$(share)"
	row=
	for i in $(seq 20); do
		sleep 0.5
		read -r p1 t1 <<<"$(share)"
		[ $((t1 - t0)) -gt 0 ] && row="$row $((100 * (p1 - p0) / (t1 - t0)))%" || row="$row -"
		p0=$p1
		t0=$t1
	done
	wait $L
	diag "$name: backend 1's share of new flows each 0.5 s after its return:$row"
	diag "$name: $(grep '^conns' "$TDIR/l.out")"
	ok "$name: share measured"
done
stop_daemon
t_done
