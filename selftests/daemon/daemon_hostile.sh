#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Hostile and broken control input against a real maglevd: garbage, truncated
# and oversized requests, NUL bytes and invalid UTF-8, deep nesting, wrong
# types, a partly valid batch, 100 clients at once, clients that connect and
# never send or send half a line and stall, more clients than the daemon
# holds, and "maglevctl restore" with malformed files. After each, the daemon
# is still up, answers another client within a bounded time, and everything
# it holds is unchanged: the configuration, the backends' datapath entries,
# the live tables (also read straight from the pinned map) and the state file.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
V1=192.0.2.10:80/tcp
V2=192.0.2.11:53/udp
PROMPT_S=2 # a healthy daemon answers a status request within this

# The live table of the VIP with this id, straight from the pinned maps.
table_digest() {
	local b inner=0 shift=0
	for b in $(bpftool -j map lookup pinned "$PIN/maglev_tables" key $(($1 & 255)) $(($1 >> 8 & 255)) 0 0 2>/dev/null |
		jq -r '.value | if type == "array" then .[] else . end'); do
		inner=$((inner + (b << shift)))
		shift=$((shift + 8))
	done
	[ "$inner" -gt 0 ] || { echo "no table"; return; }
	bpftool -j map dump id "$inner" | sha256sum | cut -d' ' -f1
}

# Everything a rejected request must leave alone (lib.sh's snapshot, which
# covers the configuration, tables as the daemon reads them, backend entries
# and the state file, plus the pinned tables' bytes).
full_snapshot() {
	snapshot
	for id in $(ctl -j vip list | jq -r '.vips[].id'); do
		echo "table $id $(table_digest "$id")"
	done
}

# The daemon is alive and answers another client within PROMPT_S seconds.
responsive() {
	kill -0 "$DPID" 2>/dev/null &&
		timeout "$PROMPT_S" "$MAGLEVCTL" -j status 2>/dev/null | jqt '.ok' >/dev/null
}

# After a hostile step: alive, prompt, and unchanged; one test line.
after() {
	local name=$1 now
	if ! responsive; then
		nok "$name: daemon up and answering within ${PROMPT_S}s"
		return
	fi
	now=$(full_snapshot)
	if [ "$now" = "$BASE" ]; then
		ok "$name: daemon up, answers within ${PROMPT_S}s, state unchanged"
	else
		diff <(echo "$BASE") <(echo "$now") | head -n 10 | sed 's/^/# /'
		nok "$name: daemon up, answers within ${PROMPT_S}s, state unchanged"
	fi
}

# send FILE [half]: send the bytes of FILE on one connection (closing our
# side after it), print the daemon's answer (bounded wait).
send() {
	python3 - "$SOCK" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(15)
s.connect(sys.argv[1])
data = open(sys.argv[2], 'rb').read()
try:
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass  # the daemon may answer and close before taking everything
out = b''
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out += b
except (socket.timeout, OSError):
    pass
sys.stdout.write(out.decode('utf-8', 'replace'))
EOF
}

# hostile NAME JQ-CONDITION: send $TDIR/req, the answer must satisfy the
# condition (a rejection), then the daemon must be unchanged.
hostile() {
	local ans
	ans=$(send "$TDIR/req")
	if echo "$ans" | jqt "$2" >/dev/null 2>&1; then
		ok "$1: rejected ($(echo "$ans" | jq -r '.error' | cut -c1-60))"
	else
		diag "answer: $(echo "$ans" | cut -c1-200)"
		nok "$1: rejected"
	fi
	after "$1"
}
REJ='.ok == false and (.error | type == "string" and length > 0)'

start_daemon || { nok "maglevd starts"; t_done; }
ctl vip add $V1 >/dev/null && ctl vip add $V2 --check-port 53 >/dev/null &&
	for b in 1 2 3; do ctl backend add $V1 198.51.100.$b --weight $b >/dev/null; done &&
	ctl backend add $V2 198.51.100.9 >/dev/null &&
	ctl backend set $V1 198.51.100.3 --drain >/dev/null
