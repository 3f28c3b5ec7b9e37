#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Announcing VIPs as kernel routes (userspace/maglevd/announce/announce.c), read back
# with `ip route show table T proto P` in the balancer's namespace: a VIP's
# /32 appears only once it is ready (backends up, first checks done) and
# goes on health (every backend down / one back), on `maglevctl announce
# off|on` (a maintenance that outlives a restart, while forwarding goes on),
# on the program detached behind maglevd's back (until a reload attaches
# it), and on SIGTERM (withdrawn at once, exit after the grace). A SIGKILL leaves
# the route, and the restart after it changes nothing in the table (watched
# with `ip monitor route`, which is shown to see deletes at the end).
. "$(dirname "$0")/lib.sh"

TABLE=142
PROTO=231
GRACE_MS=3000
setup_net || skip_all "cannot create namespaces/veth"
for a in 198.51.100.31 198.51.100.32 198.51.100.33; do lbx ip addr add $a/32 dev lo; done

# Bad values are refused by name.
write_conf "announce_table 254"
out=$("$MAGLEVD" -t -c "$CONF" 2>&1)
diag "$out"
check "announce_table 254 (main) refused, naming the key" \
	grep -q "bad value '254' for announce_table: .*main" <<<"$out"
write_conf "announce_table 142" "announce_protocol 12"
out=$("$MAGLEVD" -t -c "$CONF" 2>&1)
diag "$out"
check "announce_protocol 12 (bird's) refused" \
	grep -q "bad value '12' for announce_protocol: .*routing daemon" <<<"$out"

write_conf "health_via_encap no" "announce_table $TABLE" "announce_protocol $PROTO" \
	"announce_min_backends 1" "announce_stop_grace_ms $GRACE_MS"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts with announce_table $TABLE"

routes() { lbx ip route show table $TABLE proto $PROTO 2>/dev/null; }
has_route() { routes | grep -q "^blackhole $1 *$"; }
# wait_route ADDR yes|no SECONDS
wait_route() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -le $end ]; do
		if has_route "$1"; then [ "$2" = yes ] && return 0; else [ "$2" = no ] && return 0; fi
		sleep 0.05
	done
	return 1
}
reason() { ctl -j announce | jq -r --arg v "$1" '.announce.vips[] | select(.vip == $v) | .reason'; }
listen() { listen_tcp "$NS_LB" "$@"; }
HC="--check tcp --check-interval 200 --check-timeout 150 --rise 1 --fall 1"

V=192.0.2.30:80/tcp
ctl vip add $V $HC
sleep 0.5
check "a VIP without backends is not announced (too_few_backends)" \
	bash -c "! ip -n $NS_LB route show table $TABLE proto $PROTO 2>/dev/null | grep -q . && [ \"\$($MAGLEVCTL -j announce | jq -r '.announce.vips[0].reason')\" = too_few_backends ]"
listen 198.51.100.31 80 || nok "listener on 198.51.100.31:80"
L31=$LPID
listen 198.51.100.32 80 || nok "listener on 198.51.100.32:80"
L32=$LPID
ctl backend add $V 198.51.100.31
ctl backend add $V 198.51.100.32
check "ready: the VIP's /32 appears in table $TABLE proto $PROTO" wait_route 192.0.2.30 yes 3
check "status says announced, reason ready" \
	bash -c "$MAGLEVCTL -j status | jq -e '.announce.vips[] | select(.vip == \"$V\") | .announced and .reason == \"ready\"' >/dev/null"
check "the route is a blackhole: nothing of this host routes through the table" \
	bash -c "ip -n $NS_LB route show table $TABLE | grep -q '^blackhole 192.0.2.30 proto $PROTO *$'"

# A VIP without checks is ready as soon as its table is.
U=192.0.2.32:5000/udp
ctl vip add $U --check none
ctl backend add $U 198.51.100.33
check "a VIP with --check none is announced without checks" wait_route 192.0.2.32 yes 3

# Health checks not done yet: a new VIP waits for them (a check every hour:
# its first one is minutes away).
W=192.0.2.31:80/tcp
ctl vip add $W --check tcp --check-interval 3600000 --check-timeout 1000
sleep 0.3 # a VIP without backends has had no check either (no latch on an empty VIP)
ctl backend add $W 198.51.100.31
sleep 0.5
check "first health checks pending: not announced (checks_pending)" \
	bash -c "! ip -n $NS_LB route show table $TABLE proto $PROTO | grep -q 192.0.2.31 && \
		 [ \"\$($MAGLEVCTL -j announce | jq -r '.announce.vips[] | select(.vip == \"$W\") | .reason')\" = checks_pending ]"
