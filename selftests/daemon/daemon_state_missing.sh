#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A missing state file never wipes the datapath: with the file deleted, or
# state_file pointed elsewhere by a reload and the daemon restarted, maglevd
# refuses to start while pinned VIPs exist, says how to get out, and leaves
# the VIPs forwarding. Moving the file into place, or writing an explicitly
# empty state, are the ways out.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
V1=192.0.2.10:5000/udp
V2=192.0.2.11:80/tcp

# Entries of the pinned VIP map: what the XDP program forwards for.
dp_vips() { bpftool -j map dump pinned "$PIN/maglev_vips" 2>/dev/null | jq length; }

# try_start NAME: start maglevd; if it is still running after 3 s (it
# accepted the start), stop it. Sets RC (exit status, "running" if it had
# to be stopped) and OUT (its log).
try_start() {
	local pid _
	nsenter --net="/run/netns/$NS_LB" "$MAGLEVD" -c "$CONF" >"$TDIR/try.log" 2>&1 &
	pid=$!
	RC=running
	for _ in $(seq 60); do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			RC=$?
			break
		fi
		sleep 0.05
	done
	if [ "$RC" = running ]; then
		kill -TERM $pid
		wait $pid
	fi
	OUT=$(cat "$TDIR/try.log")
	diag "start attempt ($1): exit $RC: $(grep -m1 -E 'err|refus' "$TDIR/try.log")"
}

start_daemon || { nok "maglevd starts"; t_done; }
ctl vip add $V1 && ctl backend add $V1 198.51.100.1 &&
	ctl vip add $V2 && ctl backend add $V2 198.51.100.2
stop_daemon
check "set-up: two VIPs in the pinned VIP map, state file written" \
	bash -c "[ \"\$(bpftool -j map dump pinned $PIN/maglev_vips | jq length)\" = 2 ] && [ -s $STATE ]"

# --- the state file deleted -------------------------------------------------------
# With a new seed in the file too: a refused start must not write it.
dp_seed() { bpftool -j map dump pinned "$PIN/maglev_cfg" | jq '.[0].formatted.value.seed_k0'; }
SEED0=$(dp_seed)
cp "$CONF" "$TDIR/good.conf"
sed -i 's/^seed .*/seed fedcba9876543210fedcba9876543210/' "$CONF"
mv "$STATE" "$TDIR/saved.json"
try_start "state file deleted"
cp "$TDIR/good.conf" "$CONF"
check "state file deleted, VIPs pinned: maglevd refuses to start (exit 1)" [ "$RC" = 1 ]
check "the refusal says the file is missing, how many VIPs are live, and the ways out" \
	bash -c "grep -q 'state file $STATE does not exist.*2 VIPs' <<<\"\$1\" &&
		 grep -q 'put the state file back' <<<\"\$1\" &&
		 grep -q '\"vips\":\[\]' <<<\"\$1\"" _ "$OUT"
check "both VIPs are still in the pinned VIP map" [ "$(dp_vips)" = 2 ]
check "and no state file was created in the missing one's place" [ ! -e "$STATE" ]
check "and the datapath still hashes with the running seed (the new one was not written)" \
	bash -c "[ -n '$SEED0' ] && [ \"\$(bpftool -j map dump pinned $PIN/maglev_cfg | jq '.[0].formatted.value.seed_k0')\" = '$SEED0' ]"
# The XDP program still forwards for them (the next hop is the client ns).
out=$(pktio --dst 192.0.2.10 --dport 5000 --sports 40000,40001 --count 5 2>/dev/null)
check "traffic to the VIP is still forwarded ($(jq -c '{sent, seen}' <<<"$out" 2>/dev/null))" \
	bash -c 'jqt ".sent == 10 and .seen == 10" <<<"$1" >/dev/null' _ "$out"

# --- state_file changed by a reload, then a restart ----------------------------------
mv "$TDIR/saved.json" "$STATE"
start_daemon || { nok "maglevd starts with the state file back"; t_done; }
check "with the file back, both VIPs are restored" \
	bash -c "$MAGLEVCTL -j vip list | jqt '.vips | length == 2' >/dev/null"
NEW=$TDIR/moved/state.json
mkdir -p "$TDIR/moved"
sed -i "s|^state_file .*|state_file $NEW|" "$CONF"
mark=$(wc -l <"$DLOG")
kill -HUP "$DPID"
for _ in $(seq 100); do tail -n +$((mark + 1)) "$DLOG" | grep -q 'configuration reloaded\|reload failed' && break; sleep 0.05; done
check "the reload says state_file takes effect at restart, and to move the file" \
	bash -c "tail -n +$((mark + 1)) $DLOG | grep -q 'state_file changed: move $STATE to $NEW before restarting'"
stop_daemon
try_start "state_file changed"
check "restart with the new state_file (missing): refused (exit 1)" [ "$RC" = 1 ]
check "both VIPs still in the pinned VIP map" [ "$(dp_vips)" = 2 ]

# --- the ways out ------------------------------------------------------------------------
mv "$STATE" "$NEW"
start_daemon || { nok "maglevd starts once the file is moved to the new state_file"; t_done; }
check "the file moved to the new state_file: maglevd starts with both VIPs" \
	bash -c "$MAGLEVCTL -j vip list | jqt '.vips | length == 2' >/dev/null && [ \"\$(bpftool -j map dump pinned $PIN/maglev_vips | jq length)\" = 2 ]"
stop_daemon
echo '{"version":1,"vips":[]}' >"$NEW"
start_daemon || { nok "maglevd starts from an explicitly empty state file"; t_done; }
check "an explicitly empty state file: maglevd starts empty and removes the pinned VIPs" \
	bash -c "$MAGLEVCTL -j vip list | jqt '.vips | length == 0' >/dev/null && [ \"\$(bpftool -j map dump pinned $PIN/maglev_vips | jq length)\" = 0 ]"
stop_daemon
rm -f "$NEW"
start_daemon || { nok "maglevd starts without a state file when no VIP is pinned"; t_done; }
check "no state file and no pinned VIP (a first start): maglevd starts empty" \
	bash -c "$MAGLEVCTL -j vip list | jqt '.vips | length == 0' >/dev/null"
stop_daemon
t_done
