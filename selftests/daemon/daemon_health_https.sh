#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# HTTPS health checks (libcurl) against real TLS servers in the balancer's
# namespace, with certificates made here by openssl: a good one, an expired
# one and one for another name, plus a good one answering 503. The check
# sends the configured name as SNI and Host (the server records both),
# verifies by default against the CA file of maglevd.conf, judges the body,
# and --check-insecure lets the bad certificates pass. A CA file that
# cannot be read is the balancer's own error: unknown, the backend keeps
# its state. Plain http goes through the built-in client (HTTP/1.0, the
# server records the version), with the same Host and body settings. Bad
# option values are refused and change nothing.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || skip_all "no openssl"
setup_net || skip_all "cannot create namespaces/veth"
for a in 41 42 43 44 45; do lbx ip addr add 198.51.100.$a/32 dev lo; done

# --- certificates -------------------------------------------------------------------
C=$TDIR/pki
mkdir -p "$C"
ssl() { openssl "$@" >/dev/null 2>&1; }
ssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$C/ca.key" \
	-out "$C/ca.crt" -days 2 -subj /CN=maglev-test-ca
# cert NAME SAN DAYS: a server certificate signed by the test CA (DAYS -1: expired).
cert() {
	ssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$C/$1.key" \
		-out "$C/$1.csr" -subj "/CN=$2"
	printf 'subjectAltName=DNS:%s\n' "$2" >"$C/$1.ext"
	ssl x509 -req -in "$C/$1.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" -CAcreateserial \
		-days "$3" -extfile "$C/$1.ext" -out "$C/$1.crt"
}
cert good backend.example 2
cert expired backend.example -1
cert wrong other.example 2
check "openssl made the certificates (expired one: notAfter in the past)" \
	bash -c "[ -s $C/good.crt ] && [ -s $C/wrong.crt ] && ! openssl x509 -in $C/expired.crt -noout -checkend 0 >/dev/null"

# --- servers --------------------------------------------------------------------------
# One process, one thread per server: ADDR PORT CERT STATUS-FILE SEEN-FILE
# (CERT "-": plain HTTP). Each records the SNI, Host, path and HTTP version
# of its last request.
cat >"$TDIR/tlsd.py" <<'EOF'
import http.server, os, socketserver, ssl, sys, threading
class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True
def serve(addr, port, cert, status, seen):
    sni = {"name": "-"}
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            code, body = open(status).read().split(" ", 1)
            with open(seen, "w") as f:
                f.write("%s %s %s %s\n" % (sni["name"], self.headers.get("Host"), self.path,
                                            self.request_version))
            self.send_response(int(code))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())
        def log_message(self, *a):
            pass
    srv = S((addr, int(port)), H)
    if cert != "-":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert + ".crt", cert + ".key")
        def on_sni(sock, name, c):
            sni["name"] = name or "-"
        ctx.sni_callback = on_sni
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()
open(sys.argv[1], "w").write(str(os.getpid()))
args = sys.argv[2:]
for i in range(0, len(args), 5):
    threading.Thread(target=serve, args=args[i:i + 5], daemon=True).start()
threading.Event().wait()
EOF
for n in 41 42 43 44 45; do echo "200 all is ready here" >"$TDIR/status.$n"; done
echo "503 sorry" >"$TDIR/status.44"
srv() { echo "198.51.100.$1 $2 $3 $TDIR/status.$1 $TDIR/seen.$1"; }
# The interpreter writes its own pid (python3 may be a wrapper that forks);
# no output of it may hold selftests/run's pipe open.
# shellcheck disable=SC2046 # words
lbx python3 "$TDIR/tlsd.py" "$TDIR/tlsd.pid" $(srv 41 8443 "$C/good") $(srv 42 8443 "$C/expired") \
	$(srv 43 8443 "$C/wrong") $(srv 44 8443 "$C/good") $(srv 45 8080 -) >/dev/null 2>"$TDIR/tlsd.err" &
disown $!
for a in 41 42 43 44; do
	for _ in $(seq 100); do
		lbx bash -c "exec 3<>/dev/tcp/198.51.100.$a/8443" 2>/dev/null && break
		sleep 0.05
	done
done
EXTRA_PIDS="$(cat "$TDIR/tlsd.pid" 2>/dev/null) "
check "the TLS servers accept" lbx bash -c "exec 3<>/dev/tcp/198.51.100.44/8443"

