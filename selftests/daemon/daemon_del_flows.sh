#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# backend del is refused while the backend carries live flows in the
# connection table (exit 1, the backend and its flow count named, nothing
# changed, its flows stay with it); drained, it is deleted without --force
# once its flows have ended; --force deletes a loaded one (its flows are
# re-picked). A restore that drops a loaded backend is held by the same rule.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
# UDP flows end after 2 s of silence: a drained backend's flows end within
# the test; every flow below is sent again well inside that.
write_conf "udp_idle_timeout_ms 2000"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

V=192.0.2.20:5000/udp
ctl vip add $V && for b in 198.51.100.1 198.51.100.2 198.51.100.3; do ctl backend add $V $b; done
# backend_of JSON SPORT: the one backend a flow's packets went to ("" if several).
backend_of() {
	echo "$1" | jq -r --arg p "$2" '.flows[$p] | keys | if length == 1 then .[0] else "" end'
}
# flows VIP BACKEND: its FLOWS in backend list (null before a count).
flows() { ctl -j backend list "$1" | jq -r --arg b "$2" '.backends[] | select(.backend == $b) | .flows'; }
# wait_flows VIP BACKEND TEST SECONDS: until its FLOWS passes `[ FLOWS TEST ]`.
wait_flows() {
	local end=$((SECONDS + $4)) n
	while [ $SECONDS -le $end ]; do
		n=$(flows "$1" "$2")
		# shellcheck disable=SC2086 # TEST is words
		[ -n "$n" ] && [ "$n" != null ] && [ "$n" $3 ] && return 0
		sleep 0.1
	done
	return 1
}
# keep SPORTS: send one more packet of each flow (keeps them live).
keep() { pktio --dst 192.0.2.20 --dport 5000 --sports "$1" --count 1; }

SP=$(seq -s, 40000 40029)
out=$(keep "$SP")
B=$(backend_of "$out" 40000)
n_b=$(echo "$out" | jq --arg b "$B" '[.flows[] | select(has($b))] | length')
diag "30 flows; flow 40000 on $B, which carries $n_b of them"
# The census counts every 2 s: wait for it to see them (the flows are resent
# meanwhile so none idles out).
for i in $(seq 10); do
	wait_flows $V "$B" "-ge $n_b" 1 && break
	keep "$SP" >/dev/null
done
check "backend list counts its flows (FLOWS $n_b)" [ "$(flows $V "$B")" -ge "$n_b" ]

keep "$SP" >/dev/null
before=$(snapshot)
msg=$(ctl backend del $V "$B" 2>&1)
rc=$?
diag "backend del: rc $rc: $msg"
check "backend del of a backend with live flows: refused, exit 1" [ $rc -eq 1 ]
check "the refusal names the backend and its flow count" \
	bash -c "echo '$msg' | grep -q '$B' && echo '$msg' | grep -Eq '[0-9]+ live flows'"
check "nothing changed (save, tables, backend map, state file)" [ "$(snapshot)" = "$before" ]
out2=$(keep "$SP")
check "its flows still go to it (all $n_b)" \
	[ "$(echo "$out2" | jq --arg b "$B" '[.flows[] | select(has($b))] | length')" -eq "$n_b" ]

# A restore without it is held by the same rule.
ctl save | grep -v " $B --weight" >"$TDIR/without.save"
msg=$(ctl restore "$TDIR/without.save" 2>&1)
rc=$?
diag "restore without it: rc $rc: $msg"
check "a restore that drops it is refused too (exit 1, names it)" \
	bash -c "[ $rc -eq 1 ] && echo '$msg' | grep -q '$B'"
check "restore --force --dry-run shows it would go" \
	bash -c "$MAGLEVCTL restore --force --dry-run '$TDIR/without.save' | grep -q '^-backend add $V $B'"

# Drain, let the flows end, then delete without --force.
check "backend set --drain" ctl backend set $V "$B" --drain
OTHER=$(seq -s, 41000 41019)
others=$(keep "$OTHER")
check "drained: none of 20 new flows goes to it" \
	[ "$(echo "$others" | jq --arg b "$B" '[.flows[] | select(has($b))] | length')" -eq 0 ]
check "its flows end (FLOWS 0 within 15 s of silence)" wait_flows $V "$B" "-eq 0" 15
check "then backend del without --force succeeds" ctl backend del $V "$B"
check "it is gone" [ -z "$(ctl -j backend list $V | jq -r --arg b "$B" '.backends[] | select(.backend == $b) | .backend')" ]

# --force deletes a loaded backend: its flows are re-picked to the others.
out=$(keep "$SP")
C=$(echo "$out" | jq -r '[.flows[] | keys[]] | unique | .[0]')
n_c=$(echo "$out" | jq --arg b "$C" '[.flows[] | select(has($b))] | length')
for i in $(seq 10); do
	wait_flows $V "$C" "-ge $n_c" 1 && break
	keep "$SP" >/dev/null
done
check "backend del without --force refused for $C ($n_c flows)" \
	bash -c "! $MAGLEVCTL backend del $V $C 2>/dev/null"
check "backend del --force deletes it" ctl backend del $V "$C" --force
out3=$(keep "$SP")
check "its flows went to the backend left (none to it)" \
	[ "$(echo "$out3" | jq --arg b "$C" '[.flows[] | select(has($b))] | length')" -eq 0 ]
stop_daemon
t_done