ctl -j announce | jq -c '.announce | {routes, vips: [.vips[] | [.vip, .reason, .detail]]}' | sed 's/^/# /'
ctl vip del $W

M=$TDIR/metrics.txt
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M"
check "metrics: maglev_vip_announced 1, reason ready 1 and every other reason 0, route count 2" \
	bash -c "grep -qx 'maglev_vip_announced{$(vipl "$V")} 1' $M && grep -qx 'maglev_announce_routes 2' $M &&
		 grep -qx 'maglev_vip_announce_reason{$(vipl "$V"),reason=\"ready\"} 1' $M &&
		 [ \$(grep -c '^maglev_vip_announce_reason{$(vipl "$V"),reason=\"[a-z_]*\"} 0\$' $M) -eq 6 ]"

# Every backend down: withdrawn; one back: announced again.
kill $L31 $L32
t0=$(date +%s%N)
check "every backend down: the route is withdrawn" wait_route 192.0.2.30 no 3
diag "withdrawn $((($(date +%s%N) - t0) / 1000000)) ms after the listeners died (check 200 ms, fall 1)"
check "reason too_few_backends, detail counts them" \
	bash -c "[ \"\$($MAGLEVCTL -j announce | jq -r '.announce.vips[0].detail')\" = '0 of 2 backends usable, 1 wanted' ]"
listen 198.51.100.32 80 || nok "listener on 198.51.100.32:80 again"
check "one backend back: announced again" wait_route 192.0.2.30 yes 3

