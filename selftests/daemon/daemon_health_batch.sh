#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Health verdicts land together: 300 backends of one VIP whose service dies
# at once leave the table within a few checks, in a handful of table rebuilds
# (counted by the VIP's table generation), not one rebuild per backend; they
# come back the same way when the service returns; and when their checks time
# out instead, they leave as fast, not one per 100 ms tick.
. "$(dirname "$0")/lib.sh"

N=300
# How long to wait for all of them; MAGLEV_BATCH_WAIT=40 to time the old code.
WAIT=${MAGLEV_BATCH_WAIT:-6}

setup_net || skip_all "cannot create namespaces/veth"
# The backends are local addresses of the balancer: a check of a dead one is
# refused by the balancer's own stack (RST), no traffic leaves the namespace.
lbx ip route add local 198.51.100.0/24 dev lo
lbx ip route add local 203.0.113.192/26 dev lo
write_conf "health_via_encap no"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

EXTRA_PIDS=
start_service() { accept_service 8080 198.51.100.1; }

V=192.0.2.30:8080/tcp
{
	echo "vip add $V --check tcp --check-interval 200 --check-timeout 150 --rise 2 --fall 2"
	for i in $(seq 1 254); do echo "backend add $V 198.51.100.$i"; done
	for i in $(seq 193 $((192 + N - 254))); do echo "backend add $V 203.0.113.$i"; done
} >"$TDIR/conf.txt"
start_service || nok "service listening"
check "restore: one VIP with $N backends" ctl restore "$TDIR/conf.txt"

in_table() { ctl -j table $V | jq '[.backends[] | select(.slots > 0)] | length'; }
gen() { ctl -j table $V | jq .table_gen; }
# passing N: how many backends have passed a check (last_result ok).
passing() { ctl -j health $V | jq '[.backends[] | select(.last_result == "ok")] | length'; }
# settle WHAT COUNT G0: after a change made when the table generation was G0,
# until COUNT backends hold slots; it must take under 2.5 s (checks every
# 200 ms, rise/fall 2) and 1 to 10 table rebuilds, not one per backend.
settle() {
	local t0 end took got rebuilds
	t0=$(date +%s.%N)
	end=$((SECONDS + WAIT))
	while [ $SECONDS -le $end ]; do
		[ "$(in_table)" -eq "$2" ] && break
		sleep 0.02
	done
	took=$(echo "$(date +%s.%N) - $t0" | bc)
	got=$(in_table)
	rebuilds=$(($(gen) - $3))
	diag "$1: $got of $N backends in the table after ${took}s, $rebuilds table rebuilds"
	check "$1: $2 backends in the table within 2.5 s" \
		bash -c "[ $got -eq $2 ] && [ \$(echo '$took < 2.5' | bc) = 1 ]"
	check "$1: 1 to 10 table rebuilds, not one per backend" \
		bash -c "[ $rebuilds -ge 1 ] && [ $rebuilds -le 10 ]"
}
down_with() { ctl -j health $V | jq --arg e "$1" '[.backends[] | select(.state == "down" and .last_error == $e)] | length'; }

# New, they start down until their first check passes (issue 38), then the
# table is rebuilt: a commit after the checks' results.
for i in $(seq 100); do [ "$(passing)" -eq $N ] && [ "$(in_table)" -eq $N ] && break; sleep 0.05; done
check "all $N backends pass their checks and hold slots" [ "$(in_table)" -eq $N ]

g0=$(gen)
kill $SVC
settle "service killed, checks refused" 0 "$g0"
check "the VIP's table is empty: every slot says none" \
	[ "$(ctl -j table $V | jq .other_slots)" = 65537 ]
# Refused, each of them; on a loaded machine a few refusals may not be seen
# within the 150 ms timeout (1 run in 5 at load 10-20 had some "timeout"):
# all down, each refused or timed out, most of them (over half) refused.
ref=$(down_with "connect: Connection refused")
tmo=$(down_with timeout)
diag "down after the service died: $ref refused, $tmo timed out"
check "every backend is reported down, refused (a few timed out on a loaded machine)" \
	bash -c "[ $((ref + tmo)) -eq $N ] && [ $ref -gt $((N / 2)) ]"

g0=$(gen)
start_service || nok "service listening again"
settle "service back" $N "$g0"

# Silent death: the backends' addresses now lead into the client namespace,
# which does not forward, so checks time out: verdicts found inside the tick,
# which used to be applied one per tick.
g0=$(gen)
lbx ip route del local 198.51.100.0/24 dev lo
lbx ip route del local 203.0.113.192/26 dev lo
lbx ip route add 198.51.100.0/24 via 203.0.113.2 dev lb0
lbx ip route add 203.0.113.192/26 via 203.0.113.2 dev lb0
settle "checks time out" 0 "$g0"
check "every backend is reported down, timed out" [ "$(down_with timeout)" -eq $N ]
stop_daemon
t_done
