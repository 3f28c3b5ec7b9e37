#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Flap damping in a fleet (health_scope fleet) across a restart (issue 34):
# etcd and three maglevd, BE1's checks blocked and unblocked from two of the
# three balancers until the fleet's verdict has flapped it into suppression
# on all three. Balancer 3 restarts: its penalty comes back from its state
# file, and the fleet's up verdict, which it reads from etcd again, does not
# take BE1 back into its table while the others keep it out (one digest).
# The set-up: fleet_health_lib.sh.
PFX=/maglev-damp/
ETCD_NAME=fd-test
. "$(dirname "$0")/fleet_health_lib.sh"

for n in 1 2 3; do conf $n fleet "damping_penalty 1000
damping_suppress 2000
damping_reuse 750
damping_half_life_ms 60000"; done
start_all || { nok "three maglevd start with health_scope fleet and damping"; t_done; }
ok "three maglevd start with health_scope fleet and damping"
check "all three: $BE1 up by the fleet's verdict" until_ok 15 all_views "up up up up"
# pen N: BE1's penalty on balancer N.
pen() { c "$1" -j backend list $V | jq -r --arg b $BE1 '.backends[] | select(.backend == $b) | .penalty'; }
block 1
block 2
check "flap 1: down on all three" until_ok 10 all_applied down
unblock 1
unblock 2
check "flap 2: up on all three" until_ok 10 all_applied up
block 1
block 2
check "flap 3: down on all three" until_ok 10 all_applied down
unblock 1
unblock 2
check "its checks pass again: suppressed on all three" until_ok 10 all_applied suppressed
check "... one digest" until_ok 5 one_digest
d0=$(c 1 -j status | jq -r .vips_digest)
p1=$(pen 1) p3=$(pen 3)
diag "penalties: b1 $p1, b2 $(pen 2), b3 $p3"
check "b3 restarted while suppressed answers" restart 3
check "... b3 reads the fleet's up verdict again" until_ok 10 all_views "up up up up"
report
q1=$(pen 1) q3=$(pen 3)
check "... b3 still has BE1 suppressed ($(applied 3)), penalty $p3 -> $q3 (b1: $p1 -> $q1)" \
	bash -c "[ '$(applied 3)' = suppressed ] && [ '$q3' -ge 2000 ] && [ '$q3' -le '$p3' ] && [ \$(( $q3 > $q1 ? $q3 - $q1 : $q1 - $q3 )) -le 100 ]"
check "... the three digests are the one before the restart ($d0)" digests_are "$d0 $d0 $d0 "
check "maglevd logged no error" bash -c "! grep -h 'error\|ERR' $TDIR/b1.log $TDIR/b2.log $TDIR/b3.log | grep -q ."
stop_all
t_done
