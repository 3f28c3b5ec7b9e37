#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# health_scope fleet (issue 18, test 3): etcd and three maglevd in network
# namespaces, real TCP checks to two backends. One balancer's checks to one
# backend blocked with nft: with health_scope fleet the three tables stay
# identical (one digest) and the backend stays in; blocked from two of the
# three: removed on all, one digest again; unblocked: back on all. With
# health_scope local the same block gives balancer 1 another table, which the
# digests and fleet status report. health_scope fleet without fleet_etcd is
# refused, and a reload does not switch the scope. A new backend at a dead
# address stays down on all three (never up, no slot).
#
#   etcd ns: lo 192.0.2.254 (etcd) and the backends 198.51.100.21, .22 (port
#   8080), one veth per balancer ns bN: 192.0.2.(240+4N-3)/30 <-> (240+4N-2)
. "$(dirname "$0")/fleet_health_lib.sh"

# --- health_scope checked ----------------------------------------------------------
cat >"$TDIR/bad.conf" <<-EOC
	pin_dir $PIN-bad
	control_socket $TDIR/bad.sock
	health_scope fleet
EOC
out=$(timeout 5 "$MAGLEVD" -c "$TDIR/bad.conf" 2>&1)
rc=$?
check "health_scope fleet without fleet_etcd: refused at start, saying why" \
	bash -c '[ $1 != 0 ] && [ $1 != 124 ] && grep -q "health_scope fleet needs fleet_etcd" <<<"$2"' _ $rc "$out"
sed -i 's/^health_scope fleet/health_scope everyone/' "$TDIR/bad.conf"
out=$(timeout 5 "$MAGLEVD" -c "$TDIR/bad.conf" 2>&1)
rc=$?
check "health_scope everyone: refused, naming the key and the values" \
	bash -c '[ $1 != 0 ] && [ $1 != 124 ] && grep -q "health_scope.*want local or fleet" <<<"$2"' _ $rc "$out"

# --- health_scope fleet --------------------------------------------------------------
for n in 1 2 3; do conf $n fleet; done
start_all || { nok "three maglevd start with health_scope fleet"; t_done; }
ok "three maglevd start with health_scope fleet"
check "all three: $BE1 seen up by b1, b2 and b3, fleet verdict up" until_ok 15 all_views "up up up up"
check "... one tables digest" until_ok 5 one_digest
check "status -j: health_scope fleet, both backends' views from 3 voters" \
	bash -c "$MAGLEVCTL -s $TDIR/b2.sock -j status | jq -e '.fleet.health_scope == \"fleet\" and (.fleet.health | length == 2) and ([.fleet.health[].voters] == [3, 3])' >/dev/null"

# A new backend at a dead address, through etcd: down on every balancer until
# a majority has seen it pass, which never comes; a voter that has not
# published its view of it yet counts as seeing it down, or the first view
# published would bring it in on all three.
BE3=198.51.100.23
VAL2="[{\"cmd\":\"vip.add\",\"vip\":\"$V\"},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE1\",\"weight\":1},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE2\",\"weight\":1}"
be3() { for n in 1 2 3; do c $n -j backend list $V | jq -r --arg b $BE3 '[.backends[] | select(.backend == $b) | .state] | .[0] // "none"'; done | tr '\n' ' '; }
be3_gone() { [ "$(be3)" = "none none none " ]; }
ectl put "${PFX}vips/$V" "$VAL2,{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE3\",\"weight\":1}]" >/dev/null ||
	nok "add $BE3 through etcd"
# From the put on: every state each balancer shows, and any slot it gets.
seen= on_all=0
end=$((SECONDS + 4))
while [ $SECONDS -le $end ]; do
	st=$(be3)
	case "$st" in *none*) ;; *) on_all=1 ;; esac
	case "$st" in *up*) seen="$seen [$st]" ;; esac
	for n in 1 2 3; do [ "$(c $n -j table $V | jq --arg b $BE3 '[.backends[] | select(.backend == $b) | .slots] | add // 0')" = 0 ] || seen="$seen [b$n slots]"; done
	sleep 0.1
done
diag "$BE3 at the end: $(be3)"
check "a new backend at a dead address, through etcd: on all three, never up there, no slot, over 4 s (${seen:-never up})" \
	bash -c "[ $on_all = 1 ] && [ -z '$seen' ]"
ectl put "${PFX}vips/$V" "$VAL2]" >/dev/null || nok "remove $BE3 through etcd"
check "... removed again through etcd: gone from all three" until_ok 10 be3_gone
check "... one tables digest again" until_ok 10 one_digest
d0=$(c 1 -j status | jq -r .vips_digest)
D0="$d0 $d0 $d0 "

block 1
check "b1's checks to $BE1 blocked: b1 sees it down, b2 and b3 up, fleet up (views on all three)" \
	until_ok 10 all_views "down up up up"
check "... b1's health shows its local verdict down" \
	[ "$(c 1 -j health $V | jq -r --arg b $BE1 '.backends[] | select(.backend == $b) | .local_verdict')" = down ]
