#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# maglevd + maglevctl against a real daemon with XDP attached to a veth in
# its own namespace: every subcommand, every rejected input (each leaves the
# state exactly as it was), garbage on the socket, permissions, metrics over
# HTTP, SIGHUP reload, SIGTERM leaving the program attached, restart.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf "max_backends_per_vip 8"
# -t checks the interfaces too: run where the balancer's interface is.
check "maglevd -t accepts the test config" bash -c "ip netns exec $NS_LB $MAGLEVD -t -c $CONF >/dev/null"
sed "s/^interface eth0$/interface lb0/" "$ROOT/docs/maglevd.conf.example" >"$TDIR/example.conf"
check "the documented example config (docs/maglevd.conf.example) is valid (its interface set to lb0)" \
	bash -c "ip netns exec $NS_LB $MAGLEVD -t -c $TDIR/example.conf >/dev/null"
out=$("$MAGLEVD" -t -c "$CONF" 2>&1)
check "maglevd -t where lb0 does not exist: refused, naming the interface ($out)" \
	bash -c "[ $? != 0 ] && grep -q 'interface lb0 does not exist' <<<'$out'"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts in its namespace"

V4=192.0.2.10:80/tcp
V6='[2001:db8::10]:443/tcp'

# --- daemon basics -----------------------------------------------------------
check "XDP program attached to lb0" bash -c "ip netns exec $NS_LB ip link show lb0 | grep -q xdp"
check "nexthop_mac auto resolved the default gateway's MAC" \
	grep -q "next hop: gateway 203.0.113.2 on lb0 is $CL_MAC" "$DLOG"
check "control socket is mode 0600" [ "$(stat -c %a "$SOCK")" = 600 ]
check "status answers" bash -c "$MAGLEVCTL status | grep -q 'interfaces (native XDP): lb0'"
# The version comes from build/version.h; both sides must print the same one.
VER=$("$MAGLEVD" --version | sed -n 's/^maglevd //p')
check "maglevd --version and maglevctl --version print the build's version" \
	bash -c "[ -n '$VER' ] && [ \"\$($MAGLEVCTL --version)\" = 'maglevctl $VER' ]"
check "status names the running daemon's version" \
	bash -c "$MAGLEVCTL status | head -n1 | grep -qF 'maglevd $VER, pid $DPID,'"
check "status -j has the version field" \
	bash -c "$MAGLEVCTL -j status | jqt '.version == \"$VER\"' >/dev/null"

# --- vip ---------------------------------------------------------------------
check "vip add IPv4" ctl vip add $V4
check "vip add IPv6 with GUE" ctl vip add "$V6" --encap gue --gue-port 7000
check "vip add all-ports UDP" ctl vip add 192.0.2.11:53/udp --port-any
out=$(ctl -j vip list)
check "vip list -j lists the three VIPs" \
	[ "$(echo "$out" | jq -r '[.vips[].vip] | sort | join(" ")')" = "$V4 192.0.2.11:*/udp $V6" ]
out=$(ctl -j vip show "$V6")
check "vip show: encap gue, gue port 7000" \
	[ "$(echo "$out" | jq -r '.vip.encap + " " + (.vip.gue_port|tostring)')" = "gue 7000" ]
check "vip list text output has a header and rows" \
	bash -c "$MAGLEVCTL vip list | grep -q '^VIP ' && $MAGLEVCTL vip list | grep -q '192.0.2.11:\*/udp'"

# --- backend -----------------------------------------------------------------
check "backend add weight 1" ctl backend add $V4 198.51.100.1
check "backend add weight 2" ctl backend add $V4 198.51.100.2 --weight 2
check "backend add weight 3" ctl backend add $V4 198.51.100.3 --weight=3
check "backend add IPv6 backend to IPv6 VIP" ctl backend add "$V6" 2001:db8::5
slots() { ctl -j table "$1" | jq -r --arg b "$2" '.backends[] | select(.backend == $b) | .slots'; }
s1=$(slots $V4 198.51.100.1) s2=$(slots $V4 198.51.100.2) s3=$(slots $V4 198.51.100.3)
diag "slots 1:2:3 -> $s1 $s2 $s3"
check "table: every slot filled" [ $((s1 + s2 + s3)) -eq 65537 ]
check "table: shares follow weights 1:2:3 within 1%" \
	python3 -c "import sys; s=[$s1,$s2,$s3]; sys.exit(0 if all(abs(x/65537-w/6)<0.01 for x,w in zip(s,[1,2,3])) else 1)"
