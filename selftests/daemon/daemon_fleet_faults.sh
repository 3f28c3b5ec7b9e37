#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The smaller fleet defects of issue 32 item 11, against a 3-member etcd. The
# balancer's only endpoint is a proxy in front of member 1
# (etcd_hold_proxy.py), which can garble a watch message or withhold answers.
#  - a watch message that is not JSON forces a full read: the change it
#    carried is applied (it used to be skipped as a keep-alive);
#  - a second balancer with the same fleet_node does not overwrite the
#    first's status key: it says so, naming both, and the key keeps the
#    first's lease;
#  - range reads that block 5 s (the proxy withholds their answers) do not
#    let the status key's lease expire: the keepalive has its own thread;
#  - a full read that runs out of memory (MAGLEVD_TEST_FLEET_OOM) applies
#    nothing: every VIP stays, and the next read applies the whole state.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
setup_net || skip_all "cannot create namespaces/veth"
etcd_for_lb faults-test || { nok "etcd starts"; t_done; }
NS_B2="mgb2-$ID"
trap 'etcd_kill; kill_own KILL ${B2_PID:-}; ip netns del "$NS_ET" 2>/dev/null; ip netns del "$NS_B2" 2>/dev/null; rm -rf "$PIN-b2"; cleanup' EXIT
# The proxy (etcd_hold_proxy.py): garbles or withholds on request.
hold_proxy || skip_all "cannot start the proxy in front of etcd"

write_conf "fleet_etcd http://$PX:2379" "fleet_prefix /maglev-test/" "fleet_node b1"
start_daemon || { nok "maglevd starts"; t_done; }
V1=192.0.2.10:80/tcp
V2=192.0.2.11:80/tcp
KEY=/maglev-test/nodes/b1
applied() { ctl -j status | jq .fleet.revision; }
nvips() { ctl -j vip list | jq '.vips | length'; }
ctl vip add $V1 --check none >/dev/null || nok "a VIP written through etcd"

# --- a watch message that is not JSON --------------------------------------------------
touch "$HOLD.garble"
R=$(ectl put -w json /maglev-test/vips/$V2 \
	"[{\"cmd\":\"vip.add\",\"vip\":\"$V2\"},{\"cmd\":\"backend.add\",\"vip\":\"$V2\",\"backend\":\"198.51.100.1\",\"weight\":1}]" |
	jq -r .header.revision)
check "the proxy garbled the watch message of revision $R" poll_until 5 test -s "$HOLD.garbled"
check "... and the balancer applied revision $R all the same (it is at $(applied))" \
	poll_until 5 [ "$(applied)" = "$R" ]
check "... both VIPs there" [ "$(nvips)" = 2 ]
rm -f "$HOLD.garble"

# --- two balancers with one fleet_node ---------------------------------------------------
poll_until 5 bash -c "[ -n \"\$(ip netns exec $NS_ET etcdctl --endpoints=$EP get $KEY --print-value-only)\" ]" ||
	nok "balancer 1 published its status"
lease() { ectl get -w json $KEY | jq -r '.kvs[0].lease // "none"'; }
L1=$(lease)
ip netns add "$NS_B2" && ip -n "$NS_B2" link set lo up &&
	ip link add et2 netns "$NS_ET" type veth peer name fl2 netns "$NS_B2" &&
	etx ip addr add 192.0.2.246/30 dev et2 && etx ip link set et2 up &&
	ip -n "$NS_B2" addr add 192.0.2.245/30 dev fl2 && ip -n "$NS_B2" link set fl2 up &&
	ip -n "$NS_B2" route add 192.0.2.252/32 via 192.0.2.246 || nok "a namespace for balancer 2"
cat >"$TDIR/b2.conf" <<EOC
seed 0123456789abcdef0123456789abcdef
nexthop_mac 02:00:00:00:00:01
pin_dir $PIN-b2
state_file $TDIR/state-b2.json
control_socket $TDIR/b2.sock
metrics_listen 127.0.0.1:$((METRICS_PORT + 2))
health_check none
fleet_etcd http://192.0.2.252:2379
fleet_prefix /maglev-test/
fleet_node b1
EOC
nsenter --net="/run/netns/$NS_B2" "$MAGLEVD" -c "$TDIR/b2.conf" >>"$TDIR/b2.log" 2>&1 &
B2_PID=$!
conflict() { ctl -s "$TDIR/b2.sock" -j status 2>/dev/null | jq -r '.fleet.node_conflict // empty'; }
names_both() { conflict | grep -q "pin_dir $PIN-b2)" && conflict | grep -q "pin_dir $PIN)"; }
check "a second balancer named b1 says its fleet_node is taken, naming both" poll_until 10 names_both
diag "$(conflict)"
check "... in its log" grep -q "fleet_node b1 is taken by another balancer" "$TDIR/b2.log"
check "... metric maglev_fleet_node_conflict 1" \
	bash -c "ip netns exec $NS_B2 curl -sf http://127.0.0.1:$((METRICS_PORT + 2))/metrics | grep -qx 'maglev_fleet_node_conflict 1'"
check "... and the status key keeps balancer 1's lease ($L1, now $(lease))" [ "$(lease)" = "$L1" ]
kill -TERM $B2_PID && wait $B2_PID
B2_PID=
check "... also after the second one stopped (revoking its own lease)" \
	bash -c "[ '$(lease)' = '$L1' ] && [ '$(ectl get -w json $KEY | jq -r '.kvs[0].value' | base64 -d | jq -r .pid)' = '$DPID' ]"

# --- reads that block 5 s: the lease lives ---------------------------------------------
etx etcdctl --endpoints="${EP#*,}" watch $KEY >"$TDIR/watch.txt" 2>&1 &
EXTRA_PIDS="$EXTRA_PIDS $!"
echo /v3/kv/range >"$HOLD"
# 15 s: three times the lease's 5 s, with the publisher's reads of the
# balancers' statuses each held 5 s.
end=$((SECONDS + 15))
gone=0
while [ $SECONDS -le $end ]; do
	[ "$(lease)" = none ] && gone=$((gone + 1))
	sleep 0.5
done
check "reads held for 15 s ($(wc -l <"$HOLD.seen" 2>/dev/null || echo 0) held): the status key was always there" \
	[ $gone = 0 -a -s "$HOLD.seen" ]
check "... no delete of it (lease expiry) seen by a watch" bash -c "! grep -q DELETE $TDIR/watch.txt"
rm -f "$HOLD"

# --- a full read out of memory ---------------------------------------------------------
R=$(applied)
kill9_daemon
DAEMON_PREFIX="env MAGLEVD_TEST_FLEET_OOM=2" start_daemon || nok "maglevd restarts with the hook"
check "a full read ran out of memory at its second key" \
	poll_until 10 grep -q "out of memory holding the 2 keys read from etcd" "$DLOG"
connected() { ctl -j status | jq -e ".fleet.connected and .fleet.revision == $R" >/dev/null; }
check "... read again: connected at revision $R" poll_until 10 connected
check "... both VIPs still there, none deleted ($(nvips))" [ "$(nvips)" = 2 ]
check "... in the state file too" [ "$(jq '.vips | length' "$STATE")" = 2 ]
t_done