BASE=$(full_snapshot)
check "set-up: two VIPs with backends, pinned tables readable" \
	bash -c "[ $(ctl -j vip list | jq '.vips | length') = 2 ] && ! grep -q 'no table' <<<'$BASE'"

# --- Garbage and broken JSON --------------------------------------------------
{ head -c 4096 /dev/urandom | tr -d '\n'; echo; } >"$TDIR/req"
hostile "4 KiB of random bytes" "$REJ"
printf '{"cmd":"vip.add","vip":"192.0.2.50:80/t' >"$TDIR/req"
hostile "truncated JSON, connection closed mid-object" "$REJ"
printf '{"cmd":"batch","requests":[{"cmd":"flush"},{"cmd":"vip.add","vip":"192.0.2.50:80/tcp"}\n' >"$TDIR/req"
hostile "truncated batch (flush first), newline-terminated" "$REJ"
printf '{"cmd":"flush"} {"cmd":"flush"}\n' >"$TDIR/req"
hostile "two objects on one line" "$REJ"
printf '{"cmd":"flush"}x\n' >"$TDIR/req"
hostile "junk after the object" "$REJ"
printf '\n' >"$TDIR/req"
hostile "an empty line" "$REJ"

# --- Bytes JSON or C strings get wrong --------------------------------------
printf '{"cmd":"vip.add","vip":"\xff\xfe\xc0\xaf:80/tcp"}\n' >"$TDIR/req"
hostile "invalid UTF-8 in a field" "$REJ"
printf '{"cmd":"vip.add","vip":"192.0.2.50:80/tcp\\u0000x"}\n' >"$TDIR/req"
hostile "escaped NUL inside a string" "$REJ"
printf '{"cmd":"flush\\u0000"}\n' >"$TDIR/req"
hostile "escaped NUL in the command name" "$REJ"
printf '{"cmd":"vip.del","vip\\u0000x":"%s"}\n' $V1 >"$TDIR/req"
hostile "escaped NUL in a field name" "$REJ"
printf '{"cmd":"vip.add",\0"vip":"192.0.2.50:80/tcp"}\n' >"$TDIR/req"
hostile "raw NUL byte in the request" "$REJ"
printf '{"cmd":"vip.add","vip":"192.0.2.50:80/tcp","\xff":1}\n' >"$TDIR/req"
hostile "invalid UTF-8 field name" "$REJ"

# --- Deep nesting and wrong types ---------------------------------------------
python3 -c 'import sys; sys.stdout.write("[" * 200000 + "]" * 200000 + "\n")' >"$TDIR/req"
hostile "200000 levels of nesting" "$REJ"
python3 -c 'import sys; sys.stdout.write("{\"cmd\":\"vip.add\",\"vip\":" + "[" * 5000 + "]" * 5000 + "}\n")' >"$TDIR/req"
hostile "deeply nested field value" "$REJ"
for t in \
	'"weight":"3"' '"weight":1.5' '"weight":-1' '"weight":65536' \
	'"weight":18446744073709551616' '"weight":9223372036854775807' '"weight":null' \
	'"drain":"yes"' '"drain":1' '"backend":["198.51.100.77"]' '"backend":{}'; do
	printf '{"cmd":"backend.add","vip":"%s","backend":"198.51.100.77",%s}\n' $V1 "$t" >"$TDIR/req"
	hostile "backend.add with $t" "$REJ"
done
printf '{"cmd":5}\n' >"$TDIR/req"
hostile "numeric command" "$REJ"
printf '["cmd","flush"]\n' >"$TDIR/req"
hostile "an array instead of an object" "$REJ"
printf '{"cmd":"batch","requests":{"cmd":"flush"}}\n' >"$TDIR/req"
hostile "batch whose requests is not an array" "$REJ"
printf '{"cmd":"batch","requests":[{"cmd":"flush"},{"cmd":"vip.add","vip":"192.0.2.50:80/tcp"},{"cmd":"backend.add","vip":"192.0.2.50:80/tcp","backend":"198.51.100.1","weight":70000}]}\n' >"$TDIR/req"
hostile "batch: flush and a valid add, then an out-of-range weight" \
	"$REJ and (.error | test(\"batch request 3\"))"

