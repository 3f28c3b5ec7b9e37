#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Test topology of the slow-path module tests (runs inside the VM).
#
#   mlk-c  c0 ==veth== l0  mlk-lb  lb1 ==veth== eth0  mlk-b1
#                                  lb2 ==veth== eth0  mlk-b2
#                                  lb3 ==veth== eth0  mlk-b3
#
# mlk-c sends hand-built frames (fragments, options, extension headers) to
# the VIPs through l0. mlk-lb runs the module. Each backend mlk-bK holds the
# VIPs on lo and decapsulates IPIP, SIT, ip6tnl (mode any) and GUE (fou), so
# a UDP socket there receives the client's original datagram.
#
# Addresses (documentation ranges only):
#   client side 192.0.2.0/24, 2001:db8:1::/64; backend K 203.0.113.(8K+2),
#   2001:db8:2:K::2 (balancer side .8K+1 / ::1); VIPs 198.51.100.10-12 and
#   2001:db8:100::10-12; clients 198.51.100.128/25 and 2001:db8:c::/64.
#
#   topo.sh up | down
set -eu

LB_MAC=02:00:00:00:00:02
CLIENT_MAC=02:00:00:00:00:01
GUE_PORT=6080

down() {
	for ns in mlk-c mlk-lb mlk-b1 mlk-b2 mlk-b3; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

# One `ip -batch` per namespace: every exec costs ~0.1 s under TCG.
up() {
	down
	modprobe -a veth ipip sit ip6_tunnel fou fou6
	ip -b - <<-EOF
		netns add mlk-c
		netns add mlk-lb
		netns add mlk-b1
		netns add mlk-b2
		netns add mlk-b3
	EOF
	ip -n mlk-c -b - <<-EOF
		link set lo up
		link add c0 address $CLIENT_MAC type veth peer name l0 netns mlk-lb address $LB_MAC
		link set c0 up
		addr add 192.0.2.2/24 dev c0
	EOF
	{
		echo "link set lo up"
		echo "link set l0 up"
		echo "addr add 192.0.2.1/24 dev l0"
		echo "addr add 2001:db8:1::1/64 dev l0 nodad"
		for k in 1 2 3; do
			echo "link add lb$k type veth peer name eth0 netns mlk-b$k"
			echo "link set lb$k up"
			echo "addr add 203.0.113.$((8 * k + 1))/29 dev lb$k"
			echo "addr add 2001:db8:2:$k::1/64 dev lb$k nodad"
		done
	} | ip -n mlk-lb -b -
	for k in 1 2 3; do
		b4=203.0.113.$((8 * k + 2))
		b6=2001:db8:2:$k::2
		{
			echo "link set lo up"
			echo "link set eth0 up"
			echo "addr add $b4/29 dev eth0"
			echo "addr add $b6/64 dev eth0 nodad"
			for v in 10 11 12; do
				echo "addr add 198.51.100.$v/32 dev lo"
				echo "addr add 2001:db8:100::$v/128 dev lo nodad"
			done
			# Decapsulation devices for every outer/inner pair.
			echo "link add t4 type ipip local $b4 remote any"
			echo "link add s4 type sit local $b4 remote any"
			echo "link add t6 type ip6tnl mode any local $b6 remote any"
			echo "link set t4 up"
			echo "link set s4 up"
			echo "link set t6 up"
			echo "fou add port $GUE_PORT gue"
		} | ip -n mlk-b$k -b -
		ip -6 -n mlk-b$k fou add port $GUE_PORT gue
	done
	# The inner packet arrives on a tunnel device with no route back to the
	# client; that works because a new namespace starts with rp_filter off.
}

case "${1:-}" in
up) up ;;
down) down ;;
*)
	echo "usage: $0 up|down" >&2
	exit 2
	;;
esac
