#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The end-to-end topology itself, without a balancer: the VIPs routed straight
# to one backend must be answered by that backend over the direct-return path,
# for HTTP, UDP and long-lived TCP, IPv4 and IPv6, from every client source;
# two topologies coexist; a run that fails or is killed leaves nothing behind.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/backend-server" "$TOPO_TOOLS/flow-client" "$TOPO_TOOLS/longconn"

e2e_plan 8
topo_init
topo_up -b 3 -l 2
topo_servers_start
out=$TOPO_DIR/out

n=$(ip netns list | grep -c "^$TOPO_ID-")
[ "$n" = 7 ]
e2e_result $? "topology: 7 namespaces (client, router, 2 LBs, 3 backends)" "found $n"

# Every source, both families, each VIP range: all answered by the backend
# the router sends the VIP to, none lost.
rc=0
for b in 2 3; do
	topo_route_vip "b$b"
	topo_exec client "$TOPO_TOOLS/flow-client" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 640 >"$out.4"
	topo_exec client "$TOPO_TOOLS/flow-client" -d "$TOPO_VIP6_B" -p 80 -s "$(topo_srcs6)" -n 640 >"$out.6"
	for f in "$out.4" "$out.6"; do
		[ "$(e2e_count "$f" "b$b")" = 640 ] || rc=1
	done
done
e2e_result $rc "tcp: 640 HTTP flows per family from 64 sources, all answered by the routed backend" "$(cat "$out.4" "$out.6")"

topo_exec client "$TOPO_TOOLS/flow-client" -u -d "$TOPO_VIP4_B" -p 7 -s "$(topo_srcs4)" -n 300 >"$out.u4"
topo_exec client "$TOPO_TOOLS/flow-client" -u -d "$TOPO_VIP6" -p 7 -s "$(topo_srcs6)" -n 300 >"$out.u6"
rc=0
[ "$(e2e_count "$out.u4" b3)" = 300 ] && [ "$(e2e_count "$out.u6" b3)" = 300 ] || rc=1
e2e_result $rc "udp: echo answered from the VIP by the routed backend, IPv4 and IPv6" "$(cat "$out.u4" "$out.u6")"

topo_exec client "$TOPO_TOOLS/longconn" -d "$TOPO_VIP4" -p 7 -s "$(topo_srcs4 10)" -n 20 -T 2 >"$out.l"
rc=$?
[ "$(e2e_field "$out.l" replies)" -ge 200 ] 2>/dev/null || rc=1
e2e_result $rc "longconn: 20 connections for 2 s, no reset, no stall" "$(cat "$out.l")"

topo_exec client curl -s --max-time 5 "http://[$TOPO_VIP6]/" >"$out.c"
[ "$(cat "$out.c")" = b3 ]
e2e_result $? "curl over IPv6 answered by b3" "$(cat "$out.c")"

# The decap program: encapsulated datagrams sent from the router to b1, as the
# balancer would send them, are answered by b1 straight to the client, from
# the VIP. Each answer is caught by a socket bound to the inner source.
for b in 1 2 3; do topo_decap_attach $b; done
catch() { # catch NAME ADDR PORT: one datagram into $TOPO_DIR/catch.NAME.out
	local a=$2 v=
	[[ $a == *:* ]] && a="[$a]" v=6
	topo_bg client "catch.$1" socat -T 10 -u "UDP$v-RECV:$3,bind=$a" STDOUT
}
catch ipip4 203.0.113.100 5001
catch gue4 203.0.113.101 5002
catch ipip6 2001:db8:c::100 5003
catch gue64 2001:db8:c::101 5004
# Bounded waits rather than fixed sleeps: a loaded machine is slow, not wrong.
for _ in $(seq 50); do
	[ "$(topo_exec client ss -Huln | grep -cE ':500[1-4] ')" -ge 4 ] && break
	sleep 0.1
done
send=selftests/e2e/send_encap.py
topo_exec router $send ipip "$(topo_backend4 1)" 203.0.113.100 "$TOPO_VIP4" 5001 7 ipip4
topo_exec router $send gue "$(topo_backend4 1)" 203.0.113.101 "$TOPO_VIP4_B" 5002 7 gue4
topo_exec router $send ipip "$(topo_backend6 1)" 2001:db8:c::100 "$TOPO_VIP6" 5003 7 ipip6
topo_exec router $send gue "$(topo_backend4 1)" 2001:db8:c::101 "$TOPO_VIP6_B" 5004 7 gue64
want="b1 ipip4 b1 gue4 b1 ipip6 b1 gue64 "
for _ in $(seq 50); do
	got=$(cat "$TOPO_DIR"/catch.ipip4.out "$TOPO_DIR"/catch.gue4.out "$TOPO_DIR"/catch.ipip6.out \
		"$TOPO_DIR"/catch.gue64.out 2>/dev/null | tr '\n' ' ')
	[ "$got" = "$want" ] && break
	sleep 0.1
done
[ "$got" = "$want" ]
e2e_result $? \
	"decap on the backends: IPIP, GUE, IPv6-in-IPv6, IPv6-in-GUE/IPv4 answered from the VIP" "got '$got'"

# A second run in parallel gets its own names and is torn down on exit.
other=$(bash -c '. scripts/topology; topo_init; topo_up -b 1 -l 1; echo "$TOPO_ID $(ip netns list | grep -c "^$TOPO_ID-")"')
oid=${other% *}
rc=0
[ -n "$oid" ] && [ "$oid" != "$TOPO_ID" ] && [ "${other#* }" = 4 ] || rc=1
[ "$(ip netns list | grep -c "^$oid-")" = 0 ] || rc=1
[ "$(ip netns list | grep -c "^$TOPO_ID-")" = 7 ] || rc=1
e2e_result $rc "a concurrent run gets its own namespaces and removes them on exit" "other run: '$other'"

# Killed with SIGTERM mid-run (servers running), as timeout(1) or Ctrl-C
# would (the whole process group): everything goes.
setsid bash -c '. scripts/topology; topo_init; topo_up -b 1; topo_servers_start; echo $TOPO_ID; sleep 30' >"$out.k" 2>"$out.k.err" &
pid=$!
for _ in $(seq 50); do [ -s "$out.k" ] && break; sleep 0.1; done
sleep 0.5
kill -TERM -- -$pid
{ wait $pid; } 2>/dev/null
oid=$(cat "$out.k")
rc=0
[ -n "$oid" ] && [ "$(ip netns list | grep -c "^$oid-")" = 0 ] || rc=1
pgrep -f "backend-server --name b1 .*$oid" >/dev/null && rc=1
e2e_result $rc "SIGTERM during a run removes its namespaces and servers" "id '$oid': $(ip netns list | grep "^$oid-" | tr '\n' ' ')"
e2e_done