# --- Oversized ---------------------------------------------------------------
python3 -c 'import sys; sys.stdout.write("{\"cmd\":\"flush\",\"x\":\"" + "a" * (9 << 20) + "\"}\n")' >"$TDIR/req"
hostile "a 9 MiB line (limit 8 MiB)" "$REJ and (.error | test(\"too large\"))"

# --- Many clients at once -------------------------------------------------------
res=$(python3 - "$SOCK" <<'EOF'
import socket, sys, time, json
path = sys.argv[1]
socks = []
for i in range(100):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    socks.append(s)
# Half valid requests, half garbage, all in flight together.
for i, s in enumerate(socks):
    s.sendall(b'{"cmd":"vip.list"}\n' if i % 2 == 0 else b'{"cmd":"vip.add","vip":"192.0.2.99:80/tcp"\n')
good = bad = 0
t0 = time.monotonic()
for i, s in enumerate(socks):
    out = b''
    try:
        while not out.endswith(b'\n'):
            b = s.recv(65536)
            if not b:
                break
            out += b
        a = json.loads(out)
        if i % 2 == 0 and a.get('ok') is True and len(a['vips']) == 2:
            good += 1
        if i % 2 == 1 and a.get('ok') is False:
            bad += 1
    except Exception:
        pass
print(good, bad, round(time.monotonic() - t0, 2))
EOF
)
diag "100 concurrent clients: $res (valid answered, garbage rejected, seconds)"
check "100 concurrent clients: 50 valid answered, 50 broken rejected, within 10 s" \
	[ "$(echo "$res" | cut -d' ' -f1-2)" = "50 50" ]
after "100 concurrent clients"

# --- Clients that never finish ----------------------------------------------------
# One connects and never sends, one sends half a request and stalls. While
# they hang, others are served at once; within the daemon's 10 s client
# timeout both are dropped, and the half request is never applied.
python3 - "$SOCK" >"$TDIR/stall.out" <<'EOF' &
import socket, sys, time
path = sys.argv[1]
idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
idle.connect(path)
half = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
half.connect(path)
half.sendall(b'{"cmd":"vip.add","vip":"192.0.2.60:80/tcp"')
t0 = time.monotonic()
res = []
for s in (idle, half):
    s.settimeout(20 - (time.monotonic() - t0))
    try:
        got = s.recv(4096)
        res.append('closed' if got == b'' else 'answered')
    except socket.timeout:
        res.append('held')
    except OSError:
        res.append('closed')
print(res[0], res[1], round(time.monotonic() - t0, 1))
EOF
stall=$!
sleep 0.5
t0=$(date +%s%N)
responsive
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "while a silent and a stalled client hang: another client answered in ${ms} ms" \
	[ $rc -eq 0 ] && [ $ms -lt 1000 ]
wait $stall
read -r r_idle r_half r_s <"$TDIR/stall.out"
diag "silent client: $r_idle, stalled client: $r_half, after ${r_s}s"
check "the silent and the stalled client are dropped within the 10 s client timeout" \
	bash -c "[ '$r_idle' = closed ] && [ '$r_half' = closed ] && awk 'BEGIN{exit !($r_s <= 12)}'"
after "silent and stalled clients"

