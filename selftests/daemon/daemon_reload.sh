#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Configuration checks and reloads: maglevd -t rejects malformed
# metrics_listen and health_http_path values with their line; a SIGHUP
# reload that fails part-way leaves no newly added interface attached; the
# -v debug level survives a SIGHUP; maglevctl refuses contradicting options
# as a usage error and changes nothing; tcp_closed_timeout_ms reaches the
# loaded program, and only a restart changes it; new_flow_limit defaults to
# 125000 and slow_path_limit to 20000, and a reload changes them; a bad
# slow_path_limit is refused by a reload, which changes nothing.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf

# --- maglevd -t: metrics_listen and health_http_path formats -------------------
# conf_case NAME WANT(ok|bad) LINE...: maglevd -t on the test config plus LINEs.
conf_case() {
	local name=$1 want=$2 out rc n
	shift 2
	cp "$CONF" "$TDIR/t.conf"
	printf '%s\n' "$@" >>"$TDIR/t.conf"
	n=$(wc -l <"$TDIR/t.conf")
	out=$(lbx "$MAGLEVD" -t -c "$TDIR/t.conf" 2>&1)
	rc=$?
	if [ "$want" = ok ]; then
		check "maglevd -t accepts $name" [ $rc -eq 0 ]
	else
		# The error names the file's last line (the one added) and the key.
		if [ $rc -eq 1 ] && echo "$out" | grep -q "line $n: bad value .* for ${1%% *}"; then
			ok "maglevd -t rejects $name ($out)"
		else
			nok "maglevd -t rejects $name (rc $rc: $out)"
		fi
	fi
}
conf_case "metrics_listen without a port" bad "metrics_listen 127.0.0.1"
conf_case "metrics_listen that is not an address" bad "metrics_listen localhost:9478"
conf_case "metrics_listen with port 0" bad "metrics_listen 127.0.0.1:0"
conf_case "metrics_listen with port 65536" bad "metrics_listen 127.0.0.1:65536"
conf_case "metrics_listen with an IPv6 address out of brackets" bad "metrics_listen ::1:9478"
conf_case "health_http_path without a leading /" bad "health_http_path healthz"
conf_case "health_http_path with a space" bad "health_http_path /health z"
conf_case "health_http_path with a control character" bad "health_http_path /health$(printf '\001')z"
conf_case "metrics_listen IPv4" ok "metrics_listen 192.0.2.1:9478"
conf_case "metrics_listen IPv6 in brackets" ok "metrics_listen [2001:db8::1]:9478"
conf_case "metrics_listen off" ok "metrics_listen off"
conf_case "health_http_path with a query" ok "health_http_path /healthz?full=1"

# --- a daemon started with -v ------------------------------------------------------
nsenter --net="/run/netns/$NS_LB" "$MAGLEVD" -v -c "$CONF" >>"$DLOG" 2>&1 &
DPID=$!
for _ in $(seq 100); do
	ctl status >/dev/null 2>&1 && break
	sleep 0.05
done
ctl status >/dev/null 2>&1 || {
	nok "maglevd -v starts"
	sed 's/^/# /' "$DLOG"
	t_done
}
V=192.0.2.10:80/tcp
# reload_and_wait: SIGHUP, then wait (up to 20 s: sanitized builds on a busy
# machine are slow) for the daemon to say how the reload went; the verdict
# line is then in $RELOAD_SAID (other lines, -v debug ones, may follow it).
reload_and_wait() {
	local n0 _
	n0=$(grep -cE 'configuration reloaded|reload failed' "$DLOG")
	RELOAD_SAID=
	kill -HUP "$DPID"
	for _ in $(seq 400); do
		if [ "$(grep -cE 'configuration reloaded|reload failed' "$DLOG")" -gt "$n0" ]; then
			RELOAD_SAID=$(grep -E 'configuration reloaded|reload failed' "$DLOG" | tail -n 1)
			return 0
		fi
		sleep 0.05
	done
	return 1
}
ctl vip add $V
check "-v: debug lines are logged before a reload" grep -q 'debug: commit done' "$DLOG"
reload_and_wait
check "set-up: the SIGHUP reload of the unchanged file succeeded" \
	grep -q 'configuration reloaded' <<<"$RELOAD_SAID"
mark=$(wc -l <"$DLOG")
ctl backend add $V 198.51.100.1
check "-v survives SIGHUP: debug lines are still logged after the reload (log_level info in the file)" \
	bash -c "tail -n +$((mark + 1)) $DLOG | grep -q 'debug: commit done'"

