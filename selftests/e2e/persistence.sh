#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Persistence: 50 long-lived TCP connections (a line each way every 100 ms)
# stay up on their backends while the balancer's configuration changes under
# them — a backend added, another (drained, no connections) removed, weights
# changed — and while maglevd is killed with SIGKILL and restarted, and
# stopped with SIGTERM and left down for a second before it restarts: zero
# resets, zero stalls over one second, every reply from the connection's
# first backend. New flows meanwhile follow the new table.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

e2e_plan 4
e2e_lb_up -b 5
vip=$TOPO_VIP4:$TOPO_ECHO_PORT/tcp
e2e_vip 1 "$vip" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)" "$(topo_backend4 4)"
topo_ctl 1 backend set "$vip" "$(topo_backend4 4)" --drain >/dev/null || topo_die "drain failed"
out=$TOPO_DIR/persist

topo_bg client longconn "$TOPO_TOOLS/longconn" -d "$TOPO_VIP4" -p "$TOPO_ECHO_PORT" \
	-s "$(topo_srcs4 50)" -n 50 -i 100 -T 14
lc=$TOPO_BG_PID
sleep 2
steps=()
step() {
	if "$@" >/dev/null 2>&1; then steps+=("ok: ${*:2}"); else steps+=("FAILED: ${*:2}"); fi
	sleep 1
}
step topo_ctl 1 backend add "$vip" "$(topo_backend4 5)"
step topo_ctl 1 backend del "$vip" "$(topo_backend4 4)"
step topo_ctl 1 backend set "$vip" "$(topo_backend4 1)" --weight 3
step topo_lb_kill 1 KILL
step topo_lb_start 1
step topo_ctl 1 backend set "$vip" "$(topo_backend4 2)" --weight 2
step topo_lb_kill 1 TERM
step topo_lb_start 1
e2e_flows "$out.new" -e -d "$TOPO_VIP4" -p "$TOPO_ECHO_PORT" -s "$(topo_srcs4)" -n 600
wait $lc
lcrc=$?
cp "$TOPO_DIR/longconn.out" "$out.lc"

rc=0
for s in "${steps[@]}"; do [ "${s%%:*}" = ok ] || rc=1; done
e2e_result $rc "add b5, remove drained b4, weight b1=3, SIGKILL+restart, weight b2=2, SIGTERM+restart: all applied" "${steps[@]}"

rc=0
[ "$lcrc" = 0 ] && [ "$(e2e_field "$out.lc" alive)" = 50 ] && [ "$(e2e_field "$out.lc" resets)" = 0 ] &&
	[ "$(e2e_field "$out.lc" switched)" = 0 ] || rc=1
e2e_result $rc "50 connections: all alive, zero resets, same backend throughout" "$(cat "$out.lc")"

stall=$(e2e_field "$out.lc" max_stall_ms)
[ -n "$stall" ] && [ "$stall" -lt 1000 ] && [ "$(e2e_field "$out.lc" replies)" -gt 4000 ] && rc=0 || rc=1
e2e_result $rc "no stall over 1 s (max ${stall} ms)" "$(cat "$out.lc")"

# The restarted daemon serves the changed table: new flows reach b5, never b4.
rc=0
[ "$(e2e_failed "$out.new")" = 0 ] && [ "$(e2e_count "$out.new" b5)" -gt 0 ] &&
	[ "$(e2e_count "$out.new" b4)" = 0 ] || rc=1
e2e_result $rc "new flows after the changes: b5 in use, b4 gone ($(topo_shares "$out.new"))" "$(cat "$out.new")"
e2e_done