gen0=$(ctl -j table $V4 | jq .table_gen)
check "backend set --weight" ctl backend set $V4 198.51.100.3 --weight 1
check "weight change rebuilt the table (generation +1, slots ~1/4)" \
	bash -c "[ $(ctl -j table $V4 | jq .table_gen) -eq $((gen0 + 1)) ] && \
		 s=\$($MAGLEVCTL -j table $V4 | jq '.backends[] | select(.backend==\"198.51.100.3\") | .slots') && \
		 [ \$s -gt 15000 ] && [ \$s -lt 17800 ]"
check "backend set --drain" ctl backend set $V4 198.51.100.2 --drain
out=$(ctl -j backend list $V4)
check "drained backend flagged DRAIN in the live backend map" \
	[ "$(echo "$out" | jq -r '.backends[] | select(.backend=="198.51.100.2") | .dp_flags | join(",")')" = DRAIN ]
check "drained backend has no slot in the live table" [ "$(slots $V4 198.51.100.2)" -eq 0 ]
check "others flagged UP" \
	[ "$(echo "$out" | jq -r '[.backends[] | select(.backend!="198.51.100.2") | .dp_flags | join(",")] | unique | join(" ")')" = UP ]
check "backend set --undrain" ctl backend set $V4 198.51.100.2 --undrain
check "undrained backend back in the table and UP" \
	bash -c "[ \$($MAGLEVCTL -j table $V4 | jq '.backends[] | select(.backend==\"198.51.100.2\") | .slots') -gt 20000 ]"
check "backend set --weight 0 keeps it out of the table" \
	bash -c "$MAGLEVCTL backend set $V4 198.51.100.2 --weight 0 && \
		 [ \$($MAGLEVCTL -j table $V4 | jq '.backends[] | select(.backend==\"198.51.100.2\") | .slots') -eq 0 ]"
ctl backend set $V4 198.51.100.2 --weight 2
check "backend list (all VIPs) shows 4 backends" [ "$(ctl -j backend list | jq '.backends | length')" -eq 4 ]
check "backend del" ctl backend del $V4 198.51.100.1
check "deleted backend gone from list and table" \
	bash -c "! $MAGLEVCTL backend list $V4 | grep -q '198.51.100.1 ' && \
		 [ \$($MAGLEVCTL -j table $V4 | jq '[.backends[].slots] | add') -eq 65537 ]"
check "re-added backend gets a bumped generation if its index is reused" \
	bash -c "$MAGLEVCTL backend add $V4 198.51.100.1 && \
		 [ \$($MAGLEVCTL -j backend list $V4 | jq '.backends[] | select(.backend==\"198.51.100.1\") | .gen == .dp_gen') = true ]"

# --- read-only commands --------------------------------------------------------
check "stats -j has per-VIP and per-backend counters and reasons" \
	bash -c "$MAGLEVCTL -j stats | jqt '(.vips | length) == 3 and (.vips[0].backends | type) == \"array\" and (.reasons | has(\"pass_not_vip\"))' >/dev/null"
check "stats without the kernel module: slowpath is null, and the text says so" \
	bash -c "$MAGLEVCTL -j stats | jqt '.slowpath == null' >/dev/null && $MAGLEVCTL stats | grep -q 'slow path: kernel module not loaded'"
check "stats VIP limits to that VIP" [ "$(ctl -j stats $V4 | jq '.vips | length')" -eq 1 ]
out=$(timeout 2.5 "$MAGLEVCTL" stats -w $V4)
check "stats -w refreshes every second" [ "$(echo "$out" | grep -c '^VIP / BACKEND')" -ge 2 ]
check "health lists every backend with its check" \
	[ "$(ctl -j health | jq '[.backends[] | select(.check=="none")] | length')" -eq 4 ]
