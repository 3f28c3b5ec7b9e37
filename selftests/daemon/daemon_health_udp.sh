#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Datagram health checks of UDP VIPs, through the encapsulation: the client
# namespace plays the backend (the project's decap program on c0, the VIPs
# on lo) and runs a real UDP responder on the VIP (python3):
#   - check dns: a DNS responder answering NOERROR: up; stopped (the backend
#     answers ICMP port unreachable): down, "udp: port unreachable"; back: up;
#     answering SERVFAIL: down, "dns: rcode 2 SERVFAIL"; silent: down, timeout;
#   - check udp: "ping\n" sent, a reply holding "pong" expected: up; an
#     expected string the reply lacks (vip set): down; bad settings refused.
# The backend's decap program counts the checks' datagrams: they travelled
# encapsulated, as client traffic does.
. "$(dirname "$0")/lib.sh"

DECAP=$ROOT/build/bpf/maglev_decap.bpf.o
[ -f "$DECAP" ] || skip_all "build/bpf/maglev_decap.bpf.o missing"
command -v python3 >/dev/null || skip_all "python3 missing"
setup_net || skip_all "cannot create namespaces/veth"
clx ip link set dev c0 xdpdrv off
clx ip link set dev c0 xdpdrv obj "$DECAP" sec xdp || skip_all "cannot attach the decap program"
for a in 192.0.2.60 192.0.2.61 198.51.100.61; do clx ip addr add $a/32 dev lo; done
clx sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.c0.rp_filter=0 net.ipv4.conf.lo.rp_filter=0
write_conf "health_via_encap yes"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"
EXTRA_PIDS=

cat >"$TDIR/udpd.py" <<'EOF'
# udpd.py ADDR PORT MODE PIDFILE: dns (NOERROR), servfail, silent, or pong (UDP).
import os, socket, struct, sys
addr, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
open(sys.argv[4], "w").write(str(os.getpid()))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
while True:
    q, peer = s.recvfrom(2048)
    if mode == "silent":
        continue
    if mode == "pong":
        s.sendto(b"pong " + q, peer)
        continue
    if len(q) < 12:
        continue
    qid, flags = struct.unpack("!HH", q[:4])
    rcode = 2 if mode == "servfail" else 0
    # Header: same id, QR, opcode and RD copied, RA, the rcode; the question echoed.
    hdr = struct.pack("!HHHHHH", qid, 0x8000 | (flags & 0x7900) | 0x80 | rcode, 1, 0, 0, 0)
    s.sendto(hdr + q[12:], peer)
