#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# With checks on, a new backend starts down (no --start-down needed): one at
# a dead address never gets a flow while its checks fail, and gets flows once
# its first check passes. With --check none a new backend is up at once. What
# the daemon already has keeps its health: a restore of the running
# configuration and a restart leave an up backend up, before any check.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
# The backends are local addresses of the balancer (checks go to them).
lbx ip route add local 198.51.100.0/24 dev lo
write_conf "health_via_encap no"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

EXTRA_PIDS=
to() { flows_to 192.0.2.60 5000 "$@"; }

V=192.0.2.60:5000/udp
listen_tcp "$NS_LB" 198.51.100.61 5000 || nok "listener on 198.51.100.61:5000"
# fall 10: a backend up at its add (as before) would stay so for 2 s of failures.
ctl vip add $V --check tcp --check-port 5000 --check-interval 200 --check-timeout 150 --rise 3 --fall 10
ctl backend add $V 198.51.100.61
check "a backend whose check passes comes up (within 5 s)" wait_state $V 198.51.100.61 up 5

# A mistyped address: nothing answers there.
ctl backend add $V 198.51.100.62
check "a new backend starts down, waiting for its first check (start_down)" \
	[ "$(field $V 198.51.100.62 '.state + " " + (.start_down|tostring)')" = "down true" ]
check "no slot in the live table, no flags in the datapath" \
	bash -c "[ '$(slots $V 198.51.100.62)' = 0 ] && [ -z '$(flags $V 198.51.100.62)' ]"
# Flows while its checks fail: 4 rounds over at least 5 failed checks.
got=0 sent=0
for r in 1 2 3 4; do
	SP=$(seq -s, $((41000 + r * 100)) $((41000 + r * 100 + 19)))
	n=$(to "$SP" 198.51.100.62)
	got=$((got + n))
	sent=$((sent + 20))
	sleep 0.3
done
for i in $(seq 100); do [ "$(field $V 198.51.100.62 .checks_failed)" -ge 5 ] 2>/dev/null && break; sleep 0.05; done
diag "checks failed meanwhile: $(field $V 198.51.100.62 .checks_failed)"
check "$sent new flows while its checks fail: none to it ($got)" [ "$got" -eq 0 ]
check "still down after 5 failed checks" \
	[ "$(field $V 198.51.100.62 '.state + " " + .last_result')" = "down fail" ]
# A restore while it waits keeps it waiting for its first pass.
ctl save >"$TDIR/pending.save"
check "restore while it waits: accepted" ctl restore "$TDIR/pending.save"
check "... it is still down and waiting for its first pass (start_down)" \
	[ "$(field $V 198.51.100.62 '.state + " " + (.start_down|tostring)')" = "down true" ]

# The service comes up at that address: the first passing check brings it in.
listen_tcp "$NS_LB" 198.51.100.62 5000 || nok "listener on 198.51.100.62:5000"
check "its first passing check brings it up (within 5 s)" wait_state $V 198.51.100.62 up 5
SP=$(seq -s, 42000 42039)
check "40 new flows: now some go to it" [ "$(to "$SP" 198.51.100.62)" -gt 0 ]

# What the daemon has keeps its health: a restore of the running configuration
# (flush and add back, one request) does not take an up backend down.
ctl save >"$TDIR/run.save"
check "restore of the running configuration" ctl restore "$TDIR/run.save"
st=$(ctl -j health $V | jq -r '[.backends[] | .state + "/" + (.start_down|tostring)] | join(" ")')
diag "after the restore (state/start_down): $st"
check "after it, both backends are still up, not start_down, in the table" \
	bash -c "[ '$st' = 'up/null up/null' ] && [ \$($MAGLEVCTL -j table $V | jq '.backends[] | select(.backend == \"198.51.100.62\") | .slots') -gt 0 ]"

# A restart adopts the datapath's health: up at once, before a check passes.
# The listeners stop first, so no check can pass after it (fall 20: 4 s of
# failures before they go down, far more than the look takes).
ctl vip set $V --fall 20
# shellcheck disable=SC2086 # the listeners' pids
kill $EXTRA_PIDS 2>/dev/null
stop_daemon
start_daemon || nok "maglevd restarts"
st=$(ctl -j health $V | jq -r '[.backends[] | .state + "/" + ((.checks_ok // 0)|tostring)] | join(" ")')
diag "right after the restart (state/passed checks): $st"
check "after a restart (services stopped) both are up at once, no check passed" [ "$st" = "up/0 up/0" ]

# Without checks a new backend is up at once.
N=192.0.2.61:5000/udp
ctl vip add $N --check none
ctl backend add $N 198.51.100.70
check "--check none: a new backend is up at once, in the table" \
	bash -c "[ $(field $N 198.51.100.70 .state) = up ] && [ $(slots $N 198.51.100.70) -gt 0 ]"
stop_daemon
t_done
