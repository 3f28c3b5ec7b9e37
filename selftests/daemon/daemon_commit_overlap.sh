#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Commits that overlap in the commit queue (issue 32, items 1 and 2), made
# deterministic by holding every table swap (MAGLEVD_TEST_SWAP_HOLD):
#   - announcing judges a VIP by what the datapath holds, not by the newest
#     registry waiting in the queue: two restores (a flush and a re-add of
#     every VIP, as each etcd revision is in fleet mode) queued behind a held
#     swap withdraw nothing (ip monitor route sees no delete);
#   - a backend that goes down and comes back while commits overlap (down,
#     an unrelated commit, up) is written UP again in the backend map: its
#     slots forward (every packet of 40 new flows comes out, some to it)
#     instead of dropping while the registry says up.
. "$(dirname "$0")/lib.sh"

TABLE=143
PROTO=232
setup_net || skip_all "cannot create namespaces/veth"
# The backends are local addresses of the balancer (checks go to them).
lbx ip route add local 198.51.100.0/24 dev lo
HOLD=$TDIR/swap-hold
write_conf "health_via_encap no" "announce_table $TABLE" "announce_protocol $PROTO" \
	"announce_min_backends 1" "udp_idle_timeout_ms 600000"
DAEMON_PREFIX="env MAGLEVD_TEST_SWAP_HOLD=$HOLD"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"
EXTRA_PIDS=

routes() { lbx ip route show table $TABLE proto $PROTO 2>/dev/null; }
has_route() { routes | grep -q "^blackhole $1 *$"; }
wait_route() { # wait_route ADDR SECONDS
	local end=$((SECONDS + $2))
	while [ $SECONDS -le $end ]; do
		has_route "$1" && return 0
		sleep 0.05
	done
	return 1
}
reason() { ctl -j announce | jq -r --arg v "$1" '.announce.vips[] | select(.vip == $v) | .reason'; }
# until_log PATTERN: the daemon's log has a line matching it (5 s at most).
until_log() {
	for _ in $(seq 100); do grep -q -- "$1" "$DLOG" && return 0; sleep 0.05; done
	return 1
}
# bg NAME ARGS...: maglevctl ARGS in the background (answered once its commit is
# written), its pid added to BG.
BG=
bg() {
	local name=$1
	shift
	"$MAGLEVCTL" "$@" >"$TDIR/$name.out" 2>&1 &
	BG="$BG $!"
	EXTRA_PIDS="$EXTRA_PIDS $!"
}
# release: the swaps go on; every backgrounded maglevctl answered ok.
release() {
	local p rc=0
	rm -f "$HOLD"
	for p in $BG; do wait "$p" || rc=1; done
	BG=
	return $rc
}

V1=192.0.2.70:5000/udp
# UDP (pktio's traffic) with a TCP check.
V2=192.0.2.71:8080/udp
listen_tcp "$NS_LB" 198.51.100.81 8080 || nok "listener on 198.51.100.81:8080"
listen_tcp "$NS_LB" 198.51.100.82 8080 || nok "listener on 198.51.100.82:8080"
L82=$LPID
ctl vip add $V1 --check none && ctl backend add $V1 198.51.100.71 && ctl backend add $V1 198.51.100.72
# Rise and fall 1: a verdict at the first check that differs; a timeout of
# 900 ms: no verdict from a slow answer on a loaded machine.
ctl vip add $V2 --check tcp --check-interval 1000 --check-timeout 900 --rise 1 --fall 1 &&
	ctl backend add $V2 198.51.100.81 && ctl backend add $V2 198.51.100.82
both_up() { wait_state $V2 198.51.100.81 up 5 && wait_state $V2 198.51.100.82 up 5; }
check "V2's backends pass their checks" both_up
both_routes() { wait_route 192.0.2.70 5 && wait_route 192.0.2.71 5; }
check "both VIPs announced" both_routes

