#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# End to end through the balancer with real clients, beyond IPv4/TCP/IPIP:
# an IPv6 VIP (IPv6-in-IPv6 to IPv6 backends), an IPv6 VIP on IPv4 backends
# (IPv6-in-IPv4), an IPv4 VIP on IPv6 backends (IPv4-in-IPv6), a UDP VIP
# (IPv4 and IPv6), and GUE-encapsulated VIPs (IPv4, and IPv6 over IPv6).
# Every flow must be answered and all three backends must take a share.
cd "$(dirname "$0")/../.." || exit 1
. selftests/e2e/lib.sh
e2e_require "$TOPO_TOOLS/flow-client" "$TOPO_MAGLEVD" "$TOPO_MAGLEVCTL"

e2e_plan 8
e2e_lb_up -b 3
b4s=("$(topo_backend4 1)" "$(topo_backend4 2)" "$(topo_backend4 3)")
b6s=("$(topo_backend6 1)" "$(topo_backend6 2)" "$(topo_backend6 3)")
e2e_vip 1 "[$TOPO_VIP6]:80/tcp" -- "${b6s[@]}"
e2e_vip 1 "[$TOPO_VIP6_B]:80/tcp" -- "${b4s[@]}"
e2e_vip 1 "$TOPO_VIP4:$TOPO_UDP_PORT/udp" -- "${b4s[@]}"
e2e_vip 1 "[$TOPO_VIP6]:$TOPO_UDP_PORT/udp" -- "${b6s[@]}"
e2e_vip 1 "$TOPO_VIP4_B:80/tcp" --encap gue -- "${b4s[@]}"
e2e_vip 1 "$TOPO_VIP4_C:80/tcp" -- "${b6s[@]}"
e2e_vip 1 "[$TOPO_VIP6_B]:$TOPO_ECHO_PORT/tcp" --encap gue -- "${b6s[@]}"
out=$TOPO_DIR/proto

# spread_ok FILE: every flow answered, every backend a share of at least 20%.
spread_ok() {
	[ "$(e2e_failed "$1")" = 0 ] && [ "$(e2e_ok_flows "$1")" -gt 0 ] || return 1
	local b
	for b in b1 b2 b3; do
		[ "$(e2e_count "$1" $b)" -ge $(($(e2e_ok_flows "$1") / 5)) ] || return 1
	done
}
check() {
	local name=$1 f=$out.$2
	shift 2
	e2e_flows "$f" "$@"
	spread_ok "$f"
	e2e_result $? "$name ($(topo_shares "$f"))" "$(cat "$f")"
}

check "IPv6 VIP, IPv6 backends (6in6): 600 HTTP flows from 64 sources" v6 \
	-d "$TOPO_VIP6" -p 80 -s "$(topo_srcs6)" -n 600
check "IPv6 VIP, IPv4 backends (6in4): 600 HTTP flows" v64 \
	-d "$TOPO_VIP6_B" -p 80 -s "$(topo_srcs6)" -n 600
check "IPv4 VIP, IPv6 backends (4in6): 600 HTTP flows" v46 \
	-d "$TOPO_VIP4_C" -p 80 -s "$(topo_srcs4)" -n 600
check "UDP VIP over IPv4: 600 echo flows" u4 \
	-u -d "$TOPO_VIP4" -p "$TOPO_UDP_PORT" -s "$(topo_srcs4)" -n 600
check "UDP VIP over IPv6: 600 echo flows" u6 \
	-u -d "$TOPO_VIP6" -p "$TOPO_UDP_PORT" -s "$(topo_srcs6)" -n 600
check "GUE VIP: 600 HTTP flows decapsulated from UDP on the backends" gue \
	-d "$TOPO_VIP4_B" -p 80 -s "$(topo_srcs4)" -n 600
check "GUE over IPv6: IPv6 VIP, IPv6 backends, 600 TCP echo flows" gue6 \
	-e -d "$TOPO_VIP6_B" -p "$TOPO_ECHO_PORT" -s "$(topo_srcs6)" -n 600

# curl, a client nobody here wrote, through the IPv6 VIP and the GUE VIP.
r1=$(topo_exec client curl -s --max-time 5 --interface 2001:db8:c::100 "http://[$TOPO_VIP6]/")
r2=$(topo_exec client curl -s --max-time 5 --interface 203.0.113.100 "http://$TOPO_VIP4_B/")
rc=0
[[ $r1 == b[123] && $r2 == b[123] ]] || rc=1
e2e_result $rc "curl through the IPv6 VIP ($r1) and the GUE VIP ($r2)"
e2e_done
