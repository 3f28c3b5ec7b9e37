# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# Shared set-up of the maglevd tests: a load-balancer namespace and a client
# namespace joined by a veth pair, the XDP program attached for real to the
# balancer's end, a daemon with its own pin dir, socket, state file and
# metrics port, TAP output helpers, and cleanup on any exit.
#
#   client ns: c0 203.0.113.2/24 ----- lb ns: lb0 203.0.113.1/24 (XDP)
#
# The balancer's next hop is c0's MAC, so what it forwards comes back to the
# client namespace, where selftests/daemon/pktio.py sees it.

set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# MAGLEV_BUILD: the build dir under test (selftests/sanitize uses build/san).
BUILD_DIR=${MAGLEV_BUILD:-$ROOT/build}
MAGLEVD=$BUILD_DIR/maglevd
MAGLEVCTL=$BUILD_DIR/maglevctl
PKTIO=$ROOT/selftests/daemon/pktio.py
XDP_PASS=$BUILD_DIR/tools/xdp_pass.bpf.o

T_N=0
T_FAIL=0
ok() {
	T_N=$((T_N + 1))
	echo "ok $T_N $*"
}
nok() {
	T_N=$((T_N + 1))
	T_FAIL=$((T_FAIL + 1))
	echo "not ok $T_N $*"
}
# check NAME CMD...: one test line from a command's status.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else nok "$name"; fi
}
diag() { echo "# $*"; }
t_done() {
	echo "1..$T_N"
	[ "$T_FAIL" -eq 0 ]
	exit $?
}
skip_all() {
	echo "1..0 # SKIP $*"
	exit 4
}

[ "$(id -u)" = 0 ] || skip_all "machine: needs root"
[ -x "$MAGLEVD" ] && [ -x "$MAGLEVCTL" ] && [ -f "$XDP_PASS" ] ||
	skip_all "$BUILD_DIR: maglevd, maglevctl or tools/xdp_pass.bpf.o missing"
# The pins live on the host's bpffs at /sys/fs/bpf; a machine without one gets
# it here, as maglevd itself would (daemon_bpffs.sh tests that path).
if ! mountpoint -q /sys/fs/bpf && ! mount -t bpf -o mode=0700 bpf /sys/fs/bpf; then
	echo "not ok 1 mount a bpffs on /sys/fs/bpf for the pins"
	exit 1
fi

ID="$$-$RANDOM"
NS_LB="mglb-$ID"
NS_CL="mgcl-$ID"
PIN="/sys/fs/bpf/maglev-test-$ID"
TDIR=$(mktemp -d /tmp/maglevd-test.XXXXXX)
CONF=$TDIR/maglevd.conf
SOCK=$TDIR/maglevd.sock
STATE=$TDIR/state.json
DLOG=$TDIR/maglevd.log
METRICS_PORT=$((20000 + RANDOM % 20000))
DPID=
export MAGLEV_SOCKET=$SOCK

# kill_own SIG PID...: signal those of the PIDs that are still this shell's
# descendants. A child already reaped (wait) frees its PID, and with pid_max
# 32768 and tests beside each other the PID soon names another process: a
# cleanup that kills it SIGKILLs someone else's daemon (the soak saw a
# balancer's maglevd killed by no fault of its own while other tests ran).
# A descendant counts too: "lbx cmd &" forks a subshell, so the command is
# this shell's grandchild (a listener missed so kept a test's output pipe,
# and a CI run, open).
kill_own() {
	local sig=$1 p a n
	shift
	for p in "$@"; do
		a=$p
		for n in 1 2 3 4 5 6 7 8; do
			a=$(sed 's/^.*) //' "/proc/$a/stat" 2>/dev/null | cut -d' ' -f2)
			[ -n "$a" ] && [ "$a" -gt 1 ] || break
			if [ "$a" = "$$" ]; then
				# Its children too: that subshell's command
				# outlives a SIGKILL of the subshell.
				pkill "-$sig" -P "$p" 2>/dev/null
				kill "-$sig" "$p" 2>/dev/null
				break
			fi
		done
	done
	return 0
}

