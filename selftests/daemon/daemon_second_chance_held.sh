#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Second chance's window runs from when the new table is live, not from its
# build: a swap held (MAGLEVD_TEST_SWAP_HOLD) longer than second_chance_ms
# across a rebuild that moves slots goes live with its previous owners, and
# they stay for the window after that. They used to be dropped by the next
# tick, the window having ended by the build's clock (the soak, SOAK_SEED=2:
# lb2's swaps held 33.5 s, 8,071 slots moved, 0 previous owners 1.2 s after).
. "$(dirname "$0")/lib.sh"

SC=3000
setup_net || skip_all "cannot create namespaces/veth"
HOLD=$TDIR/swap-hold
write_conf "health_via_encap no" "second_chance_ms $SC"
DAEMON_PREFIX="env MAGLEVD_TEST_SWAP_HOLD=$HOLD"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

V=192.0.2.50:80/tcp
ctl vip add $V --encap gue --second-chance >/dev/null || nok "vip add"
for b in 1 2 3 4; do ctl backend add $V 198.51.100.$b >/dev/null || nok "backend add $b"; done
tab() { ctl -j table $V | jq -r "$1"; }
until_window_over() { [ "$(tab .prev_slots)" = 0 ]; }
check "the first tables' window ends ($SC ms)" poll_until 5 until_window_over

# Held: backend 4 deleted (its slots move), the swap waits longer than the window.
touch "$HOLD"
"$MAGLEVCTL" backend del $V 198.51.100.4 >"$TDIR/rm.out" 2>&1 &
RM=$!
EXTRA_PIDS=$RM
t0=$(date +%s%N)
# The hold must outlast the window: sleeping past it is what is tested.
sleep $((SC / 1000 + 1))
check "the removal waits on the held swap" kill -0 $RM
rm -f "$HOLD"
check "the removal is answered once the swap is live" wait $RM
held_ms=$((($(date +%s%N) - t0) / 1000000))
diag "swap held $held_ms ms, second_chance_ms $SC"
p=$(tab .prev_slots)
w=$(tab .prev_window_ms)
check "live with its previous owners: $p slots keep one, for $w ms more" \
	bash -c "[ '$p' -gt 0 ] && [ '$w' -gt $((SC / 2)) ] && [ '$w' -le $SC ]"
# They stay for the window after the release, not one tick: every reading
# in the first half of it (as many as a slow machine makes).
kept() { [ "$(tab .prev_slots)" -gt 0 ]; }
n=0 bad=0
end=$(($(date +%s%N) / 1000000 + SC / 2))
while [ $(($(date +%s%N) / 1000000)) -lt $end ]; do
	kept || bad=$((bad + 1))
	n=$((n + 1))
	sleep 0.1
done
check "still kept over the next $((SC / 2)) ms ($((n - bad)) of $n readings)" bash -c "[ $bad = 0 ] && [ $n -gt 0 ]"
check "then dropped, when the window from the swap ends" poll_until 5 until_window_over
stop_daemon
t_done
