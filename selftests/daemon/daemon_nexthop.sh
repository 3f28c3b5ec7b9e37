#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# nexthop_mac auto against a real kernel neighbour table: maglevd starts
# with an empty one (it has the gateway resolved, as at boot), waits a
# bounded time for a gateway that is not up yet and names it when it never
# answers, follows the gateway's MAC into the datapath config when it
# changes (announced or not), keeps it through reloads while the gateway
# does not answer, takes the first nexthop of an ECMP default route, and
# refuses a default route on an interface it does not attach to.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
GW=203.0.113.2

# The MAC in the live datapath config map, as aa:bb:cc:dd:ee:ff.
cfg_mac() {
	bpftool -j map lookup pinned "$PIN/maglev_cfg" key 0 0 0 0 2>/dev/null |
		jq -r '.formatted.value.nexthop_mac | map(. as $b | "0123456789abcdef" | .[($b / 16 | floor):($b / 16 | floor) + 1] + .[($b % 16):($b % 16) + 1]) | join(":")'
}
gw_neigh() { lbx ip neigh show $GW dev lb0; }
# wait_for SECONDS CMD...: poll CMD every 0.1 s; prints the seconds it took.
wait_for() {
	local limit=$1 t0 now
	shift
	t0=$(date +%s%N)
	while :; do
		if "$@"; then
			now=$(date +%s%N)
			echo "$(((now - t0) / 1000000))"
			return 0
		fi
		now=$(date +%s%N)
		[ $(((now - t0) / 1000000)) -ge $((limit * 1000)) ] && return 1
		sleep 0.1
	done
}
mac_is() { [ "$(cfg_mac)" = "$1" ]; }

# start_slow SECONDS: start_daemon with a longer bound (the daemon waits for ARP first).
start_slow() {
	nsenter --net="/run/netns/$NS_LB" "$MAGLEVD" -c "$CONF" >>"$DLOG" 2>&1 &
	DPID=$!
	wait_for "$1" bash -c "$MAGLEVCTL status >/dev/null 2>&1 || ! kill -0 $DPID 2>/dev/null" >/dev/null &&
		ctl status >/dev/null 2>&1 && return 0
	diag "maglevd did not come up; log:"
	sed 's/^/# /' "$DLOG"
	kill -9 "$DPID" 2>/dev/null
	DPID=
	return 1
}
# run_refused SECONDS LOGFILE: maglevd must exit 1 within SECONDS; prints how long it took.
run_refused() {
	local t0 rc
	t0=$(date +%s%N)
	timeout "$1" nsenter --net="/run/netns/$NS_LB" "$MAGLEVD" -c "$CONF" >"$2" 2>&1
	rc=$?
	echo "$rc $((($(date +%s%N) - t0) / 1000000))"
}

# Short neighbour timers on the balancer, so the kernel revalidates its entry
# within seconds rather than minutes: REACHABLE for 0.25-0.75 s after a
# confirmation, then, if used (maglevd uses it every second for the XDP
# traffic the kernel does not see), 1 s DELAY and unicast probes; unanswered
# (the old MAC is gone) it fails, and the next use solicits it afresh.
for kv in base_reachable_time_ms=500 delay_first_probe_time=1 retrans_time_ms=200 ucast_solicit=2; do
	lbx sysctl -qw "net.ipv4.neigh.lb0.$kv"
done

# --- boot: empty neighbour tables, the gateway still down --------------------
lbx ip neigh del $GW dev lb0
clx ip neigh del 203.0.113.1 dev c0
check "the balancer has no neighbour entry for its gateway before maglevd starts" \
	[ -z "$(gw_neigh)" ]
clx ip link set c0 down
(sleep 2 && ip netns exec "$NS_CL" ip link set c0 up) &
EXTRA_PIDS=$!
if start_slow 20; then
	ok "maglevd starts with an empty neighbour table and a gateway that comes up 2 s later"
else
	nok "maglevd starts with an empty neighbour table and a gateway that comes up 2 s later"
	t_done
fi
wait "$EXTRA_PIDS" 2>/dev/null
EXTRA_PIDS=
check "it had the kernel resolve the gateway (log)" \
	grep -q "next hop: resolving gateway $GW on lb0" "$DLOG"
check "it logged the MAC it took: the gateway's ($CL_MAC)" \
	grep -q "next hop: gateway $GW on lb0 is $CL_MAC" "$DLOG"
check "the datapath config holds the gateway's MAC" mac_is "$CL_MAC"
check "the kernel's entry for the gateway is now resolved" \
	bash -c "ip netns exec $NS_LB ip neigh show $GW dev lb0 | grep -q 'lladdr $CL_MAC'"

# --- the gateway changes its MAC without telling anyone -----------------------
clx sysctl -qw net.ipv4.conf.c0.arp_notify=0
NEW1=02:00:00:00:53:01
clx ip link set c0 address $NEW1
if took=$(wait_for 20 mac_is $NEW1); then
	ok "unannounced gateway MAC change followed into the datapath config in ${took} ms"
else
	nok "unannounced gateway MAC change followed into the datapath config (still $(cfg_mac); neigh: $(gw_neigh))"