cleanup() {
	# shellcheck disable=SC2086 # EXTRA_PIDS is a list
	kill_own KILL $DPID ${EXTRA_PIDS:-}
	ip netns del "$NS_LB" 2>/dev/null
	ip netns del "$NS_CL" 2>/dev/null
	rm -rf "$PIN"
	if [ "${KEEP_LOG:-0}" = 1 ]; then echo "# log kept in $TDIR"; else rm -rf "$TDIR"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# jqt EXPR [FILE]: true only for exactly one JSON value for which EXPR holds.
# Not "jq -e": jq 1.6 (Debian 12) exits 0 on empty input, so a missing answer
# or an empty file would pass.
jqt() { jq -e -s "length == 1 and (.[0] | $1)" "${@:2}"; }
export -f jqt

lbx() { ip netns exec "$NS_LB" "$@"; }
# vipl VIP: the metrics' labels of a VIP as maglevctl names it
# ("192.0.2.10:80/tcp", "[2001:db8::1]:*/udp"): address="...",port="...",protocol="...".
vipl() {
	local hp=${1%/*} host port
	port=${hp##*:}
	host=${hp%:*}
	host=${host#[}
	host=${host%]}
	printf 'address="%s",port="%s",protocol="%s"' "$host" "$port" "${1##*/}"
}
# The same in jq, for a "vip" field: `jq -r "$JQ_VIPL"'.backends[] | (.vip | vipl)'`.
JQ_VIPL='def vipl: capture("^\\[?(?<a>[^]]*?)]?:(?<p>[^:/]*)/(?<t>[a-z]+)$") | "address=\"\(.a)\",port=\"\(.p)\",protocol=\"\(.t)\""; '
# route_monitor TABLE: `ip monitor route` in the balancer's namespace, into
# $MON, until the end of the test; returns once it has seen a probe route
# added and deleted in TABLE (a table other than the one under test).
route_monitor() {
	MON=$TDIR/monitor.txt
	lbx ip monitor route >"$MON" 2>&1 &
	EXTRA_PIDS="${EXTRA_PIDS:-} $!"
	for _ in $(seq 40); do
		lbx ip route add blackhole 192.0.2.99/32 table "$1" &&
			lbx ip route del blackhole 192.0.2.99/32 table "$1"
		grep -q "table $1" "$MON" && return 0
		sleep 0.05
	done
	return 1
}
clx() { ip netns exec "$NS_CL" "$@"; }
# poll_until SECONDS CMD...: true once CMD is, polled every 0.1 s; false
# after SECONDS.
poll_until() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -le $end ]; do "$@" && return 0; sleep 0.1; done
	return 1
}
ctl() { "$MAGLEVCTL" "$@"; }

setup_net() {
	ip netns add "$NS_LB" && ip netns add "$NS_CL" || return 1
	ip link add lb0 netns "$NS_LB" type veth peer name c0 netns "$NS_CL" || return 1
	for ns in "$NS_LB" "$NS_CL"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
		ip netns exec "$ns" ip link set lo up
	done
	lbx ip addr add 203.0.113.1/24 dev lb0
	clx ip addr add 203.0.113.2/24 dev c0
	lbx ip link set lb0 up
	clx ip link set c0 up
	# The veth driver delivers XDP_TX frames only to a peer that runs an XDP
	# program itself: c0 gets one that passes everything.
	clx ethtool -K c0 gro on >/dev/null 2>&1
	clx ip link set dev c0 xdpdrv obj "$XDP_PASS" sec xdp || return 1
	LB_MAC=$(lbx cat /sys/class/net/lb0/address)
	CL_MAC=$(clx cat /sys/class/net/c0/address)
	# Static neighbours: no ARP traffic to muddle packet counts.
	lbx ip neigh replace 203.0.113.2 lladdr "$CL_MAC" dev lb0 nud permanent
	clx ip neigh replace 203.0.113.1 lladdr "$LB_MAC" dev c0 nud permanent
	clx ip route add 192.0.2.0/24 via 203.0.113.1 dev c0
	# The balancer's default route: what nexthop_mac auto resolves.
	lbx ip route add default via 203.0.113.2 dev lb0
}