# More clients than the daemon holds (256): it drops the longest-waiting
# idle ones and goes on answering.
res=$(python3 - "$SOCK" <<'EOF'
import socket, sys, time
path = sys.argv[1]
socks = []
for i in range(300):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    socks.append(s)
time.sleep(0.5)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(2)
t0 = time.monotonic()
s.connect(path)
s.sendall(b'{"cmd":"status"}\n')
ans = s.recv(65536)
dt = time.monotonic() - t0
dropped = 0
for c in socks:
    c.setblocking(False)
    try:
        if c.recv(1) == b'':
            dropped += 1
    except BlockingIOError:
        pass
    except OSError:
        dropped += 1
print('ok' if b'"ok":true' in ans else 'noanswer', round(dt * 1000), dropped)
EOF
)
diag "300 idle connections, then a request: $res (answer, ms, idle ones dropped)"
check "300 idle connections: a request is still answered within ${PROMPT_S}s, idle ones over the limit dropped" \
	bash -c "set -- $res; [ \$1 = ok ] && [ \$2 -lt $((PROMPT_S * 1000)) ] && [ \$3 -ge 44 ]"
after "300 idle connections"

# --- maglevctl restore with malformed files -----------------------------------------
# restore ERRPATTERN LINES...: refused (exit 1), the error names the line,
# nothing changes.
restore_bad() {
	local name=$1 pat=$2 out rc
	shift 2
	printf '%s\n' "$@" >"$TDIR/restore.conf"
	out=$(timeout 10 "$MAGLEVCTL" restore "$TDIR/restore.conf" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && echo "$out" | grep -qE "restore.conf:$pat"; then
		ok "restore, $name: refused naming the line ($(echo "$out" | head -n 1 | cut -c1-80))"
	else
		diag "exit $rc: $out"
		nok "restore, $name: refused naming the line"
	fi
	after "restore, $name"
}
restore_bad "JSON instead of commands" "1:" "$(ctl -j save | jq -c .)"
restore_bad "missing backend address" "2:" "vip add $V1" "backend add $V1"
restore_bad "weight out of range" "3:" "vip add $V1" "backend add $V1 198.51.100.1" \
	"backend add $V1 198.51.100.2 --weight 70000"
restore_bad "bad VIP address" "1:" "vip add 192.0.2.300:80/tcp"
restore_bad "unknown option" "2:" "vip add $V1" "backend add $V1 198.51.100.1 --wieght 1"
restore_bad "valid prefix, then a line the daemon refuses (duplicate)" "4:" \
	"vip add $V1" "backend add $V1 198.51.100.1" "backend add $V1 198.51.100.2" \
	"backend add $V1 198.51.100.1"
restore_bad "valid prefix, then a query" "3:" "vip add $V1" "backend add $V1 198.51.100.1" \
	"vip list"
printf 'vip add %s\nbackend add %s 198.51.100.1\x00 --weight 9\nbackend add %s 198.51.100.2\n' $V1 $V1 $V1 >"$TDIR/restore.conf"
out=$(timeout 10 "$MAGLEVCTL" restore "$TDIR/restore.conf" 2>&1)
rc=$?
out=$(echo "$out" | tr -cd '[:print:]')
diag "exit $rc: $(echo "$out" | cut -c1-120)"
check "restore, NUL byte inside a line: refused naming line 2" \
	bash -c "[ $rc -eq 1 ] && grep -q 'restore.conf:2: holds a NUL' <<<'${out//\'/}'"
after "restore, NUL byte inside a line"
printf 'vip add %s\nvip add 192.0.2.12:80/tcp --check \xff\xfe\n' $V1 >"$TDIR/restore.conf"
out=$(timeout 10 "$MAGLEVCTL" restore "$TDIR/restore.conf" 2>&1)
rc=$?
out=$(echo "$out" | tr -cd '[:print:]')
diag "exit $rc: $(echo "$out" | cut -c1-120)"
check "restore, invalid UTF-8: refused naming line 2" \
	bash -c "[ $rc -eq 1 ] && grep -q 'restore.conf:2:' <<<'${out//\'/}'"
after "restore, invalid UTF-8"

check "maglevd is still the same process and logged no sanitizer finding" \
	bash -c "kill -0 $DPID && ! grep -q 'Sanitizer' '$DLOG'"
t_done
