#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# settle_ms and slow_start_ms in a fleet (health_scope fleet): etcd and three
# maglevd, real TCP checks to two backends, BE1's checks blocked from two of
# the three balancers. Every balancer holds BE1 in its slots with the same
# table (the digests stay the first one), reassigns it after settle_ms (one
# new digest on all three), and when it returns every balancer ramps it in
# the same 4 steps. The hold's end and the steps count from the fleet's
# times (the voters' wall clocks, published in etcd), not from when each
# balancer applied the verdict: fleet_digests.py reads the three digests at
# the same instant every 10 ms, and every sample must have one digest but
# for GAP ms after a change (a table swap in flight); a balancer restarted
# mid-hold and one restarted mid-ramp come back at the others' hold and
# step. See docs/maglev-table.md, "Settle, slow start and damping".
# The set-up: fleet_health_lib.sh.
PFX=/maglev-settle/
ETCD_NAME=fs-test
. "$(dirname "$0")/fleet_health_lib.sh"

for n in 1 2 3; do conf $n fleet "settle_ms 6000
slow_start_ms 16000"; done
start_all || { nok "three maglevd start with health_scope fleet, settle_ms and slow_start_ms"; t_done; }
ok "three maglevd start with health_scope fleet, settle_ms and slow_start_ms"
check "all three: $BE1 up by the fleet's verdict" until_ok 15 all_views "up up up up"
check "... one tables digest" until_ok 5 one_digest
d0=$(c 1 -j status | jq -r .vips_digest)
D0="$d0 $d0 $d0 "

# The samples: every 10 ms, a change may take GAP ms (the three swap their
# tables within a few ms of each other; steps on each balancer's own clock
# were tens of ms apart), a restarted balancer counts GRACE ms after it
# answers again (it reads etcd first).
GAP=25 GRACE=1500
DIGESTS="$(dirname "$0")/fleet_digests.py"
SPID=
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; fh_cleanup' EXIT
sample_start() {
	python3 "$DIGESTS" sample "$TDIR/$1.samples" "$TDIR/$1.stop" 10 90 \
		"$TDIR/b1.sock" "$TDIR/b2.sock" "$TDIR/b3.sock" &
	SPID=$!
}
sample_stop() {
	touch "$TDIR/$1.stop"
	wait "$SPID"
	SPID=
}
now_ms() { date +%s%3N; }
# samples_after NAME T N: N samples or more taken after T (ms).
samples_after() { [ "$(awk -v t="$2" '$1 >= t' "$TDIR/$1.samples" | wc -l)" -ge "$3" ]; }
# judge NAME [FROM [TO]]: fleet_digests.py's verdict, its figures in $judged.
judge() {
	judged=$(python3 "$DIGESTS" judge "$TDIR/$1.samples" $GAP $GRACE "${@:2}")
	local r=$?
	diag "$1 ${2:+from $2 }${3:+to $3 }: $judged"
	return $r
}
# seen N: the judged samples had N digests or more.
seen() { [ "$(sed -n 's/.*digests seen \([0-9]*\).*/\1/p' <<<"$judged")" -ge "$1" ]; }
# left N: BE1's settle_ms_left on balancer N.
left() { c "$1" -j backend list "$V" | jq -r --arg b "$BE1" '.backends[] | select(.backend == $b) | .settle_ms_left // -1'; }
# left_near: b1's and b3's hold ends within 250 ms of each other (read
# one after the other: a few ms apart).
left_near() {
	local a b
	a=$(left 1) b=$(left 3)
	diag "settle_ms_left: b1 $a, b3 $b"
	[ "$a" -ge 0 ] && [ "$b" -ge 0 ] && [ $((a > b ? a - b : b - a)) -le 250 ]
}

