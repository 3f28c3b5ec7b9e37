#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The metrics endpoint on libmicrohttpd (issue 37 part 2): /metrics,
# /-/healthy, /-/ready, 404 and 405; slow and hostile clients (silent
# connections, a reader that never reads a 5 MB answer, a flood of
# connections from several addresses) do not stall maglevd: the control
# socket answers within a second throughout, and the endpoint serves again
# once the silent clients time out; TLS and basic auth from an
# exporter-toolkit web config (bcrypt hashes): right password 200, wrong or
# none 401, plain HTTP refused; maglevd -t and a start refuse a web config they
# cannot honour, naming what is wrong; a reload reads the web config again.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"
U=http://127.0.0.1:$METRICS_PORT
code() { lbx curl -s -o /dev/null -w '%{http_code}' "$@"; }

check "GET /metrics: 200, the exposition format" \
	bash -c "[ \"\$(ip netns exec $NS_LB curl -s -o /dev/null -w '%{http_code} %{content_type}' $U/metrics)\" = \
		'200 text/plain; version=0.0.4; charset=utf-8' ]"
check "GET /-/healthy: 200" [ "$(lbx curl -s "$U/-/healthy")" = Healthy ]
check "GET /-/ready: 200 while the loop answers" [ "$(code "$U/-/ready")" = 200 ]
check "GET /other: 404" [ "$(code "$U/other")" = 404 ]
check "POST /metrics: 405" [ "$(code -X POST -d x=1 "$U/metrics")" = 405 ]
check "GET /metrics?x=1: the query string is ignored, 200" [ "$(code "$U/metrics?x=1")" = 200 ]

# ~4,000 backends: a 2 MB+ answer, more than the socket buffers hold.
{
	echo "vip add 192.0.2.10:80/tcp"
	for i in $(seq 1 4000); do printf 'backend add 192.0.2.10:80/tcp 2001:db8:c::%x\n' "$i"; done
} >"$TDIR/fleet"
ctl restore --no-flush "$TDIR/fleet" >/dev/null || nok "restore 4,000 backends"
size=$(lbx curl -sf "$U/metrics" | wc -c)
diag "a scrape: $size bytes"

# Hostile clients, from a python helper in the balancer's namespace:
#   silent N ADDR...: N connections from each ADDR that send nothing
#   stall: one GET /metrics whose answer is never read
#   hold: keep them until stdin closes
cat >"$TDIR/hostile.py" <<'EOF'
import socket, sys, time
port = int(sys.argv[1]); mode = sys.argv[2]
socks = []
if mode == "silent":
    n = int(sys.argv[3])
    for src in sys.argv[4:]:
        for _ in range(n):
            s = socket.socket()
            s.bind((src, 0))
            s.connect(("127.0.0.1", port))
            socks.append(s)
elif mode == "stall":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    socks.append(s)
print("ready", flush=True)
sys.stdin.read()
EOF
lbx ip addr add 127.0.0.2/8 dev lo 2>/dev/null
for a in 3 4 5 6; do lbx ip addr add 127.0.0.$a/8 dev lo 2>/dev/null; done

# status_ok: the control socket answers within a second, five times in a row.
status_ok() {
	local i a b
	for i in 1 2 3 4 5; do
		a=$(date +%s%N)
		ctl status >/dev/null || return 1
		b=$(date +%s%N)
		[ $(((b - a) / 1000000)) -lt 1000 ] || { diag "status took $(((b - a) / 1000000)) ms"; return 1; }
	done
}
# hold MODE ARGS...: start the python helper, wait for it to be set.
hold() {
	coproc HOST { lbx python3 "$TDIR/hostile.py" "$METRICS_PORT" "$@"; }
	EXTRA_PIDS="${EXTRA_PIDS:-} $HOST_PID"
	read -r -t 10 line <&"${HOST[0]}" && [ "$line" = ready ]
}
release() { exec {HOST[1]}>&-; wait "$HOST_PID" 2>/dev/null; }

hold stall || nok "a client that never reads"
check "a reader that never reads its answer: control socket prompt" status_ok
check "  and another scrape is answered meanwhile" [ "$(code -m 10 "$U/metrics")" = 200 ]
release

hold silent 10 127.0.0.1 || nok "10 silent clients"
check "10 silent clients: control socket prompt" status_ok
check "  and a scrape is answered meanwhile (they are below the per-address limit)" \
	[ "$(code -m 10 "$U/metrics")" = 200 ]
release

# A flood: 16 (the per-address limit) from each of 127.0.0.2-6, 80 in all,
# more than the 64 held at once.
t0=$(date +%s)
hold silent 16 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 || diag "some flood connections were refused"
check "a flood of 80 silent connections: control socket prompt" status_ok
ready_again() { [ "$(code -m 3 "$U/metrics")" = 200 ]; }
for i in $(seq 40); do ready_again && break; sleep 0.25; done
took=$(($(date +%s) - t0))
check "  a scrape is answered again once the silent ones time out (after $took s; idle timeout 5 s)" \
	[ "$took" -le 12 ]
release
alive_and_prompt() { kill -0 "$DPID" && status_ok; }
check "after the flood: maglevd runs, control socket prompt" alive_and_prompt

# --- TLS and basic auth from a web config ---------------------------------------
W=$TDIR/web
mkdir -p "$W"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=maglevd-test \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null ||
	nok "openssl makes a certificate"
HASH=$(python3 -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))' 2>/dev/null)
cat >"$W/web.yml" <<EOF
# exporter-toolkit format; relative paths are the file's directory's
tls_server_config:
  cert_file: cert.pem
  key_file: $W/key.pem
