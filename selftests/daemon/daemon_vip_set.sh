#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# vip set changes a VIP in place: encapsulation and health-check overrides
# (placement is daemon_placement.sh's) without deleting its backends. The
# backends keep their indices and generations, the table stays the same,
# established flows keep their backend and leave in the new encapsulation;
# the change survives a restart. An invalid result is refused and changes
# nothing; so is an empty vip set.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
V=192.0.2.10:5000/udp
SPORTS=$(seq -s, 42000 42011)
ctl vip add $V --check none && for b in 1 2 3; do ctl backend add $V 198.51.100.$b; done
# owners JSON: sport=backend for every flow, one line each, sorted.
owners() { echo "$1" | jq -r '.flows | to_entries[] | "\(.key)=\(.value | keys | join(","))"' | sort; }
# identity: what must not change: backends with index and generation, table.
identity() {
	ctl -j backend list $V | jq -S '[.backends[] | {backend, index, gen}]'
	ctl -j table $V | jq -S '.digest, [.backends[] | {backend, slots}]'
}

out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$SPORTS" --count 3)
check "set-up: 36 packets forwarded in IPIP ($(echo "$out" | jq -c .encaps))" \
	[ "$(echo "$out" | jq '.seen == 36 and .encaps == {"ipip": 36}')" = true ]
before_owners=$(owners "$out")
before_id=$(identity)

check "vip set --encap gue --gue-port 7000 is accepted" ctl vip set $V --encap gue --gue-port 7000
check "vip show says gue, port 7000" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.encap == \"gue\" and .vip.gue_port == 7000' >/dev/null"
check "the backends (index, generation) and the table are the same" [ "$(identity)" = "$before_id" ]
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$SPORTS" --count 3)
check "every established flow's packets now leave in GUE to port 7000 ($(echo "$out" | jq -c .encaps))" \
	[ "$(echo "$out" | jq '.seen == 36 and .encaps == {"gue:7000": 36}')" = true ]
check "... each to the backend it had" [ "$(owners "$out")" = "$before_owners" ]

check "vip set --gue-port 7001 keeps gue" ctl vip set $V --gue-port 7001
check "vip set --check tcp --check-port 8080 --check-interval 500 --check-timeout 200 is accepted" \
	ctl vip set $V --check tcp --check-port 8080 --check-interval 500 --check-timeout 200
check "vip show has the check overrides" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.check.type == \"tcp\" and .vip.check.port == 8080 and .vip.check.interval_ms == 500 and .vip.check.timeout_ms == 200' >/dev/null"
check "health follows: the backends are checked with tcp on 8080" \
	bash -c "$MAGLEVCTL -j health $V | jqt '[.backends[] | .check == \"tcp\" and .port == 8080] | all' >/dev/null"
check "vip set --check-interval default: the override is dropped, the VIP follows health_interval_ms (2000) again" \
	bash -c "$MAGLEVCTL vip set $V --check-interval default &&
		$MAGLEVCTL -j vip show $V | jqt '.vip.check.interval_ms == 2000 and .vip.check.type == \"tcp\" and .vip.check.timeout_ms == 200' >/dev/null"
out=$("$MAGLEVCTL" vip set $V --check-interval 500 --check-interval default 2>&1)
check "a value and default for one option at once: refused ($out)" [ $? -ne 0 ]
out=$(python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(json.dumps({"cmd": "vip.set", "vip": sys.argv[2], "check_default": ["check_colour"]}).encode() + b"\n")
print(s.makefile().readline().strip())' "$SOCK" "$V")
check "the request's check_default naming no check option is refused, naming it ($out)" \
	bash -c "jq -e '.ok == false and (.error | contains(\"check_colour\"))' <<<'$out' >/dev/null"
ctl vip set $V --check-interval 500

# Nothing answers on 8080: once every backend is down the state is still, and
# a snapshot can only change by a refused vip set that changed something.
for b in 1 2 3; do wait_state $V 198.51.100.$b down 10; done

# refused ARGS...: exit 1, and nothing changed.
refused() {
	local name=$1 before out rc
	shift
	before=$(snapshot)
	out=$("$MAGLEVCTL" vip set $V "$@" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [ "$(snapshot)" = "$before" ]; then
		ok "refused, nothing changed: $name ($out)"
	else
		nok "refused, nothing changed: $name (rc $rc: $out)"
	fi
}
refused "--check-timeout above the interval" --check-timeout 900
refused "--gue-port with --encap ipip" --encap ipip --gue-port 6080
refused "an unknown encap" --encap vxlan
refused "an unknown check" --check smtp
out=$("$MAGLEVCTL" vip set $V 2>&1)
check "vip set with nothing to set is a usage error (exit 2: $out)" [ $? -eq 2 ]

check "vip set --encap ipip --check none is accepted" ctl vip set $V --encap ipip --check none
# --check none: up within a tick (health/admission.c), not in the set's commit.
for b in 1 2 3; do wait_state $V 198.51.100.$b up 5; done
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$SPORTS" --count 2)
check "back in IPIP, the same backends ($(echo "$out" | jq -c .encaps))" \
	[ "$(echo "$out" | jq '.seen == 24 and .encaps == {"ipip": 24}')" = true -a "$(owners "$out")" = "$before_owners" ]
ctl vip set $V --encap gue
stop_daemon
start_daemon || nok "maglevd restarts"
check "a restart keeps it: gue on the default port 6080, check none" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.encap == \"gue\" and .vip.gue_port == 6080 and .vip.check.type == \"none\"' >/dev/null"
check "... and the same backends and table" [ "$(identity)" = "$before_id" ]
stop_daemon
t_done
