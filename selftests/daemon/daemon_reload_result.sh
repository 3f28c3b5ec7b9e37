#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A reload's result reaches whoever asked for it: the unit's ExecReload
# (what "systemctl reload maglevd" runs, taken from docs/maglevd.service)
# exits non-zero when the reload was refused, with the reason; the log says
# "reload failed", never "configuration reloaded", for a configuration the
# datapath refuses (mtu below 576: the config parser takes it, the datapath
# does not); maglevctl status shows the last failure; and a refused reload
# changes nothing.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
cp "$CONF" "$TDIR/good.conf"
V=192.0.2.10:5000/udp
start_daemon || { nok "maglevd starts"; t_done; }
ctl vip add $V && ctl backend add $V 198.51.100.1 && ctl backend add $V 198.51.100.2

# The unit's reload command, run as systemd would (its binaries from this build).
EXEC_RELOAD=$(sed -n 's/^ExecReload=//p' "$ROOT/docs/maglevd.service")
diag "ExecReload=$EXEC_RELOAD"
systemctl_reload() {
	local cmd=${EXEC_RELOAD//\/usr\/local\/sbin\//$BUILD_DIR/}
	cmd=${cmd//\/usr\/local\/bin\//$BUILD_DIR/}
	cmd=${cmd//\$MAINPID/$DPID}
	mark=$(wc -l <"$DLOG")
	RELOAD_ERR=$(bash -c "$cmd" 2>&1 >/dev/null)
	RELOAD_RC=$?
	# The daemon's verdict in the log (a SIGHUP is handled asynchronously).
	for _ in $(seq 100); do
		since | grep -qE 'configuration reloaded|reload failed' && break
		sleep 0.05
	done
}
since() { tail -n +$((mark + 1)) "$DLOG"; }

systemctl_reload
check "ExecReload of an unchanged file: exit 0 and 'configuration reloaded'" \
	bash -c "[ $RELOAD_RC -eq 0 ] && tail -n +$((mark + 1)) $DLOG | grep -q 'configuration reloaded'"
MTU0=$(dp_mtu)
check "set-up: the datapath's mtu is the interface's ($MTU0)" [ "$MTU0" = 1500 ]

# --- a file that does not parse ----------------------------------------------------
before=$(snapshot)
cp "$TDIR/good.conf" "$CONF"
echo "mtu lots" >>"$CONF"
systemctl_reload
diag "ExecReload said: rc $RELOAD_RC: $RELOAD_ERR"
check "ExecReload of a file that does not parse exits non-zero" [ "$RELOAD_RC" -ne 0 ]
check "and says why (the line and the key)" grep -q "bad value 'lots' for mtu" <<<"$RELOAD_ERR"

# --- a value the datapath refuses ----------------------------------------------------
cp "$TDIR/good.conf" "$CONF"
echo "mtu 500" >>"$CONF"
check "set-up: maglevd -t accepts mtu 500 (the datapath is what refuses it)" \
	lbx "$MAGLEVD" -t -c "$CONF"
systemctl_reload
diag "ExecReload said: rc $RELOAD_RC: $RELOAD_ERR"
check "ExecReload with mtu 500 exits non-zero" [ "$RELOAD_RC" -ne 0 ]
check "and names the datapath's refusal" grep -q "datapath refused the new configuration" <<<"$RELOAD_ERR"
check "the log says 'reload failed' and not 'configuration reloaded'" \
	bash -c "tail -n +$((mark + 1)) $DLOG | grep -q 'reload failed' && ! tail -n +$((mark + 1)) $DLOG | grep -q 'configuration reloaded'"
check "the datapath's mtu is unchanged ($(dp_mtu))" [ "$(dp_mtu)" = "$MTU0" ]
mark=$(wc -l <"$DLOG")
kill -HUP "$DPID"
for _ in $(seq 100); do since | grep -qE 'configuration reloaded|reload failed' && break; sleep 0.05; done
check "a bare SIGHUP with mtu 500 is logged as 'reload failed' too" \
	bash -c "tail -n +$((mark + 1)) $DLOG | grep -q 'reload failed' && ! tail -n +$((mark + 1)) $DLOG | grep -q 'configuration reloaded'"
check "maglevctl status shows the last reload's failure" \
	bash -c "$MAGLEVCTL -j status | jqt '.last_reload_error | test(\"datapath refused\")' >/dev/null"
check "the refused reloads changed nothing (VIPs, backends, tables, state file)" \
	[ "$(snapshot)" = "$before" ]

# --- and back -------------------------------------------------------------------------
cp "$TDIR/good.conf" "$CONF"
systemctl_reload
check "ExecReload of the good file again: exit 0, and status clears the failure" \
	bash -c "[ $RELOAD_RC -eq 0 ] && $MAGLEVCTL -j status | jqt 'has(\"last_reload_error\") | not' >/dev/null"
stop_daemon
t_done
