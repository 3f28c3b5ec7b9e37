#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# settle_ms: a backend that fails its checks is routed around at once (it is
# marked, new flows take their probe sequence) while its slots stay; only
# after settle_ms down is the table rebuilt without it, and a return before
# then moves no slot. Two real backends (lib_backends.sh), real TCP
# connections (longconn).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"

SETTLE=6000
# Three backends: a new flow whose pick is held finds another backend on its
# 8 probes but for (1/3)^8 of them (with two, 1/256: docs/maglev-table.md).
backends_daemon 3 "settle_ms $SETTLE"
for b in 1 2 3; do ctl backend add $V 198.51.100.4$b; done
up=0
for b in 1 2 3; do wait_state $V 198.51.100.4$b up 5 && up=$((up + 1)); done
check "three backends up through the encapsulation" [ $up = 3 ]
gen() { ctl -j vip show $V | jq -r .vip.table_gen; }
g0=$(gen)
s1=$(slots $V 198.51.100.41)
diag "table_gen $g0, backend 1 owns $s1 slots"

# Established connections over the hold (on_fail repick, the default).
clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 16 -i 50 -T 3 >"$TDIR/e.out" 2>&1 &
LE=$!
sleep 1
check_off 1 192.0.2.40
check "backend 1 fails its checks: held (down, its slots kept)" wait_state $V 198.51.100.41 held 3
check "held: no table rebuilt (table_gen $g0 -> $(gen)), its $s1 slots kept ($(slots $V 198.51.100.41))" \
	bash -c "[ $(gen) = $g0 ] && [ $(slots $V 198.51.100.41) = $s1 ]"
check "held: marked in the datapath, not UP ($(flags $V 198.51.100.41))" \
	[ "$(flags $V 198.51.100.41)" = MARKED ]
left=$(ctl -j backend list $V | jq -r '.backends[] | select(.backend == "198.51.100.41") | .settle_ms_left')
check "backend list says how long it stays held ($left ms)" \
	bash -c "[ '${left:-0}' -gt 0 ] && [ '${left:-0}' -le $SETTLE ]"
clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 16 -i 50 -T 1 >"$TDIR/n.out" 2>&1
diag "new while held: $(tr '\n' ';' <"$TDIR/n.out")"
check "16 new connections while held: all up, none on backend 1 (routed around at once)" \
	bash -c "grep -q '^conns 16 established 16 alive 16 resets 0' '$TDIR/n.out' && ! grep -q '^backend be1 ' '$TDIR/n.out'"

wait "$LE"
diag "established over the hold: $(tr '\n' ';' <"$TDIR/e.out")"
n1=$(awk '$1 == "backend" && $2 == "be1" {print $3}' "$TDIR/e.out")
resets=$(awk '$1 == "conns" {print $8}' "$TDIR/e.out")
check "established on backend 1: re-picked and reset as without settle_ms (${n1:-0} conns, ${resets:-0} resets)" \
	bash -c "[ '${n1:-0}' -gt 0 ] && [ '${resets:-0}' -ge '${n1:-1}' ]"
check "established on the other backends: all alive, none moved" \
	bash -c "[ \"\$(awk '\$1 == \"backend\" && \$2 != \"be1\" {print (\$3 == \$5)}' $TDIR/e.out | sort -u)\" = 1 ] && grep -q ' switched 0 ' $TDIR/e.out"
check_on 1 192.0.2.40
check "back within settle_ms: up" wait_state $V 198.51.100.41 up 3
check "back within settle_ms: no rebuild ($(gen)), same $s1 slots, mark cleared ($(flags $V 198.51.100.41))" \
	bash -c "[ $(gen) = $g0 ] && [ $(slots $V 198.51.100.41) = $s1 ] && [ \"$(flags $V 198.51.100.41)\" = UP ]"
clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 16 -i 50 -T 1 >"$TDIR/b.out" 2>&1
diag "new after return: $(tr '\n' ';' <"$TDIR/b.out")"
check "after its return backend 1 takes new connections again" grep -q '^backend be1 ' "$TDIR/b.out"

check_off 1 192.0.2.40
check "fails again: held" wait_state $V 198.51.100.41 held 3
t0=$SECONDS
check "down for settle_ms: down, out of the table" wait_state $V 198.51.100.41 down $((SETTLE / 1000 + 3))
diag "held for about $((SECONDS - t0)) s after the hold was seen"
check "then one rebuild ($g0 -> $(gen)), backend 1 in no slot, unmarked ($(flags $V 198.51.100.41))" \
	bash -c "[ $(gen) = $((g0 + 1)) ] && [ $(slots $V 198.51.100.41) = 0 ] && [ -z \"$(flags $V 198.51.100.41)\" ]"
check "the log says why (held, then reassigned)" \
	bash -c "grep -q 'held in its slots for $SETTLE ms' '$DLOG' && grep -q 'down for settle_ms $SETTLE: its slots are reassigned' '$DLOG'"
check_on 1 192.0.2.40
check "back after settle_ms: up, its slots back" \
	bash -c "for i in \$(seq 60); do [ \"\$($MAGLEVCTL -j table $V | jq -r '.backends[] | select(.backend == \"198.51.100.41\") | .slots')\" = $s1 ] && exit 0; sleep 0.05; done; exit 1"
out=$(printf 'settle_ms -1\n' >"$TDIR/bad.conf"; "$MAGLEVD" -t -c "$TDIR/bad.conf" 2>&1)
check "a bad settle_ms is refused naming it ($out)" grep -q settle_ms <<<"$out"
stop_daemon
t_done
