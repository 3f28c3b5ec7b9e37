#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A site without BGP: two balancers and the router on one segment (a bridge
# on the router), keepalived on each running docs/keepalived.conf as shipped
# (only its definitions set), VRRP moving the router's next hop for the VIP
# range (a static route via 198.51.100.14) between them. Both run maglevd
# with the same seed, and lb2 gets lb1's VIPs and backends by `maglevctl
# save | restore`. Long-lived connections run through the master while
#  1. the master fails (its link goes down, the router's port: it is cut off
#     as by a dead host or a pulled cable; the host keeps its routes): the backup
#     takes the address 3 adverts later and carries every connection on,
#     on the same backend, with no reset, although it never saw them;
#  2. the master comes back and takes the address again (preemption), then
#     its keepalived is stopped (a planned switchover): the connections
#     move twice more, again with none broken.
# The failover and switchover times are printed (# lines).
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"
command -v keepalived >/dev/null || e2e_skip_all "keepalived not installed (scripts/install-deps)"

VIP=$TOPO_VIP4
NCONN=50
e2e_plan 8
topo_init
topo_up -b 3 -l 2
topo_lan 1 2
topo_servers_start
for i in 1 2 3; do topo_decap_attach "$i"; done
for k in 1 2; do
	topo_lb_config "$k"
	topo_lb_start "$k"
done
e2e_vip 1 "$VIP:80/tcp" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
e2e_vip 1 "$VIP:$TOPO_ECHO_PORT/tcp" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
topo_ctl 1 save >"$TOPO_DIR/lb1.save" && topo_ctl 2 restore "$TOPO_DIR/lb1.save" >/dev/null ||
	topo_die "maglevctl save | restore from lb1 to lb2 failed"
topo_wait_up 2 || topo_die "lb2: backends not up"

lb_packets() { topo_ctl "$1" -j stats | jq '[.vips[] | .packets] | add // 0'; }
# The MAC the router sends the VIP range's packets to (its neighbour entry
# for the VRRP address), and balancer K's.
router_nh_mac() { ip -n "$(topo_ns router)" neigh show "$TOPO_VRRP4" | awk '{print $5}'; }
lb_mac() { ip -n "$(topo_ns "lb$1")" -br link show eth0 | awk '{print $3}'; }
holder_is() { [ "$(topo_vrrp_holder)" = "$1" ]; }
# lb K holds the address and the router sends to it.
master_is() { topo_exec "lb$1" ip -4 -o address show dev eth0 | grep -q " $TOPO_VRRP4/" && [ "$(router_nh_mac)" = "$(lb_mac "$1")" ]; }
# Balancer K has forwarded N more VIP packets than FROM.
forwards() { [ $(($(lb_packets "$1") - $2)) -ge "$3" ]; }

# ---- keepalived on both; lb1 (priority 150) is elected ------------------------
topo_keepalived 1 2 150
topo_keepalived 2 1 100
e2e_until 10 holder_is lb1
rc=$?
e2e_result $rc "keepalived elects lb1 (priority 150): it alone holds $TOPO_VRRP4 (${WAITED} ms after start)" \
	"holder: $(topo_vrrp_holder)" "$(tail -5 "$TOPO_DIR/keepalived-lb1/log")"
echo "# election: lb1 master ${WAITED} ms after keepalived started (both start as backups)"

p1=$(lb_packets 1) p2=$(lb_packets 2)
e2e_flows "$TOPO_DIR/new.out" -d "$VIP" -p 80 -s "$(topo_srcs4)" -n 300
d1=$(($(lb_packets 1) - p1)) d2=$(($(lb_packets 2) - p2))
rc=0
[ "$(e2e_ok_flows "$TOPO_DIR/new.out")" = 300 ] && [ "$d1" -ge 600 ] && [ "$d2" = 0 ] || rc=1
e2e_result $rc "300 new flows to $VIP through the static route via $TOPO_VRRP4: all answered, all through lb1 ($d1 packets; lb2 $d2) ($(topo_shares "$TOPO_DIR/new.out"))" \
	"$(cat "$TOPO_DIR/new.out")" "$(ip -n "$(topo_ns router)" neigh)"

