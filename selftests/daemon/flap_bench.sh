#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Measurement, not a test of the suite (docs/benchmarks.md, "Flapping and
# returning backends"): three real backends (lib_backends.sh), real TCP
# clients (longconn: 32 connections of 5 requests 50 ms apart, each reopened
# at once on a new port, so new flows arrive all the time), backend 1's check
# flapping every 2 s (1 s failing, 1 s passing) for FLAP_S seconds (default
# 60), under each configuration of CONFS, then of FCONFS in a fleet. Each
# configuration starts from an empty connection table (the pins removed).
# Prints per configuration: table rebuilds, backend 1's slots moved (its
# slot count in the live table sampled every 0.2 s, the changes summed),
# verdicts applied, connections reset, failed, answered by another backend.
#
# The fleet (FCONFS, health_scope fleet): etcd (one member, in the client
# namespace on 203.0.113.2:2379) and three maglevd: b1 is the balancer the
# clients go through (checks through the encapsulation); b2 and b3 run in
# the client namespace with no interface and check the backends' own
# addresses (health_via_encap no, a listener on 198.51.100.4N:8081 that
# flaps with backend 1's VIP one). Counted over the flap window: etcd's
# revision (every put or txn moves it by one), the puts of each balancer's
# status key (its key's version), and the votes each balancer published
# (its log's "is up/down here").
#
# Then a returning backend's share of new flows, 0.5 s apart, without and
# with slow_start_ms.
# Usage: selftests/daemon/flap_bench.sh [FLAP_S]; FLAP_LOCAL=0, FLAP_FLEET=0,
# FLAP_SHARE=0 leave that part out (SHARE_ONLY=1: the share part alone).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"
. "$(dirname "$0")/etcd_lib.sh"

FLAP_S=${1:-60}
[ -n "${SHARE_ONLY:-}" ] && FLAP_LOCAL=0 FLAP_FLEET=0
BPID=("" "" "" "")
fleet_stop() {
	local n
	for n in 2 3; do
		[ -n "${BPID[$n]}" ] || continue
		kill -TERM "${BPID[$n]}" 2>/dev/null
		wait "${BPID[$n]}" 2>/dev/null
		BPID[$n]=
	done
}
trap 'fleet_stop; etcd_kill; rm -rf "$PIN-b2" "$PIN-b3"; backends_cleanup; cleanup' EXIT
setup_net || skip_all "cannot create namespaces/veth"
V=192.0.2.40:8080/tcp
BE1=198.51.100.41
backends_up 3 192.0.2.40
CONFS=("before (settle_ms 0, no damping)|"
	"settle_ms 5000|settle_ms 5000"
	"settle_ms 5000 + damping|settle_ms 5000;damping_penalty 1000"
	"before, health_on_fail drain|health_on_fail drain"
	"settle_ms 5000, health_on_fail drain|settle_ms 5000;health_on_fail drain")
FCONFS=("fleet before (settle_ms 0, no damping)|"
	"fleet settle_ms 5000|settle_ms 5000"
	"fleet settle_ms 5000 + damping|settle_ms 5000;damping_penalty 1000")
VIP_ADD=(vip add "$V" --check tcp --check-port 8081 --check-interval 200 --check-timeout 150
	--rise 1 --fall 1)