out=$(ctl -j lookup $V4 203.0.113.7:40000)
check "lookup answers from the table with a backend of the VIP" \
	bash -c "echo '$out' | jqt '.source==\"table\" and (.backend|test(\"^198.51.100.[123]$\"))' >/dev/null"
check "lookup text output names the slot" \
	bash -c "$MAGLEVCTL lookup $V4 203.0.113.7:40000 | grep -q 'Maglev table slot'"
check "table text output" bash -c "$MAGLEVCTL table $V4 | grep -q '^198.51.100.3 '"

# --- save / restore ------------------------------------------------------------
ctl save >"$TDIR/saved"
check "save writes maglevctl commands" \
	bash -c "grep -q '^vip add $V4\$' $TDIR/saved && grep -q '^backend add \[2001:db8::10\]:443/tcp 2001:db8::5 --weight 1\$' $TDIR/saved && grep -q 'vip add 192.0.2.11:\*/udp --check-port 53' $TDIR/saved"
ids_before=$(ctl -j backend list | jq -c '[.backends[] | {vip, backend, index, gen}] | sort_by(.vip, .backend)')
check "restore of the same file succeeds" ctl restore "$TDIR/saved"
check "restore of the same config keeps every backend's index and generation (established flows stay)" \
	[ "$(ctl -j backend list | jq -c '[.backends[] | {vip, backend, index, gen}] | sort_by(.vip, .backend)')" = "$ids_before" ]
check "restore round trip: same configuration" \
	[ "$(ctl save | grep -v '^#')" = "$(grep -v '^#' "$TDIR/saved")" ]
{ cat "$TDIR/saved"; echo "backend add $V4 198.51.100.77 --weight 70000"; } >"$TDIR/bad1"
before=$(snapshot)
check "restore with a bad weight on the last line is rejected (exit 1)" \
	bash -c "$MAGLEVCTL restore $TDIR/bad1 2>/dev/null; [ \$? -eq 1 ]"
check "rejected restore changed nothing" [ "$(snapshot)" = "$before" ]
check "the restore error names the file's line and the reason" \
	bash -c "$MAGLEVCTL restore $TDIR/bad1 2>&1 | grep -q 'bad1:$(wc -l <"$TDIR/bad1"): weight 70000 out of range 0..65535 (nothing applied)'"
printf 'vip add 192.0.2.50:80/tcp\nvip frobnicate\n' >"$TDIR/bad2"
check "restore with an unparsable line is rejected before sending" \
	bash -c "$MAGLEVCTL restore $TDIR/bad2 2>&1 | grep -q 'bad2:2'"
check "unparsable restore changed nothing" [ "$(snapshot)" = "$before" ]
printf 'vip add 192.0.2.50:80/tcp\nbackend add 192.0.2.50:80/tcp 198.51.100.9\n' >"$TDIR/add"
check "restore --no-flush adds to the running config" \
	bash -c "$MAGLEVCTL restore --no-flush $TDIR/add && [ \$($MAGLEVCTL -j vip list | jq '.vips|length') -eq 4 ]"
check "restore (flush) replaces the running config" \
	bash -c "$MAGLEVCTL restore $TDIR/saved && [ \$($MAGLEVCTL -j vip list | jq '.vips|length') -eq 3 ]"

