#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A fleet behind ECMP with a real BGP speaker: a router running BIRD with
# "merge paths" (its kernel hashes flows on the L4 5-tuple over the next
# hops), three balancers each running maglevd (announce_table) and BIRD
# with docs/bird.conf, three backends, clients behind the router. Short
# BGP timers. Asserted on the router's own FIB and with real TCP clients:
#  1. the VIP has one next hop per ready balancer, three only once all are,
#     and new flows spread over the three;
#  2. announce off on lb1: the router drops it, the long-lived connections
#     crossing it go on through the others (zero resets, same backends),
#     new connections work; announce on brings it back;
#  3. every backend down: withdrawn everywhere (no route); one back: three
#     next hops again;
#  4. SIGKILL of lb2's maglevd: its route and its forwarding stay, and the
#     restart changes nothing on the router (ip monitor route);
#  5. lb3's connection table lost (zeroed): its flows stay on their backends;
# and a graceful stop of lb3 withdraws it before maglevd exits.
# Convergence times and broken connections are printed per step (# lines).
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"
command -v bird >/dev/null && command -v birdc >/dev/null ||
	e2e_skip_all "bird2 not installed (scripts/install-deps)"

TABLE=100
PROTO=250
GRACE_MS=1500
VIP=$TOPO_VIP4
VIP6=$TOPO_VIP6
e2e_plan 18
topo_init
topo_up -b 3 -l 3
topo_servers_start
for i in 1 2 3; do topo_decap_attach "$i"; done

now_ms() { e2e_now_ms; }
R() { ip -n "$(topo_ns router)" "$@"; }
# wait_hops ADDR WANT SECONDS: until the router's next hops are WANT; the
# time it took in WAITED (ms).
hops_are() { [ "$(topo_hops "$1")" = "$2" ]; }
wait_hops() { e2e_until "$3" hops_are "$1" "$2"; }
lb_packets() {
	topo_ctl "$1" -j stats | jq '[.vips[] | .packets] | add // 0'
}

# ---- BIRD: the router and one per balancer (scripts/topology) ------------------
topo_bird_router 1 2 3
for k in 1 2 3; do topo_bird_lb "$k" $TABLE $PROTO; done
topo_bgp_wait 6
e2e_result $? "BIRD: 6 BGP sessions established (router to lb1-3, IPv4 and IPv6)" \
	"$(topo_birdc router show protocols)"

# ---- maglevd on the balancers, announcing into table $TABLE. ------------------
for k in 1 2 3; do
	topo_lb_config "$k" announce_table $TABLE announce_protocol $PROTO \
		announce_stop_grace_ms $GRACE_MS conn_table_size 65536
	topo_lb_start "$k"
done
[ "$(topo_hops $VIP)" = "" ]
e2e_result $? "no balancer ready (no VIP yet): the router has no route to $VIP" "$(R route)"
vips() {
	local k=$1 b
	for v in "$VIP:80/tcp" "$VIP:$TOPO_ECHO_PORT/tcp"; do
		topo_ctl "$k" vip add "$v" >/dev/null || return 1
		for b in 1 2 3; do topo_ctl "$k" backend add "$v" "$(topo_backend4 $b)" >/dev/null || return 1; done
	done
	topo_ctl "$k" vip add "[$VIP6]:80/tcp" >/dev/null || return 1
	for b in 1 2 3; do topo_ctl "$k" backend add "[$VIP6]:80/tcp" "$(topo_backend6 $b)" >/dev/null || return 1; done
}
want=""
conv=""
rc=0
for k in 1 2; do
	vips "$k" || topo_die "lb$k: adding the VIPs failed"
	want+="${want:+ }lb$k"
	wait_hops $VIP "$want" 10 || rc=1
	conv+=" lb$k:${WAITED}ms"
done
# lb3 configured but not ready (in maintenance): still two.
topo_ctl 3 announce off >/dev/null
vips 3 || topo_die "lb3: adding the VIPs failed"
topo_wait_up 3 5 || topo_die "lb3: backends not up"
sleep 0.5
[ "$(topo_hops $VIP)" = "lb1 lb2" ] && [ "$(topo_ctl 3 -j announce | jq -r '.announce.vips[0].reason')" = maintenance ] || rc=1
topo_ctl 3 announce on >/dev/null
wait_hops $VIP "lb1 lb2 lb3" 5 || rc=1
conv+=" lb3 (announce on):${WAITED}ms"
e2e_result $rc "start: one next hop per ready balancer (lb1, then lb1 lb2, still two while lb3 is not ready), three once all are" \
	"router: $(R route show $VIP)"
