# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# One etcd member for the fleet tests (daemon_fleet.sh, daemon_fleet_health.sh,
# daemon_second_chance_fleet.sh, daemon_vip_options_fleet.sh, daemon_fleet_expect.sh,
# daemon_fleet_rollback.sh),
# sourced after lib.sh: it runs in namespace $NS_ET with client URL $EP,
# keeps its data in $TDIR/etcd and logs to $TDIR/etcd.log. ETCD_PID is its
# pid for the test's cleanup.

# etcd_require: skip the whole test when etcd or etcdctl is missing.
etcd_require() {
	command -v etcd >/dev/null && command -v etcdctl >/dev/null ||
		skip_all "etcd/etcdctl missing (scripts/install-deps installs etcd-server, etcd-client)"
}

# etcd_kill: for the test's cleanup; nothing when etcd is not running.
etcd_kill() {
	[ -n "$ETCD_PID" ] && kill -9 "$ETCD_PID" 2>/dev/null
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

# etcd_for_lb NAME: etcd in its own namespace $NS_ET (client URL $EP on its
# lo, 192.0.2.254), reached from lib.sh's balancer namespace over a veth
# (fl1 192.0.2.241/30 <-> et1 .242); it is stopped and its namespace deleted
# on exit. For a test that runs lib.sh's one balancer in fleet mode
# (FLEET_CONF holds the lines its config needs).
etcd_for_lb() {
	NS_ET="mget-$ID"
	EP=http://192.0.2.254:2379
	FLEET_CONF="fleet_etcd $EP
fleet_prefix /maglev-test/
fleet_node b1"
	trap 'etcd_kill; ip netns del "$NS_ET" 2>/dev/null; cleanup' EXIT
	ip netns add "$NS_ET" || return 1
	etx ip link set lo up && etx ip addr add 192.0.2.254/32 dev lo &&
		ip link add et1 netns "$NS_ET" type veth peer name fl1 netns "$NS_LB" &&
		etx ip addr add 192.0.2.242/30 dev et1 && etx ip link set et1 up &&
		ip -n "$NS_LB" addr add 192.0.2.241/30 dev fl1 && ip -n "$NS_LB" link set fl1 up &&
		ip -n "$NS_LB" route add 192.0.2.254/32 via 192.0.2.242 || return 1
	start_etcd "$1"
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