# --- rejected inputs: exit 1, one line, nothing changed --------------------------
reject -rc 2 "bad IPv4 VIP address" vip add 192.0.2.300:80/tcp
reject -rc 2 "bad IPv6 VIP address" vip add '[2001:db8::zz]:80/tcp'
reject -rc 2 "IPv6 VIP without brackets" vip add 2001:db8::10:80/tcp
reject -rc 2 "bad backend address" backend add $V4 198.51.100.999
reject -rc 2 "backend with a port" backend add $V4 198.51.100.4:80
reject "unspecified VIP address" vip add 0.0.0.0:80/tcp
reject "broadcast VIP address" vip add 255.255.255.255:80/tcp
reject "IPv6 unspecified VIP address" vip add '[::]:80/tcp'
reject "unspecified backend" backend add $V4 0.0.0.0
reject "multicast backend" backend add $V4 224.0.0.5
reject "loopback backend" backend add $V4 127.0.0.1
reject "IPv6 multicast backend" backend add "$V6" ff02::1
reject -rc 2 "port 0" vip add 192.0.2.20:0/tcp
reject -rc 2 "port 65536" vip add 192.0.2.20:65536/tcp
reject -rc 2 "port not a number" vip add 192.0.2.20:http/tcp
reject -rc 2 "unknown protocol" vip add 192.0.2.20:80/sctp
reject -rc 2 "missing protocol" vip add 192.0.2.20:80
reject "weight 65536" backend add $V4 198.51.100.4 --weight 65536
reject -rc 2 "negative weight" backend add $V4 198.51.100.4 --weight -1
reject "weight out of range on set" backend set $V4 198.51.100.2 --weight 100000
reject "duplicate VIP" vip add $V4
reject "duplicate backend" backend add $V4 198.51.100.2
reject "unknown VIP on backend add" backend add 192.0.2.99:80/tcp 198.51.100.4
reject "unknown VIP on vip del" vip del 192.0.2.99:80/tcp
reject "unknown VIP on vip show" vip show 192.0.2.99:80/tcp
reject "unknown VIP on table" table 192.0.2.99:80/tcp
reject "unknown backend on del" backend del $V4 198.51.100.99
reject "unknown backend on set" backend set $V4 198.51.100.99 --drain
reject "unknown encap" vip add 192.0.2.21:80/tcp --encap vxlan
reject "gue port without gue" vip add 192.0.2.21:80/tcp --gue-port 6080
reject "unknown health check" vip add 192.0.2.21:80/tcp --check icmp
reject "health timeout above interval" vip add 192.0.2.21:80/tcp --check tcp --check-interval 500 --check-timeout 900
reject "all-ports VIP with checks but no check port" vip add 192.0.2.21:*/tcp --check tcp
reject "lookup source family differs" lookup $V4 '[2001:db8::7]:40000'
reject "lookup source without port" lookup $V4 203.0.113.7
for i in 4 5 6 7 8; do ctl backend add $V4 198.51.100.$((10 + i)); done
check "VIP now at the max_backends_per_vip limit (8)" [ "$(ctl -j vip show $V4 | jq .vip.backends)" -eq 8 ]
reject "too many backends" backend add $V4 198.51.100.40
reject "batch over the limit is all-or-nothing" restore --no-flush /dev/stdin <<EOF
backend add $V6 2001:db8::6
backend add $V4 198.51.100.41
EOF
check "the batch's valid first change was not applied" \
	[ "$(ctl -j vip show "$V6" | jq .vip.backends)" -eq 1 ]

# --- garbage on the socket ---------------------------------------------------------
raw() { printf '%s' "$1" | socat -t 5 - "UNIX-CONNECT:$SOCK"; }
garbage_case() {
	local name=$1 input=$2 before out
	before=$(snapshot)
	out=$(raw "$input")
	if echo "$out" | jqt '.ok == false and (.error | type == "string")' >/dev/null 2>&1 &&
		kill -0 "$DPID" && [ "$(snapshot)" = "$before" ]; then
		ok "socket garbage rejected, daemon up, state unchanged: $name"
	else
		nok "socket garbage rejected, daemon up, state unchanged: $name (got: $out)"
	fi
}
garbage_case "not JSON" $'hello world\n'
garbage_case "truncated JSON" $'{"cmd":"vip.add","vip":\n'
garbage_case "JSON array" $'[1,2,3]\n'
garbage_case "no cmd" $'{"vip":"192.0.2.30:80/tcp"}\n'
garbage_case "unknown cmd" $'{"cmd":"rm -rf"}\n'
garbage_case "unknown field" $'{"cmd":"vip.add","vip":"192.0.2.30:80/tcp","color":"red"}\n'
garbage_case "wrong type" $'{"cmd":"backend.add","vip":"192.0.2.10:80/tcp","backend":"198.51.100.50","weight":"3"}\n'
garbage_case "float weight" $'{"cmd":"backend.add","vip":"192.0.2.10:80/tcp","backend":"198.51.100.50","weight":1.5}\n'
garbage_case "huge integer" $'{"cmd":"backend.add","vip":"192.0.2.10:80/tcp","backend":"198.51.100.50","weight":99999999999999999999999}\n'
garbage_case "trailing junk after object" $'{"cmd":"vip.list"} junk\n'
garbage_case "NUL inside a string" $'{"cmd":"vip.add","vip":"192.0.2.30:80/tcp\\u0000x"}\n'
garbage_case "nested batch" $'{"cmd":"batch","requests":[{"cmd":"batch","requests":[]}]}\n'
garbage_case "query inside a batch" $'{"cmd":"batch","requests":[{"cmd":"vip.list"}]}\n'
garbage_case "binary bytes" "$(head -c 300 /dev/urandom | tr -d '\n\000')"$'\n'
before=$(snapshot)
out=$(python3 - "$SOCK" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(b"a" * (9 << 20))
except OSError:
    pass  # the daemon answers and closes once the limit is passed
print(s.recv(4096).decode(errors="replace"))
EOF
)
after=$(snapshot)
if echo "$out" | grep -q 'too large' && kill -0 "$DPID" && [ "$after" = "$before" ]; then
	ok "oversized request answered 'too large', daemon up, state unchanged"
