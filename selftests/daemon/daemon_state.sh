#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# State file crash safety: SIGKILL maglevd at random moments while a client
# streams changes at it; every time, the state file is a complete state (it
# parses, it loads), the restarted daemon comes up with it, and the datapath
# it writes agrees with it. A corrupt state file stops the daemon with a
# clear message instead of starting empty.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
V=192.0.2.10:80/tcp
ROUNDS=12

# The backends the state file lists for V, sorted, one per line.
state_backends() { jq -r --arg v $V '.vips[] | select(.vip == $v) | .backends[].addr' "$STATE" | sort; }
# The backends holding slots in V's live table.
table_backends() { ctl -j table $V | jq -r '.backends[] | select(.slots > 0) | .backend' | sort; }

start_daemon || { nok "maglevd starts"; t_done; }
ctl vip add $V
parsed=0 loaded=0 agreed=0 changed=0
for r in $(seq $ROUNDS); do
	# A stream of changes: each is a commit and a state file write.
	(
		for i in $(seq 1 40); do
			b=198.51.100.$(((r * 7 + i) % 50 + 1))
			"$MAGLEVCTL" backend add $V "$b" 2>/dev/null || "$MAGLEVCTL" backend del $V "$b" 2>/dev/null
		done
	) &
	writer=$!
	sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
	kill9_daemon
	wait $writer 2>/dev/null
	if jqt '.version == 1 and (.vips | type == "array")' "$STATE" >/dev/null 2>&1; then
		parsed=$((parsed + 1))
	else
		diag "round $r: state file does not parse"
	fi
	before=$(state_backends)
	[ "$before" != "$(cat "$TDIR/last" 2>/dev/null)" ] && changed=$((changed + 1))
	echo "$before" >"$TDIR/last"
	if start_daemon; then
		loaded=$((loaded + 1))
		if [ "$(ctl -j save | jq -r --arg v $V '.vips[] | select(.vip == $v) | .backends[].addr' | sort)" = "$before" ] &&
			[ "$(table_backends)" = "$before" ]; then
			agreed=$((agreed + 1))
		else
			diag "round $r: restored daemon or its table differs from the state file"
		fi
	else
		diag "round $r: daemon did not start from the state file"
	fi
done
check "state file parsed after every SIGKILL ($parsed/$ROUNDS)" [ $parsed -eq $ROUNDS ]
check "daemon restarted from it every time ($loaded/$ROUNDS)" [ $loaded -eq $ROUNDS ]
check "restored configuration and live table equal the state file every time ($agreed/$ROUNDS)" \
	[ $agreed -eq $ROUNDS ]
check "the kills landed while the state was changing (state differed in $changed/$ROUNDS rounds)" \
	[ $changed -ge $((ROUNDS / 2)) ]
check "no temporary file left behind after a clean write" \
	bash -c "$MAGLEVCTL backend add $V 198.51.100.200 && sleep 0.5 && [ ! -e $STATE.tmp ]"

# A clean stop flushes the last change to the file.
ctl backend add $V 198.51.100.201
stop_daemon
check "SIGTERM flushes the newest state to the file" \
	bash -c "jqt '.vips[0].backends | map(.addr) | index(\"198.51.100.201\") != null' $STATE >/dev/null"

cp "$STATE" "$TDIR/good"
head -c 100 "$TDIR/good" >"$STATE"
nsenter --net="/run/netns/$NS_LB" "$MAGLEVD" -c "$CONF" >"$TDIR/corrupt.log" 2>&1
rc=$?
check "a torn state file stops maglevd (exit 1) instead of starting empty" \
	bash -c "[ $rc -eq 1 ] && grep -q 'state file: .*not valid JSON' $TDIR/corrupt.log"
check "and maglevd left the file alone" [ "$(head -c 100 "$TDIR/good")" = "$(cat "$STATE")" ]
cp "$TDIR/good" "$STATE"

# Started the way systemd does (Type=notify), with a control group.
write_conf "control_group nogroup"
socat -u UNIX-RECV:"$TDIR/notify.sock" OPEN:"$TDIR/notify.txt",creat 2>/dev/null &
EXTRA_PIDS=$!
disown $EXTRA_PIDS
for i in $(seq 40); do [ -S "$TDIR/notify.sock" ] && break; sleep 0.05; done
NOTIFY_SOCKET=$TDIR/notify.sock start_daemon
check "with the file restored the daemon starts with it" \
	[ "$(ctl -j save | jq -r '.vips[0].backends | length')" = "$(jq '.vips[0].backends | length' "$STATE")" ]
# socat writes what it received on its own time (late under the sanitizers).
check "sd_notify: READY=1 sent to \$NOTIFY_SOCKET once serving" poll_until 3 grep -q 'READY=1' "$TDIR/notify.txt"
check "control_group: socket is root:nogroup mode 0660" \
	[ "$(stat -c '%U:%G %a' "$SOCK")" = "root:nogroup 660" ]
chmod 711 "$TDIR"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MAGLEVCTL" -j status 2>&1)
chmod 700 "$TDIR"
check "control_group: a member of the group may use maglevctl" \
	bash -c "echo '$out' | jqt '.ok' >/dev/null"
# SIGHUP without control_group: the socket goes back to root-only at once.
sed -i '/^control_group /d' "$CONF"
kill -HUP "$DPID"
for i in $(seq 40); do [ "$(stat -c '%G %a' "$SOCK")" = "root 600" ] && break; sleep 0.05; done
check "control_group removed by SIGHUP: socket back to root:root mode 0600" \
	[ "$(stat -c '%U:%G %a' "$SOCK")" = "root:root 600" ]
stop_daemon
check "sd_notify: STOPPING=1 on SIGTERM" poll_until 3 grep -q 'STOPPING=1' "$TDIR/notify.txt"
t_done
