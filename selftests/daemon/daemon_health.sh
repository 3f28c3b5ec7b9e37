#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Health checks against real listeners in the balancer's namespace: a TCP
# check follows a socat listener going away and coming back, only after
# `fall` failures / `rise` successes in a row; an HTTP check follows the
# status a small server answers. A down backend leaves the live table and
# loses its flags in the backend map (its flows are re-picked).
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
for a in 198.51.100.21 198.51.100.22 198.51.100.23; do lbx ip addr add $a/32 dev lo; done
write_conf "health_via_encap no"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

EXTRA_PIDS=
listen() { listen_tcp "$NS_LB" "$@"; } # the backends' addresses are on the balancer here

# --- TCP -----------------------------------------------------------------------------
V=192.0.2.20:8080/tcp
listen 198.51.100.21 8080 || nok "listener on 198.51.100.21:8080"
L21=$LPID
# A 500 ms interval: the 1-2 streaks below last a second, which a poll of
# maglevctl catches even on a loaded machine (at 300 ms a poll late by 0.6 s,
# maglevctl and jq starved, missed them).
ctl vip add $V --check tcp --check-interval 500 --check-timeout 200 --rise 3 --fall 3
# New backends start down until their first check passes
# (daemon_health_new_down.sh): both come up first, then .22's listener goes.
listen 198.51.100.22 8080 || nok "listener on 198.51.100.22:8080"
ctl backend add $V 198.51.100.21
ctl backend add $V 198.51.100.22
check "both backends come up at their first passing check" \
	bash -c "$(declare -f field wait_state ctl); MAGLEVCTL=$MAGLEVCTL; wait_state $V 198.51.100.21 up 8 && wait_state $V 198.51.100.22 up 8"
kill $LPID
check "backend without a listener goes down after 3 failed checks" wait_state $V 198.51.100.22 down 8
# Its checks are refused; on a loaded machine one may time out instead (the
# loop or the kernel's RST late past the 200 ms timeout): refused as the last
# error within a few more checks, the first error seen named.
e0=$(field $V 198.51.100.22 .last_error)
for i in $(seq 100); do
	e=$(field $V 198.51.100.22 .last_error)
	[ "$e" = "connect: Connection refused" ] && break
	sleep 0.05
done
check "its last error is the refused connect (first seen: $e0)" [ "$e" = "connect: Connection refused" ]
check "down backend: no slot in the live table" [ "$(slots $V 198.51.100.22)" -eq 0 ]
check "down backend: no flags in the live backend map (its flows are re-picked)" [ -z "$(flags $V 198.51.100.22)" ]
check "healthy backend holds every slot" [ "$(slots $V 198.51.100.21)" -eq 65537 ]
check "backend with a listener stays up, checks succeeding" \
	bash -c "[ \"\$($MAGLEVCTL -j health $V | jq -r '.backends[] | select(.backend==\"198.51.100.21\") | .state + \" \" + .last_result')\" = 'up ok' ]"
check "maglevctl health: STREAK reads ok:N for the up backend, fail:N for the down one; UNKNOWN a number" \
	bash -c "out=\$($MAGLEVCTL health $V) && grep -qE '^[^ ]+ +198\.51\.100\.21 +up .* ok:[0-9]+ +0 ' <<<\"\$out\" &&
		grep -qE '^[^ ]+ +198\.51\.100\.22 +down .* fail:[0-9]+ +0 ' <<<\"\$out\" && head -n1 <<<\"\$out\" | grep -q ' STREAK  *UNKNOWN '"

listen 198.51.100.22 8080 || nok "listener on 198.51.100.22:8080"
L22=$LPID
# Rise threshold: seen up only after 3 successes in a row; in between, the
# state is still down with a growing success streak.
saw_streak=0
end=$((SECONDS + 8))
while [ $SECONDS -le $end ]; do
	st=$(field $V 198.51.100.22 '.state + " " + (.ok_streak|tostring)')
	case "$st" in
	"down 1" | "down 2") saw_streak=1 ;;
	up*) break ;;
	esac
	sleep 0.03
done
check "rise: still down after 1-2 successes (no churn)" [ $saw_streak -eq 1 ]
check "rise: up after 3 successes" [ "$(field $V 198.51.100.22 .state)" = up ]
check "risen backend back in the live table and UP" \
	bash -c "[ \$($MAGLEVCTL -j table $V | jq '.backends[] | select(.backend==\"198.51.100.22\") | .slots') -gt 30000 ] && \
		 [ \"\$($MAGLEVCTL -j backend list $V | jq -r '.backends[] | select(.backend==\"198.51.100.22\") | .dp_flags | join(\",\")')\" = UP ]"