else
	nok "oversized request answered 'too large', daemon up, state unchanged ($out)"
fi
# A client that connects and never sends must not block anyone else.
socat -u OPEN:/dev/null,ignoreeof "UNIX-CONNECT:$SOCK" 2>/dev/null &
EXTRA_PIDS=$!
disown $EXTRA_PIDS
sleep 0.2
check "a silent client does not block other requests" bash -c "timeout 3 $MAGLEVCTL vip list >/dev/null"
bg=
for i in $(seq 20); do
	raw $'{"cmd":"vip.list"}\n' >"$TDIR/par.$i" &
	bg="$bg $!"
done
wait_ok=$(for i in $(seq 20); do raw $'{"cmd":"status"}\n'; done | jq -s 'map(select(.ok)) | length')
# shellcheck disable=SC2086
wait $bg
wait_ok=$((wait_ok + $(cat "$TDIR"/par.* | jq -s 'map(select(.ok)) | length') - 20))
check "20 concurrent and 20 sequential clients all answered" [ "$wait_ok" -eq 20 ]
kill -9 $EXTRA_PIDS 2>/dev/null
EXTRA_PIDS=

# --- permissions ---------------------------------------------------------------------
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MAGLEVCTL" vip list 2>&1)
check "non-root user cannot use the socket (mode 0600)" \
	bash -c "echo '$out' | grep -q 'permission denied'"
chmod 711 "$TDIR"
chmod 666 "$SOCK"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MAGLEVCTL" vip list 2>&1)
chmod 600 "$SOCK"
chmod 700 "$TDIR"
check "even with the file opened up, the daemon refuses a non-root peer (SO_PEERCRED)" \
	bash -c "echo '$out' | grep -q 'root or the control group only'"

# --- usage errors and help -------------------------------------------------------------
usage_case() {
	local name=$1
	shift
	"$MAGLEVCTL" "$@" >/dev/null 2>&1
	local rc=$?
	if [ $rc -eq 2 ]; then ok "usage error exits 2: $name"; else nok "usage error exits 2: $name (rc $rc)"; fi
}
usage_case "no arguments"
usage_case "unknown object" frob
usage_case "unknown verb" vip frob
usage_case "missing VIP" vip add
usage_case "missing backend" backend add $V4
usage_case "extra argument" vip del $V4 extra
usage_case "unknown option" vip add 192.0.2.30:80/tcp --bogus
usage_case "option without value" backend add $V4 198.51.100.60 --weight
usage_case "backend set with nothing to set" backend set $V4 198.51.100.2
usage_case "table without VIP" table
usage_case "lookup without source" lookup $V4
help_ok=0
for args in "--help" "vip --help" "vip add --help" "vip del --help" "vip list --help" \
	"vip show --help" "backend --help" "backend add --help" "backend del --help" \
	"backend set --help" "backend list --help" "stats --help" "health --help" \
	"table --help" "lookup --help" "save --help" "restore --help" "status --help"; do
	# shellcheck disable=SC2086
	out=$("$MAGLEVCTL" $args 2>&1) && echo "$out" | grep -q '^Usage: maglevctl' || {
		diag "no help for: $args"
		help_ok=1
	}