echo "# step 1: VIP added to lbK until the router has K next hops (checks: interval ${TOPO_HC_INTERVAL_MS} ms, rise ${TOPO_HC_RISE}):$conv"
wait_hops "$VIP6" "lb1 lb2 lb3" 5
e2e_result $? "IPv6: the router's route to $VIP6 has the three balancers too" "$(R -6 route show "$VIP6")"

p1=$(lb_packets 1) p2=$(lb_packets 2) p3=$(lb_packets 3)
e2e_flows "$TOPO_DIR/spread.out" -d "$VIP" -p 80 -s "$(topo_srcs4)" -n 600
d1=$(($(lb_packets 1) - p1)) d2=$(($(lb_packets 2) - p2)) d3=$(($(lb_packets 3) - p3))
rc=0
[ "$(e2e_ok_flows "$TOPO_DIR/spread.out")" = 600 ] && [ "$d1" -gt 300 ] && [ "$d2" -gt 300 ] &&
	[ "$d3" -gt 300 ] || rc=1
e2e_result $rc "600 new flows all answered, spread by the router over the three ($d1 $d2 $d3 packets)" \
	"$(cat "$TOPO_DIR/spread.out")"

# longconn_start NAME: 60 long-lived connections to the echo port for 6 s.
longconn_start() {
	topo_bg client "$1" "$TOPO_TOOLS/longconn" -d "$VIP" -p "$TOPO_ECHO_PORT" \
		-s "$(topo_srcs4 60)" -n 60 -i 100 -T "${2:-6}"
	LC=$TOPO_BG_PID
}
# longconn_ok NAME: every connection alive, no reset, none switched backend,
# and no stall over a second (longconn's exit status, left in LCRC by wait).
longconn_ok() {
	local f=$TOPO_DIR/$1.out
	[ "$LCRC" = 0 ] && [ "$(e2e_field "$f" alive)" = 60 ] && [ "$(e2e_field "$f" resets)" = 0 ] &&
		[ "$(e2e_field "$f" switched)" = 0 ]
}
broken() {
	local f=$TOPO_DIR/$1.out
	echo "$((60 - $(e2e_field "$f" alive))) broken ($(e2e_field "$f" resets) resets, $(e2e_field "$f" switched) switched backend, max stall $(e2e_field "$f" max_stall_ms) ms)"
}

# ---- 2. maintenance on lb1 ------------------------------------------------------
longconn_start maint 6
sleep 2
a1=$(lb_packets 1)
sleep 0.5
b1=$(lb_packets 1)
topo_ctl 1 announce off >/dev/null
wait_hops $VIP "lb2 lb3" 5
rc=$?
off_ms=$WAITED
e2e_result $rc "announce off on lb1: the router drops it within 5 s (${off_ms} ms)" "$(R route show $VIP)"
sleep 0.5
c1=$(lb_packets 1)
sleep 1
e1=$(lb_packets 1)
wait $LC
LCRC=$?
longconn_ok maint
e2e_result $? "connections that crossed lb1 ($((b1 - a1)) packets in 0.5 s) go on through lb2/lb3: all 60 alive, zero resets, same backends" \
	"$(cat "$TOPO_DIR/maint.out")"
echo "# step 2: withdrawn on the router in $off_ms ms; $(broken maint)"
rc=0
e2e_flows "$TOPO_DIR/maint-new.out" -d "$VIP" -p 80 -s "$(topo_srcs4)" -n 300
[ "$(e2e_ok_flows "$TOPO_DIR/maint-new.out")" = 300 ] && [ $((e1 - c1)) -lt 20 ] || rc=1
e2e_result $rc "in maintenance: 300 new connections answered, lb1 gets no traffic ($((e1 - c1)) packets in 1 s) yet still runs" \
	"$(cat "$TOPO_DIR/maint-new.out")"
topo_ctl 1 announce on >/dev/null
wait_hops $VIP "lb1 lb2 lb3" 5
rc=$?
e2e_result $rc "announce on: lb1 back on the router (${WAITED} ms)" "$(R route show $VIP)"
echo "# step 2: announce on: back on the router in $WAITED ms"

