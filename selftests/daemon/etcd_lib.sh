# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# One etcd member for the fleet tests (daemon_fleet.sh, daemon_fleet_health.sh,
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
