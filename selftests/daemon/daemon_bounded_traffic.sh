#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Bounded loads (issue 19) with real traffic: flows that land on one backend
# live long (kept alive), all others end after udp_idle_timeout_ms (1 s), so
# that backend accumulates flows. Two VIPs side by side in one daemon, one
# with --balance-factor 1.25, one without, each driven by
# selftests/daemon/skewed_flows.py: new flows in batches of BATCH every PACE
# seconds (paced so the ~100 ms marks can follow). With the factor the
# busiest backend stays within ceil(1.25 * mean) + SLACK; without it the
# skew shows. Keep-alives are never new flows and no flow moves.
# BOUNDED_CONN_TABLE (entries) and BOUNDED_FILL_WAYS (ways of every bucket
# filled with closed, not live, entries before the traffic) make the table
# a long-running balancer's: daemon_bounded_large.sh.
. "$(dirname "$0")/lib.sh"
# jqt, quietly (check prints its own line).
jq_ok() { jqt "$@" >/dev/null; }

BATCH=4
PACE=0.1
# Slack of the cap, in flows: (1) a mark is written at the 100 ms tick after
# the load it reacts to; at one batch per tick, at most one batch lands on a
# backend the marks have not caught up with (BATCH). (2) A flow that ended
# still counts until the next census (up to a census, 100 ms, and a tick
# later: 0.2 s), so the daemon's mean runs ahead of the live one by up to
# 0.2 s of new flows spread over the 4 backends; the cap by 1.25 times that:
# ceil(1.25 * (BATCH / PACE) * 0.2 / 4) = 3. A flow on the busy backend
# never leaves it, so a dip of the mean shows in full. Without bounded loads
# the same flows put the busy backend 21 over that cap; with the census the
# loads came from before (every few seconds) 25.
SLACK=7
STICKY=198.51.100.1
BES="$STICKY 198.51.100.2 198.51.100.3 198.51.100.4"
ON=192.0.2.30:7000/udp
OFF=192.0.2.31:7000/udp

setup_net || skip_all "cannot create namespaces/veth"
# A small connection table: its census (what the loads come from) then
# takes milliseconds and runs every 100 ms (docs/maglev-table.md); 4,096
# buckets for ~400 flows, so that no bucket fills (an evicted live flow's
# next packet would be a new flow: ~5% of runs with 1,024 buckets).
CONN_TABLE=${BOUNDED_CONN_TABLE:-16384}
FILL_WAYS=${BOUNDED_FILL_WAYS:-0}
write_conf "udp_idle_timeout_ms 1000" "conn_table_size $CONN_TABLE"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"
FILLED=0
if [ "$FILL_WAYS" -gt 0 ]; then
	FILLED=$("$ROOT/build/selftests/daemon/conn_fill" "$PIN" "$FILL_WAYS") ||
		{ nok "conn_fill $FILL_WAYS ways"; t_done; }
	check "table of $CONN_TABLE filled with $FILLED closed entries" [ "$FILLED" -gt 0 ]
fi

ctl vip add $ON --balance-factor 1.25 || nok "vip add $ON"
ctl vip add $OFF || nok "vip add $OFF"
for v in $ON $OFF; do
	for b in $BES; do ctl backend add "$v" "$b" || nok "backend add $v $b"; done
done

drive() {
	clx python3 "$ROOT/selftests/daemon/skewed_flows.py" --ifname c0 --src 203.0.113.2 \
		--dst "$1" --dport 7000 --sticky $STICKY --backends 4 --base-port "$2" \
		--batch $BATCH --pace $PACE --duration 5 --idle 1.0 --keepalive 0.3 \
		--warmup 1.5 --factor 1.25 >"$3"
}
drive 192.0.2.30 42000 "$TDIR/on.json" &
P_ON=$!
drive 192.0.2.31 44000 "$TDIR/off.json" &
P_OFF=$!
wait $P_ON
wait $P_OFF
ctl -j stats >"$TDIR/stats.json"
diag "conn counters: $(jq -c .conn "$TDIR/stats.json")"
diag "with 1.25: $(cat "$TDIR/on.json")"
diag "without:   $(cat "$TDIR/off.json")"

for f in on off; do
	check "$f: every packet forwarded, every flow seen" \
		jq_ok '.sent > 0 and .sent == .seen and .unseen_flows == 0' "$TDIR/$f.json"
	check "$f: no flow moved to another backend" jq_ok '.moved == 0' "$TDIR/$f.json"
done
# Each flow counted once: keep-alives of recorded flows are no new flows.
for v in $ON $OFF; do
	f=$TDIR/off.json
	[ "$v" = $ON ] && f=$TDIR/on.json
	check "$v: new_flows = flows started ($(jq .flows "$f"))" \
		[ "$(jq --arg v $v '.vips[] | select(.vip == $v) | .new_flows' "$TDIR/stats.json")" = \
		"$(jq .flows "$f")" ]
done
# A filled table: new flows take closed entries' ways (evictions, of no
# live flow: none moved, none unseen, above).
EVICT=0
[ "$FILLED" -gt 0 ] && EVICT=.conn.conn_insert
check "conn_insert = flows started, evicted: ${EVICT#.conn.}" \
	jq_ok ".conn.conn_insert == $(($(jq .flows "$TDIR/on.json") + $(jq .flows "$TDIR/off.json"))) \
		and .conn.conn_evict == $EVICT" "$TDIR/stats.json"

check "without the factor the skew shows (max >= 2 x mean, over cap by > $SLACK)" \
	jq_ok ".last.max >= 2 * .last.mean and .worst.excess > $SLACK" "$TDIR/off.json"
check "with 1.25: max <= ceil(1.25 x mean) + $SLACK at every sample" \
	jq_ok ".worst.excess <= $SLACK" "$TDIR/on.json"
check "with 1.25: a lower max/mean than without" \
	[ "$(jq -n --slurpfile a "$TDIR/on.json" --slurpfile b "$TDIR/off.json" \
		'$a[0].last.max / $a[0].last.mean < $b[0].last.max / $b[0].last.mean')" = true ]
SPILL=$(jq --arg v $ON '.vips[] | select(.vip == $v) | .new_flow_spilled' "$TDIR/stats.json")
check "with 1.25: new flows spilled ($SPILL of $(jq .flows "$TDIR/on.json"))" \
	[ "${SPILL:-0}" -gt 0 ]
check "without: none spilled" \
	jq_ok ".vips[] | select(.vip == \"$OFF\") | .new_flow_spilled == 0" "$TDIR/stats.json"
diag "max/mean with 1.25: $(jq '.last.max / .last.mean * 100 | round / 100' "$TDIR/on.json")," \
	"without: $(jq '.last.max / .last.mean * 100 | round / 100' "$TDIR/off.json")," \
	"spilled $SPILL of $(jq .flows "$TDIR/on.json") new flows"

# The same count in the text table and the metrics (no traffic since).
check "stats text: SPILLED column has $SPILL for $ON" \
	bash -c "$MAGLEVCTL stats | awk -v v=$ON '\$1 == v { print \$NF }' | grep -qx '$SPILL'"
check "metrics: maglev_vip_new_flow_spilled_total $SPILL for $ON, 0 for $OFF" \
	bash -c "ip netns exec $NS_LB curl -sf http://127.0.0.1:$METRICS_PORT/metrics >$TDIR/m &&
		grep -qx 'maglev_vip_new_flow_spilled_total{$(vipl "$ON")} $SPILL' $TDIR/m &&
		grep -qx 'maglev_vip_new_flow_spilled_total{$(vipl "$OFF")} 0' $TDIR/m"

t_done
