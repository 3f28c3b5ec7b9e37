#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Spoofed closes (issue 31 item 1): 30 long-lived TCP connections through the
# balancer; an off-path sender who knows their tuples sends each one an RST
# and then a SYN (raw packets from the client's namespace, sequence numbers
# out of window, so a backend that gets them answers with a challenge ACK,
# RFC 5961, and keeps the connection). First with the table unchanged: the
# SYN's fresh pick is the connection's own backend, so even the balancer
# before issue 31, which re-picked a SYN after an RST, kept them. Then with
# backend 1 draining (its slots moved to the others): the balancer before
# issue 31 sent backend 1's connections' SYNs to their new pick, recorded
# them there, and the next client segment met a backend without its socket
# (reset). Now a SYN after a FIN or RST keeps the entry's backend while it
# is usable: zero resets, every reply from the connection's first backend.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

N=30
e2e_plan 4
e2e_lb_up -b 3
vip=$TOPO_VIP4:$TOPO_ECHO_PORT/tcp
e2e_vip 1 "$vip" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
out=$TOPO_DIR/spoof

topo_bg client longconn "$TOPO_TOOLS/longconn" -d "$TOPO_VIP4" -p "$TOPO_ECHO_PORT" \
	-s "$(topo_srcs4 30)" -n $N -i 100 -T 12
lc=$TOPO_BG_PID

# The client's established connections to the VIP, "SRC:SPORT DST:DPORT".
tuples() { topo_exec client ss -Htn state established dst "$TOPO_VIP4" | awk '{print $3, $4}'; }
# FIELD of a fresh interim report (longconn prints one on SIGUSR1).
interim() {
	local i n
	n=$(grep -c '^interim conns' "$TOPO_DIR/longconn.out")
	kill -USR1 "$lc"
	for ((i = 0; i < 50; i++)); do
		[ "$(grep -c '^interim conns' "$TOPO_DIR/longconn.out")" -gt "$n" ] && break
		sleep 0.1
	done
	awk -v k="$1" '$1 == "interim" && $2 == "conns" {for (i = 2; i < NF; i++) if ($i == k) v = $(i + 1)} END {print v}' \
		"$TOPO_DIR/longconn.out"
}
# Until every connection has had about three more exchanges (each one
# would meet a reset if its packets went to another backend); bounded.
exchanges() {
	local r0 i
	r0=$(interim replies)
	for ((i = 0; i < 40; i++)); do
		sleep 0.1
		[ "$(interim replies)" -ge $((r0 + 3 * N)) ] && return 0
	done
	return 1
}
for ((i = 0; i < 50; i++)); do
	[ "$(tuples | wc -l)" = $N ] && break
	sleep 0.1
done
tuples >"$out.tuples"
[ "$(wc -l <"$out.tuples")" = $N ] || topo_die "longconn: $(wc -l <"$out.tuples") of $N connections up"

# 1: table unchanged.
sent=$(topo_exec client python3 selftests/e2e/spoof_tcp.py RST SYN <"$out.tuples")
exchanges || topo_die "longconn: no replies after the spoofed segments"
r1=$(interim resets)
rc=0
[ "$sent" = $((2 * N)) ] && [ "$r1" = 0 ] || rc=1
e2e_result $rc "RST then SYN to $N connections, table unchanged: $sent segments, $r1 resets" "$(cat "$TOPO_DIR/longconn.out")"

# 2: backend 1 draining: its connections' slots now name backends 2 and 3.
topo_ctl 1 backend set "$vip" "$(topo_backend4 1)" --drain >/dev/null || topo_die "drain failed"
on1=$(awk '$1 == "interim" && $2 == "backend" && $3 == "b1" {n = $4} END {print n + 0}' "$TOPO_DIR/longconn.out")
sent=$(topo_exec client python3 selftests/e2e/spoof_tcp.py RST SYN <"$out.tuples")
rc=0
[ "$sent" = $((2 * N)) ] && [ "$on1" -gt 0 ] || rc=1
e2e_result $rc "backend 1 drained ($on1 connections on it), RST then SYN to all $N again: $sent segments" "$(cat "$TOPO_DIR/longconn.out")"

wait $lc
lcrc=$?
cp "$TOPO_DIR/longconn.out" "$out.lc"
rc=0
[ "$lcrc" = 0 ] && [ "$(e2e_field "$out.lc" alive)" = $N ] && [ "$(e2e_field "$out.lc" resets)" = 0 ] &&
	[ "$(e2e_field "$out.lc" switched)" = 0 ] || rc=1
e2e_result $rc "$N connections: all alive, zero resets, same backend throughout" "$(cat "$out.lc")"

stall=$(e2e_field "$out.lc" max_stall_ms)
[ -n "$stall" ] && [ "$stall" -lt 1000 ] && rc=0 || rc=1
e2e_result $rc "no stall over 1 s (max ${stall} ms)" "$(cat "$out.lc")"
e2e_done
