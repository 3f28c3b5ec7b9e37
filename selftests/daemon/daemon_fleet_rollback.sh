#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fleet mode: a desired state from etcd whose table swap the datapath refuses
# (injected: MAGLEVD_TEST_SWAP_FAIL fails the next swap once) is rolled back,
# counted under source fleet, and applied again: etcd sends a revision once,
# so without a second try the balancer kept the revision before it until the
# next change. Afterwards the revision, the VIP's backends and the live
# table (its digest the registry's) are the new revision's, and the metrics
# count that revision applied once. Then a maglevctl change with the table
# swap held (MAGLEVD_TEST_SWAP_HOLD): its client is answered only once the
# swap is done, not when the revision reaches the registry. Last, two
# revisions queued behind a held swap withdraw no VIP (ip monitor route).
#
#   etcd ns: lo 192.0.2.254 (client URL) <- veth 192.0.2.242/30 -> lb ns 192.0.2.241
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
setup_net || skip_all "cannot create namespaces/veth"

NS_ET="mget-$ID"
EP=http://192.0.2.254:2379
PFX=/maglev-test/
V=192.0.2.10:5000/udp
ETCD_PID=
fleet_cleanup() {
	etcd_kill
	ip netns del "$NS_ET" 2>/dev/null
	cleanup
}
trap fleet_cleanup EXIT

ip netns add "$NS_ET" || skip_all "cannot create namespaces"
etx ip link set lo up && etx ip addr add 192.0.2.254/32 dev lo
ip link add et1 netns "$NS_ET" type veth peer name fl1 netns "$NS_LB" || skip_all "cannot link the etcd namespace"
etx ip addr add 192.0.2.242/30 dev et1 && etx ip link set et1 up
lbx ip addr add 192.0.2.241/30 dev fl1 && lbx ip link set fl1 up && lbx ip route add 192.0.2.254/32 via 192.0.2.242
start_etcd fleet-rollback || { nok "etcd starts"; t_done; }
ok "etcd starts in its namespace ($EP)"

# vipval VIP BACKEND...: a VIP's key value, its control requests.
vipval() {
	local v=$1 b out
	shift
	out="[{\"cmd\":\"vip.add\",\"vip\":\"$v\"}"
	for b in "$@"; do out="$out,{\"cmd\":\"backend.add\",\"vip\":\"$v\",\"backend\":\"$b\"}"; done
	echo "$out]"
}
put() { ectl put -w json "${PFX}vips/$1" "$2" | jq -r .header.revision; }
rev() { ctl -j status | jq '.fleet.revision'; }
nbe() { ctl -j vip show $V | jq '.vip.backends'; }
agree() { [ "$(ctl -j table $V | jq -r .digest)" = "$(ctl -j vip show $V | jq -r .vip.digest)" ]; }
fleet_failures() {
	lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" |
		sed -n 's/^maglev_commit_failures_total{source="fleet"} //p'
}

REV0=$(put $V "$(vipval $V 198.51.100.1 198.51.100.2)")
FAIL=$TDIR/swap-fail
HOLD=$TDIR/swap-hold
TABLE=145
PROTO=233
write_conf "fleet_etcd $EP" "fleet_prefix $PFX" "fleet_node b1" "announce_table $TABLE" \
	"announce_protocol $PROTO" "announce_min_backends 1"
DAEMON_PREFIX="env MAGLEVD_TEST_SWAP_FAIL=$FAIL MAGLEVD_TEST_SWAP_HOLD=$HOLD"
start_daemon || { nok "maglevd starts"; t_done; }
for i in $(seq 100); do [ "$(rev)" = "$REV0" ] && break; sleep 0.05; done
check "revision $REV0 applied: 2 backends" bash -c "[ '$(rev)' = $REV0 ] && [ '$(nbe)' = 2 ]"