# fresh: b1 stopped, its pins (the connection table) and state gone, log empty.
fresh() {
	stop_daemon
	rm -rf "$PIN"
	echo '{"version":1,"vips":[]}' >"$STATE"
	: >"$DLOG"
}
# run_conf LINES: maglevd with the ';'-separated LINES, the VIP, 3 backends up.
run_conf() {
	local lines=()
	IFS=';' read -r -a lines <<<"$1"
	fresh
	write_conf "health_via_encap yes" "src4_prefix 198.51.100.192/27" "${lines[@]}"
	start_daemon || return 1
	ctl "${VIP_ADD[@]}" >/dev/null
	for b in 1 2 3; do ctl backend add $V 198.51.100.4$b >/dev/null; done
	for b in 1 2 3; do
		wait_state $V 198.51.100.4$b up 15 || {
			diag "backend $b: $(ctl -j backend list $V | jq -c .backends)"
			return 1
		}
	done
}
# bctl N ARGS: maglevctl on balancer N (1: the one the clients go through).
bctl() {
	if [ "$1" = 1 ]; then ctl "${@:2}"; else ctl -s "$TDIR/b$1.sock" "${@:2}"; fi
}
gen() { bctl "${1:-1}" -j vip show $V | jq -r .vip.table_gen; }
bstate() { bctl "$1" -j health $V | jq -r --arg b "$2" '.backends[] | select(.backend == $b) | .state'; }
# The flap: backend 1's check listener on the VIP, and in the fleet the one
# on its own address (b2's and b3's checks), off or on together.
DCHK=
flap_off() {
	check_off 1 192.0.2.40
	[ -n "$DCHK" ] && kill "$DCHK" 2>/dev/null
	return 0
}
flap_on() {
	check_on 1 192.0.2.40
	[ -z "$DCHK" ] || { listen_tcp "mgb1-$ID" $BE1 8081 && DCHK=$LPID; }
}
# sampler FILE: backend 1's slots in b1's live table every 0.2 s, a line
# each, until FILE.stop exists; moved FILE: the changes summed.
sampler() {
	while [ ! -e "$1.stop" ]; do
		slots $V $BE1 >>"$1" 2>/dev/null
		sleep 0.2
	done
}
moved() { awk 'NF { if (n++) d += ($1 > p ? $1 - p : p - $1); p = $1 } END { print d + 0 }' "$1"; }
# since FILE LINES REGEX: lines past the first LINES of FILE matching REGEX.
since() { tail -n +$(($2 + 1)) "$1" | grep -cE "$3"; }
# erev: etcd's revision; sver: that revision and each status key's
# "version:create_revision", from one read (one revision for all four).
erev() { ectl get "${FPFX}none" -w json | jq -r .header.revision; }
sver() {
	ectl get --prefix "${FPFX}nodes/" -w json |
		jq -r '.header.revision as $r | [.kvs[]? | {((.key | @base64d) | sub(".*/"; "")): "\(.version):\(.create_revision)"}] | add // {} | "\($r) \(.b1) \(.b2) \(.b3)"'
}
# puts OLD NEW: the puts of a key between two sver fields ("?" if it was
# created again meanwhile: its lease lapsed).
puts() { [ "${1#*:}" = "${2#*:}" ] && echo $((${2%%:*} - ${1%%:*})) || echo "?"; }

# flap NAME FLEET: the flap window under the running configuration.
flap() {
	local name=$1 fleet=$2 g0=() l0=() n r0 v0 r1 v1 L S line votes='' puts3='' sum=0 p end
	for n in 1 2 3; do
		[ "$fleet" = 1 ] || [ "$n" = 1 ] || continue
		g0[$n]=$(gen $n)
	done
	l0[1]=$(wc -l <"$DLOG")
	[ "$fleet" = 1 ] && l0[2]=$(wc -l <"$TDIR/b2.log") l0[3]=$(wc -l <"$TDIR/b3.log")
	rm -f "$TDIR/slots" "$TDIR/slots.stop"
	sampler "$TDIR/slots" &
	S=$!
	clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 32 -i 50 --requests 5 --reopen 0 \
		-T $((FLAP_S + 2)) >"$TDIR/l.out" 2>&1 &
	L=$!
	sleep 1
	[ "$fleet" = 1 ] && v0=$(sver)
	end=$((SECONDS + FLAP_S))
	while [ $SECONDS -lt $end ]; do
		flap_off
		sleep 1
		flap_on
		sleep 1
	done
	wait $L
	touch "$TDIR/slots.stop"
	wait $S
	line=$(grep '^conns' "$TDIR/l.out")
	diag "$name: rebuilds $(($(gen) - g0[1])), backend 1's slots moved $(moved "$TDIR/slots"), verdicts applied $(since "$DLOG" "${l0[1]}" 'health: backend .* is (up|down) [^h]'), $line"
	if [ "$fleet" = 1 ]; then
		v1=$(sver)
		read -r r0 v0 <<<"$v0"
		read -r r1 v1 <<<"$v1"
		read -r -a v0 <<<"$v0"
		read -r -a v1 <<<"$v1"
		for n in 1 2 3; do
			p=$(puts "${v0[$((n - 1))]}" "${v1[$((n - 1))]}")
			puts3="$puts3 b$n $p"
			[ "$p" = "?" ] || sum=$((sum + p))
			votes="$votes b$n $(since "$([ $n = 1 ] && echo "$DLOG" || echo "$TDIR/b$n.log")" "${l0[$n]}" 'is (up|down) here')"
		done
		diag "$name: etcd revisions $((r1 - r0)) (status puts:$puts3; other writes $((r1 - r0 - sum))), votes published:$votes, rebuilds b2 $(($(gen 2) - g0[2])) b3 $(($(gen 3) - g0[3]))"
	fi
	diag "$name: backend 1 on b1 at the end: $(ctl -j backend list $V | jq -c --arg b $BE1 '.backends[] | select(.backend == $b) | {state, penalty, suppressed}')"
	ok "$name: measured over $FLAP_S s"
}