# write_conf [extra lines...]
write_conf() {
	{
		echo "# maglevd test configuration"
		echo "interface lb0"
		echo "xdp_mode native"
		echo "seed 0123456789abcdef0123456789abcdef"
		echo "nexthop_mac auto"
		echo "src4_prefix 203.0.113.0/24"
		echo "pin_dir $PIN"
		echo "state_file $STATE"
		echo "control_socket $SOCK"
		echo "metrics_listen 127.0.0.1:$METRICS_PORT"
		echo "health_check none"
		echo "udp_idle_timeout_ms 60000"
		for l in "$@"; do echo "$l"; done
	} >"$CONF"
}

# start_daemon: run maglevd in the balancer namespace, wait for its socket.
# nsenter switches only the network namespace: "ip netns exec" would also
# remount /sys and hide the bpffs at /sys/fs/bpf, where the pins live.
# DAEMON_PREFIX: a command that execs it, e.g. "prlimit --nofile=64:64".
start_daemon() {
	# shellcheck disable=SC2086 # DAEMON_PREFIX is words
	nsenter --net="/run/netns/$NS_LB" ${DAEMON_PREFIX:-} "$MAGLEVD" -c "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	# START_TIMEOUT_S: how long a start may take (a large state loads slower;
	# in the TCG VM the verifier alone can take seconds: 30 there).
	local i t=5
	[ -n "${MAGLEV_IN_VM:-}" ] && t=30
	for i in $(seq $((${START_TIMEOUT_S:-$t} * 20))); do
		if ctl status >/dev/null 2>&1; then return 0; fi
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	diag "maglevd did not come up; log:"
	sed 's/^/# /' "$DLOG"
	return 1
}

stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=
}

kill9_daemon() {
	kill -9 "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=
}