# ---- 3. every backend down, then one back ---------------------------------------
for b in 1 2 3; do topo_server_stop "$b"; done
wait_hops $VIP "" 10
rc=$?
down_ms=$WAITED
e2e_result $rc "every backend down: $VIP withdrawn by all three, no route on the router (${down_ms} ms)" \
	"$(R route show $VIP)" "$(topo_ctl 1 announce)"
topo_server_start 1
wait_hops $VIP "lb1 lb2 lb3" 10
rc=$?
up_ms=$WAITED
e2e_result $rc "one backend back: announced again by all three (${up_ms} ms)" "$(R route show $VIP)"
echo "# step 3: withdrawn everywhere $down_ms ms after the servers stopped (fall ${TOPO_HC_FALL} x ${TOPO_HC_INTERVAL_MS} ms); announced again $up_ms ms after one came back"
topo_server_start 2
topo_server_start 3
for k in 1 2 3; do topo_wait_up "$k" 5 || topo_die "lb$k: backends not up again"; done

# ---- 4. SIGKILL of lb2's maglevd, then a restart ---------------------------------
topo_bg router monitor ip monitor route
# (it also shows the route replaced, not only deleted)
MON=$TOPO_BG_PID
topo_on_exit "kill $MON"
sleep 0.3
longconn_start kill 6
sleep 1.5
topo_lb_kill 2 KILL
sleep 1
rc=0
topo_exec lb2 ip route show table $TABLE proto $PROTO | grep -q "^blackhole $VIP " || rc=1
[ "$(topo_hops $VIP)" = "lb1 lb2 lb3" ] || rc=1
e2e_result $rc "SIGKILL of lb2's maglevd: its route stays in table $TABLE and on the router" \
	"$(topo_exec lb2 ip route show table $TABLE)" "$(R route show $VIP)"
topo_lb_start 2
topo_wait_up 2 5 || topo_die "lb2: backends not up after the restart"
sleep 1 # its first checks and a reconcile
wait $LC
LCRC=$?
rc=0
longconn_ok kill || rc=1
e2e_result $rc "through the kill and the restart: all 60 connections alive, zero resets, no stall over 1 s (lb2 kept forwarding)" \
	"$(cat "$TOPO_DIR/kill.out")"
echo "# step 4: $(broken kill)"
sleep 0.2
changes=$(grep -c "$VIP" "$TOPO_DIR/monitor.out")
[ "$changes" = 0 ]
e2e_result $? "the restart caused no route change on the router (ip monitor route: $changes lines for $VIP)" \
	"$(cat "$TOPO_DIR/monitor.out")"
echo "# step 4: route changes on the router during kill + restart: $changes"

# ---- 5. lb3's connection table lost ----------------------------------------------
longconn_start flush 5
sleep 2
flushed=$(python3 selftests/e2e/conn_flush.py "$TOPO_DIR/bpffs/lb3/maglev_conns")
wait $LC
LCRC=$?
rc=0
[ "${flushed:-0}" -gt 0 ] && longconn_ok flush || rc=1
e2e_result $rc "lb3's connection table lost ($flushed flows forgotten): its flows stay on their backends, zero resets" \
	"$(cat "$TOPO_DIR/flush.out")"
echo "# step 5: $flushed flows forgotten by lb3; $(broken flush)"

# ---- a graceful stop of lb3 ------------------------------------------------------
pid=$(cat "$TOPO_DIR/lb3.maglevd.pid")
t0=$(now_ms)
kill -TERM "$pid"
wait_hops $VIP "lb1 lb2" 5
rc=$?
wd=$WAITED
kill -0 "$pid" 2>/dev/null || rc=1
e2e_result $rc "SIGTERM on lb3: withdrawn from the router (${wd} ms) while maglevd waits out its grace" \
	"$(R route show $VIP)"
# No second signal: that one would cut the grace short.
for _ in $(seq 100); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
wait "$pid"
rc=$?
el=$(($(now_ms) - t0))
rm -f "$TOPO_DIR/lb3.maglevd.pid"
[ $rc = 0 ] && [ "$el" -ge $GRACE_MS ] && [ "$el" -lt $((GRACE_MS + 2000)) ]
e2e_result $? "lb3's maglevd exited 0 after the grace (${el} ms, grace $GRACE_MS ms)"
grep -q "$VIP" "$TOPO_DIR/monitor.out"
e2e_result $? "ip monitor on the router saw that withdrawal (so it would have seen one at lb2's restart)"
echo "# graceful stop: withdrawn on the router in $wd ms, exit after $el ms"
e2e_done
