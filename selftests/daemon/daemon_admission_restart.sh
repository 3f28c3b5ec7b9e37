#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A restart of maglevd keeps settle, slow start and damping (issue 34): a
# backend held in its slots stays held with the same slots, a ramping one
# goes on at its step (not at full weight), a suppressed one stays
# suppressed with its penalty; the table is byte-identical across the
# restart. Their times go into the state file as wall-clock ms. Three real
# backends (lib_backends.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"

# Long enough that nothing ends or steps across the restart: the hold 30 s,
# ramp steps of 10 s, a penalty that halves in 60 s.
backends_daemon 3 "settle_ms 30000" "damping_penalty 1000" "damping_suppress 2000" \
	"damping_reuse 750" "damping_half_life_ms 60000"
for b in 1 3; do ctl backend add $V 198.51.100.4$b; done
up=0
for b in 1 3; do wait_state $V 198.51.100.4$b up 5 && up=$((up + 1)); done
check "backends 1 and 3 up" [ $up = 2 ]
be() { ctl -j backend list $V | jq -r --arg b "198.51.100.4$1" ".backends[] | select(.backend == \$b) | $2"; }

# Backend 3 flaps: down (held), up within settle_ms, down, then passes: suppressed.
check_off 3 192.0.2.40
check "backend 3 flap 1: held" wait_state $V 198.51.100.43 held 3
check_on 3 192.0.2.40
check "backend 3 flap 2: up" wait_state $V 198.51.100.43 up 3
check_off 3 192.0.2.40
check "backend 3 flap 3: held" wait_state $V 198.51.100.43 held 3
check_on 3 192.0.2.40
check "backend 3 passes its checks but is suppressed" \
	bash -c "for i in \$(seq 60); do grep -q 'backend 198.51.100.43 of 192.0.2.40:8080/tcp passes its checks but stays down' '$DLOG' && exit 0; sleep 0.05; done; exit 1"
# Backend 1: down once, held in its slots.
check_off 1 192.0.2.40
check "backend 1 fails: held" wait_state $V 198.51.100.41 held 3
# Backend 2 joins with slow start: ramping at step 1 of 4.
ctl vip set $V --slow-start 40000
ctl backend add $V 198.51.100.42
check "backend 2 joins ramping" wait_state $V 198.51.100.42 ramping 5

