#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# slow_start_ms: a backend that joins a VIP with backends in its table, or
# comes back after it left the table, reaches its weight in 4 steps, each one
# rebuild of that VIP's table, while established connections never move. Two
# real backends (lib_backends.sh), real TCP connections (longconn).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"

RAMP=4000
backends_daemon 2 "slow_start_ms $RAMP"
ctl backend add $V 198.51.100.41
check "backend 1 up, alone: no ramp" wait_state $V 198.51.100.41 up 5
gen() { ctl -j vip show $V | jq -r .vip.table_gen; }
# Established connections, all on backend 1, across backend 2's ramp.
clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n 16 -i 50 -T 7 >"$TDIR/e.out" 2>&1 &
LE=$!
sleep 1
g0=$(gen)
ctl backend add $V 198.51.100.42
# New, it starts down until its first check passes (issue 38), then ramps.
ramp_state() { ctl -j backend list $V | jq -r '.backends[] | select(.backend == "198.51.100.42") | "\(.state) \(.ramp_step)/\(.ramp_steps)"'; }
for _ in $(seq 50); do
	st=$(ramp_state)
	[ "$st" = "down null/null" ] || break
	sleep 0.1
done
check "backend 2 joins ramping at its first passing check ($st)" [ "$st" = "ramping 1/4" ]
# Its slots over the ramp: 1/5, 2/6, 3/7 of the table, then half.
seen=
end=$((SECONDS + RAMP / 1000 + 3))
while [ $SECONDS -le $end ]; do
	s=$(slots $V 198.51.100.42)
	case " $seen " in *" $s "*) ;; *) seen="$seen $s" ;; esac
	[ "$s" = 32768 ] && break
	sleep 0.05
done
diag "backend 2's slots over its ramp:$seen; table_gen $g0 -> $(gen)"
check "4 steps, each with more slots: 13107 21846 28087 32768" [ "$seen" = " 13107 21846 28087 32768" ]
check "one table rebuild per step ($g0 -> $(gen))" [ "$(gen)" = $((g0 + 4)) ]
check "at full weight: up" wait_state $V 198.51.100.42 up 2
check "the log names each step" \
	bash -c "[ \$(grep -c 'slow start: backend 198.51.100.42 of 192.0.2.40:8080/tcp at step' '$DLOG') = 3 ]"
wait "$LE"
diag "established over the ramp: $(tr '\n' ';' <"$TDIR/e.out")"
check "established connections: all 16 alive on backend 1, none moved or reset" \
	grep -q '^conns 16 established 16 alive 16 resets 0 closed 0 errors 0 switched 0' "$TDIR/e.out"

# Back after it left the table (settle_ms 0: at the verdict): ramps again.
check_off 2 192.0.2.40
check "backend 2 fails: down, out of the table" \
	bash -c "for i in \$(seq 60); do [ \"\$($MAGLEVCTL -j table $V | jq -r '.backends[] | select(.backend == \"198.51.100.42\") | .slots')\" = 0 ] && exit 0; sleep 0.05; done; exit 1"
check_on 2 192.0.2.40
check "backend 2 back: ramping" wait_state $V 198.51.100.42 ramping 3
check "from 13107 slots" [ "$(slots $V 198.51.100.42)" = 13107 ]
check "then at full weight" wait_state $V 198.51.100.42 up $((RAMP / 1000 + 2))
# Per VIP: --slow-start 0 overrides the config's; saved with the VIP.
check "vip set --slow-start 0: vip show says so" \
	bash -c "$MAGLEVCTL vip set $V --slow-start 0 && [ \"\$($MAGLEVCTL -j vip show $V | jq -r .vip.slow_start_ms)\" = 0 ]"
check "save carries --slow-start 0" bash -c "$MAGLEVCTL save | grep -q -- '--slow-start 0'"
out=$(ctl vip set $V --slow-start 99999999 2>&1)
named=no
grep -q 'slow_start_ms' <<<"$out" && named=yes
check "vip set --slow-start out of range is refused naming it, nothing changed ($out)" \
	bash -c "[ $named = yes ] && ! $MAGLEVCTL vip set $V --slow-start 99999999 2>/dev/null && [ \"\$($MAGLEVCTL -j vip show $V | jq -r .vip.slow_start_ms)\" = 0 ]"
check_off 2 192.0.2.40
check "with --slow-start 0: backend 2 fails, down" wait_state $V 198.51.100.42 down 3
check_on 2 192.0.2.40
check "back: up at once, no ramp" wait_state $V 198.51.100.42 up 3
check "at once its full 32768 slots" [ "$(slots $V 198.51.100.42)" = 32768 ]
check "vip set --slow-start default: follows the config again (no slow_start_ms in vip show)" \
	bash -c "$MAGLEVCTL vip set $V --slow-start default && [ \"\$($MAGLEVCTL -j vip show $V | jq -r .vip.slow_start_ms)\" = null ] && $MAGLEVCTL vip set $V --slow-start 0"
stop_daemon
start_daemon
check "a restart keeps the VIP's slow_start_ms 0 (state file)" \
	bash -c "[ \"\$($MAGLEVCTL -j vip show $V | jq -r .vip.slow_start_ms)\" = 0 ]"
out=$(printf 'slow_start_ms 99999999999\n' >"$TDIR/bad.conf"; "$MAGLEVD" -t -c "$TDIR/bad.conf" 2>&1)
check "a bad slow_start_ms is refused naming it ($out)" grep -q slow_start_ms <<<"$out"
stop_daemon
t_done
