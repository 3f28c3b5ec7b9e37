#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# health_scope fleet's local fail-safe (issue 32 item 3), one balancer with
# real TCP checks to two backends, a 3-member etcd, and two more voters (b2,
# b3: status keys put under a lease, seeing every backend up).
#  - its own checks see every backend down while the fleet keeps them (1 of 3
#    votes): the tables keep them, but this balancer withdraws the VIP
#    (too_few_backends by its own checks) and announces it again when its
#    checks pass;
#  - etcd stopped, then a backend dies: once the fleet's verdicts are older
#    than health_fleet_max_age_ms (3 s here) the table follows the own checks
#    (the backend leaves it), status and metrics say so; etcd back: the
#    fleet's verdicts again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

etcd_require
setup_net || skip_all "cannot create namespaces/veth"
etcd_for_lb failsafe-test || { nok "etcd starts"; t_done; }
TABLE=146
PROTO=235
write_conf "$FLEET_CONF" "health_scope fleet" "health_fleet_max_age_ms 3000" \
	"health_via_encap no" "announce_table $TABLE" "announce_protocol $PROTO" \
	"announce_min_backends 1" "announce_stop_grace_ms 0"
start_daemon || { nok "maglevd starts"; t_done; }
V=192.0.2.50:80/tcp
BE1=198.51.100.51
BE2=198.51.100.52
for a in $BE1 $BE2; do lbx ip addr add $a/32 dev lo; done
listen_tcp "$NS_LB" $BE1 80 && L1=$LPID && listen_tcp "$NS_LB" $BE2 80 && L2=$LPID ||
	nok "listeners on the backends"
ctl vip add $V --check tcp --check-interval 200 --check-timeout 150 --rise 1 --fall 1 >/dev/null
ctl backend add $V $BE1 >/dev/null
ctl backend add $V $BE2 >/dev/null
# The voters publish as balancers do: their down verdicts only (none), at the
# revision that has both backends (an older one may not have had them).
LEASE=$(ectl lease grant 600 | awk '{print $2}')
REV=$(ectl get /maglev-test/ --prefix -w json | jq .header.revision)
for n in b2 b3; do
	ectl put --lease="$LEASE" /maglev-test/nodes/$n \
		"{\"node\":\"$n\",\"health_scope\":\"fleet\",\"health_down_only\":true,\"revision\":$REV,\"health\":{}}" >/dev/null ||
		nok "voter $n"
done
has_route() { lbx ip route show table $TABLE proto $PROTO | grep -q "^blackhole 192.0.2.50 *$"; }
no_route() { ! has_route; }
ann() { ctl -j announce | jq -r ".announce.vips[] | select(.vip == \"$V\") | \"\(.reason): \(.detail)\""; }
check "the VIP is announced" poll_until 5 has_route

# --- own checks see no backend, the fleet keeps them -------------------------------
kill $L1 $L2
own_down() { [ "$(field $V $BE1 .local_verdict)$(field $V $BE2 .local_verdict)" = downdown ]; }
check "both listeners gone: this balancer's checks see both down" poll_until 5 own_down
voters3() { ctl -j status | jq -e '[.fleet.health[] | select(.voters == 3)] | length == 2' >/dev/null; }
check "... three voters, 1 of 3 sees them down: the fleet keeps them" poll_until 5 voters3
check "... both stay in the table ($(slots $V $BE1) and $(slots $V $BE2) slots)" \
	[ "$(slots $V $BE1)" -gt 0 -a "$(slots $V $BE2)" -gt 0 ]
check "... but this balancer withdraws the VIP (by its own checks)" poll_until 5 no_route
diag "$(ann)"
by_own() { ann | grep -q "^too_few_backends: 0 of 2 backends usable by this balancer's own checks"; }
check "... reason too_few_backends, by its own checks" by_own
listen_tcp "$NS_LB" $BE1 80 && L1=$LPID && listen_tcp "$NS_LB" $BE2 80 && L2=$LPID ||
	nok "listeners back"
check "listeners back: announced again" poll_until 5 has_route

# --- etcd gone, then a backend dies -------------------------------------------------
etcd_kill
ETCD_PIDS=
kill $L1
fallback() { ctl -j status | jq -e '.fleet.health_fallback' >/dev/null; }
check "etcd stopped: after health_fleet_max_age_ms the balancer follows its own checks" poll_until 10 fallback
out1() { [ "$(slots $V $BE1)" = 0 ] && [ "$(slots $V $BE2)" -gt 0 ]; }
check "... $BE1, dead, leaves the table ($(slots $V $BE1) slots)" poll_until 5 out1
check "... status says so" bash -c "$MAGLEVCTL status | grep -q 'HEALTH FALLBACK'"
check "... and the metrics" \
	bash -c "ip netns exec $NS_LB curl -sf http://127.0.0.1:$METRICS_PORT/metrics | grep -qx 'maglev_fleet_health_fallback 1'"
check "... still announced: one backend usable" has_route
start_etcd_cluster failsafe-test || nok "etcd back"
fresh() { ! fallback; }
check "etcd back: the fleet's verdicts again" poll_until 15 fresh
check "... logged" grep -q "verdicts are fresh again" "$DLOG"
t_done
