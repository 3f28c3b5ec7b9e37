#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The datapath's marks (a backend over its cap, or held in its slots while
# down) are in a pinned map, so they outlive maglevd. A restarted maglevd
# takes the map as it finds it: a mark that no backend wants any more is
# cleared at once. It used to start from "nothing marked" and write only
# changes, so a mark a killed maglevd left stayed for good, and every new
# flow of the backend that has (or later gets) that index took its probe
# sequence on that balancer. The soak found it: after SIGKILLs of maglevd,
# new connections to one backend of a VIP without bounded loads landed on
# others (an over-cap mark of the bounded VIP, on an index given again).
# Three real backends (lib_backends.sh), real TCP connections (longconn).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_backends.sh"

backends_daemon 3 "settle_ms 30000"
for b in 1 2 3; do ctl backend add $V 198.51.100.4$b; done
up=0
for b in 1 2 3; do wait_state $V 198.51.100.4$b up 5 && up=$((up + 1)); done
check "three backends up" [ $up = 3 ]
idx1=$(ctl -j backend list $V | jq -r '.backends[] | select(.backend == "198.51.100.41") | .index')

# on_be1 N: of N new connections, how many land on backend 1 (longconn's
# per-backend line); its share of the table is a third.
on_be1() {
	clx "$LONGCONN" -d 192.0.2.40 -p 8080 -s 203.0.113.2 -n "$1" -i 50 -T 1 >"$TDIR/n.out" 2>&1
	awk '$1 == "backend" && $2 == "be1" {n = $3} END {print n + 0}' "$TDIR/n.out"
}

# SIGKILLed while held: the state file holds the hold, so the restart marks
# it again and clears it once the backend passes.
check_off 1 192.0.2.40
check "backend 1 fails its checks: held in its slots" wait_state $V 198.51.100.41 held 3
check "held: marked in the datapath ($(flags $V 198.51.100.41))" \
	[ "$(flags $V 198.51.100.41)" = MARKED ]
kill9_daemon
check_on 1 192.0.2.40
start_daemon || { nok "maglevd restarts"; t_done; }
ok "maglevd SIGKILLed while backend 1 was marked, restarted with backend 1 back"
check "backend 1 passes its checks again: up" wait_state $V 198.51.100.41 up 5
unmarked() { [ "$(flags $V 198.51.100.41)" = UP ]; }
check "its mark is gone from the datapath ($(flags $V 198.51.100.41))" poll_until 3 unmarked
n=$(on_be1 30)
diag "30 new connections, $n on backend 1: $(tr '\n' ';' <"$TDIR/n.out")"
# A third of 30 expected; none at all has odds (2/3)^30, 5e-6.
check "new connections reach backend 1 again ($n of 30)" [ "$n" -gt 0 ]

# A mark on an index no backend has (one a killed maglevd left for a backend
# deleted meanwhile, which a new backend may be given): cleared at the start.
stop_daemon
free=$((idx1 + 40))
# shellcheck disable=SC2046 # le32 is words
bpftool map update pinned "$PIN/maglev_overcap" key $(le32 $free) value $(le32 1)
# shellcheck disable=SC2046
bpftool map update pinned "$PIN/maglev_overcap" key $(le32 "$idx1") value $(le32 1)
start_daemon || { nok "maglevd restarts"; t_done; }
mark() {
	# shellcheck disable=SC2046
	bpftool -j map lookup pinned "$PIN/maglev_overcap" key $(le32 "$1") | jq -r .formatted.value
}
gone() { [ "$(mark $free)" = 0 ] && [ "$(mark "$idx1")" = 0 ]; }
check "marks left in the pinned map (index $free: no backend; $idx1: backend 1, up) are cleared" \
	poll_until 3 gone
check "backend 1 unmarked and up ($(flags $V 198.51.100.41))" poll_until 3 unmarked
n=$(on_be1 30)
diag "30 new connections, $n on backend 1: $(tr '\n' ';' <"$TDIR/n.out")"
check "new connections reach backend 1 ($n of 30)" [ "$n" -gt 0 ]
stop_daemon
t_done