# The name and CA file are maglevd.conf's defaults; the VIP says https only.
write_conf "health_via_encap no" "health_http_host backend.example" \
	"health_tls_ca_file $C/ca.crt"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

# wait_field VIP BACKEND JQ-EXPR ERE SECONDS: until the field matches.
wait_field() {
	local end=$((SECONDS + $5))
	while [ $SECONDS -le $end ]; do
		[[ "$(field "$1" "$2" "$3")" =~ $4 ]] && return 0
		sleep 0.05
	done
	diag "$2 $3: '$(field "$1" "$2" "$3")', want /$4/"
	return 1
}

V=192.0.2.40:8443/tcp
ctl vip add $V --check https --check-interval 400 --check-timeout 350 --rise 1 --fall 1
for a in 41 42 43 44; do ctl backend add $V 198.51.100.$a; done
check "good certificate, 200: up" wait_field $V 198.51.100.41 '.state + " " + .last_result' '^up ok$' 5
check "the server saw SNI and Host backend.example, the path / and libcurl's HTTP/1.1" \
	bash -c "read -r sni host path ver <$TDIR/seen.41 && [ \"\$sni \$host \$path \$ver\" = 'backend.example backend.example / HTTP/1.1' ]"
check "expired certificate: down, the reason says so" \
	wait_field $V 198.51.100.42 '.state + " " + .last_error' '^down https: .*certificate has expired' 5
check "certificate for another name: down, the reason names the mismatch" \
	wait_field $V 198.51.100.43 '.state + " " + .last_error' '^down https: .*(subject name|does not match).*backend\.example' 5
check "good certificate, 503: down, the reason names the status" \
	wait_field $V 198.51.100.44 '.state + " " + .last_error' '^down http: status 503, want 200$' 5
check "a down backend leaves the live table" [ "$(slots $V 198.51.100.42)" -eq 0 ]
check "status shows the effective https settings" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.check | .type == \"https\" and .host == \"backend.example\" and .ca_file == \"$C/ca.crt\" and .tls_verify == \"on\"' >/dev/null"

# --- expected body ---------------------------------------------------------------------
ctl vip set $V --check-body 'is\x20ready'
check "body holding the expected text: stays up" \
	wait_field $V 198.51.100.41 '(.checks_ok|tostring) + " " + .state' "^[0-9]+ up$" 3
n0=$(field $V 198.51.100.41 .checks_ok)
check "... and its checks keep passing" wait_field $V 198.51.100.41 '.checks_ok' "^$((n0 + 1))|^$((n0 + 2))|^[0-9]{3,}" 3
ctl vip set $V --check-body 'not-there'
check "body without the expected text: down, the reason says so" \
	wait_field $V 198.51.100.41 '.state + " " + .last_error' '^down http: body without the expected text$' 5
ctl vip set $V --check-body default
check "body check off again: up" wait_state $V 198.51.100.41 up 5

# --- local errors: unknown, not failed -------------------------------------------------
u0=$(field $V 198.51.100.41 .checks_unknown)
ctl vip set $V --check-ca-file "$TDIR/no-such-ca.pem"
check "unreadable CA file: checks unknown, naming the CA file problem" \
	wait_field $V 198.51.100.41 '.last_result + " " + .last_error' '^unknown https: .*(certificate|CA)' 5
sleep_until_more() { # a few more unknown checks, the state kept throughout
	local end=$((SECONDS + 5))
	while [ $SECONDS -le $end ]; do
		[ "$(field $V 198.51.100.41 .state)" = up ] || return 1
		[ "$(field $V 198.51.100.41 .checks_unknown)" -ge $((u0 + 3)) ] && return 0
		sleep 0.05
	done
	return 1
}
check "... the backend stays up through 3 of them (rise 1, fall 1)" sleep_until_more
ctl vip set $V --check-ca-file default

# System CAs only (the test CA not among them): verification fails.
ctl vip set $V --check-ca-file /etc/ssl/certs/ca-certificates.crt
check "verification on by default: a CA it does not know fails the good certificate" \
	wait_field $V 198.51.100.41 '.state + " " + .last_error' '^down https: .*(local issuer|self.signed|unable to get)' 5
ctl vip set $V --check-ca-file default
check "the test CA again: up" wait_state $V 198.51.100.41 up 5

