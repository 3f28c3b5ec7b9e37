#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Two interfaces: every frame leaves with the MACs of the interface it leaves
# by. The balancer has lb0 (peer c0) and lb1 (peer c1, both in the client
# namespace), an ECMP default route with a gateway on each, and a VIP reached
# through each. Real frames, captured on c0 and c1 (AF_PACKET):
#   - through lb0: source lb0's MAC, destination c0's (lb0's gateway);
#   - through lb1: source lb1's MAC, destination c1's (lb1's gateway), not
#     the first interface's pair;
#   - lb1's gateway changes its MAC: followed within a few seconds.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
ip link add lb1 netns "$NS_LB" type veth peer name c1 netns "$NS_CL" || skip_all "veth"
lbx ip addr add 198.51.100.253/30 dev lb1
clx ip addr add 198.51.100.254/30 dev c1
lbx ip link set lb1 up
clx ip link set c1 up
clx ip link set dev c1 xdpdrv obj "$XDP_PASS" sec xdp || skip_all "XDP on c1"
LB1_MAC=$(lbx cat /sys/class/net/lb1/address)
C1_MAC=$(clx cat /sys/class/net/c1/address)
lbx ip neigh replace 198.51.100.254 lladdr "$C1_MAC" dev lb1 nud permanent
clx ip neigh replace 198.51.100.253 lladdr "$LB1_MAC" dev c1 nud permanent
lbx ip route replace default nexthop via 203.0.113.2 dev lb0 nexthop via 198.51.100.254 dev lb1
clx ip route add 192.0.2.77/32 via 198.51.100.253 dev c1
write_conf "interface lb1"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts on lb0 and lb1"
for v in 192.0.2.77:5000/udp 192.0.2.78:5000/udp; do
	ctl vip add $v --check none && ctl backend add $v 198.51.100.10
done

cat >"$TDIR/macs.py" <<'EOF'
# macs.py IFNAME SRC VIP: 20 UDP datagrams SRC -> VIP:5000; prints the
# "dst src" MAC pairs of the IPIP frames to VIP seen on IFNAME, with counts.
import collections, json, select, socket, struct, sys, time
ifname, src, vip = sys.argv[1:4]
cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
cap.bind((ifname, 0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 0))
seen = collections.Counter()
mac = lambda b: ":".join("%02x" % x for x in b)
for i in range(20):
    s.sendto(b"mac-test", (vip, 5000))
end = time.monotonic() + 0.5
while time.monotonic() < end:
    r, _, _ = select.select([cap], [], [], max(0, end - time.monotonic()))
    if not r:
        break
    f, addr = cap.recvfrom(65535)
    if addr[2] == socket.PACKET_OUTGOING or len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 4:
        continue
    if socket.inet_ntoa(f[34 + 16:34 + 20]) == vip:
        seen[mac(f[0:6]) + " " + mac(f[6:12])] += 1
json.dump(seen, sys.stdout)
print()
EOF
macs() { clx python3 "$TDIR/macs.py" "$@"; }
eqj() { jqt "$1" >/dev/null; } # eqj EXPR <<<JSON
m0=$(macs c0 203.0.113.2 192.0.2.78)
m1=$(macs c1 198.51.100.254 192.0.2.77)
diag "lb0 frames: $m0 (lb0 $LB_MAC, c0 $CL_MAC)"
diag "lb1 frames: $m1 (lb1 $LB1_MAC, c1 $C1_MAC)"
check "through lb0: 20 frames, from lb0's MAC to its gateway c0" \
	eqj ". == {\"$CL_MAC $LB_MAC\": 20}" <<<"$m0"
check "through lb1: 20 frames, from lb1's own MAC to its own gateway c1" \
	eqj ". == {\"$C1_MAC $LB1_MAC\": 20}" <<<"$m1"
check "two interfaces with their own pairs: the config says so (if_l2_differs 1)" \
	bash -c "[ \$(bpftool -j map dump pinned $PIN/maglev_cfg | jq '.[0].formatted.value.if_l2_differs') = 1 ]"
check "the log names lb1's pair" grep -q "interface lb1: frames leave from $LB1_MAC to $C1_MAC" "$DLOG"

# lb1's gateway answers from a new MAC: the entry follows it.
NEW=02:00:5e:00:53:77
lbx ip neigh replace 198.51.100.254 lladdr $NEW dev lb1 nud permanent
got=
for _ in $(seq 30); do
	m1=$(macs c1 198.51.100.254 192.0.2.77)
	jqt ". == {\"$NEW $LB1_MAC\": 20}" <<<"$m1" >/dev/null && got=1 && break
	sleep 0.2
done
diag "lb1 frames after the change: $m1"
check "lb1's gateway's new MAC is followed (frames to $NEW)" [ -n "$got" ]
m0=$(macs c0 203.0.113.2 192.0.2.78)
check "lb0's frames are unchanged" eqj ". == {\"$CL_MAC $LB_MAC\": 20}" <<<"$m0"

# A reload without lb1: its entry goes (frames of lb0 unchanged).
write_conf
ctl reload >/dev/null
check "reload without lb1: its entry is removed from maglev_ifl2" \
	bash -c "[ \$(bpftool -j map dump pinned $PIN/maglev_ifl2 | jq length) = 1 ]"
# One interface, its entry the config's pair: the datapath skips the lookup.
check "and the config says no entry differs (if_l2_differs 0)" \
	bash -c "[ \$(bpftool -j map dump pinned $PIN/maglev_cfg | jq '.[0].formatted.value.if_l2_differs') = 0 ]"
stop_daemon
t_done
