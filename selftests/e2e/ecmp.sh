#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Two balancers behind an ECMP route (router: multipath, L4 hash), same seed,
# same backends (lb2 configured by `maglevctl restore` of lb1's `save`): a flow reaches the same backend through either of them; and
# when one balancer's route is withdrawn, the long-lived connections it was
# carrying continue through the other one — on the same backends, with no
# reset. That is Maglev's central claim: the table, not per-balancer state,
# decides where a flow goes.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

e2e_plan 5
e2e_lb_up -b 3 -l 2
e2e_vip 1 "$TOPO_VIP4:80/tcp" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
e2e_vip 1 "$TOPO_VIP4:$TOPO_ECHO_PORT/tcp" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
e2e_vip 1 "[$TOPO_VIP6]:80/tcp" -- "$(topo_backend6 1)" "$(topo_backend6 2)" "$(topo_backend6 3)"
# lb2 gets lb1's configuration the way an operator would copy it.
topo_ctl 1 save >"$TOPO_DIR/lb1.save" && topo_ctl 2 restore "$TOPO_DIR/lb1.save" >/dev/null ||
	topo_die "maglevctl save | restore from lb1 to lb2 failed"
topo_wait_up 2 || topo_die "lb2: backends not up"
m=$TOPO_DIR/map
# 1,000 IPv4 and 600 IPv6 flows, maps in $m.NAME and $m.NAME.6
flows() {
	e2e_flows "$m.$1.out" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 1000 -m "$m.$1"
	e2e_flows "$m.$1.6.out" -d "$TOPO_VIP6" -p 80 -s "$(topo_srcs6)" -n 600 -m "$m.$1.6"
}
# Flows of run $2 not on the same backend as in run $1 (or not answered).
differ() { cat <(paste -d' ' "$m.$1" "$m.$2") <(paste -d' ' "$m.$1.6" "$m.$2.6") | awk '$3 != $6 || $3 == "-"' | wc -l; }
# VIP packets balancer K has forwarded, from its own counters (maglevctl -j).
lb_packets() {
	topo_ctl "$1" -j stats | jq '[.. | objects | select(has("packets") and has("vip")) | .packets] | add // 0'
}

topo_route_vip lb1
flows lb1
topo_route_vip lb2
flows lb2
diff=$(differ lb1 lb2)
[ "$diff" = 0 ]
e2e_result $? \
	"1000 IPv4 + 600 IPv6 flows through lb1 alone, then lb2 alone: every flow on the same backend ($(topo_shares "$m.lb1.out"))" \
	"$diff flows differ" "$(cat "$m.lb1.out" "$m.lb2.out" "$m.lb1.6.out" "$m.lb2.6.out")"

topo_route_vip lb1 lb2
p1=$(lb_packets 1) p2=$(lb_packets 2)
flows ecmp
d1=$(($(lb_packets 1) - p1)) d2=$(($(lb_packets 2) - p2))
diff=$(differ lb1 ecmp)
rc=0
[ "$diff" = 0 ] && [ "$d1" -gt 0 ] && [ "$d2" -gt 0 ] || rc=1
e2e_result $rc "ECMP over both: the router uses both ($d1 and $d2 packets), every flow on the same backend" \
	"$diff flows differ"

topo_bg client longconn "$TOPO_TOOLS/longconn" -d "$TOPO_VIP4" -p "$TOPO_ECHO_PORT" \
	-s "$(topo_srcs4 50)" -n 50 -i 100 -T 8
lc=$TOPO_BG_PID
sleep 3
a1=$(lb_packets 1)
sleep 1
b1=$(lb_packets 1)
topo_route_vip lb2
sleep 0.5
c1=$(lb_packets 1) c2=$(lb_packets 2)
sleep 1
e1=$(lb_packets 1) e2=$(lb_packets 2)
wait $lc
lcrc=$?
rc=0
[ $((b1 - a1)) -gt 20 ] && [ "$e1" = "$c1" ] && [ $((e2 - c2)) -gt 200 ] || rc=1
e2e_result $rc "lb1 carried long-lived connections ($((b1 - a1)) packets/s), then none after its route was withdrawn; lb2 carried all" \
	"lb1: $a1 $b1 $c1 $e1; lb2: $c2 $e2"
rc=0
[ "$lcrc" = 0 ] && [ "$(e2e_field "$TOPO_DIR/longconn.out" resets)" = 0 ] &&
	[ "$(e2e_field "$TOPO_DIR/longconn.out" alive)" = 50 ] || rc=1
e2e_result $rc "50 connections moved from lb1 to lb2: all alive, same backends, zero resets, max stall $(e2e_field "$TOPO_DIR/longconn.out" max_stall_ms) ms" \
	"$(cat "$TOPO_DIR/longconn.out")"

# Control: the agreement above comes from the shared seed. lb2 restarted with
# another seed (same backends, from its state file) sends most flows elsewhere.
topo_lb_kill 2 TERM
topo_lb_config 2 seed 0123456789abcdef0123456789abcdef
topo_lb_start 2
topo_wait_up 2 || topo_die "lb2: backends not up after restart"
# lb2's closed entries of these very tuples would keep their backends for
# tcp_closed_timeout_ms (a SYN on a recently closed entry keeps it): the
# control compares tables, so its connection table goes.
python3 selftests/e2e/conn_flush.py "$TOPO_DIR/bpffs/lb2/maglev_conns" >/dev/null ||
	topo_die "cannot flush lb2's connection table"
topo_route_vip lb2
flows seed2
diff=$(differ lb1 seed2)
fails=$(($(e2e_failed "$m.seed2.out") + $(e2e_failed "$m.seed2.6.out")))
[ "$diff" -gt 600 ] && [ "$fails" = 0 ]
e2e_result $? "control: lb2 with a different seed puts $diff of 1600 flows on another backend" \
	"$(cat "$m.seed2.out" "$m.seed2.6.out")"
e2e_done
