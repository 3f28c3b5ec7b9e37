#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# --second-chance on the control plane: only a GUE VIP takes it (an IPIP one
# refuses it, saying why, and changes nothing); vip show, save and the state
# file carry it, and a restart keeps it; the VIP map entry has the flag. A
# table change keeps each changed slot's previous owner in the live table
# (never the new backend's, which owned nothing before), and after
# second_chance_ms the table is swapped again without them. A change of
# another VIP keeps them and does not swap this VIP's table.
#
# TEST_FLEET=1 (daemon_second_chance_fleet.sh): the same steps with the balancer
# in fleet mode, every change going through etcd and coming back as a revision.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/etcd_lib.sh"

setup_net || skip_all "cannot create namespaces/veth"
fleet_if_asked sc-test
write_conf "second_chance_ms 4000" "$FLEET_CONF"
start_daemon || { nok "maglevd starts"; t_done; }
V=192.0.2.10:80/tcp
jq1() { jqt "$@" >/dev/null; }
W=192.0.2.11:80/tcp

out=$("$MAGLEVCTL" vip add $W --second-chance 2>&1)
rc=$?
check "an IPIP VIP refuses --second-chance, saying IPIP has no room ($out)" \
	bash -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'IPIP has no room to carry the previous owner'"
check "... and no VIP was added" [ "$(ctl -j vip list | jq '.vips | length')" = 0 ]

check "a GUE VIP takes --second-chance" ctl vip add $V --encap gue --second-chance --check none
check "vip show says second_chance" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.second_chance == true' >/dev/null"
check "vip show's text says second-chance" bash -c "$MAGLEVCTL vip show $V | grep -q second-chance"
check "the VIP map entry has the flag" \
	bash -c "bpftool -j map dump pinned $PIN/maglev_vips | jqt '[.[].formatted.value.flags] == [1]' >/dev/null"
for b in 1 2; do ctl backend add $V 198.51.100.$b; done

# prev_slots [BACKEND]: slots whose previous owner is BACKEND, or all of them.
prev_slots() {
	if [ $# -eq 0 ]; then ctl -j table $V | jq '.prev_slots'; else
		ctl -j table $V | jq --arg b "$1" '.backends[] | select(.backend == $b) | .prev_slots'
	fi
}
# wait_no_prev S: true once the live table has no previous owner (S seconds).
wait_no_prev() {
	local i
	for i in $(seq $(($1 * 10))); do
		[ "$(prev_slots)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

check "the second backend's slots kept backend 1 as previous owner ($(prev_slots) slots)" \
	[ "$(prev_slots)" -gt 0 -a "$(prev_slots)" = "$(prev_slots 198.51.100.1)" ]
t0=$(date +%s%3N)
win=$(ctl -j table $V | jq .prev_window_ms)
check "prev_window_ms says how long they are kept: $win ms of second_chance_ms 4000" \
	[ "$win" -gt 0 -a "$win" -le 4000 ]
check "after second_chance_ms the table carries no previous owner" wait_no_prev 8
t1=$(date +%s%3N)
check "... dropped when prev_window_ms said ($((t1 - t0)) ms after it said $win ms)" \
	[ $((t1 - t0)) -ge $((win - 100)) -a $((t1 - t0)) -le $((win + 2000)) ]
check "... and prev_window_ms is 0 then" [ "$(ctl -j table $V | jq .prev_window_ms)" = 0 ]

ctl -j table $V --dump >"$TDIR/before.json"
ctl backend add $V 198.51.100.3
ctl -j table $V --dump >"$TDIR/after.json"
"$MAGLEVCTL" table $V >"$TDIR/after.txt"
# Within the window (4 s; the jq below is slow on a loaded machine, so the
# tables are read first and judged after): another VIP added and deleted (in
# fleet mode, two revisions that leave this VIP as it was).
ctl vip add 192.0.2.12:80/tcp --check none && ctl vip del 192.0.2.12:80/tcp
ctl -j table $V >"$TDIR/other.json"
# Slots whose owner changed, from the two dumps (runs of slots expanded).
changed=$(jq -n --slurpfile a "$TDIR/before.json" --slurpfile b "$TDIR/after.json" '
	def owners(t): [t.ranges[] | . as $r | range($r.first; $r.last + 1) | $r.backend];
	[owners($a[0]), owners($b[0])] | transpose | map(select(.[0] != .[1])) | length')
# From the dump taken right after the change (the window is running).
prev=$(jq .prev_slots "$TDIR/after.json")
prev3=$(jq '.backends[] | select(.backend == "198.51.100.3") | .prev_slots' "$TDIR/after.json")
check "adding backend 3: every changed slot ($changed) has its previous owner ($prev)" \
	[ "$changed" -gt 0 -a "$prev" = "$changed" ]
check "... none names backend 3, which owned nothing before" [ "$prev3" = 0 ]
check "maglevctl table shows them" grep -q "second chance: $changed slots" "$TDIR/after.txt"
gen=$(jq .table_gen "$TDIR/after.json")
check "a change of another VIP keeps the previous owners ($(jq .prev_slots "$TDIR/other.json") of $prev)" \
	jq1 ".prev_slots == $prev and $prev > 0" "$TDIR/other.json"
check "... and does not swap this VIP's table (table_gen $gen, now $(jq .table_gen "$TDIR/other.json"))" \
	jq1 ".table_gen == $gen" "$TDIR/other.json"
# --dump's prev_ranges: slot for slot, the owner before the change exactly
# where the owner changed, and nothing elsewhere.
check "table --dump's prev_ranges name each changed slot's owner before the change" \
	jq -en --slurpfile a "$TDIR/before.json" --slurpfile b "$TDIR/after.json" '
	def owners(t): [t.ranges[] | . as $r | range($r.first; $r.last + 1) | $r.backend];
	def prevs(t): reduce (t.prev_ranges[] | . as $r | range($r.first; $r.last + 1) | [., $r.backend])
		as $p ([range(0; t.size) | null]; .[$p[0]] = $p[1]);
	[owners($a[0]), owners($b[0]), prevs($b[0])] | transpose
	| all(if .[0] != .[1] then .[2] == .[0] else .[2] == null end)'

reject "vip set --encap ipip while second chance is on" vip set $V --encap ipip
check "vip set --no-second-chance --encap ipip is accepted" \
	ctl vip set $V --no-second-chance --encap ipip
check "vip show: second chance off, ipip" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.second_chance == false and .vip.encap == \"ipip\"' >/dev/null"
check "the VIP map entry lost the flag" \
	bash -c "bpftool -j map dump pinned $PIN/maglev_vips | jqt '[.[].formatted.value.flags] == [0]' >/dev/null"
check "vip set --encap gue --second-chance turns it back on" \
	ctl vip set $V --encap gue --second-chance
check "save has --second-chance" bash -c "$MAGLEVCTL save | grep -q -- '--encap gue --gue-port 6080 --second-chance'"
check "the state file has it" bash -c "jqt '.vips[0].second_chance == true' $STATE >/dev/null"
stop_daemon
start_daemon || { nok "maglevd restarts"; t_done; }
check "after a restart vip show still says second_chance" \
	bash -c "$MAGLEVCTL -j vip show $V | jqt '.vip.second_chance == true' >/dev/null"
check "... and the VIP map entry has the flag" \
	bash -c "bpftool -j map dump pinned $PIN/maglev_vips | jqt '[.[].formatted.value.flags] == [1]' >/dev/null"
t_done