digest() { ctl -j table $V | jq -r .digest; }
d0=$(digest)
s1=$(slots $V 198.51.100.41)
s2=$(slots $V 198.51.100.42)
st2=$(be 2 '"\(.state) \(.ramp_step)/\(.ramp_steps)"')
left1=$(be 1 .settle_ms_left)
p3=$(be 3 .penalty)
st3=$(be 3 '"\(.state) \(.suppressed)"')
diag "before: digest $d0, backend 1 $s1 slots (held, $left1 ms left), backend 2 $s2 slots ($st2), backend 3 $st3 penalty $p3"
# kept: the state file has backend 1's hold end (ahead), backend 2's ramp
# start (past) and backend 3 suppressed.
kept() {
	jq -e '[.vips[0].backends[] | {addr, held_until_rt, ramp_start_rt, suppressed}] |
		(map(select(.addr == "198.51.100.41"))[0].held_until_rt > now * 1000) and
		(map(select(.addr == "198.51.100.42"))[0].ramp_start_rt // 0 | . > 0 and . <= now * 1000) and
		(map(select(.addr == "198.51.100.43"))[0].suppressed == true)' "$STATE" >/dev/null
}
check "the state file keeps the hold, the ramp and the penalty as wall-clock ms" poll_until 3 kept
rs=$(jq -r '.vips[0].backends[] | select(.addr == "198.51.100.42") | .ramp_start_rt // 0' "$STATE")

stop_daemon
start_daemon
check "maglevd restarts" ctl status
check "the log says what goes on: backend 1 held, 2 ramping, 3 suppressed" \
	bash -c "grep -q 'restart: backend 198.51.100.41 of 192.0.2.40:8080/tcp goes on from the state file: held in its slots for [0-9]* ms more; penalty' '$DLOG' && grep -q 'restart: backend 198.51.100.42 of 192.0.2.40:8080/tcp goes on from the state file: ramping at step 1 of 4' '$DLOG' && grep -q 'restart: backend 198.51.100.43 of 192.0.2.40:8080/tcp goes on from the state file: held.*; penalty [0-9]*, suppressed\$' '$DLOG'"
d1=$(digest)
diag "after: digest $d1, backend 1 $(slots $V 198.51.100.41) slots ($(be 1 .state), $(be 1 .settle_ms_left) ms left), backend 2 $(slots $V 198.51.100.42) slots ($(be 2 '"\(.state) \(.ramp_step)/\(.ramp_steps)"')), backend 3 $(be 3 '"\(.state) \(.suppressed)"') penalty $(be 3 .penalty)"
check "after the restart the table is byte-identical (digest $d0 -> $d1)" [ "$d1" = "$d0" ]
check "backend 1 still held ($(be 1 .state)), its $s1 slots kept ($(slots $V 198.51.100.41)), marked ($(flags $V 198.51.100.41))" \
	bash -c "[ \"$(be 1 .state)\" = held ] && [ \"$(slots $V 198.51.100.41)\" = $s1 ] && [ \"$(flags $V 198.51.100.41)\" = MARKED ]"
left=$(be 1 .settle_ms_left)
check "backend 1's hold ends when it did before the restart ($left1 ms left then, ${left:-none} now)" \
	bash -c "[ '${left:-0}' -gt 0 ] && [ '${left:-0}' -le '$left1' ]"
check "backend 2 goes on ramping at its step ($st2 before, $(be 2 '"\(.state) \(.ramp_step)/\(.ramp_steps)"') now), not at full weight ($(slots $V 198.51.100.42) slots, $s2 before)" \
	bash -c "[ \"$(be 2 '"\(.state) \(.ramp_step)/\(.ramp_steps)"')\" = '$st2' ] && [ \"$(slots $V 198.51.100.42)\" = $s2 ]"
p=$(be 3 .penalty)
check "backend 3 still suppressed ($(be 3 '"\(.state) \(.suppressed)"')), its penalty decaying from $p3 ($p)" \
	bash -c "[ \"$(be 3 '"\(.state) \(.suppressed)"')\" = 'suppressed true' ] && [ '$p' -ge 2000 ] && [ '$p' -le '$p3' ]"
# Once the restarted checks could give verdicts (fall 2, rise 1): none may change a thing.
hc() { ctl -j health $V | jq -r --arg b "198.51.100.4$1" ".backends[] | select(.backend == \$b) | .$2 // 0"; }
checked() { [ "$(hc 1 checks_failed)" -ge 2 ] && [ "$(hc 3 checks_ok)" -ge 2 ]; }
check "the restarted checks ran: backend 1 fails ($(hc 1 checks_failed)), backend 3 passes ($(hc 3 checks_ok))" \
	poll_until 5 checked
check "then still the same table and states ($(digest))" \
	bash -c "[ \"$(digest)\" = $d0 ] && [ \"$(be 3 .suppressed)\" = true ] && [ \"$(be 1 .state)\" = held ]"
p=$(be 3 .penalty)
check "no flap counted for backend 3 by the restart: its penalty only decayed ($p3 -> $p, still over 2000)" \
	bash -c "[ '$p' -le '$p3' ] && [ '$p' -ge 2000 ]"
# Its next step comes when it would have without the restart: 10 s after
# the ramp began (wall clock, the state file's ramp_start_rt).
step2() { [ "$(be 2 .ramp_step)" = 2 ]; }
poll_until 15 step2
late=$(($(date +%s%3N) - rs - 10000))
st=$(be 2 '"\(.state) \(.ramp_step)/\(.ramp_steps)"')
check "backend 2's step 2 ($st) comes 10 s after its ramp began, restart or not (${late} ms late)" \
	bash -c "[ '$st' = 'ramping 2/4' ] && [ $late -ge -200 ] && [ $late -le 1000 ]"

# A state file without these members (from before them) loads as before:
# the backends start fresh.
stop_daemon
jq '.vips[].backends[] |= del(.held_until_rt, .ramp_start_rt, .penalty, .penalty_rt, .suppressed, .damped_up)' \
	"$STATE" >"$STATE.old" && mv "$STATE.old" "$STATE"
start_daemon
check "an older state file loads: backend 2 at full weight, backend 3 not suppressed" \
	bash -c "[ \"$(be 2 .ramp_step)\" = null ] && [ \"$(be 3 .suppressed)\" != true ]"
stop_daemon
t_done
