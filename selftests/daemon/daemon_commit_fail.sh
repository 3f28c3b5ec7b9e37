#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A table swap the datapath refuses (injected: MAGLEVD_TEST_SWAP_FAIL fails
# the next swap once per file made) rolls its commit back, whoever made it:
# a client's change is answered with the error; a health verdict, which no
# client waits for, is counted by source in maglev_commit_failures_total
# and shown by `maglevctl status`, the registry and the datapath agree
# afterwards (the backend still up in both, the live table's digest the
# registry's), and the verdict is made again at the next check, not lost.
# The audit log says what became of an accepted change: a "failed" line
# follows its "accepted" one.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
# The backends are local addresses of the balancer (checks go to them).
lbx ip route add local 198.51.100.0/24 dev lo
write_conf "health_via_encap no"
FAIL=$TDIR/swap-fail
HOLD=$TDIR/swap-hold
DAEMON_PREFIX="env MAGLEVD_TEST_SWAP_FAIL=$FAIL MAGLEVD_TEST_SWAP_HOLD=$HOLD"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

EXTRA_PIDS=
metric() { # metric SOURCE: maglev_commit_failures_total{source=SOURCE}
	lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" |
		sed -n "s/^maglev_commit_failures_total{source=\"$1\"} //p"
}
# agree VIP: the live table's digest (read from the map) is the registry's.
agree() { [ "$(ctl -j table "$1" | jq -r .digest)" = "$(ctl -j vip show "$1" | jq -r .vip.digest)" ]; }

# What a rolled-back change must leave alone (table_gen aside: the rollback
# writes the old tables again).
held() {
	ctl -j save | jq -S .vips
	ctl -j table "$1" | jq -S '[.backends[] | {backend, slots}], .digest'
	ctl -j backend list "$1" | jq -S '[.backends[] | {backend, dp_flags, index, gen}]'
	jq -S . "$STATE"
}

# --- a client's change ----------------------------------------------------------------
C=192.0.2.60:5000/udp
ctl vip add $C --check none && ctl backend add $C 198.51.100.61
before=$(held $C)
touch "$FAIL"
out=$(ctl backend add $C 198.51.100.62 2>&1)
rc=$?
check "a client's change whose swap fails: exit 1, the error named ($out)" \
	bash -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'table swap of VIP'"
check "... and nothing changed (registry, live table, backend map, state file)" \
	[ "$(held $C)" = "$before" ]
check "metrics: the failure counted under source ctl" [ "$(metric ctl)" = 1 ]
check "the swap hook fired once (its file gone)" [ ! -e "$FAIL" ]
n_acc=$(grep -c 'accepted backend.add from uid 0 pid [0-9]*: .*backend=198.51.100.62' "$DLOG")
n_fail=$(grep -c 'failed backend.add from uid 0 pid [0-9]*: "datapath: table swap of VIP' "$DLOG")
check "audit: as many failed lines as accepted ones for it ($n_acc, $n_fail)" [ "$n_acc" = "$n_fail" ]

# Audit, deterministically deferred: the swap held (its outcome unknown) when
# the change is accepted, then refused.
touch "$HOLD" "$FAIL"
ctl backend add $C 198.51.100.63 >"$TDIR/out63" 2>&1 &
CPID=$!
for i in $(seq 100); do grep -q 'accepted backend.add .*backend=198.51.100.63' "$DLOG" && break; sleep 0.05; done
check "audit: the held change logged as accepted, no outcome yet" \
	bash -c "grep -q 'accepted backend.add .*backend=198.51.100.63' $DLOG && ! grep -q 'failed backend.add' <(sed -n '/backend=198.51.100.63/,\$p' $DLOG)"
rm -f "$HOLD"
wait $CPID
rc=$?
check "the held change fails once released: exit 1 ($(cat "$TDIR/out63"))" [ $rc -eq 1 ]
acc=$(grep -n 'accepted backend.add .*backend=198.51.100.63' "$DLOG" | cut -d: -f1)
pid=$(grep 'accepted backend.add .*backend=198.51.100.63' "$DLOG" | sed -n 's/.* pid \([0-9]*\):.*/\1/p')
fl=$(grep -n "failed backend.add from uid 0 pid $pid: \"datapath: table swap of VIP" "$DLOG" | cut -d: -f1)
check "audit: then a failed line for it, same client, the error named (lines $acc, $fl)" \
	bash -c "[ -n '$acc' ] && [ -n '$fl' ] && [ '$fl' -gt '$acc' ]"