# --- a reload failing after a new interface was attached ---------------------------
lbx ip link add lb1 type veth peer name lb1p
lbx ip link set lb1 up
lbx ip link set lb1p up
LB1=$(lbx cat /sys/class/net/lb1/ifindex)
sed -i 's/^interface .*/interface lb0 lb1 nosuch0/' "$CONF"
reload_and_wait
check "reload with a missing third interface fails and says why" \
	grep -q 'reload failed, keeping the running configuration: interface nosuch0' <<<"$RELOAD_SAID"
diag "the daemon said: ${RELOAD_SAID:-nothing within 20 s}"
check "the failed reload left no XDP program on the newly added lb1" \
	bash -c "! ip netns exec $NS_LB ip link show lb1 | grep -q xdp"
check "and no pinned link for lb1" [ ! -e "$PIN/link_xdp_$LB1" ]
check "lb0 stays attached and the daemon serving" \
	bash -c "ip netns exec $NS_LB ip link show lb0 | grep -q xdp && $MAGLEVCTL -j status | jqt '.ok' >/dev/null"
# Control: the same interface can be attached, so the check above can fail.
sed -i 's/^interface .*/interface lb0 lb1/' "$CONF"
reload_and_wait
check "control: a reload adding lb1 alone attaches it (link pinned)" \
	bash -c "ip netns exec $NS_LB ip link show lb1 | grep -q xdp && [ -e $PIN/link_xdp_$LB1 ]"
sed -i 's/^interface .*/interface lb0/' "$CONF"
reload_and_wait
check "a reload dropping lb1 detaches it" \
	bash -c "! ip netns exec $NS_LB ip link show lb1 | grep -q xdp && [ ! -e $PIN/link_xdp_$LB1 ]"

