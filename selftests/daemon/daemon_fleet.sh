#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fleet mode (issue 18): etcd and three maglevd, each in its own network
# namespace, share one desired state under an etcd prefix. A change written
# once reaches all three as the same revision with identical table digests
# (time to agreement measured over 100 changes); a desired state the daemons
# refuse changes nothing; local changes are refused; with etcd stopped,
# forwarding (real packets through balancer 1's XDP) and the state go on,
# status says disconnected, a balancer restarted without etcd keeps its VIPs
# and revision; with etcd back, all resync.
#
#   etcd ns: lo 192.0.2.254 (client URL), one veth per balancer:
#     b1 (lib.sh's NS_LB, XDP on lb0, client ns behind it) 192.0.2.241/30 <-> .242
#     b2 192.0.2.245/30 <-> .246, b3 192.0.2.249/30 <-> .250
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
setup_net || skip_all "cannot create namespaces/veth"

NS_ET="mget-$ID"
NS_B2="mgb2-$ID"
NS_B3="mgb3-$ID"
EP=http://192.0.2.254:2379
PFX=/maglev-test/
V=192.0.2.10:5000/udp
V2=192.0.2.11:80/tcp
ETCD_PID=
fleet_cleanup() {
	etcd_kill
	kill_own KILL ${B2_PID:-} ${B3_PID:-}
	for ns in "$NS_ET" "$NS_B2" "$NS_B3"; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$PIN-b2" "$PIN-b3"
	cleanup
}
trap fleet_cleanup EXIT

jq1() { jqt "$@" >/dev/null; }
# link NS N: a veth from NS to the etcd namespace, 192.0.2.(240+4N-3)/30.
link() {
	local a=$((240 + 4 * $2 - 3)) b=$((240 + 4 * $2 - 2))
	ip link add "et$2" netns "$NS_ET" type veth peer name "fl$2" netns "$1" || return 1
	etx ip addr add 192.0.2.$b/30 dev "et$2" && etx ip link set "et$2" up &&
		ip -n "$1" addr add 192.0.2.$a/30 dev "fl$2" && ip -n "$1" link set "fl$2" up &&
		ip -n "$1" route add 192.0.2.254/32 via 192.0.2.$b
}
ip netns add "$NS_ET" && ip netns add "$NS_B2" && ip netns add "$NS_B3" || skip_all "cannot create namespaces"
etx ip link set lo up && etx ip addr add 192.0.2.254/32 dev lo
for ns in "$NS_B2" "$NS_B3"; do ip -n "$ns" link set lo up; done
link "$NS_LB" 1 && link "$NS_B2" 2 && link "$NS_B3" 3 || skip_all "cannot link the etcd namespace"

start_etcd fleet-test || { nok "etcd starts"; t_done; }
ok "etcd starts in its namespace ($EP)"

# vipval VIP BACKEND[:WEIGHT]...: a VIP's key value, its control requests.
vipval() {
	local v=$1 b w out
	shift
	out="[{\"cmd\":\"vip.add\",\"vip\":\"$v\"}"
	for b in "$@"; do
		w=1
		case $b in *:*) w=${b#*:} b=${b%%:*} ;; esac
		out="$out,{\"cmd\":\"backend.add\",\"vip\":\"$v\",\"backend\":\"$b\",\"weight\":$w}"
	done
	echo "$out]"
}
# put VIP VALUE: echoes the revision it made.
put() { ectl put -w json "${PFX}vips/$1" "$2" | jq -r .header.revision; }
# The revision of etcd now.
# (The balancers' status keys move it too: the revisions below come from the
# writes themselves.)
erev() { ectl get -w json "${PFX}" | jq -r .header.revision; }
# vrev: the newest revision of a desired-state key.
vrev() { ectl get --prefix "${PFX}vips/" -w json | jq '[.kvs[]?.mod_revision | tonumber] | max'; }

REV0=$(put $V "$(vipval $V 198.51.100.1 198.51.100.2 198.51.100.3)") || nok "seed the desired state"

