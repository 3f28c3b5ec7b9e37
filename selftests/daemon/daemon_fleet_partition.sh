#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A watch on a partitioned etcd member (issue 32 item 7). A 3-member etcd:
# m1 in a namespace of its own (so that its peer traffic can be cut while its
# client URL stays reachable), m2 and m3 in another. The balancer's first
# endpoint is m1. m1 is cut off from its peers (nft drops port 2380 in its
# namespace), then a change is written through m2: m1 never sees it (its
# serializable read says so), and its watch stays open and silent. The
# balancer must notice (linearizable reads on the member it watches fail; the
# gateway's require-leader header makes a leaderless member refuse), move to
# another member, and apply the change; status names the endpoint and how
# fresh the input is (input_age_ms, maglev_fleet_input_age_seconds).
#
#   NS_M1: lo 192.0.2.254 (m1), m1a 192.0.2.234/30 <-> NS_ET m1b .233
#   NS_ET: lo 192.0.2.252 (m2), 192.0.2.251 (m3), et1 192.0.2.242/30 <-> NS_LB fl1 .241
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
command -v nft >/dev/null || skip_all "machine: nft missing"
setup_net || skip_all "cannot create namespaces/veth"
NS_ET="mget-$ID"
NS_M1="mgm1-$ID"
ETCD_PIDS=
trap 'etcd_kill; ip netns del "$NS_ET" 2>/dev/null; ip netns del "$NS_M1" 2>/dev/null; cleanup' EXIT
M1=192.0.2.254
M2=192.0.2.252
M3=192.0.2.251
m1x() { ip netns exec "$NS_M1" "$@"; }
ip netns add "$NS_ET" && ip netns add "$NS_M1" || skip_all "cannot create namespaces"
etx ip link set lo up && m1x ip link set lo up &&
	etx ip addr add $M2/32 dev lo && etx ip addr add $M3/32 dev lo && m1x ip addr add $M1/32 dev lo &&
	ip link add m1b netns "$NS_ET" type veth peer name m1a netns "$NS_M1" &&
	etx ip addr add 192.0.2.233/30 dev m1b && etx ip link set m1b up &&
	m1x ip addr add 192.0.2.234/30 dev m1a && m1x ip link set m1a up &&
	m1x ip route add default via 192.0.2.233 && etx ip route add $M1/32 via 192.0.2.234 &&
	etx sysctl -qw net.ipv4.ip_forward=1 &&
	ip link add et1 netns "$NS_ET" type veth peer name fl1 netns "$NS_LB" &&
	etx ip addr add 192.0.2.242/30 dev et1 && etx ip link set et1 up &&
	ip -n "$NS_LB" addr add 192.0.2.241/30 dev fl1 && ip -n "$NS_LB" link set fl1 up ||
	skip_all "cannot set up the etcd namespaces"
for a in $M1 $M2 $M3; do ip -n "$NS_LB" route add $a/32 via 192.0.2.242; done

CLUSTER="m1=http://$M1:2380,m2=http://$M2:2380,m3=http://$M3:2380"
n=0
for a in $M1 $M2 $M3; do
	n=$((n + 1))
	ns=$NS_ET
	[ $n = 1 ] && ns=$NS_M1
	ip netns exec "$ns" etcd --name m$n --data-dir "$TDIR/etcd-m$n" \
		--listen-client-urls "http://$a:2379" --advertise-client-urls "http://$a:2379" \
		--listen-peer-urls "http://$a:2380" --initial-advertise-peer-urls "http://$a:2380" \
		--initial-cluster "$CLUSTER" --initial-cluster-token "part-$ID" \
		--initial-cluster-state new >>"$TDIR/etcd-m$n.log" 2>&1 &
	ETCD_PIDS="$ETCD_PIDS $!"
done
EP=http://$M2:2379
healthy() { etx etcdctl --endpoints=http://$M1:2379,$EP,http://$M3:2379 endpoint health >/dev/null 2>&1; }
for _ in $(seq 150); do healthy && break; sleep 0.1; done
check "three etcd members, m1 in its own namespace, are healthy" healthy

write_conf "fleet_etcd http://$M1:2379,http://$M2:2379,http://$M3:2379" \
	"fleet_prefix /maglev-test/" "fleet_node b1"
start_daemon || { nok "maglevd starts"; t_done; }
st() { ctl -j status; }
V1=192.0.2.10:80/tcp
V2=192.0.2.11:80/tcp
ctl vip add $V1 --check none >/dev/null || nok "a VIP written through etcd"
on_m1() { [ "$(st | jq -r .fleet.endpoint)" = "http://$M1:2379" ]; }
check "the balancer reads etcd from m1 ($(st | jq -r .fleet.endpoint))" on_m1
check "... its input is fresh: input_age_ms $(st | jq .fleet.input_age_ms) < 3000" \
	poll_until 3 bash -c "[ \$($MAGLEVCTL -j status | jq .fleet.input_age_ms) -lt 3000 ]"

# Cut m1 off from its peers; its client URL stays reachable.
m1x nft -f - <<'NFT' || nok "nft cuts m1's peer traffic"
table inet partition {
	chain in { type filter hook input priority 0; tcp dport 2380 drop; tcp sport 2380 drop; }
	chain out { type filter hook output priority 0; tcp dport 2380 drop; tcp sport 2380 drop; }
}
NFT
for _ in $(seq 100); do
	etx etcdctl --endpoints=$EP,http://$M3:2379 --command-timeout=2s put /maglev-test/probe x >/dev/null 2>&1 && break
	sleep 0.1
done
t0=$(date +%s%N)
R=$(etx etcdctl --endpoints=$EP --command-timeout=3s put -w json /maglev-test/vips/$V2 \
	"[{\"cmd\":\"vip.add\",\"vip\":\"$V2\"}]" | jq -r .header.revision)
diag "change written through m2 at revision $R"
check "m1 is cut off: its own (serializable) read does not have the change" \
	bash -c "[ -z \"\$(ip netns exec $NS_M1 etcdctl --endpoints=http://$M1:2379 --consistency=s get /maglev-test/vips/$V2 --print-value-only)\" ]"
applied() { [ "$(st | jq .fleet.revision)" = "$R" ]; }
check "the balancer left the cut-off m1 and applied revision $R" poll_until 20 applied
ms=$((($(date +%s%N) - t0) / 1000000))
diag "applied $ms ms after the write; endpoint $(st | jq -r .fleet.endpoint); log:"
grep "fleet" "$DLOG" | tail -5 | sed 's/^/# /'
check "... both VIPs there" [ "$(ctl -j vip list | jq '.vips | length')" = 2 ]
ep=$(st | jq -r .fleet.endpoint)
check "... status names the endpoint it reads now, not m1 ($ep)" \
	[ "$ep" = "http://$M2:2379" -o "$ep" = "http://$M3:2379" ]
fresh() { [ "$(st | jq '.fleet.connected and .fleet.input_confirmed and .fleet.input_age_ms < 3000')" = true ]; }
check "... connected, input fresh again ($(st | jq .fleet.input_age_ms) ms)" poll_until 5 fresh
check "... metric maglev_fleet_input_age_seconds" \
	bash -c "ip netns exec $NS_LB curl -sf http://127.0.0.1:$METRICS_PORT/metrics | grep -q '^maglev_fleet_input_age_seconds [0-9.]*$'"
t_done
