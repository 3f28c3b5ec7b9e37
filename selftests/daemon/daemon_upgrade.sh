#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Upgrades that change a pinned map's layout (issue 15 item 5). The "old
# release" is maglevd built with LAYOUT_VARIANT=1 (build/layout-variant):
# its rate-limit map has another value size and its backend map the same size
# but another BTF layout (a renamed member); every other map is the same.
# With a UDP stream to a VIP running throughout:
#  - a new maglevd that fails to start (a broken state file) after opening the
#    datapath changes nothing: the same pinned maps, the same program on the link;
#  - the upgrade renews exactly the two maps whose layout changed (named in the
#    log with the reason), adopts the others (the connection table keeps its map
#    and entries), moves the pinned link to the new program and pins the new maps;
#  - a restart of the same release renews nothing; a downgrade works the same way;
#  - no packet of the stream is lost, and each flow stays on its backend.
. "$(dirname "$0")/lib.sh"

# The old release is the plain build's variant also when the new one is a
# sanitizer build (MAGLEV_BUILD=build/san): only the new one is under test.
OLD=$ROOT/build/layout-variant/maglevd
[ -x "$OLD" ] || skip_all "$OLD missing (built by make all)"
NEW=$MAGLEVD
HELPER=$TDIR/crash.py
sed -n "/^: <<'CRASH_PY'\$/,/^CRASH_PY\$/{//!p}" "$(dirname "$0")/daemon_crash.sh" >"$HELPER"

# map_id NAME / vsize NAME: id and value size of the map pinned as NAME.
map_id() { bpftool -j map show pinned "$PIN/$1" 2>/dev/null | jq -r .id; }
vsize() { bpftool -j map show pinned "$PIN/$1" 2>/dev/null | jq -r .bytes_value; }
# link_prog: the program on the pinned XDP link of lb0.
link_prog() { bpftool -j link show pinned "$PIN/link_xdp_$LB_IFINDEX" 2>/dev/null | jq -r .prog_id; }
ids() { for m in maglev_conns maglev_connkey maglev_ratelim maglev_backends maglev_vips maglev_tables; do
	printf '%s=%s ' $m "$(map_id $m)"
done; }
# run_as BINARY: start maglevd from BINARY, the log of this start alone in $DLOG.
run_as() {
	: >"$DLOG"
	MAGLEVD=$1 start_daemon
}

setup_net || skip_all "cannot create namespaces/veth"
LB_IFINDEX=$(lbx cat /sys/class/net/lb0/ifindex)
write_conf
run_as "$OLD" || { nok "the old release starts"; t_done; }
VIP=192.0.2.10:5000/udp
ctl vip add $VIP >/dev/null && for b in 198.51.100.1 198.51.100.2 198.51.100.3; do
	ctl backend add $VIP $b >/dev/null
done || { nok "configuration"; t_done; }
check "old release: rate-limit map of its own size (24)" [ "$(vsize maglev_ratelim)" = 24 ]
clx python3 "$HELPER" stream --ifname c0 --src 203.0.113.2 --dst 192.0.2.10 --dport 5000 \
	--sports "$(seq -s, 47000 47007)" --rate 200 --max-seconds 60 --max-packets 12000 \
	--stop "$TDIR/stop" --out "$TDIR/stream.json" &
STREAM=$!
EXTRA_PIDS=$STREAM
sleep 1
stop_daemon
ids0=$(ids)
prog0=$(link_prog)
diag "old release: $ids0 prog=$prog0"

# A start that fails after opening the datapath leaves it as it was.
cp "$STATE" "$TDIR/state.good"
echo '{"version":1,"vips":[{"vip":' >"$STATE"
if MAGLEVD=$NEW start_daemon 2>/dev/null; then
	nok "new release with a broken state file refuses to start"
	stop_daemon
else
	wait "$DPID" 2>/dev/null
	DPID=
	ok "new release with a broken state file refuses to start"
fi
check "refused start: the same pinned maps and the same program on the link" \
	[ "$(ids) prog=$(link_prog)" = "$ids0 prog=$prog0" ]
cp "$TDIR/state.good" "$STATE"

# The upgrade.
run_as "$NEW" || { nok "new release starts over the old release's pins"; t_done; }
ok "new release starts over the old release's pins"
up=$(grep 'upgrade: pinned maps of another layout' "$DLOG")
diag "${up#*maglevd: }"
check "log names the renewed maps with the reason" \
	grep -q 'maglev_backends (key or value layout changed (BTF)).*maglev_ratelim (value size 24 -> 16)' <<<"$up"
check "exactly the two changed maps renewed" \
	[ "$(grep -o 'maglev_[a-z]* (' <<<"$up" | sort | tr -d '\n')" = "maglev_backends (maglev_ratelim (" ]
ids1=$(ids)
diag "new release: $ids1 prog=$(link_prog)"
check "connection table and its seed adopted (same maps)" \
	[ "$(grep -o 'maglev_conns=[0-9]* maglev_connkey=[0-9]*' <<<"$ids1")" = \
	"$(grep -o 'maglev_conns=[0-9]* maglev_connkey=[0-9]*' <<<"$ids0")" ]
check "VIP map and tables adopted" \
	[ "$(grep -o 'maglev_vips=.*' <<<"$ids1")" = "$(grep -o 'maglev_vips=.*' <<<"$ids0")" ]
idof() { grep -o "$1=[0-9]*" <<<"$2" | cut -d= -f2; }
check "rate-limit and backend maps renewed and pinned" \
	test "$(map_id maglev_ratelim)" != "$(idof maglev_ratelim "$ids0")" \
	-a "$(map_id maglev_backends)" != "$(idof maglev_backends "$ids0")" \
	-a "$(vsize maglev_ratelim)" = 16
check "the pinned link runs the new program" test -n "$(link_prog)" -a "$(link_prog)" != "$prog0"
check "the renewed backend map holds the three backends" \
	[ "$(ctl -j backend list $VIP | jq '[.backends[] | select(.dp_flags | index("UP"))] | length')" = 3 ]
sleep 0.5

# The same release again: nothing to renew.
stop_daemon
run_as "$NEW" || nok "restart of the new release"
check "restart of the same release renews nothing" \
	test "$(grep -c 'upgrade:' "$DLOG")" = 0 -a "$(ids)" = "$ids1"
sleep 0.5

# And back: the downgrade renews the same two maps.
stop_daemon
run_as "$OLD" || nok "downgrade to the old release"
check "downgrade renews the same two maps" \
	test "$(grep 'upgrade: pinned' "$DLOG" | grep -o 'maglev_[a-z]* (' | sort | tr -d '\n')" = \
	"maglev_backends (maglev_ratelim (" -a "$(vsize maglev_ratelim)" = 24
sleep 1

touch "$TDIR/stop"
wait $STREAM
EXTRA_PIDS=
echo 0 0 >"$TDIR/windows"
tr=$(python3 "$HELPER" traffic --stream "$TDIR/stream.json" --windows "$TDIR/windows")
diag "stream: $(echo "$tr" | jq -c 'del(.flows)')"
check "stream ran across the starts ($(echo "$tr" | jq .sent) packets)" \
	[ "$(echo "$tr" | jq '.sent > 600')" = true ]
check "no packet lost across refused start, upgrade, restart and downgrade ($(echo "$tr" |
	jq -r '"\(.received)/\(.sent)"'))" [ "$(echo "$tr" | jq '.lost == 0 and .dups == 0')" = true ]
check "each of the 8 flows stayed on one backend" \
	[ "$(echo "$tr" | jq '.flows | length == 8 and all(.[]; length == 1)')" = true ]
stop_daemon
t_done
