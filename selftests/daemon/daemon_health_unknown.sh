#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A check the balancer could not make says nothing about the backend:
# - maglevd restarted under a hard open-file limit too low for its checks
#   (EMFILE on socket()): the backends stay up and in the table, the checks are counted
#   as unknown (maglevctl health and status, -j, metrics);
# - a low soft limit under a higher hard one: maglevd raises it to what
#   max_vips x max_backends_per_vip need, and no check goes unknown;
# - the TC program for health_via_encap cannot attach (another filter holds
#   its place): unknown, the backends stay up.
. "$(dirname "$0")/lib.sh"

N=150
setup_net || skip_all "cannot create namespaces/veth"
# The backends are local addresses of the balancer, served by one listener.
lbx ip route add local 198.51.100.0/24 dev lo
EXTRA_PIDS=
accept_service 8080 198.51.100.1 || nok "service listening"
# Need: 4 x 256 checks + 256 control + 64 metrics clients + 512 own = 1856.
write_conf "health_via_encap no" "max_vips 4" "max_backends_per_vip 256"

V=192.0.2.40:8080/tcp
{
	echo "vip add $V --check tcp --check-interval 100 --check-timeout 80 --rise 1 --fall 2"
	for i in $(seq 1 $N); do echo "backend add $V 198.51.100.$i"; done
} >"$TDIR/conf.txt"

# Reading the live table takes the daemon an fd too: at 64 it may find none
# while the checks hold them all, so a few tries.
in_table() {
	local i n
	for i in $(seq 20); do
		n=$(ctl -j table $V 2>/dev/null | jq '[.backends[] | select(.slots > 0)] | length')
		[ -n "$n" ] && echo "$n" && return
		sleep 0.05
	done
	echo -1
}
up() { ctl -j health $V | jq '[.backends[] | select(.state == "up")] | length'; }
unknown_sum() { ctl -j health $V | jq '[.backends[].checks_unknown // 0] | add'; }
soft() { prlimit --pid "$DPID" --nofile --noheadings --output SOFT | tr -d ' '; }
metric() { lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" | grep -E "$1" | awk '{s += $2} END {print s + 0}'; }

# --- hard limit 64: every tick, the checks beyond it find no socket ---------------
# The backends are up first (new ones start down until a check passes), then
# maglevd restarts under the limit and adopts them up.
start_daemon || { nok "maglevd starts"; t_done; }
check "restore: $N backends with a check every 100 ms, fall 2" ctl restore "$TDIR/conf.txt"
end=$((SECONDS + 15))
while [ "$(up)" != "$N" ] && [ $SECONDS -lt $end ]; do sleep 0.2; done
check "all $N pass their first checks and come up" [ "$(up)" -eq $N ]
stop_daemon
DAEMON_PREFIX="prlimit --nofile=64:64" start_daemon || { nok "maglevd starts under 64:64"; t_done; }
ok "maglevd starts under an open-file limit of 64:64"
diag "fds open at start: $(ls /proc/$DPID/fd | wc -l)"
sleep 2
check "the hard limit stays (it caps what maglevd may raise): soft 64" [ "$(soft)" = 64 ]
check "the log says the hard limit is below what the limits need" \
	grep -q "hard limit 64 is below the 1856" "$DLOG"
u=$(unknown_sum)
diag "after 2 s: $(up) of $N up, $(in_table) in the table, $u checks unknown"
check "checks ran out of sockets: counted as unknown (maglevctl -j health)" [ "${u:-0}" -gt 0 ]
check "their last error names EMFILE" \
	bash -c "$MAGLEVCTL -j health $V | jq -e '[.backends[] | select(.last_result == \"unknown\" and .last_error == \"socket: Too many open files\")] | length > 0' >/dev/null"
check "no backend was marked down for it: all $N up" [ "$(up)" -eq $N ]
check "all $N still hold slots: the VIP is served" [ "$(in_table)" -eq $N ]
check "maglevctl health shows the unknown count per backend" \
	bash -c "$MAGLEVCTL health $V | awk 'NR == 1 { for (i = 1; i <= NF; i++) if (\$i == \"UNKNOWN\") c = i; next } c && \$c > 0 { n++ } END { exit !(c && n > 0) }'"
check "maglevctl -j status: health_checks_unknown counts them" \
	bash -c "[ \$($MAGLEVCTL -j status | jq .health_checks_unknown) -gt 0 ]"
check "maglevctl status says so" \
	bash -c "$MAGLEVCTL status | grep -Eq 'health checks that could not be made \\(unknown, no verdict\\): [1-9]'"
check "metrics: maglev_health_checks_unknown_total > 0" \
	[ "$(metric '^maglev_health_checks_unknown_total ')" -gt 0 ]
check "metrics: maglev_backend_health_checks_total{result=\"unknown\"} > 0" \
	[ "$(metric "^maglev_backend_health_checks_total\\{$(vipl "$V"),.*result=\"unknown\"\\}")" -gt 0 ]
stop_daemon

# --- soft 64 under hard 4096: raised to the 1856 the limits need ------------------
DAEMON_PREFIX="prlimit --nofile=64:4096" start_daemon || { nok "maglevd starts under 64:4096"; t_done; }
ok "maglevd starts under an open-file limit of 64:4096"
check "maglevd raised its soft limit to 1856 (prlimit --pid)" [ "$(soft)" = 1856 ]
# Each backend's first check within a few ticks; a slow machine (the
# sanitizer pass) takes longer, so poll rather than sleep.
passing() { ctl -j health $V | jq '[.backends[] | select(.state == "up" and .last_result == "ok")] | length'; }
end=$((SECONDS + 15))
while p=$(passing) && [ "$p" != "$N" ] && [ $SECONDS -lt $end ]; do sleep 0.2; done
diag "after $((SECONDS - end + 15)) s: $(up) of $N up, $p passing, $(in_table) in the table, $(unknown_sum) checks unknown"
check "no check went unknown" [ "$(unknown_sum)" -eq 0 ]
check "all $N backends passed their checks at once: up, last check ok, in the table" \
	[ "$p:$(in_table)" = "$N:$N" ]

# --- health_via_encap yes, and its TC program cannot attach ------------------------
# Another filter holds maglev_hc's place (egress, pref 1): the attach is refused.
lbx tc qdisc add dev lb0 clsact
lbx tc filter add dev lb0 egress pref 1 protocol ip u32 match u32 0 0
write_conf "health_via_encap yes" "max_vips 4" "max_backends_per_vip 256"
kill -HUP "$DPID"
for i in $(seq 60); do grep -q "health_via_encap: attaching the TC egress filter" "$DLOG" && break; sleep 0.05; done
check "the TC egress filter cannot attach (logged)" grep -q "health_via_encap: attaching the TC egress filter" "$DLOG"
u0=$(unknown_sum)
sleep 1
u=$(unknown_sum)
diag "1 s without the encapsulation: $(up) of $N up, unknown $u0 -> $u"
check "checks without the encapsulation are unknown, and counted" \
	bash -c "[ $u -gt $u0 ] && $MAGLEVCTL -j health $V | jq -e '.backends[0].last_result == \"unknown\" and (.backends[0].last_error | startswith(\"health_via_encap: \"))' >/dev/null"
check "no backend was marked down for it: all $N up and in the table" \
	bash -c "[ $(up) -eq $N ] && [ $(in_table) -eq $N ]"
stop_daemon
t_done