done
check "--help exits 0 with a usage text for every object and command" [ $help_ok -eq 0 ]
out=$("$MAGLEVCTL" -s "$TDIR/nothing.sock" vip list 2>&1)
rc=$?
check "without a daemon: exit 3 and a clear message" \
	bash -c "[ $rc -eq 3 ] && echo '$out' | grep -q 'maglevd is not running'"
json_reject() { # json_reject [-rc N] ARGS...: exit N (1) and {"ok":false,"error":...} on stdout
	local out rc want=1
	[ "$1" = -rc ] && want=$2 && shift 2
	out=$("$MAGLEVCTL" -j "$@" 2>/dev/null)
	rc=$?
	[ $rc -eq "$want" ] && echo "$out" | jqt '.ok == false and (.error | length) > 0' >/dev/null
}
check "stats -w | head -n1: the watch ends once its reader is gone (exit 0 within 5 s)" \
	bash -c "timeout 5 $MAGLEVCTL stats -w | head -n1 >/dev/null; [ \${PIPESTATUS[0]} = 0 ]"
check "-j: a value maglevctl itself rejects is a usage error, answered in JSON (exit 2)" \
	json_reject -rc 2 backend add $V4 198.51.100.70 --weight abc
check "-j: so is an address it cannot parse, before anything is sent (exit 2)" \
	json_reject -rc 2 backend add $V4 198.51.100.999