fi
check "the change is logged" grep -q "next hop: gateway $GW on lb0 is now $NEW1" "$DLOG"

# --- the gateway announces its new MAC (gratuitous ARP, as after a failover) ----
# Long timers again (the entry stays REACHABLE for 15-45 s after its next
# confirmation), so only the announcement can make the change seen at once.
lbx sysctl -qw net.ipv4.neigh.lb0.base_reachable_time_ms=30000
sleep 2.5
clx sysctl -qw net.ipv4.conf.c0.arp_notify=1
NEW2=02:00:00:00:53:02
clx ip link set c0 address $NEW2
if took=$(wait_for 5 mac_is $NEW2); then
	ok "announced gateway MAC change followed into the datapath config in ${took} ms"
else
	nok "announced gateway MAC change followed into the datapath config (still $(cfg_mac); neigh: $(gw_neigh))"
fi
check "the daemon is still serving" bash -c "$MAGLEVCTL status >/dev/null"

# --- reloads while the gateway does not answer -------------------------------
# The follower keeps the last MAC while the gateway is gone; a reload (here
# one that only changes the log level) takes that MAC and is done at once,
# not after waiting in the event loop for an answer and then refused.
# reload_quick WHAT: SIGHUP, then the reload must be logged within 3 s.
reload_quick() {
	local n0 took
	n0=$(grep -c "configuration reloaded" "$DLOG")
	kill -HUP "$DPID"
	if took=$(wait_for 3 bash -c "[ \$(grep -c 'configuration reloaded' $DLOG) -gt $n0 ]"); then
		ok "reload $1: done in ${took} ms"
	else
		nok "reload $1: not done within 3 s; log: $(tail -3 "$DLOG" | tr '\n' ' ')"
	fi
	check "reload $1: the control socket answers within 1 s" bash -c "timeout 1 $MAGLEVCTL status >/dev/null"
	check "reload $1: the datapath keeps the gateway's last MAC" mac_is $NEW2
}
clx ip link set c0 down
lbx ip neigh del $GW dev lb0 2>/dev/null
write_conf "log_level debug"
reload_quick "with the gateway's neighbour entry gone and the gateway down"
lbx ip route del default
write_conf "log_level info"
reload_quick "with no default route"
check "no reload was refused" bash -c "! grep -q 'reload failed' $DLOG"
lbx ip route replace default via $GW dev lb0
clx ip link set c0 up
stop_daemon

# --- ECMP default route: the first nexthop ------------------------------------
lbx ip link add lb1 type veth peer name lb1p
lbx ip addr add 198.51.100.1/24 dev lb1
lbx ip link set lb1 up
lbx ip link set lb1p up
lbx ip neigh replace 198.51.100.2 lladdr 02:00:00:00:64:02 dev lb1 nud permanent
lbx ip route replace default nexthop via $GW dev lb0 nexthop via 198.51.100.2 dev lb1
check "set-up: the default route is an ECMP route" \
	bash -c "ip netns exec $NS_LB ip route show default | grep -q nexthop"
if start_slow 15; then
	check "ECMP default route: the first nexthop's MAC is taken and said so" \
		grep -q "next hop: gateway $GW on lb0 (first nexthop of the ECMP default route) is $NEW2" "$DLOG"
	check "ECMP default route: the datapath config holds it" mac_is $NEW2
else
	nok "maglevd starts with an ECMP default route"
fi
stop_daemon
lbx ip route replace default nexthop via 198.51.100.2 dev lb1 nexthop via $GW dev lb0
read -r rc ms <<<"$(run_refused 20 "$TDIR/ecmp.log")"
check "ECMP default route whose first nexthop is on another interface: refused (rc $rc, ${ms} ms)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'gateway 198.51.100.2 is on lb1, not on an interface maglevd attaches to' $TDIR/ecmp.log"

# --- a default route through an interface maglevd does not attach to ---------
lbx ip route replace default via 198.51.100.2 dev lb1
read -r rc ms <<<"$(run_refused 20 "$TDIR/oif.log")"
check "default route on another interface: refused at once with a clear error (rc $rc, ${ms} ms)" \
	bash -c "[ $rc -eq 1 ] && [ $ms -lt 5000 ] && grep -q 'nexthop_mac auto: the default route.s gateway 198.51.100.2 is on lb1, not on an interface maglevd attaches to' $TDIR/oif.log"
check "and nothing was attached to lb1" \
	bash -c "! ip netns exec $NS_LB ip link show lb1 | grep -q xdp"

# --- a gateway that never answers: refused after the bound -------------------
lbx ip route replace default via $GW dev lb0
lbx ip neigh del $GW dev lb0 2>/dev/null
clx ip link set c0 down
read -r rc ms <<<"$(run_refused 30 "$TDIR/dead.log")"
check "a gateway that never answers: refused after the 10 s bound (rc $rc, ${ms} ms)" \
	bash -c "[ $rc -eq 1 ] && [ $ms -ge 9500 ] && [ $ms -lt 20000 ] && grep -q 'gateway $GW on lb0 did not answer ARP/ND within 10 s' $TDIR/dead.log"
t_done