# --- --check-insecure ------------------------------------------------------------------
ctl vip set $V --check-insecure
check "--check-insecure: the expired certificate passes" wait_state $V 198.51.100.42 up 5
check "--check-insecure: the wrong name passes" wait_state $V 198.51.100.43 up 5
check "--check-insecure: 503 still fails" [ "$(field $V 198.51.100.44 .state)" = down ]
check "status: tls_verify off" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.check.tls_verify == \"off\"' >/dev/null"
check "maglevctl save writes the settings back as options" \
	bash -c "$MAGLEVCTL save | grep -E -- '^vip add $V .*--check https.*--check-tls-verify off' >/dev/null"
jq1() { jqt "$@" >/dev/null; } # its output, not check's
check "the state file holds them" \
	jq1 ".vips[] | select(.vip == \"$V\") | .check.tls_verify == \"off\" and .check.type == \"https\"" "$STATE"
ctl vip set $V --check-tls-verify on
check "--check-tls-verify on: the expired certificate fails again" wait_state $V 198.51.100.42 down 5

# --- plain HTTP through the built-in client: Host and body -----------------------------
H=192.0.2.41:8080/tcp
ctl vip add $H --check http --check-host svc.example --check-path '/h?a=1' --check-body ready \
	--check-interval 400 --check-timeout 350 --rise 1 --fall 1
ctl backend add $H 198.51.100.45
check "http: up, with the body" wait_field $H 198.51.100.45 '.state + " " + .last_result' '^up ok$' 5
check "http: the server saw no SNI, Host svc.example, the path as configured, the built-in HTTP/1.0" \
	bash -c "read -r sni host path ver <$TDIR/seen.45 && [ \"\$sni \$host \$path \$ver\" = '- svc.example /h?a=1 HTTP/1.0' ]"
# The text after 20,000 bytes of body: found across many reads.
{ printf '200 '; head -c 20000 /dev/zero | tr '\0' x; printf 'rea'; printf 'dy\n'; } >"$TDIR/status.45"
n0=$(field $H 198.51.100.45 .checks_ok)
check "http: the text after 20,000 bytes of body still found, the backend up" \
	wait_field $H 198.51.100.45 '.checks_ok' "^$((n0 + 2))|^$((n0 + 3))|^[0-9]{3,}" 5
check "... and still up" [ "$(field $H 198.51.100.45 .state)" = up ]
ctl vip set $H --check-body not-there
check "http: body without the expected text: down, the reason says so" \
	wait_field $H 198.51.100.45 '.state + " " + .last_error' '^down http: body without the expected text$' 5
ctl vip set $H --check-body default --check-status 204
check "http: no body text, status 200 against 204: down, naming both" \
	wait_field $H 198.51.100.45 '.state + " " + .last_error' '^down http: status 200, want 204$' 5
ctl vip set $H --check-status default
check "http: status only: up" wait_state $H 198.51.100.45 up 5

# --- bad values refused, nothing changed ------------------------------------------------
before=$($MAGLEVCTL -j vip show $V)
bad() { # WHAT ERE ARGS...: vip set refused with a message matching ERE
	local out
	out=$($MAGLEVCTL vip set $V "${@:3}" 2>&1) && return 1
	grep -Eq "$2" <<<"$out" || { diag "$1: $out"; return 1; }
}
check "a host with a space is refused, naming the host" bad host "host 'bad host'" --check-host 'bad host'
check "a relative CA file is refused" bad ca "absolute path" --check-ca-file ca.pem
check "a bad tls_verify is refused, naming the choices" bad verify "on or off" --check-tls-verify maybe
check "--check-insecure takes no value" bad insecure "takes no value" --check-insecure=yes
check "the refused changes changed nothing" [ "$($MAGLEVCTL -j vip show $V)" = "$before" ]

# --- restart: the state file gives the settings back ------------------------------------
stop_daemon
start_daemon || nok "maglevd restarts"
check "after a restart: https with the same settings, the good backend up" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.check | .type == \"https\" and .tls_verify == \"on\"' >/dev/null && \
		for i in \$(seq 100); do [ \"\$($MAGLEVCTL -j health $V | jq -r '.backends[] | select(.backend==\"198.51.100.41\") | .state')\" = up ] && exit 0; sleep 0.05; done; exit 1"
stop_daemon
t_done
