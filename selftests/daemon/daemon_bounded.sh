#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Bounded loads (issue 19) through the daemon: --balance-factor on vip add
# and vip set, refused outside its range (nothing changes), shown, saved and
# restored across a restart. The datapath's spill is tested in
# selftests/xdp/xdp_bounded_test.c, the cap with real traffic in
# daemon_bounded_traffic.sh.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

ON=192.0.2.30:7000/udp
OFF=192.0.2.31:7000/udp
BES="198.51.100.1 198.51.100.2 198.51.100.3 198.51.100.4"

check "vip add --balance-factor 1.25" ctl vip add $ON --balance-factor 1.25
check "vip add without it" ctl vip add $OFF
for v in $ON $OFF; do
	for b in $BES; do ctl backend add $v $b || nok "backend add $v $b"; done
done
check "vip show -j: balance_factor 1.25" [ "$(ctl -j vip show $ON | jq .vip.balance_factor)" = 1.25 ]
check "vip show -j: none when off" [ "$(ctl -j vip show $OFF | jq .vip.balance_factor)" = null ]
check "vip show text names it" bash -c "$MAGLEVCTL vip show $ON | grep -q 'balance-factor 1.25'"
check "save carries --balance-factor" bash -c "$MAGLEVCTL save | grep -q '^vip add $ON --balance-factor 1.25'"
reject "balance factor 1 (no room over the mean)" vip set $ON --balance-factor 1
reject "balance factor 0.5" vip add 192.0.2.32:7000/udp --balance-factor 0.5
reject "balance factor 11" vip set $ON --balance-factor 11
reject "balance factor not a number" vip set $ON --balance-factor lots
check "vip set --balance-factor off, then 1.25 again" \
	bash -c "$MAGLEVCTL vip set $OFF --balance-factor 2 && $MAGLEVCTL vip set $OFF --balance-factor off"
check "stats -j: new_flow_spilled per VIP (0: no traffic)" \
	[ "$(ctl -j stats $ON | jq '.vips[0].new_flow_spilled')" = 0 ]
check "off: gone from vip show" [ "$(ctl -j vip show $OFF | jq .vip.balance_factor)" = null ]

stop_daemon
start_daemon || { nok "maglevd restarts"; t_done; }
check "restored from the state file after a restart" \
	[ "$(ctl -j vip show $ON | jq .vip.balance_factor)" = 1.25 ]

t_done
