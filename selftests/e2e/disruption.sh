#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Minimal disruption, remove one of four backends, then add a fifth:
#  - established flows (1,000 keep-alive HTTP connections, a request on each
#    every 300 ms): every connection on a surviving backend stays up, on the
#    same backend, through both changes (the connection table); b4's are the
#    only ones that break;
#  - new flows (the same 3,000 5-tuples replayed; each SYN takes the Maglev
#    pick): b4's flows spread over the survivors, and with b5 added the flows
#    that move go to b5. Maglev keeps the other flows where they were except
#    for a small fraction (Eisenbud et al. 3.4: the table is not perfectly
#    stable); the exact counts are printed, and at most 1% may differ.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_TOOLS/longconn" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

e2e_plan 4
# The replays reuse each tuple a second or more after its close: a SYN within
# tcp_closed_timeout_ms of a close keeps the closed entry's backend (a
# spoofed RST and SYN must not move a connection), so the replays measure
# the table only once the closed entries have aged past it.
e2e_lb_up -b 5 tcp_closed_timeout_ms 500
vip=$TOPO_VIP4:80/tcp
e2e_vip 1 "$vip" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)" "$(topo_backend4 4)"
m=$TOPO_DIR/map
flows() { e2e_flows "$m.$1.out" -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" -n 3000 -m "$m.$1"; }
# e2e_lc FILE BACKEND: "CONNS ALIVE" for BACKEND from longconn's report.
lc_backend() { awk -v b="$2" '$1 == "backend" && $2 == b {print $3, $5}' "$1"; }

flows 4
rc=0
[ "$(e2e_failed "$m.4.out")" = 0 ] || rc=1
for b in b1 b2 b3 b4; do [ "$(e2e_count "$m.4.out" $b)" -gt 500 ] || rc=1; done
e2e_result $rc "four backends: 3000 flows all answered, each backend > 500 ($(topo_shares "$m.4.out"))" "$(cat "$m.4.out")"

topo_bg client longconn "$TOPO_TOOLS/longconn" --http -d "$TOPO_VIP4" -p 80 -s "$(topo_srcs4)" \
	-n 1000 -i 300 -T 6
lc=$TOPO_BG_PID
sleep 2
# --force: b4 carries connections, whose break is what this measures.
topo_ctl 1 backend del "$vip" "$(topo_backend4 4)" --force >/dev/null || topo_die "backend del failed"
flows 3
sleep 1
topo_ctl 1 backend add "$vip" "$(topo_backend4 5)" >/dev/null || topo_die "backend add failed"
# A new backend takes flows once its first check has passed.
topo_wait_up 1 || topo_die "b5 not up"
flows 5
wait $lc
lco=$TOPO_DIR/longconn.out

rc=0
kept=0
for b in b1 b2 b3; do
	read -r n alive < <(lc_backend "$lco" $b)
	[ -n "$n" ] && [ "$n" -gt 150 ] && [ "$alive" = "$n" ] || rc=1
	kept=$((kept + ${alive:-0}))
done
read -r n4 alive4 < <(lc_backend "$lco" b4)
[ "${n4:-0}" -gt 150 ] && [ "$alive4" = 0 ] && [ "$(e2e_field "$lco" switched)" = 0 ] || rc=1
e2e_result $rc "established: all $kept connections on b1-b3 stayed up on their backend; b4's $n4 were the only ones cut" \
	"$(cat "$lco")"

# Columns after paste: src sport before src sport after.
read -r kept moved lost < <(paste -d' ' "$m.4" "$m.3" | awk '
	$3 != "b4" && $3 == $6 {kept++}
	$3 != "b4" && $3 != $6 {moved++}
	$3 == "b4" && ($6 == "-" || $6 == "b4") {lost++}
	END {print kept + 0, moved + 0, lost + 0}')
rc=0
[ "$lost" = 0 ] && [ "$(e2e_failed "$m.3.out")" = 0 ] && [ $((moved * 100)) -le $((kept + moved)) ] || rc=1
e2e_result $rc "new flows, b4 removed: b4's flows re-spread; of $((kept + moved)) on survivors $moved moved ($(topo_shares "$m.3.out"))" \
	"kept $kept moved $moved lost $lost" "$(cat "$m.3.out")"

read -r stayed to_new elsewhere < <(paste -d' ' "$m.3" "$m.5" | awk '
	$3 == $6 {stayed++}
	$3 != $6 && $6 == "b5" {to_new++}
	$3 != $6 && $6 != "b5" {elsewhere++}
	END {print stayed + 0, to_new + 0, elsewhere + 0}')
rc=0
[ "$(e2e_failed "$m.5.out")" = 0 ] && [ "$to_new" -gt 450 ] && [ $((elsewhere * 100)) -le 3000 ] || rc=1
e2e_result $rc "new flows, b5 added: $to_new moved to b5, $elsewhere elsewhere, $stayed stayed ($(topo_shares "$m.5.out"))" \
	"stayed $stayed to_new $to_new elsewhere $elsewhere" "$(cat "$m.5.out")"
e2e_done