check "-j: a restore the daemon rejects names the file and line, as without -j" \
	bash -c "$MAGLEVCTL -j restore $TDIR/bad1 2>/dev/null | jq -e --arg f $TDIR/bad1 \
		'.ok == false and .file == \$f and .line == $(wc -l <"$TDIR/bad1") and
		 (.error | startswith(\"\(\$f):$(wc -l <"$TDIR/bad1"): weight 70000 out of range\"))' >/dev/null"
for bad in "frob|unknown object 'frob'" "--frob|unknown option '--frob'" "stats --frob|stats: unknown option '--frob'" \
	"backend add $V4 198.51.100.70 --weight -1|bad weight '-1'"; do
	args=${bad%%|*} want=${bad#*|}
	# shellcheck disable=SC2086 # args are words
	out=$("$MAGLEVCTL" $args 2>&1)
	rc=$?
	check "maglevctl $args: exit 2, naming the word ($want)" \
		bash -c "[ $rc = 2 ] && grep -qF \"$want\" <<<\"\$1\"" _ "$out"
done
check "-j: a restore file rejected before sending is answered in JSON (exit 1)" \
	json_reject restore "$TDIR/bad2"
check "-j: without a daemon the answer is JSON too (exit 3)" \
	json_reject -rc 3 -s "$TDIR/nothing.sock" vip list

# --- metrics -----------------------------------------------------------------------------
M=$TDIR/metrics.txt
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M"
check "metrics: HTTP 200 with per-VIP counters" \
	grep -q '^maglev_vip_packets_total{address="192.0.2.10",port="80",protocol="tcp"} [0-9]' "$M"
check "metrics: per-backend bytes" \
	grep -q '^maglev_backend_bytes_total{address="192.0.2.10",port="80",protocol="tcp",backend="198.51.100.2"} [0-9]' "$M"
check "metrics: per-backend health" \
	grep -q '^maglev_backend_up{address="192.0.2.10",port="80",protocol="tcp",backend="198.51.100.2"} 1' "$M"
check "metrics: table generation" \
	grep -q '^maglev_vip_table_generation{address="192.0.2.10",port="80",protocol="tcp"} [1-9]' "$M"
check "metrics: rebuild time" \
	grep -q '^maglev_vip_table_rebuild_seconds{address="192.0.2.10",port="80",protocol="tcp"} 0\.' "$M"
check "metrics: drop reasons by name" \
	bash -c "grep -q '^maglev_packets_total{reason=\"drop_no_backend\"} ' $M && grep -q '^maglev_packets_total{reason=\"drop_ttl\"} ' $M"
check "metrics: connection-table events by name" \
	grep -q '^maglev_conn_events_total{event="hit"} [0-9]' "$M"
check "metrics: slow-path module not loaded here: maglev_slowpath_in_sync 0" \
	grep -qx 'maglev_slowpath_in_sync 0' "$M"
check "metrics: every sample line is name{labels} value" \
	bash -c "! grep -v '^#' $M | grep -Ev '^[a-z_]+(\{[^}]*\})? [0-9.e+-]+\$'"
code=$(lbx curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$METRICS_PORT/other")
check "metrics: other paths get 404" [ "$code" = 404 ]
# Raw HTTP: each answer's Content-Length must be exactly its body's length.
cat >"$TDIR/httplen.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET " + sys.argv[2].encode() + b" HTTP/1.0\r\n\r\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
n = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
sys.exit(0 if body and n == [len(body)] else 1)
EOF
check "metrics: Content-Length equals the body's length (200 and 404 answers)" \
	bash -c "ip netns exec $NS_LB python3 $TDIR/httplen.py $METRICS_PORT /metrics && \
		 ip netns exec $NS_LB python3 $TDIR/httplen.py $METRICS_PORT /other"

# --- SIGHUP ------------------------------------------------------------------------------
h_before=$(ctl -j lookup $V4 203.0.113.7:40000 | jq .hash)
check "lookup -j: the 64-bit hash is a string of digits (jq keeps every digit)" \
	bash -c "[[ '$h_before' =~ ^\\\"[0-9]{1,20}\\\"\$ ]]"
g_before=$(ctl -j table $V4 | jq .table_gen)
sed -i 's/^seed .*/seed fedcba9876543210fedcba9876543210/' "$CONF"
kill -HUP "$DPID"
sleep 0.5
check "SIGHUP with a new seed rebuilds the tables (generation +1, new layout)" \
	bash -c "[ \$($MAGLEVCTL -j table $V4 | jq .table_gen) -eq $((g_before + 1)) ] && \
		 [ \"\$($MAGLEVCTL -j lookup $V4 203.0.113.7:40000 | jq .hash)\" != \"$h_before\" ]"
echo "bogus_key 1" >>"$CONF"
kill -HUP "$DPID"
sleep 0.3
check "SIGHUP with a broken config keeps running and counts the failure" \
	bash -c "kill -0 $DPID && $MAGLEVCTL vip list >/dev/null && \
		 ip netns exec $NS_LB curl -sf http://127.0.0.1:$METRICS_PORT/metrics | grep -q 'maglev_config_reloads_total{result=\"fail\"} 1'"
sed -i '/^bogus_key/d' "$CONF"
check "maglevd -t rejects a bad config with its line number" \
	bash -c "printf 'seed 12\n' > $TDIR/bad.conf; $MAGLEVD -t -c $TDIR/bad.conf 2>&1 | grep -q 'line 1: bad value'"

# --- SIGTERM and restart -----------------------------------------------------------------
saved=$(ctl save | grep -v '^#')
tab=$(ctl -j table $V4 | jq -c '[.backends[] | {backend, slots}]')
link_id() { bpftool -j link show pinned "$(ls -d "$PIN"/link_xdp* | head -1)" | jq .id; }
prog_before=$(lbx ip -j link show lb0 | jq '.[0].xdp.prog.id')
link_before=$(link_id)
stop_daemon
check "SIGTERM: daemon exited, socket removed" [ ! -e "$SOCK" ]
check "SIGTERM: XDP program still attached (forwarding continues)" \
	bash -c "ip netns exec $NS_LB ip link show lb0 | grep -q xdp && ls $PIN | grep -q link_xdp"
start_daemon
check "restart: configuration restored from the state file" [ "$(ctl save | grep -v '^#')" = "$saved" ]
check "restart: identical table" [ "$(ctl -j table $V4 | jq -c '[.backends[] | {backend, slots}]')" = "$tab" ]
prog_after=$(lbx ip -j link show lb0 | jq '.[0].xdp.prog.id')
link_after=$(link_id)
check "restart: the new program replaced the old one in the same pinned link ($prog_before -> $prog_after, link $link_before)" \
	python3 -c "import sys; p0, p1, l0, l1 = sys.argv[1:]; sys.exit(not (p0.isdigit() and p1.isdigit() and p0 != p1 and l0.isdigit() and l0 == l1))" \
	"$prog_before" "$prog_after" "$link_before" "$link_after"
stop_daemon
t_done