basic_auth_users:
  prometheus: '$HASH'
EOF
write_conf "metrics_web_config $W/web.yml"
check "maglevd -t accepts the web config" bash -c "ip netns exec $NS_LB $MAGLEVD -t -c $CONF >/dev/null 2>&1"
stop_daemon
start_daemon || nok "maglevd starts with TLS and basic auth"
S=https://127.0.0.1:$METRICS_PORT
check "HTTPS, right password: 200 with the metrics" \
	bash -c "ip netns exec $NS_LB curl -sf --cacert $W/cert.pem -u prometheus:s3cret $S/metrics | grep -q '^maglev_vips 1\$'"
check "HTTPS, wrong password: 401" [ "$(code --cacert "$W/cert.pem" -u prometheus:wrong "$S/metrics")" = 401 ]
check "HTTPS, unknown user: 401" [ "$(code --cacert "$W/cert.pem" -u nobody:s3cret "$S/metrics")" = 401 ]
check "HTTPS, no credentials: 401 asking for Basic" \
	bash -c "ip netns exec $NS_LB curl -s -D - -o /dev/null --cacert $W/cert.pem $S/metrics | grep -qi '^WWW-Authenticate: Basic realm=\"maglevd\"'"
check "HTTPS: /-/healthy and /-/ready with the password: 200" \
	bash -c "[ \"\$(ip netns exec $NS_LB curl -s -o /dev/null -w '%{http_code}' --cacert $W/cert.pem -u prometheus:s3cret $S/-/healthy)\" = 200 ] &&
		 [ \"\$(ip netns exec $NS_LB curl -s -o /dev/null -w '%{http_code}' --cacert $W/cert.pem -u prometheus:s3cret $S/-/ready)\" = 200 ]"
# Password guessing: 60 wrong passwords, 12 at a time (bcrypt each, one at a
# time in maglevd): the control socket stays prompt, the right one still works.
lbx bash -c "seq 60 | xargs -P 12 -I{} curl -s -o /dev/null --cacert $W/cert.pem -u prometheus:guess{} $S/metrics" &
GUESS=$!
EXTRA_PIDS="${EXTRA_PIDS:-} $GUESS"
check "60 wrong passwords, 12 at a time: control socket prompt meanwhile" status_ok
wait "$GUESS"
check "  then the right password: 200" [ "$(code --cacert "$W/cert.pem" -u prometheus:s3cret "$S/metrics")" = 200 ]
check "plain HTTP on the TLS port: no answer" [ "$(code -m 3 -u prometheus:s3cret "$U/metrics")" != 200 ]
check "HTTPS verifies: the certificate names 127.0.0.1, a wrong CA fails" \
	bash -c "! ip netns exec $NS_LB curl -sf -u prometheus:s3cret $S/metrics >/dev/null 2>&1"

# A reload reads it again: basic auth removed.
sed -i '/^basic_auth_users:/,$d' "$W/web.yml"
ctl reload >/dev/null || nok "reload"
check "reload: the web config is read again (no auth now): 200 without a password" \
	[ "$(code --cacert "$W/cert.pem" "$S/metrics")" = 200 ]

# A web config that no longer loads refuses the reload whole; the endpoint stays as it was.
cp "$W/web.yml" "$W/web.good"
echo "http_server_config: {http2: false}" >>"$W/web.yml"
out=$(ctl reload 2>&1)
rc=$?
refused() { [ "$rc" -ne 0 ] && grep -q "'http_server_config': not supported" <<<"$out"; }
check "reload with a broken web config: refused naming it (rc $rc: $out)" refused
check "  the endpoint serves as before" [ "$(code --cacert "$W/cert.pem" "$S/metrics")" = 200 ]
cp "$W/web.good" "$W/web.yml"

# Refused by name: maglevd -t (exit 1) and a start.
bad() { # bad NAME PATTERN: web.yml as given on stdin, -t refuses naming PATTERN
	local out
	cat >"$W/bad.yml"
	write_conf "metrics_web_config $W/bad.yml"
	out=$(lbx "$MAGLEVD" -t -c "$CONF" 2>&1)
	if [ $? -eq 1 ] && grep -q -- "$2" <<<"$out"; then ok "maglevd -t refuses $1 ($(tail -1 <<<"$out"))"; else
		nok "maglevd -t refuses $1 (got: $out)"; fi
}
bad "an unsupported key" "'http_server_config': not supported" <<<"http_server_config: {http2: false}"
bad "client certificates" "'client_ca_file': not supported" <<EOF
tls_server_config: {cert_file: $W/cert.pem, key_file: $W/key.pem, client_ca_file: $W/cert.pem}
EOF
bad "a password that is no bcrypt hash" "prometheus: not a bcrypt hash" <<<"basic_auth_users: {prometheus: s3cret}"
bad "a missing key file" "$W/nokey.pem: No such file" <<<"tls_server_config: {cert_file: $W/cert.pem, key_file: $W/nokey.pem}"
bad "a certificate without its key" "needs cert_file and key_file" <<<"tls_server_config: {cert_file: $W/cert.pem}"
bad "YAML that does not parse" "bad.yml:" <<<"basic_auth_users: [unclosed"
write_conf "metrics_web_config web.yml"
out=$(lbx "$MAGLEVD" -t -c "$CONF" 2>&1)
rc=$?
check "metrics_web_config must be absolute: -t exits 1 naming it ($(tail -1 <<<"$out"))" \
	bash -c "[ $rc -eq 1 ] && grep -q 'metrics_web_config' <<<'$out' && grep -q 'absolute path' <<<'$out'"

stop_daemon
t_done
