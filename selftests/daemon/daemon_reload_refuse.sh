#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A reload is refused, whole, when the running VIPs do not fit the new
# configuration, i.e. when the next start would refuse the state file:
# max_vips or max_backends_per_vip below what exists, health-check defaults
# that make a VIP's override invalid (timeout > interval), and
# health_check none -> tcp while an all-ports VIP has no check port (which
# would send checks to port 0 and take its backends down). Each refusal
# names the problem and changes nothing; a reload that still fits (the
# limit equal to what exists) is accepted.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
cp "$CONF" "$TDIR/good.conf"
V1=192.0.2.10:5000/udp
V2=192.0.2.11:80/tcp
V3='192.0.2.20:*/tcp'
start_daemon || { nok "maglevd starts"; t_done; }
ctl vip add $V1 && for b in 1 2 3; do ctl backend add $V1 198.51.100.$b; done &&
	ctl vip add $V2 --check-timeout 900 && ctl backend add $V2 198.51.100.4 &&
	ctl vip add "$V3" && ctl backend add "$V3" 198.51.100.5 && ctl backend add "$V3" 198.51.100.6
check "set-up: 3 VIPs, V1 with 3 backends, V2 with a 900 ms check timeout, V3 all-ports without a check port" \
	bash -c "$MAGLEVCTL -j vip list | jqt '.vips | length == 3' >/dev/null"

since() { tail -n +$((mark + 1)) "$DLOG"; }
# sighup_reload LINES...: the good config plus LINES, SIGHUP, and wait for the
# daemon's verdict line ($VERDICT).
sighup_reload() {
	cp "$TDIR/good.conf" "$CONF"
	printf '%s\n' "$@" >>"$CONF"
	mark=$(wc -l <"$DLOG")
	kill -HUP "$DPID"
	for _ in $(seq 200); do
		since | grep -qE 'configuration reloaded|reload failed' && break
		sleep 0.05
	done
	VERDICT=$(since | grep -E 'configuration reloaded|reload failed' | tail -n 1)
}
# refused NAME PATTERN LINES...: the reload is refused, says PATTERN, and
# nothing changed.
refused() {
	local name=$1 pat=$2 before
	shift 2
	before=$(snapshot)
	sighup_reload "$@"
	diag "$name: ${VERDICT:-no verdict within 10 s}"
	if grep -q 'reload failed' <<<"$VERDICT" && grep -q -- "$pat" <<<"$VERDICT"; then
		ok "reload refused: $name"
	else
		nok "reload refused: $name"
	fi
	check "$name: the refused reload changed nothing" [ "$(snapshot)" = "$before" ]
}

# maglevd -t runs the same check against the running state file first.
{ cat "$TDIR/good.conf"; echo "max_vips 2"; } >"$TDIR/t.conf"
out=$(lbx "$MAGLEVD" -t -c "$TDIR/t.conf" 2>&1)
check "maglevd -t refuses max_vips 2 with 3 VIPs in the state file, as the reload will ($out)" \
	bash -c "[ $? = 1 ] && grep -q 'too many VIPs: the limit is 2 (max_vips)' <<<'$out'"
refused "max_vips 2 with 3 VIPs" "too many VIPs: the limit is 2 (max_vips)" "max_vips 2"
check "after it, a 4th VIP is still accepted (max_vips stays 512)" \
	bash -c "$MAGLEVCTL vip add 192.0.2.12:80/tcp && $MAGLEVCTL vip del 192.0.2.12:80/tcp"
refused "max_backends_per_vip 2 with 3 backends in $V1" \
	"too many backends in VIP $V1: the limit is 2 (max_backends_per_vip)" "max_backends_per_vip 2"
refused "health_interval_ms 500 under $V2's 900 ms timeout override" \
	"VIP $V2: health-check timeout must be 10 ms..interval (500 ms)" \
	"health_interval_ms 500" "health_timeout_ms 100"
refused "health_check tcp with the all-ports $V3 lacking a check port" \
	"an all-ports VIP needs a health-check port" \
	"health_check tcp" "health_interval_ms 1000" "health_timeout_ms 100" "health_fall 1"
# Had it been applied, the first check to port 0 would have failed by now.
sleep 2
check "$V3's backends are still up 2 s later (no check was sent to port 0)" \
	bash -c "$MAGLEVCTL -j health '$V3' | jqt '[.backends[].state] == [\"up\", \"up\"]' >/dev/null"
check "and the VIPs still show check none (the running health defaults stay)" \
	bash -c "$MAGLEVCTL -j vip list | jqt '[.vips[].check.type] | all(. == \"none\")' >/dev/null"

# maglevctl reload (what systemctl reload runs) gets the same refusal.
cp "$TDIR/good.conf" "$CONF"
echo "max_vips 2" >>"$CONF"
out=$("$MAGLEVCTL" reload 2>&1)
rc=$?
check "maglevctl reload of max_vips 2: exit 1 with the reason ($out)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'max_vips' <<<'$out'"

# --- what still fits is accepted ------------------------------------------------------
sighup_reload "max_vips 3" "max_backends_per_vip 3"
check "a reload with the limits equal to what exists is accepted ($VERDICT)" \
	grep -q 'configuration reloaded' <<<"$VERDICT"
out=$("$MAGLEVCTL" vip add 192.0.2.12:80/tcp 2>&1)
rc=$?
check "and applied: a 4th VIP is refused by max_vips 3 ($out)" \
	bash -c "[ $rc -eq 1 ] && grep -q 'the limit is 3 (max_vips)' <<<'$out'"
sighup_reload
stop_daemon
start_daemon
check "a restart afterwards takes the state file (3 VIPs)" \
	bash -c "$MAGLEVCTL -j vip list | jqt '.vips | length == 3' >/dev/null"
stop_daemon
t_done