block 1
block 2
check "blocked from b1 and b2: held on all three" until_ok 10 all_applied held
sample_start hold
check "... in its slots on all three" bash -c "[ $(slots1 1) -gt 0 ] && [ $(slots1 2) -gt 0 ] && [ $(slots1 3) -gt 0 ]"
check "... the three digests identical and the first ones (nothing rebuilt)" digests_are "$D0"
check "b3 restarted mid-hold answers" restart 3
check "... held again on all three" until_ok 5 all_applied held
check "... b3's hold ends when b1's does (the fleet's time, not its restart's)" left_near
check "after settle_ms: down on all three" until_ok 10 all_applied down
other_digest() { one_digest && [ "$(digests | head -1)" != "$d0" ]; }
check "... one new digest on all three" until_ok 5 other_digest
t=$(now_ms)
until_ok 5 samples_after hold "$t" 50
sample_stop hold
check "every sample from the hold to after settle_ms: one digest (but <= $GAP ms in a change)" judge hold
check "... the hold's end sampled (2 digests)" seen 2

# steps3 B: backend B's "state:step" on the three balancers.
steps3() {
	local n
	for n in 1 2 3; do
		c $n -j backend list $V | jq -r --arg b "$1" '.backends[] | select(.backend == $b) | "\(.state):\(.ramp_step // 0)"'
	done | tr '\n' ' '
}
all_at() { [ "$(steps3 $BE1)" = "$1 $1 $1 " ]; }
unblock 1
unblock 2
check "back: ramping at step 1 on all three" until_ok 10 all_at ramping:1
sample_start ramp
check "... step 2 on all three" until_ok 10 all_at ramping:2
check "... step 3 on all three" until_ok 10 all_at ramping:3
t_restart=$(now_ms)
check "b3 restarted mid-ramp answers" restart 3
same_step() {
	local s
	s=$(steps3 $BE1)
	set -- $s
	[ "$1" = "$2" ] && [ "$2" = "$3" ] && [ "$1" != up:0 ] || { diag "steps: $s"; return 1; }
}
check "... ramping at the others' step" until_ok 3 same_step
check "at full weight: the first digest again on all three" until_ok 15 digests_are "$D0"
t=$(now_ms)
until_ok 5 samples_after ramp "$t" 50
sample_stop ramp
check "every sample of the ramp before the restart: one digest (but <= $GAP ms in a change)" judge ramp 0 "$t_restart"
check "... steps 1, 2 and 3 sampled" seen 3
check "every sample from b3's restart to full weight: one digest (but <= $GAP ms in a change)" judge ramp "$t_restart"
check "... the restarted b3 compared at step 3 and at full weight" seen 2

# ramp_samples B: sample the three (state, step, digest) of backend B until
# all are up at full weight; sets same, differ and steps. A backend the
# desired state adds ramps from when each balancer applied its revision: the
# three are compared where they are at one step.
ramp_samples() {
	local s d end=$((SECONDS + 30))
	same=0 differ=0 steps=
	while [ $SECONDS -le $end ]; do
		# The states before and after the digests: a sample counts only if
		# no balancer stepped while it was read.
		s=$(steps3 "$1")
		d=$(digests | sort -u | wc -l)
		[ "$(steps3 "$1")" = "$s" ] || continue
		set -- "$1" $s
		if [ "$2" = "$3" ] && [ "$3" = "$4" ]; then
			if [ "$d" = 1 ]; then same=$((same + 1)); else differ=$((differ + 1)); fi
			case " $steps " in *" $2 "*) ;; *) steps="$steps $2" ;; esac
			[ "$2" = up:0 ] && [ "$d" = 1 ] && break
		fi
		sleep 0.1
	done
	diag "$1: samples with the three at one step: $same with one digest, $differ without; steps seen:$steps"
}
ramped() {
	[ "$differ" = 0 ] && [ "$(grep -o 'ramping:[123]' <<<"$steps" | wc -l)" -ge 2 ] &&
		grep -q 'up:0' <<<"$steps"
}

# A backend the desired state adds (etcd) ramps on every balancer alike.
BE3=198.51.100.23
etx ip addr add $BE3/32 dev lo
ectl put "${PFX}vips/$V" "[{\"cmd\":\"vip.add\",\"vip\":\"$V\"},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE1\",\"weight\":1},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE2\",\"weight\":1},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE3\",\"weight\":1}]" >/dev/null ||
	nok "etcd: the desired state with a third backend"
ramp_samples $BE3
check "$BE3 added through etcd: the same steps on all three, one digest at each, then up" ramped
check "maglevd logged no error" bash -c "! grep -h 'error\|ERR' $TDIR/b1.log $TDIR/b2.log $TDIR/b3.log | grep -q ."
stop_all
t_done
