#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `systemctl restart` keeps the announced routes (issue 32 item 11). There is
# no systemd here: the test sends maglevd the signal the shipped unit
# (docs/maglevd.service) makes systemd send on a restart (RestartKillSignal,
# else KillSignal), starts it again, and watches the announce table with
# `ip monitor route`: no delete, no add, and a clean exit without the stop
# grace. A SIGTERM (systemctl stop) still withdraws, which shows that the
# monitor sees deletes.
. "$(dirname "$0")/lib.sh"

TABLE=144
PROTO=233
GRACE_MS=3000
UNIT=$ROOT/docs/maglevd.service
setup_net || skip_all "cannot create namespaces/veth"
lbx ip addr add 198.51.100.41/32 dev lo
write_conf "health_via_encap no" "announce_table $TABLE" "announce_protocol $PROTO" \
	"announce_min_backends 1" "announce_stop_grace_ms $GRACE_MS"
start_daemon || { nok "maglevd starts"; t_done; }
routes() { lbx ip route show table $TABLE proto $PROTO 2>/dev/null; }
has_route() { routes | grep -q "^blackhole $1 *$"; }
V=192.0.2.40:80/tcp
listen_tcp "$NS_LB" 198.51.100.41 80 || nok "a listener on 198.51.100.41:80"
ctl vip add $V --check tcp --check-interval 200 --check-timeout 150 --rise 1 --fall 1 >/dev/null
ctl backend add $V 198.51.100.41 >/dev/null
check "the VIP is announced" poll_until 5 has_route 192.0.2.40
route_monitor $((TABLE + 1)) || nok "ip monitor route runs"

# What systemd sends on a restart with the shipped unit.
SIG=$(sed -n 's/^RestartKillSignal=//p' "$UNIT")
[ -n "$SIG" ] || SIG=$(sed -n 's/^KillSignal=//p' "$UNIT")
diag "the unit's restart signal: $SIG"
t0=$(date +%s%N)
kill -s "${SIG#SIG}" "$DPID"
wait "$DPID"
rc=$?
el=$((($(date +%s%N) - t0) / 1000000))
DPID=
check "restart signal $SIG: a clean exit (rc $rc), without the ${GRACE_MS} ms stop grace (${el} ms)" \
	[ $rc = 0 -a $el -lt $GRACE_MS ]
check "... the log says why the routes stay" grep -q "announce: exiting for a restart: 1 route left" "$DLOG"
check "... the route is still there" has_route 192.0.2.40
start_daemon || nok "maglevd starts again"
ready() { ctl -j announce | jq -e ".announce.vips[] | select(.vip == \"$V\") | .reason == \"ready\"" >/dev/null; }
check "... ready again after its first checks" poll_until 5 ready
check "the restart changed nothing in table $TABLE: no delete, no add (ip monitor)" \
	bash -c "! grep -q 'table $TABLE' $MON"
grep "table $TABLE" "$MON" | sed 's/^/# monitor: /'

# systemctl stop: SIGTERM withdraws.
kill -TERM "$DPID"
check "SIGTERM (systemctl stop): withdrawn" poll_until 2 bash -c "! ip -n $NS_LB route show table $TABLE proto $PROTO | grep -q 192.0.2.40"
check "... and ip monitor saw that delete" poll_until 2 grep -q "Deleted.*192.0.2.40.*table $TABLE" "$MON"
wait "$DPID"
DPID=
t_done