check "the held change is not there: one backend" [ "$(ctl -j backend list $C | jq '.backends | length')" = 1 ]

# --- a health verdict --------------------------------------------------------------------
V=192.0.2.61:8080/tcp
listen_tcp "$NS_LB" 198.51.100.71 8080 || nok "listener on 198.51.100.71:8080"
listen_tcp "$NS_LB" 198.51.100.72 8080 || nok "listener on 198.51.100.72:8080"
L72=$LPID
# fall 1: a verdict at the first failed check; a 3 s interval: time enough
# to act between two checks, even on a loaded machine.
ctl vip add $V --check tcp --check-interval 3000 --check-timeout 500 --rise 1 --fall 1
ctl backend add $V 198.51.100.71
ctl backend add $V 198.51.100.72
# New backends are up at their first passing check: both, within 5 s.
wait_state $V 198.51.100.71 up 5 && wait_state $V 198.51.100.72 up 5
check "both backends pass their checks and hold slots" \
	bash -c "[ $(slots $V 198.51.100.71) -gt 0 ] && [ $(slots $V 198.51.100.72) -gt 0 ]"
touch "$FAIL"
kill $L72
# (V is VIP 1: until its refused swap is logged, the N-th time)
refused() { for i in $(seq 200); do [ "$(grep -c 'error: datapath: .*table swap of VIP 1:' "$DLOG")" -ge "$1" ] && break; sleep 0.05; done; }
refused 1
# Back before its next check: the rolled-back state holds still to be looked at.
listen_tcp "$NS_LB" 198.51.100.72 8080 || nok "listener on 198.51.100.72:8080 again"
L72=$LPID
check "metrics: the down verdict's failed commit counted under source health" \
	[ "$(metric health)" = 1 ]
jq_of() { echo "$2" | jqt "$1" >/dev/null; } # jq_of EXPR JSON: EXPR holds for JSON
st=$(ctl -j status)
diag "status commits: $(echo "$st" | jq -c .commits)"
check "status: 3 commits failed, ctl 2 and health 1, the last one health's, its error named" \
	jq_of '.commits.failed == 3 and .commits.failed_by_source.health == 1 and
	     .commits.failed_by_source.ctl == 2 and .commits.last_failure.source == "health" and
	     (.commits.last_failure.error | test("table swap of VIP"))' "$st"
out=$(ctl status)
check "maglevctl status prints the failures by source and the last one" \
	bash -c "echo '$out' | grep -q '3 failed (ctl 2, health 1)' &&
		 echo '$out' | grep -q 'last commit failure: .*, health: datapath: table swap of VIP'"
check "rolled back: the backend is up, in the live table, UP in the backend map" \
	bash -c "[ '$(field $V 198.51.100.72 .state)' = up ] && [ $(slots $V 198.51.100.72) -gt 0 ] &&
		 [ '$(flags $V 198.51.100.72)' = UP ]"
check "registry and datapath agree: the live table's digest is the registry's" agree $V
check "the daemon logged the failed health commit" \
	grep -q 'datapath: health commit: datapath: table swap of VIP' "$DLOG"
diag "the log's health lines: $(grep 'health: backend' "$DLOG" | tr '\n' '|')"
check "the log does not call the backend down: it names the verdict not applied and why" \
	bash -c "! grep -q 'health: backend 198.51.100.72 of $V is down' '$DLOG' &&
		 grep -q 'health: backend 198.51.100.72 of $V stays up: the change to down (.*) was not applied: .*table swap of VIP' '$DLOG'"

# The verdict is not lost: the next failed check makes it again.
touch "$FAIL"
kill $L72
refused 2
check "a second down verdict refused: 2 health failures" [ "$(metric health)" = 2 ]
check "made again at the next check (3 s later): down" wait_state $V 198.51.100.72 down 10
check "... out of the live table, no flags in the backend map" \
	bash -c "[ $(slots $V 198.51.100.72) -eq 0 ] && [ -z '$(flags $V 198.51.100.72)' ]"
check "registry and datapath agree again" agree $V
check "that commit went through: still 2 health failures" [ "$(metric health)" = 2 ]
check "... and the log calls the backend down once, after it" \
	[ "$(grep -c 'health: backend 198.51.100.72 of '"$V"' is down' "$DLOG")" = 1 ]
stop_daemon
t_done