# longconn_start NAME SECONDS: NCONN connections to the echo port; a stall
# of up to 10 s (TCP retransmitting through the failover) is reported, not
# failed: the assertion is that each connection lives on, on its backend.
longconn_start() {
	topo_bg client "$1" "$TOPO_TOOLS/longconn" -d "$VIP" -p "$TOPO_ECHO_PORT" \
		-s "$(topo_srcs4 $NCONN)" -n $NCONN -i 100 -T "$2" --max-stall 10000
	LC=$TOPO_BG_PID
}
kept() {
	local f=$TOPO_DIR/$1.out
	echo "$(e2e_field "$f" alive) of $NCONN alive, $(e2e_field "$f" resets) resets, $(e2e_field "$f" switched) switched backend, max stall $(e2e_field "$f" max_stall_ms) ms"
}
# longconn_end NAME WHAT: wait for longconn; one result: every connection
# alive, none reset, closed or switched to another backend.
longconn_end() {
	local f=$TOPO_DIR/$1.out rc=0
	wait "$LC" || rc=1
	[ "$(e2e_field "$f" alive)" = $NCONN ] && [ "$(e2e_field "$f" resets)" = 0 ] &&
		[ "$(e2e_field "$f" switched)" = 0 ] && [ "$(e2e_field "$f" closed)" = 0 ] || rc=1
	e2e_result $rc "$2: $(kept "$1")" "$(cat "$f")"
}

# ---- 1. the master fails -------------------------------------------------------
longconn_start fail 13
p1=$(lb_packets 1)
# Every connection is exchanging lines through lb1 (10 a second each).
e2e_until 5 forwards 1 "$p1" $((NCONN * 10)) || topo_die "longconn's traffic does not reach lb1"
p2=$(lb_packets 2)
t0=$(e2e_now_ms)
ip -n "$(topo_ns router)" link set l1 down
e2e_until 10 master_is 2
rc=$?
fo_ms=$WAITED
e2e_result $rc "lb1's link down (the router's port l1): lb2 holds $TOPO_VRRP4 and the router sends to it within 10 s (${fo_ms} ms)" \
	"holder: $(topo_vrrp_holder); router: $(router_nh_mac); lb2: $(lb_mac 2)" "$(tail -5 "$TOPO_DIR/keepalived-lb2/log")"
e2e_until 10 forwards 2 "$p2" $((NCONN * 10))
rc=$?
tr_ms=$(($(e2e_now_ms) - t0))
e2e_result $rc "lb2 carries the connections (${tr_ms} ms after the failure: TCP retransmits)" \
	"lb2: $p2 -> $(lb_packets 2) packets"
longconn_end fail "the $NCONN connections through lb1 live on through lb2"
echo "# failover: address on lb2 and the router's next hop moved ${fo_ms} ms after lb1's link went down; traffic through lb2 after ${tr_ms} ms; $(kept fail)"

# ---- 2. lb1 returns (preempts), then its keepalived is stopped -------------------
longconn_start back 14
p2=$(lb_packets 2)
e2e_until 5 forwards 2 "$p2" $((NCONN * 10)) || topo_die "longconn's traffic does not reach lb2"
ip -n "$(topo_ns router)" link set l1 up
e2e_until 10 master_is 1
rc=$?
pre_ms=$WAITED
e2e_result $rc "lb1 back: with the higher priority it takes $TOPO_VRRP4 back (${pre_ms} ms)" \
	"holder: $(topo_vrrp_holder); router: $(router_nh_mac); lb1: $(lb_mac 1)"
p1=$(lb_packets 1)
e2e_until 5 forwards 1 "$p1" $((NCONN * 10)) || topo_die "the connections do not reach lb1 after its return"
p2=$(lb_packets 2)
t0=$(e2e_now_ms)
kill -TERM "$(cat "$TOPO_DIR/keepalived-lb1.pid")"
e2e_until 10 master_is 2
rc=$?
sw_ms=$WAITED
e2e_until 5 forwards 2 "$p2" $((NCONN * 10)) || rc=1
sw_tr_ms=$(($(e2e_now_ms) - t0))
e2e_result $rc "planned switchover (lb1's keepalived stopped): lb2 holds $TOPO_VRRP4 (${sw_ms} ms) and carries the connections (${sw_tr_ms} ms)" \
	"holder: $(topo_vrrp_holder); router: $(router_nh_mac); lb2: $(lb_mac 2)"
longconn_end back "the $NCONN connections moved lb2 -> lb1 -> lb2"
echo "# fail-back: lb1 master again ${pre_ms} ms after its link came up; switchover (keepalived stopped on lb1): lb2 master after ${sw_ms} ms, traffic after ${sw_tr_ms} ms; $(kept back)"
e2e_done
