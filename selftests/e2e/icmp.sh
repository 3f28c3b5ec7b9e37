#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ICMP through the balancer, end to end. With maglevd's mtu at 1500 a client
# on a 1500-byte link sends full-size segments that no longer fit once
# encapsulated: the balancer answers with ICMP fragmentation-needed (IPv4) or
# packet-too-big (IPv6), the client's kernel lowers its path MTU, and a
# 6,000-byte exchange completes. Echo requests to a VIP are answered.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

e2e_plan 3
e2e_lb_up -b 3 mtu 1500
e2e_vip 1 "$TOPO_VIP4:$TOPO_ECHO_PORT/tcp" -- "$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)"
e2e_vip 1 "[$TOPO_VIP6]:$TOPO_ECHO_PORT/tcp" -- "$(topo_backend6 1)" "$(topo_backend6 2)" "$(topo_backend6 3)"
line=$(head -c 6000 /dev/zero | tr '\0' x)

# exchange FAMILY VIP SRC: send one 6,000-byte line, print what came back.
exchange() {
	echo "$line" | topo_exec client timeout 5 socat -t 2 - "TCP$1:$2:$TOPO_ECHO_PORT,bind=$3"
}
for fam in 4 6; do
	if [ $fam = 4 ]; then
		got=$(exchange 4 "$TOPO_VIP4" 203.0.113.100)
		mtu=$(topo_exec client ip -4 route get "$TOPO_VIP4" from 203.0.113.100 | grep -o 'mtu [0-9]*')
		want="mtu 1480"
	else
		got=$(exchange 6 "[$TOPO_VIP6]" "[2001:db8:c::100]")
		mtu=$(topo_exec client ip -6 route get "$TOPO_VIP6" from 2001:db8:c::100 | grep -o 'mtu [0-9]*')
		want="mtu 1460"
	fi
	[[ $got == b[123]\ "$line" ]] && [ "$mtu" = "$want" ]
	e2e_result $? "IPv$fam: 6000 bytes echoed through a 1500-byte balancer MTU, client path MTU now ${mtu#mtu }" \
		"got ${#got} bytes: '${got:0:20}...', route: '$mtu' (want '$want')"
done

p4=$(topo_exec client ping -c 3 -i 0.2 -W 1 -I 203.0.113.101 "$TOPO_VIP4" | grep -o '[0-9]* received')
p6=$(topo_exec client ping -6 -c 3 -i 0.2 -W 1 -I 2001:db8:c::101 "$TOPO_VIP6" | grep -o '[0-9]* received')
[ "$p4" = "3 received" ] && [ "$p6" = "3 received" ]
e2e_result $? "ping to the IPv4 and IPv6 VIP answered ($p4, $p6)"
e2e_done