# --- maglevctl: contradicting options are usage errors -------------------------------
ctl backend add $V 198.51.100.2 --weight 2
# usage_reject NAME PATTERN ARGS...: exit 2, PATTERN on stderr, nothing changed.
usage_reject() {
	local name=$1 pat=$2 before out rc
	shift 2
	before=$(snapshot)
	out=$("$MAGLEVCTL" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && echo "$out" | head -1 | grep -q -- "$pat" && [ "$(snapshot)" = "$before" ]; then
		ok "usage error (exit 2), nothing changed: $name ($(echo "$out" | head -1))"
	else
		nok "usage error (exit 2), nothing changed: $name (rc $rc: $(echo "$out" | head -1))"
	fi
}
usage_reject "backend set --drain --undrain" "--drain and --undrain contradict each other" \
	backend set $V 198.51.100.2 --drain --undrain
usage_reject "backend set --undrain --drain" "--undrain and --drain contradict each other" \
	backend set $V 198.51.100.2 --undrain --drain
usage_reject "backend set --weight twice" "--weight given twice" \
	backend set $V 198.51.100.2 --weight 1 --weight 3
usage_reject "backend add --drain twice" "--drain given twice" \
	backend add $V 198.51.100.3 --drain --drain
check "backend set --weight with --drain is one change (both applied)" \
	bash -c "$MAGLEVCTL backend set $V 198.51.100.2 --weight 5 --drain && \
		 $MAGLEVCTL -j backend list $V | jqt '.backends[] | select(.backend == \"198.51.100.2\") | .weight == 5 and .drain' >/dev/null"
stop_daemon

# --- tcp_closed_timeout_ms: bound when the program loads (restart only) ---------------
conf_case "tcp_closed_timeout_ms below 100" bad "tcp_closed_timeout_ms 50"
# closed_ns: the attached program's maglev_tcp_closed_ns (its .rodata).
closed_ns() {
	local ifx prog m
	ifx=$(lbx cat /sys/class/net/lb0/ifindex)
	prog=$(bpftool -j link show pinned "$PIN/link_xdp_$ifx" | jq .prog_id)
	for m in $(bpftool -j prog show id "$prog" | jq '.map_ids[]'); do
		bpftool -j map show id "$m" | jq -e '.name | endswith(".rodata")' >/dev/null &&
			bpftool -j map dump id "$m" | jq '.[0].formatted.value[".rodata"][0].maglev_tcp_closed_ns'
	done
}
write_conf "tcp_closed_timeout_ms 2500"
start_daemon || nok "maglevd starts with tcp_closed_timeout_ms 2500"
check "tcp_closed_timeout_ms 2500: the datapath expires closed entries after 2.5 s ($(closed_ns) ns)" \
	[ "$(closed_ns)" = 2500000000 ]
# new_flow_limit: 125000 per CPU unless configured (issue 14 item 7), live on reload.
dp_new_flow_limit() { bpftool -j map dump pinned "$PIN/maglev_cfg" | jq '.[0].formatted.value.new_flow_limit'; }
check "new_flow_limit defaults to 125000 per CPU ($(dp_new_flow_limit))" [ "$(dp_new_flow_limit)" = 125000 ]
# slow_path_limit: 20000 per CPU unless configured (issue 14 item 7), live on reload.
dp_slow_limit() { bpftool -j map dump pinned "$PIN/maglev_cfg" | jq '.[0].formatted.value.slow_path_limit'; }
check "slow_path_limit defaults to 20000 per CPU ($(dp_slow_limit))" [ "$(dp_slow_limit)" = 20000 ]
write_conf "tcp_closed_timeout_ms 5000" "new_flow_limit 0" "slow_path_limit 500"
reload_and_wait
check "a reload applies new_flow_limit 0 (unlimited) ($(dp_new_flow_limit))" [ "$(dp_new_flow_limit)" = 0 ]
check "a reload applies slow_path_limit 500 ($(dp_slow_limit))" [ "$(dp_slow_limit)" = 500 ]
write_conf "tcp_closed_timeout_ms 5000" "new_flow_limit 0" "slow_path_limit -1"
out=$("$MAGLEVD" -t -c "$CONF" 2>&1)
check "maglevd -t refuses slow_path_limit -1, naming the key ($out)" grep -q slow_path_limit <<<"$out"
reload_and_wait
check "a reload with it fails ($RELOAD_SAID)" grep -q "reload failed" <<<"$RELOAD_SAID"
check "and leaves 500 in place ($(dp_slow_limit))" [ "$(dp_slow_limit)" = 500 ]
write_conf "tcp_closed_timeout_ms 5000" "new_flow_limit 0" "slow_path_limit 0"
reload_and_wait
check "a reload applies slow_path_limit 0 (unlimited) ($(dp_slow_limit))" [ "$(dp_slow_limit)" = 0 ]
check "a reload keeps the running tcp_closed_timeout_ms, and the log names that key alone" \
	bash -c "grep -q 'reload: tcp_closed_timeout_ms changed in .* but takes effect on restart only' '$DLOG' && [ \"$(closed_ns)\" = 2500000000 ]"
# Reload truth: the answer, the exit status, -j and status name the key that waits.
write_conf "tcp_closed_timeout_ms 5000" "new_flow_limit 0" "slow_path_limit 0" "conn_table_size 4096"
out=$("$MAGLEVCTL" reload 2>&1)
rc=$?
check "maglevctl reload with restart-only keys changed: exit 5, naming exactly them ($out)" \
	bash -c "[ $rc = 5 ] && grep -qx 'not applied until maglevd restarts (the running values stay): conn_table_size tcp_closed_timeout_ms' <<<'$out'"
check "-j reload and status: restart_pending names them" \
	bash -c "$MAGLEVCTL -j reload | jq -e '.ok and .restart_pending == [\"conn_table_size\", \"tcp_closed_timeout_ms\"]' >/dev/null;
		 [ \$? = 0 ] && $MAGLEVCTL -j status | jq -e '.restart_pending == [\"conn_table_size\", \"tcp_closed_timeout_ms\"] and .last_reload.restart_pending == .restart_pending' >/dev/null &&
		 $MAGLEVCTL status | grep -qx 'changed in the configuration, waiting for a restart: conn_table_size tcp_closed_timeout_ms'"
write_conf "tcp_closed_timeout_ms 2500" "new_flow_limit 0" "slow_path_limit 0"
out=$("$MAGLEVCTL" reload 2>&1)
rc=$?
check "the file put back: reload exit 0, nothing waits ($out)" \
	bash -c "[ $rc = 0 ] && [ \"\$($MAGLEVCTL -j status | jq -c .restart_pending)\" = '[]' ]"
write_conf "tcp_closed_timeout_ms 5000" "new_flow_limit 0" "slow_path_limit 0"
"$MAGLEVCTL" reload >/dev/null 2>&1
# A new outer source prefix: strict decap on the backends would drop it all.
write_conf "tcp_closed_timeout_ms 5000" "new_flow_limit 0" "slow_path_limit 0" "src4_prefix 203.0.113.128/25"
out=$("$MAGLEVCTL" reload 2>&1)
check "a reload that changes src4_prefix warns that strict decap must allow it ($out)" \
	bash -c "grep -q '^warning: the outer source prefix changed .*--allow-src' <<<'$out' &&
		$MAGLEVCTL -j reload | jq -e '.warning | not' >/dev/null"
stop_daemon
start_daemon || nok "maglevd restarts with tcp_closed_timeout_ms 5000"
check "a restart applies it ($(closed_ns) ns)" [ "$(closed_ns)" = 5000000000 ]
stop_daemon
t_done
