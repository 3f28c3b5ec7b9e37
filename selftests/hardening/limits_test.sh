#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Resource limits of a real maglevd (issue 7): the connection table's events
# in `maglevctl stats` (new flows above new_flow_limit are forwarded and
# counted, never dropped silently); max_vips (512), max_backends_per_vip
# (4096) and the datapath's 65,535 backend slots, each filled through one
# restore and then refused one past the limit with an error naming it and
# the state unchanged; a daemon restarted at the full state restores it, and
# `save` of the full state is accepted back by `restore`.
. "$(dirname "$0")/../daemon/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf "new_flow_limit 5"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts (new_flow_limit 5)"

# elapsed T0: seconds since T0 (a `date +%s.%N`).
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

# What a refused request must leave alone. The state file follows each
# accepted change from a background thread that renders it first (about
# 0.1 s per MB here) and then renames it into place: wait until it has not
# changed for longer than a render takes.
light_snapshot() {
	local a b i quiet
	for i in $(seq 60); do
		a=$(stat -c %i.%.9Y.%s "$STATE" 2>/dev/null)
		quiet=$(($(stat -c %s "$STATE") / 1000000 + 3))
		sleep "$(awk -v q="$quiet" 'BEGIN { print q / 10 }')"
		b=$(stat -c %i.%.9Y.%s "$STATE" 2>/dev/null)
		[ "$a" = "$b" ] && break
	done
	{
		ctl save | grep -v '^#'
		jq -S . "$STATE"
	} 2>&1 | md5sum
}

# refuse NAME PATTERN CMD...: exit 1, one line matching PATTERN, state unchanged.
refuse() {
	local name=$1 pat=$2 before out rc
	shift 2
	before=$(light_snapshot)
	out=$("$MAGLEVCTL" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q -- "$pat" &&
		[ "$(light_snapshot)" = "$before" ]; then
		ok "refused, state unchanged: $name ($out)"
	else
		nok "refused, state unchanged: $name (rc $rc: $out)"
	fi
}

# --- connection-table events in maglevctl stats ----------------------------------
VIP=192.0.2.10:5000/udp
ctl vip add $VIP && ctl backend add $VIP 198.51.100.1 && ctl backend add $VIP 198.51.100.2
# 60 new flows in well under a second, 5 inserts allowed per second per CPU.
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports "$(seq -s, 41000 41059)" --count 1)
diag "60 new flows above new_flow_limit: $(echo "$out" | jq -c '{sent, seen}')"
check "every new flow forwarded although most were not recorded (60 sent, 60 seen)" \
	[ "$(echo "$out" | jq '.sent == 60 and .seen == 60')" = true ]
st=$(ctl -j stats)
diag "stats -j .conn: $(echo "$st" | jq -c .conn)"
check "stats -j: every connection-table counter is there" \
	bash -c "echo '$st' | jqt '.conn | keys == ([\"conn_expired\",\"conn_hit\",\"conn_insert\",\"conn_evict\",\"conn_insert_skip\",\"conn_miss\",\"conn_repick\",\"sc_carried\"] | sort)' >/dev/null"
check "stats -j: skipped inserts counted (insert + skip = miss = 60, skip >= 40, no failures)" \
	bash -c "echo '$st' | jqt '.conn | .conn_miss == 60 and .conn_insert + .conn_insert_skip == 60 and .conn_insert_skip >= 40' >/dev/null"
skip=$(echo "$st" | jq .conn.conn_insert_skip)
check "stats (text) shows the connection table with conn_insert_skip $skip" \
	bash -c "$MAGLEVCTL stats | grep -A8 '^connection table:' | grep -Eq '^  conn_insert_skip +$skip\$'"
check "metrics agree: maglev_conn_events_total{event=\"insert_skip\"} $skip" \
	bash -c "ip netns exec $NS_LB curl -sf http://127.0.0.1:$METRICS_PORT/metrics | grep -qx 'maglev_conn_events_total{event=\"insert_skip\"} $skip'"

# --- max_vips ---------------------------------------------------------------------
for i in $(seq 1 511); do echo "vip add 192.0.2.$((i % 250 + 1)):$((10000 + i))/tcp"; done >"$TDIR/vips"
t0=$(date +%s.%N)
check "restore --no-flush of 511 VIPs (512 in all) accepted" ctl restore --no-flush "$TDIR/vips"
diag "512 VIPs in $(elapsed "$t0") s"
check "512 VIPs configured" [ "$(ctl -j vip list | jq '.vips | length')" -eq 512 ]
refuse "the 513th VIP (IPv4)" "too many VIPs: the limit is 512 (max_vips)" vip add 192.0.2.99:80/tcp
refuse "the 513th VIP (IPv6)" "too many VIPs: the limit is 512 (max_vips)" \
	vip add '[2001:db8::99]:80/tcp'