touch "$FAIL"
REV1=$(put $V "$(vipval $V 198.51.100.1 198.51.100.2 198.51.100.3)")
for i in $(seq 100); do [ ! -e "$FAIL" ] && break; sleep 0.05; done
check "revision $REV1's table swap refused (the hook fired)" [ ! -e "$FAIL" ]
for i in $(seq 100); do [ "$(rev)" = "$REV1" ] && [ "$(nbe)" = 3 ] && break; sleep 0.05; done
check "applied again: revision $REV1, 3 backends" bash -c "[ '$(rev)' = $REV1 ] && [ '$(nbe)' = 3 ]"
check "the live table is the registry's (digests agree)" agree
check "the new backend holds slots in the live table" [ "$(slots $V 198.51.100.3)" -gt 0 ]
check "metrics: 1 refused commit under source fleet" [ "$(fleet_failures)" = 1 ]
check "the log says it was rolled back and applied again" \
	grep -q "fleet: revision $REV1 was rolled back (its commit failed): applying it again" "$DLOG"
applied=$(lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" |
	sed -n 's/^maglev_fleet_revisions_total{result="applied"} //p')
check "metrics: 2 revisions applied ($applied): the one tried again counted once" [ "$applied" = 2 ]

# A maglevctl change in fleet mode is answered once this balancer's
# datapath holds it, not when etcd's revision reaches the registry: with
# the table swap held, the client waits.
touch "$HOLD"
ctl backend add $V 198.51.100.4 >"$TDIR/add.out" 2>&1 &
ADD=$!
for i in $(seq 100); do [ "$(rev)" -gt "$REV1" ] && break; sleep 0.05; done
check "the change reached etcd and the registry (revision $(rev))" [ "$(rev)" -gt "$REV1" ]
sleep 0.5
check "the swap held: the client still waits for its answer" kill -0 $ADD
rm -f "$HOLD"
wait $ADD
rc=$?
check "released: the client is answered, success ($(cat "$TDIR/add.out"))" [ $rc = 0 ]
check "... and the new backend holds slots in the live table" [ "$(slots $V 198.51.100.4)" -gt 0 ]

# Two revisions queued behind a held swap (issue 32, item 1): each re-adds
# every VIP, yet V, whose table forwards throughout, is not withdrawn.
# W2 in the second one: once announce lists it, a tick has judged V with
# both revisions queued.
reason() { ctl -j announce | jq -r --arg v "$1" '.announce.vips[] | select(.vip == $v) | .reason'; }
has_route() { lbx ip route show table $TABLE proto $PROTO | grep -q "^blackhole $1 *$"; }
for i in $(seq 100); do has_route 192.0.2.10 && break; sleep 0.05; done
check "V is announced (route in table $TABLE)" has_route 192.0.2.10
route_monitor 146
check "ip monitor route is running (it saw a route in another table)" grep -q 'table 146' "$MON"
W1=192.0.2.11:5000/udp
W2=192.0.2.12:5000/udp
touch "$HOLD"
RW1=$(put $W1 "$(vipval $W1 198.51.100.5)")
for i in $(seq 100); do [ "$(rev)" = "$RW1" ] && [ -n "$(reason $W1)" ] && break; sleep 0.05; done
check "revision $RW1 (W1 added) swap held: W1 not announced, its table not live yet" \
	[ "$(reason $W1)" = table_not_live ]
RW2=$(put $W2 "$(vipval $W2 198.51.100.6)")
for i in $(seq 100); do [ -n "$(reason $W2)" ] && break; sleep 0.05; done
diag "announce with revisions $RW1 and $RW2 queued: $(ctl -j announce | jq -c '[.announce.vips[] | [.vip, .reason]]')"
check "revision $RW2 reached the registry, judged by a tick (W2: table_not_live)" \
	[ "$(rev) $(reason $W2)" = "$RW2 table_not_live" ]
v_ready() { [ "$(reason $V)" = ready ] && has_route 192.0.2.10; }
check "V still ready and announced while both wait for the held swap" v_ready
no_w1_route() { [ "$(reason $W1)" = table_not_live ] && ! has_route 192.0.2.11; }
check "W1 still not announced, no route for it" no_w1_route
rm -f "$HOLD"
for i in $(seq 100); do has_route 192.0.2.12 && break; sleep 0.05; done
check "released: W2 announced once its table is live" has_route 192.0.2.12
check "ip monitor saw no delete in table $TABLE" bash -c "! grep -q 'Deleted.*table $TABLE' $MON"
grep "table $TABLE" "$MON" | sed 's/^/# monitor: /'
stop_daemon
t_done