if [ "${FLAP_LOCAL:-1}" = 1 ]; then
	for c in "${CONFS[@]}"; do
		name=${c%%|*}
		run_conf "${c#*|}" || { nok "$name: maglevd and backends up"; continue; }
		flap "$name" 0
	done
fi

# The fleet: etcd in the client namespace, b1 as above, b2 and b3 in the
# client namespace checking the backends' own addresses.
FPFX=/maglev-flap/
# shellcheck disable=SC2034 # etcd_lib.sh's etx and start_etcd use it
NS_ET=$NS_CL
EP=http://203.0.113.2:2379
SEEDED=
# run_fleet LINES: b1, b2, b3 with health_scope fleet and the LINES; every
# backend up on all three, etcd quiet.
run_fleet() {
	local lines=() n b r p end
	IFS=';' read -r -a lines <<<"$1"
	fleet_stop
	fresh
	write_conf "health_via_encap yes" "src4_prefix 198.51.100.192/27" "fleet_etcd $EP" \
		"fleet_prefix $FPFX" "fleet_node b1" "health_scope fleet" "${lines[@]}"
	start_daemon || return 1
	for n in 2 3; do
		{
			printf '%s\n' "seed 0123456789abcdef0123456789abcdef" \
				"nexthop_mac 02:00:00:00:00:01" "pin_dir $PIN-b$n" \
				"state_file $TDIR/state-b$n.json" "control_socket $TDIR/b$n.sock" \
				"metrics_listen off" "health_check none" "health_via_encap no" \
				"udp_idle_timeout_ms 60000" "fleet_etcd $EP" "fleet_prefix $FPFX" \
				"fleet_node b$n" "health_scope fleet"
			[ ${#lines[@]} = 0 ] || printf '%s\n' "${lines[@]}"
		} >"$TDIR/b$n.conf"
		rm -rf "$PIN-b$n"
		echo '{"version":1,"vips":[]}' >"$TDIR/state-b$n.json"
		: >"$TDIR/b$n.log"
		nsenter --net="/run/netns/$NS_CL" "$MAGLEVD" -c "$TDIR/b$n.conf" >>"$TDIR/b$n.log" 2>&1 &
		BPID[$n]=$!
	done
	for n in 2 3; do
		poll_until 5 bctl $n status >/dev/null 2>&1 || {
			sed "s/^/# b$n: /" "$TDIR/b$n.log"
			return 1
		}
	done
	# The desired state, once, written to etcd through b1.
	if [ -z "$SEEDED" ]; then
		ctl "${VIP_ADD[@]}" >/dev/null || return 1
		for b in 1 2 3; do ctl backend add $V 198.51.100.4$b >/dev/null || return 1; done
		SEEDED=1
	fi
	for n in 1 2 3; do
		for b in 1 2 3; do
			end=$((SECONDS + 20))
			until [ "$(bstate $n 198.51.100.4$b)" = up ]; do
				[ $SECONDS -le $end ] || {
					diag "b$n, backend $b: $(bctl $n -j fleet status | jq -c .health)"
					return 1
				}
				sleep 0.1
			done
		done
	done
	# Quiet: no write for a second (the start's puts out of the window).
	p=$(erev)
	end=$((SECONDS + 15))
	while [ $SECONDS -le $end ]; do
		sleep 1
		r=$(erev)
		[ "$r" = "$p" ] && return 0
		p=$r
	done
	diag "etcd not quiet: revision still moving"
}

if [ "${FLAP_FLEET:-1}" = 1 ]; then
	if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
		diag "etcd/etcdctl missing: the fleet configurations are left out"
	elif ! start_etcd flap; then
		nok "etcd starts in the client namespace"
	else
		for b in 1 2 3; do
			listen_tcp "mgb$b-$ID" 198.51.100.4$b 8081 || nok "check listener on 198.51.100.4$b:8081"
			[ $b = 1 ] && DCHK=$LPID
		done
		for c in "${FCONFS[@]}"; do
			name=${c%%|*}
			run_fleet "${c#*|}" || { nok "$name: three maglevd and backends up"; continue; }
			flap "$name" 1
		done
		fleet_stop
		[ -z "$DCHK" ] || kill "$DCHK" 2>/dev/null
		DCHK=
	fi
fi

# A returning backend's share of new flows (backend 1 down long enough to
# leave the table, then back): new_flows per backend every 0.5 s.
share() {
	ctl -j stats $V | jq -r '[.vips[0].backends[] | {(.backend): .new_flows}] | add | [.["198.51.100.41"], ([.[]] | add)] | @tsv'
}
for c in "slow_start_ms 0|" "slow_start_ms 8000|slow_start_ms 8000"; do
	[ "${FLAP_SHARE:-1}" = 1 ] || break
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
	for _ in $(seq 20); do
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