# listen_tcp NS ADDR PORT: a TCP listener answering "hi" in NS (pid in LPID,
# killed on exit through EXTRA_PIDS); waits until it accepts.
listen_tcp() {
	ip netns exec "$1" socat TCP-LISTEN:"$3",bind="$2",fork,reuseaddr SYSTEM:'echo hi' 2>/dev/null &
	LPID=$!
	disown $LPID
	EXTRA_PIDS="${EXTRA_PIDS:-} $LPID"
	local i
	for i in $(seq 50); do
		ip netns exec "$1" bash -c "exec 3<>/dev/tcp/$2/$3" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# accept_service PORT PROBE-ADDR: in the balancer's namespace, one listener
# on every address that accepts and closes (all a TCP check needs), however
# many backends share it; waits until PROBE-ADDR accepts. Its pid in SVC
# (killed on exit through EXTRA_PIDS).
accept_service() {
	cat >"$TDIR/acceptd.py" <<-'EOF'
		import os, socket, sys
		open(sys.argv[2], "w").write(str(os.getpid()))
		s = socket.socket()
		s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		s.bind(("0.0.0.0", int(sys.argv[1])))
		s.listen(4096)
		while True:
		    c, _ = s.accept()
		    c.close()
	EOF
	rm -f "$TDIR/svc.pid"
	lbx python3 "$TDIR/acceptd.py" "$1" "$TDIR/svc.pid" 2>/dev/null &
	disown $!
	local i
	for i in $(seq 60); do
		lbx bash -c "exec 3<>/dev/tcp/$2/$1" 2>/dev/null && break
		sleep 0.05
	done
	# The interpreter's own pid: python3 may be a wrapper that forks.
	SVC=$(cat "$TDIR/svc.pid" 2>/dev/null)
	[ -n "$SVC" ] || return 1
	EXTRA_PIDS="${EXTRA_PIDS:-} $SVC"
}

# field VIP BACKEND JQ-EXPR: a backend's field in `maglevctl -j health VIP`.
field() {
	ctl -j health "$1" | jq -r --arg b "$2" ".backends[] | select(.backend == \$b) | $3"
}

# slots VIP BACKEND: its slots in the live table; flags VIP BACKEND: its
# flags in the live backend map ("UP", "DRAIN" or empty).
slots() { ctl -j table "$1" | jq -r --arg b "$2" '.backends[] | select(.backend == $b) | .slots'; }
flags() { ctl -j backend list "$1" | jq -r --arg b "$2" '.backends[] | select(.backend == $b) | .dp_flags | join(",")'; }

# wait_state VIP BACKEND STATE SECONDS: until the backend's health state is STATE.
wait_state() {
	local end=$((SECONDS + $4))
	while [ $SECONDS -le $end ]; do
		[ "$(field "$1" "$2" .state)" = "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

# le32 N: N as the 4 bytes of a bpftool key or value ("hex" and 4 hex bytes).
le32() { printf 'hex %02x %02x %02x %02x' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }

# dp_backend_flags PIN_DIR INDEX FLAGS: write FLAGS (0-255) into backend INDEX's
# entry of the pinned backend map behind maglevd's back (struct maglev_backend:
# addr[16], family, flags, pad, gen).
dp_backend_flags() {
	local val
	# shellcheck disable=SC2046 # le32 is words
	val=$(bpftool -j map lookup pinned "$1/maglev_backends" key $(le32 "$2") |
		jq -r '.value | map(ltrimstr("0x")) | join(" ")')
	[ -n "$val" ] || return 1
	# shellcheck disable=SC2086,SC2046 # val is words
	set -- "$1" "$2" "$3" $val
	# shellcheck disable=SC2046
	bpftool map update pinned "$1/maglev_backends" key $(le32 "$2") \
		value hex "${@:4:17}" "$(printf %02x "$3")" "${@:22}"
}

# dp_mtu: the mtu in the datapath's config map.
dp_mtu() { bpftool -j map dump pinned "$PIN/maglev_cfg" | jq '.[0].formatted.value.mtu'; }

# pktio ARGS...: flows from the client namespace; JSON summary on stdout.
pktio() {
	clx python3 "$PKTIO" --ifname c0 --src 203.0.113.2 "$@"
}

# flows_to DST DPORT SPORTS BACKEND: how many of the flows from SPORTS (one
# packet each) to DST:DPORT went to BACKEND.
flows_to() {
	pktio --dst "$1" --dport "$2" --sports "$3" --count 1 |
		jq --arg b "$4" '[.flows[] | select(has($b))] | length'
}

# A snapshot of everything a rejected request must leave alone.
snapshot() {
	{
		ctl -j save | jq -S .vips
		for v in $(ctl -j vip list | jq -r '.vips[].vip'); do
			ctl -j table "$v" | jq -S '[.backends[] | {backend, slots}], .table_gen, .digest'
			ctl -j backend list "$v" | jq -S '[.backends[] | {backend, dp_flags, index, gen}]'
		done
		jq -S . "$STATE"
	} 2>&1
}

# reject [-rc N] NAME ARGS...: maglevctl ARGS exits N (1: rejected by the
# daemon; 2: a usage error, nothing sent) with one line and changes nothing.
reject() {
	local want=1
	[ "$1" = -rc ] && want=$2 && shift 2
	local name=$1
	shift
	local before out rc
	before=$(snapshot)
	out=$("$MAGLEVCTL" "$@" 2>&1)
	rc=$?
	if [ $rc -eq "$want" ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && [ "$(snapshot)" = "$before" ]; then
		ok "rejected, state unchanged: $name ($out)"
	else
		nok "rejected, state unchanged: $name (rc $rc: $out)"
	fi
}
