#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Under load: wrk runs for 10 s against the VIP (a new connection per request,
# so every request takes a fresh pick) while a fourth backend is added, takes
# traffic, and is removed the way an operator removes one — drained, then
# deleted once its connections have finished. No request may fail.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"
command -v wrk >/dev/null || e2e_skip_all "wrk not installed"

e2e_plan 3
# wrk's connection per request reuses each of its source ports about every
# 1.5 s. A SYN within tcp_closed_timeout_ms of its tuple's close keeps the
# closed entry's backend, a draining one too (a spoofed RST and SYN must not
# move a live connection off it), so with the default 10 s the drained b4
# kept taking reconnections and one was reset by its delete. 500 ms: b4
# drains as an operator expects while the closing rule still holds.
e2e_lb_up -b 4 tcp_closed_timeout_ms 500
vip=$TOPO_VIP4:80/tcp
b4=$(topo_backend4 4)
e2e_vip 1 "$vip" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
out=$TOPO_DIR/load

topo_bg client wrk wrk -t 2 -c 32 -d 10s --timeout 2s -H "Connection: close" "http://$TOPO_VIP4/"
wrk=$TOPO_BG_PID
steps=()
step() {
	if "$@" >/dev/null 2>&1; then steps+=("ok: ${*:2}"); else steps+=("FAILED: ${*:2}"); fi
}
sleep 2
step topo_ctl 1 backend add "$vip" "$b4"
step topo_wait_up 1
sleep 2
e2e_flows "$out.mid" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 300 -b 40000
step topo_ctl 1 backend set "$vip" "$b4" --drain
# Deleted once its flows have ended, as an operator does (no --force).
step topo_wait_idle 1 "$vip" "$b4"
step topo_ctl 1 backend del "$vip" "$b4"
sleep 1
e2e_flows "$out.end" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 300 -b 41000
wait $wrk
cp "$TOPO_DIR/wrk.out" "$out.wrk"

rc=0
for s in "${steps[@]}"; do [ "${s%%:*}" = ok ] || rc=1; done
e2e_result $rc "during the run: add b4 (in at its first passing check), drain b4, delete b4 once its flows ended" "${steps[@]}"
rc=0
[ "$(e2e_count "$out.mid" b4)" -gt 0 ] && [ "$(e2e_count "$out.end" b4)" = 0 ] &&
	[ "$(e2e_failed "$out.mid")" = 0 ] && [ "$(e2e_failed "$out.end")" = 0 ] || rc=1
e2e_result $rc "b4 took new flows while in ($(topo_shares "$out.mid")), none after ($(topo_shares "$out.end"))" \
	"$(cat "$out.mid" "$out.end")"
reqs=$(awk '/requests in/ {print $1}' "$out.wrk")
rc=0
[ -n "$reqs" ] && [ "$reqs" -gt 1000 ] && ! grep -qE "Socket errors|Non-2xx" "$out.wrk" || rc=1
e2e_result $rc "wrk 10 s, 32 connections: $reqs requests, none failed" "$(cat "$out.wrk")"
e2e_done
