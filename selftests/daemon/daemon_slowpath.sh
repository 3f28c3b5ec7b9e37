#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# maglevd mirrors its VIPs, backends and tables into the slow-path kernel
# module (runs in the 6.1 VM, where the module is loaded): the module holds
# each VIP with the XDP table's generation, picks the same backend as the
# live XDP table for every flow, forgets deleted VIPs, and gets everything
# again from a daemon restarted after SIGKILL. A --second-chance VIP's
# previous owners reach the module with the table and leave it when the
# window ends. Bounded-load marks a previous daemon left in the module are
# replaced by the restarted daemon's.
. "$(dirname "$0")/lib.sh"

[ -d /sys/module/maglev_slowpath ] || skip_all "slow-path module not loaded (runs in the VM)"
QUERY=$ROOT/build/selftests/daemon/slowpath_query
[ -x "$QUERY" ] || skip_all "build/selftests/daemon/slowpath_query missing"
setup_net || skip_all "cannot create namespaces/veth"
write_conf "second_chance_ms 2000"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"
q() { lbx "$QUERY" "$@"; }

V=192.0.2.10:80/tcp
ctl vip add $V
for i in 1 2 3; do ctl backend add $V 198.51.100.$i; done
ctl vip add '[2001:db8::10]:443/tcp' --encap gue
ctl backend add '[2001:db8::10]:443/tcp' 2001:db8::5
gen=$(ctl -j table $V | jq .table_gen)
check "module holds the VIP with the XDP table's generation ($gen)" \
	bash -c "ip netns exec $NS_LB $QUERY vips | grep -qx '$V $gen'"
check "module holds the IPv6 GUE VIP with a table" \
	bash -c "ip netns exec $NS_LB $QUERY vips | grep -q '^\[2001:db8::10\]:443/tcp [0-9]'"

agree() {
	local n=0 p want got
	for p in $(seq 40000 40019); do
		want=$(ctl -j lookup $V 203.0.113.9:$p | jq -r .table_backend)
		want=$(ctl -j backend list $V | jq -r --arg b "$want" '.backends[] | select(.backend == $b) | .index')
		got=$(q lookup $V 203.0.113.9:$p | cut -d' ' -f1)
		[ "$want" = "$got" ] && n=$((n + 1))
	done
	echo $n
}
check "module and XDP table pick the same backend for 20 flows" [ "$(agree)" -eq 20 ]
check "metrics: maglev_slowpath_in_sync 1" \
	bash -c "ip netns exec $NS_LB curl -sf http://127.0.0.1:$METRICS_PORT/metrics | grep -qx 'maglev_slowpath_in_sync 1'"
check "stats -j shows the module's counters" \
	bash -c "ip netns exec $NS_LB $MAGLEVCTL -j stats | jq -e '(.slowpath.forwarded | type) == \"number\" and (.slowpath | has(\"drop_no_route\"))' >/dev/null"
check "stats shows the slow-path block" \
	bash -c "ip netns exec $NS_LB $MAGLEVCTL stats | grep -q 'slow path (kernel module):'"
check "metrics export the module's counters" \
	bash -c "ip netns exec $NS_LB curl -sf http://127.0.0.1:$METRICS_PORT/metrics | grep -q '^maglev_slowpath_packets_total{reason=\"forwarded\"} [0-9]'"
ctl backend set $V 198.51.100.2 --drain
check "after a drain the module gets the new table (generation +1)" \
	bash -c "[ \$(ip netns exec $NS_LB $QUERY vips | grep '^$V ' | cut -d' ' -f2) -eq $((gen + 1)) ]"
check "module picks still agree after the change" [ "$(agree)" -eq 20 ]
# Second chance: backend 2 takes slots from backend 1, which stays their
# previous owner in the module until the window (second_chance_ms) ends.
S=192.0.2.11:80/tcp
idx() { ctl -j backend list $S | jq -r --arg b "$1" '.backends[] | select(.backend == $b) | .index'; }
ctl vip add $S --encap gue --second-chance --check none
ctl backend add $S 198.51.100.1
ctl backend add $S 198.51.100.2
q lookup $S 203.0.113.9:41000 40 >"$TDIR/sc.txt"
b1=$(idx 198.51.100.1)
b2=$(idx 198.51.100.2)
# Flows with a previous owner; of those, any not backend 2 with backend 1.
with=$(awk '$3 != 0' "$TDIR/sc.txt" | wc -l)
bad=$(awk -v b1="$b1" -v b2="$b2" '$3 != 0 && ($3 != b1 || $1 != b2)' "$TDIR/sc.txt" | wc -l)
check "second chance: the module holds backend 1 as previous owner ($with of 40 flows, $bad wrong)" \
	[ "$with" -gt 0 -a "$bad" = 0 ]
check "second chance: the window's end clears them in the module" \
	bash -c "for i in \$(seq 50); do ip netns exec $NS_LB $QUERY lookup $S 203.0.113.9:41000 40 | awk '\$3 != 0 { n++ } END { exit n > 0 }' && exit 0; sleep 0.2; done; exit 1"
ctl vip del $S

ctl vip del '[2001:db8::10]:443/tcp'
check "a deleted VIP leaves the module" bash -c "! ip netns exec $NS_LB $QUERY vips | grep -q 2001:db8::10"

# Bounded loads: over-cap marks in the module (set here behind the daemon's
# back, as a previous maglevd's would be left) move its flows off backend 1.
b1=$(ctl -j backend list $V | jq -r '.backends[] | select(.backend == "198.51.100.1") | .index')
on_b1() { q lookup $V 203.0.113.9:40000 20 | awk -v b="$b1" '$1 == b' | wc -l; }
before=$(on_b1)
q overcap "$b1"
after=$(on_b1)
check "marked backend $b1 in the module: its flows probe elsewhere ($before of 20 on it, then $after)" \
	[ "$before" -gt 0 -a "$after" -lt "$before" ]

# A restarted daemon pushes everything again (and bumps the generation),
# including its own marks (none: no --balance-factor VIP), clearing those.
kill9_daemon
start_daemon
check "after SIGKILL and restart the module is in sync again" \
	bash -c "for i in \$(seq 30); do ip netns exec $NS_LB $QUERY vips | grep -q '^$V [0-9]' && exit 0; sleep 0.2; done; exit 1"
check "module picks agree with the restarted daemon's table (marks cleared)" [ "$(agree)" -eq 20 ]
stop_daemon
t_done
