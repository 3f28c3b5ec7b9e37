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
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
command -v nft >/dev/null || skip_all "nft missing (scripts/install-deps installs nftables)"

NS_ET="mget-$ID"
NS=("" "$NS_LB" "mgb2-$ID" "mgb3-$ID")
EP=http://192.0.2.254:2379
PFX=/maglev-health/
V=192.0.2.10:80/tcp
BE1=198.51.100.21
BE2=198.51.100.22
ETCD_PID=
PIDS=("" "" "" "")
fh_cleanup() {
	local p
	# Reaped here, so that bash does not report them killed.
	for p in "$ETCD_PID" "${PIDS[@]}" "${EXTRA_PIDS:-}"; do
		[ -n "$p" ] && { kill -9 "$p" && wait "$p"; } 2>/dev/null
	done
	EXTRA_PIDS=
	for ns in "$NS_ET" "${NS[2]}" "${NS[3]}"; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$PIN-b1" "$PIN-b2" "$PIN-b3"
	cleanup
}
trap fh_cleanup EXIT

# until_ok SECONDS CMD...: CMD succeeds before the time is up (else what
# the balancers hold, as diagnostics).
until_ok() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -le $end ]; do
		"$@" && return 0
		sleep 0.1
	done
	[ "$(type -t report)" = function ] && report
	return 1
}
for ns in "$NS_ET" "${NS[1]}" "${NS[2]}" "${NS[3]}"; do
	ip netns add "$ns" && ip -n "$ns" link set lo up || skip_all "cannot create namespaces"
done
etx ip addr add 192.0.2.254/32 dev lo && etx ip addr add $BE1/32 dev lo && etx ip addr add $BE2/32 dev lo
for n in 1 2 3; do
	a=$((240 + 4 * n - 3)) b=$((240 + 4 * n - 2))
	ip link add "et$n" netns "$NS_ET" type veth peer name "fl$n" netns "${NS[$n]}" &&
		etx ip addr add 192.0.2.$b/30 dev "et$n" && etx ip link set "et$n" up &&
		ip -n "${NS[$n]}" addr add 192.0.2.$a/30 dev "fl$n" && ip -n "${NS[$n]}" link set "fl$n" up &&
		ip -n "${NS[$n]}" route add 192.0.2.254/32 via 192.0.2.$b &&
		ip -n "${NS[$n]}" route add 198.51.100.0/24 via 192.0.2.$b ||
		skip_all "cannot link the etcd namespace"
done

start_etcd fh-test || { nok "etcd starts"; t_done; }
# The backends: one listener in the etcd namespace for both addresses that
# accepts and closes, all a TCP check needs (no process per check).
cat >"$TDIR/acceptd.py" <<-'PY'
	import os, socket, sys
	open(sys.argv[1], "w").write(str(os.getpid()))
	s = socket.socket()
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("0.0.0.0", 8080))
	s.listen(1024)
	while True:
	    s.accept()[0].close()
PY
ip netns exec "$NS_ET" python3 "$TDIR/acceptd.py" "$TDIR/acceptd.pid" </dev/null >/dev/null 2>&1 &
listening() { etx bash -c "exec 3<>/dev/tcp/$BE1/8080" 2>/dev/null; }
until_ok 5 listening
# The interpreter's own pid (python3 may be a wrapper), killed by cleanup.
EXTRA_PIDS=$(cat "$TDIR/acceptd.pid" 2>/dev/null)
[ -n "$EXTRA_PIDS" ] || { nok "the backends' listener starts"; t_done; }
ok "etcd and the backends ($BE1, $BE2 port 8080) start in their namespace"

ectl put "${PFX}vips/$V" "[{\"cmd\":\"vip.add\",\"vip\":\"$V\"},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE1\",\"weight\":1},{\"cmd\":\"backend.add\",\"vip\":\"$V\",\"backend\":\"$BE2\",\"weight\":1}]" >/dev/null ||
	nok "seed the desired state"

# conf N SCOPE [EXTRA]: balancer N's config; short checks straight to the backends.
conf() {
	cat >"$TDIR/b$1.conf" <<-EOC
		seed 0123456789abcdef0123456789abcdef
		nexthop_mac 02:00:00:00:00:01
		pin_dir $PIN-b$1
		state_file $TDIR/state-b$1.json
		control_socket $TDIR/b$1.sock
		metrics_listen off
		health_check tcp
		health_port 8080
		health_interval_ms 200
		health_timeout_ms 150
		health_rise 2
		health_fall 2
		health_via_encap no
		fleet_etcd $EP
		fleet_prefix $PFX
		fleet_node b$1
		health_scope $2
		${3:-}
	EOC
}
# start_all: run the three balancers in their namespaces at once (their
# starts overlap), then wait until each answers.
start_all() {
	local n i
	for n in 1 2 3; do
		nsenter --net="/run/netns/${NS[$n]}" "$MAGLEVD" -c "$TDIR/b$n.conf" >>"$TDIR/b$n.log" 2>&1 &
		PIDS[$n]=$!
	done
	for n in 1 2 3; do
		for i in $(seq 200); do
			c $n status >/dev/null 2>&1 && break
			sleep 0.05
		done
		c $n status >/dev/null 2>&1 || { sed "s/^/# b$n: /" "$TDIR/b$n.log"; return 1; }
	done
}
# stop_all: SIGTERM to every balancer still running, then wait for each.
stop_all() {
	local n
	for n in 1 2 3; do [ -n "${PIDS[$n]}" ] && kill -TERM "${PIDS[$n]}" 2>/dev/null; done
	for n in 1 2 3; do
		[ -n "${PIDS[$n]}" ] && wait "${PIDS[$n]}" 2>/dev/null
		PIDS[$n]=
	done
}
c() { ctl -s "$TDIR/b$1.sock" "${@:2}"; }
# block N: balancer N's checks to BE1 are dropped; unblock N.
block() {
	ip netns exec "${NS[$1]}" nft -f - <<-NFT
		table inet mgtest {
			chain out { type filter hook output priority 0; ip daddr $BE1 tcp dport 8080 drop; }
		}
	NFT
}
unblock() { ip netns exec "${NS[$1]}" nft delete table inet mgtest; }

# digests: each balancer's tables digest, a line each; one: all three equal.
digests() { for n in 1 2 3; do c $n -j status | jq -r .vips_digest; done; }
one_digest() { [ "$(digests | sort -u | wc -l)" = 1 ]; }
# applied N: BE1's state on balancer N ("up", "down"); slots1 N: its table slots.
applied() { c "$1" -j backend list $V | jq -r --arg b $BE1 '.backends[] | select(.backend == $b) | .state'; }
slots1() { c "$1" -j table $V | jq -r --arg b $BE1 '[.backends[] | select(.backend == $b) | .slots] | add // 0'; }
# views N: BE1's views as balancer N's fleet status shows them, "b1 b2 b3 fleet".
views() { c "$1" -j fleet status | jq -r --arg b $BE1 '.health[] | select(.backend == $b) | "\(.views.b1) \(.views.b2) \(.views.b3) \(.fleet)"'; }
all_views() { [ "$(views 1)" = "$1" ] && [ "$(views 2)" = "$1" ] && [ "$(views 3)" = "$1" ]; }
all_applied() { [ "$(applied 1) $(applied 2) $(applied 3)" = "$1 $1 $1" ]; }
report() { diag "views on b1: $(views 1); applied: $(applied 1) $(applied 2) $(applied 3); digests $(digests | tr '\n' ' ')"; }
digests_are() { [ "$(digests | tr '\n' ' ')" = "$1" ]; }

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
