#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# maglev-decap(8) on a real veth (issue 14 item 9): the lb namespace of
# lib.sh plays the backend (decap program on lb0, VIP 192.0.2.10 on lo, UDP
# service on it), the client namespace the balancer, sending IPIP and GUE
# with send_encap.py. attach refuses an open program unless told --open;
# open, a spoofed outer source is delivered (the documented risk); with --allow-src and --own-dst auto only the allowed
# source and our own destination are decapsulated, the rest dropped and
# counted in `show`; a bad argument changes nothing; re-attaching keeps the
# configuration; detach removes program and pins.
. "$(dirname "$0")/lib.sh"
TOOL=$BUILD_DIR/maglev-decap
SEND=$ROOT/selftests/e2e/send_encap.py
[ -x "$TOOL" ] || skip_all "$TOOL missing"
DPIN=$PIN/decap
RX=$TDIR/rx

setup_net || { nok "namespaces"; t_done; }
mkdir -p "$PIN"
clx ip addr add 203.0.113.3/24 dev c0
lbx ip addr add 192.0.2.10/32 dev lo
lbx sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.lb0.rp_filter=0
# 203.0.113.5 is not the backend's, but its frames reach lb0.
clx ip neigh replace 203.0.113.5 lladdr "$LB_MAC" dev c0 nud permanent
ip netns exec "$NS_LB" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("192.0.2.10", 7000))
s.settimeout(30)
with open(sys.argv[1], "a", buffering=1) as f:
    try:
        while True:
            f.write(s.recv(2048).decode())
    except OSError:
        pass
' "$RX" 2>/dev/null &
EXTRA_PIDS=$!
disown
touch "$RX"

dtool() { nsenter --net="/run/netns/$NS_LB" "$TOOL" "$@"; }
# send MODE OUTER_DST TEXT OUTER_SRC: one encapsulated datagram to the VIP.
send() { clx python3 "$SEND" "$1" "$2" 198.51.100.7 192.0.2.10 40000 7000 "$3" "$4"; }
# got TEXT: the service received TEXT (within 2 s).
got() {
	local i
	for i in $(seq 40); do
		grep -qx "$1" "$RX" && return 0
		sleep 0.05
	done
	return 1
}
# counter NAME: its value in show.
counter() { dtool show lb0 --pin "$DPIN" | awk -v n="$1" '$1 == n { print $2 }'; }

out=$(dtool attach lb0 --pin "$DPIN" 2>&1)
check "attach with neither --allow-src nor --open is refused" [ $? -ne 0 ]
check "naming both ($out)" bash -c 'grep -q -- "--allow-src" <<<"$1" && grep -q -- "--open" <<<"$1"' _ "$out"
check "and attaches nothing" bash -c "! ip -n '$NS_LB' link show lb0 | grep -q xdp"
check "attach --open" dtool attach lb0 --pin "$DPIN" --open
sleep 0.2
send ipip 203.0.113.1 open-spoofed 203.0.113.3
check "open (asked for): a packet from any source is delivered" got open-spoofed

check "set --allow-src 203.0.113.2/32 --own-dst auto" \
	dtool set lb0 --pin "$DPIN" --allow-src 203.0.113.2/32 --own-dst auto
diag "$(dtool show lb0 --pin "$DPIN" | tr '\n' ' ')"
send ipip 203.0.113.1 ipip-allowed 203.0.113.2
send gue 203.0.113.1 gue-allowed 203.0.113.2
check "strict: IPIP from the allowed source delivered" got ipip-allowed
check "strict: GUE from the allowed source delivered" got gue-allowed
send ipip 203.0.113.1 ipip-spoofed 203.0.113.3
send gue 203.0.113.1 gue-spoofed 203.0.113.3
sleep 0.5
check "strict: packets from another source are not delivered" \
	bash -c "! grep -q spoofed <(grep -v open-spoofed '$RX')"
