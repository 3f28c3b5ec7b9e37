# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# The set-up of the health_scope fleet tests (daemon_fleet_health.sh,
# daemon_fleet_settle.sh), sourced by them: etcd and three balancer
# namespaces, the backends 198.51.100.21, .22 (port 8080, a listener that
# accepts and closes) in etcd's namespace, the desired state (VIP V with both
# backends) under PFX (default /maglev-health/), conf N SCOPE [EXTRA],
# start_all, stop_all, c N, block N / unblock N (balancer N's checks to BE1)
# and the digests and state helpers.
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
PFX=${PFX:-/maglev-health/}
V=192.0.2.10:80/tcp
BE1=198.51.100.21
BE2=198.51.100.22
ETCD_PID=
PIDS=("" "" "" "")
fh_cleanup() {
	local p
	# Reaped here, so that bash does not report them killed.
	for p in "$ETCD_PID" "${PIDS[@]}" "${EXTRA_PIDS:-}"; do
		[ -n "$p" ] && { kill_own KILL "$p" && wait "$p"; } 2>/dev/null
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

start_etcd "${ETCD_NAME:-fh-test}" || { nok "etcd starts"; t_done; }
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
# restart N: stop balancer N (its status key goes with it) and start it again.
restart() {
	local _
	kill -TERM "${PIDS[$1]}" && wait "${PIDS[$1]}"
	nsenter --net="/run/netns/${NS[$1]}" "$MAGLEVD" -c "$TDIR/b$1.conf" >>"$TDIR/b$1.log" 2>&1 &
	PIDS[$1]=$!
	for _ in $(seq 200); do
		c "$1" status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
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

