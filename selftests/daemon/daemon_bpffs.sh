#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# maglevd on a host without a bpffs at /sys/fs/bpf: it mounts one, says so,
# and pins there, so that a SIGKILL leaves forwarding on and a restart adopts
# the pins. It refuses, naming the cause, a pin_dir on another filesystem and
# a mount namespace nobody else holds (a bpffs there would die with it). The
# host's mounts are never touched: the "host" is a private mount namespace,
# held by a sleeping process, with /sys/fs/bpf unmounted.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
# Our "host": a mount namespace without a bpffs at /sys/fs/bpf.
unshare -m --propagation private sh -c \
	'while mountpoint -q /sys/fs/bpf; do umount -l /sys/fs/bpf || exit 1; done; exec sleep 300' &
HOLDER=$!
disown $HOLDER
EXTRA_PIDS="${EXTRA_PIDS:-} $HOLDER"
hostx() { nsenter --mount="/proc/$HOLDER/ns/mnt" "$@"; }
# Ready once it sleeps: its unmount loop could otherwise take maglevd's mount.
for _ in $(seq 50); do
	[ "$(cat /proc/$HOLDER/comm 2>/dev/null)" = sleep ] && break
	sleep 0.05
done
check "the test's mount namespace has no bpffs at /sys/fs/bpf" \
	bash -c "! nsenter --mount=/proc/$HOLDER/ns/mnt mountpoint -q /sys/fs/bpf"

write_conf
# start_daemon, with maglevd in that mount namespace too.
start_in_host() { DAEMON_PREFIX="nsenter --mount=/proc/$HOLDER/ns/mnt" start_daemon; }
start_in_host || { nok "maglevd starts without a bpffs"; t_done; }
ok "maglevd starts without a bpffs"
check "it logs that it mounted one" grep -q "no bpffs was mounted at /sys/fs/bpf: mounted one for pin dir $PIN" "$DLOG"
check "/sys/fs/bpf is a bpffs now" [ "$(hostx stat -f -c %T /sys/fs/bpf)" = bpf_fs ]
check "the maps are pinned there" hostx test -e "$PIN/maglev_conns"

VIP=192.0.2.10:5000/udp
ctl vip add $VIP && ctl backend add $VIP 198.51.100.1 && ctl backend add $VIP 198.51.100.2
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports 41000,41001,41002,41003 --count 3)
check "packets forwarded (12 sent, 12 seen encapsulated)" \
	[ "$(echo "$out" | jq '.sent == 12 and .seen == 12')" = true ]

kill9_daemon
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports 41000,41001,41002,41003 --count 3)
check "with maglevd killed, the pinned program forwards on (12 of 12)" \
	[ "$(echo "$out" | jq '.sent == 12 and .seen == 12')" = true ]
: >"$DLOG"
start_in_host || nok "maglevd restarts"
check "the restart adopts the pins and mounts nothing" \
	bash -c "! grep -q 'mounted one' '$DLOG' && [ \"\$($MAGLEVCTL -j vip show $VIP | jq .vip.in_table)\" = 2 ]"
stop_daemon

# A pin_dir on a filesystem that is not a bpffs.
write_conf
sed -i "s|^pin_dir .*|pin_dir $TDIR/pins|" "$CONF"
: >"$DLOG"
nsenter --net="/run/netns/$NS_LB" timeout 10 "$MAGLEVD" -c "$CONF" >>"$DLOG" 2>&1
rc=$?
check "pin_dir outside any bpffs: maglevd exits 1 ($rc)" [ $rc -eq 1 ]
check "... saying the pin directory is not on a bpffs" grep -q "pin directory $TDIR/pins is not on a bpffs" "$DLOG"

# Alone in a mount namespace of its own (as under ip netns exec).
write_conf
: >"$DLOG"
timeout 10 unshare -m --propagation private sh -c 'while mountpoint -q /sys/fs/bpf; do umount -l /sys/fs/bpf; done;
	exec nsenter --net="/run/netns/$1" "$2" -c "$3"' sh "$NS_LB" "$MAGLEVD" "$CONF" >>"$DLOG" 2>&1
rc=$?
check "alone in its mount namespace: maglevd exits 1 ($rc)" [ $rc -eq 1 ]
check "... saying a bpffs mounted there would vanish with it" grep -q "alone in its mount namespace" "$DLOG"
t_done
