#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The operator's everyday comforts against a real daemon: maglevctl's exit
# statuses (done, rejected, usage, no daemon, outcome unknown), the audit
# line of every accepted change (uid, pid, command, arguments) and none for
# a rejected one; what status reports (per interface XDP mode and next hop,
# the default-seed warning, the slow-path module, the last reload); table
# --dump's slot ranges.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts in its namespace"

V4=192.0.2.10:80/tcp
jqok() { jqt "$@" >/dev/null; }
# rc CMD...: the exit status of CMD, output dropped.
rc() {
	"$@" >/dev/null 2>&1
	echo $?
}

# --- exit statuses --------------------------------------------------------------
check "exit 0: a change is done" [ "$(rc ctl vip add $V4)" = 0 ]
ctl backend add $V4 198.51.100.1
before=$(snapshot)
check "exit 1: a rejected change (no such VIP)" \
	[ "$(rc ctl backend add 192.0.2.99:80/tcp 198.51.100.2)" = 1 ]
check "exit 1: a change the daemon refuses (duplicate backend)" \
	[ "$(rc ctl backend add $V4 198.51.100.1)" = 1 ]
check "exit 1 changed nothing" [ "$(snapshot)" = "$before" ]
check "exit 2: a usage error" [ "$(rc ctl backend frob $V4)" = 2 ]
check "exit 3: no daemon listens on the socket" \
	[ "$(rc ctl -s "$TDIR/none.sock" backend set $V4 198.51.100.1 --drain)" = 3 ]
check "exit 3: restore without a daemon" \
	bash -c "echo 'vip add 192.0.2.12:80/tcp' | $MAGLEVCTL -s $TDIR/none.sock restore 2>/dev/null; [ \$? -eq 3 ]"
# A "daemon" that reads the request and dies before answering: the change may
# or may not have happened, and maglevctl must say so.
python3 - "$TDIR/mute.sock" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(4); s.settimeout(20)
for _ in range(2):
    c, _ = s.accept()
    buf = b""
    while not buf.endswith(b"\n"):
        d = c.recv(65536)
        if not d:
            break
        buf += d
    c.close()
PY
MUTE=$!
EXTRA_PIDS="${EXTRA_PIDS:-} $MUTE"
for i in $(seq 50); do [ -S "$TDIR/mute.sock" ] && break; sleep 0.05; done
"$MAGLEVCTL" -s "$TDIR/mute.sock" backend set $V4 198.51.100.1 --drain 2>"$TDIR/err4"
r4=$?
check "exit 4: the request was sent but no answer came" [ $r4 = 4 ]
check "exit 4: stderr says the outcome is unknown" grep -q 'outcome is unknown' "$TDIR/err4"
"$MAGLEVCTL" -j -s "$TDIR/mute.sock" vip list >"$TDIR/out4" 2>/dev/null
r4=$?
check "exit 4 with -j: a JSON error on stdout" \
	bash -c "[ $r4 = 4 ] && jqt '.ok == false and (.error | test(\"unknown\"))' $TDIR/out4 >/dev/null"
wait $MUTE 2>/dev/null

# --- audit trail ------------------------------------------------------------------
# Run maglevctl from a subshell whose pid we know: the line must name it.
audited() { # audited PATTERN: the number of 'accepted' lines matching PATTERN
	grep -c "info: accepted .*$1" "$DLOG"
}
n0=$(grep -c 'info: accepted' "$DLOG")
bash -c 'echo $$ >'"$TDIR/ctl.pid"'; exec '"$MAGLEVCTL"' backend set '$V4' 198.51.100.1 --drain'
CPID=$(cat "$TDIR/ctl.pid")
check "audit: one line names uid 0, maglevctl's pid, the command and its arguments" \
	[ "$(audited "backend.set from uid 0 pid $CPID: vip=192\.0\.2\.10:80/tcp backend=198\.51\.100\.1 drain=true\$")" = 1 ]