FLEET="fleet_etcd $EP
fleet_prefix $PFX"
write_conf "fleet_etcd $EP" "fleet_prefix $PFX" "fleet_node b1"
start_daemon || { nok "balancer 1 starts"; t_done; }
# conf_b N: balancer N's config (no interface: it only keeps state and tables).
conf_b() {
	cat >"$TDIR/b$1.conf" <<-EOC
		seed 0123456789abcdef0123456789abcdef
		nexthop_mac 02:00:00:00:00:01
		pin_dir $PIN-b$1
		state_file $TDIR/state-b$1.json
		control_socket $TDIR/b$1.sock
		metrics_listen 127.0.0.1:$((METRICS_PORT + $1))
		health_check none
		fleet_etcd $EP
		fleet_prefix $PFX
		fleet_node b$1
		${2:-}
	EOC
}
# start_b N: run balancer N in its namespace, its pid in BN_PID.
start_b() {
	local ns i
	ns=$([ "$1" = 2 ] && echo "$NS_B2" || echo "$NS_B3")
	nsenter --net="/run/netns/$ns" "$MAGLEVD" -c "$TDIR/b$1.conf" >>"$TDIR/b$1.log" 2>&1 &
	eval "B$1_PID=$!"
	for i in $(seq 100); do
		ctl -s "$TDIR/b$1.sock" status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	sed "s/^/# b$1: /" "$TDIR/b$1.log"
	return 1
}
stop_b() {
	local p
	eval "p=\${B$1_PID:-}"
	[ -n "$p" ] && kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
	eval "B$1_PID="
}
conf_b 2 && conf_b 3
start_b 2 && start_b 3 || { nok "balancers 2 and 3 start"; t_done; }
ok "three maglevd start in fleet mode"

st() { ctl -s "$([ "$1" = 1 ] && echo "$SOCK" || echo "$TDIR/b$1.sock")" -j status; }
# views: "revision digest connected applied_at_ms" of each balancer, a line each
# (one jq for all three: jq's start is what a poll costs here).
views() { { st 1 && st 2 && st 3; } | jq -r '"\(.fleet.revision) \(.vips_digest) \(.fleet.connected) \(.fleet.applied_at_ms)"'; }
view() { st "$1" | jq -r '"\(.fleet.revision) \(.vips_digest) \(.fleet.connected)"'; }
# agree REV: all three applied REV, connected, with one digest. LAST_APPLIED:
# when the last of them applied it (ms, wall clock).
agree() {
	local v
	v=$(views) || return 1
	[ "$(echo "$v" | wc -l)" = 3 ] &&
		[ "$(echo "$v" | cut -d' ' -f1-3 | sort -u)" = "$(echo "$v" | head -1 | cut -d' ' -f1-3)" ] &&
		[ "$(echo "$v" | head -1 | cut -d' ' -f1,3)" = "$1 true" ] || return 1
	LAST_APPLIED=$(echo "$v" | cut -d' ' -f4 | sort -n | tail -1)
}
wait_agree() {
	local end=$((SECONDS + ${2:-10}))
	while [ $SECONDS -le $end ]; do
		agree "$1" && return 0
		sleep 0.02
	done
	diag "no agreement on $1: b1 $(view 1), b2 $(view 2), b3 $(view 3)"
	return 1
}

