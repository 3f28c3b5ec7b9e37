#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# An IPv6 VIP needs an mtu of at least 1332: its clients cannot take a
# packet-too-big under 1280 (RFC 8200), and the outer headers take up to 52
# bytes. maglevd refuses, naming the VIP and the figures, an IPv6 VIP under a
# smaller mtu, a reload to a smaller mtu (configured, or the interface's) while
# an IPv6 VIP exists, and a start that would combine them; each refusal
# changes nothing. IPv4 VIPs keep working with such an mtu.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
V6='[2001:db8::10]:80/tcp'
V4=192.0.2.10:80/tcp

write_conf "mtu 1300"
start_daemon || { nok "maglevd starts with mtu 1300"; t_done; }
before=$(snapshot)
out=$("$MAGLEVCTL" vip add "$V6" 2>&1)
rc=$?
check "mtu 1300: an IPv6 VIP is refused (exit 1) with the figures ($out)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'datapath mtu 1300 is below 1332' <<<'$out'"
check "... and nothing changed" [ "$(snapshot)" = "$before" ]
check "an IPv4 VIP is accepted under mtu 1300" ctl vip add $V4
stop_daemon

write_conf
start_daemon || { nok "maglevd starts with the interface's mtu"; t_done; }
check "with the interface's mtu (1500) the IPv6 VIP is accepted" ctl vip add "$V6"
write_conf "mtu 1300"
before=$(snapshot)
out=$("$MAGLEVCTL" reload 2>&1)
rc=$?
check "reload to mtu 1300 with an IPv6 VIP: refused (exit 1) naming it ($out)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'mtu 1300 is below 1332, the least an IPv6 VIP (\[2001:db8::10\]:80/tcp)' <<<'$out'"
mtu=$(dp_mtu)
check "... the datapath keeps mtu 1500 ($mtu), and nothing else changed" \
	[ "$mtu" = 1500 -a "$(snapshot)" = "$before" ]
write_conf
lbx ip link set dev lb0 mtu 1300
out=$("$MAGLEVCTL" reload 2>&1)
rc=$?
check "reload while lb0's own MTU is 1300: refused, naming the interface ($out)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'the MTU of lb0 1300 is below 1332' <<<'$out'"
lbx ip link set dev lb0 mtu 1500
check "lb0 back at 1500: the reload is accepted" ctl reload
stop_daemon

# A start that would put the IPv6 VIP of the state file under mtu 1300.
write_conf "mtu 1300"
: >"$DLOG"
nsenter --net="/run/netns/$NS_LB" timeout 20 "$MAGLEVD" -c "$CONF" >>"$DLOG" 2>&1
rc=$?
check "start with mtu 1300 and the IPv6 VIP in the state file: exit 1 ($rc)" [ $rc -eq 1 ]
check "... saying why" grep -q "mtu 1300 is below 1332" "$DLOG"
mtu=$(dp_mtu) nvips=$(bpftool -j map dump pinned "$PIN/maglev_vips" | jq length)
check "... and the datapath keeps mtu 1500 ($mtu) and both VIPs ($nvips)" [ "$mtu" = 1500 -a "$nvips" = 2 ]
t_done