check "audit: the drain logged exactly one line" [ $(($(grep -c 'info: accepted' "$DLOG") - n0)) = 1 ]
n0=$(grep -c 'info: accepted' "$DLOG")
ctl backend set $V4 198.51.100.9 --drain 2>/dev/null
ctl vip del 192.0.2.99:80/tcp 2>/dev/null
ctl backend add $V4 198.51.100.1 2>/dev/null
check "audit: rejected changes log no 'accepted' line" \
	[ "$(grep -c 'info: accepted' "$DLOG")" = "$n0" ]
ctl status >/dev/null
ctl backend list >/dev/null
check "audit: queries log no 'accepted' line" [ "$(grep -c 'info: accepted' "$DLOG")" = "$n0" ]
printf 'vip add 192.0.2.20:80/tcp\nbackend add 192.0.2.20:80/tcp 198.51.100.4\nbackend add 192.0.2.20:80/tcp 198.51.100.5\n' |
	ctl restore --no-flush
check "audit: a restore is one line summarising its changes" \
	[ "$(audited 'batch from uid 0 pid [0-9]*: 3 changes: vip.add x1, backend.add x2$')" = 1 ]
# Values beyond plain words are JSON-quoted: one field cannot pose as two.
ctl vip add 192.0.2.21:80/tcp --check http --check-path '/h?a=1&x=2'
check "audit: a value beyond plain words is JSON-quoted" \
	[ "$(audited 'vip.add .* check_path="/h?a=1&x=2"')" = 1 ]
ctl vip set 192.0.2.21:80/tcp --placement ring
check "audit: vip set is a change" [ "$(audited 'vip.set from uid 0 pid [0-9]*: vip=192\.0\.2\.21:80/tcp placement=ring')" = 1 ]
n0=$(grep -c 'info: accepted' "$DLOG")
ctl save | ctl restore --dry-run >/dev/null 2>&1
check "audit: restore --dry-run changes nothing and logs no 'accepted' line" \
	[ "$(grep -c 'info: accepted' "$DLOG")" = "$n0" ]

# --- table --dump ------------------------------------------------------------------
VT=192.0.2.30:80/tcp
ctl vip add $VT && ctl backend add $VT 198.51.100.31 && ctl backend add $VT 198.51.100.32 --weight 2 &&
	ctl backend add $VT 198.51.100.33 --weight 0
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$DPID/status"; }
rss0=$(rss) # before the first dump
ctl -j table $VT --dump >"$TDIR/dump.json"
check "table --dump: the ranges cover slots 0..65536 in order, without gaps" \
	jqok '[.ranges[] | [.first, .last]] as $r | $r[0][0] == 0 and $r[-1][1] == .size - 1 and
		all(range(1; $r | length); $r[.][0] == $r[. - 1][1] + 1) and all($r[]; .[0] <= .[1])' \
	"$TDIR/dump.json"
check "table --dump: neighbouring ranges name different backends" \
	jqok '.ranges as $r | all(range(1; $r | length); $r[.].backend != $r[. - 1].backend)' \
	"$TDIR/dump.json"