check "strict: and counted as drop_src ($(counter drop_src))" [ "$(counter drop_src)" = 2 ]
send ipip 203.0.113.5 wrong-dst 203.0.113.2
sleep 0.3
check "strict: an outer destination not ours is counted as drop_dst ($(counter drop_dst))" \
	[ "$(counter drop_dst)" = 1 ]
check "decapsulated counts the three delivered ($(counter decapsulated))" \
	[ "$(counter decapsulated)" = 3 ]

before=$(dtool show lb0 --pin "$DPIN" | grep -v '^[a-z_]* [0-9]*$\|prog_id')
err=$(dtool set lb0 --pin "$DPIN" --allow-src 198.51.100.0/24 --allow-src 10.0.0.0/99 2>&1)
check "a bad prefix is refused" [ $? -ne 0 ]
check "naming what was wrong ($err)" grep -q "10.0.0.0/99" <<<"$err"
after=$(dtool show lb0 --pin "$DPIN" | grep -v '^[a-z_]* [0-9]*$\|prog_id')
check "and changes nothing" [ "$before" = "$after" ]

check "attach again (adopting the pins)" dtool attach lb0 --pin "$DPIN"
check "keeps the configuration" [ "$before" = "$(dtool show lb0 --pin "$DPIN" |
	grep -v '^[a-z_]* [0-9]*$\|prog_id')" ]
send ipip 203.0.113.1 reattached-spoofed 203.0.113.3
sleep 0.3
check "and still drops the spoofed source" bash -c "! grep -q reattached-spoofed '$RX'"

check "detach" dtool detach lb0 --pin "$DPIN"
check "no XDP program left on lb0" bash -c "! ip -n '$NS_LB' link show lb0 | grep -q xdp"
check "pins removed" [ ! -e "$DPIN" ]

# The default pin dir: outside the host's network namespace it names the
# namespace too, so two namespaces' lb0 (sharing the host's bpffs) never
# share pins.
NSPIN=/sys/fs/bpf/maglev-decap/lb0@netns-$(stat -L -c %i "/run/netns/$NS_LB")
trap 'rm -rf "$NSPIN"; cleanup' EXIT
check "attach without --pin, in a namespace of its own: pinned in $NSPIN" \
	bash -c "$(declare -f dtool); NS_LB=$NS_LB TOOL=$TOOL; dtool attach lb0 --open && [ -e '$NSPIN/maglev_decap_cfg' ]"
check "show and detach find the same dir" \
	bash -c "$(declare -f dtool); NS_LB=$NS_LB TOOL=$TOOL; dtool show lb0 | grep -q prog_id && dtool detach lb0 && [ ! -e '$NSPIN' ]"
# Without a bpffs at /sys/fs/bpf (a private mount namespace held by a sleeper,
# the host's mounts untouched), attach mounts one as maglevd does and says so.
unshare -m --propagation private sh -c \
	'while mountpoint -q /sys/fs/bpf; do umount -l /sys/fs/bpf || exit 1; done; exec sleep 60' &
HOLDER=$!
EXTRA_PIDS="${EXTRA_PIDS:-} $HOLDER"
# Ready once it sleeps: its unmount loop could otherwise take the new mount.
for _ in $(seq 50); do
	[ "$(cat /proc/$HOLDER/comm 2>/dev/null)" = sleep ] && break
	sleep 0.05
done
out=$(nsenter --mount=/proc/$HOLDER/ns/mnt --net=/run/netns/$NS_LB "$TOOL" attach lb0 --open 2>&1)
check "attach with no bpffs mounted: mounts one and says so ($out)" \
	bash -c "grep -q 'no bpffs was mounted at /sys/fs/bpf: mounted one' <<<'$out' &&
		[ \"\$(nsenter --mount=/proc/$HOLDER/ns/mnt stat -f -c %T /sys/fs/bpf)\" = bpf_fs ]"
nsenter --mount=/proc/$HOLDER/ns/mnt --net=/run/netns/$NS_LB "$TOOL" detach lb0 >/dev/null 2>&1
t_done
