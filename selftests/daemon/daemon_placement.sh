#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Placements (issue 19) through the daemon: VIPs with each placement, shown
# by vip show and table, changed by vip set, refused with a reason when the
# value is bad (nothing changes), saved and restored, and after a restart
# the same tables byte for byte (the table digest covers every slot).
. "$(dirname "$0")/lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
write_conf
start_daemon || { nok "maglevd starts"; t_done; }
ok "maglevd starts in its namespace"

RING=192.0.2.20:80/tcp
RDV=192.0.2.21:80/tcp
MAG=192.0.2.22:80/tcp
RDV2='[2001:db8::22]:80/tcp'
BES="198.51.100.1 198.51.100.2 198.51.100.3 2001:db8::4"
W=(1 2 3 1)

check "vip add --placement ring --vnodes 100" ctl vip add $RING --placement ring --vnodes 100
check "vip add --placement rendezvous" ctl vip add $RDV --placement=rendezvous
check "vip add (default placement)" ctl vip add $MAG
check "vip add a second rendezvous VIP" ctl vip add "$RDV2" --placement rendezvous
for v in $RING $RDV $MAG; do
	i=0
	for b in $BES; do
		ctl backend add $v $b --weight ${W[$i]} || nok "backend add $v $b"
		i=$((i + 1))
	done
done
# The same backends in the opposite order.
for i in 3 2 1 0; do
	b=$(echo $BES | cut -d' ' -f$((i + 1)))
	ctl backend add "$RDV2" $b --weight ${W[$i]} || nok "backend add $RDV2 $b"
done

show() { ctl -j vip show "$1" | jq -r '.vip.placement + " " + (.vip.vnodes // "-" | tostring)'; }
check "vip show: ring with 100 vnodes" [ "$(show $RING)" = "ring 100" ]
check "vip show: rendezvous, no vnodes" [ "$(show $RDV)" = "rendezvous -" ]
check "vip show: maglev by default" [ "$(show $MAG)" = "maglev -" ]
check "vip show text names the placement" \
	bash -c "$MAGLEVCTL vip show $RING | grep -q 'placement ring vnodes 100'"
check "vip list -j carries the placement" \
	[ "$(ctl -j vip list | jq -r '[.vips[].placement] | sort | join(" ")')" = "maglev rendezvous rendezvous ring" ]

digest() { ctl -j table "$1" | jq -r .digest; }
total() { ctl -j table "$1" | jq '[.backends[].slots] | add'; }
for v in $RING $RDV $MAG; do
	check "table of $v: every slot names one of its backends" [ "$(total $v)" -eq 65537 ]
done
d_ring=$(digest $RING) d_rdv=$(digest $RDV) d_mag=$(digest $MAG)
diag "digests: ring $d_ring rendezvous $d_rdv maglev $d_mag"
check "three placements, three different tables" \
	[ "$(printf '%s\n' "$d_ring" "$d_rdv" "$d_mag" | sort -u | wc -l)" -eq 3 ]
check "same backends and placement, added in another order: the same table" \
	[ "$(digest "$RDV2")" = "$d_rdv" ]
check "table text shows placement and digest" \
	bash -c "$MAGLEVCTL table $RDV | grep -q 'placement rendezvous, digest $d_rdv'"
s3=$(ctl -j table $RDV | jq '.backends[] | select(.backend == "198.51.100.3") | .slots')
check "rendezvous shares follow the weights (weight 3 of 7: $s3 slots)" \
	python3 -c "import sys; sys.exit(0 if abs($s3 / 65537 - 3 / 7) < 0.01 else 1)"

# Removing a backend from a rendezvous VIP moves only its own slots: the
# others keep theirs, so each survivor's count can only grow, and the slots
# of the removed one are all that change hands.
before=$(ctl -j table $RDV | jq -c '[.backends[] | {(.backend): .slots}] | add')
check "backend del from the rendezvous VIP" ctl backend del $RDV 198.51.100.2
after=$(ctl -j table $RDV | jq -c '[.backends[] | {(.backend): .slots}] | add')
check "survivors only gained slots" python3 -c "
import json, sys
b, a = json.loads('$before'), json.loads('$after')
sys.exit(0 if all(a[k] >= b[k] for k in a) and sum(a.values()) == 65537 else 1)"
ctl backend add $RDV 198.51.100.2 --weight 2
check "re-adding it gives the same table back" [ "$(digest $RDV)" = "$d_rdv" ]
# Those changes were O(M) updates of the previous table; a VIP added with all
# its backends in one request is one full build.
ctl backend set $RDV 198.51.100.3 --weight 5
ctl backend set $RDV 198.51.100.1 --weight 7
ctl backend set $RDV 198.51.100.1 --weight 1
{
	echo "vip add 192.0.2.23:80/tcp --placement rendezvous"
	i=0
	for b in $BES; do
		echo "backend add 192.0.2.23:80/tcp $b --weight $([ $i = 2 ] && echo 5 || echo ${W[$i]})"
		i=$((i + 1))
	done
} >"$TDIR/rdv3"
check "a rendezvous VIP built in one request" ctl restore --no-flush "$TDIR/rdv3"
check "the weights changed the table" [ "$(digest $RDV)" != "$d_rdv" ]
check "incremental updates gave the full build's table" \
	[ "$(digest $RDV)" = "$(digest 192.0.2.23:80/tcp)" ]
ctl vip del 192.0.2.23:80/tcp
ctl backend set $RDV 198.51.100.3 --weight 3
check "and back to the weights before: the table before" [ "$(digest $RDV)" = "$d_rdv" ]