check "table --dump: each backend's ranges add up to its slots; weight 0 has none" \
	jqok '(.ranges | group_by(.backend) | map({key: .[0].backend, value: (map(.last - .first + 1) | add)}) | from_entries) as $s |
		all(.backends[]; ($s[.backend] // 0) == .slots) and ($s["198.51.100.33"] == null)' \
	"$TDIR/dump.json"
# The slot a flow hashes to (lookup) lies in a range naming the backend lookup names.
ctl -j lookup $VT 203.0.113.7:40000 >"$TDIR/lk.json"
slot=$(jq .slot "$TDIR/lk.json") tb=$(jq -r .table_backend "$TDIR/lk.json")
check "table --dump: the range holding lookup's slot names lookup's backend" \
	jqok "[.ranges[] | select(.first <= $slot and $slot <= .last)] | length == 1 and .[0].backend == \"$tb\"" \
	"$TDIR/dump.json"
nr=$(jq '.ranges | length' "$TDIR/dump.json")
check "table --dump text: a SLOTS header and one line per range" \
	bash -c "$MAGLEVCTL table $VT --dump | sed -n '/^SLOTS /,\$p' | tail -n +2 | grep -cE '^[0-9]+(-[0-9]+)? +198\.51\.100\.3[12]\$' | grep -qx $nr"
check "table without --dump lists no ranges" \
	bash -c "$MAGLEVCTL -j table $VT | jqt 'has(\"ranges\") | not' >/dev/null && ! $MAGLEVCTL table $VT | grep -q '^SLOTS'"
check "table --frob is a usage error" [ "$(rc ctl table $VT --frob)" = 2 ]
# A dump is a large answer (~40,000 ranges here): the daemon gives the heap
# back after it, so an operator or a soak dumping every second does not grow
# maglevd's memory.
for i in 1 2 3 4 5; do ctl -j table $VT --dump >/dev/null; done
# (the daemon frees an answer once sent, maybe just after the client read it)
for i in $(seq 20); do
	rss1=$(rss)
	[ "$rss1" -lt $((rss0 + 8192)) ] && break
	sleep 0.1
done
check "the dumps leave maglevd's RSS within 8 MiB of before the first ($rss0 kB, then $rss1 kB)" \
	[ "$rss1" -lt $((rss0 + 8192)) ]

# --- state names and metrics -------------------------------------------------------
M=$TDIR/metrics.txt
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M"
check "weight 0 is 'quiesced' in backend list" \
	jqok '.backends[] | select(.backend == "198.51.100.33") | .state == "quiesced"' \
	<(ctl -j backend list $VT)
check "weight 0 is 'quiesced' in the metrics too" \
	grep -qx "maglev_backend_state{$(vipl "$VT"),backend=\"198.51.100.33\",state=\"quiesced\"} 1" "$M"
# Every backend: the state maglevctl prints is the metrics' label set to 1,
# and every other state is there at 0 (series do not come and go).
ctl -j backend list | jq -r "$JQ_VIPL"'.backends[] | "maglev_backend_state{\(.vip | vipl),backend=\"\(.backend)\",state=\"\(.state)\"} 1"' | sort >"$TDIR/want"
grep '^maglev_backend_state{.* 1$' "$M" | sort >"$TDIR/got"
# up, ramping, quiesced, drain, held, suppressed, down (model/be_state.h)
check "every backend has its 7 states, 6 of them 0" \
	bash -c "[ \$(grep -c '^maglev_backend_state{.* 0\$' $M) -eq \$((6 * \$(wc -l <$TDIR/want))) ] &&
		 [ \$(grep -c '^maglev_backend_state{' $M) -eq \$((7 * \$(wc -l <$TDIR/want))) ]"
check "every backend's state is named alike by maglevctl and the metrics (up, drain, quiesced)" \
	bash -c "[ -s $TDIR/want ] && diff $TDIR/want $TDIR/got >/dev/null && grep -q 'state=\"drain\"' $TDIR/got && grep -q 'state=\"up\"' $TDIR/got"
check "metrics: maglev_build_info names the running version" \
	grep -qx "maglev_build_info{version=\"$("$MAGLEVCTL" -j status | jq -r .version)\"} 1" "$M"
check "metrics: lb0's XDP attach state native 1, the other four modes 0" \
	bash -c "grep -qx 'maglev_interface_xdp{interface=\"lb0\",mode=\"native\"} 1' $M &&
		 [ \$(grep -c '^maglev_interface_xdp{interface=\"lb0\",mode=\"[a-z]*\"} 0\$' $M) -eq 4 ]"

# --- flows per backend ----------------------------------------------------------------
VF=192.0.2.40:5000/udp
ctl vip add $VF && ctl backend add $VF 198.51.100.41 && ctl backend add $VF 198.51.100.42
out=$(pktio --dst 192.0.2.40 --dport 5000 --sports "$(seq -s, 42000 42019)" --count 2)
# flows_of BACKEND: the flows pktio saw going to BACKEND.
flows_of() { echo "$out" | jq --arg b "$1" '[.flows[] | select(keys == [$b])] | length'; }
want41=$(flows_of 198.51.100.41) want42=$(flows_of 198.51.100.42)
diag "pktio: $(echo "$out" | jq -c '{sent, seen}'), flows to .41: $want41, .42: $want42"
flows() { ctl -j backend list $VF | jq -r --arg b "$1" '.backends[] | select(.backend == $b) | .flows'; }
end=$((SECONDS + 10))
while [ $SECONDS -le $end ] && [ "$(flows 198.51.100.41)+$(flows 198.51.100.42)" != "$want41+$want42" ]; do
	sleep 0.2
done
check "backend list: each backend holds the flows pktio saw go to it (20 in all)" \
	[ "$(flows 198.51.100.41)+$(flows 198.51.100.42)" = "$want41+$want42" -a $((want41 + want42)) = 20 ]
check "backend list text: a FLOWS column" \
	bash -c "$MAGLEVCTL backend list $VF | grep -qE '^192\.0\.2\.40:5000/udp +198\.51\.100\.41 .* $want41\$' && $MAGLEVCTL backend list $VF | head -n1 | grep -q 'FLOWS\$'"
check "backend list text: says how old the FLOWS counts are" \
	bash -c "$MAGLEVCTL backend list $VF | tail -n1 | grep -qE '^FLOWS: connection-table entries, counted [0-9]+\.[0-9] s ago\$'"
check "backend list -j: flows_age_s, a number of seconds" \
	bash -c "$MAGLEVCTL -j backend list | jq -e '.flows_age_s | type == \"number\" and . >= 0 and . < 60' >/dev/null"
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M"
check "metrics: maglev_backend_flows per backend" \
	grep -qx "maglev_backend_flows{$(vipl "$VF"),backend=\"198.51.100.41\"} $want41" "$M"
check "metrics: per-backend packets, read in batches, match what pktio saw" \
	grep -qx "maglev_backend_packets_total{$(vipl "$VF"),backend=\"198.51.100.42\"} $((want42 * 2))" "$M"
check "metrics: connection-table occupancy (slots, live entries)" \
	bash -c "grep -qx 'maglev_conn_table_slots [0-9]*' $M && [ \$(sed -n 's/^maglev_conn_table_entries{state=\"live\"} //p' $M) -ge 20 ]"
ctl backend set $VF 198.51.100.41 --drain
sleep 2.5
check "a drained backend keeps counting the flows it still serves" [ "$(flows 198.51.100.41)" = "$want41" ]
# Re-added, the backend has a new generation: the old entries are not its flows
# (--force: it still carries them, so a plain del is refused).
ctl backend del $VF 198.51.100.41 --force && ctl backend add $VF 198.51.100.41
end=$((SECONDS + 10))
while [ $SECONDS -le $end ] && [ "$(flows 198.51.100.41)" != 0 ]; do sleep 0.2; done
check "a deleted and re-added backend holds none of its old entries" [ "$(flows 198.51.100.41)" = 0 ]
check "the other backend's count is unchanged" [ "$(flows 198.51.100.42)" = "$want42" ]

# --- status ---------------------------------------------------------------------
S=$TDIR/status.json
ctl -j status >"$S"
check "status: lb0 has the XDP program attached in native mode" \
	jqok '.interface_state[0] | .name == "lb0" and .xdp == "native" and .prog_id > 0' "$S"
check "status: lb0's next hop is the client side's MAC (auto)" \
	jqok ".interface_state[0].nexthop_mac == \"$CL_MAC\" and .nexthop == \"auto\"" "$S"
check "status: a configured seed is not the default" jqok '.default_seed == false' "$S"
check "status: no reload yet" jqok '.last_reload.count == 0 and (.last_reload | has("time") | not)' "$S"
if [ -e /sys/module/maglev_slowpath ]; then want_sp="in sync"; else want_sp="not loaded"; fi
check "status: slow-path module '$want_sp'" jqok ".slowpath == \"$want_sp\"" "$S"
check "status text: no seed warning with a configured seed" \
	bash -c "! $MAGLEVCTL status | grep -q WARNING"
# Reload without a seed line: the public default seed, and a warning.
grep -v '^seed ' "$CONF" >"$CONF.new" && mv "$CONF.new" "$CONF"
t0=$(date -u +%s)
kill -HUP "$DPID"
for i in $(seq 100); do ctl -j status | jqt '.last_reload.count == 1' >/dev/null && break; sleep 0.05; done
ctl -j status >"$S"
check "status: the default seed in use after the reload" jqok '.default_seed == true' "$S"
check "status: the last reload succeeded, just now" \
	jqok ".last_reload.ok == true and (.last_reload.time | fromdateiso8601) >= $t0 - 1" "$S"
check "status text: the seed warning and the reload" \
	bash -c "$MAGLEVCTL status | grep -q '^WARNING: the public default seed is in use' && $MAGLEVCTL status | grep -q '^last reload: .*, ok$'"
check "status text: the interface line" \
	bash -c "$MAGLEVCTL status | grep -q '^  lb0: XDP native (prog [0-9]*), next hop $CL_MAC (auto)$'"
echo "no_such_key 1" >>"$CONF"
kill -HUP "$DPID"
for i in $(seq 100); do ctl -j status | jqt '.last_reload.failures == 1' >/dev/null && break; sleep 0.05; done
ctl -j status >"$S"
check "status: a failed reload is reported with its reason" \
	jqok '.last_reload.ok == false and (.last_reload.error | test("no_such_key"))' "$S"
check "status text: the failed reload" bash -c "$MAGLEVCTL status | grep -q '^last reload: .*, FAILED: .*no_such_key'"

# --- metrics_per_backend no -------------------------------------------------------------
grep -v '^no_such_key' "$CONF" >"$CONF.new" && echo "metrics_per_backend no" >>"$CONF.new" && mv "$CONF.new" "$CONF"
kill -HUP "$DPID"
for i in $(seq 100); do ctl -j status | jqt '.last_reload.count == 2' >/dev/null && break; sleep 0.05; done
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M"
check "metrics_per_backend no: no maglev_backend_* series, the per-VIP ones stay" \
	bash -c "! grep -q '^maglev_backend_' $M && grep -q '^maglev_vip_packets_total{$(vipl "$VF")} [1-9]' $M"
# A reload through the control socket is a change: one line with the peer.
n0=$(audited 'reload from uid 0 pid')
ctl reload >/dev/null
check "audit: maglevctl reload logs one 'accepted reload' line, without a dangling colon" \
	[ "$(audited 'reload from uid 0 pid [0-9]*$')" = $((n0 + 1)) ]
st=$("$MAGLEVCTL" status | head -n1)
check "status: uptime in units ('up 12s', '3m 4s'), VIPs and backends counted in words ($st)" \
	bash -c "grep -qE '^maglevd .*, up ([0-9]+s|[0-9]+m [0-9]+s), [0-9]+ VIPs?, [0-9]+ backends?\$' <<<'$st' && ! grep -qE '(^|[^0-9])1 (VIPs|backends)' <<<'$st'"

# --- systemd watchdog --------------------------------------------------------------------
# As systemd would run it (WatchdogSec=): NOTIFY_SOCKET and WATCHDOG_USEC.
stop_daemon
python3 - "$TDIR/notify" "$TDIR/notes" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); s.settimeout(0.5)
end = time.time() + 15
with open(sys.argv[2], "w") as out:
    while time.time() < end:
        try:
            out.write(s.recv(4096).decode() + "\n"); out.flush()
        except socket.timeout:
            pass
PY
NPID=$!
EXTRA_PIDS="${EXTRA_PIDS:-} $NPID"
for i in $(seq 50); do [ -S "$TDIR/notify" ] && break; sleep 0.05; done
NOTIFY_SOCKET=$TDIR/notify WATCHDOG_USEC=400000 start_daemon
sleep 1.5
check "watchdog: READY=1, then WATCHDOG=1 about every 200 ms from the event loop" \
	bash -c "grep -qx READY=1 $TDIR/notes && [ \$(grep -cx WATCHDOG=1 $TDIR/notes) -ge 4 ]"
kill -STOP "$DPID"
n0=$(grep -cx WATCHDOG=1 "$TDIR/notes")
sleep 1
check "watchdog: a stopped event loop stops the pings" [ "$(grep -cx WATCHDOG=1 "$TDIR/notes")" = "$n0" ]
kill -CONT "$DPID"
kill "$NPID" 2>/dev/null
check "the unit asks for the watchdog and sizes LimitNOFILE" \
	bash -c "grep -qx 'WatchdogSec=30s' $ROOT/docs/maglevd.service && grep -qx 'LimitNOFILE=131072' $ROOT/docs/maglevd.service"

stop_daemon
t_done
