#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Health checks as a client sees them: stop the server on b2 and new requests
# to it fail (refused) only until maglevd's TCP check has failed `fall` times
# in a row — then b2 is out of the table and every new request succeeds on
# the others. Start it again and after `rise` good checks b2 takes new flows.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

e2e_plan 4
e2e_lb_up -b 3
vip=$TOPO_VIP4:80/tcp
e2e_vip 1 "$vip" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
out=$TOPO_DIR/health
round=0
# One probe: 64 new flows (one per source, a fresh source port each round).
probe() {
	round=$((round + 1))
	e2e_flows "$out.p" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 64 -t 1000 -b $((20000 + round))
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Longest a state change may take: the checks plus one interval of slack.
fall_ms=$(((TOPO_HC_FALL + 1) * TOPO_HC_INTERVAL_MS + TOPO_HC_TIMEOUT_MS + 500))
rise_ms=$(((TOPO_HC_RISE + 1) * TOPO_HC_INTERVAL_MS + 500))

# Wait for every backend to be up (rise checks after start).
for _ in $(seq 50); do
	probe
	[ "$(e2e_failed "$out.p")" = 0 ] && [ "$(e2e_count "$out.p" b2)" -gt 0 ] && break
	sleep 0.1
done
[ "$(e2e_failed "$out.p")" = 0 ] && [ "$(e2e_count "$out.p" b2)" -gt 0 ]
e2e_result $? \
	"all three backends healthy and serving ($(topo_shares "$out.p"))" "$(cat "$out.p")"

topo_server_stop 2
t0=$(now_ms)
failed_seen=0
gone=
while [ $(($(now_ms) - t0)) -lt $((fall_ms * 3)) ]; do
	probe
	f=$(e2e_failed "$out.p")
	[ "$f" -gt 0 ] && failed_seen=$((failed_seen + f))
	if [ "$f" = 0 ] && [ "$(e2e_count "$out.p" b2)" = 0 ]; then
		gone=$(($(now_ms) - t0))
		break
	fi
	sleep 0.05
done
rc=0
[ -n "$gone" ] && [ "$gone" -le "$fall_ms" ] || rc=1
e2e_result $rc "b2 stopped: out of the table after ${gone:-never} ms (limit $fall_ms ms: fall $TOPO_HC_FALL x ${TOPO_HC_INTERVAL_MS} ms)" \
	"requests failed meanwhile: $failed_seen" "$(cat "$out.p")"

rc=0
for _ in 1 2 3; do
	probe
	[ "$(e2e_failed "$out.p")" = 0 ] && [ "$(e2e_count "$out.p" b2)" = 0 ] || rc=1
done
e2e_result $rc "while b2 is down, 3x64 new requests: none fails ($(topo_shares "$out.p"))" "$(cat "$out.p")"

topo_server_start 2
t0=$(now_ms)
back=
while [ $(($(now_ms) - t0)) -lt $((rise_ms * 3)) ]; do
	probe
	if [ "$(e2e_count "$out.p" b2)" -gt 0 ]; then
		back=$(($(now_ms) - t0))
		break
	fi
	sleep 0.05
done
rc=0
[ -n "$back" ] && [ "$back" -le "$rise_ms" ] && [ "$(e2e_failed "$out.p")" = 0 ] || rc=1
e2e_result $rc "b2 restarted: back in the table after ${back:-never} ms (limit $rise_ms ms: rise $TOPO_HC_RISE)" "$(cat "$out.p")"
e2e_done
