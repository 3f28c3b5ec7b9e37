#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Health checks through the encapsulation (health_via_encap yes): the client
# namespace plays the backend, with the project's decap program on its end
# of the veth, the VIPs on lo and the services listening on the VIPs only;
# the backend addresses sit on lo with nothing listening on them. A check
# is up only if it travelled encapsulated (IPIP and GUE) to the VIP behind
# the backend's decapsulation: the TC program's and the decap program's
# counters grow, the same backend without decapsulation goes down, and with
# health_via_encap no (a reload) the direct check to the backend's address
# is refused.
. "$(dirname "$0")/lib.sh"

DECAP=$ROOT/build/bpf/maglev_decap.bpf.o
[ -f "$DECAP" ] || skip_all "build/bpf/maglev_decap.bpf.o missing"
setup_net || skip_all "cannot create namespaces/veth"
# The backend: decap on c0 (it also passes everything else, so XDP_TX frames
# still arrive), VIPs and backend addresses on lo, DSR sysctls.
clx ip link set dev c0 xdpdrv off
clx ip link set dev c0 xdpdrv obj "$DECAP" sec xdp || skip_all "cannot attach the decap program"
for a in 192.0.2.30 192.0.2.31 198.51.100.31 198.51.100.32; do clx ip addr add $a/32 dev lo; done
clx sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.c0.rp_filter=0 \
	net.ipv4.conf.lo.rp_filter=0 net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
write_conf "health_via_encap yes"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

EXTRA_PIDS=
listen() { listen_tcp "$NS_CL" "$@"; } # checks reach the backend (client) namespace
# Sum over CPUs of element KEY of the map NAME used by program ID.
prog_map_sum() { # prog_map_sum PROG_ID MAP_NAME KEY
	local m
	for m in $(bpftool -j prog show id "$1" | jq -r '.map_ids[]'); do
		[ "$(bpftool -j map show id "$m" | jq -r .name)" = "$2" ] || continue
		bpftool -j map lookup id "$m" key "$3" 0 0 0 |
			jq 'if .formatted then [.formatted.values[].value] | add
			    else [.values[].value | map(tonumber) | reverse | reduce .[] as $b (0; . * 256 + $b)] | add end'
		return
	done
	echo -1
}
hc_prog() { lbx tc filter show dev lb0 egress | grep -o ' id [0-9]*' | awk '{print $2}' | head -1; }
decap_prog() { clx ip -j link show c0 | jq -r '.[0].xdp.prog.id'; }
hc_encapsulated() { prog_map_sum "$(hc_prog)" maglev_hc_cnt 0; }
hc_dropped() { echo $(($(prog_map_sum "$(hc_prog)" maglev_hc_cnt 1) + $(prog_map_sum "$(hc_prog)" maglev_hc_cnt 2))); }
# (map names are cut to 15 characters by the kernel)
decapsulated() { prog_map_sum "$(decap_prog)" maglev_decap_cn 0; }

attached() {
	local _
	for _ in $(seq 40); do
		[ -n "$(hc_prog)" ] && return 0
		sleep 0.05
	done
	return 1
}
check "no TC egress program while no backend has a check" [ -z "$(hc_prog)" ]

# --- IPIP ------------------------------------------------------------------------------
V=192.0.2.30:8080/tcp
listen 192.0.2.30 8080 || nok "listener on the VIP 192.0.2.30:8080"
L30=$LPID
check "nothing listens on the backend address 198.51.100.31:8080 (a direct check would fail)" \
	bash -c "! ip netns exec $NS_CL bash -c 'exec 3<>/dev/tcp/198.51.100.31/8080' 2>/dev/null"
ctl vip add 192.0.2.39:8080/tcp --check none
ctl backend add 192.0.2.39:8080/tcp 198.51.100.39
sleep 0.3
check "a backend without a check: still no TC egress program" [ -z "$(hc_prog)" ]
ctl vip del 192.0.2.39:8080/tcp
dec0=$(decapsulated)
ctl vip add $V --check tcp --check-interval 200 --check-timeout 150 --rise 2 --fall 2
ctl backend add $V 198.51.100.31
check "a backend with a check: the TC egress program is attached to lb0" attached
enc0=$(hc_encapsulated)
sleep 1.2
check "IPIP: the backend is up, its checks succeeding" \
	[ "$(field $V 198.51.100.31 '.state + " " + .last_result + " " + .via')" = "up ok encap" ]
enc1=$(hc_encapsulated)
dec1=$(decapsulated)
diag "TC program encapsulated $((enc1 - enc0)), backend decapsulated $((dec1 - dec0)) packets"
check "IPIP: the TC program encapsulated the checks' packets (>= 6 for 3 connects)" \
	[ $((enc1 - enc0)) -ge 6 ]
check "IPIP: the backend's decap program stripped them" [ $((dec1 - dec0)) -ge 6 ]
check "no marked packet dropped by the TC program" [ "$(hc_dropped)" -eq 0 ]
metrics_enc() {
	ip netns exec "$NS_LB" curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" |
		sed -n 's/^maglev_health_encap_packets_total{result="encapsulated"} //p'
}
m=$(metrics_enc)
check "metrics export the TC program's count ($m, bpftool says $(hc_encapsulated))" \
	bash -c "[ -n '$m' ] && [ '$m' -ge $enc1 ]"