# --- vip set ------------------------------------------------------------------
gen=$(ctl -j table $MAG | jq .table_gen)
check "vip set --placement rendezvous" ctl vip set $MAG --placement rendezvous
check "vip set rebuilt the table (generation +1)" [ "$(ctl -j table $MAG | jq .table_gen)" -eq $((gen + 1)) ]
check "maglev VIP switched to rendezvous has the rendezvous table" [ "$(digest $MAG)" = "$d_rdv" ]
check "vip set --placement ring --vnodes 100: the ring's table" \
	bash -c "$MAGLEVCTL vip set $MAG --placement ring --vnodes 100 && [ \"\$($MAGLEVCTL -j table $MAG | jq -r .digest)\" = $d_ring ]"
check "vip set --vnodes 16 changes the ring" \
	bash -c "$MAGLEVCTL vip set $MAG --vnodes 16 && [ \"\$($MAGLEVCTL -j table $MAG | jq -r .digest)\" != $d_ring ]"
gen=$(ctl -j table $MAG | jq .table_gen)
check "vip set to the same value is accepted" ctl vip set $MAG --vnodes 16
check "... and rebuilds nothing" [ "$(ctl -j table $MAG | jq .table_gen)" -eq "$gen" ]
check "vip set back to maglev" \
	bash -c "$MAGLEVCTL vip set $MAG --placement maglev && [ \"\$($MAGLEVCTL -j table $MAG | jq -r .digest)\" = $d_mag ]"

# --- refused: exit 1, one line, nothing changed -------------------------------
reject "unknown placement" vip set $RING --placement jump
reject "unknown placement on vip add" vip add 192.0.2.30:80/tcp --placement Ring
reject "vnodes 0" vip set $RING --vnodes 0
reject "vnodes above 10000" vip add 192.0.2.30:80/tcp --placement ring --vnodes 10001
reject "vnodes for a rendezvous VIP" vip set $RDV --vnodes 10
reject "vnodes with the default placement" vip add 192.0.2.30:80/tcp --vnodes 10
reject "vip set on a VIP that does not exist" vip set 192.0.2.99:80/tcp --placement ring
ctl vip set $RING --vnodes 10000
reject "a ring too large to build (vnodes 10000 x total weight 506)" \
	backend set $RING 198.51.100.1 --weight 500
check "the refusal says why" \
	bash -c "$MAGLEVCTL backend set $RING 198.51.100.1 --weight 500 2>&1 | grep -q 'VIP $RING: a ring of 5060000 points (vnodes 10000 x total weight 506) exceeds 4194304'"
ctl vip set $RING --vnodes 100
check "vip set without an option is a usage error (exit 2)" \
	bash -c "$MAGLEVCTL vip set $RING 2>/dev/null; [ \$? -eq 2 ]"
check "vip set --help documents the placements" \
	bash -c "$MAGLEVCTL vip set --help | grep -q 'rendezvous: highest random weight'"

# --- save / restore, state file, restart --------------------------------------
ctl save >"$TDIR/saved"
check "save writes --placement and --vnodes" \
	bash -c "grep -qx 'vip add $RING --placement ring --vnodes 100' $TDIR/saved && grep -qx 'vip add $RDV --placement rendezvous' $TDIR/saved && grep -qx 'vip add $MAG' $TDIR/saved"
digests() { for v in $RING $RDV $MAG "$RDV2"; do digest "$v"; done | tr '\n' ' '; }
all=$(digests)
check "flush, then restore from the saved file" \
	bash -c "$MAGLEVCTL restore --allow-empty /dev/null && [ \$($MAGLEVCTL -j vip list | jq '.vips | length') -eq 0 ] && $MAGLEVCTL restore $TDIR/saved"
check "restored: the same tables" [ "$(digests)" = "$all" ]
state_has() { jqt "$1" "$STATE" >/dev/null; }
check "state file records the placements" \
	state_has '[.vips[] | .placement + ":" + (.vnodes // 0 | tostring)] | sort == ["maglev:0", "rendezvous:0", "rendezvous:0", "ring:100"]'
stop_daemon
start_daemon || nok "maglevd restarts"
check "after a restart: placements as before" [ "$(show $RING) $(show $RDV) $(show $MAG)" = "ring 100 rendezvous - maglev -" ]
check "after a restart: every table byte-identical (digest)" [ "$(digests)" = "$all" ]
stop_daemon
# A state file from before placements has none: every VIP is maglev.
jq 'del(.vips[].placement, .vips[].vnodes)' "$STATE" >"$TDIR/old.json" && cp "$TDIR/old.json" "$STATE"
start_daemon || nok "maglevd starts from a state file without placements"
check "a state file without placements loads them as maglev" \
	[ "$(ctl -j vip list | jq -r '[.vips[].placement] | unique | join(" ")')" = maglev ]
check "... with the maglev table" [ "$(digest $MAG)" = "$d_mag" ]
stop_daemon
# A state file may not hold what a request would refuse.
jq '.vips[0].placement = "ring" | .vips[0].vnodes = 10000 | .vips[0].backends[0].weight = 500' \
	"$TDIR/old.json" >"$STATE"
refused_at_start() {
	local out rc
	out=$(timeout 10 nsenter --net="/run/netns/$NS_LB" "$MAGLEVD" -c "$CONF" 2>&1)
	rc=$?
	diag "$(echo "$out" | grep 'state file')"
	[ $rc -ne 0 ] && [ $rc -ne 124 ] &&
		echo "$out" | grep -q 'state file: .*VIP .*: a ring of [0-9]* points (vnodes 10000 x total weight'
}
check "a state file with a ring too large to build: maglevd refuses to start, saying why" refused_at_start
t_done