# Maintenance: withdrawn while forwarding goes on; it lasts across a restart.
# The marker must survive a power loss: the state directory is fsynced after
# it is written (strace on maglevd sees an fsync of the directory's fd).
if command -v strace >/dev/null; then
	strace -f -p "$DPID" -e trace=openat,fsync -o "$TDIR/strace" 2>/dev/null &
	ST=$!
	# until strace traces every thread of maglevd
	for _ in $(seq 60); do
		! grep -h '^TracerPid:' /proc/"$DPID"/task/*/status 2>/dev/null | grep -q '	0$' && break
		sleep 0.05
	done
	ctl announce off >/dev/null
	kill -INT $ST 2>/dev/null
	wait $ST 2>/dev/null
	dfd=$(sed -n "s|.*openat(.*\"$(dirname "$STATE")\", O_RDONLY[^)]*O_DIRECTORY.*) = \([0-9]*\)\$|\1|p" "$TDIR/strace" | tail -n1)
	check "announce off: the marker's directory is fsynced (fd ${dfd:-none})" \
		bash -c "[ -n '$dfd' ] && grep -q 'fsync($dfd)' '$TDIR/strace'"
else
	ctl announce off >/dev/null
fi
check "announce off: every VIP withdrawn at once" \
	bash -c "for i in \$(seq 20); do ! ip -n $NS_LB route show table $TABLE proto $PROTO 2>/dev/null | grep -q . && exit 0; sleep 0.05; done; exit 1"
check "announce off: reason maintenance, marker file written" \
	bash -c "[ \"\$($MAGLEVCTL -j announce | jq -r '.announce.vips[0].reason')\" = maintenance ] && [ -e $STATE.announce-off ]"
out=$(pktio --dst 192.0.2.32 --dport 5000 --sports 42000,42001,42002 --count 2)
check "in maintenance the balancer still forwards what arrives (6 sent, 6 encapsulated)" \
	[ "$(echo "$out" | jq '.sent == 6 and .seen == 6')" = true ]
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M"
check "metrics: maglev_announce_maintenance 1, the VIP 0 with reason maintenance" \
	bash -c "grep -qx 'maglev_announce_maintenance 1' $M && grep -qx 'maglev_vip_announced{$(vipl "$V")} 0' $M &&
		 grep -qx 'maglev_vip_announce_reason{$(vipl "$V"),reason=\"maintenance\"} 1' $M &&
		 grep -qx 'maglev_vip_announce_reason{$(vipl "$V"),reason=\"ready\"} 0' $M"
kill9_daemon
start_daemon || nok "maglevd restarts in maintenance"
sleep 1
check "maintenance survives a restart: still withdrawn" \
	bash -c "! ip -n $NS_LB route show table $TABLE proto $PROTO | grep -q 192.0.2.30 && \
		 $MAGLEVCTL -j announce | jq -e '.announce.maintenance' >/dev/null"
check "announce bogus: refused by maglevctl" bash -c "! $MAGLEVCTL announce bogus 2>/dev/null"
check "announce with a bad state: refused by maglevd, naming it" \
	bash -c "echo '{\"cmd\":\"announce\",\"state\":\"maybe\"}' | socat - UNIX-CONNECT:$SOCK | jq -e '.ok == false and (.error | test(\"maybe.*on or off\"))' >/dev/null"
ctl announce on >/dev/null
check "announce on: announced again, marker removed" \
	bash -c "for i in \$(seq 40); do ip -n $NS_LB route show table $TABLE proto $PROTO | grep -q 'blackhole 192.0.2.30' && [ ! -e $STATE.announce-off ] && exit 0; sleep 0.05; done; exit 1"

# A route deleted by someone else comes back with the next read-back (5 s).
check "someone deletes the route of 192.0.2.32" \
	bash -c "ip -n $NS_LB route del blackhole 192.0.2.32/32 table $TABLE proto $PROTO && \
		 ! ip -n $NS_LB route show table $TABLE proto $PROTO | grep -q 192.0.2.32"
check "a route deleted behind maglevd's back is put back within 6 s" wait_route 192.0.2.32 yes 6

# The program detached behind maglevd's back (its pinned link detached):
# withdrawn (not_attached); a reload attaches it again: announced again.
pid_prog=$(lbx ip -j -d link show lb0 | jq '.[0].xdp.prog.id // empty')
lid=$(bpftool -j link show | jq --argjson p "${pid_prog:-0}" '.[] | select(.type == "xdp" and .prog_id == $p) | .id')
if [ -n "$lid" ] && bpftool link detach id "$lid"; then
	check "program detached: withdrawn" wait_route 192.0.2.30 no 2
	check "reason not_attached, naming the interface" \
		bash -c "[ \"\$($MAGLEVCTL -j announce | jq -r '.announce.vips[0].detail')\" = 'program not attached on lb0' ]"
	kill -HUP "$DPID"
	check "SIGHUP attaches it again: announced again" wait_route 192.0.2.30 yes 5
else
	nok "detach the balancer's XDP link (bpftool link detach)"
fi

# SIGKILL: the route stays; the restart causes no route change at all.
kill9_daemon
sleep 0.5
check "SIGKILL: the route stays (forwarding goes on)" has_route 192.0.2.30
MON=$TDIR/monitor.txt
lbx ip monitor route >"$MON" 2>&1 &
MONPID=$!
disown $MONPID
EXTRA_PIDS="$EXTRA_PIDS $MONPID"
sleep 0.3
start_daemon || nok "maglevd restarts"
wait_ready() {
	for _ in $(seq 60); do
		[ "$(reason $V)" = ready ] && return 0
		sleep 0.05
	done
	return 1
}
check "after the restart the VIP is ready again (first checks done)" wait_ready
sleep 1 # one more round of checks and a reconcile
check "the restart changed nothing in the table: no delete, no add (ip monitor)" \
	bash -c "! grep -q 'table $TABLE' $MON"
check "the route is still there" has_route 192.0.2.30
grep 'table' "$MON" | sed 's/^/# monitor: /'

# SIGTERM: withdrawn first, the exit after the grace.
kill -TERM "$DPID"
t0=$(date +%s%N)
check "SIGTERM: withdrawn at once" wait_route 192.0.2.30 no 1
alive=no
kill -0 "$DPID" && alive=yes
check "SIGTERM: maglevd still running during the grace" [ $alive = yes ]
wait "$DPID"
rc=$?
el=$((($(date +%s%N) - t0) / 1000000))
DPID=
diag "exited ${el} ms after SIGTERM (grace $GRACE_MS ms)"
check "SIGTERM: exit 0 after the grace (${el} ms >= $GRACE_MS ms, < $((GRACE_MS + 3000)) ms)" \
	bash -c "[ $rc = 0 ] && [ $el -ge $GRACE_MS ] && [ $el -lt $((GRACE_MS + 3000)) ]"
sleep 0.2
check "ip monitor saw the SIGTERM's delete (so it would have seen one at the restart)" \
	grep -q "Deleted.*192.0.2.30.*table $TABLE" "$MON"
check "the log says withdrawn, then the exit" grep -q "announce: 192.0.2.30/32 withdrawn (stopping)" "$DLOG"
t_done
