# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Sourced after lib.sh: real backends behind the client's namespace, each in
# its own namespace with the project's decap program, the VIPs on lo,
# backend-server's line echo on port 8080 and a check listener per VIP on
# 8081 (pid in CHK_<n>_<last octet>). Backend n is 198.51.100.4n; the client
# side of its link 198.51.100.25n. Needs setup_net first; the namespaces are
# mgb<n>-$ID (backends_cleanup deletes them).
#
#   client ns (c0, forwards) --- be1 ns 198.51.100.41 (decap, VIPs on lo)
#                             \-- be2 ns 198.51.100.42 ...
DECAP=$ROOT/build/bpf/maglev_decap.bpf.o
LONGCONN=$BUILD_DIR/tools/longconn
SERVER=$BUILD_DIR/tools/backend-server

backends_cleanup() {
	local n
	for n in 1 2 3 4; do ip netns del "mgb$n-$ID" 2>/dev/null; done
}

# backends_up N VIP-ADDR...: N backends (1..4) serving the VIP addresses.
backends_up() {
	local n ns a v B_MAC C_MAC count=$1
	shift
	[ -f "$DECAP" ] && [ -x "$LONGCONN" ] && [ -x "$SERVER" ] ||
		skip_all "decap program, longconn or backend-server missing"
	# The client's own segments leave complete: XDP_TX drops a pending checksum.
	clx ethtool -K c0 tx off >/dev/null || skip_all "cannot turn off tx checksum offload on c0"
	clx sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.c0.rp_filter=0
	for n in $(seq "$count"); do
		ns=mgb$n-$ID
		ip netns add "$ns" || skip_all "cannot create namespaces"
		ip link add cb$n netns "$NS_CL" type veth peer name b0 netns "$ns" || skip_all "veth"
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
			net.ipv4.conf.lo.rp_filter=0
		ip netns exec "$ns" ip link set lo up
		ip netns exec "$ns" ip addr add 198.51.100.4$n/32 dev b0
		for a in "$@"; do ip netns exec "$ns" ip addr add "$a/32" dev lo; done
		ip netns exec "$ns" ip link set b0 up
		clx ip addr add 198.51.100.25$n/32 dev cb$n
		clx ip link set cb$n up
		clx sysctl -qw net.ipv4.conf.cb$n.rp_filter=0
		ip netns exec "$ns" ip link set dev b0 xdpdrv obj "$DECAP" sec xdp || skip_all "decap attach"
		B_MAC=$(ip netns exec "$ns" cat /sys/class/net/b0/address)
		C_MAC=$(clx cat /sys/class/net/cb$n/address)
		clx ip neigh replace 198.51.100.4$n lladdr "$B_MAC" dev cb$n nud permanent
		clx ip route add 198.51.100.4$n/32 dev cb$n
		ip netns exec "$ns" ip neigh replace 198.51.100.25$n lladdr "$C_MAC" dev b0 nud permanent
		ip netns exec "$ns" ip route add 198.51.100.25$n/32 dev b0
		ip netns exec "$ns" ip route add default via 198.51.100.25$n dev b0
		ip netns exec "$ns" "$SERVER" --name be$n --echo 8080 >/dev/null 2>&1 &
		EXTRA_PIDS="${EXTRA_PIDS:-} $!"
		disown $!
		for v in "$@"; do
			listen_tcp "$ns" "$v" 8081 || nok "check listener on $v:8081 in backend $n"
			eval "CHK_${n}_${v##*.}=\$LPID"
		done
	done
}

# check_off N VIP-ADDR / check_on N VIP-ADDR: backend n fails / passes its
# check for that VIP (its service keeps serving either way).
check_off() {
	local var=CHK_${1}_${2##*.}
	kill "${!var}" 2>/dev/null
	wait "${!var}" 2>/dev/null
	return 0
}
check_on() {
	listen_tcp "mgb$1-$ID" "$2" 8081 && eval "CHK_${1}_${2##*.}=\$LPID"
}

# backends_daemon N CONF-LINE...: namespaces, N backends of VIP V
# (192.0.2.40:8080/tcp) and maglevd with health checks through the
# encapsulation and the given lines; V added with a TCP check on 8081 every
# 200 ms (rise 1, fall 2), no backend yet. The test's first result: the start.
backends_daemon() {
	local n=$1
	shift
	trap 'backends_cleanup; cleanup' EXIT
	setup_net || skip_all "cannot create namespaces/veth"
	V=192.0.2.40:8080/tcp
	backends_up "$n" 192.0.2.40
	# Outer sources outside every address here: a fold must not hit one.
	write_conf "health_via_encap yes" "src4_prefix 198.51.100.192/27" "$@"
	start_daemon || { nok "maglevd starts with $*"; t_done; }
	ok "maglevd starts with $*"
	ctl vip add $V --check tcp --check-port 8081 --check-interval 200 --check-timeout 150 \
		--rise 1 --fall 2
}