kill $L21
saw_streak=0
end=$((SECONDS + 8))
while [ $SECONDS -le $end ]; do
	st=$(field $V 198.51.100.21 '.state + " " + (.fail_streak|tostring)')
	case "$st" in
	"up 1" | "up 2") saw_streak=1 ;;
	down*) break ;;
	esac
	sleep 0.03
done
check "fall: still up after 1-2 failures (no churn)" [ $saw_streak -eq 1 ]
check "fall: down after 3 failures" [ "$(field $V 198.51.100.21 .state)" = down ]
check "the remaining backend holds every slot" [ "$(slots $V 198.51.100.22)" -eq 65537 ]
M=$TDIR/metrics.txt
lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$M"
check "metrics: maglev_backend_up 0 for the down backend, 1 for the other" \
	bash -c "grep -q '^maglev_backend_up{$(vipl "$V"),backend=\"198.51.100.21\"} 0' $M && \
		 grep -q '^maglev_backend_up{$(vipl "$V"),backend=\"198.51.100.22\"} 1' $M"
check "metrics: failed health checks counted" \
	bash -c "grep -Eq '^maglev_backend_health_checks_total\{$(vipl "$V"),backend=\"198.51.100.21\",result=\"fail\"\} [1-9]' $M"
kill $L22
check "both down: the VIP's table is empty (packets dropped, not sent to dead backends)" \
	bash -c "for i in \$(seq 60); do [ \"\$($MAGLEVCTL -j table $V | jq .other_slots)\" = 65537 ] && exit 0; sleep 0.1; done; exit 1"
check "every backend of the VIP down: the log names where to look on this balancer (decap, src4_prefix)" \
	grep -q "health: every backend of $V failed its checks (2 of 2): .*src4_prefix" "$DLOG"

# --- HTTP ------------------------------------------------------------------------------
echo 200 >"$TDIR/status"
cat >"$TDIR/httpd.py" <<'EOF'
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = int(open(sys.argv[1]).read()) if self.path == "/health" else 404
        self.send_response(code)
        self.end_headers()
    def log_message(self, *a):
        pass
# TCPServer, not HTTPServer: that one looks its own name up in DNS.
socketserver.TCPServer.allow_reuse_address = True
socketserver.TCPServer(("198.51.100.23", 8081), H).serve_forever()
EOF
ip netns exec "$NS_LB" python3 "$TDIR/httpd.py" "$TDIR/status" 2>/dev/null &
EXTRA_PIDS="$EXTRA_PIDS $!"
disown $!
for i in $(seq 60); do
	lbx bash -c "exec 3<>/dev/tcp/198.51.100.23/8081" 2>/dev/null && break
	sleep 0.05
done
H=192.0.2.21:8081/tcp
# A 900 ms timeout: the server is Python on a loaded machine, and with fall 1
# one late answer (150 ms were too few at load 16) took the backend down.
ctl vip add $H --check http --check-path /health --check-status 200 --check-interval 1000 \
	--check-timeout 900 --rise 1 --fall 1
ctl backend add $H 198.51.100.23
# New, it is down until its first check passes (a fixed 0.6 s was too short under load).
wait_state $H 198.51.100.23 up 6
check "HTTP check: 200 from /health brings the backend up and keeps it so" \
	[ "$(field $H 198.51.100.23 '.state + " " + .last_result')" = "up ok" ]
echo 503 >"$TDIR/status"
check "HTTP check: 503 takes it down" wait_state $H 198.51.100.23 down 6
check "HTTP check: the reason names the status" \
	[ "$(field $H 198.51.100.23 .last_error)" = "http: status 503, want 200" ]
echo 200 >"$TDIR/status"
check "HTTP check: 200 again brings it back" wait_state $H 198.51.100.23 up 6
ctl vip add 192.0.2.22:80/tcp --check none && ctl backend add 192.0.2.22:80/tcp 198.51.100.99
check "vip add --check none: backends are up without checks" \
	bash -c "[ \"\$($MAGLEVCTL -j health 192.0.2.22:80/tcp | jq -r '.backends[0].state + \" \" + .backends[0].check')\" = 'up none' ]"
stop_daemon
t_done