route_monitor 144
check "ip monitor route is running (it saw a route in another table)" grep -q 'table 144' "$MON"

# --- item 1: two restores overlap ---------------------------------------------
ctl save >"$TDIR/s1"
# The second one adds M: once M shows in `maglevctl announce`, a tick has
# judged every VIP with both restores queued.
M=192.0.2.72:9000/udp
sed "/^# end/i vip add $M --check none" "$TDIR/s1" >"$TDIR/s2"
grep -q "vip add $M" "$TDIR/s2" || nok "the second save names M"
touch "$HOLD"
bg r1 restore "$TDIR/s1"
until_log "accepted batch" || nok "the first restore accepted"
bg r2 restore "$TDIR/s2"
for _ in $(seq 100); do [ -n "$(reason $M)" ] && break; sleep 0.05; done
diag "announce with both restores queued: $(ctl -j announce | jq -c '[.announce.vips[] | [.vip, .reason]]')"
check "a tick judged M (not in the datapath yet: table_not_live)" [ "$(reason $M)" = table_not_live ]
check "V1 and V2 still ready: their tables forward, whatever the queue holds" \
	[ "$(reason $V1) $(reason $V2)" = "ready ready" ]
both_there() { has_route 192.0.2.70 && has_route 192.0.2.71; }
check "both routes still there while the swaps are held" both_there
check "both restores answered ok once released" release

# --- item 2: down, an unrelated commit, up, all queued behind a held swap -------
W=192.0.2.73:7000/udp
touch "$HOLD"
bg w vip add $W --check none
until_log "accepted vip.add .*vip=$W" || nok "vip add W accepted (its swap held)"
kill $L82
check "198.51.100.82 down (queued behind W's swap)" wait_state $V2 198.51.100.82 down 5
W2=192.0.2.74:7000/udp
bg w2 vip add $W2 --check none
until_log "accepted vip.add .*vip=$W2" || nok "vip add W2 accepted"
listen_tcp "$NS_LB" 198.51.100.82 8080 || nok "listener on 198.51.100.82:8080 again"
check "198.51.100.82 up again (queued too)" wait_state $V2 198.51.100.82 up 5
check "the queued commits answered ok once released" release
# The up verdict is the last commit, no client waits for it: until its table is live.
for _ in $(seq 100); do [ "$(slots $V2 198.51.100.82)" -gt 0 ] 2>/dev/null && break; sleep 0.05; done
check "198.51.100.82 is in the live table again" [ "$(slots $V2 198.51.100.82)" -gt 0 ]
check "198.51.100.82 is UP in the backend map, as the registry says" [ "$(flags $V2 198.51.100.82)" = UP ]
out=$(pktio --dst 192.0.2.71 --dport 8080 --sports "$(seq -s, 45000 45039)" --count 2)
diag "40 new flows x 2 packets: $(echo "$out" | jq -c '{sent, seen}')"
check "every packet forwarded (80 sent, 80 seen)" [ "$(echo "$out" | jq '.sent == 80 and .seen == 80')" = true ]
check "198.51.100.82 got some of them" \
	[ "$(echo "$out" | jq '[.flows[] | .["198.51.100.82"] // 0] | add')" -gt 0 ]

# The read-back (datapath/readback.c) agrees: a pass begun after all this.
readback_agrees() {
	local p0 i
	p0=$(ctl -j status | jq '.datapath.passes // 0')
	for i in $(seq 200); do
		ctl -j status | jq -e ".datapath.passes >= $p0 + 2 and .datapath.drift_vips == 0" >/dev/null && return 0
		sleep 0.05
	done
	diag "datapath: $(ctl -j status | jq -c .datapath)"
	return 1
}
check "the datapath read back agrees with the registry" readback_agrees
check "ip monitor saw no delete in table $TABLE" bash -c "! grep -q 'Deleted.*table $TABLE' $MON"
grep "table $TABLE" "$MON" | sed 's/^/# monitor: /'
stop_daemon
t_done
