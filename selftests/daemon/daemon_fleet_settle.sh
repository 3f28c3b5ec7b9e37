#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# settle_ms and slow_start_ms in a fleet (health_scope fleet): etcd and three
# maglevd, real TCP checks to two backends, BE1's checks blocked from two of
# the three balancers. Every balancer holds BE1 in its slots with the same
# table (the digests stay the first one), reassigns it after settle_ms (one
# new digest on all three), and when it returns every balancer ramps it in
# the same 4 steps: whenever the three are at the same step their tables are
# byte-identical (one digest), because a table depends only on the seed and
# the (backend, weight) pairs. The steps' timing is each balancer's own (from
# when it applied the fleet's verdict, a watch apart): see
# docs/maglev-table.md, "Settle, slow start and damping".
# The set-up: fleet_health_lib.sh.
PFX=/maglev-settle/
ETCD_NAME=fs-test
. "$(dirname "$0")/fleet_health_lib.sh"

for n in 1 2 3; do conf $n fleet "settle_ms 3000
slow_start_ms 8000"; done
start_all || { nok "three maglevd start with health_scope fleet, settle_ms and slow_start_ms"; t_done; }
ok "three maglevd start with health_scope fleet, settle_ms and slow_start_ms"
check "all three: $BE1 up by the fleet's verdict" until_ok 15 all_views "up up up up"
check "... one tables digest" until_ok 5 one_digest
d0=$(c 1 -j status | jq -r .vips_digest)
D0="$d0 $d0 $d0 "

block 1
block 2
check "blocked from b1 and b2: held on all three" until_ok 10 all_applied held
check "... in its slots on all three" bash -c "[ $(slots1 1) -gt 0 ] && [ $(slots1 2) -gt 0 ] && [ $(slots1 3) -gt 0 ]"
check "... the three digests identical and the first ones (nothing rebuilt)" digests_are "$D0"
check "after settle_ms: down on all three" until_ok 10 all_applied down
other_digest() { one_digest && [ "$(digests | head -1)" != "$d0" ]; }
check "... one new digest on all three" until_ok 5 other_digest

unblock 1
unblock 2
# steps3 B: backend B's "state:step" on the three balancers.
steps3() {
	local n
	for n in 1 2 3; do
		c $n -j backend list $V | jq -r --arg b "$1" '.backends[] | select(.backend == $b) | "\(.state):\(.ramp_step // 0)"'
	done | tr '\n' ' '
}
# ramp_samples B: sample the three (state, step, digest) of backend B until
# all are up at full weight; sets same, differ and steps.
ramp_samples() {
	local s d end=$((SECONDS + 20))
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
ramp_samples $BE1
check "back: every sample with the three at the same step had one digest, two steps or more, then up" ramped
check "... at full weight: the first digest again on all three" until_ok 5 digests_are "$D0"

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