EOF
# responder ADDR PORT MODE: start it in the backend namespace, pid in RPID
# (the interpreter's own: python3 may be a wrapper that forks).
responder() {
	rm -f "$TDIR/udpd.pid"
	clx python3 "$TDIR/udpd.py" "$@" "$TDIR/udpd.pid" >/dev/null 2>&1 &
	disown $!
	local _
	for _ in $(seq 100); do
		if [ -s "$TDIR/udpd.pid" ] && clx ss -Hlun "src $1:$2" | grep -q .; then
			RPID=$(cat "$TDIR/udpd.pid")
			EXTRA_PIDS="$EXTRA_PIDS $RPID"
			return 0
		fi
		sleep 0.05
	done
	return 1
}
# Packets the backend's decap program stripped (sum over CPUs).
decapsulated() {
	local id m
	id=$(clx ip -j link show c0 | jq -r '.[0].xdp.prog.id')
	for m in $(bpftool -j prog show id "$id" | jq -r '.map_ids[]'); do
		[ "$(bpftool -j map show id "$m" | jq -r .name)" = maglev_decap_cn ] || continue
		bpftool -j map lookup id "$m" key 0 0 0 0 | jq '[.formatted.values[].value] | add'
	done
}
err() { field "$1" "$2" .last_error; }
# wait_err VIP BACKEND TEXT SECONDS: until the backend's last error is TEXT
# (the check before may have failed otherwise, e.g. while a responder was
# being replaced).
wait_err() {
	local end=$((SECONDS + $4))
	while [ $SECONDS -le $end ]; do
		[ "$(err "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

N=192.0.2.60:53/udp
opts="--check-interval 200 --check-timeout 150 --rise 1 --fall 1"
out=$(ctl vip add $N --check dns $opts 2>&1)
check "check dns without a name is refused, naming it ($out)" \
	bash -c "! $MAGLEVCTL vip show $N >/dev/null 2>&1 && grep -q check_dns_name <<<'$out'"
out=$(ctl vip add $N --check dns --check-dns-name 'bad name!' $opts 2>&1)
check "a name that is no host name is refused ($out)" grep -q "not a host name" <<<"$out"
responder 192.0.2.60 53 dns || nok "DNS responder on 192.0.2.60:53"
# shellcheck disable=SC2086 # opts is words
ctl vip add $N --check dns --check-dns-name example.org. $opts
ctl backend add $N 198.51.100.61
d0=$(decapsulated)
sleep 0.6
check "dns: up while the responder answers NOERROR" \
	bash -c "[ \"\$($MAGLEVCTL -j health $N | jq -r '.backends[0] | .state + \" \" + .last_result + \" \" + .via')\" = 'up ok encap' ]"
check "vip show: the check is dns for example.org." \
	[ "$(ctl -j vip show $N | jq -r '.vip.check | .type + " " + .dns_name')" = "dns example.org." ]
d1=$(decapsulated)
diag "decapsulated by the backend: $((d1 - d0)) packets in 0.6 s"
check "the queries travelled encapsulated (the backend's decap counted >= 2)" [ $((d1 - d0)) -ge 2 ]
kill "$RPID"
check "responder stopped: down" wait_state $N 198.51.100.61 down 3
check "... from the ICMP port unreachable: 'udp: port unreachable'" \
	wait_err $N 198.51.100.61 "udp: port unreachable" 3
responder 192.0.2.60 53 dns || nok "DNS responder again"
check "responder back: up again" wait_state $N 198.51.100.61 up 3
kill "$RPID"
responder 192.0.2.60 53 servfail || nok "SERVFAIL responder"
check "answering SERVFAIL: down" wait_state $N 198.51.100.61 down 3
check "... with 'dns: rcode 2 SERVFAIL'" wait_err $N 198.51.100.61 "dns: rcode 2 SERVFAIL" 3
kill "$RPID"
responder 192.0.2.60 53 silent || nok "silent responder"
down_timeout() { wait_err $N 198.51.100.61 timeout 3 && [ "$(field $N 198.51.100.61 .state)" = down ]; }
check "a responder that never answers: down, timeout" down_timeout
kill "$RPID"

U=192.0.2.61:7/udp
out=$(ctl vip add $U --check udp $opts 2>&1)
check "check udp without a payload is refused, naming it ($out)" grep -q check_payload <<<"$out"
out=$(ctl vip add $U --check udp --check-payload 'a\q' $opts 2>&1)
check "a bad escape in the payload is refused ($out)" grep -q "unknown escape" <<<"$out"
responder 192.0.2.61 7 pong || nok "UDP responder on 192.0.2.61:7"
# shellcheck disable=SC2086
ctl vip add $U --check udp --check-payload 'ping\n' --check-expect pong $opts
ctl backend add $U 198.51.100.61
check "udp: up, the reply holds 'pong'" wait_state $U 198.51.100.61 up 3
check "save keeps payload and expect as one word each" \
	bash -c "$MAGLEVCTL save | grep -F -- \"vip add $U\" | grep -qF -- \"--check-payload ping\\n --check-expect pong\""
ctl vip set $U --check-expect 'pong\x20ping\x0a'
check "udp: pong + the payload echoed matches \\x20 / \\x0a escapes: still up" \
	bash -c "sleep 0.5; [ \"\$($MAGLEVCTL -j health $U | jq -r '.backends[0] | .state + \" \" + .last_result')\" = 'up ok' ]"
ctl vip set $U --check-expect nope
check "udp: a reply without the expected bytes: down" wait_state $U 198.51.100.61 down 3
check "... saying so" [ "$(err $U 198.51.100.61)" = "udp: reply without the expected bytes" ]
stop_daemon
t_done
