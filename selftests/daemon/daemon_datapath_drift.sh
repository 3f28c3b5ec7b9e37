#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The datapath read back against the registry (issue 32, item 2): maglevd
# reads each VIP's entry, table and backend entries back from the pinned maps
# and reports a datapath that differs from what it wrote, in `maglevctl
# status` (text and -j), the metrics and the log; the digests, computed from
# the registry, cannot show it. Changed behind maglevd's back here: a
# backend's flags cleared with bpftool (its slots then drop new flows: fewer
# packets out than in), then another VIP's table put in a VIP's outer slot. A restart writes everything again: agreement.
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf "udp_idle_timeout_ms 600000"
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts"

V=192.0.2.90:5000/udp
W=192.0.2.91:5000/udp
ctl vip add $V --check none && ctl vip add $W --check none || nok "vip add"
for b in 1 2 3; do ctl backend add $V 198.51.100.$b && ctl backend add $W 198.51.100.$((b + 3)); done
jq_ok() { jqt "$@" >/dev/null; }
metrics() { lbx curl -sf "http://127.0.0.1:$METRICS_PORT/metrics"; }
passes() { ctl -j status | jq -r '.datapath.passes // 0'; }
# until_drift N: status reports N VIPs drifting, read by a pass begun after
# this call (10 s at most).
until_drift() {
	local p0 i
	p0=$(passes)
	for i in $(seq 200); do
		[ "$(passes)" -ge $((p0 + 2)) ] && [ "$(ctl -j status | jq .datapath.drift_vips)" = "$1" ] &&
			return 0
		sleep 0.05
	done
	return 1
}
check "a pass read every VIP back: no drift" until_drift 0
st=$(ctl -j status)
check "status -j: datapath {pass_ms, passes, drift_vips 0, drift []}" \
	jq_ok '.datapath | (.pass_ms > 0) and .passes >= 1 and .drift_vips == 0 and .drift == []' <<<"$st"
check "status text: the datapath agrees" bash -c "$MAGLEVCTL status | grep -q '^datapath read back: agrees with the registry'"
metrics >"$TDIR/m0"
check "metrics: maglev_datapath_drift_vips 0, each VIP's maglev_vip_datapath_drift 0" \
	bash -c "grep -qx 'maglev_datapath_drift_vips 0' $TDIR/m0 &&
		 grep -qx 'maglev_vip_datapath_drift{$(vipl "$V")} 0' $TDIR/m0 &&
		 grep -qx 'maglev_vip_datapath_drift{$(vipl "$W")} 0' $TDIR/m0"

# --- a backend's flags cleared behind maglevd's back ----------------------------
idx=$(ctl -j backend list $V | jq -r '.backends[] | select(.backend == "198.51.100.2") | .index')
dp_backend_flags "$PIN" "$idx" 0 || nok "bpftool map update of backend $idx"
check "bpftool: the entry's flags are 0 now" [ "$(flags $V 198.51.100.2)" = "" ]
check "the read-back reports one VIP" until_drift 1
st=$(ctl -j status)
diag "status: $(echo "$st" | jq -c .datapath)"
check "status -j names the VIP and what differs" \
	jq_ok '.datapath.drift == [{"vip": $v, "differs": "backend 198.51.100.2: none in the datapath, UP in the registry"}]' --arg v "$V" <<<"$st"
check "status text says so" \
	bash -c "$MAGLEVCTL status | grep -q '^datapath read back: 1 VIP DIFFERS from the registry' &&
		 $MAGLEVCTL status | grep -q '$V .*backend 198.51.100.2: none in the datapath, UP in the registry'"
metrics >"$TDIR/m1"
check "metrics: maglev_datapath_drift_vips 1, V 1, W 0" \
	bash -c "grep -qx 'maglev_datapath_drift_vips 1' $TDIR/m1 &&
		 grep -qx 'maglev_vip_datapath_drift{$(vipl "$V")} 1' $TDIR/m1 &&
		 grep -qx 'maglev_vip_datapath_drift{$(vipl "$W")} 0' $TDIR/m1"
check "the log warns once, naming VIP and backend" \
	[ "$(grep -c "warning: datapath drift: VIP $V: backend 198.51.100.2: none in the datapath" "$DLOG")" = 1 ]
check "the digests did not move: they are the registry's" \
	[ "$(ctl -j vip show $V | jq -r .vip.digest)" = "$(ctl -j table $V | jq -r .digest)" ]
out=$(pktio --dst 192.0.2.90 --dport 5000 --sports "$(seq -s, 47000 47029)" --count 2)
diag "30 new flows x 2 packets: $(echo "$out" | jq -c '{sent, seen}')"
check "... while the flows hashed to 198.51.100.2 are dropped (packets out < in, none to it)" \
	[ "$(echo "$out" | jq '.seen < .sent and ([.flows[] | .["198.51.100.2"] // 0] | add) == 0')" = true ]

# --- W's table replaced: its slot in the outer map names V's table -----------------
# (The tables themselves are frozen: nothing writes them but a swap.)
# inner VIP: the id of the table map the VIP's outer slot names.
inner() {
	local hex
	# shellcheck disable=SC2046 # le32 is words
	hex=$(bpftool -j map lookup pinned "$PIN/maglev_tables" key $(le32 "$(ctl -j vip show "$1" | jq .vip.id)") |
		jq -r '[.value[] | ltrimstr("0x")] | reverse | join("")')
	echo $((16#${hex:-0}))
}
vt=$(inner $V)
diag "V's table map id $vt, W's $(inner $W)"
# shellcheck disable=SC2046
bpftool map update pinned "$PIN/maglev_tables" key $(le32 "$(ctl -j vip show $W | jq .vip.id)") value id "$vt" ||
	nok "bpftool map update of W's outer slot"
check "W's outer slot names V's table now" [ "$(inner $W)" = "$vt" ]
check "the read-back reports both VIPs" until_drift 2
st=$(ctl -j status)
check "status -j: W's table digest differs" \
	jq_ok '[.datapath.drift[] | select(.vip == $v) | .differs | test("^table digest [0-9a-f]{16} in the datapath, [0-9a-f]{16} in the registry$")] == [true]' --arg v "$W" <<<"$st"

# --- a restart writes everything again ----------------------------------------------
stop_daemon
start_daemon || nok "maglevd restarts"
check "after a restart the datapath agrees again" until_drift 0
check "... and every packet is forwarded again" \
	bash -c "$(declare -f pktio clx); PKTIO=$PKTIO NS_CL=$NS_CL; pktio --dst 192.0.2.90 --dport 5000 --sports \"\$(seq -s, 47100 47129)\" --count 2 | jq -e '.sent == 60 and .seen == 60' >/dev/null"
stop_daemon
t_done
