# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# etcd for the fleet tests, sourced after lib.sh. start_etcd: one member
# (daemon_fleet.sh, daemon_fleet_health.sh, daemon_fleet_rollback.sh) in
# namespace $NS_ET with client URL $EP, its data in $TDIR/etcd, its log in
# $TDIR/etcd.log, ETCD_PID its pid for the test's cleanup. etcd_for_lb: a
# 3-member cluster for lib.sh's one balancer (daemon_second_chance_fleet.sh,
# daemon_vip_options_fleet.sh, daemon_fleet_expect.sh, daemon_fleet_faults.sh).

# etcd_require: skip the whole test when etcd or etcdctl is missing.
etcd_require() {
	command -v etcd >/dev/null && command -v etcdctl >/dev/null ||
		skip_all "etcd/etcdctl missing (scripts/install-deps installs etcd-server, etcd-client)"
}

# etcd_kill: for the test's cleanup; nothing when etcd is not running.
etcd_kill() {
	# shellcheck disable=SC2086 # ETCD_PIDS is a list
	kill_own KILL ${ETCD_PID:-} ${ETCD_PIDS:-}
}

etx() { ip netns exec "$NS_ET" "$@"; }
ectl() { etx etcdctl --endpoints="$EP" --command-timeout=3s "$@"; }

# start_etcd NAME: start it (again, on the same data) and wait until healthy.
start_etcd() {
	# ip netns exec execs etcd: $! is etcd's own pid.
	ip netns exec "$NS_ET" etcd --name "$1" --data-dir "$TDIR/etcd" --listen-client-urls "$EP" \
		--advertise-client-urls "$EP" --listen-peer-urls http://127.0.0.1:2380 \
		--initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster "$1=http://127.0.0.1:2380" >>"$TDIR/etcd.log" 2>&1 &
	ETCD_PID=$!
	for _ in $(seq 100); do
		ectl endpoint health >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	sed 's/^/# etcd: /' "$TDIR/etcd.log" | tail -20
	return 1
}

stop_etcd() {
	kill -TERM "$ETCD_PID" 2>/dev/null
	wait "$ETCD_PID" 2>/dev/null
	ETCD_PID=
}

# The members of etcd_for_lb's cluster: their client addresses (port 2379).
ETCD_MEMBER_ADDRS="192.0.2.254 192.0.2.252 192.0.2.251"

# start_etcd_cluster NAME: three members in $NS_ET (mN on the Nth of
# ETCD_MEMBER_ADDRS, peers on 127.0.0.1:2380+N, data in $TDIR/etcd-mN, logs
# in $TDIR/etcd-mN.log, pids in ETCD_PIDS); waits until all are healthy.
start_etcd_cluster() {
	local n=0 a cluster=
	for a in $ETCD_MEMBER_ADDRS; do
		n=$((n + 1))
		cluster="$cluster${cluster:+,}m$n=http://127.0.0.1:$((2380 + n))"
	done
	n=0
	ETCD_PIDS=
	for a in $ETCD_MEMBER_ADDRS; do
		n=$((n + 1))
		ip netns exec "$NS_ET" etcd --name "m$n" --data-dir "$TDIR/etcd-m$n" \
			--listen-client-urls "http://$a:2379" --advertise-client-urls "http://$a:2379" \
			--listen-peer-urls "http://127.0.0.1:$((2380 + n))" \
			--initial-advertise-peer-urls "http://127.0.0.1:$((2380 + n))" \
			--initial-cluster "$cluster" --initial-cluster-token "$1-$ID" \
			--initial-cluster-state new >>"$TDIR/etcd-m$n.log" 2>&1 &
		ETCD_PIDS="$ETCD_PIDS $!"
	done
	for _ in $(seq 150); do
		ectl endpoint health >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	tail -n 5 "$TDIR"/etcd-m*.log | sed 's/^/# etcd: /'
	return 1
}

# etcd_for_lb NAME: a 3-member etcd in its own namespace $NS_ET (client URLs
# in $EP, each member on its own address of that namespace's lo), reached
# from lib.sh's balancer namespace over a veth (fl1 192.0.2.241/30 <-> et1
# .242); stopped and its namespace deleted on exit. For a test that runs
# lib.sh's one balancer in fleet mode (FLEET_CONF holds the lines its config
# needs: every member's URL).
etcd_for_lb() {
	local a
	NS_ET="mget-$ID"
	EP=
	for a in $ETCD_MEMBER_ADDRS; do EP="$EP${EP:+,}http://$a:2379"; done
	FLEET_CONF="fleet_etcd $EP
fleet_prefix /maglev-test/
fleet_node b1"
	trap 'etcd_kill; ip netns del "$NS_ET" 2>/dev/null; cleanup' EXIT
	ip netns add "$NS_ET" || return 1
	etx ip link set lo up &&
		ip link add et1 netns "$NS_ET" type veth peer name fl1 netns "$NS_LB" &&
		etx ip addr add 192.0.2.242/30 dev et1 && etx ip link set et1 up &&
		ip -n "$NS_LB" addr add 192.0.2.241/30 dev fl1 && ip -n "$NS_LB" link set fl1 up ||
		return 1
	for a in $ETCD_MEMBER_ADDRS; do
		etx ip addr add "$a/32" dev lo && ip -n "$NS_LB" route add "$a/32" via 192.0.2.242 ||
			return 1
	done
	start_etcd_cluster "$1"
}

# fleet_if_asked NAME: with TEST_FLEET=1 (set by the *_fleet.sh wrappers of a
# single-balancer test) start etcd_for_lb NAME, so that the test's steps run
# in fleet mode; FLEET_CONF is empty otherwise. For write_conf.
fleet_if_asked() {
	FLEET_CONF=
	[ "${TEST_FLEET:-0}" = 1 ] || return 0
	etcd_require
	etcd_for_lb "$1" || { nok "etcd starts"; t_done; }
}

# hold_proxy: etcd_hold_proxy.py in $NS_ET on 192.0.2.253 (PX), in front of
# the first member, reachable from the balancer's namespace; its hold file
# is $HOLD (see the proxy for what it withholds or garbles). After etcd_for_lb.
hold_proxy() {
	PX=192.0.2.253
	HOLD=$TDIR/hold
	etx ip addr add $PX/32 dev lo && ip -n "$NS_LB" route add $PX/32 via 192.0.2.242 || return 1
	ip netns exec "$NS_ET" /usr/bin/python3 "$ROOT/selftests/daemon/etcd_hold_proxy.py" "$HOLD" \
		"${ETCD_MEMBER_ADDRS%% *}" $PX &
	EXTRA_PIDS="${EXTRA_PIDS:-} $!"
	for _ in $(seq 50); do
		etx curl -sf -X POST -d '{}' http://$PX:2379/v3/maintenance/status >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