printf 'vip add 192.0.2.99:80/tcp\nvip add 192.0.2.99:81/tcp\n' >"$TDIR/two"
refuse "a batch that would pass the limit (nothing applied)" "two:1: too many VIPs" \
	restore --no-flush "$TDIR/two"
check "deleting one VIP makes room for another (the limit is a count)" \
	bash -c "$MAGLEVCTL vip del 192.0.2.2:10001/tcp && $MAGLEVCTL vip add 192.0.2.99:80/tcp"
refuse "at the limit again" "the limit is 512" vip add 192.0.2.99:81/tcp
printf 'max_vips 513\n' >"$TDIR/big.conf"
check "max_vips above the datapath's 512 is a config error, naming the key and value once" \
	bash -c "$MAGLEVD -t -c $TDIR/big.conf 2>&1 | grep -q \"line 1: bad value '513' for max_vips: must be 1..512\$\""

# --- max_backends_per_vip (default 4096) ---------------------------------------------
for i in $(seq 3 4096); do printf 'backend add %s 2001:db8:b::%x\n' "$VIP" "$i"; done >"$TDIR/bes"
check "restore --no-flush of 4094 backends into one VIP (4096) accepted" \
	ctl restore --no-flush "$TDIR/bes"
check "VIP has 4096 backends, all in the table" \
	[ "$(ctl -j vip show $VIP | jq '.vip.backends == 4096 and .vip.in_table == 4096')" = true ]
refuse "the 4097th backend of a VIP" \
	"too many backends in VIP $VIP: the limit is 4096 (max_backends_per_vip)" \
	backend add $VIP 2001:db8:b::ffff

# --- the datapath's backend slots: 65,535 in all VIPs ---------------------------------
# 15 more VIPs x 4096 = 65,536 in all: fill to 65,535, then one more.
vips=$(ctl -j vip list | jq -r '.vips[].vip' | grep -v "^$VIP\$" | head -15)
n=0
for v in $vips; do
	for i in $(seq 1 4096); do
		n=$((n + 1))
		[ $n -le 61439 ] && printf 'backend add %s 2001:db8:c:%x::%x\n' "$v" $((n >> 12)) "$i"
	done
done >"$TDIR/fill"
last=$(echo "$vips" | tail -1)
t0=$(date +%s.%N)
check "restore --no-flush of 61,439 backends (65,535 in all) accepted" \
	ctl restore --no-flush "$TDIR/fill"
diag "61,439 backends ($(du -k "$TDIR/fill" | cut -f1) KiB of commands) in $(elapsed "$t0") s"
check "65,535 backends configured" [ "$(ctl -j backend list | jq '.backends | length')" -eq 65535 ]
refuse "backend 65,536 (every datapath slot in use)" \
	"too many backends: all 65535 datapath backend slots are in use" \
	backend add "$last" 2001:db8:d::1

# --- the full state survives a restart and a save/restore round trip --------------------
sleep 0.5
ctl save >"$TDIR/full.save"
diag "state file $(du -k "$STATE" | cut -f1) KiB, save $(du -k "$TDIR/full.save" | cut -f1) KiB"
stop_daemon
t0=$(date +%s.%N)
# 65,535 backends take seconds to load, more on a loaded machine: a slow start
# is measured (below), not failed.
START_TIMEOUT_S=60 start_daemon
diag "restart with the full state: $(elapsed "$t0") s"
check "restart restores all 512 VIPs and 65,535 backends" \
	bash -c "[ \$($MAGLEVCTL -j vip list | jq '.vips | length') -eq 512 ] && [ \$($MAGLEVCTL -j backend list | jq '.backends | length') -eq 65535 ]"
check "restart: the same configuration" [ "$(ctl save | grep -v '^#')" = "$(grep -v '^#' "$TDIR/full.save")" ]
t0=$(date +%s.%N)
check "restore of the full saved configuration (one request) accepted" ctl restore "$TDIR/full.save"
diag "full restore in $(elapsed "$t0") s"
check "full restore round trip: same configuration" \
	[ "$(ctl save | grep -v '^#')" = "$(grep -v '^#' "$TDIR/full.save")" ]
check "daemon still up" kill -0 "$DPID"
stop_daemon
t_done