check "all three applied etcd's revision $REV0, connected, one digest" wait_agree "$REV0"
check "each holds the VIP with its 3 backends" \
	bash -c "for s in $SOCK $TDIR/b2.sock $TDIR/b3.sock; do
		[ \"\$($MAGLEVCTL -s \$s -j backend list $V | jq '.backends | length')\" = 3 ] || exit 1; done"
check "status -j: fleet enabled, node, prefix, etcd, no refusal" \
	jq1 ".fleet.enabled and .fleet.node == \"b2\" and .fleet.prefix == \"$PFX\" and .fleet.etcd == \"$EP\" and .fleet.refused == 0" <(st 2)
check "status text: fleet line with node, connected and the revision" \
	bash -c "$MAGLEVCTL status | grep -q '^fleet: node b1, etcd $EP, prefix $PFX: connected\$' &&
		 $MAGLEVCTL status | grep -q '^fleet: applied revision $REV0, '"
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$TDIR/m1"
check "metrics: maglev_fleet_revision $REV0, maglev_fleet_connected 1" \
	bash -c "grep -qx 'maglev_fleet_revision $REV0' $TDIR/m1 && grep -qx 'maglev_fleet_connected 1' $TDIR/m1"
check "every maglev_fleet_ series packaging/prometheus/maglev-rules.yml uses is exported" \
	bash -c "names=\$(grep -o 'maglev_fleet_[a-z_]*' $ROOT/packaging/prometheus/maglev-rules.yml | sort -u); [ -n \"\$names\" ] &&
		 for n in \$names; do grep -q \"^\$n[ {]\" $TDIR/m1 || exit 1; done"
check "the state file records the revision" jq1 ".fleet_revision == $REV0" "$STATE"

out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$(seq -s, 40000 40009)" --count 3)
check "balancer 1 forwards the VIP from etcd (30 sent, 30 seen encapsulated)" \
	[ "$(echo "$out" | jq '.sent == 30 and .seen == 30')" = true ]

# --- maglevctl changes go to etcd, through the local maglevd -------------------------
c2() { ctl -s "$TDIR/b2.sock" "$@"; }
c3() { ctl -s "$TDIR/b3.sock" "$@"; }
# crev SOCKET ARGS...: maglevctl -j ARGS on SOCKET; echoes the revision it made.
crev() { ctl -s "$1" -j "${@:2}" | jq -r .revision; }
out=$(c2 -j vip add $V2)
R=$(echo "$out" | jq -r .revision)
check "vip add on balancer 2 answers with the etcd revision it made ($R)" \
	jq1 ".ok and .revision == $R and .revision > $REV0" <(echo "$out")
check "... and balancer 2 holds it when it answers" [ "$(st 2 | jq .fleet.revision)" -ge $R ]
check "... the key holds the VIP's requests" \
	jq1 '.[0].cmd == "vip.add" and .[0].vip == "192.0.2.11:80/tcp"' <(ectl get --print-value-only "${PFX}vips/$V2")
check "... all three applied revision $R" wait_agree "$R"
# Every health-check override travels through etcd, not only the TCP/HTTP
# ones: a UDP check without its payload would be refused by all three.
V3=192.0.2.12:53/udp
R=$(crev "$TDIR/b2.sock" vip add $V3 --check udp --check-payload 'ping\x00' --check-expect pong \
	--on-fail drain)
check "vip add of a UDP-checked VIP (payload, expect, on-fail drain) on 2: revision $R on all three" \
	wait_agree "$R"
check "... balancer 3 holds its check type, payload, expect and on_fail" \
	jq1 '.vip.check | .type == "udp" and .payload == "ping\\x00" and .expect == "pong" and .on_fail == "drain"' \
	<(c3 -j vip show $V3)
R=$(crev "$TDIR/b2.sock" vip del $V3)
check "... and deleted again (revision $R on all three)" wait_agree "$R"
crev "$TDIR/b3.sock" backend add $V2 198.51.100.7 --weight 3 >/dev/null
R=$(crev "$SOCK" backend set $V 198.51.100.3 --drain)
check "backend add on 3 and backend set --drain on 1: revision $R on all three" wait_agree "$R"
check "... balancer 2 sees the drain and the weight" \
	bash -c "$MAGLEVCTL -s $TDIR/b2.sock -j backend list $V | jq -e '.backends[] | select(.backend == \"198.51.100.3\") | .drain' >/dev/null &&
		 $MAGLEVCTL -s $TDIR/b2.sock -j backend list $V2 | jq -e '.backends[0].weight == 3' >/dev/null"
R2=$(crev "$TDIR/b2.sock" --expect-revision $R backend set $V 198.51.100.3 --undrain)
check "--expect-revision $R (current): the change is written (revision $R2)" [ "${R2:-0}" -gt "$R" ]
R=$R2
wait_agree "$R" >/dev/null
before=$(snapshot)
msg=$(c3 --expect-revision $((R - 1)) backend del $V 198.51.100.1 2>&1)
rc=$?
stale_refused() { [ $rc = 1 ] && echo "$msg" | grep -q "changed after the expected revision (it is at [0-9]* now): nothing written"; }
check "--expect-revision of an older revision: refused (exit 1), naming the revision now" stale_refused
unchanged() { [ "$(vrev)" = "$R" ] && [ "$(snapshot)" = "$before" ]; }
check "... nothing written to etcd, nothing changed on balancer 1" unchanged
msg=$(c2 backend add $V 198.51.100.9 --weight 99999 2>&1)
has_weight() { echo "$msg" | grep -q weight; }
check "an invalid change is refused locally, before etcd ($msg)" has_weight
check "... nothing written, nothing changed" unchanged
ctl save >"$TDIR/fleet.save"
R=$(crev "$TDIR/b3.sock" vip del $V2) && wait_agree "$R" >/dev/null
R2=$(crev "$TDIR/b3.sock" restore "$TDIR/fleet.save")
check "restore on balancer 3 of balancer 1's save: one txn (one revision, $R2)" [ "${R2:-0}" -gt "$R" ]
R=$R2
two_vips() { wait_agree "$R" && [ "$(st 1 | jq .vips)" = 2 ]; }
check "... revision $R on all three, with $V2 back" two_vips

# --- 100 changes: time to fleet agreement -------------------------------------------
R=$(put $V2 "$(vipval $V2 198.51.100.7)")
check "a VIP written once with etcdctl reaches all three as revision $R" wait_agree "$R"
# What the figures below include: etcdctl's own start and etcd's fsync.
t0=$(date +%s%N)
for i in $(seq 10); do ectl put "${PFX}other/$i" x >/dev/null; done
diag "etcdctl put alone (a key outside vips/): $((($(date +%s%N) - t0) / 10000)) us a put"
R=$(erev)
check "keys under the prefix outside vips/ are no desired state (all three stay on their revision)" \
	bash -c "sleep 0.3; [ \"\$($MAGLEVCTL -j status | jq .fleet.revision)\" -lt $R ]"
lat=()
t_all0=$(date +%s%N)
for i in $(seq 100); do
	w=$((i % 7 + 1))
	t0=$(date +%s%3N)
	R=$(put $V "$(vipval $V 198.51.100.1:$w 198.51.100.2 198.51.100.3)")
	wait_agree "$R" 5 || break
	lat+=($((LAST_APPLIED - t0)))
done
t_all=$((($(date +%s%N) - t_all0) / 1000))
check "100 weight changes, each reached all three as its revision with one digest" [ ${#lat[@]} -eq 100 ]
sorted=$(printf '%s\n' "${lat[@]}" | sort -n)
p50=$(echo "$sorted" | sed -n 50p)
p99=$(echo "$sorted" | sed -n 99p)
diag "time to fleet agreement, from etcdctl put's start to the last of 3 balancers applying (its applied_at_ms): p50 ${p50:-?} ms, p99 ${p99:-?} ms over ${#lat[@]} changes (includes etcdctl's start and etcd's fsync; $((t_all / 100000)) ms a change with the test's polling)"
# The rate the fleet sustains: 50 changes written back to back by one curl
# over one connection to etcd's JSON gateway (one put, one revision each),
# then the time until all three agree on the last.
R=$(erev)
key=$(printf '%s' "${PFX}vips/$V" | base64 -w0)
for i in $(seq 50); do
	printf '{"key":"%s","value":"%s"}' "$key" \
		"$(vipval $V 198.51.100.1:$((i % 5 + 1)) 198.51.100.2 198.51.100.3 | tr -d '\n' | base64 -w0)" >"$TDIR/put$i.json"
	printf 'url = "%s/v3/kv/put"\ndata = "@%s"\n%s' $EP "$TDIR/put$i.json" "$([ $i -lt 50 ] && echo next)" >>"$TDIR/puts.cfg"
	echo >>"$TDIR/puts.cfg"
done
t0=$(date +%s%N)
etx curl -sf -K "$TDIR/puts.cfg" >"$TDIR/puts.out" || nok "50 puts through the gateway"
t1=$(date +%s%N)
R=$(jq -rs '.[-1].header.revision' "$TDIR/puts.out")
wait_agree "$R" 20
check "50 back-to-back changes: all three end on the last revision" agree "$R"
el=$((LAST_APPLIED - t0 / 1000000))
diag "50 back-to-back changes written in $(((t1 - t0) / 1000000)) ms, applied by all three $el ms after the first write: $((50000 / (el > 0 ? el : 1))) changes/s sustained (etcd's fsync of each put is the bound here)"

# --- a desired state the daemons refuse changes nothing ----------------------------
before=$(st 1 | jq -r .vips_digest)
BAD=$(put $V2 '[{"cmd":"vip.add","vip":"192.0.2.11:80/tcp"},{"cmd":"backend.add","vip":"192.0.2.11:80/tcp","backend":"198.51.100.7","weight":99999999}]')
refused() { jq1 ".fleet.refused == 1 and .fleet.refused_revision == $BAD and (.fleet.refused_error | test(\"weight\"))" <(st "$1"); }
wait_refused() {
	local end=$((SECONDS + 5))
	while [ $SECONDS -le $end ]; do
		refused "$1" >/dev/null && return 0
		sleep 0.05
	done
	return 1
}
all_refused() { wait_refused 1 && wait_refused 2 && wait_refused 3; }
check "an out-of-range weight in etcd: refused by all three, status names revision and reason" \
	all_refused

check "... which kept the applied revision $R and the tables" agree "$R"
check "... and balancer 1's digest" [ "$(st 1 | jq -r .vips_digest)" = "$before" ]
check "status text says REFUSED" bash -c "$MAGLEVCTL status | grep -q '^fleet: REFUSED revision $BAD: .*weight'"
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$TDIR/m1"
check "metrics: maglev_fleet_revisions_total{result=\"refused\"} 1" \
	grep -qx 'maglev_fleet_revisions_total{result="refused"} 1' "$TDIR/m1"
R=$(put $V2 "$(vipval $V2 198.51.100.7 198.51.100.8)")
check "the next valid revision $R is applied by all three" wait_agree "$R"

# --- etcd stopped: forwarding and state go on -----------------------------------------
stop_etcd
down() { jq1 '.fleet.connected == false and (.fleet.error | length > 0)' <(st "$1"); }
wait_down() {
	local end=$((SECONDS + 10))
	while [ $SECONDS -le $end ]; do
		down 1 >/dev/null && down 2 >/dev/null && down 3 >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
check "etcd stopped: all three say disconnected, with the error" wait_down
check "status text says DISCONNECTED" bash -c "$MAGLEVCTL status | grep -q '^fleet: node b1, .*: DISCONNECTED: '"
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$TDIR/m1"
check "metrics: maglev_fleet_connected 0" grep -qx 'maglev_fleet_connected 0' "$TDIR/m1"
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$(seq -s, 40100 40109)" --count 3)
check "balancer 1 still forwards (30 sent, 30 seen encapsulated)" \
	[ "$(echo "$out" | jq '.sent == 30 and .seen == 30')" = true ]
d2=$(st 2 | jq -r .vips_digest)
stop_b 2
start_b 2 || nok "balancer 2 restarts without etcd"
check "balancer 2 restarted without etcd: its 2 VIPs, revision $R and digest kept, disconnected" \
	jq1 ".vips == 2 and .fleet.revision == $R and .vips_digest == \"$d2\" and .fleet.connected == false" <(st 2)

# --- etcd back: all resync ----------------------------------------------------------
start_etcd fleet-test || nok "etcd restarts"
check "etcd back: all three reconnect on revision $R" wait_agree "$R" 10
R=$(put $V2 "$(vipval $V2 198.51.100.7)")
check "a change after the outage reaches all three as revision $R" wait_agree "$R"
check "... balancer 2 (restarted) holds 1 backend on $V2" \
	[ "$(ctl -s "$TDIR/b2.sock" -j backend list $V2 | jq '.backends | length')" = 1 ]
R=$(ectl del -w json "${PFX}vips/$V2" | jq -r .header.revision)
check "a deleted key deletes its VIP on all three (revision $R)" wait_agree "$R"
check "... balancer 3 holds only $V" [ "$(st 3 | jq .vips)" = 1 ]
# --- fleet status: every live balancer, under a lease ------------------------------
# nodes_are NAMES: fleet status on balancer 1 lists exactly these balancers.
nodes_are() { [ "$(ctl -j fleet status | jq -r '[.nodes[].node] | sort | join(" ")')" = "$1" ]; }
wait_nodes() {
	local end=$((SECONDS + ${2:-10}))
	while [ $SECONDS -le $end ]; do
		nodes_are "$1" && return 0
		sleep 0.2
	done
	diag "fleet status: $(ctl -j fleet status)"
	return 1
}
fleet_ok() { ctl fleet status >"$TDIR/fs.txt"; }
check "fleet status lists the three balancers" wait_nodes "b1 b2 b3"
# fs_until JQ: until JQ holds for fleet status -j (10 s at most).
fs_until() {
	local end=$((SECONDS + 10))
	while [ $SECONDS -le $end ]; do
		ctl -j fleet status | jq -e "$1" >/dev/null && return 0
		sleep 0.2
	done
	return 1
}
agree_fs() { fs_until ".agree and ([.nodes[].revision] | unique == [$R])"; }
check "... all on revision $R, agreeing" agree_fs
check "... exit 0, text: 3 balancers, agree, one line each" \
	bash -c "$MAGLEVCTL fleet status >$TDIR/fs.txt && grep -q '^3 balancers, agree\$' $TDIR/fs.txt && [ \$(grep -c '^b[123] ' $TDIR/fs.txt) = 3 ]"
fp1=$(ctl -j status | jq -r .seed_fingerprint)
check "... each node's status has its per-VIP digests and version" \
	jq1 "[.nodes[] | (.digests | length == 1) and (.version | length > 0) and .seed_fingerprint == \"$fp1\"] | all" <(ctl -j fleet status)

# A balancer whose datapath differs from its registry (a backend's flags
# cleared behind its back): the digests cannot show it, fleet status does.
check "... each node's datapath agrees with its registry (column agrees)" \
	bash -c "$MAGLEVCTL fleet status >$TDIR/fs.txt && [ \$(grep -c '^b[123] .* agrees ' $TDIR/fs.txt) = 3 ]"
idx=$(c2 -j backend list $V | jq '.backends[0].index')
dp_backend_flags "$PIN-b2" "$idx" 0 || nok "bpftool: backend $idx of balancer 2 cleared"
b2_drift() { fs_until '[.nodes[] | select(.node == "b2") | .datapath_drift] == [1]'; }
check "balancer 2's datapath changed behind its back: fleet status says 1 VIP drifts" b2_drift
ctl fleet status >"$TDIR/fs.txt"
rc=$?
check "... text: b2's line says 1 DRIFT, exit 1" bash -c "[ $rc = 1 ] && grep -q '^b2 .* 1 DRIFT ' $TDIR/fs.txt"
stop_b 2
start_b 2 || nok "balancer 2 restarts"
no_drift() { fs_until '[.nodes[].datapath_drift] == [0, 0, 0]'; }
check "... restarted, it writes its datapath again: no drift anywhere" no_drift

# A balancer with another seed: flagged by fleet status and the digests.
conf_b 3 "seed fedcba9876543210fedcba9876543210"
stop_b 3
start_b 3 || nok "balancer 3 restarts with another seed"
other_seed() {
	local end=$((SECONDS + 10)) fs
	while [ $SECONDS -le $end ]; do
		fs=$(ctl -j fleet status)
		echo "$fs" | jq -e ".agree == false and ([.nodes[] | select(.node == \"b3\") | .seed_fingerprint != \"$fp1\"] == [true])" >/dev/null && return 0
		sleep 0.2
	done
	return 1
}
check "balancer 3 with another seed: fleet status shows its fingerprint, DISAGREE" other_seed
check "... its tables digest differs from balancer 1's" \
	[ "$(st 3 | jq -r .vips_digest)" != "$(st 1 | jq -r .vips_digest)" ]
ctl fleet status --settle 60 >/dev/null
check "... fleet status --settle 60 exits 0 (disagreeing for less than the settle time)" [ $? = 0 ]
sleep 1.2
ctl fleet status --settle 1 >"$TDIR/fs.txt"
rc=$?
check "... fleet status --settle 1, a second later: exit 1, DISAGREE for N s" \
	bash -c "[ $rc = 1 ] && grep -q '^3 balancers, DISAGREE for [0-9.]* s\$' $TDIR/fs.txt"
conf_b 3
stop_b 3
start_b 3 || nok "balancer 3 restarts with the fleet's seed"
check "with the fleet's seed again: all agree" agree_fs

# A balancer killed: its status expires (lease), the others are unaffected.
kill -9 "$B3_PID" 2>/dev/null
wait "$B3_PID" 2>/dev/null
B3_PID=
check "balancer 3 killed: its status expires within the lease (5 s)" wait_nodes "b1 b2" 10
check "... the two left agree, fleet status exits 0" bash -c "$MAGLEVCTL fleet status --settle 0 >/dev/null"
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$(seq -s, 40200 40209)" --count 3)
check "... balancer 1 forwards (30 sent, 30 seen encapsulated)" \
	[ "$(echo "$out" | jq '.sent == 30 and .seen == 30')" = true ]
R=$(crev "$TDIR/b2.sock" backend set $V 198.51.100.2 --weight 2)
two_agree() { [ "$(st 1 | jq .fleet.revision)" = "$R" ] && [ "$(st 2 | jq -r .vips_digest)" = "$(st 1 | jq -r .vips_digest)" ]; }
wait_two() {
	local end=$((SECONDS + 10))
	while [ $SECONDS -le $end ]; do
		two_agree && return 0
		sleep 0.1
	done
	return 1
}
check "... a change still reaches balancers 1 and 2 (revision $R)" wait_two

check "maglevd logged no error but the refusal" \
	bash -c "! grep -h 'error\|ERR' $DLOG $TDIR/b2.log $TDIR/b3.log | grep -v 'refused' | grep -q ."
t_done