sleep 1 # time for a wrong verdict to be applied
check "... $BE1 stays in on all three (state up)" all_applied up
check "... with slots in balancer 1's table" [ "$(slots1 1)" -gt 0 ]
check "... the three digests are identical, and what they were" digests_are "$D0"
fs_line() {
	c 1 fleet status >"$TDIR/fs.txt"
	grep -q "^$V $BE1 b1=down b2=up b3=up: fleet up (1 of 3 down), applied up$" "$TDIR/fs.txt" ||
		{ sed 's/^/# /' "$TDIR/fs.txt" && false; }
}
check "... fleet status text: b1 down, b2 up, b3 up, fleet up" fs_line

block 2
check "blocked from b1 and b2 too: removed on all three (2 of 3 see it down)" until_ok 10 all_applied down
check "... every view says down down up, fleet down" until_ok 5 all_views "down down up down"
other_digest() { one_digest && [ "$(digests | head -1)" != "$d0" ]; }
check "... one tables digest, not the one with $BE1 in" until_ok 5 other_digest
same_rev() { [ "$(for n in 1 2 3; do c $n -j fleet status | jq .health_revision; done | sort -u | wc -l)" = 1 ]; }
check "... all three computed it from the same etcd revision of the status keys" until_ok 5 same_rev
check "... b3 (whose checks pass) has it in no slot" [ "$(slots1 3)" = 0 ]
fs_agree() { c 3 fleet status --settle 0 >/dev/null; }
check "... fleet status agrees (exit 0)" until_ok 5 fs_agree

unblock 1
check "b1 unblocked: 2 of 3 see it up, back on all three" until_ok 10 all_applied up
check "... one digest, the first one" until_ok 5 digests_are "$D0"

# etcd unreachable: the verdicts freeze at the last applied.
block 1
until_ok 10 all_applied down
stop_etcd
unblock 1
unblock 2
local_up() { [ "$(c "$1" -j health $V | jq -r --arg b $BE1 '.backends[] | select(.backend == $b) | .local_verdict')" = up ]; }
both_up() { local_up 1 && local_up 2; }
check "etcd stopped, b1 and b2 unblocked: their own checks see $BE1 up again" until_ok 10 both_up
sleep 1 # time for a wrong verdict to be applied
frozen() { all_applied down && one_digest; }
check "... but the verdicts are frozen: still out on all three, one digest" frozen
start_etcd fh-test || nok "etcd restarts"
check "etcd back: the new votes reach the others, $BE1 back on all three" until_ok 20 all_applied up
check "... one digest, the first one" until_ok 5 digests_are "$D0"

# A dead balancer's vote goes with its lease: two voters left.
block 1
until_ok 10 all_views "down up up up"
{ kill -9 "${PIDS[3]}" && wait "${PIDS[3]}"; } 2>/dev/null
PIDS[3]=
two_left() { [ "$(c 1 -j fleet status | jq -r --arg b $BE1 '.health[] | select(.backend == $b) | "\(.voters) \(.fleet)"')" = "2 up" ]; }
check "b3 killed: its lease expires, 2 voters left; 1 of 2 down is no majority: $BE1 stays in" \
	until_ok 10 two_left
check "... on b1 and b2, with one digest" \
	bash -c "[ \"\$($MAGLEVCTL -s $TDIR/b1.sock -j status | jq -r .vips_digest)\" = $d0 ] && [ \"\$($MAGLEVCTL -s $TDIR/b2.sock -j status | jq -r .vips_digest)\" = $d0 ]"
block 2
check "... blocked from b2 too (2 of 2): removed on both" \
	until_ok 10 bash -c "[ \"\$($MAGLEVCTL -s $TDIR/b1.sock -j backend list $V | jq -r '.backends[] | select(.backend == \"$BE1\") | .state') \$($MAGLEVCTL -s $TDIR/b2.sock -j backend list $V | jq -r '.backends[] | select(.backend == \"$BE1\") | .state')\" = 'down down' ]"
unblock 1
unblock 2

# A reload does not switch the scope (bound at start, as the fleet_* keys).
conf 2 local
c 2 reload >/dev/null 2>&1
check "reload with health_scope local: fleet kept until a restart, and said so" \
	bash -c "[ \"\$($MAGLEVCTL -s $TDIR/b2.sock -j status | jq -r .fleet.health_scope)\" = fleet ] && grep -q 'reload: health_scope changed in .* but takes effect on restart only' $TDIR/b2.log"

# --- health_scope local: the divergence the digests show -----------------------------
stop_all
for n in 1 2 3; do conf $n local; done
start_all || nok "three maglevd restart with health_scope local"
all_up() { all_applied up && one_digest; }
check "health_scope local: all three hold $BE1 up, one digest" until_ok 10 all_up
block 1
b1_down() { [ "$(applied 1)" = down ]; }
check "b1's checks to $BE1 blocked: b1 alone takes it out" until_ok 10 b1_down
check "... b2 and b3 keep it" [ "$(applied 2) $(applied 3)" = "up up" ]
d=$(digests | tr '\n' ' ')
diverged() { [ "$d" != "$D0" ] && [ "${d#* }" = "$d0 $d0 " ]; }
check "... the digests report it: b1's differs, b2's and b3's are the first" diverged
disagree() { ! c 2 fleet status --settle 0 >/dev/null; }
check "... fleet status: DISAGREE, exit 1" until_ok 10 disagree
unblock 1

check "maglevd logged no error" bash -c "! grep -h 'error\|ERR' $TDIR/b1.log $TDIR/b2.log $TDIR/b3.log | grep -q ."
t_done
