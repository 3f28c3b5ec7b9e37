#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A restart keeps an on_fail drain VIP's failed backend out of the table
# (issue 32, item 9). Such a backend is DRAIN in the backend map, as an
# operator's drain is; a restart read that flag as up and put the backend
# back into the table until its checks failed again (fall x interval
# later, 20 s here), sending new flows to a service that is down. Now: down
# from the first moment, no slot, no packet of 40 new flows to it; the
# operator's drained backend beside it is not taken for failed; and when its service is
# back, its first passing check brings it into the table again.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
# The backends are local addresses of the balancer (checks go to them).
lbx ip route add local 198.51.100.0/24 dev lo
write_conf "health_via_encap no" "udp_idle_timeout_ms 600000"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"
EXTRA_PIDS=

# UDP (pktio's traffic) with a TCP check on 8080.
V=192.0.2.80:8080/udp
for a in 91 92 93; do
	listen_tcp "$NS_LB" 198.51.100.$a 8080 || nok "listener on .$a:8080"
	eval "L$a=\$LPID"
done
ctl vip add $V --check tcp --check-interval 1000 --check-timeout 900 --rise 1 --fall 1 --on-fail drain &&
	ctl backend add $V 198.51.100.91 && ctl backend add $V 198.51.100.92 &&
	ctl backend add $V 198.51.100.93 --drain || nok "VIP and backends added"
# A drained backend that passes its checks shows "drain", a failed one "down".
all_up() { wait_state $V 198.51.100.91 up 5 && wait_state $V 198.51.100.92 up 5 && wait_state $V 198.51.100.93 drain 5; }
check "the three backends pass their checks (.93 drained by the operator)" all_up
# out BACKEND: no slot in the live table, DRAIN in the backend map.
out() { [ "$(slots $V "$1")" = 0 ] && [ "$(flags $V "$1")" = DRAIN ]; }
kill $L92
check "198.51.100.92 fails its check: down" wait_state $V 198.51.100.92 down 5
check "... out of the table, DRAIN in the backend map (on_fail drain)" out 198.51.100.92
# Checks every 10 s, down after 3 failures: a restart that took it for up
# would keep it in the table for 20 s at least.
ctl vip set $V --check-interval 10000 --fall 3 || nok "vip set --check-interval 10000 --fall 3"

stop_daemon
start_daemon || { nok "maglevd restarts"; t_done; }
h=$(ctl -j health $V)
diag "after the restart: $(echo "$h" | jq -c '[.backends[] | [.backend, .state]]')"
check "after the restart 198.51.100.92 is down at once" \
	[ "$(echo "$h" | jq -r '.backends[] | select(.backend == "198.51.100.92") | .state')" = down ]
check "the operator's drained 198.51.100.93 is not down (its drain explains the flag)" \
	[ "$(echo "$h" | jq -r '.backends[] | select(.backend == "198.51.100.93") | .state')" = drain ]
check "198.51.100.92 holds no slot, still DRAIN in the backend map" out 198.51.100.92
out=$(pktio --dst 192.0.2.80 --dport 8080 --sports "$(seq -s, 46000 46039)" --count 2)
diag "40 new flows x 2 packets: $(echo "$out" | jq -c '{sent, seen}')"
check "every packet forwarded, all of them to 198.51.100.91" \
	[ "$(echo "$out" | jq '.sent == 80 and .seen == 80 and ([.flows[] | keys[]] | unique == ["198.51.100.91"])')" = true ]

listen_tcp "$NS_LB" 198.51.100.92 8080 || nok "listener on .92:8080 again"
check "its service back: up at its first passing check (within one interval)" \
	wait_state $V 198.51.100.92 up 15
# in_table: .92 holds slots and is UP in the backend map (its commit written; 5 s at most).
in_table() {
	for _ in $(seq 100); do
		[ "$(slots $V 198.51.100.92)" -gt 0 ] 2>/dev/null && [ "$(flags $V 198.51.100.92)" = UP ] && return 0
		sleep 0.05
	done
	return 1
}
check "... and in the table again, UP in the backend map" in_table
stop_daemon
t_done