kill $L30
check "the VIP's service stops: refused through the tunnel, the backend goes down" \
	wait_state $V 198.51.100.31 down 3
check "its last error is the refused connect" \
	[ "$(field $V 198.51.100.31 .last_error)" = "connect: Connection refused" ]
listen 192.0.2.30 8080 || nok "listener on the VIP 192.0.2.30:8080 again"
check "the service is back: the backend rises again" wait_state $V 198.51.100.31 up 3

# Without decapsulation on the backend the same checks cannot succeed.
clx ip link set dev c0 xdpdrv off
clx ip link set dev c0 xdpdrv obj "$XDP_PASS" sec xdp
check "backend without decapsulation: down" wait_state $V 198.51.100.31 down 3
e=$(field $V 198.51.100.31 .last_error)
check "its last error is the timeout ($e)" [ "$e" = timeout ]
clx ip link set dev c0 xdpdrv off
clx ip link set dev c0 xdpdrv obj "$DECAP" sec xdp
check "decapsulation back: up again" wait_state $V 198.51.100.31 up 3

# --- GUE -------------------------------------------------------------------------------
G=192.0.2.31:8081/tcp
ctl vip add $G --encap gue --check http --check-path / --check-status 200 --check-interval 200 \
	--check-timeout 150 --rise 1 --fall 1
cat >"$TDIR/httpd.py" <<'EOF'
import http.server, socketserver
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.headers.get("Host") == "192.0.2.31" else 421)
        self.end_headers()
    def log_message(self, *a):
        pass
socketserver.TCPServer.allow_reuse_address = True
socketserver.TCPServer(("192.0.2.31", 8081), H).serve_forever()
EOF
ip netns exec "$NS_CL" python3 "$TDIR/httpd.py" 2>/dev/null &
EXTRA_PIDS="$EXTRA_PIDS $!"
disown $!
for _ in $(seq 200); do
	clx bash -c "exec 3<>/dev/tcp/192.0.2.31/8081" 2>/dev/null && break
	sleep 0.05
done
ctl backend add $G 198.51.100.32
check "GUE + HTTP: up, the request reached the VIP (Host: 192.0.2.31 answered 200)" \
	wait_state $G 198.51.100.32 up 5
g0=$(decapsulated)
sleep 0.6
check "GUE: checks keep being decapsulated on the backend" [ $(($(decapsulated) - g0)) -gt 0 ]
# The GUE port is the VIP's: a VIP on port 6090 stays down while the backend
# decapsulates 6080 only, and comes up (the 6080 one going down) once the
# backend's decap program is told 6090.
G2=192.0.2.32:8082/tcp
clx ip addr add 192.0.2.32/32 dev lo
listen 192.0.2.32 8082 || nok "listener on the VIP 192.0.2.32:8082"
ctl vip add $G2 --encap gue --gue-port 6090 --check tcp --check-interval 200 --check-timeout 150 \
	--rise 1 --fall 1
ctl backend add $G2 198.51.100.32
# New, it is down from the start: until its first check has timed out.
for _ in $(seq 100); do [ "$(field $G2 198.51.100.32 .last_error)" = timeout ] && break; sleep 0.05; done
check "GUE to port 6090, backend decapsulating 6080: down (timeout)" \
	bash -c "$(declare -f field wait_state ctl); MAGLEVCTL=$MAGLEVCTL; wait_state $G2 198.51.100.32 down 5 && \
		 [ \"\$(field $G2 198.51.100.32 .last_error)\" = timeout ]"
decap_cfg() { # the decap program's GUE port map
	local m
	for m in $(bpftool -j prog show id "$(decap_prog)" | jq -r '.map_ids[]'); do
		[ "$(bpftool -j map show id "$m" | jq -r .name)" = maglev_decap_cf ] && echo "$m"
	done
}
bpftool map update id "$(decap_cfg)" key 0 0 0 0 value 0x17 0xca 0 0
check "backend decapsulating GUE port 6090: the 6090 VIP's backend comes up" \
	wait_state $G2 198.51.100.32 up 5
check "... and the 6080 VIP's backend goes down" wait_state $G 198.51.100.32 down 5

# --- health_via_encap no: straight to the backend address, where nothing listens -------
write_conf "health_via_encap no"
kill -HUP "$DPID"
check "reload to health_via_encap no: the backend address refuses, down" \
	wait_state $V 198.51.100.31 down 3
check "checks reported as direct, refused" \
	[ "$(field $V 198.51.100.31 '.via + " " + .last_error')" = "direct connect: Connection refused" ]
check "the TC filter is removed from lb0" [ -z "$(hc_prog)" ]
write_conf "health_via_encap yes"
kill -HUP "$DPID"
check "reload to health_via_encap yes: filter back, backend up again" \
	bash -c "$(declare -f field wait_state ctl); MAGLEVCTL=$MAGLEVCTL; wait_state $V 198.51.100.31 up 3"
check "the TC filter is back on lb0" [ -n "$(hc_prog)" ]
# A restart finds the clsact qdisc the last run left: expected, not a warning.
stop_daemon
start_daemon || nok "maglevd starts again"
check "maglevd restarted: the TC filter is on lb0" [ -n "$(hc_prog)" ]
check "re-attaching to the clsact qdisc already there logs no libbpf 'Exclusivity flag on' line" \
	sh -c '! grep -q "Exclusivity flag on" "$1"' _ "$DLOG"
stop_daemon
t_done
