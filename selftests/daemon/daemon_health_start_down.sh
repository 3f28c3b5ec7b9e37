#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# backend add --start-down: the backend is down from the start (no slot, no
# datapath flags, no client flow goes to it) and stays so while its checks
# fail; its first passing check brings it up, before `rise` passes; with
# --check none it is up at once. It is the default now: a backend added
# without it starts down too.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
# The backends are local addresses of the balancer (checks go to them).
lbx ip route add local 198.51.100.0/24 dev lo
write_conf "health_via_encap no"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

EXTRA_PIDS=

V=192.0.2.50:5000/udp
listen_tcp "$NS_LB" 198.51.100.51 5000 || nok "listener on 198.51.100.51:5000"
ctl vip add $V --check tcp --check-port 5000 --check-interval 300 --check-timeout 200 --rise 10 --fall 10
ctl backend add $V 198.51.100.51
# New, it too is down until its first check passes (a loaded machine: later).
for i in $(seq 100); do [ "$(field $V 198.51.100.51 .state)" = up ] && break; sleep 0.05; done
check "backend add --start-down is accepted" ctl backend add $V 198.51.100.52 --start-down
check "it is down from the start, marked start_down" \
	[ "$(field $V 198.51.100.52 '.state + " " + (.start_down|tostring)')" = "down true" ]
check "no slot in the live table, no flags in the datapath" \
	bash -c "[ '$(slots $V 198.51.100.52)' = 0 ] && [ -z '$(flags $V 198.51.100.52)' ]"
SP1=$(seq -s, 41000 41039)
check "40 new flows: every one to the other backend, none to it" \
	bash -c "[ $(flows_to 192.0.2.50 5000 "$SP1" 198.51.100.51) -eq 40 ] && [ $(flows_to 192.0.2.50 5000 "$SP1" 198.51.100.52) -eq 0 ]"
# Until two of its checks have failed (a fixed 1 s could see none under load).
for i in $(seq 100); do [ "$(field $V 198.51.100.52 .checks_failed)" -ge 2 ] 2>/dev/null && break; sleep 0.05; done
check "its checks fail (nothing listens): still down after 2 failed checks, still no slot" \
	bash -c "[ \"\$($MAGLEVCTL -j health $V | jq -r '.backends[] | select(.backend == \"198.51.100.52\") | .state + \" \" + .last_result')\" = 'down fail' ] && \
		 [ $(slots $V 198.51.100.52) -eq 0 ]"

listen_tcp "$NS_LB" 198.51.100.52 5000 || nok "listener on 198.51.100.52:5000"
seen=
end=$((SECONDS + 5))
while [ $SECONDS -le $end ]; do
	st=$(field $V 198.51.100.52 '.state + " " + (.checks_ok|tostring)')
	case "$st" in up*) seen=$st && break ;; esac
	sleep 0.03
done
diag "first seen up: ${seen:-never} (state, passed checks)"
# rise 10 (3 s of passes): seen up at fewer than 10 passes proves the first
# pass did it, however late the poll (with rise 3, a poll 0.6 s late failed it).
check "its first passing check brings it up, before rise 10 passes" \
	bash -c "[ -n '$seen' ] && [ ${seen#up } -lt 10 ]"
check "up: in the live table with UP flags, start_down gone" \
	bash -c "[ $(slots $V 198.51.100.52) -gt 20000 ] && [ \"$(flags $V 198.51.100.52)\" = UP ] && \
		 [ \"\$($MAGLEVCTL -j health $V | jq '.backends[] | select(.backend == \"198.51.100.52\") | has(\"start_down\")')\" = false ]"
SP2=$(seq -s, 42000 42039)
check "40 new flows: now some go to it" [ "$(flows_to 192.0.2.50 5000 "$SP2" 198.51.100.52)" -gt 0 ]

# --start-down is the default with checks on (daemon_health_new_down.sh).
ctl backend add $V 198.51.100.53
st=$(field $V 198.51.100.53 '.state + " " + (.start_down|tostring)')
check "without --start-down a new backend (no listener) is down too, not in the table ($st)" \
	bash -c "[ '$st' = 'down true' ] && [ $(slots $V 198.51.100.53) -eq 0 ]"

N=192.0.2.51:5000/udp
ctl vip add $N --check none
ctl backend add $N 198.51.100.60 --start-down
# Within a tick (100 ms); 3 s leaves room for a loaded machine.
check "--check none: a --start-down backend is up within a tick" wait_state $N 198.51.100.60 up 3
stop_daemon
t_done
